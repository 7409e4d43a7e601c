"""The artifact cache: an in-memory LRU plus an optional on-disk directory.

Why the care: a cached artifact is code we will execute, so the cache trusts content, never paths.

* **Key**: module hash + plan hash + policy hash + binding-manifest hash + compiler and verifier
  versions + generation options (``ArtifactKey.digest``). An artifact is only ever found for the
  exact plan it was compiled from.
* **Disk**: one JSON file per key (``<digest>.json``) holding a manifest (the key fields and the
  SHA-256 of the payload) and the payload (generated source, side tables). Writes go to a
  temporary file that is then renamed over the target, so a reader never sees half a file.
  Loading re-checks everything: the file's digest and manifest key against the expected key, the
  payload hash, then the full verifier on the re-parsed source (``artifact.bind``). Any mismatch
  is ``CacheInvalid``: the file is moved to ``quarantine/`` and the plan is compiled afresh.
  The hash catches corruption and partial edits; someone who can write the directory can rewrite
  payload and hash together, and the verifier then still keeps the code from reaching the host but
  cannot tell a changed fuel constant from a real one. With a ``secret`` the manifest also carries an
  HMAC of the payload, and only artifacts this host wrote are accepted.
* **Bounds**: memory holds at most ``capacity`` artifacts and ``max_bytes`` of them (their
  ``size_bytes`` estimates), least recently used evicted first; the directory's files (artifacts and
  quarantine) are kept within ``max_disk_bytes``, least recently written removed first, whenever
  the cache writes one. A removed file only costs a recompilation.
* **Verifier failures**: the key is quarantined (in memory, and the rejected source is written to
  ``quarantine/`` for inspection); it is never executed and never compiled again in this process.
* **Revocation**: a plan whose policy has since revoked a capability the plan requests or reaches
  can no longer be used: lookups evict its artifact (memory and disk) and raise the plan gate's
  ``E-POLICY-REVOKED``.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import hmac
import json
import os
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.core.jsonread import read_document_bytes, read_json
from dotboxd.core.jsonscan import JsonBudgets
from dotboxd.validator.plan import ExecutionPlan

from .artifact import Artifact, ArtifactKey, bind, compile_plan
from .codegen import GenOptions
from .errors import CacheInvalid, CompileFailure, VerifierFailure
from .tables import Tables

FORMAT = "dotboxd-opt-artifact-1"
MAX_FILE_BYTES = 64 * 1024 * 1024
_CACHE_BUDGETS = JsonBudgets(
    max_document_bytes=MAX_FILE_BYTES,
    max_depth=32,
    max_tokens=4_000_000,
    max_items=1_000_000,
    max_string_bytes=MAX_FILE_BYTES,
    max_total_string_bytes=MAX_FILE_BYTES,
)
"""A cache file is written by this module (a few levels deep) but read back as untrusted: the
bounded reader refuses a planted deep or oversized document as ``CacheInvalid``, never a
RecursionError."""
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
"""The default memory bound of a cache's artifacts (their ``size_bytes`` estimates)."""
DEFAULT_MAX_DISK_BYTES = 1024 * 1024 * 1024
"""The default bound of a cache directory's files (artifacts and quarantine together)."""
_TEMP_PREFIX = ".tmp-"

Report = Callable[[str, str, dict[str, Any]], None]
"""``report(kind, message, fields)``: how the cache tells its caller (the backend, which writes
audit events) that it invalidated or quarantined something."""


@dataclass(slots=True)
class CacheStats:
    hits: int = 0
    disk_hits: int = 0
    compiles: int = 0
    invalidated: int = 0
    quarantined: int = 0
    evicted: int = 0
    disk_pruned: int = 0


def _no_report(kind: str, message: str, fields: dict[str, Any]) -> None:
    return None


