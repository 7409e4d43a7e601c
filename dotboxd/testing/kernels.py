"""``KernelTester``: accept, reject and run-on-both-backends assertions for a host's kernels.

Each assertion fails with an ``AssertionError`` whose text is the diagnostic a person needs (code,
pointer, message), never a bare ``False``; a kernel that is wrongly accepted or refused is a test
failure, not an exception from deep inside the validator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.host import ExecutionPlan, ExecutionResult, Policy, SandboxHost
from dotboxd.host.sandbox_host import ModuleSource

BOTH: tuple[str, str] = ("reference", "optimized")


def _describe(error: DotBoxDError) -> str:
    d = error.diagnostic
    where = f" at {d.pointer}" if d.pointer else ""
    if d.span is not None:
        where += f" (line {d.span.line}, column {d.span.column})"
    return f"{d.code}{where}: {d.message}"


def comparable(result: ExecutionResult) -> dict[str, Any]:
    """What two backends must agree on: outcome, value, error category and codes, pointer, fuel,
    every usage counter and the binding-call counts (not the run id or the backend name)."""
    data = result.to_json()
    for key in ("runId", "backend"):
        data.pop(key, None)
    return data


@dataclass(frozen=True, slots=True)
class BothBackends:
    """The two results of ``run_both`` (already checked equal)."""

    reference: ExecutionResult
    optimized: ExecutionResult

    @property
    def value(self) -> Any:
        return self.reference.value

    @property
    def fuel_used(self) -> int:
        return self.reference.fuel_used


class KernelTester:
    """Assertions about kernels on ``host`` (with the host's own bindings) under ``policy``."""

    def __init__(self, host: SandboxHost, policy: Policy | None = None) -> None:
        self.host = host
        self.policy = policy

    def accept(self, kernel: ModuleSource, policy: Policy | None = None) -> ExecutionPlan:
        """The plan of ``kernel``; fails the test with the diagnostic when it is refused."""
        try:
            return self.host.prepare(kernel, policy or self.policy)
        except DotBoxDError as error:
            raise AssertionError(f"the kernel was refused: {_describe(error)}") from None

    def reject(
        self,
        kernel: ModuleSource,
        code: str,
        pointer: str | None = None,
        policy: Policy | None = None,
    ) -> DotBoxDError:
        """The refusal of ``kernel``; fails the test unless it is refused with ``code`` (and, when
        given, at ``pointer``, a JSON pointer into the wire form)."""
        try:
            self.host.prepare(kernel, policy or self.policy)
        except DotBoxDError as error:
            d = error.diagnostic
            if d.code != code or (pointer is not None and d.pointer != pointer):
                wanted = code + (f" at {pointer}" if pointer is not None else "")
                raise AssertionError(f"expected {wanted}, got {_describe(error)}") from None
            return error
        raise AssertionError(f"the kernel was accepted; expected it to be refused with {code}")

    def run(
        self,
        kernel: ModuleSource | ExecutionPlan,
        entrypoint: str = "main",
        args: Sequence[object] = (),
        *,
        backend: str = "reference",
        policy: Policy | None = None,
    ) -> ExecutionResult:
        """One metered run (``kernel`` accepted first unless it is already a plan). The host commands
        the run queues are not applied: a test compares runs, and each must see the same host state."""
        plan = kernel if isinstance(kernel, ExecutionPlan) else self.accept(kernel, policy)
        return self.host.execute(
            plan, entrypoint, list(args), backend=backend, apply_commands_on_success=False
        )

    def run_both(
        self,
        kernel: ModuleSource | ExecutionPlan,
        entrypoint: str = "main",
        args: Sequence[object] = (),
        *,
        policy: Policy | None = None,
    ) -> BothBackends:
        """Run on the reference and the optimized backend; fails the test unless they agree
        exactly (value, error, codes, fuel, usage, binding calls). Neither run applies its queued
        host commands, so both start from the same host state (a binding that changes state
        directly, not through ``ctx.enqueue``, must be reset by the test itself)."""
        missing = [name for name in BOTH if name not in self.host.backend_names()]
        if missing:
            raise AssertionError(f"this host has no {', '.join(missing)} backend")
        plan = kernel if isinstance(kernel, ExecutionPlan) else self.accept(kernel, policy)
        reference, optimized = (self.run(plan, entrypoint, args, backend=name) for name in BOTH)
        left, right = comparable(reference), comparable(optimized)
        if left != right:
            differs = sorted(key for key in set(left) | set(right) if left.get(key) != right.get(key))
            details = "; ".join(
                f"{k}: reference {left.get(k)!r}, optimized {right.get(k)!r}" for k in differs
            )
            raise AssertionError(f"the backends disagree: {details}")
        return BothBackends(reference, optimized)

    def run_cases(self, *paths: str | Path) -> Any:
        """Run case files (the conformance format) against this host's bindings, on both backends;
        fails the test with one line per failing case. Returns the ``RunReport``."""
        from dotboxd.testing.cases import run_host_cases

        report = run_host_cases(self.host, [Path(p) for p in paths])
        failures = report_failures(report)
        if failures:
            raise AssertionError("host cases failed:\n" + "\n".join(failures))
        return report


def report_failures(report: Any) -> list[str]:
    """One ``FAIL name [backend]: ...`` line per failing result (the conformance runner's words)."""
    from dotboxd.conformance.report import failure_line

    return [failure_line(result) for result in report.results if not result.passed]
