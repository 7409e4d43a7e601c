"""Generate ``conformance/cases/strings/ext-builtins.json``: the extension built-ins (``dotboxd-1+ext1``).

    python conformance/tools/make_ext_builtin_cases.py          # rewrite the case file
    python conformance/tools/make_ext_builtin_cases.py --check  # fail if it is out of date

Like ``make_run_cases.py`` (whose conventions it follows), nothing here runs the
runtime: every expected value is written by hand from ``spec/semantics.md`` (searches are checked
against plain UTF-16 arithmetic below, case mappings are literal expected strings) and every
``fuelUsed`` is a formula over the cost table following ``spec/costs.md`` section 5. The file also
holds the validation cases of ``languageSurface`` (``E-CALL-SURFACE``).
"""

from __future__ import annotations

from typing import Any

from dotboxd.conformance.tools.kit import CASES, kernel, single_file_main
from dotboxd.core import costs as C

S = C.STATEMENT_FUEL
E = C.EXPRESSION_FUEL
WALL = {"maxWallTimeMs": 60_000}  # generous: no expectation depends on the machine's speed


def units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def sb(text: str) -> int:
    """String bytes of a text (2 per UTF-16 unit)."""
    return C.string_bytes(units(text))


TARGET = CASES / "strings" / "ext-builtins.json"  # outside run/, which make_run_cases.py owns
Case = dict[str, Any]


def _fuel_two_texts(name: str, a: str, b: str) -> int:
    """``return name("a", "b");``: statement, call, two literals, base, one fuel per input unit."""
    cost = C.BUILTIN_COSTS[name]
    return S + 3 * E + cost.base + cost.per_input_unit * (units(a) + units(b))


def _run(name: str, text: str, value: Any, fuel: int, usage: dict[str, int], tag: str) -> Case:
    return {
        "name": f"run-ext-{name}",
        "description": name.replace("-", " "),
        "tags": ["run", "ext-builtins", tag],
        "kernelText": text,
        "policy": {"limits": dict(WALL)},
        "expect": {"stage": "run", "outcome": "ok", "value": value, "fuelUsed": fuel, "usage": usage},
    }


