"""Pass 3, names and scopes: every variable read refers to a local or parameter that is in scope.

Scoping rules (DotBoxD's reference behaviour; spec/validation.md section 4):

* parameters seed the function scope; ``if`` branches and loop bodies are child scopes;
* a local first assigned inside an ``if`` survives the ``if`` only when the other branch defines it
  too, or the other branch always exits (return, break or continue on every path);
* locals of ``while`` and ``forRange`` bodies never escape the loop, nor does the ``forRange`` local;
* a read of a name not in scope is E-LOCAL-UNKNOWN.

Our additional rules (spec/validation.md):

* a ``forRange`` local must be a fresh name, not one already in scope (E-LOCAL-SHADOW): the loop owns
  its counter;
* the loop variable cannot be assigned inside its loop (E-LOCAL-LOOP-VAR): it always runs
  start .. end-1, which both backends and the prover rely on;
* local names obey the identifier rules (E-IR-ID, E-IR-CLR-REF) for ASTs not built by the importer.

Dead statements (after an unconditional exit) are checked in the scope that reaches them. Whether a
local keeps one type is the type pass's concern; whether statements are reachable is control flow's.
"""

from __future__ import annotations

import difflib

from dotboxd.core import ast
from dotboxd.grammar.literals import dangerous_fragment, identifier_problem

from .context import Context

#: A local that may not be bound: (code, message with ``{}`` for the name, hint).
_Clash = tuple[str, str, str]
_ASSIGNED_LOOP_VAR: _Clash = (
    "E-LOCAL-LOOP-VAR",
    "'{}' is the variable of an enclosing forRange loop and cannot be assigned",
    "copy it into another local first",
)
_SHADOWING_LOOP_VAR: _Clash = (
    "E-LOCAL-SHADOW",
    "forRange local '{}' reuses a name already in scope",
    "give the loop variable a fresh name",
)


def run(ctx: Context) -> None:
    checked_names: set[str] = set()
    for fn in ctx.functions.values():
        _FunctionScopes(ctx, fn, checked_names).check()


class _FunctionScopes:
    __slots__ = ("checked", "ctx", "fn", "loop_vars", "reported")

    def __init__(self, ctx: Context, fn: ast.Function, checked: set[str]) -> None:
        self.ctx = ctx
        self.fn = fn
        self.loop_vars: list[str] = []
        self.reported: set[str] = set()
        self.checked = checked

    def check(self) -> None:
        scope = {p.name for p in self.fn.parameters}
        self.block(self.fn.body, scope)

    def name_ok(self, name: str, pointer: str) -> bool:
        if name in self.checked:
            return True
        problem = identifier_problem(name)
        if problem is not None:
            self.ctx.report("E-IR-ID", f"local name {problem}", pointer, None, "", identifier=name)
            return False
        fragment = dangerous_fragment(name)
        if fragment is not None:
            self.ctx.report(
                "E-IR-CLR-REF",
                f"local name '{name}' names host machinery ('{fragment}')",
                pointer,
                None,
                "",
                fragment=fragment,
            )
            return False
        self.checked.add(name)
        return True

    def block(self, stmts: tuple[ast.Stmt, ...], scope: set[str]) -> bool:
        """Check ``stmts`` in ``scope`` (mutated with the block's new locals); True when the block
        always exits (return, break or continue on every path)."""
        exits = False
        for s in stmts:
            if self.stmt(s, scope):
                exits = True
        return exits

    def bind(self, s: ast.Set | ast.ForRange, name: str, scope: set[str], clash: _Clash | None) -> None:
        """Add the local ``name`` to ``scope``, unless it clashes with a loop variable (``clash`` is
        reported) or breaks the name rules (``name_ok`` reports)."""
        if clash is not None:
            code, message, hint = clash
            self.ctx.report(code, message.format(name), s.pointer, s.span, hint, local=name)
        elif self.name_ok(name, s.pointer):
            scope.add(name)

    def stmt(self, s: ast.Stmt, scope: set[str]) -> bool:
        if isinstance(s, ast.Set):
            self.expr(s.value, scope)
            self.bind(s, s.name, scope, _ASSIGNED_LOOP_VAR if s.name in self.loop_vars else None)
            return False
        if isinstance(s, (ast.Return, ast.ExprStmt)):
            self.expr(s.value, scope)
            return isinstance(s, ast.Return)
        if isinstance(s, ast.If):
            self.expr(s.condition, scope)
            then_scope = set(scope)
            else_scope = set(scope)
            then_exits = self.block(s.then, then_scope)
            else_exits = self.block(s.else_, else_scope)
            if then_exits and else_exits:
                scope |= then_scope | else_scope
            elif then_exits:
                scope |= else_scope
            elif else_exits:
                scope |= then_scope
            else:
                scope |= then_scope & else_scope
            return then_exits and else_exits
        if isinstance(s, ast.While):
            self.expr(s.condition, scope)
            self.block(s.body, set(scope))
            return False
        if isinstance(s, ast.ForRange):
            self.expr(s.start, scope)
            self.expr(s.end, scope)
            body_scope = set(scope)
            self.bind(s, s.local, body_scope, _SHADOWING_LOOP_VAR if s.local in scope else None)
            self.loop_vars.append(s.local)
            self.block(s.body, body_scope)
            self.loop_vars.pop()
            return False
        if isinstance(s, (ast.Break, ast.Continue)):
            return True
        self.ctx.report(
            "E-JSON-STATEMENT", f"unknown statement node {type(s).__name__}", getattr(s, "pointer", "")
        )
        return False

    def expr(self, e: ast.Expr, scope: set[str]) -> None:
        if isinstance(e, ast.Var):
            if e.name not in scope:
                self.unknown(e, scope)
        elif isinstance(e, ast.Binary):
            self.expr(e.left, scope)
            self.expr(e.right, scope)
        elif isinstance(e, ast.Call):
            for a in e.args:
                self.expr(a, scope)
        elif isinstance(e, ast.Unary):
            self.expr(e.operand, scope)
        elif not isinstance(e, ast.Literal):
            self.ctx.report(
                "E-JSON-EXPR", f"unknown expression node {type(e).__name__}", getattr(e, "pointer", "")
            )

    def unknown(self, e: ast.Var, scope: set[str]) -> None:
        key = f"{e.name}@{e.pointer}"
        if key in self.reported:
            return
        self.reported.add(key)
        close = difflib.get_close_matches(e.name, sorted(scope), n=3)
        hint = (
            f"did you mean {', '.join(repr(c) for c in close)}?"
            if close
            else "assign it with set before reading it"
        )
        self.ctx.report(
            "E-LOCAL-UNKNOWN",
            f"'{e.name}' is not a local or parameter in scope in function '{self.fn.id}'",
            e.pointer,
            e.span,
            hint,
            name=e.name,
            inScope=sorted(scope)[:20],
        )
