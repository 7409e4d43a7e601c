"""Verifier rule for the fused literal reads (``_s_lrget``, ``_s_lrhas``: ``literal_reads``).

A fused read ``t, f = _s_lrget(R, f, lr, text_site, index, read_site, m)`` pays two fuel segments
and charges a text literal from the artifact's tables, then reads ``m`` at that literal. The code
generator emits it only for a call ``map.get(m, "literal")`` (``map.containsKey`` for
``_s_lrhas``) of the plan, so the verifier holds each call to exactly that, against the plan rather
than the generated code's own say-so:

* seven arguments, ``R`` first, the refund in the third place (rule 19, ``verify_refunds``);
* ``text_site`` a non-empty fuel segment whose last charge is an expression's (the literal's own
  charge, which the segment pays before the literal is evaluated);
* ``index`` a constant index of the text table naming a *string* literal;
* ``read_site`` an empty fuel segment of its own (nothing is charged between a literal and the read
  that uses it), located at an operation of the plan (``tables.site_nodes``) that is a call of the
  stub's built-in whose key argument is a string literal with exactly the table's text, used by no
  other fused read of the module.

So a tampered call cannot point the read's failures at another node, read another key than its
call's, charge a text the plan never evaluates there, skip the literal's segment, or stand for a
built-in it is not. The map operand is checked like every other argument (a slot or a constant).
"""

from __future__ import annotations

import ast
from collections.abc import Container
from typing import Any

from dotboxd.core import ast as ir
from dotboxd.core import costs
from dotboxd.runtime.locations import operation_nodes
from dotboxd.validator.plan import CallKind, ExecutionPlan

from . import pyast as P
from .errors import VerifierFailure
from .literal_reads import ARITY, READS
from .tables import CHARGES, Tables

STUBS = frozenset(READS)
"""The fused stubs this rule admits (nowhere else do they stand)."""

_CONSTS = frozenset({ast.Constant, P.Constant})


def _fail(message: str, node: ast.AST | None = None) -> VerifierFailure:
    where = f" (line {getattr(node, 'lineno', '?')})" if node is not None else ""
    return VerifierFailure(f"literal read: {message}{where}")


def _int_arg(args: list[ast.expr], at: int) -> int | None:
    arg: Any = args[at]
    if type(arg) in _CONSTS and type(arg.value) is int:
        return int(arg.value)
    return None


class LiteralReadRules:
    """The fused reads of one module, checked against the plan (its operation nodes walked once,
    when the first fused read is met)."""

    def __init__(self, plan: ExecutionPlan, tables: Tables) -> None:
        self.plan = plan
        self.tables = tables
        self.operations: tuple[ir.Node, ...] | None = None
        self.read_sites: set[int] = set()
        """Read sites already used by a fused read of this module (each names one call)."""

    def check(self, callee: str, args: list[ast.expr], node: ast.Call, charge_sites: Container[int]) -> None:
        if len(args) != ARITY:
            raise _fail(f"{callee} takes {ARITY} arguments", node)
        text_site, index, read_site = _int_arg(args, 3), _int_arg(args, 4), _int_arg(args, 5)
        if text_site is None or index is None or read_site is None:
            raise _fail(f"{callee}'s sites and text index are integer constants", node)
        sites, texts = self.tables.sites, self.tables.texts
        if not (text_site in charge_sites and 0 <= text_site < len(sites)):
            raise _fail("the literal's site is not a fuel segment", node)
        charges = sites[text_site][1]
        if not charges or charges[-1] != costs.EXPRESSION_FUEL:
            raise _fail("the literal's segment does not end with the literal's own charge", node)
        if not 0 <= index < len(texts) or texts[index][0] != "string":
            raise _fail("the key is not a string literal of the text table", node)
        if not (read_site in charge_sites and 0 <= read_site < len(sites)) or read_site == text_site:
            raise _fail("the read's site is not a fuel segment of its own", node)
        if sites[read_site] != (CHARGES, ()):
            raise _fail("the read's segment is not empty", node)
        if read_site in self.read_sites:
            raise _fail("the read's site is used by another fused read", node)
        self.read_sites.add(read_site)
        self.plan_call(callee, texts[index][1], self.tables.site_nodes.get(read_site), node)

    def plan_call(self, callee: str, text: str, ordinal: int | None, node: ast.Call) -> None:
        """The read site's operation is a plan call of ``callee``'s built-in at the literal ``text``."""
        operations = self.operations
        if operations is None:
            operations = self.operations = operation_nodes(self.plan.module)
        if ordinal is None or not 0 <= ordinal < len(operations):
            raise _fail("the read's site is located at no operation of the plan", node)
        call = operations[ordinal]
        if type(call) is not ir.Call:
            raise _fail("the read's site is not located at a call", node)
        target = self.plan.call_targets.get(id(call))
        if target is None or target.kind is not CallKind.BUILTIN or target.name != READS[callee]:
            raise _fail(f"the read's call is not {READS[callee]}", node)
        key = call.args[1] if len(call.args) == 2 else None
        if not (
            type(key) is ir.Literal
            and key.kind is ir.LiteralKind.STRING
            and type(key.value) is str
            and key.value == text
        ):
            raise _fail("the key is not the plan call's literal", node)


__all__ = ["STUBS", "LiteralReadRules"]
