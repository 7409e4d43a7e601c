"""Semantic sandbox types and their resolution from syntactic ``TypeRef`` nodes.

The AST only spells type names; this module decides which names exist. The vocabulary is DotBoxD's
implemented one (spec/validation.md section 3): the scalars ``Unit Bool I32 I64 F64 String Guid
SandboxPath SandboxUri``, opaque-id *brands* that a policy declares (``PlayerId``), and the
composites ``List<T>``, ``Map<K,V>`` and positional ``Record<F1,...,Fn>``. Identity is structural:
two types are equal when they print the same.

Resolution fails closed: any name that is not in the vocabulary is unknown; host-machinery names
(``Object``, ``Type``, ``Stream``, anything under ``System.``...) and deferred names (``F32``,
``Decimal``, ``Option``...) are rejected with a reason a reviewer can read. Nesting is bounded so
values and checks stay shallow.

Depth convention: a scalar or brand has depth 0 and each composite adds one, so
``List<List<I32>>`` has depth 2. ``MAX_TYPE_DEPTH`` (8) is the deepest type accepted.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from dotboxd.core.ast import LiteralKind, TypeRef
from dotboxd.core.diagnostics import DotBoxDError, reject

MAX_TYPE_DEPTH = 8


class SandboxType(ABC):
    """Base of every semantic type. Subclasses are frozen, slotted and compare structurally."""

    __slots__ = ()

    @property
    def depth(self) -> int:
        """Composite nesting depth (0 for scalars and brands)."""
        return 0

    @abstractmethod
    def to_json(self) -> Any:
        """The wire spelling: a string for scalars and brands, ``{"name", "arguments"}`` otherwise."""


@dataclass(frozen=True, slots=True)
class ScalarType(SandboxType):
    """One of the nine built-in scalars. Use the module constants (``I32``...), not the constructor."""

    name: str

    def __str__(self) -> str:
        return self.name

    def to_json(self) -> Any:
        return self.name


@dataclass(frozen=True, slots=True)
class OpaqueIdType(SandboxType):
    """A domain id (``PlayerId``): a branded string value, never an object with behaviour."""

    brand: str

    def __str__(self) -> str:
        return self.brand

    def to_json(self) -> Any:
        return self.brand


@dataclass(frozen=True, slots=True)
class ListType(SandboxType):
    element: SandboxType

    @property
    def depth(self) -> int:
        return 1 + self.element.depth

    def __str__(self) -> str:
        return f"List<{self.element}>"

    def to_json(self) -> Any:
        return {"name": "List", "arguments": [self.element.to_json()]}


@dataclass(frozen=True, slots=True)
class MapType(SandboxType):
    key: SandboxType
    value: SandboxType

    @property
    def depth(self) -> int:
        return 1 + max(self.key.depth, self.value.depth)

    def __str__(self) -> str:
        return f"Map<{self.key}, {self.value}>"

    def to_json(self) -> Any:
        return {"name": "Map", "arguments": [self.key.to_json(), self.value.to_json()]}


@dataclass(frozen=True, slots=True)
class RecordType(SandboxType):
    """A positional record; fields are read by constant index with ``record.get``."""

    fields: tuple[SandboxType, ...]

    @property
    def depth(self) -> int:
        return 1 + max(f.depth for f in self.fields)

    def __str__(self) -> str:
        return f"Record<{', '.join(str(f) for f in self.fields)}>"

    def to_json(self) -> Any:
        return {"name": "Record", "arguments": [f.to_json() for f in self.fields]}


def type_kind(t: SandboxType) -> str:
    """The kind of a type: a scalar's name, ``Opaque`` for any brand, or the composite's name."""
    if isinstance(t, ScalarType):
        return t.name
    if isinstance(t, OpaqueIdType):
        return "Opaque"
    return {ListType: "List", MapType: "Map", RecordType: "Record"}.get(type(t), str(t))


UNIT = ScalarType("Unit")
BOOL = ScalarType("Bool")
I32 = ScalarType("I32")
I64 = ScalarType("I64")
F64 = ScalarType("F64")
STRING = ScalarType("String")
GUID = ScalarType("Guid")
SANDBOX_PATH = ScalarType("SandboxPath")
SANDBOX_URI = ScalarType("SandboxUri")

#: The scalar vocabulary by exact (case-sensitive) name.
SCALARS: dict[str, ScalarType] = {
    t.name: t for t in (UNIT, BOOL, I32, I64, F64, STRING, GUID, SANDBOX_PATH, SANDBOX_URI)
}
NUMERIC_TYPES: frozenset[SandboxType] = frozenset({I32, I64, F64})
#: The scalar each literal kind denotes (an opaque-id literal is typed by its brand, so it is absent).
LITERAL_TYPES: dict[LiteralKind, ScalarType] = {
    LiteralKind.UNIT: UNIT,
    LiteralKind.BOOL: BOOL,
    LiteralKind.I32: I32,
    LiteralKind.I64: I64,
    LiteralKind.F64: F64,
    LiteralKind.STRING: STRING,
    LiteralKind.GUID: GUID,
    LiteralKind.PATH: SANDBOX_PATH,
    LiteralKind.URI: SANDBOX_URI,
}
#: Scalars allowed as map keys (declared brands are allowed too). No F64, Unit, Guid or composites.
MAP_KEY_SCALARS: frozenset[SandboxType] = frozenset({BOOL, I32, I64, STRING, SANDBOX_PATH, SANDBOX_URI})
COMPOSITE_NAMES: dict[str, int] = {"List": 1, "Map": 2, "Record": -1}  # -1: one or more

#: Host-machinery names, compared case-insensitively. Rejected everywhere, whatever their arguments.
FORBIDDEN_TYPE_NAMES: frozenset[str] = frozenset(
    n.lower()
    for n in [
        "Object",
        "Dynamic",
        "Type",
        "Assembly",
        "MemberInfo",
        "MethodInfo",
        "PropertyInfo",
        "FieldInfo",
        "ConstructorInfo",
        "Module",
        "RuntimeTypeHandle",
        "RuntimeMethodHandle",
        "RuntimeFieldHandle",
        "Delegate",
        "Expression",
        "IQueryable",
        "IServiceProvider",
        "ServiceProvider",
        "Stream",
        "TextReader",
        "TextWriter",
        "FileInfo",
        "DirectoryInfo",
        "DriveInfo",
        "HttpClient",
        "Socket",
        "DbConnection",
        "DbContext",
        "Process",
        "Thread",
        "Task",
        "CancellationTokenSource",
        "CancellationToken",
        "IntPtr",
        "UIntPtr",
        "SafeHandle",
        "Span",
        "ReadOnlySpan",
        "Memory",
        "ReadOnlyMemory",
        "Pointer",
        "TypedReference",
        "ArgIterator",
        "RuntimeArgumentHandle",
        "Action",
        "Func",
        "Any",
    ]
)
_FORBIDDEN_PREFIXES = ("system.", "microsoft.")
#: Types the design deliberately postpones; they are rejected until specified.
DEFERRED_TYPE_NAMES: frozenset[str] = frozenset(
    n.lower() for n in ("F32", "Decimal", "Bytes", "Option", "Result", "Tuple", "EntityRef")
)

_BRAND = re.compile(r"[A-Z][A-Za-z0-9_]{0,63}")


def type_name_class(name: str) -> str:
    """Classify a bare name: ``scalar``, ``composite``, ``forbidden``, ``deferred`` or ``other``."""
    if name in SCALARS:
        return "scalar"
    if name in COMPOSITE_NAMES:
        return "composite"
    lowered = name.lower()
    if lowered in FORBIDDEN_TYPE_NAMES or lowered.startswith(_FORBIDDEN_PREFIXES):
        return "forbidden"
    if lowered in DEFERRED_TYPE_NAMES:
        return "deferred"
    return "other"


def brand_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be an opaque-id brand, or None when it can.

    A brand is 1-64 characters: an uppercase ASCII letter, then ASCII letters, digits or ``_``; it
    must not collide with a built-in, composite, forbidden or deferred name (case-insensitively for
    the last two, so ``OBJECT`` cannot sneak in as a brand)."""
    if _BRAND.fullmatch(name) is None:
        return "is not a brand name (an uppercase ASCII letter, then up to 63 letters, digits or '_')"
    kind = type_name_class(name)
    if kind != "other" or name.lower() in {s.lower() for s in SCALARS} | {c.lower() for c in COMPOSITE_NAMES}:
        return f"collides with the {kind if kind != 'other' else 'built-in'} type name '{name}'"
    return None


