"""Projected host events (rule 25) on generated kernels, under threads and re-entry (review6, issue 16).

Why: ``test_event_projection`` pins three hand-written predicates. Here random kernels read a
``Map<String, I32|I64|F64|Bool>`` event only through ``map.get`` / ``map.containsKey`` at literal
keys - in expressions, branches, early returns and short loops, keys present or missing, the empty
and a long key - so every one is projected, and each runs through the lane against the reference
interpreter on hostile events (values at and past their range, NaN and infinities, a ``bool`` for a
number, a ``str`` subclass key, a ``dict`` subclass, a non-ASCII key, 70 and 3,000 extra keys) at
fuel budgets up to each kernel's need (every one, or 120 spread over a larger need) and at
text, map and element limits. Then four threads share one
projected lane, a host thread rewrites the event dict while runs read it, and a hostile key's
``__hash__`` runs the same entry again from inside a run's read. Review6 found no disagreement; the
long sweep is slow-marked.
"""

from __future__ import annotations

import random
import sys
import threading
from typing import Any

import pytest

from dotboxd.host import Policy, SandboxHost
from dotboxd.runtime.optimized import ArtifactCache, OptimizedBackend

from .differential import differences, observe
from .test_event_projection import HAS, HOSTILE, _lane

KEYS = ["a", "b", "hp", "", "level", "x y", "k" * 40]
LITERALS = {
    "I32": ["0", "1", "2", "7", "-3", "100", "2147483647"],
    "I64": ["0L", "1L", "-5L", "9223372036854775807L", "3L"],
    "F64": ["0.0", "1.5", "-0.0", "1e308", "2.5"],
    "Bool": ["true", "false"],
}
VALUES: dict[str, list[Any]] = {
    "I32": [0, 1, -1, 2**31 - 1, -(2**31), 2**31, True, 1.0, None, "x"],
    "I64": [0, 1, -1, 2**63 - 1, -(2**63), 2**63, 2**31, True],
    "F64": [0.0, -0.0, 1.5, float("nan"), float("inf"), 1e308, 1, True, -1e308],
    "Bool": [True, False, 0, 1],
}
"""Per value type: the first four are accepted, the rest are hostile (out of range, wrong class)."""


class _Key(str):
    pass


class _Event(dict[str, Any]):
    pass


def _value(r: random.Random, kind: str, depth: int = 0) -> str:
    if depth > 2 or r.random() < 0.35:
        return f'map.get(ev, "{r.choice(KEYS)}")' if r.random() < 0.7 else r.choice(LITERALS[kind])
    left, right = _value(r, kind, depth + 1), _value(r, kind, depth + 1)
    operator = r.choice(["&&", "||"] if kind == "Bool" else ["+", "-", "*"])
    return f"({left} {operator} {right})"


def _test(r: random.Random, kind: str) -> str:
    if kind == "Bool" and r.random() < 0.4:
        return _value(r, kind)
    if r.random() < 0.4 or kind == "Bool":
        return f'map.containsKey(ev, "{r.choice(KEYS)}")'
    return f"{_value(r, kind, 1)} {r.choice(['<', '>', '==', '!=', '>=', '<='])} {_value(r, kind, 1)}"


def _body(r: random.Random, kind: str, depth: int = 0) -> str:
    statements = []
    for _ in range(r.randint(1, 3)):
        pick = r.random()
        if pick < 0.55 and depth < 2 and pick >= 0.3:
            statements.append(
                f"if {_test(r, kind)} {{ {_body(r, kind, depth + 1)} }} else {{ {_body(r, kind, depth + 1)} }}"
            )
        elif 0.55 <= pick < 0.7 and depth < 1:
            statements.append(f"for i in 0 .. {r.randint(0, 4)} {{ {_body(r, kind, depth + 1)} }}")
        elif 0.7 <= pick < 0.8:
            statements.append(f"if {_test(r, kind)} {{ return {_value(r, kind)}; }}")
        else:
            statements.append(f"s = {_value(r, kind)};")
    return " ".join(statements)


def _kernel(r: random.Random) -> tuple[str, str]:
    kind = r.choice(sorted(LITERALS))
    text = f"""module "p" version "1.0.0";
entrypoint fn check(ev Map<String, {kind}>) -> {kind} {{ s = {r.choice(LITERALS[kind])}; {_body(r, kind)} return s; }}"""
    return kind, text


def _event(r: random.Random, kind: str) -> Any:
    event: dict[Any, Any] = {}
    for key in r.sample(KEYS, r.randint(0, len(KEYS))):
        event[key] = r.choice(VALUES[kind][:4]) if r.random() < 0.85 else r.choice(VALUES[kind])
    pick = r.random()
    if pick < 0.03:
        event[_Key("a")] = VALUES[kind][0]
    elif pick < 0.06:
        return _Event(event)
    elif pick < 0.08:
        event["h\u00e9"] = VALUES[kind][0]
    elif pick < 0.10:
        event.update({f"z{i}": VALUES[kind][1] for i in range(r.choice([70, 3000]))})
    return event


def _projected_host(text: str, limits: dict[str, int], warm: Any) -> tuple[SandboxHost, Any]:
    host = SandboxHost(backends={"optimized": OptimizedBackend(cache=ArtifactCache())})
    plan = host.prepare(text, Policy.builder().with_limits(max_wall_time_ms=60_000, **limits).build())
    for _ in range(2):  # compiled, then the lane bound
        host.execute(plan, "check", [warm], backend="optimized")
    return host, plan


