"""Validation-stage threats (threat-model/validation-threats.md, T-VAL-*): each test is an attack."""

from __future__ import annotations

import dataclasses

import pytest

from dotboxd.core.ast import Call, Function, Literal, LiteralKind, Module, Return, Set, TypeRef, Visibility
from dotboxd.core.bindings import BindingRegistry, Cost, host_binding
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.core.effects import Effect
from dotboxd.validator.plan import CallKind
from dotboxd.validator.policy import Policy

from .case_table import KILL, LATER, PEEK
from .helpers import accept, bindings, code_of, fn, main, rejection, text

KILLER = BindingRegistry(bindings(KILL))


def test_laundering_through_a_chain_of_private_helpers_is_traced() -> None:
    depth = 12
    helpers = [fn(f"h{i}", f"return h{i + 1}();") for i in range(depth)]
    helpers.append(fn(f"h{depth}", "ok = game.world.kill(1);\nreturn 1;"))
    d = rejection(text(main("return h0();"), *helpers), None, KILLER)
    assert d.code == "E-POLICY-CAP"
    assert d.evidence["path"] == ["main", *[f"h{i}" for i in range(depth + 1)], "game.world.kill"]


def test_laundering_by_shadowing_a_binding_name_with_a_module_function() -> None:
    # DotBoxD resolves module functions first: the call names the binding, but the module function
    # runs. The plan must say so explicitly (the backends dispatch on it), and neither the capability
    # nor the binding of the shadowed id may leak into the plan.
    m = text(
        main("ok = game.world.kill(1);\nreturn 1;"),
        fn("game.world.kill", "return true;", params="id I32", ret="Bool"),
    )
    plan = accept(m, None, KILLER)
    call = m.functions[0].body[0].value  # type: ignore[attr-defined]
    assert plan.call_target(call).kind is CallKind.FUNCTION
    assert plan.required_capabilities == () and dict(plan.bindings) == {}
    assert plan.functions["main"].bindings_called == frozenset()
    # a strict policy granting the shadowed binding's capability finds it unused
    strict = Policy.builder().grant("game.world.monster.write.kill").reject_unused_grants().build()
    assert code_of(m, strict, KILLER) == "E-POLICY-GRANT"


def test_laundering_through_a_module_function_named_like_a_builtin() -> None:
    m = text(main('return string.length("x");'), fn("string.length", "return 0;", params="s String"))
    plan = accept(m)
    call = m.functions[0].body[0].value  # type: ignore[attr-defined]
    assert plan.call_target(call).kind is CallKind.FUNCTION and plan.functions["main"].callees == {
        "string.length"
    }
    # the built-in stays reachable under its name from a module that does not shadow it
    other = accept(text(main('return string.length("x");')))
    assert other.call_target(other.module.functions[0].body[0].value).kind is CallKind.BUILTIN  # type: ignore[attr-defined]


def test_a_manifest_cannot_strip_required_capabilities() -> None:
    # the kernel declares nothing (no request, no metadata); the IR still requires the capability
    m = text(main("ok = game.world.kill(1);\nreturn 1;"))
    assert code_of(m, None, KILLER) == "E-POLICY-CAP"
    # and metadata can only add to what the IR needs, never remove
    m = text(
        main("ok = game.world.kill(1);\nreturn 1;"), header='meta "dotboxd.requiredCapabilities" = "";\n'
    )
    assert code_of(m, None, KILLER) == "E-POLICY-CAP"


def test_effect_hiding_behind_an_async_binding_is_visible() -> None:
    m = text(main("return f();"), fn("f", "return test.async.echo(2);"))
    d = rejection(m, None, BindingRegistry(bindings(LATER)))
    assert (d.code, d.evidence["capability"]) == ("E-POLICY-CAP", "dotboxd.runtime.async")
    plan = accept(m, Policy.builder().allow_runtime_async().build(), BindingRegistry(bindings(LATER)))
    assert plan.required_effects & Effect.CONCURRENCY and plan.functions["f"].effects & Effect.CONCURRENCY


