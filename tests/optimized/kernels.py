"""Kernels and plans shared by the optimized-backend tests."""

from __future__ import annotations

from collections.abc import Iterable

from dotboxd.core.bindings import AuditLevel, BindingDescriptor, Cost, host_binding
from dotboxd.core.effects import Effect
from dotboxd.host import Int32, SandboxHost
from dotboxd.validator.plan import ExecutionPlan
from dotboxd.validator.policy import Policy


@host_binding(id="test.double", cost=Cost(base_fuel=3), effects=Effect.CPU)
def double(x: Int32) -> Int32:
    return x * 2


@host_binding(
    id="test.world.poke",
    cost=Cost(base_fuel=1),
    effects=Effect.CPU | Effect.HOST_STATE_WRITE,
    capability="test.world.write",
    audit=AuditLevel.SUMMARY,
)
def poke(x: Int32) -> Int32:
    return x


FEATURES = """module "features" version "1.0.0";
fn sq(x I32) -> I32 { return x * x + 1; }
fn sign(x I32) -> I32 { if x < 0 { return -1; } if x == 0 { return 0; } return 1; }
entrypoint fn main(n I32, names List<String>) -> I32 {
    acc = 0;
    for i in 0 .. n {
        if i % 3 == 0 { acc = acc + sq(i) % 97; } else { acc = acc - sign(i - 5); }
        if acc > 100000 { break; }
    }
    k = n;
    while k > 0 && acc < 50000 {
        k = k - 1;
        if k % 7 == 3 { continue; }
        acc = acc + test.double(k) % 5;
    }
    label = "seen";
    g = guid"0f8fad5b-d9cb-469f-a165-70867728950e";
    if g == guid"0f8fad5b-d9cb-469f-a165-70867728950e" {
        acc = acc + string.length(label);
    }
    for j in 0 .. list.count(names) {
        acc = acc + string.length(list.get(names, j));
    }
    r = 0;
    while r < 2 {
        r = r + 1;
        for q in 0 .. r { acc = acc + q; }
    }
    for p in 0 .. 2 {
        for q in 0 .. p { acc = acc + 1; }
    }
    return acc;
}
"""

LOOPS_AND_FAULTS = """module "loops" version "1.0.0";
fn pick(a I32, b I32) -> I32 { if a > b { return a / (b - 3); } return b % (a + 1); }
entrypoint fn main(n I32, d I32) -> I32 {
    acc = 1;
    for i in 0 .. n {
        acc = (acc * 3 + i) % 1000;
        if i == d { acc = acc + pick(i, d); }
        if acc % 11 == 4 { continue; }
        acc = acc - 2;
    }
    j = 0;
    while j < n || acc < 0 {
        j = j + 1;
        if j > 2 * n { break; }
        acc = acc + 7 / (j - d);
    }
    return acc + 100 / (n - 4);
}
"""


def policy(**limits: int) -> Policy:
    limits.setdefault("max_wall_time_ms", 60_000)
    return Policy.builder().with_limits(**limits).build()


def prepare(
    text: str, pol: Policy | None = None, bindings: Iterable[BindingDescriptor] = (double,)
) -> ExecutionPlan:
    host = SandboxHost(bindings=list(bindings))
    return host.prepare(text, pol if pol is not None else policy())
