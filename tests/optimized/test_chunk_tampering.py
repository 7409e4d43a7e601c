"""Tampered fast chunks (verifier rules 20-22) and tampered owned-map cells, from the adversarial
review of issue 16's fast forms.

Two kinds of test (and a third for owned lists, below). Tamperings the verifier must refuse - a mutable buffer, dict, cell, view or
parts list escaping a fast chunk, a chunk without its reservation or with a cheaper one, a fault
stub's fuel changed, the tally's overshoot test skipped - each rewritten into a real generated
module and bound (``Tampering``). And tamperings the verifier admits by design (rule 14 confines
an owned map's units cell but does not prove what is written into it): a module that writes a
smaller count, or one that goes back, used to lower the meter's allocation and collection
elements - a negative settlement - so a run held more map entries than its policy allows and
succeeded. Those are run: the settlement's own checks (``settle_checks``) must fail them closed
(``R-HOST-INTERNAL``) where the reference refuses the kernel on its limit.
"""

from __future__ import annotations

import ast
import copy
import dataclasses

import pytest

from dotboxd.host import ExecutionResult, SandboxHost
from dotboxd.runtime.optimized import ArtifactCache, OptimizedBackend
from dotboxd.runtime.optimized.artifact import ArtifactKey, bind
from dotboxd.runtime.optimized.codegen import GenOptions, generate
from dotboxd.runtime.optimized.settle_checks import least_units
from dotboxd.validator.plan import ExecutionPlan

from .kernels import policy, prepare
from .tampering import Tampering
from .test_list_chunks import CHUNKS
from .test_map_chunks import COUNT
from .test_owned_string_chunks import NUMBERS

_MAP_BODY = "                v4 = t4 % 17\n                t5 = v4 in m0"
_MAP_NEW = "                    m0[v4] = 1\n                    t3 = t3 + t18"
MAP_CHUNK = {
    "dict copied in the fast body": (_MAP_BODY, _MAP_BODY.replace("t5 =", "t20 = m0\n                t5 =")),
    "cell copied in the fast body": (_MAP_BODY, _MAP_BODY.replace("t5 =", "t20 = u0\n                t5 =")),
    "dict stored into itself": (_MAP_NEW, _MAP_NEW.replace("= 1", "= m0")),
    "cell stored into the dict": (_MAP_NEW, _MAP_NEW.replace("= 1", "= u0")),
    "dict returned from the fast body": (
        _MAP_BODY,
        _MAP_BODY.replace("t5 =", "if v4 == 99:\n                    return (m0, f)\n                t5 ="),
    ),
    "units stored a constant": (_MAP_NEW, _MAP_NEW.replace("t3 + t18", "0")),
    "no reservation": ("n0 = _s_cap(R, f, d, lr, k0, v0, 0, 0, 25, 0)", "n0 = v0 - k0"),
    "a cheaper reservation": (
        "_s_cap(R, f, d, lr, k0, v0, 0, 0, 25, 0)",
        "_s_cap(R, f, d, lr, k0, v0, 0, 0, 2, 0)",
    ),
    "guard on the loop's stop": ("if _p_mcfit(f, n0,", "if _p_mcfit(f, v0,"),
    "a fault stub's fuel raised": ("f - (mc0 + 10)", "f + (mc0 + 10)"),
    "leaves before the overshoot test": (
        "            else:\n                f = f - mc0",
        "            else:\n                k0 = k0 + n0\n                continue\n                f = f - mc0",
    ),
}
"""Rule 20 (the ``COUNT`` kernel's pre-checked chunk), beyond ``test_map_chunks.TAMPERED``."""

_PIECE = "_p_part(p0, _p_strchunk_i2s(v3))"
TEXT_CHUNK = {
    "parts list copied": (
        "            f, t1, t2, t4 = _s_strdone",
        "            t9 = p0\n            f, t1, t2, t4 = _s_strdone",
    ),
    "a piece of the parts list": (_PIECE, "_p_part(p0, _p_strchunk_i2s(p0))"),
    "no reservation": ("n0 = _s_cap(R, f, d, lr, k0, t0, 0, 0, 6, 0)", "n0 = t0 - k0"),
    "a cheaper reservation": (
        "_s_cap(R, f, d, lr, k0, t0, 0, 0, 6, 0)",
        "_s_cap(R, f, d, lr, k0, t0, 0, 0, 1, 0)",
    ),
}
"""Rule 21 (the ``NUMBERS`` kernel's fast text chunk), beyond ``test_owned_string_chunks.TAMPERED``."""

