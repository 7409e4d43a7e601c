"""Generate ``conformance/cases/strings/last-index-of.json``: ``string.lastIndexOf`` (``dotboxd-1+ext1``).

    python conformance/tools/make_last_index_cases.py          # rewrite the case file
    python conformance/tools/make_last_index_cases.py --check  # fail if it is out of date

The first built-in added as one record (``dotboxd.core.builtins``): its own file so the older
generated files stay as they are. As in ``make_ext_builtin_cases.py`` (whose helpers it uses),
nothing here runs the runtime: every expected value is a search over UTF-16 code units written
below, and every ``fuelUsed`` the cost formula of ``spec/costs.md`` section 5.
"""

from __future__ import annotations

from typing import Any

from dotboxd.conformance.tools.kit import CASES, kernel, single_file_main
from dotboxd.conformance.tools.make_ext_builtin_cases import WALL, E, S, _fuel_two_texts, _run, sb

TARGET = CASES / "strings" / "last-index-of.json"
NAME = "string.lastIndexOf"
Case = dict[str, Any]


def _utf16_last_index(text: str, part: str) -> int:
    """The expected ``string.lastIndexOf``: the last unit offset where ``part``'s code units occur in
    ``text``'s, or -1 (the empty part occurs last at the end), independent of the runtime."""
    hay, needle = text.encode("utf-16-le"), part.encode("utf-16-le")
    for unit in range(len(hay) // 2 - len(needle) // 2, -1, -1):
        if hay[2 * unit : 2 * unit + len(needle)] == needle:
            return unit
    return -1


SEARCHES = [
    ("hello world", "o"),  # two occurrences: the later one
    ("abcabc", "abc"),
    ("aaaa", "aa"),  # overlapping occurrences: the last start is 2
    ("hello world", "xyz"),
    ("a😀b😀c", "😀"),  # an astral character before the match counts 2 units
    ("😀😀", "😀"),
    ("abc", ""),  # the empty part: the text's length in units
    ("", ""),
    ("", "a"),
    ("ab", "abc"),  # a part longer than the text
    ("spam and SPAM", "spam"),  # ordinal: case matters
]


def build() -> list[Case]:
    cases: list[Case] = []
    for index, (a, b) in enumerate(SEARCHES):
        cases.append(
            _run(
                f"lastindexof-{index}",
                kernel(f'return {NAME}("{a}", "{b}");'),
                _utf16_last_index(a, b),
                _fuel_two_texts(NAME, a, b),
                {"stringBytes": sb(a) + sb(b), "hostCalls": 1},
                NAME,
            )
        )
    # a variable argument (the call is the same; two more statements and reads)
    text = "x😀yx😀y"
    cases.append(
        _run(
            "lastindexof-local",
            kernel(f's = "{text}";\nreturn {NAME}(s, "x");'),
            _utf16_last_index(text, "x"),
            S + E + _fuel_two_texts(NAME, text, "x"),
            {"stringBytes": sb(text) + sb("x"), "hostCalls": 1},
            NAME,
        )
    )
    # a pure function: each call is one host call, so maxHostCalls 0 refuses it before it runs
    refused = _run(
        "lastindexof-no-host-calls",
        kernel(f'return {NAME}("ab", "b");'),
        None,
        0,
        {},
        NAME,
    )
    refused["policy"] = {"limits": {**WALL, "maxHostCalls": 0}}
    refused["expect"] = {
        "stage": "run",
        "outcome": "error",
        "error": "QuotaExceeded",
        "diagnostic": "R-QUOTA-HOST-CALLS",
        "fuelUsed": S + 3 * E,  # the statement, the call and its two literals: nothing of the call's own
        "usage": {"stringBytes": sb("ab") + sb("b")},
    }
    cases.append(refused)
    return cases


def main(argv: list[str] | None = None) -> int:
    return single_file_main(__file__, TARGET, build(), argv)


if __name__ == "__main__":
    raise SystemExit(main())
