"""Verifier rule for pre-checked fast chunks of owned strings (``codegen_strchunk``, rule 21).

Why: a fast chunk appends pieces to an owned text's parts list with no check at all, on the
strength of one worst-case check at its start (``_s_strfits``) and one settlement at its end
(``_s_strdone``). The verifier does not trust the code generator, so it admits the unchecked
append only in exactly this shape, standing right after the bulk reservation whose iterations it
runs:

    n = _s_cap(R, ...)                             # or _s_capm: the reservation (rule 6)
    if _s_strfits(R, f, n, FIXED, MOST):           # FIXED, MOST: int constants >= 0
        for i in _range(k, k + n):                 # exactly the reserved iterations
            _p_part(p, _p_strchunk_i2s(x))         # or _p_part(p, t): the only statement
        f, L, h, r = _s_strdone(R, f, p, FIXED)    # p's own slots (its _s_sown), the same FIXED
        k = k + n
        continue

``_s_strfits``, ``_s_strdone`` and ``_p_strchunk_i2s`` (``str``, the number's text) stand nowhere
else, and the ``_p_part`` of the chunk is approved only here (``verify_parts``). What the verifier cannot see - whether the worst case was computed
right, whether the pieces are as short as ``MOST`` says - ``text_chunk.done`` checks at run time
against the meter, before anything can read the text or the meter: pieces past a limit, or fuel
below zero, fail the run closed (``R-HOST-INTERNAL``). So no piece goes past a limit undetected.
"""

from __future__ import annotations

import ast
from typing import Any, Final

from . import pyast as P
from .errors import VerifierFailure
from .text_chunk import NUMBER_TEXT

FITS: Final = "_s_strfits"
DONE: Final = "_s_strdone"
STUBS: Final = frozenset({FITS, DONE})
"""The two stubs of the form: each call is approved by ``check`` or refused."""


def _exactly(base: type[ast.AST]) -> frozenset[type[ast.AST]]:
    """The exact node classes admitted for ``base``: itself and its positioned twin (``pyast``);
    never ``isinstance``, so no other subclass passes."""
    return frozenset({base, *(twin for twin, of in P.POSITIONED.items() if of is base)})


_NODES: Final = (
    ast.Name,
    ast.Constant,
    ast.Call,
    ast.Assign,
    ast.Tuple,
    ast.Expr,
    ast.For,
    ast.BinOp,
    ast.Continue,
)
_NAMES, _CONSTS, _CALLS, _ASSIGNS, _TUPLES, _EXPRS, _FORS, _BINOPS, _CONTINUES = map(_exactly, _NODES)


def _fail(message: str, node: ast.AST) -> VerifierFailure:
    return VerifierFailure(f"{message} (line {getattr(node, 'lineno', '?')})")


def _load(node: Any) -> str | None:
    if type(node) in _NAMES and type(node.ctx) is ast.Load and type(node.id) is str:
        return str(node.id)
    return None


def _store(node: Any) -> str | None:
    if type(node) in _NAMES and type(node.ctx) is ast.Store and type(node.id) is str:
        return str(node.id)
    return None


def _count(node: Any) -> int | None:
    """A non-negative int constant, else None."""
    if type(node) in _CONSTS and type(node.value) is int and node.value >= 0:
        return int(node.value)
    return None


def _call(node: Any, callee: str, arity: int) -> Any:
    """``callee(...)`` with ``arity`` positional arguments, else None."""
    if type(node) in _CALLS and _load(node.func) == callee and not node.keywords and len(node.args) == arity:
        return node
    return None


def is_form(stmt: Any) -> bool:
    """An ``if`` whose test calls ``_s_strfits``: it must then be the whole form (``check``)."""
    test: Any = getattr(stmt, "test", None)
    return type(test) in _CALLS and _load(test.func) == FITS


