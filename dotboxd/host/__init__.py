"""The host API: declare bindings, prepare kernels against a policy, execute them metered.

    from dotboxd.host import SandboxHost, Policy, host_binding, Cost, Effect, Int32

Everything a host program needs is re-exported here; the layers below (``dotboxd.validator``,
``dotboxd.runtime``) stay importable for tools but are not required.
"""

from dotboxd.core.bindings import AuditLevel, Cost, Int32, Int64, PathText, Safety, UriText, host_binding
from dotboxd.core.effects import Effect
from dotboxd.core.values import Guid, ListValue, MapValue, OpaqueId, RecordValue, SandboxPath, SandboxUri
from dotboxd.host.result import ExecutionResult
from dotboxd.host.sandbox_host import SandboxHost
from dotboxd.runtime.commands import Command
from dotboxd.runtime.context import BindingContext
from dotboxd.runtime.errors import BindingError, ErrorInfo, SandboxError
from dotboxd.runtime.meter import CancelToken, ResourceUsage
from dotboxd.validator.plan import ExecutionPlan
from dotboxd.validator.policy import Policy

__all__ = [
    "AuditLevel",
    "BindingContext",
    "BindingError",
    "CancelToken",
    "Command",
    "Cost",
    "Effect",
    "ErrorInfo",
    "ExecutionPlan",
    "ExecutionResult",
    "Guid",
    "Int32",
    "Int64",
    "ListValue",
    "MapValue",
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
    "UriText",
    "host_binding",
]
