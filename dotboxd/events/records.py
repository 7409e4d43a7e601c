"""What the hub reports: install receipts, per-event outcomes, per-owner counters and status."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Outcome = Literal["handled", "filtered", "filter_error", "handle_error", "quota", "suspended"]
"""What happened to one event for one subscribed plugin:

* ``handled``: the filter returned true and ``handle`` ran once and succeeded (its messages applied);
* ``filtered``: the filter returned false; ``handle`` did not run;
* ``filter_error``: the filter failed (out of fuel, a fault): treated as not passed;
* ``handle_error``: the filter passed, ``handle`` ran once and failed; nothing it queued applied;
* ``quota``: the owner's fuel bucket could not cover the runs; no kernel code ran for this event;
* ``suspended``: the plugin is suspended after repeated failures; no kernel code ran.
"""


@dataclass(frozen=True)
class InstallReceipt:
    """The answer to a successful ``install``: what was validated, under which hashes."""

    owner: str
    plugin_id: str
    module_id: str
    module_hash: str
    plan_hash: str
    policy_hash: str
    events: tuple[str, ...]
    settings: Mapping[str, object]

    def to_json(self) -> dict[str, Any]:
        """The receipt as a server answers an install (camelCase keys, like the envelope)."""
        return {
            "owner": self.owner,
            "pluginId": self.plugin_id,
            "moduleId": self.module_id,
            "moduleHash": self.module_hash,
            "planHash": self.plan_hash,
            "policyHash": self.policy_hash,
            "events": list(self.events),
            "settings": dict(self.settings),
        }


@dataclass(frozen=True)
class Delivered:
    """One plugin's outcome for one event; ``finished_s`` is seconds since ``publish`` began (the
    latency this owner saw for this event), ``fuel`` the fuel its runs used, ``code`` the error code
    of a failed run."""

    owner: str
    plugin_id: str
    outcome: Outcome
    fuel: int
    finished_s: float
    code: str = ""


@dataclass(frozen=True)
class PublishReport:
    """Everything ``publish`` did for one event, in the order the plugins were visited."""

    event_id: int
    event_type: str
    deliveries: tuple[Delivered, ...]

    def outcomes(self, owner: str) -> list[Outcome]:
        return [d.outcome for d in self.deliveries if d.owner == owner]

    def to_json(self) -> dict[str, Any]:
        return {
            "eventId": self.event_id,
            "eventType": self.event_type,
            "deliveries": [
                {
                    "owner": d.owner,
                    "pluginId": d.plugin_id,
                    "outcome": d.outcome,
                    "fuel": d.fuel,
                    "finishedSeconds": d.finished_s,
                    "code": d.code,
                }
                for d in self.deliveries
            ],
        }


@dataclass
class OwnerCounters:
    """Running totals for one owner (kept until the owner is disconnected)."""

    events: int = 0
    handled: int = 0
    filtered: int = 0
    filter_errors: int = 0
    handle_errors: int = 0
    quota_skips: int = 0
    suspended_skips: int = 0
    suspensions: int = 0
    fuel_used: int = 0
    messages_queued: int = 0
    messages_dropped: int = 0
    messages_to_sink: int = 0
    sink_errors: int = 0

    def snapshot(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class PluginStatus:
    """An installed plugin as the hub sees it now."""

    owner: str
    plugin_id: str
    plan_hash: str
    events: tuple[str, ...]
    settings: Mapping[str, object]
    suspended: str | None
    consecutive_failures: int
    lease_remaining_s: float | None = None
