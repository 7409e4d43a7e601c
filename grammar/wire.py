"""Strict import of the JSON wire format (v1) into the typed AST, and the way back.

``import_module`` accepts bytes or text, scans it with the budgeted scanner (``jsonscan``), then
walks the scanned values with the exact shape rules of wire format v1 (``spec/ir.md``): every
object allows only its listed properties, every required property must be present, every value
must have the right JSON kind, and every literal must satisfy its rule. The first violation is
raised as a DotBoxDError carrying its JSON pointer and line:column. ``to_wire`` is the inverse.
"""

from __future__ import annotations

import json
import math
from typing import Any, NoReturn, TypeVar

from dotboxd.core import ast
from dotboxd.core.diagnostics import DotBoxDError, reject
from dotboxd.grammar import literals
from dotboxd.grammar.jsonscan import (
    Document,
    JArray,
    JBool,
    JNumber,
    JObject,
    JString,
    JValue,
    kind_name,
    scan_document,
)

_Choice = TypeVar("_Choice", ast.Visibility, ast.UnaryOp, ast.BinaryOp)

STATEMENT_OPS = ("set", "return", "expr", "if", "while", "forRange", "continue", "break")
_STATEMENT_KEYS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    # op: (required keys besides "op", optional keys)
    "set": (frozenset({"name", "value"}), frozenset()),
    "return": (frozenset({"value"}), frozenset()),
    "expr": (frozenset({"value"}), frozenset()),
    "if": (frozenset({"condition", "then"}), frozenset({"else"})),
    "while": (frozenset({"condition", "body"}), frozenset()),
    "forRange": (frozenset({"local", "start", "end", "body"}), frozenset()),
    "continue": (frozenset(), frozenset()),
    "break": (frozenset(), frozenset()),
}
_LITERAL_KEYS = frozenset(k.value for k in ast.LiteralKind)


