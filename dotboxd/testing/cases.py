"""A host's own case files, in the conformance case format, run against the host's own bindings.

The files are read and checked by the conformance loader (same format, same strictness: see
``conformance/README.md`` section 2) and judged by the same comparison. Two differences, both
because the bindings are the host's real ones: a case must not carry ``bindings`` (fixtures would
replace what is being tested), and the run goes through the host's ``SandboxHost`` (its
``prepare`` and ``execute``), so its facades, observers and backends are the ones in use. The
host commands a case's run queues are not applied, so every case (on every backend) sees the host
state the test started with, whatever order the cases run in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dotboxd.conformance.errors import CaseFormatError
from dotboxd.conformance.loader import load_cases
from dotboxd.conformance.model import STAGES, Actual, Case, unsupported
from dotboxd.conformance.pipeline import crashed, import_stage, rejected
from dotboxd.conformance.runner import RunReport, run_cases
from dotboxd.conformance.stage_run import result_actual
from dotboxd.conformance.workspace import case_root
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.host import Policy, SandboxHost

DEFAULT_BACKENDS: tuple[str, ...] = ("reference", "optimized")


class HostCaseError(CaseFormatError):
    """A host case file that cannot be run against the host's bindings."""


def evaluate_on_host(host: SandboxHost, raw: Mapping[str, Any], backend: str, stop_after: str) -> Actual:
    """Import, prepare (validate) and execute one case object on ``host`` up to ``stop_after``."""
    if stop_after not in STAGES:
        return unsupported(None, f"unknown stage {stop_after!r}")
    stage = "import"
    try:
        module = import_stage(raw, "case")
        if isinstance(module, Actual) or stop_after == "import":
            return module if isinstance(module, Actual) else Actual(stage="import", outcome="ok")
        stage = "validate"
        with case_root(raw) as root:
            variables = {"$ROOT": root} if root is not None else {}
            policy = Policy.from_json(raw["policy"], variables) if "policy" in raw else None
            plan = host.prepare(module, policy)
            if stop_after == "validate":
                return Actual(stage="validate", outcome="ok")
            stage = "run"
            entry = str(raw.get("entrypoint", "main"))
            args = list(raw.get("args", []))
            result = host.execute(
                plan, entry, args, backend=backend, encoding="json", apply_commands_on_success=False
            )
            return result_actual(result)
    except DotBoxDError as error:
        return rejected(stage, error)
    except Exception as exc:
        return crashed(stage, exc)


class _HostBackend:
    def __init__(self, host: SandboxHost, name: str) -> None:
        self.host = host
        self.name = name

    def evaluate(self, case: Case) -> Actual:
        return evaluate_on_host(self.host, case.raw, self.name, case.expect.stage)


def load_host_cases(paths: Sequence[Path]) -> list[Case]:
    """The cases under ``paths``; ``HostCaseError`` for a malformed file or a case with ``bindings``."""
    cases = load_cases(paths)
    with_fixtures = [case.origin for case in cases if "bindings" in case.raw]
    if with_fixtures:
        raise HostCaseError(
            with_fixtures[0],
            "a host case runs against the host's own bindings: remove 'bindings' "
            f"({len(with_fixtures)} case(s) carry it)",
        )
    return cases


def run_host_cases(
    host: SandboxHost, paths: Sequence[Path], backends: Sequence[str] = DEFAULT_BACKENDS
) -> RunReport:
    """Every case under ``paths`` on each of ``backends`` of ``host`` (a missing backend fails)."""
    cases = load_host_cases(paths)
    available = set(host.backend_names())
    runners = {name: _HostBackend(host, name) for name in backends}
    unavailable = {name: "this host has no such backend" for name in backends if name not in available}
    return run_cases(cases, runners, list(backends), frozenset(backends), unavailable)
