"""A .py kernel file is untrusted input: size, encoding, nesting and literal tricks end in a located
DotBoxD diagnostic, never a traceback, a RecursionError, a hang or a different codec."""

from __future__ import annotations

import time

import pytest

from dotboxd.core import ast
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.grammar.pyfront import MAX_SOURCE_BYTES, lower_python

HEAD = 'from dotboxd.lang import I32, entrypoint, module\nmodule("k", version="1.0.0")\n@entrypoint\ndef main(a: I32) -> I32:\n'


def kernel(*lines: str) -> str:
    return HEAD + "".join(f"    {line}\n" for line in lines) + "    return a\n"


def refused(source: str | bytes) -> tuple[str, int, int]:
    started = time.monotonic()
    with pytest.raises(DotBoxDError) as caught:
        lower_python(source, "hostile.py")
    assert time.monotonic() - started < 10
    d = caught.value.diagnostic
    assert d.span is not None and d.message
    return d.code, d.span.line, d.span.column


def test_python_kernel_over_one_mebibyte_is_refused_before_parsing() -> None:
    source = kernel("s = 1") + "#" * MAX_SOURCE_BYTES
    assert refused(source)[0] == "E-JSON-LIMIT"
    assert refused(source.encode())[0] == "E-JSON-LIMIT"


def test_python_kernel_that_is_not_utf8_is_refused_at_the_bad_byte() -> None:
    assert refused(kernel("s = 'x'").encode().replace(b"'x'", b"'\xff'")) == ("E-PY-SYNTAX", 5, 10)


def test_python_coding_cookie_cannot_switch_the_codec() -> None:
    latin1 = b"# -*- coding: latin-1 -*-\n" + kernel("s = '\xe9'").encode("latin-1")
    assert refused(latin1) == ("E-PY-SYNTAX", 6, 10)
    # utf-7 would turn this ASCII into other characters; the kernel reads it as plain UTF-8
    module = lower_python(b"# coding: utf-7\n" + kernel("s = '+AGEAYgBj-'").encode(), "u7.py")
    first = module.functions[0].body[0]
    assert isinstance(first, ast.Set) and isinstance(first.value, ast.Literal)
    assert first.value.value == "+AGEAYgBj-"


def test_python_kernel_with_nul_byte_is_refused() -> None:
    assert refused(kernel("s = 1") + "\0")[0] == "E-PY-SYNTAX"


@pytest.mark.parametrize(
    "expression",
    [
        "(" * 5000 + "1" + ")" * 5000,  # the parser's own bracket limit
        "+".join(["a"] * 200_000),  # RecursionError while building the tree
        "not " * 100_000 + "a",  # the parser's stack (MemoryError)
        "-" * 200_000 + "a",
        "[" * 3000 + "]" * 3000,
        "f(" * 3000 + ")" * 3000,
    ],
    ids=["parens", "long_chain", "not_chain", "neg_chain", "lists", "calls"],
)
def test_deeply_nested_python_kernel_is_refused_without_recursion_error(expression: str) -> None:
    code, _, _ = refused(kernel(f"s = {expression}"))
    assert code in ("E-PY-SYNTAX", "E-JSON-LIMIT")


def test_python_tree_deeper_than_the_walk_allows_is_refused_at_its_line() -> None:
    assert refused(kernel("s = " + "+".join(["a"] * 300)))[:2] == ("E-JSON-LIMIT", 5)


def test_python_kernel_within_walk_depth_but_over_wire_depth_is_refused_at_its_line() -> None:
    assert refused(kernel("s = " + "+".join(["a"] * 150)))[:2] == ("E-JSON-LIMIT", 5)
    ifs = [("    " * i) + "if a > 0:" for i in range(60)] + ["    " * 60 + "a = 1"]
    code, line, _ = refused(kernel(*ifs))
    assert code == "E-JSON-LIMIT" and 5 < line <= 65


def test_python_indentation_deeper_than_the_parser_allows_is_refused() -> None:
    ifs = [("    " * i) + "if a > 0:" for i in range(150)] + ["    " * 150 + "a = 1"]
    assert refused(kernel(*ifs))[0] == "E-PY-SYNTAX"


def test_python_literals_outside_the_ir_are_refused_at_the_literal() -> None:
    assert refused(kernel("s = 2147483648")) == ("E-JSON-TYPE", 5, 9)
    assert refused(kernel("s = 1e999")) == ("E-JSON-TYPE", 5, 9)
    assert refused(kernel("s = 1" + "0" * 5000))[0] == "E-PY-SYNTAX"  # Python's own digit limit
    assert refused(kernel("s = '\\ud800'")) == ("E-PY-SYNTAX", 5, 9)
    assert refused(kernel("s = 'x\ud800'"))[0] == "E-PY-SYNTAX"  # a lone surrogate in the text itself


def test_python_kernel_names_smuggling_host_references_are_refused() -> None:
    assert refused(HEAD.replace('"k"', '"System.IO"') + "    return a\n") == ("E-IR-CLR-REF", 2, 8)
    assert refused(kernel("s = System.IO.File.ReadAllText(1)"))[:2] == ("E-IR-CLR-REF", 5)


@pytest.mark.parametrize(
    ("line", "column"), [("s = '\\d'", 9), ("s = 1if a else 2", 9)], ids=["invalid_escape", "number_keyword"]
)
def test_python_parser_warnings_are_located_errors_not_host_stderr(
    line: str, column: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert refused(kernel(line)) == ("E-PY-SYNTAX", 5, column)
    assert capsys.readouterr().err == ""
