"""Pass 10, policy resolution: evidence, ordering, warnings, grant validators and the derivation
of required capabilities (never from a manifest, always through every call)."""

from __future__ import annotations

import dataclasses

from dotboxd.core.bindings import BindingRegistry, GrantParameters
from dotboxd.validator.policy import Policy

from .case_table import KILL, LATER, PEEK
from .helpers import accept, all_rejections, bindings, codes, fn, main, rejection, text


def registry(*entries: dict[str, object]) -> BindingRegistry:
    return BindingRegistry(bindings(*entries))


CHAIN = text(main("return a();"), fn("a", "return b();"), fn("b", "ok = game.world.kill(7);\nreturn 1;"))


def test_missing_capability_names_the_path_from_the_entrypoint() -> None:
    d = rejection(CHAIN, None, registry(KILL))
    assert d.code == "E-POLICY-CAP" and d.category == "PolicyDenied"
    assert d.evidence == {
        "capability": "game.world.monster.write.kill",
        "path": ["main", "a", "b", "game.world.kill"],
    }
    assert d.pointer == "/functions/2/body/0/value"
    assert d.span is not None and (d.span.line, d.span.column) == (9, 6)


def test_requests_are_never_grants_and_never_needs() -> None:
    # requesting without a call: the request must be granted, but nothing is *required*
    m = text(main("return 1;"), header='requires "game.world.monster.write.kill";\n')
    plan = accept(m, Policy.builder().grant("game.world.monster.write.kill").build(), registry(KILL))
    assert plan.requested_capabilities == ("game.world.monster.write.kill",)
    assert plan.required_capabilities == ()


def test_request_and_requirement_of_one_capability_is_one_diagnostic() -> None:
    m = text(
        main("ok = game.world.kill(1);\nreturn 1;"), header='requires "game.world.monster.write.kill";\n'
    )
    diags = all_rejections(m, None, registry(KILL))
    assert codes(diags) == ["E-POLICY-CAP"] and diags[0].evidence["requested"] is True


def test_missing_effect_names_the_effects_and_their_path() -> None:
    m = text(main("return h();"), fn("h", "return game.world.peek(1);"))
    policy = (
        Policy.builder()
        .grant("game.world.read")
        .with_allowed_effects(Policy.default().allowed_effects)
        .build()
    )
    d = rejection(m, policy, registry(PEEK))
    assert d.code == "E-POLICY-EFFECT"
    assert d.evidence["missing"] == ["HostStateRead"]
    assert d.evidence["path"] == ["main", "h", "game.world.peek"]


def test_capability_is_reported_before_an_unused_grant() -> None:
    policy = Policy.builder().grant("game.world.read").build()
    assert codes(all_rejections(CHAIN, policy, registry(KILL, PEEK))) == ["E-POLICY-CAP"]


def test_unused_grants_rejected_or_tolerated() -> None:
    m = text(main("return 1;"))
    strict = Policy.builder().grant("game.world.read").reject_unused_grants().build()
    d = rejection(m, strict, registry(PEEK))
    assert d.code == "E-POLICY-GRANT" and d.evidence == {"grant": "game.world.read", "needed": []}
    plan = accept(m, Policy.builder().grant("game.world.read").build(), registry(PEEK))
    assert [w.code for w in plan.warnings] == ["W-POLICY-UNUSED-GRANT"]
    assert plan.policy.reject_unused_grants is False


def test_one_policy_serves_kernels_using_different_subsets_of_its_grants() -> None:
    shared = Policy.builder().grant("game.world.read").grant("game.world.monster.write.kill").build()
    peeks = text(main("return game.world.peek(1);"))
    kills = text(main("ok = game.world.kill(1);\nreturn 1;"))
    for m in (peeks, kills):
        plan = accept(m, shared, registry(PEEK, KILL))
        assert [w.code for w in plan.warnings] == ["W-POLICY-UNUSED-GRANT"]


def test_builtin_grants_accepted_unused_but_parameters_still_checked() -> None:
    m = text(main("return 1;"))
    plan = accept(m, Policy.builder().grant_time_now().grant_random().grant_logging().build())
    assert sorted(w.evidence["grant"] for w in plan.warnings) == ["log.write", "random", "time.now"]
    d = rejection(m, Policy.builder().grant("time.now", {"x": "1"}).build())
    assert d.code == "E-POLICY-GRANT-PARAM"


