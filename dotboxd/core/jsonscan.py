"""A strict, budgeted JSON scanner that keeps the source offset of every value.

Why not ``json.loads``: it accepts NaN/Infinity, keeps the last of duplicate keys, recurses without
a depth limit, has no size budgets and forgets positions. Here every budget is checked while
scanning, before any model is built, so a 100,000-deep ``[[[[`` or a token flood fails fast with
``E-JSON-LIMIT`` and a hostile document never costs more than linear time.

The scanner is iterative (an explicit stack, no recursion) and tokenizes with one compiled regular
expression, so its Python-level work is proportional to the number of tokens, which is capped.

It lives in ``core`` (the lowest layer) because every JSON document the project reads goes
through it: the wire importer with the wire format's budgets (``WIRE_BUDGETS``), and policies,
binding manifests, run arguments, cache files, case files and protocol lines through
``dotboxd.core.jsonread`` with budgets of their own.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass
from typing import Generic, TypeVar

from dotboxd.core.bounded_text import bounded_text
from dotboxd.core.diagnostics import DotBoxDError, Span, reject

# Import budgets (wire format v1; DotBoxD's importer budgets).
MAX_DOCUMENT_BYTES = 1024 * 1024
MAX_DEPTH = 64
MAX_TOKENS = 100_000
MAX_ITEMS = 10_000
MAX_STRING_BYTES = 65_536
MAX_TOTAL_STRING_BYTES = 524_288


@dataclass(frozen=True, slots=True)
class JsonBudgets:
    """Every limit one kind of document is scanned under. ``lone_surrogates`` admits ``\\uD800``
    style escapes that pair with nothing (case files carry them as deliberately invalid inputs);
    the wire format refuses them."""

    max_document_bytes: int = MAX_DOCUMENT_BYTES
    max_depth: int = MAX_DEPTH
    max_tokens: int = MAX_TOKENS
    max_items: int = MAX_ITEMS
    max_string_bytes: int = MAX_STRING_BYTES
    max_total_string_bytes: int = MAX_TOTAL_STRING_BYTES
    lone_surrogates: bool = False


WIRE_BUDGETS = JsonBudgets()
"""The import budgets of wire format v1 (``spec/ir.md`` section 1)."""


_Leaf = TypeVar("_Leaf", str, bool)


class JValue:
    """Base of scanned values; ``offset`` is the character offset where the value starts."""

    __slots__ = ("offset",)

    def __init__(self, offset: int) -> None:
        self.offset = offset


class JObject(JValue):
    __slots__ = ("key_offsets", "members")

    def __init__(self, offset: int) -> None:
        super().__init__(offset)
        self.members: dict[str, JValue] = {}
        self.key_offsets: dict[str, int] = {}


class JArray(JValue):
    __slots__ = ("items",)

    def __init__(self, offset: int) -> None:
        super().__init__(offset)
        self.items: list[JValue] = []


class _JLeaf(JValue, Generic[_Leaf]):
    """A scalar that carries its decoded value (a string's text, a boolean's truth)."""

    __slots__ = ("value",)

    def __init__(self, offset: int, value: _Leaf) -> None:
        super().__init__(offset)
        self.value: _Leaf = value


class JString(_JLeaf[str]):
    __slots__ = ()


class JNumber(JValue):
    """A number kept as its lexeme: integers and floats are decided by the consumer's rules."""

    __slots__ = ("lexeme",)

    def __init__(self, offset: int, lexeme: str) -> None:
        super().__init__(offset)
        self.lexeme = lexeme

    @property
    def is_integer_lexeme(self) -> bool:
        return not any(c in self.lexeme for c in ".eE")


class JBool(_JLeaf[bool]):
    __slots__ = ()


class JNull(JValue):
    __slots__ = ()


def kind_name(value: JValue) -> str:
    """The JSON kind of a scanned value, for messages."""
    return {
        JObject: "object",
        JArray: "array",
        JString: "string",
        JNumber: "number",
        JBool: "boolean",
        JNull: "null",
    }[type(value)]


@dataclass(frozen=True, slots=True)
class Document:
    """A scanned document: the root value and a way to turn offsets into line:column."""

    root: JValue
    text: str
    line_starts: tuple[int, ...]

    def span(self, offset: int) -> Span:
        line = bisect.bisect_right(self.line_starts, offset)
        return Span(line, offset - self.line_starts[line - 1] + 1)


