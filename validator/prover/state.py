"""The analysis state at one program point, and the control-flow results of a statement.

A state holds the abstract value of every local, the *path condition* (the exact branch conditions
taken to get here), and two cost vectors:

* ``U``: an upper bound of every resource consumed since the state's base (the function start, or
  the start of a loop iteration) on any run reaching this point; ``None`` is "unbounded";
* ``L``: a lower bound of what a run that reaches this point has surely consumed. ``L`` is the
  *must* cost used for counterexamples; it stops growing (``lstop``) at the first operation that
  might fail for a reason other than a quota, or at the first point not surely reached.

``record`` says whether this point is surely reached whenever its path condition holds (it is False
inside loop bodies and inside branches whose condition the prover cannot express exactly); only
then does a stop of ``L`` leave a refutation *candidate* (path condition, must cost). On such a
path an operation that may fail with exact operands does not stop ``L``: its "did not fail"
condition joins the path condition instead (``assumed`` counts these), and wherever paths merge
those conditions are carried along as a disjunction, so a candidate's path condition always
implies that every operation before it succeeded.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .domain import AVal
from .sym import ZERO, Cond, Poly, Sym

FUEL = "fuel"
LOOPS = "loopIterations"
HOST_CALLS = "hostCalls"
ALLOCATION = "allocatedBytes"
STRING_BYTES = "stringBytes"
"""Allocation that comes from text (every string byte is also allocated); kept apart while
analysing because the meter caps it as a whole at ``maxTotalStringBytes``."""
BINDING_PREFIX = "bindingCalls:"

Upper = dict[str, Poly | None]
Lower = dict[str, Poly]


def binding_resource(binding_id: str) -> str:
    return BINDING_PREFIX + binding_id


class State:
    __slots__ = ("L", "U", "assumed", "lstop", "pc", "record", "risk", "vars")

    def __init__(
        self,
        vars: dict[str, AVal],
        pc: tuple[Cond, ...] = (),
        U: Upper | None = None,
        L: Lower | None = None,
        lstop: bool = False,
        record: bool = True,
        risk: bool = False,
    ) -> None:
        self.vars = vars
        self.pc = pc
        self.U: Upper = U if U is not None else {}
        self.L: Lower = L if L is not None else {}
        self.lstop = lstop
        self.record = record
        self.risk = risk  # a quota other than the tracked budgets might stop the run before here
        self.assumed = 0  # conditions "this exact operation did not fail" added to pc on this path

    def copy(self) -> State:
        out = State(dict(self.vars), self.pc, dict(self.U), dict(self.L), self.lstop, self.record, self.risk)
        out.assumed = self.assumed
        return out


@dataclass
class Flow:
    """How a statement (or block) can end: falling through, or by break, continue or return."""

    normal: State | None = None
    breaks: list[State] = field(default_factory=list)
    continues: list[State] = field(default_factory=list)
    returns: list[tuple[State, AVal]] = field(default_factory=list)

    def absorb(self, other: Flow) -> None:
        self.breaks.extend(other.breaks)
        self.continues.extend(other.continues)
        self.returns.extend(other.returns)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A refutation candidate: whenever ``pc`` holds, a run surely consumes at least ``L`` (or
    is stopped by a quota first)."""

    pc: tuple[Cond, ...]
    L: tuple[tuple[str, Poly], ...]


def add_upper(sym: Sym, u: Upper, resource: str, amount: Poly | None) -> None:
    if amount is not None and not amount.terms:
        return
    current = u.get(resource, ZERO)
    u[resource] = None if current is None or amount is None else sym.add(current, amount)


def add_lower(sym: Sym, low: Lower, resource: str, amount: Poly) -> None:
    if amount.terms:
        low[resource] = sym.add(low.get(resource, ZERO), amount)


def upper_delta(sym: Sym, u: Upper, base: Upper) -> Upper:
    out: Upper = {}
    for key, value in u.items():
        b = base.get(key, ZERO)
        out[key] = None if value is None or b is None else sym.sub(value, b)
    return out


def lower_delta(sym: Sym, low: Lower, base: Lower) -> Lower:
    return {key: sym.sub(value, base.get(key, ZERO)) for key, value in low.items()}


def join_upper(sym: Sym, parts: Iterable[Upper], cond: Cond | None = None) -> Upper:
    """The pointwise maximum (an ``ite`` on an exact two-way condition)."""
    items = list(parts)
    keys = sorted({k for p in items for k in p})
    out: Upper = {}
    for key in keys:
        values = [p.get(key, ZERO) for p in items]
        if any(v is None for v in values):
            out[key] = None
            continue
        polys = [v for v in values if v is not None]
        if cond is not None and len(polys) == 2:
            out[key] = sym.ite(cond, polys[0], polys[1])
        else:
            acc = polys[0]
            for v in polys[1:]:
                acc = sym.max(acc, v)
            out[key] = acc
    return out


def join_lower(sym: Sym, parts: Iterable[Lower], cond: Cond | None = None) -> Lower:
    """The pointwise minimum (an ``ite`` on an exact two-way condition)."""
    items = list(parts)
    keys = sorted({k for p in items for k in p})
    out: Lower = {}
    for key in keys:
        values = [p.get(key, ZERO) for p in items]
        if cond is not None and len(values) == 2:
            out[key] = sym.ite(cond, values[0], values[1])
        else:
            acc = values[0]
            for v in values[1:]:
                acc = sym.min(acc, v)
            out[key] = acc
    return out


def plus_upper(sym: Sym, base: Upper, delta: Upper) -> Upper:
    out = dict(base)
    for key, value in delta.items():
        add_upper(sym, out, key, value)
    return out


def plus_lower(sym: Sym, base: Lower, delta: Lower) -> Lower:
    out = dict(base)
    for key, value in delta.items():
        add_lower(sym, out, key, value)
    return out
