"""Entry inputs as atoms: the preconditions of every proof, and the way back to concrete inputs.

Each parameter contributes the atoms the cost semantics can depend on: an integer its value, a
text its UTF-16 length, a list or map its size, a Bool its truth. Their ranges are exactly what the
runtime guarantees before the kernel runs: the declared type, the policy's ``inputBounds`` for the
entrypoint (checked at execute time, R-INPUT-BOUND), and the meter's limits on the input's shape
(``maxListLength``, ``maxMapEntries``, ``maxStringLength``: an input beyond them is refused before
any kernel code runs). Elements inside collections are any value of their type, within two more
atoms of the whole input: the string bytes of all its texts and the count of all its collection
elements (so a text inside is at most half the bytes long, and a nested list or map at most that
count).

The same table maps a Z3 model back to a concrete input (a counterexample) and a concrete input to
atom values (to evaluate a bound on it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dotboxd.core.types import (
    BOOL,
    F64,
    GUID,
    I32,
    I64,
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
from dotboxd.core.values import (
    ListValue,
    MapValue,
    OpaqueId,
    RecordValue,
    SandboxPath,
    SandboxUri,
    Value,
    decode_typed,
    shape_of,
    utf16_len,
)
from dotboxd.grammar import literals

from .domain import INT_RANGES, OTHER, ABool, AInt, AList, AMap, ARecord, AText, AVal, Domain
from .sym import ZERO, Poly, Sym

TEXT_TYPES = (STRING, SANDBOX_PATH, SANDBOX_URI)

MAX_WITNESS_ELEMENTS = 100_000
"""Collection items (list items plus map entries over all parameters) the prover will build into
one counterexample: the default ``maxTotalCollectionElements``. A policy with huge size limits can
make the smallest counterexample astronomically large (a map of 2^62 entries); the prover's own
memory must not follow the policy, so a larger witness is not built and the verdict stays UNKNOWN
with the size it would need."""

MAX_WITNESS_TEXT_UNITS = 524_288
"""UTF-16 units of text over all parameters of one counterexample (the default
``maxTotalStringBytes`` of 1 MiB, at 2 bytes per unit)."""


@dataclass(frozen=True, slots=True)
class InputAtom:
    atom: int
    index: int
    name: str
    facet: str  # value | length | size | bool | sbytes | elements
    type: SandboxType


class InputModel:
    """The atoms of one function's parameters."""

    def __init__(
        self,
        sym: Sym,
        domain: Domain,
        names: Sequence[str],
        types: Sequence[SandboxType],
        bounds: Mapping[str, tuple[int, int]] | None,
    ) -> None:
        self.sym = sym
        self.names = tuple(names)
        self.types = tuple(types)
        self.atoms: list[InputAtom] = []
        self.values: list[AVal] = []
        self.unbounded: set[str] = set()  # parameters whose atoms have no policy bound
        self.sbytes: dict[int, Poly] = {}  # parameter index -> atom of the string bytes it holds
        bounds = bounds or {}
        for index, (name, t) in enumerate(zip(names, types, strict=True)):
            self.values.append(self._param(domain, index, name, t, bounds.get(name)))

    def _atom(self, index: int, name: str, facet: str, t: SandboxType, lo: int, hi: int, label: str) -> Poly:
        p = self.sym.atom(label, lo, hi)
        fid = self.sym.atom_id(p)
        assert fid is not None
        self.atoms.append(InputAtom(fid, index, name, facet, t))
        return p

    def _param(
        self, domain: Domain, index: int, name: str, t: SandboxType, bound: tuple[int, int] | None
    ) -> AVal:
        if bound is None:
            self.unbounded.add(name)
        if t in INT_RANGES:
            lo, hi = INT_RANGES[t]
            if bound is not None:
                lo, hi = max(lo, bound[0]), min(hi, bound[1])
            if lo > hi:  # no input can satisfy the bound: any value of the type is beyond reach
                lo, hi = bound[0] if bound is not None else lo, bound[0] if bound is not None else lo
            p = self._atom(index, name, "value", t, lo, hi, f"parameter {name} ({t})")
            return AInt(p, p, t)
        if t == BOOL:
            c = self.sym.batom(f"parameter {name} (Bool)")
            self.atoms.append(InputAtom(c.atom, index, name, "bool", t))
            return ABool(c)
        if isinstance(t, ListType | MapType) or t == STRING:
            cap = domain.size_cap(t)
            lo, hi = 0, cap
            if bound is not None:
                lo, hi = max(0, bound[0]), min(cap, bound[1])
                if lo > hi:
                    lo = hi = min(max(0, bound[0]), cap)
            facet = "length" if t == STRING else "size"
            label = f"length of {name} (UTF-16 units)" if t == STRING else f"size of {name} ({t})"
            p = self._atom(index, name, facet, t, lo, hi, label)
            value: AVal
            if isinstance(t, ListType):
                value = AList(p, p, domain.top(t.element))
            elif isinstance(t, MapType):
                value = AMap(p, p, domain.top(t.key), domain.top(t.value))
            else:
                return AText(p, p)
            value = self._nested_sizes(domain, index, name, t, value)
            return self._text_bytes(domain, index, name, t, value)
        self.unbounded.discard(name)
        value = self._nested_sizes(domain, index, name, t, domain.top(t))
        return self._text_bytes(domain, index, name, t, value)

    def _nested_sizes(self, domain: Domain, index: int, name: str, t: SandboxType, value: AVal) -> AVal:
        """An atom for the collection elements an input holds, when collections nest inside it.

        The input's shape counts every list item, map entry and record field inside it; a list or
        map nested in the input (a map field of a record, the lists of a list of lists) is one of
        them, so its size is at most that count. Without the atom a nested map's size is only
        bounded by maxMapEntries, and each copy of it is charged as if it were that large."""
        if not _has_nested(value, top=True):
            return value
        atom = self._atom(index, name, "elements", t, 0, domain.q.elements, f"collection elements in {name}")
        return _cap_nested(self.sym, value, atom, top=True)

    def _text_bytes(self, domain: Domain, index: int, name: str, t: SandboxType, value: AVal) -> AVal:
        """An atom for the string bytes a collection, record, path, URI or opaque-id input holds
        (the texts inside it; a ``String`` has its length atom instead).

        The input's shape charge allocates exactly those bytes. Read off the abstract value, they
        would be the worst case (every text of the maximum length: 131,072 bytes per item); as an
        atom they are a quantity of the input itself, so a bound evaluated on an input is exact
        there, while its range keeps the worst case for the budget questions."""
        if isinstance(value, AText) and t == STRING:
            return value  # its length is an atom already
        cap = min(self.sym.range(domain.sbytes_hi(value))[1], domain.q.string_bytes)
        if cap <= 0:
            return value
        atom = self._atom(index, name, "sbytes", t, 0, cap, f"string bytes in {name}")
        self.sbytes[index] = atom
        # no text inside is longer than all of them together (len <= bytes / 2), and no part of
        # the input (the input itself included) holds more bytes than all of them together
        capped = domain.with_bytes(value, atom)
        assert capped is not None
        return capped

    # --- concrete inputs -> atom values ------------------------------------------------------

    def env(self, args: Sequence[object]) -> dict[int, int]:
        """Atom values of concrete arguments (sandbox values or Python natives)."""
        env: dict[int, int] = {}
        for a in self.atoms:
            env[a.atom] = _measure(args[a.index], a.facet)
        return env

    # --- model -> counterexample -------------------------------------------------------------

    def complete(self, model: Mapping[int, int]) -> dict[int, int]:
        """The model's atom values, with atoms it leaves free set to the in-range value nearest 0."""
        env = dict(model)
        for a in self.atoms:
            if a.atom not in env:
                f = self.sym.factors[a.atom]
                env[a.atom] = min(max(0, f.lo), f.hi)
        return env

    def witness_size(self, env: Mapping[int, int]) -> tuple[int, int, str]:
        """Collection items and text units a witness for ``env`` holds, and its description (known
        before anything is built, so an oversized witness costs nothing)."""
        items = units = 0
        described: list[str] = []
        for a in self.atoms:
            n = max(0, env[a.atom])
            if a.facet in ("sbytes", "elements"):
                continue  # realised (as 0: empty texts) by the witness, whose env is re-measured
            if a.facet == "length":
                units += n
                described.append(f"{a.name}=a text of {n:,} units")
            elif a.facet == "size":
                items += n
                kind = "list" if isinstance(a.type, ListType) else "map"
                described.append(f"{a.name}=a {kind} of {n:,} {'items' if kind == 'list' else 'entries'}")
        return items, units, ", ".join(described)

    def witness_fits(self, env: Mapping[int, int]) -> bool:
        """Is the witness for ``env`` within the prover's own size caps?"""
        items, units, _ = self.witness_size(env)
        return items <= MAX_WITNESS_ELEMENTS and units <= MAX_WITNESS_TEXT_UNITS

    def witness_json(self, env: Mapping[int, int]) -> tuple[list[Any], list[tuple[str, str]]]:
        """Typed JSON arguments realising ``env``, and a description per parameter."""
        by_param: dict[int, InputAtom] = {
            a.index: a for a in self.atoms if a.facet not in ("sbytes", "elements")
        }
        args: list[Any] = []
        described: list[tuple[str, str]] = []
        for index, (name, t) in enumerate(zip(self.names, self.types, strict=True)):
            atom = by_param.get(index)
            if atom is None:
                args.append(default_json(t))
                continue
            n = env[atom.atom]
            if atom.facet == "value":
                args.append(n)
                described.append((name, str(n)))
            elif atom.facet == "bool":
                args.append(bool(n))
                described.append((name, "true" if n else "false"))
            elif atom.facet == "length":
                args.append("a" * n)
                described.append((name, f"a text of {n:,} units"))
            elif isinstance(t, ListType):
                args.append([default_json(t.element) for _ in range(n)])
                described.append((name, f"a list of {n:,} items"))
            else:
                assert isinstance(t, MapType)
                args.append([[key_json(t.key, i), default_json(t.value)] for i in range(n)])
                described.append((name, f"a map of {n:,} entries"))
        return args, described

    def decode(self, args: Sequence[Any]) -> list[Value]:
        """Sandbox values of typed JSON arguments (raises SandboxFault if one is invalid)."""
        return [decode_typed(a, to_type_ref(t), literals) for a, t in zip(args, self.types, strict=True)]


