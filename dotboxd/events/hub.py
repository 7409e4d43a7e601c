"""``EventHub``: event kernels installed by owners, run for the host's events, in process.

    router = MessageRouter()
    host = SandboxHost(bindings=[router.binding, *world_bindings])
    hub = EventHub(host, contract, router=router)
    receipt = hub.install("alice", envelope, alice_policy)       # DotBoxDError when refused
    hub.attach_sink("alice", websocket_queue_put)                  # or hub.drain("alice")
    report = hub.publish("monster.damaged", {"monster": 7, "health": 12})
    hub.update_settings("alice", "low-health", {"threshold": 30})  # next event, no re-validation
    hub.uninstall_owner("alice")                                   # disconnect: nothing left behind

Why it is shaped this way:

* ``install`` is the only door: the envelope is shape-checked, its module imported and validated
  against the owner's policy by the host's ``prepare`` (so every import, validation and policy rule
  applies unchanged), then tied to the contract (``binding_rules``). Nothing is registered until all
  checks pass, so a refused install changes no state.
* ``publish`` runs, per subscribed plugin, the pure ``shouldHandle`` and, only if it returned true,
  ``handle`` exactly once. A failed or false filter never runs ``handle``; a failed ``handle``
  applies nothing (its messages are host commands, applied only on success). Nothing is retried,
  so an event that passed is delivered once and one that failed never.
* Each owner is metered separately (``quota.FuelBucket``): a run is admitted only if the bucket
  covers the filter's and the handler's worst case together, so a passing filter is never left
  without the fuel for its handler; a plugin failing ``max_consecutive_failures`` times in a row is
  suspended until ``resume``. One owner's burning kernel therefore costs others bounded time.
* Everything an install creates (plan, subscriptions, host dispatch records) is removed by
  ``uninstall``; ``uninstall_owner`` also removes the outbox, sink, bucket and counters, so
  installing and uninstalling in a loop does not grow the process.

The hub is synchronous and guarded by one re-entrant lock: a server may call it from several
threads (or from an executor), and runs of one hub never interleave.
"""

from __future__ import annotations

import math
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dotboxd.core.diagnostics import DotBoxDError, reject
from dotboxd.core.visible import clipped
from dotboxd.events.binding_rules import ArgSource, check_entrypoints, check_subscriptions, relocate
from dotboxd.events.contracts import EventContract
from dotboxd.events.envelope import Envelope, read_envelope
from dotboxd.events.messages import Delivery, MessageRouter
from dotboxd.events.outbox import Outbox, OutboxMessage, Sink
from dotboxd.events.quota import FuelBucket, OwnerQuota
from dotboxd.events.records import (
    Delivered,
    InstallReceipt,
    Outcome,
    OwnerCounters,
    PluginStatus,
    PublishReport,
)
from dotboxd.events.settings import SettingSpec, checked_update
from dotboxd.host.sandbox_host import SandboxHost
from dotboxd.validator.plan import ExecutionPlan
from dotboxd.validator.policy import Policy

DisconnectHook = Callable[[str, str], None]
"""Called with (owner, reason) after the hub disconnected an owner on its own (outbox overflow,
``reason="outbox-overflow"``); not called for ``uninstall_owner`` requested by the host."""


@dataclass
class _Installed:
    owner: str
    envelope: Envelope
    plan: ExecutionPlan
    specs: Mapping[str, SettingSpec]
    values: dict[str, object]
    filter_args: tuple[ArgSource, ...]
    handle_args: tuple[ArgSource, ...]
    events: tuple[str, ...]
    lease_deadline: float | None
    failures: int = 0
    suspended: str | None = None
    active: bool = True


@dataclass
class _Owner:
    quota: OwnerQuota
    bucket: FuelBucket
    outbox: Outbox
    counters: OwnerCounters = field(default_factory=OwnerCounters)
    plugins: dict[str, _Installed] = field(default_factory=dict)


