"""The one catalogue of built-in calls (spec/validation.md section 5.1): names, typing rules, effects, allocation, purity.

The validator types calls with it, both backends dispatch on the same names, and the prover reads the
same facts, so a built-in exists exactly when it is listed here. Fuel charges are *not* here: the
cost table lives in ``dotboxd.core.costs`` and refers to built-ins by name.

Two families, both pure (effects within Cpu|Alloc, no capability, no audit):

* **pure functions** (DotBoxD's default pure bindings): ``math.*``, ``string.*``, ``parse.int``,
  ``format.simple`` and ``int32.toStringInvariant``. As in DotBoxD, every call of one *is a binding call*
  (``Builtin.counts_as_host_call``): it takes one unit of ``maxHostCalls`` and shows in
  ``usage.hostCalls`` and ``bindingCalls`` under its own name;
* **language intrinsics**: ``list.*``, ``map.*``, ``record.*`` and ``numeric.*``, some generic; they
  never count as host calls.

``Builtin.can_fail`` says whether a call can end the run with anything but fuel, time or
cancellation (a value error, or any quota other than fuel, host calls included): the and/or
ordering rule reads it, so "may this operand run first" is decided from this table alone.

Resolution order for a call name: built-ins first, then module functions, then host
bindings, else E-CALL-UNKNOWN. Because a module function or a binding whose id equals a built-in name
could never be reached (or would shadow it), the validator and the binding registry reject such ids
outright; every call name therefore has at most one meaning.

Typing rules take a :class:`CallSite` (argument types, the resolved ``genericType`` and the value of
each argument that is an ``i32`` literal) and return the result type or raise :class:`CallTypeError`
naming the rule's diagnostic code and, where it applies, the offending argument.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from dotboxd.core.effects import Effect
from dotboxd.core.types import (
    BOOL,
    F64,
    I32,
    I64,
    MAX_TYPE_DEPTH,
    STRING,
    UNIT,
    ListType,
    MapType,
    RecordType,
    SandboxType,
    is_map_key_type,
)

BASE_SURFACE = "dotboxd-1"
"""The language surface of DotBoxD itself: every built-in DotBoxD ships."""
EXT_SURFACE = "dotboxd-1+ext1"
"""DotBoxD's surface plus the extension built-ins (``string.contains`` ... ``math.tan``)."""
SURFACES: tuple[str, ...] = (BASE_SURFACE, EXT_SURFACE)
"""Every language surface, smallest first: a later one contains every earlier one."""


class BuiltinKind(StrEnum):
    PURE_FUNCTION = "pure-function"  # math.*, string.*, int32.* (DotBoxD: PureIntrinsic bindings)
    INTRINSIC = "intrinsic"  # list.*, map.*, record.*, numeric.*


class GenericRule(StrEnum):
    FORBIDDEN = "forbidden"  # a genericType here is E-CALL-GENERIC
    ELEMENT = "element"  # list.empty: genericType is the element type T
    WHOLE = "whole"  # map.empty / record.new: genericType is the whole result type


@dataclass(frozen=True, slots=True)
class CallSite:
    """What a typing rule may look at: argument types, the genericType, and constant I32 arguments."""

    arg_types: tuple[SandboxType, ...]
    generic: SandboxType | None = None
    const_ints: tuple[int | None, ...] = ()

    def const_int(self, index: int) -> int | None:
        return self.const_ints[index] if index < len(self.const_ints) else None


