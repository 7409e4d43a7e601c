"""The verifier ties every bulk reservation and give-back to the plan (a tampered one never runs).

A bulk loop's ``n = _s_cap(...)`` / ``_s_capm(...)`` is the only place its iterations are charged,
its fuel reserved (fast chunks) and the deadline checked; ``_s_lback(R, count)`` refunds reserved
iterations a chunk did not start. Each test takes a real generated module, applies one tampering
of those call sites, and expects ``VerifierFailure`` from ``artifact.bind`` (the only path to
``compile()``). The first one is the defect found last session: a non-fast ``while True:`` chunk
whose reservation became a constant was accepted, because the chunk's ``for ... else: continue``
made the ``while True:`` look like a single pass; its iterations then ran uncharged and its
give-backs refunded iterations never charged.

The counters' room of ``_s_capm`` and the work numbers of ``_s_tick`` are tied to the plan too (the
last tests here; the full tamper sets are in ``test_verifier_plan_ties``).
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable

import pytest

from dotboxd.runtime.optimized.artifact import ArtifactKey, bind
from dotboxd.runtime.optimized.codegen import Generated, GenOptions, generate
from dotboxd.runtime.optimized.errors import VerifierFailure
from dotboxd.validator.plan import ExecutionPlan

from .kernels import FEATURES, prepare

CHUNKS = """module "chunks" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    acc = 0;
    k = n;
    while k > 1 { k = k / 2; acc = acc + test.double(k) % 3; }
    m = n;
    while m > 1 { m = m / 3; }
    return acc + m;
}
"""
"""A checked (not fast) ``while True:`` chunk reserved by ``_s_cap`` (its body calls a binding and
counts nothing), then a fast one."""

Tamper = Callable[[ast.Module], None]


def _reservations(module: ast.Module) -> list[ast.Call]:
    """Every reservation call, in source order."""
    found = []
    for node in ast.walk(module):
        if isinstance(node, ast.While) and isinstance(node.body[0], ast.Assign):
            value = node.body[0].value
            if isinstance(value, ast.Call) and getattr(value.func, "id", "") in ("_s_cap", "_s_capm"):
                found.append((node.lineno, value))
    return [call for _, call in sorted(found, key=lambda item: item[0])]


def _reservation(module: ast.Module, *, bounded: bool, fast: bool, stub: str = "") -> ast.Call:
    """The first reservation of a loop of that kind (bounded: ``while k < e:``; fast: reserves fuel)."""
    for node in ast.walk(module):
        if not (isinstance(node, ast.While) and isinstance(node.body[0], ast.Assign)):
            continue
        call = node.body[0].value
        if not (isinstance(call, ast.Call) and getattr(call.func, "id", "") in ("_s_cap", "_s_capm")):
            continue
        worst = call.args[6]
        assert isinstance(worst, ast.Constant)
        if (
            isinstance(node.test, ast.Compare) == bounded
            and (worst.value != 0) == fast
            and (not stub or getattr(call.func, "id", "") == stub)
        ):
            return call
    raise AssertionError("the base module has no such bulk loop")


def _bind(plan: ExecutionPlan, generated: Generated, tamper: Tamper) -> None:
    module = copy.deepcopy(generated.module)
    tables = copy.deepcopy(generated.tables)
    tamper(module)
    ast.fix_missing_locations(module)
    bind(plan, ArtifactKey.for_plan(plan, GenOptions()), module, tables, generated.ir_nodes)


FEATURES_PLAN = prepare(FEATURES)
FEATURES_BASE = generate(FEATURES_PLAN)
CHUNKS_PLAN = prepare(CHUNKS)
CHUNKS_BASE = generate(CHUNKS_PLAN)


def _refused(plan: ExecutionPlan, base: Generated, tamper: Tamper) -> None:
    with pytest.raises(VerifierFailure):
        _bind(plan, base, tamper)


def test_the_untampered_modules_pass() -> None:
    _bind(FEATURES_PLAN, FEATURES_BASE, lambda module: None)
    _bind(CHUNKS_PLAN, CHUNKS_BASE, lambda module: None)


def _replace_with_constant(call_of: Callable[[ast.Module], ast.Call]) -> Tamper:
    """The reservation's assignment keeps its target; its value becomes ``10**6``."""

    def tamper(module: ast.Module) -> None:
        call = call_of(module)
        for node in ast.walk(module):
            if isinstance(node, ast.Assign) and node.value is call:
                node.value = ast.Constant(10**6)
                return
        raise AssertionError("reservation not found")

    return tamper


