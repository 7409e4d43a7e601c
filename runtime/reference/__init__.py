"""The reference interpreter: a small tree walker that is the semantic oracle for every backend."""

from dotboxd.runtime.reference.interpreter import ReferenceBackend

__all__ = ["ReferenceBackend"]