def _agree(host: SandboxHost, plan: Any, event: Any) -> None:
    lane = observe(host.execute(plan, "check", [event], backend="optimized"))
    reference = observe(host.execute(plan, "check", [event], backend="reference"))
    diff = differences(reference, lane)
    assert not diff, f"{event!r:.200}:\n  " + "\n  ".join(diff)


def _fuzz(seed: int, sweep: bool) -> None:
    r = random.Random(seed)
    kind, text = _kernel(r)
    events = [_event(r, kind) for _ in range(6)]
    host, plan = _projected_host(text, {}, {"a": VALUES[kind][1]})
    assert _lane(host, plan, "check").projects, text  # not vacuous: every such kernel is projected
    needed = 0
    for event in events:
        _agree(host, plan, event)
        needed = max(needed, host.execute(plan, "check", [event], backend="reference").usage.fuel_used)
    step = max(1, needed // 120) if sweep else max(1, needed // 4)
    limits: list[dict[str, int]] = [
        {"max_fuel": b} for b in sorted({*range(0, needed + 2, step), max(0, needed - 1)})
    ]
    if sweep:
        limits += [{"max_total_string_bytes": b} for b in (0, 1, 2, 3, 5, 9, 40, 41, 80)]
        limits += [{"max_map_entries": b} for b in (0, 1, 3)]
        limits += [{"max_total_collection_elements": b} for b in (0, 1, 4)]
    for budget in limits:
        limited, limited_plan = _projected_host(text, budget, {})
        for event in events:
            _agree(limited, limited_plan, event)


@pytest.mark.parametrize("seed", range(2))
def test_generated_projected_kernels_agree_with_the_reference(seed: int) -> None:
    _fuzz(seed, sweep=False)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(2, 62))
def test_generated_projected_kernels_agree_across_fuel_budgets_and_limits(seed: int) -> None:
    _fuzz(seed, sweep=True)


def _outcome(result: Any) -> tuple[Any, ...]:
    error = result.error
    return (
        result.ok,
        result.value,
        None if error is None else (error.code, error.safe_message),
        result.usage,
    )


def test_threads_sharing_a_projected_lane_each_get_their_events_answer() -> None:
    host, plan = _projected_host(HAS, {}, {"hp": 1, "level": 1})
    assert _lane(host, plan, "check").projects
    events = [*HOSTILE, *({"hp": i, "level": 3 * i} for i in range(-3, 5)), {"gone": 1}, {"hp": 1, "gone": 0}]
    expected = [_outcome(host.execute(plan, "check", [event], backend="reference")) for event in events]
    wrong: list[Any] = []

    def runs(seed: int) -> None:
        r = random.Random(seed)
        for _ in range(150):
            at = r.randrange(len(events))
            seen = _outcome(host.execute(plan, "check", [events[at]], backend="optimized"))
            if seen != expected[at]:
                wrong.append((events[at], seen, expected[at]))

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # threads switch inside runs, not between them
    try:
        threads = [threading.Thread(target=runs, args=(seed,)) for seed in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switch)
    assert not wrong, wrong[:3]


def test_a_dict_rewritten_by_another_thread_is_read_as_one_of_its_states() -> None:
    host, plan = _projected_host(HAS, {}, {"hp": 1, "level": 1})
    states = [
        {"hp": hp, "level": 12, **({"gone": 1} if gone else {})}
        for hp in (0, 3, 2**40, "x")
        for gone in (0, 1)
    ]
    answers = {repr(_outcome(host.execute(plan, "check", [state], backend="reference"))) for state in states}
    event: dict[str, Any] = {"hp": 3, "level": 12}
    stop = threading.Event()

    def rewrite() -> None:
        r = random.Random(1)
        while not stop.is_set():
            event["hp"] = r.choice([0, 3, 2**40, "x"])
            if r.random() < 0.5:
                event.pop("gone", None)
            else:
                event["gone"] = 1

    writer = threading.Thread(target=rewrite)
    writer.start()
    try:
        seen = [repr(_outcome(host.execute(plan, "check", [event], backend="optimized"))) for _ in range(400)]
    finally:
        stop.set()
        writer.join()
    assert set(seen) <= answers


def test_a_run_entered_again_from_a_hostile_key_of_its_event_answers_as_the_reference() -> None:
    host, plan = _projected_host(HAS, {}, {"hp": 1, "level": 1})
    inner: list[Any] = []

    class Reentering(str):
        __slots__ = ()

        def __hash__(self) -> int:
            inner.append(_outcome(host.execute(plan, "check", [{"hp": 3, "level": 12}], backend="optimized")))
            return str.__hash__(self)

        def __eq__(self, other: object) -> bool:
            return str.__eq__(self, other)

    event = {Reentering("hp"): 3, "level": 12}
    outer = _outcome(host.execute(plan, "check", [event], backend="optimized"))
    assert outer == _outcome(host.execute(plan, "check", [event], backend="reference"))
    plain = _outcome(host.execute(plan, "check", [{"hp": 3, "level": 12}], backend="reference"))
    assert inner and all(seen == plain for seen in inner)
