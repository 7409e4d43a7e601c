"""Symbolic integers for bounds: polynomials over atoms and a few opaque factors, and conditions.

Why a home-grown representation instead of Z3 terms: the prover builds thousands of small bound
expressions while it walks a function, and needs three things Z3 terms do not give cheaply - a
*canonical* form (so ``(A + X) - A`` is exactly ``X`` and joins of branch costs stay small), a
*concrete range* for every expression (so most ``max``/``min`` simplify away and most safety
questions are settled without a solver call), and a *bounded size* (so an adversarial module cannot
make the prover build an unbounded term). Z3 only sees the final obligations, printed by
``smt.py``.

A :class:`Poly` is a sum of ``coefficient * monomial``; a monomial is a sorted tuple of factor ids.
A factor is an input *atom* (a parameter value, a collection size, a loop-head value) with a finite
concrete range, or one of ``max``, ``min``, ``fdiv`` (floor division by a positive constant) and
``ite`` over polys. Factors are interned in a :class:`Sym` table (one per analysis), so equal
factors share an id and polys compare and hash as small integer tuples. Every operation is exact
integer arithmetic; the simplifications only ever pick the argument that ranges *prove* to be the
result. Sizes are capped (terms, factors, nesting); exceeding a cap raises :class:`ProverLimit`,
which turns the function's verdicts into UNKNOWN instead of letting the prover run away.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from . import intervals

Monomial = tuple[int, ...]
Range = tuple[int, int]


class ProverLimit(Exception):
    """An analysis budget was exhausted (expression size, factor count, analysis steps)."""


class Poly:
    """An immutable polynomial; ``terms`` is sorted by monomial, without zero coefficients."""

    __slots__ = ("_hash", "terms")

    def __init__(self, terms: tuple[tuple[Monomial, int], ...]) -> None:
        self.terms = terms
        self._hash = hash(terms)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Poly) and self._hash == other._hash and self.terms == other.terms

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"Poly({self.terms!r})"

    @property
    def is_const(self) -> bool:
        return not self.terms or (len(self.terms) == 1 and self.terms[0][0] == ())

    @property
    def const(self) -> int:
        """The constant term."""
        if self.terms and self.terms[0][0] == ():
            return self.terms[0][1]
        return 0

    def size(self) -> int:
        return len(self.terms)


@dataclass(frozen=True, slots=True)
class Cond:
    """A condition over polys. ``ge``: poly >= 0; ``eq``: poly == 0; ``ne``: poly != 0; ``and``/``or``
    over ``args``; ``bool``: a boolean input atom named ``name`` (id ``atom``); ``not``: its
    negation (only ever wraps a ``bool``); ``true``/``false``."""

    kind: str
    poly: Poly | None = None
    args: tuple[Cond, ...] = ()
    atom: int = -1
    _hash: int = field(default=0, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.kind, self.poly, self.args, self.atom)))

    def __hash__(self) -> int:
        return self._hash


TRUE = Cond("true")
FALSE = Cond("false")


@dataclass(frozen=True, slots=True)
class Factor:
    """One interned factor. ``atoms`` are the ids of every atom (int or bool) it depends on."""

    id: int
    kind: str  # atom | batom | max | min | fdiv | ite
    label: str = ""
    args: tuple[Poly, ...] = ()
    cond: Cond | None = None
    k: int = 1
    lo: int = 0
    hi: int = 0
    depth: int = 0
    atoms: frozenset[int] = frozenset()


ZERO = Poly(())
ONE = Poly((((), 1),))


def const(value: int) -> Poly:
    return ZERO if value == 0 else Poly((((), value),))


@dataclass(frozen=True, slots=True)
class Caps:
    """Size caps of one analysis (exceeding any raises ProverLimit)."""

    max_factors: int = 40_000
    max_terms: int = 96
    max_degree: int = 8
    max_depth: int = 40


class Sym:
    """The factor table and every operation on polys and conditions of one analysis."""

    def __init__(self, caps: Caps | None = None) -> None:
        self.caps = caps or Caps()
        self.factors: list[Factor] = []
        self._intern: dict[tuple[object, ...], int] = {}
        self._ranges: dict[Poly, Range] = {}
        self._poly_atoms: dict[Poly, frozenset[int]] = {}
        self._cond_atoms: dict[Cond, frozenset[int]] = {}
        self._degrees: dict[int, int] = {}

    # --- factors ---------------------------------------------------------------------------

    def _factor(self, key: tuple[object, ...], build: Callable[[int], Factor]) -> int:
        found = self._intern.get(key)
        if found is not None:
            return found
        if len(self.factors) >= self.caps.max_factors:
            raise ProverLimit("too many symbolic factors")
        factor = build(len(self.factors))
        if factor.depth > self.caps.max_depth:
            raise ProverLimit("symbolic expression nests too deeply")
        self.factors.append(factor)
        self._intern[key] = factor.id
        return factor.id

    def atom(self, label: str, lo: int, hi: int) -> Poly:
        """A fresh integer atom with the concrete range [lo, hi]."""
        if lo > hi:
            raise ValueError("empty atom range")
        key = ("atom", len(self.factors))
        fid = self._factor(key, lambda i: Factor(i, "atom", label, lo=lo, hi=hi, atoms=frozenset({i})))
        return Poly((((fid,), 1),))

    def batom(self, label: str) -> Cond:
        """A fresh boolean atom."""
        key = ("batom", len(self.factors))
        fid = self._factor(key, lambda i: Factor(i, "batom", label, lo=0, hi=1, atoms=frozenset({i})))
        return Cond("bool", atom=fid)

    def atom_id(self, p: Poly) -> int | None:
        """The factor id if ``p`` is exactly one integer atom."""
        if len(p.terms) == 1:
            mono, coeff = p.terms[0]
            if coeff == 1 and len(mono) == 1 and self.factors[mono[0]].kind == "atom":
                return mono[0]
        return None

    def _composite(self, kind: str, args: tuple[Poly, ...], cond: Cond | None = None, k: int = 1) -> Poly:
        lo, hi = self._composite_range(kind, args, cond, k)
        depth = 1 + max((self._poly_depth(a) for a in args), default=0)
        atoms: frozenset[int] = frozenset().union(*(self.atoms(a) for a in args))
        if cond is not None:
            atoms = atoms | self.cond_atoms(cond)
        key = (kind, args, cond, k)
        fid = self._factor(key, lambda i: Factor(i, kind, "", args, cond, k, lo, hi, depth, atoms))
        return Poly((((fid,), 1),))

    def _poly_depth(self, p: Poly) -> int:
        return max((self.factors[f].depth for mono, _ in p.terms for f in mono), default=0)

    def _composite_range(self, kind: str, args: tuple[Poly, ...], cond: Cond | None, k: int) -> Range:
        ranges = [self.range(a) for a in args]
        if kind == "max":
            return max(r[0] for r in ranges), max(r[1] for r in ranges)
        if kind == "min":
            return min(r[0] for r in ranges), min(r[1] for r in ranges)
        if kind == "fdiv":
            return ranges[0][0] // k, ranges[0][1] // k
        # ite: the hull of both branches
        return min(r[0] for r in ranges), max(r[1] for r in ranges)

    # --- ranges and atoms ------------------------------------------------------------------

    def range(self, p: Poly) -> Range:
        """A concrete interval containing every value of ``p`` over the atoms' ranges."""
        cached = self._ranges.get(p)
        if cached is not None:
            return cached
        total: Range = (0, 0)
        for mono, coeff in p.terms:
            r: Range = (1, 1)
            for fid in mono:
                f = self.factors[fid]
                r = intervals.mul(intervals.INT, r, (f.lo, f.hi))
            total = intervals.add(intervals.INT, total, intervals.scale(intervals.INT, r, coeff))
        self._ranges[p] = total
        return total

    def atoms(self, p: Poly) -> frozenset[int]:
        """Ids of the atoms ``p`` depends on (through factors too)."""
        cached = self._poly_atoms.get(p)
        if cached is None:
            cached = frozenset().union(*(self.factors[f].atoms for mono, _ in p.terms for f in mono))
            self._poly_atoms[p] = cached
        return cached

    def degree(self, p: Poly) -> int:
        """The polynomial degree of ``p`` (a ``max``/``min``/``ite``/``fdiv`` factor counts as the
        degree of its arguments): how nonlinear an obligation about it is."""
        return max((sum(self._factor_degree(f) for f in mono) for mono, _ in p.terms), default=0)

    def _factor_degree(self, fid: int) -> int:
        cached = self._degrees.get(fid)
        if cached is None:
            f = self.factors[fid]
            cached = 1 if f.kind in ("atom", "batom") else max((self.degree(a) for a in f.args), default=0)
            if f.cond is not None:
                cached = max(cached, self.cond_degree(f.cond))
            self._degrees[fid] = cached
        return cached

    def cond_degree(self, c: Cond) -> int:
        if c.poly is not None:
            return self.degree(c.poly)
        return max((self.cond_degree(a) for a in c.args), default=0)

    def cond_atoms(self, c: Cond) -> frozenset[int]:
        cached = self._cond_atoms.get(c)
        if cached is None:
            if c.kind in ("ge", "eq", "ne"):
                assert c.poly is not None
                cached = self.atoms(c.poly)
            elif c.kind == "bool":
                cached = frozenset({c.atom})
            else:
                cached = frozenset().union(*(self.cond_atoms(a) for a in c.args))
            self._cond_atoms[c] = cached
        return cached

    # --- ring operations -------------------------------------------------------------------

    def const(self, value: int) -> Poly:
        return const(value)

    def _make(self, acc: Mapping[Monomial, int]) -> Poly:
        terms = tuple(sorted((m, c) for m, c in acc.items() if c != 0))
        if len(terms) > self.caps.max_terms:
            raise ProverLimit("a symbolic bound has too many terms")
        return Poly(terms)

    def add(self, p: Poly, q: Poly) -> Poly:
        if not q.terms:
            return p
        if not p.terms:
            return q
        acc = dict(p.terms)
        for m, c in q.terms:
            acc[m] = acc.get(m, 0) + c
        return self._make(acc)

    def sum(self, polys: Iterable[Poly]) -> Poly:
        acc: dict[Monomial, int] = {}
        for p in polys:
            for m, c in p.terms:
                acc[m] = acc.get(m, 0) + c
        return self._make(acc)

    def scale(self, p: Poly, k: int) -> Poly:
        if k == 0 or not p.terms:
            return ZERO
        if k == 1:
            return p
        return Poly(tuple((m, c * k) for m, c in p.terms))

    def neg(self, p: Poly) -> Poly:
        return self.scale(p, -1)

    def sub(self, p: Poly, q: Poly) -> Poly:
        return self.add(p, self.neg(q))

    def add_const(self, p: Poly, k: int) -> Poly:
        return self.add(p, const(k))

    def mul(self, p: Poly, q: Poly) -> Poly:
        if not p.terms or not q.terms:
            return ZERO
        if p.is_const:
            return self.scale(q, p.const)
        if q.is_const:
            return self.scale(p, q.const)
        if len(p.terms) * len(q.terms) > 16 * self.caps.max_terms:
            raise ProverLimit("a symbolic product is too large")
        acc: dict[Monomial, int] = {}
        for m1, c1 in p.terms:
            for m2, c2 in q.terms:
                m = tuple(sorted(m1 + m2))
                if len(m) > self.caps.max_degree:
                    raise ProverLimit("a symbolic bound has too high a degree")
                acc[m] = acc.get(m, 0) + c1 * c2
        return self._make(acc)

    # --- lattice operations ----------------------------------------------------------------

    def max(self, p: Poly, q: Poly) -> Poly:
        if p == q:
            return p
        lo, hi = self.range(self.sub(p, q))
        if lo >= 0:
            return p
        if hi <= 0:
            return q
        a, b = (p, q) if p.terms <= q.terms else (q, p)
        return self._composite("max", (a, b))

    def min(self, p: Poly, q: Poly) -> Poly:
        if p == q:
            return p
        lo, hi = self.range(self.sub(p, q))
        if hi <= 0:
            return p
        if lo >= 0:
            return q
        a, b = (p, q) if p.terms <= q.terms else (q, p)
        return self._composite("min", (a, b))

    def clamp_nonneg(self, p: Poly) -> Poly:
        return self.max(p, ZERO)

    def fdiv(self, p: Poly, k: int) -> Poly:
        """``floor(p / k)`` for a constant ``k > 0``."""
        if k <= 0:
            raise ValueError("fdiv needs a positive divisor")
        if k == 1:
            return p
        if all(c % k == 0 for _, c in p.terms):
            return Poly(tuple((m, c // k) for m, c in p.terms))
        lo, hi = self.range(p)
        if lo // k == hi // k:
            return const(lo // k)
        return self._composite("fdiv", (p,), k=k)

    def ite(self, c: Cond, p: Poly, q: Poly) -> Poly:
        if p == q:
            return p
        truth = self.truth(c)
        if truth is True:
            return p
        if truth is False:
            return q
        return self._composite("ite", (p, q), cond=c)

    # --- conditions ------------------------------------------------------------------------

    def ge(self, p: Poly) -> Cond:
        """``p >= 0``."""
        lo, hi = self.range(p)
        if lo >= 0:
            return TRUE
        if hi < 0:
            return FALSE
        return Cond("ge", poly=p)

    def eq(self, p: Poly) -> Cond:
        """``p == 0``."""
        lo, hi = self.range(p)
        if lo == hi == 0:
            return TRUE
        if lo > 0 or hi < 0:
            return FALSE
        return Cond("eq", poly=p)

    def ne(self, p: Poly) -> Cond:
        return self.not_(self.eq(p))

    def lt(self, a: Poly, b: Poly) -> Cond:
        return self.ge(self.add_const(self.sub(b, a), -1))

    def le(self, a: Poly, b: Poly) -> Cond:
        return self.ge(self.sub(b, a))

    def not_(self, c: Cond) -> Cond:
        kind = c.kind
        if kind == "true":
            return FALSE
        if kind == "false":
            return TRUE
        if kind == "ge":
            assert c.poly is not None
            return self.ge(self.add_const(self.neg(c.poly), -1))
        if kind == "eq":
            return Cond("ne", poly=c.poly)
        if kind == "ne":
            return Cond("eq", poly=c.poly)
        if kind == "not":
            return c.args[0]
        if kind == "bool":
            return Cond("not", args=(c,))
        inner = tuple(self.not_(a) for a in c.args)
        return self.or_(*inner) if kind == "and" else self.and_(*inner)

    def and_(self, *conds: Cond) -> Cond:
        return self._junction("and", conds)

    def or_(self, *conds: Cond) -> Cond:
        return self._junction("or", conds)

    def _junction(self, kind: str, conds: Iterable[Cond]) -> Cond:
        unit, zero = (TRUE, FALSE) if kind == "and" else (FALSE, TRUE)
        out: list[Cond] = []
        for c in conds:
            parts = c.args if c.kind == kind else (c,)
            for part in parts:
                if part == zero:
                    return zero
                if part != unit and part not in out:
                    out.append(part)
        if not out:
            return unit
        if len(out) == 1:
            return out[0]
        if len(out) > self.caps.max_terms:
            raise ProverLimit("a path condition is too large")
        return Cond(kind, args=tuple(out))

    def truth(self, c: Cond) -> bool | None:
        """True/False when the concrete ranges decide ``c``, else None."""
        if c.kind == "true":
            return True
        if c.kind == "false":
            return False
        return None

    # --- evaluation ------------------------------------------------------------------------

    def evaluate(self, p: Poly, env: Mapping[int, int], memo: dict[int, int] | None = None) -> int:
        """The value of ``p`` when each atom id has the value in ``env`` (bool atoms 0/1)."""
        memo = {} if memo is None else memo
        total = 0
        for mono, coeff in p.terms:
            v = coeff
            for fid in mono:
                v *= self._factor_value(fid, env, memo)
            total += v
        return total

    def _factor_value(self, fid: int, env: Mapping[int, int], memo: dict[int, int]) -> int:
        if fid in memo:
            return memo[fid]
        f = self.factors[fid]
        if f.kind == "atom":
            value = env[fid]
        elif f.kind == "max":
            value = max(self.evaluate(a, env, memo) for a in f.args)
        elif f.kind == "min":
            value = min(self.evaluate(a, env, memo) for a in f.args)
        elif f.kind == "fdiv":
            value = self.evaluate(f.args[0], env, memo) // f.k
        elif f.kind == "ite":
            assert f.cond is not None
            chosen = f.args[0] if self.holds(f.cond, env, memo) else f.args[1]
            value = self.evaluate(chosen, env, memo)
        else:
            raise ValueError(f"cannot evaluate a {f.kind} factor as an integer")
        memo[fid] = value
        return value

    def holds(self, c: Cond, env: Mapping[int, int], memo: dict[int, int] | None = None) -> bool:
        memo = {} if memo is None else memo
        kind = c.kind
        if kind == "true":
            return True
        if kind == "false":
            return False
        if kind in ("ge", "eq", "ne"):
            assert c.poly is not None
            v = self.evaluate(c.poly, env, memo)
            return v >= 0 if kind == "ge" else (v == 0) if kind == "eq" else (v != 0)
        if kind == "bool":
            return bool(env[c.atom])
        if kind == "not":
            return not self.holds(c.args[0], env, memo)
        if kind == "and":
            return all(self.holds(a, env, memo) for a in c.args)
        return any(self.holds(a, env, memo) for a in c.args)

    # --- substitution and elimination ------------------------------------------------------

    def substitute(self, p: Poly, mapping: Mapping[int, Poly]) -> Poly:
        """``p`` with each atom id in ``mapping`` replaced by its poly (exact)."""
        if not (self.atoms(p) & mapping.keys()):
            return p
        memo: dict[int, Poly] = {}
        parts: list[Poly] = []
        for mono, coeff in p.terms:
            term = const(coeff)
            for fid in mono:
                term = self.mul(term, self._subst_factor(fid, mapping, memo))
            parts.append(term)
        return self.sum(parts)

    def _subst_factor(self, fid: int, mapping: Mapping[int, Poly], memo: dict[int, Poly]) -> Poly:
        if fid in memo:
            return memo[fid]
        f = self.factors[fid]
        result: Poly
        if not (f.atoms & mapping.keys()):
            result = Poly((((fid,), 1),))
        elif f.kind == "atom":
            result = mapping[fid]
        else:
            args = tuple(self.substitute(a, mapping) for a in f.args)
            if f.kind == "max":
                result = self.max(args[0], args[1])
            elif f.kind == "min":
                result = self.min(args[0], args[1])
            elif f.kind == "fdiv":
                result = self.fdiv(args[0], f.k)
            else:
                assert f.cond is not None
                result = self.ite(self.subst_cond(f.cond, mapping), args[0], args[1])
        memo[fid] = result
        return result

    def subst_cond(self, c: Cond, mapping: Mapping[int, Poly]) -> Cond:
        if not (self.cond_atoms(c) & mapping.keys()):
            return c
        kind = c.kind
        if kind in ("ge", "eq", "ne"):
            assert c.poly is not None
            p = self.substitute(c.poly, mapping)
            return self.ge(p) if kind == "ge" else self.eq(p) if kind == "eq" else self.ne(p)
        if kind == "and":
            return self.and_(*(self.subst_cond(a, mapping) for a in c.args))
        if kind == "or":
            return self.or_(*(self.subst_cond(a, mapping) for a in c.args))
        return c  # bool atoms are never substituted

    def bound(self, p: Poly, elim: Mapping[int, tuple[Poly, Poly]], upper: bool) -> Poly:
        """An upper (or lower) bound of ``p`` free of the atoms in ``elim``, valid whenever each
        eliminated atom lies in its ``(lo, hi)`` interval. Monotone monomials substitute the
        matching end; anything else falls back to the monomial's concrete range."""
        if not (self.atoms(p) & elim.keys()):
            return p
        exact = {a: lo for a, (lo, hi) in elim.items() if lo == hi}
        if exact:  # an atom with a single value is replaced exactly, whatever the monotonicity
            p = self.substitute(p, exact)
            elim = {a: r for a, r in elim.items() if a not in exact}
            if not (self.atoms(p) & elim.keys()):
                return p
        parts: list[Poly] = []
        for mono, coeff in p.terms:
            if not mono or not any(self.factors[f].atoms & elim.keys() for f in mono):
                parts.append(Poly(((mono, coeff),)))
                continue
            want_up = upper if coeff > 0 else not upper
            if len(mono) == 1:
                parts.append(self.scale(self._bound_factor(mono[0], elim, want_up), coeff))
            elif all(self.factors[f].lo >= 0 for f in mono):
                prod = ONE
                for f in mono:
                    b = self._bound_factor(f, elim, want_up)
                    prod = self.mul(prod, b if want_up else self.max(b, ZERO))
                parts.append(self.scale(prod, coeff))
            else:
                lo, hi = self.range(Poly(((mono, 1),)))
                parts.append(const(coeff * (hi if want_up else lo)))
        return self.sum(parts)

    def _bound_factor(self, fid: int, elim: Mapping[int, tuple[Poly, Poly]], up: bool) -> Poly:
        f = self.factors[fid]
        if not (f.atoms & elim.keys()):
            return Poly((((fid,), 1),))
        if f.kind == "atom":
            lo, hi = elim[fid]
            return hi if up else lo
        if f.kind == "batom":
            return Poly((((fid,), 1),))
        args = tuple(self.bound(a, elim, up) for a in f.args)
        if f.kind == "max":
            return self.max(args[0], args[1])
        if f.kind == "min":
            return self.min(args[0], args[1])
        if f.kind == "fdiv":
            return self.fdiv(args[0], f.k)
        assert f.cond is not None
        if not (self.cond_atoms(f.cond) & elim.keys()):
            return self.ite(f.cond, args[0], args[1])
        return self.max(args[0], args[1]) if up else self.min(args[0], args[1])

    def bound_cond_free(self, c: Cond, elim: Mapping[int, tuple[Poly, Poly]]) -> Cond | None:
        """``c`` if it does not mention eliminated atoms, else None (unknown)."""
        return None if self.cond_atoms(c) & elim.keys() else c
