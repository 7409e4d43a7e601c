"""Budget verdicts: turn a function's symbolic costs into PROVED / REFUTED / UNKNOWN per limit.

For each limit (``maxFuel``, ``maxLoopIterations``, ``maxHostCalls``, ``maxAllocatedBytes``, each
binding's ``maxCallsPerRun``) two questions, each a recorded obligation:

1. *budget*: "can the upper bound exceed the limit for some input allowed by the preconditions?"
   ``unsat`` proves the limit is never reached (PROVED);
2. *refute* (only if 1 failed, for entrypoints): "is there an input on whose path the *must*
   cost already exceeds the limit?" A model is a counterexample input; the run on it is stopped
   by a quota (the argument is in ``spec/proofs.md``). The overshoot factor is the must cost at
   the witness over the limit.

Anything else is UNKNOWN, with the reason and a hint naming the inputs to bound.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from dotboxd.core.bindings import BindingDescriptor
from dotboxd.core.limits import LIMIT_BY_NAME
from dotboxd.core.values import SandboxFault, Value, shape_of

from .analyzer import FunctionAnalysis
from .inputs import MAX_WITNESS_ELEMENTS, MAX_WITNESS_TEXT_UNITS, InputModel
from .obligations import ObligationLog
from .report import BudgetVerdict, Verdict, Witness
from .state import ALLOCATION, BINDING_PREFIX, FUEL, HOST_CALLS, LOOPS
from .sym import ZERO, Cond, Poly, Sym, const
from .text import Namer

_PROVED_LIMITS = {
    FUEL: LIMIT_BY_NAME["max_fuel"],
    LOOPS: LIMIT_BY_NAME["max_loop_iterations"],
    HOST_CALLS: LIMIT_BY_NAME["max_host_calls"],
    ALLOCATION: LIMIT_BY_NAME["max_allocated_bytes"],
}
"""The run limits the prover decides, by resource (their names and JSON names: the core limit table)."""
LIMIT_NAMES = {resource: spec.json_name for resource, spec in _PROVED_LIMITS.items()}


@dataclass(frozen=True, slots=True)
class Limit:
    resource: str
    limit: int | None
    knob: str  # what to raise


def limits_for(
    analysis: FunctionAnalysis, limits: object, bindings: Mapping[str, BindingDescriptor]
) -> list[Limit]:
    out = [
        Limit(resource, getattr(limits, spec.name), spec.json_name)
        for resource, spec in _PROVED_LIMITS.items()
    ]
    for key in sorted(analysis.upper):
        if key.startswith(BINDING_PREFIX):
            desc = bindings.get(key[len(BINDING_PREFIX) :])
            cap = desc.cost.max_calls_per_run if desc is not None and desc.cost is not None else None
            if cap is not None:
                out.append(Limit(key, cap, f"the binding's maxCallsPerRun ({cap})"))
    return out


class WitnessCheck:
    """Turns a model into a concrete, valid entry input (or None when it would not be one).

    ``oversized`` describes the last model whose input was beyond the prover's own size caps
    (``MAX_WITNESS_ELEMENTS``, ``MAX_WITNESS_TEXT_UNITS``): such an input is never built."""

    def __init__(self, model: InputModel, valid: Callable[[Sequence[Value]], bool]) -> None:
        self.model = model
        self.valid = valid
        self.oversized = ""

    def build(self, raw: Mapping[int, int]) -> tuple[Witness, dict[int, int]] | None:
        env = self.model.complete(raw)
        if not self.model.witness_fits(env):
            self.oversized = self.model.witness_size(env)[2]
            return None
        args, described = self.model.witness_json(env)
        try:
            values = self.model.decode(args)
        except SandboxFault:
            return None
        if not self.valid(values):
            return None
        # the atom values of the input actually built (a model may name string bytes that the
        # witness, with empty texts, does not hold): every check after this uses these
        return Witness(tuple(args), tuple(described)), self.model.env(values)


def decide(
    sym: Sym,
    namer: Namer,
    log: ObligationLog,
    analysis: FunctionAnalysis,
    model: InputModel,
    limits: list[Limit],
    witnesses: WitnessCheck | None,
    loop_note: str,
) -> list[BudgetVerdict]:
    out: list[BudgetVerdict] = []
    fn = analysis.function
    for lim in limits:
        upper = analysis.upper.get(lim.resource, ZERO)
        out.append(_one(sym, namer, log, fn, analysis, model, lim, upper, witnesses, loop_note))
    return out


def _one(
    sym: Sym,
    namer: Namer,
    log: ObligationLog,
    fn: str,
    analysis: FunctionAnalysis,
    model: InputModel,
    lim: Limit,
    upper: Poly | None,
    witnesses: WitnessCheck | None,
    loop_note: str,
) -> BudgetVerdict:
    res, limit = lim.resource, lim.limit
    assert limit is not None
    if upper is None:
        return BudgetVerdict(
            res,
            limit,
            Verdict.UNKNOWN,
            "unbounded",
            None,
            reason="; ".join(x for x in (log.spent, loop_note or "a loop was not shown to terminate") if x),
            hint="make the loop a forRange, or give its guard a comparison every iteration moves toward",
        )
    bound_text = namer.poly(upper)
    bound_max = sym.range(upper)[1]
    claim = f"{res} <= {limit} for every input the preconditions allow (bound: {bound_text})"
    goal = sym.lt(const(limit), upper)
    obligations: list[str] = []
    # a cheap search first: an input on which the bound itself exceeds the limit settles that
    # the bound cannot be proved (Z3 then only confirms that one point)
    point = search(sym, model, lambda env: sym.evaluate(upper, env) > limit) if bound_max > limit else None
    if point is not None:
        ob, result = log.ask(
            sym,
            kind="budget",
            function=fn,
            pointer="",
            claim=claim,
            goal=goal,
            premises=fix(sym, point, sym.atoms(upper)),
        )
    else:
        ob, result = log.ask(sym, kind="budget", function=fn, pointer="", claim=claim, goal=goal)
    if ob.name:
        obligations.append(ob.name)
    if result.status == "unsat" or bound_max <= limit:
        method = "z3" if result.status == "unsat" else "interval"
        return BudgetVerdict(
            res, limit, Verdict.PROVED, bound_text, bound_max, method, obligations=tuple(obligations)
        )
    hint = _hint(sym, model, upper, lim, entry=witnesses is not None)
    reason = "the bound may exceed the limit, but no input was shown to"
    if result.status == "unknown":
        reason = log.spent or "the solver could not decide the bound within its resource limit"
        if log.spent:
            hint = f"{hint} or raise the policy's proveRlimit"
    if witnesses is not None:
        witnesses.oversized = ""
        found = _refute(sym, log, fn, analysis, lim, witnesses, model)
        if found is not None:
            witness, reached, names = found
            obligations.extend(names)
            return BudgetVerdict(
                res,
                limit,
                Verdict.REFUTED,
                bound_text,
                bound_max,
                "z3",
                witness,
                reached,
                reason="the witness input's run cannot finish within the limit",
                hint=hint,
                obligations=tuple(obligations),
            )
        if witnesses.oversized:
            reason = (
                f"the solver points at an input that would exceed the limit ({witnesses.oversized}), but "
                f"it is larger than the prover builds ({MAX_WITNESS_ELEMENTS:,} collection items, "
                f"{MAX_WITNESS_TEXT_UNITS:,} text units), so it was neither built nor checked"
            )
    return BudgetVerdict(
        res,
        limit,
        Verdict.UNKNOWN,
        bound_text,
        bound_max,
        reason=reason,
        hint=hint,
        obligations=tuple(obligations),
    )


def _refute(
    sym: Sym,
    log: ObligationLog,
    fn: str,
    analysis: FunctionAnalysis,
    lim: Limit,
    witnesses: WitnessCheck,
    model: InputModel,
) -> tuple[Witness, int, list[str]] | None:
    res, limit = lim.resource, lim.limit
    assert limit is not None
    options: list[tuple[tuple[Cond, ...], Poly]] = []
    for cand in analysis.candidates:
        low = dict(cand.L).get(res, ZERO)
        if sym.range(low)[1] > limit:
            options.append((cand.pc, low))
    if not options:
        return None

    def reached_at(env: Mapping[int, int]) -> int:
        return max(
            (sym.evaluate(low, env) for pc, low in options if all(sym.holds(c, env) for c in pc)), default=0
        )

    goal = sym.or_(*(sym.and_(*pc, sym.lt(const(limit), low)) for pc, low in options))
    claim = f"some input's run surely needs more than {limit} {res}"
    point = search(sym, model, lambda env: reached_at(env) > limit)
    if point is not None:
        mentioned = sym.cond_atoms(goal)
        ob, result = log.ask(
            sym,
            kind="refute",
            function=fn,
            pointer="",
            claim=claim,
            goal=goal,
            premises=fix(sym, point, mentioned),
            expect="sat",
        )
        raw: Mapping[int, int] = (
            {k: v for k, v in point.items() if k in mentioned} if result.status == "sat" else {}
        )
    else:
        ob, result = log.ask(
            sym, kind="refute", function=fn, pointer="", claim=claim, goal=goal, expect="sat"
        )
        raw = result.model
    if result.status != "sat":
        return None
    if point is None:  # Z3's model may be far larger than needed: shrink it first
        raw = shrink(sym, model, model.complete(raw), lambda env: reached_at(env) > limit)
    built = witnesses.build(raw)
    if built is None:
        return None
    witness, env = built
    reached = reached_at(env)
    if reached <= limit:
        return None
    return witness, reached, [ob.name] if ob.name else []


def fix(sym: Sym, env: Mapping[int, int], atoms: frozenset[int]) -> list[Cond]:
    """Premises pinning each atom to its value in ``env`` (a one-point obligation)."""
    out: list[Cond] = []
    for fid in sorted(atoms):
        f = sym.factors[fid]
        if f.kind == "atom":
            out.append(sym.eq(sym.add_const(_atom(fid), -env[fid])))
        elif f.kind == "batom":
            c = Cond("bool", atom=fid)
            out.append(c if env[fid] else sym.not_(c))
    return out


def _atom(fid: int) -> Poly:
    return Poly((((fid,), 1),))


def search(sym: Sym, model: InputModel, test: Callable[[Mapping[int, int]], bool]) -> dict[int, int] | None:
    """A small, deterministic search for an input point where ``test`` holds: every integer and
    size atom set to +k (then -k) for k = 0, 1, 2, 4, ... (clamped to its range), Booleans all true
    or all false; the first k that works is narrowed down by bisection, so the point found is a
    small one (a readable counterexample)."""
    ints = [
        (a.atom, sym.factors[a.atom].lo, sym.factors[a.atom].hi) for a in model.atoms if a.facet != "bool"
    ]
    bools = [a.atom for a in model.atoms if a.facet == "bool"]

    def point(k: int, truth: int) -> dict[int, int]:
        env = {fid: min(max(k, lo), hi) for fid, lo, hi in ints}
        env.update({fid: truth for fid in bools})
        return env

    for truth in (1, 0) if bools else (0,):
        for sign in (1, -1):
            prev = 0
            k = 0
            while True:
                if test(point(sign * k, truth)):
                    lo, hi = prev, k
                    while hi - lo > 1:
                        mid = (lo + hi) // 2
                        if test(point(sign * mid, truth)):
                            hi = mid
                        else:
                            lo = mid
                    return point(sign * hi, truth)
                if (
                    all(min(max(sign * k, lo_), hi_) in (lo_, hi_) and k > 0 for _, lo_, hi_ in ints)
                    or k > 2**64
                ):
                    break
                prev = k
                k = 1 if k == 0 else 2 * k
            if not ints:
                break
    return None


def shrink(
    sym: Sym, model: InputModel, env: Mapping[int, int], test: Callable[[Mapping[int, int]], bool]
) -> dict[int, int]:
    """``env`` with each integer and size atom in turn moved as close to 0 as ``test`` allows
    (bisection, so at most ~64 evaluations per atom): a solver's model can name a map of 2^61
    entries where 10^6 + 1 are enough, and the counterexample should be the size it needs."""
    out = dict(env)
    if not test(out):
        return out
    for a in model.atoms:
        if a.facet == "bool":
            continue
        f = sym.factors[a.atom]
        target = min(max(0, f.lo), f.hi)
        start = out[a.atom]
        if start == target:
            continue
        out[a.atom] = target
        if test(out):
            continue
        good, bad = start, target  # test holds at good, fails at bad; narrow toward bad
        while abs(good - bad) > 1:
            mid = (good + bad) // 2
            out[a.atom] = mid
            if test(out):
                good = mid
            else:
                bad = mid
        out[a.atom] = good
    return out


def _hint(sym: Sym, model: InputModel, upper: Poly, lim: Limit, entry: bool) -> str:
    atoms = sym.atoms(upper)
    params = sorted({a.name for a in model.atoms if a.atom in atoms and a.name in model.unbounded})
    parts = []
    if params and entry:
        parts.append("bound " + ", ".join(f"`{p}`" for p in params) + " in inputBounds")
    elif params:  # inputBounds apply to entrypoints: the callers must keep the arguments small
        parts.append("keep " + ", ".join(f"`{p}`" for p in params) + " small at the call sites")
    parts.append(f"raise {lim.knob}")
    return " or ".join(parts)


def input_quotas_ok(values: Sequence[Value], limits: object) -> bool:
    """Would these inputs pass the meter's input charges (shape limits and budgets)?"""

    def get(name: str) -> int:
        v = getattr(limits, name)
        assert isinstance(v, int)
        return v

    elements = sbytes = fuel = 0
    for value in values:
        shape = shape_of(value)
        fuel += shape.nodes // 64
        if (
            shape.max_list > get("max_list_length")
            or shape.max_map > get("max_map_entries")
            or shape.depth > get("max_collection_depth")
            or shape.max_string > get("max_string_length")
        ):
            return False
        elements += shape.elements
        sbytes += shape.string_bytes
    return (
        elements <= get("max_total_collection_elements")
        and sbytes <= get("max_total_string_bytes")
        and sbytes <= get("max_allocated_bytes")
        and fuel <= get("max_fuel")
    )


def bounds_ok(
    values: Sequence[Value], names: Sequence[str], bounds: Mapping[str, tuple[int, int]] | None
) -> bool:
    """The runtime's ``inputBounds`` check (integers by value; lists, maps and strings by size)."""
    if not bounds:
        return True
    from dotboxd.core.values import ListValue, MapValue, utf16_len

    for name, value in zip(names, values, strict=True):
        bound = bounds.get(name)
        if bound is None:
            continue
        measure: int | None = None
        if isinstance(value, bool):
            measure = None
        elif isinstance(value, int):
            measure = value
        elif isinstance(value, ListValue | MapValue):
            measure = len(value)
        elif isinstance(value, str):
            measure = utf16_len(value)
        if measure is not None and not bound[0] <= measure <= bound[1]:
            return False
    return True


__all__ = [
    "LIMIT_NAMES",
    "Limit",
    "WitnessCheck",
    "bounds_ok",
    "decide",
    "input_quotas_ok",
    "limits_for",
    "search",
    "shrink",
]
