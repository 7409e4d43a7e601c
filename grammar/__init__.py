"""Front end: hostile bytes or text -> the typed AST (``dotboxd.core.ast``), and back.

A module arrives in one of three forms, and all three give the same tree and the same module hash:

* ``wire``: the JSON wire format, imported strictly (``jsonscan`` bounds the document first:
  size, depth, token count, duplicate keys, encodings);
* ``text``: the readable form, parsed with the Lark grammar ``kernel.lark`` (``text_syntax`` for
  lexing and reserved words, ``text_build`` from parse tree to AST);
* ``pyfront``: restricted, type-annotated Python, read as text and lowered, never executed.

``source`` picks the form of a file or byte string; ``formatter`` prints any AST as text;
``canonical`` computes the canonical encoding and the module hash from the AST alone (never from
source text); ``literals`` holds the identifier and literal rules the importers share.

Invariants. Import is total and bounded: every input, however hostile, either becomes a module or
raises ``DotBoxDError`` with a stable ``E-JSON-``/``E-IR-``/``E-TEXT-``/``E-PY-`` code, a JSON
pointer and, for text, ``line:column``, within budgets fixed before reading. Import checks shape
only; meaning (names, types, effects, policy) is the validator's job. Every node keeps its wire
pointer and source span so later diagnostics point back at the author's file.
"""
