"""The fixture bindings of one case evaluation: every behaviour kind of the case format.

The shared kinds (``return``, ``echo``, ``sequence``, ``raise``, ``pending``, ``async-return``,
``sleep``, ``foreign``, ``malformed``) come from ``dotboxd.runtime.fixtures``. ``refuse`` is our
extension: the binding refuses the request on purpose with a category of its choosing
(PermissionDenied, NotFound, InvalidInput or QuotaExceeded), as a host binding does by raising
``BindingError`` - the only way a case can reach the ``R-BINDING-DENIED``/``-NOT-FOUND``/
``-INVALID``/``-QUOTA`` codes.

Invokers carry state (``sequence`` indexes its values by the number of calls so far), so they are
built anew for every evaluation: one case run twice, or on two backends, sees the same behaviour
each time (generator finding 3).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dotboxd.conformance.model import REFUSE_CATEGORIES
from dotboxd.core.types import SandboxType
from dotboxd.runtime.errors import BindingError
from dotboxd.runtime.fixtures import fixture_invokers

REFUSE = "refuse"


class RefusingInvoker:
    """A binding implementation that refuses every call with ``category`` and ``message``."""

    def __init__(self, category: str, message: str) -> None:
        if category not in REFUSE_CATEGORIES:
            raise ValueError(f"a binding may not refuse with category {category!r}")
        self.category = category
        self.message = message
        self.calls = 0

    def __call__(self, *args: Any) -> Any:
        self.calls += 1
        raise BindingError(self.category, self.message)


def _kind(entry: Mapping[str, Any]) -> Any:
    behavior = entry.get("behavior")
    return behavior.get("kind") if isinstance(behavior, Mapping) else None


def case_invokers(
    entries: list[Mapping[str, Any]], return_types: Mapping[str, SandboxType]
) -> dict[str, Callable[..., Any]]:
    """Fresh invokers, by binding id, for every entry of a case's ``bindings`` with a behaviour."""
    shared = [entry for entry in entries if _kind(entry) != REFUSE]
    invokers = fixture_invokers(shared, return_types)
    for entry in entries:
        bid = entry.get("id")
        if _kind(entry) == REFUSE and isinstance(bid, str) and bid in return_types:
            behavior = entry["behavior"]
            invokers[bid] = RefusingInvoker(
                str(behavior.get("category")), str(behavior.get("message", "refused"))
            )
    return invokers
