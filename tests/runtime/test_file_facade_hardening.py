"""File-facade defences that the mutation run (``reports/mutation.md``) showed no test pinned.

Each test drives ``file.readText`` / ``file.writeText`` directly with the stand-in context of
``test_file_facades.py`` and checks one defence whose removal the rest of the suite did not notice:
a parent swapped for a symlink between its check and its open, a read that must never create
directories, exact size boundaries, safe error categories without host paths, grant parameters that
are missing, and the permissions and placement of what a write creates.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from dotboxd.core.values import SandboxPath
from dotboxd.runtime.command_batch import apply_commands
from dotboxd.runtime.errors import BindingError
from dotboxd.runtime.facades import files
from dotboxd.runtime.facades.files import read_text, write_text

from .test_file_facades import _ctx


def _refusal(call: object) -> BindingError:
    with pytest.raises(BindingError) as refused:
        call()  # type: ignore[operator]
    return refused.value


def test_a_parent_swapped_for_a_symlink_after_its_check_is_not_followed(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TOCTOU: the directory passes the lstat check, then an attacker replaces it with a link to
    outside the root before it is opened; the open itself (O_NOFOLLOW) must refuse the link."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret")
    (root / "sub").mkdir()
    (root / "sub" / "secret.txt").write_text("inside")
    real_stat = os.stat

    def racing_stat(path: object, *args: object, **kwargs: object) -> os.stat_result:
        result = real_stat(path, *args, **kwargs)  # type: ignore[arg-type]
        if path == "sub" and not (root / "sub").is_symlink():
            (root / "sub").rename(root / "moved")
            (root / "sub").symlink_to(outside, target_is_directory=True)
        return result

    monkeypatch.setattr(files.os, "stat", racing_stat)
    _, ctx = _ctx({"root": str(root), "maxBytesPerRun": "100"})
    refused = _refusal(lambda: read_text(ctx, SandboxPath("sub/secret.txt")))
    # Linux answers O_DIRECTORY|O_NOFOLLOW on a link with ENOTDIR, which the facade reports as
    # NotFound; either way the link is not followed and nothing outside the root is read.
    assert refused.category in ("PermissionDenied", "NotFound") and "top secret" not in str(refused)
    assert (root / "sub").is_symlink(), "the race really happened"


def test_a_read_never_creates_directories(root: Path) -> None:
    _, ctx = _ctx({"root": str(root), "maxBytesPerRun": "100"})
    assert _refusal(lambda: read_text(ctx, SandboxPath("a/b/c.txt"))).category == "NotFound"
    assert list(root.iterdir()) == []


def test_a_link_out_of_the_root_is_refused_by_the_fence_itself(root: Path, tmp_path: Path) -> None:
    """The realpath fence names the escape, before O_NOFOLLOW would refuse the link anyway."""
    (tmp_path / "s.txt").write_text("secret")
    (root / "leak.txt").symlink_to(tmp_path / "s.txt")
    _, ctx = _ctx({"root": str(root), "maxBytesPerRun": "100"})
    refused = _refusal(lambda: read_text(ctx, SandboxPath("leak.txt")))
    assert (refused.category, refused.safe_message) == (
        "PermissionDenied",
        "the path leaves the granted root",
    )


@pytest.mark.parametrize(
    ("code", "category"),
    [
        (errno.ELOOP, "PermissionDenied"),
        (errno.EMLINK, "PermissionDenied"),
        (errno.ENOENT, "NotFound"),
        (errno.ENOTDIR, "NotFound"),
        (errno.EACCES, "PermissionDenied"),
        (errno.EPERM, "PermissionDenied"),
        (errno.EISDIR, "InvalidInput"),
        (errno.EIO, "NotFound"),
    ],
)
def test_os_errors_become_safe_categories_without_host_paths(code: int, category: str) -> None:
    refusal = files._os_refusal(OSError(code, "host detail", "/srv/secret/path"))
    assert isinstance(refusal, BindingError) and refusal.category == category
    assert "secret" not in refusal.safe_message and "host detail" not in refusal.safe_message


@pytest.mark.parametrize(
    "parameters",
    [{"maxBytesPerRun": "10"}, {"root": "ROOT"}, {"root": "ROOT", "maxBytesPerRun": "-1"}, {"root": ""}],
)
def test_a_grant_missing_its_parameters_is_a_denial_not_a_crash(
    root: Path, parameters: dict[str, str]
) -> None:
    resolved = {k: (str(root) if v == "ROOT" else v) for k, v in parameters.items()}
    (root / "a.txt").write_text("a")
    _, ctx = _ctx(resolved)
    assert _refusal(lambda: read_text(ctx, SandboxPath("a.txt"))).category == "PermissionDenied"


def test_a_name_that_is_only_an_extension_has_no_extension(root: Path) -> None:
    (root / ".txt").write_text("hidden")
    _, ctx = _ctx({"root": str(root), "maxBytesPerRun": "100", "allowedExtensions": ".txt"})
    refused = _refusal(lambda: read_text(ctx, SandboxPath(".txt")))
    assert (refused.category, refused.safe_message) == (
        "PermissionDenied",
        "the file extension is not allowed",
    )


def test_a_write_of_exactly_max_bytes_is_allowed_and_one_more_is_refused(root: Path) -> None:
    grant = {"root": str(root), "maxBytesPerRun": "5", "allowCreate": "true"}
    fake, ctx = _ctx(grant, run_id="a" * 32)
    write_text(ctx, SandboxPath("five.txt"), "12345")
    assert fake.written == 5
    _, other = _ctx(grant, run_id="b" * 32)
    assert _refusal(lambda: write_text(other, SandboxPath("six.txt"), "123456")).category == "QuotaExceeded"


def test_an_existing_nested_target_is_refused_at_call_time_without_overwrite(root: Path) -> None:
    (root / "sub").mkdir()
    (root / "sub" / "t.txt").write_text("keep")
    fake, ctx = _ctx({"root": str(root), "maxBytesPerRun": "100", "allowCreate": "true"})
    refused = _refusal(lambda: write_text(ctx, SandboxPath("sub/t.txt"), "new"))
    assert refused.safe_message == "overwriting files is not allowed by the grant"
    assert len(fake.queue) == 0 and (root / "sub" / "t.txt").read_text() == "keep"


def test_a_create_in_an_existing_nested_directory_is_private_enough_and_leaves_no_temp_file(
    root: Path,
) -> None:
    (root / "a" / "b").mkdir(parents=True)
    fake, ctx = _ctx({"root": str(root), "maxBytesPerRun": "100", "allowCreate": "true"})
    write_text(ctx, SandboxPath("a/b/c.txt"), "made")
    old = os.umask(0o022)
    try:
        report = apply_commands(fake.queue.close())
    finally:
        os.umask(old)
    assert report.ok and len(report.applied) == 1
    made = root / "a" / "b" / "c.txt"
    assert made.read_text() == "made"
    assert stat.S_IMODE(made.stat().st_mode) == 0o644, "a written file is never executable"
    assert sorted(p.name for p in (root / "a" / "b").iterdir()) == ["c.txt"], "no temp file is left"


def test_a_create_under_a_partly_existing_chain_is_refused_and_creates_nothing(root: Path) -> None:
    (root / "a").mkdir()
    fake, ctx = _ctx({"root": str(root), "maxBytesPerRun": "100", "allowCreate": "true"})
    refused = _refusal(lambda: write_text(ctx, SandboxPath("a/b/c.txt"), "made"))
    assert refused.category == "PermissionDenied"
    assert len(fake.queue) == 0 and list((root / "a").iterdir()) == [], "a write never creates directories"


def test_the_per_run_tally_forgets_the_oldest_run_never_the_newest() -> None:
    tally = files._RunTally()
    for n in range(files._RUNS_KEPT + 1):
        tally.reserve(f"run-{n}", 10, 10, "read")
    newest = f"run-{files._RUNS_KEPT}"
    with pytest.raises(BindingError):
        tally.reserve(newest, 1, 10, "read")  # still remembered: its budget is spent
    tally.reserve("run-0", 10, 10, "read")  # forgotten (evicted first); a fresh id in practice
