"""Verifier rule 29: inline reads of a projected host event (``inline_reads``).

The inline form is the only generated code that reads and writes the run state's slots
(``R.lazy``, ``R.strings``, ...) and the only code that sees a projected snapshot other than the
fused stubs. So it is admitted only as the exact form ``inline_reads.form`` builds from its own
fallback call - rebuilt here from that call and compared node for node (``ast.dump``: class names,
fields and values, no positions), never taken on the generator's word:

* the fallback (the outer ``else``) is one ``out, f = _s_lrget/_s_lrhas(R, f, lr, ts, i, rs, ev)``,
  which the caller then checks as every fused read is checked (rule 23 against the plan: the key
  is the plan call's literal, the sites are its segments; rule 19's refund), so the folded
  constants - the key's namespace constant ``_q<i>``, the two segments' fuel and the read's base
  fuel, the literal's index, the deadline cadence - are the ones that call stands for;
* ``ev`` is the last parameter of the function, an entrypoint of one ``Map<String, scalar>``
  parameter, and the form stands outside every loop; the function as a whole must be one whose
  event rule 25 admits (``verify_projection.reads_only``), so the snapshot reaches nothing but the
  fused stubs and these forms;
* ``out`` is a local or a temporary (``v<n>``, ``t<n>``; never the fuel) and the three scratch names are distinct slots ``t<n>`` other than ``out``;
* every node of the form is of a plain ``ast`` class or a code-generator twin (no other subclass),
  and nothing in it differs from the rebuilt form: a wrong key, a lighter charge, a missing or
  different fallback, a condition left out, a store to another slot, the event stored or passed
  anywhere else.

The helpers the form names (``_p_type``, ``_p_dict``, ``_p_dget``, ``_q<i>``) are refused
anywhere else (``forbidden_callee``, and as values by the verifier's load rule), and
``tests/optimized/test_inline_reads.py`` tampers with each point above.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from dotboxd.validator.plan import ExecutionPlan

from . import pyast as P
from .errors import VerifierFailure
from .inline_reads import DGET, DICT, KEY_PREFIX, STUBS, TYPE, fallback_of, form
from .tables import Tables
from .verify_projection import event_entry, reads_only

_TEMP = re.compile(r"t(?:0|[1-9][0-9]{0,6})\Z")
_VALUE = re.compile(r"[vt](?:0|[1-9][0-9]{0,6})\Z")
"""The form's value slot: a local or a temporary. Never ``f``: the ordinary pair check admits
``f, f = <stub>(...)`` (the second store wins), but in the form the value slot is stored first and
read as the fuel after it, so an ``f`` there would make an event's field the run's fuel (review7)."""
_FORM_ONLY = frozenset({TYPE, DICT, DGET})


def _fail(message: str, node: ast.AST | None = None) -> VerifierFailure:
    where = f" (line {getattr(node, 'lineno', '?')})" if node is not None else ""
    return VerifierFailure(f"inline read: {message}{where}")


def is_form(stmt: Any) -> bool:
    """Whether ``stmt`` has an inline form's outline (an ``if`` testing ``_p_type(...)`` first)."""
    return fallback_of(stmt) is not None


def forbidden_callee(callee: str) -> bool:
    """Whether ``callee`` is a name only the inline form may use."""
    return callee in _FORM_ONLY or callee.startswith(KEY_PREFIX)


_ALLOWED: frozenset[type] = frozenset(
    {
        ast.If,
        ast.BoolOp,
        ast.And,
        ast.Compare,
        ast.Is,
        ast.IsNot,
        ast.In,
        ast.GtE,
        ast.LtE,
        ast.Lt,
        ast.Call,
        ast.Name,
        ast.Load,
        ast.Store,
        ast.Attribute,
        ast.Subscript,
        ast.Constant,
        ast.Assign,
        ast.Tuple,
        ast.BinOp,
        ast.Add,
        ast.Sub,
    }
)
_CLASSES = _ALLOWED | {cls for cls, base in P.POSITIONED.items() if base in _ALLOWED}


def _int_constant(node: Any) -> bool:
    return type(node) in (ast.Constant, P.Constant) and type(node.value) is int


class InlineReadRules:
    """The inline forms of one module (rule 29)."""

    def __init__(self, plan: ExecutionPlan, tables: Tables) -> None:
        self.plan = plan
        self.tables = tables
        self.totals: tuple[int, ...] | None = None
        self.approved: set[str] = set()
        """Functions with an inline form, each to be checked whole once (``function_done``)."""

    def check(self, stmt: ast.If, fn: ast.FunctionDef, fid: str | None, in_loop: bool) -> None:
        """Check one form in ``fn`` (plan function ``fid``; None in a cold module) whose fallback
        (its outer ``else``) the caller has checked as a statement (rules 19, 23)."""
        if fid is None or in_loop:
            raise _fail("an inline read stands only outside loops of an entry function", stmt)
        info = self.plan.functions[fid]
        if not event_entry(info.is_entrypoint, info.parameter_types):
            raise _fail("an inline read stands only in the entry function of a host event", stmt)
        fallback = fallback_of(stmt)
        assert fallback is not None
        target: Any = fallback.targets[0] if len(fallback.targets) == 1 else None
        call: Any = fallback.value
        event = fn.args.args[-1].arg if fn.args.args else None
        if not (
            isinstance(target, ast.Tuple)
            and len(target.elts) == 2
            and isinstance(target.elts[0], ast.Name)
            and isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id in STUBS
            and len(call.args) == 7
            and all(_int_constant(arg) for arg in call.args[3:6])
            and isinstance(call.args[-1], ast.Name)
            and call.args[-1].id == event
        ):
            raise _fail("the fallback is not a fused read of the entry's event", stmt)
        sites = len(self.tables.sites)
        args: list[Any] = call.args
        if not all(0 <= arg.value < sites for arg in (args[3], args[5])):
            raise _fail("the fallback's sites are not the artifact's", stmt)
        out = target.elts[0].id
        if not (type(out) is str and _VALUE.match(out)):
            raise _fail("the form's value slot is not a local or a temporary", stmt)
        scratch = self._scratch(stmt, out)
        for node in ast.walk(stmt):
            if type(node) not in _CLASSES:
                raise _fail(f"node type {type(node).__name__} in an inline read", stmt)
        totals = self.totals
        if totals is None:
            totals = self.totals = self.tables.totals()
        assert event is not None
        if ast.dump(stmt) != ast.dump(form(call, out, scratch, event, totals)):
            raise _fail("the form is not the one its fallback stands for", stmt)
        self.approved.add(fn.name)

    @staticmethod
    def _scratch(stmt: ast.If, out: str) -> tuple[str, str, str]:
        body: Any = stmt.body
        try:
            names = (body[1].targets[0].id, body[2].targets[0].id, body[3].targets[0].id)
        except (AttributeError, IndexError, TypeError):
            raise _fail("the form's scratch slots", stmt) from None
        for name in names:
            if not (type(name) is str and _TEMP.match(name)):
                raise _fail("the form's scratch names are not temporaries", stmt)
        if len({*names, out}) != 4:
            raise _fail("the form's scratch slots are not distinct", stmt)
        return names

    def function_done(self, fn: ast.FunctionDef) -> None:
        """After ``fn`` is checked: a function with an inline read must be one rule 25 admits."""
        if fn.name in self.approved and not reads_only(fn):
            raise _fail(f"{fn.name} uses its event outside fused reads and their inline forms", fn)


__all__ = ["InlineReadRules", "forbidden_callee", "is_form"]
