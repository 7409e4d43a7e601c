"""The safe file facades behind the standard ``file.readText`` / ``file.writeText`` bindings.

Why a facade and not ``open()``: a kernel names files with a ``SandboxPath`` (a canonical relative
path); only the host's grant says which directory that path is relative to. Everything between the
two is hostile ground - ``..`` segments, absolute paths, symbolic links planted inside the root and
pointing out of it, files bigger than the budget - so each step refuses rather than repairs
(spec/semantics.md section 12):

1. the capability's grant must exist (its ``root`` and ``maxBytesPerRun`` are trusted host data);
2. the path is re-checked as a canonical relative ``SandboxPath``;
3. ``realpath(root/path)`` must stay inside the root (a cheap first fence), and the file is then
   reached by walking the path one directory at a time from an open descriptor of the root with
   ``O_NOFOLLOW``: a symbolic link anywhere - parent or final component - is refused, and a link
   swapped in after the ``realpath`` check still cannot be followed;
4. ``allowedExtensions`` (case-insensitive) when the grant lists them;
5. the size is checked *before* reading: over ``maxBytesPerRun`` (counted per run across calls) is
   QuotaExceeded, and the run's ``maxFileBytesRead`` is charged through the binding context;
6. the sanitized relative path is audited (the bindings are PerResource).

A write does the same checks at call time (so the kernel learns of a refusal at once), counting
the writes the run queued before it (a second write to a name the run creates is an overwrite),
but only *queues* the change as a transactional host command: when the whole run succeeded the
host prepares every queued write (checks again, temporary file beside the target), then commits
them all, rolling back the committed ones if any later step fails (``file_tree`` and
``runtime.command_batch``). A write never creates a directory: a missing parent directory is
PermissionDenied. ``allowCreate`` (a new file) and ``allowOverwrite`` (an existing one) default to
deny.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping

from dotboxd.core.literal_rules import path_problem
from dotboxd.core.values import SandboxPath
from dotboxd.runtime.commands import PlannedState
from dotboxd.runtime.context import BindingContext
from dotboxd.runtime.errors import BindingError
from dotboxd.runtime.facades.file_tree import (
    FILE,
    StagedWrite,
    lstat_in,
    open_parent,
    stage_write,
    target_key,
)

READ_CAPABILITY = "file.read"
WRITE_CAPABILITY = "file.write"

_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
_SYMLINK_ERRNOS = frozenset({errno.ELOOP, errno.EMLINK})
_RUNS_KEPT = 4096


class FileGrant:
    """The parsed, trusted parameters of one file grant."""

    __slots__ = ("allow_create", "allow_overwrite", "extensions", "max_bytes", "root")

    def __init__(self, parameters: Mapping[str, str], capability: str) -> None:
        root = parameters.get("root")
        max_bytes = parameters.get("maxBytesPerRun")
        if not root or max_bytes is None or not max_bytes.isdigit():
            # The validator checks grant parameters; a grant without them is a denial, not a crash.
            raise BindingError("PermissionDenied", f"capability '{capability}' is not granted")
        self.root = root
        self.max_bytes = int(max_bytes)
        exts = parameters.get("allowedExtensions")
        self.extensions = (
            frozenset(e.strip().lower() for e in exts.split(",") if e.strip()) if exts is not None else None
        )
        self.allow_create = parameters.get("allowCreate") == "true"
        self.allow_overwrite = parameters.get("allowOverwrite") == "true"


class _RunTally:
    """Bytes used per run id against a grant's ``maxBytesPerRun`` (run ids are unique, so old
    entries are only dropped to bound memory, never reused)."""

    def __init__(self) -> None:
        self._used: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()

    def reserve(self, run_id: str, amount: int, limit: int, what: str) -> None:
        with self._lock:
            used = self._used.get(run_id, 0)
            if used + amount > limit:
                raise BindingError("QuotaExceeded", f"the file {what} budget of this run is exhausted")
            self._used[run_id] = used + amount
            self._used.move_to_end(run_id)
            while len(self._used) > _RUNS_KEPT:
                self._used.popitem(last=False)


_READS = _RunTally()
_WRITES = _RunTally()


# --- shared checks ---------------------------------------------------------------------------


def _grant(ctx: BindingContext, capability: str) -> FileGrant:
    parameters = ctx.grant_parameters
    if not parameters:
        raise BindingError("PermissionDenied", f"capability '{capability}' is not granted")
    return FileGrant(parameters, capability)


def _segments(path: object) -> tuple[str, list[str]]:
    """The relative text and its segments, or InvalidInput (values are validated upstream; this
    is the facade refusing to trust that)."""
    text = path.text if isinstance(path, SandboxPath) else None
    if not isinstance(text, str) or path_problem(text) is not None or "\x00" in text:
        raise BindingError("InvalidInput", "the path is not a canonical relative sandbox path")
    return text, text.split("/")


def _inside_root(grant: FileGrant, text: str) -> None:
    """The lexical/realpath fence: the fully resolved target must stay inside the root."""
    resolved = os.path.realpath(os.path.join(grant.root, *text.split("/")))
    if os.path.commonpath([grant.root, resolved]) != grant.root or resolved == grant.root:
        raise BindingError("PermissionDenied", "the path leaves the granted root")


def _check_extension(grant: FileGrant, name: str) -> None:
    if grant.extensions is None:
        return
    dot = name.rfind(".")
    if dot <= 0 or name[dot:].lower() not in grant.extensions:
        raise BindingError("PermissionDenied", "the file extension is not allowed")


def _os_refusal(error: OSError) -> BindingError:
    """A safe category for an OS error while walking or opening (no host path in the message)."""
    if error.errno in _SYMLINK_ERRNOS:
        return BindingError("PermissionDenied", "symbolic links are not followed")
    if error.errno in (errno.ENOENT, errno.ENOTDIR):
        return BindingError("NotFound", "the file does not exist")
    if error.errno in (errno.EACCES, errno.EPERM):
        return BindingError("PermissionDenied", "the file may not be accessed")
    if error.errno == errno.EISDIR:
        return BindingError("InvalidInput", "the path names a directory")
    if error.errno == errno.ENAMETOOLONG:
        return BindingError("InvalidInput", "a segment of the path is too long for the file system")
    return BindingError("NotFound", "the file could not be opened")


# --- file.readText ---------------------------------------------------------------------------


def read_text(ctx: BindingContext, path: SandboxPath) -> str:
    """``file.readText(path)``: the UTF-8 text of ``root/path`` (see the module docstring)."""
    grant = _grant(ctx, READ_CAPABILITY)
    text, segments = _segments(path)
    _inside_root(grant, text)
    _check_extension(grant, segments[-1])
    try:
        parent = open_parent(grant.root, segments[:-1])
        try:
            fd = os.open(segments[-1], _READ_FLAGS, dir_fd=parent)
        finally:
            os.close(parent)
    except OSError as error:
        raise _os_refusal(error) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise BindingError("InvalidInput", "the path does not name a regular file")
        size = st.st_size
        if size > grant.max_bytes:
            raise BindingError("QuotaExceeded", "the file is larger than the grant's maxBytesPerRun")
        _READS.reserve(ctx.run_id, size, grant.max_bytes, "read")
        ctx.charge_file_read(size)
        data = _read_exactly(fd, size)
    finally:
        os.close(fd)
    try:
        content = data.decode("utf-8", errors="strict")
    except UnicodeDecodeError:
        raise BindingError("InvalidInput", "the file is not valid UTF-8") from None
    ctx.audit(f"file:{text}", bytes=size)
    return content


def _read_exactly(fd: int, size: int) -> bytes:
    """At most ``size`` bytes (the charged amount); a file that grew meanwhile is refused."""
    chunks: list[bytes] = []
    remaining = size
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    if os.read(fd, 1):
        raise BindingError("InvalidInput", "the file changed while it was read")
    return b"".join(chunks)


# --- file.writeText --------------------------------------------------------------------------


def write_text(ctx: BindingContext, path: SandboxPath, content: str) -> None:
    """``file.writeText(path, content)``: check now, queue the write for a successful run."""
    grant = _grant(ctx, WRITE_CAPABILITY)
    text, segments = _segments(path)
    if not isinstance(content, str):
        raise BindingError("InvalidInput", "the content is not text")
    _inside_root(grant, text)
    _check_extension(grant, segments[-1])
    try:
        data = content.encode("utf-8", errors="strict")
    except UnicodeEncodeError:
        raise BindingError("InvalidInput", "the content is not valid Unicode text") from None
    planned = ctx.planned
    key = _preflight(grant, segments, planned)
    if len(data) > grant.max_bytes:
        raise BindingError("QuotaExceeded", "the text is larger than the grant's maxBytesPerRun")

    def prepare(batch: PlannedState) -> StagedWrite:
        return stage_write(
            grant.root,
            segments[:-1],
            segments[-1],
            data,
            grant.allow_overwrite,
            lambda st, earlier: _check_target(grant, st, earlier),
            batch,
        )

    # queued first, so a write refused by maxCommands charges no bytes and audits nothing (a later
    # refusal fails the run, which drops the whole queue)
    ctx.enqueue("file.write", {"path": text, "bytes": len(data)}, prepare=prepare)
    _WRITES.reserve(ctx.run_id, len(data), grant.max_bytes, "write")
    ctx.charge_file_write(len(data))
    ctx.audit(f"file:{text}", bytes=len(data))
    planned.record(key, FILE)


def _preflight(grant: FileGrant, segments: list[str], planned: PlannedState) -> Hashable:
    """The permission checks a write must pass at call time (repeated when it is prepared and when
    it is committed); returns the target's ``PlannedState`` key. A parent directory that does not
    exist (or is not a directory) is PermissionDenied: writes never create directories."""
    try:
        parent = open_parent(grant.root, segments[:-1])
    except (FileNotFoundError, NotADirectoryError):
        raise BindingError(
            "PermissionDenied", "the parent directory does not exist (a write never creates directories)"
        ) from None
    except OSError as error:
        raise _os_refusal(error) from None
    try:
        key = target_key(parent, segments[-1])
        st = lstat_in(parent, segments[-1])
    except OSError as error:
        raise _os_refusal(error) from None
    finally:
        os.close(parent)
    _check_target(grant, st, planned.get(key))
    return key


def _check_target(grant: FileGrant, st: os.stat_result | None, earlier: str | None) -> None:
    """The grant's rule for the target as it stands (``st``) or as an earlier write of the same
    run or batch will leave it (``earlier``): creating needs ``allowCreate``, replacing a regular
    file (one on disk, or one an earlier write creates) ``allowOverwrite``; links and other
    non-regular files are never written."""
    if st is None:
        if earlier is None:
            if not grant.allow_create:
                raise BindingError("PermissionDenied", "creating files is not allowed by the grant")
            return
        if not grant.allow_overwrite:
            raise BindingError(
                "PermissionDenied",
                "overwriting files is not allowed by the grant (an earlier write creates it)",
            )
        return
    if stat.S_ISLNK(st.st_mode):
        raise BindingError("PermissionDenied", "symbolic links are not followed")
    if not stat.S_ISREG(st.st_mode):
        raise BindingError("InvalidInput", "the path does not name a regular file")
    if not grant.allow_overwrite:
        raise BindingError("PermissionDenied", "overwriting files is not allowed by the grant")
