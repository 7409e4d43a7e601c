"""Write ``cases/import/budgets.json``: every import budget at N (accepted) and N+1 (rejected).

Run from the repository root: ``.venv/bin/python conformance/tools/make_budget_cases.py``.
The cases are ``moduleTextGenerator`` recipes (a few hundred bytes each) rather than megabytes of
JSON. This tool only solves for the repeat counts that land exactly on a limit, by measuring the
expanded text with ``dotboxd.conformance.docmetrics``; ``tests/conformance/test_budget_cases.py``
re-measures every case, so a wrong count here fails a test instead of weakening the corpus.
"""

from __future__ import annotations

from typing import Any

from dotboxd.conformance.docmetrics import LIMITS, measure
from dotboxd.conformance.generate import expand_generator
from dotboxd.conformance.tools.kit import render, write_or_check

HEAD = '{"id":"budget","version":"1.0.0","functions":[{"id":"main","visibility":"entrypoint",'
UNIT_MAIN = HEAD + '"returnType":"Unit","body":[{"op":"return","value":{"unit":true}}]}]}'
EXPR_STMT = '{"op":"expr","value":{"unit":true}}'


def generator(template: str, fills: dict[str, Any] | None = None, pad: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"template": template}
    if fills:
        spec["fills"] = fills
    if pad is not None:
        spec["padToBytes"] = pad
    return spec


def repeat(text: str, count: int, separator: str = "") -> dict[str, Any]:
    fill: dict[str, Any] = {"repeat": text, "count": count}
    if separator:
        fill["separator"] = separator
    return fill


def case(name: str, description: str, metric: str, over: bool, spec: dict[str, Any]) -> dict[str, Any]:
    tags = ["budget", f"budget-{metric}", "over-limit" if over else "at-limit"]
    expect: dict[str, Any] = {"stage": "import", "outcome": "rejected", "diagnostic": "E-JSON-LIMIT"}
    if not over:
        expect = {"stage": "import", "outcome": "ok"}
    return {
        "name": name,
        "description": description,
        "tags": tags,
        "moduleTextGenerator": spec,
        "expect": expect,
    }


def solve(metric: str, target: int, make: Any, start: int) -> int:
    """The count c with measure(make(c))[metric] == target, assuming the metric is linear in c."""
    low, high = (measure(expand_generator(make(c)))[metric] for c in (start, start + 1))
    slope = high - low
    count = start + (target - low) // slope
    if (target - low) % slope or measure(expand_generator(make(count)))[metric] != target:
        raise SystemExit(f"cannot hit {metric} = {target} exactly (slope {slope})")
    return count


def pair(name: str, rule: str, metric: str, make: Any, count: int, step: int = 1) -> list[dict[str, Any]]:
    """Cases at the limit (``count``) and one unit over (``count + step``)."""
    limit = LIMITS[metric]
    return [
        case(f"{name}-at-limit", f"{rule} Exactly {limit:,} is accepted.", metric, False, make(count)),
        case(f"{name}-over-limit", f"{rule} {limit + 1:,} is rejected.", metric, True, make(count + step)),
    ]