def is_map_key_type(t: SandboxType) -> bool:
    """Map keys: Bool, I32, I64, String, SandboxPath, SandboxUri and declared brands."""
    return t in MAP_KEY_SCALARS or isinstance(t, OpaqueIdType)


def contains_brand(t: SandboxType) -> bool:
    """True when an opaque-id brand occurs anywhere in ``t`` (bindings may not use brands)."""
    if isinstance(t, OpaqueIdType):
        return True
    if isinstance(t, ListType):
        return contains_brand(t.element)
    if isinstance(t, MapType):
        return contains_brand(t.key) or contains_brand(t.value)
    if isinstance(t, RecordType):
        return any(contains_brand(f) for f in t.fields)
    return False


# ---------------------------------------------------------------------------------------------
# Resolution


class TypeProblem(Exception):
    """Why a type reference does not resolve: the offending node, a short reason and its kind.

    ``kind`` is one of ``unknown``, ``forbidden``, ``deferred``, ``undeclared-brand``, ``arity``,
    ``map-key`` and ``depth``; callers turn it into their own code (a module uses E-TYPE-*, a
    binding uses E-BINDING-TYPE)."""

    def __init__(self, kind: str, reason: str, ref: TypeRef) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason
        self.ref = ref


_MODULE_CODES = {
    "unknown": "E-TYPE-UNKNOWN",
    "forbidden": "E-TYPE-UNKNOWN",
    "deferred": "E-TYPE-UNKNOWN",
    "undeclared-brand": "E-TYPE-UNKNOWN",
    "arity": "E-TYPE-ARITY",
    "map-key": "E-TYPE-MAP-KEY",
    "depth": "E-TYPE-DEPTH",
}


