"""Code generation of a map read at a text literal: one fused stub call (``literal_reads``).

``map.get(m, "hp")`` used to be emitted as the literal's stub and then the read's:

    t0, f = _s_text(R, f, lr, text_site, index)
    t1, f = _s_i_map_get(R, f, lr, read_site, m, t0)

and is now

    t1, f = _s_lrget(R, f, lr, text_site, index, read_site, m)

with the very same segments: the literal's (which closes the call's and its operands' expression
fuel, the literal's own included, exactly as ``_s_text`` would have paid it) and the read's, located
at the call node. The key is never a local, so nothing else can read it; the map operand is
evaluated first, as before. ``map.containsKey`` likewise (``_s_lrhas``).

Only where the read's unfused form is the plain stub pair: not in a fast chunk (no syncing stub
runs there) and not in a loop that owns a map (its reads are the owned-map forms).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from dotboxd.core import ast as ir
from dotboxd.core import costs

from . import pyast as P
from .literal_reads import GET, HAS

if TYPE_CHECKING:
    from .codegen import _FunctionEmitter

_FUSED = {"map.get": GET, "map.containsKey": HAS}
_R, _F = P.name("R"), P.name("f")


def literal_read(emitter: _FunctionEmitter, node: ir.Call, builtin: str, dest: str | None) -> ast.expr | None:
    """Emit ``node`` (a call of ``builtin``) as a fused literal read and return its value's name,
    or None (nothing emitted) when it is not one: another built-in, a key that is not a string
    literal, or a place where the read has another form."""
    stub = _FUSED.get(builtin)
    if stub is None or len(node.args) != 2:
        return None
    key = node.args[1]
    if type(key) is not ir.Literal or key.kind is not ir.LiteralKind.STRING:
        return None
    chunk = emitter.chunk
    if chunk is not None and (chunk.fast or chunk.owned_map is not None):
        return None
    source = emitter.expr(node.args[0])
    emitter.charge(costs.EXPRESSION_FUEL)  # the literal's own expression charge (``expr``)
    text_site = emitter.take_segment()
    index = emitter.tables.text(key)
    read_site = emitter.take_located_segment(emitter.ordinal(node))
    out = dest if dest is not None else emitter.slots.new("t")
    call = P.call(
        stub, _R, _F, emitter.lref(), P.const(text_site), P.const(index), P.const(read_site), source
    )
    emitter.emit(P.assign2(out, "f", call))
    return P.name(out)


__all__ = ["literal_read"]
