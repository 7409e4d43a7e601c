"""Generate the import- and validate-stage cases that live in area directories of the corpus.

    python conformance/tools/make_area_cases.py          # rewrite the case files
    python conformance/tools/make_area_cases.py --check  # fail if the files are out of date

Files written (each owned by this tool): ``effects-capabilities/validate.json``,
``bindings/registry.json``, ``hostile-input/canonical.json``, ``limits/static.json``,
``policy/schema.json`` and ``types/equality.json``. Every expectation is a rule of the spec, named in
the case's description (``spec/validation.md`` sections 2-10, ``spec/canonical.md`` section 8): which
stage refuses the module, with which code and category. Nothing here runs an implementation.
"""

from __future__ import annotations

from typing import Any

from dotboxd.conformance.tools.kit import generate_main, kernel, put_present

Case = dict[str, Any]
FILES: dict[str, list[Case]] = {}

HEADER = 'module "t" version "1.0.0";\n'


def category_of(code: str) -> str:
    """E-POLICY-* (spec/validation.md section 12) and E-PROOF-* (spec/proofs.md section 5) codes are
    PolicyDenied, every other import/validation code ValidationError."""
    return "PolicyDenied" if code.startswith(("E-POLICY-", "E-PROOF-")) else "ValidationError"


def add(
    file: str,
    name: str,
    description: str,
    text: str,
    *,
    code: str | None = None,
    stage: str = "validate",
    policy: dict[str, Any] | None = None,
    bindings: list[dict[str, Any]] | None = None,
    tags: tuple[str, ...] = (),
    pointer: str | None = None,
) -> None:
    """One case of ``file`` (relative to ``cases/``): accepted at ``stage`` when ``code`` is None,
    else rejected there with ``code`` and its category."""
    area = file.split("/")[0]
    case: Case = {"name": name, "description": description, "tags": [area, *tags], "kernelText": text}
    put_present(case, policy=policy, bindings=bindings)
    expect: dict[str, Any] = {"stage": stage, "outcome": "ok" if code is None else "rejected"}
    if code is not None:
        expect["diagnostic"] = code
        expect["error"] = category_of(code)
        if pointer is not None:
            expect["pointer"] = pointer
    case["expect"] = expect
    FILES.setdefault(file, []).append(case)


def binding(
    bid: str,
    params: list[Any],
    returns: str,
    effects: list[str],
    capability: str | None,
    *,
    safety: str = "SideEffectingExternal",
    audit: str = "PerCall",
    **extra: Any,
) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": bid, "parameters": params, "returnType": returns, "effects": effects}
    if capability is not None:
        entry["capability"] = capability
    entry.update({"cost": {"baseFuel": 5}, "audit": audit, "safety": safety})
    entry.update(extra)
    entry.setdefault("behavior", {"kind": "return", "value": True if returns == "Bool" else 0})
    return entry


KILL = binding("game.world.kill", ["I32"], "Bool", ["Cpu", "HostStateWrite"], "game.world.monster.write.kill")
KILL_ALL = binding(
    "game.world.killAll", [], "Bool", ["Cpu", "HostStateWrite"], "game.world.monster.write.kill"
)
CLOCK = binding("test.clock.now", [], "I64", ["Cpu", "Time"], "time.now", safety="ReadOnlyExternal")
LATER = binding(
    "probe.later",
    [],
    "I32",
    ["Cpu", "HostStateRead"],
    "probe.later",
    safety="ReadOnlyExternal",
    isAsync=True,
    behavior={"kind": "async-return", "value": 1},
)
KILL_CAP = "game.world.monster.write.kill"


def zone_binding(grant_parameters: dict[str, Any]) -> dict[str, Any]:
    """``game.zone.enter(I32) -> Bool``, a write guarded by its own capability, whose grants take
    ``grant_parameters`` (the grant-parameter cases vary only these)."""
    return binding(
        "game.zone.enter",
        ["I32"],
        "Bool",
        ["Cpu", "HostStateWrite"],
        "game.zone.enter",
        grantParameters=grant_parameters,
    )


def grants(*ids: str, **extra: Any) -> dict[str, Any]:
    return {"grants": [{"id": cap} for cap in ids], **extra}