# --- the reported gap: a reservation replaced by a constant ------------------------------------------


def test_unmetered_loop_unchecked_while_true_chunk_reservation_replaced_by_constant() -> None:
    """Threat: a checked ``while True:`` chunk runs iterations it never charged (and refunds them)."""
    _refused(
        CHUNKS_PLAN,
        CHUNKS_BASE,
        _replace_with_constant(lambda m: _reservation(m, bounded=False, fast=False, stub="_s_cap")),
    )


def test_unmetered_loop_counter_capped_while_true_chunk_reservation_replaced_by_constant() -> None:
    _refused(
        FEATURES_PLAN,
        FEATURES_BASE,
        _replace_with_constant(lambda m: _reservation(m, bounded=False, fast=False, stub="_s_capm")),
    )


def test_unmetered_loop_fast_while_true_chunk_reservation_replaced_by_constant() -> None:
    _refused(
        CHUNKS_PLAN,
        CHUNKS_BASE,
        _replace_with_constant(lambda m: _reservation(m, bounded=False, fast=True)),
    )


def test_unmetered_loop_bounded_chunk_reservation_replaced_by_constant() -> None:
    _refused(
        FEATURES_PLAN,
        FEATURES_BASE,
        _replace_with_constant(lambda m: _reservation(m, bounded=True, fast=True)),
    )


# --- sibling gaps: the reservation's arguments against the plan ---------------------------------


def _set_arg(call_of: Callable[[ast.Module], ast.Call], at: int, value: ast.expr) -> Tamper:
    def tamper(module: ast.Module) -> None:
        call_of(module).args[at] = value

    return tamper


def _fast_bounded(module: ast.Module) -> ast.Call:
    return _reservation(module, bounded=True, fast=True)


ARGUMENT_TAMPERINGS: dict[str, tuple[ExecutionPlan, Generated, Tamper]] = {
    "fuel passed as a constant (fuel refunded at sync)": (
        FEATURES_PLAN,
        FEATURES_BASE,
        _set_arg(_fast_bounded, 1, ast.Constant(10**9)),
    ),
    "frame budget passed as a constant": (
        FEATURES_PLAN,
        FEATURES_BASE,
        _set_arg(_fast_bounded, 2, ast.Constant(10**6)),
    ),
    "lr passed as a constant (loop iterations refunded at sync)": (
        FEATURES_PLAN,
        FEATURES_BASE,
        _set_arg(_fast_bounded, 3, ast.Constant(10**9)),
    ),
    "bounded start moved back": (FEATURES_PLAN, FEATURES_BASE, _set_arg(_fast_bounded, 4, ast.Constant(0))),
    "bounded stop moved past the loop's end": (
        FEATURES_PLAN,
        FEATURES_BASE,
        _set_arg(_fast_bounded, 5, ast.Constant(10**6)),
    ),
    "while stop given a value": (
        CHUNKS_PLAN,
        CHUNKS_BASE,
        _set_arg(lambda m: _reservation(m, bounded=False, fast=True), 5, ast.Constant(3)),
    ),
    "while start given a value": (
        CHUNKS_PLAN,
        CHUNKS_BASE,
        _set_arg(lambda m: _reservation(m, bounded=False, fast=True), 4, ast.Constant(7)),
    ),
    "fast chunk reserving no fuel (worst 0)": (
        FEATURES_PLAN,
        FEATURES_BASE,
        _set_arg(_fast_bounded, 6, ast.Constant(0)),
    ),
    "fast chunk reserving less fuel (worst 1)": (
        CHUNKS_PLAN,
        CHUNKS_BASE,
        _set_arg(lambda m: _reservation(m, bounded=False, fast=True), 6, ast.Constant(1)),
    ),
    "inlined calls' frames not checked (need 0)": (
        FEATURES_PLAN,
        FEATURES_BASE,
        _set_arg(_fast_bounded, 7, ast.Constant(0)),
    ),
    "iteration work understated (deadline checked rarely)": (
        FEATURES_PLAN,
        FEATURES_BASE,
        _set_arg(_fast_bounded, 8, ast.Constant(1)),
    ),
    "text work dropped (heavy 0)": (
        FEATURES_PLAN,
        FEATURES_BASE,
        _set_arg(lambda m: _reservation(m, bounded=True, fast=False), 9, ast.Constant(0)),
    ),
    "worst given as a bool": (
        FEATURES_PLAN,
        FEATURES_BASE,
        _set_arg(lambda m: _reservation(m, bounded=False, fast=False), 6, ast.Constant(False)),
    ),
}