def _escape_pointer_token(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


class _Builder:
    """Walks a scanned document and builds AST nodes, failing on the first violation."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc

    # -- failure helpers ------------------------------------------------------------------------

    def fail(
        self, code: str, message: str, pointer: str, offset: int, hint: str = "", **evidence: Any
    ) -> NoReturn:
        raise reject(code, message, pointer, self.doc.span(offset), hint, **evidence)

    def raise_issue(self, issue: literals.Issue | None, pointer: str, offset: int) -> None:
        """Raise a shared literal/identifier issue (if any) at this pointer and offset."""
        if issue is not None:
            self.fail_issue(issue, pointer, offset)

    def fail_issue(self, issue: literals.Issue, pointer: str, offset: int) -> NoReturn:
        self.fail(issue.code, issue.message, pointer, offset, issue.hint, **issue.evidence)

    def expect_object(self, value: JValue, pointer: str, what: str) -> JObject:
        if not isinstance(value, JObject):
            self.fail(
                "E-JSON-TYPE", f"{what} must be an object, not {kind_name(value)}", pointer, value.offset
            )
        return value

    def expect_array(self, value: JValue, pointer: str, what: str) -> JArray:
        if not isinstance(value, JArray):
            self.fail(
                "E-JSON-TYPE", f"{what} must be an array, not {kind_name(value)}", pointer, value.offset
            )
        return value

    def expect_string(self, value: JValue, pointer: str, what: str) -> str:
        if not isinstance(value, JString):
            self.fail(
                "E-JSON-TYPE", f"{what} must be a string, not {kind_name(value)}", pointer, value.offset
            )
        return value.value

    def check_keys(
        self, obj: JObject, pointer: str, what: str, required: frozenset[str], optional: frozenset[str]
    ) -> None:
        for key in obj.members:
            if key not in required and key not in optional:
                allowed = ", ".join(sorted(required | optional))
                self.fail(
                    "E-JSON-SCHEMA",
                    f"unknown property {json.dumps(key, ensure_ascii=False)} in {what}",
                    f"{pointer}/{_escape_pointer_token(key)}",
                    obj.key_offsets[key],
                    f"{what} allows only: {allowed}",
                    property=key,
                )
        for key in sorted(required):
            if key not in obj.members:
                self.fail(
                    "E-JSON-MISSING",
                    f"{what} is missing the required property {json.dumps(key)}",
                    pointer,
                    obj.offset,
                    property=key,
                )

    def identifier(self, value: JValue, pointer: str, what: str, scan: bool = True) -> str:
        text = self.expect_string(value, pointer, what)
        self.raise_issue(literals.identifier_issue(text, what), pointer, value.offset)
        if scan:
            self.scan_dangerous(text, pointer, value.offset, what)
        return text

    def member(self, value: JValue, pointer: str, what: str, choices: type[_Choice]) -> _Choice:
        """A string that must name one member of a closed set (visibility, unary or binary operator)."""
        text = self.expect_string(value, pointer, what)
        try:
            return choices(text)
        except ValueError:
            self.fail_issue(literals.choice_issue(choices, text), pointer, value.offset)

    def scan_dangerous(self, text: str, pointer: str, offset: int, what: str) -> None:
        self.raise_issue(literals.dangerous_issue(text, what), pointer, offset)

    # -- module and functions -------------------------------------------------------------------

    def module(self) -> ast.Module:
        obj = self.expect_object(self.doc.root, "", "a module")
        self.check_keys(
            obj,
            "",
            "a module",
            frozenset({"id", "version", "functions"}),
            frozenset({"targetSandboxVersion", "capabilityRequests", "metadata"}),
        )
        m = obj.members
        module_id = self.identifier(m["id"], "/id", "the module id")
        version = self.version(m["version"], "/version")
        target = (
            self.version(m["targetSandboxVersion"], "/targetSandboxVersion")
            if "targetSandboxVersion" in m
            else ast.DEFAULT_TARGET_VERSION
        )
        requests: tuple[ast.CapabilityRequest, ...] = ()
        if "capabilityRequests" in m:
            arr = self.expect_array(m["capabilityRequests"], "/capabilityRequests", "capabilityRequests")
            requests = tuple(
                self.capability_request(item, f"/capabilityRequests/{i}") for i, item in enumerate(arr.items)
            )
        functions_arr = self.expect_array(m["functions"], "/functions", "functions")
        functions = tuple(
            self.function(item, f"/functions/{i}") for i, item in enumerate(functions_arr.items)
        )
        metadata: tuple[tuple[str, str], ...] = ()
        if "metadata" in m:
            metadata = self.metadata(m["metadata"], "/metadata")
        return ast.Module(
            module_id,
            version,
            target,
            requests,
            functions,
            metadata,
            pointer="",
            span=self.doc.span(obj.offset),
        )

    def version(self, value: JValue, pointer: str) -> str:
        text = self.expect_string(value, pointer, "a version")
        canonical = literals.canonical_version(text)
        if canonical is None:
            self.fail_issue(literals.version_issue(text), pointer, value.offset)
        return canonical

    def capability_request(self, value: JValue, pointer: str) -> ast.CapabilityRequest:
        obj = self.expect_object(value, pointer, "a capability request")
        self.check_keys(obj, pointer, "a capability request", frozenset({"id"}), frozenset({"reason"}))
        cap_id = self.identifier(obj.members["id"], f"{pointer}/id", "a capability id")
        reason: str | None = None
        if "reason" in obj.members:
            reason = self.expect_string(obj.members["reason"], f"{pointer}/reason", "a reason")
            self.scan_dangerous(reason, f"{pointer}/reason", obj.members["reason"].offset, "a reason")
        return ast.CapabilityRequest(cap_id, reason, pointer=pointer, span=self.doc.span(obj.offset))

    def metadata(self, value: JValue, pointer: str) -> tuple[tuple[str, str], ...]:
        obj = self.expect_object(value, pointer, "metadata")
        pairs: list[tuple[str, str]] = []
        for key, item in obj.members.items():
            item_pointer = f"{pointer}/{_escape_pointer_token(key)}"
            self.raise_issue(
                literals.identifier_issue(key, "a metadata key"), item_pointer, obj.key_offsets[key]
            )
            self.scan_dangerous(key, item_pointer, obj.key_offsets[key], "a metadata key")
            text = self.expect_string(item, item_pointer, "a metadata value")
            self.scan_dangerous(text, item_pointer, item.offset, "a metadata value")
            pairs.append((key, text))
        return tuple(sorted(pairs))

    def function(self, value: JValue, pointer: str) -> ast.Function:
        obj = self.expect_object(value, pointer, "a function")
        self.check_keys(
            obj,
            pointer,
            "a function",
            frozenset({"id", "returnType", "body"}),
            frozenset({"visibility", "parameters"}),
        )
        m = obj.members
        fn_id = self.identifier(m["id"], f"{pointer}/id", "a function id")
        visibility = ast.Visibility.PRIVATE
        if "visibility" in m:
            visibility = self.member(m["visibility"], f"{pointer}/visibility", "visibility", ast.Visibility)
        params: tuple[ast.Param, ...] = ()
        if "parameters" in m:
            arr = self.expect_array(m["parameters"], f"{pointer}/parameters", "parameters")
            params = tuple(self.param(item, f"{pointer}/parameters/{i}") for i, item in enumerate(arr.items))
        return_type = self.type_ref(m["returnType"], f"{pointer}/returnType")
        body = self.block(m["body"], f"{pointer}/body", "a function body")
        return ast.Function(
            fn_id, visibility, params, return_type, body, pointer=pointer, span=self.doc.span(obj.offset)
        )

    def param(self, value: JValue, pointer: str) -> ast.Param:
        obj = self.expect_object(value, pointer, "a parameter")
        self.check_keys(obj, pointer, "a parameter", frozenset({"name", "type"}), frozenset())
        name = self.identifier(obj.members["name"], f"{pointer}/name", "a parameter name")
        type_ref = self.type_ref(obj.members["type"], f"{pointer}/type")
        return ast.Param(name, type_ref, pointer=pointer, span=self.doc.span(obj.offset))

    def type_ref(self, value: JValue, pointer: str) -> ast.TypeRef:
        span = self.doc.span(value.offset)
        if isinstance(value, JString):
            name = value.value
            if "<" in name or ">" in name:
                self.fail(
                    "E-JSON-TYPE",
                    f"type {json.dumps(name, ensure_ascii=False)} uses '<' or '>'",
                    pointer,
                    value.offset,
                    'write generic types as objects: {"name": "List", "arguments": ["I32"]}',
                )
            self.identifier(value, pointer, "a type name", scan=False)
            return ast.TypeRef(name, (), pointer=pointer, span=span)
        obj = self.expect_object(value, pointer, "a type") if not isinstance(value, JObject) else value
        self.check_keys(obj, pointer, "a type", frozenset({"name"}), frozenset({"arguments"}))
        name = self.identifier(obj.members["name"], f"{pointer}/name", "a type name", scan=False)
        if "<" in name or ">" in name:
            self.fail(
                "E-JSON-TYPE", "a type name uses '<' or '>'", f"{pointer}/name", obj.members["name"].offset
            )
        args: tuple[ast.TypeRef, ...] = ()
        if "arguments" in obj.members:
            arr = self.expect_array(obj.members["arguments"], f"{pointer}/arguments", "type arguments")
            args = tuple(self.type_ref(item, f"{pointer}/arguments/{i}") for i, item in enumerate(arr.items))
        return ast.TypeRef(name, args, pointer=pointer, span=span)

    # -- statements -----------------------------------------------------------------------------

    def block(self, value: JValue, pointer: str, what: str) -> tuple[ast.Stmt, ...]:
        arr = self.expect_array(value, pointer, what)
        return tuple(self.statement(item, f"{pointer}/{i}") for i, item in enumerate(arr.items))

    def statement(self, value: JValue, pointer: str) -> ast.Stmt:
        obj = self.expect_object(value, pointer, "a statement")
        if "op" not in obj.members:
            self.fail("E-JSON-MISSING", 'a statement is missing "op"', pointer, obj.offset, property="op")
        op = self.expect_string(obj.members["op"], f"{pointer}/op", "a statement op")
        if op not in _STATEMENT_KEYS:
            self.fail(
                "E-JSON-STATEMENT",
                f"unknown statement op {json.dumps(op, ensure_ascii=False)}",
                f"{pointer}/op",
                obj.members["op"].offset,
                "statement ops are: " + ", ".join(STATEMENT_OPS),
                op=op,
            )
        required, optional = _STATEMENT_KEYS[op]
        self.check_keys(obj, pointer, f"a '{op}' statement", required | {"op"}, optional)
        m = obj.members
        span = self.doc.span(obj.offset)
        if op == "set":
            name = self.identifier(m["name"], f"{pointer}/name", "a local name")
            return ast.Set(name, self.expr(m["value"], f"{pointer}/value"), pointer=pointer, span=span)
        if op == "return":
            return ast.Return(self.expr(m["value"], f"{pointer}/value"), pointer=pointer, span=span)
        if op == "expr":
            return ast.ExprStmt(self.expr(m["value"], f"{pointer}/value"), pointer=pointer, span=span)
        if op == "if":
            cond = self.expr(m["condition"], f"{pointer}/condition")
            then = self.block(m["then"], f"{pointer}/then", "'then'")
            else_ = self.block(m["else"], f"{pointer}/else", "'else'") if "else" in m else ()
            return ast.If(cond, then, else_, pointer=pointer, span=span)
        if op == "while":
            cond = self.expr(m["condition"], f"{pointer}/condition")
            return ast.While(
                cond, self.block(m["body"], f"{pointer}/body", "a loop body"), pointer=pointer, span=span
            )
        if op == "forRange":
            local = self.identifier(m["local"], f"{pointer}/local", "a loop local")
            start = self.expr(m["start"], f"{pointer}/start")
            end = self.expr(m["end"], f"{pointer}/end")
            body = self.block(m["body"], f"{pointer}/body", "a loop body")
            return ast.ForRange(local, start, end, body, pointer=pointer, span=span)
        if op == "continue":
            return ast.Continue(pointer=pointer, span=span)
        return ast.Break(pointer=pointer, span=span)

    # -- expressions ----------------------------------------------------------------------------

    def expr(self, value: JValue, pointer: str) -> ast.Expr:
        obj = self.expect_object(value, pointer, "an expression")
        keys = obj.members.keys()
        span = self.doc.span(obj.offset)
        m = obj.members
        if "var" in keys:
            self.check_keys(obj, pointer, "a variable reference", frozenset({"var"}), frozenset())
            return ast.Var(
                self.identifier(m["var"], f"{pointer}/var", "a variable name"), pointer=pointer, span=span
            )
        literal_keys = [k for k in keys if k in _LITERAL_KEYS]
        if literal_keys:
            if len(keys) != 1:
                extra = next(k for k in keys if k != literal_keys[0])
                self.fail(
                    "E-JSON-SCHEMA",
                    f"a literal has exactly one key; found {json.dumps(extra, ensure_ascii=False)} too",
                    f"{pointer}/{_escape_pointer_token(extra)}",
                    obj.key_offsets[extra],
                    property=extra,
                )
            return self.literal(literal_keys[0], m[literal_keys[0]], pointer, span)
        if "call" in keys:
            self.check_keys(obj, pointer, "a call", frozenset({"call"}), frozenset({"args", "genericType"}))
            name = self.identifier(m["call"], f"{pointer}/call", "a call name")
            args: tuple[ast.Expr, ...] = ()
            if "args" in m:
                arr = self.expect_array(m["args"], f"{pointer}/args", "call arguments")
                args = tuple(self.expr(item, f"{pointer}/args/{i}") for i, item in enumerate(arr.items))
            generic = (
                self.type_ref(m["genericType"], f"{pointer}/genericType") if "genericType" in m else None
            )
            return ast.Call(name, args, generic, pointer=pointer, span=span)
        if "unary" in keys:
            self.check_keys(obj, pointer, "a unary expression", frozenset({"unary", "operand"}), frozenset())
            unary = self.member(m["unary"], f"{pointer}/unary", "a unary operator", ast.UnaryOp)
            operand = self.expr(m["operand"], f"{pointer}/operand")
            return ast.Unary(unary, operand, pointer=pointer, span=span)
        if "op" in keys:
            self.check_keys(
                obj, pointer, "a binary expression", frozenset({"op", "left", "right"}), frozenset()
            )
            op = self.member(m["op"], f"{pointer}/op", "a binary operator", ast.BinaryOp)
            left = self.expr(m["left"], f"{pointer}/left")
            right = self.expr(m["right"], f"{pointer}/right")
            return ast.Binary(op, left, right, pointer=pointer, span=span)
        self.fail(
            "E-JSON-EXPR",
            "an object that is not an expression (expected var, a literal, call, unary or op)",
            pointer,
            obj.offset,
            keys=sorted(keys),
        )

    def literal(self, key: str, value: JValue, pointer: str, span: Any) -> ast.Literal:
        kind = ast.LiteralKind(key)
        vp = f"{pointer}/{key}"

        def make(v: ast.LiteralValue, brand: str | None = None) -> ast.Literal:
            return ast.Literal(kind, v, brand, pointer=pointer, span=span)

        if kind is ast.LiteralKind.UNIT:
            if not (isinstance(value, JBool) and value.value is True):
                self.fail("E-JSON-TYPE", 'a unit literal is written {"unit": true}', vp, value.offset)
            return make(None)
        if kind is ast.LiteralKind.BOOL:
            if not isinstance(value, JBool):
                self.fail(
                    "E-JSON-TYPE",
                    f"a bool literal must be true or false, not {kind_name(value)}",
                    vp,
                    value.offset,
                )
            return make(value.value)
        if kind in (ast.LiteralKind.I32, ast.LiteralKind.I64):
            return make(self.integer(kind, value, vp))
        if kind is ast.LiteralKind.F64:
            return make(self.f64(value, vp))
        if kind is ast.LiteralKind.OPAQUE_ID:
            brand, text = self.opaque_id(value, vp)
            return make(text, brand)
        text = self.expect_string(value, vp, f"a {key} literal")
        self.raise_issue(literals.text_literal_issue(kind, text), vp, value.offset)
        self.scan_dangerous(text, vp, value.offset, f"a {key} literal")
        if kind is ast.LiteralKind.GUID:
            text = text.lower()
        return make(text)

    def integer(self, kind: ast.LiteralKind, value: JValue, pointer: str) -> int:
        lo, hi = literals.integer_bounds(kind)
        if not isinstance(value, JNumber) or not value.is_integer_lexeme:
            got = "a fractional or exponent number" if isinstance(value, JNumber) else kind_name(value)
            self.fail(
                "E-JSON-TYPE",
                f"an {kind.value} literal must be an integer, not {got}",
                pointer,
                value.offset,
                "integer literals are written without '.' or an exponent",
            )
        digits = value.lexeme.lstrip("-")
        number = int(value.lexeme) if len(digits) <= 20 else None
        if number is None or not lo <= number <= hi:
            self.fail(
                "E-JSON-TYPE",
                f"{value.lexeme[:40]} is out of range for {kind.value} [{lo}, {hi}]",
                pointer,
                value.offset,
                minimum=lo,
                maximum=hi,
            )
        return number

    def f64(self, value: JValue, pointer: str) -> float:
        if not isinstance(value, JNumber):
            self.fail(
                "E-JSON-TYPE",
                f"an f64 literal must be a number, not {kind_name(value)}",
                pointer,
                value.offset,
            )
        number = float(value.lexeme)
        if not math.isfinite(number):
            self.fail(
                "E-JSON-TYPE",
                f"{value.lexeme[:40]} is not a finite f64 (it overflows to infinity)",
                pointer,
                value.offset,
                "f64 literals must lie within +-1.7976931348623157e308",
            )
        return number

    def opaque_id(self, value: JValue, pointer: str) -> tuple[str, str]:
        obj = self.expect_object(value, pointer, "an opaqueId literal")
        self.check_keys(obj, pointer, "an opaqueId literal", frozenset({"type", "value"}), frozenset())
        brand = self.expect_string(obj.members["type"], f"{pointer}/type", "an opaque-id type")
        self.raise_issue(literals.brand_issue(brand), f"{pointer}/type", obj.members["type"].offset)
        text = self.expect_string(obj.members["value"], f"{pointer}/value", "an opaque-id value")
        self.raise_issue(literals.opaque_value_issue(text), f"{pointer}/value", obj.members["value"].offset)
        self.scan_dangerous(brand, f"{pointer}/type", obj.members["type"].offset, "an opaque-id type")
        self.scan_dangerous(text, f"{pointer}/value", obj.members["value"].offset, "an opaque-id value")
        return brand, text


def import_module(data: bytes | str) -> ast.Module:
    """Import a wire-format module strictly. Raises DotBoxDError on the first violation."""
    doc = scan_document(data)
    return _Builder(doc).module()


# ---------------------------------------------------------------------------------------------
# AST -> wire


def type_to_wire(t: ast.TypeRef) -> Any:
    if not t.arguments:
        return t.name
    return {"name": t.name, "arguments": [type_to_wire(a) for a in t.arguments]}


def expr_to_wire(e: ast.Expr) -> dict[str, Any]:
    if isinstance(e, ast.Var):
        return {"var": e.name}
    if isinstance(e, ast.Literal):
        if e.kind is ast.LiteralKind.UNIT:
            return {"unit": True}
        if e.kind is ast.LiteralKind.OPAQUE_ID:
            return {"opaqueId": {"type": e.brand, "value": e.value}}
        return {e.kind.value: e.value}
    if isinstance(e, ast.Call):
        out: dict[str, Any] = {"call": e.name}
        if e.args:
            out["args"] = [expr_to_wire(a) for a in e.args]
        if e.generic_type is not None:
            out["genericType"] = type_to_wire(e.generic_type)
        return out
    if isinstance(e, ast.Unary):
        return {"unary": e.op.value, "operand": expr_to_wire(e.operand)}
    return {"op": e.op.value, "left": expr_to_wire(e.left), "right": expr_to_wire(e.right)}


def stmt_to_wire(s: ast.Stmt) -> dict[str, Any]:
    if isinstance(s, ast.Set):
        return {"op": "set", "name": s.name, "value": expr_to_wire(s.value)}
    if isinstance(s, ast.Return):
        return {"op": "return", "value": expr_to_wire(s.value)}
    if isinstance(s, ast.ExprStmt):
        return {"op": "expr", "value": expr_to_wire(s.value)}
    if isinstance(s, ast.If):
        out: dict[str, Any] = {
            "op": "if",
            "condition": expr_to_wire(s.condition),
            "then": block_to_wire(s.then),
        }
        if s.else_:
            out["else"] = block_to_wire(s.else_)
        return out
    if isinstance(s, ast.While):
        return {"op": "while", "condition": expr_to_wire(s.condition), "body": block_to_wire(s.body)}
    if isinstance(s, ast.ForRange):
        return {
            "op": "forRange",
            "local": s.local,
            "start": expr_to_wire(s.start),
            "end": expr_to_wire(s.end),
            "body": block_to_wire(s.body),
        }
    if isinstance(s, ast.Continue):
        return {"op": "continue"}
    return {"op": "break"}


def block_to_wire(body: tuple[ast.Stmt, ...]) -> list[dict[str, Any]]:
    return [stmt_to_wire(s) for s in body]


def to_wire(module: ast.Module) -> dict[str, Any]:
    """The wire-format JSON object (plain dicts/lists) of ``module``."""
    out: dict[str, Any] = {"id": module.id, "version": module.version}
    if module.target_sandbox_version != ast.DEFAULT_TARGET_VERSION:
        out["targetSandboxVersion"] = module.target_sandbox_version
    if module.capability_requests:
        out["capabilityRequests"] = [
            {"id": r.id} if r.reason is None else {"id": r.id, "reason": r.reason}
            for r in module.capability_requests
        ]
    functions = []
    for fn in module.functions:
        f: dict[str, Any] = {"id": fn.id, "visibility": fn.visibility.value}
        if fn.parameters:
            f["parameters"] = [{"name": p.name, "type": type_to_wire(p.type)} for p in fn.parameters]
        f["returnType"] = type_to_wire(fn.return_type)
        f["body"] = block_to_wire(fn.body)
        functions.append(f)
    out["functions"] = functions
    if module.metadata:
        out["metadata"] = dict(module.metadata)
    return out


def dumps_wire(module: ast.Module, indent: int | None = 2) -> str:
    """``to_wire`` serialized as JSON text (UTF-8 safe, no NaN)."""
    return json.dumps(to_wire(module), indent=indent, ensure_ascii=False, allow_nan=False)


__all__ = ["DotBoxDError", "dumps_wire", "import_module", "to_wire"]
