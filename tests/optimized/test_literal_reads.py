"""Fused map reads at a text literal (``_s_lrget`` / ``_s_lrhas``: ``literal_reads``, issue 16).

``map.get(m, "hp")`` and ``map.containsKey(m, "hp")`` are one stub call that charges the literal and
the read together when a fast-lane run without a meter can count both, and calls the two stubs the
unfused code calls otherwise. Here both backends run the fused forms at every fuel budget around each
read (on the fast lane, whose runs start without a meter, and on the ordinary path, whose runs have
one), with maps from the host and maps built in the kernel, a missing key, and every limit a
literal or a read can hit; the deadline cadence and the results are compared with the same kernels
compiled without fusion; and the verifier's rule 23 refuses every tampered form.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from dotboxd.host import CancelToken, SandboxHost
from dotboxd.runtime import meter as meter_module
from dotboxd.runtime.optimized import ArtifactCache, OptimizedBackend, compile_plan
from dotboxd.runtime.optimized import codegen_literal_reads as fusion
from dotboxd.runtime.optimized.artifact import bind
from dotboxd.runtime.optimized.errors import VerifierFailure
from dotboxd.validator.plan import ExecutionPlan

from .differential import differences, observe
from .kernels import policy, prepare
from .tampering import Tampering

EVENT = """module "event" version "1.0.0";
entrypoint fn check(ev Map<String, I32>) -> I32 {
    if map.containsKey(ev, "hp") && map.get(ev, "hp") > 0 { return map.get(ev, "level") + 1; }
    return 0;
}"""

BUILT = """module "built" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    m = map.set(map.set(map.empty[Map<String, I32>](), "hp", n), "level", n * 2);
    acc = 0;
    for i in 0 .. n { if map.containsKey(m, "level") { acc = acc + map.get(m, "hp"); } }
    return acc + map.get(m, "missing");
}"""

LONG_KEY = "k" * 40
LONG = f"""module "long" version "1.0.0";
entrypoint fn check(ev Map<String, I32>) -> I32 {{
    if map.containsKey(ev, "{LONG_KEY}") {{ return map.get(ev, "{LONG_KEY}"); }}
    return map.get(ev, "hp");
}}"""

MANY_READS = 180
"""Straight-line reads (half of them ``containsKey``) past ``DEADLINE_EVERY_FUEL_CHARGES`` (64): a lane run reaches a deadline check."""
MANY = (
    'module "many" version "1.0.0";\nentrypoint fn check(ev Map<String, I32>) -> I32 {\n    acc = 0;\n'
    + "".join(
        f'    acc = acc + map.get(ev, "f{i % 3}");\n'
        if i % 2
        else f'    if map.containsKey(ev, "f{i % 4}") {{ acc = acc + 1; }}\n'
        for i in range(MANY_READS)
    )
    + "    return acc;\n}"
)

EVENTS: list[list[Any]] = [
    [{"hp": 3, "level": 4}],
    [{"hp": 0, "level": 4}],
    [{"hp": 3}],  # "level" missing: the exact stub raises
    [{}],
    [{"hp": -2, "level": 7, "x": 1, "y": 2, "z": 3}],
]
LONG_EVENTS: list[list[Any]] = [[{LONG_KEY: 5}], [{"hp": 1}], [{LONG_KEY: 5, "hp": 1}], [{}]]
MANY_EVENTS: list[list[Any]] = [[{"f0": 1, "f1": 2, "f2": 3}], [{"f0": 1, "f1": 2}]]
KERNELS: dict[str, tuple[str, str, list[list[Any]]]] = {
    "host event": (EVENT, "check", EVENTS),
    "built in the kernel": (BUILT, "main", [[0], [3], [40]]),
    "long literal": (LONG, "check", LONG_EVENTS),
    "past a deadline check": (MANY, "check", MANY_EVENTS),
}


def _hosts() -> tuple[SandboxHost, SandboxHost]:
    """A host whose optimized runs take the fast lane (no meter until a stub needs one) and one
    whose runs take the ordinary path (a meter from the start), each with its own artifacts."""
    laned = SandboxHost(backends={"optimized": OptimizedBackend(cache=ArtifactCache())})
    ordinary = SandboxHost(backends={"optimized": OptimizedBackend(cache=ArtifactCache())}, fast_lanes=False)
    return laned, ordinary


def _agree(
    plan: ExecutionPlan, entry: str, args: list[Any], hosts: tuple[SandboxHost, ...], what: str
) -> None:
    reference = observe(hosts[0].execute(plan, entry, args))
    for host in hosts:
        for run in range(3):  # the first run compiles, the second binds the lane, the third reuses it
            optimized = observe(host.execute(plan, entry, args, backend="optimized"))
            diff = differences(reference, optimized)
            assert not diff, f"{what}, run {run}:\n  " + "\n  ".join(diff)


@contextmanager
def _unfused() -> Iterator[None]:
    """Compile without fusion (the literal's stub, then the read's): the exact form the fused one
    must be indistinguishable from. Callers use their own artifact caches: the key is the same."""
    saved = dict(fusion._FUSED)
    fusion._FUSED.clear()
    try:
        yield
    finally:
        fusion._FUSED.update(saved)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_read_is_fused(name: str) -> None:
    """Each kernel compiles to fused reads only (else the other tests would prove nothing new)."""
    source = compile_plan(prepare(KERNELS[name][0]), keep_module=True).source()
    assert "_s_lrget(" in source, source
    # the only literals left to ``_s_text`` are the keys the kernel sets (``map.set``)
    assert source.count("_s_text(") == (2 if name == "built in the kernel" else 0), source
    assert "_s_lrhas(" in source, source


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_fused_reads_agree_at_every_fuel_budget(name: str) -> None:
    """From no fuel at all to one past what the run needs: the same value, error, failing charge and
    usage at exhaustion, on the lane and on the ordinary path."""
    source, entry, vectors = KERNELS[name]
    base = prepare(source)
    hosts = _hosts()
    for args in vectors:
        needed = hosts[0].execute(base, entry, args).usage.fuel_used
        low = 0 if needed < 400 else needed - 120  # the loop kernel at 40: its last reads and the tail
        for fuel in range(low, needed + 2):
            _agree(
                dataclasses.replace(base, policy=policy(max_fuel=fuel)),
                entry,
                args,
                hosts,
                f"{args} fuel {fuel}",
            )


_LIMIT_SWEEPS = {
    "max_string_length": range(0, 44),
    "max_total_string_bytes": range(0, 200, 3),
    "max_allocated_bytes": range(0, 260, 3),
    "max_map_entries": range(0, 7),
    "max_total_collection_elements": range(0, 12),
}


@pytest.mark.parametrize("limit", sorted(_LIMIT_SWEEPS))
@pytest.mark.parametrize("name", ["host event", "long literal", "built in the kernel"])
def test_fused_reads_agree_at_every_limit(name: str, limit: str) -> None:
    """A literal longer than ``maxStringLength``, text bytes and allocation at and around their
    budgets (a literal refused part way through a run), a host map over its entry limit."""
    source, entry, vectors = KERNELS[name]
    base = prepare(source)
    hosts = _hosts()
    for value in _LIMIT_SWEEPS[limit]:
        plan = dataclasses.replace(base, policy=policy(**{limit: value}))
        for args in vectors[:3]:
            _agree(plan, entry, args, hosts, f"{limit}={value} {args}")


def _deadline_checks(source: str, entry: str, args: list[Any], fast_lanes: bool) -> list[Any]:
    """The run's result and the fuel used at each read of its meter's clock (every deadline
    check), in order."""
    seen: list[int] = []
    original = meter_module.Meter.__init__

    def counting_init(self: meter_module.Meter, *given: Any, **named: Any) -> None:
        original(self, *given, **named)
        clock = self._clock

        def counting_clock() -> float:
            seen.append(self.fuel_used)
            return clock()

        self._clock = counting_clock

    host = SandboxHost(backends={"optimized": OptimizedBackend(cache=ArtifactCache())}, fast_lanes=fast_lanes)
    plan = prepare(source)
    for _ in range(2):
        host.execute(plan, entry, args, backend="optimized")  # compile, bind the lane
    meter_module.Meter.__init__ = counting_init  # type: ignore[method-assign]
    try:
        result = observe(host.execute(plan, entry, args, backend="optimized"))
    finally:
        meter_module.Meter.__init__ = original  # type: ignore[method-assign]
    return [result, seen]


@pytest.mark.parametrize("fast_lanes", [True, False])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_fused_reads_keep_the_deadline_cadence_of_the_unfused_stubs(name: str, fast_lanes: bool) -> None:
    """The deadline is read at the very charges the unfused code reads it at (a fused read never
    counts a fuel charge that lands on a check: it hands that read to the stubs, and the meter)."""
    source, entry, vectors = KERNELS[name]
    reads = 0
    for args in vectors:
        fused = _deadline_checks(source, entry, args, fast_lanes)
        with _unfused():
            unfused = _deadline_checks(source, entry, args, fast_lanes)
        assert fused == unfused, args
        reads += len(fused[1])
    if name == "past a deadline check":
        assert reads, "the kernel reaches a deadline check"


def test_the_unfused_compilation_is_really_unfused() -> None:
    with _unfused():
        source = compile_plan(prepare(EVENT), keep_module=True).source()
    assert "_s_lr" not in source and "_s_text(" in source


def test_a_cancelled_run_stops_where_the_reference_stops() -> None:
    plan = prepare(EVENT)
    host = SandboxHost(backends={"optimized": OptimizedBackend(cache=ArtifactCache())})
    for args in EVENTS:
        host.execute(plan, "check", args, backend="optimized")
        token = CancelToken()
        token.cancel()
        reference = observe(host.execute(plan, "check", args, cancel=token))
        optimized = observe(host.execute(plan, "check", args, backend="optimized", cancel=token))
        assert reference == optimized
        assert reference["error"] is not None and reference["error"][1] == "R-CANCELLED"


def test_a_deadline_already_past_stops_where_the_reference_stops() -> None:
    plan = dataclasses.replace(prepare(MANY), policy=policy(max_wall_time_ms=0))
    host = SandboxHost(backends={"optimized": OptimizedBackend(cache=ArtifactCache())})
    for args in MANY_EVENTS:
        reference = observe(host.execute(plan, "check", args))
        optimized = observe(host.execute(plan, "check", args, backend="optimized"))
        assert reference["error"] is not None and reference["error"][1] == "R-TIMEOUT"
        assert reference == optimized


# --- the verifier: rule 23 (``verify_literal_reads``) -------------------------------------------

_GENERATED = Tampering(EVENT)

READ_TAMPERINGS = {
    "an argument dropped": ("_s_lrhas(R, f, lr, 1, 0, 2, v0)", "_s_lrhas(R, f, lr, 1, 0, v0)"),
    "an argument added": ("_s_lrhas(R, f, lr, 1, 0, 2, v0)", "_s_lrhas(R, f, lr, 1, 0, 2, v0, v0)"),
    "another literal": ("_s_lrhas(R, f, lr, 1, 0, 2, v0)", "_s_lrhas(R, f, lr, 1, 2, 2, v0)"),
    "a literal past the table": ("_s_lrhas(R, f, lr, 1, 0, 2, v0)", "_s_lrhas(R, f, lr, 1, 9, 2, v0)"),
    "a site past the table": ("_s_lrhas(R, f, lr, 1, 0, 2, v0)", "_s_lrhas(R, f, lr, 1, 0, 99, v0)"),
    "the literal's segment skipped": ("_s_lrhas(R, f, lr, 1, 0, 2, v0)", "_s_lrhas(R, f, lr, 0, 0, 2, v0)"),
    "the read's site is the literal's": (
        "_s_lrhas(R, f, lr, 1, 0, 2, v0)",
        "_s_lrhas(R, f, lr, 1, 0, 1, v0)",
    ),
    "another read's site": ("_s_lrhas(R, f, lr, 1, 0, 2, v0)", "_s_lrhas(R, f, lr, 1, 0, 4, v0)"),
    "a paid site as the read's": ("_s_lrhas(R, f, lr, 1, 0, 2, v0)", "_s_lrhas(R, f, lr, 1, 0, 3, v0)"),
    "a segment as the literal's": ("_s_lrhas(R, f, lr, 1, 0, 2, v0)", "_s_lrhas(R, f, lr, 2, 0, 2, v0)"),
    "a site read from a slot": ("_s_lrhas(R, f, lr, 1, 0, 2, v0)", "_s_lrhas(R, f, lr, v0, 0, 2, v0)"),
    "get for containsKey": ("_s_lrhas(R, f, lr, 1, 0, 2, v0)", "_s_lrget(R, f, lr, 1, 0, 2, v0)"),
    "containsKey for get": ("_s_lrget(R, f, lr, 3, 1, 4, v0)", "_s_lrhas(R, f, lr, 3, 1, 4, v0)"),
    "a refund added": ("_s_lrhas(R, f, lr, 1, 0, 2, v0)", "_s_lrhas(R, f, lr + 1, 1, 0, 2, v0)"),
    "the state not first": ("_s_lrhas(R, f, lr, 1, 0, 2, v0)", "_s_lrhas(v0, f, lr, 1, 0, 2, R)"),
    "used as a value": ("t0, f = _s_lrhas(R, f, lr, 1, 0, 2, v0)", "t0, f = (_s_lrhas, f)"),
}


def test_the_generated_event_module_has_the_forms_tampered_below() -> None:
    source = _GENERATED.source()
    assert "_s_lrhas(R, f, lr, 1, 0, 2, v0)" in source and "_s_lrget(R, f, lr, 3, 1, 4, v0)" in source, source


def test_the_untampered_literal_read_module_passes_as_generated_and_as_source() -> None:
    _GENERATED.bind()
    _GENERATED.bind(ast.parse(_GENERATED.source()))  # the tamperings below start from this


@pytest.mark.parametrize("name", sorted(READ_TAMPERINGS))
def test_a_tampered_literal_read_is_rejected(name: str) -> None:
    _GENERATED.assert_rejected(*READ_TAMPERINGS[name])


def _bind_with_tables(edit: Any) -> None:
    generated = _GENERATED.generated
    tables = copy.deepcopy(generated.tables)
    edit(tables)
    bind(_GENERATED.plan, _GENERATED.key, copy.deepcopy(generated.module), tables, generated.ir_nodes)


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda t: t.texts.__setitem__(0, ("path", t.texts[0][1], None)), id="key not a string"),
        pytest.param(lambda t: t.texts.__setitem__(0, ("string", "level", None)), id="key not the call's"),
        pytest.param(lambda t: t.site_nodes.pop(2), id="read site not located"),
        pytest.param(
            lambda t: t.site_nodes.__setitem__(2, t.site_nodes[4]), id="read located at another call"
        ),
        pytest.param(lambda t: t.site_nodes.__setitem__(2, 0), id="read located at another operation"),
        pytest.param(
            lambda t: t.sites.__setitem__(1, ("charges", (1, 1, 3))), id="literal segment not ending so"
        ),
        pytest.param(lambda t: t.sites.__setitem__(2, ("charges", (1,))), id="read segment not empty"),
    ],
)
def test_tampered_tables_of_a_literal_read_are_rejected(edit: Any) -> None:
    with pytest.raises(VerifierFailure, match="literal read"):
        _bind_with_tables(edit)
