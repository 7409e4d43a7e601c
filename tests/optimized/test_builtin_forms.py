"""Every built-in record has exactly one optimized form, and every form belongs to a record.

Forms, fastest first: compiled inline by ``codegen`` (constant cost, no host call, cannot fail), a
fast path in front of the exact stub (``fastops.FAST_FORMS``, keyed by the record's implementation
rule), or the exact stub alone (always correct: it runs the reference implementation and charges
through the meter). A fast form registered under a key no record names is dead code, and an inline
form of a built-in that can fail or counts as a host call would skip a charge.
"""

from __future__ import annotations

from dotboxd.core.builtins import BUILTINS, SHARED_RULES
from dotboxd.runtime.optimized import codegen, fastops
from dotboxd.runtime.optimized.stubs import STUBS, exact_intrinsic_stub, intrinsic_stub_name


def _form(name: str) -> str:
    if name in codegen._INLINE_BUILTINS:
        return "inline"
    return "fast" if name in fastops.FAST_PATHS else "exact"


def test_every_record_has_a_stub_in_the_generated_codes_namespace() -> None:
    missing = [name for name in BUILTINS if intrinsic_stub_name(name) not in STUBS]
    assert missing == []


def test_every_fast_form_key_is_a_shared_rule_or_a_records_own_rule() -> None:
    own = {b.rule for b in BUILTINS.values()}
    assert set(fastops.FAST_FORMS) - own == set()
    for key in fastops.FAST_FORMS:
        assert key in SHARED_RULES or key in BUILTINS, key


def test_fast_paths_are_exactly_the_records_whose_rule_has_a_form() -> None:
    expected = set()
    for name, b in BUILTINS.items():
        factory = fastops.FAST_FORMS.get(b.rule)
        if factory is not None and factory(b) is not None:
            expected.add(name)
    assert set(fastops.FAST_PATHS) == expected
    for name in expected:
        assert STUBS[intrinsic_stub_name(name)] is not exact_intrinsic_stub(name)


def test_inline_forms_are_only_for_builtins_that_cannot_skip_a_charge() -> None:
    """``codegen.builtin`` charges an inline built-in its record's base fuel and nothing else: no
    host call, no per-unit fuel."""
    assert set(codegen._INLINE_BUILTINS) <= set(BUILTINS)
    for name in codegen._INLINE_BUILTINS:
        b = BUILTINS[name]
        assert not b.counts_as_host_call and b.cost is not None, name
        assert b.cost.per_input_unit == 0 and b.cost.per_result_byte == 0, name


def test_each_record_has_one_form() -> None:
    forms = {name: _form(name) for name in BUILTINS}
    assert set(forms.values()) <= {"inline", "fast", "exact"}
    assert forms["numeric.toF64"] == "inline" and forms["math.clamp"] == "fast"
    assert forms["string.lastIndexOf"] == "exact"  # RULE_SCAN has no fast form: the exact stub
