"""Run-time errors raised by an operation carry the JSON pointer and line:column of its node, the
same on both backends; run-wide failures (fuel, time, cancellation) carry none. See
``runtime.locations`` for the rule."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from dotboxd.cli.main import main
from dotboxd.host import Cost, Effect, ExecutionResult, Int32, Policy, SandboxHost, host_binding
from dotboxd.runtime.errors import ErrorInfo

BACKENDS = ("reference", "optimized")


@host_binding(id="test.explode", cost=Cost(base_fuel=1), effects=Effect.CPU)
def explode(x: Int32) -> Int32:
    raise KeyError(x)


def _error(source: str, args: list[Any], backend: str, pol: Policy | None = None) -> ErrorInfo:
    host = SandboxHost(bindings=[explode])
    plan = host.prepare(source, pol or Policy.builder().with_max_wall_time_ms(60_000).build())
    result: ExecutionResult = host.execute(plan, "main", args, backend=backend)
    assert result.error is not None
    return result.error


def _where(error: ErrorInfo) -> tuple[str, str, str]:
    return error.code, error.pointer, str(error.span)


HELPER = """module "t" version "1.0.0";
fn pick(xs List<I32>, i I32) -> I32 {
    return list.get(xs, i) * 2;
}
entrypoint fn main(xs List<I32>, n I32) -> I32 {
    total = 0;
    for i in 0 .. n {
        total = total + pick(xs, i);
    }
    return total + test.explode(total);
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_list_index_failure_in_a_called_function_is_located_at_its_call(backend: str) -> None:
    error = _error(HELPER, [[1, 2], 3], backend)
    assert _where(error) == ("R-LIST-INDEX", "/functions/0/body/0/value/left", "3:12")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_binding_failure_is_located_at_the_binding_call(backend: str) -> None:
    error = _error(HELPER, [[1, 2], 2], backend)
    assert _where(error) == ("R-BINDING-FAILED", "/functions/1/body/2/value/right", "10:20")


def _loop_kernel(init: str, step: str, result: str) -> str:
    """``main(n)``: ``init`` on line 3, then ``for i in 0 .. n { step }`` on line 4 (the expected
    line:col locations below count on that layout), then ``return result``."""
    return (
        'module "t" version "1.0.0";\nentrypoint fn main(n I32) -> I32 {\n'
        f"    {init}\n    for i in 0 .. n {{ {step} }}\n    return {result};\n}}\n"
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_overflow_in_a_bulk_loop_is_located_at_the_operator(backend: str) -> None:
    source = _loop_kernel("acc = 1;", "acc = acc * 3;", "acc")
    assert _where(_error(source, [100], backend)) == (
        "R-ARITH-OVERFLOW",
        "/functions/0/body/1/body/0/value",
        "4:29",
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_collection_quota_is_located_at_the_call_that_grew_the_list(backend: str) -> None:
    source = _loop_kernel("xs = list.empty[I32]();", "xs = list.add(xs, i);", "list.count(xs)")
    pol = Policy.builder().with_max_wall_time_ms(60_000).with_max_list_length(5).build()
    error = _error(source, [10], backend, pol)
    assert _where(error) == ("R-QUOTA-LIST-LENGTH", "/functions/0/body/1/body/0/value", "4:28")


@pytest.mark.parametrize("backend", BACKENDS)
def test_fuel_exhaustion_has_no_location(backend: str) -> None:
    source = _loop_kernel("acc = 0;", 'acc = acc + string.length("abc");', "acc")
    pol = Policy.builder().with_max_wall_time_ms(60_000).with_fuel(200).build()
    error = _error(source, [1000], backend, pol)
    assert (error.code, error.pointer, error.span) == ("R-QUOTA-FUEL", "", None)


def test_the_wire_form_locates_at_the_json_node() -> None:
    wire = {
        "id": "t",
        "version": "1.0.0",
        "functions": [
            {
                "id": "main",
                "visibility": "entrypoint",
                "parameters": [{"name": "a", "type": "I32"}],
                "returnType": "I32",
                "body": [{"op": "return", "value": {"op": "div", "left": {"i32": 1}, "right": {"var": "a"}}}],
            }
        ],
    }
    text = json.dumps(wire, indent=1)
    errors = [_where(_error(text, [0], backend)) for backend in BACKENDS]
    assert errors[0] == errors[1]
    code, pointer, span = errors[0]
    assert (code, pointer) == ("R-ARITH-DIVIDE-BY-ZERO", "/functions/0/body/0/value")
    line, column = (int(part) for part in span.split(":"))
    source_line = text.splitlines()[line - 1]
    assert source_line.strip() == '"value": {' and source_line[column - 1] == "{"  # the division node


PURE = """module "t" version "1.0.0";
fn pick(xs List<I32>, i I32) -> I32 {
    return list.get(xs, i) * 2;
}
entrypoint fn main(xs List<I32>, n I32) -> I32 {
    total = 0;
    for i in 0 .. n { total = total + pick(xs, i); }
    return total;
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_dotboxd_run_prints_file_line_col_and_a_caret(backend: str, tmp_path: Path) -> None:
    kernel = tmp_path / "k.dbk"
    kernel.write_text(PURE, "utf-8")
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["run", str(kernel), "--args", "[[1, 2], 3]", "--backend", backend])
    assert code == 1
    lines = err.getvalue().splitlines()
    assert lines[0].startswith(f"{kernel}:3:12: InvalidInput [R-LIST-INDEX]")
    assert lines[1] == "  at /functions/0/body/0/value/left"
    assert lines[2].endswith("|     return list.get(xs, i) * 2;")
    assert lines[3].index("^") == lines[2].index("list.get")


# Built-ins that count as host calls (math.*, string.*, int32.toStringInvariant) are never inlined:
# the optimized backend calls their stubs, most with a fast path in front that leaves every failure
# to the exact stub. A failure there - the operation's own, or the host-call budget its call
# spends - is located at the call, as on the reference interpreter, in a bulk loop too.
HOST_CALL_BUILTINS = """module "t" version "1.0.0";
entrypoint fn main(mode I32, n I32) -> I32 {
    total = 0;
    for i in 0 .. n {
        if mode == 0 { total = total + math.abs(i - 2147483647 - 1); }
        if mode == 1 { total = total + math.clamp(i, n, 0); }
        if mode == 2 { total = total + string.length(int32.toStringInvariant(i)); }
        if mode == 3 { total = total + string.length(string.substringBudgeted("ab", i, 1)); }
    }
    return total;
}
"""


@pytest.mark.parametrize(
    ("mode", "n", "expected"),
    [
        (0, 3, ("R-ARITH-OVERFLOW", "/functions/0/body/1/body/0/then/0/value/right", "5:40")),
        (1, 3, ("R-ARITH-CLAMP-RANGE", "/functions/0/body/1/body/1/then/0/value/right", "6:40")),
        (2, 50, ("R-QUOTA-HOST-CALLS", "/functions/0/body/1/body/2/then/0/value/right/args/0", "7:54")),
    ],
)
def test_a_host_call_builtin_failure_is_located_at_its_call_on_both_backends(
    mode: int, n: int, expected: tuple[str, str, str]
) -> None:
    pol = Policy.builder().with_max_wall_time_ms(60_000).with_max_host_calls(40).build()
    errors = [_where(_error(HOST_CALL_BUILTINS, [mode, n], backend, pol)) for backend in BACKENDS]
    assert errors[0] == errors[1] == expected


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_string_builtin_failure_in_a_loop_is_located_at_its_inner_call(backend: str) -> None:
    error = _error(HOST_CALL_BUILTINS, [3, 5], backend)
    assert error.pointer == "/functions/0/body/1/body/3/then/0/value/right/args/0"
    assert str(error.span) == "8:54"
