"""Event kernels: owners install plugin envelopes whose pure ``shouldHandle`` filter and granted
``handle`` run, metered and validated, for each event the host publishes. In process, no network:
a server (``dotboxd serve``) puts transport, authentication and tenants in front of ``EventHub``.

    from dotboxd.events import EventHub, EventContract, EventType, MessageRouter, OwnerQuota

See ``spec/events.md`` for the envelope, the binding of parameters by name, the delivery rule
(exactly once for an event that passed its filter, never for one that did not), quotas and
outboxes; ``threat-model/event-threats.md`` for what each defence is and which test shows it.
"""

from dotboxd.events.contracts import EventContract, EventType
from dotboxd.events.envelope import Envelope, Subscription, read_envelope
from dotboxd.events.hub import EventHub
from dotboxd.events.messages import MESSAGE_BINDING, MESSAGE_CAPABILITY, MessageRouter
from dotboxd.events.outbox import OutboxMessage
from dotboxd.events.quota import OwnerQuota
from dotboxd.events.records import Delivered, InstallReceipt, OwnerCounters, PluginStatus, PublishReport
from dotboxd.events.settings import SettingSpec

__all__ = [
    "MESSAGE_BINDING",
    "MESSAGE_CAPABILITY",
    "Delivered",
    "Envelope",
    "EventContract",
    "EventHub",
    "EventType",
    "InstallReceipt",
    "MessageRouter",
    "OutboxMessage",
    "OwnerCounters",
    "OwnerQuota",
    "PluginStatus",
    "PublishReport",
    "SettingSpec",
    "Subscription",
    "read_envelope",
]
