"""Generate the validation-parity cases: shared policies, resolution order and block scoping.

    python conformance/tools/make_validation_parity_cases.py          # rewrite the case files
    python conformance/tools/make_validation_parity_cases.py --check  # fail if the files are out of date

Files written (each owned by this tool): ``effects-capabilities/shared-policy.json`` (one policy
for many kernels: unused built-in and registered grants are accepted, unknown ones are not, strict
mode), ``structure/resolution-order.json`` (a module function shadows a built-in or binding of its id)
and ``structure/block-scoping.json`` (sibling blocks bind one name with different types). Every
expectation is a rule of ``spec/validation.md`` (sections 2, 4 and 10), named in the case's
description; run values are computed here from the kernel's meaning, never by running an
implementation, and no case pins fuel.
"""

from __future__ import annotations

from typing import Any

from dotboxd.conformance.tools.kit import generate_main, put_present

HEADER = 'module "t" version "1.0.0";\n'
WALL = {"maxWallTimeMs": 60000}

Case = dict[str, Any]
FILES: dict[str, list[Case]] = {}


def category_of(code: str) -> str:
    return "PolicyDenied" if code.startswith(("E-POLICY-", "E-PROOF-")) else "ValidationError"


def kernel(*functions: str, header: str = "") -> str:
    return HEADER + header + "\n".join(functions) + "\n"


def main_fn(body: str, sig: str = "main() -> I32") -> str:
    return f"entrypoint fn {sig} {{\n{body}\n}}"


def add(
    file: str,
    area: str,
    name: str,
    description: str,
    text: str,
    *,
    code: str | None = None,
    value: Any = None,
    args: list[Any] | None = None,
    policy: dict[str, Any] | None = None,
    bindings: list[dict[str, Any]] | None = None,
    files: dict[str, str] | None = None,
    pointer: str | None = None,
    tags: tuple[str, ...] = (),
) -> None:
    """A validate-stage case when ``value`` is None (accepted, or rejected with ``code``), else a
    run-stage case that must return ``value``."""
    case: Case = {"name": name, "description": description, "tags": [area, "parity", *tags]}
    case["kernelText"] = text
    pol = dict(policy or {})
    if value is not None:
        pol.setdefault("limits", WALL)
    put_present(case, policy=pol or None, bindings=bindings, files=files, args=args)
    if value is not None:
        assert code is None
        case["expect"] = {"stage": "run", "outcome": "ok", "value": value}
    elif code is None:
        case["expect"] = {"stage": "validate", "outcome": "ok"}
    else:
        expect: dict[str, Any] = {
            "stage": "validate",
            "outcome": "rejected",
            "diagnostic": code,
            "error": category_of(code),
        }
        if pointer is not None:
            expect["pointer"] = pointer
        case["expect"] = expect
    FILES.setdefault(file, []).append(case)


def binding(
    bid: str, params: list[str], returns: str, effects: list[str], capability: str | None, **extra: Any
) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": bid, "parameters": params, "returnType": returns, "effects": effects}
    if capability is not None:
        entry["capability"] = capability
    entry.update({"cost": {"baseFuel": 5}, "audit": "PerCall", "safety": "SideEffectingExternal"})
    entry.update(extra)
    return entry


KILL_CAP = "game.world.monster.write.kill"
PEEK_CAP = "game.world.read"
KILL = binding(
    "game.world.kill",
    ["I32"],
    "Bool",
    ["Cpu", "HostStateWrite"],
    KILL_CAP,
    behavior={"kind": "return", "value": True},
)
PEEK = binding(
    "game.world.peek",
    ["I32"],
    "I32",
    ["Cpu", "HostStateRead"],
    PEEK_CAP,
    safety="ReadOnlyExternal",
    behavior={"kind": "return", "value": 41},
)
CLOCK = binding(
    "test.clock.now",
    [],
    "I64",
    ["Cpu", "Time"],
    "time.now",
    safety="ReadOnlyExternal",
    behavior={"kind": "return", "value": 7},
)
TENANT = binding(
    "game.tenant.read",
    ["I32"],
    "I32",
    ["Cpu", "HostStateRead"],
    "game.tenant.read",
    safety="ReadOnlyExternal",
    grantParameters={"required": ["tenant"]},
    behavior={"kind": "return", "value": 0},
)


