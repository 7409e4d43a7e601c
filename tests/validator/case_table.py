"""The validate- and policy-stage conformance cases, as data.

One rejecting and one accepting case per validation rule, plus policy cases. ``write_cases()``
renders them into ``conformance/cases/validate/*.json`` and ``conformance/cases/policy/*.json``;
``tests/validator/test_conformance_cases.py`` checks that the files on disk equal this table and runs
every case through the validator directly (the conformance runner runs them too).

Run ``python -m tests.validator.case_table`` after editing the table.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dotboxd.conformance.tools.kit import put_present
from dotboxd.core.codes import category_of

ROOT = Path(__file__).resolve().parents[2]
CASES_DIR = ROOT / "conformance" / "cases"

HEADER = 'module "t" version "1.0.0";\n'


def kernel(*functions: str, header: str = "") -> str:
    """A text-form module: the header, optional header items, then the functions."""
    return HEADER + header + "\n".join(functions) + "\n"


def main(body: str, params: str = "", ret: str = "I32") -> str:
    return f"entrypoint fn main({params}) -> {ret} {{\n{body}\n}}"


def fn(name: str, body: str, params: str = "", ret: str = "I32", entry: bool = False) -> str:
    vis = "entrypoint " if entry else ""
    return f"{vis}fn {name}({params}) -> {ret} {{\n{body}\n}}"


def binding(
    bid: str,
    params: list[Any],
    ret: Any,
    effects: list[str],
    capability: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": bid,
        "parameters": params,
        "returnType": ret,
        "effects": effects,
        "cost": extra.pop("cost", {"baseFuel": 5}),
    }
    if capability is not None:
        out["capability"] = capability
        out.setdefault("audit", "PerCall")
        out.setdefault("safety", "SideEffectingExternal")
    out.update(extra)
    return out


KILL = binding("game.world.kill", ["I32"], "Bool", ["Cpu", "HostStateWrite"], "game.world.monster.write.kill")
READ = binding(
    "test.files.read",
    ["SandboxPath"],
    "String",
    ["Cpu", "Alloc", "FileRead"],
    "file.read",
    isAsync=True,
    audit="PerResource",
    safety="ReadOnlyExternal",
)
CLOCK = binding("test.clock.now", [], "I64", ["Cpu", "Time"], "time.now", safety="ReadOnlyExternal")
DICE = binding(
    "test.dice.roll", ["I32", "I32"], "I32", ["Cpu", "Random"], "random", safety="ReadOnlyExternal"
)
LOG = binding("test.log.info", ["String"], "Unit", ["Cpu", "Audit"], "log.write", auditKind="SandboxLog")
PEEK = binding(
    "game.world.peek", ["I32"], "I32", ["Cpu", "HostStateRead"], "game.world.read", safety="ReadOnlyExternal"
)
LATER = binding(
    "test.async.echo", ["I32"], "I32", ["Cpu"], isAsync=True, safety="PureHostFacade", audit="None"
)
PURE = binding("test.pure.twice", ["I32"], "I32", ["Cpu"], safety="PureIntrinsic", audit="None")

KILL_GRANT = {"id": "game.world.monster.write.kill"}
KILL_CALL = "ok = game.world.kill(1);\nreturn 1;"
FILE_GRANT = {"id": "file.read", "parameters": {"root": "$ROOT", "maxBytesPerRun": "4096"}}
FILES = {"a.txt": "hello"}


def case(
    name: str,
    expect: str,
    description: str,
    *,
    source: str | None = None,
    module: dict[str, Any] | None = None,
    policy: dict[str, Any] | None = None,
    bindings: list[dict[str, Any]] | None = None,
    pointer: str | None = None,
    tags: Iterable[str] = (),
    files: dict[str, str] | None = None,
) -> dict[str, Any]:
    """``expect`` is ``ok`` or a diagnostic code."""
    out: dict[str, Any] = {"name": name, "description": description, "tags": sorted({"validate", *tags})}
    if module is not None:
        out["module"] = module
    else:
        out["kernelText"] = source
    put_present(out, policy=policy, bindings=bindings, files=files)
    exp: dict[str, Any] = {"stage": "validate"}
    if expect == "ok":
        exp["outcome"] = "ok"
    else:
        exp.update(outcome="rejected", diagnostic=expect, error=category_of(expect))
        if pointer is not None:
            exp["pointer"] = pointer
    out["expect"] = exp
    return out


def wire_module(functions: list[dict[str, Any]], **top: Any) -> dict[str, Any]:
    return {"id": "t", "version": "1.0.0", **top, "functions": functions}


def wire_main(
    body: list[dict[str, Any]], ret: Any = "I32", params: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "id": "main",
        "visibility": "entrypoint",
        "parameters": params or [],
        "returnType": ret,
        "body": body,
    }


RET1 = "return 1;"

# ---------------------------------------------------------------------------------------------
# validate/structure

STRUCTURE = [
    case(
        "validate-version-target-2-rejected",
        "E-IR-VERSION",
        "A target sandbox version with major 2 is not supported.",
        module=wire_module(
            [wire_main([{"op": "return", "value": {"i32": 1}}])], targetSandboxVersion="2.0.0"
        ),
        pointer="/targetSandboxVersion",
        tags=["structure"],
    ),
    case(
        "validate-version-target-1-1-rejected",
        "E-IR-VERSION",
        "A target above 1.0.0 is not supported.",
        module=wire_module(
            [wire_main([{"op": "return", "value": {"i32": 1}}])], targetSandboxVersion="1.1.0"
        ),
        tags=["structure"],
    ),
    case(
        "validate-version-target-v1-accepted",
        "ok",
        "Target 'v1' canonicalizes to 1.0.0 and is accepted.",
        module=wire_module([wire_main([{"op": "return", "value": {"i32": 1}}])], targetSandboxVersion="v1"),
        tags=["structure"],
    ),
    case(
        "validate-request-wildcard-rejected",
        "E-IR-CAPABILITY",
        "A capability request may not be a wildcard pattern.",
        source=kernel(main(RET1), header='requires "file.*";\n'),
        tags=["structure", "capability"],
    ),
    case(
        "validate-request-star-rejected",
        "E-IR-CAPABILITY",
        "A capability request may not be '*'.",
        source=kernel(main(RET1), header='requires "*";\n'),
        tags=["structure", "capability"],
    ),
    case(
        "validate-request-trailing-dot-rejected",
        "E-IR-CAPABILITY",
        "A capability request may not end with '.'.",
        source=kernel(main(RET1), header='requires "game.world.";\n'),
        tags=["structure", "capability"],
    ),
    case(
        "validate-request-concrete-accepted",
        "ok",
        "A concrete request that the policy grants is accepted.",
        source=kernel(main(KILL_CALL), header='requires "game.world.monster.write.kill";\n'),
        bindings=[KILL],
        policy={"grants": [KILL_GRANT]},
        tags=["structure", "capability"],
    ),
    case(
        "validate-request-duplicate-rejected",
        "E-STRUCT-DUP-CAP",
        "A capability requested twice is rejected.",
        source=kernel(
            main(KILL_CALL),
            header='requires "game.world.monster.write.kill";\nrequires "game.world.monster.write.kill";\n',
        ),
        bindings=[KILL],
        policy={"grants": [KILL_GRANT]},
        pointer="/capabilityRequests/1",
        tags=["structure"],
    ),
    case(
        "validate-metadata-wildcard-capability-rejected",
        "E-STRUCT-METADATA",
        "dotboxd.requiredCapabilities entries must be concrete capability ids.",
        source=kernel(main(RET1), header='meta "dotboxd.requiredCapabilities" = "time.*";\n'),
        tags=["structure", "metadata"],
    ),
    case(
        "validate-metadata-unknown-reserved-key-rejected",
        "E-STRUCT-METADATA",
        "Unknown metadata keys in the reserved dotboxd. namespace are rejected (fail closed).",
        source=kernel(main(RET1), header='meta "dotboxd.requiredCapability" = "time.now";\n'),
        tags=["structure", "metadata"],
    ),
    case(
        "validate-metadata-plain-key-accepted",
        "ok",
        "Metadata outside the reserved namespace is free text.",
        source=kernel(main(RET1), header='meta "author" = "quest team";\n'),
        tags=["structure", "metadata"],
    ),
    case(
        "validate-metadata-required-capability-needs-grant",
        "E-POLICY-CAP",
        "A capability listed in dotboxd.requiredCapabilities is required and must be granted.",
        source=kernel(main(RET1), header='meta "dotboxd.requiredCapabilities" = "time.now";\n'),
        tags=["metadata", "capability"],
    ),
    case(
        "validate-metadata-required-capability-granted",
        "ok",
        "A metadata-required capability that the policy grants is accepted.",
        source=kernel(main(RET1), header='meta "dotboxd.requiredCapabilities" = "time.now; ";\n'),
        policy={"grants": [{"id": "time.now"}], "allowedEffects": ["Cpu", "Alloc", "Time"]},
        tags=["metadata", "capability"],
    ),
    case(
        "validate-function-duplicate-rejected",
        "E-STRUCT-DUP-FN",
        "Two functions with one id are rejected.",
        source=kernel(main(RET1), fn("helper", RET1), fn("helper", "return 2;")),
        pointer="/functions/2",
        tags=["structure"],
    ),
    case(
        "validate-function-distinct-accepted",
        "ok",
        "Distinct function ids are accepted.",
        source=kernel(main("return helper() + helper2();"), fn("helper", RET1), fn("helper2", "return 2;")),
        tags=["structure"],
    ),
    case(
        "validate-parameter-duplicate-rejected",
        "E-STRUCT-DUP-PARAM",
        "Two parameters with one name are rejected.",
        source=kernel(main("return a;", params="a I32, a I32")),
        pointer="/functions/0/parameters/1",
        tags=["structure"],
    ),
    case(
        "validate-parameter-distinct-accepted",
        "ok",
        "Distinct parameter names are accepted.",
        source=kernel(main("return a + b;", params="a I32, b I32")),
        tags=["structure"],
    ),
    case(
        "validate-no-entrypoint-rejected",
        "E-STRUCT-ENTRY",
        "A module needs at least one entrypoint.",
        source=kernel(fn("main", RET1)),
        tags=["structure"],
    ),
    case(
        "validate-two-entrypoints-accepted",
        "ok",
        "Several entrypoints are allowed.",
        source=kernel(main(RET1), fn("other", "return 2;", entry=True)),
        tags=["structure"],
    ),
    case(
        "validate-function-shadows-builtin-accepted",
        "ok",
        "A module function may take the name of a built-in call; it shadows the built-in inside the module "
        "(module functions resolve first, as in DotBoxD).",
        source=kernel(main("return math.abs(-1);"), fn("math.abs", "return 0;", params="x I32")),
        tags=["structure", "shadow"],
    ),
    case(
        "validate-function-shadows-binding-accepted",
        "ok",
        "A module function may take the id of a registered host binding; it shadows the binding, so the "
        "binding's capability is not required and no grant is needed.",
        source=kernel(
            main("x = game.world.kill(1);\nreturn 1;"),
            fn("game.world.kill", "return true;", params="id I32", ret="Bool"),
        ),
        bindings=[KILL],
        tags=["structure", "shadow"],
    ),
    case(
        "validate-function-dotted-name-accepted",
        "ok",
        "Dotted function names that collide with nothing are fine.",
        source=kernel(main("return my.helpers.one();"), fn("my.helpers.one", RET1)),
        tags=["structure"],
    ),
]

# ---------------------------------------------------------------------------------------------
# validate/types

LIST9 = "List<" * 9 + "I32" + ">" * 9
LIST8 = "List<" * 8 + "I32" + ">" * 8
TYPES = [
    case(
        "validate-type-object-rejected",
        "E-TYPE-UNKNOWN",
        "Host object types are forbidden.",
        source=kernel(main(RET1, params="o Object")),
        pointer="/functions/0/parameters/0/type",
        tags=["types"],
    ),
    case(
        "validate-type-forbidden-case-insensitive-rejected",
        "E-TYPE-UNKNOWN",
        "Forbidden names are matched case-insensitively.",
        source=kernel(main(RET1, params="o STREAM")),
        tags=["types"],
    ),
    case(
        "validate-type-unknown-name-rejected",
        "E-TYPE-UNKNOWN",
        "An unknown type name is rejected.",
        source=kernel(main(RET1, params="o Widget")),
        tags=["types"],
    ),
    case(
        "validate-type-lowercase-scalar-rejected",
        "E-TYPE-UNKNOWN",
        "Scalar names are case-sensitive: 'i32' is unknown.",
        source=kernel(main(RET1, params="o i32")),
        tags=["types"],
    ),
    case(
        "validate-type-deferred-decimal-rejected",
        "E-TYPE-UNKNOWN",
        "Deferred types such as Decimal are rejected.",
        source=kernel(main(RET1, params="o Decimal")),
        tags=["types"],
    ),
    case(
        "validate-type-deferred-option-rejected",
        "E-TYPE-UNKNOWN",
        "Deferred generic types such as Option are rejected.",
        source=kernel(main(RET1, params="o Option<I32>")),
        tags=["types"],
    ),
    case(
        "validate-type-undeclared-brand-rejected",
        "E-TYPE-UNKNOWN",
        "An opaque-id brand the policy does not declare is unknown.",
        source=kernel(main(RET1, params="p PlayerId")),
        tags=["types", "opaque-id"],
    ),
    case(
        "validate-type-declared-brand-accepted",
        "ok",
        "A brand declared by the policy is a type.",
        source=kernel(main(RET1, params="p PlayerId")),
        policy={"declaredOpaqueIdTypes": ["PlayerId"]},
        tags=["types", "opaque-id"],
    ),
    case(
        "validate-type-opaque-literal-undeclared-rejected",
        "E-TYPE-UNKNOWN",
        "An opaque-id literal of an undeclared brand is rejected.",
        source=kernel(main('x = opaque PlayerId "p-1";\nreturn 1;')),
        tags=["types", "opaque-id"],
    ),
    case(
        "validate-type-opaque-literal-declared-accepted",
        "ok",
        "Opaque ids of one declared brand compare with eq.",
        source=kernel(
            main('x = opaque PlayerId "p-1";\nif x == opaque PlayerId "p-2" { return 0; }\nreturn 1;')
        ),
        policy={"declaredOpaqueIdTypes": ["PlayerId"]},
        tags=["types", "opaque-id"],
    ),
    case(
        "validate-type-brands-do-not-mix-rejected",
        "E-TYPE-MISMATCH",
        "Two different brands are different types.",
        source=kernel(main('if opaque PlayerId "a" == opaque ItemId "a" { return 0; }\nreturn 1;')),
        policy={"declaredOpaqueIdTypes": ["PlayerId", "ItemId"]},
        tags=["types", "opaque-id"],
    ),
    case(
        "validate-type-brand-is-not-string-rejected",
        "E-TYPE-MISMATCH",
        "An opaque id is not a String.",
        source=kernel(main('if opaque PlayerId "a" == "a" { return 0; }\nreturn 1;')),
        policy={"declaredOpaqueIdTypes": ["PlayerId"]},
        tags=["types", "opaque-id"],
    ),
    case(
        "validate-type-list-arity-rejected",
        "E-TYPE-ARITY",
        "List takes exactly one type argument.",
        source=kernel(main(RET1, params="xs List<I32, I32>")),
        tags=["types"],
    ),
    case(
        "validate-type-map-arity-rejected",
        "E-TYPE-ARITY",
        "Map takes exactly two type arguments.",
        source=kernel(main(RET1, params="m Map<String>")),
        tags=["types"],
    ),
    case(
        "validate-type-scalar-arguments-rejected",
        "E-TYPE-ARITY",
        "Scalars take no type arguments.",
        source=kernel(main(RET1, params="x I32<I32>")),
        tags=["types"],
    ),
    case(
        "validate-type-record-no-fields-rejected",
        "E-TYPE-ARITY",
        "Record needs at least one field.",
        source=kernel(main(RET1, params="r Record")),
        tags=["types", "record"],
    ),
    case(
        "validate-type-composites-accepted",
        "ok",
        "List, Map and Record types with correct arity are accepted.",
        source=kernel(main(RET1, params="xs List<I32>, m Map<String, List<Bool>>, r Record<I32, String>")),
        tags=["types"],
    ),
    case(
        "validate-type-map-key-f64-rejected",
        "E-TYPE-MAP-KEY",
        "F64 cannot be a map key.",
        source=kernel(main(RET1, params="m Map<F64, I32>")),
        pointer="/functions/0/parameters/0/type/arguments/0",
        tags=["types", "map"],
    ),
    case(
        "validate-type-map-key-guid-rejected",
        "E-TYPE-MAP-KEY",
        "Guid cannot be a map key.",
        source=kernel(main(RET1, params="m Map<Guid, I32>")),
        tags=["types", "map"],
    ),
    case(
        "validate-type-map-key-list-rejected",
        "E-TYPE-MAP-KEY",
        "Composite types cannot be map keys.",
        source=kernel(main(RET1, params="m Map<List<I32>, I32>")),
        tags=["types", "map"],
    ),
    case(
        "validate-type-map-key-unit-rejected",
        "E-TYPE-MAP-KEY",
        "Unit cannot be a map key.",
        source=kernel(main(RET1, params="m Map<Unit, I32>")),
        tags=["types", "map"],
    ),
    case(
        "validate-type-map-keys-accepted",
        "ok",
        "Bool, I32, I64, String, SandboxPath, SandboxUri and brands are map keys.",
        source=kernel(
            main(
                RET1,
                params=(
                    "a Map<Bool, I32>, b Map<I32, I32>, c Map<I64, I32>, d Map<String, I32>, "
                    "e Map<SandboxPath, I32>, f Map<SandboxUri, I32>, g Map<PlayerId, I32>"
                ),
            )
        ),
        policy={"declaredOpaqueIdTypes": ["PlayerId"]},
        tags=["types", "map"],
    ),
    case(
        "validate-type-depth-9-rejected",
        "E-TYPE-DEPTH",
        "Composite nesting deeper than 8 is rejected.",
        source=kernel(main(RET1, params=f"x {LIST9}")),
        tags=["types", "depth"],
    ),
    case(
        "validate-type-depth-8-accepted",
        "ok",
        "Composite nesting of exactly 8 is accepted.",
        source=kernel(main(RET1, params=f"x {LIST8}")),
        tags=["types", "depth"],
    ),
    case(
        "validate-type-list-of-too-deep-rejected",
        "E-TYPE-DEPTH",
        "list.of may not build a type deeper than 8.",
        source=kernel(main("y = list.of(x);\nreturn 1;", params=f"x {LIST8}")),
        tags=["types", "depth"],
    ),
    case(
        "validate-type-generic-unknown-rejected",
        "E-TYPE-UNKNOWN",
        "A genericType is resolved like any other type.",
        source=kernel(main("xs = list.empty[Object]();\nreturn 1;")),
        tags=["types", "generic"],
    ),
    case(
        "validate-mismatch-add-i32-i64-rejected",
        "E-TYPE-MISMATCH",
        "Arithmetic never widens I32 to I64.",
        source=kernel(main("return a + 1L;", params="a I32")),
        pointer="/functions/0/body/0/value",
        tags=["types", "operators"],
    ),
    case(
        "validate-mismatch-mul-i32-f64-rejected",
        "E-TYPE-MISMATCH",
        "Arithmetic never widens I32 to F64.",
        source=kernel(main("x = a * 2.5;\nreturn a;", params="a I32")),
        tags=["types", "operators"],
    ),
    case(
        "validate-arith-explicit-conversion-accepted",
        "ok",
        "numeric.toI64 and numeric.toF64 convert explicitly.",
        source=kernel(
            main(
                "x = numeric.toI64(a) + 1L;\ny = numeric.toF64(a) * 2.5;\nz = numeric.toF64(x);\nreturn a;",
                params="a I32",
            )
        ),
        tags=["types", "operators"],
    ),
    case(
        "validate-mismatch-string-add-rejected",
        "E-TYPE-MISMATCH",
        "add is numeric only; strings use string.concatBudgeted.",
        source=kernel(main('x = "a" + "b";\nreturn 1;')),
        tags=["types", "operators"],
    ),
    case(
        "validate-string-concat-accepted",
        "ok",
        "Strings are joined with string.concatBudgeted.",
        source=kernel(main('x = string.concatBudgeted("a", "b");\nreturn string.length(x);')),
        tags=["types", "strings"],
    ),
    case(
        "validate-mismatch-ordering-strings-rejected",
        "E-TYPE-MISMATCH",
        "Ordering operators need numbers.",
        source=kernel(main('if "a" < "b" { return 0; }\nreturn 1;')),
        tags=["types", "operators"],
    ),
    case(
        "validate-ordering-numbers-accepted",
        "ok",
        "Ordering of two values of one numeric type yields Bool.",
        source=kernel(
            main("if (a < 2) && (2.0 >= 1.5) && (1L <= 3L) { return 0; }\nreturn 1;", params="a I32")
        ),
        tags=["types", "operators"],
    ),
    case(
        "validate-mismatch-eq-i32-i64-rejected",
        "E-TYPE-MISMATCH",
        "eq needs identical types.",
        source=kernel(main("if a == 1L { return 0; }\nreturn 1;", params="a I32")),
        tags=["types", "operators"],
    ),
    case(
        "validate-eq-composites-accepted",
        "ok",
        "eq and ne apply to any two values of identical type.",
        source=kernel(
            main(
                "if (xs == list.of(1, 2)) || (m != map.empty[Map<String, I32>]()) { return 0; }\nreturn 1;",
                params="xs List<I32>, m Map<String, I32>",
            )
        ),
        tags=["types", "operators"],
    ),
    case(
        "validate-mismatch-and-i32-rejected",
        "E-TYPE-MISMATCH",
        "and needs Bool operands.",
        source=kernel(main("if a && true { return 0; }\nreturn 1;", params="a I32")),
        tags=["types", "operators"],
    ),
    case(
        "validate-mismatch-not-i32-rejected",
        "E-TYPE-MISMATCH",
        "not needs a Bool operand.",
        source=kernel(main("if !a { return 0; }\nreturn 1;", params="a I32")),
        tags=["types", "operators"],
    ),
    case(
        "validate-mismatch-negate-bool-rejected",
        "E-TYPE-MISMATCH",
        "Unary minus needs a number.",
        source=kernel(main("x = -b;\nreturn 1;", params="b Bool")),
        tags=["types", "operators"],
    ),
    case(
        "validate-negate-numbers-accepted",
        "ok",
        "Unary minus keeps the numeric type.",
        source=kernel(main("x = -a;\ny = -(2.5);\nz = -(3L);\nreturn x;", params="a I32")),
        tags=["types", "operators"],
    ),
    case(
        "validate-mismatch-if-condition-rejected",
        "E-TYPE-MISMATCH",
        "An if condition must be Bool.",
        source=kernel(main("if a { return 0; }\nreturn 1;", params="a I32")),
        pointer="/functions/0/body/0/condition",
        tags=["types", "control"],
    ),
    case(
        "validate-mismatch-while-condition-rejected",
        "E-TYPE-MISMATCH",
        "A while condition must be Bool.",
        source=kernel(main("while 1 { break; }\nreturn 1;")),
        tags=["types", "control"],
    ),
    case(
        "validate-mismatch-for-bound-i64-rejected",
        "E-TYPE-MISMATCH",
        "forRange bounds must be I32.",
        source=kernel(main("for i in 0 .. 10L { }\nreturn 1;")),
        tags=["types", "control"],
    ),
    case(
        "validate-for-bounds-i32-accepted",
        "ok",
        "forRange over I32 bounds is accepted; its local is I32.",
        source=kernel(main("s = 0;\nfor i in 0 .. n { s = s + i; }\nreturn s;", params="n I32")),
        tags=["types", "control"],
    ),
    case(
        "validate-mismatch-return-rejected",
        "E-TYPE-MISMATCH",
        "The returned value must have the declared return type.",
        source=kernel(main('return "one";')),
        pointer="/functions/0/body/0/value",
        tags=["types", "return"],
    ),
    case(
        "validate-unit-return-accepted",
        "ok",
        "A Unit function returns the unit literal.",
        source=kernel(main("return ();", ret="Unit")),
        tags=["types", "return"],
    ),
    case(
        "validate-mismatch-function-argument-rejected",
        "E-TYPE-MISMATCH",
        "Arguments must match the callee's parameter types.",
        source=kernel(main("return helper(true);"), fn("helper", "return x;", params="x I32")),
        tags=["types", "calls"],
    ),
    case(
        "validate-mismatch-builtin-argument-rejected",
        "E-TYPE-MISMATCH",
        "Built-in arguments are typed exactly (math.abs takes I32).",
        source=kernel(main("x = math.abs(1L);\nreturn 1;")),
        tags=["types", "calls", "builtins"],
    ),
    case(
        "validate-mismatch-list-add-element-rejected",
        "E-TYPE-MISMATCH",
        "list.add needs the list's element type.",
        source=kernel(main('xs = list.add(list.of(1), "two");\nreturn 1;')),
        tags=["types", "collections"],
    ),
    case(
        "validate-mismatch-list-of-mixed-rejected",
        "E-TYPE-MISMATCH",
        "list.of elements share one type.",
        source=kernel(main("xs = list.of(1, 2L);\nreturn 1;")),
        tags=["types", "collections"],
    ),
    case(
        "validate-list-builtins-accepted",
        "ok",
        "list.empty/of/add/count/get type-check together.",
        source=kernel(
            main(
                "xs = list.add(list.empty[I32](), 4);\nys = list.of();\nreturn list.get(xs, 0) + list.count(xs) + list.count(ys);"
            )
        ),
        tags=["types", "collections"],
    ),
    case(
        "validate-mismatch-map-key-argument-rejected",
        "E-TYPE-MISMATCH",
        "map.get needs the map's key type.",
        source=kernel(main("return map.get(m, 1);", params="m Map<String, I32>")),
        tags=["types", "collections"],
    ),
    case(
        "validate-map-builtins-accepted",
        "ok",
        "map.empty/set/get/containsKey/remove type-check together.",
        source=kernel(
            main(
                'm = map.set(map.empty[Map<String, I32>](), "a", 1);\nif map.containsKey(m, "a") { m = map.remove(m, "a"); }\nreturn map.get(m, "b");'
            )
        ),
        tags=["types", "collections"],
    ),
    case(
        "validate-string-builtins-accepted",
        "ok",
        "The string built-ins type-check.",
        source=kernel(
            main(
                's = string.substringBudgeted("hello", 1, 2);\nif string.isEmpty(s) || string.equals(s, "el") { return string.compareOrdinal(s, "x"); }\nreturn string.length(int32.toStringInvariant(7));'
            )
        ),
        tags=["types", "strings", "builtins"],
    ),
    case(
        "validate-math-builtins-accepted",
        "ok",
        "The math built-ins type-check.",
        source=kernel(
            main(
                "a = math.min(math.max(1, 2), math.clamp(5, 0, 3));\nf = math.sqrt(math.floor(math.ceil(math.round(2.5))));\nreturn math.abs(a);"
            )
        ),
        tags=["types", "builtins"],
    ),
]

# ---------------------------------------------------------------------------------------------
# validate/locals

LOCALS = [
    case(
        "validate-local-read-before-set-rejected",
        "E-LOCAL-UNKNOWN",
        "A local must be assigned before it is read.",
        source=kernel(main("return x;")),
        pointer="/functions/0/body/0/value",
        tags=["locals"],
    ),
    case(
        "validate-local-if-without-else-rejected",
        "E-LOCAL-UNKNOWN",
        "A local set only in a then-branch does not survive the if.",
        source=kernel(main("if c { x = 1; }\nreturn x;", params="c Bool")),
        tags=["locals", "scopes"],
    ),
    case(
        "validate-local-both-branches-accepted",
        "ok",
        "A local set in both branches survives the if.",
        source=kernel(main("if c { x = 1; } else { x = 2; }\nreturn x;", params="c Bool")),
        tags=["locals", "scopes"],
    ),
    case(
        "validate-local-other-branch-returns-accepted",
        "ok",
        "A local survives when the other branch always returns.",
        source=kernel(main("if c { return 0; } else { x = 2; }\nreturn x;", params="c Bool")),
        tags=["locals", "scopes"],
    ),
    case(
        "validate-local-other-branch-breaks-accepted",
        "ok",
        "A local survives when the other branch always breaks.",
        source=kernel(
            main("while true { if c { break; } else { x = 2; }\nreturn x; }\nreturn 0;", params="c Bool")
        ),
        tags=["locals", "scopes"],
    ),
    case(
        "validate-local-while-escape-rejected",
        "E-LOCAL-UNKNOWN",
        "A local of a while body does not escape the loop.",
        source=kernel(main("while c { x = 1; break; }\nreturn x;", params="c Bool")),
        tags=["locals", "scopes"],
    ),
    case(
        "validate-local-for-escape-rejected",
        "E-LOCAL-UNKNOWN",
        "A local of a forRange body does not escape the loop.",
        source=kernel(main("for i in 0 .. 3 { x = i; }\nreturn x;")),
        tags=["locals", "scopes"],
    ),
    case(
        "validate-local-loop-var-escape-rejected",
        "E-LOCAL-UNKNOWN",
        "The forRange local does not escape the loop.",
        source=kernel(main("for i in 0 .. 3 { }\nreturn i;")),
        tags=["locals", "scopes"],
    ),
    case(
        "validate-local-outer-update-in-loop-accepted",
        "ok",
        "A loop may update a local declared before it.",
        source=kernel(main("s = 0;\nwhile s < 10 { s = s + 1; }\nreturn s;")),
        tags=["locals", "scopes"],
    ),
    case(
        "validate-local-type-change-rejected",
        "E-LOCAL-TYPE",
        "A local keeps the type of its first assignment.",
        source=kernel(main('x = 1;\nx = "one";\nreturn 1;')),
        pointer="/functions/0/body/1",
        tags=["locals"],
    ),
    case(
        "validate-local-parameter-type-change-rejected",
        "E-LOCAL-TYPE",
        "A parameter keeps its declared type.",
        source=kernel(main("a = true;\nreturn 1;", params="a I32")),
        tags=["locals"],
    ),
    case(
        "validate-local-sibling-scopes-differ-accepted",
        "ok",
        "Sibling blocks may bind one name with different types (block scoping, as in DotBoxD).",
        source=kernel(main('if c { x = 1; } else { x = "s"; }\nreturn 1;', params="c Bool")),
        tags=["locals"],
    ),
    case(
        "validate-local-sibling-scopes-differ-read-after-rejected",
        "E-LOCAL-UNKNOWN",
        "A name the two branches bound with different types does not survive the if.",
        source=kernel(main('if c { x = 1; } else { x = "s"; }\nreturn x;', params="c Bool")),
        pointer="/functions/0/body/1/value",
        tags=["locals"],
    ),
    case(
        "validate-local-same-type-reassign-accepted",
        "ok",
        "Reassigning a local with its own type is fine.",
        source=kernel(main("x = 1;\nx = x + 1;\na = a * 2;\nreturn x + a;", params="a I32")),
        tags=["locals"],
    ),
    case(
        "validate-local-for-shadows-local-rejected",
        "E-LOCAL-SHADOW",
        "A forRange local must be a fresh name.",
        source=kernel(main("i = 5;\nfor i in 0 .. 3 { }\nreturn i;")),
        tags=["locals", "loops"],
    ),
    case(
        "validate-local-for-shadows-parameter-rejected",
        "E-LOCAL-SHADOW",
        "A forRange local may not reuse a parameter name.",
        source=kernel(main("for n in 0 .. n { }\nreturn n;", params="n I32")),
        tags=["locals", "loops"],
    ),
    case(
        "validate-local-for-reuse-sequential-accepted",
        "ok",
        "Consecutive loops may reuse their loop variable name.",
        source=kernel(
            main("s = 0;\nfor i in 0 .. 3 { s = s + i; }\nfor i in 0 .. 3 { s = s - i; }\nreturn s;")
        ),
        tags=["locals", "loops"],
    ),
    case(
        "validate-local-loop-var-assigned-rejected",
        "E-LOCAL-LOOP-VAR",
        "The forRange variable cannot be assigned inside its loop.",
        source=kernel(main("for i in 0 .. 10 { i = i + 1; }\nreturn 0;")),
        tags=["locals", "loops"],
    ),
    case(
        "validate-local-loop-var-nested-assigned-rejected",
        "E-LOCAL-LOOP-VAR",
        "An inner loop cannot assign the outer loop's variable.",
        source=kernel(main("for i in 0 .. 10 { for j in 0 .. 2 { i = j; } }\nreturn 0;")),
        tags=["locals", "loops"],
    ),
    case(
        "validate-local-loop-var-copied-accepted",
        "ok",
        "Copying the loop variable into another local is fine.",
        source=kernel(main("s = 0;\nfor i in 0 .. 10 { k = i + 1;\ns = s + k; }\nreturn s;")),
        tags=["locals", "loops"],
    ),
]

# ---------------------------------------------------------------------------------------------
# validate/calls

RECORD = 'r = record.new[Record<I32, String>](1, "a");\n'
CALLS = [
    case(
        "validate-call-unknown-rejected",
        "E-CALL-UNKNOWN",
        "A call must name a built-in, a module function or a binding.",
        source=kernel(main("return nosuch.thing(1);")),
        pointer="/functions/0/body/0/value",
        tags=["calls"],
    ),
    case(
        "validate-call-unregistered-binding-rejected",
        "E-CALL-UNKNOWN",
        "A binding the host did not register does not exist.",
        source=kernel(main(KILL_CALL)),
        tags=["calls", "bindings"],
    ),
    case(
        "validate-call-registered-binding-accepted",
        "ok",
        "A registered, granted binding is callable.",
        source=kernel(main(KILL_CALL)),
        bindings=[KILL],
        policy={"grants": [KILL_GRANT]},
        tags=["calls", "bindings"],
    ),
    case(
        "validate-call-builtin-arity-rejected",
        "E-CALL-ARITY",
        "Built-ins check their argument count.",
        source=kernel(main("return math.abs(1, 2);")),
        tags=["calls", "builtins"],
    ),
    case(
        "validate-call-function-arity-rejected",
        "E-CALL-ARITY",
        "Module functions check their argument count.",
        source=kernel(main("return helper();"), fn("helper", "return x;", params="x I32")),
        tags=["calls"],
    ),
    case(
        "validate-call-binding-arity-rejected",
        "E-CALL-ARITY",
        "Bindings check their argument count.",
        source=kernel(main("ok = game.world.kill(1, 2);\nreturn 1;")),
        bindings=[KILL],
        policy={"grants": [KILL_GRANT]},
        tags=["calls", "bindings"],
    ),
    case(
        "validate-call-binding-argument-type-rejected",
        "E-TYPE-MISMATCH",
        "Binding arguments are typed exactly.",
        source=kernel(main("ok = game.world.kill(1L);\nreturn 1;")),
        bindings=[KILL],
        policy={"grants": [KILL_GRANT]},
        tags=["calls", "bindings"],
    ),
    case(
        "validate-call-record-new-arity-rejected",
        "E-CALL-ARITY",
        "record.new takes one argument per field.",
        source=kernel(main("r = record.new[Record<I32, String>](1);\nreturn 1;")),
        tags=["calls", "record"],
    ),
    case(
        "validate-call-function-arity-accepted",
        "ok",
        "Calls with the right count and types are accepted.",
        source=kernel(
            main("return helper(2, true);"),
            fn("helper", "if b { return x; }\nreturn 0;", params="x I32, b Bool"),
        ),
        tags=["calls"],
    ),
    case(
        "validate-generic-list-empty-missing-rejected",
        "E-CALL-GENERIC",
        "list.empty needs a genericType.",
        source=kernel(main("xs = list.empty();\nreturn 1;")),
        tags=["calls", "generic"],
    ),
    case(
        "validate-generic-map-empty-missing-rejected",
        "E-CALL-GENERIC",
        "map.empty needs a genericType.",
        source=kernel(main("m = map.empty();\nreturn 1;")),
        tags=["calls", "generic"],
    ),
    case(
        "validate-generic-map-empty-not-map-rejected",
        "E-CALL-GENERIC",
        "map.empty's genericType is the whole Map type.",
        source=kernel(main("m = map.empty[List<I32>]();\nreturn 1;")),
        tags=["calls", "generic"],
    ),
    case(
        "validate-generic-record-new-not-record-rejected",
        "E-CALL-GENERIC",
        "record.new's genericType must be a Record.",
        source=kernel(main("r = record.new[I32](1);\nreturn 1;")),
        tags=["calls", "generic", "record"],
    ),
    case(
        "validate-generic-on-builtin-rejected",
        "E-CALL-GENERIC",
        "Only list.empty, map.empty and record.new take a genericType.",
        source=kernel(main("return math.abs[I32](1);")),
        tags=["calls", "generic"],
    ),
    case(
        "validate-generic-on-function-rejected",
        "E-CALL-GENERIC",
        "Module functions take no genericType.",
        source=kernel(main("return helper[I32]();"), fn("helper", RET1)),
        tags=["calls", "generic"],
    ),
    case(
        "validate-generic-uses-accepted",
        "ok",
        "genericType on list.empty, map.empty and record.new.",
        source=kernel(
            main(
                RECORD
                + "xs = list.empty[String]();\nm = map.empty[Map<I32, Bool>]();\nreturn record.get(r, 0);"
            )
        ),
        tags=["calls", "generic"],
    ),
    case(
        "validate-record-index-out-of-range-rejected",
        "E-CALL-RECORD-INDEX",
        "record.get's index must name a field.",
        source=kernel(main(RECORD + "return record.get(r, 2);")),
        tags=["calls", "record"],
    ),
    case(
        "validate-record-index-negative-rejected",
        "E-CALL-RECORD-INDEX",
        "A negative record index is out of range.",
        source=kernel(main(RECORD + "return record.get(r, -1);")),
        tags=["calls", "record"],
    ),
    case(
        "validate-record-index-not-constant-rejected",
        "E-CALL-RECORD-INDEX",
        "record.get's index must be an i32 literal.",
        source=kernel(main(RECORD + "k = 0;\nreturn record.get(r, k);")),
        tags=["calls", "record"],
    ),
    case(
        "validate-record-index-field-type-accepted",
        "ok",
        "record.get returns the indexed field's type.",
        source=kernel(
            main(RECORD + 'if string.equals(record.get(r, 1), "a") { return record.get(r, 0); }\nreturn 0;')
        ),
        tags=["calls", "record"],
    ),
    case(
        "validate-recursion-direct-rejected",
        "E-CALL-RECURSION",
        "A function may not call itself.",
        source=kernel(
            main("return f(3);"), fn("f", "if n < 1 { return 0; }\nreturn f(n - 1);", params="n I32")
        ),
        tags=["calls", "recursion"],
    ),
    case(
        "validate-recursion-mutual-rejected",
        "E-CALL-RECURSION",
        "Mutual recursion is rejected.",
        source=kernel(
            main("return a(3);"),
            fn("a", "return b(n);", params="n I32"),
            fn("b", "return a(n);", params="n I32"),
        ),
        tags=["calls", "recursion"],
    ),
    case(
        "validate-recursion-three-cycle-rejected",
        "E-CALL-RECURSION",
        "A cycle through three functions is rejected.",
        source=kernel(
            main("return a(1);"),
            fn("a", "return b(n);", params="n I32"),
            fn("b", "return c(n);", params="n I32"),
            fn("c", "if n > 0 { return 0; }\nreturn a(n);", params="n I32"),
        ),
        tags=["calls", "recursion"],
    ),
    case(
        "validate-recursion-in-dead-code-rejected",
        "E-CALL-RECURSION",
        "Recursion is rejected even in dead code (syntactic rule).",
        source=kernel(main("return f();"), fn("f", "return 1;\nreturn f();")),
        tags=["calls", "recursion", "dead-code"],
    ),
    case(
        "validate-recursion-unreachable-rejected",
        "E-CALL-RECURSION",
        "Recursion among unreachable private functions is still rejected.",
        source=kernel(main(RET1), fn("f", "return f();")),
        tags=["calls", "recursion"],
    ),
    case(
        "validate-call-chain-accepted",
        "ok",
        "A deep acyclic call chain is accepted.",
        source=kernel(
            main("return a(1);"),
            fn("a", "return b(n) + c(n);", params="n I32"),
            fn("b", "return c(n);", params="n I32"),
            fn("c", "return n;", params="n I32"),
        ),
        tags=["calls", "recursion"],
    ),
]

# ---------------------------------------------------------------------------------------------
# validate/control-flow

CONTROL = [
    case(
        "validate-break-outside-loop-rejected",
        "E-LOOP-CONTROL",
        "break is only allowed inside a loop.",
        source=kernel(main("break;\nreturn 1;")),
        pointer="/functions/0/body/0",
        tags=["control"],
    ),
    case(
        "validate-continue-in-if-outside-loop-rejected",
        "E-LOOP-CONTROL",
        "continue inside an if but outside a loop is rejected.",
        source=kernel(main("if c { continue; }\nreturn 1;", params="c Bool")),
        tags=["control"],
    ),
    case(
        "validate-break-in-dead-code-rejected",
        "E-LOOP-CONTROL",
        "Dead code is still checked: a stray break is an error.",
        source=kernel(main("return 1;\nbreak;")),
        tags=["control", "dead-code"],
    ),
    case(
        "validate-loop-control-in-loops-accepted",
        "ok",
        "break and continue inside while and forRange bodies.",
        source=kernel(
            main(
                "s = 0;\nfor i in 0 .. 10 { if i == 3 { continue; }\nif i == 8 { break; }\ns = s + i; }\nwhile true { break; }\nreturn s;"
            )
        ),
        tags=["control"],
    ),
    case(
        "validate-missing-return-rejected",
        "E-FN-RETURN",
        "A function must return on every path.",
        source=kernel(main("x = 1;")),
        pointer="/functions/0",
        tags=["control", "return"],
    ),
    case(
        "validate-missing-return-if-without-else-rejected",
        "E-FN-RETURN",
        "An if without else can fall through.",
        source=kernel(main("if c { return 1; }", params="c Bool")),
        tags=["control", "return"],
    ),
    case(
        "validate-missing-return-after-while-true-rejected",
        "E-FN-RETURN",
        "A loop never counts as returning, even while true.",
        source=kernel(main("while true { return 1; }")),
        tags=["control", "return"],
    ),
    case(
        "validate-missing-return-unit-rejected",
        "E-FN-RETURN",
        "Unit functions also end with an explicit return.",
        source=kernel(main("x = 1;", ret="Unit")),
        tags=["control", "return"],
    ),
    case(
        "validate-return-both-branches-accepted",
        "ok",
        "An if whose both branches return ends the function.",
        source=kernel(main("if c { return 1; } else { return 2; }", params="c Bool")),
        tags=["control", "return"],
    ),
    case(
        "validate-return-nested-branches-accepted",
        "ok",
        "Nested if/else chains that return everywhere are fine.",
        source=kernel(
            main("if a > 0 { return 1; } else if a < 0 { return -1; } else { return 0; }", params="a I32")
        ),
        tags=["control", "return"],
    ),
    case(
        "validate-dead-code-type-checked-rejected",
        "E-TYPE-MISMATCH",
        "Statements after return are still type-checked.",
        source=kernel(main('return 1;\nx = 1 + "a";')),
        tags=["control", "dead-code"],
    ),
    case(
        "validate-dead-code-binding-needs-no-grant-accepted",
        "ok",
        "A binding call in dead code adds no effects or capabilities (it can never run).",
        source=kernel(main("return 1;\nok = game.world.kill(1);")),
        bindings=[KILL],
        tags=["control", "dead-code", "capability"],
    ),
]

# ---------------------------------------------------------------------------------------------
# validate/literals

LITERALS = [
    case(
        "validate-const-string-over-limit-rejected",
        "E-CONST-HUGE",
        "A string literal longer than maxStringLength is rejected before the run.",
        source=kernel(main('s = "abcdef";\nreturn 1;')),
        policy={"limits": {"maxStringLength": 5}},
        pointer="/functions/0/body/0/value",
        tags=["literals", "limits"],
    ),
    case(
        "validate-const-string-at-limit-accepted",
        "ok",
        "A string literal of exactly maxStringLength units is accepted.",
        source=kernel(main('s = "abcde";\nreturn 1;')),
        policy={"limits": {"maxStringLength": 5}},
        tags=["literals", "limits"],
    ),
    case(
        "validate-const-string-utf16-over-limit-rejected",
        "E-CONST-HUGE",
        "Lengths count UTF-16 units: an astral character counts 2.",
        source=kernel(main('s = "abcd\\ud83d\\ude00";\nreturn 1;')),
        policy={"limits": {"maxStringLength": 5}},
        tags=["literals", "limits", "utf16"],
    ),
    case(
        "validate-const-string-utf16-at-limit-accepted",
        "ok",
        "Four ASCII units and one BMP character make 5 units.",
        source=kernel(main('s = "abcd\\u00e9";\nreturn 1;')),
        policy={"limits": {"maxStringLength": 5}},
        tags=["literals", "limits", "utf16"],
    ),
]

# ---------------------------------------------------------------------------------------------
# validate/bindings (registry checks)


def kill_with(**changes: Any) -> list[dict[str, Any]]:
    b = dict(KILL)
    for key, value in changes.items():
        if value is None:
            b.pop(key, None)
        else:
            b[key] = value
    return [b]


BINDINGS = [
    case(
        "validate-binding-effect-without-capability-rejected",
        "E-BINDING-CAP",
        "A binding with side effects must require a capability.",
        source=kernel(main(RET1)),
        bindings=kill_with(capability=None, audit="PerCall"),
        tags=["bindings", "registry"],
    ),
    case(
        "validate-binding-capability-pure-effects-rejected",
        "E-BINDING-CAP",
        "A capability that gates only pure effects is an error.",
        source=kernel(main(RET1)),
        bindings=kill_with(effects=["Cpu"]),
        tags=["bindings", "registry"],
    ),
    case(
        "validate-binding-reserved-capability-rejected",
        "E-BINDING-CAP",
        "A binding may not require the runtime's async capability itself.",
        source=kernel(main(RET1)),
        bindings=kill_with(capability="dotboxd.runtime.async"),
        tags=["bindings", "registry"],
    ),
    case(
        "validate-binding-empty-effects-rejected",
        "E-BINDING-EFFECT",
        "A binding declares a non-empty effect set.",
        source=kernel(main(RET1)),
        bindings=kill_with(effects=[]),
        tags=["bindings", "registry"],
    ),
    case(
        "validate-binding-unknown-effect-rejected",
        "E-BINDING-EFFECT",
        "DatabaseRead is not an effect of this implementation.",
        source=kernel(main(RET1)),
        bindings=kill_with(effects=["Cpu", "DatabaseRead"]),
        tags=["bindings", "registry", "effects"],
    ),
    case(
        "validate-binding-effectful-unaudited-rejected",
        "E-BINDING-AUDIT",
        "An effectful binding must be audited.",
        source=kernel(main(RET1)),
        bindings=kill_with(audit="None"),
        tags=["bindings", "registry"],
    ),
    case(
        "validate-binding-unknown-audit-rejected",
        "E-BINDING-AUDIT",
        "The audit level must be known.",
        source=kernel(main(RET1)),
        bindings=kill_with(audit="Loud"),
        tags=["bindings", "registry"],
    ),
    case(
        "validate-binding-dangerous-rejected",
        "E-BINDING-SAFETY",
        "DangerousRequiresReview bindings are never registered.",
        source=kernel(main(RET1)),
        bindings=kill_with(safety="DangerousRequiresReview"),
        tags=["bindings", "registry"],
    ),
    case(
        "validate-binding-false-purity-rejected",
        "E-BINDING-SAFETY",
        "A PureIntrinsic binding must really be pure.",
        source=kernel(main(RET1)),
        bindings=kill_with(safety="PureIntrinsic"),
        tags=["bindings", "registry"],
    ),
    case(
        "validate-binding-file-capability-wrong-effect-rejected",
        "E-BINDING-CAP-EFFECT",
        "A file.read binding must carry FileRead and only Cpu, Alloc or Audit besides.",
        source=kernel(main(RET1)),
        bindings=[dict(READ, effects=["Cpu", "HostStateRead"])],
        tags=["bindings", "registry"],
    ),
    case(
        "validate-binding-file-capability-extra-effect-rejected",
        "E-BINDING-CAP-EFFECT",
        "A file.read binding may not also write files.",
        source=kernel(main(RET1)),
        bindings=[dict(READ, effects=["Cpu", "FileRead", "FileWrite"])],
        tags=["bindings", "registry"],
    ),
    case(
        "validate-binding-negative-cost-rejected",
        "E-BINDING-COST",
        "Costs are integers >= 0.",
        source=kernel(main(RET1)),
        bindings=kill_with(cost={"baseFuel": -1}),
        tags=["bindings", "registry"],
    ),
    case(
        "validate-binding-object-parameter-rejected",
        "E-BINDING-TYPE",
        "Bindings may not take host objects.",
        source=kernel(main(RET1)),
        bindings=kill_with(parameters=["Object"]),
        tags=["bindings", "registry"],
    ),
    case(
        "validate-binding-stream-return-rejected",
        "E-BINDING-TYPE",
        "Bindings may not return streams.",
        source=kernel(main(RET1)),
        bindings=kill_with(returnType="Stream"),
        tags=["bindings", "registry"],
    ),
    case(
        "validate-binding-brand-parameter-rejected",
        "E-BINDING-TYPE",
        "Bindings use built-in types only, never brands.",
        source=kernel(main(RET1)),
        bindings=kill_with(parameters=["PlayerId"]),
        policy={"declaredOpaqueIdTypes": ["PlayerId"]},
        tags=["bindings", "registry", "opaque-id"],
    ),
    case(
        "validate-binding-undotted-id-rejected",
        "E-BINDING-ID",
        "A binding id is a dotted identifier.",
        source=kernel(main(RET1)),
        bindings=kill_with(id="kill"),
        tags=["bindings", "registry"],
    ),
    case(
        "validate-binding-clr-root-rejected",
        "E-BINDING-DANGER",
        "A binding id may not be rooted in a host namespace.",
        source=kernel(main(RET1)),
        bindings=kill_with(id="host.Reflection.invoke"),
        tags=["bindings", "registry"],
    ),
    case(
        "validate-binding-duplicate-rejected",
        "E-BINDING-DUP",
        "A binding id is registered once.",
        source=kernel(main(RET1)),
        bindings=[KILL, KILL],
        tags=["bindings", "registry"],
    ),
    case(
        "validate-binding-builtin-name-rejected",
        "E-BINDING-DUP",
        "A binding may not reuse a built-in call name.",
        source=kernel(main(RET1)),
        bindings=[dict(PURE, id="math.abs")],
        tags=["bindings", "registry"],
    ),
    case(
        "validate-binding-missing-cost-rejected",
        "E-BINDING-REQUIRED",
        "A binding needs a cost model.",
        source=kernel(main(RET1)),
        bindings=kill_with(cost=None),
        tags=["bindings", "registry"],
    ),
    case(
        "validate-binding-pure-intrinsic-accepted",
        "ok",
        "A pure binding needs no capability, audit or grant.",
        source=kernel(main("return test.pure.twice(2);")),
        bindings=[PURE],
        tags=["bindings", "registry"],
    ),
    case(
        "validate-binding-unused-registered-accepted",
        "ok",
        "A registered binding the module does not call needs no grant.",
        source=kernel(main(RET1)),
        bindings=[KILL, READ, CLOCK, DICE, LOG, PEEK],
        tags=["bindings", "registry"],
    ),
]

# ---------------------------------------------------------------------------------------------
# policy/*

POLICY = [
    case(
        "policy-pure-module-default-policy-accepted",
        "ok",
        "A pure module runs under the default policy.",
        source=kernel(main(RET1)),
        tags=["policy"],
    ),
    case(
        "policy-binding-not-granted-rejected",
        "E-POLICY-CAP",
        "A reachable binding's capability must be granted.",
        source=kernel(main(KILL_CALL)),
        bindings=[KILL],
        pointer="/functions/0/body/0/value",
        tags=["policy", "capability"],
    ),
    case(
        "policy-binding-through-private-helper-rejected",
        "E-POLICY-CAP",
        "A capability cannot be laundered through private helpers: the call path is followed.",
        source=kernel(
            main("return a();"), fn("a", "return b();"), fn("b", "ok = game.world.kill(1);\nreturn 1;")
        ),
        bindings=[KILL],
        tags=["policy", "capability", "laundering"],
    ),
    case(
        "policy-binding-through-private-helper-granted",
        "ok",
        "The same chain is accepted once granted.",
        source=kernel(
            main("return a();"), fn("a", "return b();"), fn("b", "ok = game.world.kill(1);\nreturn 1;")
        ),
        bindings=[KILL],
        policy={"grants": [KILL_GRANT]},
        tags=["policy", "capability", "laundering"],
    ),
    case(
        "policy-binding-in-unreachable-function-accepted",
        "ok",
        "A binding called only from an unreachable private function is not required.",
        source=kernel(main(RET1), fn("unused", KILL_CALL)),
        bindings=[KILL],
        tags=["policy", "capability", "reachability"],
    ),
    case(
        "policy-binding-in-unreachable-function-grant-unused-accepted",
        "ok",
        "A grant of a capability a registered binding requires is accepted even when this module never "
        "needs it (one host policy serves many kernels; DotBoxD's rule).",
        source=kernel(main(RET1), fn("unused", KILL_CALL)),
        bindings=[KILL],
        policy={"grants": [KILL_GRANT]},
        tags=["policy", "grants"],
    ),
    case(
        "policy-binding-in-unreachable-function-grant-unused-strict-rejected",
        "E-POLICY-GRANT",
        "In strict mode (rejectUnusedGrants true) a grant the module never needs is rejected.",
        source=kernel(main(RET1), fn("unused", KILL_CALL)),
        bindings=[KILL],
        policy={"grants": [KILL_GRANT], "rejectUnusedGrants": True},
        pointer="/grants/0",
        tags=["policy", "grants", "reject-unused-grants"],
    ),
    case(
        "policy-grant-used-strict-accepted",
        "ok",
        "Strict mode (rejectUnusedGrants true) accepts a policy whose every grant is used.",
        source=kernel(main(KILL_CALL)),
        bindings=[KILL],
        policy={"grants": [KILL_GRANT], "rejectUnusedGrants": True},
        tags=["policy", "grants", "reject-unused-grants"],
    ),
    case(
        "policy-request-not-granted-rejected",
        "E-POLICY-CAP",
        "A requested capability must be granted too; a request is never a grant.",
        source=kernel(main(RET1), header='requires "game.world.monster.write.kill";\n'),
        bindings=[KILL],
        pointer="/capabilityRequests/0",
        tags=["policy", "capability"],
    ),
    case(
        "policy-request-granted-accepted",
        "ok",
        "A granted request without a call is accepted.",
        source=kernel(main(RET1), header='requires "game.world.monster.write.kill";\n'),
        bindings=[KILL],
        policy={"grants": [KILL_GRANT]},
        tags=["policy", "capability", "grants"],
    ),
    case(
        "policy-grant-expired-rejected",
        "E-POLICY-CAP",
        "An expired grant grants nothing.",
        source=kernel(main(KILL_CALL)),
        bindings=[KILL],
        policy={"grants": [dict(KILL_GRANT, expiresAtUnixMillis=1)]},
        tags=["policy", "expiry"],
    ),
    case(
        "policy-grant-far-future-expiry-accepted",
        "ok",
        "A grant that expires in the future is active.",
        source=kernel(main(KILL_CALL)),
        bindings=[KILL],
        policy={"grants": [dict(KILL_GRANT, expiresAtUnixMillis=32503680000000)]},
        tags=["policy", "expiry"],
    ),
    case(
        "policy-wildcard-prefix-grant-accepted",
        "ok",
        "'game.world.*' covers 'game.world.monster.write.kill' (with a warning).",
        source=kernel(main(KILL_CALL)),
        bindings=[KILL],
        policy={"grants": [{"id": "game.world.*"}]},
        tags=["policy", "wildcard"],
    ),
    case(
        "policy-wildcard-star-grant-accepted",
        "ok",
        "'*' covers every capability (with a warning).",
        source=kernel(main(KILL_CALL)),
        bindings=[KILL],
        policy={"grants": [{"id": "*"}]},
        tags=["policy", "wildcard"],
    ),
    case(
        "policy-wildcard-does-not-match-prefix-itself-rejected",
        "E-POLICY-GRANT",
        "'game.world.monster.write.kill.*' does not cover the capability itself, so it matches no "
        "registered binding's capability (grants are checked before requirements).",
        source=kernel(main(KILL_CALL)),
        bindings=[KILL],
        policy={"grants": [{"id": "game.world.monster.write.kill.*"}]},
        tags=["policy", "wildcard"],
    ),
    case(
        "policy-wildcard-matching-nothing-rejected",
        "E-POLICY-GRANT",
        "A wildcard grant that matches no capability a registered binding requires is rejected.",
        source=kernel(main(RET1)),
        policy={"grants": [{"id": "*"}]},
        tags=["policy", "wildcard", "grants"],
    ),
    case(
        "policy-grant-unknown-capability-rejected",
        "E-POLICY-GRANT",
        "A grant for a capability no binding requires is rejected.",
        source=kernel(main(RET1)),
        policy={"grants": [{"id": "game.inventory.grant"}]},
        tags=["policy", "grants"],
    ),
    case(
        "policy-grant-duplicate-rejected",
        "E-POLICY-GRANT",
        "Two active grants of one capability are ambiguous.",
        source=kernel(main(KILL_CALL)),
        bindings=[KILL],
        policy={"grants": [KILL_GRANT, KILL_GRANT]},
        tags=["policy", "grants"],
    ),
    case(
        "policy-grant-reentrancy-rejected",
        "E-POLICY-GRANT",
        "dotboxd.runtime.reentrant can never be granted.",
        source=kernel(main(RET1)),
        policy={"grants": [{"id": "dotboxd.runtime.reentrant"}]},
        tags=["policy", "grants", "async"],
    ),
    case(
        "policy-grant-bad-pattern-rejected",
        "E-POLICY-GRANT",
        "A grant id is a capability, 'prefix.*' or '*'.",
        source=kernel(main(KILL_CALL)),
        bindings=[KILL],
        policy={"grants": [{"id": "game.*.kill"}]},
        tags=["policy", "grants"],
    ),
    case(
        "policy-grant-custom-parameter-rejected",
        "E-POLICY-GRANT-PARAM",
        "A custom capability accepts only the parameters its binding's validator allows (none by default).",
        source=kernel(main(KILL_CALL)),
        bindings=[KILL],
        policy={"grants": [dict(KILL_GRANT, parameters={"x": "1"})]},
        tags=["policy", "grant-params"],
    ),
    case(
        "policy-grant-wildcard-parameter-rejected",
        "E-POLICY-GRANT-PARAM",
        "A wildcard grant takes no parameters.",
        source=kernel(main(KILL_CALL)),
        bindings=[KILL],
        policy={"grants": [{"id": "game.*", "parameters": {"root": "/"}}]},
        tags=["policy", "grant-params"],
    ),
    case(
        "policy-file-read-granted-accepted",
        "ok",
        "file.read with a canonical existing root and a byte limit, plus async.",
        source=kernel(main('return test.files.read(path"a.txt");', ret="String")),
        bindings=[READ],
        policy={"grants": [FILE_GRANT], "allowRuntimeAsync": True},
        files=FILES,
        tags=["policy", "file", "async"],
    ),
    case(
        "policy-file-read-missing-root-rejected",
        "E-POLICY-GRANT-PARAM",
        "file.read needs a root.",
        source=kernel(main('return test.files.read(path"a.txt");', ret="String")),
        bindings=[READ],
        policy={
            "grants": [{"id": "file.read", "parameters": {"maxBytesPerRun": "10"}}],
            "allowRuntimeAsync": True,
        },
        tags=["policy", "file", "grant-params"],
    ),
    case(
        "policy-file-read-relative-root-rejected",
        "E-POLICY-GRANT-PARAM",
        "file.read's root must be absolute.",
        source=kernel(main('return test.files.read(path"a.txt");', ret="String")),
        bindings=[READ],
        policy={
            "grants": [{"id": "file.read", "parameters": {"root": "data", "maxBytesPerRun": "10"}}],
            "allowRuntimeAsync": True,
        },
        tags=["policy", "file", "grant-params"],
    ),
    case(
        "policy-file-read-non-canonical-root-rejected",
        "E-POLICY-GRANT-PARAM",
        "file.read's root must be canonical.",
        source=kernel(main('return test.files.read(path"a.txt");', ret="String")),
        bindings=[READ],
        policy={
            "grants": [{"id": "file.read", "parameters": {"root": "$ROOT/../x/..", "maxBytesPerRun": "10"}}],
            "allowRuntimeAsync": True,
        },
        files=FILES,
        tags=["policy", "file", "grant-params"],
    ),
    case(
        "policy-file-read-missing-max-bytes-rejected",
        "E-POLICY-GRANT-PARAM",
        "file.read needs maxBytesPerRun.",
        source=kernel(main('return test.files.read(path"a.txt");', ret="String")),
        bindings=[READ],
        policy={"grants": [{"id": "file.read", "parameters": {"root": "$ROOT"}}], "allowRuntimeAsync": True},
        files=FILES,
        tags=["policy", "file", "grant-params"],
    ),
    case(
        "policy-file-read-bad-extension-list-rejected",
        "E-POLICY-GRANT-PARAM",
        "allowedExtensions is a list of '.ext'.",
        source=kernel(main('return test.files.read(path"a.txt");', ret="String")),
        bindings=[READ],
        policy={
            "grants": [
                {
                    "id": "file.read",
                    "parameters": {"root": "$ROOT", "maxBytesPerRun": "10", "allowedExtensions": "txt"},
                }
            ],
            "allowRuntimeAsync": True,
        },
        files=FILES,
        tags=["policy", "file", "grant-params"],
    ),
    case(
        "policy-file-read-extensions-accepted",
        "ok",
        "allowedExtensions as '.txt,.json' is accepted.",
        source=kernel(main('return test.files.read(path"a.txt");', ret="String")),
        bindings=[READ],
        policy={
            "grants": [
                {
                    "id": "file.read",
                    "parameters": {
                        "root": "$ROOT",
                        "maxBytesPerRun": "10",
                        "allowedExtensions": ".txt,.json",
                    },
                }
            ],
            "allowRuntimeAsync": True,
        },
        files=FILES,
        tags=["policy", "file", "grant-params"],
    ),
    case(
        "policy-async-binding-without-async-grant-rejected",
        "E-POLICY-CAP",
        "An async binding requires dotboxd.runtime.async even when its own capability is granted.",
        source=kernel(main('return test.files.read(path"a.txt");', ret="String")),
        bindings=[READ],
        policy={"grants": [FILE_GRANT]},
        files=FILES,
        tags=["policy", "async"],
    ),
    case(
        "policy-async-grant-unused-accepted",
        "ok",
        "allowRuntimeAsync is a built-in grant: accepted for a module without async bindings.",
        source=kernel(main(RET1)),
        policy={"allowRuntimeAsync": True},
        tags=["policy", "async", "grants"],
    ),
    case(
        "policy-async-grant-unused-strict-rejected",
        "E-POLICY-GRANT",
        "In strict mode allowRuntimeAsync for a module without async bindings is an unused grant.",
        source=kernel(main(RET1)),
        policy={"allowRuntimeAsync": True, "rejectUnusedGrants": True},
        tags=["policy", "async", "grants", "reject-unused-grants"],
    ),
    case(
        "policy-time-grant-param-rejected",
        "E-POLICY-GRANT-PARAM",
        "time.now takes no parameters.",
        source=kernel(main("t = test.clock.now();\nreturn 1;")),
        bindings=[CLOCK],
        policy={"grants": [{"id": "time.now", "parameters": {"zone": "utc"}}]},
        tags=["policy", "grant-params"],
    ),
    case(
        "policy-effect-explicitly-not-allowed-rejected",
        "E-POLICY-EFFECT",
        "With explicit allowedEffects, a granted binding's effect must still be listed.",
        source=kernel(main(KILL_CALL)),
        bindings=[KILL],
        policy={"grants": [KILL_GRANT], "allowedEffects": ["Cpu", "Alloc"]},
        tags=["policy", "effects"],
    ),
    case(
        "policy-effect-explicitly-allowed-accepted",
        "ok",
        "Listing the effect in allowedEffects admits it.",
        source=kernel(main(KILL_CALL)),
        bindings=[KILL],
        policy={"grants": [KILL_GRANT], "allowedEffects": ["Cpu", "HostStateWrite"]},
        tags=["policy", "effects"],
    ),
    case(
        "policy-effect-grant-effects-too-narrow-rejected",
        "E-POLICY-EFFECT",
        "A grant that states its effects allows only those.",
        source=kernel(main(KILL_CALL)),
        bindings=[KILL],
        policy={"grants": [dict(KILL_GRANT, effects=["HostStateRead"])]},
        tags=["policy", "effects"],
    ),
    case(
        "policy-effect-unknown-name-rejected",
        "E-POLICY-EFFECT",
        "allowedEffects may only name known effects.",
        source=kernel(main(RET1)),
        policy={"allowedEffects": ["Cpu", "DatabaseWrite"]},
        tags=["policy", "effects"],
    ),
    case(
        "policy-effect-pure-only-allowed-accepted",
        "ok",
        "Pure modules need only Cpu and Alloc.",
        source=kernel(main('s = "x";\nreturn string.length(s);')),
        policy={"allowedEffects": ["Cpu", "Alloc"]},
        tags=["policy", "effects"],
    ),
    case(
        "policy-effect-cpu-only-alloc-rejected",
        "E-POLICY-EFFECT",
        "A module that allocates needs Alloc allowed.",
        source=kernel(main('s = "x";\nreturn string.length(s);')),
        policy={"allowedEffects": ["Cpu"]},
        tags=["policy", "effects"],
    ),
    case(
        "policy-determinism-clock-without-logical-time-rejected",
        "E-POLICY-DETERMINISM",
        "Deterministic mode needs a logical clock for Time.",
        source=kernel(main("t = test.clock.now();\nreturn 1;")),
        bindings=[CLOCK],
        policy={"grants": [{"id": "time.now"}], "deterministic": {"randomSeed": 1}},
        tags=["policy", "determinism"],
    ),
    case(
        "policy-determinism-clock-with-logical-time-accepted",
        "ok",
        "Time with a logical clock is deterministic.",
        source=kernel(main("t = test.clock.now();\nreturn 1;")),
        bindings=[CLOCK],
        policy={"grants": [{"id": "time.now"}], "deterministic": {"logicalNowUnixMillis": 0}},
        tags=["policy", "determinism"],
    ),
    case(
        "policy-determinism-random-without-seed-rejected",
        "E-POLICY-DETERMINISM",
        "Deterministic mode needs a seed for Random.",
        source=kernel(main("return test.dice.roll(1, 7);")),
        bindings=[DICE],
        policy={"grants": [{"id": "random"}], "deterministic": {"logicalNowUnixMillis": 0}},
        tags=["policy", "determinism"],
    ),
    case(
        "policy-determinism-random-with-seed-accepted",
        "ok",
        "Random with a seed replays deterministically.",
        source=kernel(main("return test.dice.roll(1, 7);")),
        bindings=[DICE],
        policy={"grants": [{"id": "random"}], "deterministic": {"randomSeed": 7}},
        tags=["policy", "determinism"],
    ),
    case(
        "policy-determinism-host-state-rejected",
        "E-POLICY-DETERMINISM",
        "Deterministic mode rejects host-state effects.",
        source=kernel(main("return game.world.peek(1);")),
        bindings=[PEEK],
        policy={"grants": [{"id": "game.world.read"}], "deterministic": {"randomSeed": 1}},
        tags=["policy", "determinism"],
    ),
    case(
        "policy-determinism-file-read-allowed-rejected",
        "E-POLICY-DETERMINISM",
        "Deterministic mode rejects file effects even when only allowed.",
        source=kernel(main(RET1)),
        policy={"allowedEffects": ["Cpu", "Alloc", "FileRead"], "deterministic": {"randomSeed": 1}},
        tags=["policy", "determinism"],
    ),
    case(
        "policy-determinism-async-rejected",
        "E-POLICY-DETERMINISM",
        "Deterministic mode rejects async bindings.",
        source=kernel(main("return test.async.echo(1);")),
        bindings=[LATER],
        policy={"allowRuntimeAsync": True, "deterministic": {"randomSeed": 1}},
        tags=["policy", "determinism", "async"],
    ),
    case(
        "policy-async-pure-binding-accepted",
        "ok",
        "An async binding with pure effects needs only the async grant.",
        source=kernel(main("return test.async.echo(1);")),
        bindings=[LATER],
        policy={"allowRuntimeAsync": True},
        tags=["policy", "async"],
    ),
    case(
        "policy-determinism-log-accepted",
        "ok",
        "Audit-only logging is allowed in deterministic mode.",
        source=kernel(main('test.log.info("hi");\nreturn 1;')),
        bindings=[LOG],
        policy={
            "grants": [{"id": "log.write"}],
            "deterministic": {"logicalNowUnixMillis": 5, "randomSeed": 1},
        },
        tags=["policy", "determinism"],
    ),
    case(
        "policy-limit-negative-rejected",
        "E-POLICY-LIMIT",
        "Limits are integers >= 0.",
        source=kernel(main(RET1)),
        policy={"limits": {"maxFuel": -1}},
        tags=["policy", "limits"],
    ),
    case(
        "policy-limit-wall-time-too-large-rejected",
        "E-POLICY-LIMIT",
        "maxWallTimeMs is at most 2^31-1.",
        source=kernel(main(RET1)),
        policy={"limits": {"maxWallTimeMs": 2147483648}},
        tags=["policy", "limits"],
    ),
    case(
        "policy-limit-zero-accepted",
        "ok",
        "A limit of 0 is valid (it denies the category).",
        source=kernel(main(RET1)),
        policy={"limits": {"maxHostCalls": 0, "maxLogEvents": 0}},
        tags=["policy", "limits"],
    ),
    case(
        "policy-limit-unknown-rejected",
        "E-POLICY-SCHEMA",
        "An unknown limit name is rejected.",
        source=kernel(main(RET1)),
        policy={"limits": {"maxCoffee": 3}},
        tags=["policy", "limits"],
    ),
    case(
        "policy-brand-invalid-rejected",
        "E-POLICY-BRAND",
        "A declared opaque-id type must be a brand name.",
        source=kernel(main(RET1)),
        policy={"declaredOpaqueIdTypes": ["playerId"]},
        tags=["policy", "opaque-id"],
    ),
    case(
        "policy-brand-builtin-collision-rejected",
        "E-POLICY-BRAND",
        "A brand may not reuse a built-in type name.",
        source=kernel(main(RET1)),
        policy={"declaredOpaqueIdTypes": ["String"]},
        tags=["policy", "opaque-id"],
    ),
    case(
        "policy-brand-forbidden-collision-rejected",
        "E-POLICY-BRAND",
        "A brand may not reuse a forbidden type name.",
        source=kernel(main(RET1)),
        policy={"declaredOpaqueIdTypes": ["Object"]},
        tags=["policy", "opaque-id"],
    ),
    case(
        "policy-brand-declared-unused-accepted",
        "ok",
        "Declaring an opaque-id type the module does not use is fine.",
        source=kernel(main(RET1)),
        policy={"declaredOpaqueIdTypes": ["QuestId"]},
        tags=["policy", "opaque-id"],
    ),
    case(
        "policy-grant-effects-derived-from-binding-accepted",
        "ok",
        "A custom grant without stated effects allows its bindings' declared effects.",
        source=kernel(main("return game.world.peek(1);")),
        bindings=[PEEK],
        policy={"grants": [{"id": "game.world.read"}]},
        tags=["policy", "effects"],
    ),
    case(
        "policy-effect-path-through-helper-rejected",
        "E-POLICY-EFFECT",
        "Effects reached through a private helper are counted (no effect hiding).",
        source=kernel(main("return h();"), fn("h", "return game.world.peek(1);")),
        bindings=[PEEK],
        policy={"grants": [{"id": "game.world.read"}], "allowedEffects": ["Cpu", "Alloc"]},
        tags=["policy", "effects", "laundering"],
    ),
]


def groups() -> dict[str, list[dict[str, Any]]]:
    return {
        "validate/structure.json": STRUCTURE,
        "validate/types.json": TYPES,
        "validate/locals.json": LOCALS,
        "validate/calls.json": CALLS,
        "validate/control-flow.json": CONTROL,
        "validate/literals.json": LITERALS,
        "validate/bindings.json": BINDINGS,
        "policy/policy.json": POLICY,
    }


def all_cases() -> list[dict[str, Any]]:
    return [c for cases in groups().values() for c in cases]


def render(cases: list[dict[str, Any]]) -> str:
    return json.dumps({"cases": cases}, indent=2, ensure_ascii=False) + "\n"


def write_cases() -> None:
    for rel, cases in groups().items():
        path = CASES_DIR / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(cases), encoding="utf-8")


if __name__ == "__main__":
    write_cases()
    print(f"wrote {len(all_cases())} cases")
