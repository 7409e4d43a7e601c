"""Pass 1, structure: the module's skeleton is well formed before anything looks inside bodies.

Invariants established (each violation is reported once, in document order):

* the target sandbox version has major 1 and is at most 1.0.0 (E-IR-VERSION);
* declaration-level identifiers (module id, function ids, parameter names, capability request ids,
  metadata keys) are non-blank, free of control characters (E-IR-ID) and name no host machinery;
  request reasons and metadata values are free of host references too (E-IR-CLR-REF);
* capability requests are concrete ids, never ``*``, ``x.*`` or ``x.`` (E-IR-CAPABILITY), and none is
  requested twice (E-STRUCT-DUP-CAP);
* reserved ``dotboxd.*`` metadata is known and well formed: ``dotboxd.requiredCapabilities`` is a
  ``;``-separated list of concrete capability ids (E-STRUCT-METADATA);
* function ids are unique (E-STRUCT-DUP-FN); a function id may equal a built-in call name or a
  binding id, and then shadows it inside the module (the type pass resolves module functions
  first); parameter names are unique per function (E-STRUCT-DUP-PARAM);
* at least one function is an entrypoint (E-STRUCT-ENTRY);
* statement and expression nesting stays within ``MAX_NESTING`` (E-STRUCT-DEPTH), so no later pass
  can exhaust the Python stack on a programmatically built tree, and every node is an AST node of the
  kind its position needs (E-JSON-STATEMENT, E-JSON-EXPR).

The wire importer already enforces most identifier rules for JSON input; re-checking here keeps the
guarantees for ASTs built in Python or from the text form.
"""

from __future__ import annotations

import re

from dotboxd.core.ast import (
    Binary,
    Break,
    Call,
    Continue,
    ExprStmt,
    ForRange,
    If,
    Literal,
    Module,
    Return,
    Set,
    Stmt,
    Unary,
    Var,
    Visibility,
    While,
)
from dotboxd.grammar.literals import dangerous_fragment, identifier_problem

from .context import Context

MAX_NESTING = 200
METADATA_CAPABILITIES = "dotboxd.requiredCapabilities"
_CAPABILITY_ID = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)*")


def capability_id_problem(cap: str) -> str | None:
    """Why ``cap`` is not a concrete capability id (wildcards and trailing dots are refused)."""
    if cap == "*" or cap.endswith(".*") or "*" in cap:
        return "is a wildcard; requests name concrete capabilities (only a host grant may use a pattern)"
    if cap.endswith("."):
        return "ends with '.'"
    if _CAPABILITY_ID.fullmatch(cap) is None:
        return "is not a dotted capability id (letters, digits and '_' separated by '.')"
    return None


def _version_ok(version: str) -> bool:
    try:
        major, minor, patch = (int(p) for p in version.lstrip("v").split("."))
    except ValueError:
        return False
    return major == 1 and (minor, patch) <= (0, 0)


def _check_identifier(ctx: Context, text: str, what: str, pointer: str) -> bool:
    problem = identifier_problem(text)
    if problem is not None:
        ctx.report(
            "E-IR-ID",
            f"{what} {problem}",
            pointer,
            None,
            "identifiers are non-blank text without control characters",
            identifier=text,
        )
        return False
    return _check_text(ctx, text, what, pointer)


def _check_text(ctx: Context, text: str, what: str, pointer: str) -> bool:
    fragment = dangerous_fragment(text)
    if fragment is not None:
        ctx.report(
            "E-IR-CLR-REF",
            f"{what} '{text}' names host machinery ('{fragment}')",
            pointer,
            None,
            "kernels reach the host only through registered bindings",
            fragment=fragment,
        )
        return False
    return True


def run(ctx: Context) -> None:
    m = ctx.module
    if not _version_ok(m.target_sandbox_version):
        ctx.report(
            "E-IR-VERSION",
            f"targetSandboxVersion {m.target_sandbox_version} is not supported (this sandbox runs 1.0.0)",
            _ptr(m.pointer, "targetSandboxVersion"),
            m.span,
            "target 1.0.0",
            version=m.target_sandbox_version,
            supported="1.0.0",
        )
    _check_identifier(ctx, m.id, "module id", _ptr(m.pointer, "id"))
    _requests(ctx, m)
    _metadata(ctx, m)
    _functions(ctx, m)
    for fn in m.functions:
        _nesting(ctx, fn.body, 1)


def _ptr(base: str, key: str) -> str:
    return f"{base}/{key}" if base or key else ""


def _requests(ctx: Context, m: Module) -> None:
    seen: dict[str, str] = {}
    for req in m.capability_requests:
        if not _check_identifier(ctx, req.id, "capability request", req.pointer):
            continue
        problem = capability_id_problem(req.id)
        if problem is not None:
            ctx.report(
                "E-IR-CAPABILITY",
                f"capability request '{req.id}' {problem}",
                req.pointer,
                req.span,
                "request each capability by its exact id",
                capability=req.id,
            )
            continue
        if req.id in seen:
            ctx.report(
                "E-STRUCT-DUP-CAP",
                f"capability '{req.id}' is requested twice",
                req.pointer,
                req.span,
                "remove the duplicate request",
                capability=req.id,
                first=seen[req.id],
            )
            continue
        seen[req.id] = req.pointer
        if req.reason is not None:
            _check_text(ctx, req.reason, "request reason", _ptr(req.pointer, "reason"))


