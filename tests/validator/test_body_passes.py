"""Passes 3-7 (names, types, control flow, call graph, literals): evidence and no cascades.

The one-rejecting-one-accepting coverage of every rule lives in the conformance table
(``case_table.py``); these tests pin what a reviewer reads: pointers, evidence and the rule that
one root cause yields one diagnostic.
"""

from __future__ import annotations

import pytest

from dotboxd.core.ast import Function, Literal, LiteralKind, Module, Return, Set, TypeRef, Var, Visibility
from dotboxd.validator.policy import Policy

from .helpers import accept, all_rejections, code_of, codes, fn, main, rejection, text


def test_unknown_local_lists_scope_and_suggests() -> None:
    d = rejection(text(main("count = 1;\nreturn cuont;", params="limit I32")))
    assert d.code == "E-LOCAL-UNKNOWN"
    assert d.evidence == {"name": "cuont", "inScope": ["count", "limit"]}
    assert "count" in d.hint
    assert d.pointer == "/functions/0/body/1/value"


def test_independent_unknown_locals_are_each_reported_once() -> None:
    diags = all_rejections(text(main("x = a;\ny = a;\nreturn b;")))
    assert codes(diags) == ["E-LOCAL-UNKNOWN"] * 3
    assert [d.evidence["name"] for d in diags] == ["a", "a", "b"]


def test_assignment_defines_the_local_even_if_its_value_failed() -> None:
    # `x` is still defined, so the later read of x is not a second (cascading) diagnostic
    diags = all_rejections(text(main("x = nope;\nreturn x;")))
    assert codes(diags) == ["E-LOCAL-UNKNOWN"]


def test_mismatch_evidence_names_both_types() -> None:
    d = rejection(text(main("return a + 1L;", params="a I32")))
    assert (d.code, d.evidence) == ("E-TYPE-MISMATCH", {"operator": "add", "left": "I32", "right": "I64"})
    assert "numeric.toI64" in d.hint


def test_type_error_does_not_cascade_through_expressions() -> None:
    # the bad operand poisons the whole expression, the comparison, the if and the return
    diags = all_rejections(text(main("x = (1 + true) * 2;\nif x > 3 { return x; }\nreturn x + 1;")))
    assert codes(diags) == ["E-TYPE-MISMATCH"]


def test_bad_parameter_type_does_not_cascade_into_uses() -> None:
    diags = all_rejections(text(main("return o + 1;", params="o Object")))
    assert codes(diags) == ["E-TYPE-UNKNOWN"]


def test_call_to_unknown_function_reports_once_and_suggests() -> None:
    diags = all_rejections(text(main("return helpr(1) + 2;"), fn("helper", "return x;", params="x I32")))
    assert codes(diags) == ["E-CALL-UNKNOWN"]
    assert "helper" in diags[0].hint


def test_host_machinery_call_is_clr_ref_not_unknown() -> None:
    # the importer already refuses this name; a programmatic tree reaches the validator
    from dotboxd.core.ast import Call

    call = Call("System.IO.File.ReadAllText", (Literal(LiteralKind.STRING, "x"),))
    f = Function("main", Visibility.ENTRYPOINT, (), TypeRef("String"), (Return(call),))
    m = Module("m", "1.0.0", "1.0.0", (), (f,))
    assert code_of(m) == "E-IR-CLR-REF"


def test_local_type_evidence_points_at_first_assignment() -> None:
    d = rejection(text(main('x = 1;\ny = 2;\nx = "s";\nreturn y;')))
    assert d.code == "E-LOCAL-TYPE"
    assert d.evidence == {
        "local": "x",
        "declared": "I32",
        "assigned": "String",
        "first": "/functions/0/body/0",
    }


def test_function_argument_mismatch_evidence() -> None:
    d = rejection(text(main("return f(1, 2L);"), fn("f", "return a;", params="a I32, b I32")))
    assert d.evidence == {"call": "f", "argument": 2, "expected": "I32", "actual": "I64"}
    assert d.pointer == "/functions/0/body/0/value/args/1"


def test_recursion_evidence_is_the_cycle() -> None:
    d = rejection(
        text(
            main("return a(1);"),
            fn("a", "return b(n);", params="n I32"),
            fn("b", "return c(n);", params="n I32"),
            fn("c", "return a(n);", params="n I32"),
        )
    )
    assert d.code == "E-CALL-RECURSION"
    assert d.evidence["cycle"] == ["a", "b", "c", "a"]
    assert d.message == "recursion: a -> b -> c -> a"
    assert d.pointer == "/functions/1/body/0/value"


def test_self_recursion_and_one_diagnostic_per_cycle() -> None:
    diags = all_rejections(
        text(
            main("return f(1) + g(1);"),
            fn("f", "return f(n);", params="n I32"),
            fn("g", "return h(n);", params="n I32"),
            fn("h", "return g(n);", params="n I32"),
        )
    )
    assert [d.evidence["cycle"] for d in diags] == [["f", "f"], ["g", "h", "g"]]


