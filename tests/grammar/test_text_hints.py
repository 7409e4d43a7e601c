"""Syntax errors of the text form read as sentences and their hints are in text syntax (issue 19).

"unexpected a name 'y'" was ungrammatical, and ``let y = ...`` got a hint about ';'; a misspelt
keyword got no suggestion, and the last resort pointed at a spec file the installed package does
not ship.
"""

from __future__ import annotations

import pytest

from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.grammar.text import parse_text

HEADER = 'module "t" version "1.0.0";\n'
FN = HEADER + "entrypoint fn main(x I32) -> I32 {\n"


def _diagnostic(source: str) -> tuple[str, str]:
    with pytest.raises(DotBoxDError) as info:
        parse_text(source, "d.dbk")
    return info.value.diagnostic.message, info.value.diagnostic.hint


@pytest.mark.parametrize(
    ("body", "found"),
    [("    let y = 1;\n}", "name 'y'"), ("    x = 1 2;\n}", "integer '2'"), ('    x = 1 "s";\n}', "string")],
)
def test_a_found_token_is_named_without_an_article(body: str, found: str) -> None:
    message, _ = _diagnostic(FN + body)
    assert message.startswith(f"unexpected {found}")
    assert "unexpected a " not in message and "unexpected an " not in message


@pytest.mark.parametrize("word", ["let", "var", "const"])
def test_a_declaration_keyword_of_another_language_gets_the_assignment_hint(word: str) -> None:
    _, hint = _diagnostic(FN + f"    {word} y = x + 1;\n    return y;\n}}")
    assert hint == (
        f"'{word}' is not part of the text form: a local is created by its first assignment, so write `y = ...;`"
    )


@pytest.mark.parametrize(
    ("source", "keyword"),
    [
        (FN + "    retrun x;\n}", "return"),
        (FN + "    whle x > 0 { }\n    return 1;\n}", "while"),
        (HEADER + "entrypont fn main() -> I32 { return 1; }\n", "entrypoint"),
        ('modul "t" version "1.0.0";', "module"),
    ],
)
def test_a_misspelt_keyword_gets_a_did_you_mean(source: str, keyword: str) -> None:
    _, hint = _diagnostic(source)
    assert f"did you mean the keyword '{keyword}'?" in hint or hint == f"did you mean '{keyword}'?"


def test_two_operands_in_a_row_say_an_operator_is_missing() -> None:
    _, hint = _diagnostic(FN + "    x = 1 2;\n}")
    assert hint == "two operands in a row: an operator or ';' is missing between them"


@pytest.mark.parametrize("body", ["    return x;\n", "    x = = 1;\n}", "    return x;\n}\n}"])
def test_no_syntax_hint_names_a_file_or_uses_json(body: str) -> None:
    _, hint = _diagnostic(FN + body)
    assert hint and ".md" not in hint and '{"' not in hint


# --- validation hints and carets for a text-form module --------------------------------------------

UNIT_FN = HEADER + "entrypoint fn main(x I32) -> Unit {\n    y = x;\n}\n"
COND = HEADER + "entrypoint fn main(x I32) -> I32 {\n    if x { return 1; }\n    return 0;\n}\n"


def _validation_hints(source: str) -> list[str]:
    from dotboxd.host import SandboxHost

    with pytest.raises(DotBoxDError) as info:
        SandboxHost().prepare(source)
    return [d.hint for d in info.value.diagnostics]


@pytest.mark.parametrize(("source", "spelled"), [(UNIT_FN, "`return ();`"), (COND, "`x != 0`")])
def test_validation_hints_of_a_text_module_are_in_text_syntax(source: str, spelled: str) -> None:
    hints = _validation_hints(source)
    assert any(spelled in h for h in hints), hints
    assert not any('{"' in h for h in hints), hints


def test_validation_hints_of_a_wire_module_stay_in_wire_syntax() -> None:
    from dotboxd.grammar.wire import dumps_wire

    wire = dumps_wire(parse_text(UNIT_FN, "d.dbk"))
    hints = _validation_hints(wire)
    assert any('{"unit": true}' in h for h in hints), hints


def test_the_cli_shows_text_hints_for_a_dbk_file(tmp_path: object) -> None:
    import io
    from contextlib import redirect_stderr, redirect_stdout
    from pathlib import Path

    from dotboxd.cli.main import main

    assert isinstance(tmp_path, Path)
    path = tmp_path / "k.dbk"
    path.write_text(UNIT_FN, encoding="utf-8")
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        assert main(["check", str(path)]) == 1
    assert "`return ();`" in err.getvalue() and '{"unit"' not in err.getvalue()


def test_the_caret_underlines_the_offending_operand() -> None:
    from dotboxd.host import SandboxHost

    source = HEADER + 'entrypoint fn main(x I32) -> I32 {\n    return x + "abc";\n}\n'
    with pytest.raises(DotBoxDError) as info:
        SandboxHost().prepare(source)
    diagnostic = info.value.diagnostic
    assert diagnostic.code == "E-TYPE-MISMATCH"
    assert diagnostic.pointer == "/functions/0/body/0/value"  # the stable location: the expression
    rendered = diagnostic.render(source, "d.dbk").splitlines()
    line = next(i for i, text in enumerate(rendered) if 'return x + "abc";' in text)
    caret = rendered[line + 1]
    column = rendered[line].index('"abc"')
    assert caret.index("^") == column and caret.strip() == "^^^^^"  # all of "abc", nothing else
