"""Generate ``conformance/cases/strings/owned-string-loops.json``: strings built by a loop.

    python conformance/tools/make_owned_string_cases.py          # rewrite the case file
    python conformance/tools/make_owned_string_cases.py --check  # fail if it is out of date

The loop ``for i in 0 .. n { s = string.concatBudgeted(s, x); }`` is the form the optimized backend
builds in a parts list with its charges inline (spec/optimized.md, owned strings); the reference
interpreter charges it call by call. These cases pin what both must report, for each kind of piece
``x`` the optimized backend inlines (``int32.toStringInvariant`` of an ``I32``, a literal, another
local) and at each limit the loop can run into, refused exactly at the boundary: fuel, host calls,
``maxStringLength``, ``maxTotalStringBytes``, ``maxAllocatedBytes`` and the loop budget.

Nothing here runs the runtime: ``_Model`` replays the kernel's charges in the order spec/costs.md
gives them (sections 2, 3 and 5: statement and expression fuel, the iteration charge, the host call,
base fuel, the new text's shape - string length, string bytes, then allocation - and one fuel per
result byte), with the refusal rules of section 9 (amount counters do not record a refused amount;
host calls and loop iterations count the refused attempt), and UTF-16 lengths are measured by
encoding.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dotboxd.conformance.tools.kit import CASES, kernel, run_expect, single_file_main
from dotboxd.core import costs as C

TARGET = CASES / "strings" / "owned-string-loops.json"
Case = dict[str, Any]
WALL = {"maxWallTimeMs": 60_000}  # generous: no expectation depends on the machine's speed
ROOMY = {
    "maxFuel": 10**9,
    "maxLoopIterations": 10**6,
    "maxHostCalls": 10**6,
    "maxStringLength": 10**6,
    "maxTotalStringBytes": 10**9,
    "maxAllocatedBytes": 10**9,
}
"""Limits the kernels below never reach but the one a refusal case sets."""

CONCAT = "string.concatBudgeted"
TO_STRING = "int32.toStringInvariant"
LENGTH = "string.length"


def units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


class Refused(Exception):
    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


@dataclass
class _Model:
    """The meter of spec/costs.md for one run, charge by charge."""

    limits: dict[str, int]
    fuel_used: int = 0
    string_bytes: int = 0
    allocated: int = 0
    host_calls: int = 0
    loops: int = 0
    calls: dict[str, int] = field(default_factory=dict)

    def fuel(self, amount: int) -> None:
        if amount and self.fuel_used + amount > self.limits["maxFuel"]:
            raise Refused("R-QUOTA-FUEL")
        self.fuel_used += amount

    def text(self, length16: int) -> None:
        """A new text's shape charge (one node: no walk fuel)."""
        self.fuel(C.shape_walk_fuel(1))
        if length16 > self.limits["maxStringLength"]:
            raise Refused("R-QUOTA-STRING-LENGTH")
        amount = C.string_bytes(length16)
        if self.string_bytes + amount > self.limits["maxTotalStringBytes"]:
            raise Refused("R-QUOTA-STRING-BYTES")
        if self.allocated + amount > self.limits["maxAllocatedBytes"]:
            raise Refused("R-QUOTA-ALLOCATION")
        self.allocated += amount
        self.string_bytes += amount

    def host(self, name: str) -> None:
        self.host_calls += 1  # an attempt counter
        if self.host_calls > self.limits["maxHostCalls"]:
            raise Refused("R-QUOTA-HOST-CALLS")
        self.calls[name] = self.calls.get(name, 0) + 1

    def iteration(self) -> None:
        self.loops += 1  # an attempt counter
        if self.loops > self.limits["maxLoopIterations"]:
            raise Refused("R-QUOTA-LOOP")
        self.fuel(5)

    def nodes(self, count: int) -> None:
        """``count`` statement or expression charges of 1 fuel each."""
        for _ in range(count):
            self.fuel(1)