class EventHub:
    """Installs owners' event kernels and runs them for published events (see module docstring)."""

    def __init__(
        self,
        host: SandboxHost,
        contract: EventContract,
        *,
        router: MessageRouter | None = None,
        backend: str = "reference",
        clock: Callable[[], float] = time.monotonic,
        default_quota: OwnerQuota | None = None,
        on_disconnect: DisconnectHook | None = None,
    ) -> None:
        """``router`` must be the one whose ``binding`` is in ``host``'s catalogue when handlers
        are to send messages (ValueError when another ``host.message.send`` is registered)."""
        if router is not None and host.catalog.get(router.binding.id) is not router.binding:
            raise ValueError("the router's host.message.send binding is not the one registered on this host")
        self.host = host
        self.contract = contract
        self.router = router
        self.backend = backend
        self.clock = clock
        self.default_quota = default_quota or OwnerQuota()
        self.on_disconnect = on_disconnect
        self._owners: dict[str, _Owner] = {}
        self._quotas: dict[str, OwnerQuota] = {}
        self._by_event: dict[str, dict[tuple[str, str], _Installed]] = {}
        self._event_ids = 0
        self._pending_disconnects: set[str] = set()
        self._lock = threading.RLock()
        self.disconnects = 0

    # --- owners and quotas -----------------------------------------------------------------

    def set_quota(self, owner: str, quota: OwnerQuota) -> None:
        """Give ``owner`` its own quota (applies to installs from now on and to its bucket and
        outbox when it has none yet; an owner with live state keeps its current bucket size). A
        quota is the host's configuration, so it outlives ``uninstall_owner`` (a tenant that
        reconnects gets it again); ``clear_quota`` removes it."""
        with self._lock:
            self._quotas[owner] = quota

    def clear_quota(self, owner: str) -> None:
        """Forget ``owner``'s own quota; its next state uses the hub's default."""
        with self._lock:
            self._quotas.pop(owner, None)

    def _owner(self, owner: str) -> _Owner:
        state = self._owners.get(owner)
        if state is None:
            quota = self._quotas.get(owner, self.default_quota)
            state = _Owner(
                quota,
                FuelBucket(quota.fuel_per_second, self.clock),
                Outbox(quota.outbox_capacity, quota.overflow),
            )
            self._owners[owner] = state
        return state

    # --- install / uninstall ---------------------------------------------------------------

    def install(
        self,
        owner: str,
        envelope: Envelope | Mapping[str, Any] | str | bytes,
        policy: Policy,
        *,
        lease_seconds: float | None = None,
    ) -> InstallReceipt:
        """Validate ``envelope`` against ``policy`` and this hub's contract and register it for
        ``owner``; DotBoxDError with the usual diagnostics (code, pointer into the envelope,
        line:col inside a text-form module, hint) when refused, in which case nothing changed."""
        if not isinstance(owner, str) or not owner:
            raise ValueError("owner must be a non-empty string")
        _check_lease(lease_seconds)
        with self._lock:
            self.expire_leases()
            env = envelope if isinstance(envelope, Envelope) else read_envelope(envelope)
            events = check_subscriptions(env, self.contract)
            quota = (
                self._owners[owner].quota
                if owner in self._owners
                else self._quotas.get(owner, self.default_quota)
            )
            existing = self._owners.get(owner)
            if existing is not None and env.plugin_id in existing.plugins:
                raise reject(
                    "E-EVENT-DUPLICATE",
                    f"plugin {env.plugin_id!r} is already installed for this owner",
                    "/manifest/pluginId",
                    hint="uninstall it first, or change its settings with update_settings",
                )
            installed = len(existing.plugins) if existing is not None else 0
            if installed >= quota.max_envelopes:
                raise reject(
                    "E-EVENT-QUOTA",
                    f"the owner already has {installed} envelopes installed (its quota)",
                    "/manifest/pluginId",
                    limit=quota.max_envelopes,
                )
            worst = 2 * policy.limits.max_fuel
            if worst > quota.fuel_per_second:
                raise reject(
                    "E-EVENT-QUOTA",
                    "one event's filter and handler may use more fuel than the owner gets per second",
                    hint="lower the policy's maxFuel or raise the owner's fuel_per_second",
                    maxFuelPerEvent=worst,
                    fuelPerSecond=quota.fuel_per_second,
                )
            try:
                plan = self.host.prepare(env.module, policy)
            except DotBoxDError as refused:
                raise relocate(refused, env) from None
            filter_args, handle_args = check_entrypoints(env, plan, events)
            specs = {spec.name: spec for spec in env.settings}
            deadline = None if lease_seconds is None else self.clock() + lease_seconds
            record = _Installed(
                owner,
                env,
                plan,
                specs,
                {spec.name: spec.default for spec in env.settings},
                filter_args,
                handle_args,
                tuple(e.name for e in events),
                deadline,
            )
            state = self._owner(owner)
            state.plugins[env.plugin_id] = record
            for event in record.events:
                self._by_event.setdefault(event, {})[(owner, env.plugin_id)] = record
            return InstallReceipt(
                owner,
                env.plugin_id,
                plan.module.id,
                plan.module_hash,
                plan.plan_hash,
                plan.policy_hash,
                record.events,
                dict(record.values),
            )

    def uninstall(self, owner: str, plugin_id: str) -> None:
        """Remove one plugin: its subscriptions, its plan and the host's dispatch records for it
        (E-EVENT-NOT-INSTALLED when there is none). Its queued messages stay in the outbox."""
        with self._lock:
            self._remove(self._find(owner, plugin_id))

    def uninstall_owner(self, owner: str) -> int:
        """Disconnect ``owner``: remove every plugin it installed, its outbox (queued messages are
        discarded), sink, fuel bucket and counters. Returns how many plugins were removed."""
        with self._lock:
            state = self._owners.pop(owner, None)
            if state is None:
                return 0
            plugins = list(state.plugins.values())
            for record in plugins:
                self._remove(record, state)
            state.outbox.sink = None
            state.outbox.queue.clear()
            self._pending_disconnects.discard(owner)
            return len(plugins)

    def _find(self, owner: str, plugin_id: str) -> _Installed:
        state = self._owners.get(owner)
        record = None if state is None else state.plugins.get(plugin_id)
        if record is None:
            raise reject(
                "E-EVENT-NOT-INSTALLED",
                f"no plugin {clipped(plugin_id)!r} is installed for this owner",
                plugin=clipped(plugin_id),
            )
        return record

    def _remove(self, record: _Installed, state: _Owner | None = None) -> None:
        record.active = False
        key = (record.owner, record.envelope.plugin_id)
        for event in record.events:
            subscribers = self._by_event.get(event)
            if subscribers is not None:
                subscribers.pop(key, None)
                if not subscribers:
                    del self._by_event[event]
        owner_state = state or self._owners.get(record.owner)
        if owner_state is not None:
            owner_state.plugins.pop(record.envelope.plugin_id, None)
        self.host.release(record.plan)

    # --- leases ----------------------------------------------------------------------------

    def renew_lease(self, owner: str, plugin_id: str, lease_seconds: float) -> None:
        """Extend a plugin's lease to ``lease_seconds`` from now (E-EVENT-NOT-INSTALLED if gone)."""
        _check_lease(lease_seconds)
        with self._lock:
            self._find(owner, plugin_id).lease_deadline = self.clock() + lease_seconds

    def expire_leases(self) -> list[tuple[str, str]]:
        """Uninstall every plugin whose lease has run out (also done by install and publish);
        returns the (owner, pluginId) pairs removed."""
        with self._lock:
            now = self.clock()
            expired = [
                record
                for state in self._owners.values()
                for record in state.plugins.values()
                if record.lease_deadline is not None and record.lease_deadline <= now
            ]
            for record in expired:
                self._remove(record)
            return [(r.owner, r.envelope.plugin_id) for r in expired]

    # --- settings --------------------------------------------------------------------------

    def update_settings(self, owner: str, plugin_id: str, values: Mapping[str, object]) -> dict[str, object]:
        """Change live settings; they apply from the next event on, without re-validation (the
        kernel's parameter types were checked against the declarations at install, and each value
        is checked against its declaration now). All-or-nothing: E-EVENT-SETTING changes nothing."""
        with self._lock:
            record = self._find(owner, plugin_id)
            record.values.update(checked_update(record.specs, values))
            return dict(record.values)

    def settings(self, owner: str, plugin_id: str) -> dict[str, object]:
        with self._lock:
            return dict(self._find(owner, plugin_id).values)

    def resume(self, owner: str, plugin_id: str) -> None:
        """Lift a suspension (the owner's decision, e.g. after fixing a setting)."""
        with self._lock:
            record = self._find(owner, plugin_id)
            record.suspended = None
            record.failures = 0

    # --- outboxes --------------------------------------------------------------------------

    def attach_sink(self, owner: str, sink: Sink) -> None:
        """Offer ``owner``'s messages to ``sink`` (returns False when it cannot take more now);
        queued messages are offered at once."""
        with self._lock:
            state = self._owner(owner)
            state.outbox.sink = sink
            self._flush(owner, state)

    def detach_sink(self, owner: str) -> None:
        with self._lock:
            state = self._owners.get(owner)
            if state is not None:
                state.outbox.sink = None

    def drain(self, owner: str) -> list[OutboxMessage]:
        """Take every message queued for ``owner`` (oldest first)."""
        with self._lock:
            state = self._owners.get(owner)
            return [] if state is None else state.outbox.drain()

    def _deliver(self, message: OutboxMessage) -> None:
        """Put an applied message in its owner's outbox, or apply the owner's overflow rule. Runs
        inside the host's command application: it never raises."""
        state = self._owners.get(message.owner)
        if state is None:
            return
        if state.outbox.offer(message):
            state.counters.messages_queued += 1
            return
        state.counters.messages_dropped += 1
        if state.outbox.overflow == "disconnect":
            self._pending_disconnects.add(message.owner)

    def _flush(self, owner: str, state: _Owner) -> None:
        try:
            state.counters.messages_to_sink += state.outbox.flush()
        except Exception:  # the sink is host code; a broken one is detached, the owner keeps its queue
            state.counters.sink_errors += 1
            state.outbox.sink = None

    def _settle_disconnects(self) -> None:
        while self._pending_disconnects:
            owner = self._pending_disconnects.pop()
            self.uninstall_owner(owner)
            self.disconnects += 1
            if self.on_disconnect is not None:
                self.on_disconnect(owner, "outbox-overflow")

    # --- publish ---------------------------------------------------------------------------

    def publish(self, event_type: str, fields: Mapping[str, object]) -> PublishReport:
        """Run every plugin subscribed to ``event_type`` for this event (install order). The fields
        are checked against the contract first (E-EVENT-UNKNOWN, E-EVENT-FIELDS): a host bug never
        reaches a kernel. Kernel failures never raise; they are outcomes in the report."""
        with self._lock:
            event = self.contract.events.get(event_type)
            if event is None:
                raise reject(
                    "E-EVENT-UNKNOWN", f"contract {self.contract.name} publishes no event {event_type!r}"
                )
            values = event.check(fields)
            self.expire_leases()
            self._event_ids += 1
            event_id = self._event_ids
            started = time.perf_counter()
            deliveries: list[Delivered] = []
            for record in list(self._by_event.get(event_type, {}).values()):
                if not record.active:
                    continue  # removed by an earlier plugin's disconnect during this publish
                outcome, fuel, code = self._run_one(record, event_id, event_type, values)
                deliveries.append(
                    Delivered(
                        record.owner,
                        record.envelope.plugin_id,
                        outcome,
                        fuel,
                        time.perf_counter() - started,
                        code,
                    )
                )
                self._settle_disconnects()
            return PublishReport(event_id, event_type, tuple(deliveries))

    def _run_one(
        self, record: _Installed, event_id: int, event_type: str, values: Mapping[str, object]
    ) -> tuple[Outcome, int, str]:
        state = self._owners[record.owner]
        counters = state.counters
        counters.events += 1
        if record.suspended is not None:
            counters.suspended_skips += 1
            return "suspended", 0, record.suspended
        if not state.bucket.admit(2 * record.plan.policy.limits.max_fuel):
            counters.quota_skips += 1
            return "quota", 0, ""
        env = record.envelope
        result = self.host.execute(
            record.plan,
            env.should_handle,
            _arguments(record.filter_args, values, record.values),
            backend=self.backend,
        )
        fuel = result.fuel_used
        if not result.ok:
            return self._failed(
                record, state, "filter_error", fuel, result.error.code if result.error else ""
            )
        if result.value is not True:
            state.bucket.charge(fuel)
            counters.fuel_used += fuel
            counters.filtered += 1
            record.failures = 0
            return "filtered", fuel, ""
        run_id = uuid.uuid4().hex
        if self.router is not None:
            self.router.begin(
                run_id, Delivery(record.owner, env.plugin_id, event_id, event_type, self._deliver)
            )
        try:
            handled = self.host.execute(
                record.plan,
                env.handle,
                _arguments(record.handle_args, values, record.values),
                backend=self.backend,
                run_id=run_id,
            )
        finally:
            if self.router is not None:
                self.router.end(run_id)
        fuel += handled.fuel_used
        self._flush(record.owner, state)
        if not handled.ok:
            return self._failed(
                record, state, "handle_error", fuel, handled.error.code if handled.error else ""
            )
        state.bucket.charge(fuel)
        counters.fuel_used += fuel
        counters.handled += 1
        record.failures = 0
        return "handled", fuel, ""

    def _failed(
        self, record: _Installed, state: _Owner, outcome: Outcome, fuel: int, code: str
    ) -> tuple[Outcome, int, str]:
        state.bucket.charge(fuel)
        state.counters.fuel_used += fuel
        if outcome == "filter_error":
            state.counters.filter_errors += 1
        else:
            state.counters.handle_errors += 1
        record.failures += 1
        if record.failures >= state.quota.max_consecutive_failures:
            record.suspended = code or outcome
            state.counters.suspensions += 1
        return outcome, fuel, code

    # --- introspection ---------------------------------------------------------------------

    def counters(self, owner: str) -> dict[str, int]:
        with self._lock:
            state = self._owners.get(owner)
            return OwnerCounters().snapshot() if state is None else state.counters.snapshot()

    def status(self, owner: str, plugin_id: str) -> PluginStatus:
        with self._lock:
            record = self._find(owner, plugin_id)
            remaining = (
                None if record.lease_deadline is None else max(0.0, record.lease_deadline - self.clock())
            )
            return PluginStatus(
                owner,
                plugin_id,
                record.plan.plan_hash,
                record.events,
                dict(record.values),
                record.suspended,
                record.failures,
                remaining,
            )

    def installed(self, owner: str | None = None) -> list[tuple[str, str]]:
        """(owner, pluginId) of every installed plugin, or of one owner's."""
        with self._lock:
            return [
                (name, plugin_id)
                for name, state in self._owners.items()
                if owner is None or name == owner
                for plugin_id in state.plugins
            ]

    def footprint(self) -> dict[str, int]:
        """Sizes of everything the hub keeps (a leak shows up here first): owners, installed plugins,
        subscription entries, event keys, routed runs and the host's dispatch records."""
        with self._lock:
            return {
                "owners": len(self._owners),
                "plugins": sum(len(s.plugins) for s in self._owners.values()),
                "subscriptions": sum(len(v) for v in self._by_event.values()),
                "event_keys": len(self._by_event),
                "routed_runs": 0 if self.router is None else self.router.active_runs,
                "host_dispatch": self.host.dispatch_records,
                "queued_messages": sum(len(s.outbox.queue) for s in self._owners.values()),
            }


def _check_lease(lease_seconds: float | None) -> None:
    """A lease is a positive, finite number of seconds (NaN would never expire)."""
    if lease_seconds is None:
        return
    if isinstance(lease_seconds, bool) or not isinstance(lease_seconds, int | float):
        raise TypeError("lease_seconds must be a number")
    if not math.isfinite(lease_seconds) or lease_seconds <= 0:
        raise ValueError("lease_seconds must be a positive, finite number of seconds")


def _arguments(
    sources: Sequence[ArgSource], fields: Mapping[str, object], settings: Mapping[str, object]
) -> list[object]:
    return [fields[s.name] if s.kind == "field" else settings[s.name] for s in sources]