# ---------------------------------------------------------------------------------------------
# effects and capabilities (spec/validation.md sections 9 and 10)


def _effects_capabilities() -> None:
    f = "effects-capabilities/validate.json"
    branch = kernel("if false { x = game.world.kill(1); }\nreturn 0;")
    add(
        f,
        "ec-capability-of-untaken-branch-is-required",
        "Capabilities are derived from the IR, not from values: a call in a branch that never runs is live code.",
        branch,
        code="E-POLICY-CAP",
        bindings=[KILL],
        tags=("capability",),
    )
    add(
        f,
        "ec-capability-of-untaken-branch-granted",
        "The same module with the capability granted is accepted.",
        branch,
        bindings=[KILL],
        policy=grants(KILL_CAP),
        tags=("capability",),
    )
    dead = kernel("return 0;\nx = game.world.kill(1);")
    add(
        f,
        "ec-dead-code-needs-no-capability",
        "A binding called only in dead code (after a return) adds no capability.",
        dead,
        bindings=[KILL],
        tags=("capability", "dead-code"),
    )
    add(
        f,
        "ec-dead-code-grant-is-unused",
        "In strict mode (rejectUnusedGrants true), granting the capability of a binding called only in "
        "dead code is an unused grant (E-POLICY-GRANT).",
        dead,
        code="E-POLICY-GRANT",
        bindings=[KILL],
        policy=grants(KILL_CAP, rejectUnusedGrants=True),
        tags=("capability", "dead-code", "unused-grant"),
    )
    pure = kernel("return 0;")
    add(
        f,
        "ec-unused-grant-accepted-by-default",
        "A grant of a capability a registered binding requires is accepted by default even when the module "
        "does not use it (DotBoxD's rule: one host policy serves many kernels).",
        pure,
        bindings=[KILL],
        policy=grants(KILL_CAP),
        tags=("unused-grant",),
    )
    # (name, description, kernel, code, granted, rejectUnusedGrants): the strict-mode switch
    reject_unused_cases: list[tuple[str, str, str, str | None, str, bool]] = [
        (
            "ec-unused-grant-rejected-when-asked",
            "rejectUnusedGrants true (strict mode) rejects a grant the module does not use.",
            pure,
            "E-POLICY-GRANT",
            KILL_CAP,
            True,
        ),
        (
            "ec-unused-grant-tolerated",
            "rejectUnusedGrants false is the default made explicit: an unused grant is a warning (W-POLICY-UNUSED-GRANT).",
            pure,
            None,
            KILL_CAP,
            False,
        ),
        (
            "ec-tolerance-does-not-grant",
            "rejectUnusedGrants false tolerates extra grants but grants nothing: a missing capability is still E-POLICY-CAP.",
            kernel("return game.world.kill(1) && true;", "main() -> Bool"),
            "E-POLICY-CAP",
            "time.now",
            False,
        ),
    ]
    for name, description, text, code, granted, reject_unused in reject_unused_cases:
        add(
            f,
            name,
            description,
            text,
            code=code,
            bindings=[KILL],
            policy=grants(granted, rejectUnusedGrants=reject_unused),
            tags=("unused-grant", "reject-unused-grants"),
        )
    add(
        f,
        "ec-reject-unused-grants-must-be-boolean",
        "The policy's rejectUnusedGrants is a boolean; anything else is a malformed policy.",
        pure,
        code="E-POLICY-SCHEMA",
        policy={"rejectUnusedGrants": "no"},
        tags=("reject-unused-grants",),
    )
    meta = f'meta "dotboxd.requiredCapabilities" = "{KILL_CAP};time.now";\n'
    add(
        f,
        "ec-metadata-capabilities-all-required",
        "Every capability listed in dotboxd.requiredCapabilities must be granted.",
        kernel("return 0;", header=meta),
        code="E-POLICY-CAP",
        bindings=[KILL],
        policy=grants(KILL_CAP),
        tags=("capability", "metadata"),
    )
    add(
        f,
        "ec-metadata-capabilities-granted",
        "With every listed capability granted the module is accepted (and the grants are used).",
        kernel("return 0;", header=meta),
        bindings=[KILL],
        policy=grants(KILL_CAP, "time.now", rejectUnusedGrants=True),
        tags=("capability", "metadata"),
    )
    add(
        f,
        "ec-request-is-not-a-grant",
        "A capability request states a need; it never grants it.",
        kernel("return game.world.kill(1);", "main() -> Bool", header=f'requires "{KILL_CAP}";\n'),
        code="E-POLICY-CAP",
        bindings=[KILL],
        tags=("capability", "request"),
    )
    add(
        f,
        "ec-request-does-not-make-unknown-grant-valid",
        "A request cannot make a capability grantable: a grant no registered binding requires is E-POLICY-GRANT "
        "even when the module requests it.",
        kernel("return 0;", header='requires "game.audit.read";\n'),
        code="E-POLICY-GRANT",
        policy=grants("game.audit.read"),
        tags=("capability", "request"),
    )
    add(
        f,
        "ec-one-grant-covers-two-bindings",
        "Two bindings with one capability need one grant.",
        kernel("return game.world.kill(1) && game.world.killAll();", "main() -> Bool"),
        bindings=[KILL, KILL_ALL],
        policy=grants(KILL_CAP),
        tags=("capability",),
    )
    add(
        f,
        "ec-deep-wildcard-covers",
        "a.* matches every capability below a, at any depth.",
        kernel("return game.world.kill(1);", "main() -> Bool"),
        bindings=[KILL],
        policy=grants("game.*"),
        tags=("capability", "wildcard"),
    )
    add(
        f,
        "ec-sibling-wildcard-does-not-cover",
        "game.world.read.* does not cover game.world.monster.write.kill and matches no registered binding's "
        "capability, so the grant itself is rejected (grants are checked before requirements).",
        kernel("return game.world.kill(1);", "main() -> Bool"),
        code="E-POLICY-GRANT",
        bindings=[KILL],
        policy=grants("game.world.read.*"),
        tags=("capability", "wildcard"),
    )
    reads = kernel("return list.count(xs) + map.get(m, 1);", "main(xs List<I32>, m Map<I32, I32>) -> I32")
    # (name, description, kernel, code, extra tags): effect inference against a Cpu-only policy
    cpu_only_cases: list[tuple[str, str, str, str | None, tuple[str, ...]]] = [
        (
            "ec-reads-need-only-cpu",
            "Reading collections (list.count, map.get) adds only Cpu, so a Cpu-only policy accepts it.",
            reads,
            None,
            (),
        ),
        (
            "ec-to-string-needs-alloc",
            "int32.toStringInvariant builds a string: Alloc, refused by a Cpu-only policy.",
            kernel("return int32.toStringInvariant(1);", "main() -> String"),
            "E-POLICY-EFFECT",
            (),
        ),
        (
            "ec-path-literal-needs-alloc",
            "A path literal is a text literal: Alloc.",
            kernel('return path"a.txt";', "main() -> SandboxPath"),
            "E-POLICY-EFFECT",
            (),
        ),
        (
            "ec-unreachable-function-adds-no-effect",
            "Only functions reachable from an entrypoint contribute effects.",
            kernel("return 0;", extra='fn unused() -> String { return "allocates"; }\n'),
            None,
            (),
        ),
        (
            "ec-dead-code-adds-no-effect",
            "Dead statements add no effects.",
            kernel('return 0;\ns = "allocates";'),
            None,
            ("dead-code",),
        ),
        (
            "ec-called-function-effects-count",
            "A function's effects include those of the functions it calls.",
            kernel("return helper();", "main() -> String", 'fn helper() -> String { return "allocates"; }\n'),
            "E-POLICY-EFFECT",
            (),
        ),
    ]
    for name, description, text, code, extra_tags in cpu_only_cases:
        add(
            f,
            name,
            description,
            text,
            code=code,
            policy={"allowedEffects": ["Cpu"]},
            tags=("effects", "inference", *extra_tags),
        )
    clock = kernel("return test.clock.now();", "main() -> I64")
    add(
        f,
        "ec-capability-checked-before-effects",
        "Resolution order: a missing capability (step 4) is reported before a missing effect (step 5).",
        clock,
        code="E-POLICY-CAP",
        bindings=[CLOCK],
        policy={"allowedEffects": ["Cpu"]},
        tags=("effects", "capability", "order"),
    )
    add(
        f,
        "ec-explicit-effects-replace-grant-effects",
        "An explicit allowedEffects set replaces the effects grants would allow: Time is missing.",
        clock,
        code="E-POLICY-EFFECT",
        bindings=[CLOCK],
        policy=grants("time.now", allowedEffects=["Cpu"]),
        tags=("effects", "capability"),
    )
    add(
        f,
        "ec-explicit-effects-with-time",
        "An explicit allowedEffects set that includes Time accepts the clock binding.",
        clock,
        bindings=[CLOCK],
        policy=grants("time.now", allowedEffects=["Cpu", "Time"]),
        tags=("effects", "capability"),
    )
    later = kernel("return probe.later();")
    add(
        f,
        "ec-async-needs-concurrency",
        "An async binding adds Concurrency; an explicit effect set without it is refused.",
        later,
        code="E-POLICY-EFFECT",
        bindings=[LATER],
        policy=grants("probe.later", allowRuntimeAsync=True, allowedEffects=["Cpu", "HostStateRead"]),
        tags=("effects", "async"),
    )
    add(
        f,
        "ec-async-with-concurrency-allowed",
        "With Concurrency in the explicit effect set and the async grant the module is accepted.",
        later,
        bindings=[LATER],
        policy=grants(
            "probe.later", allowRuntimeAsync=True, allowedEffects=["Cpu", "HostStateRead", "Concurrency"]
        ),
        tags=("effects", "async"),
    )
    add(
        f,
        "ec-async-grant-by-id",
        "dotboxd.runtime.async may be granted by id, like allowRuntimeAsync.",
        later,
        bindings=[LATER],
        policy=grants("probe.later", "dotboxd.runtime.async"),
        tags=("capability", "async"),
    )


