"""Shared, dependency-free foundations: the typed AST, diagnostics, error codes and cost table.

Everything here is imported by the layers above (grammar, validator, runtime, host API, CLI) and
imports nothing from them.
"""
