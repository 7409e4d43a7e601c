"""Sandbox values: immutable, tagged, sandbox-owned data that a kernel computes with.

Why a module of its own: every backend, the host boundary and the conformance corpus must agree on
what a value *is*. Python's own equality would silently merge ``1``, ``1.0`` and ``True`` (they are
equal and hash alike) and its strings count code points, while DotBoxD counts UTF-16 code units and
orders strings ordinally by those units. This module pins those rules once:

* scalars are plain Python objects whose *type* is the tag: ``None`` (Unit), ``bool`` (Bool), ``int``
  (I32/I64, told apart by the static type), ``float`` (F64, always finite) and ``str`` (String);
  ``Guid``, ``SandboxPath``, ``SandboxUri`` and ``OpaqueId`` are small wrapper classes so text of one
  kind can never pass for another;
* ``ListValue``, ``MapValue`` and ``RecordValue`` are immutable: every update builds a new value and
  the old one is never touched (copy-on-write), so values can be shared freely between frames;
* maps key their entries by ``(type(key), key)``, so keys of different kinds never collide;
* equality is structural and tag-strict (``values_equal``);
* each composite caches its ``Shape`` (node, element, length, depth and string-byte counts), which
  the meter charges for every new value without re-walking it.

The conformance typed-value encoding (``encode_typed`` / ``decode_typed``) is directed by a declared
type and lives here too, so that the case runner, the CLI and the host API decode alike.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from typing import Any, Protocol, TypeAlias, TypeVar

from immutables import Map as HamtMap

from dotboxd.core.codes import category_of
from dotboxd.core.diagnostics import DotBoxDException, Span
from dotboxd.core.utf16 import code_point_offset, index_of
from dotboxd.core.utf16 import utf16_len as utf16_len  # re-exported: part of the value API

# ---------------------------------------------------------------------------------------------
# Faults


class SandboxFault(DotBoxDException):
    """A run-time failure of sandboxed code, named by a stable ``R-*`` code.

    Raised by value operations, arithmetic and the meter; the runtime turns it into a
    ``SandboxError`` result. ``safe_message`` is written for the kernel author: it never carries a
    host path, a host exception text or a limit's value.
    """

    def __init__(self, code: str, safe_message: str) -> None:
        super().__init__(f"{code}: {safe_message}")
        self.code = code
        self.safe_message = safe_message
        self.location: tuple[str, Span | None] | None = None
        """The JSON pointer and span of the operation that raised, once the runtime knows it
        (``runtime.locations``); None for an error no single node caused."""

    @property
    def category(self) -> str:
        """The SandboxError category of the code (QuotaExceeded, InvalidInput, ...)."""
        return category_of(self.code)


# ---------------------------------------------------------------------------------------------
# Fast construction of frozen records

_Record = TypeVar("_Record")


def frozen_constructor(cls: type[_Record]) -> Callable[..., _Record]:
    """A constructor for the frozen, slotted dataclass ``cls`` that takes the same arguments as
    ``cls`` itself and returns an ordinary ``cls`` instance, several times faster.

    Why: a frozen dataclass's generated ``__init__`` must store every field through
    ``object.__setattr__`` (its own ``__setattr__`` refuses), which costs about one function call per
    field. A run builds such records on its hottest paths (a ``Shape`` for every new value, the
    ``ResourceUsage``, the audit event and the result of every call), so the cost is visible. The
    builder is a mutable twin class with the very same slots (plain attribute stores) whose
    ``__post_init__`` retypes the new instance to ``cls``, which CPython allows because the two
    layouts are identical. The object is then indistinguishable from one built by ``cls(...)``: same
    type, fields, equality, hash, repr and immutability. Where that is not possible (a class with its
    own ``__post_init__`` or non-init fields, another interpreter) ``cls`` itself is returned.
    """
    if not dataclasses.is_dataclass(cls) or getattr(cls, "__slots__", None) is None:
        return cls
    if hasattr(cls, "__post_init__"):
        return cls
    specs: list[tuple[str, Any, Any]] = []
    for f in dataclasses.fields(cls):
        if not f.init:
            return cls
        if f.default is not dataclasses.MISSING:
            spec = dataclasses.field(default=f.default)
        elif f.default_factory is not dataclasses.MISSING:
            spec = dataclasses.field(default_factory=f.default_factory)
        else:
            spec = dataclasses.field()
        specs.append((f.name, f.type, spec))

    def retype(record: object) -> None:
        record.__class__ = cls

    twin = dataclasses.make_dataclass(
        f"_{cls.__name__}Builder",
        specs,
        bases=cls.__bases__,  # a slotted base (e.g. ``host.settled.SettledLater``) keeps the layouts equal
        slots=True,
        eq=False,
        repr=False,
        namespace={
            "__post_init__": retype,
            "__doc__": f"Builds {cls.__name__} records (frozen_constructor).",
        },
    )
    if tuple(getattr(twin, "__slots__", ())) != tuple(getattr(cls, "__slots__", ())):
        return cls
    try:
        retype(object.__new__(twin))
    except TypeError:
        return cls
    built: Callable[..., _Record] = twin  # its instances are retyped to cls as they are built
    return built


# ---------------------------------------------------------------------------------------------
# Types (structural view: anything with a name and type arguments, e.g. ``dotboxd.core.ast.TypeRef``)


class TypeLike(Protocol):
    """What value code needs from a type: its name and its type arguments."""

    @property
    def name(self) -> str: ...

    @property
    def arguments(self) -> Sequence[TypeLike]: ...


SCALAR_TYPE_NAMES = frozenset(
    {"Unit", "Bool", "I32", "I64", "F64", "String", "Guid", "SandboxPath", "SandboxUri"}
)
COMPOSITE_TYPE_NAMES = frozenset({"List", "Map", "Record"})

I32_MIN = -(2**31)
I32_MAX = 2**31 - 1
I64_MIN = -(2**63)
I64_MAX = 2**63 - 1


def type_text(t: TypeLike) -> str:
    """``Map<String, I32>``-style rendering, for messages."""
    if not t.arguments:
        return t.name
    return f"{t.name}<{', '.join(type_text(a) for a in t.arguments)}>"


# ---------------------------------------------------------------------------------------------
# Text-kind wrappers


@dataclass(frozen=True, slots=True)
class TextValue:
    """A scalar carried as its canonical text. Equality also compares the class, so a Guid never
    equals a path with the same text; the subclasses only name the kind."""

    text: str


class Guid(TextValue):
    """A GUID in lowercase canonical 8-4-4-4-12 form."""

    __slots__ = ()


class SandboxPath(TextValue):
    """A portable, canonical relative path (never a host path; the facade resolves it)."""

    __slots__ = ()


class SandboxUri(TextValue):
    """An absolute ``scheme://host`` URI without userinfo."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class OpaqueId:
    """A branded opaque identifier (``PlayerId("p-1")``): data, never an object with behaviour."""

    brand: str
    value: str


# ---------------------------------------------------------------------------------------------
# Shapes


