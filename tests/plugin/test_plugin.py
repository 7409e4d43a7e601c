"""The pytest plugin for host developers (``dotboxd.testing``), tested as a host would use it.

``pytester`` runs real pytest sessions: the project's example (``examples/host-tests``) in a
subprocess, so the ``pytest11`` entry point of the installed package is what loads the plugin, and
small throwaway suites that show each assertion fails with the diagnostic a person needs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dotboxd.host import SandboxHost
from dotboxd.testing import KernelTester

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "host-tests"
GOOD = 'module "m" version "1.0.0";\n\nentrypoint fn main(x I32) -> I32 {\n    return x + 1;\n}\n'


def test_the_plugin_is_registered_as_a_pytest11_entry_point() -> None:
    from importlib.metadata import entry_points

    found = [e.value for e in entry_points(group="pytest11") if e.name == "dotboxd"]
    assert found == ["dotboxd.testing.plugin"]


def test_the_host_guide_example_passes(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(str(EXAMPLE), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)


def _suite(pytester: pytest.Pytester, body: str) -> pytest.RunResult:
    pytester.makepyfile(
        "from dotboxd.testing import KernelTester\n"
        f"GOOD = {GOOD!r}\n"
        "BAD = GOOD.replace('x + 1', 'y + 1')\n" + body
    )
    return pytester.runpytest("-p", "no:cacheprovider")


def test_accept_and_reject_report_the_diagnostic(pytester: pytest.Pytester) -> None:
    result = _suite(
        pytester,
        """
def test_accepts(dotboxd: KernelTester) -> None:
    dotboxd.accept(GOOD)

def test_rejects_with_the_right_code(dotboxd: KernelTester) -> None:
    dotboxd.reject(BAD, "E-LOCAL-UNKNOWN")

def test_accept_of_a_bad_kernel_fails(dotboxd: KernelTester) -> None:
    dotboxd.accept(BAD)

def test_reject_with_the_wrong_code_fails(dotboxd: KernelTester) -> None:
    dotboxd.reject(BAD, "E-TYPE-MISMATCH")

def test_reject_of_a_good_kernel_fails(dotboxd: KernelTester) -> None:
    dotboxd.reject(GOOD, "E-LOCAL-UNKNOWN")
""",
    )
    result.assert_outcomes(passed=2, failed=3)
    result.stdout.fnmatch_lines(
        [
            "*the kernel was refused: E-LOCAL-UNKNOWN at /functions/0/body/0/value/left*",
            "*expected E-TYPE-MISMATCH, got E-LOCAL-UNKNOWN*",
            "*the kernel was accepted; expected it to be refused with E-LOCAL-UNKNOWN*",
        ]
    )


def test_run_both_and_host_cases(pytester: pytest.Pytester) -> None:
    cases = pytester.mkdir("cases")
    (cases / "mine.json").write_text(
        '{"cases": ['
        '{"name": "adds-one", "kernelText": GOOD, "args": [41],'
        ' "expect": {"stage": "run", "outcome": "ok", "value": 42}},'
        '{"name": "wrong-on-purpose", "kernelText": GOOD, "args": [1],'
        ' "expect": {"stage": "run", "outcome": "ok", "value": 5}}'
        "]}".replace("GOOD", __import__("json").dumps(GOOD))
    )
    result = _suite(
        pytester,
        """
def test_both(dotboxd: KernelTester) -> None:
    both = dotboxd.run_both(GOOD, "main", [41])
    assert both.value == 42 and both.fuel_used > 0

def test_cases(dotboxd: KernelTester) -> None:
    dotboxd.run_cases("cases")
""",
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*FAIL wrong-on-purpose [[]reference[]]: value: expected 5, got 2*"])
    assert "FAIL adds-one" not in result.stdout.str()


def test_host_cases_must_not_bring_their_own_bindings(tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text(
        '{"name": "x", "moduleText": "{}", "bindings": [], "expect": {"stage": "import", "outcome": "ok"}}'
    )
    with pytest.raises(Exception, match="runs against the host's own bindings"):
        KernelTester(SandboxHost()).run_cases(tmp_path)


def test_run_both_reports_a_disagreement(monkeypatch: pytest.MonkeyPatch) -> None:
    """A backend that charges one more fuel unit than the reference is caught, naming the field."""
    host = SandboxHost()
    real = host.execute

    def skewed(*args: object, **kwargs: object) -> object:
        result = real(*args, **kwargs)  # type: ignore[arg-type]
        if kwargs.get("backend") != "optimized":
            return result
        from dataclasses import replace

        return replace(result, usage=replace(result.usage, fuel_used=result.usage.fuel_used + 1))

    monkeypatch.setattr(host, "execute", skewed)
    with pytest.raises(
        AssertionError, match=r"the backends disagree: fuelUsed: reference \d+, optimized \d+"
    ):
        KernelTester(host).run_both(GOOD, "main", [1])
