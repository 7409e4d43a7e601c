"""Which list a bulk loop may append to in place: the ownership proof of owned lists.

Why: ``list.add`` in a loop is a stub call with a meter settlement per item (~1 us) where CPython's
``list.append`` takes ~25 ns. When the code generator can prove that a list local is *owned* -
only this function's code can ever see it, and nothing reads it while the loop runs - the loop may
append to the list's buffer in place and check the charges inline (``codegen.owned_add``,
``stubs.take_owned``), and hand out the immutable value once, after the loop.

The proof, over the plan's IR (conservative: anything else is simply not owned):

* the local is a ``List<T>`` with a scalar ``T`` (the list stays flat: its shape is implicit);
* it is not a parameter, and every assignment to it in the function is ``list.empty`` or
  ``v = list.add(v, e)`` where ``e`` does not read ``v`` (so it always holds the newest version of
  a buffer made in this function);
* every other read of it in the function is the list argument of ``list.count`` or ``list.get``
  (which keep nothing) or a ``return v`` (which ends the function): it is never passed to a
  function or binding, stored in another value or copied to another local, so no other version
  covering the same buffer exists and no other thread can reach it;
* inside the loop it is only the target and receiver of such adds, and the loop body does nothing
  else that charges the meter beyond fuel: only scalar literals, locals, unary and binary
  operations on scalars, the inline numeric conversions, ``if``, ``break`` and ``continue`` (no other
  calls, no text, no ``return``), so the
  room computed before the loop from the meter stays exact until the list is materialized.

The walks that are not about lists (``self_rebind``, ``loop_target``, ``quiet_body``, ``confined``)
also serve the ownership proof of strings (``owned_text``), so both proofs read the IR one way.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterator

from dotboxd.core import ast as ir
from dotboxd.core.types import BOOL, F64, GUID, I32, I64, UNIT, ListType
from dotboxd.validator.plan import CallKind, ExecutionPlan, FunctionInfo

_FLAT_ELEMENTS = frozenset({UNIT, BOOL, I32, I64, F64, GUID})
"""Element types whose values are scalars (``core.values.SCALAR_CLASSES``): a list of them is flat."""
_PLAIN_LITERALS = frozenset(
    {ir.LiteralKind.UNIT, ir.LiteralKind.BOOL, ir.LiteralKind.I32, ir.LiteralKind.I64, ir.LiteralKind.F64}
)
_SCALAR_OPERANDS = frozenset({BOOL, I32, I64, F64})
_READERS = frozenset({"list.count", "list.get"})


def _builtin(plan: ExecutionPlan, node: ir.Expr, name: str) -> bool:
    return isinstance(node, ir.Call) and node.name == name and plan.call_target(node).kind is CallKind.BUILTIN


def _is_var(node: ir.Expr, name: str) -> bool:
    return isinstance(node, ir.Var) and node.name == name


def _self_add(plan: ExecutionPlan, stmt: ir.Stmt) -> str | None:
    """The local of ``v = list.add(v, e)`` (``e`` not reading ``v``), else None."""
    return self_rebind(plan, stmt, "list.add")


def self_rebind(plan: ExecutionPlan, stmt: ir.Stmt, builtin: str) -> str | None:
    """The local of ``v = builtin(v, e)`` (``e`` not reading ``v``), else None."""
    if not isinstance(stmt, ir.Set):
        return None
    value = stmt.value
    if not (isinstance(value, ir.Call) and _builtin(plan, value, builtin)):
        return None
    if len(value.args) != 2 or not _is_var(value.args[0], stmt.name):
        return None
    if any(_is_var(node, stmt.name) for node in _expr_nodes(value.args[1])):
        return None
    return stmt.name


def _expr_nodes(node: ir.Expr) -> Iterator[ir.Expr]:
    stack = [node]
    while stack:
        top = stack.pop()
        yield top
        if isinstance(top, ir.Call):
            stack.extend(top.args)
        elif isinstance(top, ir.Unary):
            stack.append(top.operand)
        elif isinstance(top, ir.Binary):
            stack.append(top.left)
            stack.append(top.right)


def _statements(block: tuple[ir.Stmt, ...]) -> Iterator[ir.Stmt]:
    for stmt in block:
        yield stmt
        if isinstance(stmt, ir.If):
            yield from _statements(stmt.then)
            yield from _statements(stmt.else_)
        elif isinstance(stmt, ir.While | ir.ForRange):
            yield from _statements(stmt.body)


def _statement_exprs(stmt: ir.Stmt) -> tuple[ir.Expr, ...]:
    if isinstance(stmt, ir.Set | ir.ExprStmt | ir.Return):
        return (stmt.value,)
    if isinstance(stmt, ir.If | ir.While):
        return (stmt.condition,)
    if isinstance(stmt, ir.ForRange):
        return (stmt.start, stmt.end)
    return ()


def plain_node(plan: ExecutionPlan, sub: ir.Expr) -> bool:
    """False for a literal other than a plain scalar and for a binary operation on non-scalars
    (text, composites): nodes whose evaluation may charge more than fuel."""
    if isinstance(sub, ir.Literal):
        return sub.kind in _PLAIN_LITERALS
    if isinstance(sub, ir.Binary):
        return plan.type_of(sub.left) in _SCALAR_OPERANDS and plan.type_of(sub.right) in _SCALAR_OPERANDS
    return True


def _quiet_expr(plan: ExecutionPlan, node: ir.Expr, owned: str, inline: Container[str]) -> bool:
    """Whether ``node`` charges nothing but fuel and never reads ``owned`` (``inline``: the
    built-ins the code generator compiles inline, which charge only their base fuel)."""
    for sub in _expr_nodes(node):
        if not plain_node(plan, sub):
            return False
        if isinstance(sub, ir.Var):
            if sub.name == owned:
                return False
        elif isinstance(sub, ir.Call) and not (
            sub.name in inline and plan.call_target(sub).kind is CallKind.BUILTIN
        ):
            return False
    return True


SelfUpdate = Callable[[ir.Stmt], "str | None"]
"""The local a statement ``v = <update>(v, ...)`` updates in the owned way, else None."""
Quiet = Callable[[ir.Expr, str], bool]
"""Whether an expression charges nothing but fuel and reads the owned local only as allowed."""


def _quiet_body(body: tuple[ir.Stmt, ...], owned: str, self_update: SelfUpdate, quiet: Quiet) -> bool:
    for stmt in _statements(body):
        if isinstance(stmt, ir.Set) and self_update(stmt) == owned:
            assert isinstance(stmt.value, ir.Call)
            operands: tuple[ir.Expr, ...] = stmt.value.args[1:]
        elif isinstance(stmt, ir.Set | ir.ExprStmt | ir.If):
            if isinstance(stmt, ir.Set) and stmt.name == owned:
                return False
            operands = _statement_exprs(stmt)
        elif isinstance(stmt, ir.Break | ir.Continue):
            continue
        else:
            return False  # return, or a nested loop
        if not all(quiet(e, owned) for e in operands):
            return False
    return True


def owned_local(
    loop: ir.While | ir.ForRange, self_update: SelfUpdate, quiet: Quiet, in_function: Callable[[str], bool]
) -> str | None:
    """The one local the body of ``loop`` updates in the owned way (``self_update``) when the
    loop charges nothing else beyond fuel (``quiet``) and the function never shares it
    (``in_function``); else None. Shared by owned lists and owned maps (``owned_maps``)."""
    found = {name for stmt in _statements(loop.body) if (name := self_update(stmt)) is not None}
    if len(found) != 1:
        return None
    name = found.pop()
    if isinstance(loop, ir.While) and not quiet(loop.condition, name):
        return None
    if isinstance(loop, ir.ForRange) and loop.local == name:
        return None
    if not _quiet_body(loop.body, name, self_update, quiet):
        return None
    return name if in_function(name) else None


def _reader_of(plan: ExecutionPlan, node: ir.Expr, name: str) -> bool:
    """Whether ``node`` is ``list.count(name)`` or ``list.get(name, i)``."""
    return (
        isinstance(node, ir.Call)
        and node.name in _READERS
        and bool(node.args)
        and _is_var(node.args[0], name)
        and plan.call_target(node).kind is CallKind.BUILTIN
    )


def _reads_only_through(plan: ExecutionPlan, root: ir.Expr, name: str) -> bool:
    """Whether every read of ``name`` in ``root`` is the list argument of a reader."""
    allowed: set[int] = set()
    for sub in _expr_nodes(root):
        if isinstance(sub, ir.Call) and _reader_of(plan, sub, name):
            allowed.add(id(sub.args[0]))
        if _is_var(sub, name) and id(sub) not in allowed:
            return False
    return True


def owned_in_function(
    plan: ExecutionPlan,
    info: FunctionInfo,
    name: str,
    creator: str,
    self_update: SelfUpdate,
    reads: Callable[[ir.Expr, str], bool],
) -> bool:
    """Whether local ``name`` of function ``info`` (not a parameter or loop counter) is only ever
    made by ``creator``, updated by ``self_update`` statements, returned, or read where ``reads``
    allows: no other version of it can exist outside this function's code."""
    if any(param.name == name for param in info.function.parameters):
        return False
    for stmt in _statements(info.function.body):
        if isinstance(stmt, ir.ForRange) and stmt.local == name:
            return False
        if isinstance(stmt, ir.Set) and stmt.name == name:
            if _builtin(plan, stmt.value, creator) or self_update(stmt) == name:
                continue  # an update reads the local only as its own receiver (``self_update``)
            return False
        if isinstance(stmt, ir.Return) and _is_var(stmt.value, name):
            continue
        if not all(reads(root, name) for root in _statement_exprs(stmt)):
            return False
    return True


