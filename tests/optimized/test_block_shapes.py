"""Iteration blocks (rule 24, spec/optimized.md 4.2.8) in shapes the block fuzz does not make
(review6, issue 16), each against the reference interpreter.

Why: ``block_programs`` puts every block in the entrypoint, enters its inner loop with a start that
ends it in a few steps, and stops its loops where a fault or a counter falls. What a pool must keep
exact also depends on *where* the block stands and *when* its loops stop: a block in a private
function called once per iteration of an outer loop (each call opens and gives back its own pool),
an outer ``continue`` before and after the inner loop, an inner or outer ``break`` at the
iteration where a pool runs out (2,048), outer ranges of 0, 1 and 2,049 iterations, loop budgets at
a pool's last iteration and at its refill, and a fake clock or cancel token turning at every read.
Review6 found no disagreement here; these pin it.
"""

from __future__ import annotations

import dataclasses

import pytest

from dotboxd.host import SandboxHost
from dotboxd.runtime.optimized import compile_plan
from dotboxd.runtime.optimized.block_stubs import POOL
from dotboxd.validator.plan import ExecutionPlan

from .cadence_fuzz import STOPS, faked
from .differential import backend, observe
from .kernels import policy, prepare
from .test_blocks import BLOCKS, _agree

_STEP = "if x % 2 == 0 { x = x / 2; } else { x = 3 * x + 1; }"

SHAPES = {
    "a block in a function called from a loop": f"""module "a" version "1.0.0";
fn walk(n I32) -> I32 {{ total = 0; for s in 1 .. n {{ x = s; while x > 1 {{ {_STEP} total = total + 1; }} }} return total; }}
entrypoint fn main(n I32, m I32) -> I32 {{ t = 0; for r in 0 .. m {{ t = t + walk(n + r); }} return t; }}""",
    "a faulting block in a function called from a loop": f"""module "a" version "1.0.0";
fn walk(n I32, d I32) -> I32 {{ total = 0; for s in 1 .. n {{ q = 100 / (s - d); x = s; while x > 1 {{ {_STEP} total = total + 1; }} }} return total; }}
entrypoint fn main(n I32, m I32) -> I32 {{ t = 0; for r in 0 .. m {{ t = t + walk(n, m - r); }} return t; }}""",
    "outer continues": f"""module "a" version "1.0.0";
entrypoint fn main(n I32, m I32) -> I32 {{ total = 0; for s in 0 .. n {{ if s % 3 == m {{ continue; }} x = s; while x > 1 {{ {_STEP} total = total + 1; }} if s % 5 == 1 {{ continue; }} total = total + 2; }} return total; }}""",
    "an inner break at a count": f"""module "a" version "1.0.0";
entrypoint fn main(n I32, m I32) -> I32 {{ total = 0; for s in 0 .. n {{ x = s + 2; while x > 1 {{ if total == m {{ break; }} {_STEP} total = total + 1; }} }} return total; }}""",
    "an outer break at a count": f"""module "a" version "1.0.0";
entrypoint fn main(n I32, m I32) -> I32 {{ total = 0; for s in 0 .. n {{ x = s + 2; while x > 1 {{ {_STEP} total = total + 1; }} if total >= m {{ break; }} }} return total; }}""",
    "a short inner loop": """module "a" version "1.0.0";
entrypoint fn main(n I32, m I32) -> I32 { total = 0; for s in 0 .. n { x = m; while x > 1 { x = x / 2; total = total + 1; } total = total + 1; } return total; }""",
}

CASES: list[tuple[str, list[int]]] = [
    ("a block in a function called from a loop", [9, 3]),
    ("a faulting block in a function called from a loop", [9, 4]),
    ("outer continues", [40, 1]),
    ("an inner break at a count", [300, POOL - 1]),
    ("an inner break at a count", [300, POOL]),
    ("an outer break at a count", [300, POOL]),
    ("a short inner loop", [0, 9]),
    ("a short inner loop", [1, 9]),
    ("a short inner loop", [POOL + 1, 3]),
    ("a short inner loop", [POOL + 1, 1]),
]
_IDS = [f"{name} {args}" for name, args in CASES]


def _base(name: str) -> ExecutionPlan:
    plan = prepare(SHAPES[name], policy(max_loop_iterations=10**6, max_fuel=10**9))
    assert "_s_bkit(" in compile_plan(plan, BLOCKS, keep_module=True).source(), "not a block loop"
    return plan


def _budgets(needed: int, every: bool, pools: bool) -> list[int]:
    """Every budget up to 300 and the last 40 before ``needed`` (``every``), else a handful around
    it; with ``pools``, a pool's last iteration and its refill."""
    chosen = {*range(0, min(needed, 300) + 2), *range(max(0, needed - 40), needed + 2)} if every else set()
    chosen |= {0, 1, needed // 2, needed - 1, needed, needed + 1}
    if pools:
        chosen |= {POOL - 1, POOL, POOL + 1, 2 * POOL - 1, 2 * POOL, 2 * POOL + 1}
    return sorted(b for b in chosen if b >= 0)


def _sweep(name: str, args: list[int], every: bool) -> None:
    base = _base(name)
    host = SandboxHost(backends={"optimized": backend(BLOCKS)})
    usage = _agree(host, base, args)["usage"]
    for limit, counter in (("max_loop_iterations", "loopIterations"), ("max_fuel", "fuelUsed")):
        for budget in _budgets(usage[counter], every, limit == "max_loop_iterations"):
            limits = {"max_loop_iterations": 10**6, "max_fuel": 10**9, limit: budget}
            _agree(host, dataclasses.replace(base, policy=policy(**limits)), args)


@pytest.mark.parametrize(("name", "args"), CASES[:4], ids=_IDS[:4])
def test_block_shapes_agree_at_a_few_budgets(name: str, args: list[int]) -> None:
    _sweep(name, args, every=False)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "args"), CASES, ids=_IDS)
def test_block_shapes_agree_at_every_budget(name: str, args: list[int]) -> None:
    _sweep(name, args, every=True)


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(STOPS))
@pytest.mark.parametrize(("name", "args"), CASES, ids=_IDS)
def test_block_shapes_stop_at_every_clock_and_cancel_read(kind: str, name: str, args: list[int]) -> None:
    """The clock or token turning at each read of the optimized run: that stop's code, never more
    usage than the whole run's; past the last read, the whole run."""
    plan = _base(name)
    host = SandboxHost(backends={"optimized": backend(BLOCKS)})
    whole = observe(host.execute(plan, "main", list(args)))
    host.execute(plan, "main", list(args), backend="optimized")
    with faked(kind, 0) as counting:
        assert observe(host.execute(plan, "main", list(args), backend="optimized")) == whole
    for at in range(1, counting.reads + 2):
        with faked(kind, at):
            seen = observe(host.execute(plan, "main", list(args), backend="optimized"))
        if at > counting.reads:
            assert seen == whole
            continue
        assert seen["error"] is not None and seen["error"][1] == STOPS[kind], (at, seen["error"])
        over = {k: v for k, v in seen["usage"].items() if isinstance(v, int) and v > whole["usage"][k]}
        assert not over, (at, over)
