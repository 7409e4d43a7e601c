"""Loops: trip counts, loop-head invariants, ranking functions for ``while``, per-iteration cost.

``forRange`` terminates by construction and runs ``max(0, end - start)`` times. A ``while`` loop
is accepted as terminating only with a *linear ranking function* ``r`` read off its guard (``i < n``
gives ``n - i``, ``x > 0`` gives ``x``...): Z3 must show, quantifier-free, that whenever the guard
holds ``r >= 1`` and one iteration (any path to its end or to ``continue``) lowers ``r`` by at
least 1. Then the loop runs at most ``max(0, r(entry))`` times.

The body is analysed twice (see ``analyzer.py``): the probe pass gives each modified local's
change per iteration as an interval ``[dlo, dhi]`` over the inputs, hence the invariant
``entry + k*[min(dlo,0), max(dhi,0)]`` after ``k <= min(N, quota)`` iterations (``intervals.widen``;
the iteration quota keeps it finite even for loops not shown to terminate); the final pass, with
the locals as atoms constrained by that invariant, gives the per-iteration cost, which is then
freed of the loop's atoms and multiplied by the trip count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from dotboxd.core import ast, costs
from dotboxd.core.types import I32, SandboxType

from . import intervals
from .domain import INT_RANGES, ABool, AInt, AList, AMap, AText, AVal
from .interface import AnalyzerView as Analyzer
from .phases import bool_phase_ranking
from .report import LoopFact, Verdict
from .state import LOOPS, Flow, State, Upper, add_lower, add_upper, join_lower, join_upper
from .sums import arithmetic_sum, const_step
from .sym import ONE, ZERO, Cond, Poly, Sym, const
from .unroll import unroll

Elim = dict[int, tuple[Poly, Poly]]


# --- syntax helpers ------------------------------------------------------------------------------


def assigned_names(body: Iterable[ast.Stmt]) -> set[str]:
    """Every local assigned anywhere in ``body`` (nested blocks included)."""
    out: set[str] = set()
    stack = list(body)
    while stack:
        s = stack.pop()
        if isinstance(s, ast.Set):
            out.add(s.name)
        elif isinstance(s, ast.If):
            stack.extend(s.then)
            stack.extend(s.else_)
        elif isinstance(s, ast.While):
            stack.extend(s.body)
        elif isinstance(s, ast.ForRange):
            out.add(s.local)
            stack.extend(s.body)
    return out


def read_names(e: ast.Expr) -> list[str]:
    out: list[str] = []
    stack: list[ast.Expr] = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, ast.Var):
            if x.name not in out:
                out.append(x.name)
        elif isinstance(x, ast.Unary):
            stack.append(x.operand)
        elif isinstance(x, ast.Binary):
            stack.extend((x.right, x.left))
        elif isinstance(x, ast.Call):
            stack.extend(reversed(x.args))
    return out


def guard_comparisons(e: ast.Expr) -> list[tuple[ast.Expr, ast.Expr, bool]]:
    """The comparisons in conjunctive position of a guard (each must hold for the body to run), as
    ``(small, big, strict)`` meaning ``small < big`` (strict) or ``small <= big``; a ``math.min`` on
    the big side or a ``math.max`` on the small side contributes one comparison per argument."""
    if isinstance(e, ast.Binary) and e.op is ast.BinaryOp.AND:
        return guard_comparisons(e.left) + guard_comparisons(e.right)
    if not isinstance(e, ast.Binary):
        return []
    if e.op in (ast.BinaryOp.LT, ast.BinaryOp.LTE):
        small, big = e.left, e.right
    elif e.op in (ast.BinaryOp.GT, ast.BinaryOp.GTE):
        small, big = e.right, e.left
    else:
        return []
    strict = e.op in (ast.BinaryOp.LT, ast.BinaryOp.GT)
    out = [(small, big, strict)]
    if isinstance(big, ast.Call) and big.name == "math.min":
        out.extend((small, arg, strict) for arg in big.args)
    if isinstance(small, ast.Call) and small.name == "math.max":
        out.extend((arg, big, strict) for arg in small.args)
    return out


def _always_leaves(block: tuple[ast.Stmt, ...]) -> bool:
    """``block`` ends in ``break`` or ``return`` and has no ``continue`` anywhere: every path
    through it that finishes leaves the loop (no path goes on to the next iteration)."""
    if not block or not isinstance(block[-1], ast.Break | ast.Return):
        return False
    stack: list[ast.Stmt] = list(block)
    while stack:
        st = stack.pop()
        if isinstance(st, ast.Continue):
            return False
        if isinstance(st, ast.If):
            stack.extend((*st.then, *st.else_))
        elif isinstance(st, ast.While | ast.ForRange):
            stack.extend(st.body)
    return True


def _negated_comparisons(e: ast.Expr) -> list[tuple[ast.Expr, ast.Expr, bool]]:
    """The comparisons that hold when ``e`` is false, as :func:`guard_comparisons` gives them."""
    if isinstance(e, ast.Binary) and e.op is ast.BinaryOp.OR:
        return _negated_comparisons(e.left) + _negated_comparisons(e.right)
    if isinstance(e, ast.Unary) and e.op is ast.UnaryOp.NOT:
        return guard_comparisons(e.operand)
    if not isinstance(e, ast.Binary):
        return []
    flips = {
        ast.BinaryOp.GTE: (e.left, e.right, True),  # not (a >= b): a < b
        ast.BinaryOp.GT: (e.left, e.right, False),  # not (a > b): a <= b
        ast.BinaryOp.LTE: (e.right, e.left, True),  # not (a <= b): b < a
        ast.BinaryOp.LT: (e.right, e.left, False),  # not (a < b): b <= a
    }
    return [flips[e.op]] if e.op in flips else []


def exit_comparisons(body: tuple[ast.Stmt, ...]) -> list[tuple[ast.Expr, ast.Expr, bool]]:
    """Comparisons every iteration that goes on to the next one has passed, read at the loop head:
    the negated conditions of the leading ``if C { ...; break }`` (or ``return``) statements of the
    body. Leading means nothing before them changes a local, so ``C`` sees the loop-head values;
    this is how ``while true { if i >= n { break; } ... }`` gets the ranking function ``n - i``."""
    out: list[tuple[ast.Expr, ast.Expr, bool]] = []
    for st in body:
        if not (isinstance(st, ast.If) and not st.else_ and _always_leaves(st.then)):
            break
        out.extend(_negated_comparisons(st.condition))
    return out


# --- facets ------------------------------------------------------------------------------------


@dataclass
class Tracked:
    """A local modified by the loop: its entry value, probe atom, delta, invariant."""

    name: str
    type: SandboxType
    entry: AVal
    probe: AVal
    atom: int | None = None  # the probe atom of its numeric facet (int value, size, length)
    batoms: list[int] = field(default_factory=list)
    delta: tuple[Poly, Poly] | None = None
    post: tuple[Poly, Poly] | None = None  # joined end-of-iteration facet, over probe atoms
    kept: tuple[Poly | None, Poly | None] = (None, None)  # inductive bounds (lower, upper) kept


def facet(v: AVal) -> tuple[Poly, Poly] | None:
    if isinstance(v, AInt | AText | AList | AMap):
        return v.lo, v.hi
    return None


def with_facet(v: AVal, lo: Poly, hi: Poly) -> AVal:
    if isinstance(v, AInt):
        return AInt(lo, hi, v.type)
    if isinstance(v, AText):
        return AText(lo, hi)
    if isinstance(v, AList):
        return AList(lo, hi, v.elem)
    if isinstance(v, AMap):
        return AMap(lo, hi, v.key, v.value)
    return v


def cap_range(an: Analyzer, v: AVal, t: SandboxType) -> tuple[int, int]:
    if isinstance(v, AInt):
        return INT_RANGES[v.type]
    if isinstance(v, AText):
        return 0, an.dom.q.string_length
    return 0, an.dom.size_cap(t)


def _fresh(
    an: Analyzer, v: AVal, t: SandboxType, label: str, lo: int, hi: int, name: str = ""
) -> tuple[AVal, int | None]:
    """A copy of ``v`` whose numeric facet is a fresh atom in [lo, hi] (other parts unchanged);
    ``name`` is how bounds print it (``|xs|`` for a collection size, ``len(s)`` for a text)."""
    if facet(v) is None:
        return v, None
    a = an.sym.atom(label, lo, hi)
    fid = an.sym.atom_id(a)
    assert fid is not None
    if name:
        if isinstance(v, AList | AMap):
            name = f"|{name}|"
        elif isinstance(v, AText):
            name = f"len({name})"
        an.namer.names[fid] = name
    return with_facet(v, a, a), fid


# --- the loop ----------------------------------------------------------------------------------


def analyze_loop(an: Analyzer, node: ast.While | ast.ForRange, st: State) -> Flow:
    s = an.sym
    isinstance(node, ast.ForRange)
    start = end = None
    if isinstance(node, ast.ForRange):
        start = _as_int(an.eval(node.start, st))
        end = _as_int(an.eval(node.end, st))
        n_check = intervals.range_count(s, start.lo, end.hi)
        if s.range(n_check)[1] <= 0:  # provably no iteration
            an.loop_facts.append(
                LoopFact(an.function, node.pointer, "forRange", Verdict.PROVED, "structural", "0")
            ) if not an.probe else None
            return Flow(st)
    span: tuple[int, int] | None = None
    s_exact, e_exact = (start.exact, end.exact) if start is not None and end is not None else (None, None)
    if s_exact is not None and e_exact is not None and s_exact.is_const and e_exact.is_const:
        span = (s_exact.const, e_exact.const)
    if isinstance(node, ast.While) or span is not None:
        unrolled = unroll(an, node, st, span)
        if unrolled is not None:
            return unrolled
    names = assigned_names(node.body)
    an.fresh_tag()
    quota = an.dom.q.iterations

    # loop constants read by a while guard get atoms, so the guard stays an exact condition
    snap_elim: Elim = {}
    snaps: dict[str, AVal] = {}
    if isinstance(node, ast.While):
        for name in read_names(node.condition):
            v = st.vars.get(name)
            if v is None or name in names:
                continue
            fv = facet(v)
            if fv is None or fv[0] == fv[1]:
                continue
            t = an.local_type_at(node, name) or I32
            clo, chi = cap_range(an, v, t)
            lo = max(clo, s.range(fv[0])[0])
            hi = min(chi, s.range(fv[1])[1])
            nv, fid = _fresh(an, v, t, f"{name} (loop constant)", lo, max(lo, hi), name)
            if fid is None:
                continue
            an.facts[fid] = [s.le(fv[0], _atom(fid)), s.le(_atom(fid), fv[1])]
            snap_elim[fid] = fv
            snaps[name] = nv

    local_elim: Elim = {}
    local_value: AVal | None = None
    if isinstance(node, ast.ForRange):
        assert start is not None and end is not None
        last = s.add_const(end.hi, -1)
        lo_c = max(s.range(start.lo)[0], INT_RANGES[I32][0])
        hi_c = min(s.range(last)[1], INT_RANGES[I32][1])
        i = s.atom(f"{node.local} (loop counter)", lo_c, max(lo_c, hi_c))
        fid = s.atom_id(i)
        assert fid is not None
        an.namer.names[fid] = node.local
        an.facts[fid] = [s.le(start.lo, i), s.le(i, last)]
        local_elim[fid] = (start.lo, last)
        local_value = AInt(i, i, I32)

    # ---- pass 1: probe ------------------------------------------------------------------------
    tracked: list[Tracked] = []
    with an.probing():
        p = st.copy()
        p.record = False
        for name in [n for n in st.vars if n in names]:
            entry = st.vars[name]
            t = an.local_type_at(node, name) or I32
            probe_value, atoms = _probe_value(an, entry, t, f"{name} (loop head)")
            tr = Tracked(name, t, entry, probe_value)
            tr.atom = atoms[0] if atoms and facet(entry) is not None else None
            tr.batoms = atoms if isinstance(entry, ABool) else []
            tracked.append(tr)
            p.vars[name] = probe_value
        p.vars.update(snaps)
        if local_value is not None and isinstance(node, ast.ForRange):
            p.vars[node.local] = local_value
        guard: Cond | None = None
        if isinstance(node, ast.While):
            g = an.eval(node.condition, p)
            if isinstance(g, ABool) and g.cond is not None and an.add_pc(p, g.cond):
                guard = g.cond
            an.refine(p, node.condition, True)
        head = p.copy()
        flow1 = an.block(node.body, p)
    ends1 = [x for x in [flow1.normal, *flow1.continues] if x is not None]
    probe_atoms = frozenset(
        a for tr in tracked for a in ([tr.atom] if tr.atom is not None else []) + tr.batoms
    )
    side_elim: Elim = {**snap_elim, **local_elim}
    for tr in tracked:
        _delta(an, tr, ends1, side_elim, probe_atoms)
    if not an.probe:
        for tr in tracked:
            # a forRange's own counter changes every iteration too: ``limit = i`` is no restart
            changing = names | {node.local} if isinstance(node, ast.ForRange) else names
            _inductive_bounds(an, node, tr, ends1, _resets(an, node.body, changing, tr.name, head))

    # ---- trip count -----------------------------------------------------------------------
    n_lo: Poly = ZERO
    n_up: Poly | None
    termination: LoopFact | None = None
    if isinstance(node, ast.ForRange):
        assert start is not None and end is not None
        n_up = intervals.range_count(s, start.lo, end.hi)
        n_lo = intervals.range_count(s, start.hi, end.lo)
        termination = LoopFact(
            an.function,
            node.pointer,
            "forRange",
            Verdict.PROVED,
            "structural: max(0, end - start)",
            an.namer.poly(n_up),
        )
    elif not ends1:
        n_up = ONE  # every path through the body leaves the loop
        termination = LoopFact(
            an.function, node.pointer, "while", Verdict.PROVED, "the body always leaves the loop", "1"
        )
    elif an.probe:
        n_up = None
    else:
        inv_c = {tr.name: _invariant(an, tr, const(quota), ends1, side_elim, probe_atoms) for tr in tracked}

        def inv_at(n: Poly) -> dict[str, AVal]:
            return {tr.name: _invariant(an, tr, n, ends1, side_elim, probe_atoms) for tr in tracked}

        n_up, termination, n_lo = _ranking(
            an, node, st, head, guard, tracked, inv_c, snap_elim, ends1, inv_at
        )
    n_eff = const(quota) if n_up is None else s.min(n_up, const(quota))
    inv = {tr.name: _invariant(an, tr, n_eff, ends1, side_elim, probe_atoms) for tr in tracked}

    if an.probe:
        return _probe_exit(an, node, st, tracked, inv, flow1, side_elim)
    if termination is not None:
        an.loop_facts.append(termination)

    # ---- pass 2: final --------------------------------------------------------------------
    fs = st.copy()
    fs.U, fs.L, fs.lstop, fs.record = {}, {}, False, False
    final_elim: Elim = {}
    counters: list[tuple[int, int, tuple[Poly, Poly]]] = []  # (head atom, exact step, entry facet)
    if isinstance(node, ast.ForRange) and isinstance(local_value, AInt) and start is not None:
        # the counter of iteration k is exactly start + k (start is evaluated once)
        counter = s.atom_id(local_value.lo)
        if counter is not None:
            counters.append((counter, 1, (start.lo, start.hi)))
    for tr in tracked:
        value = inv[tr.name]
        fv = facet(value)
        if fv is not None:
            clo, chi = cap_range(an, value, tr.type)
            lo = max(clo, s.range(fv[0])[0])
            hi = min(chi, s.range(fv[1])[1])
            nv, fid = _fresh(an, value, tr.type, f"{tr.name} (loop head)", lo, max(lo, hi), tr.name)
            if fid is not None:
                an.facts[fid] = [s.le(fv[0], _atom(fid)), s.le(_atom(fid), fv[1])]
                final_elim[fid] = fv
                step = const_step(s, tr.delta)
                fe = facet(tr.entry)
                if step is not None and fe is not None and isinstance(value, AInt):
                    counters.append((fid, step, fe))
            value = nv
        elif isinstance(value, ABool):
            c = s.batom(f"{tr.name} (loop head)")
            final_elim[c.atom] = (ZERO, ONE)
            value = ABool(c)
        fs.vars[tr.name] = value
    fs.vars.update(snaps)
    if local_value is not None and isinstance(node, ast.ForRange):
        fs.vars[node.local] = local_value
    cond_u: Upper = {}
    cond_l: dict[str, Poly] = {}
    cond_stopped = False
    if isinstance(node, ast.While):
        g = an.eval(node.condition, fs)
        cond_u, cond_l, cond_stopped = dict(fs.U), dict(fs.L), fs.lstop
        if isinstance(g, ABool) and g.cond is not None:
            an.add_pc(fs, g.cond)
        an.refine(fs, node.condition, True)
    an.charge(fs, LOOPS, const(costs.LOOP_ITERATION_COUNT))
    an.fuel(fs, costs.LOOP_ITERATION_FUEL)
    flow2 = an.block(node.body, fs)
    ends2 = [x for x in [flow2.normal, *flow2.continues] if x is not None]
    leaving = flow2.breaks + [r for r, _ in flow2.returns]
    every = ends2 + leaving
    elim: Elim = {**final_elim, **snap_elim, **local_elim}

    u_raw = join_upper(s, [x.U for x in every]) if every else {}
    u_it = {k: (None if v is None else s.bound(v, elim, True)) for k, v in u_raw.items()}
    usable = bool(ends2) and not leaving and not any(x.lstop for x in every)
    l_it = join_lower(s, [x.L for x in ends2]) if usable else {}
    l_it = {k: s.bound(v, elim, False) for k, v in l_it.items()}

    exit_state = st.copy()
    for key, per in u_it.items():
        if per is None:
            add_upper(s, exit_state.U, key, None)
        elif per.terms:
            total = None if n_up is None else s.mul(n_up, per)
            if total is not None:  # the leaving iteration's cost is T(k) at its head too
                total = _summed(s, total, u_raw.get(key), counters, n_up, elim)
            add_upper(s, exit_state.U, key, total)
    if isinstance(node, ast.While):
        for key, per in cond_u.items():  # the final, false evaluation of the guard
            add_upper(s, exit_state.U, key, None if per is None else s.bound(per, elim, True))
    if not exit_state.lstop:
        if isinstance(node, ast.While) and not cond_stopped:
            for key, low in cond_l.items():
                add_lower(s, exit_state.L, key, s.bound(low, elim, False))
        if usable:
            for key, low in l_it.items():
                add_lower(s, exit_state.L, key, s.mul(n_lo, low))
        if not usable or cond_stopped:
            an.stop(exit_state)
    exit_state.risk = exit_state.risk or any(x.risk for x in every)

    # locals after the loop: the invariant, joined with the values at any break
    for tr in tracked:
        value = inv[tr.name]
        for b in flow2.breaks:
            value = an.dom.join(value, an.dom.eliminate(b.vars.get(tr.name), elim)) or value
        exit_state.vars[tr.name] = value
    if isinstance(node, ast.ForRange):
        exit_state.vars.pop(node.local, None)
    if isinstance(node, ast.While) and not flow2.breaks:
        an.refine(exit_state, node.condition, False)

    out = Flow(exit_state)
    for _r, value in flow2.returns:
        rs = exit_state.copy()
        rs.L = dict(st.L)
        rs.lstop = True
        rs.record = False
        returned = an.dom.eliminate(value, elim)
        assert returned is not None
        out.returns.append((rs, returned))
    return out


def _summed(
    s: Sym,
    total: Poly,
    per: Poly | None,
    counters: list[tuple[int, int, tuple[Poly, Poly]]],
    n: Poly | None,
    elim: Elim,
) -> Poly:
    """``total`` (trip count times the largest iteration cost), or the arithmetic sum of
    ``sums.py`` when the cost grows with a counter of exact step and that sum is smaller at the
    largest inputs (the trip count's range decides, so a loop costs what it surely costs less)."""
    if per is None or n is None:
        return total
    for fid, step, entry in counters:
        summed = arithmetic_sum(s, per, fid, step, entry, n, elim)
        if summed is not None and not (s.atoms(summed) & elim.keys()):
            return s.min(total, summed)
    return total


def _as_int(v: AVal) -> AInt:
    if isinstance(v, AInt):
        return v
    lo, hi = INT_RANGES[I32]
    return AInt(const(lo), const(hi), I32)


def _atom(fid: int) -> Poly:
    return Poly((((fid,), 1),))


def _probe_value(an: Analyzer, entry: AVal, t: SandboxType, label: str) -> tuple[AVal, list[int]]:
    """The most general value of the local at the loop head, with atoms for what is tracked."""
    if isinstance(entry, ABool):
        c = an.sym.batom(label)
        return ABool(c), [c.atom]
    top = an.dom.top(t)
    if isinstance(entry, AInt) and isinstance(top, AInt):
        top = AInt(top.lo, top.hi, entry.type)
    lo, hi = cap_range(an, top, t)
    value, fid = _fresh(an, top, t, label, lo, hi, label.split(" ")[0])
    return value, ([] if fid is None else [fid])


def _delta(an: Analyzer, tr: Tracked, ends: list[State], side: Elim, probe_atoms: frozenset[int]) -> None:
    """The change per iteration of ``tr``'s numeric facet, if it does not depend on the loop."""
    s = an.sym
    if tr.atom is None:
        return
    if not ends:
        tr.delta = (ZERO, ZERO)
        return
    post: tuple[Poly, Poly] | None = None
    for e in ends:
        v = e.vars.get(tr.name)
        fv = facet(v) if v is not None else None
        if fv is None:
            return
        post = fv if post is None else intervals.join(s, post, fv)
    assert post is not None
    tr.post = post
    # the other locals the loop changes may appear in the change: bound them by their widest range
    wide: Elim = dict(side)
    for fid in probe_atoms:
        if fid != tr.atom and s.factors[fid].kind == "atom":
            wide[fid] = (const(s.factors[fid].lo), const(s.factors[fid].hi))
    lo = _uncap(s, s.bound(post[0], wide, False), upper=False)
    hi = _uncap(s, s.bound(post[1], wide, True), upper=True)
    a = _atom(tr.atom)
    dlo, dhi = s.sub(lo, a), s.sub(hi, a)
    if (s.atoms(dlo) | s.atoms(dhi)) & probe_atoms:
        # a post that is a choice between paths (``if up { i = i + 1 } else { i = i - 1 }`` joins
        # to ``ite(up, i + 1, i - 1)``): the change is each path's own change
        low = _step_through_choices(s, post[0], a, wide, probe_atoms, upper=False)
        high = _step_through_choices(s, post[1], a, wide, probe_atoms, upper=True)
        if low is None or high is None:
            return
        dlo, dhi = low, high
    tr.delta = (dlo, dhi)


def _step_through_choices(
    s: Sym, p: Poly, a: Poly, wide: Elim, probe_atoms: frozenset[int], upper: bool
) -> Poly | None:
    """A bound of ``p - a`` where ``p`` is a nest of ``ite`` choices: the extreme of each leaf's
    ``leaf - a`` (each leaf's other loop atoms bounded by ``wide``), or None when some leaf's change
    still depends on the loop (``i * 2 - i``)."""
    if len(p.terms) == 1 and p.terms[0][1] == 1 and len(p.terms[0][0]) == 1:
        f = s.factors[p.terms[0][0][0]]
        if f.kind == "ite":
            parts = [_step_through_choices(s, arg, a, wide, probe_atoms, upper) for arg in f.args]
            if parts[0] is None or parts[1] is None:
                return None
            return s.max(parts[0], parts[1]) if upper else s.min(parts[0], parts[1])
    d = s.bound(_uncap(s, s.bound(p, wide, upper), upper), wide, upper)
    d = s.sub(d, a)
    return None if s.atoms(d) & probe_atoms else d


def _uncap(s: Sym, p: Poly, upper: bool) -> Poly:
    """Drop a clip against a constant (``min(x, MAX)`` above, ``max(x, 0)`` below): the unclipped
    expression is a weaker but still valid bound, and it exposes ``atom + delta``."""
    while len(p.terms) == 1 and p.terms[0][1] == 1 and len(p.terms[0][0]) == 1:
        f = s.factors[p.terms[0][0][0]]
        if f.kind != ("min" if upper else "max"):
            break
        a, b = f.args
        if a.is_const:
            p = b
        elif b.is_const:
            p = a
        else:
            break
    return p


def _invariant(
    an: Analyzer, tr: Tracked, n: Poly, ends: list[State], side: Elim, probe_atoms: frozenset[int]
) -> AVal:
    """The local's value at every loop head of the first ``n`` iterations (atom-free)."""
    s = an.sym
    dom = an.dom
    entry = tr.entry
    # the parts that are not tracked numerically: the hull of the entry and every end value,
    # with the loop's own atoms replaced by their widest ranges
    wide: Elim = dict(side)
    for fid in probe_atoms:
        f = s.factors[fid]
        wide[fid] = (const(f.lo), const(f.hi))
    rest: AVal | None = entry
    for e in ends:
        rest = dom.join(rest, dom.eliminate(e.vars.get(tr.name), wide))
    assert rest is not None
    if isinstance(entry, ABool):
        return ABool(None) if rest != entry else entry
    fe = facet(entry)
    if fe is None:
        return rest
    clo, chi = cap_range(an, entry, tr.type)
    if tr.delta is not None:
        lo, hi = intervals.widen(s, fe, tr.delta, n)
        lo, hi = intervals.meet(s, (lo, hi), (const(clo), const(chi)))
    else:
        lo = tr.kept[0] if tr.kept[0] is not None else const(clo)
        hi = tr.kept[1] if tr.kept[1] is not None else const(chi)
    return with_facet(rest, lo, hi)


def _resets(
    an: Analyzer, body: tuple[ast.Stmt, ...], changed: set[str], name: str, head: State
) -> list[AInt]:
    """The values ``name`` is set to in ``body`` by expressions that read no local the loop
    changes (``y = n`` restarting an inner counter): they hold the same at every iteration."""
    out: list[AInt] = []
    stack = list(body)
    while stack:
        st = stack.pop()
        if isinstance(st, ast.Set) and st.name == name and not set(read_names(st.value)) & changed:
            v = an.peek(st.value, head)
            if isinstance(v, AInt):
                out.append(v)
        elif isinstance(st, ast.If):
            stack.extend((*st.then, *st.else_))
    return out


def _inductive_bounds(
    an: Analyzer, node: ast.While | ast.ForRange, tr: Tracked, ends: list[State], resets: list[AInt]
) -> None:
    """For an integer local whose change per iteration depends on its own value (``i = i * 2``,
    ``x = x / 2``, ``y = y - 1`` or a restart ``y = n``), keep the hull of its entry value and its
    restart values where it is inductive: if ``lo <= v`` at the loop head implies ``lo <= v`` at
    the end of every iteration that goes on (a solver question per side), it holds at every loop
    head. Without this such a local ranges over its
    whole type, and ``i < n`` with ``i = i * 2`` has no ranking function (``i`` might be 0)."""
    s = an.sym
    if tr.delta is not None or tr.atom is None or tr.post is None or not isinstance(tr.entry, AInt):
        return
    if not ends:
        return
    a = _atom(tr.atom)
    kept: list[Poly | None] = [None, None]
    lo_b, hi_b = tr.entry.lo, tr.entry.hi
    for v in resets:  # the hull of the entry and every restart value
        lo_b, hi_b = s.min(lo_b, v.lo), s.max(hi_b, v.hi)
    for side, bound in enumerate((lo_b, hi_b)):
        if s.atoms(bound) & {tr.atom}:
            continue
        leaves = []
        for e in ends:
            end_value = e.vars.get(tr.name)
            fv = facet(end_value) if end_value is not None else None
            if fv is None:
                return
            outside = s.lt(fv[0], bound) if side == 0 else s.lt(bound, fv[1])
            leaves.append(s.and_(*e.pc, outside))
        _ob, result = an.log.ask(
            s,
            kind="invariant",
            function=an.function,
            pointer=node.pointer,
            claim=f"{tr.name} stays {'>=' if side == 0 else '<='} its entry value {an.namer.poly(bound)}",
            goal=s.or_(*leaves),
            premises=[s.le(bound, a) if side == 0 else s.le(a, bound)],
            facts=an.facts,
        )
        if result.status == "unsat":
            kept[side] = bound
    tr.kept = (kept[0], kept[1])


def _probe_exit(
    an: Analyzer,
    node: ast.While | ast.ForRange,
    st: State,
    tracked: list[Tracked],
    inv: dict[str, AVal],
    flow1: Flow,
    side: Elim,
) -> Flow:
    """Inside another loop's probe pass only values matter: the invariant joined with breaks."""
    elim: Elim = dict(side)
    for tr in tracked:
        value = inv[tr.name]
        fv = facet(value)
        if tr.atom is not None and fv is not None:
            elim[tr.atom] = fv
        for batom in tr.batoms:
            elim[batom] = (ZERO, ONE)
    exit_state = st.copy()
    for tr in tracked:
        value = inv[tr.name]
        for brk in flow1.breaks:
            value = an.dom.join(value, an.dom.eliminate(brk.vars.get(tr.name), elim)) or value
        exit_state.vars[tr.name] = value
    if isinstance(node, ast.ForRange):
        exit_state.vars.pop(node.local, None)
    out = Flow(exit_state)
    for _r, value in flow1.returns:
        returned = an.dom.eliminate(value, elim)
        assert returned is not None
        out.returns.append((exit_state.copy(), returned))
    return out


def _disjunctive_candidate(an: Analyzer, guard: ast.Expr, head: State) -> Poly | None:
    """For a guard ``a || b`` of comparisons (``x > 0 || y > 0``): the sum of each side's
    positive part, ``max(0, x) + max(0, y)``, which is ``>= 1`` exactly when some side holds. Unlike
    a conjunctive comparison, no side is implied by the guard, so the ranking obligation's own
    ``r < 1`` disjunct (against the guard in the path condition) is what shows ``r >= 1``."""
    if not (isinstance(guard, ast.Binary) and guard.op is ast.BinaryOp.OR):
        return None
    s = an.sym
    total: Poly | None = None
    stack: list[ast.Expr] = [guard]
    while stack:
        e = stack.pop()
        if isinstance(e, ast.Binary) and e.op is ast.BinaryOp.OR:
            stack.extend((e.right, e.left))
            continue
        sides = guard_comparisons(e)
        if not sides:
            return None
        small_e, big_e, strict = sides[0]
        if an.plan.type_of(small_e) not in INT_RANGES:
            return None
        small, big = an.peek(small_e, head), an.peek(big_e, head)
        if not (isinstance(small, AInt) and isinstance(big, AInt)):
            return None
        r = s.sub(big.hi, small.lo) if strict else s.add_const(s.sub(big.hi, small.lo), 1)
        part = s.max(r, ZERO)
        total = part if total is None else s.add(total, part)
    return total


def _divides(s: Sym, polys: Iterable[Poly]) -> bool:
    """Does a step involve a division (an ``fdiv`` factor)? Only then can it halve, so only then
    is the halving question worth one of the module's solver queries."""
    todo = [f for p in polys for mono, _ in p.terms for f in mono]
    seen: set[int] = set()
    while todo:
        fid = todo.pop()
        if fid in seen:
            continue
        seen.add(fid)
        factor = s.factors[fid]
        if factor.kind == "fdiv":
            return True
        todo.extend(f for p in factor.args for mono, _ in p.terms for f in mono)
    return False


def _halves(
    an: Analyzer,
    node: ast.While,
    r: Poly,
    r_post: Poly,
    premises: list[Cond],
    facts: dict[int, list[Cond]],
    obligations: list[str],
) -> bool:
    """Does every iteration take a ranking function ``r >= 1`` to at most ``r / 2``? (``x = x / 2``
    down to 0.) Then the loop runs at most ``floor(log2 r(entry)) + 1`` times instead of ``r``."""
    s = an.sym
    ob, result = an.log.ask(
        s,
        kind="ranking",
        function=an.function,
        pointer=node.pointer,
        claim=f"every iteration at least halves r = {an.namer.poly(r)}",
        goal=s.and_(s.ge(s.add_const(r, -1)), s.ge(s.add_const(s.sub(s.scale(r_post, 2), r), -1))),
        premises=premises,
        facts=facts,
    )
    if ob.name:
        obligations.append(ob.name)
    return result.status == "unsat"


def _doubles(
    an: Analyzer,
    node: ast.While,
    g: int,
    mapping: dict[int, Poly],
    premises: list[Cond],
    facts: dict[int, list[Cond]],
    obligations: list[str],
) -> bool:
    """Is the growing side ``g`` of the ranked comparison at least 1 and at least doubled by every
    iteration (``i = i * 2`` up to ``n``)? Then the loop runs at most ``bit_length(max n)`` times."""
    s = an.sym
    post = mapping.get(g)
    if post is None:
        return False
    a = _atom(g)
    ob, result = an.log.ask(
        s,
        kind="ranking",
        function=an.function,
        pointer=node.pointer,
        claim=f"every iteration starts with {an.namer.poly(a)} >= 1 and at least doubles it",
        goal=s.or_(s.lt(a, ONE), s.lt(post, s.scale(a, 2))),
        premises=premises,
        facts=facts,
    )
    if ob.name:
        obligations.append(ob.name)
    return result.status == "unsat"


def _body_comparisons(body: tuple[ast.Stmt, ...]) -> list[tuple[ast.Expr, ast.Expr, bool]]:
    """The comparisons of every ``if`` condition in ``body`` (outside nested loops)."""
    out: list[tuple[ast.Expr, ast.Expr, bool]] = []
    stack = list(body)
    while stack:
        st = stack.pop()
        if isinstance(st, ast.If):
            out.extend(guard_comparisons(st.condition))
            stack.extend((*st.then, *st.else_))
    return out


def _post_atoms(
    an: Analyzer, atoms: Iterable[int], by_atom: dict[int, Tracked]
) -> tuple[dict[int, Poly], list[Cond]] | None:
    """Fresh atoms for the values after one iteration, and the premises tying them to the post."""
    s = an.sym
    mapping: dict[int, Poly] = {}
    premises: list[Cond] = []
    for fid in sorted(atoms):
        tr = by_atom[fid]
        if tr.post is None:
            return None
        lo_c, hi_c = cap_range(an, tr.entry, tr.type)
        q = s.atom(f"{tr.name} (after one iteration)", lo_c, hi_c)
        qid = s.atom_id(q)
        assert qid is not None
        an.namer.names[qid] = f"{tr.name}'"
        mapping[fid] = q
        premises.append(s.le(tr.post[0], q))
        premises.append(s.le(q, tr.post[1]))
    return mapping, premises


def _lexicographic(
    an: Analyzer,
    node: ast.While,
    head: State,
    firsts: list[Poly],
    implied: list[Cond],
    by_atom: dict[int, Tracked],
    facts: dict[int, list[Cond]],
    inv_c: dict[str, AVal],
    snap_elim: Elim,
    obligations: list[str],
) -> tuple[Poly, LoopFact, Poly] | None:
    """A lexicographic ranking function ``(r1, r2)``: ``r1`` read off the guard (so ``r1 >= 1`` on
    every iteration), ``r2`` off a comparison of the guard or of an ``if`` in the body, and every
    iteration either lowers ``r1`` by at least 1, or keeps ``r1`` from growing while ``r2 >= 1``
    drops by at least 1 (``while x > 0 { if y > 0 { y-- } else { x--; y = n } }``).

    Trip count: at most ``r1(entry)`` iterations lower ``r1`` (it never grows and stays >= 1);
    between two of them, before the first and after the last, ``r2`` drops from at most ``R2``
    (its largest value at any loop head, from the loop-head invariant) while staying >= 1, so at
    most ``max(0, R2)`` iterations each: ``N <= r1 + (r1 + 1) * max(0, R2)``."""
    s = an.sym
    seconds: list[Poly] = list(firsts)
    for small_e, big_e, strict in _body_comparisons(node.body):
        if an.plan.type_of(small_e) not in INT_RANGES:
            continue
        small, big = an.peek(small_e, head), an.peek(big_e, head)
        if not (isinstance(small, AInt) and isinstance(big, AInt)):
            continue
        r = s.sub(big.hi, small.lo) if strict else s.add_const(s.sub(big.hi, small.lo), 1)
        if s.atoms(r) & by_atom.keys() and r not in seconds:
            seconds.append(r)
    tries = [(r1, r2) for r1 in firsts[:3] for r2 in seconds[:4] if r2 != r1][:6]
    for r1, r2 in tries:
        built = _post_atoms(an, (s.atoms(r1) | s.atoms(r2)) & by_atom.keys(), by_atom)
        if built is None:
            continue
        mapping, posts = built
        p1, p2 = s.substitute(r1, mapping), s.substitute(r2, mapping)
        first_drops = s.le(p1, s.add_const(r1, -1))
        second_drops = s.and_(s.le(p1, r1), s.ge(s.add_const(r2, -1)), s.le(p2, s.add_const(r2, -1)))
        text = f"({an.namer.poly(r1)}, {an.namer.poly(r2)})"
        ob, result = an.log.ask(
            s,
            kind="ranking",
            function=an.function,
            pointer=node.pointer,
            claim=f"r = {text} is a lexicographic ranking function: every iteration lowers the first "
            "part, or keeps it and lowers the second while it is >= 1",
            goal=s.and_(s.not_(first_drops), s.not_(second_drops)),
            premises=[*head.pc, *implied, *posts],
            facts=facts,
        )
        if ob.name:
            obligations.append(ob.name)
        if result.status != "unsat":
            continue
        entry_elim: Elim = dict(snap_elim)
        head_elim: Elim = dict(snap_elim)
        for fid, tr in by_atom.items():
            fe, fi = facet(tr.entry), facet(inv_c[tr.name])
            if fe is not None:
                entry_elim[fid] = fe
            if fi is not None:
                head_elim[fid] = fi
        first = s.max(s.bound(r1, entry_elim, True), ZERO)
        second = s.max(s.bound(s.bound(r2, head_elim, True), snap_elim, True), ZERO)
        n_up = s.add(first, s.mul(s.add_const(first, 1), second))
        fact = LoopFact(
            an.function,
            node.pointer,
            "while",
            Verdict.PROVED,
            f"lexicographic ranking function r = {text}",
            an.namer.poly(n_up),
            tuple(obligations),
        )
        return n_up, fact, ZERO
    return None


def _bool_phases(
    an: Analyzer,
    node: ast.While,
    head: State,
    tracked: list[Tracked],
    facts: dict[int, list[Cond]],
    snap_elim: Elim,
    ends: list[State],
    inv_at: Callable[[Poly], dict[str, AVal]],
    obligations: list[str],
) -> tuple[Poly, LoopFact] | None:
    """The two-phase rule of ``phases.py`` for a loop that changes a Boolean local."""
    s = an.sym
    flags = [(tr.name, tr.batoms[0]) for tr in tracked if isinstance(tr.entry, ABool) and tr.batoms]
    if not flags:
        return None
    by_atom: dict[int, tuple[str, AVal]] = {
        tr.atom: (tr.name, tr.entry) for tr in tracked if tr.atom is not None
    }
    entry_elim: Elim = dict(snap_elim)
    for tr in tracked:
        fe = facet(tr.entry)
        if tr.atom is not None and fe is not None:
            entry_elim[tr.atom] = fe

    def head_bound(r: Poly, n: Poly) -> Poly:
        head_elim: Elim = dict(snap_elim)
        inv = inv_at(n)
        for tr in tracked:
            fi = facet(inv[tr.name])
            if tr.atom is not None and fi is not None:
                head_elim[tr.atom] = fi
        return s.bound(s.bound(r, head_elim, True), snap_elim, True)

    return bool_phase_ranking(
        an, node, head, ends, flags, by_atom, facts, entry_elim, head_bound, obligations
    )


def _ranking(
    an: Analyzer,
    node: ast.While,
    st: State,
    head: State,
    guard: Cond | None,
    tracked: list[Tracked],
    inv_c: dict[str, AVal],
    snap_elim: Elim,
    ends: list[State],
    inv_at: Callable[[Poly], dict[str, AVal]],
) -> tuple[Poly | None, LoopFact, Poly]:
    """The trip-count bound (None when no ranking function is found), the termination fact, and a
    lower bound of the trip count (0 unless the loop provably runs exactly r(entry) times)."""
    """Find a linear ranking function among the guard's comparisons and check it with Z3."""
    s = an.sym
    by_atom = {tr.atom: tr for tr in tracked if tr.atom is not None}
    temp_facts: dict[int, list[Cond]] = dict(an.facts)
    for tr in tracked:
        value = inv_c[tr.name]
        fv = facet(value)
        if tr.atom is not None and fv is not None:
            temp_facts[tr.atom] = [s.le(fv[0], _atom(tr.atom)), s.le(_atom(tr.atom), fv[1])]
    candidates: list[Poly] = []
    guard_cands: list[Poly] = []  # read off the guard itself: r >= 1 on every iteration
    growth: dict[Poly, tuple[int, Poly]] = {}  # r = big - g: g's atom and big (for doubling)
    from_exit: set[Poly] = set()  # candidates only an early exit keeps >= 1 (one more iteration)
    implied: list[Cond] = []
    in_guard = guard_comparisons(node.condition)
    for k, (small_e, big_e, strict) in enumerate([*in_guard, *exit_comparisons(node.body)]):
        if an.plan.type_of(small_e) not in INT_RANGES:
            continue
        small, big = an.peek(small_e, head), an.peek(big_e, head)
        if not (isinstance(small, AInt) and isinstance(big, AInt)):
            continue
        # small.lo <= small (<)= big <= big.hi, so r = big.hi - small.lo (+1) is >= 1 under the guard
        r = s.sub(big.hi, small.lo) if strict else s.add_const(s.sub(big.hi, small.lo), 1)
        implied.append(s.ge(s.add_const(r, -1)))
        if s.atoms(r) & by_atom.keys() and r not in candidates:
            candidates.append(r)
            if k < len(in_guard):
                guard_cands.append(r)
            grows = s.atom_id(small.lo) if small.exact is not None else None
            if grows in by_atom and not (s.atoms(big.hi) & by_atom.keys()):
                growth[r] = (grows, big.hi)
            if k >= len(in_guard):
                from_exit.add(r)
    either = _disjunctive_candidate(an, node.condition, head)
    if either is not None and s.atoms(either) & by_atom.keys() and either not in candidates:
        candidates.append(either)  # checked like the others, but no guard-implied "r >= 1"
    singles = [r for r in candidates[:6] if r != either]
    for i, r1 in enumerate(singles):  # x > 0 && y > 0 where each path lowers one: r = x + y
        for r2 in singles[i + 1 :]:
            both = s.add(r1, r2)
            if both not in candidates:
                candidates.append(both)
                if r1 in from_exit or r2 in from_exit:
                    from_exit.add(both)
    obligations: list[str] = []
    for r in candidates[:12]:
        mapping: dict[int, Poly] = {}
        premises: list[Cond] = [*head.pc, *implied]
        ok = True
        for fid in sorted(s.atoms(r) & by_atom.keys()):
            tr = by_atom[fid]
            if tr.post is None:
                ok = False
                break
            lo_c, hi_c = cap_range(an, tr.entry, tr.type)
            q = s.atom(f"{tr.name} (after one iteration)", lo_c, hi_c)
            qid = s.atom_id(q)
            assert qid is not None
            an.namer.names[qid] = f"{tr.name}'"
            mapping[fid] = q
            premises.append(s.le(tr.post[0], q))
            premises.append(s.le(q, tr.post[1]))
        if not ok:
            continue
        r_post = s.substitute(r, mapping)
        goal = s.or_(s.lt(r, ONE), s.ge(s.sub(r_post, r)))
        text = an.namer.poly(r)
        ob, result = an.log.ask(
            s,
            kind="ranking",
            function=an.function,
            pointer=node.pointer,
            claim=f"r = {text} is a ranking function: the guard implies r >= 1 and every iteration lowers r",
            goal=goal,
            premises=premises,
            facts=temp_facts,
        )
        if ob.name:
            obligations.append(ob.name)
        if result.status != "unsat":
            continue
        entry_elim: Elim = dict(snap_elim)
        for fid, tr in by_atom.items():
            fe = facet(tr.entry)
            if fe is not None:
                entry_elim[fid] = fe
        n_up = s.max(s.bound(r, entry_elim, True), ZERO)
        n_lo = ZERO
        steps = [p for fid in s.atoms(r) & by_atom.keys() for p in (by_atom[fid].post or ())]
        halving = _divides(s, steps) and _halves(an, node, r, r_post, premises, temp_facts, obligations)
        if halving:
            # r >= 1 at least halves per iteration: at most bit_length(max r(entry)) iterations
            top = s.range(n_up)[1]
            if top is not None and top >= 0:
                n_up = s.min(n_up, const(int(top).bit_length()))
        doubling = r in growth and _doubles(
            an, node, growth[r][0], mapping, premises, temp_facts, obligations
        )
        if doubling:
            # g >= 1 at least doubles per iteration and g < big on every iteration that runs:
            # 2^(N-1) <= g < max(big), so N <= bit_length(max(big))
            top = max(1, s.range(growth[r][1])[1])
            n_up = s.min(n_up, const(int(top).bit_length()))
        if r in from_exit:
            # r >= 1 is known only on iterations that go on; the one that leaves comes on top
            n_up = s.add_const(n_up, 1)
        elif guard is not None:
            # exactly r(entry) iterations if r drops by at most 1 and the guard fails only at r <= 0
            slow = s.lt(r_post, s.add_const(r, -1))
            ob2, res2 = an.log.ask(
                s,
                kind="ranking",
                function=an.function,
                pointer=node.pointer,
                claim=f"every iteration lowers r = {text} by at most 1",
                goal=slow,
                premises=premises,
                facts=temp_facts,
            )
            ob3, res3 = an.log.ask(
                s,
                kind="ranking",
                function=an.function,
                pointer=node.pointer,
                claim=f"the loop can only stop once r = {text} <= 0",
                goal=s.and_(s.not_(guard), s.ge(s.add_const(r, -1))),
                premises=list(st.pc),
                facts=temp_facts,
            )
            obligations.extend(x for x in (ob2.name, ob3.name) if x)
            if res2.status == "unsat" and res3.status == "unsat":
                n_lo = s.max(s.bound(r, entry_elim, False), ZERO)
        fact = LoopFact(
            an.function,
            node.pointer,
            "while",
            Verdict.PROVED,
            f"ranking function r = {text}"
            + (" (read off an early exit)" if r in from_exit else "")
            + (", at least halved by every iteration" if halving else "")
            + (
                f", {an.namer.poly(_atom(growth[r][0]))} at least doubled by every iteration"
                if doubling
                else ""
            ),
            an.namer.poly(n_up),
            tuple(obligations),
        )
        return n_up, fact, n_lo
    lex = _lexicographic(
        an, node, head, guard_cands, implied, by_atom, temp_facts, inv_c, snap_elim, obligations
    )
    if lex is not None:
        return lex
    phased = _bool_phases(an, node, head, tracked, temp_facts, snap_elim, ends, inv_at, obligations)
    if phased is not None:
        return phased[0], phased[1], ZERO
    reason = (
        "no ranking function found among the guard's comparisons"
        if candidates
        else "the guard has no comparison over a local the loop changes"
    )
    return (
        None,
        LoopFact(
            an.function, node.pointer, "while", Verdict.UNKNOWN, reason, "unbounded", tuple(obligations)
        ),
        ZERO,
    )
