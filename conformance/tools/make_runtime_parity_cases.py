"""Generate the run-time DotBoxD parity cases (issue 12, items 2, 5, 7 and 8):

* ``bindings/builtin-host-calls.json``: every pure built-in (``math.*``, ``string.*``,
  ``int32.toStringInvariant``) is a pure binding - one host call per call, in ``usage.hostCalls`` and
  ``bindingCalls``, refused past ``maxHostCalls`` before its base fuel; the intrinsics
  (``list.*``, ``map.*``, ``record.*``, ``numeric.*``) are not host calls;
* ``control-flow/operand-order.json``: ``and``/``or`` move an operand only when neither can fail - for
  every built-in family, an operand that can fail on the left keeps the authored order (and fails),
  the same operand on the right is skipped by the authored short-circuit, and an operand that cannot
  fail is still moved behind the cheaper decider;
* ``limits/refused-attempts.json``: ``maxWallTimeMs: 0`` is Timeout before the first statement, and
  usage at a quota failure counts the refused attempt (host calls, a binding's calls, loop
  iterations, log events) but not a refused amount (fuel).

    python conformance/tools/make_runtime_parity_cases.py          # rewrite the case files
    python conformance/tools/make_runtime_parity_cases.py --check  # fail if the files are out of date

As in ``make_run_cases.py``, every ``fuelUsed`` and usage figure is computed here by a formula
written next to the case from the cost table (``dotboxd.core.costs``, the executable form of
``spec/costs.md``), and every value with plain Python: nothing here imports or runs the runtime.
"""

from __future__ import annotations

from typing import Any

from dotboxd.conformance.tools.kit import generate_main, kernel, run_expect
from dotboxd.core import costs as C

GENEROUS_WALL_MS = 60_000  # no expectation may depend on the machine's speed (README section 8)
I32_MIN = -(2**31)

S = C.STATEMENT_FUEL
E = C.EXPRESSION_FUEL
LOOP = C.LOOP_ITERATION_FUEL
HOST = C.HOST_CALL_COUNT

Case = dict[str, Any]
FILES: dict[str, list[Case]] = {}


def base(name: str) -> int:
    return C.BUILTIN_COSTS[name].base


def units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def add(
    file: str,
    name: str,
    text: str,
    *,
    description: str,
    value: Any = None,
    error: str | None = None,
    code: str | None = None,
    fuel: int | None = None,
    usage: dict[str, int] | None = None,
    binding_calls: dict[str, int] | None = None,
    args: list[Any] | None = None,
    limits: dict[str, int] | None = None,
    policy: dict[str, Any] | None = None,
    bindings: list[dict[str, Any]] | None = None,
    tags: tuple[str, ...] = (),
) -> None:
    expect = run_expect(
        value=value, error=error, code=code, fuel=fuel, usage=usage, binding_calls=binding_calls
    )
    full_policy = dict(policy or {})
    wall = {} if error == "Timeout" else {"maxWallTimeMs": GENEROUS_WALL_MS}
    full_policy["limits"] = {**dict(full_policy.get("limits", {})), **(limits or {}), **wall}
    case: Case = {
        "name": name,
        "description": description,
        "tags": ["run", "dotboxd-parity", *tags],
        "kernelText": text,
        "policy": full_policy,
    }
    if bindings is not None:
        case["bindings"] = bindings
    if args is not None:
        case["args"] = args
    case["expect"] = expect
    FILES.setdefault(file, []).append(case)


# ---------------------------------------------------------------------------------------------
# Item 2: pure built-ins are pure bindings

BUILTIN_FILE = "bindings/builtin-host-calls.json"


def _string_result_fuel(name: str, result: str) -> int:
    """Per-result-byte fuel of a built text (after its shape charge)."""
    return C.BUILTIN_COSTS[name].per_result_byte * C.string_bytes(units(result))


def _compare_fuel(name: str, a: str, b: str) -> int:
    return C.BUILTIN_COSTS[name].per_input_unit * (units(a) + units(b))