def _utf16_index(text: str, part: str) -> int:
    """The expected ``string.indexOf``: a search over UTF-16 code units, independent of the runtime."""
    hay, needle = text.encode("utf-16-le"), part.encode("utf-16-le")
    for unit in range(0, len(hay) // 2 - len(needle) // 2 + 1):
        if hay[2 * unit : 2 * unit + len(needle)] == needle:
            return unit
    return -1


SEARCHES = [
    ("hello world", "o w"),
    ("hello world", "xyz"),
    ("a😀b", "😀b"),
    ("a😀b", "b"),
    ("abc", ""),
    ("", "a"),
    ("ab", "abc"),
    ("spam and SPAM", "SPAM"),
]

CASE_MAPS = [
    # (input, lower, upper), written by hand from the simple Unicode case mapping
    ("Hello World", "hello world", "HELLO WORLD"),
    ("ÀÉÎõü", "àéîõü", "ÀÉÎÕÜ"),
    ("straße", "straße", "STRAßE"),  # ß has only a full (two-letter) upper mapping: unchanged
    ("İstanbul", "İstanbul", "İSTANBUL"),  # İ has only a full (two-code-point) lower mapping
    ("ΟΔΟΣ", "οδοσ", "ΟΔΟΣ"),  # no final-sigma rule: Σ maps to σ everywhere
    ("a😀B", "a😀b", "A😀B"),
    ("𐐀𐐨", "𐐨𐐨", "𐐀𐐀"),  # Deseret: astral letters with astral case partners (2 units each)
    ("", "", ""),
]


PARSES: list[tuple[str, int | None]] = [
    # (text, value or None for R-PARSE-INT), from spec/semantics.md by hand
    ("42", 42),
    ("-2147483648", -2147483648),
    ("+2147483647", 2147483647),
    ("000123", 123),
    ("-0", 0),
    ("2147483648", None),
    ("-2147483649", None),
    ("", None),
    (" 1", None),
    ("1,000", None),
    ("12a", None),
    ("٣", None),  # a non-ASCII digit
    ("99999999999999999999", None),
]


def build() -> list[Case]:
    cases: list[Case] = []
    for index, (a, b) in enumerate(SEARCHES):
        lit_bytes = sb(a) + sb(b)
        found = _utf16_index(a, b)
        checks: list[tuple[str, str, Any]] = [
            ("contains", "Bool", found >= 0),
            ("indexOf", "I32", found),
            ("startsWith", "Bool", found == 0 and a.encode("utf-16-le").startswith(b.encode("utf-16-le"))),
            ("endsWith", "Bool", a.encode("utf-16-le").endswith(b.encode("utf-16-le"))),
        ]
        for op, result_type, expected in checks:
            name = f"string.{op}"
            cases.append(
                _run(
                    f"{op.lower()}-{index}",
                    kernel(f'return {name}("{a}", "{b}");', f"main() -> {result_type}"),
                    expected,
                    _fuel_two_texts(name, a, b),
                    {"stringBytes": lit_bytes, "hostCalls": 1},
                    name,
                )
            )
    for index, (text, lower, upper) in enumerate(CASE_MAPS):
        for op, mapped in (("toLowerInvariant", lower), ("toUpperInvariant", upper)):
            name = f"string.{op}"
            cost = C.BUILTIN_COSTS[name]
            n = units(text)
            assert units(mapped) == n  # the mapping never changes the length in units
            fuel = S + 2 * E + cost.base + cost.per_input_unit * n + cost.per_result_byte * sb(mapped)
            cases.append(
                _run(
                    f"{op.lower()}-{index}",
                    kernel(f'return {name}("{text}");', "main() -> String"),
                    mapped,
                    fuel,
                    {"stringBytes": sb(text) + sb(mapped), "hostCalls": 1},
                    name,
                )
            )
    parse_cost = C.BUILTIN_COSTS["parse.int"]
    for index, (text, parsed) in enumerate(PARSES):
        case = _run(
            f"parse-int-{index}",
            kernel(f'return parse.int("{text}");'),
            parsed,
            S + 2 * E + parse_cost.base + parse_cost.per_input_unit * units(text),
            {"stringBytes": sb(text), "hostCalls": 1},
            "parse.int",
        )
        if parsed is None:
            expect = case["expect"]
            del expect["value"]
            expect.update(outcome="error", error="InvalidInput", diagnostic="R-PARSE-INT")
        cases.append(case)
    for op, expected_f64 in (("sin", 0.0), ("cos", 1.0), ("tan", 0.0)):
        name = f"math.{op}"
        cases.append(
            _run(
                op,
                kernel(f"return {name}(0.0);", "main() -> F64"),
                expected_f64,
                S + 2 * E + C.BUILTIN_COSTS[name].base,
                {"hostCalls": 1},
                name,
            )
        )
    cases.extend(_collection_cases())
    surface_only = {"languageSurface": "dotboxd-1", "limits": dict(WALL)}
    cases.append(
        {
            "name": "validate-ext-surface-rejects-contains",
            "description": "a dotboxd-1-only policy rejects an extension built-in, naming it",
            "tags": ["validate", "ext-builtins", "string.contains"],
            "kernelText": kernel('return string.contains("ab", "b");', "main() -> Bool"),
            "policy": surface_only,
            "expect": {
                "stage": "validate",
                "outcome": "rejected",
                "diagnostic": "E-CALL-SURFACE",
                "error": "ValidationError",
                "pointer": "/functions/0/body/0/value",
            },
        }
    )
    cases.append(
        _run(
            "surface-allows-dotboxd-1-builtins",
            kernel('return string.length("ab");'),
            2,
            S + 2 * E + C.BUILTIN_COSTS["string.length"].base,
            {"stringBytes": sb("ab"), "hostCalls": 1},
            "string.length",
        )
        | {"policy": surface_only}
    )
    return cases


def _collection_cases() -> list[Case]:
    """``list.slice`` and ``map.count`` (spec/costs.md section 4): literal-built inputs, so every
    charge is a call node, its literal arguments and the collection charges."""
    cases: list[Case] = []
    of3 = E + 3 * E + C.copy_fuel(3)  # list.of(1, 2, 3)
    of3_alloc = C.list_of_alloc(3)
    items = [1, 2, 3]
    for start, count in ((1, 2), (0, 3), (3, 0), (0, 0)):
        fuel = S + E + of3 + 2 * E + C.list_slice(count).fuel
        cases.append(
            _run(
                f"list-slice-{start}-{count}",
                kernel(f"return list.slice(list.of(1, 2, 3), {start}, {count});", "main() -> List<I32>"),
                items[start : start + count],
                fuel,
                {"allocatedBytes": of3_alloc + C.list_slice(count).alloc},
                "list.slice",
            )
        )
    for start, count in ((2, 2), (-1, 1), (0, -1), (4, 0)):
        case = _run(
            f"list-slice-out-of-range-{start}-{count}".replace("--", "-minus-"),
            kernel(f"return list.slice(list.of(1, 2, 3), {start}, {count});", "main() -> List<I32>"),
            None,
            S + E + of3 + 2 * E + C.COLLECTION_BASE_FUEL,  # only the base fuel before the range check
            {"allocatedBytes": of3_alloc},
            "list.slice",
        )
        expect = case["expect"]
        del expect["value"]
        expect.update(outcome="error", error="InvalidInput", diagnostic="R-LIST-INDEX")
        cases.append(case)
    for n in (0, 1, 3):
        body = "m = map.empty[Map<I32, I32>]();\n"
        body += "".join(f"m = map.set(m, {k}, {k});\n" for k in range(n))
        body += "return map.count(m);"
        fuel = S + E + C.MAP_EMPTY_FUEL  # m = map.empty()
        fuel += sum(S + E + 3 * E + C.copy_fuel(k, 1) for k in range(n))  # m = map.set(m, k, k)
        fuel += S + 2 * E + C.read_fuel(n)  # return map.count(m)
        cases.append(_run(f"map-count-{n}", kernel(body), n, fuel, {}, "map.count"))
    return cases


def main(argv: list[str] | None = None) -> int:
    return single_file_main(__file__, TARGET, build(), argv)


if __name__ == "__main__":
    raise SystemExit(main())
