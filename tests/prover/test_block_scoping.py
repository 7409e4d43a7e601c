"""The prover under block scoping: a name bound with one type in an ended block (an ``if`` branch or
a loop body) and bound again with another type in a later loop. The value the ended block left
behind is never read, and the prover must neither crash on it nor lose the bound; every verdict is
checked against runs of the reference interpreter (``harness.check_program``)."""

from __future__ import annotations

import pytest

from dotboxd.grammar.text import parse_text

from .harness import check_program, prepare

# type -> (a first value built from ``k``, an update of ``t`` of the same type)
VALUES = {
    "I32": ("k", "t + 1"),
    "I64": ("numeric.toI64(k)", "t + 1L"),
    "F64": ("numeric.toF64(k)", "t + 1.0"),
    "Bool": ("k > 2", "!t"),
    "String": ('"ab"', 'string.concatBudgeted(t, "c")'),
    "List": ("list.of(k)", "list.add(t, k)"),
    "Map": ("map.empty[Map<I32, I32>]()", "map.set(t, k, k)"),
}
KINDS = list(VALUES)
# each kind left behind, then each of the next two kinds bound in the loop
PAIRS = [(KINDS[i], KINDS[(i + d) % len(KINDS)]) for i in range(len(KINDS)) for d in (1, 2)]


def _kernel(left: str, later: str, shape: str) -> str:
    first = VALUES[left][0].replace("k", "n")
    value, update = VALUES[later]
    ended = f"if n > 3 {{ t = {first}; }}" if shape == "if" else f"for q in 0 .. 2 {{ t = {first}; }}"
    return (
        'module "k" version "1.0.0";\n'
        "entrypoint fn main(n I32) -> I32 {\n"
        f"k = 0;\n{ended}\nwhile k < n {{ t = {value}; t = {update}; k = k + 1; }}\nreturn k;\n}}\n"
    )


@pytest.mark.parametrize("shape", ["if", "loop"])
@pytest.mark.parametrize(("left", "later"), PAIRS)
def test_a_value_left_by_an_ended_block_does_not_confuse_the_prover(
    left: str, later: str, shape: str
) -> None:
    prepared = prepare(
        parse_text(_kernel(left, later, shape)), {"inputBounds": {"main": {"n": [0, 50]}}}, [], "main"
    )
    assert prepared is not None  # sibling blocks may bind one name with different types
    verdicts = {b.resource: b.verdict.value for b in prepared.report.function("main").budgets}
    assert verdicts["fuel"] == "PROVED" and verdicts["loopIterations"] == "PROVED"
    assert check_program(prepared, [[0], [5], [50]]).violations == []