# (built-in, parameters, argument values, result type, expected value, fuel after the base fuel)
PURE_CALLS: list[tuple[str, str, list[Any], str, Any, int]] = [
    ("math.abs", "a I32", [-5], "I32", 5, 0),
    ("math.min", "a I32, b I32", [3, -4], "I32", -4, 0),
    ("math.max", "a I32, b I32", [3, -4], "I32", 3, 0),
    ("math.clamp", "a I32, b I32, c I32", [12, 0, 10], "I32", 10, 0),
    ("math.sqrt", "a F64", [2.25], "F64", 1.5, 0),
    ("math.floor", "a F64", [-1.5], "F64", -2.0, 0),
    ("math.ceil", "a F64", [-1.5], "F64", -1.0, 0),
    ("math.round", "a F64", [2.5], "F64", 2.0, 0),  # ties to even
    ("int32.toStringInvariant", "a I32", [-42], "String", "-42", 0),
    ("string.length", "a String", ["abc"], "I32", 3, 0),
    ("string.isEmpty", "a String", [""], "Bool", True, 0),
    (
        "string.substringBudgeted",
        "a String, b I32, c I32",
        ["hello", 1, 3],
        "String",
        "ell",
        _string_result_fuel("string.substringBudgeted", "ell"),
    ),
    (
        "string.concatBudgeted",
        "a String, b String",
        ["ab", "c"],
        "String",
        "abc",
        _string_result_fuel("string.concatBudgeted", "abc"),
    ),
    (
        "string.equals",
        "a String, b String",
        ["ab", "ab"],
        "Bool",
        True,
        _compare_fuel("string.equals", "ab", "ab"),
    ),
    (
        "string.compareOrdinal",
        "a String, b String",
        ["a", "b"],
        "I32",
        -1,
        _compare_fuel("string.compareOrdinal", "a", "b"),
    ),
]


def _input_string_bytes(args: list[Any]) -> int:
    return sum(C.string_bytes(units(a)) for a in args if isinstance(a, str))


