"""The generator's vocabulary: which types it draws, and values of a type as literals or JSON.

Types are the validator's own semantic types (``dotboxd.core.types``), so "well typed" is decided
by equality on the same objects the type pass compares. Values come in two forms: AST literals (for
scalar and opaque-id types; composites are built with ``list.of``/``map.set``/``record.new``) and
the conformance typed encoding (entrypoint inputs and fixture return values).

Sizes are kept small on purpose: most integers are near zero (so arithmetic rarely overflows unless
a program works at it), texts are a handful of UTF-16 units (some astral, to exercise UTF-16
lengths), collections hold at most a few elements. Extremes (I32 MIN/MAX, long texts) still appear,
rarely, because overflow and quota errors are worth pinning too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from dotboxd.core import ast
from dotboxd.core.types import (
    BOOL,
    F64,
    GUID,
    I32,
    I64,
    LITERAL_TYPES,
    SANDBOX_PATH,
    SANDBOX_URI,
    STRING,
    UNIT,
    ListType,
    MapType,
    OpaqueIdType,
    RecordType,
    SandboxType,
    to_type_ref,
)
from dotboxd.core.values import I32_MAX, I32_MIN, I64_MAX, I64_MIN, decode_typed, encode_typed
from dotboxd.grammar import literals as literal_rules
from dotboxd.grammar.literals import dangerous_fragment, path_problem, uri_problem

from .source import Source

#: Brand names a module may declare (each passes ``brand_name_problem``).
BRAND_POOL: tuple[str, ...] = ("PlayerId", "ItemId", "QuestId", "ZoneRef", "Team_7")

_SCALARS: tuple[tuple[int, SandboxType], ...] = (
    (30, I32),
    (12, BOOL),
    (12, STRING),
    (7, I64),
    (7, F64),
    (3, GUID),
    (3, SANDBOX_PATH),
    (3, SANDBOX_URI),
    (1, UNIT),
)
_KEY_SCALARS: tuple[tuple[int, SandboxType], ...] = (
    (30, I32),
    (25, STRING),
    (6, BOOL),
    (8, I64),
    (4, SANDBOX_PATH),
    (3, SANDBOX_URI),
)
#: Deepest composite nesting the generator draws for a declared type (MAX_TYPE_DEPTH is 8).
MAX_DRAWN_DEPTH = 3

_TEXT_PIECES: tuple[str, ...] = (
    "a",
    "b",
    "hello",
    "world",
    " ",
    "Zürich",
    "naïve",
    "日本",
    "😀",
    "42",
    "-",
    "x_y",
    "Ω",
    "\t",
    "é",
    "𝄞",
    "Q",
)
_PATH_SEGMENTS: tuple[str, ...] = ("data", "cfg", "notes.txt", "img.png", "x_1", "deep", "a-b", "é")
_URIS: tuple[str, ...] = (
    "https://example.com",
    "https://example.com/a/b?q=1",
    "http://localhost:8080/x",
    "https://api.example.org/v1/items#top",
    "ftp://files.example.net/pub",
    "urn-ish://host",
)
_OPAQUE_VALUES: tuple[str, ...] = ("p-1", "player:42", "item_7", "Q.3", "x", "A-b_c.d:e")
_F64_POOL: tuple[float, ...] = (0.0, 1.0, -1.0, 0.5, 1.5, -2.25, 3.0, 0.1, 1000.0, -0.0, 2.5e-3, 1e15)


# ---------------------------------------------------------------------------------------------
# Types


def draw_scalar(src: Source, brands: tuple[str, ...], *, allow_unit: bool = True) -> SandboxType:
    """A scalar type, or (sometimes) one of ``brands``."""
    if brands and src.chance(8):
        return OpaqueIdType(src.choice(brands))
    options = _SCALARS if allow_unit else _SCALARS[:-1]
    return src.weighted(options)


def draw_key_type(src: Source, brands: tuple[str, ...]) -> SandboxType:
    """A map key type: Bool, I32, I64, String, SandboxPath, SandboxUri or a declared brand."""
    if brands and src.chance(10):
        return OpaqueIdType(src.choice(brands))
    return src.weighted(_KEY_SCALARS)


def draw_type(
    src: Source, brands: tuple[str, ...], depth: int = 2, *, allow_unit: bool = True
) -> SandboxType:
    """A type of composite depth at most ``depth``: mostly scalars, then List, Map and Record."""
    if depth <= 0 or src.chance(65):
        return draw_scalar(src, brands, allow_unit=allow_unit)
    kind = src.weighted(((45, "list"), (30, "map"), (25, "record")))
    if kind == "list":
        return ListType(draw_type(src, brands, depth - 1))
    if kind == "map":
        return MapType(draw_key_type(src, brands), draw_type(src, brands, depth - 1))
    size = src.integer(1, 3)
    return RecordType(tuple(draw_type(src, brands, depth - 1) for _ in range(size)))


def literal_able(t: SandboxType) -> bool:
    """Scalars and opaque ids have literals; composites are built by calls."""
    return not isinstance(t, (ListType, MapType, RecordType))


def mentions(t: SandboxType, kinds: tuple[type, ...]) -> bool:
    """True when ``t`` or a type inside it is an instance of one of ``kinds``."""
    if isinstance(t, kinds):
        return True
    if isinstance(t, ListType):
        return mentions(t.element, kinds)
    if isinstance(t, MapType):
        return mentions(t.key, kinds) or mentions(t.value, kinds)
    if isinstance(t, RecordType):
        return any(mentions(f, kinds) for f in t.fields)
    return False


# ---------------------------------------------------------------------------------------------
# Scalar values (shared by literals and JSON)


def draw_i32(src: Source) -> int:
    band = src.weighted(((60, "small"), (25, "medium"), (10, "edge"), (5, "any")))
    if band == "small":
        return src.integer(-10, 10)
    if band == "medium":
        return src.integer(-1000, 1000)
    if band == "edge":
        return src.choice((0, 1, -1, I32_MAX, I32_MIN, 65_535, -65_536))
    return src.integer(I32_MIN, I32_MAX)


def draw_i64(src: Source) -> int:
    band = src.weighted(((60, "small"), (20, "medium"), (10, "edge"), (10, "any")))
    if band == "small":
        return src.integer(-10, 10)
    if band == "medium":
        return src.integer(-(10**12), 10**12)
    if band == "edge":
        return src.choice((0, 1, -1, I64_MAX, I64_MIN, I32_MAX + 1, I32_MIN - 1))
    return src.integer(I64_MIN, I64_MAX)


def draw_f64(src: Source) -> float:
    if src.chance(50):
        return src.choice(_F64_POOL)
    return src.integer(-800, 800) / 8


def draw_text(src: Source, max_pieces: int = 3) -> str:
    """A short string (possibly empty) with some non-ASCII and astral characters; never a text
    the dangerous-reference scan would refuse in a literal."""
    pieces = [src.choice(_TEXT_PIECES) for _ in range(src.integer(0, max_pieces))]
    text = "".join(pieces)
    return text if dangerous_fragment(text) is None else "s"


def draw_path(src: Source) -> str:
    segments = [src.choice(_PATH_SEGMENTS) for _ in range(src.integer(1, 3))]
    text = "/".join(segments)
    return text if path_problem(text) is None else "data"


def draw_uri(src: Source) -> str:
    text = src.choice(_URIS)
    return text if uri_problem(text) is None else "https://example.com"


def draw_guid(src: Source) -> str:
    digits = "".join("0123456789abcdef"[src.integer(0, 15)] for _ in range(32))
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


def draw_opaque_value(src: Source) -> str:
    if src.chance(70):
        return src.choice(_OPAQUE_VALUES)
    alphabet = "abcXYZ019_.:-"
    drawn = "".join(alphabet[src.integer(0, len(alphabet) - 1)] for _ in range(src.integer(1, 6)))
    # ``..`` in an opaque value is E-JSON-ID (a path traversal); the draw count stays the same, so
    # every seed still produces the programs it did before
    while ".." in drawn:
        drawn = drawn.replace("..", ".-")
    return drawn


# ---------------------------------------------------------------------------------------------
# AST literals


def literal(src: Source, t: SandboxType) -> ast.Literal:
    """A literal of the scalar or opaque-id type ``t``."""
    if isinstance(t, OpaqueIdType):
        return ast.Literal(ast.LiteralKind.OPAQUE_ID, draw_opaque_value(src), t.brand)
    kind = _LITERAL_KINDS.get(t)
    if kind is None:
        raise ValueError(f"no literal for {t}")
    return ast.Literal(kind, _LITERAL_DRAWS[kind](src))


#: The literal kind of each scalar type (core's literal table, read backwards).
_LITERAL_KINDS: dict[SandboxType, ast.LiteralKind] = {t: kind for kind, t in LITERAL_TYPES.items()}
#: How a literal of each kind draws its value.
_LITERAL_DRAWS: dict[ast.LiteralKind, Callable[[Source], Any]] = {
    ast.LiteralKind.I32: draw_i32,
    ast.LiteralKind.BOOL: lambda src: src.chance(50),
    ast.LiteralKind.STRING: draw_text,
    ast.LiteralKind.I64: draw_i64,
    ast.LiteralKind.F64: draw_f64,
    ast.LiteralKind.GUID: draw_guid,
    ast.LiteralKind.PATH: draw_path,
    ast.LiteralKind.URI: draw_uri,
    ast.LiteralKind.UNIT: lambda src: None,
}


def small_i32(src: Source, lo: int, hi: int) -> ast.Literal:
    return ast.Literal(ast.LiteralKind.I32, src.integer(lo, hi))


# ---------------------------------------------------------------------------------------------
# JSON values (the conformance typed encoding)


def json_value(src: Source, t: SandboxType, depth: int = 0) -> Any:
    """A value of ``t`` in the conformance typed encoding. Map keys are distinct (the encoding
    refuses duplicates); callers that need canonical key order re-encode through the runtime."""
    if isinstance(t, OpaqueIdType):
        return {"type": t.brand, "value": draw_opaque_value(src)}
    if isinstance(t, ListType):
        return [json_value(src, t.element, depth + 1) for _ in range(_size(src, depth))]
    if isinstance(t, RecordType):
        return [json_value(src, f, depth + 1) for f in t.fields]
    if isinstance(t, MapType):
        pairs: list[list[Any]] = []
        seen: set[str] = set()
        for _ in range(_size(src, depth)):
            key = json_value(src, t.key, depth + 1)
            token = json.dumps(key, sort_keys=True)
            if token in seen:
                continue
            seen.add(token)
            pairs.append([key, json_value(src, t.value, depth + 1)])
        return pairs
    draw = _JSON_SCALAR_DRAWS.get(t)
    if draw is None:
        raise ValueError(f"no value for {t}")
    return draw(src)


#: How a JSON value of each scalar type draws: as its literal does, but with longer strings.
_JSON_SCALAR_DRAWS: dict[SandboxType, Callable[[Source], Any]] = {
    **{LITERAL_TYPES[kind]: draw for kind, draw in _LITERAL_DRAWS.items()},
    STRING: lambda src: draw_text(src, 4),
}


def canonical_json(src: Source, t: SandboxType) -> Any:
    """A value of ``t`` in the typed encoding with maps in canonical key order (the case format's
    rule), obtained by decoding and re-encoding through the runtime's own codec."""
    ref = to_type_ref(t)
    return encode_typed(decode_typed(json_value(src, t), ref, literal_rules), ref)


def _size(src: Source, depth: int) -> int:
    return src.integer(0, 4 if depth == 0 else 2)


def wrong_json_value(src: Source, t: SandboxType) -> Any:
    """A JSON value that is *not* a valid encoding of ``t`` (the ``malformed`` fixture behaviour)."""
    if t == SANDBOX_PATH:
        return src.choice(("../escape.txt", "/abs/path", "a//b"))
    if t == SANDBOX_URI:
        return src.choice(("https://user@host/x", "not a uri"))
    if t in (I32, I64):
        return src.choice(("7", 1.5, True, I64_MAX * 4))
    if t == STRING:
        return src.choice((7, None, ["x"]))
    if t == F64:
        return src.choice(("1.5", None, True))
    return src.choice(("malformed", 3.25))
