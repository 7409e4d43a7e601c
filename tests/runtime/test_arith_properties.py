"""Property: random I32/I64 expressions evaluate as exact math with C# rules, fail exactly when
an independent oracle says so (first failing node in left-to-right order), and cost exactly one
fuel per node plus the return statement."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from dotboxd.host import Policy, SandboxHost

HOST = SandboxHost()
POLICY = Policy.builder().with_max_wall_time_ms(60_000).build()


@dataclass(frozen=True)
class Leaf:
    text: str
    value: int


@dataclass(frozen=True)
class Neg:
    operand: object


@dataclass(frozen=True)
class Bin:
    op: str
    left: object
    right: object


class Fault(Exception):
    def __init__(self, code: str) -> None:
        self.code = code


SYMBOL = {"add": "+", "sub": "-", "mul": "*", "div": "/", "rem": "%"}


def _leaves(suffix: str) -> st.SearchStrategy[object]:
    small = st.integers(-5, 5)
    big = st.sampled_from([2**31 - 1, -(2**31), 2**16, 46341, -46341, 7])
    return st.one_of(
        st.builds(lambda v: Leaf(f"({v}{suffix})", v), st.one_of(small, big)),
        st.sampled_from([Leaf("a", -1), Leaf("b", -2)]),  # values bound per example below
    )


def _trees(suffix: str) -> st.SearchStrategy[object]:
    return st.recursive(
        _leaves(suffix),
        lambda inner: st.one_of(
            st.builds(Neg, inner),
            st.builds(Bin, st.sampled_from(sorted(SYMBOL)), inner, inner),
        ),
        max_leaves=8,
    )


def _text(node: object) -> str:
    if isinstance(node, Leaf):
        return node.text
    if isinstance(node, Neg):
        return f"-({_text(node.operand)})"
    assert isinstance(node, Bin)
    return f"({_text(node.left)} {SYMBOL[node.op]} {_text(node.right)})"


def _nodes(node: object) -> int:
    if isinstance(node, Leaf):
        return 1
    if isinstance(node, Neg):
        return 1 + _nodes(node.operand)
    assert isinstance(node, Bin)
    return 1 + _nodes(node.left) + _nodes(node.right)


def _oracle(node: object, env: dict[str, int], bits: int) -> int:
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1

    def fit(x: int) -> int:
        if not lo <= x <= hi:
            raise Fault("R-ARITH-OVERFLOW")
        return x

    if isinstance(node, Leaf):
        return env.get(node.text, node.value)
    if isinstance(node, Neg):
        return fit(-_oracle(node.operand, env, bits))
    assert isinstance(node, Bin)
    a = _oracle(node.left, env, bits)
    b = _oracle(node.right, env, bits)
    if node.op == "add":
        return fit(a + b)
    if node.op == "sub":
        return fit(a - b)
    if node.op == "mul":
        return fit(a * b)
    if b == 0:
        raise Fault("R-ARITH-DIVIDE-BY-ZERO")
    if a == lo and b == -1:
        raise Fault("R-ARITH-OVERFLOW")
    q = math.trunc(Fraction(a, b))
    return fit(q) if node.op == "div" else a - b * q


@given(_trees(""), st.integers(-(2**31), 2**31 - 1), st.integers(-(2**31), 2**31 - 1))
def test_i32_expressions_match_the_oracle(tree: object, a: int, b: int) -> None:
    _check(tree, a, b, "I32", 32)


@given(_trees("L"), st.integers(-(2**63), 2**63 - 1), st.integers(-(2**63), 2**63 - 1))
def test_i64_expressions_match_the_oracle(tree: object, a: int, b: int) -> None:
    _check(tree, a, b, "I64", 64)


def _check(tree: object, a: int, b: int, type_name: str, bits: int) -> None:
    src = (
        'module "p" version "1.0.0";\n'
        f"entrypoint fn main(a {type_name}, b {type_name}) -> {type_name} {{ return {_text(tree)}; }}\n"
    )
    result = HOST.execute(HOST.prepare(src, POLICY), "main", [a, b])
    try:
        expected = _oracle(tree, {"a": a, "b": b}, bits)
    except Fault as fault:
        assert result.error is not None, result.value
        assert (result.error.category, result.error.code) == ("InvalidInput", fault.code)
        return
    assert result.ok, result.error
    assert result.value == expected
    assert result.usage.fuel_used == 1 + _nodes(tree)