def _builtin_host_calls() -> None:
    for name, params, args, result, value, extra in PURE_CALLS:
        names = [p.split()[0] for p in params.split(", ")]
        text = kernel(f"return {name}({', '.join(names)});", f"main({params}) -> {result}")
        slug = name.replace(".", "-").lower()
        call_fuel = S + E + len(args) * E  # statement, call node, one var per argument
        result_bytes = C.string_bytes(units(value)) if isinstance(value, str) else 0
        add(
            BUILTIN_FILE,
            f"parity-builtin-{slug}-is-a-host-call",
            text,
            description=f"{name} is a pure binding: one host call, counted in hostCalls and bindingCalls",
            value=value,
            args=args,
            fuel=call_fuel + base(name) + extra,
            usage={"hostCalls": HOST, "stringBytes": _input_string_bytes(args) + result_bytes},
            binding_calls={name: HOST},
            limits={"maxHostCalls": 1},
            tags=("builtin-binding", "at-limit", "limit:maxHostCalls"),
        )
        add(
            BUILTIN_FILE,
            f"parity-builtin-{slug}-refused-at-max-host-calls-0",
            text,
            description=f"{name} under maxHostCalls 0: the host call is refused before its base fuel "
            "and counted (the refused attempt)",
            error="QuotaExceeded",
            code="R-QUOTA-HOST-CALLS",
            args=args,
            fuel=call_fuel,
            usage={"hostCalls": HOST},
            binding_calls={name: 0},
            limits={"maxHostCalls": 0},
            tags=("builtin-binding", "over-limit", "limit:maxHostCalls"),
        )
    # a loop of n calls is n host calls; N is allowed, N + 1 refused (and counted)
    body = "s = 0;\nfor i in 0 .. 4 { s = s + math.max(i, 2); }\nreturn s;"
    per_iteration = LOOP + S + 5 * E + base("math.max")  # 5, set, add, s, call, i, 2, then max's base
    for limit, ok in ((4, True), (3, False)):
        add(
            BUILTIN_FILE,
            f"parity-builtin-loop-{'at' if ok else 'over'}-max-host-calls",
            kernel(body),
            description="every built-in call in a loop is a host call: N calls fit maxHostCalls N, "
            "the (N + 1)-th is refused and counted",
            value=sum(max(i, 2) for i in range(4)) if ok else None,
            error=None if ok else "QuotaExceeded",
            code=None if ok else "R-QUOTA-HOST-CALLS",
            fuel=(S + E) + (S + 2 * E) + 4 * per_iteration + (S + E)
            if ok
            else (S + E) + (S + 2 * E) + 3 * per_iteration + LOOP + S + 5 * E,
            usage={"hostCalls": 4, "loopIterations": 4},
            binding_calls={"math.max": 4 if ok else 3},
            limits={"maxHostCalls": limit},
            tags=("builtin-binding", "at-limit" if ok else "over-limit", "limit:maxHostCalls"),
        )
    # the intrinsics are language operations, not bindings: they run under maxHostCalls 0
    intrinsics = [
        ("list", "return list.count(list.add(list.of(1), 2)) + list.get(list.empty[I32](), 0);", None),
        ("map", "return map.get(map.remove(map.set(map.empty[Map<I32, I32>](), 1, 7), 2), 1);", 7),
        ("record", "return record.get(record.new[Record<I32, Bool>](5, true), 0);", 5),
        ("numeric", "return numeric.toI64(3) == numeric.toI64(3);", True),
    ]
    for family, body_text, expected in intrinsics:
        returns = "Bool" if family == "numeric" else "I32"
        if expected is None:  # list.get of an empty list: InvalidInput, still no host call
            add(
                BUILTIN_FILE,
                f"parity-intrinsic-{family}-is-not-a-host-call",
                kernel(body_text, f"main() -> {returns}"),
                description=f"{family}.* calls are intrinsics, never host calls (maxHostCalls 0 allows them)",
                error="InvalidInput",
                code="R-LIST-INDEX",
                usage={"hostCalls": 0},
                binding_calls={},
                limits={"maxHostCalls": 0},
                tags=("builtin-binding", "intrinsic"),
            )
            continue
        add(
            BUILTIN_FILE,
            f"parity-intrinsic-{family}-is-not-a-host-call",
            kernel(body_text, f"main() -> {returns}"),
            description=f"{family}.* calls are intrinsics, never host calls (maxHostCalls 0 allows them)",
            value=expected,
            usage={"hostCalls": 0},
            binding_calls={},
            limits={"maxHostCalls": 0},
            tags=("builtin-binding", "intrinsic"),
        )


# ---------------------------------------------------------------------------------------------
# Item 5: and/or move an operand only when neither can fail

ORDER_FILE = "control-flow/operand-order.json"

