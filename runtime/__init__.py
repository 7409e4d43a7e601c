"""Execution: an ``ExecutionPlan`` run metered, on the reference interpreter or the optimized backend.

``execution`` is the part of a run every backend shares (arguments in, result out, commands applied
or discarded); ``context`` is one run's state and the narrow view a binding receives; ``meter``
enforces every limit and records ``ResourceUsage``; ``intrinsics`` implements the built-ins with
their exact charges; ``binding_call`` and ``awaiting``/``suspend`` are the host-binding call
sequence, sync and async; ``commands`` and ``command_batch`` queue host-state writes and apply them
only when the run succeeds; ``audit`` orders and sanitizes audit events; ``errors`` and
``locations`` say what failed and where; ``stack`` keeps a kernel's depth independent of the host's
own stack. The backends are ``reference`` (the tree-walking oracle), ``optimized`` (verified
generated Python) and ``facades`` (the Python behind the standard file, http, clock and log bindings).

Invariants. Both backends must agree exactly - value, error code and location, fuel and every
usage counter - so arithmetic, costs and built-ins come from ``dotboxd.core`` and ``intrinsics``
and are never re-derived by a backend. Every real cost is charged in proportion to the work. A
failed run leaves host state unchanged (its queued commands are
dropped). The runtime imports core, grammar and validator, never host or above.
"""
