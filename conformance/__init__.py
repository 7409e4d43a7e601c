"""The language-neutral conformance corpus (``cases/``) and its runner."""
