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

The walks are not about lists: ``owned_local`` (with ``quiet_body`` and ``confined``) is the one
proof of owned lists, maps (``owned_maps``) and texts (``owned_text``), each kind stating what it
allows in an ``Ownership`` record, so the three proofs read the IR one way.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Iterator
from dataclasses import dataclass

from dotboxd.core import ast as ir
from dotboxd.core.types import BOOL, F64, GUID, I32, I64, UNIT, ListType, SandboxType
from dotboxd.validator.plan import CallKind, ExecutionPlan, FunctionInfo

FLAT_ELEMENTS = frozenset({UNIT, BOOL, I32, I64, F64, GUID})
"""Element types whose values are scalars (``core.values.SCALAR_CLASSES``): a list of them is flat."""
_PLAIN_LITERALS = frozenset(
    {ir.LiteralKind.UNIT, ir.LiteralKind.BOOL, ir.LiteralKind.I32, ir.LiteralKind.I64, ir.LiteralKind.F64}
)
_SCALAR_OPERANDS = frozenset({BOOL, I32, I64, F64})
_READERS = frozenset({"list.count", "list.get"})


def builtin_call(plan: ExecutionPlan, node: ir.Expr, name: str) -> bool:
    return isinstance(node, ir.Call) and node.name == name and plan.call_target(node).kind is CallKind.BUILTIN


def is_var(node: ir.Expr, name: str) -> bool:
    return isinstance(node, ir.Var) and node.name == name


def self_rebind(plan: ExecutionPlan, stmt: ir.Stmt, builtin: str) -> str | None:
    """The local of ``v = builtin(v, e)`` (``e`` not reading ``v``), else None."""
    if not isinstance(stmt, ir.Set):
        return None
    value = stmt.value
    if not (isinstance(value, ir.Call) and builtin_call(plan, value, builtin)):
        return None
    if len(value.args) != 2 or not is_var(value.args[0], stmt.name):
        return None
    if any(is_var(node, stmt.name) for node in expr_nodes(value.args[1])):
        return None
    return stmt.name


def expr_nodes(node: ir.Expr) -> Iterator[ir.Expr]:
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


def statements(block: tuple[ir.Stmt, ...]) -> Iterator[ir.Stmt]:
    for stmt in block:
        yield stmt
        if isinstance(stmt, ir.If):
            yield from statements(stmt.then)
            yield from statements(stmt.else_)
        elif isinstance(stmt, ir.While | ir.ForRange):
            yield from statements(stmt.body)


def statement_exprs(stmt: ir.Stmt) -> tuple[ir.Expr, ...]:
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


def quiet_expr(plan: ExecutionPlan, node: ir.Expr, owned: str, inline: Container[str]) -> bool:
    """Whether ``node`` charges nothing but fuel and never reads ``owned`` (``inline``: the
    built-ins the code generator compiles inline, which charge only their base fuel)."""
    for sub in expr_nodes(node):
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
CallTest = Callable[[ir.Call, str], bool]
"""A test of one call with respect to the owned local's name."""


@dataclass(frozen=True)
class Ownership:
    """What the one ownership proof (``owned_local``) must know about one kind of owned value.

    Why one record: lists, maps and texts are proved owned by the same walks; only these answers
    differ, so each kind states them once and the walks cannot drift apart between kinds."""

    holds: Callable[[SandboxType | None], bool]
    """Whether a local of this declared type can be owned at all."""
    made: Callable[[ir.Expr], bool]
    """Whether an assigned value is a fresh one (``list.empty``, ``map.empty``, a text literal)."""
    update: SelfUpdate
    """The local of an owned update ``v = op(v, ...)`` (its own operands already checked)."""
    reader: CallTest
    """Whether a call may read the owned local as its first argument (it keeps nothing)."""
    quiet: Quiet
    """Whether a loop expression charges nothing but fuel and reads the owned local only as allowed."""
    pieces: CallTest | None = None
    """Whether an update's operands inside the loop may be compiled inline; None: each is ``quiet``."""

    def operands_ok(self, update: ir.Call, owned: str) -> bool:
        """Whether the operands of one owned update inside the loop keep the loop's room exact."""
        if self.pieces is not None:
            return self.pieces(update, owned)
        return all(self.quiet(operand, owned) for operand in update.args[1:])


def quiet_body(body: tuple[ir.Stmt, ...], owned: str, kind: Ownership) -> bool:
    """Whether ``body`` assigns ``owned`` only by owned updates with acceptable operands and
    otherwise charges nothing but fuel (quiet expressions, ``if``, ``break``, ``continue``; no
    return, no nested loop): the room taken before the loop stays exact while it runs."""
    for stmt in statements(body):
        if isinstance(stmt, ir.Set) and stmt.name == owned:
            if kind.update(stmt) != owned:
                return False
            assert isinstance(stmt.value, ir.Call)
            if not kind.operands_ok(stmt.value, owned):
                return False
        elif isinstance(stmt, ir.Set | ir.ExprStmt | ir.If):
            if not all(kind.quiet(e, owned) for e in statement_exprs(stmt)):
                return False
        elif not isinstance(stmt, ir.Break | ir.Continue):
            return False  # return, or a nested loop
    return True


