"""Every Python construct outside the kernel subset is refused with a located diagnostic: the code,
the Python line and column of the construct itself, and a hint naming the supported alternative.

Each case marks where the refused construct starts (``marker``); the expected line and column are
computed from the case's own source, never from the lowerer.
"""

from __future__ import annotations

import pytest

from dotboxd.core.codes import all_codes
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.grammar.pyfront import lower_python

HEADER = 'from dotboxd.lang import I32, List, entrypoint, module\nmodule("k", version="1.0.0")\n\n'
MAIN = "@entrypoint\ndef main(x: I32, xs: List[I32]) -> I32:\n"


def body(*lines: str) -> str:
    """A kernel whose entrypoint body is ``lines`` followed by ``return x``."""
    return HEADER + MAIN + "".join(f"    {line}\n" for line in lines) + "    return x\n"


def top(*lines: str) -> str:
    """A kernel with ``lines`` at module level after a valid entrypoint."""
    return HEADER + MAIN + "    return x\n\n" + "".join(f"{line}\n" for line in lines)


# (case id, source, marker: the text where the refused construct starts, expected code)
CASES: list[tuple[str, str, str, str]] = [
    ("import", top("import os"), "import os", "E-PY-UNSUPPORTED"),
    ("import_from_other_module", top("from os import path"), "from os", "E-PY-UNSUPPORTED"),
    (
        "import_unknown_lang_name",
        HEADER.replace("I32, List", "I32, Foo, List") + MAIN + "    return x\n",
        "Foo",
        "E-PY-UNSUPPORTED",
    ),
    (
        "import_renamed_lang_name",
        HEADER.replace("I32, List", "I32 as Int, List") + MAIN + "    return x\n",
        "I32 as",
        "E-PY-UNSUPPORTED",
    ),
    ("class", top("class A:", "    pass"), "class A", "E-PY-UNSUPPORTED"),
    ("async_def", top("async def f() -> I32:", "    return 1"), "async def", "E-PY-UNSUPPORTED"),
    ("module_level_statement", top("y = 1"), "y = 1", "E-PY-UNSUPPORTED"),
    ("nested_def", body("def f() -> I32:", "    return 1"), "def f", "E-PY-UNSUPPORTED"),
    ("lambda", body("y = lambda q: q"), "lambda", "E-PY-UNSUPPORTED"),
    ("list_comprehension", body("y = [i for i in range(3)]"), "[i for", "E-PY-UNSUPPORTED"),
    ("dict_comprehension", body("y = {i: i for i in range(3)}"), "{i:", "E-PY-UNSUPPORTED"),
    ("set_comprehension", body("y = {i for i in range(3)}"), "{i for", "E-PY-UNSUPPORTED"),
    ("generator_expression", body("y = f(i for i in range(3))"), "(i for", "E-PY-UNSUPPORTED"),
    ("global", body("global x"), "global", "E-PY-UNSUPPORTED"),
    ("nonlocal", body("nonlocal x"), "nonlocal", "E-PY-UNSUPPORTED"),
    ("exec", body('exec("x = 1")'), "exec", "E-PY-UNSUPPORTED"),
    ("eval", body('y = eval("1")'), "eval", "E-PY-UNSUPPORTED"),
    ("open", body('y = open("/etc/passwd")'), "open", "E-PY-UNSUPPORTED"),
    ("print", body("print(x)"), "print", "E-PY-UNSUPPORTED"),
    ("getattr", body('y = getattr(x, "real")'), "getattr", "E-PY-UNSUPPORTED"),
    ("dunder_import", body('y = __import__("os")'), "__import__", "E-PY-UNSUPPORTED"),
    ("dunder_name", body("y = __builtins__"), "__builtins__", "E-PY-UNSUPPORTED"),
    ("dunder_attribute_call", body("y = x.__class__.mro()"), "x.__class__", "E-PY-UNSUPPORTED"),
    ("attribute_outside_call", body("y = x.real"), "x.real", "E-PY-UNSUPPORTED"),
    ("call_of_call", body("y = f()(x)"), "f()", "E-PY-UNSUPPORTED"),
    ("try", body("try:", "    y = 1", "except ValueError:", "    y = 2"), "try", "E-PY-UNSUPPORTED"),
    ("raise", body("raise ValueError()"), "raise", "E-PY-UNSUPPORTED"),
    ("assert", body("assert x > 0"), "assert", "E-PY-UNSUPPORTED"),
    ("del", body("del x"), "del", "E-PY-UNSUPPORTED"),
    ("with", body("with f() as g:", "    y = 1"), "with", "E-PY-UNSUPPORTED"),
    ("match", body("match x:", "    case 1:", "        y = 1"), "match", "E-PY-UNSUPPORTED"),
    ("yield", body("yield x"), "yield", "E-PY-UNSUPPORTED"),
    ("yield_from", body("yield from xs"), "yield", "E-PY-UNSUPPORTED"),
    ("await", body("y = await f()"), "await", "E-PY-UNSUPPORTED"),
    (
        "decorator_other_than_entrypoint",
        top("@staticmethod", "def f() -> I32:", "    return 1"),
        "staticmethod",
        "E-PY-UNSUPPORTED",
    ),
    ("star_args_call", body("y = f(*xs)"), "*xs", "E-PY-UNSUPPORTED"),
    ("keyword_args_call", body("y = f(a=1)"), "a=1", "E-PY-UNSUPPORTED"),
    ("double_star_call", body("y = f(**m)"), "**m", "E-PY-UNSUPPORTED"),
    ("star_args_def", top("def f(*a: I32) -> I32:", "    return 1"), "a: I32", "E-PY-UNSUPPORTED"),
    ("kwargs_def", top("def f(**a: I32) -> I32:", "    return 1"), "a: I32", "E-PY-UNSUPPORTED"),
    ("default_value", top("def f(a: I32 = 1) -> I32:", "    return a"), "1)", "E-PY-UNSUPPORTED"),
    ("keyword_only_parameter", top("def f(*, a: I32) -> I32:", "    return a"), "a: I32", "E-PY-UNSUPPORTED"),
    ("missing_parameter_type", top("def f(a) -> I32:", "    return 1"), "a)", "E-PY-UNSUPPORTED"),
    ("missing_return_type", top("def f(a: I32):", "    return 1"), "def f", "E-PY-UNSUPPORTED"),
    ("walrus", body("if (y := x) > 0:", "    x = y"), "y :=", "E-PY-UNSUPPORTED"),
    ("f_string", body('s = f"{x}"'), 'f"', "E-PY-UNSUPPORTED"),
    ("conditional_expression", body("y = 1 if x else 2"), "1 if", "E-PY-UNSUPPORTED"),
    ("tuple_assignment", body("a, b = 1, 2"), "a, b", "E-PY-UNSUPPORTED"),
    ("chained_assignment", body("a = b = 1"), "a = b", "E-PY-UNSUPPORTED"),
    ("chained_comparison", body("y = 1 < x < 3"), "1 < x", "E-PY-UNSUPPORTED"),
    ("is_operator", body("y = x is None"), "x is", "E-PY-UNSUPPORTED"),
    ("in_operator", body("y = x in xs"), "x in", "E-PY-UNSUPPORTED"),
    ("power", body("y = x ** 2"), "x **", "E-PY-UNSUPPORTED"),
    ("bit_and", body("y = x & 1"), "x &", "E-PY-UNSUPPORTED"),
    ("shift", body("y = x << 1"), "x <<", "E-PY-UNSUPPORTED"),
    ("invert", body("y = ~x"), "~x", "E-PY-UNSUPPORTED"),
    ("unary_plus", body("y = +x"), "+x", "E-PY-UNSUPPORTED"),
    ("augmented_power", body("x **= 2"), "x **=", "E-PY-UNSUPPORTED"),
    ("slice", body("y = xs[1:2]"), "1:2", "E-PY-UNSUPPORTED"),
    ("for_over_a_list", body("for m in xs:", "    x = m"), "xs:", "E-PY-UNSUPPORTED"),
    ("range_with_step", body("for i in range(0, 9, 2):", "    x = i"), "range(", "E-PY-UNSUPPORTED"),
    ("for_else", body("for i in range(3):", "    x = i", "else:", "    x = 0"), "x = 0", "E-PY-UNSUPPORTED"),
    ("while_else", body("while x > 0:", "    x = x - 1", "else:", "    x = 0"), "x = 0", "E-PY-UNSUPPORTED"),
    ("bytes_constant", body('y = b"x"'), 'b"x"', "E-PY-UNSUPPORTED"),
    ("complex_constant", body("y = 1j"), "1j", "E-PY-UNSUPPORTED"),
    ("ellipsis", body("y = ..."), "...", "E-PY-UNSUPPORTED"),
    ("set_literal", body("y = {1, 2}"), "{1, 2}", "E-PY-UNSUPPORTED"),
    ("index_of_unknown_type", body("y = x[0]"), "x[0]", "E-PY-UNSUPPORTED"),
    ("empty_list_without_type", body("y = []"), "[]", "E-PY-UNSUPPORTED"),
    ("dict_without_type", body('y = {"a": 1}'), '{"a"', "E-PY-UNSUPPORTED"),
    ("store_into_list_item", body("xs[0] = 1"), "xs[0]", "E-PY-UNSUPPORTED"),
    (
        "function_named_like_lang",
        top("def module() -> I32:", "    return 1"),
        "def module",
        "E-PY-UNSUPPORTED",
    ),
    ("missing_module_header", MAIN + "    return x\n", "@entrypoint", "E-PY-MODULE"),
    ("second_module_header", top('module("k2", version="1.0.0")'), 'module("k2"', "E-PY-MODULE"),
    (
        "module_header_without_version",
        HEADER.replace(', version="1.0.0"', "") + MAIN + "    return x\n",
        'module("k")',
        "E-PY-MODULE",
    ),
    ("not_python", body("y = = 1"), "= 1", "E-PY-SYNTAX"),
]