class CallTypeError(Exception):
    """A typing rule's refusal: ``code`` (E-CALL-ARITY, E-TYPE-MISMATCH, ...), the argument index it
    concerns (None for the call as a whole) and, for mismatches, both types."""

    def __init__(
        self,
        code: str,
        message: str,
        arg_index: int | None = None,
        expected: str | None = None,
        actual: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.arg_index = arg_index
        self.expected = expected
        self.actual = actual


Typer = Callable[[CallSite], SandboxType]


@dataclass(frozen=True, slots=True)
class Builtin:
    """One built-in call.

    ``effects`` is what the call itself adds (always within Cpu|Alloc); ``allocates`` says whether it
    builds a new string or collection (the Alloc bit, and with it the allocation and shape quotas);
    ``failures`` lists the value-error categories it can raise at run time; ``stub`` is DotBoxD's
    exact compiled stub name where one exists (for binding descriptors)."""

    name: str
    kind: BuiltinKind
    signature: str
    effects: Effect
    allocates: bool
    generic: GenericRule
    typer: Typer
    failures: frozenset[str] = frozenset()
    stub: str | None = None
    surface: str = "dotboxd-1"

    @property
    def counts_as_host_call(self) -> bool:
        """A pure function is one of DotBoxD's default pure bindings: each call is a host call
        (``maxHostCalls``, ``usage.hostCalls``, ``bindingCalls``), charged before its base fuel."""
        return self.kind is BuiltinKind.PURE_FUNCTION

    @property
    def can_fail(self) -> bool:
        """Whether a call can fail with anything but fuel, time or cancellation: a value error
        (``failures``), a host-call quota, or a quota of the value it builds (allocation, shape).
        Only a call that cannot may be reordered by and/or (``spec/semantics.md``)."""
        return bool(self.failures) or self.counts_as_host_call or self.allocates

    def result_type(self, site: CallSite) -> SandboxType:
        """Type the call or raise CallTypeError (generic presence is checked by the caller)."""
        return self.typer(site)


# ---------------------------------------------------------------------------------------------
# Typing helpers


def _arity(site: CallSite, n: int, name: str) -> None:
    if len(site.arg_types) != n:
        raise CallTypeError("E-CALL-ARITY", f"{name} expects {n} argument(s), got {len(site.arg_types)}")


def _expect(site: CallSite, index: int, want: SandboxType, name: str) -> None:
    got = site.arg_types[index]
    if got != want:
        raise CallTypeError(
            "E-TYPE-MISMATCH",
            f"{name} argument {index + 1} must be {want}, got {got}",
            index,
            str(want),
            str(got),
        )


def fixed(params: Sequence[SandboxType], result: SandboxType, name: str) -> Typer:
    """A monomorphic rule: exact arity and exact argument types (nothing is widened)."""
    ps = tuple(params)

    def typer(site: CallSite) -> SandboxType:
        _arity(site, len(ps), name)
        for i, p in enumerate(ps):
            _expect(site, i, p, name)
        return result

    return typer


def _list_arg(site: CallSite, index: int, name: str) -> ListType:
    got = site.arg_types[index]
    if not isinstance(got, ListType):
        raise CallTypeError(
            "E-TYPE-MISMATCH",
            f"{name} argument {index + 1} must be a List, got {got}",
            index,
            "List<T>",
            str(got),
        )
    return got


def _map_arg(site: CallSite, index: int, name: str) -> MapType:
    got = site.arg_types[index]
    if not isinstance(got, MapType):
        raise CallTypeError(
            "E-TYPE-MISMATCH",
            f"{name} argument {index + 1} must be a Map, got {got}",
            index,
            "Map<K, V>",
            str(got),
        )
    return got


def _bounded(t: SandboxType, name: str) -> SandboxType:
    if t.depth > MAX_TYPE_DEPTH:
        raise CallTypeError("E-TYPE-DEPTH", f"{name} would build {t}, nested deeper than {MAX_TYPE_DEPTH}")
    return t


def _list_empty(site: CallSite) -> SandboxType:
    _arity(site, 0, "list.empty")
    assert site.generic is not None  # the validator checks presence (E-CALL-GENERIC) first
    return _bounded(ListType(site.generic), "list.empty")


def _list_of(site: CallSite) -> SandboxType:
    if not site.arg_types:
        return ListType(UNIT)
    first = site.arg_types[0]
    for i, t in enumerate(site.arg_types[1:], start=1):
        if t != first:
            raise CallTypeError(
                "E-TYPE-MISMATCH",
                f"list.of elements must share one type: element 1 is {first}, element {i + 1} is {t}",
                i,
                str(first),
                str(t),
            )
    return _bounded(ListType(first), "list.of")


def _list_count(site: CallSite) -> SandboxType:
    _arity(site, 1, "list.count")
    _list_arg(site, 0, "list.count")
    return I32


def _list_get(site: CallSite) -> SandboxType:
    _arity(site, 2, "list.get")
    lt = _list_arg(site, 0, "list.get")
    _expect(site, 1, I32, "list.get")
    return lt.element


def _list_add(site: CallSite) -> SandboxType:
    _arity(site, 2, "list.add")
    lt = _list_arg(site, 0, "list.add")
    _expect(site, 1, lt.element, "list.add")
    return lt


def _list_slice(site: CallSite) -> SandboxType:
    _arity(site, 3, "list.slice")
    lt = _list_arg(site, 0, "list.slice")
    _expect(site, 1, I32, "list.slice")
    _expect(site, 2, I32, "list.slice")
    return lt


def _map_count(site: CallSite) -> SandboxType:
    _arity(site, 1, "map.count")
    _map_arg(site, 0, "map.count")
    return I32


def _map_keys(site: CallSite) -> SandboxType:
    _arity(site, 1, "map.keys")
    return _bounded(ListType(_map_arg(site, 0, "map.keys").key), "map.keys")


def _map_empty(site: CallSite) -> SandboxType:
    _arity(site, 0, "map.empty")
    if not isinstance(site.generic, MapType):
        raise CallTypeError("E-CALL-GENERIC", f"map.empty needs a Map genericType, got {site.generic}")
    return site.generic


def _map_key_op(name: str, result: Callable[[MapType], SandboxType], extra_value: bool = False) -> Typer:
    def typer(site: CallSite) -> SandboxType:
        _arity(site, 3 if extra_value else 2, name)
        mt = _map_arg(site, 0, name)
        _expect(site, 1, mt.key, name)
        if extra_value:
            _expect(site, 2, mt.value, name)
        return result(mt)

    return typer


def _record_new(site: CallSite) -> SandboxType:
    rt = site.generic
    if not isinstance(rt, RecordType):
        raise CallTypeError("E-CALL-GENERIC", f"record.new needs a Record genericType, got {rt}")
    _arity(site, len(rt.fields), "record.new")
    for i, f in enumerate(rt.fields):
        _expect(site, i, f, "record.new")
    return rt


def _record_get(site: CallSite) -> SandboxType:
    _arity(site, 2, "record.get")
    rt = site.arg_types[0]
    if not isinstance(rt, RecordType):
        raise CallTypeError(
            "E-TYPE-MISMATCH", f"record.get argument 1 must be a Record, got {rt}", 0, "Record<...>", str(rt)
        )
    index = site.const_int(1)
    if index is None:
        raise CallTypeError(
            "E-CALL-RECORD-INDEX", "record.get needs a constant i32 literal as field index", 1
        )
    if not 0 <= index < len(rt.fields):
        raise CallTypeError(
            "E-CALL-RECORD-INDEX",
            f"record.get field index {index} is outside 0..{len(rt.fields) - 1} of {rt}",
            1,
        )
    return rt.fields[index]


def _to_f64(site: CallSite) -> SandboxType:
    _arity(site, 1, "numeric.toF64")
    got = site.arg_types[0]
    if got not in (I32, I64):
        raise CallTypeError(
            "E-TYPE-MISMATCH", f"numeric.toF64 takes I32 or I64, got {got}", 0, "I32 | I64", str(got)
        )
    return F64


# ---------------------------------------------------------------------------------------------
# The catalogue

_C = Effect.CPU
_CA = Effect.CPU | Effect.ALLOC
_PF = BuiltinKind.PURE_FUNCTION
_IN = BuiltinKind.INTRINSIC
_NO = GenericRule.FORBIDDEN
_INVALID = frozenset({"InvalidInput"})


def _pure(
    name: str,
    params: Sequence[SandboxType],
    result: SandboxType,
    stub: str | None = None,
    *,
    fails: bool = False,
    surface: str = "dotboxd-1",
) -> Builtin:
    allocates = result == STRING or isinstance(result, ListType)
    sig = f"({', '.join(str(p) for p in params)}) -> {result}"
    failures = _INVALID if fails else frozenset()
    return Builtin(
        name,
        _PF,
        sig,
        _CA if allocates else _C,
        allocates,
        _NO,
        fixed(params, result, name),
        failures,
        stub,
        surface,
    )


def _ext(name: str, params: Sequence[SandboxType], result: SandboxType) -> Builtin:
    """A pure function of the extension set ``dotboxd-1+ext1`` (spec/validation.md section 5.2)."""
    return _pure(name, params, result, surface=EXT_SURFACE)


_ENTRIES: tuple[Builtin, ...] = (
    # math.* (integer results are checked: abs(MIN) overflows -> InvalidInput)
    _pure("math.abs", [I32], I32, "AbsI32", fails=True),
    _pure("math.min", [I32, I32], I32, "MinI32"),
    _pure("math.max", [I32, I32], I32, "MaxI32"),
    _pure("math.clamp", [I32, I32, I32], I32, "ClampI32", fails=True),
    _pure("math.sqrt", [F64], F64, "SqrtF64", fails=True),
    _pure("math.floor", [F64], F64, "FloorF64"),
    _pure("math.ceil", [F64], F64, "CeilF64"),
    _pure("math.round", [F64], F64, "RoundF64"),
    _pure("int32.toStringInvariant", [I32], STRING, "Int32ToStringInvariant"),
    # string.* (lengths and indices in UTF-16 code units)
    _pure("string.length", [STRING], I32, "StringLength"),
    _pure("string.isEmpty", [STRING], BOOL),
    _pure("string.substringBudgeted", [STRING, I32, I32], STRING, fails=True),
    _pure("string.concatBudgeted", [STRING, STRING], STRING, "ConcatString"),
    _pure("string.equals", [STRING, STRING], BOOL),
    _pure("string.compareOrdinal", [STRING, STRING], I32),
    # the extension set dotboxd-1+ext1 (never inside a dotboxd-1-only policy)
    _ext("string.contains", [STRING, STRING], BOOL),
    _ext("string.indexOf", [STRING, STRING], I32),
    _ext("string.startsWith", [STRING, STRING], BOOL),
    _ext("string.endsWith", [STRING, STRING], BOOL),
    _ext("string.toLowerInvariant", [STRING], STRING),
    _ext("string.toUpperInvariant", [STRING], STRING),
    _pure("parse.int", [STRING], I32, fails=True, surface=EXT_SURFACE),
    _ext("math.sin", [F64], F64),
    _ext("math.cos", [F64], F64),
    _ext("math.tan", [F64], F64),
    _ext("string.split", [STRING, STRING], ListType(STRING)),
    _ext("string.replace", [STRING, STRING, STRING], STRING),
    _pure("format.simple", [STRING, ListType(STRING)], STRING, fails=True, surface=EXT_SURFACE),
    # list.*
    Builtin("list.empty", _IN, "<T>() -> List<T>", _CA, True, GenericRule.ELEMENT, _list_empty),
    Builtin("list.of", _IN, "(T, ...) -> List<T>  (no arguments: List<Unit>)", _CA, True, _NO, _list_of),
    Builtin("list.count", _IN, "(List<T>) -> I32", _C, False, _NO, _list_count),
    Builtin("list.get", _IN, "(List<T>, I32) -> T", _C, False, _NO, _list_get, _INVALID),
    Builtin("list.add", _IN, "(List<T>, T) -> List<T>", _CA, True, _NO, _list_add),
    Builtin(
        "list.slice",
        _IN,
        "(List<T>, I32 start, I32 count) -> List<T>",
        _CA,
        True,
        _NO,
        _list_slice,
        _INVALID,
        surface=EXT_SURFACE,
    ),
    # map.*
    Builtin("map.empty", _IN, "<Map<K, V>>() -> Map<K, V>", _CA, True, GenericRule.WHOLE, _map_empty),
    Builtin(
        "map.containsKey",
        _IN,
        "(Map<K, V>, K) -> Bool",
        _C,
        False,
        _NO,
        _map_key_op("map.containsKey", lambda m: BOOL),
    ),
    Builtin(
        "map.get",
        _IN,
        "(Map<K, V>, K) -> V",
        _C,
        False,
        _NO,
        _map_key_op("map.get", lambda m: m.value),
        frozenset({"NotFound"}),
    ),
    Builtin(
        "map.set",
        _IN,
        "(Map<K, V>, K, V) -> Map<K, V>",
        _CA,
        True,
        _NO,
        _map_key_op("map.set", lambda m: m, True),
    ),
    Builtin(
        "map.remove",
        _IN,
        "(Map<K, V>, K) -> Map<K, V>",
        _CA,
        True,
        _NO,
        _map_key_op("map.remove", lambda m: m),
    ),
    Builtin("map.count", _IN, "(Map<K, V>) -> I32", _C, False, _NO, _map_count, surface=EXT_SURFACE),
    Builtin("map.keys", _IN, "(Map<K, V>) -> List<K>", _CA, True, _NO, _map_keys, surface=EXT_SURFACE),
    # record.*
    Builtin(
        "record.new", _IN, "<Record<F...>>(F...) -> Record<F...>", _CA, True, GenericRule.WHOLE, _record_new
    ),
    Builtin("record.get", _IN, "(Record<F...>, constant I32 i) -> F_i", _C, False, _NO, _record_get),
    # numeric.* (the only conversions; nothing is widened implicitly)
    Builtin("numeric.toI64", _IN, "(I32) -> I64", _C, False, _NO, fixed([I32], I64, "numeric.toI64")),
    Builtin("numeric.toF64", _IN, "(I32 | I64) -> F64", _C, False, _NO, _to_f64),
)

#: Every built-in by call name (read-only).
BUILTINS: Mapping[str, Builtin] = MappingProxyType({b.name: b for b in _ENTRIES})

#: DotBoxD's exact compiled stubs and the signature a binding must have to use one (E-BINDING-COMPILED).
EXACT_STUBS: Mapping[str, tuple[tuple[SandboxType, ...], SandboxType]] = MappingProxyType(
    {
        "Int32ToStringInvariant": ((I32,), STRING),
        "StringLength": ((STRING,), I32),
        "ConcatString": ((STRING, STRING), STRING),
        "AbsI32": ((I32,), I32),
        "MinI32": ((I32, I32), I32),
        "MaxI32": ((I32, I32), I32),
        "ClampI32": ((I32, I32, I32), I32),
        "SqrtF64": ((F64,), F64),
        "FloorF64": ((F64,), F64),
        "CeilF64": ((F64,), F64),
        "RoundF64": ((F64,), F64),
    }
)
#: The generic stub, allowed for every binding (it enforces the descriptor at run time).
GENERIC_STUB = "CallBinding"


def surface_needed(names: Iterable[str]) -> str:
    """The smallest surface that holds every built-in among ``names`` (other names are ignored)."""
    rank = 0
    for name in names:
        builtin = BUILTINS.get(name)
        if builtin is not None:
            rank = max(rank, SURFACES.index(builtin.surface))
    return SURFACES[rank]


def lookup(name: str) -> Builtin | None:
    """The built-in called ``name``, or None."""
    return BUILTINS.get(name)


def is_builtin(name: str) -> bool:
    return name in BUILTINS


def is_map_key(t: SandboxType) -> bool:
    """Re-exported for typing rules elsewhere (map keys: see ``dotboxd.core.types``)."""
    return is_map_key_type(t)