def read_only_by(root: ir.Expr, name: str, reader: CallTest, allowed: Iterable[int] = ()) -> bool:
    """Whether every read of local ``name`` in ``root`` is the first argument of a call ``reader``
    accepts (or a node whose ``id`` is in ``allowed``): a read that keeps nothing of the value."""
    kept = set(allowed)
    for sub in expr_nodes(root):
        if isinstance(sub, ir.Call) and reader(sub, name):
            kept.add(id(sub.args[0]))
        elif is_var(sub, name) and id(sub) not in kept:
            return False
    return True


def confined(info: FunctionInfo, name: str, kind: Ownership) -> bool:
    """Whether local ``name`` of ``info`` is only this function's: of a type ``kind`` can own, not a
    parameter or loop counter, assigned only fresh values or by owned updates (the receiver being
    the call's first argument), and otherwise read only as the first argument of ``kind``'s readers
    or by ``return name`` - the reads inside an update's own operands included. No other version
    of it can exist outside this function's code."""
    if not kind.holds(info.local_types.get(name)):
        return False
    if any(param.name == name for param in info.function.parameters):
        return False
    for stmt in statements(info.function.body):
        allowed: tuple[int, ...] = ()
        if isinstance(stmt, ir.ForRange) and stmt.local == name:
            return False
        if isinstance(stmt, ir.Set) and stmt.name == name:
            if kind.made(stmt.value):
                continue
            if kind.update(stmt) != name:
                return False
            assert isinstance(stmt.value, ir.Call)
            allowed = (id(stmt.value.args[0]),)
        elif isinstance(stmt, ir.Return) and is_var(stmt.value, name):
            continue
        if not all(read_only_by(root, name, kind.reader, allowed) for root in statement_exprs(stmt)):
            return False
    return True


def owned_local(info: FunctionInfo, loop: ir.While | ir.ForRange, kind: Ownership) -> str | None:
    """The one local the body of ``loop`` updates in the owned way when the loop charges nothing
    else beyond fuel and the function never shares it (``confined``); else None. The one proof
    of owned lists (here), maps (``owned_maps``) and texts (``owned_text``)."""
    found = {name for stmt in statements(loop.body) if (name := kind.update(stmt)) is not None}
    if len(found) != 1:
        return None
    name = found.pop()
    if isinstance(loop, ir.While) and not kind.quiet(loop.condition, name):
        return None
    if isinstance(loop, ir.ForRange) and loop.local == name:
        return None
    if not quiet_body(loop.body, name, kind):
        return None
    return name if confined(info, name, kind) else None


def reads_through(plan: ExecutionPlan, readers: Container[str]) -> CallTest:
    """The reader test of a kind whose readers are the built-ins ``readers`` taking the owned local
    as their first argument."""

    def reader(node: ir.Call, name: str) -> bool:
        return (
            node.name in readers
            and bool(node.args)
            and is_var(node.args[0], name)
            and plan.call_target(node).kind is CallKind.BUILTIN
        )

    return reader


def _flat_list(local: SandboxType | None) -> bool:
    return isinstance(local, ListType) and local.element in FLAT_ELEMENTS


def owned_list(
    plan: ExecutionPlan, info: FunctionInfo, loop: ir.While | ir.ForRange, inline: Container[str]
) -> str | None:
    """The IR local the bulk ``loop`` of function ``info`` may append to in place, or None
    (``inline``: the built-ins compiled inline, ``codegen._INLINE_BUILTINS``). One list per loop:
    its room is computed alone, so no other charge may share the limits."""
    kind = Ownership(
        holds=_flat_list,
        made=lambda value: builtin_call(plan, value, "list.empty"),
        update=lambda stmt: self_rebind(plan, stmt, "list.add"),
        reader=reads_through(plan, _READERS),
        quiet=lambda node, name: quiet_expr(plan, node, name, inline),
    )
    return owned_local(info, loop, kind)


__all__ = [
    "FLAT_ELEMENTS",
    "CallTest",
    "Ownership",
    "Quiet",
    "SelfUpdate",
    "builtin_call",
    "confined",
    "expr_nodes",
    "is_var",
    "owned_list",
    "owned_local",
    "plain_node",
    "quiet_body",
    "quiet_expr",
    "read_only_by",
    "reads_through",
    "self_rebind",
    "statement_exprs",
    "statements",
]
