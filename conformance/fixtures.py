"""The fixture bindings of one case evaluation: every behaviour kind of the case format.

The shared kinds (``return``, ``echo``, ``sequence``, ``raise``, ``pending``, ``async-return``,
``sleep``, ``foreign``, ``malformed``) come from ``dotboxd.runtime.fixtures``. Two kinds are our
extensions:

* ``refuse``: the binding refuses the request on purpose with a category of its choosing
  (PermissionDenied, NotFound, InvalidInput or QuotaExceeded), as a host binding does by raising
  ``BindingError`` - the only way a case can reach ``R-BINDING-DENIED``/``-NOT-FOUND``/
  ``-INVALID``/``-QUOTA``;
* ``charge``: the binding reports the file, network and log use of a facade through its binding
  context (``fileBytesRead``, ``fileBytesWritten``, ``networkBytesRead``, ``networkBytesWritten``,
  then one log event with ``logMessage``), then returns ``value`` - the only way a case can reach
  the meter's facade limits, which no kernel operation charges.

A ``sequence`` indexes its values by the calls of the current run (read from its binding context),
so its state is per run whatever reuses it; invokers are still built anew for every evaluation, so
their lifetime ``calls`` counters start at zero too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from dotboxd.conformance.model import CHARGE_COUNTERS, REFUSE_CATEGORIES
from dotboxd.core.bindings import BindingCatalog
from dotboxd.core.types import SandboxType, to_type_ref
from dotboxd.core.values import SandboxFault, decode_typed
from dotboxd.grammar import literals
from dotboxd.runtime.errors import BindingError
from dotboxd.runtime.fixtures import fixture_invokers

REFUSE = "refuse"
CHARGE = "charge"


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


class ChargeContext(Protocol):
    """The part of the runtime's ``BindingContext`` a charging fixture uses."""

    def charge_file_read(self, amount: int) -> None: ...
    def charge_file_write(self, amount: int) -> None: ...
    def charge_network_read(self, amount: int) -> None: ...
    def charge_network_write(self, amount: int) -> None: ...
    def charge_log_event(self, message: str) -> None: ...


class ChargingInvoker:
    """A binding implementation (called with its context first) that charges facade counters."""

    def __init__(self, behavior: Mapping[str, Any], return_type: SandboxType) -> None:
        self.amounts = {name: int(behavior.get(name, 0)) for name in CHARGE_COUNTERS}
        self.message = behavior.get("logMessage")
        self.value = behavior.get("value")
        self.return_type = return_type
        self.calls = 0
        self.takes_context = True

    def __call__(self, context: ChargeContext, *args: Any) -> Any:
        self.calls += 1
        charges: dict[str, Callable[[int], None]] = {
            "fileBytesRead": context.charge_file_read,
            "fileBytesWritten": context.charge_file_write,
            "networkBytesRead": context.charge_network_read,
            "networkBytesWritten": context.charge_network_write,
        }
        for name, charge in charges.items():
            if self.amounts[name]:
                charge(self.amounts[name])
        if isinstance(self.message, str):
            context.charge_log_event(self.message)
        try:
            return decode_typed(self.value, to_type_ref(self.return_type), literals)
        except SandboxFault:
            return self.value  # not a valid encoded value: the runtime must refuse it


def _kind(entry: Mapping[str, Any]) -> Any:
    behavior = entry.get("behavior")
    return behavior.get("kind") if isinstance(behavior, Mapping) else None


def case_invokers(
    entries: Sequence[Mapping[str, Any]], return_types: Mapping[str, SandboxType]
) -> dict[str, Callable[..., Any]]:
    """Fresh invokers, by binding id, for every entry of a case's ``bindings`` with a behaviour."""
    shared: list[Mapping[str, Any]] = [entry for entry in entries if _kind(entry) not in (REFUSE, CHARGE)]
    invokers = fixture_invokers(shared, return_types)
    for entry in entries:
        bid = entry.get("id")
        if not isinstance(bid, str) or bid not in return_types:
            continue
        behavior = entry.get("behavior")
        if _kind(entry) == REFUSE and isinstance(behavior, Mapping):
            invokers[bid] = RefusingInvoker(
                str(behavior.get("category")), str(behavior.get("message", "refused"))
            )
        elif _kind(entry) == CHARGE and isinstance(behavior, Mapping):
            invokers[bid] = ChargingInvoker(behavior, return_types[bid])
    return invokers


def attach_fixtures(catalog: BindingCatalog, entries: Sequence[Mapping[str, Any]]) -> BindingCatalog:
    """``catalog`` with fresh fixture invokers attached; a ``charge`` or ``sequence`` fixture is
    called with the binding context first (``takes_context``), like any host binding that charges
    or keeps per-run state through it."""
    invokers = case_invokers(entries, {bid: desc.return_type for bid, desc in catalog.items()})
    return BindingCatalog(
        replace(
            desc, invoke=invokers[bid], takes_context=bool(getattr(invokers[bid], "takes_context", False))
        )
        if bid in invokers
        else desc
        for bid, desc in catalog.items()
    )
