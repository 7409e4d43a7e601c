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
  ``_s_smat(R, p)``, ``_s_sox(R, f, lr, site, site, p, x)``, argument counts checked, the sites
  fuel segments of this artifact), and only after a ``_s_sown`` stored it;
* any other load (a value, a return, an assignment, a slot passed where the list goes) fails the
  ordinary name rules: ``p<n>`` is not a slot, so it is neither a good load nor a good store.

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
PARTS_ARGS: Final = {"_p_part": (0, 2), "_s_smat": (1, 2), "_s_sox": (5, 7)}
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
"""The exact node classes admitted (as in ``verifier``: never ``isinstance``, so no subclass passes)."""


def _name(node: Any, ctx: type[ast.expr_context]) -> bool:
    return type(node) in _NAMES and type(node.ctx) is ctx and type(node.id) is str


def _int_const(node: Any) -> int | None:
    if type(node) in _CONSTS and type(node.value) is int:
        return int(node.value)
    return None


def take_parts(verifier: Any, stmt: ast.Assign, parts: set[str]) -> None:
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
        and _name(args[0], ast.Load)
        and args[0].id == "R"
        and _int_const(args[2]) in PRODUCERS
    ):
        raise _fail("_s_sown takes the run state, a text slot and a producer kind", stmt)
    for element in target.elts[1:]:
        verifier.target(element)
    verifier.count(4 + _TAKEN)
    verifier.expr(args[1])
    parts.add(target.elts[0].id)


def parts_call(callee: str, node: ast.Call, parts: set[str], charge_sites: Any) -> list[ast.expr] | None:
    """The arguments of a call left to check once its parts argument is checked and removed, or
    None when ``callee`` takes no parts list. Any parts list elsewhere fails the name rules."""
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
    if not (_name(given, ast.Load) and given.id in parts):
        raise _fail(f"{callee} needs a parts list taken by _s_sown", node)
    if callee == "_s_sox":
        for at in (3, 4):
            if _int_const(args[at]) not in charge_sites:
                raise _fail("_s_sox names fuel segments of this artifact", node)
    return [*args[:position], *args[position + 1 :]]


def literal_text_args(args: list[ast.expr], texts: int, node: ast.Call) -> None:
    """``_s_tlit(R, index)``: a constant index of the artifact's text table."""
    index = _int_const(args[1]) if len(args) == 2 else None
    if index is None or not 0 <= index < texts:
        raise _fail("_s_tlit takes one constant text-table index", node)


__all__ = ["PARTS", "PARTS_ARGS", "TAKE", "literal_text_args", "parts_call", "take_parts"]
