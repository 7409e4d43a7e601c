"""Inline reads of a projected host event (issue 16): rule 29 (``verify_inline_reads``) and the form.

A fused read of an entry's projected event is generated as its meter-less path written out
(``inline_reads.form``) in front of its fused stub call. Here: the verifier admits the form only as
rebuilt from its own fallback call, only on the event of an entry rule 25 admits, outside loops,
and refuses every tampered piece (key, charges, cadence, conditions, updates, fallback, escapes,
helpers elsewhere); the form is actually taken (the stub is not called on the common path) and
falls back to the stub exactly where the stub's own fast path declines; and every outcome -
value, error, fuel, every usage counter - agrees with the ordinary path and the reference at every
fuel budget, text limit and across the deadline cadence.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable
from typing import Any

import pytest

from dotboxd.core import costs
from dotboxd.host import Policy, SandboxHost
from dotboxd.runtime.optimized import compile_plan
from dotboxd.runtime.optimized.errors import VerifierFailure
from dotboxd.runtime.optimized.inline_reads import READ_BASE, fallback_of, form
from dotboxd.runtime.optimized.verifier import verify_code
from dotboxd.validator.plan import ExecutionPlan

from .tampering import Tampering
from .test_event_projection import EVENT, HAS, _agree, _hosts, _lane

_GET = Tampering(EVENT)
_HAS = Tampering(HAS)


def test_read_fuel_is_its_base_plus_the_size() -> None:
    """What the form folds: ``costs.read_fuel(n) == READ_BASE + n`` for every size it may meet."""
    assert all(costs.read_fuel(n) == READ_BASE + n for n in range(0, 70_000))


def test_the_event_entry_is_generated_with_inline_reads() -> None:
    for tampering, reads in ((_GET, 2), (_HAS, 4)):
        forms = [node for node in ast.walk(tampering.generated.module) if fallback_of(node) is not None]
        assert len(forms) == reads, tampering.source()
        tampering.bind()
        tampering.bind(ast.parse(tampering.source()))  # the tamperings below start from this
        assert compile_plan(tampering.plan).projected == frozenset({"check"})


def test_a_map_read_of_a_non_event_entry_has_no_inline_form() -> None:
    source = """module "x" version "1.0.0";
entrypoint fn check(ev Map<String, I32>, n I32) -> Bool { return map.get(ev, "hp") > n; }"""
    assert "_p_type" not in Tampering(source).source()


def test_an_escaping_event_keeps_its_fused_calls() -> None:
    source = """module "x" version "1.0.0";