_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\n\r]+)
  | (?P<str>"[^"\\\x00-\x1f]*(?:\\.[^"\\\x00-\x1f]*)*")
  | (?P<num>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)
  | (?P<punct>[{}\[\]:,])
  | (?P<word>true|false|null)
    """,
    re.VERBOSE | re.DOTALL,
)
_ESCAPE = re.compile(r'\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})|(\\)')
_VALUE, _KEY, _AFTER = 0, 1, 2
_NUMBER_TAIL = re.compile(r"[A-Za-z0-9_.+\-]")


def _line_starts(text: str) -> tuple[int, ...]:
    starts = [0]
    find = text.find
    pos = find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = find("\n", pos + 1)
    return tuple(starts)


class _Scanner:
    def __init__(self, text: str, budgets: JsonBudgets) -> None:
        self.text = text
        self.budgets = budgets
        self.line_starts = _line_starts(text)
        self.tokens = 0
        self.total_string_bytes = 0
        # Each frame: the open container and, for objects, [the key being read] (for error pointers).
        self.stack: list[tuple[JValue, list[str]]] = []

    # -- errors ---------------------------------------------------------------------------------

    def span(self, offset: int) -> Span:
        line = bisect.bisect_right(self.line_starts, offset)
        return Span(line, offset - self.line_starts[line - 1] + 1)

    def pointer(self) -> str:
        """The JSON pointer of the value being scanned (for error locations)."""
        parts: list[str] = []
        depth = len(self.stack)
        for level, (container, path) in enumerate(self.stack):
            if isinstance(container, JArray):
                descended = level + 1 < depth
                parts.append(str(len(container.items) - (1 if descended else 0)))
            elif path:
                parts.append(path[0].replace("~", "~0").replace("/", "~1"))
        return "".join("/" + p for p in parts)

    def fail(self, code: str, message: str, offset: int, hint: str = "", **evidence: object) -> DotBoxDError:
        return reject(code, message, self.pointer(), self.span(offset), hint, **evidence)

    def invalid(self, message: str, offset: int, hint: str = "") -> DotBoxDError:
        return self.fail("E-JSON-INVALID", message, offset, hint)

    # -- budgets --------------------------------------------------------------------------------

    def count_token(self, offset: int) -> None:
        self.tokens += 1
        limit = self.budgets.max_tokens
        if self.tokens > limit:
            raise self.fail(
                "E-JSON-LIMIT",
                f"the document has more than {limit} JSON tokens",
                offset,
                "split the document or simplify it",
                limit=limit,
            )

    def decode_string(self, raw: str, offset: int) -> str:
        body = raw[1:-1]
        if "\\" in body:
            for m in _ESCAPE.finditer(body):
                if m.group(1) is not None:
                    raise self.invalid("invalid escape sequence in a string", offset + 1 + m.start())
            value: str = json.loads(raw)
            try:
                size = len(value.encode("utf-8"))
            except UnicodeEncodeError:
                if self.budgets.lone_surrogates:
                    size = len(value.encode("utf-8", "surrogatepass"))
                else:
                    raise self.invalid(
                        "a string contains a lone UTF-16 surrogate escape",
                        offset,
                        "strings must be valid Unicode; pair high and low surrogates",
                    ) from None
        else:
            value = body
            size = len(body) if body.isascii() else len(body.encode("utf-8"))
        budgets = self.budgets
        if size > budgets.max_string_bytes:
            raise self.fail(
                "E-JSON-LIMIT",
                f"a string is {size} UTF-8 bytes; the limit is {budgets.max_string_bytes}",
                offset,
                limit=budgets.max_string_bytes,
                actual=size,
            )
        self.total_string_bytes += size
        if self.total_string_bytes > budgets.max_total_string_bytes:
            raise self.fail(
                "E-JSON-LIMIT",
                f"all strings together exceed {budgets.max_total_string_bytes} UTF-8 bytes",
                offset,
                limit=budgets.max_total_string_bytes,
            )
        return value

    # -- the scan -------------------------------------------------------------------------------

    def scan(self) -> JValue:
        """One loop over tokens with three states: VALUE (a value is due), KEY (a property name or,
        for an empty object, '}' is due) and AFTER (',' or the matching closer is due)."""
        text = self.text
        end = len(text)
        match = _TOKEN.match
        stack = self.stack
        pos = 0
        root: JValue | None = None
        max_depth = self.budgets.max_depth
        state = _VALUE
        after_comma = False
        while pos < end:
            m = match(text, pos)
            if m is None:
                raise self._unexpected(pos)
            kind = m.lastgroup
            start = pos
            pos = m.end()
            if kind == "ws":
                continue
            token = m.group(0)
            if state == _KEY:
                if kind == "str":
                    self.count_token(start)
                    self._begin_member(self.decode_string(token, start), start)
                    pos = self._expect_colon(pos)
                    state = _VALUE
                    after_comma = False
                    continue
                if token == "}" and not after_comma:
                    self._close(start)
                    state = _AFTER
                    continue
                raise self._unexpected(start, after_comma=after_comma and token == "}")
            if state == _VALUE:
                if kind == "punct" and token in "{[":
                    self.count_token(start)
                    if len(stack) >= max_depth:
                        raise self.fail(
                            "E-JSON-LIMIT",
                            f"nesting is deeper than {max_depth} levels",
                            start,
                            f"flatten the document; at most {max_depth} arrays/objects may nest",
                            limit=max_depth,
                        )
                    container: JValue = JObject(start) if token == "{" else JArray(start)
                    if stack:
                        self._attach(container, start)
                    else:
                        root = container
                    stack.append((container, []))
                    state = _KEY if token == "{" else _VALUE
                    after_comma = False
                    continue
                if token == "]" and stack and isinstance(stack[-1][0], JArray) and not after_comma:
                    if stack[-1][0].items:
                        raise self._unexpected(start)
                    self._close(start)
                    state = _AFTER
                    continue
                value = self._scalar(kind, token, start, pos)
                if stack:
                    self._attach(value, start)
                elif root is None:
                    root = value
                else:
                    raise self.invalid("unexpected data after the end of the JSON document", start)
                state = _AFTER
                after_comma = False
                continue
            # state == _AFTER
            if not stack:
                raise self.invalid("unexpected data after the end of the JSON document", start)
            top = stack[-1][0]
            if token == ",":
                state = _VALUE if isinstance(top, JArray) else _KEY
                after_comma = True
                if isinstance(top, JArray):
                    stack[-1][1][:] = []
                continue
            if (token == "]" and isinstance(top, JArray)) or (token == "}" and isinstance(top, JObject)):
                self._close(start)
                continue
            raise self._unexpected(start)
        if stack:
            opened = stack[-1][0]
            what = "object" if isinstance(opened, JObject) else "array"
            closer = "}" if isinstance(opened, JObject) else "]"
            where = self.span(opened.offset)
            others = len(stack) - 1
            more = {0: "", 1: " (and the one around it)"}.get(others, f" (and the {others} around it)")
            raise self.fail(
                "E-JSON-INVALID",
                f"the document ends inside the {what} opened at line {where.line}, column {where.column}{more}",
                end,
                f"the document looks truncated: close the {what} with '{closer}'",
                opened=str(where),
            )
        if root is None or state != _AFTER:
            raise self.invalid("the document is empty" if root is None else "the document ends early", end)
        return root

    def _scalar(self, kind: str | None, token: str, start: int, pos: int) -> JValue:
        if kind == "str":
            self.count_token(start)
            return JString(start, self.decode_string(token, start))
        if kind == "num":
            if pos < len(self.text) and _NUMBER_TAIL.match(self.text, pos):
                raise self._unexpected(start)
            self.count_token(start)
            return JNumber(start, token)
        if kind == "word":
            self.count_token(start)
            return JNull(start) if token == "null" else JBool(start, token == "true")
        raise self._unexpected(start, after_comma=token in "]}")

    def _begin_member(self, key: str, start: int) -> None:
        container, path = self.stack[-1]
        assert isinstance(container, JObject)
        path[:] = [key]
        if key in container.members:
            raise self.fail(
                "E-JSON-SCHEMA",
                f"duplicate property {json.dumps(key, ensure_ascii=False)}",
                start,
                "each property may appear once; the importer never keeps 'the last one'",
                property=key,
            )
        limit = self.budgets.max_items
        if len(container.members) >= limit:
            raise self.fail("E-JSON-LIMIT", f"an object has more than {limit} properties", start, limit=limit)
        container.key_offsets[key] = start

    def _close(self, start: int) -> None:
        self.count_token(start)
        self.stack.pop()

    def _attach(self, value: JValue, offset: int) -> None:
        if not self.stack:
            return
        container, path = self.stack[-1]
        if isinstance(container, JArray):
            limit = self.budgets.max_items
            if len(container.items) >= limit:
                raise self.fail("E-JSON-LIMIT", f"an array has more than {limit} items", offset, limit=limit)
            container.items.append(value)
            path[:] = []
        else:
            assert isinstance(container, JObject)
            container.members[path[0]] = value

    def _expect_colon(self, pos: int) -> int:
        text = self.text
        while pos < len(text) and text[pos] in " \t\n\r":
            pos += 1
        if pos < len(text) and text[pos] == ":":
            return pos + 1
        raise self.invalid("expected ':' after a property name", pos)

    def _unexpected(self, pos: int, after_comma: bool = False) -> DotBoxDError:
        text = self.text
        if pos >= len(text):
            return self.invalid("the document ends unexpectedly", pos)
        ch = text[pos]
        if after_comma:
            return self.invalid("trailing comma", pos, "remove the comma before the closing bracket")
        if text.startswith(("//", "/*"), pos):
            return self.invalid("comments are not allowed in JSON", pos)
        for word in ("NaN", "Infinity", "-Infinity"):
            if text.startswith(word, pos):
                return self.invalid(f"{word} is not a JSON number", pos, "f64 literals must be finite")
        if ch == "'":
            return self.invalid("strings must use double quotes", pos)
        if ch == '"':
            return self.invalid("unterminated string or raw control character in a string", pos)
        return self.invalid(f"unexpected character {ch!r}", pos)


def scan_document(data: bytes | str, budgets: JsonBudgets = WIRE_BUDGETS) -> Document:
    """Scan ``data`` strictly under ``budgets`` (default: the wire format's). Raises DotBoxDError
    (E-JSON-INVALID / E-JSON-LIMIT / E-JSON-SCHEMA)."""
    text = bounded_text(
        data,
        budgets.max_document_bytes,
        what="the document",
        invalid_code="E-JSON-INVALID",
        utf8_hint="JSON documents are UTF-8 only",
    )
    scanner = _Scanner(text, budgets)
    root = scanner.scan()
    return Document(root, text, scanner.line_starts)
