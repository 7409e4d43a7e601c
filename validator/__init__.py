"""Validation: a module and a host policy -> an immutable ``ExecutionPlan``, or a diagnostic.

``api.validate(module, policy, catalogue)`` runs numbered passes in a fixed order (spec/validation.md):
``binding_catalogue`` (the host's bindings are checked first), ``structure``, ``scopes``,
``typecheck``, ``control_flow``, ``call_graph`` (no recursion; reachability), ``literals``,
``effects``, ``capabilities`` (derived from the IR, never from what the module claims),
``policy_resolution`` (the policy grants all of that, and nothing odd) and ``planning``, which
freezes the passes' findings into ``plan.ExecutionPlan``. ``policy`` is the host's grant set and
limits; ``context`` is the state passes share. ``prover`` proves cost bounds, termination and
arithmetic safety on a plan (Z3), and is what a policy's ``requireStaticBound`` runs.

Invariants. A plan exists only for a module that passed every pass, and backends execute nothing
else; the first failing pass raises ``DotBoxDError`` with its root-cause code, so no run starts
from a half-checked module. Validation reads the module and the policy only: it runs no kernel
code and calls no binding. The validator imports core and grammar, never runtime or host.
"""
