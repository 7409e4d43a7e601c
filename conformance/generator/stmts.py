"""Statements and blocks drawn in a typing context, tracking scope exactly as the validator does.

Each statement kind updates the ``Scope`` the way ``validator/scopes.py`` will see it: a ``set``
makes its name readable after its value is evaluated; ``if`` branches are child scopes merged by
``Scope.merge_if``; loop bodies are child scopes whose names never escape; a ``forRange`` local is a
name not in scope (fresh, or an out-of-scope name already typed I32) and is not assignable in its
body. ``while`` loops always take the counter form ``k = 0; while k < K { k = k + 1; ... }`` with a
small ``K`` and the counter frozen for the body, so they terminate whatever else the body does
(``continue`` included, since the increment comes first).

A block stops at a statement that always exits (return, break, continue, or an ``if`` whose
branches both exit); occasionally one dead statement follows, which the validator type-checks but
which must add no effects or capabilities (``liveness`` mirrors that when granting).
"""

from __future__ import annotations

from collections.abc import Callable

from dotboxd.core import ast
from dotboxd.core.types import BOOL, I32, ListType, MapType, SandboxType, type_kind

from . import vocab
from .context import Scope
from .exprs import ExprGen, call, copy_leaf, i32
from .source import Source

MAX_NEST = 3
MAX_LOOPS = 2
Drawn = tuple[list[ast.Stmt], bool]  # statements, and whether they always exit


def returns(stmts: tuple[ast.Stmt, ...] | list[ast.Stmt]) -> bool:
    """``validator/control_flow.py``'s rule: a return, or an ``if`` whose two branches return."""
    for s in stmts:
        if isinstance(s, ast.Return):
            return True
        if isinstance(s, ast.If) and returns(s.then) and returns(s.else_):
            return True
    return False


def _stem(t: SandboxType) -> str:
    """The start of a fresh local's name, after its type's kind (``n0``, ``flag1``, ``xs2``)."""
    return _STEMS.get(type_kind(t), "v")


_STEMS = {"I32": "n", "Bool": "flag", "List": "xs", "Map": "m", "Record": "r"}


