"""Canonical form and module hash: hand-computed golden texts for every record shape.

Every expected string below was written by hand from the rules in spec/canonical.md (field
``s<utf16 len>:<escaped>;``, nested records escaped again), not copied from the implementation's
output, so a drift in any length, escape or order shows up as a mismatch.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from dotboxd.core import ast
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.grammar import canonical
from dotboxd.grammar.canonical import (
    CANONICALIZER_ID,
    canonical_bytes,
    canonical_lines,
    canonical_size,
    canonical_text,
    encode_field,
    encode_record,
    escape_text,
    format_f64,
    hash_records,
    module_hash,
    ordinal_key,
    sha256_hex,
    utf16_len,
)
from dotboxd.grammar.wire import import_module

I32 = ast.TypeRef("I32")


def lit(kind: ast.LiteralKind, value: ast.LiteralValue, brand: str | None = None) -> ast.Literal:
    return ast.Literal(kind, value, brand)


def fn(
    body: tuple[ast.Stmt, ...],
    fid: str = "main",
    params: tuple[ast.Param, ...] = (),
    ret: ast.TypeRef = I32,
    visibility: ast.Visibility = ast.Visibility.ENTRYPOINT,
) -> ast.Function:
    return ast.Function(fid, visibility, params, ret, body)


def module(*functions: ast.Function, **fields: object) -> ast.Module:
    base: dict[str, object] = {
        "id": "m",
        "version": "1.0.0",
        "target_sandbox_version": "1.0.0",
        "capability_requests": (),
        "functions": functions,
    }
    base.update(fields)
    return ast.Module(**base)  # type: ignore[arg-type]


def return_line(expr: ast.Expr) -> str:
    """The canonical line of ``return expr`` in a one-function module."""
    lines = canonical_lines(module(fn((ast.Return(expr),))))
    assert lines[2] == "s2:fn;s5:entry;s4:main;s15:s4:type;s3:I32;;"
    return lines[3]


# ---------------------------------------------------------------------------------------------
# Golden: DotBoxD's loot-score example module

LOOT_SCORE_JSON = (Path(__file__).resolve().parents[2] / "examples" / "loot-score.json").read_text(
    encoding="utf-8"
)
"""The shipped example, read as it is: the golden lines and hash below are pinned to that file."""

LOOT_SCORE_CANONICAL = (
    "s13:canonicalizer;s23:dotboxd-canonicalizer-1;\n"
    "s6:module;s10:loot-score;s5:1.0.0;s5:1.0.0;\n"
    "s2:fn;s5:entry;s4:main;s15:s4:type;s3:I32;;\n"
    "s5:param;s5:level;s15:s4:type;s3:I32;;\n"
    "s5:param;s6:rarity;s15:s4:type;s3:I32;;\n"
    "s3:set;s4:base;s63:s3:bin;s1:*;s16:s3:var;s5:level;;s25:s3:lit;s13:s3:i32;s2:10;;;;\n"
    "s3:set;s5:bonus;s64:s3:bin;s1:*;s17:s3:var;s6:rarity;;s25:s3:lit;s13:s3:i32;s2:25;;;;\n"
    "s6:return;s53:s3:bin;s1:+;s15:s3:var;s4:base;;s16:s3:var;s5:bonus;;;\n"
)


def test_loot_score_golden_text_and_hash() -> None:
    loot = import_module(LOOT_SCORE_JSON)
    assert canonical_text(loot) == LOOT_SCORE_CANONICAL
    assert module_hash(loot) == hashlib.sha256(LOOT_SCORE_CANONICAL.encode("utf-8")).hexdigest()


def test_spec_worked_example_matches() -> None:
    """spec/canonical.md section 7 quotes the loot-score text and hash; keep it true."""
    from pathlib import Path

    spec = (Path(__file__).resolve().parents[2] / "spec" / "canonical.md").read_text(encoding="utf-8")
    for line in LOOT_SCORE_CANONICAL.splitlines():
        assert line in spec
    assert module_hash(import_module(LOOT_SCORE_JSON)) in spec


def test_identity_string() -> None:
    assert CANONICALIZER_ID == "dotboxd-canonicalizer-1"


# ---------------------------------------------------------------------------------------------
# Fields, escapes, UTF-16 lengths


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "n;"),
        ("", "s0:;"),
        ("abc", "s3:abc;"),
        ("a;b:c", "s5:a;b:c;"),  # separators need no escaping: the length prefix delimits
        ("a\\b", "s4:a\\\\b;"),
        ("\r\n\t", "s6:\\r\\n\\t;"),
        ("\x00\x1f", "s12:\\u0000\\u001f;"),
        ("\x7f\x85\x9f", "s18:\\u007f\\u0085\\u009f;"),  # C1 controls too (.NET char.IsControl)
        ("\xa0\xe9", "s2:\xa0\xe9;"),  # U+00A0 and U+00E9 are not controls
        ("\x1b", "s6:\\u001b;"),  # lowercase hex
        ("\u2028", "s1:\u2028;"),  # a line separator is a format char, not a control
        ("\U0001f600", "s2:\U0001f600;"),  # astral: two UTF-16 units
        ("x\U0001f600y\U00010000", "s6:x\U0001f600y\U00010000;"),
        ("\ud800", "s1:\ud800;"),  # a lone surrogate is one unit, passed through
    ],
)
def test_encode_field(value: str | None, expected: str) -> None:
    assert encode_field(value) == expected


def test_escape_text_table() -> None:
    assert escape_text("plain") == "plain"
    assert escape_text("\\\\") == "\\\\\\\\"
    assert escape_text("\x0b\x0c") == "\\u000b\\u000c"
    assert escape_text("\u0080") == "\\u0080"
    assert escape_text("\u00a0") == "\u00a0"


def test_utf16_len_counts_code_units() -> None:
    assert utf16_len("") == 0
    assert utf16_len("abc") == 3
    assert utf16_len("\xe9\u4e2d") == 2
    assert utf16_len("\U0001f600") == 2
    assert utf16_len("a\U0010ffffb") == 4
    assert utf16_len("\udc00") == 1


def test_encode_record_concatenates_fields() -> None:
    assert encode_record() == ""
    assert encode_record("type", "I32") == "s4:type;s3:I32;"
    assert encode_record("call", "f", None) == "s4:call;s1:f;n;"
    nested = encode_record("type", "I32")
    assert encode_record("fn", nested) == "s2:fn;s15:s4:type;s3:I32;;"


def test_ordinal_key_is_utf16_order() -> None:
    astral, high_bmp = "\U0001f600", "\uff21"
    assert astral > high_bmp  # code point order (Python's default)
    assert ordinal_key(astral) < ordinal_key(high_bmp)  # UTF-16 order: D83D < FF21
    assert sorted(["b", "a", "Z", "ab", ""], key=ordinal_key) == ["", "Z", "a", "ab", "b"]


def test_canonical_bytes_and_sha256() -> None:
    assert canonical_bytes("a\xe9") == b"a\xc3\xa9"
    assert canonical_bytes("\ud800x") == b"\xed\xa0\x80x"  # a lone surrogate keeps its own bytes
    assert canonical_bytes("\ud83d\ude00") == "\U0001f600".encode()  # a split pair is joined
    assert sha256_hex("abc") == hashlib.sha256(b"abc").hexdigest()


def test_hash_records_joins_without_trailing_newline() -> None:
    records = [encode_record("policy-v2"), encode_record("grant", "file.read")]
    assert hash_records(records) == hashlib.sha256(b"s9:policy-v2;\ns5:grant;s9:file.read;").hexdigest()
    assert hash_records([]) == hashlib.sha256(b"").hexdigest()


# ---------------------------------------------------------------------------------------------
# f64 text (.NET Core 3.0+ "R")

F64_TABLE = [
    (1.5, "1.5"),
    (100.0, "100"),
    (-60.0, "-60"),
    (0.1, "0.1"),
    (0.0, "0"),
    (-0.0, "-0"),
    (0.0001, "0.0001"),
    (0.00012345, "0.00012345"),
    (0.00001, "1E-05"),
    (1e-7, "1E-07"),
    (2.5e-5, "2.5E-05"),
    (1e15, "1000000000000000"),
    (1e16, "10000000000000000"),
    (1e17, "1E+17"),
    (1.5e17, "1.5E+17"),
    (1e20, "1E+20"),
    (123456789012345680000.0, "1.2345678901234568E+20"),
    (1234567890123456.8, "1234567890123456.8"),
    (12345678901234568.0, "12345678901234568"),
    (5e-324, "5E-324"),
    (2.2250738585072014e-308, "2.2250738585072014E-308"),
    (1.7976931348623157e308, "1.7976931348623157E+308"),
    (-1.7976931348623157e308, "-1.7976931348623157E+308"),
    (1e100, "1E+100"),
    (3.141592653589793, "3.141592653589793"),
    (-2.0, "-2"),
    (float("nan"), "NaN"),
    (float("inf"), "Infinity"),
    (float("-inf"), "-Infinity"),
]


@pytest.mark.parametrize(("value", "expected"), F64_TABLE)
def test_format_f64_table(value: float, expected: str) -> None:
    assert format_f64(value) == expected


# ---------------------------------------------------------------------------------------------
# Literal, expression and type records (inside a ``return`` line)


def test_literal_records() -> None:
    k = ast.LiteralKind
    assert return_line(lit(k.UNIT, None)) == "s6:return;s19:s3:lit;s8:s4:unit;;;"
    assert return_line(lit(k.BOOL, True)) == "s6:return;s28:s3:lit;s16:s4:bool;s4:true;;;"
    assert return_line(lit(k.BOOL, False)) == "s6:return;s29:s3:lit;s17:s4:bool;s5:false;;;"
    assert return_line(lit(k.I32, -5)) == "s6:return;s25:s3:lit;s13:s3:i32;s2:-5;;;"
    assert return_line(lit(k.I64, -(2**63))) == "s6:return;s44:s3:lit;s32:s3:i64;s20:-9223372036854775808;;;"
    assert return_line(lit(k.F64, 1e20)) == "s6:return;s28:s3:lit;s16:s3:f64;s5:1E+20;;;"
    assert return_line(lit(k.F64, -0.0)) == "s6:return;s25:s3:lit;s13:s3:f64;s2:-0;;;"
    assert return_line(lit(k.STRING, "hi")) == "s6:return;s28:s3:lit;s16:s6:string;s2:hi;;;"
    assert (
        return_line(lit(k.GUID, "0123abcd-4567-89ab-cdef-0123456789ab"))
        == "s6:return;s57:s3:lit;s45:s4:guid;s32:0123abcd456789abcdef0123456789ab;;;"
    )
    assert (
        return_line(lit(k.OPAQUE_ID, "p-1", brand="PlayerId"))
        == "s6:return;s44:s3:lit;s32:s9:opaque-id;s8:PlayerId;s3:p-1;;;"
    )
    assert (
        return_line(lit(k.PATH, "config/settings.json"))
        == "s6:return;s45:s3:lit;s33:s4:path;s20:config/settings.json;;;"
    )
    assert (
        return_line(lit(k.URI, "https://example.com/x"))
        == "s6:return;s45:s3:lit;s33:s3:uri;s21:https://example.com/x;;;"
    )


def test_literals_that_compare_equal_in_python_stay_apart() -> None:
    """0.0 == -0.0 and 1 == True == 1.0 in Python; their records differ (and equal literals may
    share one encoding), in any order within one module."""
    k = ast.LiteralKind
    args = (
        lit(k.F64, 0.0),
        lit(k.F64, -0.0),
        lit(k.I32, 1),
        lit(k.BOOL, True),
        lit(k.F64, 1),
        lit(k.F64, 1.0),
        lit(k.F64, 0.0),
    )
    call = (
        "s4:call;s1:f;n;"
        "s24:s3:lit;s12:s3:f64;s1:0;;;"
        "s25:s3:lit;s13:s3:f64;s2:-0;;;"
        "s24:s3:lit;s12:s3:i32;s1:1;;;"
        "s28:s3:lit;s16:s4:bool;s4:true;;;"
        "s24:s3:lit;s12:s3:f64;s1:1;;;"
        "s24:s3:lit;s12:s3:f64;s1:1;;;"
        "s24:s3:lit;s12:s3:f64;s1:0;;;"
    )
    assert return_line(ast.Call("f", args)) == f"s6:return;s{len(call)}:{call};"


def test_string_escapes_double_at_every_level() -> None:
    # value record: s6:string;s6:a\\b\n;  (20 units, 3 backslashes)
    # lit record:   s3:lit;s23:s6:string;s6:a\\\\b\\n;;  (35 units, 6 backslashes)
    # return line embeds the lit record escaped once more (41 units)
    line = return_line(lit(ast.LiteralKind.STRING, "a\\b\n"))
    assert line == r"s6:return;s41:s3:lit;s23:s6:string;s6:a\\\\\\\\b\\\\n;;;"


def test_string_with_controls_and_astral() -> None:
    k = ast.LiteralKind
    # "\x01\x85\xa0" -> value s6:string;s13:\u0001\u0085<nbsp>; (28 units, 2 backslashes)
    # lit -> s3:lit;s30:...;  (42 units, 4 backslashes) -> return embeds 46 units
    line = return_line(lit(k.STRING, "\x01\x85\xa0"))
    assert line == "s6:return;s46:s3:lit;s30:s6:string;s13:\\\\\\\\u0001\\\\\\\\u0085\xa0;;;"
    # "😀" is 2 UTF-16 units: value s6:string;s2:😀; = 16 units, lit = 28 units
    assert return_line(lit(k.STRING, "\U0001f600")) == "s6:return;s28:s3:lit;s16:s6:string;s2:\U0001f600;;;"


def test_expression_records() -> None:
    b, x = ast.Var("b"), ast.Var("x")
    assert return_line(b) == "s6:return;s12:s3:var;s1:b;;"
    assert return_line(ast.Unary(ast.UnaryOp.NOT, b)) == "s6:return;s31:s5:unary;s1:!;s12:s3:var;s1:b;;;"
    assert return_line(ast.Unary(ast.UnaryOp.NEG, x)) == "s6:return;s31:s5:unary;s1:-;s12:s3:var;s1:x;;;"
    assert (
        return_line(ast.Binary(ast.BinaryOp.AND, b, x))
        == "s6:return;s47:s3:bin;s2:&&;s12:s3:var;s1:b;;s12:s3:var;s1:x;;;"
    )
    assert (
        return_line(ast.Binary(ast.BinaryOp.LTE, b, x))
        == "s6:return;s47:s3:bin;s2:<=;s12:s3:var;s1:b;;s12:s3:var;s1:x;;;"
    )
    assert (
        return_line(ast.Call("math.sqrt", (x,))) == "s6:return;s40:s4:call;s9:math.sqrt;n;s12:s3:var;s1:x;;;"
    )
    assert (
        return_line(ast.Call("list.empty", (), ast.TypeRef("I32")))
        == "s6:return;s43:s4:call;s10:list.empty;s15:s4:type;s3:I32;;;"
    )
    assert return_line(ast.Call("now", ())) == "s6:return;s17:s4:call;s3:now;n;;"


def test_binary_operator_symbols() -> None:
    symbols = {
        "add": "+", "sub": "-", "mul": "*", "div": "/", "rem": "%", "eq": "==", "ne": "!=",
        "lt": "<", "lte": "<=", "gt": ">", "gte": ">=", "and": "&&", "or": "||",
    }  # fmt: skip
    for wire, symbol in symbols.items():
        line = return_line(ast.Binary(ast.BinaryOp(wire), ast.Var("a"), ast.Var("b")))
        field = f"s{len(symbol)}:{symbol};"
        assert line.startswith(f"s6:return;s{41 + len(field)}:s3:bin;{field}"), wire


def test_composite_type_record() -> None:
    map_type = ast.TypeRef("Map", (ast.TypeRef("String"), ast.TypeRef("List", (I32,))))
    lines = canonical_lines(module(fn((ast.Return(ast.Var("m")),), ret=map_type)))
    assert lines[2] == (
        "s2:fn;s5:entry;s4:main;"
        "s79:s4:type;s3:Map;s18:s4:type;s6:String;;s36:s4:type;s4:List;s15:s4:type;s3:I32;;;;"
    )


# ---------------------------------------------------------------------------------------------
# Statements and module layout


def test_statement_lines() -> None:
    b = ast.Var("b")
    body: tuple[ast.Stmt, ...] = (
        ast.If(b, (ast.Break(),), (ast.Continue(),)),
        ast.If(b, (), ()),
        ast.While(b, ()),
        ast.ForRange("i", lit(ast.LiteralKind.I32, 0), ast.Var("n"), (ast.ExprStmt(b),)),
        ast.Set("y", b),
        ast.Return(b),
    )
    lines = canonical_lines(module(fn(body, params=(ast.Param("n", I32),))))
    assert lines[3:] == [
        "s5:param;s1:n;s15:s4:type;s3:I32;;",
        "s2:if;s12:s3:var;s1:b;;",
        "s5:break;",
        "s4:else;",
        "s8:continue;",
        "s5:endif;",
        "s2:if;s12:s3:var;s1:b;;",
        "s4:else;",  # written even when the else-branch is empty
        "s5:endif;",
        "s5:while;s12:s3:var;s1:b;;",
        "s8:endwhile;",
        "s3:for;s1:i;s24:s3:lit;s12:s3:i32;s1:0;;;s12:s3:var;s1:n;;",
        "s4:expr;s12:s3:var;s1:b;;",
        "s6:endfor;",
        "s3:set;s1:y;s12:s3:var;s1:b;;",
        "s6:return;s12:s3:var;s1:b;;",
    ]


def test_header_sorting_is_ordinal() -> None:
    ret = (ast.Return(ast.Var("v")),)
    m = module(
        fn(ret, fid="b"),
        fn(ret, fid="a", visibility=ast.Visibility.PRIVATE),
        fn(ret, fid="Z"),
        capability_requests=(
            ast.CapabilityRequest("b.cap"),
            ast.CapabilityRequest("a.cap", "z"),
            ast.CapabilityRequest("a.cap", "y"),
        ),
        metadata=(("\uff21", "bmp"), ("\U0001f600", "astral"), ("k", "v")),
        target_sandbox_version="1.0.0",
    )
    lines = canonical_lines(m)
    assert lines[:7] == [
        "s13:canonicalizer;s23:dotboxd-canonicalizer-1;",
        "s6:module;s1:m;s5:1.0.0;s5:1.0.0;",
        "s8:requires;s5:a.cap;s1:y;",
        "s8:requires;s5:a.cap;s1:z;",
        "s8:requires;s5:b.cap;s0:;",  # a missing reason is the empty string
        "s8:metadata;s1:k;s1:v;",
        "s8:metadata;s2:\U0001f600;s6:astral;",  # UTF-16 order puts the astral key before U+FF21
    ]
    assert lines[7] == "s8:metadata;s1:\uff21;s3:bmp;"
    fn_lines = [line for line in lines if line.startswith("s2:fn;")]
    assert fn_lines == [
        "s2:fn;s5:entry;s1:Z;s15:s4:type;s3:I32;;",
        "s2:fn;s7:private;s1:a;s15:s4:type;s3:I32;;",
        "s2:fn;s5:entry;s1:b;s15:s4:type;s3:I32;;",
    ]


def test_function_order_does_not_change_the_hash() -> None:
    ret = (ast.Return(ast.Var("v")),)
    one = module(fn(ret, fid="a"), fn(ret, fid="b"))
    two = module(fn(ret, fid="b"), fn(ret, fid="a"))
    assert module_hash(one) == module_hash(two)


def test_statement_and_operand_order_change_the_hash() -> None:
    a, b = ast.Var("a"), ast.Var("b")
    sub_ab = module(fn((ast.Return(ast.Binary(ast.BinaryOp.SUB, a, b)),)))
    sub_ba = module(fn((ast.Return(ast.Binary(ast.BinaryOp.SUB, b, a)),)))
    assert module_hash(sub_ab) != module_hash(sub_ba)
    first = module(fn((ast.Set("x", a), ast.Set("y", b), ast.Return(a))))
    second = module(fn((ast.Set("y", b), ast.Set("x", a), ast.Return(a))))
    assert module_hash(first) != module_hash(second)


def test_delimiter_heavy_names_stay_distinct() -> None:
    """Length prefixes keep `a),var(b` + `c` apart from `a` + `b),var(c`."""
    one = module(fn((ast.Return(ast.Binary(ast.BinaryOp.ADD, ast.Var("a;s1:"), ast.Var("c"))),)))
    two = module(fn((ast.Return(ast.Binary(ast.BinaryOp.ADD, ast.Var("a"), ast.Var(";s1:c"))),)))
    assert canonical_text(one) != canonical_text(two)
    assert module_hash(one) != module_hash(two)


def test_spans_and_pointers_do_not_matter() -> None:
    plain = import_module(LOOT_SCORE_JSON)
    spaced = import_module(json.dumps(json.loads(LOOT_SCORE_JSON), indent=7))
    assert module_hash(plain) == module_hash(spaced)


def test_malformed_ast_literal_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        canonical_text(module(fn((ast.Return(lit(ast.LiteralKind.I32, "7")),))))
    with pytest.raises(TypeError):
        canonical_text(module(fn((ast.Return(lit(ast.LiteralKind.BOOL, 1)),))))


# ---------------------------------------------------------------------------------------------
# Budgets: escape growth and deep trees


def _nested_negations(depth: int, leaf: ast.Expr) -> ast.Expr:
    expr = leaf
    for _ in range(depth):
        expr = ast.Unary(ast.UnaryOp.NEG, expr)
    return expr


def test_escape_growth_is_exponential_and_bounded() -> None:
    """A backslash d levels deep costs about 2**d units; the budget stops it with E-CANON-LIMIT."""
    sizes = []
    for depth in (10, 11, 12):
        line = return_line(_nested_negations(depth, lit(ast.LiteralKind.STRING, "\\")))
        sizes.append(line.count("\\"))
    assert sizes[1] == 2 * sizes[0] and sizes[2] == 2 * sizes[1]

    hostile = module(fn((ast.Return(_nested_negations(58, lit(ast.LiteralKind.STRING, "\\"))),)))
    with pytest.raises(DotBoxDError) as info:
        module_hash(hostile)
    assert info.value.code == "E-CANON-LIMIT"
    assert info.value.diagnostic.evidence["max_units"] == canonical.MAX_CANONICAL_UNITS


def _peak_bytes(run: Callable[[], object]) -> int:
    """Peak Python memory allocated while ``run`` executes (the AST is built before).

    tracemalloc counts every thread's allocations; under pytest-xdist the worker's message thread
    allocates while a test runs, which once pushed this past its bound. ``run`` is pure computation,
    so a long switch interval keeps the other threads off the interpreter until it is done."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(60.0)
    tracemalloc.start()
    try:
        with contextlib.suppress(DotBoxDError):
            run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        sys.setswitchinterval(interval)


