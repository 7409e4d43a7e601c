"""Generate ``conformance/cases/collections/owned-lists.json``: lists built in place by a loop.

    python conformance/tools/make_owned_list_cases.py          # rewrite the case file
    python conformance/tools/make_owned_list_cases.py --check  # fail if it is out of date

Why a file of its own: the optimized backend appends to a list it proves owned (``v = list.add(v,
x)`` in a loop, the list made in the function and read only by ``list.count``/``list.get`` or
returned) in place, checks the fuel inline and settles allocation, elements and the list length in
one step later. Each case here runs such a loop - a forRange, a while loop, an add under an ``if``
- to its end, or stops it in the middle of the loop at each limit the adds charge: fuel (at the
copy charge and at the shape walk), ``maxListLength``, ``maxAllocatedBytes``,
``maxTotalCollectionElements`` and ``maxLoopIterations``. The conformance runner holds both backends
to the same expectations, so the in-place path must stop at the same add with the same partial usage.

Nothing here runs the runtime. ``_Run`` replays the reference's charges in the order ``spec/costs.md``
gives them (sections 2-4 and 9: each node's fuel, a loop iteration's count then its fuel, a
built-in's fuel, then its allocation, then the shape of the value it builds: the ``nodes // 64``
walk, the list length, the collection elements) against the case's limits, with the amounts of
``dotboxd.core.costs``, and stops at the first charge a limit refuses, which is not added (the loop
iteration that is refused is counted, as section 9 says). Values are plain Python arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dotboxd.conformance.tools.kit import CASES, kernel, run_expect, single_file_main
from dotboxd.core import costs as C

TARGET = CASES / "collections" / "owned-lists.json"
S = C.STATEMENT_FUEL
E = C.EXPRESSION_FUEL
LOOP = C.LOOP_ITERATION_FUEL
WALK_NODES = 64
"""A value's shape check costs ``nodes // 64`` fuel (``spec/costs.md`` section 3)."""

LIMITS = {
    "maxFuel": 100_000,
    "maxLoopIterations": 100_000,
    "maxAllocatedBytes": 1_048_576,
    "maxTotalCollectionElements": 100_000,
    "maxListLength": 10_000,
    "maxWallTimeMs": 60_000,
}
"""The limits every case starts from (the defaults, written out so that ``_Run`` knows them all)."""

Case = dict[str, Any]


class Refused(Exception):
    def __init__(self, code: str) -> None:
        self.code = code


