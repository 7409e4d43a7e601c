"""Projected host events (issue 16): rule 25 (``verify_projection``) and the lane's snapshot reads.

An entry whose one parameter is a host event (``Map<String, scalar>``) used only as the map of
fused literal reads (``_s_lrget`` / ``_s_lrhas``) is handed the event's checked snapshot by the
fast lane (``core.event_maps.event_projector``) instead of a map built from it. Here: the verifier,
not the generator, decides which entries are admitted, and every tampered use of the event takes
the admission away; hostile events answer through a projected entry exactly as through the ordinary
path and the reference interpreter, at every fuel budget and limit the reads meet; and a read that
falls back to the exact stubs gets the very map the plain reader would have built.
"""

from __future__ import annotations

import ast
import copy
from typing import Any

import pytest

from dotboxd.host import Policy, SandboxHost
from dotboxd.runtime.optimized import ArtifactCache, OptimizedBackend, compile_plan
from dotboxd.runtime.optimized.artifact import bind
from dotboxd.runtime.optimized.fastlane import FastLane
from dotboxd.runtime.optimized.inline_reads import fallback_of
from dotboxd.runtime.optimized.verify_projection import projected_functions
from dotboxd.validator.plan import ExecutionPlan

from ..runtime.test_event_maps import _Dict, _Int, _Str
from .differential import differences, observe
from .kernels import prepare
from .tampering import Tampering

EVENT = """module "event" version "1.0.0";
entrypoint fn check(ev Map<String, I32>) -> Bool { return map.get(ev, "hp") > 0 && map.get(ev, "level") >= 10; }"""

HAS = """module "has" version "1.0.0";
entrypoint fn check(ev Map<String, I32>) -> I32 {
    if map.containsKey(ev, "hp") && map.get(ev, "hp") > 0 { return map.get(ev, "level") + 1; }
    if map.containsKey(ev, "gone") { return 7; }
    return 0;
}"""

FLAGS = """module "flags" version "1.0.0";
entrypoint fn check(ev Map<String, Bool>) -> Bool { return map.get(ev, "on") && !map.get(ev, "off"); }"""

ESCAPES = {
    "returned": """module "x" version "1.0.0";
entrypoint fn echo(ev Map<String, I32>) -> Map<String, I32> { t = map.get(ev, "hp"); return ev; }""",
    "updated": """module "x" version "1.0.0";
entrypoint fn echo(ev Map<String, I32>) -> I32 { return map.get(map.set(ev, "hp", 1), "hp"); }""",
    "read at a non-literal key": """module "x" version "1.0.0";
entrypoint fn echo(ev Map<String, I32>, k String) -> I32 { return map.get(ev, k); }""",
}


HOSTILE: list[Any] = [
    {"hp": 3, "level": 12},
    {"level": 12, "hp": 3},  # the same key set in another order
    {"hp": 0, "level": 12},
    {"hp": 3},  # "level" missing: the exact stubs, from a map built from the snapshot
    {},
    {"hp": 3, "level": 12, "other": "x"},  # a bad value under a key the kernel never reads
    {"hp": 3, "level": 12, "other": 2**40},  # out of range under a key never read
    {"hp": 3, "level": 12, "other": {"a": 1}},  # a nested map under a key never read
    {"hp": {"a": 1}, "level": 12},  # a nested map under a key that is read
    {"hp": 3, "level": 12, "h\u00e9": 1},  # a non-ASCII key never read: the general reader
    {"hp": _Int(3), "level": 12},  # an int subclass value
    {"hp": True, "level": 12},  # a bool is not an I32
    {"hp": 3.0, "level": 12},
    {"hp": None, "level": 12},
    {_Str("hp"): 3, "level": 12},  # a str subclass key
    {b"hp": 3, "level": 12},
    {("hp",): 3, "level": 12},
    {7: 3, "level": 12},
    _Dict({"hp": 3, "level": 12}),  # a dict subclass: the general routine
    {"hp": 3, "level": 12, "k" * 5000: 1},  # a huge key: past what a key set may keep
    {"hp": 3, "level": 12, **{f"k{i}": i for i in range(100)}},  # more keys than a kept key set
    {"hp": -(2**31), "level": 2**31 - 1},
    {"hp": 2**31, "level": 12},
]


def _hosts() -> tuple[SandboxHost, SandboxHost]:
    backend = OptimizedBackend(cache=ArtifactCache())
    laned = SandboxHost(backends={"optimized": backend})
    ordinary = SandboxHost(backends={"optimized": backend}, fast_lanes=False)
    return laned, ordinary


def _lane(host: SandboxHost, plan: ExecutionPlan, entry: str) -> FastLane:
    dispatch = host._dispatch.get((id(plan), entry, "optimized", "python"))
    assert dispatch is not None and isinstance(dispatch.fast, FastLane)
    return dispatch.fast