@dataclass(frozen=True, slots=True)
class Shape:
    """What the meter charges for a value (spec/costs.md section 3, "value shapes").

    ``nodes`` counts every value node (scalars, texts, composites, map keys and values);
    ``elements`` sums the sizes of every composite inside (list items, map entries, record fields);
    ``max_list``/``max_map`` are the largest list (or record) and map inside; ``depth`` is the
    composite nesting depth (a scalar has 0, a flat list 1); ``max_string`` is the longest text in
    UTF-16 units and ``string_bytes`` the total text bytes (2 per UTF-16 unit).
    """

    nodes: int = 1
    elements: int = 0
    max_list: int = 0
    max_map: int = 0
    depth: int = 0
    max_string: int = 0
    string_bytes: int = 0


new_shape = frozen_constructor(Shape)
"""``Shape(...)``, built without the frozen ``__init__`` (every new value gets one)."""

SCALAR_SHAPE = Shape()

SHARED_SHAPES_UP_TO = 4096
"""Shapes of the commonest values up to this size are built once and shared (shapes are immutable):
texts of up to this many UTF-16 units, and *flat* lists and maps (every item, key and value a
scalar) of up to this many entries. Growing such a value in a loop then allocates no new shape, and
the caches stay small (a few thousand records each, filled on first use)."""

_TEXT_SHAPES: list[Shape | None] = [None] * SHARED_SHAPES_UP_TO
_FLAT_LIST_SHAPES: list[Shape | None] = [None] * SHARED_SHAPES_UP_TO
_FLAT_MAP_SHAPES: list[Shape | None] = [None] * SHARED_SHAPES_UP_TO


def text_shape(length16: int) -> Shape:
    """The shape of one text of ``length16`` UTF-16 units (shared up to ``SHARED_SHAPES_UP_TO``)."""
    if 0 <= length16 < SHARED_SHAPES_UP_TO:
        shape = _TEXT_SHAPES[length16]
        if shape is None:
            shape = _TEXT_SHAPES[length16] = new_shape(1, 0, 0, 0, 0, length16, 2 * length16)
        return shape
    return new_shape(1, 0, 0, 0, 0, length16, 2 * length16)


def flat_list_shape(count: int) -> Shape:
    """The shape of a list of ``count`` scalars (shared up to ``SHARED_SHAPES_UP_TO``); a list built
    by ``ListValue`` or ``append`` with only scalar items carries exactly this object."""
    if count < SHARED_SHAPES_UP_TO:
        shape = _FLAT_LIST_SHAPES[count]
        if shape is None:
            shape = _FLAT_LIST_SHAPES[count] = new_shape(1 + count, count, count, 0, 1, 0, 0)
        return shape
    return new_shape(1 + count, count, count, 0, 1, 0, 0)


def flat_map_shape(count: int) -> Shape:
    """The shape of a map of ``count`` scalar keys and values (shared up to ``SHARED_SHAPES_UP_TO``)."""
    if count < SHARED_SHAPES_UP_TO:
        shape = _FLAT_MAP_SHAPES[count]
        if shape is None:
            shape = _FLAT_MAP_SHAPES[count] = new_shape(1 + 2 * count, count, 0, count, 1, 0, 0)
        return shape
    return new_shape(1 + 2 * count, count, 0, count, 1, 0, 0)


@lru_cache(maxsize=256)
def text_keyed_map_shape(count: int, longest_key: int, key_units: int) -> Shape:
    """The shape of a map of ``count`` text keys and scalar values, whose longest key has
    ``longest_key`` UTF-16 units and whose keys have ``key_units`` in all: what ``_combine`` gives
    for those children (each key a text node, each value a scalar one), without walking them. A
    host event (``Map<String, I32>``) is such a map, converted once per call; the events of one
    stream mostly have the same few key sets, so the (immutable) shapes are kept by their three
    numbers instead of being built per event."""
    if count == 0:
        return flat_map_shape(0)
    return new_shape(1 + 2 * count, count, 0, count, 1, longest_key, 2 * key_units)


def text_keyed_map(entries: TokenEntries, shape: Shape) -> MapValue:
    """The map whose entries are ``entries`` (a host event's, built by its reader from the checked
    snapshot: distinct ``str`` keys, values that are not ``str``), whose shape the caller has summed
    (``text_keyed_map_shape``). No HAMT is built for an event the kernel mostly only reads (see
    ``TokenEntries``)."""
    return MapValue._from_entries(entries, shape)


def _combine(children: Iterable[Shape], count: int, is_map: bool) -> Shape:
    """The shape of a composite with ``count`` entries whose child nodes have ``children`` shapes."""
    nodes = 1
    elements = count
    max_list = 0 if is_map else count
    max_map = count if is_map else 0
    depth = 0
    max_string = 0
    string_bytes = 0
    flat = True
    for s in children:
        if s is not SCALAR_SHAPE:
            flat = False
        nodes += s.nodes
        elements += s.elements
        if s.max_list > max_list:
            max_list = s.max_list
        if s.max_map > max_map:
            max_map = s.max_map
        if s.depth > depth:
            depth = s.depth
        if s.max_string > max_string:
            max_string = s.max_string
        string_bytes += s.string_bytes
    if flat:
        return flat_map_shape(count) if is_map else flat_list_shape(count)
    return new_shape(nodes, elements, max_list, max_map, depth + 1, max_string, string_bytes)


def _replace_children(old: Shape, removed: tuple[Shape, ...], added: tuple[Shape, ...]) -> Shape | None:
    """The shape of a composite after some child nodes were swapped for others while its own size
    stayed the same (``map.set`` replacing a value), or None when it cannot be told without a walk.

    Sums (nodes, elements, string bytes) are updated by difference. A maximum (largest list, largest
    map, depth, longest string) is known without a walk unless a removed child held it and nothing
    added reaches it: then some other child may or may not, and the caller recomputes.
    """
    if removed == added:
        return old
    nodes = old.nodes
    elements = old.elements
    string_bytes = old.string_bytes
    for r in removed:
        nodes -= r.nodes
        elements -= r.elements
        string_bytes -= r.string_bytes
    for a in added:
        nodes += a.nodes
        elements += a.elements
        string_bytes += a.string_bytes
    maxima: list[int] = []
    for name, current, offset in (
        ("max_list", old.max_list, 0),
        ("max_map", old.max_map, 0),
        ("depth", old.depth, 1),
        ("max_string", old.max_string, 0),
    ):
        gone = max(getattr(r, name) + offset for r in removed)
        came = max(getattr(a, name) + offset for a in added)
        if came < gone and gone >= current:
            return None  # a removed child may have held the maximum alone
        maxima.append(current if current >= came else came)
    max_list, max_map, depth, max_string = maxima
    return new_shape(nodes, elements, max_list, max_map, depth, max_string, string_bytes)


# ---------------------------------------------------------------------------------------------
# Composites


