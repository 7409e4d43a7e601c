"""Backends that run an ExecutionPlan under a meter: the reference interpreter and the optimized backend."""
