"""SMT-LIB2 text for proof obligations, and the one place that asks Z3 about it.

Every obligation is printed as a self-contained SMT-LIB2 script (declarations of the atoms it
mentions with their ranges, one ``define-fun`` per shared sub-expression, the facts and path
condition, the goal, ``check-sat``) and *that text* is what Z3 solves, through
``Solver.from_string``. So the script written by ``dotboxd prove --emit-smt`` is byte for byte the
question the prover asked, and the ``z3`` binary alone replays it to the same answer.

Determinism: each query runs in a fresh solver with a fixed ``random_seed`` and a resource limit
(``rlimit``, Z3's deterministic work counter) instead of a wall-clock timeout, so a verdict never
depends on machine speed or load. Running out of rlimit is the answer ``unknown``.

Isolation: Z3 keeps one process-wide parameter table, and a ``set-option`` line parsed by
``from_string`` writes into it (even in a fresh context). So the prover never lets its scripts'
option lines reach Z3: they are cut off before parsing and applied as *solver* parameters instead,
and every setting that could steer a search (timeouts, resource limits, seeds, arithmetic engine)
is pinned on each solver, which overrides whatever another Z3 user in the process has set
globally. A verdict is thus a function of the module, the policy and the prover version only.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .sym import Cond, Poly, Sym

DEFAULT_RLIMIT = 2_000_000
"""Z3 work units per query (roughly 0.1 s of a hard nonlinear query; trivial ones use ~10^3)."""

MODULE_RLIMIT = 15_000_000
"""Z3 work units for all the obligations of one module together (a few seconds at most)."""

RANDOM_SEED = 0

PINNED_PARAMS: tuple[tuple[str, int | bool], ...] = (
    ("timeout", 4294967295),  # Z3's "no wall-clock limit": only rlimit may stop a query
    ("auto_config", True),
    ("smt.auto_config", True),
    ("smt.arith.solver", 6),
    ("smt.phase_selection", 3),
    ("smt.relevancy", 2),
)
"""Z3's own defaults for the process-wide parameters that steer a search, set on every solver so
that another library's ``z3.set_param`` (or a replayed script) cannot change a verdict."""

SOLVER_MEMORY_MB = 1024
"""Z3's memory cap per query (``max_memory``, MiB of its allocator, all contexts of the process):
a query that would need more stops with ``unknown`` ("max. memory exceeded"), so the verdict it
decides is UNKNOWN, never wrong. ``rlimit`` normally stops a query long before this; the cap is what
bounds the solver's memory when a query is cheap in work units but huge in terms."""

GLOBAL_PINS: tuple[tuple[str, str], ...] = (("sat.random_seed", "0"), ("nlsat.seed", "0"))
"""Seeds Z3 reads only from its process-wide table (a solver refuses them as its own parameters):
set to these values for the duration of each query and restored afterwards, under a lock."""

_GLOBAL_LOCK = threading.Lock()


@contextmanager
def pinned_globals() -> Iterator[None]:
    """Hold :data:`GLOBAL_PINS` for one query, then give the process its own values back."""
    z3 = _z3()
    with _GLOBAL_LOCK:
        saved = [(name, str(z3.get_param(name))) for name, _ in GLOBAL_PINS]
        try:
            for name, value in GLOBAL_PINS:
                z3.set_param(name, value)
            yield
        finally:
            for name, value in saved:
                z3.set_param(name, value)


@dataclass(frozen=True, slots=True)
class SolveResult:
    status: str  # "sat" | "unsat" | "unknown"
    model: Mapping[int, int] = field(default_factory=dict)  # atom id -> value (bools as 0/1)
    reason: str = ""
    used: int = 0  # Z3 work units spent
    memory_mb: float = 0.0  # Z3's allocator in use when the query ended (process-wide, MiB)


