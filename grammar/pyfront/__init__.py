"""The Python front end: a kernel written in restricted, type-annotated Python -> the typed AST.

``lower_python`` reads the file as hostile text (``source``), parses it with the standard ``ast``
module and nothing else (the kernel is never imported, compiled or executed), lowers the supported
subset (``lower``) and refuses everything else at its Python line:column (``refused``). The lowered
module's nodes carry their wire pointers and Python spans, so validation and run-time diagnostics
point back at the ``.py`` file.

The result is then checked exactly as its JSON twin would be: its wire form goes through the wire
importer, the single owner of the name, literal and budget rules, and any rejection is reported at
the Python position of the offending node. So a Python kernel is never accepted when the same
module written as JSON would be refused at import.
"""

from __future__ import annotations

import json

from dotboxd.core import ast
from dotboxd.core.diagnostics import DotBoxDError, Span, reject
from dotboxd.grammar.pyfront.lower import Lowerer
from dotboxd.grammar.pyfront.source import MAX_AST_DEPTH, MAX_SOURCE_BYTES, decode, parse
from dotboxd.grammar.wire import import_module, to_wire


def _span_for(pointer: str, spans: dict[str, Span]) -> Span | None:
    probe = pointer
    span = spans.get(probe)
    while span is None and probe:
        probe = probe.rsplit("/", 1)[0]
        span = spans.get(probe)
    return span


def _check_as_wire(module: ast.Module, spans: dict[str, Span]) -> None:
    """Import the module's wire form strictly; report a rejection at the Python position."""
    try:
        text = json.dumps(to_wire(module), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:  # a float the IR cannot hold (inf from 1e999)
        raise reject(
            "E-JSON-TYPE",
            "a float literal is not finite",
            "",
            _span_for("", spans),
            "f64 literals must lie within +-1.7976931348623157e308",
        ) from None
    try:
        import_module(text)
    except DotBoxDError as exc:
        d = exc.diagnostic
        raise reject(
            d.code, d.message, d.pointer, _span_for(d.pointer, spans), d.hint, **dict(d.evidence)
        ) from None


def lower_python(source: str | bytes, filename: str = "<python>") -> ast.Module:
    """Lower a Python kernel file to a Module (nodes carry wire pointers and Python spans).

    Raises DotBoxDError only: E-PY-SYNTAX (not UTF-8 / not Python), E-PY-UNSUPPORTED (outside the
    subset), E-PY-MODULE (missing or malformed ``module(...)``), E-JSON-LIMIT (size, depth) and the
    wire importer's codes for bad names and literals.
    """
    src = decode(source)
    tree = parse(src, filename)
    lowerer = Lowerer(src)
    module = lowerer.module(tree)
    _check_as_wire(module, lowerer.spans)
    return module


__all__ = ["MAX_AST_DEPTH", "MAX_SOURCE_BYTES", "lower_python"]
