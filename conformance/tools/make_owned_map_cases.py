"""Generate ``conformance/cases/collections/owned-maps.json``: maps updated in a loop.

    python conformance/tools/make_owned_map_cases.py          # rewrite the case file
    python conformance/tools/make_owned_map_cases.py --check  # fail if it is out of date

The loops below have the shape the optimized backend runs as *owned maps* (a map made by
``map.empty`` in the function, rebound only by ``m = map.set(m, k, v)`` and otherwise read by
``map.get`` / ``containsKey`` / ``count``: spec/optimized.md, owned maps), so these cases pin what
that form must keep exactly: the value, the fuel, and the copy-on-write allocation and elements of
every update (spec/costs.md section 4), at each limit (allowed at the total, refused one below).
``tests/optimized/test_owned_maps.py`` checks that the code generator does take the owned form for
every kernel here.

Nothing here runs the runtime: each kernel's charges are added up operation by operation below from
the cost table (``dotboxd.core.costs``) and the statement/expression fuel rules, and the values are
computed with a plain dict.
"""

from __future__ import annotations

from typing import Any

from dotboxd.conformance.tools.kit import CASES, kernel, run_expect, single_file_main
from dotboxd.core import costs as C

TARGET = CASES / "collections" / "owned-maps.json"
S, E, LOOP = C.STATEMENT_FUEL, C.EXPRESSION_FUEL, C.LOOP_ITERATION_FUEL
WALL = {"maxWallTimeMs": 60_000}  # generous: no expectation depends on the machine's speed
Case = dict[str, Any]

COUNT = """counts = map.empty[Map<I32, I32>]();
for i in 0 .. n {
    k = i * 7 % 5;
    if map.containsKey(counts, k) { counts = map.set(counts, k, map.get(counts, k) + 1); }
    else { counts = map.set(counts, k, 1); }
}
return map.get(counts, 3) * 100 + map.count(counts);"""

TWO_KEYS = """counts = map.empty[Map<String, I32>]();
for i in 0 .. n {
    if i % 3 == 0 { counts = map.set(counts, a, i); }
    else { counts = map.set(counts, b, map.count(counts)); }
}
return map.count(counts);"""

GROW = """seen = map.empty[Map<I64, Bool>]();
i = 0;
while i < n { seen = map.set(seen, numeric.toI64(i % w), i % 3 == 0); i = i + 1; }
if map.get(seen, 0L) { return map.count(seen); }
return -1;"""


def _walk(entries: int) -> int:
    """Walk fuel of a flat map of ``entries`` (its shape: 1 + 2 entries nodes)."""
    return C.shape_walk_fuel(1 + 2 * entries)


class Tally:
    """The charges of one run, added up as the kernel runs them."""

    def __init__(self) -> None:
        self.fuel = 0
        self.alloc = 0
        self.elements = 0
        self.strings = 0

    def text_input(self, text: str) -> None:
        """A text argument: its bytes, as allocation and string bytes (its shape's walk is 0 fuel)."""
        self.alloc += _bytes(text)
        self.strings += _bytes(text)

    def empty(self) -> None:
        self.fuel += S + E + C.map_empty().fuel + _walk(0)  # statement, the call, its charge and shape
        self.alloc += C.map_empty().alloc

    def read(self, size: int, operands: int) -> None:
        """``map.get`` / ``containsKey`` (``operands`` 2) or ``map.count`` (1): the call, its operands."""
        self.fuel += E + operands * E + C.read_fuel(size)

    def set(self, table: dict[Any, Any], key: Any, value: Any) -> None:
        """``map.set``'s own charges (its call and operand nodes are the caller's) and the update."""
        size = len(table)
        new = key not in table
        self.fuel += C.map_set(size, new).fuel + _walk(size + new)
        self.alloc += C.map_set(size, new).alloc
        self.elements += size + new  # the new flat map's elements
        table[key] = value
        key_bytes = sum(_bytes(k) for k in table if isinstance(k, str))  # the new map's key texts
        self.alloc += key_bytes
        self.strings += key_bytes