def resolve_or_problem(ref: TypeRef, brands: Collection[str] = ()) -> SandboxType:
    """Resolve ``ref`` against the vocabulary plus the declared ``brands``; raise TypeProblem."""
    name = ref.name
    args = ref.arguments
    scalar = SCALARS.get(name)
    if scalar is not None:
        if args:
            raise TypeProblem("arity", f"'{name}' takes no type arguments", ref)
        return scalar
    arity = COMPOSITE_NAMES.get(name)
    if arity is not None:
        if (arity == -1 and not args) or (arity > 0 and len(args) != arity):
            want = "at least 1" if arity == -1 else str(arity)
            raise TypeProblem("arity", f"'{name}' takes {want} type argument(s), got {len(args)}", ref)
        resolved = tuple(resolve_or_problem(a, brands) for a in args)
        result: SandboxType
        if name == "List":
            result = ListType(resolved[0])
        elif name == "Map":
            if not is_map_key_type(resolved[0]):
                raise TypeProblem("map-key", f"'{resolved[0]}' cannot be a map key", args[0])
            result = MapType(resolved[0], resolved[1])
        else:
            result = RecordType(resolved)
        if result.depth > MAX_TYPE_DEPTH:
            raise TypeProblem("depth", f"nesting depth {result.depth} exceeds {MAX_TYPE_DEPTH}", ref)
        return result
    kind = type_name_class(name)
    if kind == "forbidden":
        raise TypeProblem("forbidden", f"'{name}' names host machinery and is forbidden", ref)
    if kind == "deferred":
        raise TypeProblem("deferred", f"'{name}' is a deferred type that is not supported", ref)
    if name in brands:
        if args:
            raise TypeProblem("arity", f"opaque id '{name}' takes no type arguments", ref)
        return OpaqueIdType(name)
    if brand_name_problem(name) is None:
        raise TypeProblem("undeclared-brand", f"opaque id type '{name}' is not declared by the policy", ref)
    raise TypeProblem("unknown", f"unknown type '{name}'", ref)


def resolve_type(ref: TypeRef, brands: Collection[str] = ()) -> SandboxType:
    """Resolve a module's type reference; raise DotBoxDError (E-TYPE-UNKNOWN, -ARITY, -MAP-KEY, -DEPTH)."""
    try:
        return resolve_or_problem(ref, brands)
    except TypeProblem as problem:
        raise type_problem_error(problem, outer=ref) from None


