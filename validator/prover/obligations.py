"""Proof obligations: every question the prover asks Z3, kept as replayable evidence.

An :class:`Obligation` is one SMT-LIB2 script plus what it means (kind, function, IR pointer, the
claim in words) and the answer Z3 gave. ``ObligationLog`` solves them one at a time under a
per-query ``rlimit`` and a per-module total, so a module can never make the prover work without
bound: once the total is spent, further questions are answered ``unknown`` without calling Z3
(which is deterministic, because rlimit spending is).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import smt
from .sym import FALSE, Cond, Sym

MIN_RLIMIT = 20_000

MAX_DEGREE = {"safety": 2, "ranking": 2, "invariant": 2}
"""Z3's nonlinear integer search has no useful cost bound: obligations of a higher polynomial
degree than this (default 4) are answered ``unknown`` without asking it."""

MODULE_STEPS = 300_000
"""Abstract evaluation steps for all the functions of one module together."""

KIND_SHARE = {"safety": 10, "ranking": 50, "invariant": 10}
"""Percent of the per-query rlimit by kind: a budget or counterexample question matters more than
one operation's safety (an unproved operation only keeps its run-time check)."""


@dataclass(frozen=True, slots=True)
class Obligation:
    """One solved SMT question. ``status`` is Z3's answer; ``expect`` what a replay must print."""

    name: str
    kind: str  # budget | refute | ranking | safety
    function: str
    pointer: str
    claim: str
    smt: str
    status: str

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.smt.encode("utf-8")).hexdigest()

    def to_json(self) -> dict[str, str]:
        return {
            "name": self.name,
            "kind": self.kind,
            "function": self.function,
            "pointer": self.pointer,
            "claim": self.claim,
            "status": self.status,
            "sha256": self.digest,
        }


class ObligationLog:
    """Solves and records the obligations of one module."""

    def __init__(
        self,
        rlimit: int = smt.DEFAULT_RLIMIT,
        total: int = smt.MODULE_RLIMIT,
        max_queries: int = 600,
        max_recorded: int = 1500,
    ) -> None:
        self.rlimit = rlimit
        self.left = total
        self.max_queries = max_queries
        self.max_recorded = max_recorded
        self.obligations: list[Obligation] = []
        self._queries = 0
        self._names: dict[str, int] = {}
        self._ctx: Any = None
        self.steps_left = MODULE_STEPS
        self.total = total
        self.spent = ""  # why questions went unasked, once the module's budget ran out
        self.peak_memory_mb = 0.0  # the most Z3 memory seen at the end of a query of this module

    def begin(self) -> None:
        """Start a new function: its queries get a fresh Z3 context."""
        self._ctx = None

    def ask(
        self,
        sym: Sym,
        *,
        kind: str,
        function: str,
        pointer: str,
        claim: str,
        goal: Cond,
        premises: Sequence[Cond] = (),
        facts: Mapping[int, Sequence[Cond]] | None = None,
        expect: str = "unsat",
    ) -> tuple[Obligation, smt.SolveResult]:
        """Solve "can ``goal`` hold under ``premises``?" and record it. ``expect`` is the answer
        that would establish ``claim`` (``unsat`` for proofs, ``sat`` for counterexamples)."""
        if (
            self._queries >= self.max_queries
            or self.left < MIN_RLIMIT
            or len(self.obligations) >= self.max_recorded
        ):
            if self.left < MIN_RLIMIT:
                self.spent = (
                    f"the module's prove budget is spent (proveRlimit: {self.total:,} Z3 work units): "
                    "questions asked after that are UNKNOWN"
                )
            else:
                self.spent = (
                    f"the module's prover question cap is reached ({self.max_queries} solver queries): "
                    "questions asked after that are UNKNOWN"
                )
            spent = Obligation("", kind, function, pointer, claim, "", "unknown")
            return spent, smt.SolveResult("unknown", reason=self.spent)
        name = self._name(kind, function)
        header = [
            "dotboxd proof obligation",
            f"kind: {kind}",
            f"function: {function}",
            f"at: {pointer or '/'}",
            f"claim: {claim}",
            f"{expect} establishes the claim",
        ]
        rlimit = min(self.rlimit * KIND_SHARE.get(kind, 100) // 100, self.left)
        text = smt.render(sym, goal, premises, facts or {}, header, max(rlimit, 1))
        degree = max([sym.cond_degree(goal), *(sym.cond_degree(c) for c in premises)])
        if goal == FALSE or FALSE in premises:
            result = smt.SolveResult("unsat")  # decided by the concrete ranges: nothing to search
        elif degree > MAX_DEGREE.get(kind, 4):
            result = smt.SolveResult("unknown", reason=f"nonlinear of degree {degree}: not asked")
        else:
            self._queries += 1
            if self._ctx is None:
                self._ctx = smt.new_context()
            result = smt.solve(text, rlimit, ctx=self._ctx)
            self.left -= result.used
            self.peak_memory_mb = max(self.peak_memory_mb, result.memory_mb)
        ob = Obligation(name, kind, function, pointer, claim, text, result.status)
        self.obligations.append(ob)
        return ob, result

    def _name(self, kind: str, function: str) -> str:
        safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in function)[:40] or "fn"
        base = f"{safe}.{kind}"
        n = self._names.get(base, 0) + 1
        self._names[base] = n
        return f"{base}.{n:03d}"