def grants(*ids: str, **extra: Any) -> dict[str, Any]:
    return {"grants": [{"id": cap} for cap in ids], **extra}


#: The one host policy of the shared-policy cases: two custom capabilities and two built-ins.
SHARED = grants(KILL_CAP, PEEK_CAP, "time.now", "random", allowRuntimeAsync=True)

# ---------------------------------------------------------------------------------------------
# 1. grants a module doesn't use (spec/validation.md section 10)


def _shared_policy() -> None:
    f, area = "effects-capabilities/shared-policy.json", "effects-capabilities"
    both = [KILL, PEEK, CLOCK]
    add(
        f,
        area,
        "sp-shared-policy-kernel-using-kill-only",
        "One policy serves many kernels: a kernel that uses only the kill grant runs under a policy that "
        "also grants peek, time.now, random and async (unused grants are warnings, not errors).",
        kernel(main_fn("return game.world.kill(1);", "main() -> Bool")),
        value=True,
        policy=SHARED,
        bindings=both,
        tags=("unused-grant",),
    )
    add(
        f,
        area,
        "sp-shared-policy-kernel-using-peek-only",
        "The same policy serves a kernel that uses only the peek grant.",
        kernel(main_fn("return game.world.peek(2) + 1;")),
        value=42,
        policy=SHARED,
        bindings=both,
        tags=("unused-grant",),
    )
    add(
        f,
        area,
        "sp-shared-policy-kernel-using-the-clock-only",
        "The same policy serves a kernel that reads only the clock (a built-in capability).",
        kernel(main_fn("return test.clock.now() + 1L;", "main() -> I64")),
        value=8,
        policy=SHARED,
        bindings=both,
        tags=("unused-grant",),
    )
    add(
        f,
        area,
        "sp-shared-policy-pure-kernel",
        "The same policy serves a kernel that uses none of its grants.",
        kernel(main_fn("return 6 * 7;")),
        value=42,
        policy=SHARED,
        bindings=both,
        tags=("unused-grant",),
    )
    add(
        f,
        area,
        "sp-builtin-grants-accepted-without-any-binding",
        "Grants of the built-in capabilities are accepted whether or not the module uses them, even with "
        "no binding registered.",
        kernel(main_fn("return 1;")),
        policy=grants("time.now", "random", "log.write", allowRuntimeAsync=True),
        tags=("unused-grant", "builtin-grant"),
    )
    add(
        f,
        area,
        "sp-unused-file-read-grant-accepted",
        "An unused file.read grant with valid parameters is accepted.",
        kernel(main_fn("return 1;")),
        policy={"grants": [{"id": "file.read", "parameters": {"root": "$ROOT", "maxBytesPerRun": "64"}}]},
        files={"a.txt": "x"},
        tags=("unused-grant", "builtin-grant"),
    )
    add(
        f,
        area,
        "sp-unused-file-read-grant-parameters-still-checked",
        "An unused built-in grant still has its parameters checked: file.read without root is "
        "E-POLICY-GRANT-PARAM.",
        kernel(main_fn("return 1;")),
        code="E-POLICY-GRANT-PARAM",
        policy={"grants": [{"id": "file.read", "parameters": {"maxBytesPerRun": "64"}}]},
        pointer="/grants/0/parameters",
        tags=("unused-grant", "builtin-grant"),
    )
    add(
        f,
        area,
        "sp-unused-time-grant-parameters-still-checked",
        "time.now takes no parameters, used or not.",
        kernel(main_fn("return 1;")),
        code="E-POLICY-GRANT-PARAM",
        policy={"grants": [{"id": "time.now", "parameters": {"zone": "utc"}}]},
        pointer="/grants/0/parameters",
        tags=("unused-grant", "builtin-grant"),
    )
    add(
        f,
        area,
        "sp-unused-custom-grant-validator-still-runs",
        "An unused grant of a registered custom capability is checked by its binding's grant validator "
        "(a missing required parameter is E-POLICY-GRANT-PARAM).",
        kernel(main_fn("return 1;")),
        code="E-POLICY-GRANT-PARAM",
        policy=grants("game.tenant.read"),
        bindings=[TENANT],
        pointer="/grants/0/parameters",
        tags=("unused-grant",),
    )
    add(
        f,
        area,
        "sp-unused-custom-grant-with-valid-parameters-accepted",
        "With its required parameter the unused custom grant is accepted.",
        kernel(main_fn("return 1;")),
        policy={"grants": [{"id": "game.tenant.read", "parameters": {"tenant": "t1"}}]},
        bindings=[TENANT],
        tags=("unused-grant",),
    )
    add(
        f,
        area,
        "sp-grant-of-unregistered-capability-rejected",
        "A grant of a custom capability no registered binding requires is E-POLICY-GRANT, though the "
        "other grants of the policy are fine.",
        kernel(main_fn("return 1;")),
        code="E-POLICY-GRANT",
        policy=grants(KILL_CAP, "game.unknown.power"),
        bindings=[KILL],
        pointer="/grants/1",
        tags=("unknown-grant",),
    )
    add(
        f,
        area,
        "sp-request-cannot-make-a-capability-grantable",
        "A module's capabilityRequests cannot make an unknown capability grantable: the grant is still "
        "E-POLICY-GRANT.",
        kernel(main_fn("return 1;"), header='requires "game.unknown.power";\n'),
        code="E-POLICY-GRANT",
        policy=grants("game.unknown.power"),
        bindings=[KILL],
        pointer="/grants/0",
        tags=("unknown-grant", "request"),
    )
    add(
        f,
        area,
        "sp-request-cannot-make-a-capability-grantable-strict",
        "Strict mode changes nothing for an unknown capability: still E-POLICY-GRANT.",
        kernel(main_fn("return 1;"), header='requires "game.unknown.power";\n'),
        code="E-POLICY-GRANT",
        policy=grants("game.unknown.power", rejectUnusedGrants=True),
        pointer="/grants/0",
        tags=("unknown-grant", "request", "reject-unused-grants"),
    )
    add(
        f,
        area,
        "sp-request-of-a-registered-capability-accepted",
        "A request of a capability some registered binding requires, granted, is accepted without a call.",
        kernel(main_fn("return 1;"), header=f'requires "{KILL_CAP}";\n'),
        policy=grants(KILL_CAP, rejectUnusedGrants=True),
        bindings=[KILL],
        tags=("request", "reject-unused-grants"),
    )
    add(
        f,
        area,
        "sp-unused-wildcard-matching-a-registered-capability-accepted",
        "An unused wildcard grant is accepted when it matches a capability some registered binding requires.",
        kernel(main_fn("return 1;")),
        policy=grants("game.world.*"),
        bindings=[PEEK],
        tags=("unused-grant", "wildcard"),
    )
    add(
        f,
        area,
        "sp-wildcard-matching-no-registered-capability-rejected",
        "A wildcard matching no capability of a registered binding is E-POLICY-GRANT.",
        kernel(main_fn("return 1;")),
        code="E-POLICY-GRANT",
        policy=grants("game.inventory.*"),
        bindings=[PEEK],
        pointer="/grants/0",
        tags=("unknown-grant", "wildcard"),
    )
    add(
        f,
        area,
        "sp-star-with-a-registered-binding-accepted",
        "'*' matches the capability of the registered clock binding, so it is accepted unused (with warnings).",
        kernel(main_fn("return 1;")),
        policy=grants("*"),
        bindings=[CLOCK],
        tags=("unused-grant", "wildcard"),
    )
    add(
        f,
        area,
        "sp-strict-mode-rejects-an-unused-builtin-grant",
        "Strict mode (rejectUnusedGrants true): an unused built-in grant is E-POLICY-GRANT.",
        kernel(main_fn("return 1;")),
        code="E-POLICY-GRANT",
        policy=grants("time.now", rejectUnusedGrants=True),
        pointer="/grants/0",
        tags=("unused-grant", "reject-unused-grants"),
    )
    add(
        f,
        area,
        "sp-strict-mode-rejects-the-shared-policy",
        "Strict mode: the shared policy is refused for a kernel that uses only one of its grants.",
        kernel(main_fn("return game.world.peek(2);")),
        code="E-POLICY-GRANT",
        policy=dict(SHARED, rejectUnusedGrants=True),
        bindings=both,
        pointer="/grants/0",
        tags=("unused-grant", "reject-unused-grants"),
    )
    add(
        f,
        area,
        "sp-shared-policy-still-needs-every-used-capability",
        "Accepting unused grants grants nothing new: a kernel calling a binding whose capability the "
        "policy lacks is E-POLICY-CAP.",
        kernel(main_fn("return game.world.peek(2);")),
        code="E-POLICY-CAP",
        policy=grants(KILL_CAP, "time.now"),
        bindings=both,
        tags=("unused-grant",),
    )
    add(
        f,
        area,
        "sp-unused-async-grant-still-breaks-determinism",
        "An accepted but unused async grant is still an async grant: a deterministic policy refuses it.",
        kernel(main_fn("return 1;")),
        code="E-POLICY-DETERMINISM",
        policy={"allowRuntimeAsync": True, "deterministic": {"logicalNowUnixMillis": 1, "randomSeed": 1}},
        tags=("unused-grant", "async"),
    )


