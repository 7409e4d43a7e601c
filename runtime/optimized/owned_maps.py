"""Which map a bulk loop may update in place: the ownership proof of owned maps.

Why: ``map.containsKey``, ``map.get`` and ``map.set`` in a loop are stub calls with a meter
settlement each, and ``map.set`` builds a new HAMT version (~1 us per update) where CPython's dict
update takes ~40 ns. When the code generator can prove that a map local is *owned* - only this
function's code can ever see it, and while the loop runs nothing but the inline map forms reads it -
the loop may keep the map as a plain ``dict`` (``stubs.take_owned_map``), run the reads and updates
inline with their charges computed from the dict's size (``codegen.owned_map_op``), and hand out
the immutable value once, after the loop.

The proof, over the plan's IR (conservative: anything else is simply not owned):

* the local is a ``Map<K, V>`` with ``K`` in Bool, I32, I64, String (one Python type per map, so a
  raw key is its own key token) and a scalar ``V`` (its shape is ``flat_map_shape``, or with text
  keys ``text_keyed_map_shape``);
* it is not a parameter or a loop counter, and every assignment to it in the function is
  ``map.empty`` or ``m = map.set(m, k, v)`` (so it always holds a version made in this function);
* every other read of it is the map argument of ``map.get``, ``map.containsKey`` or ``map.count``
  (which return scalars and keep nothing), or a ``return m``: it is never passed to a function or
  binding, stored in another value or copied to another local;
* inside the loop, besides those reads and updates (whose other arguments may read it only through
  the same readers), the body and condition do nothing that charges the meter beyond fuel: scalar
  literals, locals, unary and binary operations on scalars, the inline numeric conversions,
  ``list.get`` of a list local the loop never assigns, ``if``, ``break`` and ``continue`` (no other
  calls, no new text, no ``return``, no nested loop), so the room
  computed before the loop from the meter stays exact until the map is materialized;
* the loop does not stand inside another loop (taking the map and handing it back cost O(entries)
  each: once per call they are paid for by the updates that made the map, once per outer iteration
  they would not be).
"""

from __future__ import annotations

from collections.abc import Container
from functools import partial

from dotboxd.core import ast as ir
from dotboxd.core.types import BOOL, I32, I64, STRING, MapType, SandboxType
from dotboxd.validator.plan import ExecutionPlan, FunctionInfo

from .owned import (
    FLAT_ELEMENTS,
    Ownership,
    builtin_call,
    expr_nodes,
    is_var,
    owned_local,
    plain_node,
    read_only_by,
    reads_through,
    statements,
)

_KEYS = frozenset({BOOL, I32, I64, STRING})
"""Key types whose values are one Python type each (``bool``, ``int`` or ``str``)."""
READERS = frozenset({"map.get", "map.containsKey", "map.count"})
"""The built-ins that may read an owned map (inside and outside the loop)."""
UPDATE = "map.set"
_ITEM_READ = "list.get"


def _receiver_reads(plan: ExecutionPlan, root: ir.Expr, name: str) -> bool:
    """Whether every read of ``name`` in ``root`` is the map argument of a reader."""
    return read_only_by(root, name, reads_through(plan, READERS))


def _self_set(plan: ExecutionPlan, stmt: ir.Stmt) -> str | None:
    """The local of ``m = map.set(m, k, v)`` (``k``, ``v`` reading ``m`` only through readers)."""
    if not isinstance(stmt, ir.Set):
        return None
    value = stmt.value
    if not (isinstance(value, ir.Call) and builtin_call(plan, value, UPDATE) and len(value.args) == 3):
        return None
    if not is_var(value.args[0], stmt.name):
        return None
    if not all(_receiver_reads(plan, arg, stmt.name) for arg in value.args[1:]):
        return None
    return stmt.name


def _quiet_expr(
    plan: ExecutionPlan, inline: Container[str], assigned: Container[str], root: ir.Expr, owned: str
) -> bool:
    """Whether ``root`` charges nothing but fuel apart from the owned map's readers, and reads the
    owned map only through them. ``list.get`` of a list local the loop never assigns (``assigned``:
    the names it does) is allowed too: it charges fuel only and hands out an item that exists
    already (how a loop reads the words it counts)."""
    if not _receiver_reads(plan, root, owned):
        return False
    for sub in expr_nodes(root):
        if not plain_node(plan, sub):
            return False
        if isinstance(sub, ir.Call):
            receiver = sub.args[0] if sub.args else None
            reader = sub.name in READERS and receiver is not None and is_var(receiver, owned)
            item = sub.name == _ITEM_READ and isinstance(receiver, ir.Var) and receiver.name not in assigned
            if not ((reader or item or sub.name in inline) and builtin_call(plan, sub, sub.name)):
                return False
    return True


def _holds(local: SandboxType | None) -> bool:
    return isinstance(local, MapType) and local.key in _KEYS and local.value in FLAT_ELEMENTS


def owned_map(
    plan: ExecutionPlan, info: FunctionInfo, loop: ir.While | ir.ForRange, inline: Container[str]
) -> str | None:
    """The map local that ``loop`` may hold as a dict (None: none may). ``inline`` names the
    built-ins the code generator compiles inline; at most one owned map per loop, because its
    room is computed alone and no other charge may share the limits."""
    if _inside_a_loop(info.function.body, loop):
        return None
    assigned = {stmt.name for stmt in statements(loop.body) if isinstance(stmt, ir.Set)}
    if isinstance(loop, ir.ForRange):
        assigned.add(loop.local)
    kind = Ownership(
        holds=_holds,
        made=lambda value: builtin_call(plan, value, "map.empty"),
        update=partial(_self_set, plan),
        reader=reads_through(plan, READERS),
        quiet=partial(_quiet_expr, plan, inline, frozenset(assigned)),
    )
    return owned_local(info, loop, kind)


def _inside_a_loop(block: tuple[ir.Stmt, ...], loop: ir.Stmt) -> bool:
    """Whether ``loop`` stands inside another loop of ``block``. Why it matters: taking a map into a
    dict and handing it back each cost O(entries), so a loop entered once per iteration of an outer
    loop would pay them again and again; entered once per call, they cost no more than the updates
    that made the map."""
    for stmt in block:
        if isinstance(stmt, ir.If) and (_inside_a_loop(stmt.then, loop) or _inside_a_loop(stmt.else_, loop)):
            return True
        if isinstance(stmt, ir.While | ir.ForRange) and any(inner is loop for inner in statements(stmt.body)):
            return True
    return False


__all__ = ["READERS", "UPDATE", "owned_map"]