# ---------------------------------------------------------------------------------------------
# binding manifests, compiled stubs and grant parameters (spec/validation.md section 8)


def _bindings() -> None:
    f = "bindings/registry.json"
    pure = kernel("return 0;")
    pure_binding = {
        "id": "probe.abs",
        "parameters": ["I32"],
        "returnType": "I32",
        "effects": ["Cpu"],
        "cost": {"baseFuel": 2},
        "audit": "None",
        "safety": "PureIntrinsic",
    }
    malformed: list[tuple[str, str, dict[str, Any]]] = [
        ("parameters-not-array", "'parameters' must be an array of types", {"parameters": "I32"}),
        ("effects-not-array", "'effects' must be an array of effect names", {"effects": "Cpu"}),
        ("is-async-not-boolean", "'isAsync' must be a boolean", {"isAsync": "no"}),
        ("version-not-string", "'version' must be a string", {"version": 1}),
        ("capability-not-string", "the capability must be a string", {"capability": 5}),
        (
            "named-parameter-extra-key",
            "a named parameter is exactly {name, type}",
            {"parameters": [{"name": "x", "type": "I32", "default": 1}]},
        ),
        (
            "grant-parameters-not-lists",
            "grantParameters is {required: [names], optional: [names]}",
            {"grantParameters": {"required": "zone"}},
        ),
    ]
    for name, rule, change in malformed:
        add(
            f,
            f"binding-manifest-{name}",
            f"A malformed binding manifest entry is E-BINDING-MANIFEST: {rule}.",
            pure,
            code="E-BINDING-MANIFEST",
            bindings=[{**pure_binding, **change}],
            tags=("manifest",),
        )
    stubs: list[tuple[str, str, dict[str, Any], str | None]] = [
        (
            "unknown-stub",
            "the stub must be CallBinding or an allowlisted exact stub",
            {"compiledTarget": {"kind": "RuntimeStub", "method": "EvalString"}},
            "E-BINDING-COMPILED",
        ),
        (
            "target-not-a-runtime-stub",
            'compiledTarget must be {"kind": "RuntimeStub", "method": name}',
            {"compiledTarget": {"kind": "Delegate", "method": "AbsI32"}},
            "E-BINDING-COMPILED",
        ),
        (
            "exact-stub-on-audited-binding",
            "an exact stub needs a PureIntrinsic binding with audit None",
            {"compiledTarget": {"kind": "RuntimeStub", "method": "AbsI32"}, "audit": "PerCall"},
            "E-BINDING-COMPILED",
        ),
        (
            "exact-stub-signature-mismatch",
            "an exact stub must have the stub's signature (AbsI32 is I32 -> I32)",
            {
                "compiledTarget": {"kind": "RuntimeStub", "method": "AbsI32"},
                "parameters": ["I64"],
                "returnType": "I64",
            },
            "E-BINDING-COMPILED",
        ),
        (
            "exact-stub-accepted",
            "AbsI32 on a PureIntrinsic, audit-None (I32) -> I32 binding is allowed",
            {"compiledTarget": {"kind": "RuntimeStub", "method": "AbsI32"}},
            None,
        ),
        (
            "generic-stub-accepted",
            "CallBinding, the generic stub, fits every binding",
            {"compiledTarget": {"kind": "RuntimeStub", "method": "CallBinding"}},
            None,
        ),
    ]
    for name, rule, change, code in stubs:
        add(
            f,
            f"binding-compiled-{name}",
            f"Registry check 11: {rule}.",
            kernel("return probe.abs(-3);"),
            code=code,
            bindings=[{**pure_binding, **change}],
            tags=("compiled-stub",),
        )
    zoned = zone_binding({"required": ["zone"], "optional": ["maxPlayers"]})
    text = kernel("return game.zone.enter(1);", "main() -> Bool")
    params: list[tuple[str, str, dict[str, str], str | None]] = [
        ("required-missing", "a required grant parameter is missing", {}, "E-POLICY-GRANT-PARAM"),
        ("required-present", "the required parameter is given", {"zone": "north"}, None),
        (
            "optional-present",
            "required and optional parameters are given",
            {"zone": "north", "maxPlayers": "8"},
            None,
        ),
        (
            "unknown",
            "a parameter the binding does not declare",
            {"zone": "north", "admin": "true"},
            "E-POLICY-GRANT-PARAM",
        ),
    ]
    for name, rule, parameters, code in params:
        add(
            f,
            f"binding-grant-parameters-{name}",
            f"A custom capability's grant parameters are checked by its binding's grantParameters: {rule}.",
            text,
            code=code,
            bindings=[zoned],
            policy={"grants": [{"id": "game.zone.enter", "parameters": parameters}]},
            tags=("grant-parameters",),
        )