class ArtifactCache:
    """Thread-safe; at most ``capacity`` artifacts and ``max_bytes`` of them (``Artifact.size_bytes``)
    in memory, least recently used evicted first, optionally persisted under ``directory``. An
    artifact larger than ``max_bytes`` on its own is returned to its caller but not kept."""

    def __init__(
        self,
        capacity: int = 256,
        directory: str | os.PathLike[str] | None = None,
        *,
        secret: bytes | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_disk_bytes: int = DEFAULT_MAX_DISK_BYTES,
    ) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        if type(max_bytes) is not int or max_bytes < 1:
            raise ValueError("max_bytes must be an integer >= 1")
        if type(max_disk_bytes) is not int or max_disk_bytes < 1:
            raise ValueError("max_disk_bytes must be an integer >= 1")
        self.max_bytes = max_bytes
        self.max_disk_bytes = max_disk_bytes
        self._bytes = 0
        if secret is not None and len(secret) < 16:
            raise ValueError("the cache secret must be at least 16 bytes")
        self.capacity = capacity
        self.directory = Path(directory) if directory is not None else None
        self._secret = secret
        self._memory: OrderedDict[str, Artifact] = OrderedDict()
        self._quarantined: dict[str, str] = {}
        self._lock = threading.RLock()
        self.stats = CacheStats()

    # --- lookups ------------------------------------------------------------------------------

    def get_or_compile(
        self, plan: ExecutionPlan, options: GenOptions | None = None, report: Report = _no_report
    ) -> Artifact:
        """The verified artifact for ``plan``: from memory, from disk, or freshly compiled."""
        options = options or GenOptions()
        key = ArtifactKey.for_plan(plan, options)
        digest = key.digest()
        with self._lock:
            self._refuse_revoked(plan, digest, report)
            if digest in self._quarantined:
                raise VerifierFailure(f"artifact {digest[:12]} is quarantined: {self._quarantined[digest]}")
            artifact = self._memory.get(digest)
            if artifact is not None:
                self._memory.move_to_end(digest)
                self.stats.hits += 1
                return artifact
            artifact = self._load(plan, key, digest, report)
            if artifact is None:
                artifact = self._compile(plan, options, digest, report)
                self._store(digest, artifact)
            self._remember(digest, artifact)
            return artifact

    def peek(self, plan: ExecutionPlan, options: GenOptions | None = None) -> Artifact | None:
        """The in-memory artifact for ``plan``, if any (no compilation, no disk access)."""
        digest = ArtifactKey.for_plan(plan, options or GenOptions()).digest()
        with self._lock:
            return self._memory.get(digest)

    def is_quarantined(self, plan: ExecutionPlan, options: GenOptions | None = None) -> bool:
        digest = ArtifactKey.for_plan(plan, options or GenOptions()).digest()
        with self._lock:
            return digest in self._quarantined

    def clear_memory(self) -> None:
        with self._lock:
            self._memory.clear()
            self._bytes = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._memory)

    @property
    def memory_bytes(self) -> int:
        """The summed ``size_bytes`` of the artifacts held in memory (at most ``max_bytes``)."""
        with self._lock:
            return self._bytes

    # --- internals ----------------------------------------------------------------------------

    def _remember(self, digest: str, artifact: Artifact) -> None:
        self._forget(digest)
        self._memory[digest] = artifact
        self._bytes += artifact.size_bytes
        while self._memory and (len(self._memory) > self.capacity or self._bytes > self.max_bytes):
            _, evicted = self._memory.popitem(last=False)
            self._bytes -= evicted.size_bytes
            self.stats.evicted += 1

    def _forget(self, digest: str) -> bool:
        """Drop ``digest`` from memory; whether it was there."""
        artifact = self._memory.pop(digest, None)
        if artifact is None:
            return False
        self._bytes -= artifact.size_bytes
        return True

    def _refuse_revoked(self, plan: ExecutionPlan, digest: str, report: Report) -> None:
        revocations = plan.policy.revocations
        caps = set(plan.required_capabilities) | set(plan.requested_capabilities)
        if not any(revocations.revoked(cap) is not None for cap in caps):
            return
        dropped = self._forget(digest)
        path = self._path(digest)
        if path is not None and path.exists():
            with contextlib.suppress(OSError):
                path.unlink()
            dropped = True
        if dropped:
            self.stats.invalidated += 1
            report("CacheInvalidated", "a capability of this plan was revoked", {"artifact": digest[:16]})
        plan.ensure_usable()  # raises E-POLICY-REVOKED

    def _compile(self, plan: ExecutionPlan, options: GenOptions, digest: str, report: Report) -> Artifact:
        self.stats.compiles += 1
        try:
            return compile_plan(plan, options, keep_module=self.directory is not None)
        except VerifierFailure as failure:
            self._quarantine_source(plan, options, digest, failure.reason)
            report("VerifierFailure", "generated code failed verification", {"artifact": digest[:16]})
            raise

    def _quarantine_source(self, plan: ExecutionPlan, options: GenOptions, digest: str, reason: str) -> None:
        self._quarantined[digest] = reason
        self.stats.quarantined += 1
        folder = self._quarantine_dir()
        if folder is None:
            return
        with contextlib.suppress(Exception):
            from .codegen import generate
            from .proofs import proof_facts

            source = ast.unparse(generate(plan, options, proof_facts(plan, options)).module)
            _atomic_write(folder / f"{digest}.{int(time.time())}.rejected.py", f"# {reason}\n{source}")
            self._prune_disk()

    def _path(self, digest: str) -> Path | None:
        return None if self.directory is None else self.directory / f"{digest}.json"

    def _quarantine_dir(self) -> Path | None:
        if self.directory is None:
            return None
        folder = self.directory / "quarantine"
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def _store(self, digest: str, artifact: Artifact) -> None:
        path = self._path(digest)
        if path is None:
            return
        payload = {
            "source": artifact.source(),
            "tables": artifact.tables.to_json(),
            "irNodes": artifact.ir_nodes,
        }
        payload_text = _canonical(payload)
        manifest: dict[str, Any] = {
            "digest": digest,
            "key": artifact.key.to_json(),
            "payloadSha256": hashlib.sha256(payload_text.encode("utf-8")).hexdigest(),
        }
        if self._secret is not None:
            manifest["payloadHmac"] = _mac(self._secret, payload_text)
        document = {"format": FORMAT, "manifest": manifest, "payload": payload}
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            _atomic_write(path, _canonical(document))
            self._prune_disk()

    def _load(self, plan: ExecutionPlan, key: ArtifactKey, digest: str, report: Report) -> Artifact | None:
        path = self._path(digest)
        if path is None or not path.exists():
            return None
        try:
            artifact = self._read(plan, key, digest, path)
        except (CacheInvalid, VerifierFailure, CompileFailure) as invalid:
            self.stats.invalidated += 1
            self._quarantine_file(path)
            report(
                "CacheInvalidated",
                "a cached artifact failed its integrity checks and was quarantined",
                {"artifact": digest[:16], "reason": invalid.reason[:120]},
            )
            return None
        self.stats.disk_hits += 1
        return artifact

    def _read(self, plan: ExecutionPlan, key: ArtifactKey, digest: str, path: Path) -> Artifact:
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                raise CacheInvalid("cached artifact is too large")
            document = read_json(read_document_bytes(path, _CACHE_BUDGETS), _CACHE_BUDGETS)
        except (OSError, DotBoxDError):
            raise CacheInvalid("cached artifact is unreadable") from None
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            raise CacheInvalid("cached artifact has an unknown format")
        manifest = document.get("manifest")
        payload = document.get("payload")
        if not isinstance(manifest, dict) or not isinstance(payload, dict):
            raise CacheInvalid("cached artifact has no manifest")
        if manifest.get("digest") != digest or manifest.get("key") != key.to_json():
            raise CacheInvalid("cached artifact's manifest does not match its key")
        payload_text = _canonical(payload)
        actual = hashlib.sha256(payload_text.encode("utf-8")).hexdigest()
        if manifest.get("payloadSha256") != actual:
            raise CacheInvalid("cached artifact's payload hash does not match its manifest")
        if self._secret is not None:
            claimed = manifest.get("payloadHmac")
            if not isinstance(claimed, str) or not hmac.compare_digest(
                claimed, _mac(self._secret, payload_text)
            ):
                raise CacheInvalid("cached artifact is not authenticated by this cache's secret")
        source = payload.get("source")
        nodes = payload.get("irNodes")
        if not isinstance(source, str) or not isinstance(nodes, int):
            raise CacheInvalid("cached artifact payload is malformed")
        try:
            tables = Tables.from_json(payload.get("tables"))
            module = fold_negative_literals(ast.parse(source, mode="exec"))
        except (ValueError, SyntaxError, RecursionError, MemoryError):
            raise CacheInvalid("cached artifact payload is malformed") from None
        return bind(plan, key, module, tables, nodes)

    def _prune_disk(self) -> None:
        """Keep the directory's files (artifacts and quarantine) within ``max_disk_bytes``, removing
        the least recently written first. Why here: only this cache writes the directory, and only
        when it stores or quarantines something, so a walk of it per write keeps the bound without a
        walk per lookup. Files being written by a concurrent writer (``.tmp-*``) are left alone."""
        assert self.directory is not None
        files: list[tuple[float, int, str]] = []
        for folder in (self.directory, self.directory / "quarantine"):
            with contextlib.suppress(OSError), os.scandir(folder) as entries:
                for entry in entries:
                    if entry.name.startswith(_TEMP_PREFIX) or not entry.is_file(follow_symlinks=False):
                        continue
                    info = entry.stat(follow_symlinks=False)
                    files.append((info.st_mtime, info.st_size, entry.path))
        total = sum(size for _, size, _ in files)
        for _, size, path in sorted(files):
            if total <= self.max_disk_bytes:
                break
            with contextlib.suppress(OSError):
                os.unlink(path)
                total -= size
                self.stats.disk_pruned += 1

    def _quarantine_file(self, path: Path) -> None:
        self.stats.quarantined += 1
        folder = self._quarantine_dir()
        if folder is None:
            return
        target = folder / f"{path.stem}.{int(time.time() * 1000)}.json"
        try:
            os.replace(path, target)
        except OSError:
            with contextlib.suppress(OSError):
                path.unlink()
        self._prune_disk()


