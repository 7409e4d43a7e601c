"""Arithmetic safety, one operation at a time, under the path condition that reaches it.

For every integer ``+ - * / %``, unary minus, ``math.abs``, ``math.clamp`` and ``list.get`` the
analyzer states the failure as a condition over the inputs (``a + b > 2^31 - 1 or a + b < -2^31``,
``d == 0 or (n == MIN and d == -1)``, ``i < 0 or i >= count``). If the concrete ranges already rule
it out the operation is PROVED without a solver; otherwise Z3 is asked whether the failure is
possible together with the path condition and the loop facts. ``unsat`` is a proof. A model is a
counterexample only when the operation is surely reached on that input (its operands are exact, the
path to it is a must path with every earlier operation proved safe, and the prefix up to it stays
within every limit); then the verdict is REFUTED, otherwise UNKNOWN with the model as a hint.

A node analysed in several contexts (a private function inlined at two call sites) is PROVED only
if every context proved it.
"""

from __future__ import annotations

from dotboxd.core import ast

from .interface import AnalyzerView as Analyzer
from .report import SafetyFact, Verdict
from .state import State
from .sym import FALSE, Cond


def check_safety(
    an: Analyzer, st: State, node: ast.Node, op: str, fault: Cond, words: str, exact: bool
) -> bool:
    """Decide the safety of ``node`` on this path; record the fact; return True when proved."""
    function = an.function
    pointer = node.pointer
    obligations: tuple[str, ...] = ()
    witness = None
    reason = ""
    if fault == FALSE:
        verdict = Verdict.PROVED
    else:
        ob, result = an.log.ask(
            an.sym,
            kind="safety",
            function=function,
            pointer=pointer,
            claim=f"{op} never fails here ({words})",
            goal=fault,
            premises=st.pc,
            facts=an.facts,
        )
        obligations = (ob.name,) if ob.name else ()
        if result.status == "unsat":
            verdict = Verdict.PROVED
        elif result.status == "sat":
            verdict = Verdict.UNKNOWN
            reason = f"{words} is not excluded on this path"
            confirm = an.refute_arith
            if exact and st.record and not st.lstop and not st.risk and confirm is not None:
                witness = confirm(st, dict(result.model), fault)
                if witness is not None:
                    verdict = Verdict.REFUTED
                    reason = f"{words}: the witness input reaches this operation and it fails"
        else:
            verdict = Verdict.UNKNOWN
            reason = f"the solver could not decide ({result.reason or 'unknown'})"
            confirm = an.refute_arith
            if exact and st.record and not st.lstop and not st.risk and confirm is not None:
                # nonlinear faults (a * b past I32 max) often exhaust the solver's budget, yet a
                # small input found by search and checked by evaluation settles them
                witness = confirm(st, {}, fault)
                if witness is not None:
                    verdict = Verdict.REFUTED
                    reason = f"{words}: the witness input reaches this operation and it fails"
    fact = SafetyFact(function, pointer, op, words, verdict, witness, reason, obligations)
    _merge(an, node, fact)
    return verdict is Verdict.PROVED


def _merge(an: Analyzer, node: ast.Node, fact: SafetyFact) -> None:
    key = f"{fact.function}:{fact.pointer}"
    old = an.safety.get(key)
    if old is not None:
        rank = {Verdict.REFUTED: 0, Verdict.UNKNOWN: 1, Verdict.PROVED: 2}
        keep = old if rank[old.verdict] <= rank[fact.verdict] else fact
        fact = SafetyFact(
            keep.function,
            keep.pointer,
            keep.op,
            keep.fault,
            keep.verdict,
            keep.witness,
            keep.reason,
            old.obligations + fact.obligations,
        )
    an.safety[key] = fact
    if fact.verdict is Verdict.PROVED:
        if id(node) not in an.unsafe_nodes:
            an.safe_nodes.add(id(node))
    else:
        an.safe_nodes.discard(id(node))
        an.unsafe_nodes.add(id(node))
