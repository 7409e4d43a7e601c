"""The ``--impl`` protocol: line-delimited JSON between the runner and an implementation.

The first exchange is the handshake: the runner sends ``{"hello": {"protocol": N, "corpus": V}}``
and the implementation answers ``{"hello": {"protocol": N, ...}}`` with the protocol it speaks
(``dotboxd.conformance.versions``); any other answer is a ``HandshakeError`` with one message.
Each request is one line ``{"case": <case without expect>, "backend": NAME, "stage": STAGE}``
(``stage`` is our optional hint: where processing may stop); each response is one line with the
keys of :meth:`Actual.to_json`. ``ImplClient`` is the runner's side (it starts the command once,
and again only after it died or stopped answering); ``serve`` is ours, answering with this
project's pipeline.
"""

from __future__ import annotations

import contextlib
import json
import queue
import shlex
import subprocess
import threading
from collections.abc import Callable, Mapping
from typing import IO, Any

from dotboxd.conformance.errors import CaseFormatError
from dotboxd.conformance.model import CRASH, Actual, unsupported
from dotboxd.conformance.shape import check_request_case
from dotboxd.conformance.versions import CORPUS_VERSION, PROTOCOL_VERSION
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.core.jsonread import CASE_DOCUMENT_BUDGETS, read_json

DEFAULT_TIMEOUT_SECONDS = 60.0
MAX_LINE_BYTES = CASE_DOCUMENT_BUDGETS.max_document_bytes
"""The longest request or response line either side reads (a case with an 8 MiB generated
module, escaped, fits); a longer line is read to its end in chunks, dropped and answered."""
REQUEST_KEYS = frozenset({"case", "backend", "stage"})
_EOF = object()
_TOO_LONG = object()
_DISCARD_CHUNK = 1024 * 1024


def request_line(case: Mapping[str, Any], backend: str, stage: str | None) -> str:
    """One request line (ASCII-only JSON, so no encoding can mangle it in transit)."""
    request: dict[str, Any] = {"case": dict(case), "backend": backend}
    if stage is not None:
        request["stage"] = stage
    return json.dumps(request, ensure_ascii=True, allow_nan=False, separators=(",", ":")) + "\n"


class HandshakeError(Exception):
    """The implementation did not complete the ``hello`` exchange, or speaks another protocol."""


def hello_line() -> str:
    """The runner's first line: the protocol and corpus versions it speaks."""
    hello = {"hello": {"protocol": PROTOCOL_VERSION, "corpus": CORPUS_VERSION}}
    return json.dumps(hello, separators=(",", ":")) + "\n"


def hello_answer(implementation: str) -> dict[str, Any]:
    """What ``serve`` answers to a ``hello``: its protocol and corpus versions and its name."""
    return {
        "hello": {"protocol": PROTOCOL_VERSION, "corpus": CORPUS_VERSION, "implementation": implementation}
    }


def check_hello(data: Any) -> str | None:
    """``None`` for a valid answer speaking our protocol, else the one message that says why not.

    A different ``corpus`` is allowed (an implementation may target an older corpus; the cases
    decide); a different ``protocol`` is not, since requests would be misread."""
    ours = f"this runner speaks conformance protocol {PROTOCOL_VERSION} (corpus {CORPUS_VERSION})"
    if not isinstance(data, dict) or not isinstance(data.get("hello"), dict):
        return (
            f"the implementation did not answer the handshake: {ours} and sends "
            '{"hello": {"protocol": ..., "corpus": ...}} first; answer it with '
            '{"hello": {"protocol": ' + str(PROTOCOL_VERSION) + "}} (conformance/README.md section 7)"
        )
    protocol = data["hello"].get("protocol")
    if protocol != PROTOCOL_VERSION or isinstance(protocol, bool):
        return f"protocol mismatch: {ours}, the implementation speaks protocol {json.dumps(protocol)[:40]}"
    return None