entrypoint fn echo(ev Map<String, I32>) -> Map<String, I32> { t = map.get(ev, "hp"); return ev; }"""
    generated = Tampering(source).source()
    assert "_s_lrget" in generated and "_p_type" not in generated


# --- tampered forms -------------------------------------------------------------------------------

_FORM = "t0 = _p_dget(v0, _q0)"
TAMPERED_FORMS: dict[str, tuple[str, str]] = {
    "wrong key": (_FORM, "t0 = _p_dget(v0, _q1)"),
    "another map's key lookup": (_FORM, "t0 = _p_dget(t9, _q0)"),
    "wrong charge": ("t4 = f - 8 - _p_len(v0)", "t4 = f - 7 - _p_len(v0)"),
    "size not charged": ("t4 = f - 8 - _p_len(v0)", "t4 = f - 8"),
    "wrong fuel written back": ("R.left = f - 6", "R.left = f - 5"),
    "another slot written": ("R.left = f - 6", "R.full = f - 6"),
    "wrong deadline cadence": ("t5 < 64", "t5 < 65"),
    "ticks not counted": ("t5 = R.ticks + 1", "t5 = R.ticks"),
    "literal bytes not counted": ("t3 = R.strings + R.literals[0]", "t3 = R.strings"),
    "room not checked": ("and (t3 <= R.room) ", ""),
    "missing key not checked": ("if t0 is not None and ", "if "),
    "meter not tested": ("_p_type(v0) is _p_dict and R.lazy", "_p_type(v0) is _p_dict and R.room"),
    "fuel not updated": ("f = t4\n", "t1 = t4\n"),
    "the inner fallback missing": (
        "else:\n            t0, f = _s_lrget(R, f, lr, 1, 0, 2, v0)",
        "else:\n            pass",
    ),
    "the outer fallback missing": (
        "else:\n        t0, f = _s_lrget(R, f, lr, 1, 0, 2, v0)",
        "else:\n        pass",
    ),
    "the fallback another read": (
        "else:\n        t0, f = _s_lrget(R, f, lr, 1, 0, 2, v0)",
        "else:\n        t0, f = _s_lrhas(R, f, lr, 1, 0, 2, v0)",
    ),
    "the event escaping through the form": ("t3 = R.strings + R.literals[0]", "t3 = v0"),
    "the event stored by the form": (_FORM, "t0 = v0"),
    "scratch on the fuel": ("t4 = f - 8 - _p_len(v0)", "f = f - 8 - _p_len(v0)"),
    "scratch on the value": ("t3 = R.strings + R.literals[0]", "t0 = R.strings + R.literals[0]"),
    "an attribute of the event": ("t3 = R.strings + R.literals[0]", "t3 = v0.entries"),
}


@pytest.mark.parametrize("name", sorted(TAMPERED_FORMS))
def test_a_tampered_inline_read_is_rejected(name: str) -> None:
    _GET.assert_rejected(*TAMPERED_FORMS[name], match="inline read|literal read|not allowed")


def _with_value_slot(tampering: Tampering, out: str) -> ast.Module:
    """The generated module with its first inline form rebuilt (``form``, so rule 29's rebuild
    matches it) storing its value in ``out``, and the value's later use kept valid."""
    module = copy.deepcopy(tampering.generated.module)
    fn: Any = module.body[0]
    fallback: Any = fallback_of(fn.body[0])
    value = fallback.targets[0].elts[0].id
    scratch = tuple(fn.body[0].body[i].targets[0].id for i in (1, 2, 3))
    fn.body[0] = form(fallback.value, out, scratch, "v0", tampering.generated.tables.totals())
    source = ast.unparse(module).replace(f"t1 = {value} > 0", f"t1 = {out} > 0", 1)
    return ast.parse(source)


def test_the_forms_value_slot_is_never_the_fuel() -> None:
    """review7: the ordinary pair check admits ``f, f = _s_lrget(...)`` (the second store wins),
    but in the form the value is stored first and read as the fuel after it, so a form with its
    value in ``f`` made an event's field the run's fuel (``{"hp": 2**31 - 1}`` reported fuel used
    -2,147,383,640). The same form on a temporary passes (not vacuous)."""
    _GET.bind(_with_value_slot(_GET, "t0"))
    for out in ("f", "c0", "k0", "mc0"):
        with pytest.raises(VerifierFailure, match="value slot"):
            _GET.bind(_with_value_slot(_GET, out))


_HELPERS_ELSEWHERE = {
    "the class helper": "t9 = _p_type(v0)",
    "the dict helper as a value": "t9 = _p_dict",
    "the lookup helper": "t9 = _p_dget(v0, _q0)",
    "a key constant as a value": "t9 = _q0",
    "a key constant called": "t9 = _q0(v0)",
    "an attribute of the run state": "t9 = R.strings",
    "a store to the run state": "R.ticks = 0",
}


@pytest.mark.parametrize("name", sorted(_HELPERS_ELSEWHERE))
def test_the_forms_names_are_refused_elsewhere(name: str) -> None:
    _GET.assert_rejected(
        "    f -= 1\n",
        f"    f -= 1\n    {_HELPERS_ELSEWHERE[name]}\n",
        match="inline read|used as a value|not allowed|targets",
    )


def test_the_form_on_an_entry_whose_event_escapes_is_rejected() -> None:
    _GET.assert_rejected("    f -= 1\n", "    f -= 1\n    t9 = v0\n", match="inline read")


