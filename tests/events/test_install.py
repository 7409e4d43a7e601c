"""Installing plugin envelopes: what is accepted, and every refusal with its code and location.

A refused install must leave the hub exactly as it was (``footprint`` unchanged), so each refusal
test also checks that nothing was registered."""

from __future__ import annotations

import json

import pytest
from world import CONTRACT, GameWorld, load_envelope, player_policy

from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.events import EventHub, MessageRouter, OwnerQuota
from dotboxd.grammar.wire import to_wire
from dotboxd.host import Policy, SandboxHost
from tests.events.conftest import EnvelopeFactory, make_envelope


def _refused(game: GameWorld, envelope: object, policy: Policy | None = None) -> DotBoxDError:
    before = game.hub.footprint()
    with pytest.raises(DotBoxDError) as caught:
        game.hub.install("alice", envelope, policy or player_policy())  # type: ignore[arg-type]
    assert game.hub.footprint() == before, "a refused install changed the hub"
    return caught.value


def test_install_returns_the_hashes_of_the_validated_plan(game: GameWorld) -> None:
    receipt = game.hub.install("alice", load_envelope(), player_policy())
    plan = game.host.prepare(load_envelope()["module"], player_policy())
    assert (receipt.module_hash, receipt.plan_hash, receipt.policy_hash) == (
        plan.module_hash,
        plan.plan_hash,
        plan.policy_hash,
    )
    assert receipt.events == ("monster.damaged",)
    assert receipt.settings == {"threshold": 20}
    assert game.hub.installed() == [("alice", "low-health")]


def test_install_accepts_the_envelope_as_json_text_and_the_module_in_wire_form(game: GameWorld) -> None:
    envelope = load_envelope()
    envelope["module"] = to_wire(game.host.prepare(envelope["module"], player_policy()).module)
    receipt = game.hub.install("alice", json.dumps(envelope), player_policy())
    assert receipt.module_id == "low-health-filter"


def test_wire_form_module_errors_point_into_the_envelope_without_line_numbers(game: GameWorld) -> None:
    envelope = load_envelope()
    wire = to_wire(game.host.prepare(envelope["module"], player_policy()).module)
    wire["functions"][0]["parameters"][0]["name"] = "e_colour"
    envelope["module"] = wire
    error = _refused(game, envelope)
    assert error.code == "E-EVENT-PARAM"
    assert (error.diagnostic.pointer, error.diagnostic.span) == ("/module/functions/0/parameters/0", None)


def test_events_impure_filter_is_rejected_at_install(game: GameWorld, envelope: EnvelopeFactory) -> None:
    """A filter that sends a message (HostStateWrite) is refused even though the policy grants it."""
    error = _refused(game, envelope(filter_body='    return host.message.send("peek");'))
    assert error.code == "E-EVENT-FILTER-IMPURE"
    assert error.diagnostic.pointer == "/entrypoints/shouldHandle"
    assert error.diagnostic.evidence["bindings"] == ["host.message.send"]
    assert "HostStateWrite" in error.diagnostic.evidence["effects"]


def test_events_impure_filter_through_a_private_helper_is_rejected(
    game: GameWorld, envelope: EnvelopeFactory
) -> None:
    """Purity is transitive: hiding the effect in a private function does not help."""
    helper = 'fn tell() -> Bool {\n    return host.message.send("x");\n}'
    error = _refused(game, envelope(filter_body="    return tell();", extra=helper))
    assert error.code == "E-EVENT-FILTER-IMPURE"
    assert error.diagnostic.evidence["bindings"] == ["host.message.send"]


def test_events_filter_that_reads_world_state_is_impure(game: GameWorld, envelope: EnvelopeFactory) -> None:
    """Reading host state is an effect too (HostStateRead): a filter sees only its parameters."""
    module = (
        load_envelope()["module"]
        .replace(
            'requires "host.message.write"',
            'requires "game.world.monster.read.health" reason "r";\nrequires "host.message.write"',
        )
        .replace("return e_health < threshold;", "return game.world.getHealth(e_monster) < threshold;")
    )
    error = _refused(game, envelope(module=module))
    assert error.code == "E-EVENT-FILTER-IMPURE"
    assert error.diagnostic.evidence["effects"] == ["HostStateRead"]


