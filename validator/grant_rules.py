"""Grant-parameter rules for the built-in capabilities (spec/validation.md section 10).

Why apart: these are per-capability parameter checks (file roots, HTTP hosts and byte caps) that the
policy-resolution pass applies next to the custom bindings' grant validators; the policy itself
only stores the parameters.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from dotboxd.core.bindings import ASYNC_CAPABILITY
from dotboxd.core.effects import Effect

_EXTENSION = re.compile(r"\.[A-Za-z0-9_-]+")
_HOST_PORT = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]{1,5})?")
_UINT = re.compile(r"[0-9]{1,18}")
_PARAMETERLESS = frozenset({"time.now", "random", "log.write", ASYNC_CAPABILITY})


VOUCHED_ROOTS: set[str] = set()
"""File-grant roots whose filesystem checks (a canonical path, an existing directory) this process
takes as done: only an isolated kernel worker fills it (``dotboxd.isolation.kernel_worker``), with
the roots its host checked when it prepared the plan - the worker sees none of the host's files, and
it never touches them either (file bindings run in the host). Empty everywhere else."""


def builtin_grant_problem(capability: str, parameters: Mapping[str, str]) -> str | None:
    """Why a grant of a built-in capability carries bad parameters (None when fine or not built-in)."""
    if capability in _PARAMETERLESS or capability.startswith("event.read."):
        if parameters:
            return f"'{capability}' takes no parameters, got {', '.join(sorted(parameters))}"
        return None
    if capability in ("file.read", "file.write"):
        return _file_grant_problem(capability, parameters)
    if capability == "net.http.get":
        return _http_grant_problem(parameters)
    return None


def _unexpected(parameters: Mapping[str, str], allowed: set[str]) -> str | None:
    extra = sorted(set(parameters) - allowed)
    return f"unexpected parameter(s) {', '.join(extra)}" if extra else None


def _file_grant_problem(capability: str, p: Mapping[str, str]) -> str | None:
    allowed = {"root", "maxBytesPerRun", "allowedExtensions"}
    if capability == "file.write":
        allowed |= {"allowCreate", "allowOverwrite"}
    problem = _unexpected(p, allowed)
    if problem:
        return problem
    root = p.get("root")
    if root is None:
        return "requires 'root'"
    if not os.path.isabs(root):
        return "root must be an absolute path"
    if os.path.normpath(root) != root:
        return "root must be canonical (no '..', '.', trailing separator or symbolic link)"
    if root not in VOUCHED_ROOTS:
        if os.path.realpath(root) != root:
            return "root must be canonical (no '..', '.', trailing separator or symbolic link)"
        if not os.path.isdir(root):
            return "root must be an existing directory"
    max_bytes = p.get("maxBytesPerRun")
    if max_bytes is None:
        return "requires 'maxBytesPerRun'"
    if _UINT.fullmatch(max_bytes) is None:
        return "maxBytesPerRun must be a decimal integer >= 0"
    exts = p.get("allowedExtensions")
    if exts is not None and not all(_EXTENSION.fullmatch(e.strip()) for e in exts.split(",")):
        return "allowedExtensions must be a comma-separated list of '.ext'"
    for flag in ("allowCreate", "allowOverwrite"):
        if flag in p and p[flag] not in ("true", "false"):
            return f"{flag} must be 'true' or 'false'"
    return None


def _http_grant_problem(p: Mapping[str, str]) -> str | None:
    allowed = {
        "allowedHosts",
        "allowedSchemes",
        "maxRequestBytes",
        "maxResponseBytes",
        "timeoutMs",
        "allowIpLiterals",
        "allowPrivateNetwork",
    }
    problem = _unexpected(p, allowed)
    if problem:
        return problem
    hosts = p.get("allowedHosts")
    if not hosts:
        return "requires 'allowedHosts'"
    if not all(_HOST_PORT.fullmatch(h.strip()) for h in hosts.split(",")):
        return "allowedHosts must be a comma-separated list of host[:port]"
    schemes = p.get("allowedSchemes", "https")
    if not all(s.strip() in ("http", "https") for s in schemes.split(",")):
        return "allowedSchemes may list only http and https"
    if "maxResponseBytes" not in p:
        return "requires 'maxResponseBytes'"
    for name in ("maxRequestBytes", "maxResponseBytes"):
        if name in p and _UINT.fullmatch(p[name]) is None:
            return f"{name} must be a decimal integer >= 0"
    timeout = p.get("timeoutMs", "2000")
    if _UINT.fullmatch(timeout) is None or not 1 <= int(timeout) <= 60_000:
        return "timeoutMs must be between 1 and 60000"
    for flag in ("allowIpLiterals", "allowPrivateNetwork"):
        if flag in p and p[flag] not in ("true", "false"):
            return f"{flag} must be 'true' or 'false'"
    return None


#: What the builder helpers allow for each built-in capability; JSON grants of these ids get the same.
BUILTIN_GRANT_EFFECTS: dict[str, Effect] = {
    "file.read": Effect.FILE_READ,
    "file.write": Effect.FILE_WRITE | Effect.AUDIT,
    "time.now": Effect.TIME,
    "random": Effect.RANDOM,
    "log.write": Effect.AUDIT,
    "net.http.get": Effect.NETWORK,
    ASYNC_CAPABILITY: Effect.CONCURRENCY,
}


def byte_cap(text: str | None) -> int | None:
    """A grant's ``maxBytesPerRun`` as an integer, or None when absent or not a decimal integer."""
    if text is None or _UINT.fullmatch(text) is None:
        return None
    return int(text)
