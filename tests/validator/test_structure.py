"""Pass 1 (structure) and pass 2 (bindings vs module): rules that hold before bodies are read."""

from __future__ import annotations

from dotboxd.core.ast import (
    Binary,
    BinaryOp,
    CapabilityRequest,
    Function,
    Literal,
    LiteralKind,
    Module,
    Param,
    Return,
    TypeRef,
    Visibility,
)
from dotboxd.core.bindings import BindingRegistry

from .case_table import KILL
from .helpers import accept, all_rejections, bindings, code_of, fn, main, rejection, text


def ret(value: int = 1) -> Return:
    return Return(Literal(LiteralKind.I32, value))


def module(functions: tuple[Function, ...] | None = None, **kw: object) -> Module:
    fns = functions or (Function("main", Visibility.ENTRYPOINT, (), TypeRef("I32"), (ret(),)),)
    base: dict[str, object] = dict(
        id="m", version="1.0.0", target_sandbox_version="1.0.0", capability_requests=(), functions=fns
    )
    base.update(kw)
    return Module(**base)  # type: ignore[arg-type]


def test_minimal_programmatic_module_is_accepted() -> None:
    plan = accept(module())
    assert plan.entrypoints == ("main",)


def test_target_version() -> None:
    assert code_of(module(target_sandbox_version="2.0.0")) == "E-IR-VERSION"
    assert code_of(module(target_sandbox_version="1.0.1")) == "E-IR-VERSION"
    assert code_of(module(target_sandbox_version="0.9.0")) == "E-IR-VERSION"
    assert code_of(module(target_sandbox_version="garbage")) == "E-IR-VERSION"
    d = rejection(module(target_sandbox_version="3.0.0"))
    assert d.evidence == {"version": "3.0.0", "supported": "1.0.0"}


def test_identifier_rules_are_rechecked_for_programmatic_asts() -> None:
    assert code_of(module(id=" ")) == "E-IR-ID"
    assert code_of(module(id="bad\x01id")) == "E-IR-ID"
    f = Function("System.Reflection.Invoke", Visibility.ENTRYPOINT, (), TypeRef("I32"), (ret(),))
    assert code_of(module((f,))) == "E-IR-CLR-REF"
    p = Function("main", Visibility.ENTRYPOINT, (Param("", TypeRef("I32")),), TypeRef("I32"), (ret(),))
    assert code_of(module((p,))) == "E-IR-ID"
    assert code_of(module(metadata=(("note", "see System.IO.File"),))) == "E-IR-CLR-REF"
    req = CapabilityRequest("x.y", reason="uses Assembly.Load")
    assert code_of(module(capability_requests=(req,))) == "E-IR-CLR-REF"


def test_requests() -> None:
    for bad in ("*", "a.*", "a.", "a b", "a.*.b"):
        assert code_of(module(capability_requests=(CapabilityRequest(bad),))) == "E-IR-CAPABILITY", bad
    dup = (CapabilityRequest("a.b", pointer="/r/0"), CapabilityRequest("a.b", pointer="/r/1"))
    d = rejection(module(capability_requests=dup))
    assert (d.code, d.pointer, d.evidence["first"]) == ("E-STRUCT-DUP-CAP", "/r/1", "/r/0")


def test_metadata_required_capabilities_parse() -> None:
    m = text(main("return 1;"), header='meta "dotboxd.requiredCapabilities" = " time.now ;; random ";\n')
    diags = all_rejections(m)
    assert {d.evidence["capability"] for d in diags} == {"time.now", "random"}
    assert code_of(text(main("return 1;"), header='meta "DotBoxD.Anything" = "x";\n')) == "E-STRUCT-METADATA"


def test_duplicates_and_entrypoints() -> None:
    d = rejection(text(main("return 1;"), fn("f", "return 1;"), fn("f", "return 2;")))
    assert d.code == "E-STRUCT-DUP-FN" and d.evidence == {"function": "f", "first": "/functions/1"}
    d = rejection(text(main("return a;", params="a I32, b I32, a Bool")))
    assert (d.code, d.evidence["parameter"]) == ("E-STRUCT-DUP-PARAM", "a")
    d = rejection(text(fn("main", "return 1;"), fn("other", "return 1;")))
    assert d.code == "E-STRUCT-ENTRY" and d.evidence == {"functions": ["main", "other"]}


def test_no_entry_is_not_reported_on_top_of_a_duplicate() -> None:
    # the only function named main is private and duplicated: one root cause per problem, no cascade
    diags = all_rejections(text(fn("main", "return 1;"), fn("main", "return 1;")))
    assert [d.code for d in diags] == ["E-STRUCT-DUP-FN"]


def test_shadowing() -> None:
    # a function may take a built-in's or a binding's id; it shadows it inside the module
    plan = accept(text(main("return list.get(1);"), fn("list.get", "return x;", params="x I32")))
    assert plan.functions["main"].callees == {"list.get"}
    m = text(main("return game.world.kill(3);"), fn("game.world.kill", "return x;", params="x I32"))
    assert accept(m).entrypoints == ("main",)
    plan = accept(m, None, BindingRegistry(bindings(KILL)))
    assert plan.functions["main"].callees == {"game.world.kill"} and plan.required_capabilities == ()
    # the shadowing function's own signature governs the call
    bad = text(main("return game.world.kill(true);"), fn("game.world.kill", "return 1;", params="x I32"))
    assert code_of(bad, None, BindingRegistry(bindings(KILL))) == "E-TYPE-MISMATCH"


def test_nesting_limit_for_programmatic_trees() -> None:
    expr: Binary | Literal = Literal(LiteralKind.I32, 1)
    for _ in range(400):
        expr = Binary(BinaryOp.ADD, expr, Literal(LiteralKind.I32, 1))
    f = Function("main", Visibility.ENTRYPOINT, (), TypeRef("I32"), (Return(expr),))
    assert code_of(module((f,))) == "E-STRUCT-DEPTH"
    expr = Literal(LiteralKind.I32, 1)
    for _ in range(150):
        expr = Binary(BinaryOp.ADD, expr, Literal(LiteralKind.I32, 1))
    f = Function("main", Visibility.ENTRYPOINT, (), TypeRef("I32"), (Return(expr),))
    assert accept(module((f,))).required_effects
