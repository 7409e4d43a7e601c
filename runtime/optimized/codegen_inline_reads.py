"""Code generation of the inline form of a projected event's fused reads (``inline_reads``, rule 29).

A pass over one generated entry function, after it is emitted: when the function is one whose
event the fast lane may project (rule 25's own verdict, ``verify_projection.reads_only``, on the
function as emitted), each fused read of the event ``out, f = _s_lrget(..., ev)`` (``_s_lrhas``)
becomes the inline form in front of that same statement. Only reads outside loops are rewritten:
a loop's first statement may have to be its charge (rule 7), and an event predicate reads its
fields once. Every other function, and every read of another map, is left as it was.
"""

from __future__ import annotations

import ast
import re

from dotboxd.validator.plan import ExecutionPlan

from .inline_reads import STUBS, form
from .tables import Tables
from .verify_projection import event_entry, reads_only

_TEMP = re.compile(r"t(0|[1-9][0-9]*)\Z")


def inline_projected_reads(fn: ast.FunctionDef, plan: ExecutionPlan, fid: str, tables: Tables) -> None:
    """Rewrite ``fn`` (plan function ``fid``) in place as the module docstring says."""
    info = plan.functions[fid]
    if not event_entry(info.is_entrypoint, info.parameter_types) or not reads_only(fn):
        return
    event = fn.args.args[-1].arg
    temps = [
        int(m.group(1)) for node in ast.walk(fn) if isinstance(node, ast.Name) and (m := _TEMP.match(node.id))
    ]
    top = max(temps, default=-1)
    scratch = (f"t{top + 1}", f"t{top + 2}", f"t{top + 3}")
    totals = tables.totals()
    _rewrite(fn.body, event, scratch, totals)


def _rewrite(
    block: list[ast.stmt], event: str, scratch: tuple[str, str, str], totals: tuple[int, ...]
) -> None:
    for at, stmt in enumerate(block):
        if isinstance(stmt, ast.If):
            _rewrite(stmt.body, event, scratch, totals)
            _rewrite(stmt.orelse, event, scratch, totals)
            continue
        out = _fused_read(stmt, event)
        if out is not None:
            assert isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call)
            block[at] = form(stmt.value, out, scratch, event, totals)


def _fused_read(stmt: ast.stmt, event: str) -> str | None:
    """The value slot of ``stmt`` when it is ``out, f = <fused read>(..., event)``, else None."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return None
    target, value = stmt.targets[0], stmt.value
    if not (isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(value, ast.Call)):
        return None
    out, fuel = target.elts
    last = value.args[-1] if value.args else None
    if (
        isinstance(value.func, ast.Name)
        and value.func.id in STUBS
        and isinstance(out, ast.Name)
        and isinstance(fuel, ast.Name)
        and fuel.id == "f"
        and isinstance(last, ast.Name)
        and last.id == event
    ):
        return out.id
    return None


__all__ = ["inline_projected_reads"]
