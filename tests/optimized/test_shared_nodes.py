"""One node object at two places of a tampered module (review6, issue 16).

Why: rule 24 (iteration blocks) approves its forms by the identity of their nodes, and rule 25
(projected events) admitted an entry when every ``Name`` of its event was a node it had seen as a
fused read's map. Python's ``compile()`` takes a tree in which one node object stands at several
places, so a tamperer could approve a node in its form and use the very same object elsewhere: the
block's closing ``_s_bkend`` inside its own loop (every outer iteration gave the pool back to the
meter and went on drawing from it: a run reported negative loop iterations), its draw twice, its pool
read into a slot, or the event's name node returned next to its read (the lane's private snapshot
``dict`` came back as the kernel's value). The verifier now refuses a statement or a call met twice
and approves each pool read for one place; rule 25 counts where each event name stands. The older
forms approved by identity had the same hole: an owned list's buffer load shared out of its loop
into an unmetered push, a reader's list argument shared into a copy, a guarded list-view read shared
into the unguarded path, a map chunk's tally shared out of a fault stub's exact fuel - refused now
too (an owned list's or buffer's name node at two places; a view read approved for one place; the
fuel and tally approvals counted per place). The code generator shares name, constant and operator
nodes but never a statement, a call, a pool read, an owned list's or buffer's name or a subscript
(scanned over the corpus and workloads), so nothing it makes is refused.
"""

from __future__ import annotations

import ast
import copy
from typing import Any

import pytest

from dotboxd.host import SandboxHost
from dotboxd.runtime.optimized import ArtifactCache, OptimizedBackend
from dotboxd.runtime.optimized.artifact import bind
from dotboxd.runtime.optimized.errors import VerifierFailure
from dotboxd.runtime.optimized.verify_projection import projected_functions
from tests.benchmarks.workloads import COLLATZ

from .tampering import Tampering
from .test_blocks import BLOCKS
from .test_event_projection import _without_inline_forms

ECHO = """module "x" version "1.0.0";
entrypoint fn echo(ev Map<String, I32>) -> I32 { t = map.get(ev, "hp"); return t; }"""
"""An entry whose event is used only by one fused read: admitted as generated."""


def _event_read(fn: ast.FunctionDef) -> ast.Name:
    """The event's name node that is the first fused read's map."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "_s_lrget":
            last = node.args[-1]
            assert isinstance(last, ast.Name)
            return last
    raise AssertionError("no fused read")


def _returning_the_read_node(tampering: Tampering, *, inline: bool = True) -> ast.Module:
    """The module with its return ``(t, f)`` made ``(<the read's own name node>, f)``; without
    ``inline``, each inline read (rule 29) first replaced by its fallback, the fused call."""
    module = copy.deepcopy(tampering.generated.module)
    if not inline:
        _without_inline_forms(module)
    fn = module.body[0]
    assert isinstance(fn, ast.FunctionDef)
    shared = _event_read(fn)
    returned = fn.body[-1]
    assert isinstance(returned, ast.Return) and isinstance(returned.value, ast.Tuple)
    returned.value.elts[0] = shared
    return module


def test_an_event_name_node_shared_with_a_return_is_not_admitted() -> None:
    echo = Tampering(ECHO)
    assert projected_functions(echo.generated.module, echo.generated.tables, echo.plan) == {"echo"}
    module = _returning_the_read_node(echo)
    assert "return (v0, f)" in ast.unparse(module)
    assert projected_functions(module, echo.generated.tables, echo.plan) == frozenset()


def test_a_returned_shared_event_name_gives_the_host_the_map_not_the_snapshot() -> None:
    """End to end: the tampered module verifies (a slot may hold a map; the entry's declared result
    is not checked against what it returns), is not admitted, so its lane hands it the map, and what
    comes back is that map, never the lane's private ``dict``."""
    echo = Tampering(ECHO)
    # without its inline read (rule 29 refuses a whole module whose inline form stands in an entry
    # rule 25 does not admit), so the module verifies and only rule 25's verdict is left to test
    module = _returning_the_read_node(echo, inline=False)
    assert ast.unparse(module).count("_s_lrget(") == 1, "not vacuous: the return shares the one read's node"
    generated = echo.generated
    artifact = bind(echo.plan, echo.key, module, copy.deepcopy(generated.tables), generated.ir_nodes)
    assert artifact.projected == frozenset()
    backend = OptimizedBackend(cache=ArtifactCache())
    host = SandboxHost(backends={"optimized": backend})
    host.execute(echo.plan, "echo", [{"hp": 1}], backend="optimized")  # the dispatch record
    backend._remember(echo.plan, artifact)  # the tampered artifact in place of the compiled one
    for _ in range(3):  # bound, then the lane's own path
        result = host.execute(echo.plan, "echo", [{"hp": 1}], backend="optimized")
        assert type(result.value) is not dict, result.value


# --- rule 24 -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def collatz() -> Tampering:
    return Tampering(COLLATZ, BLOCKS)


def _block(module: ast.Module) -> tuple[ast.FunctionDef, int]:
    """The function and the index of its ``_s_bkend(R, bk0, units)`` statement."""
    fn = module.body[0]
    assert isinstance(fn, ast.FunctionDef)
    for index, stmt in enumerate(fn.body):
        if isinstance(stmt, ast.Expr) and ast.unparse(stmt).startswith("_s_bkend("):
            return fn, index
    raise AssertionError("no block")


def _end_inside_its_loop(module: ast.Module) -> None:
    fn, end = _block(module)
    loop: Any = fn.body[end - 1]
    loop.body.insert(4, ast.Expr(value=fn.body[end].value))  # type: ignore[attr-defined]


def _draw_twice(module: ast.Module) -> None:
    fn, end = _block(module)
    loop: Any = fn.body[end - 1]
    loop.body.insert(1, loop.body[0])


def _pool_into_a_slot(module: ast.Module) -> None:
    fn, end = _block(module)
    loop: Any = fn.body[end - 1]
    pool = loop.body[0].test.values[0].left  # ``if bk0 > 0 and f >= 5``: the draw's pool read
    assert isinstance(pool, ast.Name) and pool.id == "bk0"
    stores = [s for s in loop.body if isinstance(s, ast.Assign) and ast.unparse(s) == "v3 = v2"]
    assert len(stores) == 1
    stores[0].value = pool


SHARED = {
    "its _s_bkend call inside its loop": (_end_inside_its_loop, "one call object"),
    "its draw twice": (_draw_twice, "one statement object"),
    "its pool read stored in a slot": (_pool_into_a_slot, "a pool is read only"),
}


@pytest.mark.parametrize("name", sorted(SHARED))
def test_a_block_node_shared_into_another_place_is_refused(collatz: Tampering, name: str) -> None:
    tamper, match = SHARED[name]
    module = copy.deepcopy(collatz.generated.module)
    tamper(module)
    with pytest.raises(VerifierFailure, match=match):
        collatz.bind(module)


# --- older forms approved by node identity: owned lists, list-read views, map chunks ---------------


def _calls(fn: ast.AST, stub: str) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(fn)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == stub
    ]