def _owned_in_function(plan: ExecutionPlan, info: FunctionInfo, name: str) -> bool:
    local = info.local_types.get(name)
    if not (isinstance(local, ListType) and local.element in _FLAT_ELEMENTS):
        return False
    self_add: SelfUpdate = lambda stmt: _self_add(plan, stmt)  # noqa: E731
    reads: Quiet = lambda root, local: _reads_only_through(plan, root, local)  # noqa: E731
    return owned_in_function(plan, info, name, "list.empty", self_add, reads)


def owned_list(
    plan: ExecutionPlan, info: FunctionInfo, loop: ir.While | ir.ForRange, inline: Container[str]
) -> str | None:
    """The IR local the bulk ``loop`` of function ``info`` may append to in place, or None
    (``inline``: the built-ins compiled inline, ``codegen._INLINE_BUILTINS``). One list per loop:
    its room is computed alone, so no other charge may share the limits."""
    return owned_local(
        loop,
        lambda stmt: _self_add(plan, stmt),
        lambda node, name: _quiet_expr(plan, node, name, inline),
        lambda name: _owned_in_function(plan, info, name),
    )


def quiet_body(
    plan: ExecutionPlan,
    body: tuple[ir.Stmt, ...],
    owned: str,
    inline: Container[str],
    piece_ok: Callable[[ir.Set], bool],
) -> bool:
    """Whether ``body`` assigns ``owned`` only by statements ``piece_ok`` accepts and otherwise
    charges nothing but fuel (quiet expressions, ``if``, ``break``, ``continue``; no return, no loop)."""
    for stmt in _statements(body):
        if isinstance(stmt, ir.Set) and stmt.name == owned:
            if not piece_ok(stmt):
                return False
        elif isinstance(stmt, ir.Set | ir.ExprStmt | ir.If):
            if not all(_quiet_expr(plan, e, owned, inline) for e in _statement_exprs(stmt)):
                return False
        elif not isinstance(stmt, ir.Break | ir.Continue):
            return False  # return, or a nested loop
    return True