class ListValue:
    """An immutable list: ``len(lst)`` items, read with ``lst[i]`` or ``lst.items`` (a tuple).

    Why not a tuple inside: ``list.add`` builds a new list from an old one, and a kernel that grows a
    list in a loop would copy it on every step (quadratic time). Instead, versions of a list share
    one growing Python list, the *buffer*, and each version owns only the first ``len`` slots of it:
    ``append`` on the version that covers the whole buffer appends in place (the older versions keep
    seeing their own, shorter prefix, which nothing ever overwrites), and ``append`` on any other
    version copies its prefix into a buffer of its own. So every version is immutable as seen from
    outside, and linear growth costs amortized O(1). The in-place append confirms afterwards that it
    won the slot (another thread may append to the same version at the same time); otherwise it
    copies, so a slot is never shared by two versions with different items. ``shape`` is computed
    once at construction. A version keeps the whole shared buffer alive, so a short version can hold
    on to the items of longer ones built from it in the same run; that memory was charged to the run
    that built them and is bounded by its limits.

    The shape of a *flat* list (every item a scalar, ``flat_list_shape``) is left implicit
    (``_shape`` is None) and built only when read: a list grown past ``SHARED_SHAPES_UP_TO`` items
    would otherwise allocate a new shape record at every ``list.add``, most of its cost.
    """

    __slots__ = ("_buffer", "_shape", "size")

    _buffer: list[Value]
    size: int
    """The number of items (``len(lst)``, as a plain attribute read for hot paths)."""
    _shape: Shape | None
    """The shape, or None when it is ``flat_list_shape(size)`` (see ``shape``)."""

    def __init__(self, items: Iterable[Value] = (), shape: Shape | None = None) -> None:
        buffer = list(items)
        count = len(buffer)
        object.__setattr__(self, "_buffer", buffer)
        object.__setattr__(self, "size", count)
        if shape is None:
            shape = _combine(map(shape_of, buffer), count, False)
        object.__setattr__(self, "_shape", _explicit_list_shape(shape, count))

    @property
    def shape(self) -> Shape:
        """What the meter charges for this list (built here when it is the implicit flat shape)."""
        shape = self._shape
        return shape if shape is not None else flat_list_shape(self.size)

    @property
    def flat(self) -> bool:
        """Whether every item is a scalar (the shape is ``flat_list_shape(len)``)."""
        return self._shape is None

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("sandbox values are immutable")

    def __reduce__(self) -> tuple[type[ListValue], tuple[tuple[Value, ...], Shape]]:
        """Pickled and copied as its items and shape: a new list with a buffer of its own (the
        shared buffer's longer versions are no part of this one). Immutable values need no more."""
        return (ListValue, (self.items, self.shape))

    @property
    def items(self) -> tuple[Value, ...]:
        """The items, as a new tuple (O(len)): for reading the whole list; ``lst[i]`` reads one."""
        buffer = self._buffer
        count = self.size
        return tuple(buffer) if len(buffer) == count else tuple(buffer[:count])

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int) -> Value:
        """The item at ``index`` (0 <= index < len; anything else is IndexError, never a wrap-around)."""
        if not 0 <= index < self.size:
            raise IndexError("list index out of range")
        return self._buffer[index]

    def __iter__(self) -> Iterator[Value]:
        # never ``iter(buffer)``: a later version may append to the shared buffer mid-iteration
        return islice(self._buffer, self.size)

    def appended_shape(self, item: Value) -> Shape:
        """The shape of ``self`` with ``item`` appended, in O(1) and without touching anything.

        Why apart from ``append``: a caller that must know every charge of the new value before it
        exists (the optimized backend's fast ``list.add`` asks the meter first) computes the shape
        here and builds the value only once the charges are settled. Building first would claim the
        next slot of the shared buffer, and the exact path that runs when the meter declines would
        then find the buffer one item longer and copy the whole prefix (quadratic growth).
        """
        old = self._shape
        count = self.size + 1
        if old is None:
            if type(item) in _SCALAR_CLASSES:
                return flat_list_shape(count)  # the commonest case, a scalar onto a flat list
            old = flat_list_shape(count - 1)
        s = shape_of(item)
        max_list = old.max_list
        if count > max_list:
            max_list = count
        if s is SCALAR_SHAPE:  # only the counts change
            return new_shape(
                old.nodes + 1,
                old.elements + 1,
                max_list,
                old.max_map,
                old.depth if old.depth >= 1 else 1,
                old.max_string,
                old.string_bytes,
            )
        return new_shape(
            old.nodes + s.nodes,
            old.elements + 1 + s.elements,
            max_list if max_list >= s.max_list else s.max_list,
            old.max_map if old.max_map >= s.max_map else s.max_map,
            old.depth if old.depth > s.depth else s.depth + 1,
            old.max_string if old.max_string >= s.max_string else s.max_string,
            old.string_bytes + s.string_bytes,
        )

    def append(self, item: Value, shape: Shape | None = None) -> ListValue:
        """A new list with ``item`` appended (amortized O(1)). ``shape`` is ``appended_shape(item)``
        when the caller has it already (it is computed here otherwise)."""
        count = self.size
        if shape is None:
            implicit = self._shape is None and type(item) in _SCALAR_CLASSES
            explicit = None if implicit else _explicit_list_shape(self.appended_shape(item), count + 1)
        else:
            explicit = _explicit_list_shape(shape, count + 1)
        buffer = self._buffer
        if len(buffer) == count:
            buffer.append(item)
            if len(buffer) != count + 1 or buffer[count] is not item:  # lost a race for the slot
                buffer = copy_prefix(buffer, count, item)
        else:
            buffer = copy_prefix(buffer, count, item)
        new: Any = _ListBuilder()  # ``_new_list``, inlined: ``list.add`` builds a list on every call
        new._buffer = buffer
        new.size = count + 1
        new._shape = explicit
        new.__class__ = ListValue
        built: ListValue = new
        return built

    def append_scalar(self, item: Value) -> ListValue:
        """``append`` of a scalar onto a flat list (the caller checked both): the new list is flat
        too, so no shape is computed (the optimized backend's fast ``list.add``)."""
        count = self.size
        buffer = self._buffer
        if len(buffer) == count:
            buffer.append(item)
            if len(buffer) != count + 1 or buffer[count] is not item:  # lost a race for the slot
                buffer = copy_prefix(buffer, count, item)
        else:
            buffer = copy_prefix(buffer, count, item)
        new: Any = _ListBuilder()
        new._buffer = buffer
        new.size = count + 1
        new._shape = None
        new.__class__ = ListValue
        built: ListValue = new
        return built

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ListValue) and values_equal(self, other)

    def __hash__(self) -> int:
        return hash(("List", tuple(value_token(v) for v in self)))

    def __repr__(self) -> str:
        return f"ListValue({list(self)!r})"


def copy_prefix(buffer: list[Value], count: int, item: Value) -> list[Value]:
    """A new buffer: the first ``count`` items of ``buffer``, then ``item``. This is the only place
    a list version copies its items (appending to a version that is not the newest of its buffer),
    so tests count calls to it to prove that growing a list copies nothing."""
    return [*buffer[:count], item]


