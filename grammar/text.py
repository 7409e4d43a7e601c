"""Parse the readable text form (``kernel.lark``) into the typed AST.

The text form is a second spelling of wire format v1, not a second language: it must accept exactly
the modules the wire importer accepts and reject the rest with the same codes. So literal and
identifier rules come from ``dotboxd.grammar.literals`` (shared with ``wire``), every node gets the
JSON pointer it would have in the wire form (diagnostics compare across forms), and after the tree
is built its wire form is run through the wire scanner's budgets (depth, tokens, string sizes), so a
text module is never accepted when its JSON twin would be rejected.

Hostile input is bounded before any recursion: the source is capped at 1 MiB, the token stream at
100,000 tokens and 64 nested brackets (checked while lexing), and the parse tree's depth is
measured iteratively before the recursive tree-to-AST walk runs. Every failure is a DotBoxDError.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from importlib import resources
from typing import NoReturn

from lark import Lark, Token, Tree
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.lexer import PatternStr

from dotboxd.core import ast
from dotboxd.core.diagnostics import DotBoxDError, Span, reject
from dotboxd.grammar import jsonscan, literals
from dotboxd.grammar.wire import to_wire

I32_MIN, I32_MAX = -(2**31), 2**31 - 1
I64_MIN, I64_MAX = -(2**63), 2**63 - 1

MAX_SOURCE_BYTES = jsonscan.MAX_DOCUMENT_BYTES
MAX_TOKENS = jsonscan.MAX_TOKENS
MAX_BRACKET_DEPTH = jsonscan.MAX_DEPTH
MAX_TREE_DEPTH = 256
"""Recursion guard on the parse tree. A module within the wire's 64 levels and 64 nested brackets
needs at most about 2 * 64 + 64 tree levels, so this never rejects a module the wire accepts; it
stops only operator chains (``a+a+a+...``, ``!!!!x``) long enough to matter to the recursive walk."""

PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
"""Names that print without backticks (when they are not keywords); mirrors IDENT in kernel.lark."""

_OPENERS = frozenset({"LPAR", "LSQB", "LBRACE"})
_CLOSERS = frozenset({"RPAR", "RSQB", "RBRACE"})

_TERMINAL_WORDS: dict[str, str] = {
    "IDENT": "a name",
    "QUOTED_NAME": "a `quoted name`",
    "INT": "an integer",
    "LONG": "an I64 integer (42L)",
    "FLOAT": "an F64 number",
    "STRING": 'a "string"',
    "GUID": 'a guid"..." literal',
    "PATH": 'a path"..." literal',
    "URI": 'a uri"..." literal',
    "$END": "the end of the input",
}


# ---------------------------------------------------------------------------------------------
# The parser (built once)


class _Budget:
    """Lark post-lexer: counts tokens and bracket depth while lexing, so a token flood or a
    ``((((`` bomb fails at the first token past the budget instead of after a full parse."""

    always_accept: tuple[str, ...] = ()

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        depth = 0
        for count, token in enumerate(stream, 1):
            if count > MAX_TOKENS:
                raise reject(
                    "E-JSON-LIMIT",
                    f"the text has more than {MAX_TOKENS} tokens",
                    "",
                    _token_span(token),
                    "split the module or simplify it",
                    limit=MAX_TOKENS,
                )
            if token.type in _OPENERS:
                depth += 1
                if depth > MAX_BRACKET_DEPTH:
                    raise reject(
                        "E-JSON-LIMIT",
                        f"brackets nest deeper than {MAX_BRACKET_DEPTH} levels",
                        "",
                        _token_span(token),
                        "flatten the module; like the wire format, the text form allows 64 nested levels",
                        limit=MAX_BRACKET_DEPTH,
                    )
            elif token.type in _CLOSERS:
                depth -= 1
            yield token


@lru_cache(maxsize=1)
def _parser() -> Lark:
    grammar = resources.files("dotboxd.grammar").joinpath("kernel.lark").read_text(encoding="utf-8")
    return Lark(
        grammar,
        parser="lalr",
        lexer="basic",
        keep_all_tokens=True,
        propagate_positions=True,
        postlex=_Budget(),
    )


@lru_cache(maxsize=1)
def keywords() -> frozenset[str]:
    """The reserved words of the grammar (every literal terminal that looks like a plain name); a
    name equal to one of them must be written in backticks."""
    return frozenset(
        t.pattern.value
        for t in _parser().terminals
        if isinstance(t.pattern, PatternStr) and PLAIN_NAME.fullmatch(t.pattern.value)
    )


def is_plain_name(name: str) -> bool:
    """True when ``name`` can be written without backticks."""
    return PLAIN_NAME.fullmatch(name) is not None and name not in keywords()


def _token_span(token: Token) -> Span:
    return Span(token.line or 1, token.column or 1)


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
            _token_span(token),
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
    return Span(meta.line, meta.column)


_NUMERIC_LITERALS = frozenset({"int_lit", "long_lit", "float_lit"})


class _Builder:
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

    def name(self, token: Token, pointer: str, what: str, scan: bool = True) -> str:
        """A name token's text, checked with the wire's identifier rule (and the dangerous scan)."""
        text = _decode(token, 0, f"the quoted {what}") if token.type == "QUOTED_NAME" else str(token)
        span = _token_span(token)
        problem = literals.identifier_problem(text)
        if problem:
            self.fail("E-IR-ID", f"{what} {problem}", pointer, span, "identifiers must be non-blank")
        if scan:
            self.scan_dangerous(text, pointer, span, what)
        return text

    def scan_dangerous(self, text: str, pointer: str, span: Span, what: str) -> None:
        fragment = literals.dangerous_fragment(text)
        if fragment is not None:
            self.fail(
                "E-IR-CLR-REF",
                f"{what} contains the host-reference fragment {json.dumps(fragment)}",
                pointer,
                span,
                "kernels cannot name host types, assemblies or IL; expose host operations as bindings",
                fragment=fragment,
            )

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
        span = _token_span(token)
        problem = literals.identifier_problem(text)
        if problem:
            self.fail("E-IR-ID", f"{what} {problem}", pointer, span, "identifiers must be non-blank")
        self.scan_dangerous(text, pointer, span, what)
        return text

    def version(self, token: Token, pointer: str) -> str:
        text = self.string(token, "a version")
        canonical = literals.canonical_version(text)
        if canonical is None:
            self.fail(
                "E-JSON-VERSION",
                f"{json.dumps(text, ensure_ascii=False)} is not a version",
                pointer,
                _token_span(token),
                "write MAJOR.MINOR.PATCH (e.g. 1.0.0) or a bare major (1, v1)",
            )
        return canonical

    def request(self, tree: Tree[Token], pointer: str) -> ast.CapabilityRequest:
        span = self.note(pointer, _tree_span(tree))
        cap_id = self.identifier_string(_tokens(tree, "STRING")[0], f"{pointer}/id", "a capability id")
        reason: str | None = None
        for sub in _trees(tree):  # the optional `reason "..."` clause
            token = _tokens(sub, "STRING")[0]
            reason = self.string(token, "a reason")
            self.scan_dangerous(reason, f"{pointer}/reason", _token_span(token), "a reason")
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
                    _token_span(token),
                    "each metadata key may appear once",
                    property=key,
                )
            seen.add(key)

    def meta(self, tree: Tree[Token]) -> tuple[str, str]:
        key_token, value_token = _tokens(tree, "STRING")
        key = self.string(key_token, "a metadata key")
        pointer = f"/metadata/{_escape_pointer_token(key)}"
        key_span = _token_span(key_token)
        problem = literals.identifier_problem(key)
        if problem:
            self.fail("E-IR-ID", f"a metadata key {problem}", pointer, key_span)
        self.scan_dangerous(key, pointer, key_span, "a metadata key")
        value = self.string(value_token, "a metadata value")
        self.scan_dangerous(value, pointer, _token_span(value_token), "a metadata value")
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
                _token_span(token),
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
                _token_span(token),
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
        lo, hi = (I64_MIN, I64_MAX) if kind is ast.LiteralKind.I64 else (I32_MIN, I32_MAX)
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
        lit_kind, prefix_len, check = _STRING_LITERALS[kind]
        what = f"a {lit_kind.value} literal"
        text = _decode(token, prefix_len, what)
        value_pointer = f"{pointer}/{lit_kind.value}"
        if check is not None:
            code, rule = check
            problem = rule(text)
            if problem:
                self.fail(
                    code,
                    f"the {lit_kind.value} literal {json.dumps(text, ensure_ascii=False)} {problem}",
                    value_pointer,
                    span,
                )
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
        problem = literals.brand_problem(brand)
        if problem:
            self.fail(
                "E-JSON-OPAQUE",
                f"the opaque-id type {json.dumps(brand, ensure_ascii=False)} {problem}",
                type_pointer,
                _token_span(brand_token),
            )
        text = self.string(value_token, "an opaque-id value")
        problem = literals.opaque_value_problem(text)
        if problem:
            self.fail(
                "E-JSON-OPAQUE",
                f"the opaque-id value {json.dumps(text[:80], ensure_ascii=False)} {problem}",
                value_pointer,
                _token_span(value_token),
            )
        self.scan_dangerous(brand, type_pointer, _token_span(brand_token), "an opaque-id type")
        self.scan_dangerous(text, value_pointer, _token_span(value_token), "an opaque-id value")
        return ast.Literal(ast.LiteralKind.OPAQUE_ID, text, brand, pointer=pointer, span=span)


_BINARY_BY_SYMBOL: dict[str, ast.BinaryOp] = {sym: op for op, sym in ast.BINARY_SYMBOLS.items()}

_Check = tuple[str, Callable[[str], str | None]]
_STRING_LITERALS: dict[str, tuple[ast.LiteralKind, int, _Check | None]] = {
    "string_lit": (ast.LiteralKind.STRING, 0, None),
    "guid_lit": (ast.LiteralKind.GUID, len("guid"), ("E-JSON-GUID", literals.guid_problem)),
    "path_lit": (ast.LiteralKind.PATH, len("path"), ("E-JSON-PATH", literals.path_problem)),
    "uri_lit": (ast.LiteralKind.URI, len("uri"), ("E-JSON-URI", literals.uri_problem)),
}


# ---------------------------------------------------------------------------------------------
# Guards and errors


def _check_tree_depth(root: Tree[Token]) -> None:
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


def _check_wire_budgets(module: ast.Module, spans: dict[str, Span]) -> None:
    """Run the module's compact wire form through the wire scanner, so the text form never accepts
    a module whose JSON twin breaks a wire budget (depth 64, tokens, items, string bytes)."""
    text = json.dumps(to_wire(module), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        jsonscan.scan_document(text)
    except DotBoxDError as exc:
        d = exc.diagnostic
        pointer = d.pointer
        span = spans.get(pointer)
        probe = pointer
        while span is None and probe:
            probe = probe.rsplit("/", 1)[0]
            span = spans.get(probe)
        raise reject(
            d.code,
            f"the module's wire form breaks an import budget: {d.message}",
            pointer,
            span,
            d.hint,
            **dict(d.evidence),
        ) from None


def _describe_terminal(name: str) -> str:
    if name in _TERMINAL_WORDS:
        return _TERMINAL_WORDS[name]
    for terminal in _parser().terminals:
        if terminal.name == name and isinstance(terminal.pattern, PatternStr):
            return f"'{terminal.pattern.value}'"
    return name


def _describe_token(token: Token) -> str:
    if token.type == "$END":
        return "end of the input"
    if token.type in ("IDENT", "QUOTED_NAME", "INT", "LONG", "FLOAT"):
        return f"{_TERMINAL_WORDS[token.type].split(' (')[0]} {str(token)[:40]!r}"
    if token.type in _TERMINAL_WORDS:
        return _TERMINAL_WORDS[token.type]
    return f"'{token}'"


def _expected_list(names: set[str]) -> str:
    described = sorted({_describe_terminal(n) for n in names})
    if len(described) == 1:
        return described[0]
    return "one of " + ", ".join(described)


_GENERIC_CALL_ATTEMPT = re.compile(r"[A-Za-z0-9_`]\s*<\s*[A-Za-z_`][^;{}<>]*$")
_TRAILING_WORD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*$")


def _hint_for(expected: set[str], token: Token | None, before: str) -> str:
    """A hint for a syntax error; ``before`` is the source text up to the offending token."""
    keyword: str | None = None
    if token is not None and str(token) in keywords() and "IDENT" in expected:
        keyword = str(token)  # `fn if() ...`: a keyword where a name is due
    elif token is not None and token.type == "EQUAL":
        word = _TRAILING_WORD.search(before[-200:])  # `if = 1;`: assigning to a keyword
        if word is not None and word.group(1) in keywords():
            keyword = word.group(1)
    if keyword is not None:
        return f"'{keyword}' is a keyword; a name spelled like a keyword is written in backticks: `{keyword}`"
    if token is not None and token.type in ("LT", "LTE", "GT", "GTE", "EQ", "NE"):
        if _GENERIC_CALL_ATTEMPT.search(before[-200:]) and token.type == "GT":
            return "a generic call is written with brackets: list.empty[I32]()"
        return "comparisons do not chain; add parentheses: (a < b) == c"
    if "SEMICOLON" in expected:
        return "simple statements and declarations end with ';'"
    return "see spec/text-syntax.md for the grammar"


def _syntax_error(exc: UnexpectedInput, source: str) -> DotBoxDError:
    if isinstance(exc, UnexpectedCharacters):
        span = Span(exc.line, exc.column)
        ch = exc.char
        if ch in '"`':
            return reject(
                "E-TEXT-SYNTAX",
                "unterminated string or name: the closing quote is missing on this line",
                "",
                span,
                "a literal ends on the line where it starts; write line breaks as \\n",
            )
        shown = repr(ch) if ch.isprintable() else f"U+{ord(ch):04X}"
        return reject(
            "E-TEXT-SYNTAX",
            f"unexpected character {shown}",
            "",
            span,
            "names with other characters are written in backticks: `odd name`",
        )
    if isinstance(exc, UnexpectedToken):
        token = exc.token
        expected = set(exc.accepts or exc.expected)
        at_end = token.type == "$END"
        span = _end_span(source) if at_end else _token_span(token)
        before = source if at_end else source[: token.start_pos]
        message = f"unexpected {_describe_token(token)}; expected {_expected_list(expected)}"
        if "SEMICOLON" in expected and not at_end and _end_span(before).line < span.line:
            # A forgotten ';' is noticed on the next line; point at the end of the unfinished one.
            message = f"missing ';' (found {_describe_token(token)} on line {span.line}); expected " + (
                _expected_list(expected)
            )
            span = _end_span(before)
        return reject("E-TEXT-SYNTAX", message, "", span, _hint_for(expected, token, before))
    if isinstance(exc, UnexpectedEOF):
        expected = set(exc.expected)
        return reject(
            "E-TEXT-SYNTAX",
            f"unexpected end of the input; expected {_expected_list(expected)}",
            "",
            _end_span(source),
            _hint_for(expected, None, source),
        )
    return reject("E-TEXT-SYNTAX", "the text does not parse", "", Span(1, 1))


def _end_span(source: str) -> Span:
    """Just after the last non-blank character, so the caret excerpt shows where the text stops."""
    text = source.rstrip()
    lines = text.split("\n")
    return Span(len(lines), len(lines[-1]) + 1)


def _source_text(source: str | bytes, filename: str) -> str:
    """Decode and size-check the source (budgets before any parsing)."""
    if isinstance(source, bytes | bytearray | memoryview):
        raw = bytes(source)
        if len(raw) > MAX_SOURCE_BYTES:
            raise reject(
                "E-JSON-LIMIT",
                f"{filename} is {len(raw)} bytes; the limit is {MAX_SOURCE_BYTES}",
                "",
                Span(1, 1),
                limit=MAX_SOURCE_BYTES,
                actual=len(raw),
            )
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            prefix = raw[: exc.start].decode("utf-8")
            raise reject(
                "E-TEXT-SYNTAX",
                f"{filename} is not valid UTF-8 (byte {exc.start})",
                "",
                _offset_span(prefix, len(prefix)),
                "the text form is UTF-8 only",
            ) from None
    else:
        text = source
        if len(text) > MAX_SOURCE_BYTES:
            raise reject(
                "E-JSON-LIMIT",
                f"{filename} is more than {MAX_SOURCE_BYTES} bytes of UTF-8",
                "",
                Span(1, 1),
                limit=MAX_SOURCE_BYTES,
            )
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise reject(
                "E-TEXT-SYNTAX",
                f"{filename} contains a lone UTF-16 surrogate",
                "",
                _offset_span(text, exc.start),
            ) from None
        if size > MAX_SOURCE_BYTES:
            raise reject(
                "E-JSON-LIMIT",
                f"{filename} is {size} bytes of UTF-8; the limit is {MAX_SOURCE_BYTES}",
                "",
                Span(1, 1),
                limit=MAX_SOURCE_BYTES,
                actual=size,
            )
    if text.startswith("\ufeff"):
        raise reject(
            "E-TEXT-SYNTAX",
            f"{filename} starts with a byte-order mark",
            "",
            Span(1, 1),
            "save the file as UTF-8 without a BOM",
        )
    return text


def _offset_span(text: str, offset: int) -> Span:
    starts = [0] + [i + 1 for i, ch in enumerate(text[:offset]) if ch == "\n"]
    line = bisect.bisect_right(starts, offset)
    return Span(line, offset - starts[line - 1] + 1)


# ---------------------------------------------------------------------------------------------
# Public API


def parse_text(source: str | bytes, filename: str = "<text>") -> ast.Module:
    """Parse the readable text form into a Module (nodes carry wire pointers and text spans).

    ``filename`` only names the source in messages about the file as a whole (size, encoding).
    Raises DotBoxDError: E-TEXT-SYNTAX for text that does not parse, E-JSON-LIMIT for budgets, and
    the wire importer's codes (E-IR-ID, E-IR-CLR-REF, E-JSON-PATH, E-JSON-TYPE, ...) for bad names
    and literals. Never any other exception.
    """
    text = _source_text(source, filename)
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as exc:
        raise _syntax_error(exc, text) from None
    except LarkError as exc:  # no other Lark error is known to reach here; stay a diagnostic if one does
        raise reject("E-TEXT-SYNTAX", f"the text does not parse ({type(exc).__name__})", "", Span(1, 1)) from None
    _check_tree_depth(tree)
    builder = _Builder()
    module = builder.module(tree)
    _check_wire_budgets(module, builder.spans)
    return module


__all__ = ["is_plain_name", "keywords", "parse_text"]
