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

from . import smt
from .sym import Cond, Sym


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

    def __init__(self, rlimit: int = smt.DEFAULT_RLIMIT, max_queries: int = 400) -> None:
        self.rlimit = rlimit
        self.max_queries = max_queries
        self.obligations: list[Obligation] = []
        self._queries = 0
        self._names: dict[str, int] = {}

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
        name = self._name(kind, function)
        header = [
            "dotboxd proof obligation",
            f"kind: {kind}",
            f"function: {function}",
            f"at: {pointer or '/'}",
            f"claim: {claim}",
            f"{expect} establishes the claim",
        ]
        text = smt.render(sym, goal, premises, facts or {}, header, self.rlimit)
        if self._queries >= self.max_queries:
            result = smt.SolveResult("unknown", reason="the module's obligation budget is spent")
        else:
            self._queries += 1
            result = smt.solve(text, self.rlimit)
        ob = Obligation(name, kind, function, pointer, claim, text, result.status)
        self.obligations.append(ob)
        return ob, result

    def _name(self, kind: str, function: str) -> str:
        safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in function)[:40] or "fn"
        base = f"{safe}.{kind}"
        n = self._names.get(base, 0) + 1
        self._names[base] = n
        return f"{base}.{n:03d}"
