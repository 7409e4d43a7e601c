"""Print a module as a Python kernel file: the inverse of the lowering, where one exists.

Used to give text-form conformance cases a Python twin: ``lower_python(emit_python(m)) == m`` for
every module ``m`` this printer accepts. Python's syntax tree forgets parentheses and keeps some
shapes of its own, so a few IR trees have no Python spelling; for those (and for names Python
cannot write or the subset reserves) ``Inexpressible`` says why, and no twin is made.

Every compound operand is parenthesised, so the tree never depends on Python's precedence rules
(which differ from the IR text form's: ``not a == b`` is ``not (a == b)`` in Python).
"""

from __future__ import annotations

import json
import keyword

from dotboxd.core import ast
from dotboxd.grammar.pyfront.refused import PYTHON_BUILTINS
from dotboxd.lang import LANG_NAMES

_INDENT = "    "
_HEADER_CALLS = frozenset({"module", "requires", "meta"})
_PY_OPERATOR: dict[ast.BinaryOp, str] = {
    ast.BinaryOp.ADD: "+",
    ast.BinaryOp.SUB: "-",
    ast.BinaryOp.MUL: "*",
    ast.BinaryOp.DIV: "//",
    ast.BinaryOp.REM: "%",
    ast.BinaryOp.EQ: "==",
    ast.BinaryOp.NE: "!=",
    ast.BinaryOp.LT: "<",
    ast.BinaryOp.LTE: "<=",
    ast.BinaryOp.GT: ">",
    ast.BinaryOp.GTE: ">=",
    ast.BinaryOp.AND: "and",
    ast.BinaryOp.OR: "or",
}
_LITERAL_CALLS = {ast.LiteralKind.PATH: "path", ast.LiteralKind.URI: "uri", ast.LiteralKind.GUID: "guid"}
_NUMERIC = frozenset({ast.LiteralKind.I32, ast.LiteralKind.I64, ast.LiteralKind.F64})


class Inexpressible(Exception):
    """The module has no spelling in the Python subset; the message says which part and why."""


def _string(text: str) -> str:
    # JSON escapes are Python escapes; non-ASCII stays raw (a \\ud83d\\ude00 pair would stay two
    # lone surrogates in Python, unlike JSON).
    return json.dumps(text, ensure_ascii=False)


def _name(name: str, what: str) -> str:
    if not (name.isascii() and name.isidentifier()) or keyword.iskeyword(name) or name.startswith("__"):
        raise Inexpressible(f"{what} {name!r} is not a plain Python identifier")
    return name


def _dotted(name: str, what: str) -> str:
    return ".".join(_name(part, what) for part in name.split("."))


def _type(t: ast.TypeRef) -> str:
    name = _dotted(t.name, "the type")
    if not t.arguments:
        return name
    return f"{name}[{', '.join(_type(a) for a in t.arguments)}]"


