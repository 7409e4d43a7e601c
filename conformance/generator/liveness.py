"""Which host bindings a generated module can actually call: the capabilities its policy grants.

The validator derives required capabilities from the IR (``validator/capabilities.py``): bindings
called by *live* code of functions *reachable* from an entrypoint over live calls. Dead statements
(after an unconditional exit in the same block, as decided in ``validator/typecheck.py``) add
nothing. In strict mode (``rejectUnusedGrants``) the policy resolver also rejects a grant the module
does not need (E-POLICY-GRANT), so the generator grants exactly this set - no more, no less - and its
programs are valid in either mode. This module re-derives it from the
generated AST with the same syntactic rules, independently of the validator under test.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping

from dotboxd.core import ast


def stmt_exits(s: ast.Stmt) -> bool:
    """Return/break/continue, or an ``if`` whose two branches both exit."""
    if isinstance(s, (ast.Return, ast.Break, ast.Continue)):
        return True
    if isinstance(s, ast.If):
        return block_exits(s.then) and block_exits(s.else_)
    return False


def block_exits(stmts: tuple[ast.Stmt, ...]) -> bool:
    return any(stmt_exits(s) for s in stmts)


def _calls(e: ast.Expr) -> Iterator[str]:
    if isinstance(e, ast.Call):
        yield e.name
        for a in e.args:
            yield from _calls(a)
    elif isinstance(e, ast.Binary):
        yield from _calls(e.left)
        yield from _calls(e.right)
    elif isinstance(e, ast.Unary):
        yield from _calls(e.operand)


def live_calls(stmts: tuple[ast.Stmt, ...]) -> Iterator[str]:
    """Every call name in live code of ``stmts`` (in order, repeats included)."""
    for expr in ast.statement_expressions(stmts, stmt_exits):  # after an exit, the block is dead
        yield from _calls(expr)


def reachable_bindings(module: ast.Module, binding_ids: Mapping[str, object]) -> list[str]:
    """Binding ids called by live code of functions reachable from the entrypoints (sorted)."""
    functions = {f.id: f for f in module.functions}
    queue = deque(f.id for f in module.functions if f.visibility is ast.Visibility.ENTRYPOINT)
    seen = set(queue)
    found: set[str] = set()
    while queue:
        fn = functions[queue.popleft()]
        for name in live_calls(fn.body):
            if name in functions and name not in seen:
                seen.add(name)
                queue.append(name)
            elif name in binding_ids:
                found.add(name)
    return sorted(found)