@pytest.mark.parametrize("name", sorted(ARGUMENT_TAMPERINGS))
def test_unmetered_loop_reservation_arguments_are_the_plans(name: str) -> None:
    """Threat: a reservation whose arguments understate the chunk (its fuel, frames, work) or
    refund fuel or loop iterations at its sync."""
    plan, base, tamper = ARGUMENT_TAMPERINGS[name]
    _refused(plan, base, tamper)


def test_unmetered_loop_reservations_swapped_between_loops() -> None:
    """Each reservation carries its own loop's numbers: the plan order decides which is which."""

    def tamper(module: ast.Module) -> None:
        first, second = _reservations(module)[:2]
        first.args[6:10], second.args[6:10] = second.args[6:10], first.args[6:10]

    _refused(CHUNKS_PLAN, CHUNKS_BASE, tamper)


def test_unmetered_loop_reservation_outside_a_bulk_loop() -> None:
    def tamper(module: ast.Module) -> None:
        body = module.body[0]
        assert isinstance(body, ast.FunctionDef)
        body.body[0:0] = ast.parse("n9 = _s_cap(R, f, d, lr, 0, None, 0, 0, 15, 0)").body

    _refused(CHUNKS_PLAN, CHUNKS_BASE, tamper)


def test_unmetered_loop_bulk_loop_emitted_without_its_reservation() -> None:
    """A plan bulk loop whose chunk is gone (here: the whole second loop) is refused too."""

    def tamper(module: ast.Module) -> None:
        body = module.body[0]
        assert isinstance(body, ast.FunctionDef)
        whiles = [i for i, stmt in enumerate(body.body) if isinstance(stmt, ast.While)]
        del body.body[whiles[-1]]

    _refused(CHUNKS_PLAN, CHUNKS_BASE, tamper)


# --- sibling gaps: give-backs of reserved iterations ---------------------------------------------


def _give_backs(module: ast.AST) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(module)
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "_s_lback"
    ]


def _chunk_with_give_back(module: ast.Module) -> ast.For:
    """The first bulk chunk (its ``for`` over the reserved count) that holds a give-back."""
    for node in ast.walk(module):
        if isinstance(node, ast.For) and node.body and _give_backs(node):
            return node
    raise AssertionError("no chunk")


def test_loop_budget_refund_give_back_of_more_than_reserved() -> None:
    """Threat: ``_s_lback`` subtracts its count from the run's loop iterations, so a larger count
    would hand the run loop budget it never had."""

    def tamper(module: ast.Module) -> None:
        _give_backs(module)[0].args[1] = ast.Constant(10**9)

    _refused(CHUNKS_PLAN, CHUNKS_BASE, tamper)


