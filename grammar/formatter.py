"""Print any AST as canonical readable text (the form ``dotboxd.grammar.text`` parses).

The output is a function of the tree alone: fixed 4-space indentation, one statement per line, a
blank line between sections and functions, metadata in key order, and only the parentheses the
precedence rules need. ``parse_text(format_module(m)) == m`` for every import-valid module ``m``,
so the text form can stand in for the wire form anywhere (the property tests check this).

Three spellings carry the round-trip: names that are not plain identifiers (or that are keywords)
go in backticks; a negative number literal prints as ``-5`` while negation of a literal prints as
``-(5)``; an ``else`` block holding exactly one ``if`` prints as ``else if``.
"""

from __future__ import annotations

from dotboxd.core import ast
from dotboxd.grammar.text import is_plain_name

INDENT = "    "

# Binding strength of each binary operator (higher binds tighter).
_PRECEDENCE: dict[ast.BinaryOp, int] = {
    ast.BinaryOp.OR: 1,
    ast.BinaryOp.AND: 2,
    ast.BinaryOp.EQ: 3,
    ast.BinaryOp.NE: 3,
    ast.BinaryOp.LT: 4,
    ast.BinaryOp.LTE: 4,
    ast.BinaryOp.GT: 4,
    ast.BinaryOp.GTE: 4,
    ast.BinaryOp.ADD: 5,
    ast.BinaryOp.SUB: 5,
    ast.BinaryOp.MUL: 6,
    ast.BinaryOp.DIV: 6,
    ast.BinaryOp.REM: 6,
}
_NON_ASSOCIATIVE = frozenset({3, 4})  # == != and < <= > >= do not chain: `(a < b) < c`
_UNARY_PRECEDENCE = 7

_NAMED_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_NUMERIC_KINDS = frozenset({ast.LiteralKind.I32, ast.LiteralKind.I64, ast.LiteralKind.F64})


def _escape(text: str, quote: str) -> str:
    """JSON-style escapes for exactly what must be escaped: the quote, the backslash, C0 control
    characters (and surrogates, which cannot be encoded). Everything else is printed as itself, as
    the wire's JSON does, so the text is never longer than the compact JSON of the same strings and
    a module within the wire budgets always re-parses within the text budgets."""
    out: list[str] = []
    for ch in text:
        code = ord(ch)
        if ch == quote:
            out.append("\\" + ch)
        elif ch in _NAMED_ESCAPES:
            out.append(_NAMED_ESCAPES[ch])
        elif code < 0x20 or 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def quote_string(text: str) -> str:
    """A string literal: ``"..."`` with JSON-style escapes."""
    return '"' + _escape(text, '"') + '"'


def format_name(name: str) -> str:
    """A name as written: plain when it is a plain identifier and no keyword, else in backticks."""
    if is_plain_name(name):
        return name
    return "`" + _escape(name, "`") + "`"


def format_type(t: ast.TypeRef) -> str:
    if not t.arguments:
        return format_name(t.name)
    return f"{format_name(t.name)}<{', '.join(format_type(a) for a in t.arguments)}>"


def format_literal(lit: ast.Literal) -> str:
    kind, value = lit.kind, lit.value
    if kind is ast.LiteralKind.UNIT:
        return "()"
    if kind is ast.LiteralKind.BOOL:
        return "true" if value else "false"
    if kind is ast.LiteralKind.I32:
        return str(value)
    if kind is ast.LiteralKind.I64:
        return f"{value}L"
    if kind is ast.LiteralKind.F64:
        assert isinstance(value, float)
        return repr(value)  # shortest round-trip text; always has '.' or an exponent
    assert isinstance(value, str)
    if kind is ast.LiteralKind.STRING:
        return quote_string(value)
    if kind is ast.LiteralKind.OPAQUE_ID:
        return f"opaque {format_name(lit.brand or '')} {quote_string(value)}"
    return kind.value + quote_string(value)  # guid"..." path"..." uri"..."


