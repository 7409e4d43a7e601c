"""Host policy: what a kernel is granted, never what it asks for.

A :class:`Policy` is an immutable value built by :class:`PolicyBuilder` (``Policy.builder()``) or read
from the JSON form used by ``dotboxd check --policy`` and the conformance corpus. It holds the allowed
effects, capability grants (with optional expiry), every resource limit of DotBoxD with its
defaults, determinism settings, the declared opaque-id brands and the prover's input bounds.

Defaults deny everything except pure computation (Cpu|Alloc). Grants match capabilities exactly, or
by a trailing ``.*`` pattern (``a.b.*`` matches ``a.b.x`` but not ``a.b``), or ``*`` for everything;
wildcards work but :meth:`Policy.warnings` flags them. Revocation is live: ``policy.revoke(cap)``
records the capability in a revocation list shared by every copy of the policy, so plans already
prepared against it fail before they run (:meth:`ExecutionPlan.ensure_usable`).

This module is the public face of the policy; each job lives in its own module:

* ``dotboxd.core.limits`` - the limit table (names, JSON names, defaults, ceilings, quota codes);
* :mod:`dotboxd.validator.grants` - one grant, pattern matching, the revocation list;
* :mod:`dotboxd.validator.grant_rules` - the built-in capabilities' grant-parameter rules
  (spec/validation.md section 10), applied by the policy-resolution pass;
* :mod:`dotboxd.validator.policy_model` - the :class:`Policy` value and its hash;
* :mod:`dotboxd.validator.policy_builder` - :class:`PolicyBuilder`, where every value is checked;
* :mod:`dotboxd.validator.policy_json` - the JSON form.
"""

from __future__ import annotations

from dotboxd.core.limits import (
    INT32_MAX,
    LIMIT_BY_JSON,
    LIMIT_CEILING,
    LIMIT_FIELDS,
    MIB,
    Limits,
    limit_json_name,
)
from dotboxd.validator.grant_rules import VOUCHED_ROOTS, builtin_grant_problem
from dotboxd.validator.grants import (
    CapabilityGrant,
    Revocations,
    capability_matches,
    grant_shape_problem,
)
from dotboxd.validator.policy_builder import PolicyBuilder
from dotboxd.validator.policy_json import GRANT_KEYS, POLICY_KEYS
from dotboxd.validator.policy_model import Policy, now_ms

__all__ = [
    "GRANT_KEYS",
    "INT32_MAX",
    "LIMIT_BY_JSON",
    "LIMIT_CEILING",
    "LIMIT_FIELDS",
    "MIB",
    "POLICY_KEYS",
    "VOUCHED_ROOTS",
    "CapabilityGrant",
    "Limits",
    "Policy",
    "PolicyBuilder",
    "Revocations",
    "builtin_grant_problem",
    "capability_matches",
    "grant_shape_problem",
    "limit_json_name",
    "now_ms",
]
