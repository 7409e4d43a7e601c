"""Errors for refused run inputs that say where: the JSON pointer into the run's inputs of the part
that does not match its declared type, the parameter it belongs to, and what to do about it.

The input readers of ``runtime.execution`` are tuned for the inputs they accept; they refuse with
the innermost problem only ("expected an I32"), which is not enough to find the bad field of a
large host event. Only once an input is refused does this module walk it again, alongside its
declared type, re-checking each part with the very routine the reader fell back to (host values or
the conformance typed encoding): the first part that routine refuses is the one the reader refused,
because both go through the parts in the same order. So the accepted path pays nothing, and the
walk is bounded: it goes no deeper than the type, and visits each part at most once per level.

The pointer is relative to the run's inputs (the ``args`` array): ``/0/hp`` is the field ``hp`` of
the first input. It is carried by the error's ``Diagnostic`` (``ErrorInfo.diagnostic``), not by
``ErrorInfo.pointer``, which names a node of the kernel (an input error is raised before any node
runs)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from dotboxd.core.diagnostics import Diagnostic
from dotboxd.core.values import (
    ListValue,
    LiteralRules,
    MapValue,
    RecordValue,
    SandboxFault,
    TypeLike,
    coerce_host_value,
    decode_typed,
    key_token,
    type_text,
)
from dotboxd.runtime.errors import SandboxError

Check = Callable[[object, TypeLike, LiteralRules], object]
"""The routine a reader falls back to; raises ``SandboxFault`` for a value it refuses."""

_HINT = (
    "pass input {position} ('{name}') as a value of type {type} (spec/semantics.md section 2, "
    "step 3); the diagnostic's pointer is relative to the inputs: /0 is the first input"
)
_SHAPE_HINT = (
    "pass the inputs as a list or tuple with one value per parameter of '{entry}' "
    "(spec/semantics.md section 2, step 2)"
)


def pointer_segment(text: str) -> str:
    """One reference token of a JSON pointer (RFC 6901): ``~`` and ``/`` escaped."""
    return "/" + text.replace("~", "~0").replace("/", "~1")


def bad_input_error(
    position: int,
    name: str,
    declared: TypeLike,
    raw: object,
    fault: SandboxFault,
    check: Check,
    rules: LiteralRules,
) -> SandboxError:
    """The ``R-VALUE-TYPE`` error of input ``position`` (1-based; parameter ``name``), refused with
    ``fault``: the message names the input (and, inside it, the refused part), the diagnostic
    carries the pointer, the parameter and its type, and a hint."""
    inner = fault_pointer(raw, declared, check, rules)
    pointer = pointer_segment(str(position - 1)) + inner
    where = f" (at {pointer})" if inner else ""
    message = f"input {position}: {fault.safe_message}{where}"
    declared_text = type_text(declared)
    diagnostic = Diagnostic(
        "R-VALUE-TYPE",
        message,
        pointer,
        evidence={"input": position, "parameter": name, "type": declared_text},
        hint=_HINT.format(position=position, name=name, type=declared_text),
    )
    return SandboxError("R-VALUE-TYPE", message, diagnostic)


def inputs_shape_error(entry: str, arity: int, args: object, problem: str) -> SandboxError:
    """The ``R-ENTRY-ARITY`` error of inputs that are not a sequence of ``arity`` values (a number,
    ``None``, a set, a mapping, a text, a sequence whose length or items cannot be read)."""
    message = f"entrypoint '{entry}' takes {arity} input(s) as a list or tuple; {problem}"
    diagnostic = Diagnostic(
        "R-ENTRY-ARITY",
        message,
        "",
        evidence={"entrypoint": entry, "arity": arity, "given": type(args).__name__},
        hint=_SHAPE_HINT.format(entry=entry),
    )
    return SandboxError("R-ENTRY-ARITY", message, diagnostic)


def input_bound_error(index: int, name: str) -> SandboxError:
    """The ``R-INPUT-BOUND`` error of input ``index`` (0-based; parameter ``name``): its value (an
    integer) or size (a list, map or text) lies outside the policy's ``inputBounds``. The bounds
    themselves are not repeated: they are the host's policy, which errors do not reveal (T-RUN-19)."""
    message = f"input '{name}' is outside its declared bounds"
    diagnostic = Diagnostic(
        "R-INPUT-BOUND",
        message,
        pointer_segment(str(index)),
        evidence={"input": index + 1, "parameter": name},
        hint=(
            f"the policy's inputBounds limit '{name}' (its value, or its size for a list, map or "
            "text); pass a smaller input or ask the host for wider bounds"
        ),
    )
    return SandboxError("R-INPUT-BOUND", message, diagnostic)


def host_check(raw: object, declared: TypeLike, rules: LiteralRules) -> object:
    return coerce_host_value(raw, declared, rules)


def typed_check(raw: object, declared: TypeLike, rules: LiteralRules) -> object:
    return decode_typed(raw, declared, rules)


