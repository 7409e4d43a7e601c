"""The generated forms of iteration blocks (spec/optimized.md 4.2.8, ``blocks.py``,
``block_stubs.py``; issue 16). The verifier checks exactly these shapes (``verify_blocks.py``).

    bk0 = 0
    for v2 in _range(1, v0):
        if bk0 > 0 and f >= 5:                      # the outer iteration, drawn from the pool
            bk0 = bk0 - 1
            f = f - 5
        else:
            f, bk0 = _s_bkit(R, f, lr, bk0, 30)     # give back, charge exactly, reserve anew
        ...                                         # faults here refund lr + bk0
        while True:
            n0 = 2147483647 - v1                    # the counters' room (none: n0 = bk0)
            if bk0 < n0:
                n0 = bk0
            if f < n0 * 24:                         # the chunk's worst-case fuel
                n0 = f // 24
            if n0 < 1:
                n0, bk0 = _s_bkcap(R, f, lr, bk0, 24, 30, 2147483647 - v1)
            for j0 in _range(n0):
                ...                                 # exits: bk0 = bk0 - j0 [- 1]; faults: _s_bk<k>
            else:
                if n0:
                    f -= ...
                    bk0 = bk0 - n0
                    continue
                ...                                 # the cold exact path (the pool is empty)
            break
    _s_bkend(R, bk0, 30)
"""

from __future__ import annotations

import ast
import copy

from dotboxd.core import costs

from . import pyast as P
from .block_stubs import END, ITERATION, RESERVE

_R, _F, _LR = P.name("R"), P.name("f"), P.name("lr")
_FUEL = costs.LOOP_ITERATION_FUEL


def start(pool: str) -> ast.stmt:
    """``bk = 0`` right before the block loop: no pool yet."""
    return P.assign(pool, P.const(0))


def draw_iteration(pool: str, units: int) -> ast.stmt:
    """The outer iteration's charge: from the pool when it holds one and the fuel pays it, else the
    stub (which gives the pool back, charges the iteration exactly and reserves the next pool)."""
    return P.if_(
        P.and_(P.compare(P.name(pool), P.GT, P.const(0)), P.compare(_F, P.GTE, P.const(_FUEL))),
        [P.assign(pool, P.sub(P.name(pool), P.const(1))), P.assign("f", P.sub(_F, P.const(_FUEL)))],
        [P.assign2("f", pool, P.call(ITERATION, _R, _F, _LR, P.name(pool), P.const(units)))],
    )


def draw_chunk(n: str, pool: str, room: ast.expr | None, worst: int, units: int) -> list[ast.stmt]:
    """An inner chunk's count: the pool, cut to the counters' room and to what the fuel pays for
    in the worst case; the stub when that leaves nothing (``room`` is evaluated again there: it is a
    pure expression of the counters)."""
    if room is None:
        out: list[ast.stmt] = [P.assign(n, P.name(pool))]
    else:
        out = [
            P.assign(n, room),
            P.if_(P.compare(P.name(pool), P.LT, P.name(n)), [P.assign(n, P.name(pool))]),
        ]
    out.append(
        P.if_(
            P.compare(_F, P.LT, P.mul(P.name(n), P.const(worst))),
            [P.assign(n, P.binop(_F, P.FLOORDIV, P.const(worst)))],
        )
    )
    extra = [] if room is None else [copy.deepcopy(room)]
    refill = P.call(RESERVE, _R, _F, _LR, P.name(pool), P.const(worst), P.const(units), *extra)
    out.append(P.if_(P.compare(P.name(n), P.LT, P.const(1)), [P.assign2(n, pool, refill)]))
    return out


def take(pool: str, count: ast.expr) -> ast.stmt:
    """``bk = bk - count``: the iterations a chunk started leave the pool."""
    return P.assign(pool, P.sub(P.name(pool), count))


def refund(pool: str) -> ast.expr:
    """What a failure in the block gives back: the caller's refund and the whole pool."""
    return P.add(_LR, P.name(pool))


def end(pool: str, units: int) -> ast.stmt:
    """``_s_bkend(R, bk, units)`` right after the block loop."""
    return P.expr_stmt(P.call(END, _R, P.name(pool), P.const(units)))


__all__ = ["draw_chunk", "draw_iteration", "end", "refund", "start", "take"]