def _sum_of(node: Any, left: str, right: str) -> bool:
    return (
        type(node) in _BINOPS
        and type(node.op) is ast.Add
        and _load(node.left) == left
        and _load(node.right) == right
    )


def check(
    stmt: ast.If, reservation: tuple[str, Any] | None, taken: dict[str, tuple[str, str, str, str]]
) -> list[Any]:
    """Check the form (the module docstring's), ``reservation`` the count the statement before it
    reserved and the start it reserved from (None: it is not a reservation), ``taken`` the parts
    lists taken so far and their slots. Returns the ids of the calls it approves (``_s_strfits``, ``_p_part``, ``_s_strdone``,
    ``_p_strchunk_i2s``);
    everything under it is then checked by the ordinary rules."""
    if reservation is None:
        raise _fail("a fast text chunk stands right after its bulk reservation", stmt)
    reserved, reserved_from = reservation
    fits = _call(stmt.test, FITS, 5)
    if fits is None or stmt.orelse or len(stmt.body) != 4:
        raise _fail("a fast text chunk is `if _s_strfits(...)` with four statements and no else", stmt)
    args = fits.args
    fixed, most = _count(args[3]), _count(args[4])
    if (
        not (_load(args[0]) == "R" and _load(args[1]) == "f" and _load(args[2]) == reserved)
        or fixed is None
        or most is None
    ):
        raise _fail("_s_strfits takes R, f, the reserved count and two constants", stmt)
    loop: Any
    settled: Any
    advance: Any
    loop, settled, advance, last = stmt.body
    iterator: Any = loop.iter if type(loop) in _FORS else None
    range_args: Any = iterator.args if _call(iterator, "_range", 2) is not None else None
    start = _load(range_args[0]) if range_args is not None else None
    if not (
        start is not None
        and start == _load(reserved_from)
        and range_args is not None
        and _sum_of(range_args[1], start, reserved)
        and _store(loop.target) is not None
        and not loop.orelse
        and not getattr(loop, "type_comment", None)
        and len(loop.body) == 1
    ):
        raise _fail("a fast text chunk runs _range(k, k + n) over its reservation, one statement", stmt)
    append: Any = loop.body[0]
    part: Any = _call(append.value, "_p_part", 2) if type(append) in _EXPRS else None
    parts = _load(part.args[0]) if part is not None else None
    if part is None or parts is None or parts not in taken:
        raise _fail("a fast text chunk only appends to a parts list taken by _s_sown", stmt)
    piece = part.args[1]
    number = _call(piece, NUMBER_TEXT, 1)
    if number is None and _load(piece) is None:
        raise _fail("a fast text chunk appends a number's text or a slot", stmt)
    length, calls, _, room = taken[parts]
    done: Any = _call(settled.value, DONE, 4) if type(settled) in _ASSIGNS else None
    target: Any = settled.targets[0] if done is not None and len(settled.targets) == 1 else None
    names = [_store(e) for e in target.elts] if type(target) in _TUPLES else []
    if not (
        done is not None
        and type(target.ctx) is ast.Store
        and names == ["f", length, calls, room]
        and _load(done.args[0]) == "R"
        and _load(done.args[1]) == "f"
        and _load(done.args[2]) == parts
        and _count(done.args[3]) == fixed
        and not getattr(settled, "type_comment", None)
    ):
        raise _fail("a fast text chunk ends with f, L, h, r = _s_strdone(R, f, p, FIXED)", stmt)
    if not (
        type(advance) in _ASSIGNS
        and len(advance.targets) == 1
        and _store(advance.targets[0]) == start
        and _sum_of(advance.value, start, reserved)
        and type(last) in _CONTINUES
    ):
        raise _fail("a fast text chunk moves its start past the chunk and continues", stmt)
    return [id(fits), id(part), id(done), *([id(number)] if number is not None else [])]


__all__ = ["DONE", "FITS", "NUMBER_TEXT", "STUBS", "check", "is_form"]