def _mac(secret: bytes, text: str) -> str:
    return hmac.new(secret, text.encode("utf-8"), hashlib.sha256).hexdigest()


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def _atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the whole new one."""
    fd, temp = tempfile.mkstemp(prefix=_TEMP_PREFIX, dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


DEFAULT_CACHE = ArtifactCache()
"""The process-wide cache used by backends that are not given their own."""


class _NegativeLiterals(ast.NodeTransformer):
    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        operand = self.visit(node.operand)
        if type(node.op) is ast.USub and type(operand) is ast.Constant:
            value = operand.value
            if type(value) is int or type(value) is float:
                return ast.copy_location(ast.Constant(-value), node)
        node.operand = operand
        return node


def fold_negative_literals(module: ast.Module) -> ast.Module:
    """The module as the generator built it: ``ast.unparse`` prints ``Constant(-770)`` as ``-770``,
    which ``ast.parse`` reads back as ``-(770)``; the verifier matches integer constants by value
    where the generator put a constant (a loop bound, a reservation's stop), so a negative one would
    fail to verify after the disk round trip and the artifact would be quarantined and recompiled.
    Folding only a minus applied to a numeric literal gives back the same values (Python ints do not
    overflow, and ``-0.0`` stays ``-0.0``)."""
    folded = _NegativeLiterals().visit(module)
    assert isinstance(folded, ast.Module)
    return folded