# ---------------------------------------------------------------------------------------------
# hostile input: the canonical form's budget (spec/canonical.md section 8)


def _hostile() -> None:
    f = "hostile-input/canonical.json"
    for depth, code in ((10, None), (55, "E-CANON-LIMIT")):
        expr = "!" * depth + '("a\\\\b" == "c")'
        add(
            f,
            f"canonical-backslash-{depth}-levels-deep",
            "Each nesting level escapes its child again, doubling backslashes: the canonical form is measured "
            "before it is built and a module whose canonical text would exceed 32 Mi units is rejected"
            + (" (about 2^55 units here)." if code else "; ten levels stay far below the budget."),
            kernel(f"return {expr};", "main() -> Bool"),
            code=code,
            tags=("canonical", "amplification"),
        )


# ---------------------------------------------------------------------------------------------
# static limits at N and N + 1 (spec/validation.md sections 3 and 7)


def _limits() -> None:
    f = "limits/static.json"

    def nested(depth: int) -> str:
        return "List<" * depth + "I32" + ">" * depth

    for depth, code in ((8, None), (9, "E-TYPE-DEPTH")):
        side = "at-limit" if code is None else "over-limit"
        add(
            f,
            f"type-depth-{depth}-parameter",
            f"A type nests at most 8 composites; {depth} levels {'are allowed' if code is None else 'are E-TYPE-DEPTH'}.",
            kernel("return 0;", f"main(x {nested(depth)}) -> I32"),
            code=code,
            tags=("limit:typeDepth", side),
        )
        built = "list.of(" * depth + "1" + ")" * depth
        add(
            f,
            f"type-depth-{depth}-built-by-list-of",
            "The depth limit also applies to types built by list.of.",
            kernel(f"x = {built};\nreturn 0;"),
            code=code,
            tags=("limit:typeDepth", side),
        )
    for text, units, code in (
        ("abcd", 4, None),
        ("abcde", 5, "E-CONST-HUGE"),
        ("😀😀", 4, None),
        ("😀😀a", 5, "E-CONST-HUGE"),
    ):
        add(
            f,
            f"constant-length-{units}-of-4-{'astral' if '😀' in text else 'ascii'}",
            "A string literal is at most min(65,536, maxStringLength) UTF-16 units long "
            f"(here 4; this one has {units}).",
            kernel(f'return "{text}";', "main() -> String"),
            code=code,
            policy={"limits": {"maxStringLength": 4}},
            tags=("limit:constantLength", "at-limit" if code is None else "over-limit"),
        )


