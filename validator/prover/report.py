"""What the prover hands back: verdicts per function and per limit, with their evidence.

Three verdicts, as everywhere in dotboxd:

* ``PROVED``: Z3 showed the claim for every input the preconditions allow (declared types, the
  policy's ``inputBounds``, the meter's size limits); the certificate is the symbolic bound and
  the obligation that was ``unsat``;
* ``REFUTED``: a concrete input for which the claim fails (for a budget: the run on that input is
  stopped by a quota; the prover shows how much it surely needs);
* ``UNKNOWN``: neither; runtime metering decides, exactly as if the prover had not run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from .obligations import Obligation
from .smt import SOLVER_MEMORY_MB


class Verdict(StrEnum):
    PROVED = "PROVED"
    REFUTED = "REFUTED"
    UNKNOWN = "UNKNOWN"


@dataclass(frozen=True, slots=True)
class Witness:
    """A concrete input: typed JSON arguments (the ``dotboxd run --args`` encoding) and a short
    human description of each."""

    args: tuple[Any, ...]
    described: tuple[tuple[str, str], ...]

    def text(self) -> str:
        return ", ".join(f"{name}={desc}" for name, desc in self.described) or "no inputs"

    def to_json(self) -> dict[str, Any]:
        return {"args": list(self.args), "described": dict(self.described)}


@dataclass(frozen=True, slots=True)
class BudgetVerdict:
    """One limit of one function."""

    resource: str  # fuel | loopIterations | hostCalls | allocatedBytes | bindingCalls:<id>
    limit: int | None
    verdict: Verdict
    bound: str  # the symbolic worst case over the inputs, or "unbounded"
    bound_max: int | None  # its maximum under the preconditions (interval estimate), None if unbounded
    method: str = ""  # z3 | interval (PROVED) ; z3 (REFUTED)
    witness: Witness | None = None
    reached: int | None = None  # REFUTED: the cost the witness surely needs
    reason: str = ""
    hint: str = ""
    obligations: tuple[str, ...] = ()

    @property
    def estimated_factor(self) -> float | None:
        if self.bound_max is None or not self.limit:
            return None
        return self.bound_max / self.limit

    @property
    def factor(self) -> float | None:
        if self.reached is None or not self.limit:
            return None
        return self.reached / self.limit

    def message(self) -> str:
        """One line a reviewer reads without the spec: what is proved, what is refuted (with the
        input), and what is only an estimate (said to be one)."""
        lim = "no limit" if self.limit is None else f"{self.limit:,}"
        if self.verdict is Verdict.PROVED:
            worst = f"{self.bound_max:,}" if self.bound_max is not None else "?"
            return f"PROVED  {self.resource} <= {worst} (limit {lim}); bound {self.bound}"
        if self.verdict is Verdict.REFUTED:
            assert self.witness is not None and self.reached is not None
            return (
                f"REFUTED {self.resource}: proved that the input {self.witness.text()} needs at least "
                f"{self.reached:,} where the limit is {lim}, so a run on it is stopped by the quota; "
                f"{self.hint}"
            )
        est = ""
        if self.estimated_factor is not None and self.estimated_factor > 1:
            est = (
                f"; estimate only, not a proof: the upper bound's worst case is "
                f"{self.estimated_factor:,.1f}x the limit"
            )
        return (
            f"UNKNOWN {self.resource}: neither proved nor refuted ({self.reason}); runtime metering decides"
            + est
            + (f"; {self.hint}" if self.hint else "")
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "resource": self.resource,
            "limit": self.limit,
            "verdict": self.verdict.value,
            "bound": self.bound,
            "boundMax": self.bound_max,
        }
        if self.method:
            out["method"] = self.method
        if self.witness is not None:
            out["witness"] = self.witness.to_json()
        if self.reached is not None:
            out["reached"] = self.reached
            out["factor"] = round(self.factor or 0.0, 3)
        if self.estimated_factor is not None:
            out["estimatedFactor"] = round(self.estimated_factor, 3)
        if self.reason:
            out["reason"] = self.reason
        if self.hint:
            out["hint"] = self.hint
        out["obligations"] = list(self.obligations)
        out["message"] = self.message()
        return out


@dataclass(frozen=True, slots=True)
class LoopFact:
    """How a loop was shown to terminate, and its trip-count bound."""

    function: str
    pointer: str
    kind: str  # forRange | while
    verdict: Verdict
    method: str  # "structural" | "ranking function r = ..." | reason
    iterations: str  # bound per entry into the loop, or "unbounded"
    obligations: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "function": self.function,
            "pointer": self.pointer,
            "kind": self.kind,
            "verdict": self.verdict.value,
            "method": self.method,
            "iterations": self.iterations,
            "obligations": list(self.obligations),
        }


@dataclass(frozen=True, slots=True)
class SafetyFact:
    """Arithmetic safety of one operation (overflow, division by zero, index, clamp range)."""

    function: str
    pointer: str
    op: str
    fault: str  # what could go wrong, as a formula in words
    verdict: Verdict
    witness: Witness | None = None
    reason: str = ""
    obligations: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "function": self.function,
            "pointer": self.pointer,
            "op": self.op,
            "fault": self.fault,
            "verdict": self.verdict.value,
        }
        if self.witness is not None:
            out["witness"] = self.witness.to_json()
        if self.reason:
            out["reason"] = self.reason
        out["obligations"] = list(self.obligations)
        return out


@dataclass(frozen=True, slots=True)
class FunctionProof:
    """Everything proved about one function (an entrypoint: one run; a private function: one call
    with any arguments of its parameter types)."""

    function: str
    entrypoint: bool
    budgets: tuple[BudgetVerdict, ...]
    loops: tuple[LoopFact, ...]
    safety: tuple[SafetyFact, ...]
    call_depth: int
    note: str = ""

    @property
    def verdict(self) -> Verdict:
        """PROVED if every budget is; REFUTED if one is; else UNKNOWN."""
        kinds = {b.verdict for b in self.budgets}
        if Verdict.REFUTED in kinds:
            return Verdict.REFUTED
        if kinds <= {Verdict.PROVED}:
            return Verdict.PROVED
        return Verdict.UNKNOWN

    def budget(self, resource: str) -> BudgetVerdict | None:
        for b in self.budgets:
            if b.resource == resource:
                return b
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "function": self.function,
            "entrypoint": self.entrypoint,
            "verdict": self.verdict.value,
            "callDepth": self.call_depth,
            "budgets": [b.to_json() for b in self.budgets],
            "loops": [x.to_json() for x in self.loops],
            "safety": [x.to_json() for x in self.safety],
            "note": self.note,
        }


@dataclass(frozen=True)
class ProofReport:
    """The prover's result for one plan."""

    module: str
    module_hash: str
    policy_hash: str
    z3_version: str
    functions: tuple[FunctionProof, ...]
    obligations: tuple[Obligation, ...] = ()
    safe_nodes: frozenset[int] = field(default_factory=frozenset, compare=False, repr=False)
    """``id()`` of every arithmetic node of ``plan.module`` proved never to fault on any run (the
    optimized backend may drop its check)."""
    _bounds: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    solver_work: int = field(default=0, compare=False)
    """Z3 work units (rlimit) spent on the module: never more than its ``proveRlimit``."""
    solver_memory_mb: float = field(default=0.0, compare=False)
    """The most memory Z3's allocator held at the end of any query of the module (MiB, process-wide:
    it includes other live Z3 contexts); every query is capped at ``smt.SOLVER_MEMORY_MB``."""

    def function(self, function_id: str) -> FunctionProof:
        for f in self.functions:
            if f.function == function_id:
                return f
        raise KeyError(function_id)

    def entrypoints(self) -> tuple[FunctionProof, ...]:
        return tuple(f for f in self.functions if f.entrypoint)

    def all_proved(self) -> bool:
        """Every budget of every entrypoint is PROVED (the strict-mode install condition)."""
        return all(f.verdict is Verdict.PROVED for f in self.entrypoints())

    def counts(self) -> dict[str, int]:
        out = {v.value: 0 for v in Verdict}
        for f in self.functions:
            out[f.verdict.value] += 1
        return out

    def bound_at(self, function_id: str, resource: str, args: Any) -> int | None:
        """The symbolic bound of ``resource`` evaluated on concrete entrypoint arguments (sandbox
        values or Python natives), or None when unbounded or not analysed."""
        evaluator = self._bounds.get(function_id)
        if evaluator is None:
            return None
        result: int | None = evaluator.evaluate(resource, args)
        return result

    def admits(self, function_id: str, args: Any) -> bool:
        """Do concrete arguments satisfy the preconditions the bounds of ``function_id`` assume?"""
        evaluator = self._bounds.get(function_id)
        return bool(evaluator is not None and evaluator.admits(args))

    def to_json(self) -> dict[str, Any]:
        return {
            "module": self.module,
            "moduleHash": self.module_hash,
            "policyHash": self.policy_hash,
            "z3": self.z3_version,
            "counts": self.counts(),
            "allProved": self.all_proved(),
            "functions": [f.to_json() for f in self.functions],
            "obligations": [o.to_json() for o in self.obligations],
            "solver": {"workUnits": self.solver_work, "memoryCapMiB": SOLVER_MEMORY_MB},
        }

    def resources_json(self) -> dict[str, Any]:
        """What the prover spent, with the Z3 memory it saw: ``to_json``'s ``solver`` plus
        ``peakMemoryMiB``. Kept out of ``to_json`` because Z3's allocator is shared by the whole
        process, so that number depends on what ran before (the report itself must not)."""
        return {
            "workUnits": self.solver_work,
            "peakMemoryMiB": round(self.solver_memory_mb, 2),
            "memoryCapMiB": SOLVER_MEMORY_MB,
        }

    def write_smt(self, directory: str | Path) -> list[Path]:
        """Write every obligation as ``<name>.smt2`` plus ``index.json`` (name -> expected answer)."""
        root = Path(directory)
        root.mkdir(parents=True, exist_ok=True)
        written: list[Path] = []
        index: dict[str, dict[str, str]] = {}
        for ob in self.obligations:
            path = root / f"{ob.name}.smt2"
            path.write_text(ob.smt, encoding="utf-8")
            written.append(path)
            index[path.name] = {"status": ob.status, "kind": ob.kind, "claim": ob.claim, "sha256": ob.digest}
        (root / "index.json").write_text(json.dumps(index, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return written
