"""Generate ``conformance/cases/strings/ext-text-builtins.json``: ``string.split``,
``string.replace``, ``format.simple`` and ``map.keys`` (``dotboxd-1+ext1``).

    python conformance/tools/make_ext_text_cases.py          # rewrite the case file
    python conformance/tools/make_ext_text_cases.py --check  # fail if it is out of date

A separate file from ``make_ext_builtin_cases.py`` (same conventions) so the older file need not be
regenerated. Nothing here runs the runtime: every expected value is written by hand from
``spec/semantics.md`` (the tables below), and every ``fuelUsed`` and usage counter is a formula over
the cost table following ``spec/costs.md`` sections 4 and 5.
"""

from __future__ import annotations

import json
from typing import Any

from dotboxd.conformance.tools.kit import CASES, kernel, single_file_main
from dotboxd.core import costs as C

TARGET = CASES / "strings" / "ext-text-builtins.json"
S = C.STATEMENT_FUEL
E = C.EXPRESSION_FUEL
WALL = {"maxWallTimeMs": 60_000}  # generous: no expectation depends on the machine's speed
Case = dict[str, Any]


def units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def sb(text: str) -> int:
    """String bytes of a text (2 per UTF-16 unit)."""
    return C.string_bytes(units(text))


def walk(nodes: int) -> int:
    return C.shape_walk_fuel(nodes)


def lit(text: str) -> str:
    """A text-form string literal (the inputs below need no escapes but the quote and backslash)."""
    return json.dumps(text, ensure_ascii=False)


def _case(
    name: str, tag: str, text: str, expect: dict[str, Any], policy: dict[str, Any] | None = None
) -> Case:
    return {
        "name": name,
        "description": name.replace("-", " "),
        "tags": ["run" if expect["stage"] == "run" else "validate", "ext-builtins", tag],
        "kernelText": text,
        "policy": policy or {"limits": dict(WALL)},
        "expect": expect,
    }


def _ok(value: Any, fuel: int, usage: dict[str, int]) -> dict[str, Any]:
    return {"stage": "run", "outcome": "ok", "value": value, "fuelUsed": fuel, "usage": usage}


def _error(error: str, code: str, fuel: int, usage: dict[str, int]) -> dict[str, Any]:
    return {
        "stage": "run",
        "outcome": "error",
        "error": error,
        "diagnostic": code,
        "fuelUsed": fuel,
        "usage": usage,
    }


# (text, separator, pieces), by hand from spec/semantics.md
SPLITS: list[tuple[str, str, list[str]]] = [
    ("a,b,,c", ",", ["a", "b", "", "c"]),
    ("", ",", [""]),
    (",", ",", ["", ""]),
    ("abc", "", ["abc"]),  # an empty separator never splits
    ("aaa", "aa", ["", "a"]),  # non-overlapping, left to right
    ("é😀xé😀y", "é😀", ["", "x", "y"]),
    ("no separator", ";", ["no separator"]),
]

# (text, old, new, result), by hand
REPLACES: list[tuple[str, str, str, str]] = [
    ("a-b-c", "-", "+=", "a+=b+=c"),
    ("aaa", "aa", "b", "ba"),
    ("abc", "", "x", "abc"),  # an empty old matches nothing
    ("é😀é", "😀", "", "éé"),
    ("", "a", "b", ""),
    ("xyz", "q", "r", "xyz"),
]

# (template, args, result or None for R-FORMAT), by hand
FORMATS: list[tuple[str, list[str], str | None]] = [
    ("{0}+{1}={{x}}", ["a", "bé"], "a+bé={x}"),
    ("{1}{0}{1}", ["x", "😀"], "😀x😀"),
    ("none", ["unused"], "none"),
    ("}}{{", ["a"], "}{"),
    ("{10}", [str(i) for i in range(11)], "10"),
    ("{2}", ["a", "b"], None),  # no argument 2
    ("a}b", ["a"], None),  # a lone closing brace
    ("{01}", ["a", "b"], None),  # a leading zero
    ("{}", ["a"], None),
    ("{0:x}", ["a"], None),  # no format components
]