def test_effect_hiding_by_lying_about_safety_is_refused() -> None:
    @host_binding(
        id="game.world.nuke",
        effects=Effect.CPU | Effect.HOST_STATE_WRITE,
        cost=Cost(1),
        capability="game.world.nuke",
    )
    def nuke(x: bool) -> bool:
        return x

    fake = dataclasses.replace(nuke, safety=type(nuke.safety)("PureIntrinsic"))
    with pytest.raises(DotBoxDError) as info:
        BindingRegistry([fake]).build()
    assert info.value.code == "E-BINDING-SAFETY"


def test_effects_of_a_binding_without_capability_are_refused_at_registration() -> None:
    def sneaky(x: bool) -> bool:
        return x

    with pytest.raises(DotBoxDError) as info:
        BindingRegistry(
            [host_binding(id="game.sneaky", effects=Effect.CPU | Effect.FILE_WRITE, cost=Cost(1))(sneaky)]
        ).build()
    assert info.value.code == "E-BINDING-CAP"


def test_recursion_as_unbounded_work_is_refused_even_when_hidden() -> None:
    hidden = text(
        main("return a(1);"),
        fn("a", "if n > 100 { return 0; }\nreturn b(n);", params="n I32"),
        fn("b", "return 1;\nreturn a(n + 1);", params="n I32"),
    )
    assert code_of(hidden) == "E-CALL-RECURSION"


def test_type_confusion_between_numbers_strings_and_ids() -> None:
    policy = Policy.builder().declare_opaque_id_type("PlayerId", "ItemId").build()
    for body in (
        "return a + 1L;",
        'if opaque PlayerId "p" == opaque ItemId "p" { return 1; }\nreturn 0;',
        'if opaque PlayerId "p" == "p" { return 1; }\nreturn 0;',
        "x = map.get(m, 1.5);\nreturn 0;",
        "xs = list.add(list.of(1), 1L);\nreturn 0;",
    ):
        assert code_of(text(main(body, params="a I32, m Map<String, I32>")), policy) == "E-TYPE-MISMATCH", (
            body
        )


def test_opaque_id_forgery_needs_a_declared_brand_and_has_no_string_conversion() -> None:
    m = text(main('p = opaque PlayerId "admin";\nreturn 1;'))
    assert code_of(m) == "E-TYPE-UNKNOWN"
    policy = Policy.builder().declare_opaque_id_type("PlayerId").build()
    accept(m, policy)
    # no built-in turns computed text into an id, so ids cannot be forged from input strings
    forged = text(main("p = numeric.toF64(s);\nreturn 1;", params="s String"))
    assert code_of(forged, policy) == "E-TYPE-MISMATCH"
    # and bindings never take or return brands, so no host call can mint one either
    with pytest.raises(DotBoxDError) as info:
        BindingRegistry(bindings(dict(PEEK, returnType="PlayerId"))).build()
    assert info.value.code == "E-BINDING-TYPE"


def test_host_object_types_cannot_enter_through_signatures_or_generics() -> None:
    for source in (
        main("return 1;", params="o Object"),
        main("x = list.empty[Type]();\nreturn 1;"),
        main("return 1;", params="m Map<String, IServiceProvider>"),
    ):
        assert code_of(text(source)) == "E-TYPE-UNKNOWN"


def test_programmatic_trees_cannot_smuggle_host_names() -> None:
    call = Call("Type.GetType", (Literal(LiteralKind.STRING, "x"),))
    f = Function(
        "main",
        Visibility.ENTRYPOINT,
        (),
        TypeRef("I32"),
        (Set("t", call), Return(Literal(LiteralKind.I32, 1))),
    )
    assert code_of(Module("m", "1.0.0", "1.0.0", (), (f,))) == "E-IR-CLR-REF"


def test_a_request_is_never_a_grant() -> None:
    m = text(
        main("ok = game.world.kill(1);\nreturn 1;"), header='requires "game.world.monster.write.kill";\n'
    )
    assert code_of(m, None, KILLER) == "E-POLICY-CAP"


def test_dead_code_cannot_be_used_to_hide_a_reachable_call() -> None:
    # only statements after an unconditional exit are dead; a call in a branch that may run counts
    m = text(main("if c { return 1; }\nok = game.world.kill(1);\nreturn 2;", params="c Bool"))
    assert code_of(m, None, KILLER) == "E-POLICY-CAP"