def actual_from_response(data: Any) -> Actual:
    """Check a response object and turn it into an ``Actual``; anything malformed is a ``crash``."""
    if not isinstance(data, dict):
        return _bad_response("a response must be a JSON object")
    outcome = data.get("outcome")
    if not isinstance(outcome, str):
        return _bad_response("'outcome' must be a string")
    text_keys = ("stage", "error", "diagnostic", "pointer", "message")
    for key in text_keys:
        if data.get(key) is not None and not isinstance(data[key], str):
            return _bad_response(f"{key!r} must be a string or null")
    for key in ("line", "column"):
        value = data.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            return _bad_response(f"{key!r} must be an integer or null")
    counters: dict[str, dict[str, int] | None] = {}
    for key in ("usage", "bindingCalls"):
        value = data.get(key)
        if value is not None and not (
            isinstance(value, dict)
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value.values())
        ):
            return _bad_response(f"{key!r} must be an object of integers or null")
        counters[key] = value
    return Actual(
        stage=data.get("stage"),
        outcome=outcome,
        value=data.get("value"),
        error=data.get("error"),
        diagnostic=data.get("diagnostic"),
        pointer=data.get("pointer"),
        line=data.get("line"),
        column=data.get("column"),
        usage=counters["usage"],
        binding_calls=counters["bindingCalls"],
        message=data.get("message"),
    )


def _bad_response(reason: str) -> Actual:
    return Actual(stage=None, outcome=CRASH, message=f"invalid protocol response: {reason}")