def _refusal(m: ast.Module, **budgets: int) -> DotBoxDError:
    with pytest.raises(DotBoxDError) as info:
        canonical_text(m, **budgets)
    assert info.value.code == "E-CANON-LIMIT"
    return info.value


def test_deep_escape_is_refused_without_building_its_text() -> None:
    """300 bytes of wire asking for 2.3e18 units: refused from integers, in kilobytes of memory."""
    hostile = module(fn((ast.Return(_nested_negations(58, lit(ast.LiteralKind.STRING, "\\"))),)))
    units, work = canonical_size(hostile)
    assert units > 2**60
    evidence = _refusal(hostile).diagnostic.evidence
    assert (evidence["units"], evidence["work"]) == (units, work)
    assert _peak_bytes(lambda: module_hash(hostile)) < 256 * 1024


def test_wide_escape_growth_is_measured_before_anything_is_built() -> None:
    """400 siblings of 262k units each: every one fits, together they are 3x the budget. The first
    backslash that will be escaped again makes the encoder measure the module and refuse it before
    building any of them (building up to the budget would take over 32 MiB)."""
    arg = _nested_negations(14, lit(ast.LiteralKind.STRING, "\\"))
    wide = module(fn((ast.Return(ast.Call("f", (arg,) * 400)),)))
    assert canonical_size(wide)[0] > 3 * canonical.MAX_CANONICAL_UNITS
    _refusal(wide)
    assert _peak_bytes(lambda: module_hash(wide)) < 2 * 1024 * 1024


