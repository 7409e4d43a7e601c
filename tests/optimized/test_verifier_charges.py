"""Tampered charges and overflow tests (verifier rules 26 and 27, branch verifseg, issue 16).

Why: spec/optimized.md section 10 listed what the verifier did not prove - segment amounts,
fault-stub fuel and site ids, fast-chunk per-iteration charges, overflow tests (an ``if False:``
passed) and rule 21's ``_p_part`` piece. Each test here rewrites one such spot of a real generated
module and expects the verifier to refuse it *by the new rule* (the message names the rule, so a
tampering some older rule already caught would fail the test), next to the untouched module,
which must bind.
"""

from __future__ import annotations

import ast
import copy

import pytest

from dotboxd.runtime.optimized.artifact import bind
from dotboxd.runtime.optimized.cache import fold_negative_literals
from dotboxd.runtime.optimized.codegen import GenOptions, generate_cold
from dotboxd.runtime.optimized.errors import VerifierFailure
from dotboxd.runtime.optimized.tables import OP
from dotboxd.runtime.optimized.verifier import verify_cold_module
from tests.benchmarks.workloads import COLLATZ

from .tampering import Tampering
from .test_blocks import FAULTY
from .test_chunk_fuzz_findings import ZERO_STEPS, _kernel
from .test_list_chunks import CHUNKS
from .test_map_chunks import COUNT
from .test_owned_string_chunks import NUMBERS, WORDS
from .test_scaled_steps import STEP

_LISTS = Tampering(CHUNKS)
_NUMBERS = Tampering(NUMBERS)
_WORDS = Tampering(WORDS)
_STEP = Tampering(STEP)
_MAPS = Tampering(COUNT)
_WALK = Tampering(COLLATZ, GenOptions(block_loops=False))
"""Collatz with its inner loop as a reserved fast chunk (``_s_c<k>``), not an iteration block."""
_BLOCK = Tampering(FAULTY, GenOptions(block_loops=True))
"""An iteration block (rule 24) with segments and overflow tests in its body and fast fault stubs
(``_s_bk<k>``) in its pool chunk: rules 26 and 27 over the block forms (branch verifseg2)."""
_ZERO_STEP = Tampering(_kernel(ZERO_STEPS["beside a counter"][0]))

_IN_IF = " " * 20
"""The indentation of a statement in an ``if`` of a fast list chunk's loop body."""
_CHECKED = " " * 16
"""The indentation of a statement in an ``if`` of a checked chunk's loop body."""
_MUL_TEST = "(t2 > 1073741823 or t2 < -1073741823) and (t2 > 2147483647 or t2 < -2147483648)"