_PUSH = "                _p_push(b0, t3)\n            f = f - c1"
_READ = "                t11 = g0[v4]\n                t12 = t11 * v2"
LIST_CHUNK = {
    "buffer copied": (_PUSH, "                t9 = b0\n" + _PUSH),
    "buffer pushed into itself": (_PUSH, _PUSH.replace("(b0, t3)", "(b0, b0)")),
    "a view pushed": (_PUSH, _PUSH.replace("(b0, t3)", "(b0, g0)")),
    "a view copied": (_READ, _READ + "\n                t9 = g0"),
    "the list materialized inside": (
        _PUSH,
        _PUSH.replace("\n            f =", "\n                v3 = _s_lmat(R, b0)\n            f ="),
    ),
    "no reservation": ("n0 = _s_cap(R, f, d, lr, k0, v0, 0, 0, 9, 0)", "n0 = v0 - k0"),
    "a reservation past the stop": (
        "_s_cap(R, f, d, lr, k0, v0, 0, 0, 9, 0)",
        "_s_cap(R, f, d, lr, k0, v0 + 5, 0, 0, 9, 0)",
    ),
    "a cheaper reservation": (
        "_s_cap(R, f, d, lr, k0, v0, 0, 0, 9, 0)",
        "_s_cap(R, f, d, lr, k0, v0, 0, 0, 1, 0)",
    ),
    "a fault's refund dropped": (
        "                t1 = lr + (n0 - (v4 - k0) - 1)\n                t2 = v4 * v1",
        "                t1 = lr\n                t2 = v4 * v1",
    ),
}
"""Rule 22 (the ``CHUNKS`` kernel's fast list chunks), beyond ``test_list_chunks.CHUNK_TAMPERINGS``."""

_KERNELS = {"map": Tampering(COUNT), "text": Tampering(NUMBERS), "list": Tampering(CHUNKS)}
_CASES = [("map", name, *MAP_CHUNK[name]) for name in sorted(MAP_CHUNK)]
_CASES += [("text", name, *TEXT_CHUNK[name]) for name in sorted(TEXT_CHUNK)]
_CASES += [("list", name, *LIST_CHUNK[name]) for name in sorted(LIST_CHUNK)]


@pytest.mark.parametrize(
    ("kernel", "name", "rewrite", "replacement"), _CASES, ids=[f"{c[0]}: {c[1]}" for c in _CASES]
)
def test_a_tampered_fast_chunk_is_refused(kernel: str, name: str, rewrite: str, replacement: str) -> None:
    _KERNELS[kernel].bind()  # the untampered module passes
    _KERNELS[kernel].assert_rejected(rewrite, replacement)


def test_a_units_store_that_is_not_a_sum_is_refused_for_what_it_is() -> None:
    """Rule 20 named the tampered store; it used to read ``.left`` of a constant and end as a
    "malformed module" (``AttributeError``), refused for the wrong reason."""
    _KERNELS["map"].assert_rejected(*MAP_CHUNK["units stored a constant"], match="units only ever grow")


# --- tampered units cells, run -------------------------------------------------------------------

TWO_MAPS = """module "twomaps" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    a = map.empty[Map<I32, I32>]();
    for i in 0 .. n { a = map.set(a, i, i); }
    b = map.empty[Map<I32, I32>]();
    for i in 0 .. n { b = map.set(b, i, i); }
    return map.count(a) + map.count(b);
}"""
"""Two owned maps of ``n`` new keys each: ``n (n + 1) / 2`` units apiece (``collectionElements``),
so at ``n = 60`` the second map passes a total of 3,000 elements part way."""

_TIGHT = policy(max_total_collection_elements=3000, max_fuel=10**9, max_allocated_bytes=10**9)
_CHECKED_CELLS = (("u0[0] = t7\n", "u0[0] = {}\n", "t7"), ("u1[0] = t16\n", "u1[0] = {}\n", "t16"))
"""The checked chunks' cell writes (under ``_TIGHT`` no pre-checked chunk fits, so they run)."""


