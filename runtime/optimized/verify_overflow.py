"""Verifier rule 27 (verifseg): fault sites are the plan's operations, overflow tests are exact.

Why: an I32/I64 ``+ - *`` or negation is plain Python arithmetic followed by an inline range test
whose failure calls the ``core.arith`` definition through a fault stub (``_s_f<k>``/``_s_c<k>``).
The verifier did not look at the test: an adversarial review (issue 16) replaced one by
``if False:`` or widened its bound, and the module passed - an out-of-range value then flowed on as
if the kernel had computed it. Nor did it tie a fault site to the plan: a site could name another
operation (``add_i64`` for an I32 add, which faults later) or no node at all. So:

* **sites**: every fault site of the table (``op`` and ``chunk-op``) is located (``site_nodes``) at
  an operation of the plan (``runtime.locations.operation_nodes``), and its operation is that node's:
  ``<op>_<type>`` for a ``Binary`` of the left operand's type, ``neg_<type>`` for a negation;
* **overflow tests**: every fault stub of an I32/I64 ``add sub mul neg`` site is a plain
  assignment standing right in an ``if`` body, and that ``if`` is one of the generator's guards,
  tied to the Python computation it guards (``_guard_problem``): the result test (``above``,
  ``below`` or ``outside`` the type's range on ``t``, right after ``t = a OP b`` of the stub's own
  operands), the operand test of ``x + c`` / ``x - c`` (its ``else`` exactly ``t = x OP c``), or a
  scaled step's (``scaled_steps``). The bounds are the type's, read from the site's operation, so
  a widened constant, a test of another slot, ``if False:``, a stub moved out of its test's body or
  an exact test placed under an unrelated branch is refused.

* **guards present** (rule 28, branch verifseg2, ``check_present``): every overflow site of the
  table has a guarded stub somewhere in the hot module, so a guard deleted with its only stub is
  refused.

What this does not prove: that a guard is present where the plan's operation needs one beyond
that (a site with several stubs may lose all but one; the value ranges, sign facts, prover facts
and counter rooms that let the generator leave a test out are not recomputed), and which side a
one-sided test may drop.
"""

from __future__ import annotations

import ast
from typing import Any, Final

from dotboxd.core import ast as ir
from dotboxd.core.types import F64, I32, I64
from dotboxd.core.values import I32_MAX, I32_MIN, I64_MAX, I64_MIN
from dotboxd.runtime.locations import operation_nodes
from dotboxd.validator.plan import ExecutionPlan

from . import bounds
from . import pyast as P
from .errors import VerifierFailure
from .tables import CHUNK_OP, OP, Tables
from .verify_charges import GUARDED, ChargeRules, Places, fault_site_at, int_constant, located, same_tree
from .verify_charges import node_kind as _kind

_RANGES: Final = {"i32": (I32_MIN, I32_MAX), "i64": (I64_MIN, I64_MAX)}
_OVERFLOWS: Final = frozenset({"add", "sub", "mul", "neg"})
"""The operations whose Python result is range-tested before it is used."""
_SUFFIX: Final[dict[Any, str]] = {I32: "i32", I64: "i64", F64: "f64"}


def _fail(message: str, node: ast.AST | None = None) -> VerifierFailure:
    return located(f"rule 27 (overflow): {message}", node)


def site_ops(tables: Tables) -> dict[int, str]:
    """Fault site -> its ``core.arith`` operation name."""
    out: dict[int, str] = {}
    for index, (kind, data) in enumerate(tables.sites):
        if kind == OP:
            out[index] = str(data)
        elif kind == CHUNK_OP:
            out[index] = str(data[0])
    return out


def check_sites(plan: ExecutionPlan, tables: Tables, operations: tuple[ir.Node, ...] | None = None) -> None:
    """Every fault site is located at a plan operation and names that operation's definition
    (``operations``: the plan's operation nodes, when the caller has walked them already)."""
    ops = site_ops(tables)
    if not ops:
        return
    if operations is None:
        operations = operation_nodes(plan.module)
    for site, op in ops.items():
        ordinal = tables.site_nodes.get(site)
        node = operations[ordinal] if ordinal is not None and 0 <= ordinal < len(operations) else None
        if node is None or _expected_op(plan, node) != op:
            raise _fail(f"fault site {site} ({op}) is not the operation the plan has at its location")


