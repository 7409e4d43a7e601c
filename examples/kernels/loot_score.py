"""Score a loot drop from the player's level and the item's rarity (the twin of loot-score.dbk).

Integer arithmetic is the IR's, not Python's: I32 results that leave [-2**31, 2**31 - 1] fault
with R-ARITH-OVERFLOW instead of growing, and `/` or `//` truncate toward zero.
"""

from dotboxd.lang import I32, entrypoint, module

module("loot-score", version="1.0.0")


@entrypoint
def main(level: I32, rarity: I32) -> I32:
    base = level * 10
    bonus = rarity * 25
    return base + bonus