class _ListBuilder:
    """A mutable twin of ``ListValue`` with the very same slots: ``_new_list`` fills one with plain
    attribute stores and retypes it, which is several times cheaper than three
    ``object.__setattr__`` calls on the frozen class (``list.add`` builds a list on every call)."""

    __slots__ = ("_buffer", "_shape", "size")


def _explicit_list_shape(shape: Shape, count: int) -> Shape | None:
    """What a list of ``count`` items with ``shape`` stores: None when the shape is the flat one
    (left implicit, ``ListValue.shape``), else the shape itself."""
    if count < SHARED_SHAPES_UP_TO and shape is _FLAT_LIST_SHAPES[count]:
        return None
    if shape.elements != count or shape.depth != 1 or shape.nodes != count + 1:
        return shape  # the cheap mismatches first: most non-flat shapes stop here
    return None if shape == flat_list_shape(count) else shape


def _new_list(buffer: list[Value], count: int, shape: Shape) -> ListValue:
    """A ``ListValue`` over the first ``count`` slots of ``buffer``, without the copying constructor."""
    new: Any = _ListBuilder()
    new._buffer = buffer
    new.size = count
    new._shape = _explicit_list_shape(shape, count)
    new.__class__ = ListValue
    built: ListValue = new
    return built


def flat_list_over(buffer: list[Value]) -> ListValue:
    """The version of a flat list that covers all of ``buffer`` (O(1), no copy): for the optimized
    backend's owned lists, which append scalars to a buffer in place while no version of it can
    be observed, then hand it out as a value. Later appends to ``buffer`` by a newer version stay
    invisible to this one, as for any version (see ``ListValue``)."""
    new: Any = _ListBuilder()
    new._buffer = buffer
    new.size = len(buffer)
    new._shape = None
    new.__class__ = ListValue
    built: ListValue = new
    return built


KeyToken = tuple[type, object]


def key_token(key: Value) -> KeyToken:
    """The dictionary key of a map key: ``(type, value)``, so ``1``, ``1.0`` and ``True`` differ."""
    return (type(key), key)


class MapValue:
    """An immutable map from keys to values, keyed internally by ``key_token``.

    Why a HAMT (``immutables.Map``) inside: ``map.set`` and ``map.remove`` build a new map from an
    old one, and a kernel that grows a map in a loop would copy a dict on every step (quadratic
    time). A hash array mapped trie shares all but the O(log32 n) nodes on the updated key's path
    with the old version, so every version is immutable and an update costs about as much as a dict
    copy of a handful of entries. ``immutables`` is the HAMT CPython's own ``contextvars`` is built
    on, in C and maintained; ``pyrsistent``'s map is a pure-Python vector of buckets, several times
    slower per update. The charges do not change: they are DotBoxD's copy-on-write accounting
    (spec/costs.md section 4), computed from sizes, not from what the implementation copies.

    Iteration order follows key hashes (randomized per process for texts) and carries no meaning;
    ``sorted_entries`` gives the canonical order, and anything observable (encodings, reprs, which
    of several bad entries an error names) uses it.
    """

    __slots__ = ("entries", "shape")

    entries: HamtMap[KeyToken, tuple[Value, Value]] | TableEntries | TokenEntries
    shape: Shape

    def __init__(self, pairs: Iterable[tuple[Value, Value]] = (), shape: Shape | None = None) -> None:
        with _EMPTY_ENTRIES.mutate() as building:
            for k, v in pairs:
                building[key_token(k)] = (k, v)
            entries = building.finish()
        object.__setattr__(self, "entries", entries)
        object.__setattr__(self, "shape", shape if shape is not None else _map_shape(entries))

    @classmethod
    def _from_entries(
        cls, entries: HamtMap[KeyToken, tuple[Value, Value]] | TableEntries | TokenEntries, shape: Shape
    ) -> MapValue:
        new: Any = _MapBuilder()  # see _ListBuilder: plain stores, then retyped
        new.entries = entries
        new.shape = shape
        new.__class__ = MapValue
        built: MapValue = new
        return built

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("sandbox values are immutable")

    def __reduce__(self) -> tuple[type[MapValue], tuple[list[tuple[Value, Value]], Shape]]:
        """Pickled and copied as its entries (canonical order) and shape; the copy's entries are a
        HAMT whatever this map's are (``TableEntries``/``TokenEntries`` are not observable)."""
        return (MapValue, (self.sorted_entries(), self.shape))

    def __len__(self) -> int:
        return len(self.entries)

    def contains(self, key: Value) -> bool:
        return (type(key), key) in self.entries  # key_token, inlined: maps are read in loops

    def get(self, key: Value) -> Value:
        """The value at ``key``; a missing key is ``NotFound`` (R-MAP-KEY-MISSING)."""
        entry = self.entries.get((type(key), key))
        if entry is None:
            raise SandboxFault("R-MAP-KEY-MISSING", "map key was not found")
        return entry[1]

    def set(self, key: Value, value: Value) -> MapValue:
        """A new map with ``key`` bound to ``value`` (the receiver is unchanged; O(log32 n), sharing
        the rest of the trie). The shape is updated from the old one in O(1); only a replaced value
        that alone held one of the shape's maxima makes it walk the entries again."""
        token = (type(key), key)  # key_token
        old_entries = self.entries
        previous = old_entries.get(token)
        entries = old_entries.set(token, (key, value))
        old = self.shape
        ks = shape_of(key)
        vs = shape_of(value)
        if previous is not None:
            if ks is SCALAR_SHAPE and vs is SCALAR_SHAPE and shape_of(previous[1]) is SCALAR_SHAPE:
                return MapValue._from_entries(entries, old)  # a scalar replaced a scalar: same shape
            shape = _replace_children(old, (shape_of(previous[0]), shape_of(previous[1])), (ks, vs))
            return MapValue._from_entries(entries, shape if shape is not None else _map_shape(entries))
        count = len(entries)
        if (
            ks is SCALAR_SHAPE
            and vs is SCALAR_SHAPE
            and count <= SHARED_SHAPES_UP_TO
            and old is _FLAT_MAP_SHAPES[count - 1]
        ):
            return MapValue._from_entries(entries, flat_map_shape(count))
        shape = new_shape(
            old.nodes + ks.nodes + vs.nodes,
            old.elements + 1 + ks.elements + vs.elements,
            max(old.max_list, ks.max_list, vs.max_list),
            max(old.max_map, count, ks.max_map, vs.max_map),
            max(old.depth, ks.depth + 1, vs.depth + 1),
            max(old.max_string, ks.max_string, vs.max_string),
            old.string_bytes + ks.string_bytes + vs.string_bytes,
        )
        return MapValue._from_entries(entries, shape)

    def remove(self, key: Value) -> MapValue:
        """A new map without ``key``; a missing key gives an equal copy (a no-op, never an error).
        O(log32 n); the shape is updated in O(1) unless the removed entry may have held one of its
        maxima alone (``_removed_shape``)."""
        token = key_token(key)
        previous = self.entries.get(token)
        if previous is None:
            return MapValue._from_entries(self.entries, self.shape)
        entries = self.entries.delete(token)
        shape = _removed_shape(self.shape, len(entries), shape_of(previous[0]), shape_of(previous[1]))
        return MapValue._from_entries(entries, shape if shape is not None else _map_shape(entries))

    def sorted_entries(self) -> list[tuple[Value, Value]]:
        """Entries in canonical key order (see ``key_sort_key``)."""
        return sorted(self.entries.values(), key=lambda kv: key_sort_key(kv[0]))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MapValue) and values_equal(self, other)

    def __hash__(self) -> int:
        return hash(("Map", frozenset((t, value_token(v)) for t, (_, v) in self.entries.items())))

    def __repr__(self) -> str:
        return f"MapValue({self.sorted_entries()!r})"