def type_problem_error(problem: TypeProblem, outer: TypeRef) -> DotBoxDError:
    """The module-side diagnostic for a TypeProblem (pointer at the offending node)."""
    node = problem.ref
    return reject(
        _MODULE_CODES[problem.kind],
        f"type {outer}: {problem.reason}",
        node.pointer or outer.pointer,
        node.span or outer.span,
        hint=_HINTS[problem.kind],
        type=str(outer),
        reason=problem.kind,
    )


_HINTS = {
    "unknown": "use Unit, Bool, I32, I64, F64, String, Guid, SandboxPath, SandboxUri, List, Map, Record",
    "forbidden": "host objects are never sandbox values; pass data (strings, numbers, ids) instead",
    "deferred": "this type is not part of the language yet; use the supported vocabulary",
    "undeclared-brand": "the host policy must declare the opaque id type (declare_opaque_id_type)",
    "arity": "List takes 1 type argument, Map 2, Record at least 1, scalars none",
    "map-key": "map keys must be Bool, I32, I64, String, SandboxPath, SandboxUri or a declared opaque id",
    "depth": f"flatten the type: composite nesting is limited to {MAX_TYPE_DEPTH}",
}


# ---------------------------------------------------------------------------------------------
# Text and JSON spellings (binding manifests and Python hints use them)


def type_ref_from_json(obj: Any, pointer: str = "") -> TypeRef:
    """Parse the wire type form (``"I32"`` or ``{"name", "arguments"}``) or the text form
    ``"Map<String, I32>"`` into a TypeRef; raise ValueError with a reason on a malformed shape."""
    if isinstance(obj, str):
        return parse_type_text(obj, pointer)
    if isinstance(obj, dict):
        extra = set(obj) - {"name", "arguments"}
        if extra or not isinstance(obj.get("name"), str):
            raise ValueError('a composite type is {"name": str, "arguments": [...]}')
        raw_args = obj.get("arguments", [])
        if not isinstance(raw_args, list):
            raise ValueError("type arguments must be a list")
        args = tuple(type_ref_from_json(a, f"{pointer}/arguments/{i}") for i, a in enumerate(raw_args))
        return TypeRef(obj["name"], args, pointer=pointer)
    raise ValueError(f"a type is a string or an object, not {type(obj).__name__}")


_TOKEN = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_.$]*|<|>|,)")


def parse_type_text(text: str, pointer: str = "") -> TypeRef:
    """Parse ``List<Map<String, I32>>`` into a TypeRef (raise ValueError on a malformed text)."""
    tokens: list[str] = []
    pos = 0
    while pos < len(text):
        if text[pos:].isspace():
            break
        match = _TOKEN.match(text, pos)
        if match is None:
            raise ValueError(f"unexpected character {text[pos]!r} in type {text!r}")
        tokens.append(match.group(1))
        pos = match.end()
    ref, index = _parse_tokens(tokens, 0, pointer, text)
    if index != len(tokens):
        raise ValueError(f"trailing text in type {text!r}")
    return ref


def _parse_tokens(tokens: list[str], index: int, pointer: str, text: str) -> tuple[TypeRef, int]:
    if index >= len(tokens) or tokens[index] in "<>,":
        raise ValueError(f"expected a type name in {text!r}")
    name = tokens[index]
    index += 1
    args: list[TypeRef] = []
    if index < len(tokens) and tokens[index] == "<":
        index += 1
        while True:
            arg, index = _parse_tokens(tokens, index, f"{pointer}/arguments/{len(args)}", text)
            args.append(arg)
            if index < len(tokens) and tokens[index] == ",":
                index += 1
                continue
            if index < len(tokens) and tokens[index] == ">":
                index += 1
                break
            raise ValueError(f"unclosed '<' in type {text!r}")
    return TypeRef(name, tuple(args), pointer=pointer), index


def to_type_ref(t: SandboxType) -> TypeRef:
    """The syntactic form of a semantic type (no pointer)."""
    if isinstance(t, ScalarType):
        return TypeRef(t.name)
    if isinstance(t, OpaqueIdType):
        return TypeRef(t.brand)
    if isinstance(t, ListType):
        return TypeRef("List", (to_type_ref(t.element),))
    if isinstance(t, MapType):
        return TypeRef("Map", (to_type_ref(t.key), to_type_ref(t.value)))
    if isinstance(t, RecordType):
        return TypeRef("Record", tuple(to_type_ref(f) for f in t.fields))
    raise TypeError(f"not a sandbox type: {t!r}")
