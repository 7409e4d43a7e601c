"""Code generation of pre-checked fast chunks for owned-string loops (``text_chunk``, issue 16).

Why: a bulk loop whose whole body is one owned concatenation (``codegen_text``) of a number's text
or a literal spends most of its time on the four room checks and four local updates of the checked
form. Its piece is bounded (at most 11 units, or the literal's own length), so the chunk can be
checked once, in the worst case, and run without any check. The forRange bulk loop becomes

    while k < e:
        n = _s_cap(R, f, d, lr, k, e, ...)
        if _s_strfits(R, f, n, FIXED, MOST):           # the worst case of n iterations fits
            for i in _range(k, k + n):
                _p_part(p, _p_strchunk_i2s(x))         # or _p_part(p, t), t a literal's text
            f, L, h, r = _s_strdone(R, f, p, FIXED)    # the pieces settled, their fuel charged
            k = k + n
            continue
        for i in _range(k, k + n):                     # otherwise the checked chunk, unchanged
            ...

The form is only generated when the checked body is exactly the concatenation's own statements
(no other statement, no refund slot, no fault check), the piece's operand ``x`` is a pure
expression that cannot raise (names, integer constants, ``+ - *``, and ``//`` / ``%`` by a
positive constant), and the loop is a forRange (a while loop's condition runs per iteration).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from . import pyast as P
from .codegen_text import ConcatForm, OwnedText
from .text_chunk import FAST_KINDS

if TYPE_CHECKING:
    from collections.abc import Sequence

_R, _F = P.name("R"), P.name("f")
_PURE_OPS = (ast.Add, ast.Sub, ast.Mult)
_DIVIDING_OPS = (ast.FloorDiv, ast.Mod)


def pure_operand(node: ast.expr) -> bool:
    """An int expression the fast chunk may evaluate unchecked: it calls nothing and cannot raise
    (the checked form evaluates the same expression without a check, or the chunk would not be
    eligible: this is the generator's own double check, the verifier's rule is ``verify_strchunk``)."""
    if isinstance(node, ast.Name):
        return isinstance(node.ctx, ast.Load)
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.USub) and pure_operand(node.operand)
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, _DIVIDING_OPS):
            right = node.right
            positive = isinstance(right, ast.Constant) and type(right.value) is int and right.value > 0
            return positive and pure_operand(node.left)
        return isinstance(node.op, _PURE_OPS) and pure_operand(node.left) and pure_operand(node.right)
    return False


def _single_form(owned: OwnedText, body: Sequence[ast.stmt]) -> ConcatForm | None:
    """The loop's one concatenation, when the checked chunk body is exactly its statements."""
    if len(owned.forms) != 1:
        return None
    form = owned.forms[0]
    stmts = form.stmts
    if form.kind not in FAST_KINDS or stmts is None or len(stmts) != len(body):
        return None
    if any(mine is not theirs for mine, theirs in zip(stmts, body, strict=True)):
        return None
    if form.operand is not None and not pure_operand(form.operand):
        return None
    return form


def fast_chunk(
    owned: OwnedText | None, body: Sequence[ast.stmt], ivar: str, k: str, n: str
) -> ast.stmt | None:
    """The pre-checked fast chunk (the module docstring's ``if``) in front of a forRange's checked
    chunk ``body``, or None when the loop does not qualify."""
    if owned is None:
        return None
    form = _single_form(owned, body)
    if form is None:
        return None
    fits = P.call("_s_strfits", _R, _F, P.name(n), P.const(form.fixed), P.const(form.most))
    append = P.expr_stmt(P.call("_p_part", P.name(owned.parts), form.piece))
    chunk = P.range_loop(ivar, [P.name(k), P.add(P.name(k), P.name(n))], [append])
    locals_: list[ast.expr] = [P.store(name) for name in ("f", owned.length, owned.calls, owned.room)]
    settled = P.Assign(
        [P.Tuple(locals_, P.STORE)],
        P.call("_s_strdone", _R, _F, P.name(owned.parts), P.const(form.fixed)),
    )
    advance = P.assign(k, P.add(P.name(k), P.name(n)))
    return P.if_(fits, [chunk, settled, advance, P.continue_()])


__all__ = ["fast_chunk", "pure_operand"]
