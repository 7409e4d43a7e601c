"""Defences against look-alike names and terminal injection (T-IMP-12) and against host references
and id traversal hidden in names and strings (T-IMP-06, T-IMP-13).

* Identifiers refuse the characters that make two different names print the same or reorder what a
  reader sees: bidi embeddings/overrides/isolates/marks, zero-width characters, the BOM, the line and
  paragraph separators (``E-IR-ID``), in both source forms.
* Every diagnostic and every CLI output escapes control and format characters, including the quoted
  source line under a caret: an ESC sequence in a comment must not reach the reviewer's terminal.
* The host-reference scan catches DotBoxD's fragments inside camelCase/snake_case descriptor names
  (``rawIlBytes``) in every string position, metadata values included.
* An opaque-id value carrying ``..`` is ``E-JSON-ID``.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dotboxd.cli.main import main
from dotboxd.conformance.tools import make_trojan_cases as trojan_cases
from dotboxd.core.diagnostics import DotBoxDError, Span
from dotboxd.grammar.text import parse_text
from dotboxd.grammar.wire import import_module
from tests.threat_model.test_import_threats import corpus_slice

#: Characters that hide in or reorder a name. Each must be refused in identifiers.
INVISIBLES = {
    "zero-width-space": "\u200b",
    "zero-width-joiner": "\u200d",
    "word-joiner": "\u2060",
    "bom": "\ufeff",
    "rlo-override": "\u202e",
    "lre-embedding": "\u202a",
    "rli-isolate": "\u2067",
    "pdi-isolate-end": "\u2069",
    "rlm-mark": "\u200f",
    "arabic-letter-mark": "\u061c",
    "soft-hyphen": "\u00ad",
    "line-separator": "\u2028",
    "paragraph-separator": "\u2029",
    "tag-character": "\U000e0041",
}

#: Raw bytes a terminal obeys or that reorder a line (ESC sequences, C1 CSI, bidi, zero width).
TERMINAL_CONTROLS = ("\x1b", "\x9b", "\x07", "\x08", "\r", "\u202e", "\u2066", "\u200b")


def wire_module(module_id: str = "m", fn_id: str = "main", **extra: Any) -> str:
    return json.dumps(
        {
            "id": module_id,
            "version": "1.0.0",
            **extra,
            "functions": [
                {
                    "id": fn_id,
                    "visibility": "entrypoint",
                    "returnType": "I32",
                    "body": [{"op": "return", "value": {"i32": 1}}],
                }
            ],
        }
    )


def rejection(call: Any, *args: Any) -> DotBoxDError:
    with pytest.raises(DotBoxDError) as info:
        call(*args)
    return info.value


def cli(*args: str) -> tuple[int, str, str]:
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.buffer.getvalue().decode("utf-8"), err.buffer.getvalue().decode("utf-8")


def assert_no_terminal_controls(text: str) -> None:
    raw = [f"U+{ord(ch):04X}" for ch in text if ch != "\n" and not ch.isprintable()]
    assert raw == [], text


# --- T-IMP-12: look-alike identifiers ------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(INVISIBLES))
def test_trojan_source_characters_are_refused_in_wire_identifiers(name: str) -> None:
    ch = INVISIBLES[name]
    for text, pointer in (
        (wire_module(module_id="m" + ch), "/id"),
        (wire_module(fn_id="main" + ch), "/functions/0/id"),
        (wire_module(fn_id=ch + "main"), "/functions/0/id"),
        (wire_module(metadata={"k" + ch: "v"}), "/metadata/k" + ch),
    ):
        error = rejection(import_module, text)
        assert (error.code, error.diagnostic.pointer) == ("E-IR-ID", pointer), name
        assert f"U+{ord(ch):04X}" in error.diagnostic.message


@pytest.mark.parametrize("name", sorted(INVISIBLES))
def test_trojan_source_characters_are_refused_in_text_identifiers(name: str) -> None:
    escape = json.dumps(INVISIBLES[name])[1:-1]  # the JSON/text-form escape, e.g. \u200b
    for source, pointer in (
        (f'module "m{escape}" version "1.0.0";\nentrypoint fn main() -> I32 {{ return 1; }}\n', "/id"),
        (
            f'module "m" version "1.0.0";\nentrypoint fn `main{escape}`() -> I32 {{ return 1; }}\n',
            "/functions/0/id",
        ),
    ):
        error = rejection(parse_text, source)
        assert (error.code, error.diagnostic.pointer) == ("E-IR-ID", pointer), name


def test_plain_unicode_identifiers_are_still_accepted() -> None:
    module = import_module(wire_module(module_id="modul-ä", fn_id="größe_计算_😀"))
    assert module.functions[0].id == "größe_计算_😀"


# --- T-IMP-12: nothing invisible reaches a terminal ----------------------------------------------


def test_a_comment_with_terminal_escapes_is_escaped_in_the_caret_excerpt() -> None:
    source = 'module "m" version "1.0.0";\nfn f() -> I32 { \x1b[2J\u202e // \x1b]0;pwned\x07\n}\n'
    error = rejection(parse_text, source)
    rendered = error.diagnostic.render(source, "evil\x1b[31m.dbk")
    assert_no_terminal_controls(rendered)
    assert "\\u001b[2J\\u202e" in rendered and "evil\\u001b[31m.dbk" in rendered
    lines = rendered.split("\n")
    excerpt, caret = next((lines[i], lines[i + 1]) for i, line in enumerate(lines) if " | " in line)
    # the caret sits under the offending (escaped) character, not where the raw one would have been
    assert error.diagnostic.span == Span(2, 17)
    assert excerpt[caret.index("^") :].startswith("\\u001b")


def test_diagnostic_messages_quoting_author_text_are_escaped() -> None:
    """The message quotes the bad opaque-id value (JSON quoting leaves bidi characters raw)."""
    source = 'module "m" version "1.0.0";\nentrypoint fn f() -> I32 { opaque ItemId "a\u202eb\u2066"; return 1; }\n'
    error = rejection(parse_text, source)
    assert "\u202e" in error.diagnostic.message  # the raw character is kept in the data ...
    rendered = error.diagnostic.render(source)
    assert_no_terminal_controls(rendered)  # ... and escaped wherever it is shown
    assert "a\\u202eb\\u2066" in rendered
    assert_no_terminal_controls(str(error))  # what a host's log or traceback shows


@pytest.mark.parametrize("command", ["check", "parse", "hash"])
def test_cli_diagnostics_escape_terminal_controls(tmp_path: Path, command: str) -> None:
    path = tmp_path / "evil.dbk"
    path.write_text(
        'module "m" version "1.0.0";\n// \x1b[2J\x1b]0;owned\x07\u202e\u2066\r\nfn `main\u202e`() -> I32 { return 1; }\n',
        encoding="utf-8",
    )
    code, out, err = cli(command, str(path))
    assert code == 1
    assert_no_terminal_controls(out + err.replace("\r", ""))
    assert "E-IR-ID" in err and "\\u202e" in err


def test_cli_results_escape_terminal_controls(tmp_path: Path) -> None:
    """A kernel's string result printed by ``dotboxd run`` and a string literal printed by
    ``dotboxd fmt`` are escaped; the escaped fmt output still parses to the same module."""
    path = tmp_path / "value.dbk"
    path.write_text(
        'module "m" version "1.0.0";\n'
        'entrypoint fn main() -> String { return "a\\u001b[31mred\\u202e\\u200b\\u0085"; }\n',
        encoding="utf-8",
    )
    code, out, err = cli("run", str(path))
    assert code == 0
    assert_no_terminal_controls(out + err)
    assert json.loads(out) == "a\x1b[31mred\u202e\u200b\x85"
    code, out, err = cli("fmt", "--to", "text", str(path))
    assert code == 0
    assert_no_terminal_controls(out + err)
    assert parse_text(out) == parse_text(path.read_text(encoding="utf-8"))


# --- T-IMP-06: host references in descriptor-style names, every string position -----------------

DESCRIPTOR_NAMES = [*trojan_cases.DESCRIPTOR_NAMES, "RawIL"]
"""The corpus generator's descriptor-style names (one list for the corpus and this test) plus a
mixed-case spelling the corpus does not need."""


def _positions(name: str) -> list[tuple[str, str]]:
    """(wire module text, expected pointer) with ``name`` in each string position of a module."""
    fn = {"id": "main", "visibility": "entrypoint", "returnType": "Unit"}

    def module(body: list[Any], **extra: Any) -> str:
        return json.dumps({"id": "m", "version": "1.0.0", **extra, "functions": [{**fn, "body": body}]})

    unit: dict[str, Any] = {"op": "return", "value": {"unit": True}}
    literal: list[tuple[str, Any]] = [
        ("string", name),
        ("path", f"a/{name}.json"),
        ("uri", f"https://h/{name}"),
    ]
    return [
        (module([unit], metadata={"k": name}), "/metadata/k"),
        (module([unit], metadata={name: "v"}), f"/metadata/{name}"),
        (
            module([unit], capabilityRequests=[{"id": "file.read", "reason": name}]),
            "/capabilityRequests/0/reason",
        ),
        (module([{"op": "set", "name": name, "value": {"i32": 1}}, unit]), "/functions/0/body/0/name"),
        (
            module([{"op": "expr", "value": {"call": name, "args": []}}, unit]),
            "/functions/0/body/0/value/call",
        ),
        *(
            (module([{"op": "expr", "value": {kind: text}}, unit]), f"/functions/0/body/0/value/{kind}")
            for kind, text in literal
        ),
    ]


@pytest.mark.parametrize("name", DESCRIPTOR_NAMES)
def test_raw_il_style_descriptor_names_are_rejected_in_every_string_position(name: str) -> None:
    for text, pointer in _positions(name):
        error = rejection(import_module, text)
        assert (error.code, error.diagnostic.pointer) == ("E-IR-CLR-REF", pointer), text


@pytest.mark.parametrize("name", ["callIndex", "downloader", "until_done", "recalling", "email_addr"])
def test_ordinary_names_containing_a_fragment_inside_a_word_are_accepted(name: str) -> None:
    import_module(wire_module(fn_id=name, metadata={"k": name}))


# --- T-IMP-13: opaque-id traversal ---------------------------------------------------------------


@pytest.mark.parametrize("value", ["..", "../secret", "a..b", "..:x", "item..", "x:..:y"])
def test_an_opaque_id_carrying_a_path_traversal_is_e_json_id(value: str) -> None:
    literal = {"opaqueId": {"type": "ItemId", "value": value}}
    body = [{"op": "expr", "value": literal}, {"op": "return", "value": {"i32": 1}}]
    text = json.dumps(
        {
            "id": "m",
            "version": "1.0.0",
            "functions": [{"id": "main", "visibility": "entrypoint", "returnType": "I32", "body": body}],
        }
    )
    error = rejection(import_module, text)
    assert (error.code, error.diagnostic.pointer) == ("E-JSON-ID", "/functions/0/body/0/value/opaqueId/value")
    escaped = json.dumps(value)
    source = (
        f'module "m" version "1.0.0";\nentrypoint fn main() -> I32 {{ opaque ItemId {escaped}; return 1; }}\n'
    )
    assert rejection(parse_text, source).code == "E-JSON-ID"


# --- the corpus pins the same rules ----------------------------------------------------------------


@pytest.mark.parametrize("tag", ["trojan-source", "descriptor-name", "traversal"])
def test_the_trojan_source_and_descriptor_corpus_passes(tag: str) -> None:
    corpus_slice(tag, minimum=10)


def test_the_trojan_case_file_is_what_its_script_generates() -> None:
    script = Path(__file__).resolve().parents[2] / "conformance" / "tools" / "make_trojan_cases.py"
    done = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