def _expected_op(plan: ExecutionPlan, node: ir.Node) -> str | None:
    if isinstance(node, ir.Binary):
        suffix = _SUFFIX.get(plan.type_of(node.left))
        return f"{node.op.value}_{suffix}" if suffix is not None else None
    if isinstance(node, ir.Unary) and node.op is ir.UnaryOp.NEG:
        suffix = _SUFFIX.get(plan.type_of(node))
        return f"neg_{suffix}" if suffix is not None else None
    return None


def check_tests(rules: ChargeRules, ops: dict[int, str]) -> set[int]:
    """After ``rules`` walked a function: every fault stub of an I32/I64 overflow site is a plain
    assignment standing right in an ``if`` body, and that ``if`` is one of the guard forms, tied to
    the Python computation it guards (``_guard_problem``). Returns the overflow sites whose stubs
    it found (for ``check_present``)."""
    found: set[int] = set()
    if not ops:
        return found
    for call, _ in rules.fault_calls:
        at = fault_site_at(call.func.id) or 3
        site: Any = call.args[at] if len(call.args) > at else None
        op = ops.get(site.value) if _kind(site) is ast.Constant and type(site.value) is int else None
        if op is not None and _overflows(op):
            if rules.placed.get(id(call)) != GUARDED:
                raise _fail(f"a {op} fault stub stands as a plain assignment right in its test's body", call)
            found.add(site.value)
    for node in rules.ifs:
        for stmt in node.body:
            guarded = _guarded(stmt, ops)
            if guarded is not None:
                problem = _guard_problem(node, guarded, rules.if_places)
                if problem is not None:
                    raise _fail(f"the guard of a {guarded[0]} fault stub: {problem}", node)
    return found


def check_present(ops: dict[int, str], found: set[int]) -> None:
    """Rule 28 (verifseg2), over a whole hot module: every I32/I64 overflow site of the table has a
    guarded fault stub in it (``found``, what ``check_tests`` met). Why: the generator makes a fault
    site only where it emits that site's guard (every guard it leaves out - a value range, a sign,
    a prover fact, a counter room - has no site), so a site without its stub is a guard deleted
    together with its stub, which rule 27 alone cannot see (what is left is ordinary arithmetic).
    The cold module is not held to it: it is generated from the plan at run time (never read from
    the disk cache) and adds sites of its own, reusing only some of the hot module's."""
    for site in sorted(ops):
        if site not in found and _overflows(ops[site]):
            raise located(
                f"rule 28 (guards): fault site {site} ({ops[site]}) has no guarded fault stub: "
                "its overflow test was deleted with its stub",
                None,
            )


_PY_OPS: Final = {"add": ast.Add, "sub": ast.Sub, "mul": ast.Mult}