_EMPTY_ENTRIES: HamtMap[KeyToken, tuple[Value, Value]] = HamtMap()


class _MapBuilder:
    """A mutable twin of ``MapValue`` with the very same slots (see ``_ListBuilder``)."""

    __slots__ = ("entries", "shape")


class MapDraft(MapValue):
    """A ``MapValue`` being built by its one builder: ``object``'s plain ``__init__``,
    ``__setattr__`` and ``__delattr__`` in place of the immutable ones, no slot of its own. The
    builder stores ``entries`` and ``shape`` and retypes it (``draft.__class__ = MapValue``) before
    anything else sees it (``core.event_maps``: a host event per call).

    Why a subclass rather than the sibling twin ``_MapBuilder``: CPython proves a subclass that adds
    nothing layout-compatible with its base in one step, a sibling by comparing slot names."""

    __slots__ = ()
    __init__ = object.__init__
    __setattr__ = object.__setattr__  # type: ignore[assignment]
    __delattr__ = object.__delattr__


def _removed_shape(old: Shape, count: int, ks: Shape, vs: Shape) -> Shape | None:
    """The shape of a map of ``count`` entries (after the removal) that was ``old`` before the entry
    of key shape ``ks`` and value shape ``vs`` was removed, or None when it cannot be told without
    a walk (the removed entry, or the map's own old size, may have held a maximum alone)."""
    if ks is SCALAR_SHAPE and vs is SCALAR_SHAPE and old == flat_map_shape(count + 1):
        return flat_map_shape(count)  # the commonest case: a flat map stays flat
    if old.max_map <= count + 1 or ks.max_map >= old.max_map or vs.max_map >= old.max_map:
        return None  # the old size (count + 1) or the removed entry may have been the largest map
    for name in ("max_list", "max_string"):
        current = getattr(old, name)
        if current and (getattr(ks, name) >= current or getattr(vs, name) >= current):
            return None
    if old.depth <= 1 + max(ks.depth, vs.depth):
        return None
    return new_shape(
        old.nodes - ks.nodes - vs.nodes,
        old.elements - 1 - ks.elements - vs.elements,
        old.max_list,
        old.max_map,
        old.depth,
        old.max_string,
        old.string_bytes - ks.string_bytes - vs.string_bytes,
    )


def _map_shape(entries: HamtMap[KeyToken, tuple[Value, Value]] | TableEntries | TokenEntries) -> Shape:
    def children() -> Iterator[Shape]:
        for k, v in entries.values():
            yield shape_of(k)
            yield shape_of(v)

    return _combine(children(), len(entries), True)


class TableEntries:
    """A map's entries held as a plain dict of raw keys to values, all keys of one class (``int``
    or ``str``, where equal keys are the same value, so a raw key stands for its ``key_token``):
    what an owned map hands back (``flat_map_over``), in place of a HAMT built entry by entry.

    Why: building a HAMT of ``n`` entries allocates tens of thousands of trie nodes the cyclic
    collector tracks, and its cost per entry grows with ``n`` (cache misses, and full collections
    walking the growing heap): handing a map out of a bulk loop was the super-linear part of a
    growing map (issue 16). A dict of ints or texts to scalars is not tracked by the collector at
    all and is copied at C speed. The reads a ``MapValue`` does (``in``, ``get``, ``len``,
    ``values``, ``items``) answer from the dict exactly as the HAMT would; the first persistent
    update (``set``/``delete``, i.e. ``map.set``/``map.remove`` of this version) builds the HAMT
    once and keeps it here (a cache: the entries never change, so nothing can observe it), and the
    new version is a HAMT again. Nothing else holds the dict: ``flat_map_over`` copies it."""

    __slots__ = ("_key_class", "_table", "_trie")

    def __init__(self, table: dict[Value, Value], key_class: type) -> None:
        self._table = table
        self._key_class = key_class
        self._trie: HamtMap[KeyToken, tuple[Value, Value]] | None = None

    def __len__(self) -> int:
        return len(self._table)

    def __contains__(self, token: KeyToken) -> bool:
        key_class, key = token
        return key_class is self._key_class and key in self._table

    def get(self, token: KeyToken) -> tuple[Value, Value] | None:
        key_class, key = token
        if key_class is not self._key_class:
            return None
        table = self._table
        if key not in table:
            return None
        item: Value = key  # type: ignore[assignment]  # a key of the map's own class is a Value
        return (item, table[item])

    def values(self) -> Iterable[tuple[Value, Value]]:
        """The ``(key, value)`` entries (as ``HamtMap.values`` gives them)."""
        return self._table.items()

    def items(self) -> Iterator[tuple[KeyToken, tuple[Value, Value]]]:
        key_class = self._key_class
        return (((key_class, key), (key, item)) for key, item in self._table.items())

    def set(self, token: KeyToken, entry: tuple[Value, Value]) -> HamtMap[KeyToken, tuple[Value, Value]]:
        return self.trie().set(token, entry)

    def delete(self, token: KeyToken) -> HamtMap[KeyToken, tuple[Value, Value]]:
        return self.trie().delete(token)

    def trie(self) -> HamtMap[KeyToken, tuple[Value, Value]]:
        """The same entries as a HAMT, built on first use and kept."""
        trie = self._trie
        if trie is None:
            key_class = self._key_class
            trie = _EMPTY_ENTRIES.update(((key_class, key), (key, item)) for key, item in self._table.items())
            self._trie = trie
        return trie


class TokenEntries(dict):  # type: ignore[type-arg]
    """A map's entries as a plain dict keyed by ``key_token``, holding the ``(key, value)`` entries
    a HAMT would hold: what the reader of a host event (``Map<String, I32>``) builds, in the pass
    that checks it.

    Why: a host event is converted once per call and then mostly only read (``map.get`` of a few
    fields). A HAMT costs a trie per event; ``TableEntries`` answers every read through a Python
    method. This is a ``dict``, so ``get``, ``in``, ``len``, ``values`` and ``items`` are the
    dict's own (C, and with the HAMT's meaning: the same tokens, the same entries). The first
    persistent update (``set``/``delete``: ``map.set``/``map.remove`` of this version) returns a
    HAMT built from it, and the new version is a HAMT again. Nothing but its reader writes it, before
    the map exists; the map holds the only reference, and kernels see entries only through
    ``MapValue``. Its reader admits ASCII keys only (the optimized fast lane relies on it: such an
    input needs no UTF-16 scope)."""

    __slots__ = ()

    def set(self, token: KeyToken, entry: tuple[Value, Value]) -> HamtMap[KeyToken, tuple[Value, Value]]:
        return _EMPTY_ENTRIES.update(self).set(token, entry)

    def delete(self, token: KeyToken) -> HamtMap[KeyToken, tuple[Value, Value]]:
        return _EMPTY_ENTRIES.update(self).delete(token)


