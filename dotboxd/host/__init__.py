"""The host API: declare bindings, prepare kernels against a policy, execute them metered.

    from dotboxd.host import SandboxHost, Policy, host_binding, Cost, Effect, Int32

Everything a host program needs is re-exported here; the layers below (``dotboxd.validator``,
``dotboxd.runtime``) stay importable for tools but are not required.

Errors form one hierarchy under ``DotBoxDException``: ``prepare`` and ``SandboxHost(...)`` raise
``DotBoxDError`` (with ``Diagnostic``s), a failed run comes back as ``ExecutionResult.error``
(an ``ErrorInfo``; ``SandboxError`` is its exception form) and bindings raise ``BindingError`` to
refuse on purpose. ``BINDING_LOGGER`` names the ``logging`` logger on which a binding's own
exception is reported to the host (the kernel sees only ``R-BINDING-FAILED``).
"""

from dotboxd.core.bindings import (
    AuditLevel,
    BindingCatalog,
    BindingDescriptor,
    BindingRegistry,
    Cost,
    Int32,
    Int64,
    PathText,
    Safety,
    UriText,
    host_binding,
)
from dotboxd.core.diagnostics import Diagnostic, DotBoxDError, DotBoxDException, Span
from dotboxd.core.effects import Effect
from dotboxd.core.values import Guid, ListValue, MapValue, OpaqueId, RecordValue, SandboxPath, SandboxUri
from dotboxd.host.batch import BatchResults
from dotboxd.host.result import ExecutionResult
from dotboxd.host.sandbox_host import DEFAULT_DISPATCH_CACHE_SIZE, SandboxHost
from dotboxd.runtime.audit import AuditEvent, Observer
from dotboxd.runtime.binding_call import LOGGER as BINDING_LOGGER
from dotboxd.runtime.commands import Command
from dotboxd.runtime.context import BindingContext
from dotboxd.runtime.errors import BindingError, ErrorInfo, SandboxError
from dotboxd.runtime.meter import CancelToken, ResourceUsage
from dotboxd.validator.plan import ExecutionPlan
from dotboxd.validator.policy import Policy

__all__ = [
    "BINDING_LOGGER",
    "DEFAULT_DISPATCH_CACHE_SIZE",
    "AuditEvent",
    "AuditLevel",
    "BatchResults",
    "BindingCatalog",
    "BindingContext",
    "BindingDescriptor",
    "BindingError",
    "BindingRegistry",
    "CancelToken",
    "Command",
    "Cost",
    "Diagnostic",
    "DotBoxDError",
    "DotBoxDException",
    "Effect",
    "ErrorInfo",
    "ExecutionPlan",
    "ExecutionResult",
    "Guid",
    "Int32",
    "Int64",
    "ListValue",
    "MapValue",
    "Observer",
    "OpaqueId",
    "PathText",
    "Policy",
    "RecordValue",
    "ResourceUsage",
    "Safety",
    "SandboxError",
    "SandboxHost",
    "SandboxPath",
    "SandboxUri",
    "Span",
    "UriText",
    "host_binding",
]
