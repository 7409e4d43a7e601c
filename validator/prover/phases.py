"""Two-phase ranking with a Boolean phase flag: a counter that first rises to a bound, then falls.

::

    up = true;
    while up || i > 0 {
      if up { if i < n { i = i + 1; } else { up = false; } } else { i = i - 1; }
    }

No single linear function of the integers ranks this loop (``i`` both rises and falls), and the
lexicographic rule needs two integer comparisons. The ranking function is *phase-indexed*:
``r1 = n - i`` while the flag holds its first-phase value, ``r2 = i`` after. One solver question
(``kind: ranking``) checks, for every path through the body that goes on to the next iteration,
that none of these holds:

1. the flag returns to its first-phase value once it left it (phases only go forward);
2. the iteration starts and ends in phase 1 without ``r1 >= 1`` dropping by at least 1;
3. the iteration starts in phase 2 without ``r2 >= 1`` dropping by at least 1.

``unsat`` proves termination. Bound: phase 1 has at most ``max(0, r1(entry))`` iterations that stay
in it plus the one that leaves it, ``P1 = max(0, r1(entry)) + 1``; phase 2 starts at a loop head
reached after at most ``P1`` iterations, where ``r2`` is at most ``R2`` (``r2`` bounded by the
loop-head invariant over ``P1`` iterations), and runs at most ``max(0, R2)`` times:
``N <= P1 + max(0, R2)``. Both polarities of the flag are tried (``up`` from true to false, and
``done`` from false to true).

The per-path check keeps each path's own values (the post value of a local is a fresh atom pinned
to that path's interval), so a path that leaves phase 1 is not confused with one that stays.
"""

from __future__ import annotations

from collections.abc import Callable

from dotboxd.core import ast

from .domain import INT_RANGES, ABool, AInt, AVal
from .interface import AnalyzerView as Analyzer
from .report import LoopFact, Verdict
from .state import State
from .sym import ONE, ZERO, Cond, Poly

Elim = dict[int, tuple[Poly, Poly]]

MAX_PHASE_TRIES = 4  # solver questions per loop (pairs of ranking candidates x flag polarities)


def comparisons(e: ast.Expr) -> list[tuple[ast.Expr, ast.Expr, bool]]:
    """Every integer comparison under ``&&`` / ``||`` of a condition, as ``(small, big, strict)``
    for ``small < big`` (strict) or ``small <= big``. Unlike the guard's conjunctive comparisons
    these need not hold: the obligation itself asks for ``r >= 1`` where a phase relies on it."""
    if isinstance(e, ast.Binary) and e.op in (ast.BinaryOp.AND, ast.BinaryOp.OR):
        return comparisons(e.left) + comparisons(e.right)
    if not isinstance(e, ast.Binary):
        return []
    if e.op in (ast.BinaryOp.LT, ast.BinaryOp.LTE):
        return [(e.left, e.right, e.op is ast.BinaryOp.LT)]
    if e.op in (ast.BinaryOp.GT, ast.BinaryOp.GTE):
        return [(e.right, e.left, e.op is ast.BinaryOp.GT)]
    return []


def _if_conditions(body: tuple[ast.Stmt, ...]) -> list[ast.Expr]:
    out: list[ast.Expr] = []
    stack = list(body)
    while stack:
        st = stack.pop()
        if isinstance(st, ast.If):
            out.append(st.condition)
            stack.extend((*st.then, *st.else_))
    return out


def _candidates(an: Analyzer, node: ast.While, head: State, loop_atoms: frozenset[int]) -> list[Poly]:
    """``big - small`` (+1 when not strict) for every comparison of the guard and of the body's
    ``if`` conditions that reads a local the loop changes."""
    s = an.sym
    out: list[Poly] = []
    for cond in (node.condition, *_if_conditions(node.body)):
        for small_e, big_e, strict in comparisons(cond):
            if an.plan.type_of(small_e) not in INT_RANGES:
                continue
            small, big = an.peek(small_e, head), an.peek(big_e, head)
            if not (isinstance(small, AInt) and isinstance(big, AInt)):
                continue
            r = s.sub(big.hi, small.lo) if strict else s.add_const(s.sub(big.hi, small.lo), 1)
            if s.atoms(r) & loop_atoms and r not in out:
                out.append(r)
    return out