# (family, operand that fails, its expression fuel up to the failure, inputs, limits, error, code,
# host calls made). The operand is a Bool expression; the fuel counts its nodes evaluated before the
# failing charge plus the built-in charges made, in evaluation order.
FAILING: list[tuple[str, str, str, int, list[Any], str, dict[str, int], str, str, int]] = [
    (
        "math-value-error",
        "math.abs(a) > 0",
        "a I32",
        # >, call, a; host call; base fuel; then abs(MIN) overflows
        3 * E + base("math.abs"),
        [I32_MIN],
        "I32",
        {},
        "InvalidInput",
        "R-ARITH-OVERFLOW",
        1,
    ),
    (
        "math-host-calls",
        "math.min(a, 1) > 0",
        "a I32",
        4 * E,  # >, call, a, 1; the host call is refused before the base fuel
        [5],
        "I32",
        {"maxHostCalls": 0},
        "QuotaExceeded",
        "R-QUOTA-HOST-CALLS",
        1,
    ),
    (
        "int32-string-length",
        "string.length(int32.toStringInvariant(a)) > 0",
        "a I32",
        # >, length, toString, a; toString's host call and base; its text (2 units) is refused
        4 * E + base("int32.toStringInvariant"),
        [42],
        "I32",
        {"maxStringLength": 1},
        "QuotaExceeded",
        "R-QUOTA-STRING-LENGTH",
        1,
    ),
    (
        "string-building",
        "string.length(string.concatBudgeted(a, a)) > 0",
        "a String",
        # >, length, concat, a, a; concat's host call and base; its text (6 units > 5) is refused
        5 * E + base("string.concatBudgeted"),
        ["abc"],
        "String",
        {"maxStringLength": 5},
        "QuotaExceeded",
        "R-QUOTA-STRING-LENGTH",
        1,
    ),
    (
        "string-range",
        "string.isEmpty(string.substringBudgeted(a, 2, 5))",
        "a String",
        # isEmpty, substring, a, 2, 5; substring's host call and base; the range is outside "abc"
        5 * E + base("string.substringBudgeted"),
        ["abc"],
        "String",
        {},
        "InvalidInput",
        "R-STRING-RANGE",
        1,
    ),
    (
        "list-length",
        "list.count(list.of(1, 2, 3)) > 0",
        "a I32",
        # >, count, of, three literals; list.of's copy fuel and allocation; its length 3 > 2 is refused
        6 * E + C.copy_fuel(3),
        [0],
        "I32",
        {"maxListLength": 2},
        "QuotaExceeded",
        "R-QUOTA-LIST-LENGTH",
        0,
    ),
    (
        "list-index",
        "list.get(list.of(a), 3) > 0",
        "a I32",
        # >, get, of, a, 3; list.of charges; list.get's read fuel (2 + 1), then index 3 is outside
        5 * E + C.copy_fuel(1) + C.read_fuel(1),
        [4],
        "I32",
        {},
        "InvalidInput",
        "R-LIST-INDEX",
        0,
    ),
    (
        "map-entries",
        "map.containsKey(map.set(map.empty[Map<I32, I32>](), a, 1), a)",
        "a I32",
        # containsKey, set, empty; empty's fuel; a, 1; set's copy fuel; its 1 entry > 0 is refused
        3 * E + C.MAP_EMPTY_FUEL + 2 * E + C.copy_fuel(0, 1),
        [4],
        "I32",
        {"maxMapEntries": 0},
        "QuotaExceeded",
        "R-QUOTA-MAP-ENTRIES",
        0,
    ),
    (
        "map-missing-key",
        "map.get(map.empty[Map<I32, I32>](), a) > 0",
        "a I32",
        # >, get, empty; empty's fuel; a; get's read fuel on an empty map; the key is missing
        3 * E + C.MAP_EMPTY_FUEL + E + C.read_fuel(0),
        [4],
        "I32",
        {},
        "NotFound",
        "R-MAP-KEY-MISSING",
        0,
    ),
    (
        "record-allocation",
        "record.get(record.new[Record<I32, Bool>](a, true), 1)",
        "a I32",
        # get, new, a, true; record.new's copy fuel; its 32 bytes > 16 are refused
        4 * E + C.copy_fuel(2),
        [4],
        "I32",
        {"maxAllocatedBytes": C.record_new_alloc(2) - 1},
        "QuotaExceeded",
        "R-QUOTA-ALLOCATION",
        0,
    ),
]


