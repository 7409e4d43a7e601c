"""Every committed fuzz input (the seed corpus and every past finding) replays cleanly.

The targets in ``fuzz/targets.py`` are the ones the coverage-guided fuzzer drives; here they run
without atheris on the inputs kept in ``fuzz/corpus/`` and ``fuzz/regressions/``, so a finding that
was fixed stays fixed, and the checks the fuzzer relies on are shown to fire.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzz import targets
from fuzz.targets import TARGETS, Finding
from tests.threat_model.tables import ROOT

FUZZ = ROOT / "fuzz"


def kept_inputs(name: str) -> list[Path]:
    folders = [FUZZ / "corpus" / name, FUZZ / "regressions" / name]
    return sorted(p for folder in folders if folder.is_dir() for p in folder.iterdir() if p.is_file())


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_every_kept_input_is_handled(name: str) -> None:
    inputs = kept_inputs(name)
    assert len(inputs) >= 10, f"the {name} corpus lost its seeds"
    failures = []
    for path in inputs:
        try:
            TARGETS[name](path.read_bytes())
        except Finding as finding:
            failures.append(f"{path.relative_to(ROOT)}: {finding}")
    assert failures == []


def test_the_differential_corpus_really_runs_both_backends() -> None:
    """A differential corpus of modules that never validate or never run would prove nothing."""
    assert sum(_runs(p.read_bytes()) for p in kept_inputs("differential")) >= 10


def test_an_escaping_exception_is_a_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(data: bytes | str) -> None:
        raise KeyError("boom")

    monkeypatch.setattr(targets, "import_module", broken)
    with pytest.raises(Finding, match="import_module raised KeyError"):
        targets.importer(b"{}")


def test_a_backend_disagreement_is_a_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    import tests.optimized.differential as differential

    real = differential.observe
    seen: list[int] = []

    def lying(result: object) -> dict[str, object]:
        observation = real(result)  # type: ignore[arg-type]
        seen.append(1)
        if len(seen) % 2 == 0:  # every optimized observation gets a different value
            observation = {**observation, "value": "forged"}
        return observation

    monkeypatch.setattr(differential, "observe", lying)
    data = next(p.read_bytes() for p in kept_inputs("differential") if _runs(p.read_bytes()))
    with pytest.raises(Finding, match="backends disagree"):
        targets.differential(data)


def _runs(data: bytes) -> bool:
    plan = targets._plan(data)
    if plan is None:
        return False
    functions = {f.id: f for f in plan.module.functions}
    return any(targets._arguments(functions[e], data) is not None for e in plan.entrypoints)
