"""One bad name or literal is reported identically by the wire importer and the text form.

Both builders now raise from the shared ``literals.*_issue`` functions; this table pins that the
two forms agree on code, message, hint, evidence and pointer for each site that uses them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from dotboxd.core.diagnostics import Diagnostic, DotBoxDError
from dotboxd.grammar.text import parse_text
from dotboxd.grammar.wire import import_module

HEADER = 'module "m" version "1.0.0";\n'


def _quoted_name(text: str) -> str:
    """A backtick name for the text form (JSON escapes, plus \\` for a backtick)."""
    return "`" + json.dumps(text)[1:-1].replace("`", "\\`") + "`"


def _wire_returning(value: Any) -> dict[str, Any]:
    fn = {"id": "f", "returnType": "I32", "body": [{"op": "return", "value": value}]}
    return {"id": "m", "version": "1.0.0", "functions": [fn]}


def _text_returning(expr: str) -> str:
    return HEADER + f"fn f() -> I32 {{\n    return {expr};\n}}\n"


def _wire_header(**extra: Any) -> dict[str, Any]:
    return {"id": "m", "version": "1.0.0", "functions": [], **extra}


# (case id, wire document, text source, expected code)
CASES: list[tuple[str, Any, str, str]] = [
    ("blank module id", {"id": " ", "version": "1", "functions": []}, 'module " " version "1";', "E-IR-ID"),
    (
        "module id naming the host",
        {"id": "System.IO", "version": "1", "functions": []},
        'module "System.IO" version "1";',
        "E-IR-CLR-REF",
    ),
    (
        "control character in a capability id",
        _wire_header(capabilityRequests=[{"id": "a\u0007"}]),
        HEADER + 'requires "a\\u0007";',
        "E-IR-ID",
    ),
    (
        "reason naming IL",
        _wire_header(capabilityRequests=[{"id": "a", "reason": "via rawIL"}]),
        HEADER + 'requires "a" reason "via rawIL";',
        "E-IR-CLR-REF",
    ),
    ("blank metadata key", _wire_header(metadata={"\t": "v"}), HEADER + 'meta "\\t" = "v";', "E-IR-ID"),
    (
        "metadata value naming an assembly",
        _wire_header(metadata={"k": "Culture=neutral"}),
        HEADER + 'meta "k" = "Culture=neutral";',
        "E-IR-CLR-REF",
    ),
    (
        "blank function id",
        {"id": "m", "version": "1", "functions": [{"id": "", "returnType": "I32", "body": []}]},
        HEADER + "fn ``() -> I32 {}",
        "E-IR-ID",
    ),
    ("blank variable", _wire_returning({"var": "  "}), _text_returning(_quoted_name("  ")), "E-IR-ID"),
    (
        "call naming an IL opcode",
        _wire_returning({"call": "ldftn", "args": []}),
        _text_returning("ldftn()"),
        "E-IR-CLR-REF",
    ),
    ("short guid", _wire_returning({"guid": "0123-45"}), _text_returning('guid"0123-45"'), "E-JSON-GUID"),
    (
        "absolute path",
        _wire_returning({"path": "/etc/passwd"}),
        _text_returning('path"/etc/passwd"'),
        "E-JSON-PATH",
    ),
    (
        "device path",
        _wire_returning({"path": "a/CON.txt"}),
        _text_returning('path"a/CON.txt"'),
        "E-JSON-PATH",
    ),
    ("empty segment", _wire_returning({"path": "a//b"}), _text_returning('path"a//b"'), "E-JSON-PATH"),
    ("path naming a dll", _wire_returning({"path": "x.dll"}), _text_returning('path"x.dll"'), "E-IR-CLR-REF"),
    (
        "uri with userinfo",
        _wire_returning({"uri": "https://u@h/x"}),
        _text_returning('uri"https://u@h/x"'),
        "E-JSON-URI",
    ),
    ("relative uri", _wire_returning({"uri": "file.json"}), _text_returning('uri"file.json"'), "E-JSON-URI"),
    (
        "string naming reflection",
        _wire_returning({"string": "System.Reflection"}),
        _text_returning('"System.Reflection"'),
        "E-IR-CLR-REF",
    ),
    (
        "lower-case brand",
        _wire_returning({"opaqueId": {"type": "playerId", "value": "p"}}),
        _text_returning('opaque playerId "p"'),
        "E-JSON-OPAQUE",
    ),
    (
        "brand naming a loader",
        _wire_returning({"opaqueId": {"type": "Loader", "value": "p"}}),
        _text_returning('opaque Loader "p"'),
        "E-IR-CLR-REF",
    ),
    (
        "opaque value with a space",
        _wire_returning({"opaqueId": {"type": "P", "value": "p 1"}}),
        _text_returning('opaque P "p 1"'),
        "E-JSON-OPAQUE",
    ),
    (
        "long opaque value (message quotes 80 characters)",
        _wire_returning({"opaqueId": {"type": "P", "value": "x" * 300}}),
        _text_returning(f'opaque P "{"x" * 300}"'),
        "E-JSON-OPAQUE",
    ),
]


def _diagnostic(parse: Any, source: str) -> Diagnostic:
    with pytest.raises(DotBoxDError) as info:
        parse(source)
    return info.value.diagnostic


@pytest.mark.parametrize(("wire", "text", "code"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_wire_and_text_report_a_bad_name_or_literal_identically(wire: Any, text: str, code: str) -> None:
    from_wire = _diagnostic(import_module, json.dumps(wire))
    from_text = _diagnostic(parse_text, text)
    assert from_wire.code == code
    assert (from_text.code, from_text.message) == (from_wire.code, from_wire.message)
    assert (from_text.hint, from_text.evidence) == (from_wire.hint, from_wire.evidence)
    assert from_text.pointer == from_wire.pointer
