"""Running a set of cases on a set of backends and collecting the verdicts.

Backend selection is explicit about what it cannot do: ``all`` means every backend this runner
has, and a backend that does not exist here but is asked for (by ``--backend`` or by a case's own
``backends`` list) produces failing ``unsupported`` results, never silent passes.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from dotboxd.conformance.backends import Backend
from dotboxd.conformance.compare import Mismatch, compare
from dotboxd.conformance.model import Actual, Case


@dataclass(frozen=True, slots=True)
class CaseResult:
    case: Case
    backend: str
    actual: Actual
    mismatches: tuple[Mismatch, ...]

    @property
    def passed(self) -> bool:
        return not self.mismatches


@dataclass(slots=True)
class RunReport:
    """Every (case, backend) verdict, plus what was not run and why."""

    results: list[CaseResult] = field(default_factory=list)
    backends: tuple[str, ...] = ()
    unavailable: dict[str, str] = field(default_factory=dict)
    not_applicable: list[str] = field(default_factory=list)
    text_only: dict[str, str] = field(default_factory=dict)
    """Cases not sent under ``--wire`` because they have no wire form, with the reason."""

    @property
    def passed(self) -> int:
        return sum(1 for result in self.results if result.passed)

    @property
    def failed(self) -> int:
        return len(self.results) - self.passed

    @property
    def ok(self) -> bool:
        return self.failed == 0


def select_cases(
    cases: Iterable[Case], names: Sequence[str] = (), tags: Sequence[str] = (), areas: Sequence[str] = ()
) -> list[Case]:
    """Cases whose name matches any ``names`` glob (if given), that carry any of ``tags`` (if given)
    and that belong to any of ``areas`` (if given)."""
    chosen = []
    for case in cases:
        if names and not any(fnmatch.fnmatchcase(case.name, pattern) for pattern in names):
            continue
        if tags and not set(tags) & set(case.tags):
            continue
        if areas and case.area not in areas:
            continue
        chosen.append(case)
    return chosen


def backends_for(case: Case, default: Sequence[str], requested: frozenset[str]) -> list[str]:
    """The backends ``case`` runs on: the default set, or the case's own list narrowed to what
    was requested (so a case asking for a backend the runner lacks fails instead of vanishing)."""
    if case.backends is None:
        return list(default)
    return [name for name in case.backends if name in requested]


def run_cases(
    cases: Sequence[Case],
    backends: Mapping[str, Backend],
    default: Sequence[str],
    requested: frozenset[str],
    unavailable: Mapping[str, str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RunReport:
    """Evaluate every case on its backends. ``backends`` maps every requested name to something
    that can evaluate (an unavailable one answers ``unsupported``). ``progress(done, total)`` is
    called after each case (the CLI draws it on a terminal)."""
    report = RunReport(backends=tuple(default), unavailable=dict(unavailable or {}))
    for index, case in enumerate(cases, 1):
        if progress is not None:
            progress(index, len(cases))
        names = backends_for(case, default, requested)
        if not names:
            report.not_applicable.append(case.name)
            continue
        for name in names:
            actual = backends[name].evaluate(case)
            report.results.append(CaseResult(case, name, actual, tuple(compare(case.expect, actual))))
    return report
