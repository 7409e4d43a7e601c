"""The artifact cache: LRU, on-disk artifacts with manifest checks, quarantine, revocation."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.host import SandboxHost
from dotboxd.runtime.optimized import ArtifactCache, GenOptions, OptimizedBackend, compile_plan
from dotboxd.runtime.optimized.artifact import ArtifactKey
from dotboxd.runtime.optimized.cache import Report
from dotboxd.runtime.optimized.codegen import generate
from dotboxd.runtime.optimized.errors import VerifierFailure
from dotboxd.validator.plan import ExecutionPlan
from dotboxd.validator.policy import Policy

from .kernels import FEATURES, double, poke, policy, prepare

SIMPLE = 'module "s{n}" version "1.0.0";\nentrypoint fn main(x I32) -> I32 {{ return x + {n}; }}\n'


def _plan(n: int) -> ExecutionPlan:
    return prepare(SIMPLE.format(n=n))


def _events(report_log: list[tuple[str, str, dict[str, object]]]) -> list[str]:
    return [kind for kind, _, _ in report_log]


def _recorder() -> tuple[list[tuple[str, str, dict[str, object]]], Report]:
    log: list[tuple[str, str, dict[str, object]]] = []

    def report(kind: str, message: str, fields: dict[str, object]) -> None:
        log.append((kind, message, fields))

    return log, report


def test_hits_reuse_the_same_artifact() -> None:
    cache = ArtifactCache(capacity=4)
    plan = prepare(FEATURES)
    first = cache.get_or_compile(plan)
    second = cache.get_or_compile(plan)
    assert first is second
    assert cache.stats.compiles == 1 and cache.stats.hits == 1


def test_lru_evicts_the_least_recently_used() -> None:
    cache = ArtifactCache(capacity=2)
    plans = [_plan(n) for n in range(3)]
    for plan in plans[:2]:
        cache.get_or_compile(plan)
    cache.get_or_compile(plans[0])  # touch 0: 1 is now the oldest
    cache.get_or_compile(plans[2])
    assert cache.peek(plans[0]) is not None
    assert cache.peek(plans[1]) is None
    assert cache.peek(plans[2]) is not None
    assert cache.stats.evicted == 1 and len(cache) == 2


def test_key_covers_module_plan_policy_manifest_and_versions() -> None:
    plan = prepare(FEATURES)
    other_policy = prepare(FEATURES, policy(max_fuel=12345))
    base = ArtifactKey.for_plan(plan, GenOptions())
    assert base.digest() != ArtifactKey.for_plan(other_policy, GenOptions()).digest()
    assert base.digest() != ArtifactKey.for_plan(plan, GenOptions(inline=False)).digest()
    fields = base.to_json()
    assert set(fields) == {
        "moduleHash",
        "planHash",
        "policyHash",
        "bindingManifestHash",
        "compiler",
        "verifier",
        "options",
    }
    bumped = ArtifactKey(**{**_snake(fields), "compiler": "dotboxd-py-opt-codegen-999"})
    assert bumped.digest() != base.digest()


def _snake(fields: dict[str, str]) -> dict[str, str]:
    names = {
        "moduleHash": "module_hash",
        "planHash": "plan_hash",
        "policyHash": "policy_hash",
        "bindingManifestHash": "binding_manifest_hash",
    }
    return {names.get(k, k): v for k, v in fields.items()}


def test_disk_round_trip_reverifies_and_runs(tmp_path: Path) -> None:
    plan = prepare(FEATURES)
    writer = ArtifactCache(directory=tmp_path)
    writer.get_or_compile(plan)
    files = list(tmp_path.glob("*.json"))
    assert len(files) == 1
    assert not list(tmp_path.glob(".tmp-*")), "atomic write left a temporary file"
    reader = ArtifactCache(directory=tmp_path)
    loaded = reader.get_or_compile(plan)
    assert reader.stats.disk_hits == 1 and reader.stats.compiles == 0
    host = SandboxHost(bindings=[double], backends={"optimized": OptimizedBackend(cache=reader)})
    result = host.execute(plan, "main", [30, ["a", "bc"]], backend="optimized")
    reference = host.execute(plan, "main", [30, ["a", "bc"]])
    assert result.ok and result.value == reference.value and result.usage == reference.usage
    assert loaded.source() == writer.get_or_compile(plan).source()


def test_user_text_never_appears_in_the_cached_source(tmp_path: Path) -> None:
    secret = "zq-very-distinctive-text"
    text = f'module "t" version "1.0.0";\nentrypoint fn main() -> I32 {{ s = "{secret}"; return string.length(s); }}\n'
    cache = ArtifactCache(directory=tmp_path)
    cache.get_or_compile(prepare(text))
    document = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert secret not in document["payload"]["source"]
    assert secret in json.dumps(document["payload"]["tables"])


def _tamper(
    tmp_path: Path, edit: Callable[[dict[str, Any]], None]
) -> tuple[ArtifactCache, list[tuple[str, str, dict[str, object]]], ExecutionPlan]:
    plan = prepare(FEATURES)
    ArtifactCache(directory=tmp_path).get_or_compile(plan)
    path = next(tmp_path.glob("*.json"))
    document = json.loads(path.read_text())
    edit(document)
    path.write_text(json.dumps(document))
    cache = ArtifactCache(directory=tmp_path)
    log, report = _recorder()
    cache.get_or_compile(plan, report=report)
    return cache, log, plan


def _inject_source(document: dict[str, object]) -> None:
    payload = document["payload"]
    assert isinstance(payload, dict)
    payload["source"] = "import os\n" + str(payload["source"])


def _inject_source_and_rehash(document: dict[str, object]) -> None:
    import hashlib

    _inject_source(document)
    payload_text = json.dumps(document["payload"], sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    manifest = document["manifest"]
    assert isinstance(manifest, dict)
    manifest["payloadSha256"] = hashlib.sha256(payload_text.encode()).hexdigest()


def _swap_key(document: dict[str, object]) -> None:
    manifest = document["manifest"]
    assert isinstance(manifest, dict)
    key = manifest["key"]
    assert isinstance(key, dict)
    key["policyHash"] = "0" * 64


@pytest.mark.parametrize(
    "edit",
    [_inject_source, _inject_source_and_rehash, _swap_key, lambda d: d.update(format="other")],
    ids=["payload changed", "payload changed and rehashed", "manifest key swapped", "unknown format"],
)
def test_tampered_disk_artifact_is_quarantined_and_recompiled(
    tmp_path: Path, edit: Callable[[dict[str, Any]], None]
) -> None:
    cache, log, _ = _tamper(tmp_path, edit)
    assert _events(log) == ["CacheInvalidated"]
    assert cache.stats.invalidated == 1 and cache.stats.compiles == 1
    quarantined = list((tmp_path / "quarantine").glob("*.json"))
    assert len(quarantined) == 1
    fresh = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert "import os" not in fresh["payload"]["source"]


def test_unreadable_disk_artifact_is_quarantined(tmp_path: Path) -> None:
    plan = prepare(FEATURES)
    ArtifactCache(directory=tmp_path).get_or_compile(plan)
    path = next(tmp_path.glob("*.json"))
    path.write_bytes(b"\xff\xfe not json")
    cache = ArtifactCache(directory=tmp_path)
    log, report = _recorder()
    cache.get_or_compile(plan, report=report)
    assert _events(log) == ["CacheInvalidated"]


def test_cache_file_replaced_by_a_deep_document_is_quarantined_not_a_crash(tmp_path: Path) -> None:
    plan = prepare(FEATURES)
    ArtifactCache(directory=tmp_path).get_or_compile(plan)
    path = next(tmp_path.glob("*.json"))
    path.write_bytes(b"[" * 100_000)
    cache = ArtifactCache(directory=tmp_path)
    log, report = _recorder()
    assert cache.get_or_compile(plan, report=report) is not None
    assert _events(log) == ["CacheInvalidated"] and cache.stats.compiles == 1


def test_revocation_makes_cached_artifacts_unusable(tmp_path: Path) -> None:
    text = 'module "p" version "1.0.0";\nentrypoint fn main(x I32) -> I32 { return test.world.poke(x); }\n'
    pol = Policy.builder().grant("test.world.write").with_max_wall_time_ms(60_000).build()
    host = SandboxHost(bindings=[poke])
    plan = host.prepare(text, pol)
    cache = ArtifactCache(directory=tmp_path)
    cache.get_or_compile(plan)
    assert cache.peek(plan) is not None and list(tmp_path.glob("*.json"))
    pol.revoke("test.world.write")
    log, report = _recorder()
    with pytest.raises(DotBoxDError) as refused:
        cache.get_or_compile(plan, report=report)
    assert refused.value.code == "E-POLICY-REVOKED"
    assert cache.peek(plan) is None and not list(tmp_path.glob("*.json"))
    assert _events(log) == ["CacheInvalidated"]
    backend = OptimizedBackend(cache=cache)
    result = SandboxHost(bindings=[poke], backends={"optimized": backend}).execute(
        plan, "main", [1], backend="optimized"
    )
    assert not result.ok and result.error is not None and result.error.code == "E-POLICY-REVOKED"


def test_verifier_failure_quarantines_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dotboxd.runtime.optimized import artifact

    def refuse(*args: object, **kwargs: object) -> None:
        raise VerifierFailure("tampered for the test")

    monkeypatch.setattr(artifact, "verify_module", refuse)
    cache = ArtifactCache(directory=tmp_path)
    plan = prepare(FEATURES)
    log, report = _recorder()
    with pytest.raises(VerifierFailure):
        cache.get_or_compile(plan, report=report)
    assert cache.is_quarantined(plan)
    assert list((tmp_path / "quarantine").glob("*.rejected.py"))
    monkeypatch.undo()
    with pytest.raises(VerifierFailure, match="quarantined"):
        cache.get_or_compile(plan)  # never compiled (or run) again here
    assert cache.stats.compiles == 1 and _events(log) == ["VerifierFailure"]


def _lower_a_fuel_charge(document: dict[str, Any]) -> None:
    """A tampering the verifier cannot see: a segment charges less than the cost table says."""
    payload = document["payload"]
    source = str(payload["source"])
    marker = "f -= 5\n"
    assert marker in source
    payload["source"] = source.replace(marker, "f -= 1\n", 1)
    _inject_rehash(document)


def _inject_rehash(document: dict[str, Any]) -> None:
    import hashlib

    payload_text = json.dumps(document["payload"], sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    document["manifest"]["payloadSha256"] = hashlib.sha256(payload_text.encode()).hexdigest()


def test_a_secret_authenticates_disk_artifacts(tmp_path: Path) -> None:
    secret = b"host-secret-0123456789"
    plan = prepare(FEATURES)
    ArtifactCache(directory=tmp_path, secret=secret).get_or_compile(plan)
    path = next(tmp_path.glob("*.json"))
    document = json.loads(path.read_text())
    assert "payloadHmac" in document["manifest"]
    _lower_a_fuel_charge(document)
    path.write_text(json.dumps(document))
    cache = ArtifactCache(directory=tmp_path, secret=secret)
    log, report = _recorder()
    artifact = cache.get_or_compile(plan, report=report)
    assert _events(log) == ["CacheInvalidated"] and cache.stats.compiles == 1
    assert "f -= 5" in artifact.source()


def test_an_artifact_written_without_the_secret_is_refused(tmp_path: Path) -> None:
    plan = prepare(FEATURES)
    ArtifactCache(directory=tmp_path).get_or_compile(plan)
    cache = ArtifactCache(directory=tmp_path, secret=b"host-secret-0123456789")
    log, report = _recorder()
    cache.get_or_compile(plan, report=report)
    assert _events(log) == ["CacheInvalidated"]


def test_a_short_secret_is_refused() -> None:
    with pytest.raises(ValueError):
        ArtifactCache(secret=b"short")


def test_only_an_artifact_built_to_keep_its_module_has_source(tmp_path: Path) -> None:
    """The AST is dropped after compilation unless asked for; a disk cache asks (it writes the
    source), a memory-only cache does not."""
    plan = prepare(FEATURES)
    bare = compile_plan(plan)
    assert bare.module is None
    with pytest.raises(ValueError, match="keep_module"):
        bare.source()
    kept = compile_plan(plan, keep_module=True)
    assert kept.module is not None
    assert kept.source() == ast.unparse(generate(plan).module)
    assert ArtifactCache().get_or_compile(plan).module is None
    on_disk = ArtifactCache(directory=tmp_path).get_or_compile(plan)
    assert on_disk.source() == kept.source()


def test_an_artifact_loaded_from_disk_locates_run_errors_like_the_reference(tmp_path: Path) -> None:
    source = (
        'module "loc" version "1.0.0";\n'
        "entrypoint fn main(xs List<I32>, n I32) -> I32 {\n"
        "    total = 0;\n"
        "    for i in 0 .. n { total = total + list.get(xs, i) / (2 - i); }\n"
        "    return total;\n"
        "}\n"
    )
    plan = prepare(source)
    ArtifactCache(directory=tmp_path).get_or_compile(plan)
    reader = ArtifactCache(directory=tmp_path)
    host = SandboxHost(backends={"optimized": OptimizedBackend(cache=reader)})
    for args in ([[1, 2], 3], [[1, 2, 3], 3]):  # an index out of range, then a division by zero
        loaded = host.execute(plan, "main", args, backend="optimized").error
        reference = host.execute(plan, "main", args).error
        assert reader.stats.disk_hits == 1 and reader.stats.compiles == 0
        assert loaded is not None and reference is not None and loaded.pointer
        assert (loaded.code, loaded.pointer, loaded.span) == (
            reference.code,
            reference.pointer,
            reference.span,
        )


NEGATIVE_BOUNDS = """module "neg" version "1.0.0";
entrypoint fn main(x I32) -> I32 {
    k = x;
    c = 0;
    while k < -770 { k = k + 1; c = c + 1; }
    for i in -900 .. -870 { c = c + i % 3; }
    return c - 5;
}"""


def test_an_artifact_with_negative_constant_bounds_survives_the_disk_round_trip(tmp_path: Path) -> None:
    """``ast.unparse`` writes the constant -770 as ``-770``, which parses back as a minus applied to
    770; the cache folds it back, so the stored artifact verifies and is reused, not quarantined."""
    plan = prepare(NEGATIVE_BOUNDS)
    source = ast.unparse(ArtifactCache(directory=tmp_path).get_or_compile(plan).module)
    assert "-770" in source
    reloaded = ArtifactCache(directory=tmp_path)
    artifact = reloaded.get_or_compile(plan)
    assert reloaded.stats.disk_hits == 1
    assert reloaded.stats.quarantined == 0 and reloaded.stats.compiles == 0
    assert not (tmp_path / "quarantine").exists() or not list((tmp_path / "quarantine").iterdir())
    host = SandboxHost(backends={"optimized": OptimizedBackend(cache=reloaded)})
    for x in (-800, -770, 0):
        want = host.execute(plan, "main", [x], backend="reference")
        got = host.execute(plan, "main", [x], backend="optimized")
        assert (got.value, got.usage) == (want.value, want.usage)
    assert artifact is reloaded.get_or_compile(plan)