# ---------------------------------------------------------------------------------------------
# policy documents (spec/validation.md section 10, JSON form)


def _policy() -> None:
    f = "policy/schema.json"
    pure = kernel("return 0;")
    bad: list[tuple[str, str, dict[str, Any]]] = [
        ("policy-id-not-string", "policyId is a string", {"policyId": 5}),
        (
            "allowed-effects-not-array",
            "allowedEffects is an array of effect names",
            {"allowedEffects": "Cpu"},
        ),
        ("allow-runtime-async-not-boolean", "allowRuntimeAsync is a boolean", {"allowRuntimeAsync": 1}),
        ("deterministic-not-object", "deterministic is an object or absent", {"deterministic": True}),
        ("brands-not-array", "declaredOpaqueIdTypes is an array", {"declaredOpaqueIdTypes": "PlayerId"}),
        (
            "require-static-bound-not-boolean",
            "requireStaticBound is a boolean",
            {"requireStaticBound": "yes"},
        ),
        (
            "input-bounds-not-pairs",
            "inputBounds maps fn -> param -> [lo, hi]",
            {"inputBounds": {"main": {"n": [0]}}},
        ),
        ("grant-unknown-key", "a grant has no other keys", {"grants": [{"id": "time.now", "scope": "all"}]}),
    ]
    for name, rule, policy in bad:
        add(
            f,
            f"policy-schema-{name}",
            f"A malformed policy document is E-POLICY-SCHEMA: {rule}.",
            pure,
            code="E-POLICY-SCHEMA",
            policy=policy,
            tags=("schema",),
        )
    zoned = zone_binding({"required": ["zone"]})
    add(
        f,
        "policy-schema-grant-parameter-not-text",
        "Grant parameters map names to texts; an array value is a malformed policy, whatever the capability.",
        kernel("return game.zone.enter(1);", "main() -> Bool"),
        code="E-POLICY-SCHEMA",
        bindings=[zoned],
        policy={"grants": [{"id": "game.zone.enter", "parameters": {"zone": ["north"]}}]},
        tags=("schema",),
    )
    add(
        f,
        "policy-schema-every-key-well-formed",
        "A policy using every key of the JSON form, well formed, is accepted.",
        kernel("return n;", "main(n I32) -> I32"),
        policy={
            "policyId": "all-keys",
            "limits": {"maxFuel": 500},
            "allowedEffects": ["Cpu", "Alloc"],
            "grants": [],
            "allowRuntimeAsync": False,
            "deterministic": {"logicalNowUnixMillis": 0, "randomSeed": 7},
            "declaredOpaqueIdTypes": ["PlayerId"],
            "inputBounds": {"main": {"n": [0, 10]}},
            "requireStaticBound": False,
            "rejectUnusedGrants": True,
        },
        tags=("schema",),
    )