def _path_violation(
    an: Analyzer,
    end: State,
    k: int,
    flag: tuple[str, int],
    first: bool,
    r1: Poly,
    r2: Poly,
    by_atom: dict[int, tuple[str, AVal]],
) -> Cond | None:
    """The condition under which the path ending in ``end`` breaks the phase ranking (None when
    the path's values are not known well enough to say)."""
    s = an.sym
    name, batom = flag
    post_flag = end.vars.get(name)
    if not isinstance(post_flag, ABool) or post_flag.cond is None:
        return None
    head_b = Cond("bool", atom=batom)
    in1 = head_b if first else s.not_(head_b)
    in1_after = post_flag.cond if first else s.not_(post_flag.cond)
    mapping: dict[int, Poly] = {}
    pins: list[Cond] = []
    for fid in sorted((s.atoms(r1) | s.atoms(r2)) & by_atom.keys()):
        local, entry = by_atom[fid]
        value = end.vars.get(local)
        if not isinstance(value, AInt) or not isinstance(entry, AInt):
            return None
        lo_c, hi_c = INT_RANGES[entry.type]
        q = s.atom(f"{local} (after one iteration, path {k})", lo_c, hi_c)
        qid = s.atom_id(q)
        assert qid is not None
        an.namer.names[qid] = f"{local}'"
        mapping[fid] = q
        pins.extend((s.le(value.lo, q), s.le(q, value.hi)))

    def does_not_drop(r: Poly) -> Cond:  # not (r >= 1 and r' <= r - 1)
        return s.or_(s.lt(r, ONE), s.le(r, s.substitute(r, mapping)))

    back = s.and_(s.not_(in1), in1_after)
    stays_without_progress = s.and_(in1, in1_after, does_not_drop(r1))
    phase2_without_progress = s.and_(s.not_(in1), does_not_drop(r2))
    return s.and_(*end.pc, *pins, s.or_(back, stays_without_progress, phase2_without_progress))


def bool_phase_ranking(
    an: Analyzer,
    node: ast.While,
    head: State,
    ends: list[State],
    flags: list[tuple[str, int]],
    by_atom: dict[int, tuple[str, AVal]],
    facts: dict[int, list[Cond]],
    entry_elim: Elim,
    head_bound: Callable[[Poly, Poly], Poly],
    obligations: list[str],
) -> tuple[Poly, LoopFact] | None:
    """A phase-indexed ranking function over a Boolean flag the loop changes, or None.

    ``flags`` are the Boolean locals the loop changes with their loop-head atoms; ``by_atom`` maps
    each integer loop-head atom to its local and entry value; ``head_bound(r, n)`` is an upper
    bound of ``r`` at every loop head reached after at most ``n`` iterations."""
    s = an.sym
    if not flags or not ends:
        return None
    cands = _candidates(an, node, head, frozenset(by_atom))
    tries = [
        (flag, first, r1, r2)
        for flag in flags[:2]
        for first in (True, False)
        for r1 in cands[:3]
        for r2 in cands[:3]
        if r1 != r2
    ][:MAX_PHASE_TRIES]
    for flag, first, r1, r2 in tries:
        parts = [_path_violation(an, e, k, flag, first, r1, r2, by_atom) for k, e in enumerate(ends)]
        if any(p is None for p in parts):
            continue
        name = flag[0]
        phase1 = name if first else f"not {name}"
        text = f"{an.namer.poly(r1)} while {phase1}, then {an.namer.poly(r2)}"
        ob, result = an.log.ask(
            s,
            kind="ranking",
            function=an.function,
            pointer=node.pointer,
            claim=f"r = ({text}) is a two-phase ranking function: {name} leaves its first value at "
            "most once, and each phase lowers its part while it is >= 1",
            goal=s.or_(*(p for p in parts if p is not None)),
            premises=list(head.pc),
            facts=facts,
        )
        if ob.name:
            obligations.append(ob.name)
        if result.status != "unsat":
            continue
        p1 = s.add_const(s.max(s.bound(r1, entry_elim, True), ZERO), 1)
        n_up = s.add(p1, s.max(head_bound(r2, p1), ZERO))
        fact = LoopFact(
            an.function,
            node.pointer,
            "while",
            Verdict.PROVED,
            f"two-phase ranking function r = ({text})",
            an.namer.poly(n_up),
            tuple(obligations),
        )
        return n_up, fact
    return None