def new_context() -> Any:
    """A fresh Z3 context. Z3's search depends on what a context has seen before (term ids), so
    each function's obligations get their own context: its verdicts never depend on the other
    functions proved before it in the same process."""
    return _z3().Context()


def _num(value: int) -> str:
    return str(value) if value >= 0 else f"(- {-value})"


class Printer:
    """Prints polys and conditions of one Sym table, collecting the factors they use."""

    def __init__(self, sym: Sym) -> None:
        self.sym = sym
        self.used: set[int] = set()

    def ref(self, fid: int) -> str:
        f = self.sym.factors[fid]
        self._use(fid)
        if f.kind == "atom":
            return f"a{fid}"
        if f.kind == "batom":
            return f"b{fid}"
        return f"f{fid}"

    def _use(self, fid: int) -> None:
        if fid in self.used:
            return
        self.used.add(fid)
        f = self.sym.factors[fid]
        for a in f.args:
            self.poly(a)
        if f.cond is not None:
            self.cond(f.cond)

    def poly(self, p: Poly) -> str:
        parts: list[str] = []
        for mono, coeff in p.terms:
            factors = [self.ref(fid) for fid in mono]
            if not factors:
                parts.append(_num(coeff))
            elif coeff == 1:
                parts.append(factors[0] if len(factors) == 1 else f"(* {' '.join(factors)})")
            else:
                parts.append(f"(* {_num(coeff)} {' '.join(factors)})")
        if not parts:
            return "0"
        return parts[0] if len(parts) == 1 else f"(+ {' '.join(parts)})"

    def cond(self, c: Cond) -> str:
        kind = c.kind
        if kind == "true":
            return "true"
        if kind == "false":
            return "false"
        if kind in ("ge", "eq", "ne"):
            assert c.poly is not None
            body = self.poly(c.poly)
            if kind == "ge":
                return f"(>= {body} 0)"
            return f"(= {body} 0)" if kind == "eq" else f"(not (= {body} 0))"
        if kind == "bool":
            return self.ref(c.atom)
        if kind == "not":
            return f"(not {self.cond(c.args[0])})"
        return f"({kind} {' '.join(self.cond(a) for a in c.args)})"

    def definition(self, fid: int) -> str:
        f = self.sym.factors[fid]
        a = [self.poly(x) for x in f.args]
        if f.kind == "max":
            body = f"(ite (>= {a[0]} {a[1]}) {a[0]} {a[1]})"
        elif f.kind == "min":
            body = f"(ite (<= {a[0]} {a[1]}) {a[0]} {a[1]})"
        elif f.kind == "fdiv":
            body = f"(div {a[0]} {f.k})"
        else:
            assert f.cond is not None
            body = f"(ite {self.cond(f.cond)} {a[0]} {a[1]})"
        return f"(define-fun f{fid} () Int {body})"


def render(
    sym: Sym,
    goal: Cond,
    premises: Sequence[Cond],
    facts: Mapping[int, Sequence[Cond]],
    header: Iterable[str],
    rlimit: int,
    seed: int = RANDOM_SEED,
) -> str:
    """The obligation "is ``premises`` and ``goal`` satisfiable, with every atom in its range and
    every fact about the atoms it mentions?" as a standalone SMT-LIB2 script."""
    printer = Printer(sym)
    goal_text = printer.cond(goal)
    premise_text = [printer.cond(c) for c in premises]
    fact_text: list[str] = []
    done: set[int] = set()
    while True:
        pending = sorted(fid for fid in printer.used if fid not in done and fid in facts)
        if not pending:
            break
        for fid in pending:
            done.add(fid)
            fact_text.extend(printer.cond(c) for c in facts[fid])
    lines = [f"; {line}" for line in header]
    lines.append(f"(set-option :rlimit {rlimit})")
    lines.append(f"(set-option :smt.random_seed {seed})")
    for fid in sorted(printer.used):
        f = sym.factors[fid]
        if f.kind == "atom":
            lines.append(f"(declare-const a{fid} Int) ; {_comment(f.label)}")
            lines.append(f"(assert (<= {_num(f.lo)} a{fid} {_num(f.hi)}))")
        elif f.kind == "batom":
            lines.append(f"(declare-const b{fid} Bool) ; {_comment(f.label)}")
    for fid in sorted(printer.used):
        if sym.factors[fid].kind not in ("atom", "batom"):
            lines.append(printer.definition(fid))
    lines.extend(f"(assert {t}) ; fact" for t in fact_text)
    lines.extend(f"(assert {t}) ; path" for t in premise_text)
    lines.append(f"(assert {goal_text}) ; goal")
    lines.append("(check-sat)")
    return "\n".join(lines) + "\n"