def _agree(
    laned: SandboxHost, ordinary: SandboxHost, plan: ExecutionPlan, entry: str, args: list[Any]
) -> None:
    lane = laned.execute(plan, entry, args, backend="optimized")
    for other in (
        ordinary.execute(plan, entry, args, backend="optimized"),
        laned.execute(plan, entry, args, backend="reference"),
    ):
        diff = differences(observe(other), observe(lane))
        assert not diff, f"{args!r}:\n  " + "\n  ".join(diff)


# --- which entries the verifier admits ---------------------------------------------------------


@pytest.mark.parametrize("source", [EVENT, HAS, FLAGS], ids=["get", "containsKey", "bool values"])
def test_an_event_read_only_by_literal_reads_is_admitted(source: str) -> None:
    assert compile_plan(prepare(source)).projected == frozenset({"check"})


@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_an_event_used_otherwise_is_not_admitted(name: str) -> None:
    assert compile_plan(prepare(ESCAPES[name])).projected == frozenset()


_GENERATED = Tampering(EVENT)
_READ = "_s_lrget(R, f, lr, 1, 0, 2, v0)"
_FIRST = "    f -= 1\n    if f < 0:\n        _s_fx(R, f, lr, 3)\n"
"""The top-level charge after the first read (whose fused call now stands inside its inline form,
rule 29) with its exhaustion check (rule 26 keeps the two together): the tamperings below add their
statement around it."""

TAMPERINGS = {
    "stored in a slot": (_FIRST, _FIRST + "    t9 = v0\n"),
    "returned": ("return (t1, f)", "return (v0, f)"),
    "compared": ("t1 = t0 > 0", "t1 = v0 == 0"),
    "an attribute read": ("t1 = t0 > 0", "t1 = v0.entries"),
    "subscripted": ("t1 = t0 > 0", 't1 = v0["hp"]'),
    "passed to another stub": ("_s_fx(R, f, lr, 3)", "_s_fx(R, f, lr, v0)"),
    "a site argument": (_READ, "_s_lrget(R, f, lr, v0, 0, 2, v0)"),
    "an extra argument": (_READ, "_s_lrget(R, f, lr, 1, 0, 2, v0, v0)"),
    "a keyword argument": (_READ, "_s_lrget(R, f, lr, 1, 0, 2, m=v0)"),
    "starred": (_READ, "_s_lrget(R, f, lr, 1, 0, 2, *v0)"),
    "a starred argument before it": (_READ, "_s_lrget(*R, f, lr, 1, 0, v0)"),
    "read through another callee": (_READ, "_s_lrhas.__call__(R, f, lr, 1, 0, 2, v0)"),
    "rebound": (_FIRST, _FIRST + "    v0 = t0\n"),
    "deleted": (_FIRST, _FIRST + "    del v0\n"),
    "the stub rebound": (_FIRST, "    _s_lrget = _s_fx\n" + _FIRST),
    "captured by a lambda": (_FIRST, _FIRST + "    t9 = lambda: v0\n"),
    "in a comprehension": (_FIRST, _FIRST + "    t9 = [v0 for t8 in ()]\n"),
    "declared global": (_FIRST, "    global v9\n" + _FIRST),
    "a parameter added": ("def _fn0(R, f, d, lr, v0):", "def _fn0(R, f, d, lr, v0, v1=0):"),
    "a default": ("def _fn0(R, f, d, lr, v0):", "def _fn0(R, f, d, lr, v0=None):"),
    "star parameters": ("def _fn0(R, f, d, lr, v0):", "def _fn0(R, f, d, lr, v0, *v1):"),
    "defined twice": ("return (t1, f)", "return (t1, f)\n\ndef _fn0(R, f, d, lr, v0):\n    return (v0, f)"),
    "rebound in the module": ("return (t1, f)", "return (t1, f)\n_fn0 = _s_fx"),
}


def _tampered(rewrite: str, replacement: str) -> ast.Module:
    source = _GENERATED.source()
    assert rewrite in source, rewrite
    return ast.parse(source.replace(rewrite, replacement, 1))


def _without_inline_forms(module: ast.Module) -> ast.Module:
    """``module`` with each inline read (rule 29) replaced by its fallback, the fused call: the
    form stands only in an entry rule 25 admits, so a module whose event escapes keeps the calls."""
    for node in ast.walk(module):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                block[:] = [fallback_of(stmt) or stmt for stmt in block]
    return module


def test_the_untampered_module_is_admitted_as_generated_and_as_source() -> None:
    generated = _GENERATED.generated
    assert projected_functions(generated.module, generated.tables, _GENERATED.plan) == {"check"}
    parsed = ast.parse(_GENERATED.source())  # the tamperings below start from this
    assert projected_functions(parsed, generated.tables, _GENERATED.plan) == {"check"}


