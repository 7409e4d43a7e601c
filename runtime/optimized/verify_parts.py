"""Verifier rules for owned strings' parts lists (``p<n>``): the generated code may not misuse them.

Why: a parts list (``codegen_text``) is a mutable Python list that the generated code appends a
text's pieces to while it charges each concatenation inline; ``text_parts`` settles the charges
from the pieces and joins them once. Were generated code able to read the list as a value, return
it, store it in a collection, alias it under another name, pass it to another stub or append to it
outside the inline concatenation form, it could hand out a mutable object or change which pieces
get charged. So the verifier (which does not trust the code generator) confines the name:

* it is stored only by ``p<n>, t<n>, t<n>, t<n>, t<n> = _s_sown(R, v<n>, kind)`` (exactly that
  shape, three arguments, ``kind`` one of ``owned_text.PRODUCERS``), and ``_s_sown`` is called
  nowhere else;
* it is loaded only as the parts argument of ``PARTS_ARGS``'s callees (``_p_part(p, x)``,
  ``_s_smat(R, p)``, ``_s_sox(R, f, lr, site, site, p, x)`` (or ``_s_soxl``, ``_s_soxv``: the
  fallbacks of a literal and a local piece), argument counts checked, the sites
  fuel segments of this artifact), and only after a ``_s_sown`` stored it;
* any other load (a value, a return, an assignment, a slot passed where the list goes) fails the
  ordinary name rules: ``p<n>`` is not a slot, so it is neither a good load nor a good store;
* ``_p_part`` and ``_s_sox`` stand only in the inline concatenation form (``PartsRules.approve``),
  so no piece is appended without its length, room and host-call checks and the locals' updates
  (``text_parts.settle`` re-measures the pieces and refuses a run that went past a limit anyway),
  or ``_p_part`` and ``_s_strdone(R, f, p, FIXED)`` in a pre-checked fast chunk (``verify_strchunk``).

``_s_tlit(R, index)`` (the text of a literal, for a loop that appends literals) takes exactly a
constant index of the artifact's text table.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Final

from . import pyast as P
from .errors import VerifierFailure
from .owned_text import PRODUCERS

PARTS: Final = re.compile(r"p(?:0|[1-9][0-9]{0,6})\Z")
"""An owned text's parts list: never a value, only an argument of ``PARTS_ARGS``'s callees."""
FALLBACKS: Final = frozenset({"_s_sox", "_s_soxl", "_s_soxv"})
"""The exact fallbacks of an owned concatenation (a number's text, a literal, a local piece)."""
PARTS_ARGS: Final = {
    "_p_part": (0, 2),
    "_s_smat": (1, 2),
    "_s_strdone": (2, 4),
    **dict.fromkeys(FALLBACKS, (5, 7)),
}
"""Callee -> (position of its parts argument, its argument count)."""
TAKE: Final = "_s_sown"
_TAKEN: Final = 5
"""Length of the tuple ``_s_sown`` returns: the list, its length and three rooms."""


def _fail(message: str, node: ast.AST | None = None) -> VerifierFailure:
    line = getattr(node, "lineno", None)
    return VerifierFailure(message if line is None else f"{message} (line {line})")


_NAMES: Final = frozenset({ast.Name, P.Name})
_TUPLES: Final = frozenset({ast.Tuple, P.Tuple})
_CONSTS: Final = frozenset({ast.Constant, P.Constant})
_COMPARES: Final = frozenset({ast.Compare, P.Compare})
_ASSIGNS: Final = frozenset({ast.Assign, P.Assign})
_BINOPS: Final = frozenset({ast.BinOp, P.BinOp})
_BOOLOPS: Final = frozenset({ast.BoolOp, P.BoolOp})
_EXPRS: Final = frozenset({ast.Expr, P.ExprStmt})
_CALLS: Final = frozenset({ast.Call, P.Call})
"""The exact node classes admitted (as in ``verifier``: never ``isinstance``, so no subclass passes)."""


def _name(node: Any, ctx: type[ast.expr_context]) -> bool:
    return type(node) in _NAMES and type(node.ctx) is ctx and type(node.id) is str


def _int_const(node: Any) -> int | None:
    if type(node) in _CONSTS and type(node.value) is int:
        return int(node.value)
    return None


def _store_name(node: Any) -> str | None:
    return str(node.id) if _name(node, ast.Store) else None


def _load_name(node: Any) -> str | None:
    return str(node.id) if _name(node, ast.Load) else None


def _compare(node: Any, op: type[ast.cmpop]) -> tuple[Any, Any] | None:
    """(left, right) of ``left <op> right`` (one operator), else None."""
    if (
        type(node) in _COMPARES
        and len(node.ops) == 1
        and type(node.ops[0]) is op
        and len(node.comparators) == 1
    ):
        return node.left, node.comparators[0]
    return None


def _assigned(stmt: Any) -> tuple[str | None, Any]:
    """(target, value) of ``name = value``, else (None, None)."""
    if type(stmt) in _ASSIGNS and len(stmt.targets) == 1 and not getattr(stmt, "type_comment", None):
        return _store_name(stmt.targets[0]), stmt.value
    return None, None


def _minus(value: Any, name: str) -> Any:
    """``x`` of ``name - x``, else None."""
    if type(value) in _BINOPS and type(value.op) is ast.Sub and _load_name(value.left) == name:
        return value.right
    return None


def _call_of(stmt: Any, callee: str) -> Any:
    """The call of an expression statement ``callee(...)``, else None."""
    if type(stmt) in _EXPRS and type(stmt.value) in _CALLS and _load_name(stmt.value.func) == callee:
        return stmt.value
    return None


def _fallback_of(stmt: Any) -> Any:
    """The call of an expression statement calling one of ``FALLBACKS``, else None."""
    call: Any = stmt.value if type(stmt) in _EXPRS else None
    name = _load_name(call.func) if type(call) in _CALLS else None
    return call if name is not None and name in FALLBACKS else None


class PartsRules:
    """The parts lists of the function being verified, and the calls found to use them rightly."""

    def __init__(self) -> None:
        self.taken: dict[str, tuple[str, str, str, str]] = {}
        """Parts list -> the slots its take bound: (length, host calls left, longest, room)."""
        self.approved: set[int] = set()
        """``id`` of the ``_p_part`` and ``_s_sox`` calls found in an inline concatenation form."""

    def take(self, verifier: Any, stmt: ast.Assign) -> None:
        """``p<n>, t, t, t, t = _s_sown(R, v<n>, kind)``: the only store of a parts list."""
        targets = stmt.targets
        target: Any = targets[0] if len(targets) == 1 else None
        if not (
            type(target) in _TUPLES
            and type(target.ctx) is ast.Store
            and len(target.elts) == _TAKEN
            and _name(target.elts[0], ast.Store)
            and PARTS.match(target.elts[0].id)
            and not getattr(stmt, "type_comment", None)
        ):
            raise _fail("_s_sown is unpacked into a parts list and four slots", stmt)
        value: Any = stmt.value
        args = value.args
        if not (
            type(value.func.ctx) is ast.Load
            and not value.keywords
            and len(args) == 3
            and _load_name(args[0]) == "R"
            and _int_const(args[2]) in PRODUCERS
        ):
            raise _fail("_s_sown takes the run state, a text slot and a producer kind", stmt)
        for element in target.elts[1:]:
            verifier.target(element)
        slots = tuple(element.id for element in target.elts[1:])
        if len(set(slots)) != len(slots):
            raise _fail("_s_sown's slots are distinct", stmt)
        verifier.count(4 + _TAKEN)
        verifier.expr(args[1])
        length, calls, longest, room = slots
        self.taken[target.elts[0].id] = (length, calls, longest, room)

    def approve(self, stmt: ast.If) -> None:
        """Approve the ``_p_part`` and ``_s_sox`` of an ``if`` that is exactly the inline
        concatenation form (``codegen_text``); an ``if`` of any other shape approves nothing:

            if f >= q and h >= k and c <= m and r >= u:
                f = f - q; h = h - k; r = r - u; L = c; _p_part(p, x)
            else:
                _s_sox(R, f, lr, site, site, p, e)

        where ``L, h, m, r`` are the slots ``p``'s take bound and ``k`` a positive constant: a piece
        enters the list only once its new length ``c`` was checked against ``maxStringLength``, its
        bytes against the room and its host calls against those left, and the locals move on."""
        body, orelse = stmt.body, stmt.orelse
        test: Any = stmt.test
        if len(body) != 5 or len(orelse) != 1:
            return
        part, fallback = _call_of(body[4], "_p_part"), _fallback_of(orelse[0])
        if part is None or fallback is None or len(part.args) != 2 or len(fallback.args) != 7:
            return
        parts = _load_name(part.args[0])
        if parts is None or parts not in self.taken or _load_name(fallback.args[5]) != parts:
            return
        length, calls, longest, room = self.taken[parts]
        if not (type(test) in _BOOLOPS and type(test.op) is ast.And and len(test.values) == 4):
            return
        fuel, host, size, bytes_ = (_compare(v, op) for v, op in zip(test.values, _FORM_OPS, strict=True))
        if fuel is None or host is None or size is None or bytes_ is None:
            return
        q, count, c = _load_name(fuel[1]), _int_const(host[1]), _load_name(size[0])
        if not (
            _load_name(fuel[0]) == "f"
            and q is not None
            and _load_name(host[0]) == calls
            and count is not None
            and count >= 1
            and c is not None
            and _load_name(size[1]) == longest
            and _load_name(bytes_[0]) == room
        ):
            return
        updates = [_assigned(line) for line in body[:4]]
        if not (
            updates[0][0] == "f"
            and _load_name(_minus(updates[0][1], "f")) == q
            and updates[1][0] == calls
            and _int_const(_minus(updates[1][1], calls)) == count
            and updates[2][0] == room
            and _same(_minus(updates[2][1], room), bytes_[1])
            and updates[3][0] == length
            and _load_name(updates[3][1]) == c
        ):
            return
        self.approved.add(id(part))
        self.approved.add(id(fallback))

    def call(self, callee: str, node: ast.Call, charge_sites: Any) -> list[ast.expr] | None:
        """The arguments of a call left to check once its parts argument is checked and removed,
        or None when ``callee`` takes no parts list. Any parts list elsewhere fails the name rules."""
        taker = PARTS_ARGS.get(callee)
        args = node.args
        if callee == TAKE:
            raise _fail("_s_sown is only ever unpacked into a parts list and four slots", node)
        if taker is None:
            return None
        position, count = taker
        if len(args) != count:
            raise _fail(f"{callee} called with the wrong number of arguments", node)
        given: Any = args[position]
        if not (_name(given, ast.Load) and given.id in self.taken):
            raise _fail(f"{callee} needs a parts list taken by _s_sown", node)
        if callee != "_s_smat" and id(node) not in self.approved:
            raise _fail(f"{callee} outside the inline concatenation form", node)
        if callee in FALLBACKS:
            for at in (3, 4):
                if _int_const(args[at]) not in charge_sites:
                    raise _fail(f"{callee} names fuel segments of this artifact", node)
        return [*args[:position], *args[position + 1 :]]


_FORM_OPS: Final = (ast.GtE, ast.GtE, ast.LtE, ast.GtE)
"""The comparisons of the inline form's test, in order: fuel, host calls, length, room."""


def _same(left: Any, right: Any) -> bool:
    """Two expressions of the same shape (the room's update subtracts what its test compared)."""
    return left is not None and right is not None and ast.dump(left) == ast.dump(right)


def literal_text_args(args: list[ast.expr], texts: int, node: ast.Call) -> None:
    """``_s_tlit(R, index)``: a constant index of the artifact's text table."""
    index = _int_const(args[1]) if len(args) == 2 else None
    if index is None or not 0 <= index < texts:
        raise _fail("_s_tlit takes one constant text-table index", node)


__all__ = ["PARTS", "PARTS_ARGS", "TAKE", "PartsRules", "literal_text_args"]