# ---------------------------------------------------------------------------------------------
# 3. resolution order (spec/validation.md section 2)


def _resolution_order() -> None:
    f, area = "structure/resolution-order.json", "structure"
    add(
        f,
        area,
        "ro-function-shadows-a-builtin",
        "A module function named like a built-in shadows it inside the module: math.abs(-5) runs the "
        "module's math.abs (x + 1), giving -4.",
        kernel(main_fn("return math.abs(-5);"), "fn math.abs(x I32) -> I32 {\nreturn x + 1;\n}"),
        value=-4,
        tags=("shadow",),
    )
    add(
        f,
        area,
        "ro-function-shadows-a-binding-without-a-grant",
        "A module function with a binding's id shadows the binding: it runs instead, and the binding's "
        "capability is not required (no grant).",
        kernel(
            main_fn("return game.world.kill(3);", "main() -> Bool"),
            "fn game.world.kill(id I32) -> Bool {\nreturn id > 5;\n}",
        ),
        value=False,
        bindings=[KILL],
        tags=("shadow",),
    )
    add(
        f,
        area,
        "ro-shadowed-binding-grant-is-unused-in-strict-mode",
        "The shadowed binding is never called, so in strict mode a grant of its capability is unused.",
        kernel(
            main_fn("return game.world.kill(3);", "main() -> Bool"),
            "fn game.world.kill(id I32) -> Bool {\nreturn id > 5;\n}",
        ),
        code="E-POLICY-GRANT",
        policy=grants(KILL_CAP, rejectUnusedGrants=True),
        bindings=[KILL],
        pointer="/grants/0",
        tags=("shadow", "reject-unused-grants"),
    )
    add(
        f,
        area,
        "ro-shadowing-function-return-type-wins",
        "The shadowing function's signature governs the call: it returns I32 where the binding returns Bool.",
        kernel(
            main_fn("return game.world.kill(21);"),
            "fn game.world.kill(x I32) -> I32 {\nreturn x * 2;\n}",
        ),
        value=42,
        bindings=[KILL],
        tags=("shadow",),
    )
    add(
        f,
        area,
        "ro-shadowing-function-parameter-types-checked",
        "Arguments are checked against the shadowing function's parameters, not the built-in's: "
        'string.length("a") against (x I32) is E-TYPE-MISMATCH.',
        kernel(main_fn('return string.length("a");'), "fn string.length(x I32) -> I32 {\nreturn x;\n}"),
        code="E-TYPE-MISMATCH",
        tags=("shadow",),
    )
    add(
        f,
        area,
        "ro-shadowing-function-arity-governs",
        "A shadowing function may take a different number of arguments than the built-in.",
        kernel(main_fn("return list.count();"), "fn list.count() -> I32 {\nreturn 7;\n}"),
        value=7,
        tags=("shadow",),
    )
    add(
        f,
        area,
        "ro-shadowing-applies-in-every-function",
        "Shadowing holds in the whole module: a helper's math.max(1, 9) calls the module's math.max "
        "(which returns its first argument).",
        kernel(
            main_fn("return helper();"),
            "fn helper() -> I32 {\nreturn math.max(1, 9);\n}",
            "fn math.max(a I32, b I32) -> I32 {\nreturn a;\n}",
        ),
        value=1,
        tags=("shadow",),
    )
    add(
        f,
        area,
        "ro-shadowing-a-generic-builtin-takes-no-generic-type",
        "A module function shadowing list.empty is an ordinary function: a generic type on the call is "
        "E-CALL-GENERIC.",
        kernel(main_fn("x = list.empty[I32]();\nreturn 0;"), "fn list.empty() -> I32 {\nreturn 0;\n}"),
        code="E-CALL-GENERIC",
        tags=("shadow",),
    )
    add(
        f,
        area,
        "ro-capabilities-follow-what-is-really-called",
        "Capabilities are derived from the calls' real targets: a function shadowing the pure math.abs "
        "that calls the kill binding needs its capability (E-POLICY-CAP without a grant).",
        kernel(
            main_fn("return math.abs(1);"),
            "fn math.abs(x I32) -> I32 {\nk = game.world.kill(x);\nreturn 0;\n}",
        ),
        code="E-POLICY-CAP",
        bindings=[KILL],
        tags=("shadow", "capability"),
    )
    add(
        f,
        area,
        "ro-capabilities-follow-what-is-really-called-granted",
        "With the kill capability granted the shadowing function runs and calls the binding.",
        kernel(
            main_fn("return math.abs(1);"),
            "fn math.abs(x I32) -> I32 {\nif game.world.kill(x) { return 10; }\nreturn 0;\n}",
        ),
        value=10,
        policy=grants(KILL_CAP),
        bindings=[KILL],
        tags=("shadow", "capability"),
    )
    add(
        f,
        area,
        "ro-shadowing-function-recursion-is-still-recursion",
        "A shadowing function calling its own name calls itself, not the built-in: E-CALL-RECURSION.",
        kernel(main_fn("return math.abs(-1);"), "fn math.abs(x I32) -> I32 {\nreturn math.abs(x);\n}"),
        code="E-CALL-RECURSION",
        tags=("shadow",),
    )


