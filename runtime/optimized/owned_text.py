"""Which text a bulk loop may build in a parts list: the ownership proof of owned strings.

Why: ``s = string.concatBudgeted(s, int32.toStringInvariant(i % 10))`` in a loop is two stub calls
with two meter settlements per iteration (~1.2 us) where CPython's ``s += str(i % 10)`` takes
~80 ns. When the code generator can prove that nothing reads ``s`` while the loop runs except as
the receiver of its own concatenations, the loop can keep the pieces in a private list and the
text's UTF-16 length in a local, charge each concatenation inline (``codegen_text``), and join the
pieces once when the loop is left (``text_parts``). Texts are immutable Python strings, so no other
holder of ``s`` can ever see a change; the proof is about which value is current, not about sharing.

The proof, over the plan's IR (conservative: anything else keeps the exact stubs):

* the local is a ``String`` that is not a parameter or a loop counter, every assignment to it in the
  function is a text literal or ``s = string.concatBudgeted(s, x)`` with ``x`` not reading ``s``, and
  every other read of it is the argument of ``string.length`` or a ``return s``: it is never passed
  on, stored or copied (the brief's ownership rule, kept even though texts cannot be mutated, so
  that the loop's pieces are the only live form of the text);
* inside the loop it is only the target and receiver of such concatenations, all of one producer
  kind (``PRODUCERS``): ``int32.toStringInvariant`` of a quiet ``I32`` expression (its charges are a
  function of its digit count), a ``String`` literal (its length is known when the code is
  generated) or another ``String`` local (it charges nothing); one kind per loop, or numbers' texts
  and literals none of which reads as a number (``FROM_MIXED``), so the charges of the pieces can be
  settled from the pieces alone (``text_parts.settle``);
* everything else in the loop body and condition charges nothing beyond fuel (``owned.quiet_expr``:
  scalar literals, locals, scalar operations, inline numeric conversions, ``if``, ``break``,
  ``continue``), so the host-call, string-byte and allocation rooms taken before the loop stay
  exact until the text is materialized.
"""

from __future__ import annotations

import re
from collections.abc import Container

from dotboxd.core import ast as ir
from dotboxd.core.types import I32, STRING
from dotboxd.validator.plan import ExecutionPlan, FunctionInfo

from .owned import Ownership, builtin_call, owned_local, quiet_expr, reads_through, self_rebind, statements

CONCAT = "string.concatBudgeted"
TO_STRING = "int32.toStringInvariant"
_READERS = frozenset({"string.length"})
"""The built-in that may read an owned text outside its loop (it keeps nothing)."""

FROM_INT = 0
"""Producer kind: ``int32.toStringInvariant(e)`` of an ``I32`` (one more host call per piece)."""
FROM_LITERAL = 1
"""Producer kind: a ``String`` literal (charged as a new text each time it is evaluated)."""
FROM_LOCAL = 2
"""Producer kind: another ``String`` local (a read: no charge beyond its fuel)."""
FROM_MIXED = 3
"""Producer kind of a loop whose pieces are ``int32.toStringInvariant`` texts and literals (``a,b``
lists): no literal of the loop reads as a decimal integer, so the settlement tells a literal piece
from a number's text by the text alone (``text_parts.settle``)."""
PRODUCERS = (FROM_INT, FROM_LITERAL, FROM_LOCAL, FROM_MIXED)
_DECIMAL = re.compile(r"-?[0-9]+\Z")
"""What ``int32.toStringInvariant`` can return (a literal like this keeps a loop from mixing)."""


def _self_concat(plan: ExecutionPlan, stmt: ir.Stmt) -> str | None:
    """The local of ``s = string.concatBudgeted(s, x)`` (``x`` not reading ``s``), else None."""
    return self_rebind(plan, stmt, CONCAT)


def producer_kind(plan: ExecutionPlan, piece: ir.Expr, owned: str, inline: Container[str]) -> int | None:
    """The producer kind of a concatenated piece, or None when it cannot be charged inline."""
    if isinstance(piece, ir.Literal):
        return FROM_LITERAL if piece.kind is ir.LiteralKind.STRING and plan.type_of(piece) == STRING else None
    if isinstance(piece, ir.Var):
        return FROM_LOCAL if piece.name != owned and plan.type_of(piece) == STRING else None
    if (
        isinstance(piece, ir.Call)
        and builtin_call(plan, piece, TO_STRING)
        and len(piece.args) == 1
        and plan.type_of(piece.args[0]) == I32
        and quiet_expr(plan, piece.args[0], owned, inline)
    ):
        return FROM_INT
    return None


def piece_kind(piece: ir.Expr) -> int:
    """The producer kind of one piece of a loop ``owned_text`` accepted (its node says it)."""
    if isinstance(piece, ir.Literal):
        return FROM_LITERAL
    return FROM_LOCAL if isinstance(piece, ir.Var) else FROM_INT


def _producer_kind(
    plan: ExecutionPlan, body: tuple[ir.Stmt, ...], owned: str, inline: Container[str]
) -> int | None:
    """The producer kind of the loop's concatenations onto ``owned`` (one kind, or numbers' texts
    and literals none of which reads as a number: ``FROM_MIXED``), else None."""
    pieces = [
        stmt.value.args[1]
        for stmt in statements(body)
        if isinstance(stmt, ir.Set) and isinstance(stmt.value, ir.Call) and _self_concat(plan, stmt) == owned
    ]
    kinds = {producer_kind(plan, piece, owned, inline) for piece in pieces}
    if len(kinds) == 1:
        return kinds.pop()
    if kinds == {FROM_INT, FROM_LITERAL} and not any(
        isinstance(piece, ir.Literal) and isinstance(piece.value, str) and _DECIMAL.match(piece.value)
        for piece in pieces
    ):
        return FROM_MIXED
    return None


def owned_text(
    plan: ExecutionPlan, info: FunctionInfo, loop: ir.While | ir.ForRange, inline: Container[str]
) -> tuple[str, int] | None:
    """(the IR local, its producer kind) the bulk ``loop`` of function ``info`` may build in a parts
    list, or None (``inline``: the built-ins compiled inline). One text per loop: its rooms are
    computed alone, so no other charge may share the limits."""
    kind = Ownership(
        holds=lambda local: local == STRING,
        made=lambda value: isinstance(value, ir.Literal) and value.kind is ir.LiteralKind.STRING,
        update=lambda stmt: _self_concat(plan, stmt),
        reader=reads_through(plan, _READERS),
        quiet=lambda node, name: quiet_expr(plan, node, name, inline),
        pieces=lambda update, name: producer_kind(plan, update.args[1], name, inline) is not None,
    )
    name = owned_local(info, loop, kind)
    if name is None:
        return None
    producer = _producer_kind(plan, loop.body, name, inline)
    return None if producer is None else (name, producer)


__all__ = ["FROM_INT", "FROM_LITERAL", "FROM_LOCAL", "FROM_MIXED", "PRODUCERS", "owned_text", "piece_kind"]