class _Printer:
    def __init__(self, module: ast.Module) -> None:
        self.function_ids = {fn.id for fn in module.functions}

    def literal(self, lit: ast.Literal) -> str:
        value = lit.value
        kind = lit.kind
        if kind is ast.LiteralKind.UNIT:
            return "None"
        if kind is ast.LiteralKind.BOOL:
            return "True" if value else "False"
        if kind is ast.LiteralKind.I32:
            return str(value)
        if kind is ast.LiteralKind.I64:
            assert isinstance(value, int)
            return f"-I64({-value})" if value < 0 else f"I64({value})"
        if kind is ast.LiteralKind.F64:
            return repr(value)
        assert isinstance(value, str)
        if kind is ast.LiteralKind.STRING:
            return _string(value)
        if kind is ast.LiteralKind.OPAQUE_ID:
            assert lit.brand is not None
            return f"opaque({_string(lit.brand)}, {_string(value)})"
        return f"{_LITERAL_CALLS[kind]}({_string(value)})"

    def operand(self, e: ast.Expr) -> str:
        text = self.expr(e)
        return f"({text})" if isinstance(e, ast.Binary | ast.Unary) else text

    def expr(self, e: ast.Expr) -> str:
        if isinstance(e, ast.Literal):
            return self.literal(e)
        if isinstance(e, ast.Var):
            return _name(e.name, "the variable")
        if isinstance(e, ast.Unary):
            if e.op is ast.UnaryOp.NOT:
                return f"not {self.operand(e.operand)}"
            inner = e.operand
            if isinstance(inner, ast.Literal) and inner.kind in _NUMERIC:
                # Python folds -(5) into the literal -5 (parentheses leave no trace in its tree)
                raise Inexpressible(
                    "negation of a number literal, -(5), differs from the literal -5 only in the IR"
                )
            return f"-{self.operand(inner)}"
        if isinstance(e, ast.Binary):
            return f"{self.operand(e.left)} {_PY_OPERATOR[e.op]} {self.operand(e.right)}"
        return self.call(e)

    def call(self, e: ast.Call) -> str:
        name = _dotted(e.name, "the call")
        if (
            "." not in name
            and name not in self.function_ids
            and (name in PYTHON_BUILTINS or name in LANG_NAMES or name in _HEADER_CALLS)
        ):
            raise Inexpressible(f"a call of {name!r}, which the Python subset reserves")
        generic = f"[{_type(e.generic_type)}]" if e.generic_type is not None else ""
        return f"{name}{generic}({', '.join(self.expr(a) for a in e.args)})"

    def block(self, body: tuple[ast.Stmt, ...], depth: int, first_in_function: bool = False) -> list[str]:
        if not body:
            return [_INDENT * depth + "pass"]
        lines: list[str] = []
        for index, stmt in enumerate(body):
            if (
                first_in_function
                and index == 0
                and isinstance(stmt, ast.ExprStmt)
                and isinstance(stmt.value, ast.Literal)
                and stmt.value.kind is ast.LiteralKind.STRING
            ):
                raise Inexpressible("a string expression first in a body would read as a docstring")
            lines.extend(self.statement(stmt, depth))
        return lines

    def statement(self, s: ast.Stmt, depth: int) -> list[str]:
        pad = _INDENT * depth
        if isinstance(s, ast.Set):
            return [f"{pad}{_name(s.name, 'the local')} = {self.expr(s.value)}"]
        if isinstance(s, ast.Return):
            return [f"{pad}return {self.expr(s.value)}"]
        if isinstance(s, ast.ExprStmt):
            return [f"{pad}{self.expr(s.value)}"]
        if isinstance(s, ast.If):
            lines = [f"{pad}if {self.expr(s.condition)}:", *self.block(s.then, depth + 1)]
            if s.else_:
                lines += [f"{pad}else:", *self.block(s.else_, depth + 1)]
            return lines
        if isinstance(s, ast.While):
            return [f"{pad}while {self.expr(s.condition)}:", *self.block(s.body, depth + 1)]
        if isinstance(s, ast.ForRange):
            header = f"{pad}for {_name(s.local, 'the loop local')} in range({self.expr(s.start)}, {self.expr(s.end)}):"
            return [header, *self.block(s.body, depth + 1)]
        if isinstance(s, ast.Continue):
            return [f"{pad}continue"]
        return [f"{pad}break"]

    def function(self, fn: ast.Function) -> list[str]:
        name = _name(fn.id, "the function")
        if name in LANG_NAMES or name in _HEADER_CALLS:
            raise Inexpressible(f"a function named {name!r}, which dotboxd.lang owns")
        params = ", ".join(f"{_name(p.name, 'the parameter')}: {_type(p.type)}" for p in fn.parameters)
        lines = ["@entrypoint"] if fn.visibility is ast.Visibility.ENTRYPOINT else []
        lines.append(f"def {name}({params}) -> {_type(fn.return_type)}:")
        lines.extend(self.block(fn.body, 1, first_in_function=True))
        return lines


def emit_python(module: ast.Module) -> str:
    """A Python kernel file that lowers to ``module``; raises Inexpressible when there is none."""
    printer = _Printer(module)
    header = f"module({_string(module.id)}, version={_string(module.version)}"
    if module.target_sandbox_version != ast.DEFAULT_TARGET_VERSION:
        header += f", target={_string(module.target_sandbox_version)}"
    lines = [header + ")"]  # dotboxd.lang names are read by spelling, so no import line is needed
    for request in module.capability_requests:
        reason = "" if request.reason is None else f", reason={_string(request.reason)}"
        lines.append(f"requires({_string(request.id)}{reason})")
    for key, value in module.metadata:
        lines.append(f"meta({_string(key)}, {_string(value)})")
    for fn in module.functions:
        lines.append("")
        lines.append("")
        lines.extend(printer.function(fn))
    return "\n".join(lines) + "\n"


__all__ = ["Inexpressible", "emit_python"]
