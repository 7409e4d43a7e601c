"""The one catalogue of built-in calls (spec/validation.md section 5.1): one record per built-in.

A record (:class:`Builtin`) is everything any part of the system needs to know about a built-in:
its name, typing rule, effects and allocation, language surface, fuel rule (``cost``), the run-time
codes it can fail with, the operation itself (``semantics``, a function of ``dotboxd.core``), and
the keys the engines register their forms under: ``rule`` for both backends (the reference
implementation in ``runtime.intrinsics.RULES``, the optimized backend's fast form in
``runtime.optimized.fastops.FAST_FORMS``) and ``prover`` for the prover's rule
(``validator.prover.builtin_rules.RULES``). A built-in that fits a shared rule (constant cost,
two-text scan, case map) is added by writing its record and its semantics function, nothing else:
every engine builds its form from the record. A test per engine fails if a record does not
resolve there or the engine registers something no record names.

The validator types calls with it, both backends dispatch on the same names, and the prover reads the
same facts, so a built-in exists exactly when it is listed here. ``dotboxd.core.costs`` re-exports the
records' fuel rules as ``BUILTIN_COSTS`` (and ``COLLECTION_INTRINSICS``, the built-ins charged by
its collection functions instead).

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

import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from dotboxd.core import arith, textops
from dotboxd.core.codes import category_of
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
from dotboxd.core.utf16 import utf16_len
from dotboxd.core.values import compare_ordinal, utf16_substring


@dataclass(frozen=True, slots=True)
class BuiltinCost:
    """Fuel of a pure built-in: ``base + per_input_unit * (UTF-16 units of the string inputs)
    + per_result_byte * (string bytes of the result)``."""

    base: int
    per_input_unit: int = 0
    per_result_byte: int = 0

    def fuel(self, input_units: int = 0, result_bytes: int = 0) -> int:
        return self.base + self.per_input_unit * input_units + self.per_result_byte * result_bytes


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
Semantics = Callable[..., Any]
"""The operation itself on already-checked argument values (``dotboxd.core.arith``/``textops``/
``values``): no meter, no charge. It raises ``SandboxFault`` with one of the record's ``codes``."""

RULE_CONSTANT = "constant"
"""Shared implementation rule: the base fuel, then ``semantics(*args)`` (its only failures depend on
the arguments). Both backends build the implementation from the record alone; the optimized
backend's fast form settles the host call and the fuel in one step."""
RULE_SCAN = "scan"
"""Shared implementation rule for two-text reads: the base fuel plus ``per_input_unit`` fuel per
UTF-16 unit of both inputs, then ``semantics(a, b)`` (nothing is built)."""
RULE_CASE_MAP = "case-map"
"""Shared implementation rule for a one-text map whose result has the input's length in units: base
and per-input-unit fuel, the built text's shape and per-byte fuel, then ``semantics(s)``."""
SHARED_RULES: tuple[str, ...] = (RULE_CONSTANT, RULE_SCAN, RULE_CASE_MAP)
"""Rules any record may name; every other ``rule`` is the built-in's own name (a bespoke
implementation each engine registers under that name)."""

PROVER_OPAQUE = "opaque"
"""The prover key of a built-in the prover does not model: a call stops every static bound (the
kernel is then never PROVED, only metered), which is always sound."""


@dataclass(frozen=True, slots=True)
class Builtin:
    """One built-in call: everything the validator, both backends, the prover and the docs need.

    ``effects`` is what the call itself adds (always within Cpu|Alloc); ``allocates`` says whether it
    builds a new string or collection (the Alloc bit, and with it the allocation and shape quotas);
    ``codes`` lists the run-time codes its own semantics can raise (their categories are
    ``failures``); ``stub`` is DotBoxD's exact compiled stub name where one exists (for binding
    descriptors).

    ``cost`` is the fuel rule of a pure function or conversion (None for the collection intrinsics,
    whose charges are the collection functions of ``dotboxd.core.costs``). ``rule`` is the key both
    backends register the implementation under: one of ``SHARED_RULES`` (then ``semantics`` is the
    operation and ``arity`` its argument count) or the built-in's own name. ``prover`` is the key of
    the prover's rule (several built-ins share one) or ``PROVER_OPAQUE``. Each engine has a test that
    every record resolves in its registry and that the registry holds nothing else."""

    name: str
    kind: BuiltinKind
    signature: str
    effects: Effect
    allocates: bool
    generic: GenericRule
    typer: Typer
    cost: BuiltinCost | None
    rule: str
    prover: str
    semantics: Semantics | None = None
    arity: int | None = None
    codes: frozenset[str] = frozenset()
    stub: str | None = None
    surface: str = BASE_SURFACE

    @property
    def failures(self) -> frozenset[str]:
        """The value-error categories a call can end with (InvalidInput, NotFound), from ``codes``."""
        return frozenset(category_of(code) for code in self.codes)

    @property
    def counts_as_host_call(self) -> bool:
        """A pure function is one of DotBoxD's default pure bindings: each call is a host call
        (``maxHostCalls``, ``usage.hostCalls``, ``bindingCalls``), charged before its base fuel."""
        return self.kind is BuiltinKind.PURE_FUNCTION

    @property
    def can_fail(self) -> bool:
        """Whether a call can fail with anything but fuel, time or cancellation: a value error
        (``codes``), a host-call quota, or a quota of the value it builds (allocation, shape).
        Only a call that cannot may be reordered by and/or (``spec/semantics.md``)."""
        return bool(self.codes) or self.counts_as_host_call or self.allocates

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
# The catalogue: one record per built-in