def test_unknown_event_type_is_refused(game: GameWorld, envelope: EnvelopeFactory) -> None:
    error = _refused(game, envelope(event="monster.healed"))
    assert error.code == "E-EVENT-UNKNOWN"
    assert error.diagnostic.pointer == "/manifest/subscriptions/0/event"


def test_contract_mismatch_is_refused(game: GameWorld) -> None:
    envelope = load_envelope()
    envelope["manifest"]["contract"] = "chess"
    error = _refused(game, envelope)
    assert (error.code, error.diagnostic.pointer) == ("E-EVENT-CONTRACT", "/manifest/contract")


@pytest.mark.parametrize(
    ("params", "why"),
    [
        ("e_colour I32, threshold I32", "no field colour"),
        ("e_health String, threshold I32", "field health is I32"),
        ("e_health I32, limit I32", "neither a field nor a setting"),
        ("e_health I32, threshold I64", "setting threshold is I32"),
        ("threshold I32, e_health I32", "a setting before an event field"),
    ],
)
def test_filter_parameters_bind_only_to_event_fields_then_settings(
    game: GameWorld, envelope: EnvelopeFactory, params: str, why: str
) -> None:
    body = "    return true;"
    error = _refused(game, envelope(filter_params=params, filter_body=body))
    assert error.code == "E-EVENT-PARAM", why
    diagnostic = error.diagnostic
    assert diagnostic.pointer.startswith("/module/functions/0/parameters/"), why
    assert diagnostic.span is not None and diagnostic.span.line == 3, why  # line:col in the module text


def test_filter_must_return_bool_and_both_entrypoints_must_exist(game: GameWorld) -> None:
    module = make_envelope()["module"].replace(
        "-> Bool {\n    return e_health < threshold;", "-> I32 {\n    return threshold;"
    )
    error = _refused(game, make_envelope(module=module))
    assert error.code == "E-EVENT-ENTRYPOINT"
    assert error.diagnostic.pointer == "/module/functions/0"
    missing = make_envelope()
    missing["entrypoints"]["handle"] = "onEvent"
    error = _refused(game, missing)
    assert (error.code, error.diagnostic.pointer) == ("E-EVENT-ENTRYPOINT", "/entrypoints/handle")
    wrong_kernel = make_envelope()
    wrong_kernel["manifest"]["subscriptions"][0]["kernel"] = "other"
    error = _refused(game, wrong_kernel)
    assert (error.code, error.diagnostic.pointer) == (
        "E-EVENT-ENTRYPOINT",
        "/manifest/subscriptions/0/kernel",
    )


def test_events_setting_default_out_of_range_is_refused(game: GameWorld, envelope: EnvelopeFactory) -> None:
    settings = [{"name": "threshold", "type": "I32", "defaultValue": 5000, "min": 0, "max": 1000}]
    error = _refused(game, envelope(settings=settings))
    assert (error.code, error.diagnostic.pointer) == (
        "E-EVENT-SETTING",
        "/manifest/liveSettings/0/defaultValue",
    )


@pytest.mark.parametrize(
    "setting",
    [
        {"name": "threshold", "type": "Int", "defaultValue": 1},
        {"name": "threshold", "type": "I32", "defaultValue": 1, "min": 5, "max": 2},
        {"name": "threshold", "type": "I32", "defaultValue": 1.5},
        {"name": "threshold", "type": "Bool", "defaultValue": True, "min": 0},
        {"name": "e_threshold", "type": "I32", "defaultValue": 1},
    ],
)
def test_ill_declared_settings_are_refused(
    game: GameWorld, envelope: EnvelopeFactory, setting: dict[str, object]
) -> None:
    error = _refused(game, envelope(settings=[setting]))
    assert error.code == "E-EVENT-SETTING"
    assert error.diagnostic.pointer.startswith("/manifest/liveSettings/0")


