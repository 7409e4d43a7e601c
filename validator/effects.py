"""Pass 8, effects: every function's total effects, from what its live code can reach.

Invariants established (spec/validation.md section 9):

* every function has Cpu; Alloc comes from text literals (string, path, uri, opaque id) and from the
  allocating built-ins (``list.empty/of/add``, ``map.empty/set/remove``, ``record.new``, string
  building); a host binding adds its declared effects plus Concurrency when it is async;
* a function's total is its direct effects plus the totals of the module functions its live code
  calls (the call graph is acyclic, so a post-order walk computes it exactly once per function);
* dead statements add nothing: they can never run.

The direct effects were gathered by the type pass, which knows what each call resolves to.
"""

from __future__ import annotations

from dotboxd.core.effects import Effect

from .context import Context


def run(ctx: Context) -> None:
    done: dict[str, Effect] = {}
    for root in ctx.functions:
        if root in done:
            continue
        work: list[tuple[str, bool]] = [(root, False)]
        while work:
            fid, expanded = work.pop()
            if fid in done:
                continue
            facts = ctx.facts[fid]
            if not expanded:
                work.append((fid, True))
                work.extend((c, False) for c in facts.live_callees if c not in done)
                continue
            total = facts.direct_effects | Effect.CPU
            for callee in facts.live_callees:
                total |= done[callee]
            facts.effects = total
            done[fid] = total
