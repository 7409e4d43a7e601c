"""server.toml: strict checking with pointers, tokens kept only as hashes, `dotboxd serve` exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from dotboxd.cli.main import main
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.server import load_config, parse_config, token_hash
from tests.server.helpers import ALICE, BOB, config_text

ENV = {"T_ALICE": ALICE, "T_BOB": BOB}


def _refusal(text: str, env: dict[str, str] | None = None) -> DotBoxDError:
    with pytest.raises(DotBoxDError) as caught:
        parse_config(text, Path("."), ENV if env is None else env)
    assert caught.value.code == "E-SERVER-CONFIG"
    return caught.value


def test_a_good_config_loads_with_limits_tenants_and_policies() -> None:
    config = parse_config(config_text(max_installed_kernels=3, runs_per_second=7.5), Path("."), ENV)
    assert config.limits.max_installed_kernels == 3
    assert [t.name for t in config.tenants] == ["alice", "bob"]
    alice, bob = config.tenants
    assert alice.runs_per_second == 7.5 and alice.max_installed_kernels == 3
    assert alice.policy.is_granted("game.world.monster.read.health")
    assert not bob.policy.is_granted("game.world.monster.read.health")


def test_config_keeps_only_token_hashes_never_the_token() -> None:
    config = parse_config(config_text(), Path("."), ENV)
    alice = config.tenants[0]
    assert alice.token_sha256 == token_hash(ALICE)
    assert ALICE not in repr(config) and ALICE not in repr(alice)


def test_unknown_key_is_refused_with_its_pointer() -> None:
    error = _refusal(config_text(max_bodybytes=10))
    assert error.diagnostic.pointer == "/limits/max_bodybytes"


def test_toml_syntax_error_has_line_and_column() -> None:
    error = _refusal("[server]\nport = \n")
    assert error.diagnostic.span is not None and error.diagnostic.span.line == 2


def test_missing_token_variable_is_named_but_no_value_shown() -> None:
    error = _refusal(config_text(), {"T_ALICE": ALICE})
    assert error.diagnostic.pointer == "/tenants/bob/token_env"
    assert "T_BOB" in error.diagnostic.message


def test_two_tenants_with_one_token_are_refused() -> None:
    _refusal(config_text(), {"T_ALICE": ALICE, "T_BOB": ALICE})


def test_out_of_range_limit_and_bad_policy_are_refused_with_pointers() -> None:
    assert _refusal(config_text(ws_queue_size=0)).diagnostic.pointer == "/limits/ws_queue_size"
    assert (
        _refusal(config_text(send_timeout_seconds=0.0)).diagnostic.pointer == "/limits/send_timeout_seconds"
    )
    bad_policy = config_text().replace(
        'grants = [{ id = "game.world.monster.read.health" }], ', "bogus = 1, "
    )
    assert _refusal(bad_policy).diagnostic.pointer.startswith("/tenants/alice/policy")


def test_serve_with_a_bad_config_exits_2_before_listening(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "server.toml"
    path.write_text("[server]\nport = 'x'\n[tenants.a]\ntoken_sha256 = '" + "0" * 64 + "'\n", "utf-8")
    assert main(["serve", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "E-SERVER-CONFIG" in err and "/server/port" in err
    assert main(["serve", "--config", str(tmp_path / "missing.toml")]) == 2


def test_policy_file_is_relative_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "p.json").write_text('{"grants": [], "limits": {"maxFuel": 500}}', "utf-8")
    (tmp_path / "server.toml").write_text(
        f"[tenants.a]\ntoken_sha256 = '{token_hash('x')}'\npolicy_file = 'p.json'\n", "utf-8"
    )
    config = load_config(tmp_path / "server.toml")
    assert config.tenants[0].policy.limits.max_fuel == 500