def _metadata(ctx: Context, m: Module) -> None:
    for key, value in m.metadata:
        pointer = _ptr(_ptr(m.pointer, "metadata"), key.replace("~", "~0").replace("/", "~1"))
        if not _check_identifier(ctx, key, "metadata key", pointer):
            continue
        if not _check_text(ctx, value, "metadata value", pointer):
            continue
        if key == METADATA_CAPABILITIES:
            for entry in value.split(";"):
                cap = entry.strip()
                if not cap:
                    continue
                problem = capability_id_problem(cap)
                if problem is not None:
                    ctx.report(
                        "E-STRUCT-METADATA",
                        f"{METADATA_CAPABILITIES} entry '{cap}' {problem}",
                        pointer,
                        None,
                        "list concrete capability ids separated by ';'",
                        entry=cap,
                    )
                elif cap not in ctx.metadata_capabilities:
                    ctx.metadata_capabilities.append(cap)
        elif key.lower().startswith("dotboxd."):
            ctx.report(
                "E-STRUCT-METADATA",
                f"unknown reserved metadata key '{key}'",
                pointer,
                None,
                f"the only reserved key is '{METADATA_CAPABILITIES}'; other keys must not start with 'dotboxd.'",
                key=key,
            )


def _functions(ctx: Context, m: Module) -> None:
    for fn in m.functions:
        if not _check_identifier(ctx, fn.id, "function id", _ptr(fn.pointer, "id")):
            continue
        if fn.id in ctx.functions:
            ctx.report(
                "E-STRUCT-DUP-FN",
                f"function '{fn.id}' is defined twice",
                fn.pointer,
                fn.span,
                "rename or remove one of them",
                function=fn.id,
                first=ctx.functions[fn.id].pointer,
            )
            continue
        ctx.functions[fn.id] = fn
        if fn.visibility is Visibility.ENTRYPOINT:
            ctx.entrypoints.append(fn.id)
        seen: dict[str, str] = {}
        for p in fn.parameters:
            if not _check_identifier(ctx, p.name, "parameter name", p.pointer):
                continue
            if p.name in seen:
                ctx.report(
                    "E-STRUCT-DUP-PARAM",
                    f"function '{fn.id}' has two parameters named '{p.name}'",
                    p.pointer,
                    p.span,
                    "rename one of them",
                    function=fn.id,
                    parameter=p.name,
                    first=seen[p.name],
                )
            else:
                seen[p.name] = p.pointer
    if not ctx.entrypoints and not any(
        d.code in ("E-STRUCT-DUP-FN", "E-IR-ID", "E-IR-CLR-REF") for d in ctx.diagnostics
    ):
        ctx.report(
            "E-STRUCT-ENTRY",
            "the module has no entrypoint function",
            _ptr(m.pointer, "functions"),
            m.span,
            'mark the host-callable function with "visibility": "entrypoint"',
            functions=[f.id for f in m.functions],
        )


_STATEMENTS = (Set, Return, ExprStmt, If, While, ForRange, Continue, Break)


def _nesting(ctx: Context, body: tuple[Stmt, ...], depth: int) -> bool:
    """Iteratively measure nesting and check node classes; report once per function when nesting
    exceeds MAX_NESTING, and every object that is no AST node of the expected kind."""
    stack: list[tuple[object, int, bool]] = [(s, depth, True) for s in body]
    while stack:
        node, d, is_stmt = stack.pop()
        if d > MAX_NESTING:
            ctx.report(
                "E-STRUCT-DEPTH",
                f"statements and expressions nest deeper than {MAX_NESTING} levels",
                getattr(node, "pointer", ""),
                getattr(node, "span", None),
                "flatten the code with locals or helper functions",
                limit=MAX_NESTING,
            )
            return False
        tp = type(node)
        if is_stmt:
            if tp not in _STATEMENTS:
                ctx.report(
                    "E-JSON-STATEMENT", f"{tp.__name__} is not a statement", getattr(node, "pointer", "")
                )
                continue
            if tp is If:
                assert isinstance(node, If)
                stack.append((node.condition, d + 1, False))
                stack.extend((s, d + 1, True) for s in node.then)
                stack.extend((s, d + 1, True) for s in node.else_)
            elif tp is While:
                assert isinstance(node, While)
                stack.append((node.condition, d + 1, False))
                stack.extend((s, d + 1, True) for s in node.body)
            elif tp is ForRange:
                assert isinstance(node, ForRange)
                stack.append((node.start, d + 1, False))
                stack.append((node.end, d + 1, False))
                stack.extend((s, d + 1, True) for s in node.body)
            elif tp is Set or tp is Return or tp is ExprStmt:
                stack.append((getattr(node, "value", None), d + 1, False))
            continue
        if tp is Var or tp is Literal:
            continue
        if tp is Binary:
            assert isinstance(node, Binary)
            stack.append((node.left, d + 1, False))
            stack.append((node.right, d + 1, False))
        elif tp is Unary:
            assert isinstance(node, Unary)
            stack.append((node.operand, d + 1, False))
        elif tp is Call:
            assert isinstance(node, Call)
            stack.extend((a, d + 1, False) for a in node.args)
        else:
            ctx.report("E-JSON-EXPR", f"{tp.__name__} is not an expression", getattr(node, "pointer", ""))
    return True