def _measure(value: object, facet: str) -> int:
    if facet == "sbytes":
        return _string_bytes(value)
    if facet == "elements":
        return _elements(value)
    if facet == "bool":
        return 1 if value else 0
    if facet == "value":
        assert isinstance(value, int)
        return value
    if facet == "length":
        if isinstance(value, str):
            return utf16_len(value)
        if isinstance(value, SandboxPath | SandboxUri):
            return utf16_len(value.text)
        if isinstance(value, OpaqueId):
            return utf16_len(value.value)
        raise TypeError("not a text")
    if isinstance(value, ListValue | MapValue):
        return len(value)
    if isinstance(value, list | tuple | dict):
        return len(value)
    raise TypeError("not a collection")


def _has_nested(value: AVal | None, top: bool) -> bool:
    """Does ``value`` hold a list or map below its top level?"""
    if isinstance(value, AList):
        return not top or _has_nested(value.elem, False)
    if isinstance(value, AMap):
        return not top or _has_nested(value.key, False) or _has_nested(value.value, False)
    if isinstance(value, ARecord):
        return any(_has_nested(f, False) for f in value.fields)
    return False


def _cap_nested(sym: Sym, value: AVal | None, elements: Poly, top: bool) -> AVal:
    """``value`` with the size of every list or map below its top level capped by ``elements``."""
    if value is None:
        return OTHER
    if isinstance(value, AList):
        elem = None if value.elem is None else _cap_nested(sym, value.elem, elements, False)
        hi = value.hi if top else sym.min(value.hi, elements)
        return AList(value.lo, hi, elem, value.tb)
    if isinstance(value, AMap):
        key = None if value.key is None else _cap_nested(sym, value.key, elements, False)
        item = None if value.value is None else _cap_nested(sym, value.value, elements, False)
        hi = value.hi if top else sym.min(value.hi, elements)
        return AMap(value.lo, hi, key, item, value.tb)
    if isinstance(value, ARecord):
        return ARecord(tuple(_cap_nested(sym, f, elements, False) for f in value.fields), value.tb)
    return value