def flat_map_over(table: Mapping[Value, Value]) -> MapValue:
    """A new map holding ``table``'s entries, whose values are scalars and whose keys are all
    scalars or all texts, each key of one class (so a raw key is its own ``key_token``): for the
    optimized backend's owned maps, which update a plain dict while no version of it can be
    observed and hand it out once. The dict is copied (at C speed, linear), so later changes to it
    never reach the value; with keys all ints or all texts the copy is the value's entries
    (``TableEntries``), otherwise a HAMT is built from it. Anything else (code that broke the
    owned-map rules) fails closed."""
    copy = dict(table)
    count = len(copy)
    value_classes = set(map(type, copy.values()))
    if not value_classes <= _SCALAR_CLASSES:
        raise TypeError("an owned map's values are scalars")
    key_classes = set(map(type, copy))
    if key_classes == {str}:
        longest = units = 0
        for key in copy:
            length = utf16_len(key)  # type: ignore[arg-type]  # every key is a str
            units += length
            longest = length if length > longest else longest
        return MapValue._from_entries(TableEntries(copy, str), text_keyed_map_shape(count, longest, units))
    if not key_classes <= _SCALAR_CLASSES:  # composites, or texts mixed with scalars
        raise TypeError("an owned map's keys are all scalars or all texts")
    shape = flat_map_shape(count)
    if key_classes == {int}:
        return MapValue._from_entries(TableEntries(copy, int), shape)
    with _EMPTY_ENTRIES.mutate() as building:
        for key, item in copy.items():
            building[(type(key), key)] = (key, item)
        entries = building.finish()
    return MapValue._from_entries(entries, shape)


class RecordValue:
    """An immutable positional record; budgeted like a fixed-size list (fields are elements)."""

    __slots__ = ("fields", "shape")

    fields: tuple[Value, ...]
    shape: Shape

    def __init__(self, fields: Iterable[Value], shape: Shape | None = None) -> None:
        frozen = tuple(fields)
        object.__setattr__(self, "fields", frozen)
        object.__setattr__(
            self, "shape", shape if shape is not None else _combine(map(shape_of, frozen), len(frozen), False)
        )

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("sandbox values are immutable")

    def __reduce__(self) -> tuple[type[RecordValue], tuple[tuple[Value, ...], Shape]]:
        """Pickled and copied as its fields and shape."""
        return (RecordValue, (self.fields, self.shape))

    def __len__(self) -> int:
        return len(self.fields)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RecordValue) and values_equal(self, other)

    def __hash__(self) -> int:
        return hash(("Record", tuple(value_token(v) for v in self.fields)))

    def __repr__(self) -> str:
        return f"RecordValue({list(self.fields)!r})"


Value: TypeAlias = (
    bool
    | int
    | float
    | str
    | Guid
    | SandboxPath
    | SandboxUri
    | OpaqueId
    | ListValue
    | MapValue
    | RecordValue
    | None
)


# ---------------------------------------------------------------------------------------------
# Shape of any value


_SCALAR_CLASSES = frozenset({bool, int, float, type(None), Guid})
SCALAR_CLASSES = _SCALAR_CLASSES
"""The exact classes of scalar values (whose shape is ``SCALAR_SHAPE``)."""
_COMPOSITE_CLASSES = frozenset({ListValue, MapValue, RecordValue})


def shape_of(value: Value) -> Shape:
    """The shape of ``value`` (cached on composites, computed for texts, constant for scalars)."""
    kind = type(value)
    if kind in _SCALAR_CLASSES:  # exact classes first: the common cases without isinstance chains
        return SCALAR_SHAPE
    if kind in _COMPOSITE_CLASSES:
        return value.shape  # type: ignore[union-attr]  # one of the three composite classes
    if kind is str:
        return text_shape(utf16_len(value))  # type: ignore[arg-type]  # kind is str
    if isinstance(value, ListValue | MapValue | RecordValue):
        return value.shape
    if isinstance(value, str):
        return text_shape(utf16_len(value))
    if isinstance(value, SandboxPath | SandboxUri):
        return text_shape(utf16_len(value.text))
    if isinstance(value, OpaqueId):
        return text_shape(utf16_len(value.value))
    return SCALAR_SHAPE


# ---------------------------------------------------------------------------------------------
# Equality, tokens, ordering


def values_equal(a: Value, b: Value) -> bool:
    """Structural, tag-strict equality: ``1`` (I32) never equals ``True`` or ``1.0``.

    F64 follows IEEE ``==`` (``-0.0 == 0.0``); NaN never occurs because F64 values are finite.
    """
    ta = type(a)
    if ta is not type(b):
        return False
    if ta is ListValue:
        assert isinstance(a, ListValue) and isinstance(b, ListValue)
        return len(a) == len(b) and all(values_equal(x, y) for x, y in zip(a, b, strict=True))
    if ta is RecordValue:
        assert isinstance(a, RecordValue) and isinstance(b, RecordValue)
        return len(a.fields) == len(b.fields) and all(
            values_equal(x, y) for x, y in zip(a.fields, b.fields, strict=True)
        )
    if ta is MapValue:
        assert isinstance(a, MapValue) and isinstance(b, MapValue)
        if len(a.entries) != len(b.entries):
            return False
        for token, (_, va) in a.entries.items():
            other = b.entries.get(token)
            if other is None or not values_equal(va, other[1]):
                return False
        return True
    return a == b


def value_token(value: Value) -> object:
    """A hashable, tag-strict token of ``value`` (equal tokens exactly when ``values_equal``)."""
    if isinstance(value, ListValue):
        return ("List", tuple(value_token(v) for v in value))
    if isinstance(value, RecordValue):
        return ("Record", tuple(value_token(v) for v in value.fields))
    if isinstance(value, MapValue):
        return ("Map", frozenset((t, value_token(v)) for t, (_, v) in value.entries.items()))
    if isinstance(value, float) and value == 0.0:
        return (float, 0.0)  # -0.0 and 0.0 are equal, so they share a token
    return (type(value), value)