def _statement_holding(fn: ast.AST, wanted: ast.stmt) -> tuple[list[ast.stmt], int]:
    for node in ast.walk(fn):
        for field in ("body", "orelse"):
            body = getattr(node, field, None)
            if isinstance(body, list) and any(stmt is wanted for stmt in body):
                return body, next(i for i, stmt in enumerate(body) if stmt is wanted)
    raise AssertionError("not found")


def _at(text: str, **fields: Any) -> Any:
    """A statement parsed from ``text`` (fresh nodes, positioned)."""
    stmt = ast.parse(text).body[0]
    for name, value in fields.items():
        setattr(stmt, name, value)
    return stmt


def _buffer_pushed_elsewhere(module: ast.Module) -> None:
    """The first loop's buffer load ``b0`` shared into an extra push in the second owned loop: no
    fuel, no room test (bound before review6, its runs ended in R-HOST-INTERNAL under a list limit)."""
    fn = module.body[0]
    b0 = next(call.args[0] for call in _calls(fn, "_p_push") if ast.unparse(call.args[0]) == "b0")
    push = next(call for call in _calls(fn, "_p_push") if ast.unparse(call.args[0]) == "b1")
    body, index = _statement_holding(fn, next(s for s in ast.walk(fn) if getattr(s, "value", None) is push))
    extra = _at("_p_push(b0, 7)")
    extra.value.args[0] = b0
    body.insert(index + 1, extra)


def _list_copied_to_a_slot(module: ast.Module) -> None:
    """A reader's list argument (approved by identity) shared into a copy to another slot."""
    fn = module.body[0]
    v2 = _calls(fn, "_s_i_list_count")[0].args[4]
    body: Any = fn.body  # type: ignore[attr-defined]
    index = next(i for i, stmt in enumerate(body) if ast.unparse(stmt) == "v4 = 0")
    body.insert(index + 1, _at("v9 = v2", value=v2))


def _view_read_unguarded(module: ast.Module) -> None:
    """The guarded view read ``g0[v6]`` shared into the exact path that runs when its test fails."""
    fn = module.body[0]
    guarded: Any = next(
        n
        for n in ast.walk(fn)
        if isinstance(n, ast.If) and ast.unparse(n.test).startswith("f >= t17 and v6 >= 0")
    )
    guarded.orelse[0] = _at("t18 = g0[v6]", value=guarded.body[1].value)


OWNED = {
    "an owned loop's buffer pushed elsewhere": (_buffer_pushed_elsewhere, "stands at two places"),
    "an owned list copied to another slot": (_list_copied_to_a_slot, "stands at two places"),
    "a view read outside its guard": (_view_read_unguarded, "behind its fuel and range test"),
}


@pytest.fixture(scope="module")
def owned() -> Tampering:
    from .test_owned_lists import BUILD

    return Tampering(BUILD)


@pytest.mark.parametrize("name", sorted(OWNED))
def test_an_owned_list_or_view_node_shared_into_another_place_is_refused(owned: Tampering, name: str) -> None:
    tamper, match = OWNED[name]
    owned.bind()  # as generated: passes
    module = copy.deepcopy(owned.generated.module)
    tamper(module)
    with pytest.raises(VerifierFailure, match=match):
        owned.bind(ast.fix_missing_locations(module))


def test_a_map_chunk_tally_shared_out_of_its_exact_fuel_is_refused() -> None:
    """Rule 20 approves the fuel and tally names inside a fault stub's exact fuel by identity; the
    tally node of ``f - (mc0 + 10)`` shared into that stub's operand is a read of it elsewhere."""
    from .test_map_chunks import COUNT

    chunk = Tampering(COUNT)
    module = copy.deepcopy(chunk.generated.module)
    fault = next(c for c in _calls(module, "_s_f2") if ast.unparse(c.args[1]) == "f - (mc0 + 10)")
    tally: Any = fault.args[1]
    fault.args[4] = tally.right.left
    assert ast.unparse(fault).startswith("_s_f2(R, f - (mc0 + 10), lr + (n0 - (v3 - k0) - 1), 3, mc0, 31)")
    with pytest.raises(VerifierFailure, match="the fuel or tally read outside"):
        chunk.bind(module)
