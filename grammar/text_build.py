"""Turn the text form's parse tree into the typed AST, with wire pointers and text spans.

Every name and literal is checked here with the wire importer's rules (``dotboxd.grammar.literals``)
and reported with the wire's code and pointer, so one bad literal reads the same in both forms. The
walk is recursive, so ``check_tree_depth`` (iterative) must accept the tree first.
"""

from __future__ import annotations

import json
import math
import re
from typing import NoReturn

from lark import Token, Tree

from dotboxd.core import ast
from dotboxd.core.diagnostics import Span, reject
from dotboxd.grammar import jsonscan, literals
from dotboxd.grammar.text_syntax import token_span

MAX_TREE_DEPTH = 256
"""Recursion guard on the parse tree. A module within the wire's 64 levels and 64 nested brackets
needs at most about 2 * 64 + 64 tree levels, so this never rejects a module the wire accepts; it
stops only operator chains (``a+a+a+...``, ``!!!!x``) long enough to matter to the recursive walk."""


# ---------------------------------------------------------------------------------------------
# String and name decoding (JSON escapes; backtick names also allow \`)

_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)", re.DOTALL)
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_RAW_CONTROL = re.compile(r"[\x00-\x1f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _decode(token: Token, prefix_len: int, what: str) -> str:
    """The value of a quoted token (``"..."``, ``path"..."``, `` `...` ``) with the wire's string
    rules: no raw control characters, JSON escapes only, no lone surrogates, <= 65,536 UTF-8 bytes."""
    raw = str(token)
    body_start = prefix_len + 1
    body = raw[body_start:-1]
    quote = raw[prefix_len]

    def fail_at(offset: int, message: str, hint: str = "") -> NoReturn:
        span = Span(token.line or 1, (token.column or 1) + body_start + offset)
        raise reject("E-TEXT-SYNTAX", message, "", span, hint)

    control = _RAW_CONTROL.search(body)
    if control is not None:
        fail_at(
            control.start(),
            f"{what} contains the raw control character U+{ord(control.group()):04X}",
            "write control characters as escapes (\\t, \\u0001)",
        )
    if "\\" in body:
        parts: list[str] = []
        last = 0
        for m in _ESCAPE.finditer(body):
            parts.append(body[last : m.start()])
            last = m.end()
            esc = m.group(1)
            if esc.startswith("u") and len(esc) == 5:
                parts.append(chr(int(esc[1:], 16)))
            elif esc in _SIMPLE_ESCAPES:
                parts.append(_SIMPLE_ESCAPES[esc])
            elif esc == quote:
                parts.append(esc)
            else:
                fail_at(
                    m.start(),
                    f"invalid escape sequence {json.dumps(m.group(0))} in {what}",
                    'escapes are \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX' + (" \\`" if quote == "`" else ""),
                )
        parts.append(body[last:])
        value = "".join(parts)
        if _SURROGATE.search(value):
            try:
                value = value.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
            except UnicodeDecodeError:
                fail_at(
                    0,
                    f"{what} contains a lone UTF-16 surrogate escape",
                    "strings must be valid Unicode; pair high and low surrogates",
                )
    else:
        value = body
    size = len(value) if value.isascii() else len(value.encode("utf-8"))
    if size > jsonscan.MAX_STRING_BYTES:
        raise reject(
            "E-JSON-LIMIT",
            f"{what} is {size} UTF-8 bytes; the limit is {jsonscan.MAX_STRING_BYTES}",
            "",
            token_span(token),
            limit=jsonscan.MAX_STRING_BYTES,
            actual=size,
        )
    return value


# ---------------------------------------------------------------------------------------------
# Tree -> AST


def _escape_pointer_token(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _trees(tree: Tree[Token]) -> list[Tree[Token]]:
    return [c for c in tree.children if isinstance(c, Tree)]


def _name_tokens(tree: Tree[Token]) -> list[Token]:
    return [c for c in tree.children if isinstance(c, Token) and c.type in ("IDENT", "QUOTED_NAME")]


def _tokens(tree: Tree[Token], kind: str) -> list[Token]:
    return [c for c in tree.children if isinstance(c, Token) and c.type == kind]


def _tree_span(tree: Tree[Token]) -> Span:
    meta = tree.meta
    if meta.empty:
        return Span(1, 1)
    # the whole construct is underlined when it fits on its line
    end = meta.end_column if meta.end_line == meta.line else 0
    return Span(meta.line, meta.column, end)


_NUMERIC_LITERALS = frozenset({"int_lit", "long_lit", "float_lit"})


class TreeBuilder:
    """Turns the (depth-checked) parse tree into AST nodes with wire pointers and text spans."""

    def __init__(self) -> None:
        # pointer -> span of every node built, to place the errors of the wire-budget check.
        self.spans: dict[str, Span] = {}

    # -- helpers --------------------------------------------------------------------------------

    def note(self, pointer: str, span: Span) -> Span:
        self.spans[pointer] = span
        return span

    def fail(
        self, code: str, message: str, pointer: str, span: Span, hint: str = "", **evidence: object
    ) -> NoReturn:
        raise reject(code, message, pointer, span, hint, **evidence)

    def raise_issue(self, issue: literals.Issue | None, pointer: str, span: Span) -> None:
        """Raise a shared literal/identifier issue (if any) at this pointer and span."""
        if issue is not None:
            self.fail_issue(issue, pointer, span)

    def fail_issue(self, issue: literals.Issue, pointer: str, span: Span) -> NoReturn:
        self.fail(issue.code, issue.message, pointer, span, issue.hint, **issue.evidence)

    def name(self, token: Token, pointer: str, what: str, scan: bool = True) -> str:
        """A name token's text, checked with the wire's identifier rule (and the dangerous scan)."""
        text = _decode(token, 0, f"the quoted {what}") if token.type == "QUOTED_NAME" else str(token)
        span = token_span(token)
        self.raise_issue(literals.identifier_issue(text, what), pointer, span)
        if scan:
            self.scan_dangerous(text, pointer, span, what)
        return text

    def scan_dangerous(self, text: str, pointer: str, span: Span, what: str) -> None:
        self.raise_issue(literals.dangerous_issue(text, what), pointer, span)

    def string(self, token: Token, what: str) -> str:
        return _decode(token, 0, what)

    # -- module ---------------------------------------------------------------------------------

    def module(self, tree: Tree[Token]) -> ast.Module:
        header, *items = _trees(tree)
        span = self.note("", _tree_span(header))
        id_token, version_token = _tokens(header, "STRING")
        module_id = self.identifier_string(id_token, "/id", "the module id")
        version = self.version(version_token, "/version")
        target = ast.DEFAULT_TARGET_VERSION
        for sub in _trees(header):  # the optional `target "..."` clause
            target = self.version(_tokens(sub, "STRING")[0], "/targetSandboxVersion")
        requests = [t for t in items if t.data == "request"]
        metas = [t for t in items if t.data == "meta"]
        functions = [t for t in items if t.data == "function"]
        self.check_duplicate_meta(metas)
        built_requests = tuple(self.request(t, f"/capabilityRequests/{i}") for i, t in enumerate(requests))
        built_functions = tuple(self.function(t, f"/functions/{i}") for i, t in enumerate(functions))
        metadata = tuple(sorted(self.meta(t) for t in metas))
        return ast.Module(
            module_id,
            version,
            target,
            built_requests,
            built_functions,
            metadata,
            pointer="",
            span=span,
        )

    def identifier_string(self, token: Token, pointer: str, what: str) -> str:
        """A header id written as a string (module id, capability id, metadata key)."""
        text = self.string(token, what)
        span = token_span(token)
        self.raise_issue(literals.identifier_issue(text, what), pointer, span)
        self.scan_dangerous(text, pointer, span, what)
        return text

    def version(self, token: Token, pointer: str) -> str:
        text = self.string(token, "a version")
        canonical = literals.canonical_version(text)
        if canonical is None:
            self.fail_issue(literals.version_issue(text), pointer, token_span(token))
        return canonical

    def request(self, tree: Tree[Token], pointer: str) -> ast.CapabilityRequest:
        span = self.note(pointer, _tree_span(tree))
        cap_id = self.identifier_string(_tokens(tree, "STRING")[0], f"{pointer}/id", "a capability id")
        reason: str | None = None
        for sub in _trees(tree):  # the optional `reason "..."` clause
            token = _tokens(sub, "STRING")[0]
            reason = self.string(token, "a reason")
            self.scan_dangerous(reason, f"{pointer}/reason", token_span(token), "a reason")
        return ast.CapabilityRequest(cap_id, reason, pointer=pointer, span=span)

    def check_duplicate_meta(self, metas: list[Tree[Token]]) -> None:
        seen: set[str] = set()
        for tree in metas:
            token = _tokens(tree, "STRING")[0]
            key = self.string(token, "a metadata key")
            if key in seen:
                self.fail(
                    "E-JSON-SCHEMA",
                    f"duplicate metadata key {json.dumps(key, ensure_ascii=False)}",
                    f"/metadata/{_escape_pointer_token(key)}",
                    token_span(token),
                    "each metadata key may appear once",
                    property=key,
                )
            seen.add(key)

    def meta(self, tree: Tree[Token]) -> tuple[str, str]:
        key_token, value_token = _tokens(tree, "STRING")
        key = self.string(key_token, "a metadata key")
        pointer = f"/metadata/{_escape_pointer_token(key)}"
        key_span = token_span(key_token)
        self.raise_issue(literals.identifier_issue(key, "a metadata key"), pointer, key_span)
        self.scan_dangerous(key, pointer, key_span, "a metadata key")
        value = self.string(value_token, "a metadata value")
        self.scan_dangerous(value, pointer, token_span(value_token), "a metadata value")
        return key, value

    # -- functions and types --------------------------------------------------------------------

    def function(self, tree: Tree[Token], pointer: str) -> ast.Function:
        span = self.note(pointer, _tree_span(tree))
        visibility_tree, params_tree, return_tree, block_tree = _trees(tree)
        fn_id = self.name(_name_tokens(tree)[0], f"{pointer}/id", "a function id")
        visibility = (
            ast.Visibility.ENTRYPOINT if visibility_tree.data == "entrypoint" else ast.Visibility.PRIVATE
        )
        params = tuple(self.param(t, f"{pointer}/parameters/{i}") for i, t in enumerate(_trees(params_tree)))
        return_type = self.type_ref(return_tree, f"{pointer}/returnType")
        body = self.block(block_tree, f"{pointer}/body")
        return ast.Function(fn_id, visibility, params, return_type, body, pointer=pointer, span=span)

    def param(self, tree: Tree[Token], pointer: str) -> ast.Param:
        span = self.note(pointer, _tree_span(tree))
        name = self.name(_name_tokens(tree)[0], f"{pointer}/name", "a parameter name")
        return ast.Param(name, self.type_ref(_trees(tree)[0], f"{pointer}/type"), pointer=pointer, span=span)

    def type_ref(self, tree: Tree[Token], pointer: str) -> ast.TypeRef:
        span = self.note(pointer, _tree_span(tree))
        token = _name_tokens(tree)[0]
        args_trees = _trees(tree)
        name_pointer = f"{pointer}/name" if args_trees else pointer
        name = self.name(token, name_pointer, "a type name", scan=False)
        if "<" in name or ">" in name:
            self.fail(
                "E-JSON-TYPE",
                f"type {json.dumps(name, ensure_ascii=False)} uses '<' or '>'",
                name_pointer,
                token_span(token),
                "write generic types as Name<Argument, ...>",
            )
        args = tuple(self.type_ref(t, f"{pointer}/arguments/{i}") for i, t in enumerate(args_trees))
        return ast.TypeRef(name, args, pointer=pointer, span=span)

    # -- statements -----------------------------------------------------------------------------

    def block(self, tree: Tree[Token], pointer: str) -> tuple[ast.Stmt, ...]:
        return tuple(self.statement(t, f"{pointer}/{i}") for i, t in enumerate(_trees(tree)))

    def statement(self, tree: Tree[Token], pointer: str) -> ast.Stmt:
        span = self.note(pointer, _tree_span(tree))
        kind = tree.data
        subs = _trees(tree)
        if kind == "set_stmt":
            name = self.name(_name_tokens(tree)[0], f"{pointer}/name", "a local name")
            return ast.Set(name, self.expr(subs[0], f"{pointer}/value"), pointer=pointer, span=span)
        if kind == "return_stmt":
            return ast.Return(self.expr(subs[0], f"{pointer}/value"), pointer=pointer, span=span)
        if kind == "expr_stmt":
            return ast.ExprStmt(self.expr(subs[0], f"{pointer}/value"), pointer=pointer, span=span)
        if kind == "if_stmt":
            condition = self.expr(subs[0], f"{pointer}/condition")
            then = self.block(subs[1], f"{pointer}/then")
            else_: tuple[ast.Stmt, ...] = ()
            if len(subs) == 3:
                (target,) = _trees(subs[2])
                if target.data == "block":
                    else_ = self.block(target, f"{pointer}/else")
                else:  # `else if ...`: an else block holding exactly that if statement
                    else_ = (self.statement(target, f"{pointer}/else/0"),)
            return ast.If(condition, then, else_, pointer=pointer, span=span)
        if kind == "while_stmt":
            condition = self.expr(subs[0], f"{pointer}/condition")
            return ast.While(condition, self.block(subs[1], f"{pointer}/body"), pointer=pointer, span=span)
        if kind == "for_stmt":
            local = self.name(_name_tokens(tree)[0], f"{pointer}/local", "a loop local")
            start = self.expr(subs[0], f"{pointer}/start")
            end = self.expr(subs[1], f"{pointer}/end")
            body = self.block(subs[2], f"{pointer}/body")
            return ast.ForRange(local, start, end, body, pointer=pointer, span=span)
        if kind == "continue_stmt":
            return ast.Continue(pointer=pointer, span=span)
        if kind == "break_stmt":
            return ast.Break(pointer=pointer, span=span)
        raise AssertionError(f"unexpected statement tree {kind}")  # the grammar has no other

    # -- expressions ----------------------------------------------------------------------------

    def expr(self, tree: Tree[Token], pointer: str) -> ast.Expr:
        kind = tree.data
        if kind == "paren":  # parentheses group; they add no node of their own
            return self.expr(_trees(tree)[0], pointer)
        span = self.note(pointer, _tree_span(tree))
        if kind == "binary":
            left_tree, op_token, right_tree = tree.children
            assert (
                isinstance(left_tree, Tree) and isinstance(op_token, Token) and isinstance(right_tree, Tree)
            )
            op = _BINARY_BY_SYMBOL[str(op_token)]
            left = self.expr(left_tree, f"{pointer}/left")
            right = self.expr(right_tree, f"{pointer}/right")
            return ast.Binary(op, left, right, pointer=pointer, span=span)
        if kind == "not_expr":
            operand = self.expr(_trees(tree)[0], f"{pointer}/operand")
            return ast.Unary(ast.UnaryOp.NOT, operand, pointer=pointer, span=span)
        if kind == "neg_expr":
            operand_tree = _trees(tree)[0]
            if operand_tree.data in _NUMERIC_LITERALS:  # `-5` is the literal -5, `-(5)` is negation
                return self.number(operand_tree, pointer, span, negative=True)
            operand = self.expr(operand_tree, f"{pointer}/operand")
            return ast.Unary(ast.UnaryOp.NEG, operand, pointer=pointer, span=span)
        if kind == "var":
            name = self.name(_name_tokens(tree)[0], f"{pointer}/var", "a variable name")
            return ast.Var(name, pointer=pointer, span=span)
        if kind == "call":
            return self.call(tree, pointer, span)
        return self.literal(tree, pointer, span)

    def call(self, tree: Tree[Token], pointer: str, span: Span) -> ast.Call:
        name = self.name(_name_tokens(tree)[0], f"{pointer}/call", "a call name")
        subs = {sub.data: sub for sub in _trees(tree)}  # "args" and the optional "generic"
        args = tuple(self.expr(t, f"{pointer}/args/{i}") for i, t in enumerate(_trees(subs["args"])))
        generic: ast.TypeRef | None = None
        if "generic" in subs:
            generic = self.type_ref(_trees(subs["generic"])[0], f"{pointer}/genericType")
        return ast.Call(name, args, generic, pointer=pointer, span=span)

    def number(self, tree: Tree[Token], pointer: str, span: Span, negative: bool = False) -> ast.Literal:
        token = tree.children[0]
        assert isinstance(token, Token)
        lexeme = str(token)
        digits = lexeme.rstrip("L")
        if len(digits) > 1 and digits[0] == "0" and digits[1].isdigit():
            self.fail(
                "E-TEXT-SYNTAX",
                f"the number {lexeme[:40]} has a leading zero",
                "",
                token_span(token),
                "write numbers without leading zeros (as in JSON)",
            )
        sign = "-" if negative else ""
        if tree.data == "float_lit":
            value = float(lexeme)
            if negative:
                value = -value
            if not math.isfinite(value):
                self.fail(
                    "E-JSON-TYPE",
                    f"{sign}{lexeme[:40]} is not a finite f64 (it overflows to infinity)",
                    f"{pointer}/f64",
                    span,
                    "f64 literals must lie within +-1.7976931348623157e308",
                )
            return ast.Literal(ast.LiteralKind.F64, value, pointer=pointer, span=span)
        kind = ast.LiteralKind.I64 if tree.data == "long_lit" else ast.LiteralKind.I32
        lo, hi = literals.integer_bounds(kind)
        number = int(digits) if len(digits) <= 20 else None
        if number is not None and negative:
            number = -number
        if number is None or not lo <= number <= hi:
            self.fail(
                "E-JSON-TYPE",
                f"{sign}{digits[:40]} is out of range for {kind.value} [{lo}, {hi}]",
                f"{pointer}/{kind.value}",
                span,
                minimum=lo,
                maximum=hi,
            )
        return ast.Literal(kind, number, pointer=pointer, span=span)

    def literal(self, tree: Tree[Token], pointer: str, span: Span) -> ast.Literal:
        kind = tree.data
        if kind in _NUMERIC_LITERALS:
            return self.number(tree, pointer, span)
        if kind == "true_lit" or kind == "false_lit":
            return ast.Literal(ast.LiteralKind.BOOL, kind == "true_lit", pointer=pointer, span=span)
        if kind == "unit_lit":
            return ast.Literal(ast.LiteralKind.UNIT, None, pointer=pointer, span=span)
        if kind == "opaque_lit":
            return self.opaque(tree, pointer, span)
        token = tree.children[0]
        assert isinstance(token, Token)
        lit_kind, prefix_len = _STRING_LITERALS[kind]
        what = f"a {lit_kind.value} literal"
        text = _decode(token, prefix_len, what)
        value_pointer = f"{pointer}/{lit_kind.value}"
        self.raise_issue(literals.text_literal_issue(lit_kind, text), value_pointer, span)
        self.scan_dangerous(text, value_pointer, span, what)
        if lit_kind is ast.LiteralKind.GUID:
            text = text.lower()
        return ast.Literal(lit_kind, text, pointer=pointer, span=span)

    def opaque(self, tree: Tree[Token], pointer: str, span: Span) -> ast.Literal:
        brand_token = _name_tokens(tree)[0]
        value_token = _tokens(tree, "STRING")[0]
        brand = (
            _decode(brand_token, 0, "the quoted opaque-id type")
            if brand_token.type == "QUOTED_NAME"
            else str(brand_token)
        )
        type_pointer = f"{pointer}/opaqueId/type"
        value_pointer = f"{pointer}/opaqueId/value"
        self.raise_issue(literals.brand_issue(brand), type_pointer, token_span(brand_token))
        text = self.string(value_token, "an opaque-id value")
        self.raise_issue(literals.opaque_value_issue(text), value_pointer, token_span(value_token))
        self.scan_dangerous(brand, type_pointer, token_span(brand_token), "an opaque-id type")
        self.scan_dangerous(text, value_pointer, token_span(value_token), "an opaque-id value")
        return ast.Literal(ast.LiteralKind.OPAQUE_ID, text, brand, pointer=pointer, span=span)


_BINARY_BY_SYMBOL: dict[str, ast.BinaryOp] = {sym: op for op, sym in ast.BINARY_SYMBOLS.items()}

# parse-tree rule -> (literal kind, length of the prefix before the opening quote)
_STRING_LITERALS: dict[str, tuple[ast.LiteralKind, int]] = {
    "string_lit": (ast.LiteralKind.STRING, 0),
    "guid_lit": (ast.LiteralKind.GUID, len("guid")),
    "path_lit": (ast.LiteralKind.PATH, len("path")),
    "uri_lit": (ast.LiteralKind.URI, len("uri")),
}


def check_tree_depth(root: Tree[Token]) -> None:
    """Iteratively reject parse trees deeper than MAX_TREE_DEPTH before the recursive walk."""
    stack: list[tuple[Tree[Token], int]] = [(root, 1)]
    while stack:
        tree, depth = stack.pop()
        if depth > MAX_TREE_DEPTH:
            raise reject(
                "E-JSON-LIMIT",
                f"the module nests deeper than {MAX_TREE_DEPTH} syntax levels",
                "",
                _tree_span(tree),
                "split long operator chains with locals; the wire form allows 64 nested levels",
                limit=MAX_TREE_DEPTH,
            )
        for child in tree.children:
            if isinstance(child, Tree):
                stack.append((child, depth + 1))
