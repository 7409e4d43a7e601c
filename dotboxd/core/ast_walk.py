"""Every expression in a block of statements, for passes that look at nodes and not at structure.

Tools that only ask "which calls / literals does this code contain" (the conformance generator's
policy sizing, property tests) used to each spell out the same recursive walk over the eight
statement ops and five expression nodes. This walk is the one copy. It is iterative, so a tree
nested as deep as the importer allows cannot exhaust the Python stack.
"""

from __future__ import annotations

from collections.abc import Iterator

from dotboxd.core import ast


def expressions(stmts: tuple[ast.Stmt, ...]) -> Iterator[ast.Expr]:
    """Each expression node under ``stmts`` (nested blocks and sub-expressions included), parents
    before their operands and statements in source order."""
    pending: list[ast.Stmt | ast.Expr] = list(reversed(stmts))
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Var, ast.Literal, ast.Call, ast.Unary, ast.Binary)):
            yield node
        pending.extend(reversed(_children(node)))


def _children(node: ast.Stmt | ast.Expr) -> tuple[ast.Stmt | ast.Expr, ...]:
    """The direct sub-statements and sub-expressions of one node, in source order."""
    if isinstance(node, ast.Call):
        return node.args
    if isinstance(node, ast.Binary):
        return (node.left, node.right)
    if isinstance(node, ast.Unary):
        return (node.operand,)
    if isinstance(node, (ast.Set, ast.Return, ast.ExprStmt)):
        return (node.value,)
    if isinstance(node, ast.If):
        return (node.condition, *node.then, *node.else_)
    if isinstance(node, ast.While):
        return (node.condition, *node.body)
    if isinstance(node, ast.ForRange):
        return (node.start, node.end, *node.body)
    return ()
