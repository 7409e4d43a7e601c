"""``JobSpec``: what a distributed job ships to its workers - content and hashes, never objects.

A plan holds Python objects (binding implementations, compiled closures); pickling it to another
process would make the worker trust whatever the bytes deserialize to. So a job ships only data a
worker can check for itself:

* ``module_wire`` - the module's wire JSON (compact, written from the validated AST), whose
  canonical hash must equal ``module_hash``;
* ``policy_json`` - the policy's JSON form, whose policy hash must equal ``policy_hash``;
* ``manifest_json`` - the binding manifest of the client's catalogue (contracts only, no code),
  whose hash must equal ``binding_manifest_hash``;
* ``setup`` - ``"package.module:function"``, a function importable on the worker that returns the
  worker's own bindings. The worker's catalogue must hash to ``binding_manifest_hash`` too: the
  implementations are the worker's, the contracts are the client's.

Every piece is plain ``str``; the worker re-imports and re-validates (``dotboxd.distributed.worker``)
and refuses (``E-DIST-INTEGRITY``) on any mismatch.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from dotboxd.core.diagnostics import reject
from dotboxd.grammar.wire import dumps_wire
from dotboxd.validator.plan import ExecutionPlan


@dataclass(frozen=True, slots=True)
class JobSpec:
    """The content a worker needs to rebuild a plan, and the hashes it must reproduce."""

    module_wire: str
    policy_json: str
    manifest_json: str
    module_hash: str
    policy_hash: str
    binding_manifest_hash: str
    plan_hash: str
    setup: str
    backend: str = "reference"

    def cache_key(self) -> str:
        """A digest of every field as received: a worker caches a checked plan under it, so a
        tampered piece can never hit an entry that was checked with the genuine one."""
        digest = hashlib.sha256()
        for part in (
            self.module_wire,
            self.policy_json,
            self.manifest_json,
            self.module_hash,
            self.policy_hash,
            self.binding_manifest_hash,
            self.plan_hash,
            self.setup,
            self.backend,
        ):
            encoded = part.encode("utf-8", "surrogatepass")
            digest.update(len(encoded).to_bytes(8, "big"))
            digest.update(encoded)
        return digest.hexdigest()


def job_spec(plan: ExecutionPlan, setup: str, *, backend: str = "reference") -> JobSpec:
    """The spec of ``plan`` (prepared by the client's host): its module, policy and binding
    manifest as content, with the hashes the plan was validated under. ``setup`` names the
    worker-side function (``module:function``) returning the worker's bindings."""
    if setup.count(":") != 1 or not all(setup.split(":")):
        raise reject(
            "E-DIST-SETUP",
            f"worker setup '{setup}' is not of the form 'package.module:function'",
            hint="name an importable function that returns the worker's bindings",
        )
    return JobSpec(
        module_wire=dumps_wire(plan.module, indent=None),
        policy_json=json.dumps(plan.policy.to_json(), sort_keys=True, separators=(",", ":")),
        manifest_json=json.dumps(plan.catalog.to_manifest(), sort_keys=True, separators=(",", ":")),
        module_hash=plan.module_hash,
        policy_hash=plan.policy_hash,
        binding_manifest_hash=plan.binding_manifest_hash,
        plan_hash=plan.plan_hash,
        setup=setup,
        backend=backend,
    )