# ---------------------------------------------------------------------------------------------
# types: equality is tag-strict (spec/validation.md section 4, spec/semantics.md section 1)


def _types() -> None:
    f = "types/equality.json"
    pairs: list[tuple[str, str, str]] = [
        ("i32-vs-i64", "I32", "I64"),
        ("i32-vs-f64", "I32", "F64"),
        ("i32-vs-bool", "I32", "Bool"),
        ("string-vs-path", "String", "SandboxPath"),
        ("path-vs-uri", "SandboxPath", "SandboxUri"),
        ("string-vs-guid", "String", "Guid"),
        ("brand-vs-brand", "PlayerId", "ItemId"),
        ("brand-vs-string", "PlayerId", "String"),
        ("list-element-types", "List<I32>", "List<I64>"),
        ("map-key-types", "Map<String, I32>", "Map<SandboxPath, I32>"),
        ("record-field-order", "Record<I32, Bool>", "Record<Bool, I32>"),
        ("list-vs-record", "List<I32>", "Record<I32>"),
    ]
    brands = {"declaredOpaqueIdTypes": ["PlayerId", "ItemId"]}
    for name, left, right in pairs:
        add(
            f,
            f"equality-{name}-rejected",
            f"eq compares values of identical types only: {left} == {right} is E-TYPE-MISMATCH.",
            kernel("return a == b;", f"main(a {left}, b {right}) -> Bool"),
            code="E-TYPE-MISMATCH",
            policy=brands if "Id" in left + right else None,
            pointer="/functions/0/body/0/value",
            tags=("equality",),
        )
        add(
            f,
            f"equality-{name}-same-type-accepted",
            f"eq on two {left} values is well typed.",
            kernel("return a != b;", f"main(a {left}, b {left}) -> Bool"),
            policy=brands if "Id" in left else None,
            tags=("equality",),
        )