def test_missing_return_evidence() -> None:
    d = rejection(text(main("if c { return 1; } else { x = 2; }", params="c Bool")))
    assert d.code == "E-FN-RETURN"
    assert d.evidence == {"function": "main", "fallsThroughAfter": "/functions/0/body/0/else/0"}


def test_loop_control_reports_each_stray_statement() -> None:
    diags = all_rejections(text(main("break;\ncontinue;\nreturn 1;")))
    assert codes(diags) == ["E-LOOP-CONTROL", "E-LOOP-CONTROL"]


def test_huge_constant_evidence() -> None:
    d = rejection(
        text(main('s = "' + "x" * 11 + '";\nreturn 1;')), Policy.builder().with_max_string_length(10).build()
    )
    assert (d.code, d.evidence) == ("E-CONST-HUGE", {"length": 11, "limit": 10})


def test_constant_limit_never_exceeds_65536() -> None:
    big = "y" * 65_537
    m = Module(
        "m",
        "1.0.0",
        "1.0.0",
        (),
        (
            Function(
                "main",
                Visibility.ENTRYPOINT,
                (),
                TypeRef("I32"),
                (Set("s", Literal(LiteralKind.STRING, big)), Return(Literal(LiteralKind.I32, 1))),
            ),
        ),
    )
    d = rejection(m, Policy.builder().with_max_string_length(10**6).build())
    assert d.evidence == {"length": 65_537, "limit": 65_536}


@pytest.mark.parametrize(
    ("kind", "value", "code"),
    [
        (LiteralKind.I32, 2**31, "E-CONST-RANGE"),
        (LiteralKind.I32, True, "E-CONST-RANGE"),
        (LiteralKind.I64, -(2**63) - 1, "E-CONST-RANGE"),
        (LiteralKind.F64, float("nan"), "E-CONST-FLOAT"),
        (LiteralKind.F64, float("inf"), "E-CONST-FLOAT"),
        (LiteralKind.BOOL, 1, "E-CONST-RANGE"),
        (LiteralKind.PATH, "../secret.txt", "E-JSON-PATH"),
        (LiteralKind.PATH, "C:\\Windows\\win.ini", "E-JSON-PATH"),
        (LiteralKind.PATH, "con.txt", "E-JSON-PATH"),
        (LiteralKind.URI, "https://user@host/x", "E-JSON-URI"),
        (LiteralKind.URI, "file.txt", "E-JSON-URI"),
        (LiteralKind.GUID, "not-a-guid", "E-JSON-GUID"),
        (LiteralKind.STRING, "ldftn", "E-IR-CLR-REF"),
        (LiteralKind.STRING, 5, "E-CONST-RANGE"),
    ],
)
def test_literal_rules_for_programmatic_trees(kind: LiteralKind, value: object, code: str) -> None:
    lit = Literal(kind, value)  # type: ignore[arg-type]
    f = Function(
        "main",
        Visibility.ENTRYPOINT,
        (),
        TypeRef("I32"),
        (Set("v", lit), Return(Literal(LiteralKind.I32, 1))),
    )
    assert code_of(Module("m", "1.0.0", "1.0.0", (), (f,))) == code


def test_opaque_literal_value_rules() -> None:
    good = Literal(LiteralKind.OPAQUE_ID, "p-1", brand="PlayerId")
    bad = Literal(LiteralKind.OPAQUE_ID, "p 1", brand="PlayerId")
    policy = Policy.builder().declare_opaque_id_type("PlayerId").build()
    for lit, ok in ((good, True), (bad, False)):
        f = Function(
            "main",
            Visibility.ENTRYPOINT,
            (),
            TypeRef("I32"),
            (Set("v", lit), Return(Literal(LiteralKind.I32, 1))),
        )
        m = Module("m", "1.0.0", "1.0.0", (), (f,))
        if ok:
            accept(m, policy)
        else:
            assert code_of(m, policy) == "E-JSON-OPAQUE"


def test_passes_stop_at_the_first_failing_pass() -> None:
    # a scope error and a missing return: the scope pass fails first, control flow never reports
    diags = all_rejections(text(main("x = y;")))
    assert codes(diags) == ["E-LOCAL-UNKNOWN"]


def test_foreign_objects_in_the_tree_are_rejected_not_crashed() -> None:
    one = Literal(LiteralKind.I32, 1)
    f = Function("main", Visibility.ENTRYPOINT, (), TypeRef("I32"), (Return(Var("x")), "junk"))  # type: ignore[arg-type]
    assert code_of(Module("m", "1.0.0", "1.0.0", (), (f,))) == "E-JSON-STATEMENT"
    f = Function("main", Visibility.ENTRYPOINT, (), TypeRef("I32"), (Return(one), Return(object())))  # type: ignore[arg-type]
    assert code_of(Module("m", "1.0.0", "1.0.0", (), (f,))) == "E-JSON-EXPR"
    f = Function("main", Visibility.ENTRYPOINT, (), TypeRef("I32"), (Set(5, one), Return(one)))  # type: ignore[arg-type]
    assert code_of(Module("m", "1.0.0", "1.0.0", (), (f,))) == "E-JSON-SCHEMA"
