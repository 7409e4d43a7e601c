"""The side tables of a compiled artifact: everything the generated code refers to by index.

User-supplied data never appears in generated source. Text literals, GUID constants and binding ids
live here and the code names them by small integers; fault sites and fuel segments too. The tables
are plain data, serialized next to the source in an on-disk artifact and re-resolved (and checked
against the plan) when it is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dotboxd.core import ast
from dotboxd.core.values import Guid, OpaqueId, SandboxPath, SandboxUri, Shape, Value, shape_of
from dotboxd.runtime.locations import NO_ORDINAL

from .stubs import FAULT_OPS

CHARGES = "charges"
OP = "op"
CHUNK_OP = "chunk-op"


@dataclass(slots=True)
class Tables:
    """Indexable data of one artifact.

    * ``sites``: ``("charges", (1, 1, 2, ...))`` for a fuel segment (site 0 is the empty one),
      ``("op", "add_i32")`` for a fault site (the ``core.arith`` definition called when the inline
      check fails), or ``("chunk-op", ("add_i32", base, ahead, started))`` for a fault site inside
      a fast bulk loop;
    * ``texts``: text literals as ``(kind, text, brand)``;
    * ``guids``: GUID literal texts (bound as ``_k<i>`` in the namespace);
    * ``bindings``: binding ids (``_s_bind`` takes an index);
    * ``functions``: plan function ids, in the order of their generated names ``_fn<i>``;
    * ``colds``: the cold exact paths ``_x<i>`` (``cold.py``), each as (index into ``functions``,
      ordinal of the loop among that function's live loops);
    * ``site_nodes``: site -> the operation ordinal (``runtime.locations``) of the node whose failure
      the site reports: fault sites and the segments of built-in and binding stub calls. A run-time
      error raised there is located at that node; sites without an entry locate nothing.
    """

    sites: list[tuple[str, Any]] = field(default_factory=lambda: [(CHARGES, ())])
    texts: list[tuple[str, str, str | None]] = field(default_factory=list)
    guids: list[str] = field(default_factory=list)
    bindings: list[str] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)
    colds: list[tuple[int, int]] = field(default_factory=list)
    site_nodes: dict[int, int] = field(default_factory=dict)

    # --- building ------------------------------------------------------------------------------

    def segment(self, charges: tuple[int, ...]) -> int:
        """A fuel segment's site (site 0 is the empty segment: nothing to pay)."""
        self.sites.append((CHARGES, charges))
        return len(self.sites) - 1

    def fault_site(self, op: str, ordinal: int = NO_ORDINAL) -> int:
        if op not in FAULT_OPS:
            raise KeyError(op)
        self.sites.append((OP, op))
        return self._at(len(self.sites) - 1, ordinal)

    def located_segment(self, charges: tuple[int, ...], ordinal: int) -> int:
        """A segment of its own (even an empty one) for the stub call of operation ``ordinal``."""
        self.sites.append((CHARGES, charges))
        return self._at(len(self.sites) - 1, ordinal)

    def _at(self, site: int, ordinal: int) -> int:
        if ordinal != NO_ORDINAL:
            self.site_nodes[site] = ordinal
        return site

    def chunk_fault_site(self, op: str, ahead: int, started: int, ordinal: int = NO_ORDINAL) -> int:
        """A fault site inside a fast bulk chunk: the operation, and the constants the stub needs to
        recover the exact fuel (``f - j * base + ahead``) and refund (``n - j - started``); ``base``
        is filled in when the loop body is complete (``set_chunk_base``)."""
        if op not in FAULT_OPS:
            raise KeyError(op)
        self.sites.append((CHUNK_OP, (op, 0, ahead, started)))
        return self._at(len(self.sites) - 1, ordinal)

    def set_chunk_base(self, sites: list[int], base: int) -> None:
        for site in sites:
            kind, (op, _, ahead, started) = self.sites[site]
            self.sites[site] = (kind, (op, base, ahead, started))

    def text(self, literal: ast.Literal) -> int:
        assert isinstance(literal.value, str)
        entry = (literal.kind.value, literal.value, literal.brand)
        self.texts.append(entry)
        return len(self.texts) - 1

    def guid(self, text: str) -> int:
        self.guids.append(text.lower())
        return len(self.guids) - 1

    def binding(self, binding_id: str) -> int:
        if binding_id not in self.bindings:
            self.bindings.append(binding_id)
        return self.bindings.index(binding_id)

    def copy(self) -> Tables:
        """An independent copy (the cold-path builder extends a copy, never the artifact's own)."""
        return Tables(
            list(self.sites),
            list(self.texts),
            list(self.guids),
            list(self.bindings),
            list(self.functions),
            list(self.colds),
            dict(self.site_nodes),
        )

    # --- resolving for a run -------------------------------------------------------------------

    def resolved_sites(self) -> tuple[Any, ...]:
        out: list[Any] = []
        for kind, payload in self.sites:
            if kind == CHARGES:
                out.append(payload if type(payload) is tuple else tuple(int(c) for c in payload))
            elif kind == CHUNK_OP:
                op, base, ahead, started = payload
                out.append((FAULT_OPS[op], base, ahead, started))
            else:
                out.append(FAULT_OPS[str(payload)])
        return tuple(out)

    def resolved_site_nodes(self) -> tuple[int, ...]:
        """``site_nodes`` as a tuple aligned with ``sites`` (``NO_ORDINAL`` where a site has none)."""
        nodes = self.site_nodes
        return tuple(nodes.get(site, NO_ORDINAL) for site in range(len(self.sites)))

    def totals(self) -> tuple[int, ...]:
        return tuple(sum(payload) if kind == CHARGES else 0 for kind, payload in self.sites)

    def resolved_texts(self) -> tuple[tuple[Value, Shape], ...]:
        out: list[tuple[Value, Shape]] = []
        for kind, raw, brand in self.texts:
            value = text_value(kind, raw, brand)
            out.append((value, shape_of(value)))
        return tuple(out)

    def guid_values(self) -> dict[str, Guid]:
        return {guid_name(i): Guid(text) for i, text in enumerate(self.guids)}

    # --- serialization -------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "sites": [[kind, payload if kind == OP else list(payload)] for kind, payload in self.sites],
            "texts": [list(t) for t in self.texts],
            "guids": list(self.guids),
            "bindings": list(self.bindings),
            "functions": list(self.functions),
            "colds": [list(entry) for entry in self.colds],
            "siteNodes": [[site, ordinal] for site, ordinal in sorted(self.site_nodes.items())],
        }

    @classmethod
    def from_json(cls, data: Any) -> Tables:
        """Rebuild from ``to_json`` output; any shape error raises ``ValueError``."""
        if not isinstance(data, dict) or set(data) != {
            "sites",
            "texts",
            "guids",
            "bindings",
            "functions",
            "colds",
            "siteNodes",
        }:
            raise ValueError("malformed tables")
        tables = cls()
        tables.sites.clear()
        for item in data["sites"]:
            if not isinstance(item, list) or len(item) != 2:
                raise ValueError("malformed site")
            kind, payload = item
            if kind == CHARGES and isinstance(payload, list) and all(_is_int(c) and c > 0 for c in payload):
                tables.sites.append((CHARGES, tuple(payload)))
            elif kind == OP and isinstance(payload, str) and payload in FAULT_OPS:
                tables.sites.append((OP, payload))
            elif (
                kind == CHUNK_OP
                and isinstance(payload, list)
                and len(payload) == 4
                and payload[0] in FAULT_OPS
                and all(_is_int(v) for v in payload[1:])
                and payload[1] >= 0
                and payload[3] in (0, 1)
            ):
                tables.sites.append((CHUNK_OP, tuple(payload)))
            else:
                raise ValueError("malformed site")
        if not tables.sites or tables.sites[0] != (CHARGES, ()):
            raise ValueError("site 0 must be the empty segment")
        for item in data["texts"]:
            if not (isinstance(item, list) and len(item) == 3 and isinstance(item[1], str)):
                raise ValueError("malformed text")
            kind, raw, brand = item
            if kind not in _TEXT_KINDS or not (brand is None or isinstance(brand, str)):
                raise ValueError("malformed text")
            tables.texts.append((kind, raw, brand))
        for key in ("guids", "bindings", "functions"):
            values = data[key]
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise ValueError(f"malformed {key}")
            getattr(tables, key).extend(values)
        for item in data["colds"]:
            if not (isinstance(item, list) and len(item) == 2 and all(_is_int(v) and v >= 0 for v in item)):
                raise ValueError("malformed cold path")
            tables.colds.append((item[0], item[1]))
        for item in data["siteNodes"]:
            if not (isinstance(item, list) and len(item) == 2 and all(_is_int(v) and v >= 0 for v in item)):
                raise ValueError("malformed site node")
            if item[0] >= len(tables.sites) or item[0] in tables.site_nodes:
                raise ValueError("malformed site node")
            tables.site_nodes[item[0]] = item[1]
        return tables


_TEXT_KINDS = frozenset({"string", "path", "uri", "opaqueId"})


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def text_value(kind: str, raw: str, brand: str | None) -> Value:
    """The sandbox value of a text literal (the same construction as the reference interpreter)."""
    if kind == "string":
        return raw
    if kind == "path":
        return SandboxPath(raw)
    if kind == "uri":
        return SandboxUri(raw)
    if kind == "opaqueId" and brand is not None:
        return OpaqueId(brand, raw)
    raise ValueError(f"not a text literal kind: {kind}")


def guid_name(index: int) -> str:
    return f"_k{index}"


def function_name(index: int) -> str:
    return f"_fn{index}"
