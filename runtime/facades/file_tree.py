"""The granted directory tree on disk: reaching a directory without following links, and staging a
file write there so that a batch of writes can commit together or not at all.

Why a module of its own: these are the only steps that touch the disk, and they know nothing of
grants. The permission rule of a write (``allowCreate``/``allowOverwrite``) is passed in by the
file facade as a ``TargetCheck``, so the same rule is applied at call time and again when the write
is prepared and committed.

A staged write (``StagedWrite``, the ``PreparedCommand`` of ``runtime.commands``):

* **prepare** (``stage_write``): walk to the parent directory (never creating one), check the
  target against the rule and the batch's planned state (an earlier write of the same batch to
  the same name counts as an existing file), write the text to a temporary file in that
  directory and fsync it. The temporary name is short and fixed in length
  (``.dotboxd-<16 hex>.tmp``), so it fits ``NAME_MAX`` whenever the target name does.
* **commit**: check the target again as it is now (earlier commits of the batch included), keep
  a hard-linked backup of a file about to be replaced, then ``os.replace`` the temporary file over
  the name (overwrite allowed) or hard-link it to the name (create only: an existing name is
  never replaced, the link fails instead).
* **rollback**: put the backup back over the name, or remove the file the commit created (only
  if the name still holds the very file this write made).
* **release**: remove the temporary file and the backup.

Every step reopens the parent from the root without following links and checks it is the
directory the write was prepared in, so a directory swapped for a link in between is refused.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable, Hashable

from dotboxd.runtime.commands import PlannedState

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)

FILE = "file"
"""The planned effect of a write on its target: a regular file will be there."""

TargetCheck = Callable[[os.stat_result | None, str | None], None]
"""The permission rule of a write: given the target's ``lstat`` (None when missing) and what an
earlier write of the batch planned for it, return or raise (``BindingError``)."""


def open_parent(root: str, parents: list[str]) -> int:
    """An fd of the directory holding the target, reached from the root one directory at a time
    without following any link. A missing directory raises FileNotFoundError (nothing is ever
    created), a non-directory NotADirectoryError, a link ``ELOOP``. The caller closes the fd."""
    fd = os.open(root, DIR_FLAGS & ~os.O_NOFOLLOW)
    try:
        for name in parents:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                raise OSError(errno.ELOOP, "symbolic link")
            if not stat.S_ISDIR(st.st_mode):
                raise OSError(errno.ENOTDIR, "not a directory")
            child = os.open(name, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def lstat_in(dir_fd: int, name: str) -> os.stat_result | None:
    """The target's own status (a link is not followed), or None when it does not exist."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def target_key(dir_fd: int, name: str) -> Hashable:
    """The ``PlannedState`` key of ``name`` in the open directory: the directory's identity, not
    the path text, so two spellings of one directory cannot hide a conflict."""
    st = os.fstat(dir_fd)
    return (FILE, st.st_dev, st.st_ino, name)


def _scratch_name(suffix: str) -> str:
    return f".dotboxd-{secrets.token_hex(8)}.{suffix}"


class StagedWrite:
    """One prepared file write (see the module docstring)."""

    __slots__ = ("_backup", "_check", "_dir_id", "_inode", "_name", "_parents", "_replace", "_root", "_temp")

    def __init__(
        self,
        root: str,
        parents: list[str],
        name: str,
        replace: bool,
        check: TargetCheck,
        dir_id: tuple[int, int],
        temp: str,
        inode: tuple[int, int],
    ) -> None:
        self._root = root
        self._parents = parents
        self._name = name
        self._replace = replace
        self._check = check
        self._dir_id = dir_id
        self._temp: str | None = temp
        self._inode = inode
        self._backup: str | None = None

    def _reopen(self) -> int:
        fd = open_parent(self._root, self._parents)
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != self._dir_id:
            os.close(fd)
            raise FileNotFoundError(errno.ENOENT, "the target directory changed since it was prepared")
        return fd

    def commit(self) -> None:
        parent = self._reopen()
        try:
            current = lstat_in(parent, self._name)
            self._check(current, None)  # the disk now holds every earlier commit of the batch
            temp = self._temp
            if temp is None:
                raise FileNotFoundError(errno.ENOENT, "the staged file is gone")
            if self._replace:
                if current is not None:
                    backup = _scratch_name("bak")
                    os.link(self._name, backup, src_dir_fd=parent, dst_dir_fd=parent, follow_symlinks=False)
                    self._backup = backup
                os.replace(temp, self._name, src_dir_fd=parent, dst_dir_fd=parent)
                self._temp = None
            else:
                os.link(temp, self._name, src_dir_fd=parent, dst_dir_fd=parent, follow_symlinks=False)
        finally:
            os.close(parent)

    def rollback(self) -> None:
        parent = self._reopen()
        try:
            backup = self._backup
            if backup is not None:
                os.replace(backup, self._name, src_dir_fd=parent, dst_dir_fd=parent)
                self._backup = None
                return
            current = lstat_in(parent, self._name)
            if current is not None and (current.st_dev, current.st_ino) == self._inode:
                os.unlink(self._name, dir_fd=parent)
        finally:
            os.close(parent)

    def release(self) -> None:
        leftovers = [n for n in (self._temp, self._backup) if n is not None]
        self._temp = self._backup = None
        if not leftovers:
            return
        try:
            parent = self._reopen()
        except OSError:
            return  # the directory is gone or was swapped: nothing of ours can be reached
        try:
            for name in leftovers:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name, dir_fd=parent)
        finally:
            os.close(parent)


def stage_write(
    root: str,
    parents: list[str],
    name: str,
    data: bytes,
    replace: bool,
    check: TargetCheck,
    planned: PlannedState,
) -> StagedWrite:
    """Prepare one write: check the target against ``check`` and ``planned``, write ``data`` to a
    fresh temporary file beside it (fsync), and record the target in ``planned``. Raises (and
    leaves nothing behind) when the write cannot be prepared."""
    parent = open_parent(root, parents)
    try:
        key = target_key(parent, name)
        check(lstat_in(parent, name), planned.get(key))
        temp = _scratch_name("tmp")
        fd = os.open(temp, _TEMP_FLAGS, 0o666, dir_fd=parent)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
                written = os.fstat(fd)
            finally:
                os.close(fd)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=parent)
            raise
        directory = os.fstat(parent)
    finally:
        os.close(parent)
    planned.record(key, FILE)
    return StagedWrite(
        root,
        parents,
        name,
        replace,
        check,
        (directory.st_dev, directory.st_ino),
        temp,
        (written.st_dev, written.st_ino),
    )
