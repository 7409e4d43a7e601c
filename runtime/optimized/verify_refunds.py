"""Verifier rules for the loop refund a call hands the meter (the ``lr`` position, rule 19).

Why: inside a bulk chunk the meter has already counted the iterations the chunk reserved; a call
that may fail there (a failure stub, an exact built-in, a generated function) passes the refund -
the caller's ``lr`` plus the iterations reserved and not started - and the meter gives them back.
A refund bigger than that would make a failed run report fewer loop iterations than it used, a
smaller one more: a usage lie. So the argument in that position is held to exactly the forms the
code generator emits (``codegen.lref``):

* outside a bulk chunk, the name ``lr`` as the function received it;
* inside one, ``lr + u`` where ``u`` counts the innermost chunk's unstarted iterations as a
  give-back does (``n - j``, ``n - (v - k)``, or either minus 1: ``unstarted_ok``), computed right
  there, or a refund slot ``t<n>`` that the chunk's body assigns exactly that form, once, in its
  top-level block, before the use (a per-iteration slot: ``RefundSlots``).

``chunk_names`` in the verifier already forbids the body to assign ``n``, ``j``/``v`` and ``k``, so
each accepted form lies in ``[lr, lr + n]``. A chunk's fast fault stubs (``_s_c<k>``) take the
iteration name in that position instead; the stub computes the refund from it (``chunk_fault``).
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from . import pyast as P
from .block_stubs import FAULTS as BLOCK_FAULTS
from .block_stubs import ITERATION, RESERVE
from .literal_reads import READS
from .shapes import walk
from .stubs import FAULT_ARITIES, STUBS

ChunkNames = tuple[str, str, str | None]
"""A bulk chunk as the verifier tracks it: reserved count ``n``, iteration name, forRange start."""

_AT_2 = (
    "_s_fx",
    "_s_deep",
    "_s_noret",
    "_s_liter",
    "_s_lend",
    "_s_tick",
    "_s_text",
    "_s_ceq",
    "_s_bind",
    "_s_cat",
    "_s_lox",
    "_s_mox",
    "_s_sox",
    "_s_soxl",
    "_s_soxv",
    *READS,
)
REFUND_AT: Mapping[str, int] = MappingProxyType(
    {
        **dict.fromkeys(_AT_2, 2),
        **{f"_s_f{arity}": 2 for arity in FAULT_ARITIES},
        **{name: 2 for name in STUBS if name.startswith("_s_i_")},
        "_s_cap": 3,
        "_s_capm": 3,
        ITERATION: 2,  # rule 24 (``verify_blocks``) holds a block's own stubs to ``lr`` there
        RESERVE: 2,
    }
)
"""Stub -> the position of the loop refund it receives (``(R, f, lr, ...)``; a reservation's is
``(R, f, d, lr, ...)`` like a generated function's)."""

CHUNK_FAULTS = frozenset({*(f"_s_c{arity}" for arity in FAULT_ARITIES), *BLOCK_FAULTS})
"""Fast-chunk fault stubs: their third argument is the chunk's iteration, not a refund."""

_NAMES = frozenset({ast.Name, P.Name})
_BINOPS = frozenset({ast.BinOp, P.BinOp})
_CONSTS = frozenset({ast.Constant, P.Constant})


def _is_name(node: Any, ident: str | None) -> bool:
    return type(node) in _NAMES and node.id == ident and type(node.ctx) is ast.Load


def _is_sub(node: Any) -> bool:
    return type(node) in _BINOPS and type(node.op) is ast.Sub


def unstarted_ok(count: Any, chunk: ChunkNames) -> bool:
    """``count`` is ``n - j``, ``n - (v - k)``, or either minus 1, for the chunk of ``n``."""
    n, ivar, start = chunk
    if (
        _is_sub(count)
        and type(count.right) in _CONSTS
        and type(count.right.value) is int
        and count.right.value == 1
    ):
        count = count.left
    if not (_is_sub(count) and _is_name(count.left, n)):
        return False
    index = count.right
    if start is None:
        return _is_name(index, ivar)
    return _is_sub(index) and _is_name(index.left, ivar) and _is_name(index.right, start)


def is_lazy_refund(value: Any, chunk: ChunkNames | None) -> bool:
    """``lr + u``, ``u`` the unstarted iterations of ``chunk`` (never outside a chunk)."""
    return (
        chunk is not None
        and type(value) in _BINOPS
        and type(value.op) is ast.Add
        and _is_name(value.left, "lr")
        and unstarted_ok(value.right, chunk)
    )


class RefundSlots:
    """The per-iteration refund slots of the innermost bulk chunk being checked.

    A slot is approved when the verifier reaches its assignment in the chunk body's top-level block
    (so a use before it, which would read the previous iteration's larger refund or an unrelated
    value, is still refused) and the body stores that name nowhere else."""

    __slots__ = ("approved", "body", "stores")

    def __init__(self, body: list[ast.stmt] | None = None) -> None:
        self.body = body
        self.stores: Counter[str] = Counter()
        self.approved: set[str] = set()
        if body is not None:
            for stmt in body:
                for node in walk(stmt):  # ``ast.walk``'s nodes, about twice as fast (issue 16)
                    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                        self.stores[node.id] += 1

    def see(self, stmts: list[ast.stmt], stmt: Any, chunk: ChunkNames | None) -> None:
        """Approve ``stmt``'s target if it is this chunk's refund slot assignment."""
        if stmts is not self.body or len(stmt.targets) != 1:
            return
        target = stmt.targets[0]
        if (
            type(target) in _NAMES
            and type(target.id) is str
            and target.id.startswith("t")
            and self.stores[target.id] == 1
            and is_lazy_refund(stmt.value, chunk)
        ):
            self.approved.add(target.id)


NO_SLOTS = RefundSlots()
"""Outside a bulk chunk (or in a real loop nested in one): no refund slot, none ever approved
(``see`` approves only in a chunk's own body)."""


def refund_problem(arg: Any, chunk: ChunkNames | None, slots: RefundSlots) -> str | None:
    """Why ``arg`` may not stand in a refund position here, or None when it may."""
    if chunk is None:
        return None if _is_name(arg, "lr") else "outside a bulk chunk the loop refund is lr itself"
    if is_lazy_refund(arg, chunk):
        return None
    if type(arg) in _NAMES and type(arg.ctx) is ast.Load and arg.id in slots.approved:
        return None
    return "inside a bulk chunk the loop refund is lr plus the chunk's unstarted iterations"


def iteration_problem(arg: Any, chunk: ChunkNames | None) -> str | None:
    """Why ``arg`` may not be a fast chunk fault's iteration, or None when it may."""
    if chunk is None:
        return "a chunk fault stub outside a bulk chunk"
    return None if _is_name(arg, chunk[1]) else "a chunk fault stub takes its chunk's iteration"


__all__ = [
    "CHUNK_FAULTS",
    "NO_SLOTS",
    "REFUND_AT",
    "ChunkNames",
    "RefundSlots",
    "is_lazy_refund",
    "iteration_problem",
    "refund_problem",
    "unstarted_ok",
]