class StmtGen:
    """Draws statements for one function."""

    def __init__(self, src: Source) -> None:
        self.src = src

    def exprs(self, scope: Scope) -> ExprGen:
        return ExprGen(self.src, scope)

    # -- blocks ---------------------------------------------------------------------------------

    def block(self, scope: Scope, count: int) -> Drawn:
        out: list[ast.Stmt] = []
        for _ in range(count):
            if scope.fn.budget <= 0 and out:
                break
            stmts, exits = self.statement(scope)
            out.extend(stmts)
            if exits:
                if self.src.chance(10):
                    scope.env.note("dead-code")
                    out.append(self.simple_statement(scope))
                return out, True
        return out, False

    def function_body(self, scope: Scope, ret: SandboxType) -> tuple[ast.Stmt, ...]:
        stmts, _ = self.block(scope, self.src.integer(1, 5))
        if not returns(stmts):
            if self.src.chance(15):
                stmts.append(self._if_both_return(scope, ret))
            else:
                stmts.append(ast.Return(self.exprs(scope).expr(ret, 3)))
        return tuple(stmts)

    # -- one statement --------------------------------------------------------------------------

    def statement(self, scope: Scope) -> Drawn:
        env = scope.env
        options: list[tuple[int, Callable[[], Drawn]]] = [(20, lambda: self._set_new(scope))]
        if scope.assignable():
            options.append((10, lambda: self._reassign(scope)))
        if scope.reusable():
            options.append((2, lambda: self._reuse(scope)))
        if env.functions or env.bindings:
            options.append((7, lambda: self._set_call(scope)))
            options.append((3, lambda: self._expr_call(scope)))
        if scope.nest < MAX_NEST:
            options.append((8, lambda: self._if(scope)))
            options.append((2, lambda: self._early_return(scope)))
            options.append((3, lambda: self._guarded(scope)))
            if scope.loops < MAX_LOOPS:
                options.append((6, lambda: self._for_range(scope)))
                options.append((5, lambda: self._while(scope)))
            if scope.loops > 0:
                options.append((3, lambda: self._jump_if(scope, ast.Break())))
                options.append((2, lambda: self._jump_if(scope, ast.Continue())))
        if scope.loops > 0:
            options.append((1, lambda: self._bare_jump(scope)))
        return self.src.weighted(options)()

    def simple_statement(self, scope: Scope) -> ast.Stmt:
        stmts, _ = self._set_new(scope)
        return stmts[0]

    # -- set ------------------------------------------------------------------------------------

    def _new_type(self, scope: Scope) -> SandboxType:
        seen = list(dict.fromkeys(scope.visible.values()))
        if seen and self.src.chance(40):
            return self.src.choice(seen)
        return vocab.draw_type(self.src, scope.env.brands, vocab.MAX_DRAWN_DEPTH - 1)

    def _set_new(self, scope: Scope) -> Drawn:
        t = self._new_type(scope)
        value = self.exprs(scope).expr(t, self.src.integer(1, 3))
        name = scope.fn.fresh(_stem(t))
        scope.declare(name, t)
        return [ast.Set(name, value)], False

    def _reassign(self, scope: Scope) -> Drawn:
        name = self.src.choice(scope.assignable())
        t = scope.visible[name]
        return [ast.Set(name, self.exprs(scope).expr(t, self.src.integer(1, 3)))], False

    def _reuse(self, scope: Scope) -> Drawn:
        scope.env.note("scope-reuse")
        name = self.src.choice(scope.reusable())
        t = scope.fn.types[name]
        value = self.exprs(scope).expr(t, 2)
        scope.declare(name, t)
        return [ast.Set(name, value)], False

    def _callee(self, scope: Scope) -> tuple[str, list[SandboxType], SandboxType, bool]:
        env = scope.env
        targets: list[tuple[str, list[SandboxType], SandboxType, bool]] = [
            (f.name, [p for _, p in f.params], f.ret, False) for f in env.functions
        ]
        targets += [(b.id, list(b.params), b.ret, True) for b in env.bindings]
        return self.src.choice(targets)

    def _call_expr(self, scope: Scope) -> tuple[ast.Expr, SandboxType]:
        name, params, ret, is_binding = self._callee(scope)
        gen = self.exprs(scope)
        depth = self.src.integer(0, 2)
        e = gen.call_binding(name, params, depth) if is_binding else gen.call_function(name, params, depth)
        return e, ret

    def _set_call(self, scope: Scope) -> Drawn:
        value, ret = self._call_expr(scope)
        same = [n for n in scope.assignable() if scope.visible[n] == ret]
        if same and self.src.chance(30):
            return [ast.Set(self.src.choice(same), value)], False
        name = scope.fn.fresh(_stem(ret))
        scope.declare(name, ret)
        return [ast.Set(name, value)], False

    def _expr_call(self, scope: Scope) -> Drawn:
        value, _ = self._call_expr(scope)
        return [ast.ExprStmt(value)], False

    # -- if -------------------------------------------------------------------------------------

    def _condition(self, scope: Scope) -> ast.Expr:
        return self.exprs(scope).expr(BOOL, self.src.integer(1, 3))

    def _if(self, scope: Scope) -> Drawn:
        cond = self._condition(scope)
        then_scope, else_scope = scope.child(), scope.child()
        then, then_exits = self.block(then_scope, self.src.integer(1, 3))
        else_: list[ast.Stmt] = []
        else_exits = False
        if self.src.chance(50):
            else_, else_exits = self.block(else_scope, self.src.integer(1, 3))
        scope.merge_if(then_scope, else_scope, then_exits, else_exits)
        return [ast.If(cond, tuple(then), tuple(else_))], then_exits and else_exits

    def _returning_branch(self, scope: Scope, ret: SandboxType) -> list[ast.Stmt]:
        stmts, exits = self.block(scope, self.src.integer(0, 2))
        if not exits:
            stmts.append(ast.Return(self.exprs(scope).expr(ret, 2)))
        return stmts

    def _early_return(self, scope: Scope) -> Drawn:
        scope.env.note("early-return")
        cond = self._condition(scope)
        then_scope = scope.child()
        then = self._returning_branch(then_scope, scope.fn.sig.ret)
        scope.merge_if(then_scope, scope.child(), True, False)
        return [ast.If(cond, tuple(then))], False

    def _if_both_return(self, scope: Scope, ret: SandboxType) -> ast.Stmt:
        cond = self._condition(scope)
        then_scope, else_scope = scope.child(), scope.child()
        then = self._returning_branch(then_scope, ret)
        else_ = self._returning_branch(else_scope, ret)
        if not (returns(then) and returns(else_)):  # a branch ended in break/continue (in a loop)
            then.append(ast.Return(self.exprs(then_scope).expr(ret, 1)))
            else_.append(ast.Return(self.exprs(else_scope).expr(ret, 1)))
        return ast.If(cond, tuple(then), tuple(else_))

    def _guarded(self, scope: Scope) -> Drawn:
        """Idioms that make a partial operation total: a length test before ``list.get``, a
        ``containsKey`` before ``map.get``, a zero test before a division."""
        lists = [n for n, t in scope.visible.items() if isinstance(t, ListType)]
        maps = [n for n, t in scope.visible.items() if isinstance(t, MapType)]
        ints = [n for n, t in scope.visible.items() if t == I32]
        kinds = [k for k, ok in (("list", lists), ("map", maps), ("div", ints)) if ok]
        if not kinds:
            return self._set_new(scope)
        kind = self.src.choice(kinds)
        inner = scope.child()
        gen = self.exprs(inner)
        if kind == "list":
            name = self.src.choice(lists)
            lt = scope.visible[name]
            assert isinstance(lt, ListType)
            cond: ast.Expr = ast.Binary(ast.BinaryOp.GT, call("list.count", ast.Var(name)), i32(0))
            value: ast.Expr = call("list.get", ast.Var(name), i32(0))
            t: SandboxType = lt.element
        elif kind == "map":
            name = self.src.choice(maps)
            mt = scope.visible[name]
            assert isinstance(mt, MapType)
            key = gen.simple(mt.key)
            cond = call("map.containsKey", ast.Var(name), key)
            value = call("map.get", ast.Var(name), copy_leaf(key))
            t = mt.value
        else:
            name = self.src.choice(ints)
            cond = ast.Binary(ast.BinaryOp.NE, ast.Var(name), i32(0))
            value = ast.Binary(
                self.src.choice((ast.BinaryOp.DIV, ast.BinaryOp.REM)), gen.expr(I32, 1), ast.Var(name)
            )
            t = I32
        target = inner.fn.fresh(_stem(t))
        inner.declare(target, t)
        body: list[ast.Stmt] = [ast.Set(target, value)]
        more, exits = self.block(inner, self.src.integer(0, 1))
        body += more
        scope.merge_if(inner, scope.child(), exits, False)
        return [ast.If(cond, tuple(body))], False

    # -- loops ----------------------------------------------------------------------------------

    def _loop_end(self, scope: Scope, start: ast.Expr) -> ast.Expr:
        gen = self.exprs(scope)
        lists = [n for n, t in scope.visible.items() if isinstance(t, ListType)]
        options: list[tuple[int, Callable[[], ast.Expr]]] = [
            (
                50,
                lambda: (
                    i32(start.value + self.src.integer(0, 5))
                    if isinstance(start, ast.Literal) and isinstance(start.value, int)
                    else i32(self.src.integer(0, 5))
                ),
            ),
            (20, lambda: call("math.min", gen.expr(I32, 1), i32(self.src.integer(1, 5)))),
            (4, lambda: gen.expr(I32, 1)),
        ]
        if lists:
            options.append((15, lambda: call("list.count", ast.Var(self.src.choice(lists)))))
        return self.src.weighted(options)()

    def _for_range(self, scope: Scope) -> Drawn:
        scope.env.note("for-range")
        gen = self.exprs(scope)
        start: ast.Expr = (
            i32(self.src.integer(-1, 2))
            if self.src.chance(70)
            else call("math.max", gen.expr(I32, 1), i32(-3))
        )
        end = self._loop_end(scope, start)
        old_ints = [n for n in scope.reusable() if scope.fn.types[n] == I32]
        if old_ints and self.src.chance(30):
            scope.env.note("scope-reuse")
            var = self.src.choice(old_ints)
        else:
            var = scope.fn.fresh("i")
        scope.fn.types.setdefault(var, I32)
        body_scope = scope.child(loop=True)
        body_scope.visible[var] = I32
        scope.fn.loop_vars.append(var)
        body, _ = self.block(body_scope, self.src.integer(1, 3))
        scope.fn.loop_vars.pop()
        return [ast.ForRange(var, start, end, tuple(body))], False

    def _while(self, scope: Scope) -> Drawn:
        scope.env.note("while")
        counter = scope.fn.fresh("k")
        init = ast.Set(counter, i32(0))
        scope.declare(counter, I32)
        gen = self.exprs(scope)
        bound: ast.Expr = (
            i32(self.src.integer(1, 5))
            if self.src.chance(70)
            else call("math.min", gen.expr(I32, 1), i32(self.src.integer(1, 4)))
        )
        cond: ast.Expr = ast.Binary(ast.BinaryOp.LT, ast.Var(counter), bound)
        if self.src.chance(25):
            extra = gen.expr(BOOL, 1)
            cond = (
                ast.Binary(ast.BinaryOp.AND, cond, extra)
                if self.src.chance(50)
                else ast.Binary(ast.BinaryOp.AND, extra, cond)
            )
        step = ast.Set(counter, ast.Binary(ast.BinaryOp.ADD, ast.Var(counter), i32(1)))
        body_scope = scope.child(loop=True)
        scope.fn.frozen.append(counter)
        body, _ = self.block(body_scope, self.src.integer(1, 3))
        scope.fn.frozen.pop()
        return [init, ast.While(cond, (step, *body))], False

    def _jump_if(self, scope: Scope, jump: ast.Stmt) -> Drawn:
        scope.env.note("break" if isinstance(jump, ast.Break) else "continue")
        cond = self._condition(scope)
        then_scope = scope.child()
        then, exits = self.block(then_scope, self.src.integer(0, 1))
        if not exits:
            then.append(jump)
        scope.merge_if(then_scope, scope.child(), True, False)
        return [ast.If(cond, tuple(then))], False

    def _bare_jump(self, scope: Scope) -> Drawn:
        jump: ast.Stmt = ast.Break() if self.src.chance(50) else ast.Continue()
        scope.env.note("break" if isinstance(jump, ast.Break) else "continue")
        return [jump], True