def fault_pointer(raw: object, declared: TypeLike, check: Check, rules: LiteralRules) -> str:
    """The pointer, inside ``raw``, of the deepest part ``check`` refuses (empty: ``raw`` itself).
    Never raises: whatever goes wrong while looking (a part that raises something other than a
    fault) ends the walk at the part reached so far."""
    segments: list[str] = []
    node, node_type = raw, declared
    try:
        while True:
            step = _refused_part(node, node_type, check, rules)
            if step is None:
                break
            names, node, child_type = step
            segments.extend(names)
            if child_type is None:  # the part is refused as a whole (a malformed pair, a duplicate)
                break
            node_type = child_type
    except Exception:  # a lying value must not turn an input error into a crash
        pass
    return "".join(pointer_segment(name) for name in segments)


Step = tuple[Sequence[str], object, TypeLike | None]


def _refused_part(node: object, declared: TypeLike, check: Check, rules: LiteralRules) -> Step | None:
    """The first part of ``node`` that ``check`` refuses, as (pointer names, part, its type), or
    None when every part is accepted (the container itself is at fault, or it has no parts)."""
    name, args = declared.name, declared.arguments
    typed = check is typed_check
    if name == "List" and len(args) == 1:
        items = _sequence(node, ListValue, typed)
        return None if items is None else _first_refused(enumerate(items), lambda _: args[0], check, rules)
    if name == "Record":
        fields = _sequence(node, RecordValue, typed)
        if fields is None or len(fields) != len(args):
            return None
        return _first_refused(enumerate(fields), lambda index: args[index], check, rules)
    if name == "Map" and len(args) == 2:
        return _typed_map_part(node, args, rules) if typed else _host_map_part(node, args, rules)
    return None


def _sequence(node: object, sandbox_class: type, typed: bool) -> Sequence[object] | None:
    """The parts of a list or record input, for the exact classes the readers take apart (a
    subclass is refused as a whole, so it has no part to point at)."""
    kind = type(node)
    if isinstance(node, list) and kind is list:
        return node
    if typed:
        return None
    if isinstance(node, tuple) and kind is tuple:
        return node
    if isinstance(node, ListValue) and kind is ListValue and sandbox_class is ListValue:
        return node.items
    if isinstance(node, RecordValue) and kind is RecordValue and sandbox_class is RecordValue:
        return node.fields
    return None


def _first_refused(
    parts: Iterable[tuple[int, object]], type_of: Callable[[int], TypeLike], check: Check, rules: LiteralRules
) -> Step | None:
    for index, part in parts:
        part_type = type_of(index)
        try:
            check(part, part_type, rules)
        except SandboxFault:
            return (str(index),), part, part_type
    return None


KEY_NAME_UNITS = 64
"""The longest key a pointer spells; a longer one is named by its position (``_key_name``)."""


def _key_name(key: object, position: int) -> str:
    """A map entry's pointer name: its key when the key is a text or an exact number (as JSON would
    spell it), else ``#<position>`` (its place in the map's iteration order).

    Why a text key is spelled only when it is printable and at most ``KEY_NAME_UNITS`` long: the
    pointer goes into the error's message, diagnostic and JSON report, which a host logs and encodes.
    A key with an unpaired surrogate (refused for exactly that) would make the message impossible to
    encode as UTF-8, a control character would forge log lines, and a key of a million characters
    would be copied into every one of them; such a key is named by its position instead."""
    kind = type(key)
    if isinstance(key, str) and kind is str:
        text = key
    elif kind is int or kind is bool or kind is float:
        text = repr(key).lower() if kind is bool else repr(key)
    else:
        return f"#{position}"
    return text if len(text) <= KEY_NAME_UNITS and text.isprintable() else f"#{position}"


def _host_map_part(node: object, args: Sequence[TypeLike], rules: LiteralRules) -> Step | None:
    kind = type(node)
    entries: list[tuple[object, object]]
    if isinstance(node, dict) and kind is dict:
        entries = list(node.items())
    elif isinstance(node, MapValue) and kind is MapValue:
        entries = list(node.sorted_entries())
    else:
        return None
    key_type, value_type = args
    seen: set[object] = set()
    for position, (key, value) in enumerate(entries):
        name = _key_name(key, position)
        try:
            token = key_token(coerce_host_value(key, key_type, rules))
        except SandboxFault:
            return (name,), key, key_type
        if token in seen:
            return (name,), key, None
        seen.add(token)
        try:
            coerce_host_value(value, value_type, rules)
        except SandboxFault:
            return (name,), value, value_type
    return None


def _typed_map_part(node: object, args: Sequence[TypeLike], rules: LiteralRules) -> Step | None:
    """A Map in the typed encoding is an array of ``[key, value]`` pairs: ``/3/0`` is the fourth
    pair's key, ``/3/1`` its value, ``/3`` a pair that is not a two-item array or repeats a key."""
    if type(node) is not list:
        return None
    key_type, value_type = args
    seen: set[object] = set()
    for position, pair in enumerate(node):
        index = str(position)
        if type(pair) is not list or len(pair) != 2:
            return (index,), pair, None
        try:
            token = key_token(decode_typed(pair[0], key_type, rules))
        except SandboxFault:
            return (index, "0"), pair[0], key_type
        if token in seen:
            return (index,), pair, None
        seen.add(token)
        try:
            decode_typed(pair[1], value_type, rules)
        except SandboxFault:
            return (index, "1"), pair[1], value_type
    return None
