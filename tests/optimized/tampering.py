"""The one tampered-AST harness of the verifier tests of generated forms (owned lists, maps and
texts, list-read views).

Why: the verifier must not trust the code generator, so each new form of generated code gets tests
that rewrite one spot of a real generated module and expect ``bind`` (which verifies before it
compiles) to refuse it, next to a test that the untouched module passes.
"""

from __future__ import annotations

import ast
import copy

import pytest

from dotboxd.runtime.optimized.artifact import ArtifactKey, bind
from dotboxd.runtime.optimized.codegen import GenOptions, generate
from dotboxd.runtime.optimized.errors import VerifierFailure

from .kernels import prepare


class Tampering:
    """One kernel's plan, its generated module and the artifact key to bind it under, bound as
    generated or with one piece of its source replaced."""

    def __init__(self, text: str, options: GenOptions | None = None) -> None:
        options = options or GenOptions()
        self.plan = prepare(text)
        self.generated = generate(self.plan, options)
        self.key = ArtifactKey.for_plan(self.plan, options)

    def source(self) -> str:
        return ast.unparse(self.generated.module)

    def bind(self, module: ast.Module | None = None) -> None:
        """Verify and bind ``module`` (default: a copy of the generated one) as the kernel's code."""
        generated = self.generated
        if module is None:
            module = copy.deepcopy(generated.module)
        bind(self.plan, self.key, module, copy.deepcopy(generated.tables), generated.ir_nodes)

    def assert_rejected(self, rewrite: str, replacement: str, match: str | None = None) -> None:
        """Replace the first ``rewrite`` in the module's source by ``replacement``: refused (for a
        reason matching ``match``, when given)."""
        source = self.source()
        assert rewrite in source, rewrite
        module = ast.parse(source.replace(rewrite, replacement, 1))
        with pytest.raises(VerifierFailure, match=match):
            self.bind(module)


__all__ = ["Tampering"]