@pytest.mark.parametrize("name", sorted(TAMPERINGS))
def test_a_tampered_use_of_the_event_is_not_admitted(name: str) -> None:
    """Rule 24's own verdict, whatever the other rules make of the tampered module."""
    module = _tampered(*TAMPERINGS[name])
    assert projected_functions(module, _GENERATED.generated.tables, _GENERATED.plan) == frozenset()


def test_a_tampered_module_the_other_rules_accept_runs_with_the_map() -> None:
    """End to end: a module whose event escapes into a slot still verifies (slots are free to hold
    a map), is not admitted, and its lane hands the entry a map, answering as the reference."""
    generated = _GENERATED.generated
    module = _without_inline_forms(_tampered(*TAMPERINGS["stored in a slot"]))
    artifact = bind(
        _GENERATED.plan, _GENERATED.key, module, copy.deepcopy(generated.tables), generated.ir_nodes
    )
    assert artifact.projected == frozenset()
    backend = OptimizedBackend(cache=ArtifactCache())
    laned = SandboxHost(backends={"optimized": backend})
    plan = _GENERATED.plan
    laned.execute(plan, "check", [{"hp": 1}], backend="optimized")  # the dispatch record
    backend._remember(plan, artifact)  # the tampered artifact in place of the compiled one
    for event in ({"hp": 3, "level": 12}, {"hp": 3}, {"hp": 0, "level": 1}):
        _agree(laned, laned, plan, "check", [event])
    assert _lane(laned, plan, "check").projects is False


# --- what projected entries answer --------------------------------------------------------------


@pytest.mark.parametrize("source", [EVENT, HAS], ids=["get", "containsKey"])
def test_hostile_events_answer_as_the_ordinary_path_and_the_reference(source: str) -> None:
    laned, ordinary = _hosts()
    plan = laned.prepare(source)
    for _ in range(2):  # compiled, then the lane bound
        laned.execute(plan, "check", [{"hp": 1, "level": 1}], backend="optimized")
    assert _lane(laned, plan, "check").projects, "not vacuous: the entry is projected"
    for event in HOSTILE:
        _agree(laned, ordinary, plan, "check", [event])


def test_the_host_changing_its_dict_between_runs_changes_only_later_runs() -> None:
    laned, ordinary = _hosts()
    plan = laned.prepare(HAS)
    event = {"hp": 3, "level": 12}
    for _ in range(2):
        laned.execute(plan, "check", [event], backend="optimized")
    first = laned.execute(plan, "check", [event], backend="optimized")
    event["hp"] = 0
    event["gone"] = 1
    second = laned.execute(plan, "check", [event], backend="optimized")
    assert (first.value, second.value) == (13, 7)
    assert first.usage != second.usage  # a third key: another key set, other input charges
    _agree(laned, ordinary, plan, "check", [event])


FUEL = list(range(0, 40))
LIMITS: list[dict[str, int]] = [
    *({"max_fuel": n} for n in FUEL),
    *({"max_total_string_bytes": n} for n in (13, 14, 17, 18, 27, 28, 31, 32)),
    {"max_map_entries": 1},
    {"max_total_collection_elements": 1},
]


@pytest.mark.parametrize("limits", LIMITS, ids=[f"{k}={v}" for d in LIMITS for k, v in d.items()])
def test_projected_reads_agree_at_every_fuel_budget_and_limit(limits: dict[str, int]) -> None:
    """Each budget stops the run at another charge: a literal, a read, the input itself. The lane
    then falls back to the exact stubs with the map built from the snapshot, or builds its meter."""
    laned, ordinary = _hosts()
    plan = laned.prepare(HAS, Policy.builder().with_limits(**limits).build())
    for _ in range(2):
        laned.execute(plan, "check", [{"hp": 1}], backend="optimized")
    lane = _lane(laned, plan, "check")
    if laned.execute(plan, "check", [{}], backend="optimized").ok:
        assert lane.projects, "not vacuous: the entry is projected once compiled"
    for event in ({"hp": 3, "level": 12}, {"hp": 3}, {"hp": 0, "gone": 1}, {}, {"hp": 1, "level": 2, "x": 3}):
        _agree(laned, ordinary, plan, "check", [event])


def test_bool_events_are_projected_and_agree() -> None:
    laned, ordinary = _hosts()
    plan = laned.prepare(FLAGS)
    for _ in range(2):
        laned.execute(plan, "check", [{"on": True, "off": False}], backend="optimized")
    assert _lane(laned, plan, "check").projects
    for event in (
        {"on": True, "off": False},
        {"on": True, "off": True},
        {"on": 1, "off": False},
        {"on": True},
    ):
        _agree(laned, ordinary, plan, "check", [event])
