"""A ``while`` whose condition computes an operand before its paying call (issue 16, verifseg2).

Why: ``while k1 < math.min(-k1, 1)`` is generated as ``t0 = -v1`` then the paying
``_s_i_math_min`` - the pass's first charge is the second statement, and rule 7 wanted it first,
so a valid kernel failed verification (``R-OPT-VERIFIER``, found by the generated-program
differential test on main c774e5c). Rule 7 now lets plain arithmetic into slots open the pass
(it cannot leave or repeat the pass, so the charge after it still comes first in every pass);
anything else before the charge - a ``continue``, a call - is still refused.
"""

from __future__ import annotations

import pytest

from .differential import differences, run_plan_both
from .kernels import prepare
from .tampering import Tampering

CONDITION_OPERAND = """module "cond" version "1.0.0";
entrypoint fn main(a Bool) -> List<List<I32>> {
    k1 = 0;
    while k1 < math.min(-k1, 1) {
        k1 = k1 + 1;
        for i3 in math.max(k1, -3)..0 {
            xs4 = list.empty[List<I32>]();
        }
    }
    return list.empty[List<I32>]();
}"""

_KERNEL = Tampering(CONDITION_OPERAND)
_PASS = "    while True:\n        t0 = -v1\n"


def test_the_kernel_runs_as_the_reference_does() -> None:
    plan = prepare(CONDITION_OPERAND)
    for reference, optimized in run_plan_both(plan, "main", [[False], [True]]):
        assert reference["error"] is None
        assert not differences(reference, optimized)


def test_the_generated_pass_opens_with_the_operand() -> None:
    assert _PASS in _KERNEL.source()
    _KERNEL.bind()


@pytest.mark.parametrize(
    "replacement",
    [
        _PASS + "        if t0 < 0:\n            continue\n",
        _PASS + "        t0 = _p_len(t0)\n",
    ],
    ids=["a continue before the charge", "a call before the charge"],
)
def test_anything_but_arithmetic_before_the_charge_is_refused(replacement: str) -> None:
    _KERNEL.assert_rejected(_PASS, replacement, match="a loop body does not start with a meter charge")