def _guard_problem(node: Any, guarded: tuple[str, str, list[Any]], places: Places) -> str | None:
    """None when ``node`` guards its stub in one of the generator's forms (``codegen.arith_int``,
    ``codegen.unary``, ``scaled_steps``), else what is wrong:

    * on the result: ``t = a OP b`` right before the ``if`` (or before the ``if`` whose body it
      opens: a product's test nested under its step's), and the test ``above``, ``below`` or
      ``outside`` the type's range on ``t``;
    * on the operand, ``x + c`` / ``x - c``: the ``else`` is exactly ``out = x OP c`` and the test
      ``above(x, MAX - |c|)`` or ``below(x, MIN + |c|)``, on the side the step grows;
    * a scaled step: the body opens with ``t = k * x``, the ``else`` is exactly ``out = k * x OP c``
      and the test ``above(x, (MAX - |c|) // k)``."""
    op, target, operands = guarded
    name = op.split("_")[0]
    low, high = _RANGES[op[-3:]]
    test = node.test
    slot = P.name(target)
    problem = "its test is not the exact range test of its result or operand"
    on_result = (bounds.above(slot, high), bounds.below(slot, low), bounds.outside(slot, low, high))
    if any(same_tree(test, want) for want in on_result):
        if _computed_before(node, target, name, operands, places):
            return None
        # ``x = x + 0`` tests its operand as it would its result: the operand form may still hold
        problem = "its test is on a slot not computed right before it by the same operation"
    c = int_constant(operands[1]) if len(operands) == 2 and name in ("add", "sub") else None
    if c is None:
        return problem
    grows = (c >= 0) == (name == "add")
    bound = high - abs(c) if grows else low + abs(c)
    direct = _else_value(node, target, _PY_OPS[name])
    if same_tree(test, bounds.above(operands[0], bound) if grows else bounds.below(operands[0], bound)):
        if direct is not None and same_tree(direct[0], operands[0]) and same_tree(direct[1], operands[1]):
            return None
        return "its else is not the same step computed in Python"
    scaled = _scaled(node.body, operands[0])
    if grows and scaled is not None and same_tree(test, bounds.above(scaled[0], bound // scaled[1])):
        product = node.body[0].value
        if direct is not None and same_tree(direct[0], product) and same_tree(direct[1], operands[1]):
            return None
        return "its else is not the same scaled step computed in Python"
    return problem


def _else_value(node: Any, target: str, op: type[ast.operator]) -> tuple[Any, Any] | None:
    """``(left, right)`` when the ``else`` is exactly ``target = left OP right``."""
    orelse = node.orelse
    stmt: Any = orelse[0] if len(orelse) == 1 else None
    if _kind(stmt) is not ast.Assign or len(stmt.targets) != 1 or _kind(stmt.targets[0]) is not ast.Name:
        return None
    value = stmt.value
    if stmt.targets[0].id != target or _kind(value) is not ast.BinOp or type(value.op) is not op:
        return None
    return value.left, value.right


def _computed_before(node: Any, target: str, name: str, operands: list[Any], places: Places) -> bool:
    """``target = a OP b`` (``-a`` for a negation) is the statement right before ``node``, or right
    before the ``if`` whose body ``node`` opens."""
    block, index, owner = places.get(id(node), (None, 0, None))
    while block is not None:
        before: Any = block[index - 1] if index > 0 else None
        if _kind(before) is ast.Assign and len(before.targets) == 1 and _kind(before.targets[0]) is ast.Name:
            value = before.value
            if before.targets[0].id == target and _computes(value, name, operands):
                return True
        if index != 0 or owner is None:
            return False
        block, index, owner = places.get(id(owner), (None, 0, None))
    return False


def _computes(value: Any, name: str, operands: list[Any]) -> bool:
    if name == "neg":
        if len(operands) != 1:
            return False
        if _kind(value) is ast.UnaryOp and type(value.op) is ast.USub:
            return same_tree(value.operand, operands[0])
        # the negation of a literal as the disk cache reads it back: the generated ``-(951)`` is
        # printed ``-951`` and folded to the constant -951 (``cache.fold_negative_literals``)
        folded, operand = int_constant(value), int_constant(operands[0])
        return folded is not None and operand is not None and folded == -operand
    return (
        _kind(value) is ast.BinOp
        and type(value.op) is _PY_OPS[name]
        and len(operands) == 2
        and same_tree(value.left, operands[0])
        and same_tree(value.right, operands[1])
    )


def _overflows(op: str) -> bool:
    return op.split("_")[0] in _OVERFLOWS and op[-3:] in _RANGES


def _guarded(stmt: Any, ops: dict[int, str]) -> tuple[str, str, list[Any]] | None:
    """``t = _s_f<k>/_s_c<k>(R, fuel, lr, site, *operands)`` at an I32/I64 overflow site."""
    if _kind(stmt) is not ast.Assign or len(stmt.targets) != 1 or _kind(stmt.targets[0]) is not ast.Name:
        return None
    call = stmt.value
    if _kind(call) is not ast.Call or _kind(call.func) is not ast.Name:
        return None
    at = fault_site_at(call.func.id)
    if at is None:
        return None
    site: Any = call.args[at] if len(call.args) > at else None
    if _kind(site) is not ast.Constant or type(site.value) is not int:
        return None
    op = ops.get(site.value)
    if op is None or not _overflows(op):
        return None
    return op, str(stmt.targets[0].id), list(call.args[at + 1 :])


def _scaled(body: list[Any], product: Any) -> tuple[Any, int] | None:
    """``(x, k)`` when the body starts with ``product = k * x`` (``k`` a positive int constant)."""
    first: Any = body[0] if body else None
    if _kind(product) is not ast.Name or _kind(first) is not ast.Assign or len(first.targets) != 1:
        return None
    target, value = first.targets[0], first.value
    if _kind(target) is not ast.Name or target.id != product.id or _kind(value) is not ast.BinOp:
        return None
    if type(value.op) is not ast.Mult:
        return None
    for factor, operand in ((value.left, value.right), (value.right, value.left)):
        positive = _kind(factor) is ast.Constant and type(factor.value) is int and factor.value > 0
        if positive and _kind(operand) is ast.Name:
            return operand, int(factor.value)
    return None


__all__ = ["check_present", "check_sites", "check_tests", "site_ops"]