CHARGES = {
    "a segment paid short": (_LISTS, "            f -= 12\n", "            f -= 2\n"),
    "a segment's exhaustion stub on its own": (
        _LISTS,
        "    f -= 3\n    if f < 0:\n        _s_fx(R, f, lr, 2)",
        "    f -= 3\n    _s_fx(R, f, lr, 2)",
    ),
    "a segment without its exhaustion check": (
        _LISTS,
        "            f -= 12\n            if f < 0:\n                _s_fx(R, f, t1, 4)\n",
        "            f -= 12\n",
    ),
    "an owned add's fixed fuel lowered": (
        _LISTS,
        "t5 = t4 + 3 + (t4 + 2) // 64",
        "t5 = t4 + 1 + (t4 + 2) // 64",
    ),
    "an owned add's walk fuel halved": (
        _LISTS,
        "t5 = t4 + 3 + (t4 + 2) // 64",
        "t5 = t4 + 3 + (t4 + 2) // 128",
    ),
    "a fast list chunk's iteration fuel lowered": (
        _LISTS,
        "c1 = n0 * 13 + _p_lcadds(c0, n0)",
        "c1 = n0 * 12 + _p_lcadds(c0, n0)",
    ),
    "a fast list chunk's adds left unpaid": (_LISTS, "c1 = n0 * 13 + _p_lcadds(c0, n0)", "c1 = n0 * 13"),
    "a fast list chunk's read fuel made constant": (_LISTS, "c2 = n1 * (1 + t10)", "c2 = n1 * (1 + 1)"),
    "a fast list chunk's fault fuel raised": (
        _LISTS,
        "f - (v4 - k0) * 13 - 12 - _p_lcadds",
        "f - (v4 - k0) * 13 - 2 - _p_lcadds",
    ),
    "a fast list chunk's fault fuel without its adds": (
        _LISTS,
        "f - (v4 - k0) * 13 - 12 - _p_lcadds(c0, _p_len(b0) - c0), t1, 3",
        "f - (v4 - k0) * 13 - 12, t1, 3",
    ),
    "a fast list chunk's fault at another site": (
        _LISTS,
        "_p_lcadds(c0, _p_len(b0) - c0), t1, 3, v4, v1)",
        "_p_lcadds(c0, _p_len(b0) - c0), t1, 10, v4, v1)",
    ),
    "an owned concatenation's fixed fuel lowered": (_NUMBERS, "t8 = 14 + 2 * t7", "t8 = 4 + 2 * t7"),
    "an owned concatenation's per-unit fuel lowered": (_NUMBERS, "t8 = 14 + 2 * t7", "t8 = 14 + 1 * t7"),
    "a fast text chunk's piece from another operand": (
        _NUMBERS,
        "_p_part(p0, _p_strchunk_i2s(v3))",
        "_p_part(p0, _p_strchunk_i2s(v3 + 1))",
    ),
    "a fast text chunk appends another name": (_WORDS, "_p_part(p0, t4)", "_p_part(p0, v1)"),
    "a literal fetched from another table entry": (_WORDS, "t4 = _s_tlit(R, 1)", "t4 = _s_tlit(R, 0)"),
    "a view read's segment lowered": (_LISTS, "t10 = t9 + 12", "t10 = t9 + 2"),
    "a view read's read fuel dropped": (_LISTS, "t9 = _p_rfuel(t8)", "t9 = t8"),
    "an owned map read's fuel lowered": (_MAPS, "t6 = t2 + 7", "t6 = t2 + 2"),
    "an owned map get's segment dropped": (_MAPS, "t8 = t2 + 10", "t8 = t2 + 2"),
    "an owned map update's walk halved": (_MAPS, "t12 = t2 + 3 + t2 // 32", "t12 = t2 + 3 + t2 // 64"),
    "an owned map update's fuel on another size": (
        _MAPS,
        "t12 = t2 + 3 + t2 // 32",
        "t12 = t18 + 3 + t2 // 32",
    ),
    "a fast chunk's base past the plan's worst": (_STEP, "f -= n0 * 21", "f -= n0 * 22"),
    "a fast chunk's base off its sites'": (_STEP, "f -= n0 * 21", "f -= n0 * 20"),
    "a fast chunk's exit refunds iterations": (
        _WALK,
        "f = f - 2 * t3 - j0 * 22 - 3",
        "f = f - 2 * t3 - j0 * 2 - 3",
    ),
    "a fast chunk's exit drops its tally": (_WALK, "f = f - 2 * t3 - j0 * 22 - 3", "f = f - j0 * 22 - 3"),
    "a fast chunk's exit pays its iterations short": (
        _WALK,
        "f = f - 2 * t3 - j0 * 22 - 3",
        "f = f - 2 * t3 - (j0 - 1) * 22 - 3",
    ),
    "a block body's segment paid short": (_BLOCK, "        f -= 8\n", "        f -= 2\n"),
    "a pool chunk's completion dropped": (_BLOCK, "                    f -= n0 * 28 + 2 * t7\n", ""),
    "a pool chunk's base past the plan's worst": (_BLOCK, "f -= n0 * 28 + 2 * t7", "f -= n0 * 32 + 2 * t7"),
    "a pool chunk's base off its sites'": (_BLOCK, "f -= n0 * 28 + 2 * t7", "f -= n0 * 27 + 2 * t7"),
    "a pool chunk's exit pays its iterations short": (
        _BLOCK,
        "f = f - 2 * t7 - j0 * 28 - 3",
        "f = f - 2 * t7 - j0 * 20 - 3",
    ),
    "a pool chunk's exit drops its tally": (_BLOCK, "f = f - 2 * t7 - j0 * 28 - 3", "f = f - j0 * 28 - 3"),
    "a pool fault stub's tally dropped": (
        _BLOCK,
        "_s_bk2(R, f - 2 * t7, j0, lr + bk0, 7,",
        "_s_bk2(R, f, j0, lr + bk0, 7,",
    ),
    "a pool fault stub's fuel raised": (
        _BLOCK,
        "_s_bk2(R, f - 2 * t7, j0, lr + bk0, 7,",
        "_s_bk2(R, f + 100 - 2 * t7, j0, lr + bk0, 7,",
    ),
    "a fast fault stub's fuel raised": (_STEP, "_s_c2(R, f, v2, 2,", "_s_c2(R, f + 100, v2, 2,"),
    "a fast fault stub's fuel raised inside an expression": (
        _STEP,
        "v4 = _s_c2(R, f, v2, 2,",
        "v4 = 0 + _s_c2(R, f + 100, v2, 2,",
    ),
}
"""Rule 26: kernel, the text replaced (first occurrence), its replacement."""

