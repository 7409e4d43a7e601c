"""The validate stage: an imported module, the case's policy and fixture bindings -> a plan.

Exactly the recipe of the validator's interface note: the policy's JSON form with ``$ROOT`` bound to
the case's temporary root, the case's ``bindings`` read as a binding manifest (so registry errors
are ``E-BINDING-*`` rejections of this stage) with their fixture behaviours attached - fresh
invokers for every evaluation, so no fixture state leaks from one run into the next - then
``validate`` (which, for a policy with ``requireStaticBound``, also runs the strict-mode prover of
spec/proofs.md section 5). Any ``DotBoxDError`` raised here is a rejection at stage ``validate``.

An entry marked ``"standard": true`` is the standard descriptor (``dotboxd.conformance.standard``);
the runtime's facades are attached to the catalogue before validation, exactly as ``SandboxHost``
does for the catalogue its ``prepare`` validates against, because the plan keeps the invokers of
the catalogue it was validated with. A declared entry never matches a standard record, so only a
marked one gets a facade.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dotboxd.conformance.fixtures import attach_fixtures
from dotboxd.conformance.standard import case_descriptors
from dotboxd.core.ast import Module
from dotboxd.core.bindings import BindingCatalog, BindingRegistry
from dotboxd.runtime.facades import attach_standard_facades
from dotboxd.validator.api import validate
from dotboxd.validator.plan import ExecutionPlan
from dotboxd.validator.policy import Policy


@dataclass(frozen=True, slots=True)
class Validated:
    """What the run stage needs: the plan and the binding catalogue it was validated against."""

    plan: ExecutionPlan
    catalog: BindingCatalog


def validate_case(module: Module, raw: Mapping[str, Any], root: str | None) -> Validated:
    """Validate ``module`` under the case's policy and bindings; raises ``DotBoxDError`` when refused."""
    variables = {"$ROOT": root} if root is not None else {}
    policy = Policy.from_json(raw["policy"], variables) if "policy" in raw else None
    entries = list(raw.get("bindings", []))
    descriptors = case_descriptors(entries)
    # as SandboxHost does for the catalogue it validates against: the plan keeps these invokers
    catalog = attach_standard_facades(attach_fixtures(BindingRegistry(descriptors).build(), entries))
    plan = validate(module, policy, catalog)
    return Validated(plan=plan, catalog=catalog)