def test_the_form_on_a_non_event_entry_is_rejected() -> None:
    """A plan whose entry is not a host event: a form grafted in (its fallback a genuine fused read
    of a map parameter) is refused, though the read itself passes."""
    source = """module "x" version "1.0.0";
entrypoint fn check(ev Map<String, I32>, n I32) -> Bool { return map.get(ev, "hp") > n; }"""
    other = Tampering(source)
    text = other.source()
    call = "t0, f = _s_lrget(R, f, lr, 1, 0, 2, v0)"
    assert call in text, text
    form = _GET.source().split("def _fn0(R, f, d, lr, v0):\n")[1].split("    f -= 1\n")[0]
    grafted = text.replace(f"    {call}\n", form, 1)
    assert "_p_type" in grafted
    with pytest.raises(VerifierFailure, match="inline read"):
        other.bind(ast.parse(grafted))


def test_the_form_in_a_loop_is_rejected() -> None:
    source = _GET.source()
    form = source.split("def _fn0(R, f, d, lr, v0):\n")[1].split("    f -= 1\n")[0]
    looped = source.replace(
        form,
        "    while True:\n" + "".join(f"    {line}\n" for line in form.splitlines()) + "        break\n",
        1,
    )
    with pytest.raises(VerifierFailure, match=r"inline read"):
        _GET.bind(ast.parse(looped))


def _shared(edit: Callable[[Any], None]) -> ast.Module:
    """A copy of the generated module (``_GET``) whose entry function ``edit`` rewrites in place."""
    module = copy.deepcopy(_GET.generated.module)
    edit(module.body[0])
    return module


def _loop(*body: ast.stmt) -> ast.While:
    return ast.While(ast.Constant(True), [*body, ast.Break()], [])


SHARED_FORM_NODES: dict[str, Callable[[Any], None]] = {
    "the form twice": lambda fn: fn.body.insert(1, fn.body[0]),
    "the form in both branches": lambda fn: fn.body.__setitem__(
        slice(0, 1), [ast.If(ast.Name("d", ast.Load()), [fn.body[0]], [fn.body[0]])]
    ),
    "the form also in a loop": lambda fn: fn.body.insert(1, _loop(fn.body[0])),
    "the form also in the other form's branch": lambda fn: fn.body[4].body.insert(0, fn.body[0]),
    "its fallback also outside": lambda fn: fn.body.insert(1, fn.body[0].orelse[0]),
    "its fuel written back, also outside": lambda fn: fn.body.insert(1, fn.body[0].body[4].body[1]),
    "its tick store, also in a loop": lambda fn: fn.body.insert(1, _loop(fn.body[0].body[4].body[2])),
    "its fast branch, also outside": lambda fn: fn.body.insert(1, fn.body[0].body[4]),
    "its fast branch, also in a loop": lambda fn: fn.body.insert(1, _loop(fn.body[0].body[4])),
    "its test, on another if": lambda fn: setattr(fn.body[4], "test", fn.body[0].test),
}
"""review7: review6's one-place rule and the ordinary checks over rule 29's forms - a form's
statements shared into another place, its run-state stores or its fast branch shared out of it."""


@pytest.mark.parametrize("name", sorted(SHARED_FORM_NODES))
def test_a_forms_node_shared_into_another_place_is_refused(name: str) -> None:
    _GET.bind(_shared(lambda fn: None))  # the untouched copy passes
    with pytest.raises(VerifierFailure, match=r"two places|assignment targets|Attribute"):
        _GET.bind(_shared(SHARED_FORM_NODES[name]))


# --- what the form does ---------------------------------------------------------------------------


def _counting_stubs(laned: SandboxHost, plan: ExecutionPlan) -> list[int]:
    """Wrap the artifact's fused stubs so that each call is counted (the namespace is the
    functions' globals)."""
    backend = laned._backends["optimized"]  # type: ignore[attr-defined]
    artifact = backend._recent[id(plan)][1]
    namespace: dict[str, Any] = artifact.functions["check"].__globals__
    calls = [0]
    for stub in ("_s_lrget", "_s_lrhas"):
        inner: Callable[..., Any] = namespace[stub]

        def counted(*args: Any, _inner: Callable[..., Any] = inner) -> Any:
            calls[0] += 1
            return _inner(*args)

        namespace[stub] = counted
    return calls


