"""The symbolic integers the bounds are built from: exact arithmetic, sound ranges, sound elimination.

Random expressions over three atoms are built by the same operations the prover uses; every
property compares the symbolic result with plain integer arithmetic at random atom values inside
the atoms' ranges.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from dotboxd.validator.prover import intervals
from dotboxd.validator.prover.sym import ZERO, Poly, ProverLimit, Sym, const

RANGES = ((-50, 50), (0, 30), (-7, 9))


@dataclass
class World:
    sym: Sym
    atoms: list[Poly]
    ids: list[int]


def world() -> World:
    s = Sym()
    atoms = [s.atom(f"x{i}", lo, hi) for i, (lo, hi) in enumerate(RANGES)]
    ids = [s.atom_id(a) for a in atoms]
    assert all(i is not None for i in ids)
    return World(s, atoms, [i for i in ids if i is not None])


Op = tuple[str, int, int, int]


def build(w: World, ops: list[Op]) -> list[tuple[Poly, object]]:
    """Apply ``ops`` to a growing pool of (poly, concrete evaluator) pairs."""
    s = w.sym
    pool: list[tuple[Poly, object]] = [(a, ("atom", i)) for i, a in enumerate(w.atoms)]
    pool.append((const(3), ("const", 3)))
    for name, i, j, k in ops:
        (p, ep), (q, eq) = pool[i % len(pool)], pool[j % len(pool)]
        try:
            if name == "add":
                r = s.add(p, q)
            elif name == "sub":
                r = s.sub(p, q)
            elif name == "mul":
                r = s.mul(p, q)
            elif name == "max":
                r = s.max(p, q)
            elif name == "min":
                r = s.min(p, q)
            elif name == "fdiv":
                r = s.fdiv(p, abs(k) % 9 + 1)
            elif name == "scale":
                r = s.scale(p, k)
            else:
                r = s.ite(s.lt(p, q), p, q)
        except ProverLimit:
            continue
        pool.append((r, (name, ep, eq, abs(k) % 9 + 1 if name == "fdiv" else k)))
    return pool


def concrete(expr: object, values: list[int]) -> int:
    assert isinstance(expr, tuple)
    kind = expr[0]
    if kind == "atom":
        return values[expr[1]]
    if kind == "const":
        return int(expr[1])
    a, b = concrete(expr[1], values), concrete(expr[2], values)
    if kind == "add":
        return a + b
    if kind == "sub":
        return a - b
    if kind == "mul":
        return a * b
    if kind == "max":
        return max(a, b)
    if kind == "min":
        return min(a, b)
    if kind == "fdiv":
        return a // int(expr[3])
    if kind == "scale":
        return a * int(expr[3])
    return a if a < b else b


OPS = st.lists(
    st.tuples(
        st.sampled_from(["add", "sub", "mul", "max", "min", "fdiv", "scale", "ite"]),
        st.integers(0, 40),
        st.integers(0, 40),
        st.integers(-5, 5),
    ),
    max_size=14,
)
VALUES = st.tuples(*(st.integers(lo, hi) for lo, hi in RANGES)).map(list)


@given(OPS, VALUES)
def test_operations_are_exact(ops: list[Op], values: list[int]) -> None:
    w = world()
    env = dict(zip(w.ids, values, strict=True))
    for poly, expr in build(w, ops):
        assert w.sym.evaluate(poly, env) == concrete(expr, values)


@given(OPS, VALUES)
def test_ranges_contain_every_value(ops: list[Op], values: list[int]) -> None:
    w = world()
    env = dict(zip(w.ids, values, strict=True))
    for poly, _ in build(w, ops):
        lo, hi = w.sym.range(poly)
        assert lo <= w.sym.evaluate(poly, env) <= hi


@given(OPS, VALUES, st.integers(0, 2))
def test_elimination_gives_bounds(ops: list[Op], values: list[int], which: int) -> None:
    """Replacing an atom by its interval ends yields a lower and an upper bound free of it."""
    w = world()
    s = w.sym
    env = dict(zip(w.ids, values, strict=True))
    target = w.ids[which]
    lo_c, hi_c = RANGES[which]
    elim = {target: (const(lo_c), const(hi_c))}
    for poly, _ in build(w, ops):
        up, down = s.bound(poly, elim, True), s.bound(poly, elim, False)
        assert target not in s.atoms(up) and target not in s.atoms(down)
        value = s.evaluate(poly, env)
        assert s.evaluate(down, env) <= value <= s.evaluate(up, env)


@given(OPS, VALUES)
def test_substitution_is_exact(ops: list[Op], values: list[int]) -> None:
    w = world()
    s = w.sym
    env = dict(zip(w.ids, values, strict=True))
    replacement = s.add_const(w.atoms[1], -3)  # x0 := x1 - 3, always inside x0's range
    new_env = dict(env)
    new_env[w.ids[0]] = values[1] - 3
    for poly, _ in build(w, ops):
        substituted = s.substitute(poly, {w.ids[0]: replacement})
        assert w.ids[0] not in s.atoms(substituted)
        # simplifications assumed x0 in its range, so the replacement must stay inside it
        assert s.evaluate(substituted, env) == s.evaluate(poly, new_env)


def test_canonical_form_makes_branch_deltas_exact() -> None:
    w = world()
    s = w.sym
    a = s.add(s.mul(w.atoms[0], w.atoms[1]), const(7))
    x = s.max(w.atoms[2], ZERO)
    assert s.sub(s.add(a, x), a) == x


def test_interval_operators_over_ints_match_the_prover_algebra() -> None:
    """The generic interval code runs unchanged over ints and over polys."""
    w = world()
    s = w.sym
    iv = (w.atoms[0], w.atoms[1])
    lo, hi = intervals.mul(s, iv, (const(-2), const(3)))
    env = dict(zip(w.ids, [-4, 6, 0], strict=True))
    assert (s.evaluate(lo, env), s.evaluate(hi, env)) == intervals.mul(intervals.INT, (-4, 6), (-2, 3))


def test_size_caps_raise_prover_limit() -> None:
    s = Sym()
    atoms = [s.atom(f"y{i}", 0, 10) for i in range(12)]
    p = const(1)
    raised = False
    try:
        for a in atoms:
            p = s.mul(p, s.add(a, const(1)))
    except ProverLimit:
        raised = True
    assert raised
