"""The reference interpreter: a small tree walker that is the semantic oracle for every backend.

``ReferenceBackend`` walks the validated module of a plan node by node, charging the meter exactly
as ``spec/costs.md`` says at each node and calling ``dotboxd.core`` for every operator and
``dotboxd.runtime.intrinsics`` for every built-in. It is deliberately plain: no caching, no fast
paths, no code generation, so that reading it is reading the semantics.

Invariant. Where the optimized backend and this one disagree, this one is right by definition and
the difference is a bug in the other (the conformance corpus and the differential tests run both).
"""

from dotboxd.runtime.reference.interpreter import ReferenceBackend

__all__ = ["ReferenceBackend"]