_C = Effect.CPU
_CA = Effect.CPU | Effect.ALLOC
_PF = BuiltinKind.PURE_FUNCTION
_IN = BuiltinKind.INTRINSIC
_NO = GenericRule.FORBIDDEN
_SCAN_COST = BuiltinCost(2, per_input_unit=1)
_BUILD_COST = BuiltinCost(2, per_input_unit=1, per_result_byte=1)


def _pure(
    name: str,
    params: Sequence[SandboxType],
    result: SandboxType,
    cost: BuiltinCost,
    *,
    rule: str,
    prover: str,
    semantics: Semantics | None = None,
    codes: Iterable[str] = (),
    stub: str | None = None,
    surface: str = BASE_SURFACE,
) -> Builtin:
    """A pure function (a pure binding in DotBoxD): monomorphic, counted as a host call."""
    allocates = result == STRING or isinstance(result, ListType)
    return Builtin(
        name,
        _PF,
        f"({', '.join(str(p) for p in params)}) -> {result}",
        _CA if allocates else _C,
        allocates,
        _NO,
        fixed(params, result, name),
        cost=cost,
        rule=rule,
        prover=prover,
        semantics=semantics,
        arity=len(params),
        codes=frozenset(codes),
        stub=stub,
        surface=surface,
    )


def _ext(
    name: str,
    params: Sequence[SandboxType],
    result: SandboxType,
    cost: BuiltinCost,
    *,
    rule: str,
    prover: str,
    semantics: Semantics | None = None,
    codes: Iterable[str] = (),
) -> Builtin:
    """A pure function of the extension set ``dotboxd-1+ext1`` (spec/validation.md section 5.2)."""
    return _pure(
        name,
        params,
        result,
        cost,
        rule=rule,
        prover=prover,
        semantics=semantics,
        codes=codes,
        surface=EXT_SURFACE,
    )


def _collection(
    name: str,
    signature: str,
    allocates: bool,
    typer: Typer,
    *,
    generic: GenericRule = _NO,
    prover: str = "collection",
    codes: Iterable[str] = (),
    surface: str = BASE_SURFACE,
) -> Builtin:
    """A collection intrinsic (``list.*``, ``map.*``, ``record.*``): charged from the collection
    functions of ``dotboxd.core.costs`` by its own implementation (``rule`` is its name)."""
    return Builtin(
        name,
        _IN,
        signature,
        _CA if allocates else _C,
        allocates,
        generic,
        typer,
        cost=None,
        rule=name,
        prover=prover,
        codes=frozenset(codes),
        surface=surface,
    )


