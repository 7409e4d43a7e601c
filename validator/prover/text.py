"""Readable renderings of symbolic bounds (``3 + 13*n + max(0, count)``) for reports.

Atoms print as their parameter names (``n``, ``|xs|`` for a collection's size, ``len(s)`` for a
text's length); long expressions are cut with an ellipsis, since the exact form is in the SMT
evidence anyway.
"""

from __future__ import annotations

from .sym import Cond, Poly, Sym

MAX_TEXT = 300


class Namer:
    """Names for atoms; unnamed atoms print as their label."""

    def __init__(self, sym: Sym, names: dict[int, str] | None = None) -> None:
        self.sym = sym
        self.names = names or {}

    def atom(self, fid: int) -> str:
        found = self.names.get(fid)
        if found is not None:
            return found
        return self.sym.factors[fid].label or f"a{fid}"

    def poly(self, p: Poly, limit: int = MAX_TEXT) -> str:
        text = self._poly(p, 0)
        return text if len(text) <= limit else text[: limit - 3] + "..."

    def _poly(self, p: Poly, depth: int) -> str:
        if not p.terms:
            return "0"
        parts: list[str] = []
        ordered = [t for t in p.terms if t[0]] + [t for t in p.terms if not t[0]]
        for mono, coeff in ordered:
            if depth > 6:
                parts.append("...")
                break
            factors = [self._factor(f, depth) for f in mono]
            body = "*".join(factors)
            if not factors:
                term = str(abs(coeff))
            elif abs(coeff) == 1:
                term = body
            else:
                term = f"{abs(coeff)}*{body}"
            sign = "-" if coeff < 0 else "+"
            parts.append(f"{sign} {term}")
        text = " ".join(parts)
        return text[2:] if text.startswith("+ ") else "-" + text[2:]

    def _factor(self, fid: int, depth: int) -> str:
        f = self.sym.factors[fid]
        if f.kind == "atom":
            return self.atom(fid)
        args = [self._poly(a, depth + 1) for a in f.args]
        if f.kind in ("max", "min"):
            return f"{f.kind}({args[0]}, {args[1]})"
        if f.kind == "fdiv":
            return f"floor(({args[0]}) / {f.k})"
        assert f.cond is not None
        return f"(if {self.cond(f.cond, depth + 1)} then {args[0]} else {args[1]})"

    def cond(self, c: Cond, depth: int = 0) -> str:
        kind = c.kind
        if kind in ("true", "false"):
            return kind
        if kind in ("ge", "eq", "ne"):
            assert c.poly is not None
            op = {"ge": ">=", "eq": "==", "ne": "!="}[kind]
            return f"{self._poly(c.poly, depth)} {op} 0"
        if kind == "bool":
            return self.atom(c.atom)
        if kind == "not":
            return f"!{self.cond(c.args[0], depth)}"
        joiner = " && " if kind == "and" else " || "
        return "(" + joiner.join(self.cond(a, depth + 1) for a in c.args) + ")"