def key_sort_key(key: Value) -> tuple[int, Any]:
    """Canonical map-key order: false < true; integers numerically; texts by UTF-16 code units
    (ordinal); opaque ids by brand, then value. Keys of one map share one type, so the leading
    kind rank only matters for robustness."""
    if isinstance(key, bool):
        return (0, int(key))
    if isinstance(key, int):
        return (1, key)
    if isinstance(key, float):
        return (2, key)
    if isinstance(key, str):
        return (3, utf16_units(key))
    if isinstance(key, TextValue):
        return (4, (type(key).__name__, utf16_units(key.text)))
    if isinstance(key, OpaqueId):
        return (5, (key.brand, utf16_units(key.value)))
    return (9, repr(key))


# ---------------------------------------------------------------------------------------------
# UTF-16 string helpers (DotBoxD counts and orders strings by UTF-16 code units)


def utf16_units(text: str) -> bytes:
    """Big-endian UTF-16 bytes: comparing these compares code-unit sequences ordinally."""
    return text.encode("utf-16-be", "surrogatepass")


def compare_ordinal(a: str, b: str) -> int:
    """-1, 0 or 1 by ordinal UTF-16 code-unit order (differs from code-point order for astral
    characters against U+E000..U+FFFF)."""
    if a.isascii() and b.isascii():
        return (a > b) - (a < b)
    ua = utf16_units(a)
    ub = utf16_units(b)
    return (ua > ub) - (ua < ub)


_SURROGATE = re.compile("[\ud800-\udfff]")


def has_lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds an unpaired surrogate code point (never a valid sandbox string)."""
    if text.isascii():
        return False
    return _SURROGATE.search(text) is not None  # a C-speed scan (inputs can be megabytes long)


def utf16_substring(text: str, start: int, length: int) -> str:
    """``length`` UTF-16 units of ``text`` from unit ``start``.

    A negative start or length, a range past the end, or a cut through a surrogate pair is
    InvalidInput (R-STRING-RANGE): sandbox strings never hold lone surrogates. The work is the
    length of the result plus a binary search (``dotboxd.core.utf16``), never a pass over ``text``
    once the run has measured it.
    """
    if text.isascii():
        if start < 0 or length < 0 or start > len(text) or length > len(text) - start:
            raise SandboxFault("R-STRING-RANGE", "substring range is outside the string")
        return text[start : start + length]
    index = index_of(text)
    total = index.length16
    if start < 0 or length < 0 or start > total or length > total - start:
        raise SandboxFault("R-STRING-RANGE", "substring range is outside the string")
    first = code_point_offset(index, start)
    last = code_point_offset(index, start + length)
    if length > 0 and (first is None or last is None):
        raise SandboxFault("R-STRING-RANGE", "substring range splits a surrogate pair")
    if first is None or last is None:  # an empty piece at a split point: nothing to cut
        return ""
    return text[first:last]


# ---------------------------------------------------------------------------------------------
# Typed checks and the conformance encoding


class LiteralRules(Protocol):
    """The literal validity rules (``dotboxd.core.literal_rules`` satisfies this structurally).

    A parameter rather than an import (from when the rules lived in ``grammar``); every caller
    passes ``dotboxd.core.literal_rules``. Each checker returns None for valid text or a short reason.
    """

    def path_problem(self, text: str) -> str | None: ...

    def uri_problem(self, text: str) -> str | None: ...

    def guid_problem(self, text: str) -> str | None: ...

    def opaque_value_problem(self, text: str) -> str | None: ...


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _bad(what: str) -> SandboxFault:
    return SandboxFault("R-VALUE-TYPE", what)


def decode_typed(data: object, t: TypeLike, rules: LiteralRules) -> Value:
    """Decode conformance JSON ``data`` (already parsed) as a value of type ``t``.

    Unit ``null``; Bool ``true/false``; I32/I64 integers in range (``1.0`` is not an integer);
    F64 finite numbers; String, Guid, SandboxPath, SandboxUri strings (each kind's literal rule
    applies); opaque ids ``{"type": Brand, "value": v}``; List an array; Map an array of
    ``[key, value]`` pairs (duplicate keys are rejected); Record an array of its fields.
    Any mismatch raises ``SandboxFault("R-VALUE-TYPE")`` (InvalidInput).
    """
    name = t.name
    args = t.arguments
    if name == "Unit":
        if data is None:
            return None
        raise _bad("expected null for Unit")
    if name == "Bool":
        if isinstance(data, bool):
            return data
        raise _bad("expected true or false for Bool")
    if name in ("I32", "I64"):
        lo, hi = (I32_MIN, I32_MAX) if name == "I32" else (I64_MIN, I64_MAX)
        if _is_int(data):
            assert isinstance(data, int)
            if lo <= data <= hi:
                return data
            raise _bad(f"integer is out of the {name} range")
        raise _bad(f"expected an integer for {name}")
    if name == "F64":
        if _is_int(data) or isinstance(data, float):
            assert isinstance(data, int | float)
            try:
                number = float(data)
            except OverflowError:
                raise _bad("number is too large for F64") from None
            if math.isfinite(number):
                return number
            raise _bad("F64 values must be finite")
        raise _bad("expected a number for F64")
    if name in ("String", "Guid", "SandboxPath", "SandboxUri"):
        if not isinstance(data, str):
            raise _bad(f"expected a string for {name}")
        return text_value(name, data, rules)
    if name == "List":
        if not isinstance(data, list) or len(args) != 1:
            raise _bad("expected an array for List")
        return ListValue(decode_typed(item, args[0], rules) for item in data)
    if name == "Record":
        if not isinstance(data, list) or len(data) != len(args):
            raise _bad(f"expected an array of {len(args)} fields for {type_text(t)}")
        return RecordValue(decode_typed(item, ft, rules) for item, ft in zip(data, args, strict=True))
    if name == "Map":
        if not isinstance(data, list) or len(args) != 2:
            raise _bad("expected an array of [key, value] pairs for Map")
        pairs: list[tuple[Value, Value]] = []
        seen: set[KeyToken] = set()
        for pair in data:
            if not isinstance(pair, list) or len(pair) != 2:
                raise _bad("expected a [key, value] pair in a Map")
            key = decode_typed(pair[0], args[0], rules)
            token = key_token(key)
            if token in seen:
                raise _bad("duplicate key in a Map")
            seen.add(token)
            pairs.append((key, decode_typed(pair[1], args[1], rules)))
        return MapValue(pairs)
    # any other name is an opaque-id brand (the validator decides which brands exist)
    if isinstance(data, dict) and set(data) == {"type", "value"}:
        brand = data["type"]
        value = data["value"]
        if brand == name and isinstance(value, str):
            problem = rules.opaque_value_problem(value)
            if problem is None:
                return OpaqueId(name, value)
            raise _bad(f"opaque id value {problem}")
    raise _bad(f'expected {{"type": "{name}", "value": ...}} for {name}')


def text_value(type_name: str, text: str, rules: LiteralRules) -> Value:
    """A text-kind value of ``type_name`` from ``text``, with that kind's literal rule applied."""
    if has_lone_surrogate(text):
        raise _bad("strings must not contain unpaired surrogates")
    if type_name == "String":
        return text
    if type_name == "Guid":
        problem = rules.guid_problem(text)
        if problem is None:
            return Guid(text.lower())
        raise _bad(f"guid {problem}")
    if type_name == "SandboxPath":
        problem = rules.path_problem(text)
        if problem is None:
            return SandboxPath(text)
        raise _bad(f"path {problem}")
    problem = rules.uri_problem(text)
    if problem is None:
        return SandboxUri(text)
    raise _bad(f"uri {problem}")