def _run_tampered(plan: ExecutionPlan, rewrites: list[tuple[str, str]], args: list[int]) -> ExecutionResult:
    """Run ``main(*args)`` on a module generated for ``plan`` with ``rewrites`` applied: verified
    and bound as any artifact, then served from a cache that holds only it."""
    generated = generate(plan)
    source = ast.unparse(generated.module)
    for old, new in rewrites:
        assert old in source, old
        source = source.replace(old, new, 1)
    key = ArtifactKey.for_plan(plan, GenOptions())
    artifact = bind(plan, key, ast.parse(source), copy.deepcopy(generated.tables), generated.ir_nodes)
    cache = ArtifactCache(capacity=2)
    cache._remember(key.digest(), artifact)  # the verified tampered module stands in for the generated one
    host = SandboxHost(backends={"optimized": OptimizedBackend(cache=cache)})
    return host.execute(plan, "main", args, backend="optimized")


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("never written", "0"),
        ("counting one unit an update", "{units} - {units} + 1"),
        ("past the room", "{units} + 100000"),
        ("not an int", "{units} * 1.0"),
    ],
)
def test_a_tampered_units_cell_fails_closed_where_the_reference_refuses(name: str, value: str) -> None:
    plan = prepare(TWO_MAPS, _TIGHT)
    reference = SandboxHost().execute(plan, "main", [60])
    assert reference.error is not None and reference.error.code == "R-QUOTA-COLLECTION-ELEMENTS"
    rewrites = [(old, new.format(value.format(units=units))) for old, new, units in _CHECKED_CELLS]
    result = _run_tampered(plan, rewrites, [60])
    assert result.error is not None and result.error.code == "R-HOST-INTERNAL", (name, result.usage.to_json())


def test_a_units_cell_that_goes_back_fails_closed() -> None:
    """A cell written lower after a settlement made the next settlement negative: the meter's
    elements and allocation went down and the second map fit (the run succeeded with 120)."""
    plan = prepare(TWO_MAPS, _TIGHT)
    back = ("        break\n    v1 = _s_mmat", "        break\n    u0[0] = 0 - t3\n    v1 = _s_mmat")
    result = _run_tampered(plan, [back], [60])
    assert result.error is not None and result.error.code == "R-HOST-INTERNAL"
    assert result.usage.collection_elements >= 0


def test_untampered_cells_settle_as_the_reference_charges() -> None:
    """The same harness with nothing rewritten agrees with the reference (so the refusals above
    are the cells' doing), under the tight limit and with room for both maps."""
    for limits in (_TIGHT, policy(max_fuel=10**9)):
        plan = dataclasses.replace(prepare(TWO_MAPS), policy=limits)
        reference = SandboxHost().execute(plan, "main", [60])
        result = _run_tampered(plan, [], [60])
        assert result.usage.to_json() == reference.usage.to_json()
        assert (result.error and result.error.code) == (reference.error and reference.error.code)


@pytest.mark.parametrize(
    ("taken", "now", "units"), [(0, 0, 0), (0, 1, 1), (0, 3, 6), (5, 5, 0), (2, 4, 7), (7, 3, 0)]
)
def test_least_units_sums_the_counts_of_the_growth(taken: int, now: int, units: int) -> None:
    assert least_units(taken, now) == units


# --- an owned list's add without its room test, run ---------------------------------------------


@pytest.mark.parametrize(
    "limits",
    [{"max_list_length": 100}, {"max_total_collection_elements": 5000}, {"max_allocated_bytes": 20000}],
    ids=["list length", "collection elements", "allocation"],
)
def test_an_owned_list_add_without_its_room_test_fails_closed(limits: dict[str, int]) -> None:
    """Rule 10 confines the buffer but does not prove the checked add's room test: without it the
    buffer grew past every limit and the settlement charged it, so the run succeeded with its usage
    past its limits (45,150 elements under a limit of 5,000). The settlement now refuses first."""
    plan = dataclasses.replace(prepare(CHUNKS), policy=policy(max_fuel=10**7, **limits))
    reference = SandboxHost().execute(plan, "main", [300, 3, 1])
    assert reference.error is not None and reference.error.code.startswith("R-QUOTA-")
    result = _run_tampered(plan, [("if f >= t5 and t4 < t0:", "if f >= t5:")], [300, 3, 1])
    assert result.error is not None and result.error.code == "R-HOST-INTERNAL", result.usage.to_json()
    limit = plan.policy.limits
    assert result.usage.collection_elements <= limit.max_total_collection_elements
    assert result.usage.allocated_bytes <= limit.max_allocated_bytes