def test_memory_stays_within_the_budget_without_escapes() -> None:
    """No backslash anywhere: sizes only add up, nothing is pre-measured, and the running checks
    stop the build before the pieces held for one line outgrow the budget (325k units here; the
    whole call would take over 1 MB)."""
    wide = module(fn((ast.Return(ast.Call("f", (_nested_negations(40, ast.Var("x")),) * 400)),)))
    budget = 100_000
    assert canonical_size(wide)[0] > 3 * budget
    _refusal(wide, max_units=budget)
    assert _peak_bytes(lambda: canonical_text(wide, max_units=budget)) < 2 * budget + 256 * 1024


def test_astronomic_sizes_are_reported_capped() -> None:
    """A hand-built AST far deeper than any importer allows: its size has over 4300 digits (more
    than ``str(int)`` converts); the refusal reports the .NET long maximum and still renders."""
    hostile = module(fn((ast.Return(_nested_negations(15_000, lit(ast.LiteralKind.STRING, "\\"))),)))
    error = _refusal(hostile)
    cap = 2**63 - 1
    assert error.diagnostic.evidence["units"] == error.diagnostic.evidence["work"] == cap
    assert f"more than {cap:,}" in error.diagnostic.message
    assert json.loads(json.dumps(error.diagnostic.to_json()))["evidence"]["units"] == cap
    assert "E-CANON-LIMIT" in error.diagnostic.render()


