"""Rendering a run: one line per failure plus a summary table by area, or the JSON report.

The JSON report has the contract's keys (``total``, ``passed``, ``failed``, ``results`` with
``name``, ``backend``, ``passed``, ``actual``) and adds ``area`` and ``mismatches`` per result and
``backends``, ``unavailable`` and ``notRun`` at the top, so a machine sees what a human sees.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from dotboxd.conformance.areas import AREAS
from dotboxd.conformance.runner import CaseResult, RunReport


def failure_line(result: CaseResult) -> str:
    """``FAIL name [backend]: field: expected X, got Y; ...``"""
    details = "; ".join(mismatch.render() for mismatch in result.mismatches)
    return f"FAIL {result.case.name} [{result.backend}]: {details}"


def summary_rows(report: RunReport) -> list[tuple[str, int, int, int]]:
    """(area, results, passed, failed) per area: the corpus's areas in their order, then any other."""
    total: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    for result in report.results:
        total[result.case.area] += 1
        passed[result.case.area] += result.passed
    order = {area: index for index, area in enumerate(AREAS)}
    areas = sorted(total, key=lambda area: (order.get(area, len(order)), area))
    return [(area, total[area], passed[area], total[area] - passed[area]) for area in areas]


def render_text(report: RunReport) -> str:
    lines = [failure_line(result) for result in report.results if not result.passed]
    rows = [("area", "results", "passed", "failed")]
    rows += [(area, str(n), str(p), str(f)) for area, n, p, f in summary_rows(report)]
    rows.append(("total", str(len(report.results)), str(report.passed), str(report.failed)))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    if lines:
        lines.append("")
    for index, row in enumerate(rows):
        cells = [row[0].ljust(widths[0])] + [
            cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
        if index == 0 or index == len(rows) - 2:
            lines.append("  ".join("-" * width for width in widths))
    lines.append(f"backends: {', '.join(report.backends) or '(none)'}")
    for name, reason in sorted(report.unavailable.items()):
        lines.append(f"not available: {name}: {reason}")
    if report.not_applicable:
        lines.append(
            f"not run: {len(report.not_applicable)} case(s) whose 'backends' list names none of the selected backends"
        )
    if report.text_only:
        lines.append(
            f"not run: {len(report.text_only)} text-form case(s) with no wire form (--wire; they test the text importer)"
        )
    lines.append("PASS" if report.ok else f"FAILED: {report.failed} of {len(report.results)}")
    return "\n".join(lines)


def render_json(report: RunReport) -> dict[str, Any]:
    return {
        "total": len(report.results),
        "passed": report.passed,
        "failed": report.failed,
        "results": [
            {
                "name": result.case.name,
                "backend": result.backend,
                "passed": result.passed,
                "actual": result.actual.to_json(),
                "area": result.case.area,
                "mismatches": [mismatch.to_json() for mismatch in result.mismatches],
            }
            for result in report.results
        ],
        "backends": list(report.backends),
        "unavailable": dict(sorted(report.unavailable.items())),
        "notRun": list(report.not_applicable),
        "textOnly": dict(sorted(report.text_only.items())),
    }
