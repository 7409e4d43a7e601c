"""What a generated program exercises: statement kinds, operators (by operand type), built-ins,
literal kinds and fixture behaviours. Used to check the generator's breadth (every built-in and
operator is reachable) and to report it; the conformance coverage report is a separate tool."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from dotboxd.core import ast
from dotboxd.core.builtins import BUILTINS
from dotboxd.validator.plan import ExecutionPlan

from .program import GeneratedProgram

_STATEMENT_KEYS = {
    ast.Set: "set",
    ast.Return: "return",
    ast.ExprStmt: "expr",
    ast.If: "if",
    ast.While: "while",
    ast.ForRange: "forRange",
    ast.Continue: "continue",
    ast.Break: "break",
}


def program_features(program: GeneratedProgram, plan: ExecutionPlan | None = None) -> Counter[str]:
    """Feature keys of ``program``: ``stmt:if``, ``builtin:map.get``, ``op:add``, ``literal:guid``,
    ``behavior:echo``... With the program's ``plan`` (validated from the same module object),
    operators also get their operand type: ``op:add:I64``, ``unary:-:F64``."""
    found: Counter[str] = Counter()
    functions = {f.id for f in program.module.functions}
    for fn in program.module.functions:
        for key in _block(fn.body, functions, plan):
            found[key] += 1
    for entry in program.bindings_json:
        found[f"behavior:{entry['behavior']['kind']}"] += 1
    return found


def _block(stmts: tuple[ast.Stmt, ...], functions: set[str], plan: ExecutionPlan | None) -> Iterator[str]:
    for s in stmts:
        yield f"stmt:{_STATEMENT_KEYS[type(s)]}"
        if isinstance(s, (ast.Set, ast.Return, ast.ExprStmt)):
            yield from _expr(s.value, functions, plan)
        elif isinstance(s, ast.If):
            yield from _expr(s.condition, functions, plan)
            yield from _block(s.then, functions, plan)
            yield from _block(s.else_, functions, plan)
        elif isinstance(s, ast.While):
            yield from _expr(s.condition, functions, plan)
            yield from _block(s.body, functions, plan)
        elif isinstance(s, ast.ForRange):
            yield from _expr(s.start, functions, plan)
            yield from _expr(s.end, functions, plan)
            yield from _block(s.body, functions, plan)


def _typed(key: str, operand: ast.Expr, plan: ExecutionPlan | None) -> Iterator[str]:
    yield key
    if plan is not None:
        yield f"{key}:{plan.type_of(operand)}"


def _expr(e: ast.Expr, functions: set[str], plan: ExecutionPlan | None) -> Iterator[str]:
    if isinstance(e, ast.Literal):
        yield f"literal:{e.kind.value}"
    elif isinstance(e, ast.Unary):
        yield from _typed(f"unary:{e.op.value}", e.operand, plan)
        yield from _expr(e.operand, functions, plan)
    elif isinstance(e, ast.Binary):
        yield from _typed(f"op:{e.op.value}", e.left, plan)
        yield from _expr(e.left, functions, plan)
        yield from _expr(e.right, functions, plan)
    elif isinstance(e, ast.Call):
        if e.name in functions:  # module functions resolve first (they may shadow a built-in)
            yield "call:function"
        elif e.name in BUILTINS:
            yield f"builtin:{e.name}"
        else:
            yield "call:binding"
        for a in e.args:
            yield from _expr(a, functions, plan)