def test_budget_counts_units_held_not_just_one_record() -> None:
    """Many siblings, each under the budget, still trip it together."""
    arg = _nested_negations(12, lit(ast.LiteralKind.STRING, "\\"))
    one = canonical_text(module(fn((ast.Return(ast.Call("f", (arg,))),))))
    many = module(fn((ast.Return(ast.Call("f", (arg,) * 40)),)))
    with pytest.raises(DotBoxDError) as info:
        canonical_text(many, max_units=20 * len(one))
    assert info.value.code == "E-CANON-LIMIT"
    assert canonical_text(many, max_units=60 * len(one)).count("\n") == 4


def test_work_budget_bounds_deep_copying() -> None:
    deep = module(fn((ast.Return(_nested_negations(2000, ast.Var("x"))),)))
    text = canonical_text(deep)  # fine within the default budgets, no recursion involved
    assert text.count("unary") == 2000
    with pytest.raises(DotBoxDError) as info:
        canonical_text(deep, max_work=len(text))
    assert info.value.code == "E-CANON-LIMIT"


def test_deep_trees_need_no_recursion() -> None:
    """Text-form ASTs may nest deeper than Python's recursion limit; the encoder uses stacks."""
    import sys

    depth = sys.getrecursionlimit() + 500
    expr: ast.Expr = ast.Var("x")
    for _ in range(depth):
        expr = ast.Binary(ast.BinaryOp.ADD, expr, lit(ast.LiteralKind.I32, 1))
    block: tuple[ast.Stmt, ...] = (ast.Return(expr),)
    for _ in range(depth):
        block = (ast.While(ast.Var("b"), block),)
    type_ref = I32
    for _ in range(depth):
        type_ref = ast.TypeRef("List", (type_ref,))
    m = module(fn((*block, ast.Return(ast.Var("x"))), ret=type_ref))
    lines = canonical_lines(m)
    assert sum(1 for line in lines if line == "s8:endwhile;") == depth
    assert lines[2].count("s4:List;") == depth
