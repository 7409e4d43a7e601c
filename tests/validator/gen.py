"""A small well-typed, well-scoped module generator for the validator's Hypothesis properties.

It builds ASTs directly from a typing context (not from the grammar), so almost every draw passes
validation: private functions ``f0..fn`` may call only earlier ones (no recursion), every local gets
a fresh name and one type, loops end with ``break`` or run a ``forRange``, every function returns at
its end, and host bindings from ``CATALOG`` are called with the right types. Some drawn statements are
dead (after the final return) and some functions are unreachable, so capability derivation has
something to get wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

from dotboxd.core import ast
from dotboxd.core.bindings import BindingRegistry, load_binding_manifest
from dotboxd.validator.policy import Policy

from .case_table import CLOCK, KILL, LATER, LOG, PEEK

CATALOG = BindingRegistry(load_binding_manifest([KILL, PEEK, CLOCK, LOG, LATER])).build()
POLICY = (
    Policy.builder()
    .grant("game.world.monster.write.kill")
    .grant("game.world.read")
    .grant_time_now()
    .grant_logging()
    .allow_runtime_async()
    .tolerate_unused_grants()
    .build()
)
SCALARS = ("I32", "I64", "Bool", "String")
# binding id -> (parameter types, return type)
BINDING_SIGS: dict[str, tuple[tuple[str, ...], str]] = {
    "game.world.kill": (("I32",), "Bool"),
    "game.world.peek": (("I32",), "I32"),
    "test.clock.now": ((), "I64"),
    "test.async.echo": (("I32",), "I32"),
}


@dataclass
class Ctx:
    """Typing context of the function being generated."""

    env: dict[str, str]
    callable_fns: list[tuple[str, tuple[str, ...], str]]
    counter: list[int] = field(default_factory=lambda: [0])
    loop_vars: frozenset[str] = frozenset()

    def fresh(self, prefix: str) -> str:
        self.counter[0] += 1
        return f"{prefix}{self.counter[0]}"

    def child(self) -> Ctx:
        return Ctx(dict(self.env), self.callable_fns, self.counter, self.loop_vars)


def lit(t: str, draw: st.DrawFn) -> ast.Literal:
    if t == "I32":
        return ast.Literal(ast.LiteralKind.I32, draw(st.integers(-100, 100)))
    if t == "I64":
        return ast.Literal(ast.LiteralKind.I64, draw(st.integers(-(10**12), 10**12)))
    if t == "Bool":
        return ast.Literal(ast.LiteralKind.BOOL, draw(st.booleans()))
    return ast.Literal(ast.LiteralKind.STRING, draw(st.sampled_from(["", "a", "quest", "x y"])))


def expr(draw: st.DrawFn, t: str, ctx: Ctx, depth: int) -> ast.Expr:
    vars_of_t = [n for n, vt in ctx.env.items() if vt == t]
    choices = ["lit"] + (["var"] if vars_of_t else [])
    if depth > 0:
        choices += {
            "I32": ["arith", "abs", "len", "fn", "peek", "echo"],
            "I64": ["arith", "widen", "clock", "fn"],
            "Bool": ["cmp", "eq", "logic", "not", "fn", "kill"],
            "String": ["concat", "tostr"],
        }[t]
    kind = draw(st.sampled_from(choices))
    d = depth - 1
    if kind == "lit":
        return lit(t, draw)
    if kind == "var":
        return ast.Var(draw(st.sampled_from(vars_of_t)))
    if kind == "arith":
        op = draw(st.sampled_from([ast.BinaryOp.ADD, ast.BinaryOp.SUB, ast.BinaryOp.MUL]))
        return ast.Binary(op, expr(draw, t, ctx, d), expr(draw, t, ctx, d))
    if kind == "abs":
        return ast.Call("math.abs", (expr(draw, "I32", ctx, d),))
    if kind == "len":
        return ast.Call("string.length", (expr(draw, "String", ctx, d),))
    if kind == "widen":
        return ast.Call("numeric.toI64", (expr(draw, "I32", ctx, d),))
    if kind == "cmp":
        op = draw(st.sampled_from([ast.BinaryOp.LT, ast.BinaryOp.GTE]))
        nt = draw(st.sampled_from(["I32", "I64"]))
        return ast.Binary(op, expr(draw, nt, ctx, d), expr(draw, nt, ctx, d))
    if kind == "eq":
        et = draw(st.sampled_from(SCALARS))
        return ast.Binary(ast.BinaryOp.EQ, expr(draw, et, ctx, d), expr(draw, et, ctx, d))
    if kind == "logic":
        op = draw(st.sampled_from([ast.BinaryOp.AND, ast.BinaryOp.OR]))
        return ast.Binary(op, expr(draw, "Bool", ctx, d), expr(draw, "Bool", ctx, d))
    if kind == "not":
        return ast.Unary(ast.UnaryOp.NOT, expr(draw, "Bool", ctx, d))
    if kind == "concat":
        return ast.Call("string.concatBudgeted", (expr(draw, "String", ctx, d), expr(draw, "String", ctx, d)))
    if kind == "tostr":
        return ast.Call("int32.toStringInvariant", (expr(draw, "I32", ctx, d),))
    if kind == "fn":
        options = [f for f in ctx.callable_fns if f[2] == t]
        if not options:
            return lit(t, draw)
        name, params, _ = draw(st.sampled_from(options))
        return ast.Call(name, tuple(expr(draw, p, ctx, d) for p in params))
    binding = {
        "peek": "game.world.peek",
        "echo": "test.async.echo",
        "clock": "test.clock.now",
        "kill": "game.world.kill",
    }[kind]
    params, _ = BINDING_SIGS[binding]
    return ast.Call(binding, tuple(expr(draw, p, ctx, d) for p in params))


def block(draw: st.DrawFn, ctx: Ctx, size: int, depth: int, in_loop: bool) -> list[ast.Stmt]:
    out: list[ast.Stmt] = []
    for _ in range(size):
        kind = draw(st.sampled_from(["set", "set", "reassign", "if", "while", "for", "log", "expr"]))
        assignable = sorted(n for n in ctx.env if n not in ctx.loop_vars)
        if kind == "set" or (kind == "reassign" and not assignable):
            t = draw(st.sampled_from(SCALARS))
            value = expr(draw, t, ctx, depth)
            name = ctx.fresh("v")
            ctx.env[name] = t
            out.append(ast.Set(name, value))
        elif kind == "reassign":
            name = draw(st.sampled_from(assignable))
            out.append(ast.Set(name, expr(draw, ctx.env[name], ctx, depth)))
        elif kind == "if" and depth > 0:
            then = block(draw, ctx.child(), draw(st.integers(0, 2)), depth - 1, in_loop)
            else_ = block(draw, ctx.child(), draw(st.integers(0, 2)), depth - 1, in_loop)
            out.append(ast.If(expr(draw, "Bool", ctx, depth), tuple(then), tuple(else_)))
        elif kind == "while" and depth > 0:
            body = block(draw, ctx.child(), draw(st.integers(0, 2)), depth - 1, True)
            out.append(ast.While(expr(draw, "Bool", ctx, depth), (*body, ast.Break())))
        elif kind == "for" and depth > 0:
            inner = ctx.child()
            local = ctx.fresh("i")
            inner.env[local] = "I32"
            inner.loop_vars = inner.loop_vars | {local}
            body = block(draw, inner, draw(st.integers(0, 2)), depth - 1, True)
            out.append(ast.ForRange(local, expr(draw, "I32", ctx, 1), expr(draw, "I32", ctx, 1), tuple(body)))
        elif kind == "log":
            out.append(ast.ExprStmt(ast.Call("test.log.info", (expr(draw, "String", ctx, depth),))))
        else:
            out.append(ast.ExprStmt(expr(draw, draw(st.sampled_from(SCALARS)), ctx, depth)))
    return out


@st.composite
def modules(
    draw: st.DrawFn, max_functions: int = 4, max_statements: int = 4, max_depth: int = 2
) -> ast.Module:
    """A module that the validator accepts under ``POLICY`` with ``CATALOG``."""
    count = draw(st.integers(0, max_functions))
    functions: list[ast.Function] = []
    signatures: list[tuple[str, tuple[str, ...], str]] = []
    for index in range(count + 1):
        is_main = index == count
        name = "main" if is_main else f"f{index}"
        params = tuple(draw(st.lists(st.sampled_from(SCALARS), max_size=3)))
        ret = draw(st.sampled_from(("I32", "Bool", "String")))
        ctx = Ctx({f"p{j}": t for j, t in enumerate(params)}, list(signatures))
        body = block(draw, ctx, draw(st.integers(0, max_statements)), max_depth, False)
        body.append(ast.Return(expr(draw, ret, ctx, max_depth)))
        if draw(st.integers(0, 4)) == 0:  # dead code after the final return
            body.extend(block(draw, ctx.child(), 1, 1, False))
        functions.append(
            ast.Function(
                name,
                ast.Visibility.ENTRYPOINT if is_main else ast.Visibility.PRIVATE,
                tuple(ast.Param(f"p{j}", ast.TypeRef(t)) for j, t in enumerate(params)),
                ast.TypeRef(ret),
                tuple(body),
            )
        )
        signatures.append((name, params, ret))
    return ast.Module("gen", "1.0.0", "1.0.0", (), tuple(functions))
