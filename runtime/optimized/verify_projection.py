"""Verifier rule 25: which entry functions may be handed a projected host event.

Why (issue 16): a predicate over a host event (``Map<String, I32>`` given as a ``dict``) reads a
few fields with ``map.get(ev, "field")``, fused into ``_s_lrget`` (rule 23). Building the event's
map - its entries keyed by token, its immutable object - cost the fast lane about as much as the
whole predicate over two integers. When the event is used *only* as the map of fused reads, the
lane can pass the event's checked snapshot (``core.event_maps.event_projector``: a private
``dict`` of exact ASCII ``str`` keys and checked scalar values) and the fused reads read it by key
(``literal_reads``), building the map only on a path that needs it.

Whether an entry's event is used only so is decided here, from the verified module, never from the
code generator's say-so: the generator emits nothing new and claims nothing. An entry function
``_fn<i>`` is admitted when all of this holds, else the lane passes the map as before:

* ``_fn<i>`` is bound exactly once by the module's top-level statements (no function can rebind
  it: the code-object check admits no global store), by a plain ``def`` without decorators, whose
  parameters are exactly five positional ones (``R, f, d, lr`` and the event), no defaults, no
  ``*args`` / ``**kwargs`` / keyword-only or positional-only ones;
* its body defines no function, lambda, class or comprehension (no scope that could rebind or
  capture the event), has no ``global`` / ``nonlocal``, import, exception handler binding or match
  pattern (each binds a name without a ``Name`` node);
* every ``Name`` of the event's parameter is a load that is the last of exactly seven positional
  arguments (no keywords, no starred ones) of a call of ``_s_lrget`` or ``_s_lrhas`` named
  directly, or one of the three places an inline form of such a read names it (rule 29,
  ``inline_reads.event_names``: its class test, its key lookup, its size), and those stub names are
  only ever loaded in it - at every place it stands: one node object may stand at several places of
  a tree (``compile()`` takes it; the generator shares name nodes), so each event name node must be
  met exactly as often as it is met as a read's map or an inline form's place.

So the event never escapes (it is not stored, returned, passed elsewhere, iterated, sized or
compared): the only code that sees the snapshot is the fused stubs, which tell it from a map by its
class (no kernel value is a ``dict``). Node classes are tested with ``isinstance``: the generator's
positioned node classes (``pyast``) are subclasses, and ``compile()`` reads any subclass as its base. ``tests/optimized/test_event_projection.py`` tampers with
each of these points and checks the entry is no longer admitted.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator

from dotboxd.core.types import MapType, SandboxType, ScalarType
from dotboxd.validator.plan import ExecutionPlan

from .inline_reads import event_names, fallback_of
from .literal_reads import ARITY, READS
from .shapes import walk
from .tables import Tables, function_name

_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.Global,
    ast.Nonlocal,
    ast.Import,
    ast.ImportFrom,
    ast.ExceptHandler,
    ast.pattern,
)
"""Nodes that open a scope or bind a name without a ``Name`` node: none may stand in an admitted
function (the code-object checks refuse most of them anyway; this rule does not rely on it)."""

_SCOPE_KINDS: dict[type, bool] = {}
"""Whether a node class is (a subclass of) one of ``_SCOPES``, per class met: the rule looks at
every node of an entry's body, and a tuple ``isinstance`` per node cost a fifth of an event
kernel's compile."""


def _opens_scope(kind: type) -> bool:
    known = _SCOPE_KINDS.get(kind)
    if known is None:
        known = _SCOPE_KINDS[kind] = issubclass(kind, _SCOPES)
    return known


_PARAMETERS = 5
"""``R, f, d, lr`` and the event."""


def projected_functions(module: ast.Module, tables: Tables, plan: ExecutionPlan) -> frozenset[str]:
    """The plan function ids of the module's entry functions whose one parameter, a host event, is
    used only as the map of fused literal reads (see the module docstring). Only entrypoints of one
    ``Map<String, scalar>`` parameter are looked at (what a fast lane can project), and only their
    own bodies are walked: a plan without one costs nothing here."""
    ids = {
        function_name(index): fid
        for index, fid in enumerate(tables.functions)
        if event_entry(plan.functions[fid].is_entrypoint, plan.functions[fid].parameter_types)
    }
    if not ids:
        return frozenset()
    bound = Counter(_module_bindings(module))
    return frozenset(
        ids[stmt.name]
        for stmt in module.body
        if isinstance(stmt, ast.FunctionDef)
        and stmt.name in ids
        and bound[stmt.name] == 1
        and reads_only(stmt)
    )


_SCALARS = frozenset({"Bool", "I32", "I64", "F64"})


def event_entry(entry: bool, parameters: tuple[SandboxType, ...]) -> bool:
    """Whether an entrypoint's parameters are one host event (``Map<String, scalar>``)."""
    if not entry or len(parameters) != 1:
        return False
    event = parameters[0]
    return (
        isinstance(event, MapType)
        and isinstance(event.key, ScalarType)
        and event.key.name == "String"
        and isinstance(event.value, ScalarType)
        and event.value.name in _SCALARS
    )


def _module_bindings(module: ast.Module) -> Iterator[str]:
    """Every name the module's top-level statements bind: the functions they define and the names
    stored anywhere in a top-level statement that is not a definition. A function's body cannot
    rebind a module name: the code-object check admits no global store (``verifier.verify_code``)."""
    for stmt in module.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield stmt.name
            continue
        for node in ast.walk(stmt):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                yield node.name
            elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                yield node.id


def reads_only(function: ast.FunctionDef) -> bool:
    """Whether ``function`` has the event's form and uses the event only as a fused read's map."""
    args = function.args
    if (
        function.decorator_list
        or function.returns is not None
        or args.posonlyargs
        or args.kwonlyargs
        or args.vararg is not None
        or args.kwarg is not None
        or args.defaults
        or args.kw_defaults
        or len(args.args) != _PARAMETERS
    ):
        return False
    event = args.args[-1].arg
    # per ``Name`` node of the event: how often the walk meets it as a fused read's map, and how
    # often at all. Counted, not a set of approved nodes: one node object may stand at several
    # places of a tree (the generator shares name nodes, a tamperer can share one between a read
    # and a ``return``), and the walk lists it at each, so only equal counts put every place in a read
    allowed: Counter[int] = Counter()
    met: Counter[int] = Counter()
    nodes = walk(function)
    next(nodes)  # the function itself
    for node in nodes:
        if _opens_scope(type(node)):
            return False
        if isinstance(node, ast.If) and fallback_of(node) is not None:  # an inline read (rule 29)
            allowed.update(id(name) for name in event_names(node) if isinstance(name, ast.Name))
        elif isinstance(node, ast.Call):
            last = node.args[-1] if len(node.args) == ARITY else None
            callee = node.func
            if (
                isinstance(last, ast.Name)
                and last.id == event
                and isinstance(callee, ast.Name)
                and callee.id in READS
                and not node.keywords
                and not any(isinstance(arg, ast.Starred) for arg in node.args)
            ):
                allowed[id(last)] += 1
        elif isinstance(node, ast.Name) and (node.id == event or node.id in READS):
            if not isinstance(node.ctx, ast.Load):
                return False
            if node.id == event:
                met[id(node)] += 1
    return met == allowed


__all__ = ["event_entry", "projected_functions", "reads_only"]