def test_envelope_shape_errors_name_the_json_pointer(game: GameWorld) -> None:
    extra = load_envelope()
    extra["manifest"]["mode"] = "Sync"
    error = _refused(game, extra)
    assert (error.code, error.diagnostic.pointer) == ("E-JSON-SCHEMA", "/manifest/mode")
    missing = load_envelope()
    del missing["entrypoints"]
    assert _refused(game, missing).code == "E-JSON-MISSING"
    assert _refused(game, '{"manifest": {}, "manifest": {}}').code == "E-JSON-SCHEMA"
    assert _refused(game, "[" * 200).code in ("E-JSON-LIMIT", "E-JSON-INVALID")


def test_module_diagnostics_point_into_the_envelope(game: GameWorld, envelope: EnvelopeFactory) -> None:
    """Import and validation errors keep their codes; the pointer is prefixed with /module and a
    text-form module keeps its line:col."""
    error = _refused(game, envelope(filter_body="    return e_health < ;"))
    assert error.code == "E-TEXT-SYNTAX"
    assert error.diagnostic.pointer.startswith("/module")
    assert error.diagnostic.span is not None and error.diagnostic.span.line == 4
    error = _refused(game, envelope(filter_body="    return undefined_name;"))
    assert error.diagnostic.pointer.startswith("/module/functions/0")


def test_install_needs_the_message_grant_for_a_sending_handler(game: GameWorld) -> None:
    error = _refused(game, load_envelope(), Policy.builder().with_fuel(100_000).build())
    assert error.code == "E-POLICY-CAP"
    assert error.diagnostic.pointer.startswith("/module")


def test_duplicate_plugin_id_is_refused_for_the_same_owner_only(game: GameWorld) -> None:
    game.hub.install("alice", load_envelope(), player_policy())
    error = _refused(game, load_envelope())
    assert (error.code, error.diagnostic.pointer) == ("E-EVENT-DUPLICATE", "/manifest/pluginId")
    game.hub.install("bob", load_envelope(), player_policy())  # another owner's namespace
    assert sorted(game.hub.installed()) == [("alice", "low-health"), ("bob", "low-health")]


def test_owner_envelope_quota_is_enforced(game: GameWorld) -> None:
    game.hub.set_quota("alice", OwnerQuota(max_envelopes=2))
    for index in range(2):
        game.hub.install("alice", make_envelope(plugin_id=f"p{index}"), player_policy())
    error = _refused(game, make_envelope(plugin_id="p2"))
    assert error.code == "E-EVENT-QUOTA"
    game.hub.uninstall("alice", "p0")
    game.hub.install("alice", make_envelope(plugin_id="p2"), player_policy())


def test_a_policy_whose_fuel_exceeds_the_owner_budget_is_refused(game: GameWorld) -> None:
    game.hub.set_quota("alice", OwnerQuota(fuel_per_second=100_000))
    error = _refused(game, load_envelope(), player_policy(max_fuel=60_000))
    assert error.code == "E-EVENT-QUOTA"
    assert error.diagnostic.evidence == {"maxFuelPerEvent": 120_000, "fuelPerSecond": 100_000}


def test_uninstall_of_an_unknown_plugin_is_not_installed(game: GameWorld) -> None:
    with pytest.raises(DotBoxDError) as caught:
        game.hub.uninstall("alice", "nope")
    assert caught.value.code == "E-EVENT-NOT-INSTALLED"


def test_the_router_must_be_the_hosts_own_binding() -> None:
    router = MessageRouter()
    host = SandboxHost(bindings=[MessageRouter().binding])
    with pytest.raises(ValueError):
        EventHub(host, CONTRACT, router=router)


def test_a_wire_module_with_values_json_cannot_hold_is_refused(game: GameWorld) -> None:
    envelope = load_envelope()
    envelope["module"] = {"id": "x", "weird": {1, 2}}
    assert _refused(game, envelope).code == "E-JSON-TYPE"
    envelope["module"] = {"id": "x", "nan": float("nan")}
    assert _refused(game, envelope).diagnostic.pointer == "/module"


@pytest.mark.parametrize("lease", [0, -1, float("nan"), float("inf")])
def test_a_lease_must_be_positive_and_finite(game: GameWorld, lease: float) -> None:
    with pytest.raises(ValueError):
        game.hub.install("alice", load_envelope(), player_policy(), lease_seconds=lease)
    assert game.hub.installed() == []