# (key type, map input pairs in a non-canonical order, keys in canonical order, key text units)
KEYS: list[tuple[str, list[list[Any]], list[Any], int]] = [
    ("Bool", [[True, 1], [False, 2]], [False, True], 0),
    ("I32", [[3, 0], [-7, 0], [10, 0]], [-7, 3, 10], 0),
    ("I64", [[5_000_000_000, 0], [-1, 0]], [-1, 5_000_000_000], 0),
    # ordinal UTF-16 order: the astral 😀 (0xD83D 0xDE00) sorts before U+E000
    ("String", [["b", 0], ["\ue000", 0], ["😀", 0], ["a", 0]], ["a", "b", "😀", "\ue000"], 5),
    ("SandboxPath", [["b/c", 0], ["a", 0]], ["a", "b/c"], 4),
    (
        "SandboxUri",
        [["https://b.example", 0], ["https://a.example", 0]],
        ["https://a.example", "https://b.example"],
        34,
    ),
    (
        "PlayerId",
        [[{"type": "PlayerId", "value": "p-2"}, 0], [{"type": "PlayerId", "value": "p-10"}, 0]],
        [{"type": "PlayerId", "value": "p-10"}, {"type": "PlayerId", "value": "p-2"}],  # ordinal: "1" < "2"
        7,
    ),
    ("I32", [], [], 0),
]


def _split_cases() -> list[Case]:
    cases: list[Case] = []
    cost = C.BUILTIN_COSTS["string.split"]
    for index, (text, sep, pieces) in enumerate(SPLITS):
        p = len(pieces)
        piece_units = sum(units(x) for x in pieces)
        assert piece_units == units(text) - (p - 1) * units(sep)
        fuel = S + 3 * E + cost.base + cost.per_input_unit * (units(text) + units(sep))
        fuel += C.text_pieces(p).fuel + walk(1 + p) + cost.per_result_byte * 2 * piece_units
        literals = sb(text) + sb(sep)
        usage = {
            "hostCalls": 1,
            "stringBytes": literals + 2 * piece_units,
            "allocatedBytes": literals + C.text_pieces(p).alloc + 2 * piece_units,
            "collectionElements": p,
        }
        body = f"return string.split({lit(text)}, {lit(sep)});"
        cases.append(
            _case(
                f"run-ext-split-{index}",
                "string.split",
                kernel(body, "main() -> List<String>"),
                _ok(pieces, fuel, usage),
            )
        )
    # more pieces than maxListLength: refused after the scan and the per-piece charge, before any is built
    text, sep, p = ",,,,,", ",", 6
    fuel = S + 3 * E + cost.base + cost.per_input_unit * (units(text) + units(sep)) + C.text_pieces(p).fuel
    usage = {
        "hostCalls": 1,
        "allocatedBytes": sb(text) + sb(sep) + C.text_pieces(p).alloc,
        "collectionElements": 0,
    }
    cases.append(
        _case(
            "run-ext-split-too-many-pieces",
            "string.split",
            kernel(f"return string.split({lit(text)}, {lit(sep)});", "main() -> List<String>"),
            _error("QuotaExceeded", "R-QUOTA-LIST-LENGTH", fuel, usage),
            {"limits": dict(WALL) | {"maxListLength": p - 1}},
        )
    )
    return cases


def _replace_cases() -> list[Case]:
    cases: list[Case] = []
    cost = C.BUILTIN_COSTS["string.replace"]
    for index, (text, old, new, result) in enumerate(REPLACES):
        fuel = S + 4 * E + cost.base + cost.per_input_unit * (units(text) + units(old))
        fuel += cost.per_result_byte * sb(result)
        bytes_ = sb(text) + sb(old) + sb(new) + sb(result)
        usage = {"hostCalls": 1, "stringBytes": bytes_, "allocatedBytes": bytes_}
        body = f"return string.replace({lit(text)}, {lit(old)}, {lit(new)});"
        cases.append(
            _case(
                f"run-ext-replace-{index}",
                "string.replace",
                kernel(body, "main() -> String"),
                _ok(result, fuel, usage),
            )
        )
    # a result over maxStringLength is refused from its computed length, before it is built
    text, old, new = "aaaa", "a", "bbbb"
    fuel = S + 4 * E + cost.base + cost.per_input_unit * (units(text) + units(old))
    literals = sb(text) + sb(old) + sb(new)
    cases.append(
        _case(
            "run-ext-replace-result-too-long",
            "string.replace",
            kernel(f"return string.replace({lit(text)}, {lit(old)}, {lit(new)});", "main() -> String"),
            _error("QuotaExceeded", "R-QUOTA-STRING-LENGTH", fuel, {"hostCalls": 1, "stringBytes": literals}),
            {"limits": dict(WALL) | {"maxStringLength": 10}},
        )
    )
    return cases