def _comment(text: str) -> str:
    """A label safe inside a one-line SMT comment."""
    return "".join(ch if ch.isprintable() and ch not in "\r\n" else "?" for ch in text)[:120]


def solve(text: str, rlimit: int, seed: int = RANDOM_SEED, ctx: Any = None) -> SolveResult:
    """Ask Z3 whether the script is satisfiable; a model maps atom ids to values."""
    z3 = _z3()

    solver = pinned_solver(rlimit, seed, ctx)
    try:
        with pinned_globals():
            solver.from_string(script_body(text))
            before = _rlimit_count(solver)
            answer = solver.check()
            used = max(0, _rlimit_count(solver) - before)
    except z3.Z3Exception as error:  # a malformed script would be a prover bug: fail closed
        return SolveResult("unknown", reason=f"z3 error: {error}")
    memory = _memory_mb(solver)
    if answer == z3.unsat:
        return SolveResult("unsat", used=used, memory_mb=memory)
    if answer == z3.sat:
        model: dict[int, int] = {}
        m = solver.model()
        for decl in m.decls():
            name = decl.name()
            value = m[decl]
            if name[:1] in ("a", "b") and name[1:].isdigit():
                if z3.is_int_value(value):
                    model[int(name[1:])] = value.as_long()
                elif z3.is_true(value) or z3.is_false(value):
                    model[int(name[1:])] = 1 if z3.is_true(value) else 0
        return SolveResult("sat", model, used=used, memory_mb=memory)
    return SolveResult("unknown", reason=str(solver.reason_unknown()), used=used, memory_mb=memory)


def _memory_mb(solver: Any) -> float:
    """Z3's ``memory`` statistic after a check: MiB its allocator holds (all contexts of the process)."""
    try:
        return float(solver.statistics().get_key_value("memory"))
    except _z3().Z3Exception:  # a Z3 build without the statistic: nothing to report
        return 0.0


def pinned_solver(rlimit: int, seed: int = RANDOM_SEED, ctx: Any = None) -> Any:
    """A solver whose every search-steering parameter is ours, whatever the global table says."""
    z3 = _z3()
    solver = z3.Solver(ctx=ctx) if ctx is not None else z3.Solver()
    for name, value in PINNED_PARAMS:
        solver.set(name, value)
    solver.set("rlimit", rlimit)
    solver.set("max_memory", SOLVER_MEMORY_MB)
    solver.set("random_seed", seed)
    solver.set("smt.random_seed", seed)
    return solver


def script_body(text: str) -> str:
    """The script without its ``set-option`` lines: parsed, they would write Z3's process-wide
    parameter table; :func:`pinned_solver` applies the same settings to the one solver instead."""
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith("(set-option "))


def _rlimit_count(solver: Any) -> int:
    stats = solver.statistics()
    keys: list[str] = stats.keys()
    return int(stats.get_key_value("rlimit count")) if "rlimit count" in keys else 0


def z3_version() -> str:
    return str(_z3().get_version_string())


def _z3() -> Any:
    """The z3 module, imported on first use (it takes ~60 ms to load)."""
    import z3  # type: ignore[import-untyped]

    return z3