def confined(
    plan: ExecutionPlan,
    info: FunctionInfo,
    name: str,
    made: Callable[[ir.Expr], bool],
    rebinds: Callable[[ir.Set], bool],
    reader: Callable[[ir.Call], bool],
) -> bool:
    """Whether local ``name`` of ``info`` is only this function's: not a parameter or loop counter,
    assigned only values that ``made`` accepts (a fresh value) or by statements that ``rebinds``
    accepts (``name = op(name, ...)``, its receiver the call's first argument), and otherwise read
    only as the first argument of calls ``reader`` accepts or by ``return name``. Shared by the
    ownership proofs of lists (here) and strings (``owned_text``)."""
    if any(param.name == name for param in info.function.parameters):
        return False
    for stmt in _statements(info.function.body):
        allowed: set[int] = set()
        if isinstance(stmt, ir.ForRange) and stmt.local == name:
            return False
        if isinstance(stmt, ir.Set) and stmt.name == name:
            if made(stmt.value):
                continue
            if not rebinds(stmt):
                return False
            assert isinstance(stmt.value, ir.Call)
            allowed.add(id(stmt.value.args[0]))
        elif isinstance(stmt, ir.Return) and _is_var(stmt.value, name):
            continue
        for root in _statement_exprs(stmt):
            for sub in _expr_nodes(root):
                if isinstance(sub, ir.Call) and reader(sub):
                    allowed.add(id(sub.args[0]))
                if _is_var(sub, name) and id(sub) not in allowed:
                    return False
    return True


def loop_target(
    plan: ExecutionPlan,
    loop: ir.While | ir.ForRange,
    rebinds: Callable[[ExecutionPlan, ir.Stmt], str | None],
    inline: Container[str],
) -> str | None:
    """The one local the ``loop``'s statements rebind (``rebinds``: the local of ``x = op(x, e)``),
    when the loop has exactly one, it is not the loop's counter and the loop's condition is quiet."""
    found = {name for stmt in _statements(loop.body) if (name := rebinds(plan, stmt)) is not None}
    if len(found) != 1:
        return None
    name = found.pop()
    if isinstance(loop, ir.While) and not _quiet_expr(plan, loop.condition, name, inline):
        return None
    if isinstance(loop, ir.ForRange) and loop.local == name:
        return None
    return name


FLAT_ELEMENTS = _FLAT_ELEMENTS
builtin_call = _builtin
expr_nodes = _expr_nodes
statements = _statements
statement_exprs = _statement_exprs
"""The pieces of the proof that owned maps (``owned_maps``) share."""

__all__ = [
    "FLAT_ELEMENTS",
    "builtin_call",
    "confined",
    "expr_nodes",
    "loop_target",
    "owned_in_function",
    "owned_list",
    "owned_local",
    "plain_node",
    "quiet_body",
    "self_rebind",
    "statement_exprs",
    "statements",
]
