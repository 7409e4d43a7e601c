"""Every code the validator layer can emit is registered once and documented in spec/validation.md."""

from __future__ import annotations

import re
from pathlib import Path

from dotboxd.core.bindings import canonical_record
from dotboxd.core.codes import Category, all_codes
from dotboxd.grammar.canonical import encode_record

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [
    *sorted((ROOT / "validator").glob("*.py")),
    *(ROOT / "dotboxd" / "core" / f for f in ("types.py", "builtins.py", "bindings.py")),
    ROOT / "dotboxd" / "cli" / "cmd_check.py",
]
CODE = re.compile(r'"([EW]-[A-Z0-9]+(?:-[A-Z0-9]+)+)"')


def emitted_codes() -> set[str]:
    found: set[str] = set()
    for path in SOURCES:
        if path.name.startswith("prover"):
            continue
        found |= set(CODE.findall(path.read_text(encoding="utf-8")))
    return found


def test_every_emitted_code_is_registered() -> None:
    registered = all_codes()
    missing = sorted(c for c in emitted_codes() if c not in registered)
    assert missing == []


def test_every_emitted_code_is_documented_with_its_category() -> None:
    spec = (ROOT / "spec" / "validation.md").read_text(encoding="utf-8")
    undocumented = sorted(
        c for c in emitted_codes() if f"`{c}`" not in spec and not c.startswith("E-BINDING-")
    )
    assert undocumented == []
    assert "`E-BINDING-REQUIRED` … `E-BINDING-DUP`" in spec
    for code in ("E-BINDING-ID", "E-BINDING-DANGER", "E-BINDING-COMPILED", "E-BINDING-MANIFEST"):
        assert f"`{code}`" in spec


def test_policy_codes_are_policy_denied_and_the_rest_validation_errors() -> None:
    for code in emitted_codes():
        info = all_codes()[code]
        expected = Category.POLICY_DENIED if code.split("-")[1] == "POLICY" else Category.VALIDATION
        assert info.category is expected, code


def test_canonical_record_field_encoding() -> None:
    # spec/canonical.md section 2: null -> n; ; text -> s<utf16 length of the escaped text>:<escaped>;
    assert canonical_record(None, "ab", 12, True) == "n;s2:ab;s2:12;s4:true;"
    assert canonical_record("a\\b\n\t\r\x01") == "s16:a\\\\b\\n\\t\\r\\u0001;"
    assert canonical_record("\U0001f600") == "s2:\U0001f600;"
    # and it is the grammar layer's encoding (an independent implementation of that encoding)
    for fields in (("policy", None, "x;y", "tab\there"), ("\x7f\x85", "\u00e9\U0001f600", "")):
        assert canonical_record(*fields) == encode_record(*fields)
