"""``dotboxd.grammar.source``: choosing the form, bounded reads, and the read/reject split."""

from __future__ import annotations

from pathlib import Path

import pytest

from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.grammar.canonical import module_hash
from dotboxd.grammar.source import (
    MAX_SOURCE_BYTES,
    SourceError,
    kind_for,
    load_module,
    parse_source,
    read_source,
)
from tests.cli.test_cli_front import LOOT_JSON, LOOT_TEXT


def test_kind_by_suffix_then_content() -> None:
    assert kind_for("a.json") == "json"
    assert kind_for("A.JSON", b"module") == "json"  # the suffix wins over the content
    assert kind_for(Path("dir/a.dbk"), b"{") == "text"
    assert kind_for("a.txt", b"  \n {") == "json"
    assert kind_for("a.txt", b"\xef\xbb\xbf{") == "json"  # a BOM does not hide the brace
    assert kind_for("", "module x;") == "text"
    assert kind_for("-", b"") == "text"


def test_load_module_from_paths(tmp_path: Path) -> None:
    json_path, text_path = tmp_path / "m.json", tmp_path / "m.dbk"
    json_path.write_text(LOOT_JSON, encoding="utf-8")
    text_path.write_text(LOOT_TEXT, encoding="utf-8")
    from_json, json_source = load_module(json_path)
    from_text, text_source = load_module(text_path)
    assert from_json == from_text and from_json.id == "loot-score"
    assert json_source == LOOT_JSON and text_source == LOOT_TEXT
    assert module_hash(from_json) == module_hash(from_text)


def test_load_module_from_source_strings_and_bytes() -> None:
    assert load_module(LOOT_JSON)[0] == load_module(LOOT_TEXT.encode())[0]
    assert load_module(LOOT_TEXT, kind="text")[0].id == "loot-score"
    with pytest.raises(DotBoxDError) as info:
        load_module(LOOT_TEXT, kind="json")  # forcing the wrong form is a rejection
    assert info.value.code == "E-JSON-INVALID"


def test_a_str_is_source_text_never_a_path(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text(LOOT_JSON, encoding="utf-8")
    with pytest.raises(DotBoxDError):
        load_module(str(path))  # parsed as text, not opened


def test_unreadable_sources_raise_source_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError) as info:
        load_module(tmp_path / "missing.json")
    assert info.value.reason == "no such file" and info.value.path.endswith("missing.json")
    with pytest.raises(SourceError) as info:
        read_source(tmp_path)
    assert "directory" in info.value.reason


def test_reads_stop_one_byte_past_the_budget(tmp_path: Path) -> None:
    exact = tmp_path / "exact.json"
    exact.write_bytes(b" " * MAX_SOURCE_BYTES)
    assert len(read_source(exact)) == MAX_SOURCE_BYTES
    over = tmp_path / "over.dbk"
    over.write_bytes(b" " * (MAX_SOURCE_BYTES + 1))
    with pytest.raises(DotBoxDError) as info:
        read_source(over)
    assert info.value.code == "E-JSON-LIMIT"
    assert info.value.diagnostic.evidence["actual"] == MAX_SOURCE_BYTES + 1


def test_parse_source_names_the_file_in_text_diagnostics() -> None:
    with pytest.raises(DotBoxDError) as info:
        parse_source(b"\xff", "text", "odd.dbk")
    assert "odd.dbk" in info.value.diagnostic.message
