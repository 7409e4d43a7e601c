"""``conformance serve`` treats every request as hostile: deep or oversized lines, generator bombs
and malformed ``files`` are answered ``unsupported`` (never a dead loop, never a host path or an
exception's text), and the next request is still served. The runner's side reads responses the
same bounded way."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from dotboxd.conformance import protocol
from dotboxd.conformance.pipeline import evaluate
from dotboxd.conformance.protocol import ImplClient, serve
from tests.conformance.helpers import GOOD_MODULE
from tests.conformance.test_protocol import fake_impl

DEEP = b"[" * 100_000
VALID = {"case": {"name": "ok", "moduleText": GOOD_MODULE}, "backend": "reference", "stage": "import"}


def _serve(*lines: bytes) -> list[dict[str, Any]]:
    stdin = io.BytesIO(b"".join(line + b"\n" for line in lines))
    stdout = io.BytesIO()
    answered = serve(stdin, stdout, lambda case, backend, stage: evaluate(case, backend, stage))
    responses = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert answered == len(responses)
    return responses


def _request(**case: Any) -> bytes:
    body = {"name": "c", "moduleText": GOOD_MODULE, **case}
    return json.dumps({"case": body, "backend": "reference", "stage": "validate"}).encode()


def _assert_clean(response: dict[str, Any]) -> None:
    """Unsupported, and the message names neither a host path nor a Python exception."""
    message = response["message"]
    assert response["outcome"] == "unsupported", response
    assert "dotboxd-case-" not in message and tempfile.gettempdir() not in message
    assert "Traceback" not in message and "internal error" not in message
    assert not any(name in message for name in ("TypeError", "OSError", "ValueError", "UnicodeEncodeError"))


@pytest.mark.parametrize(
    "line",
    [DEEP, b'{"case": ' + DEEP, b'{"case": {"name": "d", "moduleText": "x", "args": ' + DEEP],
    ids=["deep-root", "deep-case", "deep-args"],
)
def test_serve_deep_request_is_unsupported_and_the_next_request_is_served(line: bytes) -> None:
    deep, valid = _serve(line, json.dumps(VALID).encode())
    assert deep["outcome"] == "unsupported" and "E-JSON-LIMIT" in deep["message"]
    assert (valid["stage"], valid["outcome"]) == ("import", "ok")


def test_serve_process_survives_a_deep_request() -> None:
    stdin = DEEP + b"\n" + json.dumps(VALID).encode() + b"\n"
    done = subprocess.run(
        [sys.executable, "-m", "dotboxd.cli.main", "conformance", "serve"],
        input=stdin,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    deep, valid = (json.loads(line) for line in done.stdout.splitlines())
    assert deep["outcome"] == "unsupported" and valid["outcome"] == "ok"


def test_serve_overlong_line_is_dropped_and_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(protocol, "MAX_LINE_BYTES", 1000)
    monkeypatch.setattr(protocol, "_DISCARD_CHUNK", 64)
    long_line = json.dumps({"case": {"name": "x", "moduleText": "x" * 5000}}).encode()
    too_long, valid = _serve(long_line, json.dumps(VALID).encode())
    assert too_long["outcome"] == "unsupported" and "longer than 1000 bytes" in too_long["message"]
    assert valid["outcome"] == "ok"


@pytest.mark.parametrize(
    "files",
    [
        ["a.txt", "x"],
        "a.txt",
        {"a.txt": 1},
        {"../escape.txt": "x"},
        {"/etc/passwd": "x"},
        {"a": "x", "a/b": "y"},  # "a" is a file and a directory
        {"n" * 300: "x"},  # longer than any file name may be
        {"a.txt": "\ud800"},  # a lone surrogate cannot be written as UTF-8
    ],
    ids=["list", "string", "number-content", "dotdot", "absolute", "file-and-dir", "long-name", "surrogate"],
)
def test_serve_malformed_files_are_unsupported_without_host_paths(files: Any) -> None:
    (response,) = _serve(_request(files=files))
    _assert_clean(response)


def test_serve_well_formed_files_reach_validation() -> None:
    (response,) = _serve(_request(files={"dir/a.txt": "x"}))
    assert response["stage"] == "validate" and response["outcome"] in {"ok", "rejected"}


@pytest.mark.parametrize(
    "request_line",
    [
        json.dumps({"case": {"name": "c", "moduleText": GOOD_MODULE}, "extra": 1}).encode(),
        json.dumps({"case": {"name": "Not Kebab", "moduleText": GOOD_MODULE}}).encode(),
        json.dumps({"case": {"name": "c", "moduleText": GOOD_MODULE, "policy": []}}).encode(),
        json.dumps({"case": {"name": "c", "moduleText": GOOD_MODULE, "bindings": {}}}).encode(),
        json.dumps({"case": {"name": "c", "moduleText": GOOD_MODULE, "args": {}}}).encode(),
        json.dumps({"case": {"name": "c", "moduleText": GOOD_MODULE, "expect": {}}}).encode(),
        json.dumps({"case": {"name": "c"}}).encode(),
    ],
    ids=[
        "unknown-request-key",
        "bad-name",
        "policy-list",
        "bindings-object",
        "args-object",
        "expect",
        "no-source",
    ],
)
def test_serve_request_fields_are_shape_checked(request_line: bytes) -> None:
    (response,) = _serve(request_line)
    _assert_clean(response)


def test_serve_generator_bomb_is_refused_fast_with_bounded_memory() -> None:
    generator = {"template": "${A}" * 400, "fills": {"A": {"repeat": "x" * 8, "count": 1_000_000}}}
    bomb = json.dumps(
        {"case": {"name": "bomb", "moduleTextGenerator": generator}, "stage": "import"}
    ).encode()
    pad = json.dumps(
        {"case": {"name": "pad", "moduleTextGenerator": {"template": "", "padToBytes": 6 * 10**9}}}
    ).encode()
    tracemalloc.start()
    started = time.perf_counter()
    try:
        bomb_answer, pad_answer, valid = _serve(bomb, pad, json.dumps(VALID).encode())
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert bomb_answer["outcome"] == "unsupported" and "expands past" in bomb_answer["message"]
    assert pad_answer["outcome"] == "unsupported" and "padToBytes" in pad_answer["message"]
    assert valid["outcome"] == "ok"
    assert peak < 64 * 1024 * 1024 and elapsed < 10, (peak, elapsed)


def test_impl_client_deep_response_is_a_bad_response_not_an_exception(tmp_path: Path) -> None:
    command = fake_impl(tmp_path, "sys.stdout.write('[' * 100000 + '\\n'); sys.stdout.flush()\n")
    with ImplClient(command, timeout=30) as client:
        actual = client.ask({"name": "a", "moduleText": GOOD_MODULE}, "reference", "import")
    assert actual.outcome == "crash" and "E-JSON-LIMIT" in (actual.message or "")


def test_impl_client_overlong_response_line_is_a_bad_response(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(protocol, "MAX_LINE_BYTES", 1000)
    command = fake_impl(tmp_path, "sys.stdout.write('x' * 5000 + '\\n'); sys.stdout.flush()\n")
    with ImplClient(command, timeout=30) as client:
        actual = client.ask({"name": "a", "moduleText": GOOD_MODULE}, "reference", "import")
    assert actual.outcome == "crash" and "longer than 1000 bytes" in (actual.message or "")
