"""The repository is self-contained: no file cites the condensed design notes the project started from
(a reader of this repository alone must be able to check every claim), and every registered code is
documented in spec/diagnostics.md with its category, stage and an example."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from dotboxd.core.codes import all_codes

ROOT = Path(__file__).resolve().parents[2]

# Built from pieces so that this file does not match its own patterns.
_WORD = "dig" + "est"
#: The ways the notes were cited: "<word> 4.4", "<word> section 12", "<word> §1.8", "<word>-11",
#: "the <word>", "the <word>'s", the notes' file name, and identifiers derived from the word in tests.
CITATION = re.compile(
    rf"{_WORD}\s*(?:§|sections?\b|\d)|{_WORD}-\d|\bthe\s+{_WORD}\b|{_WORD}'s|spec-{_WORD}"
    rf"|\b{_WORD.upper()}_|_{_WORD}_",
    re.IGNORECASE,
)
#: Paths outside the repository that the spec must never lean on.
_SHARED = "sha" + "red"
OUTSIDE = re.compile(rf"\.\./{_SHARED}|/work/{_SHARED}|{_SHARED}/reference")


def tracked_text_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    files = []
    for raw in listed:
        if not raw:
            continue
        path = ROOT / raw.decode("utf-8")
        if path.is_file() and path.suffix in {
            ".py",
            ".md",
            ".json",
            ".lark",
            ".toml",
            ".sh",
            ".txt",
            ".dbk",
            "",
        }:
            files.append(path)
    return files


def test_no_file_cites_the_design_notes() -> None:
    files = tracked_text_files()
    assert len(files) > 200
    hits = []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            if CITATION.search(line) or OUTSIDE.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
    assert hits == []


def test_the_citation_pattern_catches_every_form_it_was_written_for() -> None:
    word = _WORD
    for cited in (
        f"(see {word} 4.4)",
        f"{word} §1.8",
        f"{word} section 12",
        f"the {word}-11 form",
        f"The {word}'s example",
        f"read the {word}",
        f"{word.upper()}_DEFAULTS",
        f"test_the_{word}_examples",
        f"reference/dotboxd-spec-{word}.md",
    ):
        assert CITATION.search(cited), cited
    for hashing in ("hashlib.sha256(b).hexdigest()", f"key.{word}()", f"{word} = sha(x)", f"<{word}>.json"):
        assert not CITATION.search(hashing), hashing


def _diagnostics_rows() -> dict[str, list[str]]:
    text = (ROOT / "spec" / "diagnostics.md").read_text(encoding="utf-8")
    rows: dict[str, list[str]] = {}
    for line in text.splitlines():
        match = re.match(r"\| `([EWR]-[A-Z0-9-]+)` \|(.*)\|$", line)
        if match:
            assert match.group(1) not in rows, f"{match.group(1)} is listed twice"
            rows[match.group(1)] = [cell.strip() for cell in match.group(2).split("|")]
    return rows


def test_every_registered_code_is_in_spec_diagnostics_with_its_category() -> None:
    rows = _diagnostics_rows()
    codes = all_codes()
    assert sorted(set(codes) - set(rows)) == []
    assert sorted(set(rows) - set(codes)) == []
    for code, info in codes.items():
        category, stage, meaning, example = rows[code]
        assert category == info.category.value, code
        assert stage and meaning and example, code


def test_spec_diagnostics_is_what_its_script_generates() -> None:
    script = ROOT / "tools" / "make_diagnostics_doc.py"
    done = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
