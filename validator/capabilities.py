"""Pass 9, capabilities: what the module needs, derived from the IR alone (never from a manifest).

Invariants established (spec/validation.md section 9):

* the required capabilities are exactly the capabilities of the host bindings called by live code
  of functions reachable from an entrypoint, plus ``dotboxd.runtime.async`` for every async binding
  among them, plus the entries of the ``dotboxd.requiredCapabilities`` metadata (which can only add);
  capability requests are *not* a source: a request is never a grant and never a need;
* each required capability carries evidence: the shortest call path from an entrypoint to the
  binding that needs it (``main -> helper -> file.readText``) and that call's pointer;
* the module's required effects are the union of its entrypoints' total effects, and each non-pure
  effect bit records the path that introduces it.

Private functions are followed through every call, so a capability cannot be laundered by hiding the
binding call behind helpers; unreachable functions contribute nothing because no run can enter them.
"""

from __future__ import annotations

from dotboxd.core.effects import EFFECT_NAMES, PURE, Effect

from .context import Context
from .structure import METADATA_CAPABILITIES


def run(ctx: Context) -> None:
    required = ctx.required_capabilities
    impure_bits = [int(bit) for bit in EFFECT_NAMES if not bit & PURE]
    for fid, path in ctx.reachable.items():  # BFS order: shortest paths first
        for bid, call in ctx.facts[fid].live_bindings.items():
            binding = ctx.catalog[bid]
            evidence = (*path, bid)
            for cap in binding.required_capabilities:
                if cap not in required:
                    required[cap] = evidence
                    ctx.capability_origins[cap] = (call.pointer, call.span)
            effects = int(binding.required_effects)
            for bit in impure_bits:
                if effects & bit and bit not in ctx.effect_origins:
                    ctx.effect_origins[bit] = evidence
    for cap in ctx.metadata_capabilities:
        if cap not in required:
            required[cap] = (f"metadata:{METADATA_CAPABILITIES}",)
            ctx.capability_origins[cap] = (f"{ctx.module.pointer}/metadata", None)
    effects = Effect.NONE
    for entry in ctx.entrypoints:
        effects |= ctx.facts[entry].effects
    ctx.required_effects = effects