_CONST = RULE_CONSTANT
_ENTRIES: tuple[Builtin, ...] = (
    # math.* (integer results are checked: abs(MIN) overflows -> InvalidInput)
    _pure(
        "math.abs",
        [I32],
        I32,
        BuiltinCost(2),
        rule=_CONST,
        prover="abs",
        semantics=arith.abs_i32,
        codes=["R-ARITH-OVERFLOW"],
        stub="AbsI32",
    ),
    _pure(
        "math.min", [I32, I32], I32, BuiltinCost(2), rule=_CONST, prover="min", semantics=min, stub="MinI32"
    ),
    _pure(
        "math.max", [I32, I32], I32, BuiltinCost(2), rule=_CONST, prover="max", semantics=max, stub="MaxI32"
    ),
    _pure(
        "math.clamp",
        [I32, I32, I32],
        I32,
        BuiltinCost(2),
        rule=_CONST,
        prover="clamp",
        semantics=arith.clamp_i32,
        codes=["R-ARITH-CLAMP-RANGE"],
        stub="ClampI32",
    ),
    _pure(
        "math.sqrt",
        [F64],
        F64,
        BuiltinCost(2),
        rule=_CONST,
        prover="f64-may-fail",
        semantics=arith.sqrt_f64,
        codes=["R-ARITH-NOT-FINITE"],
        stub="SqrtF64",
    ),
    _pure(
        "math.floor",
        [F64],
        F64,
        BuiltinCost(2),
        rule=_CONST,
        prover="f64",
        semantics=arith.floor_f64,
        stub="FloorF64",
    ),
    _pure(
        "math.ceil",
        [F64],
        F64,
        BuiltinCost(2),
        rule=_CONST,
        prover="f64",
        semantics=arith.ceil_f64,
        stub="CeilF64",
    ),
    _pure(
        "math.round",
        [F64],
        F64,
        BuiltinCost(2),
        rule=_CONST,
        prover="f64",
        semantics=arith.round_f64,
        stub="RoundF64",
    ),
    _pure(
        "int32.toStringInvariant",
        [I32],
        STRING,
        BuiltinCost(2),
        rule="int32.toStringInvariant",
        prover="to-string",
        semantics=arith.int32_to_string_invariant,
        stub="Int32ToStringInvariant",
    ),
    # string.* (lengths and indices in UTF-16 code units)
    _pure(
        "string.length",
        [STRING],
        I32,
        BuiltinCost(1),
        rule=_CONST,
        prover="length",
        semantics=utf16_len,
        stub="StringLength",
    ),
    _pure(
        "string.isEmpty",
        [STRING],
        BOOL,
        BuiltinCost(1),
        rule=_CONST,
        prover="is-empty",
        semantics=textops.is_empty,
    ),
    _pure(
        "string.substringBudgeted",
        [STRING, I32, I32],
        STRING,
        BuiltinCost(2, per_result_byte=1),
        rule="string.substringBudgeted",
        prover="substring",
        semantics=utf16_substring,
        codes=["R-STRING-RANGE"],
    ),
    _pure(
        "string.concatBudgeted",
        [STRING, STRING],
        STRING,
        BuiltinCost(2, per_result_byte=1),
        rule="string.concatBudgeted",
        prover="concat",
        semantics=operator.add,
        stub="ConcatString",
    ),
    _pure(
        "string.equals",
        [STRING, STRING],
        BOOL,
        _SCAN_COST,
        rule=RULE_SCAN,
        prover="scan-bool",
        semantics=operator.eq,
    ),
    _pure(
        "string.compareOrdinal",
        [STRING, STRING],
        I32,
        _SCAN_COST,
        rule=RULE_SCAN,
        prover="compare-ordinal",
        semantics=compare_ordinal,
    ),
    # the extension set dotboxd-1+ext1 (never inside a dotboxd-1-only policy)
    _ext(
        "string.contains",
        [STRING, STRING],
        BOOL,
        _SCAN_COST,
        rule=RULE_SCAN,
        prover="scan-bool",
        semantics=textops.contains,
    ),
    _ext(
        "string.indexOf",
        [STRING, STRING],
        I32,
        _SCAN_COST,
        rule=RULE_SCAN,
        prover="index-of",
        semantics=textops.index_of,
    ),
    _ext(
        "string.lastIndexOf",
        [STRING, STRING],
        I32,
        _SCAN_COST,
        rule=RULE_SCAN,
        prover="index-of",
        semantics=textops.last_index_of,
    ),
    _ext(
        "string.startsWith",
        [STRING, STRING],
        BOOL,
        _SCAN_COST,
        rule=RULE_SCAN,
        prover="scan-bool",
        semantics=textops.starts_with,
    ),
    _ext(
        "string.endsWith",
        [STRING, STRING],
        BOOL,
        _SCAN_COST,
        rule=RULE_SCAN,
        prover="scan-bool",
        semantics=textops.ends_with,
    ),
    _ext(
        "string.toLowerInvariant",
        [STRING],
        STRING,
        _BUILD_COST,
        rule=RULE_CASE_MAP,
        prover="case-map",
        semantics=textops.to_lower_invariant,
    ),
    _ext(
        "string.toUpperInvariant",
        [STRING],
        STRING,
        _BUILD_COST,
        rule=RULE_CASE_MAP,
        prover="case-map",
        semantics=textops.to_upper_invariant,
    ),
    _ext(
        "parse.int",
        [STRING],
        I32,
        BuiltinCost(2, per_input_unit=1),
        rule="parse.int",
        prover="parse-int",
        semantics=textops.parse_int,
        codes=["R-PARSE-INT"],
    ),
    _ext("math.sin", [F64], F64, BuiltinCost(2), rule=_CONST, prover="f64", semantics=arith.sin_f64),
    _ext("math.cos", [F64], F64, BuiltinCost(2), rule=_CONST, prover="f64", semantics=arith.cos_f64),
    _ext("math.tan", [F64], F64, BuiltinCost(2), rule=_CONST, prover="f64", semantics=arith.tan_f64),
    _ext(
        "string.split",
        [STRING, STRING],
        ListType(STRING),
        _BUILD_COST,
        rule="string.split",
        prover="split",
        semantics=textops.split,
    ),
    _ext(
        "string.replace",
        [STRING, STRING, STRING],
        STRING,
        _BUILD_COST,
        rule="string.replace",
        prover="replace",
        semantics=textops.replace,
    ),
    _ext(
        "format.simple",
        [STRING, ListType(STRING)],
        STRING,
        _BUILD_COST,
        rule="format.simple",
        prover="format",
        codes=["R-FORMAT"],
    ),
    # list.*
    _collection("list.empty", "<T>() -> List<T>", True, _list_empty, generic=GenericRule.ELEMENT),
    _collection("list.of", "(T, ...) -> List<T>  (no arguments: List<Unit>)", True, _list_of),
    _collection("list.count", "(List<T>) -> I32", False, _list_count),
    _collection("list.get", "(List<T>, I32) -> T", False, _list_get, codes=["R-LIST-INDEX"]),
    _collection("list.add", "(List<T>, T) -> List<T>", True, _list_add),
    _collection(
        "list.slice",
        "(List<T>, I32 start, I32 count) -> List<T>",
        True,
        _list_slice,
        codes=["R-LIST-INDEX"],
        surface=EXT_SURFACE,
    ),
    # map.*
    _collection("map.empty", "<Map<K, V>>() -> Map<K, V>", True, _map_empty, generic=GenericRule.WHOLE),
    _collection(
        "map.containsKey", "(Map<K, V>, K) -> Bool", False, _map_key_op("map.containsKey", lambda m: BOOL)
    ),
    _collection(
        "map.get",
        "(Map<K, V>, K) -> V",
        False,
        _map_key_op("map.get", lambda m: m.value),
        codes=["R-MAP-KEY-MISSING"],
    ),
    _collection("map.set", "(Map<K, V>, K, V) -> Map<K, V>", True, _map_key_op("map.set", lambda m: m, True)),
    _collection("map.remove", "(Map<K, V>, K) -> Map<K, V>", True, _map_key_op("map.remove", lambda m: m)),
    _collection("map.count", "(Map<K, V>) -> I32", False, _map_count, surface=EXT_SURFACE),
    _collection("map.keys", "(Map<K, V>) -> List<K>", True, _map_keys, surface=EXT_SURFACE),
    # record.*
    _collection(
        "record.new", "<Record<F...>>(F...) -> Record<F...>", True, _record_new, generic=GenericRule.WHOLE
    ),
    _collection("record.get", "(Record<F...>, constant I32 i) -> F_i", False, _record_get),
    # numeric.* (the only conversions; nothing is widened implicitly): constant cost 0, no host call
    Builtin(
        "numeric.toI64",
        _IN,
        "(I32) -> I64",
        _C,
        False,
        _NO,
        fixed([I32], I64, "numeric.toI64"),
        cost=BuiltinCost(0),
        rule=_CONST,
        prover="to-i64",
        semantics=arith.to_i64,
        arity=1,
    ),
    Builtin(
        "numeric.toF64",
        _IN,
        "(I32 | I64) -> F64",
        _C,
        False,
        _NO,
        _to_f64,
        cost=BuiltinCost(0),
        rule=_CONST,
        prover="f64",
        semantics=arith.to_f64,
        arity=1,
    ),
)

#: Every built-in by call name (read-only).
BUILTINS: Mapping[str, Builtin] = MappingProxyType({b.name: b for b in _ENTRIES})

#: The fuel rule of every built-in that has one (pure functions and conversions), read from the records.
BUILTIN_COSTS: Mapping[str, BuiltinCost] = MappingProxyType(
    {b.name: b.cost for b in _ENTRIES if b.cost is not None}
)
#: The collection intrinsics: charged by the collection functions of ``dotboxd.core.costs``.
COLLECTION_INTRINSICS: frozenset[str] = frozenset(b.name for b in _ENTRIES if b.cost is None)

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