class _Run:
    """The usage of one run, charge by charge, under ``limits``."""

    def __init__(self, limits: dict[str, int]) -> None:
        self.limits = limits
        self.fuel = 0
        self.loops = 0
        self.alloc = 0
        self.elements = 0

    def nodes(self, count: int) -> None:
        """``count`` statement or expression nodes, one fuel each, in turn."""
        for _ in range(count):
            self.charge(1)

    def charge(self, amount: int) -> None:
        if self.fuel + amount > self.limits["maxFuel"]:
            raise Refused("R-QUOTA-FUEL")
        self.fuel += amount

    def iteration(self) -> None:
        self.loops += 1
        if self.loops > self.limits["maxLoopIterations"]:
            raise Refused("R-QUOTA-LOOP")
        self.charge(LOOP)

    def list_empty(self) -> None:
        self.charge(C.LIST_EMPTY_FUEL)
        self.allocate(C.LIST_EMPTY_ALLOC)

    def list_add(self, size: int) -> None:
        """``list.add`` on a flat list of ``size`` items: fuel ``2 + c + 1``, allocation
        ``16 (c + 1)``, then the new list's shape (``c + 1`` items and the list: ``c + 2`` nodes)."""
        self.charge(2 + size + 1)
        self.allocate(16 * (size + 1))
        self.charge((size + 2) // WALK_NODES)
        if size + 1 > self.limits["maxListLength"]:
            raise Refused("R-QUOTA-LIST-LENGTH")
        if self.elements + size + 1 > self.limits["maxTotalCollectionElements"]:
            raise Refused("R-QUOTA-COLLECTION-ELEMENTS")
        self.elements += size + 1

    def read(self, size: int) -> None:
        """``list.count`` or ``list.get``: ``2 + c`` fuel."""
        self.charge(2 + size)

    def allocate(self, amount: int) -> None:
        if self.alloc + amount > self.limits["maxAllocatedBytes"]:
            raise Refused("R-QUOTA-ALLOCATION")
        self.alloc += amount

    def usage(self) -> dict[str, int]:
        return {
            "loopIterations": self.loops,
            "allocatedBytes": self.alloc,
            "collectionElements": self.elements,
        }


# --- the kernels, each with its replay ------------------------------------------------------------

FOR_RANGE = kernel(
    "xs = list.empty[I32]();\nfor i in 0 .. n { xs = list.add(xs, i * 2); }\nreturn list.get(xs, n - 1) + list.count(xs);",
    "main(n I32) -> I32",
)


def _for_range(run: _Run, n: int) -> int:
    run.nodes(S + E)  # xs = list.empty[I32]()
    run.list_empty()
    run.nodes(S + 2 * E)  # for i in 0 .. n
    items: list[int] = []
    for i in range(n):
        run.iteration()
        run.nodes(S + 5 * E)  # xs = list.add(xs, i * 2): the call, xs, the product and its operands
        run.list_add(len(items))
        items.append(i * 2)
    run.nodes(S + 6 * E)  # return (+) list.get xs (-) n 1
    run.read(len(items))
    run.nodes(2 * E)  # list.count xs
    run.read(len(items))
    return items[n - 1] + len(items)


WHILE = kernel(
    "xs = list.empty[I64]();\nw = 0;\nwhile w < n { xs = list.add(xs, numeric.toI64(w) * 3L); w = w + 1; }\nreturn xs;",
    "main(n I32) -> List<I64>",
)


def _while(run: _Run, n: int) -> list[int]:
    run.nodes(S + E)  # xs = list.empty[I64]()
    run.list_empty()
    run.nodes(S + E)  # w = 0
    run.nodes(S)  # while
    items: list[int] = []
    w = 0
    while True:
        run.nodes(3 * E)  # w < n
        if not w < n:
            break
        run.iteration()
        # xs = list.add(xs, numeric.toI64(w) * 3L): the statement, the call, xs, the product, the
        # conversion and w (then its base fuel), the literal
        run.nodes(S + 3 * E)
        run.nodes(E + E)
        run.charge(_TO_I64_FUEL)
        run.nodes(E)
        run.list_add(len(items))
        items.append(w * 3)
        run.nodes(S + 3 * E)  # w = w + 1
        w += 1
    run.nodes(S + E)  # return xs
    return items


_TO_I64_FUEL = 0
"""``numeric.toI64``'s base fuel (``spec/costs.md`` section 5's table: 0)."""

CONDITIONAL = kernel(
    "xs = list.empty[I32]();\n"
    "for i in 0 .. n {\n"
    "    if i % 3 == 0 { xs = list.add(xs, i); }\n"
    "    xs = list.add(xs, 0 - i);\n"
    "}\n"
    "return list.count(xs) * 1000 + list.get(xs, list.count(xs) - 1);",
    "main(n I32) -> I32",
)


def _conditional(run: _Run, n: int) -> int:
    run.nodes(S + E)
    run.list_empty()
    run.nodes(S + 2 * E)
    items: list[int] = []
    for i in range(n):
        run.iteration()
        run.nodes(S + 5 * E)  # if (==) (%) i 3 0
        if i % 3 == 0:
            run.nodes(S + 3 * E)  # xs = list.add(xs, i)
            run.list_add(len(items))
            items.append(i)
        run.nodes(S + 5 * E)  # xs = list.add(xs, (-) 0 i)
        run.list_add(len(items))
        items.append(0 - i)
    run.nodes(S + 4 * E)  # return (+) (*) list.count xs
    run.read(len(items))
    run.nodes(6 * E)  # 1000, list.get xs (-) list.count xs
    run.read(len(items))  # the inner list.count (evaluated before list.get's own charge)
    run.nodes(E)  # its literal 1
    run.read(len(items))  # list.get
    return len(items) * 1000 + items[-1]


KERNELS: dict[str, tuple[str, Callable[[_Run, int], Any]]] = {
    "for-range": (FOR_RANGE, _for_range),
    "while": (WHILE, _while),
    "conditional": (CONDITIONAL, _conditional),
}


def _case(
    name: str, kind: str, n: int, limits: dict[str, int], description: str, tags: tuple[str, ...]
) -> Case:
    text, replay = KERNELS[kind]
    run = _Run({**LIMITS, **limits})
    try:
        value = replay(run, n)
        expect = run_expect(value=value, fuel=run.fuel, usage=run.usage())
    except Refused as refused:
        expect = run_expect(error="QuotaExceeded", code=refused.code, fuel=run.fuel, usage=run.usage())
    return {
        "name": f"owned-list-{name}",
        "description": description,
        "tags": ["run", "collections", "owned-list", *tags],
        "kernelText": text,
        "policy": {"limits": {**LIMITS, **limits}},
        "args": [n],
        "expect": expect,
    }


def _before_add(kind: str, n: int, add: int) -> _Run:
    """The run of ``kind`` stopped just before the ``add``-th ``list.add`` charges (0-based): the
    limits below are set from where each add stands, never from a run of the runtime."""
    run = _Run(dict(LIMITS))
    adds = [0]
    real_add = run.list_add

    def counted(size: int) -> None:
        if adds[0] == add:
            raise _Stop
        adds[0] += 1
        real_add(size)

    run.list_add = counted  # type: ignore[method-assign]
    try:
        KERNELS[kind][1](run, n)
    except _Stop:
        return run
    raise AssertionError("the kernel makes fewer adds")


class _Stop(Exception):
    pass


def build() -> list[Case]:
    n = 300
    cases = [
        _case(
            "for-range-builds", "for-range", n, {}, "a forRange loop appends 300 items to a list it owns", ()
        ),
        _case("while-builds", "while", 70, {}, "a while loop appends to a list it owns and returns it", ()),
        _case("while-empty", "while", 0, {}, "an owned loop that never runs returns the empty list", ()),
        _case("conditional-builds", "conditional", 150, {}, "two adds per iteration, one under an if", ()),
    ]
    at = _before_add("for-range", n, 150)  # the 151st add: the list holds 150 items
    copy_charge = 2 + 150 + 1
    cases.append(
        _case(
            "fuel-at-the-copy-charge",
            "for-range",
            n,
            {"maxFuel": at.fuel + copy_charge - 1},
            "fuel runs out at an add's copy charge in the middle of the owned loop",
            ("exhaustion",),
        )
    )
    walk_at = _before_add("for-range", n, 200)  # 200 items: the walk of the new list costs 3
    cases.append(
        _case(
            "fuel-at-the-shape-walk",
            "for-range",
            n,
            {"maxFuel": walk_at.fuel + (2 + 200 + 1) + (202 // WALK_NODES) - 1},
            "fuel runs out at the shape walk of an add's new list in the middle of the owned loop",
            ("exhaustion",),
        )
    )
    cases.append(
        _case(
            "list-length",
            "for-range",
            n,
            {"maxListLength": 177},
            "the add that would make the list 178 long is refused in the middle of the owned loop",
            ("exhaustion",),
        )
    )
    alloc_at = _before_add("for-range", n, 123)
    cases.append(
        _case(
            "allocation",
            "for-range",
            n,
            {"maxAllocatedBytes": alloc_at.alloc + 16 * 124 - 1},
            "the 124th add's allocation is refused in the middle of the owned loop",
            ("exhaustion",),
        )
    )
    elements_at = _before_add("for-range", n, 211)
    cases.append(
        _case(
            "collection-elements",
            "for-range",
            n,
            {"maxTotalCollectionElements": elements_at.elements + 212 - 1},
            "the 212th add's elements are refused in the middle of the owned loop",
            ("exhaustion",),
        )
    )
    cases.append(
        _case(
            "loop-iterations",
            "for-range",
            n,
            {"maxLoopIterations": 97},
            "the 98th iteration of the owned loop is refused, its adds before it settled",
            ("exhaustion",),
        )
    )
    cases.append(
        _case(
            "while-list-length",
            "while",
            200,
            {"maxListLength": 64},
            "a while loop's owned add is refused at the list length",
            ("exhaustion",),
        )
    )
    cases.append(
        _case(
            "conditional-allocation",
            "conditional",
            n,
            {"maxAllocatedBytes": 200_000},
            "an owned loop with two adds an iteration stops at the allocation limit",
            ("exhaustion",),
        )
    )
    cases.append(
        _case(
            "conditional-fuel",
            "conditional",
            n,
            {"maxFuel": 20_000},
            "an owned loop with two adds an iteration runs out of fuel",
            ("exhaustion",),
        )
    )
    return cases


def main(argv: list[str] | None = None) -> int:
    return single_file_main(__file__, TARGET, build(), argv)


if __name__ == "__main__":
    raise SystemExit(main())
