"""Policy values: builder, every limit default, the JSON form, grants, expiry, revocation, hashing."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.core.effects import PURE, Effect
from dotboxd.validator.policy import (
    LIMIT_FIELDS,
    CapabilityGrant,
    Limits,
    Policy,
    Revocations,
    builtin_grant_problem,
    capability_matches,
    limit_json_name,
)

DOTBOXD_DEFAULTS = {
    "max_fuel": 100_000,
    "max_loop_iterations": 100_000,
    "max_wall_time_ms": 100,
    "max_allocated_bytes": 1_048_576,
    "max_call_depth": 64,
    "max_host_calls": 100,
    "max_list_length": 10_000,
    "max_map_entries": 10_000,
    "max_collection_depth": 32,
    "max_total_collection_elements": 100_000,
    "max_file_bytes_read": 1_048_576,
    "max_file_bytes_written": 0,
    "max_network_bytes_read": 1_048_576,
    "max_network_bytes_written": 1_048_576,
    "max_log_events": 100,
    "max_log_message_length": 4_096,
    "max_string_length": 65_536,
    "max_total_string_bytes": 1_048_576,
    "max_commands": 1_000,
}


def error_code(fn: object) -> str:
    with pytest.raises(DotBoxDError) as info:
        fn()  # type: ignore[operator]
    return info.value.code


def test_every_dotboxd_limit_has_its_default() -> None:
    assert set(LIMIT_FIELDS) == set(DOTBOXD_DEFAULTS)
    assert dataclasses.asdict(Limits()) == DOTBOXD_DEFAULTS


def test_default_policy_is_pure_only() -> None:
    p = Policy.default()
    assert p.allowed_effects == PURE and not p.grants and not p.deterministic
    assert p.limits == Limits()


@pytest.mark.parametrize(
    ("method", "field"),
    [
        ("with_fuel", "max_fuel"),
        ("with_max_loop_iterations", "max_loop_iterations"),
        ("with_max_wall_time_ms", "max_wall_time_ms"),
        ("with_max_allocated_bytes", "max_allocated_bytes"),
        ("with_max_call_depth", "max_call_depth"),
        ("with_max_host_calls", "max_host_calls"),
        ("with_max_list_length", "max_list_length"),
        ("with_max_map_entries", "max_map_entries"),
        ("with_max_collection_depth", "max_collection_depth"),
        ("with_max_total_collection_elements", "max_total_collection_elements"),
        ("with_max_log_events", "max_log_events"),
        ("with_max_log_message_length", "max_log_message_length"),
        ("with_max_string_length", "max_string_length"),
        ("with_max_total_string_bytes", "max_total_string_bytes"),
        ("with_max_commands", "max_commands"),
    ],
)
def test_builder_with_methods(method: str, field: str) -> None:
    p = getattr(Policy.builder(), method)(7).build()
    assert getattr(p.limits, field) == 7
    assert p.to_json()["limits"][limit_json_name(field)] == 7


@pytest.mark.parametrize("value", [-1, 1.5, True, 2**63])
def test_limits_must_be_non_negative_integers(value: object) -> None:
    assert error_code(lambda: Policy.builder().with_fuel(value).build()) == "E-POLICY-LIMIT"  # type: ignore[arg-type]


def test_wall_time_is_bounded_by_int32() -> None:
    assert Policy.builder().with_max_wall_time_ms(2**31 - 1).build().limits.max_wall_time_ms == 2**31 - 1
    assert error_code(lambda: Policy.builder().with_max_wall_time_ms(2**31).build()) == "E-POLICY-LIMIT"


def test_grant_helpers_add_effects_and_limits(tmp_path: Path) -> None:
    root = str(tmp_path.resolve())
    p = (
        Policy.builder()
        .grant_file_read(root, 4096, [".txt"])
        .grant_file_write(root, 100, allow_create=True)
        .grant_time_now()
        .grant_random()
        .grant_logging()
        .allow_runtime_async()
        .allow_runtime_async()
        .build()
    )
    assert (
        p.allowed_effects
        == PURE
        | Effect.FILE_READ
        | Effect.FILE_WRITE
        | Effect.AUDIT
        | Effect.TIME
        | Effect.RANDOM
        | Effect.CONCURRENCY
    )
    assert [g.id for g in p.grants] == [
        "file.read",
        "file.write",
        "time.now",
        "random",
        "log.write",
        "dotboxd.runtime.async",
    ]
    assert p.limits.max_file_bytes_read == 4096 and p.limits.max_file_bytes_written == 100
    assert p.grant_for("file.write").parameters == {  # type: ignore[union-attr]
        "root": root,
        "maxBytesPerRun": "100",
        "allowCreate": "true",
        "allowOverwrite": "false",
    }


def test_http_helper_implies_async() -> None:
    p = Policy.builder().grant_http_get(["api.example.com"], 2048).build()
    assert p.is_granted("net.http.get") and p.is_granted("dotboxd.runtime.async")
    assert p.limits.max_network_bytes_read == 2048


def test_reentrancy_is_never_grantable() -> None:
    assert error_code(lambda: Policy.builder().allow_intra_kernel_reentrancy()) == "E-POLICY-GRANT"
    assert error_code(lambda: Policy.builder().grant("dotboxd.runtime.reentrant")) == "E-POLICY-GRANT"
    assert (
        error_code(lambda: Policy.from_json({"grants": [{"id": "dotboxd.runtime.reentrant"}]}))
        == "E-POLICY-GRANT"
    )


@pytest.mark.parametrize(
    ("pattern", "capability", "matches"),
    [
        ("*", "anything.at.all", True),
        ("a.b.*", "a.b.c", True),
        ("a.b.*", "a.b.c.d", True),
        ("a.b.*", "a.b", False),
        ("a.b.*", "a.bc", False),
        ("a.b", "a.b", True),
        ("a.b", "a.b.c", False),
    ],
)
def test_capability_matching(pattern: str, capability: str, matches: bool) -> None:
    assert capability_matches(pattern, capability) is matches


def test_exact_grant_wins_over_pattern_and_warnings_flag_wildcards() -> None:
    p = Policy.builder().grant("game.*").grant("game.world.kill", tenant="a").build()
    g = p.grant_for("game.world.kill")
    assert g is not None and g.id == "game.world.kill"
    assert [w.code for w in p.warnings()] == ["W-POLICY-WILDCARD"]


def test_expiry() -> None:
    p = Policy.builder().grant("game.world.kill", expires_at_unix_ms=1_000).build()
    assert p.is_granted("game.world.kill", now_unix_ms=999)
    assert not p.is_granted("game.world.kill", now_unix_ms=1_000)
    assert not p.is_granted("game.world.kill")  # the wall clock is long past 1970


def test_revocation_is_live_and_shared() -> None:
    shared = Revocations()
    a = Policy.builder().grant("game.world.kill").with_revocations(shared).build()
    b = Policy.builder().grant("game.*").with_revocations(shared).build()
    assert a.is_granted("game.world.kill") and b.is_granted("game.world.kill")
    a.revoke("game.world.kill", "incident 42")
    assert not a.is_granted("game.world.kill") and not b.is_granted("game.world.kill")
    assert b.is_granted("game.world.heal")
    assert a.is_revoked("game.world.kill")
    b.revoke("game.*")
    assert not b.is_granted("game.world.heal")


def test_policy_hash_is_stable_and_sensitive() -> None:
    base = Policy.builder().with_fuel(10).grant("x.y").declare_opaque_id_type("PlayerId")
    h = base.build().policy_hash
    assert (
        h
        == Policy.builder().declare_opaque_id_type("PlayerId").grant("x.y").with_fuel(10).build().policy_hash
    )
    variants = [
        Policy.builder().with_fuel(11).grant("x.y").declare_opaque_id_type("PlayerId"),
        Policy.builder().with_fuel(10).grant("x.z").declare_opaque_id_type("PlayerId"),
        Policy.builder().with_fuel(10).grant("x.y", a="1").declare_opaque_id_type("PlayerId"),
        Policy.builder().with_fuel(10).grant("x.y").declare_opaque_id_type("ItemId"),
        Policy.builder().with_fuel(10).grant("x.y").declare_opaque_id_type("PlayerId").deterministic(0, 1),
        Policy.builder().with_fuel(10).grant("x.y", expires_at_unix_ms=5).declare_opaque_id_type("PlayerId"),
    ]
    assert all(v.build().policy_hash != h for v in variants)


def test_json_round_trip(tmp_path: Path) -> None:
    root = str(tmp_path.resolve())
    p = (
        Policy.builder()
        .with_policy_id("quests")
        .with_fuel(500)
        .grant_file_read(root, 64)
        .grant("game.world.kill", expires_at_unix_ms=99, reason="quest")
        .allow_runtime_async()
        .deterministic(10, 7)
        .declare_opaque_id_type("PlayerId")
        .with_input_bounds("main", count=(0, 10))
        .require_static_bound()
        .build()
    )
    again = Policy.from_json(json.dumps(p.to_json()))
    assert again.to_json() == p.to_json()
    assert again.policy_hash == p.policy_hash


def test_json_explicit_effects_and_variables(tmp_path: Path) -> None:
    p = Policy.from_json(
        {
            "allowedEffects": ["Cpu"],
            "grants": [{"id": "file.read", "parameters": {"root": "$ROOT/data", "maxBytesPerRun": "7"}}],
        },
        {"$ROOT": "/srv"},
    )
    assert p.effects_explicit and p.allowed_effects == Effect.CPU
    assert p.grants[0].parameters["root"] == "/srv/data"
    assert p.limits.max_file_bytes_read == 7


@pytest.mark.parametrize(
    ("doc", "code"),
    [
        ("[]", "E-POLICY-SCHEMA"),
        ("{", "E-POLICY-SCHEMA"),
        ('{"limits": {"maxFuel": 1}, "limits": {}}', "E-POLICY-SCHEMA"),
        ('{"colour": 1}', "E-POLICY-SCHEMA"),
        ('{"limits": {"maxCoffee": 1}}', "E-POLICY-SCHEMA"),
        ('{"limits": {"maxFuel": "10"}}', "E-POLICY-SCHEMA"),
        ('{"limits": {"maxFuel": -3}}', "E-POLICY-LIMIT"),
        ('{"grants": [{"parameters": {}}]}', "E-POLICY-SCHEMA"),
        ('{"grants": [{"id": "a.b", "scope": 1}]}', "E-POLICY-SCHEMA"),
        ('{"grants": [{"id": "a..b"}]}', "E-POLICY-GRANT"),
        ('{"allowedEffects": ["Cpu", "Teleport"]}', "E-POLICY-EFFECT"),
        ('{"deterministic": {"seed": 1}}', "E-POLICY-SCHEMA"),
        ('{"declaredOpaqueIdTypes": ["lower"]}', "E-POLICY-BRAND"),
        ('{"inputBounds": {"main": {"n": [5, 1]}}}', "E-POLICY-SCHEMA"),
        ('{"requireStaticBound": "yes"}', "E-POLICY-SCHEMA"),
        ('{"limits": {"maxFuel": NaN}}', "E-POLICY-SCHEMA"),
    ],
)
def test_json_errors(doc: str, code: str) -> None:
    assert error_code(lambda: Policy.from_json(doc)) == code


def test_builtin_grant_parameter_rules(tmp_path: Path) -> None:
    root = str(tmp_path.resolve())
    ok = {"root": root, "maxBytesPerRun": "10"}
    assert builtin_grant_problem("file.read", ok) is None
    assert builtin_grant_problem("file.read", {**ok, "allowedExtensions": ".txt, .json"}) is None
    assert builtin_grant_problem("file.read", {**ok, "allowCreate": "true"}) is not None  # write-only option
    assert (
        builtin_grant_problem("file.write", {**ok, "allowCreate": "true", "allowOverwrite": "false"}) is None
    )
    assert builtin_grant_problem("file.write", {**ok, "allowCreate": "yes"}) is not None
    assert builtin_grant_problem("file.read", {**ok, "root": root + "/"}) is not None
    assert builtin_grant_problem("file.read", {**ok, "root": str(tmp_path / "missing")}) is not None
    assert builtin_grant_problem("file.read", {**ok, "maxBytesPerRun": "-1"}) is not None
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    assert builtin_grant_problem("file.read", {**ok, "root": str(link)}) is not None
    assert builtin_grant_problem("time.now", {}) is None
    assert builtin_grant_problem("event.read.damage", {"x": "1"}) is not None
    http = {"allowedHosts": "api.example.com,cdn.example.com:8443", "maxResponseBytes": "10"}
    assert builtin_grant_problem("net.http.get", http) is None
    assert builtin_grant_problem("net.http.get", {**http, "allowedSchemes": "ftp"}) is not None
    assert builtin_grant_problem("net.http.get", {**http, "timeoutMs": "0"}) is not None
    assert builtin_grant_problem("net.http.get", {"allowedHosts": "a.b"}) is not None
    assert builtin_grant_problem("game.custom", {"anything": "1"}) is None  # custom: the binding validates


def test_grant_objects_are_immutable_values() -> None:
    g = CapabilityGrant("a.b")
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.id = "c.d"  # type: ignore[misc]
    assert g.is_active(10**15)