@dataclass(frozen=True)
class Loop:
    """``s = start; [sep = local;] for i in 0 .. n { s = concat(s, piece) } return string.length(s)``."""

    name: str
    n: int
    start: str
    piece: str  # "digit" (i % 10), "signed" (i - 5), "literal", "local", or "mixed" (i - 5, then the literal)
    text: str = ""  # the literal or the local's text

    def source(self) -> str:
        pieces = {
            "digit": f"{TO_STRING}(i % 10)",
            "signed": f"{TO_STRING}(i - 5)",
            "literal": f'"{self.text}"',
            "local": "sep",
        }
        local = f'    sep = "{self.text}";\n' if self.piece == "local" else ""
        if self.piece == "mixed":
            body = f"s = {CONCAT}(s, {pieces['signed']}); s = {CONCAT}(s, {pieces['literal']});"
        else:
            body = f"s = {CONCAT}(s, {pieces[self.piece]});"
        return kernel(
            f'    s = "{self.start}";\n{local}'
            f"    for i in 0 .. {self.n} {{ {body} }}\n"
            f"    return {LENGTH}(s);"
        )

    def concatenate(self, model: _Model, kind: str, i: int, length: int) -> int:
        """One ``s = string.concatBudgeted(s, piece)`` onto a text of ``length`` units: its units."""
        base = C.BUILTIN_COSTS
        model.nodes(3)  # the statement, the concat call node, the read of s
        if kind in ("digit", "signed"):
            model.nodes(4)  # the call node, the binary node, the read of i, the literal
            piece = str(i % 10 if kind == "digit" else i - 5)
            model.host(TO_STRING)
            model.fuel(base[TO_STRING].base)
            model.text(units(piece))
        elif kind == "literal":
            model.nodes(1)
            piece = self.text
            model.text(units(piece))
        else:
            model.nodes(1)  # a read: nothing new
            piece = self.text
        model.host(CONCAT)
        model.fuel(base[CONCAT].base)
        model.text(length + units(piece))
        model.fuel(base[CONCAT].per_result_byte * C.string_bytes(length + units(piece)))
        return units(piece)

    def run(self, model: _Model) -> int:
        """Charge the kernel on ``model``; its value (raises ``Refused`` where a limit refuses)."""
        base = C.BUILTIN_COSTS
        model.nodes(2)  # the statement and its literal
        model.text(units(self.start))
        if self.piece == "local":
            model.nodes(2)
            model.text(units(self.text))
        model.nodes(3)  # the forRange statement and its two literal bounds
        length = units(self.start)
        for i in range(self.n):
            model.iteration()
            kinds = ("signed", "literal") if self.piece == "mixed" else (self.piece,)
            for kind in kinds:
                length += self.concatenate(model, kind, i, length)
        model.nodes(3)  # return, the call node, the read of s
        model.host(LENGTH)
        model.fuel(base[LENGTH].base)
        return length


LOOPS = [
    Loop("digits", 60, "", "digit"),
    Loop("signed-digits", 40, "n=", "signed"),
    Loop("astral-literal", 50, "\U0001d11e", "literal", "\u00e9\U0001f601"),
    Loop("astral-local", 50, "", "local", "\U0001d11e-"),
    Loop("empty-pieces", 30, "ab", "literal", ""),
    Loop("numbers-and-separators", 40, "[", "mixed", ", \U0001f601"),
]

LIMITS = {
    "maxFuel": "fuelUsed",
    "maxHostCalls": "hostCalls",
    "maxStringLength": None,
    "maxTotalStringBytes": "stringBytes",
    "maxAllocatedBytes": "allocatedBytes",
    "maxLoopIterations": "loopIterations",
}
"""Each limit a refusal case sets, and the counter whose total in a complete run places the boundary
(``maxStringLength``: the final text's length)."""


def _usage(model: _Model) -> dict[str, int]:
    return {
        "stringBytes": model.string_bytes,
        "allocatedBytes": model.allocated,
        "hostCalls": model.host_calls,
        "loopIterations": model.loops,
    }


def _case(loop: Loop, name: str, limits: dict[str, int], description: str) -> Case:
    model = _Model(limits)
    try:
        value: int | None = loop.run(model)
        code = None
    except Refused as refused:
        value, code = None, refused.code
    return {
        "name": f"run-owned-string-{loop.name}-{name}",
        "description": description,
        "tags": ["run", "strings", "owned-strings"],
        "kernelText": loop.source(),
        "policy": {"limits": {**WALL, **limits}},
        "expect": run_expect(
            value=value,
            error="QuotaExceeded" if code else None,
            code=code,
            fuel=model.fuel_used,
            usage=_usage(model),
            binding_calls=model.calls,
        ),
    }


def _needed(loop: Loop, limit: str) -> int:
    model = _Model(dict(ROOMY))
    final = loop.run(model)
    counter = LIMITS[limit]
    if counter is None:
        return final
    return {"fuelUsed": model.fuel_used, **_usage(model)}[counter]


def build() -> list[Case]:
    cases: list[Case] = []
    for loop in LOOPS:
        cases.append(_case(loop, "ok", dict(ROOMY), f"{loop.name}: the whole loop, every charge"))
    for loop in (*LOOPS[:4], LOOPS[5]):
        for limit in LIMITS:
            needed = _needed(loop, limit)
            for label, value in (("at", needed), ("below", needed - 1), ("mid", needed // 2)):
                cases.append(
                    _case(
                        loop,
                        f"{limit.lower()}-{label}",
                        {**ROOMY, limit: value},
                        f"{loop.name} with {limit} {value} ({label} what the loop needs)",
                    )
                )
    return cases


def main(argv: list[str] | None = None) -> int:
    return single_file_main(__file__, TARGET, build(), argv)


if __name__ == "__main__":
    raise SystemExit(main())
