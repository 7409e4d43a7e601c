"""``dotboxd check``: verdicts, effects, capabilities and hashes; golden text; stable JSON; exit codes."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from dotboxd.cli.main import main
from dotboxd.core.bindings import BindingRegistry, load_binding_manifest
from dotboxd.grammar.source import load_module
from dotboxd.validator.api import validate
from dotboxd.validator.policy import Policy

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).with_name("golden")
EXAMPLES = ROOT / "examples"

KERNEL = """module "purge" version "1.0.0";
requires "game.world.monster.write.kill";
entrypoint fn main(ids List<I32>) -> I32 {
    n = 0;
    for i in 0 .. list.count(ids) {
        if helper(list.get(ids, i)) { n = n + 1; }
    }
    return n;
}
fn helper(id I32) -> Bool {
    return game.world.kill(id);
}
"""
MANIFEST = {
    "manifestVersion": 1,
    "bindings": [
        {
            "id": "game.world.kill",
            "parameters": ["I32"],
            "returnType": "Bool",
            "effects": ["Cpu", "HostStateWrite"],
            "requiredCapability": "game.world.monster.write.kill",
            "costModel": {"baseFuel": 10, "maxCallsPerRun": 100},
            "auditLevel": "PerCall",
            "safety": "SideEffectingExternal",
        }
    ],
}


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    kernel = tmp_path / "purge.dbk"
    kernel.write_text(KERNEL, encoding="utf-8")
    manifest = tmp_path / "bindings.json"
    manifest.write_text(json.dumps(MANIFEST), encoding="utf-8")
    granted = tmp_path / "granted.json"
    granted.write_text(json.dumps({"grants": [{"id": "game.world.*"}]}), encoding="utf-8")
    return {"kernel": str(kernel), "manifest": str(manifest), "granted": str(granted), "dir": str(tmp_path)}


def granted_check(files: dict[str, str], *flags: str) -> tuple[str, ...]:
    """The argv of ``dotboxd check`` on the fixture kernel with its manifest and the granting policy."""
    return ("check", files["kernel"], "--policy", files["granted"], "--bindings", files["manifest"], *flags)


def normalise(text: str, directory: str) -> str:
    return re.sub(r"[0-9a-f]{64}", "<sha256>", text.replace(directory + "/", ""))


def test_accepted_output_is_golden_and_hashes_are_the_plans(files: dict[str, str]) -> None:
    code, out, err = run(*granted_check(files, "--no-standard-bindings"))
    assert code == 0
    assert normalise(out, files["dir"]) == (GOLDEN / "check_accepted.txt").read_text(encoding="utf-8")
    assert normalise(err, files["dir"]) == (GOLDEN / "check_accepted_warnings.txt").read_text(
        encoding="utf-8"
    )
    module, _ = load_module(Path(files["kernel"]))
    registry = BindingRegistry(load_binding_manifest(json.dumps(MANIFEST)))
    plan = validate(module, Policy.from_json(Path(files["granted"]).read_text()), registry)
    assert f"plan hash:             {plan.plan_hash}" in out
    assert f"module hash:           {plan.module_hash}" in out


def test_rejected_output_is_golden(files: dict[str, str]) -> None:
    code, out, err = run("check", files["kernel"], "--bindings", files["manifest"], "--no-standard-bindings")
    assert code == 1 and out == ""
    assert normalise(err, files["dir"]) == (GOLDEN / "check_rejected.txt").read_text(encoding="utf-8")


def test_json_output_is_stable(files: dict[str, str]) -> None:
    argv = granted_check(files, "--format", "json")
    first = run(*argv)
    second = run(*argv)
    assert first == second and first[0] == 0
    doc = json.loads(first[1])
    assert list(doc) == [
        "ok",
        "command",
        "file",
        "module",
        "entrypoints",
        "requiredEffects",
        "requiredCapabilities",
        "requestedCapabilities",
        "capabilityPaths",
        "bindings",
        "languageSurface",
        "functions",
        "moduleHash",
        "policyHash",
        "bindingManifestHash",
        "planHash",
        "warnings",
    ]
    assert doc["requiredEffects"] == ["Cpu", "HostStateWrite"]
    assert doc["capabilityPaths"] == {"game.world.monster.write.kill": ["main", "helper", "game.world.kill"]}
    code, out, _ = run("check", files["kernel"], "--bindings", files["manifest"], "--format", "json")
    rejected = json.loads(out)
    assert code == 1 and rejected["ok"] is False and rejected["stage"] == "validate"
    assert [d["code"] for d in rejected["diagnostics"]] == ["E-POLICY-CAP"]
    assert rejected["diagnostics"][0]["category"] == "PolicyDenied"


@pytest.mark.parametrize(
    "example", ["loot-score.json", "loot-score.dbk", "config-reader.json", "game-world.dbk"]
)
def test_examples_print_effects_capabilities_and_hashes(example: str, tmp_path: Path) -> None:
    policy = tmp_path / "p.json"
    root = str(tmp_path.resolve())
    grants: dict[str, object] = {}
    args = ["check", str(EXAMPLES / example), "--format", "json"]
    if example.startswith("config-reader"):
        grants = {
            "grants": [{"id": "file.read", "parameters": {"root": root, "maxBytesPerRun": "262144"}}],
            "allowRuntimeAsync": True,
        }
    if example.startswith("game-world"):
        grants = {"grants": [{"id": "game.world.monster.write.kill"}]}
        manifest = tmp_path / "m.json"
        manifest.write_text(json.dumps(MANIFEST), encoding="utf-8")
        args += ["--bindings", str(manifest)]
    policy.write_text(json.dumps(grants), encoding="utf-8")
    code, out, _ = run(*args, "--policy", str(policy))
    assert code == 0, out
    doc = json.loads(out)
    assert doc["requiredEffects"][0] == "Cpu" and len(doc["planHash"]) == 64 and len(doc["moduleHash"]) == 64
    if example.startswith("config-reader"):
        assert doc["requiredEffects"] == ["Cpu", "Alloc", "FileRead", "Concurrency"]
        assert doc["requiredCapabilities"] == ["dotboxd.runtime.async", "file.read"]


def test_usage_and_io_errors_exit_2(files: dict[str, str]) -> None:
    assert run("check", files["dir"] + "/missing.json")[0] == 2
    assert run("check", files["kernel"], "--policy", files["dir"] + "/nope.json")[0] == 2


def test_bad_policy_and_manifest_files_are_rejections(files: dict[str, str]) -> None:
    bad = Path(files["dir"]) / "bad.json"
    bad.write_text('{"limits": {"maxFuel": -1}}', encoding="utf-8")
    code, _, err = run("check", files["kernel"], "--policy", str(bad))
    assert code == 1 and "E-POLICY-LIMIT" in err
    bad.write_text('[{"id": "x.y", "returnType": "Object"}]', encoding="utf-8")
    code, _, err = run("check", files["kernel"], "--bindings", str(bad))
    assert code == 1 and "E-BINDING-TYPE" in err
