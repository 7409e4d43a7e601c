"""``s = string.concatBudgeted(s, x)`` appends to the variable's own text on both backends.

Both backends run that statement as "charge exactly as the built-in, then ``s = s + x``", which
CPython does in place when ``s`` is the text's only owner, so building a string in a loop is linear.
What must never change: the charges and failures (the backends agree with each other and with the
plain built-in call), and immutability (a text held anywhere else - another variable, a list, a map
key, a function's argument - never changes when the variable it came from is appended to).
"""

from __future__ import annotations

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dotboxd.host import SandboxHost
from dotboxd.runtime import intrinsics
from dotboxd.runtime.optimized import ArtifactCache, OptimizedBackend
from dotboxd.runtime.optimized.codegen import generate
from dotboxd.validator.policy import Policy
from tests.optimized.differential import differences, observe

HOLDERS = """module "holders" version "1.0.0";
fn grow(s String, n I32) -> String {
    for i in 0 .. n { s = string.concatBudgeted(s, "y"); }
    return s;
}
entrypoint fn main(seed String, n I32) -> List<String> {
    s = seed;
    old = s;
    xs = list.of(s);
    m = map.set(map.empty[Map<String, I32>](), s, 1);
    for i in 0 .. n {
        s = string.concatBudgeted(s, int32.toStringInvariant(i % 10));
        if i == 2 { old = s; }
    }
    grown = grow(s, 3);
    s = string.concatBudgeted(s, "!");
    found = 0;
    if map.containsKey(m, seed) { found = 1; }
    return list.of(old, list.get(xs, 0), s, grown, int32.toStringInvariant(found));
}"""

SPLIT = """module "split" version "1.0.0";
entrypoint fn main(n I32) -> String {
    s = "";
    t = "";
    for i in 0 .. n { s = string.concatBudgeted(s, "ab"); t = string.concatBudgeted(t, s); }
    return string.concatBudgeted(s, t);
}"""

_HOST = SandboxHost(backends={"optimized": OptimizedBackend(cache=ArtifactCache())})
_POLICY = (
    Policy.builder()
    .with_fuel(10**7)
    .with_max_loop_iterations(10**6)
    .with_limits(max_host_calls=10**6)
    .with_max_wall_time_ms(30_000)  # at the 100 ms default a descheduled run timed out under load
    .build()
)
_HOLDERS = _HOST.prepare(HOLDERS, _POLICY)


def _expected(seed: str, n: int) -> list[str]:
    s = seed
    old = s
    for i in range(n):
        s = s + str(i % 10)
        if i == 2:
            old = s
    return [old, seed, s + "!", s + "yyy", "1"]


@settings(max_examples=30, deadline=None)
@given(seed=st.text(alphabet="ab\u00e9\U0001f600", max_size=6), n=st.integers(0, 40))
def test_appending_to_a_variable_never_changes_a_text_held_elsewhere(seed: str, n: int) -> None:
    for backend in ("reference", "optimized"):
        result = _HOST.execute(_HOLDERS, "main", [seed, n], backend=backend)
        assert result.ok, result.error
        assert list(result.value.items) == _expected(seed, n), backend  # type: ignore[union-attr]


@pytest.mark.parametrize("n", [0, 1, 7, 40])
def test_in_place_appends_charge_and_fail_exactly_as_on_the_reference(n: int) -> None:
    """Same value, fuel and every usage counter on both backends, at ample limits and at limits that
    stop the run inside the loop (string length, string bytes, fuel, host calls)."""
    plan = _HOST.prepare(SPLIT, _POLICY)
    ample = observe(_HOST.execute(plan, "main", [n]))
    assert ample["ok"]
    for limits in (
        {},
        {"max_string_length": max(2, n)},
        {"max_total_string_bytes": max(8, 4 * n * n + 3)},
        {"max_host_calls": n + 1},
    ):
        builder = (
            Policy.builder().with_fuel(10**7).with_max_loop_iterations(10**6).with_max_wall_time_ms(30_000)
        )  # the default 100 ms deadline fired on a descheduled run under load (seen at load 6)
        plan = _HOST.prepare(SPLIT, builder.with_limits(**{"max_host_calls": 10**6, **limits}).build())
        reference = observe(_HOST.execute(plan, "main", [n]))
        optimized = observe(_HOST.execute(plan, "main", [n], backend="optimized"))
        assert not differences(reference, optimized), (limits, differences(reference, optimized))
        fuel = ample["usage"]["fuelUsed"] if ample["ok"] else 0
        for budget in (fuel - 1, fuel // 2):
            if budget > 0:
                starved = _HOST.prepare(
                    SPLIT, builder.with_fuel(budget).with_limits(max_host_calls=10**6).build()
                )
                reference = observe(_HOST.execute(starved, "main", [n]))
                optimized = observe(_HOST.execute(starved, "main", [n], backend="optimized"))
                assert not reference["ok"]
                assert not differences(reference, optimized), budget


def test_both_backends_take_the_append_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference runs ``s = concat(s, x)`` through ``text_append``; the generated code calls the
    charge-only stub and adds the text itself, never the built-in's building stub."""
    calls: list[int] = []
    real = intrinsics.text_append

    def counting(text: str, suffix: str) -> str:
        calls.append(len(suffix))
        return real(text, suffix)

    monkeypatch.setattr("dotboxd.runtime.reference.interpreter.text_append", counting)
    plan = _HOST.prepare(SPLIT, _POLICY)
    assert _HOST.execute(plan, "main", [5]).ok
    assert len(calls) == 10  # two appends per iteration (the returned concat is no statement of its own)
    names = [
        node.func.id
        for node in ast.walk(generate(plan).module)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    ]
    assert names.count("_s_cat") == 2  # the two statements in the loop
    assert names.count("_s_i_string_concatBudgeted") == 1  # the returned concat builds a new text
