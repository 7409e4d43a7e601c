"""Host bindings: the only way a kernel touches the world, declared by the host, never by the kernel.

A :class:`BindingDescriptor` states everything the sandbox must know about one host function before
any kernel may call it: its sandbox signature, its effects, the capability a policy must grant, its
cost, audit level and safety class, whether it is async, and the Python callable ``invoke`` that the
runtime calls. Hosts declare bindings with the :func:`host_binding` decorator (which reads sandbox
types from Python type hints where they are unambiguous) or from a JSON binding manifest (DotBoxD's
section 11; the CLI and the conformance corpus use it; it has no callables).

A :class:`BindingRegistry` collects descriptors; :meth:`BindingRegistry.build` enforces DotBoxD's
twelve registry checks (spec/validation.md section 8) in order and returns an immutable :class:`BindingCatalog` with its
manifest hash. Every refusal is a DotBoxDError with an ``E-BINDING-*`` code naming the binding.

This module is the public face of that area; each job lives in a module of its own:
``binding_model`` (the descriptor, enums, cost, grant validators), ``binding_decorator``
(``host_binding`` and type hints), ``binding_checks`` (the registry checks), ``binding_catalog``
(registry and catalogue), ``binding_hash`` (records and the manifest hash), ``binding_manifest``
(the JSON manifest) and ``binding_standard`` (DotBoxD's effectful built-ins). The record encoder
itself is ``dotboxd.core.records``.
"""

from __future__ import annotations

from dotboxd.core.binding_catalog import EMPTY_CATALOG, BindingCatalog, BindingRegistry
from dotboxd.core.binding_checks import check_binding
from dotboxd.core.binding_decorator import (
    GuidText,
    HintProblem,
    Int32,
    Int64,
    PathText,
    UriText,
    host_binding,
    sandbox_type_from_hint,
)
from dotboxd.core.binding_hash import (
    BINDINGS_HASH_ID,
    binding_manifest_hash,
    binding_record,
    same_implementation,
)
from dotboxd.core.binding_manifest import (
    binding_from_json,
    binding_to_json,
    load_binding_manifest,
    manifest_to_json,
)
from dotboxd.core.binding_model import (
    ASYNC_CAPABILITY,
    BUILTIN_CAPABILITIES,
    BUILTIN_CAPABILITY_EFFECTS,
    PARAMETERLESS_GRANT,
    REENTRANT_CAPABILITY,
    AuditKind,
    AuditLevel,
    BindingDescriptor,
    Cost,
    GrantParameters,
    GrantValidator,
    Safety,
    is_builtin_capability,
)
from dotboxd.core.binding_standard import standard_bindings
from dotboxd.core.records import canonical_record
from dotboxd.core.records import hash_records as sha256_lines

__all__ = [
    "ASYNC_CAPABILITY",
    "BINDINGS_HASH_ID",
    "BUILTIN_CAPABILITIES",
    "BUILTIN_CAPABILITY_EFFECTS",
    "EMPTY_CATALOG",
    "PARAMETERLESS_GRANT",
    "REENTRANT_CAPABILITY",
    "AuditKind",
    "AuditLevel",
    "BindingCatalog",
    "BindingDescriptor",
    "BindingRegistry",
    "Cost",
    "GrantParameters",
    "GrantValidator",
    "GuidText",
    "HintProblem",
    "Int32",
    "Int64",
    "PathText",
    "Safety",
    "UriText",
    "binding_from_json",
    "binding_manifest_hash",
    "binding_record",
    "binding_to_json",
    "canonical_record",
    "check_binding",
    "host_binding",
    "is_builtin_capability",
    "load_binding_manifest",
    "manifest_to_json",
    "same_implementation",
    "sandbox_type_from_hint",
    "sha256_lines",
    "standard_bindings",
]
