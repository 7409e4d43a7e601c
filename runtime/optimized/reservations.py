"""What every bulk reservation of a generated module must be, derived from the plan alone.

Why: a bulk loop's ``n = _s_cap(R, f, d, lr, start, stop, worst, need, work, heavy)`` (or
``_s_capm`` with the counters' room) is the only place its iterations are charged, its fuel is
reserved (fast chunks) and the deadline is checked. A verifier that only checks the call's name
and argument count would accept a module that passes ``worst=0`` for a fast body (its fuel never
reserved), ``need=0`` for inlined calls (frames never checked), a tiny ``work`` (the deadline
checked once per huge chunk) or an ``lr`` that refunds loop iterations it never charged. So the
verifier derives each reservation from the plan - the same ``facts.analyze`` numbers the generator
uses, recomputed here from the plan and the generation options, never read from the module - and
matches them, in order, against the reservations it finds.

The order: a bulk loop is a leaf loop (``facts.LoopFacts.leaf``), so it holds no loop and calls no
function that has one, and inlined callees hold no loops either; each reservation of ``_fn<i>``
therefore belongs to exactly one loop of that function, and the generator emits them in
``facts.walk_loops`` order (source order, dead statements skipped). Cold paths (``_x<i>``) are one
exact iteration of a leaf loop and hold no reservation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dotboxd.core import ast as ir
from dotboxd.validator.plan import ExecutionPlan

from .codegen import _INLINE_BUILTINS
from .counter_rooms import LoopCounters, loop_counters
from .facts import PlanFacts, analyze, walk_loops
from .owned import owned_list
from .tables import Tables, function_name


@dataclass(frozen=True, slots=True)
class Reservation:
    """One bulk loop's reservation, as the plan determines it."""

    bounded: bool
    """A forRange (``while k < stop:``, ``start``/``stop`` from the test) rather than a while loop
    (``while True:``, ``start`` 0 and ``stop`` None)."""
    constants: tuple[int, int, int, int]
    """``(worst, need, work, heavy)``: worst and need are 0 unless the loop is fast."""
    counters: LoopCounters = field(default_factory=LoopCounters)
    """The body's counters, which a ``_s_capm`` room must cap (``counter_rooms``)."""
    owned: bool = False
    """Whether the plan proves a list owned by this loop (``owned.owned_list``; checked chunks only),
    so that its buffer may be taken before the loop (``ownership``)."""


def generation_flags(options_key: str) -> tuple[bool, bool]:
    """``(bulk_loops, inline)`` from an artifact key's options (``GenOptions.key``); a flag the key
    does not name has its default (on), the value ``GenOptions()`` gives it."""
    flags = dict(part.split("=", 1) for part in options_key.split(";") if "=" in part)
    return flags.get("bulk", "1") != "0", flags.get("inline", "1") != "0"


def proofs_flag(options_key: str) -> bool:
    """Whether the artifact key's options (``GenOptions.key``) have the generator drop the checks
    the prover proved unneeded (off unless the key names it)."""
    flags = dict(part.split("=", 1) for part in options_key.split(";") if "=" in part)
    return flags.get("proofs", "0") == "1"


def plan_facts(plan: ExecutionPlan, options_key: str) -> PlanFacts | None:
    """The loop facts the generator used (``facts.analyze``), None when loops do not run in bulk."""
    bulk, inline = generation_flags(options_key)
    return analyze(plan, inline=inline) if bulk else None


def expected_reservations(
    plan: ExecutionPlan, tables: Tables, options_key: str, facts: PlanFacts | None = None
) -> dict[str, tuple[Reservation, ...]]:
    """Generated function name -> the reservations its body must hold, in order (``facts``:
    ``plan_facts``, when the caller has them already)."""
    out: dict[str, tuple[Reservation, ...]] = {}
    if facts is None:
        facts = plan_facts(plan, options_key)
    if facts is None:
        return {function_name(i): () for i in range(len(tables.functions))}
    for index, fid in enumerate(tables.functions):
        info = plan.functions.get(fid)
        found: list[Reservation] = []
        if info is not None:
            for loop in walk_loops(plan, info.function.body):
                loop_facts = facts.loops[id(loop)]
                if not loop_facts.leaf:
                    continue
                fast = loop_facts.fast
                found.append(
                    Reservation(
                        bounded=isinstance(loop, ir.ForRange),
                        constants=(
                            loop_facts.worst if fast else 0,
                            loop_facts.need_depth if fast else 0,
                            loop_facts.work,
                            loop_facts.heavy,
                        ),
                        counters=loop_counters(plan, loop),
                        owned=not fast and owned_list(plan, info, loop, _INLINE_BUILTINS) is not None,
                    )
                )
        out[function_name(index)] = tuple(found)
    return out


__all__ = ["Reservation", "expected_reservations", "generation_flags", "plan_facts", "proofs_flag"]
