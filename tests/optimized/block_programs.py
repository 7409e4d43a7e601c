"""Kernels shaped for iteration blocks (issue 16, spec/optimized.md 4.2.8): a ``for`` whose body runs
one or two bulk ``while`` loops a few iterations each (a Collatz walk and its relatives).

Why their own generator: ``chunk_programs`` kernels call built-ins or functions in most outer loops,
which keeps them out of blocks (``blocks.block_units``). These vary what a block must keep exact:
counters near their limit (an inner chunk cut by its room, then the exact path's overflow fault),
faults in the outer body and in the inner chunk (the refund ``lr + bk``), breaks out of the inner
and the outer loop, a ``continue`` of the outer loop, two pool loops in one body, a third loop
around the block, and input sizes that cross a pool (2,048 iterations) or end inside one.
"""

from __future__ import annotations

from .chunk_programs import Chooser, Kernel

_STEP = (
    "if x % 2 == 0 { x = x / 2; } else { x = 3 * x + 1; }",
    "if x % 3 == 0 { x = x / 3; } else { x = x + 1; }",
    "x = x / 2;",
    "if x % 2 == 0 { x = x / 2; } else { x = x - 1; }",
)
"""Inner steps that end at 1 for every positive start (the loop condition is ``x > 1``)."""


def _inner(c: Chooser, counter: str) -> str:
    step = c.choice(_STEP)
    before = c.choice(("", "", "if x == d { break; }", "q = q + 7 / (x - d);"))
    after = c.choice(("", "", "", "if x % 5 == 4 { continue; }"))  # after the step: the walk goes on
    amount = c.choice(("1", "1", "2", "3"))
    sign = c.choice(("+", "+", "-"))
    return f"while x > 1 {{ {before} {step} {after} {counter} = {counter} {sign} {amount}; }}"


def _outer_extra(c: Chooser) -> str:
    return c.choice(
        (
            "",
            "",
            "q = q + 100 / (s - d);",
            "if s == d { break; }",
            "if s % 4 == 1 { continue; }",
            "q = q * 3 % 1009;",
        )
    )


def build_block_kernel(c: Chooser) -> Kernel:
    """A random block-shaped kernel and its input vectors ``(n, d, start, m)``: ``n`` the outer
    loop's length, ``d`` where faults and breaks fall, ``start`` the counter's first value (near
    a limit to overflow inside a block), ``m`` the length of the loop around it (when there is one)."""
    blocks = ["block"]
    walks = [_inner(c, "total")]
    if c.chance(30):
        walks.append("x = s + 3; " + _inner(c, c.choice(("total", "q"))))
        blocks.append("two pool loops")
    body = f"x = s + r; {_outer_extra(c)} {walks[0]} {' '.join(walks[1:])} {_outer_extra(c)}"
    loop = f"for s in 1 .. n {{ {body} }}"
    if c.chance(30):
        loop = f"for r0 in 0 .. m {{ r = r0; {loop} }}"
        blocks.append("three deep")
        head = ""
    else:
        head = "r = 0;"
    text = f"""module "blocks" version "1.0.0";
entrypoint fn main(n I32, d I32, start I32, m I32) -> I32 {{
    total = start;
    q = 1;
    {head}
    {loop}
    return total + q % 7;
}}"""
    top = 2147483647
    vectors = [
        [c.choice((0, 1, 2, 9, 30)), c.choice((0, 3, 5, 17, 40)), 0, c.choice((0, 1, 3))],
        [c.choice((60, 130)), c.choice((2, 9, 64)), c.choice((0, top - 200, top - 3000, -top + 2000)), 2],
    ]
    return Kernel(text, vectors, blocks)


__all__ = ["build_block_kernel"]
