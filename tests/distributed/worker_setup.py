"""Worker-side setup functions named by the distributed tests (``module:function``).

Workers import this module by name, so it lives in an importable package and holds no state.
"""

from __future__ import annotations

from dotboxd.core.bindings import BindingDescriptor
from dotboxd.host import Cost, Int32, host_binding


@host_binding(id="test.scale", cost=Cost(1))
def scale(value: Int32) -> Int32:
    """Multiply by 3: the binding the client's host declares."""
    return value * 3


@host_binding(id="test.scale", cost=Cost(2))
def scale_costlier(value: Int32) -> Int32:
    """The same id with another cost: a different contract, so another manifest hash."""
    return value * 3


def bindings() -> list[BindingDescriptor]:
    return [scale]


def no_bindings() -> list[BindingDescriptor]:
    return []


def other_bindings() -> list[BindingDescriptor]:
    return [scale_costlier]


def broken() -> list[BindingDescriptor]:
    raise RuntimeError("setup failed")
