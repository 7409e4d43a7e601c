"""Policy-resolution rules whose exact outcome no other test pinned (found by mutation testing).

Each test checks one rule of ``spec/validation.md`` (pass 10) down to its code and evidence: a grant
with parameters for a capability nothing defines is a parameter error (not merely unused); the
determinism denial names which IO effects the module itself requires; and an unused grant says
whether its capability is merely unused or unknown to every registered binding.
"""

from __future__ import annotations

from dotboxd.core.bindings import BindingRegistry
from dotboxd.validator.policy import Policy

from .case_table import KILL, PEEK
from .helpers import bindings, main, rejection, text

PURE_MAIN = text(main("return 1;"))


def registry(*entries: dict[str, object]) -> BindingRegistry:
    return BindingRegistry(bindings(*entries))


def test_parameters_on_a_grant_no_binding_defines_are_refused_as_parameters() -> None:
    policy = Policy.builder().grant("made.up.capability", colour="blue").tolerate_unused_grants().build()
    d = rejection(PURE_MAIN, policy, registry(PEEK))
    assert d.code == "E-POLICY-GRANT-PARAM"
    assert "unexpected parameter(s) colour" in d.message


def test_a_deterministic_policy_names_the_io_the_module_requires() -> None:
    peek = text(main("return game.world.peek(1);"))
    policy = Policy.builder().grant("game.world.read").deterministic(0, 1).build()
    d = rejection(peek, policy, registry(PEEK))
    assert d.code == "E-POLICY-DETERMINISM"
    assert d.evidence["required"] == ["HostStateRead"]
    assert "HostStateRead" in d.evidence["effects"]


def test_an_unused_grant_says_whether_its_capability_is_known() -> None:
    strict = Policy.builder().grant("game.world.read").reject_unused_grants().build()
    known = rejection(PURE_MAIN, strict, registry(PEEK, KILL))  # unused grants are refused in strict mode
    assert known.code == "E-POLICY-GRANT"
    assert known.message == "grant 'game.world.read' is not used by this module"
    unknown = rejection(PURE_MAIN, Policy.builder().grant("nobody.needs.this").build(), registry(PEEK, KILL))
    assert unknown.code == "E-POLICY-GRANT"
    assert unknown.message == "grant 'nobody.needs.this' names a capability no registered binding requires"