# ---------------------------------------------------------------------------------------------
# strict mode: requireStaticBound installs a kernel only if every budget is PROVED (spec/proofs.md)


def _strict() -> None:
    f = "policy/static-bounds.json"
    loop = kernel("for i in 0 .. n { }\nreturn 0;", "main(n I32) -> I32")

    def strict(**extra: Any) -> dict[str, Any]:
        return {"requireStaticBound": True, **extra}

    add(
        f,
        "strict-straight-line-accepted",
        "Strict mode accepts a kernel without loops: every budget is proved by its exact cost.",
        kernel("return 1 + 2;"),
        policy=strict(),
        tags=("strict",),
    )
    add(
        f,
        "strict-unbounded-input-refuted",
        "forRange 0..n runs n iterations; with n unbounded some input surely exhausts maxFuel, so the "
        "budget is REFUTED (E-PROOF-REFUTED at the entrypoint).",
        loop,
        code="E-PROOF-REFUTED",
        policy=strict(),
        pointer="/functions/0",
        tags=("strict",),
    )
    add(
        f,
        "strict-same-module-without-strict-mode",
        "Without requireStaticBound the same module is accepted: runtime metering decides.",
        loop,
        tags=("strict",),
    )
    # fuel of a run: for 1 + bounds 2 + 5 per iteration, return 2: 5n + 5 <= 100,000 iff n <= 19,999
    for hi, code in ((19_999, None), (20_000, "E-PROOF-REFUTED")):
        add(
            f,
            f"strict-input-bound-{hi}",
            f"With n in [0, {hi}] the loop costs at most 5n + 5 fuel, "
            + (
                "exactly the 100,000 of maxFuel: PROVED."
                if code is None
                else "100,005 for n = 20,000: REFUTED."
            ),
            loop,
            code=code,
            policy=strict(inputBounds={"main": {"n": [0, hi]}}),
            pointer=None if code is None else "/functions/0",
            tags=("strict", "limit:staticBound", "at-limit" if code is None else "over-limit"),
        )
    add(
        f,
        "strict-while-with-ranking-function-accepted",
        "while i < n with i growing by 1 has the ranking function n - i; with n bounded the budgets are proved.",
        kernel("i = 0;\nwhile i < n { i = i + 1; }\nreturn i;", "main(n I32) -> I32"),
        policy=strict(inputBounds={"main": {"n": [0, 100]}}),
        tags=("strict", "ranking"),
    )
    add(
        f,
        "strict-while-without-ranking-function-unproven",
        "A guard with no comparison (x != 0) gives no ranking function: the loop is unbounded, UNKNOWN, and "
        "strict mode never accepts UNKNOWN (E-PROOF-UNPROVEN).",
        kernel("while x != 0 { x = x - 1; }\nreturn 0;", "main(x I32) -> I32"),
        code="E-PROOF-UNPROVEN",
        policy=strict(),
        pointer="/functions/0",
        tags=("strict", "ranking"),
    )


GENERATORS = (_effects_capabilities, _bindings, _hostile, _limits, _policy, _types, _strict)


def main(argv: list[str] | None = None) -> int:
    return generate_main(__file__, FILES, GENERATORS, argv)


if __name__ == "__main__":
    raise SystemExit(main())
