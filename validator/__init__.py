"""Validation passes (structure, names, types, effects, capabilities, bindings, policy) and the prover."""