def _operand_order() -> None:
    for family, operand, params, fuel, args, _, limits, error, code, host_calls in FAILING:
        for op, decider in (("&&", "false"), ("||", "true")):
            word = "and" if op == "&&" else "or"
            # the failing operand on the left: it can fail, so nothing moves and it runs first
            add(
                ORDER_FILE,
                f"parity-order-{family}-left-{word}-keeps-authored-order",
                kernel(f"return ({operand}) {op} {decider};", f"main({params}) -> Bool"),
                description=f"'{operand}' can fail, so it is not moved behind the cheaper '{decider}': "
                "it runs first and its error ends the run",
                error=error,
                code=code,
                args=args,
                fuel=S + E + fuel,  # statement, the and/or node, then the left operand up to its failure
                usage={"hostCalls": host_calls},
                limits=limits,
                tags=("short-circuit", "operand-order", family),
            )
            # the same operand on the right: the authored left operand decides, it never runs
            add(
                ORDER_FILE,
                f"parity-order-{family}-right-{word}-is-skipped",
                kernel(f"return {decider} {op} ({operand});", f"main({params}) -> Bool"),
                description=f"'{decider}' on the left decides, so '{operand}' on the right never runs",
                value=decider == "true",
                args=args,
                fuel=S + E + E,
                usage={"hostCalls": 0},
                limits=limits,
                tags=("short-circuit", "operand-order", family),
            )
    # operands that cannot fail (fuel aside) may still run after a cheaper decider on the right
    safe: list[tuple[str, str, str, list[Any]]] = [
        ("numeric", "numeric.toI64(a) > numeric.toI64(1)", "a I32", [5]),
        ("list-read", "list.count(l) > 0", "l List<I32>", [[1, 2]]),
        ("record-read", "record.get(r, 1)", "r Record<I32, Bool>", [[1, True]]),
        ("map-read", "map.containsKey(m, 1)", "m Map<I32, I32>", [[[1, 2]]]),
    ]
    for family, operand, params, args in safe:
        for op, decider in (("&&", "false"), ("||", "true")):
            word = "and" if op == "&&" else "or"
            add(
                ORDER_FILE,
                f"parity-order-{family}-left-{word}-cheaper-right-first",
                kernel(f"return ({operand}) {op} {decider};", f"main({params}) -> Bool"),
                description=f"'{operand}' cannot fail, so the cheaper '{decider}' runs first and decides",
                value=decider == "true",
                args=args,
                fuel=S + E + E,  # statement, the and/or node, the decider; the left operand never runs
                usage={"hostCalls": 0},
                tags=("short-circuit", "operand-order", "reorder", family),
            )


# ---------------------------------------------------------------------------------------------
# Items 7 and 8: zero wall time, and the refused attempt in usage

LIMITS_FILE = "limits/refused-attempts.json"


def _binding(bid: str, max_calls: int | None = None) -> dict[str, Any]:
    cost: dict[str, Any] = {"baseFuel": 1, "perByteFuel": 0}
    if max_calls is not None:
        cost["maxCallsPerRun"] = max_calls
    return {
        "id": bid,
        "parameters": [],
        "returnType": "Bool",
        "effects": ["Cpu", "HostStateRead"],
        "capability": bid,
        "cost": cost,
        "isAsync": False,
        "audit": "PerCall",
        "safety": "ReadOnlyExternal",
        "behavior": {"kind": "return", "value": True},
    }