def _expected_position(source: str, marker: str) -> tuple[int, int]:
    """Line and column of ``marker``: its first occurrence after the fixed header and entrypoint
    line when there is one (the case's own lines), else its first occurrence at all."""
    prefix = HEADER + MAIN
    offset = source.find(marker, len(prefix)) if source.startswith(prefix) else -1
    if offset < 0:
        offset = source.index(marker)
    line = source.count("\n", 0, offset) + 1
    column = offset - (source.rfind("\n", 0, offset) + 1) + 1
    return line, column


@pytest.mark.parametrize(("source", "marker", "code"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_refused_python_construct_is_located(source: str, marker: str, code: str) -> None:
    with pytest.raises(DotBoxDError) as refused:
        lower_python(source, "kernel.py")
    diagnostic = refused.value.diagnostic
    assert diagnostic.code == code, diagnostic.message
    assert code in all_codes()
    assert diagnostic.span is not None
    if code == "E-PY-MODULE" and marker == "@entrypoint":
        assert (diagnostic.span.line, diagnostic.span.column) == (1, 1)
    else:
        assert (diagnostic.span.line, diagnostic.span.column) == _expected_position(source, marker)
    assert diagnostic.hint, "every refusal names the supported alternative"


def test_every_case_is_refused_and_its_fix_is_accepted() -> None:
    """The harness is not vacuous: the kernel around every case lowers when the case is removed."""
    assert lower_python(body("y = 1"), "kernel.py").functions[0].id == "main"
    assert lower_python(top("def f(a: I32) -> I32:", "    return a"), "kernel.py").functions[1].id == "f"