def build() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    size = LIMITS["documentBytes"]

    # document size: insignificant whitespace pads a small valid module to the exact byte count
    cases += pair(
        "import-budget-document-bytes",
        "A document may be at most 1 MiB of UTF-8.",
        "documentBytes",
        lambda n: generator(UNIT_MAIN, pad=n),
        size,
    )
    wide = (
        HEAD + '"returnType":"Unit","body":[{"op":"return","value":{"unit":true}}]}],"metadata":{"w":"${E}"}}'
    )
    cases += pair(
        "import-budget-document-bytes-multibyte",
        "The document budget counts UTF-8 bytes, not characters (30,000 two-byte characters inside).",
        "documentBytes",
        lambda n: generator(wide, {"E": repeat("\u00e9", 30_000)}, pad=n),
        size,
    )

    # depth: a unary chain nests one object per level below the statement's value (depth 6)
    nested = HEAD + '"returnType":"Bool","body":[{"op":"return","value":${CHAIN}}]}]}'
    cases += pair(
        "import-budget-depth-expressions",
        "Arrays and objects may nest at most 64 levels (here: a chain of 'not' expressions).",
        "depth",
        lambda n: generator(
            nested,
            {"CHAIN": {"nest": ['{"unary":"not","operand":', "}"], "count": n, "inner": '{"bool":true}'}},
        ),
        LIMITS["depth"] - 6,
    )
    # a generic type nests an object and an array per level, starting at depth 4 (returnType)
    typed = HEAD + '"returnType":${T},"body":[]}]}'
    level = ['{"name":"List","arguments":[', "]}"]
    cases.append(
        case(
            "import-budget-depth-types-at-limit",
            "Arrays and objects may nest at most 64 levels (here: nested generic type arguments).",
            "depth",
            False,
            generator(typed, {"T": {"nest": level, "count": 30, "inner": '{"name":"I32"}'}}),
        )
    )
    cases.append(
        case(
            "import-budget-depth-types-over-limit",
            "Arrays and objects may nest at most 64 levels; a 65th level of type arguments is rejected.",
            "depth",
            True,
            generator(typed, {"T": {"nest": level, "count": 31, "inner": '"I32"'}}),
        )
    )

    # tokens: 10,000 nine-token statements plus single-token type arguments fill to the limit
    tokens = HEAD + '"returnType":{"name":"Record","arguments":[${ARGS}]},"body":[${STMTS}]}]}'

    def token_doc(n: int) -> dict[str, Any]:
        return generator(tokens, {"ARGS": repeat('"I32"', n, ","), "STMTS": repeat(EXPR_STMT, 10_000, ",")})

    cases += pair(
        "import-budget-tokens",
        "A document may hold at most 100,000 tokens (openers, closers, names and scalars).",
        "tokens",
        token_doc,
        solve("tokens", LIMITS["tokens"], token_doc, 9_000),
    )

    # items per array and properties per object
    items = LIMITS["items"]
    body = HEAD + '"returnType":"Unit","body":[${S}]}]}'
    cases += pair(
        "import-budget-array-items",
        "An array may hold at most 10,000 items (here: a function body).",
        "items",
        lambda n: generator(body, {"S": repeat('{"op":"break"}', n, ",")}),
        items,
    )
    args = HEAD + '"returnType":"Unit","body":[{"op":"expr","value":{"call":"list.of","args":[${A}]}}]}]}'
    cases += pair(
        "import-budget-call-args",
        "An array may hold at most 10,000 items (here: call arguments).",
        "items",
        lambda n: generator(args, {"A": repeat('{"i32":1}', n, ",")}),
        items,
    )
    meta = UNIT_MAIN[:-1] + ',"metadata":{${M}}}'
    cases += pair(
        "import-budget-object-properties",
        "An object may hold at most 10,000 properties (here: distinct metadata keys).",
        "items",
        lambda n: generator(meta, {"M": repeat('"k${INDEX}":"v"', n, ",")}),
        items,
    )

    # one string, in UTF-8 bytes of its decoded value, keys included
    string = HEAD + '"returnType":"String","body":[{"op":"return","value":{"string":"${S}"}}]}]}'
    limit = LIMITS["stringBytes"]
    cases += pair(
        "import-budget-string-bytes",
        "One string may be at most 65,536 bytes of UTF-8.",
        "stringBytes",
        lambda n: generator(string, {"S": repeat("a", n)}),
        limit,
    )
    mixed = HEAD + '"returnType":"String","body":[{"op":"return","value":{"string":"${S}${T}"}}]}]}'
    cases += pair(
        "import-budget-string-bytes-multibyte",
        "The string budget counts UTF-8 bytes: 32,768 two-byte characters are exactly 65,536 bytes.",
        "stringBytes",
        lambda n: generator(mixed, {"S": repeat("\u00e9", limit // 2), "T": repeat("a", n)}),
        0,
    )
    cases += pair(
        "import-budget-string-bytes-escaped",
        "The string budget measures the decoded value: 65,536 escaped letters are 65,536 bytes.",
        "stringBytes",
        lambda n: generator(string, {"S": repeat("\\u0061", n)}),
        limit,
    )
    key = UNIT_MAIN[:-1] + ',"metadata":{"${K}":"v"}}'
    cases += pair(
        "import-budget-string-bytes-key",
        "The string budget includes property names (here: a metadata key).",
        "stringBytes",
        lambda n: generator(key, {"K": repeat("k", n)}),
        limit,
    )

    # all strings together, keys included
    total = HEAD + (
        '"returnType":"Unit","body":[{"op":"expr","value":{"call":"list.of","args":[${BIG},{"string":"${LAST}"}]}},'
        '{"op":"return","value":{"unit":true}}]}]}'
    )

    def total_doc(n: int) -> dict[str, Any]:
        return generator(
            total,
            {"BIG": repeat('{"string":"${A}"}', 7, ","), "A": repeat("a", limit), "LAST": repeat("a", n)},
        )

    cases += pair(
        "import-budget-total-string-bytes",
        "All strings together (keys included) may be at most 524,288 bytes of UTF-8.",
        "totalStringBytes",
        total_doc,
        solve("totalStringBytes", LIMITS["totalStringBytes"], total_doc, 60_000),
    )
    return cases


def extras() -> list[dict[str, Any]]:
    """Budget cases that are not N / N+1 pairs: hostile shapes that must fail fast."""
    rejected = {"stage": "import", "outcome": "rejected", "diagnostic": "E-JSON-LIMIT"}
    return [
        {
            "name": "import-budget-deep-unclosed-arrays",
            "description": "100,000 unclosed '[' fail with the depth budget at the 65th level, never by recursion.",
            "tags": ["budget", "budget-depth", "hostile"],
            "moduleTextGenerator": generator("${O}", {"O": repeat("[", 100_000)}),
            "expect": rejected,
        },
        {
            "name": "import-budget-deep-closed-arrays",
            "description": "100,000 nested, closed arrays fail with the depth budget (the scan is iterative).",
            "tags": ["budget", "budget-depth", "hostile"],
            "moduleTextGenerator": generator("${N}", {"N": {"nest": ["[", "]"], "count": 100_000}}),
            "expect": rejected,
        },
        {
            "name": "import-budget-deep-objects",
            "description": "50,000 nested objects fail with the depth budget, never by recursion.",
            "tags": ["budget", "budget-depth", "hostile"],
            "moduleTextGenerator": generator(
                "${N}", {"N": {"nest": ['{"a":', "}"], "count": 50_000, "inner": "1"}}
            ),
            "expect": rejected,
        },
        {
            "name": "import-budget-arrays-depth-64-is-scanned",
            "description": "64 nested arrays pass the depth budget; the root then fails as not an object.",
            "tags": ["budget", "budget-depth", "at-limit"],
            "moduleTextGenerator": generator("${N}", {"N": {"nest": ["[", "]"], "count": 64}}),
            "expect": {"stage": "import", "outcome": "rejected", "diagnostic": "E-JSON-TYPE", "pointer": ""},
        },
        {
            "name": "import-budget-arrays-depth-65",
            "description": "65 nested arrays break the depth budget before the shape is looked at.",
            "tags": ["budget", "budget-depth", "over-limit"],
            "moduleTextGenerator": generator("${N}", {"N": {"nest": ["[", "]"], "count": 65}}),
            "expect": rejected,
        },
        {
            "name": "import-budget-before-schema",
            "description": "Budgets are checked while scanning, before the model: an unknown property early in "
            "the document loses to an array of 10,001 items later.",
            "tags": ["budget", "budget-items", "ordering"],
            "moduleTextGenerator": generator(
                '{"bogus":1,' + HEAD[1:] + '"returnType":"Unit","body":[${S}]}]}',
                {"S": repeat('{"op":"break"}', LIMITS["items"] + 1, ",")},
            ),
            "expect": rejected,
        },
        {
            "name": "import-budget-token-flood-of-scalars",
            "description": "A flood of 100,001+ tiny tokens is rejected by the token budget before the item budget.",
            "tags": ["budget", "budget-tokens", "hostile"],
            "moduleTextGenerator": generator("[${R}]", {"R": repeat("[0,0,0,0,0,0,0,0,0]", 9_500, ",")}),
            "expect": rejected,
        },
    ]


def main(argv: list[str] | None = None) -> int:
    cases = build() + extras()
    names = [c["name"] for c in cases]
    assert len(names) == len(set(names)), "duplicate case names"
    return write_or_check(
        __file__,
        {"import/budgets.json": render(cases)},
        argv,
        summary=f"{len(cases)} cases in import/budgets.json",
    )


if __name__ == "__main__":
    raise SystemExit(main())