def test_the_common_path_calls_no_stub_and_a_missing_key_falls_back() -> None:
    laned, _ = _hosts()
    plan = laned.prepare(EVENT)
    for _ in range(2):
        laned.execute(plan, "check", [{"hp": 1, "level": 1}], backend="optimized")
    assert _lane(laned, plan, "check").projects
    calls = _counting_stubs(laned, plan)
    assert laned.execute(plan, "check", [{"hp": 3, "level": 12}], backend="optimized").value is True
    assert calls[0] == 0, "the inline form was not taken"
    missing = laned.execute(plan, "check", [{"hp": 3}], backend="optimized")
    assert missing.error is not None and missing.error.code == "R-MAP-KEY-MISSING"
    assert calls[0] == 1  # the second read, through its stub (the exact path raises)


_SUMS = "\n".join(f'    s = s + map.get(ev, "k{i % 3}");' for i in range(70))
MANY = f"""module "many" version "1.0.0";
entrypoint fn check(ev Map<String, I32>) -> I32 {{
    s = 0;
{_SUMS}
    return s;
}}"""
"""70 reads in one run: the run's fuel charges cross a deadline check (every 64th), which the
inline form must leave to the stub (the exact path reads the clock there)."""


@pytest.mark.parametrize(
    "limits",
    [
        {},
        {"max_fuel": 300},
        {"max_fuel": 301},
        {"max_total_string_bytes": 140},
        {"max_total_string_bytes": 200},
    ],
    ids=["default", "fuel 300", "fuel 301", "strings 140", "strings 200"],
)
def test_many_reads_cross_the_deadline_cadence_as_the_reference(limits: dict[str, int]) -> None:
    laned, ordinary = _hosts()
    plan = laned.prepare(MANY, Policy.builder().with_limits(**limits).build() if limits else None)
    event = {"k0": 1, "k1": 2, "k2": 3}
    for _ in range(2):
        laned.execute(plan, "check", [event], backend="optimized")
    calls = _counting_stubs(laned, plan)
    laned.execute(plan, "check", [event], backend="optimized")
    if not limits:
        assert 0 < calls[0] < 70, (
            "not vacuous: most reads inline, those from the deadline check on through the stub"
        )
    for ev in (event, {"k0": 1, "k1": 2}, {"k0": 1, "k1": 2, "k2": 3, "x": 4}):
        _agree(laned, ordinary, plan, "check", [ev])


FUEL = list(range(0, 40))


@pytest.mark.parametrize("fuel", FUEL)
def test_get_reads_agree_at_every_fuel_budget(fuel: int) -> None:
    """``test_event_projection`` sweeps the containsKey kernel; this sweeps the two-get one."""
    laned, ordinary = _hosts()
    plan = laned.prepare(EVENT, Policy.builder().with_limits(max_fuel=fuel).build())
    for _ in range(2):
        laned.execute(plan, "check", [{"hp": 1, "level": 1}], backend="optimized")
    for event in (
        {"hp": 3, "level": 12},
        {"hp": 3},
        {"hp": 0, "level": 1},
        {},
        {"hp": 1, "level": 2, "x": 3},
    ):
        _agree(laned, ordinary, plan, "check", [event])


# --- the code-object check ------------------------------------------------------------------------

_CODE_GLOBALS = frozenset({"_s_fx", "_fn0"})


def test_the_code_check_admits_the_forms_attributes_only() -> None:
    allowed = compile(
        "def _fn0(R, f, d, lr):\n    R.ticks = R.strings\n    return (R.lazy, f)\n", "<x>", "exec"
    )
    verify_code(allowed, _CODE_GLOBALS)
    other = compile("def _fn0(R, f, d, lr):\n    return (R.meter, f)\n", "<x>", "exec")
    with pytest.raises(VerifierFailure, match="LOAD_ATTR of 'meter'"):
        verify_code(other, _CODE_GLOBALS | {"meter"})


def test_the_code_check_refuses_an_attribute_name_as_a_global() -> None:
    source = compile("def _fn0(R, f, d, lr):\n    t0 = R.strings\n    return (strings, f)\n", "<x>", "exec")
    with pytest.raises(VerifierFailure, match="names 'strings'"):
        verify_code(source, _CODE_GLOBALS)
