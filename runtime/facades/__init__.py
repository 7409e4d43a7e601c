"""Host-side facades: the Python implementations behind DotBoxD's standard bindings.

``dotboxd.core.bindings.standard_bindings()`` declares the contracts (signature, effects,
capability, cost, audit) without code, because core must not touch the file system. This package
supplies the code and ``attach_standard_facades`` wires it in: a catalogue binding gets a facade
only when it has no invoker of its own *and* its contract is exactly the standard one (same
manifest record), so a host's or a test's own ``file.readText`` is never silently replaced.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from dotboxd.core.bindings import BindingCatalog, binding_record, standard_bindings
from dotboxd.runtime.facades.clock import now_unix_millis
from dotboxd.runtime.facades.files import read_text, write_text
from dotboxd.runtime.facades.http import http_get
from dotboxd.runtime.facades.randomness import next_i32
from dotboxd.runtime.facades.sandbox_log import log_info, log_warn

STANDARD_FACADES: Mapping[str, Callable[..., Any]] = {
    "file.readText": read_text,
    "file.writeText": write_text,
    "time.nowUnixMillis": now_unix_millis,
    "random.nextI32": next_i32,
    "log.info": log_info,
    "log.warn": log_warn,
    "net.http.get": http_get,
}
"""Standard binding id -> facade; every facade takes the binding context first."""


def attach_standard_facades(catalog: BindingCatalog) -> BindingCatalog:
    """``catalog`` with the standard facades attached where they fit (the same object when none
    does). The manifest hash is unchanged: neither the callable nor ``takes_context`` is hashed."""
    standard = {d.id: binding_record(d) for d in standard_bindings() if d.id in STANDARD_FACADES}
    fits = [
        d.id
        for d in catalog.values()
        if d.invoke is None and d.id in standard and binding_record(d) == standard[d.id]
    ]
    if not fits:
        return catalog
    return BindingCatalog(
        replace(d, invoke=STANDARD_FACADES[d.id], takes_context=True) if d.id in fits else d
        for d in catalog.values()
    )


__all__ = ["STANDARD_FACADES", "attach_standard_facades"]