class ImplClient:
    """Speaks the protocol with ``command`` (split like a shell would, never run through one)."""

    def __init__(self, command: str, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> None:
        self.argv = shlex.split(command)
        if not self.argv:
            raise ValueError("--impl needs a command")
        self.timeout = timeout
        self.process: subprocess.Popen[bytes] | None = None
        self.lines: queue.Queue[object] = queue.Queue()
        self.starts = 0

    def _start(self) -> subprocess.Popen[bytes]:
        if self.process is not None and self.process.poll() is None:
            return self.process
        self.process = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.starts += 1
        self.lines = queue.Queue()
        stdout = self.process.stdout
        assert stdout is not None
        threading.Thread(target=_pump, args=(stdout, self.lines), daemon=True).start()
        self._handshake(self.process)
        return self.process

    def connect(self) -> None:
        """Start the implementation and complete the handshake now (the CLI does this before the
        first case, so a version mismatch is one message, not a failure per case).

        Raises ``HandshakeError`` or ``OSError``."""
        self._start()

    def _handshake(self, process: subprocess.Popen[bytes]) -> None:
        stdin = process.stdin
        assert stdin is not None
        try:
            stdin.write(hello_line().encode("ascii"))
            stdin.flush()
            line = self.lines.get(timeout=self.timeout)
        except OSError:
            line = _EOF
        except queue.Empty:
            self.close(kill=True)
            raise HandshakeError(f"no answer to the handshake within {self.timeout:g} s") from None
        if not isinstance(line, bytes):
            self.close(kill=True)
            raise HandshakeError("the implementation exited or sent an over-long line during the handshake")
        try:
            data = read_json(line, CASE_DOCUMENT_BUDGETS)
        except DotBoxDError:
            data = None
        problem = check_hello(data)
        if problem is not None:
            self.close(kill=True)
            raise HandshakeError(problem)

    def ask(self, case: Mapping[str, Any], backend: str, stage: str | None) -> Actual:
        """Send one case and wait for its response."""
        try:
            process = self._start()
        except OSError as exc:
            return Actual(stage=None, outcome=CRASH, message=f"cannot start the implementation: {exc}")
        except HandshakeError as exc:
            return Actual(stage=None, outcome=CRASH, message=f"handshake failed: {exc}")
        stdin = process.stdin
        assert stdin is not None
        try:
            stdin.write(request_line(case, backend, stage).encode("ascii"))
            stdin.flush()
        except OSError:
            return self._died("the implementation closed its input")
        try:
            line = self.lines.get(timeout=self.timeout)
        except queue.Empty:
            self.close(kill=True)
            return Actual(stage=None, outcome=CRASH, message=f"no response within {self.timeout:g} s")
        if line is _EOF:
            return self._died("the implementation exited")
        if line is _TOO_LONG:
            return _bad_response(f"a response line is longer than {MAX_LINE_BYTES} bytes")
        assert isinstance(line, bytes)
        try:
            return actual_from_response(read_json(line, CASE_DOCUMENT_BUDGETS))
        except DotBoxDError as exc:
            return _bad_response(f"not a JSON line ({_reason(exc)})")

    def _died(self, what: str) -> Actual:
        code: int | None = None
        if self.process is not None:
            try:
                code = self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                code = None
        self.close(kill=True)
        return Actual(stage=None, outcome=CRASH, message=f"{what} (exit status {code})")

    def close(self, kill: bool = False) -> None:
        """Stop the implementation: close its input so a well-behaved one exits, or kill it at once
        (``kill``) when it already stopped answering."""
        process, self.process = self.process, None
        if process is None:
            return
        if kill:
            process.kill()
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()

    def __enter__(self) -> ImplClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _pump(stream: IO[bytes], lines: queue.Queue[object]) -> None:
    while True:
        line = read_line(stream)
        if line == b"":
            break
        lines.put(line)
    lines.put(_EOF)


def read_line(stream: IO[bytes], limit: int | None = None) -> bytes | object:
    """The next line of ``stream`` (b"" at end of input), or ``_TOO_LONG`` when it is longer than
    ``limit`` bytes (default ``MAX_LINE_BYTES``): the rest of that line is read and dropped in
    chunks, so the peer stays in step and an endless line costs no more memory than the limit."""
    limit = MAX_LINE_BYTES if limit is None else limit
    line = stream.readline(limit + 1)
    if len(line) <= limit or line.endswith(b"\n"):
        return line
    while True:
        rest = stream.readline(_DISCARD_CHUNK)
        if not rest or rest.endswith(b"\n"):
            return _TOO_LONG


def _reason(error: DotBoxDError) -> str:
    """A bounded JSON diagnostic in one line: code, message, position."""
    d = error.diagnostic
    at = f" at line {d.span.line}, column {d.span.column}" if d.span else ""
    return f"{d.code}: {d.message}{at}"


Evaluator = Callable[[Mapping[str, Any], str, str], Actual]


def serve(stdin: IO[bytes], stdout: IO[bytes], evaluate: Evaluator, implementation: str = "dotboxd") -> int:
    """Answer requests until end of input; a bad request gets an ``unsupported`` response, never
    a dropped line, so the client stays in step. Returns the number of requests answered.

    Every request is untrusted: a line is at most ``MAX_LINE_BYTES``, parsed by the bounded JSON
    reader (``CASE_DOCUMENT_BUDGETS``) and shape-checked field by field (the case as in a case
    file, minus ``expect``) before the pipeline sees it; whatever still goes wrong is answered
    (``crash``, without the exception's text) and the loop goes on."""
    answered = 0
    while True:
        line = read_line(stdin)
        if line == b"":
            return answered
        if line is not _TOO_LONG and isinstance(line, bytes) and not line.strip():
            continue
        answer: dict[str, Any]
        if _is_hello(line):
            answer = hello_answer(implementation)
        else:
            try:
                actual = _answer(line, evaluate)
            except Exception as exc:  # the loop must outlive any request
                actual = Actual(stage=None, outcome=CRASH, message=f"internal error: {type(exc).__name__}")
            answer = actual.to_json()
        stdout.write(json.dumps(answer, ensure_ascii=True, allow_nan=False).encode("ascii") + b"\n")
        stdout.flush()
        answered += 1


def _is_hello(line: bytes | object) -> bool:
    """A handshake line: a JSON object whose only key is ``hello`` (answered whatever versions it
    names, so the runner sees ours and reports any mismatch itself)."""
    if not isinstance(line, bytes) or b'"hello"' not in line:
        return False
    try:
        data = read_json(line, CASE_DOCUMENT_BUDGETS)
    except DotBoxDError:
        return False
    return isinstance(data, dict) and set(data) == {"hello"}


def _answer(line: bytes | object, evaluate: Evaluator) -> Actual:
    if not isinstance(line, bytes):
        return unsupported(None, f"bad request: the line is longer than {MAX_LINE_BYTES} bytes")
    try:
        request = read_json(line, CASE_DOCUMENT_BUDGETS)
    except DotBoxDError as exc:
        return unsupported(None, f"bad request: not a JSON line ({_reason(exc)})")
    if not isinstance(request, dict) or not isinstance(request.get("case"), dict):
        return unsupported(None, "bad request: expected {'case': {...}, 'backend': NAME}")
    unknown = sorted(set(request) - REQUEST_KEYS)
    if unknown:
        return unsupported(
            None, f"bad request: unknown key(s) {', '.join(repr(k[:40]) for k in unknown[:5])}"
        )
    backend = request.get("backend", "reference")
    stage = request.get("stage", "run")
    if not isinstance(backend, str) or not isinstance(stage, str):
        return unsupported(None, "bad request: 'backend' and 'stage' must be strings")
    try:
        case = check_request_case(request["case"], "case")
    except CaseFormatError as exc:
        return unsupported(None, f"bad request: {exc}")
    return evaluate(case, backend, stage)