def _bytes(text: str) -> int:
    return C.string_bytes(len(text.encode("utf-16-le")) // 2)


def two_keys_run(n: int, a: str, b: str) -> tuple[int, Tally]:
    t = Tally()
    t.text_input(a)
    t.text_input(b)
    t.empty()
    t.fuel += S + 2 * E  # for, its start and end
    counts: dict[str, int] = {}
    for i in range(n):
        t.fuel += LOOP + S + 5 * E  # if i % 3 == 0
        if i % 3 == 0:
            t.fuel += S + E + 3 * E  # counts = map.set(counts, a, i)
            t.set(counts, a, i)
        else:
            t.fuel += S + E + 2 * E  # counts = map.set(counts, b, map.count(counts))
            t.read(len(counts), 1)
            t.set(counts, b, len(counts))
    t.fuel += S  # return map.count(counts)
    t.read(len(counts), 1)
    return len(counts), t


def count_run(n: int) -> tuple[int, Tally]:
    t = Tally()
    t.empty()
    t.fuel += S + 2 * E  # for, its start and end
    counts: dict[int, int] = {}
    for i in range(n):
        t.fuel += LOOP + S + 5 * E  # k = i * 7 % 5
        k = i * 7 % 5
        t.fuel += S  # if
        t.read(len(counts), 2)
        if k in counts:
            # counts = map.set(counts, k, map.get(counts, k) + 1): statement, call, 2 names, +, 1, get
            t.fuel += S + E + 2 * E + 2 * E
            t.read(len(counts), 2)
            t.set(counts, k, counts[k] + 1)
        else:
            t.fuel += S + E + 3 * E  # counts = map.set(counts, k, 1)
            t.set(counts, k, 1)
    # return map.get(counts, 3) * 100 + map.count(counts)
    t.fuel += S + 3 * E  # return, +, *, 100
    t.read(len(counts), 2)
    t.read(len(counts), 1)
    return counts[3] * 100 + len(counts), t


def grow_run(n: int, w: int) -> tuple[int, Tally]:
    t = Tally()
    t.empty()
    t.fuel += S + E  # i = 0
    seen: dict[int, bool] = {}
    i = 0
    while True:
        t.fuel += S + 3 * E if i == 0 else 3 * E  # while (once), condition i < n
        if not i < n:
            break
        # seen = map.set(seen, numeric.toI64(i % w), i % 3 == 0): statement, call, seen, toI64 (its
        # call, base fuel and i % w: 3), i % 3 == 0 (5)
        t.fuel += LOOP + S + E + E + (E + C.BUILTIN_COSTS["numeric.toI64"].base + 3 * E) + 5 * E
        t.set(seen, i % w, i % 3 == 0)
        t.fuel += S + 3 * E  # i = i + 1
        i += 1
    t.fuel += S  # if
    t.read(len(seen), 2)
    t.fuel += S  # return map.count(seen)
    t.read(len(seen), 1)
    assert seen[0], "the kernels below always find key 0 true"
    return len(seen), t


def _case(
    name: str, text: str, args: list[Any], limits: dict[str, int], expect: dict[str, Any], *tags: str
) -> Case:
    return {
        "name": f"run-owned-map-{name}",
        "description": name.replace("-", " "),
        "tags": ["run", "owned-map", "maps", *tags],
        "kernelText": text,
        "policy": {"limits": {**WALL, **limits}},
        "args": args,
        "expect": expect,
    }


def _usage(t: Tally, iterations: int) -> dict[str, int]:
    usage = {"loopIterations": iterations, "allocatedBytes": t.alloc, "collectionElements": t.elements}
    return {**usage, "stringBytes": t.strings} if t.strings else usage


_REFUSALS = (
    ("maxFuel", "fuel", "R-QUOTA-FUEL"),
    ("maxAllocatedBytes", "alloc", "R-QUOTA-ALLOCATION"),
    ("maxTotalCollectionElements", "elements", "R-QUOTA-COLLECTION-ELEMENTS"),
)
"""(policy limit, the tally it is measured by, the code one below the total gives): the last
charge of each kind is the last map.set's, so one less refuses it."""


def _limit_pair(
    name: str, text: str, args: list[Any], value: int, tally: Tally, iterations: int
) -> list[Case]:
    cases = []
    for limit, field, code in _REFUSALS:
        total = getattr(tally, field)
        cases.extend(_at_and_over(name, text, args, limit, total, tally, value, iterations, code))
    return cases


def _at_and_over(
    name: str,
    text: str,
    args: list[Any],
    limit: str,
    total: int,
    tally: Tally,
    value: int,
    iterations: int,
    code: str,
) -> list[Case]:
    """The run allowed with ``limit`` at ``total``, refused with ``code`` at one less."""
    kebab = "".join(f"-{c.lower()}" if c.isupper() else c for c in limit)
    ok = run_expect(value=value, fuel=tally.fuel, usage=_usage(tally, iterations))
    refused = run_expect(error="QuotaExceeded", code=code)
    return [
        _case(f"{name}-{kebab}-at-limit", text, args, {limit: total}, ok, f"limit:{limit}", "at-limit"),
        _case(
            f"{name}-{kebab}-over-limit",
            text,
            args,
            {limit: total - 1},
            refused,
            f"limit:{limit}",
            "over-limit",
        ),
    ]


def build() -> list[Case]:
    cases: list[Case] = []
    count_text = kernel(COUNT, "main(n I32) -> I32")
    for n in (5, 40, 3000):  # 3000: past the first 2,048-iteration chunk of the optimized backend
        limits = {"maxLoopIterations": 10_000, "maxFuel": 10_000_000}
        cases.append(_case(f"count-{n}", count_text, [n], limits, expect_ok(n)))
    value, tally = count_run(40)
    cases.extend(_limit_pair("count-40", count_text, [40], value, tally, 40))
    # five keys: maxMapEntries 5 holds them all, 4 refuses the update that adds the fifth
    cases.extend(
        _at_and_over(
            "count-40", count_text, [40], "maxMapEntries", 5, tally, value, 40, "R-QUOTA-MAP-ENTRIES"
        )
    )
    # n = 3: keys 0, 2 and 4 only, so the read of key 3 after the loop is NotFound
    missing = run_expect(error="NotFound", code="R-MAP-KEY-MISSING")
    cases.append(_case("count-3-missing-key", count_text, [3], {}, missing))
    two_text = kernel(TWO_KEYS, "main(n I32, a String, b String) -> I32")
    for n, a, b in ((7, "apple", "pear"), (40, "héllo", "wörld😀"), (30, "same", "same")):
        value, tally = two_keys_run(n, a, b)
        expect = run_expect(value=value, fuel=tally.fuel, usage=_usage(tally, n))
        cases.append(_case(f"text-keys-{n}", two_text, [n, a, b], {}, expect))
    value, tally = two_keys_run(40, "héllo", "wörld😀")
    args = [40, "héllo", "wörld😀"]
    cases.extend(
        _at_and_over(
            "text-keys-40",
            two_text,
            args,
            "maxTotalStringBytes",
            tally.strings,
            tally,
            value,
            40,
            "R-QUOTA-STRING-BYTES",
        )
    )
    cases.extend(
        _at_and_over(
            "text-keys-40",
            two_text,
            args,
            "maxAllocatedBytes",
            tally.alloc,
            tally,
            value,
            40,
            "R-QUOTA-ALLOCATION",
        )
    )
    grow_text = kernel(GROW, "main(n I32, w I32) -> I32")
    for n, w in ((130, 45), (300, 300)):  # 32 entries and more: the shape walk costs fuel
        value, tally = grow_run(n, w)
        limits = {"maxMapEntries": 1_000, "maxFuel": 10_000_000, "maxAllocatedBytes": 10_000_000}
        limits["maxTotalCollectionElements"] = 1_000_000
        expect = run_expect(value=value, fuel=tally.fuel, usage=_usage(tally, n))
        cases.append(_case(f"grow-{n}-{w}", grow_text, [n, w], limits, expect))
    return cases


def expect_ok(n: int) -> dict[str, Any]:
    value, tally = count_run(n)
    return run_expect(value=value, fuel=tally.fuel, usage=_usage(tally, n))


def main(argv: list[str] | None = None) -> int:
    return single_file_main(__file__, TARGET, build(), argv)


if __name__ == "__main__":
    raise SystemExit(main())
