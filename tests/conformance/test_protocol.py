"""The --impl protocol, end to end through real processes: serve, run --impl, and broken peers."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from dotboxd.cli.main import main
from dotboxd.conformance.protocol import ImplClient, actual_from_response
from dotboxd.conformance.versions import CORPUS_VERSION, PROTOCOL_VERSION
from tests.conformance.helpers import ACTUAL_KEYS, GOOD_MODULE, case, write_cases

CLI = [sys.executable, "-m", "dotboxd.cli.main"]
SERVE = f"{shlex.quote(sys.executable)} -m dotboxd.cli.main conformance serve"


HELLO = "    if line.startswith('{\"hello\"'):\n        print(json.dumps({'hello': {'protocol': %d}}), flush=True)\n        continue\n"


def run_two_cases(tmp_path: Path, impl: str, *flags: str) -> int:
    """``dotboxd conformance run`` of two accepted import cases (``first``, ``second``) against the
    implementation command ``impl``: the exit status (the report is on the captured output)."""
    write_cases(tmp_path, "cases/import/a.json", case("first"), case("second"))
    return main(["conformance", "run", str(tmp_path), "--impl", impl, *flags])


def fake_impl(tmp_path: Path, body: str, handshake: bool = True) -> str:
    """A throwaway implementation: a Python script whose loop body handles one request ``line``
    (after answering the protocol handshake, unless ``handshake`` is false)."""
    script = tmp_path / "impl.py"
    hello = HELLO % PROTOCOL_VERSION if handshake else ""
    script.write_text(
        "import json, sys, time\nfor line in sys.stdin:\n"
        + hello
        + textwrap.indent(textwrap.dedent(body), "    "),
        encoding="utf-8",
    )
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def test_serve_answers_one_line_per_request() -> None:
    requests = [
        {"case": {"name": "a", "moduleText": GOOD_MODULE}, "backend": "reference", "stage": "import"},
        {"case": {"name": "b", "moduleText": '{"id": 1}'}, "backend": "reference", "stage": "import"},
        "this is not json",
        {"case": {"name": "c", "moduleText": GOOD_MODULE}, "backend": "no-such-backend"},
    ]
    stdin = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in requests)
    done = subprocess.run(
        [*CLI, "conformance", "serve"], input=stdin, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    responses = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(responses) == 4
    assert (responses[0]["stage"], responses[0]["outcome"]) == ("import", "ok")
    assert responses[1]["outcome"] == "rejected"
    assert responses[1]["diagnostic"] == "E-JSON-MISSING"
    assert responses[1]["error"] == "ValidationError"
    assert responses[1]["pointer"] == ""
    assert responses[2]["outcome"] == "unsupported" and "bad request" in responses[2]["message"]
    assert responses[3]["outcome"] == "unsupported" and "unknown backend" in responses[3]["message"]
    for response in responses:
        assert set(response) >= ACTUAL_KEYS


def test_run_through_serve_agrees_with_the_in_process_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_cases(
        tmp_path,
        "cases/import/a.json",
        case("accepted"),
        case(
            "rejected-dup",
            moduleText='{"id":"a","id":"b"}',
            expect={
                "stage": "import",
                "outcome": "rejected",
                "diagnostic": "E-JSON-SCHEMA",
                "pointer": "/id",
                "line": 1,
                "column": 11,
            },
        ),
        case(
            "deliberately-wrong",
            expect={"stage": "import", "outcome": "rejected", "diagnostic": "E-JSON-LIMIT"},
        ),
        case(
            "generated",
            moduleText=None,
            moduleTextGenerator={
                "template": '{"id":"m","version":"1.0.0","functions":[],"metadata":{${M}}}',
                "fills": {"M": {"repeat": '"k${INDEX}":"v"', "count": 3, "separator": ","}},
            },
        ),
    )
    base = ["conformance", "run", str(tmp_path), "--format", "json", "--backend", "reference"]
    in_process_code = main(base)
    in_process = json.loads(capsys.readouterr().out)
    through_serve_code = main([*base, "--impl", SERVE])
    through_serve = json.loads(capsys.readouterr().out)
    assert in_process_code == through_serve_code == 1
    assert (through_serve["passed"], through_serve["failed"]) == (3, 1)
    assert in_process["results"] == through_serve["results"]


def test_requests_carry_the_case_without_expect_and_with_generators_expanded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "requests.jsonl"
    impl = fake_impl(
        tmp_path,
        f"""
        open({str(log)!r}, "a").write(line)
        print(json.dumps({{"stage": "import", "outcome": "ok"}}), flush=True)
        """,
    )
    generated = case(
        "generated",
        moduleText=None,
        moduleTextGenerator={"template": "${X}", "fills": {"X": {"repeat": "ab", "count": 2}}},
        tags=["t"],
    )
    write_cases(tmp_path, "cases/import/a.json", generated, case("plain"))
    code = main(["conformance", "run", str(tmp_path / "cases"), "--impl", impl, "--backend", "all"])
    capsys.readouterr()
    assert code == 0
    requests = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["case"]["name"], r["backend"]) for r in requests] == [
        ("generated", "reference"),
        ("generated", "optimized"),
        ("plain", "reference"),
        ("plain", "optimized"),
    ]
    first = requests[0]
    assert set(first) == {"case", "backend", "stage"}
    assert first["stage"] == "import"
    assert "expect" not in first["case"]
    assert "moduleTextGenerator" not in first["case"]
    assert first["case"]["moduleText"] == "abab"
    assert first["case"]["tags"] == ["t"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('print("not json", flush=True)\n', "invalid protocol response: not a JSON line"),
        ("print(json.dumps([1]), flush=True)\n", "a response must be a JSON object"),
        ('print(json.dumps({"stage": "import"}), flush=True)\n', "'outcome' must be a string"),
        ("sys.exit(3)\n", "the implementation exited (exit status 3)"),
        ("time.sleep(30)\n", "no response within 1 s"),
    ],
)
def test_a_broken_implementation_fails_each_case_and_is_restarted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, message: str
) -> None:
    code = run_two_cases(tmp_path, fake_impl(tmp_path, body), "--timeout", "1", "--format", "json")
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert [r["name"] for r in report["results"]] == ["first", "second"]
    for result in report["results"]:
        assert result["passed"] is False
        assert result["actual"]["outcome"] == "crash"
        assert message in result["actual"]["message"]


def test_an_implementation_that_cannot_start_fails_cleanly(tmp_path: Path) -> None:
    with ImplClient(str(tmp_path / "no-such-program")) as client:
        actual = client.ask({"name": "x", "moduleText": GOOD_MODULE}, "reference", "import")
    assert actual.outcome == "crash"
    assert "cannot start the implementation" in (actual.message or "")


def test_the_client_starts_the_command_once_for_many_cases(tmp_path: Path) -> None:
    impl = fake_impl(tmp_path, 'print(json.dumps({"stage": "import", "outcome": "ok"}), flush=True)\n')
    with ImplClient(impl) as client:
        outcomes = [client.ask({"name": f"c{i}"}, "reference", "import").outcome for i in range(5)]
        assert client.starts == 1
    assert outcomes == ["ok"] * 5


@pytest.mark.parametrize(
    ("response", "valid"),
    [
        ({"stage": "run", "outcome": "ok", "value": 3, "usage": {"fuelUsed": 7}, "bindingCalls": {}}, True),
        ({"outcome": "ok"}, True),
        ({"outcome": "ok", "line": "3"}, False),
        ({"outcome": "ok", "usage": {"fuelUsed": 1.5}}, False),
        ({"outcome": "ok", "usage": {"fuelUsed": True}}, False),
        ({"outcome": "ok", "bindingCalls": []}, False),
        ({"outcome": "ok", "diagnostic": 5}, False),
    ],
)
def test_responses_are_checked(response: dict[str, Any], valid: bool) -> None:
    assert (actual_from_response(response).outcome != "crash") is valid


def test_serve_answers_the_handshake_with_its_versions() -> None:
    hello = json.dumps({"hello": {"protocol": PROTOCOL_VERSION, "corpus": CORPUS_VERSION}})
    done = subprocess.run(
        [*CLI, "conformance", "serve"], input=hello + "\n", capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["hello"]["protocol"] == PROTOCOL_VERSION
    assert answer["hello"]["corpus"] == CORPUS_VERSION
    assert answer["hello"]["implementation"].startswith("dotboxd ")


@pytest.mark.parametrize(
    ("hello_answer", "message"),
    [
        ("{'hello': {'protocol': 99}}", "protocol mismatch: this runner speaks conformance protocol"),
        ("{'stage': None, 'outcome': 'unsupported'}", "the implementation did not answer the handshake"),
    ],
)
def test_a_protocol_mismatch_is_one_clear_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], hello_answer: str, message: str
) -> None:
    impl = fake_impl(tmp_path, f"print(json.dumps({hello_answer}), flush=True)\n", handshake=False)
    code = run_two_cases(tmp_path, impl, "--timeout", "5")
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], captured.err
    assert f"protocol {PROTOCOL_VERSION} (corpus {CORPUS_VERSION})" in lines[0]
