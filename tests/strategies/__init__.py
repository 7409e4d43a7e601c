"""Reusable Hypothesis strategies (``tests.strategies.ast_strategies``: arbitrary import-valid ASTs)."""