def _format_cases() -> list[Case]:
    cases: list[Case] = []
    cost = C.BUILTIN_COSTS["format.simple"]
    for index, (template, args, result) in enumerate(FORMATS):
        n = len(args)
        arg_bytes = sum(sb(a) for a in args)
        fuel = S + E + E  # return, the call, the template literal
        fuel += E + n * E + C.list_of(n).fuel + walk(1 + n)  # list.of("...", ...)
        fuel += cost.base + cost.per_input_unit * units(template)
        # the literals, then the list's shape counts its texts once more
        bytes_ = sb(template) + 2 * arg_bytes
        alloc = bytes_ + C.list_of(n).alloc
        call = f"return format.simple({lit(template)}, list.of({', '.join(lit(a) for a in args)}));"
        text = kernel(call, "main() -> String")
        usage = {"hostCalls": 1, "stringBytes": bytes_, "allocatedBytes": alloc}
        if result is None:
            cases.append(
                _case(
                    f"run-ext-format-bad-{index}",
                    "format.simple",
                    text,
                    _error("InvalidInput", "R-FORMAT", fuel, usage),
                )
            )
            continue
        fuel += cost.per_result_byte * sb(result)
        usage = {"hostCalls": 1, "stringBytes": bytes_ + sb(result), "allocatedBytes": alloc + sb(result)}
        cases.append(_case(f"run-ext-format-{index}", "format.simple", text, _ok(result, fuel, usage)))
    return cases


def _keys_cases() -> list[Case]:
    cases: list[Case] = []
    for index, (key_type, pairs, keys, key_units) in enumerate(KEYS):
        n = len(pairs)
        op = C.map_keys(n, key_units)
        fuel = S + 2 * E + op.fuel + walk(1 + n)
        sig = f"main(m Map<{key_type}, I32>) -> List<{key_type}>"
        case = _case(
            f"run-ext-map-keys-{key_type.lower()}-{index}",
            "map.keys",
            kernel("return map.keys(m);", sig),
            _ok(keys, fuel, {"hostCalls": 0}),
        )
        case["args"] = [pairs]
        if key_type == "PlayerId":
            case["policy"] = {"declaredOpaqueIdTypes": ["PlayerId"], "limits": dict(WALL)}
        cases.append(case)
    return cases


def _surface_cases() -> list[Case]:
    surface_only = {"languageSurface": "dotboxd-1", "limits": dict(WALL)}
    calls = {
        "string.split": 'return list.count(string.split("a,b", ","));',
        "string.replace": 'return string.length(string.replace("ab", "a", "c"));',
        "format.simple": 'return string.length(format.simple("{0}", list.of("a")));',
        "map.keys": "return list.count(map.keys(map.empty[Map<I32, I32>]()));",
    }
    reject = {
        "stage": "validate",
        "outcome": "rejected",
        "diagnostic": "E-CALL-SURFACE",
        "error": "ValidationError",
        "pointer": "/functions/0/body/0/value/args/0",
    }
    return [
        _case(
            f"validate-ext-surface-rejects-{name.replace('.', '-').lower()}",
            name,
            kernel(body, "main() -> I32"),
            dict(reject),
            surface_only,
        )
        for name, body in calls.items()
    ]


def build() -> list[Case]:
    return _split_cases() + _replace_cases() + _format_cases() + _keys_cases() + _surface_cases()


def main(argv: list[str] | None = None) -> int:
    return single_file_main(__file__, TARGET, build(), argv)


if __name__ == "__main__":
    raise SystemExit(main())
