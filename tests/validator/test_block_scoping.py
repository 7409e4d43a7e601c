"""Block scoping as in DotBoxD: sibling blocks may bind one name with different types, and a name
bound inside a block is not visible after it (an ``if`` hands on only what both branches bound with
one type, or what the branch that falls through bound when the other always exits)."""

from __future__ import annotations

from dotboxd.core.types import I32, STRING

from .helpers import accept, main, rejection, text


def test_sibling_branches_may_bind_one_name_with_different_types() -> None:
    plan = accept(text(main('if c { x = 1; } else { x = "s"; }\nreturn 1;', params="c Bool")))
    assert plan.local_type("main", "x") == I32  # the first binding's type


def test_a_name_bound_with_two_types_does_not_survive_the_if() -> None:
    d = rejection(text(main('if c { x = 1; } else { x = "s"; }\nreturn x;', params="c Bool")))
    assert d.code == "E-LOCAL-UNKNOWN" and d.pointer == "/functions/0/body/1/value"
    assert d.evidence == {"name": "x", "types": ["I32", "String"], "statement": "/functions/0/body/0"}
    assert "different types (I32 and String)" in d.message


def test_after_the_if_the_name_can_be_bound_afresh_with_any_type() -> None:
    m = text(
        main('if c { x = 1; } else { x = "s"; }\nx = true;\nif x { return 1; }\nreturn 0;', params="c Bool")
    )
    accept(m)


def test_same_type_in_both_branches_survives_and_keeps_its_type() -> None:
    accept(text(main("if c { x = 1; } else { x = 2; }\nreturn x;", params="c Bool")))
    d = rejection(text(main('if c { x = 1; } else { x = 2; }\nx = "s";\nreturn 1;', params="c Bool")))
    assert d.code == "E-LOCAL-TYPE" and d.evidence["first"] == "/functions/0/body/0/then/0"


def test_loop_bodies_bind_one_name_with_different_types() -> None:
    body = 'for i in 0 .. 3 { t = i; }\nfor j in 0 .. 3 { t = "s"; }\nwhile false { t = true; }\nreturn 1;'
    accept(text(main(body)))


def test_a_local_of_an_enclosing_scope_keeps_its_type_inside_blocks() -> None:
    d = rejection(text(main('x = 1;\nif c { x = "s"; }\nreturn x;', params="c Bool")))
    assert d.code == "E-LOCAL-TYPE"


def test_loop_head_records_a_rebound_type_for_the_prover() -> None:
    m = text(main('if c { t = "a"; }\nt = 0;\nwhile t < 3 { t = t + 1; }\nreturn t;', params="c Bool"))
    plan = accept(m)
    loop = m.functions[0].body[2]
    assert plan.local_type("main", "t") == STRING
    assert plan.functions["main"].type_at_loop(loop, "t") == I32