def _elements(value: object) -> int:
    """Collection elements inside a value (list items, map entries, record fields, at every
    level), as its shape charge counts them."""
    if isinstance(value, ListValue | MapValue | RecordValue):
        return shape_of(value).elements
    if isinstance(value, list | tuple):
        return len(value) + sum(_elements(v) for v in value)
    if isinstance(value, dict):
        return len(value) + sum(_elements(k) + _elements(v) for k, v in value.items())
    return 0


def _string_bytes(value: object) -> int:
    """Bytes of every text inside a value (2 per UTF-16 unit), as its shape charge counts them."""
    if isinstance(value, ListValue | MapValue | RecordValue | str | SandboxPath | SandboxUri | OpaqueId):
        return shape_of(value).string_bytes
    if isinstance(value, list | tuple):
        return sum(_string_bytes(v) for v in value)
    if isinstance(value, dict):
        return sum(_string_bytes(k) + _string_bytes(v) for k, v in value.items())
    return 0


def default_json(t: SandboxType) -> Any:
    """The simplest valid typed-JSON value of ``t`` (elements of counterexample collections)."""
    if t == UNIT:
        return None
    if t == BOOL:
        return False
    if t in (I32, I64):
        return 0
    if t == F64:
        return 0.0
    if t == STRING:
        return ""
    if t == GUID:
        return "00000000-0000-0000-0000-000000000000"
    if t == SANDBOX_PATH:
        return "a"
    if t == SANDBOX_URI:
        return "https://example.com/"
    if isinstance(t, OpaqueIdType):
        return {"type": t.brand, "value": "x"}
    if isinstance(t, ListType | MapType):
        return []
    if isinstance(t, RecordType):
        return [default_json(f) for f in t.fields]
    return None


def key_json(t: SandboxType, i: int) -> Any:
    """The ``i``-th of a family of distinct map keys of type ``t``."""
    if t == BOOL:
        return i == 1
    if t in (I32, I64):
        return i
    if t == STRING:
        return str(i)
    if t == GUID:
        return f"00000000-0000-0000-0000-{i:012x}"
    if t == SANDBOX_PATH:
        return f"k{i}"
    if t == SANDBOX_URI:
        return f"https://example.com/{i}"
    if isinstance(t, OpaqueIdType):
        return {"type": t.brand, "value": f"k{i}"}
    return default_json(t)


__all__ = [
    "MAX_WITNESS_ELEMENTS",
    "MAX_WITNESS_TEXT_UNITS",
    "ZERO",
    "InputAtom",
    "InputModel",
    "default_json",
    "key_json",
]