def format_expr(e: ast.Expr, context: int = 0) -> str:
    """``e`` as text, parenthesized when it binds more loosely than ``context`` requires."""
    if isinstance(e, ast.Binary):
        prec = _PRECEDENCE[e.op]
        left_context = prec + 1 if prec in _NON_ASSOCIATIVE else prec
        text = f"{format_expr(e.left, left_context)} {e.op.symbol} {format_expr(e.right, prec + 1)}"
        return f"({text})" if prec < context else text
    if isinstance(e, ast.Unary):
        if e.op is ast.UnaryOp.NOT:
            return "!" + format_expr(e.operand, _UNARY_PRECEDENCE)
        operand = e.operand
        if isinstance(operand, ast.Literal) and operand.kind in _NUMERIC_KINDS:
            return f"-({format_literal(operand)})"  # `-5` would read back as the literal -5
        inner = format_expr(operand, _UNARY_PRECEDENCE)
        return f"-({inner})" if inner.startswith("-") else "-" + inner
    if isinstance(e, ast.Var):
        return format_name(e.name)
    if isinstance(e, ast.Call):
        generic = f"[{format_type(e.generic_type)}]" if e.generic_type is not None else ""
        return f"{format_name(e.name)}{generic}({', '.join(format_expr(a) for a in e.args)})"
    return format_literal(e)


def _block(body: tuple[ast.Stmt, ...], depth: int) -> list[str]:
    """``{`` ... ``}`` lines; the opening brace is appended by the caller to its header line."""
    if not body:
        return []
    lines: list[str] = []
    for stmt in body:
        lines.extend(_statement(stmt, depth + 1))
    return lines


def _header_with_block(header: str, body: tuple[ast.Stmt, ...], depth: int) -> list[str]:
    pad = INDENT * depth
    if not body:
        return [f"{pad}{header} {{}}"]
    return [f"{pad}{header} {{", *_block(body, depth), f"{pad}}}"]


def _statement(s: ast.Stmt, depth: int) -> list[str]:
    pad = INDENT * depth
    if isinstance(s, ast.Set):
        return [f"{pad}{format_name(s.name)} = {format_expr(s.value)};"]
    if isinstance(s, ast.Return):
        return [f"{pad}return {format_expr(s.value)};"]
    if isinstance(s, ast.ExprStmt):
        return [f"{pad}{format_expr(s.value)};"]
    if isinstance(s, ast.If):
        return _if(s, depth, f"{pad}if ")
    if isinstance(s, ast.While):
        return _header_with_block(f"while {format_expr(s.condition)}", s.body, depth)
    if isinstance(s, ast.ForRange):
        header = f"for {format_name(s.local)} in {format_expr(s.start)}..{format_expr(s.end)}"
        return _header_with_block(header, s.body, depth)
    if isinstance(s, ast.Continue):
        return [f"{pad}continue;"]
    return [f"{pad}break;"]


def _if(s: ast.If, depth: int, lead: str) -> list[str]:
    """An if statement whose first line starts with ``lead`` (``if `` or ``} else if ``)."""
    pad = INDENT * depth
    lines = [f"{lead}{format_expr(s.condition)} {{", *_block(s.then, depth)]
    if len(s.else_) == 1 and isinstance(s.else_[0], ast.If):
        lines.extend(_if(s.else_[0], depth, f"{pad}}} else if "))
        return lines
    if s.else_:
        lines.append(f"{pad}}} else {{")
        lines.extend(_block(s.else_, depth))
    lines.append(f"{pad}}}")
    return lines


def format_function(fn: ast.Function) -> str:
    params = ", ".join(f"{format_name(p.name)} {format_type(p.type)}" for p in fn.parameters)
    visibility = "entrypoint " if fn.visibility is ast.Visibility.ENTRYPOINT else ""
    header = f"{visibility}fn {format_name(fn.id)}({params}) -> {format_type(fn.return_type)}"
    return "\n".join(_header_with_block(header, fn.body, 0))


def format_module(module: ast.Module) -> str:
    """The canonical text of ``module``, ending with a newline."""
    header = f"module {quote_string(module.id)} version {quote_string(module.version)}"
    if module.target_sandbox_version != ast.DEFAULT_TARGET_VERSION:
        header += f" target {quote_string(module.target_sandbox_version)}"
    sections: list[str] = [header + ";"]
    if module.capability_requests:
        sections.append(
            "\n".join(
                f"requires {quote_string(r.id)}"
                + (f" reason {quote_string(r.reason)}" if r.reason is not None else "")
                + ";"
                for r in module.capability_requests
            )
        )
    if module.metadata:
        sections.append(
            "\n".join(f"meta {quote_string(k)} = {quote_string(v)};" for k, v in sorted(module.metadata))
        )
    sections.extend(format_function(fn) for fn in module.functions)
    return "\n\n".join(sections) + "\n"


__all__ = ["format_expr", "format_function", "format_literal", "format_module", "format_name", "format_type"]
