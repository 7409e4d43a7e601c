"""What every work tick (``_s_tick``) of a generated module must be, derived from the plan alone.

Why: ``_s_tick(R, f, lr, nodes, heavy)`` counts the real work done since the last deadline check
and checks the deadline (and cancellation) once ``work.CHUNK_WORK`` units have gone by. It stands
at the entry of every function that makes real calls or runs text operations
(``work.WorkCounter.entry``) and after the iteration charge of every loop run iteration by
iteration whose own body is heavy (``WorkCounter.iteration``). Understated numbers, or a tick
left out, would not skip a charge (fuel and iterations are metered elsewhere) but would let a run
go on long past its deadline, or ignore a cancellation, between two checks. So the verifier
recomputes every tick from the plan - never reading the module's numbers - and matches them, in
order, against the ticks it finds, each at the one place the generator puts it:

* the entry tick is the first statement of its function;
* an iteration tick is the statement right after ``f = _s_liter(R, f, lr)`` in its loop's body;
* in both, the run state, the fuel and ``lr`` are passed as they are, then the plan's numbers.

The order is the plan's: the entry tick first, then the loops of the function in ``walk_loops``
order (source order, dead statements skipped), each one that runs iteration by iteration (not a
bulk leaf loop, ``reservations``) and is heavy. The cold module (one exact iteration of a bulk leaf
loop) holds no tick.
"""

from __future__ import annotations

from dotboxd.validator.plan import ExecutionPlan

from .facts import PlanFacts, walk_loops
from .tables import Tables, function_name
from .work import WorkCounter

Tick = tuple[int, int]
"""``(nodes, heavy)`` of one tick."""


def expected_ticks(
    plan: ExecutionPlan, tables: Tables, facts: PlanFacts | None
) -> dict[str, tuple[Tick, ...]]:
    """Generated function name -> the ticks its body must hold, in order (``facts``: the plan's loop
    facts when loops run in bulk, None when every loop runs iteration by iteration)."""
    # the verifier's own analyze (``reservations.plan_facts``) counted the plan already
    work = facts.work if facts is not None and facts.work is not None else WorkCounter(plan)
    out: dict[str, tuple[Tick, ...]] = {}
    for index, fid in enumerate(tables.functions):
        info = plan.functions.get(fid)
        found: list[Tick] = []
        if info is not None:
            entry = work.entry(fid)
            if entry is not None:
                found.append(entry)
            for loop in walk_loops(plan, info.function.body):
                if facts is not None and facts.loops[id(loop)].leaf:
                    continue  # a bulk chunk: its reservation checks the deadline
                tick = work.iteration(loop)
                if tick is not None:
                    found.append(tick)
        out[function_name(index)] = tuple(found)
    return out


__all__ = ["Tick", "expected_ticks"]