def encode_typed(value: Value, t: TypeLike) -> object:
    """The conformance JSON form of ``value`` (of type ``t``); maps list pairs in canonical order."""
    name = t.name
    args = t.arguments
    if isinstance(value, ListValue):
        return [encode_typed(v, args[0]) for v in value.items]
    if isinstance(value, RecordValue):
        return [encode_typed(v, ft) for v, ft in zip(value.fields, args, strict=True)]
    if isinstance(value, MapValue):
        return [[encode_typed(k, args[0]), encode_typed(v, args[1])] for k, v in value.sorted_entries()]
    if isinstance(value, TextValue):
        return value.text
    if isinstance(value, OpaqueId):
        return {"type": value.brand, "value": value.value}
    if name == "F64" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return value


def check_typed(value: object, t: TypeLike, rules: LiteralRules) -> str | None:
    """Why ``value`` is not a well-formed sandbox value of type ``t`` (None when it is).

    Used on every trust boundary (binding returns, host-built inputs): the exact Python class must
    match the tag (a ``bool`` is no I32, an ``int`` no F64), integers must be in range, floats
    finite, texts must satisfy their literal rule, composites must hold well-formed children.
    """
    name = t.name
    args = t.arguments
    if name == "Unit":
        return None if value is None else "expected Unit"
    if name == "Bool":
        return None if type(value) is bool else "expected a Bool"
    if name in ("I32", "I64"):
        if type(value) is not int:
            return f"expected an {name}"
        lo, hi = (I32_MIN, I32_MAX) if name == "I32" else (I64_MIN, I64_MAX)
        return None if lo <= value <= hi else f"{name} out of range"
    if name == "F64":
        if type(value) is not float:
            return "expected an F64"
        return None if math.isfinite(value) else "F64 is not finite"
    if name == "String":
        if type(value) is not str:
            return "expected a String"
        return "unpaired surrogate in a String" if has_lone_surrogate(value) else None
    if name == "Guid":
        if type(value) is not Guid:
            return "expected a Guid"
        problem = rules.guid_problem(value.text)
        if problem is None and value.text != value.text.lower():
            problem = "is not lowercase"
        return None if problem is None else f"guid {problem}"
    if name == "SandboxPath" or name == "SandboxUri":
        kind, noun = (SandboxPath, "path") if name == "SandboxPath" else (SandboxUri, "uri")
        if type(value) is not kind or type(value.text) is not str:
            return f"expected a {name}"
        check = rules.path_problem if kind is SandboxPath else rules.uri_problem
        problem = check(value.text) or (
            "holds an unpaired surrogate" if has_lone_surrogate(value.text) else None
        )
        return None if problem is None else f"{noun} {problem}"
    if name == "List":
        if type(value) is not ListValue:
            return "expected a List"
        for item in value.items:
            problem = check_typed(item, args[0], rules)
            if problem is not None:
                return problem
        return None
    if name == "Record":
        if type(value) is not RecordValue or len(value.fields) != len(args):
            return f"expected a {type_text(t)}"
        for item, ft in zip(value.fields, args, strict=True):
            problem = check_typed(item, ft, rules)
            if problem is not None:
                return problem
        return None
    if name == "Map":
        if type(value) is not MapValue:
            return "expected a Map"
        for token, (k, v) in value.entries.items():
            if token != key_token(k):
                return "corrupt map key"
            if check_typed(k, args[0], rules) or check_typed(v, args[1], rules):
                # entries iterate in hash order: name the first bad entry in canonical order
                for k, v in value.sorted_entries():
                    problem = check_typed(k, args[0], rules) or check_typed(v, args[1], rules)
                    if problem is not None:
                        return problem
        return None
    if type(value) is not OpaqueId or value.brand != name or type(value.value) is not str:
        return f"expected a {name} opaque id"
    problem = rules.opaque_value_problem(value.value)
    return None if problem is None else f"opaque id value {problem}"


def coerce_host_value(raw: object, t: TypeLike, rules: LiteralRules) -> Value:
    """Turn a value a host handed us (binding return, API input) into a sandbox value of type ``t``.

    Accepts the sandbox classes themselves and the obvious Python spellings (a ``list``/``tuple``
    for List and Record, a ``dict`` for Map, an ``int`` for F64, a ``str`` for path/uri/guid).
    Composites are always rebuilt, so the result is sandbox-owned (a host that later mutates its
    own list cannot reach into the sandbox) and its cached shape is recomputed (a host cannot
    under-report a shape). Recursion follows the type, so it is as deep as the type and no deeper.
    Anything else raises ``SandboxFault("R-VALUE-TYPE")`` (the caller picks the category).
    """
    name = t.name
    args = t.arguments
    kind = type(raw)
    if name == "List" and len(args) == 1:
        if kind is ListValue:
            assert isinstance(raw, ListValue)
            raw = raw.items
        elif kind not in (list, tuple):
            raise _bad("expected a List")
        assert isinstance(raw, list | tuple)
        return ListValue([coerce_host_value(item, args[0], rules) for item in raw])
    if name == "Record":
        if kind is RecordValue:
            assert isinstance(raw, RecordValue)
            raw = raw.fields
        elif kind not in (list, tuple):
            raise _bad("expected a Record")
        assert isinstance(raw, list | tuple)
        if len(raw) != len(args):
            raise _bad(f"expected {len(args)} record fields")
        return RecordValue([coerce_host_value(item, ft, rules) for item, ft in zip(raw, args, strict=True)])
    if name == "Map" and len(args) == 2:
        if kind is MapValue:
            assert isinstance(raw, MapValue)
            items: Iterable[tuple[object, object]] = (
                raw.sorted_entries()
            )  # errors name a canonical first entry
        elif kind is dict:
            assert isinstance(raw, dict)
            items = list(raw.items())
        else:
            raise _bad("expected a Map")
        pairs: list[tuple[Value, Value]] = []
        seen: set[KeyToken] = set()
        for k, v in items:
            key = coerce_host_value(k, args[0], rules)
            token = key_token(key)
            if token in seen:
                raise _bad("duplicate map key")
            seen.add(token)
            pairs.append((key, coerce_host_value(v, args[1], rules)))
        return MapValue(pairs)
    if name == "F64" and kind is int:
        assert isinstance(raw, int)
        try:
            raw = float(raw)
        except OverflowError:
            raise _bad("number is too large for F64") from None
    elif name in ("Guid", "SandboxPath", "SandboxUri") and kind is str:
        assert isinstance(raw, str)
        return text_value(name, raw, rules)
    problem = check_typed(raw, t, rules)
    if problem is not None:
        raise _bad(problem)
    return raw  # type: ignore[return-value]  # check_typed proved it is a Value of type t