def _refused_attempts() -> None:
    for name, body, returns in (
        ("return", "return 1;", "I32"),
        ("loop", "s = 0;\nwhile true { s = s + 1; }\nreturn s;", "I32"),
        ("builtin", "return math.abs(1);", "I32"),
    ):
        add(
            LIMITS_FILE,
            f"parity-wall-time-0-{name}-times-out-before-the-first-statement",
            kernel(body, f"main() -> {returns}"),
            description="maxWallTimeMs 0 is a budget already spent: Timeout before the first statement",
            error="Timeout",
            code="R-TIMEOUT",
            fuel=0,
            usage={"loopIterations": 0, "hostCalls": 0},
            limits={"maxWallTimeMs": 0},
            tags=("wall-time-zero",),  # not a boundary case: wall time has no exact N (coverage.py)
        )
    # loops: the refused iteration is counted, its fuel is not (while and forRange)
    for limit in (0, 3):
        add(
            LIMITS_FILE,
            f"parity-while-loop-refused-at-{limit}-counts-the-attempt",
            kernel("s = 0;\nwhile s < 10 { s = s + 1; }\nreturn s;"),
            description="the refused loop iteration is counted in loopIterations (N + 1), its fuel is not",
            error="QuotaExceeded",
            code="R-QUOTA-LOOP",
            # s = 0 (2); while (1); per iteration: condition (3), 5, set s + 1 (4); then the refused
            # iteration's condition (3)
            fuel=(S + E) + S + limit * (3 * E + LOOP + S + 3 * E) + 3 * E,
            usage={"loopIterations": limit + 1},
            limits={"maxLoopIterations": limit},
            tags=("limit:maxLoopIterations", "over-limit"),
        )
    # host calls and a binding's own calls: the refused call is counted
    tick = "probe.tick"
    three = kernel("a = probe.tick(); b = probe.tick(); c = probe.tick(); return 0;")
    one_call = S + E + 1  # set, call, base fuel 1 (a Bool return has no bytes)
    for limit in (1, 2):
        add(
            LIMITS_FILE,
            f"parity-host-calls-refused-at-{limit}-counts-the-attempt",
            three,
            description="with maxHostCalls N the (N + 1)-th call fails and hostCalls is N + 1",
            error="QuotaExceeded",
            code="R-QUOTA-HOST-CALLS",
            fuel=limit * one_call + S + E,
            usage={"hostCalls": limit + 1},
            binding_calls={tick: limit},  # refused by the run's budget, before the binding's count
            bindings=[_binding(tick)],
            policy={"grants": [{"id": tick}]},
            limits={"maxHostCalls": limit},
            tags=("limit:maxHostCalls", "over-limit"),
        )
        add(
            LIMITS_FILE,
            f"parity-binding-calls-refused-at-{limit}-counts-the-attempt",
            three,
            description="with maxCallsPerRun N the (N + 1)-th call fails and both counts are N + 1",
            error="QuotaExceeded",
            code="R-QUOTA-BINDING-CALLS",
            fuel=limit * one_call + S + E,
            usage={"hostCalls": limit + 1},
            binding_calls={tick: limit + 1},
            bindings=[_binding(tick, max_calls=limit)],
            policy={"grants": [{"id": tick}]},
            tags=("limit:maxCallsPerRun", "over-limit"),
        )
    # log events: the refused event is counted; a message refused for its length is not an event
    log = [{"id": "log.info", "standard": True}]
    grant = {"grants": [{"id": "log.write"}]}
    two_logs = kernel('log.info("a");\nlog.info("b");\nreturn 0;')
    log_call = S + E + E  # statement, call, literal ("a": 2 string bytes, no fuel)
    add(
        LIMITS_FILE,
        "parity-log-events-refused-counts-the-attempt",
        two_logs,
        description="with maxLogEvents 1 the second log.info fails and logEvents is 2",
        error="QuotaExceeded",
        code="R-QUOTA-LOG-EVENTS",
        usage={"logEvents": 2, "hostCalls": 2},
        binding_calls={"log.info": 2},
        bindings=log,
        policy=grant,
        limits={"maxLogEvents": 1},
        tags=("limit:maxLogEvents", "over-limit"),
    )
    add(
        LIMITS_FILE,
        "parity-log-message-too-long-is-not-an-event",
        kernel('log.info("abc");\nreturn 0;'),
        description="a message refused for its length is not a log event (logEvents stays 0)",
        error="QuotaExceeded",
        code="R-QUOTA-LOG-MESSAGE",
        usage={"logEvents": 0, "hostCalls": 1},
        bindings=log,
        policy=grant,
        limits={"maxLogMessageLength": 2},
        tags=("limit:maxLogMessageLength", "over-limit"),
    )
    del log_call
    # amounts are not attempts: the refused fuel charge is not recorded (fuelUsed stays within maxFuel)
    add(
        LIMITS_FILE,
        "parity-fuel-refused-amount-is-not-recorded",
        kernel("return 1 + 2;"),
        description="fuel is an amount, not an attempt: the refused charge is not recorded",
        error="QuotaExceeded",
        code="R-QUOTA-FUEL",
        fuel=S + E + E,  # statement, binary, first literal; the second literal's charge is refused
        limits={"maxFuel": S + E + E},
        tags=("limit:maxFuel", "over-limit"),
    )


GENERATORS = (_builtin_host_calls, _operand_order, _refused_attempts)


def main(argv: list[str] | None = None) -> int:
    return generate_main(__file__, FILES, GENERATORS, argv, noun="parity cases")


if __name__ == "__main__":
    raise SystemExit(main())