OVERFLOW = {
    "an overflow test made `if False`": (_LISTS, _MUL_TEST, "False"),
    "an overflow test's bound widened": (_LISTS, _MUL_TEST, _MUL_TEST.replace("2147483647", "4294967295")),
    "an overflow test of another slot": (_LISTS, _MUL_TEST, _MUL_TEST.replace("t2", "t3")),
    "a fault stub hidden in an expression": (
        _LISTS,
        f"if {_MUL_TEST}:\n{_IN_IF}t2 = _s_f2(",
        f"if False:\n{_IN_IF}t2 = 0 + _s_f2(",
    ),
    "a fault stub moved to an else": (
        _LISTS,
        f"if {_MUL_TEST}:\n{_IN_IF}t2 = _s_f2(",
        f"if t2 < 5:\n{_IN_IF}pass\n{_IN_IF[4:]}else:\n{_IN_IF}t2 = _s_f2(",
    ),
    "a fault stub moved into a single pass": (
        _LISTS,
        f"if {_MUL_TEST}:\n{_CHECKED}t2 = _s_f2(R, f, t1, 3, v4, v1)",
        f"if False:\n{_CHECKED}while True:\n{_IN_IF}t2 = _s_f2(R, f, t1, 3, v4, v1)\n{_IN_IF}break",
    ),
    "an exact test under an unrelated branch": (
        _LISTS,
        f"if {_MUL_TEST}:\n{_IN_IF}t2 = _s_f2(",
        f"if t2 > 5:\n{_IN_IF}pass\n{_IN_IF[4:]}else:\n{_IN_IF}if {_MUL_TEST}:\n{_IN_IF}    t2 = _s_f2(",
    ),
    "an operand test's step changed in its else": (_STEP, "v4 = v2 + 715827870", "v4 = v2 + 815827870"),
    "a scaled step changed in its else": (_STEP, "v3 = v4 * 3 + 2", "v3 = v4 * 3 + 1"),
    "an operand test's bound widened": (_STEP, "v2 > 1431655777", "v2 > 1531655777"),
    "a scaled step's bound widened": (_STEP, "if v4 > 715827881:", "if v4 > 815827881:"),
    "a block body's overflow test made `if False`": (
        _BLOCK,
        "if (t2 > 1073741823 or t2 < -1073741823) and (t2 > 2147483647 or t2 < -2147483648):",
        "if False:",
    ),
    "a pool chunk's overflow test made `if False`": (
        _BLOCK,
        "if t6 > 1073741823 and t6 > 2147483647:",
        "if False:",
    ),
    "a pool chunk's operand test widened": (
        _BLOCK,
        "if v1 > 1073741823 and v1 > 2147483607:",
        "if v1 > 1073741823 and v1 > 2147483617:",
    ),
    "a pool chunk's scaled step bound widened": (_BLOCK, "if v6 > 715827882:", "if v6 > 815827882:"),
    "a pool fault stub hidden in an expression": (
        _BLOCK,
        "t3 = _s_bk2(R, f - 2 * t7, j0, lr + bk0, 7, v1, 40)",
        "t3 = 0 + _s_bk2(R, f - 2 * t7, j0, lr + bk0, 7, v1, 40)",
    ),
    "a result test made one-digit only": (
        _STEP,
        "if t1 > 1073741823 and t1 > 2147483647:",
        "if t1 > 1073741823 and t1 > 3147483647:",
    ),
}
"""Rule 27: kernel, the text replaced (first occurrence), its replacement."""


@pytest.mark.parametrize(
    "kernel",
    [_LISTS, _NUMBERS, _WORDS, _STEP, _MAPS, _WALK, _BLOCK],
    ids=["lists", "numbers", "words", "step", "maps", "walk", "block"],
)
def test_untouched_modules_pass(kernel: Tampering) -> None:
    """As generated, as the disk cache reads it back (``-N`` parsed and folded to a constant) and as
    parsed without the fold (rules 26 and 27 read a constant in either spelling)."""
    kernel.bind()
    kernel.bind(fold_negative_literals(ast.parse(kernel.source())))
    kernel.bind(ast.parse(kernel.source()))


@pytest.mark.parametrize("name", sorted(CHARGES))
def test_tampered_charges_are_refused(name: str) -> None:
    kernel, rewrite, replacement = CHARGES[name]
    kernel.assert_rejected(rewrite, replacement, match=r"rule 26 \(charges\).*\(line [0-9]+\)")