# ---------------------------------------------------------------------------------------------
# 4. block scoping (spec/validation.md section 4)

SIBLINGS = kernel(
    main_fn(
        'if c { x = 20; r = x + 1; } else { x = "abcd"; r = string.length(x); }\nreturn r;',
        "main(c Bool) -> I32",
    )
)


def _block_scoping() -> None:
    f, area = "structure/block-scoping.json", "structure"
    add(
        f,
        area,
        "bs-sibling-branches-bind-different-types-then",
        "The branches of an if may bind one name with different types (I32 in then): 20 + 1.",
        SIBLINGS,
        args=[True],
        value=21,
        tags=("scoping",),
    )
    add(
        f,
        area,
        "bs-sibling-branches-bind-different-types-else",
        'The else branch binds the same name as a String: string.length("abcd") = 4.',
        SIBLINGS,
        args=[False],
        value=4,
        tags=("scoping",),
    )
    add(
        f,
        area,
        "bs-name-with-two-types-does-not-survive-the-if",
        "A name the branches bound with different types is not visible after the if: E-LOCAL-UNKNOWN.",
        kernel(main_fn('if c { x = 1; } else { x = "s"; }\nreturn x;', "main(c Bool) -> I32")),
        code="E-LOCAL-UNKNOWN",
        pointer="/functions/0/body/1/value",
        tags=("scoping",),
    )
    add(
        f,
        area,
        "bs-name-rebound-after-the-if-with-a-third-type",
        "After the if the name can be bound afresh with any type (here List<I32>).",
        kernel(
            main_fn(
                'if c { x = 1; } else { x = "s"; }\nx = list.of(c, c, c);\nreturn list.count(x);',
                "main(c Bool) -> I32",
            )
        ),
        args=[True],
        value=3,
        tags=("scoping",),
    )
    add(
        f,
        area,
        "bs-same-type-in-both-branches-survives",
        "A name both branches bind with one type survives the if.",
        kernel(main_fn("if c { x = 2; } else { x = 3; }\nreturn x * 10;", "main(c Bool) -> I32")),
        args=[False],
        value=30,
        tags=("scoping",),
    )
    add(
        f,
        area,
        "bs-name-bound-in-one-branch-only-does-not-survive",
        "A name bound in one branch only is not visible after the if.",
        kernel(main_fn("if c { y = 1; }\nreturn y;", "main(c Bool) -> I32")),
        code="E-LOCAL-UNKNOWN",
        pointer="/functions/0/body/1/value",
        tags=("scoping",),
    )
    add(
        f,
        area,
        "bs-branch-that-falls-through-hands-on-its-binding",
        "When the other branch always returns, what the falling-through branch bound survives.",
        kernel(
            main_fn(
                'if c { return 0; } else { x = "abc"; }\nreturn string.length(x);',
                "main(c Bool) -> I32",
            )
        ),
        args=[False],
        value=3,
        tags=("scoping",),
    )
    add(
        f,
        area,
        "bs-two-loop-bodies-bind-different-types",
        "Two loop bodies may bind one name with different types: sum of squares 0..3 plus 2 * len('ab').",
        kernel(
            main_fn(
                "acc = 0;\nfor i in 0 .. 4 { t = i * i; acc = acc + t; }\n"
                'for j in 0 .. 2 { t = "ab"; acc = acc + string.length(t); }\nreturn acc;'
            )
        ),
        value=sum(i * i for i in range(4)) + 2 * 2,
        tags=("scoping", "loops"),
    )
    add(
        f,
        area,
        "bs-while-and-for-bodies-bind-different-types",
        "A while body binds t as I64, a later for body as Bool.",
        kernel(
            main_fn(
                "k = 0;\nacc = 0L;\nwhile k < 3 { t = numeric.toI64(k); acc = acc + t; k = k + 1; }\n"
                "n = 0;\nfor i in 0 .. 5 { t = i > 2; if t { n = n + 1; } }\n"
                "return numeric.toI64(n) + acc;",
                "main() -> I64",
            )
        ),
        value=2 + (0 + 1 + 2),
        tags=("scoping", "loops"),
    )
    add(
        f,
        area,
        "bs-loop-local-not-visible-after-the-loop",
        "A name bound in a loop body is not visible after the loop.",
        kernel(main_fn('for i in 0 .. 2 { t = "x"; }\nreturn string.length(t);')),
        code="E-LOCAL-UNKNOWN",
        tags=("scoping", "loops"),
    )
    add(
        f,
        area,
        "bs-enclosing-local-keeps-its-type-inside-a-block",
        "A local bound before the if is the same local inside it and keeps its type: E-LOCAL-TYPE.",
        kernel(main_fn('x = 1;\nif c { x = "s"; }\nreturn x;', "main(c Bool) -> I32")),
        code="E-LOCAL-TYPE",
        tags=("scoping",),
    )
    add(
        f,
        area,
        "bs-nested-sibling-scopes",
        "Nested sibling blocks bind y as I32, Bool and String; each branch reads its own.",
        kernel(
            main_fn(
                "r = 0;\nif c { if d { y = 5; r = y; } else { y = true; if y { r = 6; } } } "
                'else { y = "seven!!"; r = string.length(y); }\nreturn r;',
                "main(c Bool, d Bool) -> I32",
            )
        ),
        args=[True, False],
        value=6,
        tags=("scoping",),
    )
    add(
        f,
        area,
        "bs-loop-counter-name-reused-with-another-type",
        "A forRange counter is not in scope after its loop: a later loop body may bind its name as a String.",
        kernel(
            main_fn(
                'n = 0;\nfor i in 0 .. 2 { n = n + i; }\nfor j in 0 .. 2 { i = "ab"; n = n + string.length(i); }\n'
                "return n;"
            )
        ),
        value=(0 + 1) + 2 * 2,
        tags=("scoping", "loops"),
    )
    rebound = kernel(
        main_fn(
            'k = 0;\nif n > 3 { t = "abc"; k = string.length(t); }\nt = 0;\nwhile t < n { t = t + 1; }\n'
            "return t + k;",
            "main(n I32) -> I32",
        )
    )
    add(
        f,
        area,
        "bs-name-rebound-as-a-loop-counter",
        "A name first bound as a String inside an if, then bound afresh as I32, counts a while loop: 9 + 3.",
        rebound,
        args=[9],
        value=12,
        tags=("scoping", "loops"),
    )
    add(
        f,
        area,
        "bs-name-rebound-as-a-loop-counter-proved",
        "Strict mode proves the loop over the rebound name (its type at the loop head is I32) and the "
        "kernel runs: 40 + 3.",
        rebound,
        args=[40],
        value=43,
        policy={"limits": WALL, "requireStaticBound": True, "inputBounds": {"main": {"n": [0, 50]}}},
        tags=("scoping", "loops", "strict"),
    )


GENERATORS = (_shared_policy, _resolution_order, _block_scoping)


def main(argv: list[str] | None = None) -> int:
    return generate_main(__file__, FILES, GENERATORS, argv)


if __name__ == "__main__":
    raise SystemExit(main())