def test_loop_budget_refund_give_back_outside_a_chunk() -> None:
    _refused(
        CHUNKS_PLAN,
        CHUNKS_BASE,
        lambda m: m.body[0].body.__setitem__(  # type: ignore[attr-defined]
            slice(0, 0), ast.parse("while True:\n    _s_lback(R, 5)\n    break").body
        ),
    )


def test_loop_budget_refund_give_back_that_does_not_leave_the_chunk() -> None:
    """Two give-backs in one iteration would refund twice: each must be followed by break/return."""

    def tamper(module: ast.Module) -> None:
        call = _give_backs(module)[0]
        for node in ast.walk(module):
            for field in ("body", "orelse"):
                block = getattr(node, field, None)
                if isinstance(block, list):
                    for index, stmt in enumerate(block):
                        if isinstance(stmt, ast.Expr) and stmt.value is call:
                            del block[index + 1]  # the break
                            return
        raise AssertionError("give-back not found")

    _refused(CHUNKS_PLAN, CHUNKS_BASE, tamper)


def test_loop_budget_refund_give_back_inside_a_nested_single_pass() -> None:
    """A ``break`` inside a nested ``while True:`` leaves that loop, not the chunk."""

    def tamper(module: ast.Module) -> None:
        node = _chunk_with_give_back(module)
        node.body[0:0] = ast.parse(
            f"while True:\n    _s_lback(R, {node.iter.args[0].id} - {node.target.id})\n    break"  # type: ignore[attr-defined]
        ).body

    _refused(CHUNKS_PLAN, CHUNKS_BASE, tamper)


def test_loop_budget_refund_chunk_body_reassigns_its_count() -> None:
    """``n - j`` bounds the refund only while the body leaves ``n`` and ``j`` alone."""

    def tamper(module: ast.Module) -> None:
        node = _chunk_with_give_back(module)
        reserved = node.iter.args[0].id  # type: ignore[attr-defined]
        node.body[0:0] = ast.parse(f"{reserved} = 1000000").body

    _refused(CHUNKS_PLAN, CHUNKS_BASE, tamper)


def test_loop_budget_refund_bounded_chunk_give_back_with_another_start() -> None:
    def tamper(module: ast.Module) -> None:
        for call in _give_backs(module):
            count = call.args[1]
            # ``n - (v - k) - 1``: make it ``n - (v - 0) - 1``
            if isinstance(count, ast.BinOp) and isinstance(count.left, ast.BinOp):
                index = count.left.right
                if isinstance(index, ast.BinOp):
                    index.right = ast.Constant(0)
                    return
        raise AssertionError("no bounded give-back")

    _refused(FEATURES_PLAN, FEATURES_BASE, tamper)


# --- the counters' room and the work ticks, tied to the plan (more in test_verifier_plan_ties) ---


def test_counter_room_of_a_capped_reservation_is_tied_to_the_plan() -> None:
    """Threat: the room argument of ``_s_capm`` (how far the body's counters may move) caps the chunk
    so that the counter updates whose overflow checks were dropped cannot overflow; a larger room
    would let one overflow silently (a wrong value). The verifier derives the room from the plan's
    counters (``counter_rooms``), so a constant room is refused."""

    def tamper(module: ast.Module) -> None:
        _reservation(module, bounded=False, fast=False, stub="_s_capm").args[10] = ast.Constant(10**9)

    _refused(FEATURES_PLAN, FEATURES_BASE, tamper)


def test_tick_work_is_tied_to_the_plan() -> None:
    """Threat: ``_s_tick(R, f, lr, nodes, heavy)`` at a function's entry counts its work toward the
    next deadline check; understated numbers delay that check. The verifier recomputes them from
    ``work.WorkCounter`` (``ticks``)."""

    def tamper(module: ast.Module) -> None:
        for node in ast.walk(module):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "_s_tick":
                node.args[3] = ast.Constant(0)
                node.args[4] = ast.Constant(0)
                return
        raise AssertionError("no tick")

    _refused(FEATURES_PLAN, FEATURES_BASE, tamper)