@pytest.mark.parametrize("name", sorted(OVERFLOW))
def test_tampered_overflow_tests_are_refused(name: str) -> None:
    kernel, rewrite, replacement = OVERFLOW[name]
    kernel.assert_rejected(rewrite, replacement, match=r"rule 27 \(overflow\).*\(line [0-9]+\)")


def test_fast_text_chunk_fixed_fuel_is_the_checked_forms() -> None:
    """Both calls of a fast text chunk moved to a lower FIXED together (rule 21 wants them equal)."""
    source = _NUMBERS.source()
    lowered = source.replace("_s_strfits(R, f, n0, 14, 11)", "_s_strfits(R, f, n0, 4, 11)")
    lowered = lowered.replace("_s_strdone(R, f, p0, 14)", "_s_strdone(R, f, p0, 4)")
    assert lowered != source
    with pytest.raises(VerifierFailure, match=r"rule 26 \(charges\): a fast text chunk charges"):
        _NUMBERS.bind(ast.parse(lowered))


def _bind_tables(kernel: Tampering, edit: str) -> None:
    tables = copy.deepcopy(kernel.generated.tables)
    site = next(i for i, entry in enumerate(tables.sites) if entry == (OP, "mul_i32"))
    if edit == "op":
        tables.sites[site] = (OP, "mul_i64")
    elif edit == "location":
        tables.site_nodes[site] = tables.site_nodes[site] + 1
    else:
        del tables.site_nodes[site]
    module = copy.deepcopy(kernel.generated.module)
    bind(kernel.plan, kernel.key, module, tables, kernel.generated.ir_nodes)


@pytest.mark.parametrize("edit", ["op", "location", "unlocated"])
def test_fault_sites_are_the_plans_operations(edit: str) -> None:
    """A fault site whose operation is not the plan's at its location (another type, another node,
    or none) is refused before any code is looked at."""
    with pytest.raises(VerifierFailure, match=r"rule 27 \(overflow\): fault site [0-9]+ \(mul_i"):
        _bind_tables(_LISTS, edit)


@pytest.mark.parametrize("kernel", [_STEP, _ZERO_STEP, _WALK], ids=["step", "zero-step", "walk"])
def test_cold_modules_pass(kernel: Tampering) -> None:
    """The exact paths (built on first use, checked code without sign facts) pass rules 26 and 27
    too: ``x = x + 0`` there tests its operand the way a result test reads."""
    tables = kernel.generated.tables.copy()
    verify_cold_module(generate_cold(kernel.plan, tables), tables, kernel.plan, None)


_DELETED = " " * 16
"""The indentation of a statement in a pool chunk's loop body (``_BLOCK``)."""

GUARDS_DELETED = {
    "a block body's result test deleted with its stub": (
        _BLOCK,
        "        if (t2 > 1073741823 or t2 < -1073741823) and (t2 > 2147483647 or t2 < -2147483648):\n"
        "            t2 = _s_f2(R, f, lr + bk0, 5, v4, t1)\n",
        "",
    ),
    "a pool chunk's operand test deleted with its stub": (
        _BLOCK,
        f"{_DELETED}if v1 > 1073741823 and v1 > 2147483607:\n"
        f"{_DELETED}    t3 = _s_bk2(R, f - 2 * t7, j0, lr + bk0, 7, v1, 40)\n"
        f"{_DELETED}else:\n"
        f"{_DELETED}    t3 = v1 + 40\n",
        f"{_DELETED}t3 = v1 + 40\n",
    ),
    "a fast chunk's product test emptied of its stub": (
        _WALK,
        "if t2 > 1073741823 and t2 > 2147483647:\n                            t2 = _s_c2(R, f - 2 * t3, j0, 3, 3, v3)\n",
        "if False:\n                            pass\n",
    ),
}
"""Rule 28 (verifseg2): kernel, the guard and stub removed, what stands in their place."""


@pytest.mark.parametrize("name", sorted(GUARDS_DELETED))
def test_a_guard_deleted_with_its_stub_is_refused(name: str) -> None:
    """What rule 27 cannot see - no stub left to tie a test to - rule 28 does: the table still has
    the site, and no guarded stub in the module names it."""
    kernel, rewrite, replacement = GUARDS_DELETED[name]
    kernel.assert_rejected(
        rewrite, replacement, match=r"rule 28 \(guards\): fault site [0-9]+ \((add|sub|mul)_i"
    )
