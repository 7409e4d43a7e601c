"""Pass 6, call graph: no function can call itself, directly or through others; reachability.

Invariants established:

* the graph of module-function calls is acyclic (E-CALL-RECURSION, one diagnostic per strongly
  connected component, with one concrete cycle such as ``a -> b -> a`` as evidence). Calls in dead
  code count too: a cycle is rejected even if no run could take it, so the rule stays syntactic;
* every function's reachability from the entrypoints over *live* calls is known, with the shortest
  call path from an entrypoint (evidence for capability diagnostics).

Both walks are iterative, so a long call chain cannot exhaust the Python stack.
"""

from __future__ import annotations

from collections import deque

from .context import Context


def run(ctx: Context) -> None:
    order = list(ctx.functions)
    edges = {fid: [c for c in ctx.facts[fid].all_callees if c in ctx.functions] for fid in order}
    for component in _strongly_connected(order, edges):
        cyclic = len(component) > 1 or component[0] in edges[component[0]]
        if cyclic:
            _report_cycle(ctx, component, edges)
    if not ctx.diagnostics:
        _reachability(ctx)


def _strongly_connected(order: list[str], edges: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively; components come out in a deterministic order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    result: list[list[str]] = []
    counter = 0
    for root in order:
        if root in index:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            succs = edges[node]
            if child < len(succs):
                work.append((node, child + 1))
                nxt = succs[child]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                result.append(sorted(component, key=order.index))
    return result


def _report_cycle(ctx: Context, component: list[str], edges: dict[str, list[str]]) -> None:
    members = set(component)
    start = component[0]
    # Shortest cycle through ``start`` inside the component (BFS back to start).
    parents: dict[str, str] = {}
    queue = deque([start])
    found = False
    while queue and not found:
        node = queue.popleft()
        for nxt in edges[node]:
            if nxt not in members:
                continue
            if nxt == start:
                parents[start] = node
                found = True
                break
            if nxt not in parents:
                parents[nxt] = node
                queue.append(nxt)
    cycle = [start]
    node = parents[start]
    while node != start:
        cycle.append(node)
        node = parents[node]
    cycle.append(start)
    cycle = [cycle[0], *reversed(cycle[1:-1]), start] if len(cycle) > 2 else cycle
    first_call = ctx.facts[cycle[0]].all_callees[cycle[1]]
    shown = " -> ".join(cycle)
    ctx.report(
        "E-CALL-RECURSION",
        f"recursion: {shown}",
        first_call.pointer,
        first_call.span,
        "rewrite the recursion as a loop; kernels may not recurse, directly or mutually",
        cycle=cycle,
    )


def _reachability(ctx: Context) -> None:
    queue: deque[str] = deque()
    for entry in ctx.entrypoints:
        ctx.reachable[entry] = (entry,)
        queue.append(entry)
    while queue:
        fid = queue.popleft()
        path = ctx.reachable[fid]
        for callee in ctx.facts[fid].live_callees:
            if callee not in ctx.reachable:
                ctx.reachable[callee] = (*path, callee)
                queue.append(callee)
