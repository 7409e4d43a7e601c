"""Shared foundations: the definitions every layer reads and none may redefine.

What lives here:

* the kernel's shape and meaning: ``ast`` (typed IR nodes), ``types`` (sandbox types), ``values``
  (immutable sandbox values), ``arith`` (numeric operator semantics), ``textops`` and ``utf16``
  (string built-ins measured in UTF-16 code units), ``builtins`` (the built-in catalogue: names,
  typing, effects, purity), ``effects`` (the effect bit set);
* what a run costs: ``costs``, the one cost table (fuel and allocation per operation);
* how things fail: ``codes`` (the registry of stable ``E-``/``W-``/``R-`` codes) and ``diagnostics``
  (the one ``Diagnostic`` type with code, JSON pointer, ``line:column``, message and hint);
* host bindings: ``bindings`` (descriptor, decorator, registry checks, catalogue, manifest records);
* bounded input: ``jsonscan`` (the budgeted JSON scanner with source offsets), ``jsonread`` (every
  other JSON document) and ``visible`` (untrusted text made safe to print).

Invariants. Core imports nothing from the other layers (grammar, validator, runtime, host, CLI;
``tests/architecture/test_layering.py`` enforces it) and touches no file, socket or clock, so
every layer and the prover can depend on it freely. An operation's semantics, cost and failure
codes are defined here once; both backends and the prover consume these definitions rather than
restating them, which is what lets the reference interpreter and the optimized backend agree
exactly on values, errors, fuel and usage.
"""
