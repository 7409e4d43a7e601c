"""The standard file facades (``file.readText`` / ``file.writeText``): every refusal of spec/semantics.md section 12
through a real host run, plus the facade's own re-checks called directly with a stand-in context."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import cast

import pytest

from dotboxd.core.bindings import standard_bindings
from dotboxd.core.values import SandboxPath
from dotboxd.host import ExecutionResult, Policy, SandboxHost
from dotboxd.runtime.command_batch import apply_commands
from dotboxd.runtime.commands import CommandBuffer, PlannedState, Prepare
from dotboxd.runtime.context import BindingContext
from dotboxd.runtime.errors import BindingError
from dotboxd.runtime.facades import attach_standard_facades
from dotboxd.runtime.facades.files import read_text, write_text

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

READER = """module "reader" version "1.0.0";

entrypoint fn main(p SandboxPath) -> String {
    return file.readText(p);
}
"""

WRITER = """module "writer" version "1.0.0";

entrypoint fn main(p SandboxPath, s String, fail Bool) -> I32 {
    file.writeText(p, s);
    x = 2147483647;
    if fail {
        return x + 1;
    }
    return 1;
}
"""


def _read(
    root: Path, path: str, max_bytes: int = 1024, extensions: list[str] | None = None
) -> ExecutionResult:
    host = SandboxHost(standard_bindings())
    policy = Policy.builder().grant_file_read(str(root), max_bytes, extensions).allow_runtime_async().build()
    return host.execute(host.prepare(READER, policy), "main", [SandboxPath(path)])


def _write(
    root: Path, path: str, text: str, *, fail: bool = False, create: bool = False, overwrite: bool = False
) -> ExecutionResult:
    host = SandboxHost(standard_bindings())
    policy = (
        Policy.builder()
        .grant_file_write(str(root), 64, allow_create=create, allow_overwrite=overwrite)
        .allow_runtime_async()
        .build()
    )
    return host.execute(host.prepare(WRITER, policy), "main", [SandboxPath(path), text, fail])


def _code(result: ExecutionResult) -> tuple[str, str]:
    assert result.error is not None, result
    return result.error.category, result.error.code


# --- the example ------------------------------------------------------------------------------


@pytest.mark.parametrize("source", ["config-reader.json", "config-reader.dbk"])
@pytest.mark.parametrize("backend", ["reference", "optimized"])
def test_config_reader_example_end_to_end(root: Path, source: str, backend: str) -> None:
    settings = '{"volume": 7, "name": "caf\u00e9"}\n'
    (root / "config").mkdir()
    (root / "config" / "settings.json").write_text(settings, encoding="utf-8")
    host = SandboxHost(standard_bindings())
    policy = Policy.builder().grant_file_read(str(root), 262144).allow_runtime_async().build()
    result = host.execute(host.prepare(EXAMPLES / source, policy), "main", [], backend=backend)
    assert result.ok, result.error
    assert result.value == settings
    assert result.usage.file_bytes_read == len(settings.encode("utf-8"))
    reads = [e for e in result.audit_events if e.binding_id == "file.readText"]
    assert [(e.resource_id, e.success, e.bytes) for e in reads] == [
        ("file:config/settings.json", True, len(settings.encode("utf-8")))
    ]
    assert str(root) not in repr(result.audit_events)


def test_without_standard_facades_the_binding_has_no_code(root: Path) -> None:
    (root / "a.txt").write_text("x")
    host = SandboxHost(standard_bindings(), standard_facades=False)
    policy = Policy.builder().grant_file_read(str(root), 10).allow_runtime_async().build()
    result = host.execute(host.prepare(READER, policy), "main", [SandboxPath("a.txt")])
    assert _code(result) == ("BindingFailure", "R-BINDING-FAILED")


def test_a_host_invoker_is_never_replaced() -> None:
    def own(path: object) -> str:
        return "mine"

    catalog = SandboxHost(
        [d if d.id != "file.readText" else replace(d, invoke=own) for d in standard_bindings()]
    ).catalog
    assert catalog["file.readText"].invoke is own
    assert catalog["file.writeText"].invoke is write_text
    plain = SandboxHost(standard_bindings(), standard_facades=False).catalog
    assert attach_standard_facades(plain).manifest_hash == plain.manifest_hash


# --- reads ------------------------------------------------------------------------------------


def test_read_nested_file_and_extension_filter_is_case_insensitive(root: Path) -> None:
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "c.JSON").write_text("{}")
    (root / "a" / "b" / "c.txt").write_text("t")
    assert _read(root, "a/b/c.JSON", extensions=[".json"]).value == "{}"
    assert _code(_read(root, "a/b/c.txt", extensions=[".json"])) == ("PermissionDenied", "R-BINDING-DENIED")
    assert _read(root, "a/b/c.txt").value == "t"


def test_size_at_the_limit_reads_and_one_more_byte_is_refused_before_reading(root: Path) -> None:
    (root / "n.txt").write_bytes(b"x" * 100)
    (root / "n1.txt").write_bytes(b"x" * 101)
    assert _read(root, "n.txt", max_bytes=100).value == "x" * 100
    over = _read(root, "n1.txt", max_bytes=100)
    assert _code(over) == ("QuotaExceeded", "R-BINDING-QUOTA")
    assert over.usage.file_bytes_read == 0


def test_missing_file_and_missing_parent_are_not_found(root: Path) -> None:
    assert _code(_read(root, "nope.txt")) == ("NotFound", "R-BINDING-NOT-FOUND")
    assert _code(_read(root, "no/such/dir.txt")) == ("NotFound", "R-BINDING-NOT-FOUND")


def test_invalid_utf8_and_directories_are_invalid_input(root: Path) -> None:
    (root / "bad.txt").write_bytes(b"ok \xff\xfe")
    (root / "dir").mkdir()
    assert _code(_read(root, "bad.txt"))[0] == "InvalidInput"
    assert _code(_read(root, "dir"))[0] == "InvalidInput"


def test_symlink_inside_root_pointing_outside_is_refused(root: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    (root / "leak.txt").symlink_to(secret)
    result = _read(root, "leak.txt")
    assert _code(result) == ("PermissionDenied", "R-BINDING-DENIED")
    assert result.value is None and "top secret" not in repr(result)
    assert [e.resource_id for e in result.audit_events if e.binding_id] == ["binding:file.readText"]


def test_symlink_inside_root_pointing_inside_is_refused_too(root: Path) -> None:
    (root / "real.txt").write_text("r")
    (root / "alias.txt").symlink_to(root / "real.txt")
    assert _code(_read(root, "alias.txt")) == ("PermissionDenied", "R-BINDING-DENIED")


def test_symlinked_parent_directory_is_refused(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("outside")
    (root / "in").mkdir()
    (root / "in" / "g.txt").write_text("inside")
    (root / "out").symlink_to(outside, target_is_directory=True)
    (root / "loop").symlink_to(root / "in", target_is_directory=True)
    assert _code(_read(root, "out/f.txt")) == ("PermissionDenied", "R-BINDING-DENIED")
    assert _code(_read(root, "loop/g.txt")) == ("PermissionDenied", "R-BINDING-DENIED")


def test_traversal_is_stopped_at_the_entry_before_any_call(root: Path) -> None:
    host = SandboxHost(standard_bindings())
    policy = Policy.builder().grant_file_read(str(root), 10).allow_runtime_async().build()
    plan = host.prepare(READER, policy)
    for bad in ["../x.txt", "/etc/passwd", "a/../../x", "a//b", "a\\b", "C:x"]:
        result = host.execute(plan, "main", [bad], encoding="json")
        assert _code(result)[0] == "InvalidInput", bad
        assert result.usage.host_calls == 0


def test_revoked_grant_stops_the_run(root: Path) -> None:
    (root / "a.txt").write_text("a")
    host = SandboxHost(standard_bindings())
    policy = Policy.builder().grant_file_read(str(root), 10).allow_runtime_async().build()
    plan = host.prepare(READER, policy)
    assert host.execute(plan, "main", [SandboxPath("a.txt")]).ok
    policy.revoke("file.read", "test")
    result = host.execute(plan, "main", [SandboxPath("a.txt")])
    assert not result.ok and result.usage.file_bytes_read == 0


# --- the facade's own checks, with a stand-in context -------------------------------------------


class _Ctx:
    """The part of ``BindingContext`` the facades use, recording what they do."""

    def __init__(self, parameters: Mapping[str, str], run_id: str = "r" * 32) -> None:
        self.grant_parameters = MappingProxyType(dict(parameters))
        self.run_id = run_id
        self.read = 0
        self.written = 0
        self.audits: list[str | None] = []
        self.queue = CommandBuffer()

    def charge_file_read(self, amount: int) -> None:
        self.read += amount

    def charge_file_write(self, amount: int) -> None:
        self.written += amount

    def audit(self, resource_id: str | None = None, **_: object) -> None:
        self.audits.append(resource_id)

    @property
    def planned(self) -> PlannedState:
        return self.queue.planned

    def enqueue(
        self, kind: str, payload: Mapping[str, object] | None = None, apply: None = None, *, prepare: Prepare
    ) -> None:
        self.queue.enqueue(kind, payload, apply, "file.writeText", prepare)


def _ctx(parameters: Mapping[str, str], run_id: str = "r" * 32) -> tuple[_Ctx, BindingContext]:
    fake = _Ctx(parameters, run_id)
    return fake, cast(BindingContext, fake)


@pytest.mark.parametrize("bad", ["../x", "/etc/passwd", "a/./b", "a//b", "", "a\\b", "x\x00y", "a/"])
def test_facade_rechecks_the_path(root: Path, bad: str) -> None:
    _, ctx = _ctx({"root": str(root), "maxBytesPerRun": "10"})
    with pytest.raises(BindingError) as refused:
        read_text(ctx, SandboxPath(bad))
    assert refused.value.category == "InvalidInput"
    with pytest.raises(BindingError):
        read_text(ctx, cast(SandboxPath, bad))


def test_facade_without_a_grant_is_permission_denied() -> None:
    _, ctx = _ctx({})
    for call in (lambda: read_text(ctx, SandboxPath("a.txt")), lambda: write_text(ctx, SandboxPath("a"), "")):
        with pytest.raises(BindingError) as refused:
            call()
        assert refused.value.category == "PermissionDenied"


def test_max_bytes_per_run_counts_every_read_of_the_run(root: Path) -> None:
    (root / "a.txt").write_bytes(b"a" * 6)
    fake, ctx = _ctx({"root": str(root), "maxBytesPerRun": "10"}, run_id="1" * 32)
    assert read_text(ctx, SandboxPath("a.txt")) == "a" * 6
    with pytest.raises(BindingError) as refused:
        read_text(ctx, SandboxPath("a.txt"))
    assert refused.value.category == "QuotaExceeded" and fake.read == 6
    other, ctx2 = _ctx({"root": str(root), "maxBytesPerRun": "10"}, run_id="2" * 32)
    assert read_text(ctx2, SandboxPath("a.txt")) == "a" * 6 and other.audits == ["file:a.txt"]


# --- writes -----------------------------------------------------------------------------------


def test_write_is_denied_by_default(root: Path) -> None:
    result = _write(root, "new.txt", "hello")
    assert _code(result) == ("PermissionDenied", "R-BINDING-DENIED")
    assert not (root / "new.txt").exists() and os.listdir(root) == []


def test_write_is_applied_only_when_the_run_succeeds(root: Path) -> None:
    (root / "out").mkdir()
    failed = _write(root, "out/new.txt", "hello", fail=True, create=True)
    assert _code(failed)[1] == "R-ARITH-OVERFLOW"
    assert failed.commands_applied == 0 and os.listdir(root / "out") == []
    done = _write(root, "out/new.txt", "h\u00e9llo", create=True)
    assert done.ok and done.commands_applied == 1
    assert (root / "out" / "new.txt").read_text(encoding="utf-8") == "h\u00e9llo"
    assert done.usage.file_bytes_written == len("h\u00e9llo".encode())
    assert os.listdir(root / "out") == ["new.txt"]  # no temporary file left behind
    assert [e.resource_id for e in done.audit_events if e.binding_id == "file.writeText"] == [
        "file:out/new.txt"
    ]


def test_overwrite_needs_allow_overwrite(root: Path) -> None:
    (root / "f.txt").write_text("old")
    denied = _write(root, "f.txt", "new", create=True)
    assert _code(denied) == ("PermissionDenied", "R-BINDING-DENIED")
    assert (root / "f.txt").read_text() == "old"
    done = _write(root, "f.txt", "new", overwrite=True)
    assert done.ok and (root / "f.txt").read_text() == "new"


def test_write_never_follows_symlinks(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "t.txt").write_text("keep")
    (root / "link.txt").symlink_to(outside / "t.txt")
    (root / "dir").symlink_to(outside, target_is_directory=True)
    for path in ("link.txt", "dir/t.txt", "dir/new.txt"):
        result = _write(root, path, "pwned", create=True, overwrite=True)
        assert _code(result) == ("PermissionDenied", "R-BINDING-DENIED"), path
    assert (outside / "t.txt").read_text() == "keep" and sorted(os.listdir(outside)) == ["t.txt"]


def test_write_size_limit_and_a_link_planted_before_apply(root: Path) -> None:
    big = _write(root, "big.txt", "x" * 65, create=True)
    assert _code(big)[0] == "QuotaExceeded" and not (root / "big.txt").exists()
    fake, ctx = _ctx({"root": str(root), "maxBytesPerRun": "64", "allowCreate": "true"})
    (root / "sub").mkdir()
    write_text(ctx, SandboxPath("sub/late.txt"), "data")
    (root / "sub").rmdir()
    (root / "elsewhere").mkdir()
    (root / "sub").symlink_to(root / "elsewhere", target_is_directory=True)
    report = apply_commands(fake.queue.close())
    assert report.phase == "prepare" and report.applied == ()
    assert os.listdir(root / "elsewhere") == []
