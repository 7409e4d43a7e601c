"""Proof facts for the code generator: the arithmetic nodes the Z3 prover PROVED can never fault.

Why a module of its own: code generation is a pure function of (plan, options, facts), so it can be
tested, cached and verified without a solver; running the prover (``dotboxd.validator.prover``) is a
step of compiling, done here just before generation, only for hosts whose ``GenOptions.proofs`` asks
for it. Dropping a check is sound only for a node in ``ProofReport.safe_nodes``: the prover's PROVED
verdict for that node on every run; anything else keeps its inline check.
"""

from __future__ import annotations

from dotboxd.validator.plan import ExecutionPlan

from .codegen import GenOptions


def proof_facts(plan: ExecutionPlan, options: GenOptions) -> frozenset[int]:
    """The ``id`` of every node of ``plan`` proved never to fault; empty when proofs are off."""
    if not options.proofs:
        return frozenset()
    # Imported here so that hosts that never ask for proofs never load Z3 (about a second).
    from dotboxd.validator.prover import prove_plan

    return prove_plan(plan).safe_nodes