def test_request_cannot_make_an_unknown_capability_grantable() -> None:
    # threat: a kernel names a capability in capabilityRequests so that a host's stray grant of a
    # capability no binding implements is accepted (and later honoured by something unexpected)
    m = text(main("return 1;"), header='requires "game.secret.thing";\n')
    for policy in (
        Policy.builder().grant("game.secret.thing").build(),
        Policy.builder().grant("game.secret.thing").reject_unused_grants().build(),
    ):
        d = rejection(m, policy, registry(PEEK))
        assert d.code == "E-POLICY-GRANT" and d.pointer == "/grants/0"
        assert d.evidence == {"grant": "game.secret.thing", "requested": True}


def test_wildcard_matching_no_known_capability_is_rejected() -> None:
    m = text(main("return 1;"))
    d = rejection(m, Policy.builder().grant("nothing.*").build(), registry(PEEK))
    assert d.code == "E-POLICY-GRANT" and "wildcard grant 'nothing.*' matches no capability" in d.message
    assert rejection(m, Policy.builder().grant("*").build()).code == "E-POLICY-GRANT"
    plan = accept(m, Policy.builder().grant("game.*").build(), registry(PEEK))
    assert [w.code for w in plan.warnings] == ["W-POLICY-UNUSED-GRANT", "W-POLICY-WILDCARD"]


def test_wildcard_grant_works_with_a_warning() -> None:
    plan = accept(CHAIN, Policy.builder().grant("game.*").build(), registry(KILL))
    assert [w.code for w in plan.warnings] == ["W-POLICY-WILDCARD"]
    assert plan.warnings[0].category == "PolicyDenied"


def test_expired_grant_evidence() -> None:
    policy = Policy.builder().grant("game.world.monster.write.kill", expires_at_unix_ms=100).build()
    d = rejection(CHAIN, policy, registry(KILL), now_unix_ms=100)
    assert d.code == "E-POLICY-CAP" and "expired" in d.message
    accept(CHAIN, policy, registry(KILL), now_unix_ms=99)


def test_custom_grant_validator_is_consulted_and_cannot_crash_validation() -> None:
    (kill,) = bindings(KILL)
    tenant = dataclasses.replace(kill, grant_validator=GrantParameters(required=("tenant",)))
    accept(
        CHAIN,
        Policy.builder().grant("game.world.monster.write.kill", tenant="t1").build(),
        BindingRegistry([tenant]),
    )
    d = rejection(
        CHAIN, Policy.builder().grant("game.world.monster.write.kill").build(), BindingRegistry([tenant])
    )
    assert d.code == "E-POLICY-GRANT-PARAM" and "tenant" in d.message

    def explode(params: object) -> str | None:
        raise RuntimeError("host bug")

    boom = dataclasses.replace(kill, grant_validator=explode)
    d = rejection(
        CHAIN, Policy.builder().grant("game.world.monster.write.kill").build(), BindingRegistry([boom])
    )
    assert d.code == "E-POLICY-GRANT-PARAM" and "RuntimeError" in d.message


def test_grant_effects_are_derived_from_covered_bindings_only() -> None:
    # granting the read capability derives HostStateRead, not the kill binding's HostStateWrite
    m = text(main("ok = game.world.kill(1);\nreturn game.world.peek(1);"))
    policy = (
        Policy.builder().grant("game.world.read").grant("game.world.monster.write.kill", effects=None).build()
    )
    accept(m, policy, registry(KILL, PEEK))
    narrow = (
        Policy.builder()
        .grant("game.world.read")
        .grant("game.world.monster.write.kill", effects=Policy.default().allowed_effects)
        .build()
    )
    assert rejection(m, narrow, registry(KILL, PEEK)).evidence["missing"] == ["HostStateWrite"]


def test_determinism_rejects_async_grants_even_if_unused_by_effects() -> None:
    m = text(main("return test.async.echo(1);"))
    policy = Policy.builder().allow_runtime_async().deterministic(0, 1).build()
    assert rejection(m, policy, registry(LATER)).code == "E-POLICY-DETERMINISM"
