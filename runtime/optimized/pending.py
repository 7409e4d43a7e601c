"""Charges a fast-lane run settles before it has a meter: its inputs' shapes, its text literals, reads.

Why: a predicate over a host event (``Map<String, I32>``) is charged for its input (the map's shape)
and for each text literal it evaluates (a field name: a new text value), and it reads the map; on
the meter each of these costs a run context and a ``Meter`` built for the run, and a few meter calls,
several times the kernel itself. None of these charges can fail while every counter it raises stays
within its limit, and in a fast-lane run nothing else can refuse them (no cancel token; the deadline
is read only at every ``DEADLINE_EVERY_FUEL_CHARGES``-th fuel charge). So the run counts them in
plain integers, with the meter's own checks on the totals (each counter only grows and each check is
an upper bound, so a total within the limit means every step was) - and declines, changing nothing,
whenever a check fails or a charge would fall on a deadline check. The caller then builds the meter
(``fastlane.LazyRunState.build``, which hands it these counters: ``Meter.take_pending``) and makes
the same charge through it, which refuses exactly where the reference interpreter refuses. The
counters are slots of the run's ``fastlane.LazyRunState``; this module holds what they are checked
against and the input charges.

Only charges whose allocation is their text bytes are counted here (an input's shape charges its
texts' bytes as allocation, and so does a literal): the allocation is always ``strings``, and one
room (``text_room``, the smaller of the two limits) bounds both. A text literal's own checks that
depend only on the literal and the limits (its longest text, its walk fuel) are made once per lane
(``literal_charges``). The stubs read these slots directly (``fastops``): a method call per charge
would cost as much as the meter did.

A run that never needed its meter reports these counters in its usage (``fastlane.Counted``);
one that did started its meter from them. Either way the usage is the meter's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from dotboxd.core import costs
from dotboxd.core.values import SCALAR_SHAPE, Shape
from dotboxd.runtime.meter import MeterLimits

EVERY: Final = costs.DEADLINE_EVERY_FUEL_CHARGES
"""Fuel charges per deadline check: a charge counted without a meter never reaches it."""

_walk_fuel = costs.shape_walk_fuel

PendingPlan = tuple[MeterLimits, int, tuple[int, ...]]
"""What one lane's runs settle against: (limits, the room for text bytes, each literal's bytes)."""


def text_room(limits: MeterLimits) -> int:
    """The most text bytes a run may hold when they are all its allocation (a lazy run state's ``room``)."""
    return min(limits.max_allocated_bytes, limits.max_total_string_bytes)


def literal_charges(limits: MeterLimits, texts: Iterable[tuple[Any, Shape]]) -> tuple[int, ...]:
    """Per text literal of an artifact (``Artifact.texts``): the text bytes its evaluation charges,
    or -1 when a charge of it is not to be counted without a meter (its walk fuel is not zero, or one of its shape's
    own maxima is over a limit: the meter refuses or counts it)."""
    return tuple(
        shape.string_bytes
        if _walk_fuel(shape.nodes) == 0
        and shape.elements == 0
        and shape.max_list <= limits.max_list_length
        and shape.max_map <= limits.max_map_entries
        and shape.depth <= limits.max_collection_depth
        and shape.max_string <= limits.max_string_length
        else -1
        for _, shape in texts
    )


def plan_for(limits: MeterLimits, texts: Iterable[tuple[Any, Shape]]) -> PendingPlan:
    """The ``PendingPlan`` of a lane's entry under ``limits`` and an artifact's text literals."""
    return (limits, text_room(limits), literal_charges(limits, texts))


InputCharges = tuple[int, int, int, int]
"""What charging a run's inputs leaves: (fuel left, ticks, collection elements, text bytes)."""


def input_charges(limits: MeterLimits, room: int, shapes: Iterable[Shape]) -> InputCharges | None:
    """``Meter.shape`` of each input in turn at the start of a run (nothing charged before), as
    a run without a meter counts it (``room``: ``text_room(limits)``); None when any of them is
    not counted so (a limit refuses it, or the charges reach a deadline check). Pure: a lane keeps the
    answer per input shape (the shapes of a host event's key sets are shared objects)."""
    used = ticks = elements = strings = 0
    for shape in shapes:
        if shape is SCALAR_SHAPE:
            continue
        walk = _walk_fuel(shape.nodes)
        if walk:
            used += walk
            ticks += 1
        if (
            shape.max_list > limits.max_list_length
            or shape.max_map > limits.max_map_entries
            or shape.depth > limits.max_collection_depth
            or shape.max_string > limits.max_string_length
        ):
            return None
        elements += shape.elements
        strings += shape.string_bytes
    if (
        used > limits.max_fuel
        or ticks >= EVERY
        or elements > limits.max_total_collection_elements
        or strings > room  # ``Meter.text``: the string bytes, then the same bytes allocated
    ):
        return None
    return (limits.max_fuel - used, ticks, elements, strings)


__all__ = [
    "EVERY",
    "InputCharges",
    "PendingPlan",
    "input_charges",
    "literal_charges",
    "plan_for",
    "text_room",
]
