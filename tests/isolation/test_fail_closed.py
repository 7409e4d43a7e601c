"""Posture 3 fails closed: a required layer that cannot be set up refuses the run, naming the layer;
only an explicitly lowered profile runs with less, and its result lists what was really in force."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dotboxd.cli.main import main
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.isolation import IsolationUnavailable, Limits, frames, named, run_python, strict
from dotboxd.isolation import worker as worker_module

JOB = "def main(x):\n    return x * 2\n"
FAST = Limits(timeout_ms=4_000)


def _no_seccomp_binding(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The binding's file exists for the host's check but cannot be imported inside the worker: the
    bootstrap itself finds the layer missing (the path a broken libseccomp would take)."""
    broken = tmp_path / "pyseccomp.py"
    broken.write_text("raise ImportError('libseccomp.so.2: cannot open shared object file')\n")
    monkeypatch.setattr(worker_module, "_seccomp_module_path", lambda: str(broken))


def test_isolation_missing_seccomp_refuses_the_run_naming_the_layer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _no_seccomp_binding(monkeypatch, tmp_path)
    with pytest.raises(IsolationUnavailable) as refused:
        run_python(JOB, 21, profile=strict().with_limits(FAST))
    assert refused.value.code == "E-ISOLATION-UNAVAILABLE" and set(refused.value.layers) == {"seccomp"}
    assert "libseccomp" in refused.value.diagnostic.message


def test_isolation_lowered_profile_runs_and_reports_seccomp_absent(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _no_seccomp_binding(monkeypatch, tmp_path)
    result = run_python(JOB, 21, profile=strict().lowered("seccomp").with_limits(FAST))
    assert result.ok and result.value == 42
    assert "seccomp" not in result.layers and "net-ns" in result.layers


def test_isolation_missing_unshare_refuses_before_anything_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    real_which = shutil.which
    monkeypatch.setattr(
        worker_module.shutil, "which", lambda name: None if name == "unshare" else real_which(name)
    )
    started: list[object] = []
    real_popen = worker_module.subprocess.Popen

    def popen(argv: list[str], **kwargs: object) -> object:
        if any("bootstrap.py" in str(arg) for arg in argv):
            started.append(argv)
            raise AssertionError("the worker must not start")
        return real_popen(argv, **kwargs)  # e.g. ctypes.util's ldconfig probe

    monkeypatch.setattr(worker_module.subprocess, "Popen", popen)
    with pytest.raises(IsolationUnavailable) as refused:
        run_python(JOB, 1)
    assert {"net-ns", "mount-ns", "pid-ns"} <= set(refused.value.layers) and started == []


def test_isolation_missing_libseccomp_is_reported_by_the_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker_module, "_libraries", lambda: {"c": None, "seccomp": None})
    assert "seccomp" in worker_module.probe(strict())
    with pytest.raises(IsolationUnavailable):
        run_python(JOB, 1)


def test_isolation_profile_and_limit_errors_are_clear() -> None:
    with pytest.raises(DotBoxDError) as unknown:
        named("lax")
    assert unknown.value.code == "E-ISOLATION-PROFILE"
    with pytest.raises(DotBoxDError) as bad_limit:
        strict().with_limits(Limits(timeout_ms=0))
    assert bad_limit.value.code == "E-ISOLATION-PROFILE"
    with pytest.raises(DotBoxDError) as bad_layer:
        strict().lowered("firewall")
    assert bad_layer.value.code == "E-ISOLATION-PROFILE"


def test_isolation_frames_refuse_malformed_input() -> None:
    good = frames.encode({"ok": True, "value": 1})
    assert frames.decode_one(good) == ({"ok": True, "value": 1}, len(good))
    for bad in (good[:-1], good[:4], frames.HEADER.pack(5) + b"[1,2]", frames.HEADER.pack(3) + b"NaN"):
        with pytest.raises(frames.FrameError):
            frames.decode_one(bad)
    with pytest.raises(frames.FrameError):
        frames.decode_one(frames.HEADER.pack(1 << 40))


def test_cli_worker_run_prints_result_and_layers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    job = tmp_path / "job.py"
    job.write_text(JOB)
    assert main(["worker", "run", str(job), "--input", "21", "--format", "json", "--timeout-ms", "4000"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is True and out["value"] == 42 and "seccomp" in out["layers"]
    assert set(out["usage"]) == {"cpuMs", "wallMs", "maxRssKb"}


def test_cli_worker_run_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    failing = tmp_path / "fail.py"
    failing.write_text("def main(_):\n    raise ValueError('nope')\n")
    assert main(["worker", "run", str(failing), "--format", "json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["error"]["code"] == "R-WORKER-FAILED" and "ValueError: nope" in out["error"]["message"]
    assert main(["worker", "run", str(tmp_path / "missing.py")]) == 2
    assert main(["worker", "run", str(failing), "--input", "[1,"]) == 2
    assert main(["worker", "run", str(failing), "--timeout-ms", "0"]) == 2
    assert main(["worker", "run", str(failing), "--profile", "lax"]) == 2
    _no_seccomp_binding(monkeypatch, tmp_path)
    capsys.readouterr()
    assert main(["worker", "run", str(failing), "--format", "json"]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["error"]["kind"] == "isolation-unavailable" and "seccomp" in out["error"]["message"]


def test_isolation_best_effort_profile_runs_and_lists_layers() -> None:
    result = run_python(JOB, 4, profile=named("best-effort").with_limits(FAST))
    assert result.ok and result.value == 8 and result.layers[-1] == "watchdog"
    assert {"interpreter", "rlimits"} <= set(result.layers)


def test_isolation_worker_that_cannot_start_is_unavailable_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(worker_module.sys, "executable", "/nonexistent/python")
    monkeypatch.setattr(worker_module.shutil, "which", lambda name: None)
    with pytest.raises(IsolationUnavailable) as refused:
        run_python(
            JOB,
            1,
            profile=named("best-effort").without("user-ns", "uid-drop", "net-ns", "mount-ns", "pid-ns"),
        )
    assert set(refused.value.layers) == {"interpreter"}
