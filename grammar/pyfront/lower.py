"""Lower a parsed Python kernel file (a restricted subset) to the typed AST of ``dotboxd.core.ast``.

The walk is a translation, never an evaluation: each supported Python node becomes exactly one IR
shape (or a fixed small group, e.g. ``x += 1`` is ``x = x + 1``), each node gets the wire pointer it
will have in the JSON form and the Python line:column as its span, and anything outside the subset
is refused at its own position with a hint (``refused.py``). Names, literals and budgets are not
checked here: ``lower_python`` runs the result through the wire importer, the single owner of those
rules. The walk is recursive, so ``source.check_depth`` must accept the tree first.
"""

from __future__ import annotations

import ast as pyast
import math
import re
from typing import NoReturn

from dotboxd.core import ast
from dotboxd.core.diagnostics import Span, reject
from dotboxd.grammar import literals
from dotboxd.grammar.pyfront.refused import PYTHON_BUILTINS, refuse, refuse_node
from dotboxd.grammar.pyfront.source import PySource
from dotboxd.lang import LANG_NAMES

_BINARY: dict[type[pyast.operator], ast.BinaryOp] = {
    pyast.Add: ast.BinaryOp.ADD,
    pyast.Sub: ast.BinaryOp.SUB,
    pyast.Mult: ast.BinaryOp.MUL,
    pyast.Div: ast.BinaryOp.DIV,
    pyast.FloorDiv: ast.BinaryOp.DIV,
    pyast.Mod: ast.BinaryOp.REM,
}
_COMPARE: dict[type[pyast.cmpop], ast.BinaryOp] = {
    pyast.Eq: ast.BinaryOp.EQ,
    pyast.NotEq: ast.BinaryOp.NE,
    pyast.Lt: ast.BinaryOp.LT,
    pyast.LtE: ast.BinaryOp.LTE,
    pyast.Gt: ast.BinaryOp.GT,
    pyast.GtE: ast.BinaryOp.GTE,
}
_OPERATOR_HINTS: dict[type[pyast.AST], str] = {
    pyast.Pow: "multiply in a loop, or use a math built-in",
    pyast.MatMult: "there is no matrix product; write the loop",
    pyast.LShift: "multiply by a power of two",
    pyast.RShift: "divide by a power of two",
    pyast.BitAnd: "use `and` on Bool values",
    pyast.BitOr: "use `or` on Bool values",
    pyast.BitXor: "use `!=` on Bool values",
    pyast.Invert: "use `-x - 1`",
    pyast.UAdd: "write the operand without `+`",
    pyast.Is: "use `==`",
    pyast.IsNot: "use `!=`",
    pyast.In: "use map.containsKey(m, k)",
    pyast.NotIn: "use `not map.containsKey(m, k)`",
}
_LITERAL_CALLS: dict[str, ast.LiteralKind] = {
    "path": ast.LiteralKind.PATH,
    "uri": ast.LiteralKind.URI,
    "guid": ast.LiteralKind.GUID,
}
_SURROGATE = re.compile("[\ud800-\udfff]")
_LIST_MAKERS = frozenset({"list.of", "list.empty", "list.add"})
_MAP_MAKERS = frozenset({"map.empty", "map.set", "map.remove"})
_HEADER_CALLS = frozenset({"module", "requires", "meta"})
_ANNOTATION_NAMES = {"None": "Unit", "Unit": "Unit"}


def _dotted(node: pyast.expr) -> str | None:
    """``a.b.c`` for a chain of attribute accesses ending in a plain name, else None."""
    parts: list[str] = []
    while isinstance(node, pyast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, pyast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


class Lowerer:
    """One kernel file -> one ``ast.Module``; ``spans`` maps each wire pointer to its Python span."""

    def __init__(self, src: PySource) -> None:
        self.src = src
        self.spans: dict[str, Span] = {}
        self.local_types: dict[str, ast.TypeRef] = {}
        self.function_ids: set[str] = set()
        self.loop_depth = 0

    # -- helpers ----------------------------------------------------------------------------------

    def at(self, node: pyast.AST, pointer: str) -> Span:
        span = self.src.span(node)
        self.spans.setdefault(pointer, span)
        return span

    def refuse(self, node: pyast.AST, what: str, hint: str, **evidence: object) -> NoReturn:
        refuse(self.src, node, what, hint, **evidence)

    def string_arg(self, node: pyast.expr, what: str) -> str:
        if isinstance(node, pyast.Constant) and isinstance(node.value, str):
            return node.value
        self.refuse(node, f"{what} that is not a string constant", f'write {what} as a literal: "..."')

    # -- module -----------------------------------------------------------------------------------

    def module(self, tree: pyast.Module) -> ast.Module:
        header: pyast.Call | None = None
        requests: list[pyast.Call] = []
        metas: list[pyast.Call] = []
        functions: list[pyast.FunctionDef] = []
        for index, stmt in enumerate(tree.body):
            if index == 0 and _is_docstring(stmt):
                continue
            if isinstance(stmt, pyast.ImportFrom) and stmt.level == 0 and stmt.module == "__future__":
                continue
            if isinstance(stmt, pyast.ImportFrom) and stmt.level == 0 and stmt.module == "dotboxd.lang":
                self.check_lang_import(stmt)
                continue
            if isinstance(stmt, pyast.FunctionDef):
                functions.append(stmt)
                continue
            call = stmt.value if isinstance(stmt, pyast.Expr) else None
            if isinstance(call, pyast.Call) and isinstance(call.func, pyast.Name):
                if call.func.id == "module":
                    if header is not None:
                        raise reject(
                            "E-PY-MODULE",
                            "the kernel file declares module(...) twice",
                            "",
                            self.src.span(stmt),
                            "declare the module id and version once",
                        )
                    header = call
                    continue
                if call.func.id == "requires":
                    requests.append(call)
                    continue
                if call.func.id == "meta":
                    metas.append(call)
                    continue
            self.refuse_top_level(stmt)
        if header is None:
            raise reject(
                "E-PY-MODULE",
                "the kernel file does not declare its module",
                "",
                Span(1, 1),
                'add `module("my-kernel", version="1.0.0")` after the imports',
            )
        module_id, version, target = self.header(header)
        self.function_ids = {fn.name for fn in functions}
        built_requests = tuple(self.request(c, f"/capabilityRequests/{i}") for i, c in enumerate(requests))
        built_functions = tuple(self.function(f, f"/functions/{i}") for i, f in enumerate(functions))
        metadata = self.metadata(metas)
        span = self.at(header, "")
        return ast.Module(
            module_id, version, target, built_requests, built_functions, metadata, pointer="", span=span
        )

    def refuse_top_level(self, stmt: pyast.stmt) -> NoReturn:
        if type(stmt) in (pyast.Import, pyast.ImportFrom, pyast.ClassDef, pyast.AsyncFunctionDef):
            refuse_node(self.src, stmt)
        self.refuse(
            stmt,
            "a top-level statement other than module(), requires(), meta(), an import or a def",
            "put the statement inside a function; kernels have no module-level state",
        )

    def check_lang_import(self, stmt: pyast.ImportFrom) -> None:
        for alias in stmt.names:
            if alias.name not in LANG_NAMES:
                self.refuse(
                    alias,
                    f"importing {alias.name!r} from dotboxd.lang",
                    "dotboxd.lang exports " + ", ".join(sorted(LANG_NAMES)),
                )
            if alias.asname is not None and alias.asname != alias.name:
                self.refuse(alias, "renaming an import", f"import {alias.name} under its own name")

    def keywords(self, call: pyast.Call, allowed: frozenset[str]) -> dict[str, pyast.expr]:
        found: dict[str, pyast.expr] = {}
        for kw in call.keywords:
            if kw.arg is None or kw.arg not in allowed:
                self.refuse(
                    kw,
                    f"the keyword argument {kw.arg or '**'!r}",
                    "accepted keywords: " + (", ".join(sorted(allowed)) or "none"),
                )
            found[kw.arg] = kw.value
        return found

    def header(self, call: pyast.Call) -> tuple[str, str, str]:
        kws = self.keywords(call, frozenset({"version", "target"}))
        if len(call.args) != 1 or "version" not in kws:
            raise reject(
                "E-PY-MODULE",
                "module(...) takes the module id and a version",
                "",
                self.src.span(call),
                'write module("my-kernel", version="1.0.0")',
            )
        module_id = self.string_arg(call.args[0], "the module id")
        version = self.version(kws["version"], "the version")
        target = self.version(kws["target"], "the target") if "target" in kws else ast.DEFAULT_TARGET_VERSION
        self.at(call.args[0], "/id")
        self.at(kws["version"], "/version")
        if "target" in kws:
            self.at(kws["target"], "/targetSandboxVersion")
        return module_id, version, target

    def version(self, node: pyast.expr, what: str) -> str:
        """A version in canonical M.m.p form, as the wire importer stores it ("2" is "2.0.0")."""
        text = self.string_arg(node, what)
        canonical = literals.canonical_version(text)
        if canonical is None:
            raise reject(
                "E-JSON-VERSION",
                f"{text!r} is not a version",
                "",
                self.src.span(node),
                "write MAJOR.MINOR.PATCH (e.g. 1.0.0) or a bare major (1, v1)",
            )
        return canonical

    def request(self, call: pyast.Call, pointer: str) -> ast.CapabilityRequest:
        span = self.at(call, pointer)
        kws = self.keywords(call, frozenset({"reason"}))
        if len(call.args) != 1:
            self.refuse(
                call,
                "requires(...) without exactly one capability id",
                'write requires("cap.id", reason="...")',
            )
        cap = self.string_arg(call.args[0], "the capability id")
        self.at(call.args[0], f"{pointer}/id")
        reason = self.string_arg(kws["reason"], "the reason") if "reason" in kws else None
        if "reason" in kws:
            self.at(kws["reason"], f"{pointer}/reason")
        return ast.CapabilityRequest(cap, reason, pointer=pointer, span=span)

    def metadata(self, calls: list[pyast.Call]) -> tuple[tuple[str, str], ...]:
        entries: dict[str, str] = {}
        for call in calls:
            self.keywords(call, frozenset())
            if len(call.args) != 2:
                self.refuse(call, "meta(...) without a key and a value", 'write meta("key", "value")')
            key = self.string_arg(call.args[0], "the metadata key")
            if key in entries:
                raise reject(
                    "E-JSON-SCHEMA",
                    f"duplicate metadata key {key!r}",
                    f"/metadata/{key.replace('~', '~0').replace('/', '~1')}",
                    self.src.span(call),
                    "each metadata key may appear once",
                    property=key,
                )
            entries[key] = self.string_arg(call.args[1], "the metadata value")
            self.at(call, f"/metadata/{key.replace('~', '~0').replace('/', '~1')}")
        return tuple(sorted(entries.items()))

    # -- functions and types ----------------------------------------------------------------------

    def function(self, fn: pyast.FunctionDef, pointer: str) -> ast.Function:
        span = self.at(fn, pointer)
        self.at(fn, f"{pointer}/id")
        if fn.name in LANG_NAMES or fn.name in _HEADER_CALLS:
            self.refuse(fn, f"a function named {fn.name!r}", "dotboxd.lang owns that name; choose another")
        visibility = ast.Visibility.PRIVATE
        for deco in fn.decorator_list:
            if isinstance(deco, pyast.Name) and deco.id == "entrypoint":
                visibility = ast.Visibility.ENTRYPOINT
            else:
                self.refuse(
                    deco, "a decorator other than @entrypoint", "mark entrypoints with @entrypoint only"
                )
        args = fn.args
        for extra, what in (
            (args.vararg, "*args"),
            (args.kwarg, "**kwargs"),
            (args.posonlyargs[0] if args.posonlyargs else None, "a positional-only parameter"),
            (args.kwonlyargs[0] if args.kwonlyargs else None, "a keyword-only parameter"),
            (args.defaults[0] if args.defaults else None, "a default value"),
        ):
            if extra is not None:
                self.refuse(extra, what, "declare plain parameters: def f(a: I32, b: I32) -> I32")
        if fn.returns is None:
            self.refuse(fn, "a function without a return annotation", "annotate it: def f(...) -> I32:")
        self.local_types = {}
        params = tuple(self.param(a, f"{pointer}/parameters/{i}") for i, a in enumerate(args.args))
        return_type = self.type_ref(fn.returns, f"{pointer}/returnType")
        body = fn.body[1:] if fn.body and _is_docstring(fn.body[0]) else fn.body
        built = self.block(body, f"{pointer}/body")
        return ast.Function(fn.name, visibility, params, return_type, built, pointer=pointer, span=span)

    def param(self, arg: pyast.arg, pointer: str) -> ast.Param:
        span = self.at(arg, pointer)
        self.at(arg, f"{pointer}/name")
        if arg.annotation is None:
            self.refuse(arg, f"the parameter {arg.arg!r} without a type", f"annotate it: {arg.arg}: I32")
        type_ref = self.type_ref(arg.annotation, f"{pointer}/type")
        self.local_types[arg.arg] = type_ref
        return ast.Param(arg.arg, type_ref, pointer=pointer, span=span)

    def type_ref(self, node: pyast.expr, pointer: str) -> ast.TypeRef:
        span = self.at(node, pointer)
        if isinstance(node, pyast.Constant) and node.value is None:
            return ast.TypeRef("Unit", pointer=pointer, span=span)
        if isinstance(node, pyast.Subscript):
            name = _dotted(node.value)
            items = node.slice.elts if isinstance(node.slice, pyast.Tuple) else [node.slice]
            if name is None or not items:
                self.refuse(node, "this type annotation", "write types like I32, List[I32], Map[String, I32]")
            args = tuple(self.type_ref(t, f"{pointer}/arguments/{i}") for i, t in enumerate(items))
            self.at(node.value, f"{pointer}/name")
            return ast.TypeRef(name, args, pointer=pointer, span=span)
        name = _dotted(node)
        if name is None:
            self.refuse(node, "this type annotation", "write types like I32, List[I32], Map[String, I32]")
        return ast.TypeRef(_ANNOTATION_NAMES.get(name, name), pointer=pointer, span=span)

    # -- statements -------------------------------------------------------------------------------

    def block(self, body: list[pyast.stmt], pointer: str) -> tuple[ast.Stmt, ...]:
        out: list[ast.Stmt] = []
        for stmt in body:
            if isinstance(stmt, pyast.Pass):
                continue
            out.append(self.statement(stmt, f"{pointer}/{len(out)}"))
        return tuple(out)

    def statement(self, stmt: pyast.stmt, pointer: str) -> ast.Stmt:
        span = self.at(stmt, pointer)
        if isinstance(stmt, pyast.Assign):
            if len(stmt.targets) != 1:
                self.refuse(stmt, "a chained assignment", "assign each local in its own statement")
            return self.assign(stmt.targets[0], stmt.value, None, pointer, span)
        if isinstance(stmt, pyast.AnnAssign):
            if stmt.value is None:
                self.refuse(stmt, "a declaration without a value", "assign a value: x: I32 = 0")
            return self.assign(stmt.target, stmt.value, stmt.annotation, pointer, span)
        if isinstance(stmt, pyast.AugAssign):
            return self.aug_assign(stmt, pointer, span)
        if isinstance(stmt, pyast.Return):
            if stmt.value is None:
                value: ast.Expr = ast.Literal(
                    ast.LiteralKind.UNIT, None, pointer=f"{pointer}/value", span=span
                )
            else:
                value = self.expr(stmt.value, f"{pointer}/value")
            return ast.Return(value, pointer=pointer, span=span)
        if isinstance(stmt, pyast.Expr):
            return ast.ExprStmt(self.expr(stmt.value, f"{pointer}/value"), pointer=pointer, span=span)
        if isinstance(stmt, pyast.If):
            condition = self.expr(stmt.test, f"{pointer}/condition")
            then = self.block(stmt.body, f"{pointer}/then")
            else_ = self.block(stmt.orelse, f"{pointer}/else")
            return ast.If(condition, then, else_, pointer=pointer, span=span)
        if isinstance(stmt, pyast.While):
            if stmt.orelse:
                self.refuse(
                    stmt.orelse[0],
                    "a while-else clause",
                    "set a flag before `break` and test it after the loop",
                )
            condition = self.expr(stmt.test, f"{pointer}/condition")
            return ast.While(
                condition, self.loop_body(stmt.body, f"{pointer}/body"), pointer=pointer, span=span
            )
        if isinstance(stmt, pyast.For):
            return self.for_range(stmt, pointer, span)
        if isinstance(stmt, pyast.Break):
            return ast.Break(pointer=pointer, span=span)
        if isinstance(stmt, pyast.Continue):
            return ast.Continue(pointer=pointer, span=span)
        if isinstance(stmt, pyast.FunctionDef):
            self.refuse(stmt, "a nested function", "define every function at module level")
        refuse_node(self.src, stmt)

    def loop_body(self, body: list[pyast.stmt], pointer: str) -> tuple[ast.Stmt, ...]:
        return self.block(body, pointer)

    def assign(
        self, target: pyast.expr, value: pyast.expr, annotation: pyast.expr | None, pointer: str, span: Span
    ) -> ast.Stmt:
        if isinstance(target, pyast.Subscript):
            return self.store_item(target, value, pointer, span)
        if not isinstance(target, pyast.Name):
            self.refuse(target, "assigning to anything but a local name", "assign one local: x = ...")
        self.at(target, f"{pointer}/name")
        declared = (
            self.type_ref(annotation, f"{pointer}/value/genericType") if annotation is not None else None
        )
        if declared is not None:
            self.local_types[target.id] = declared
        built = self.expr(value, f"{pointer}/value", declared)
        if declared is None and target.id not in self.local_types:
            inferred = self.collection_kind(built)
            if inferred is not None:
                self.local_types[target.id] = ast.TypeRef(inferred)
        return ast.Set(target.id, built, pointer=pointer, span=span)

    def collection_kind(self, value: ast.Expr) -> str | None:
        """``List`` or ``Map`` when the value is visibly one (a list.*/map.* constructor, or a copy
        of a known local), so an unannotated ``zs = [1, 2]`` can still be indexed."""
        if isinstance(value, ast.Call) and value.name in _LIST_MAKERS:
            return "List"
        if isinstance(value, ast.Call) and value.name in _MAP_MAKERS:
            return "Map"
        if isinstance(value, ast.Var) and value.name in self.local_types:
            known = self.local_types[value.name].name
            return known if known in ("List", "Map") else None
        return None

    def store_item(self, target: pyast.Subscript, value: pyast.expr, pointer: str, span: Span) -> ast.Stmt:
        """``m[k] = v`` on a Map local is ``m = map.set(m, k, v)``; nothing else can be stored into."""
        base = target.value
        known = self.local_types.get(base.id) if isinstance(base, pyast.Name) else None
        if not isinstance(base, pyast.Name) or known is None or known.name != "Map":
            self.refuse(
                target,
                "storing into an item of anything but a Map local",
                "lists are values: xs = list.add(xs, v); for maps annotate the local (m: Map[K, V] = ...)",
            )
        vp = f"{pointer}/value"
        call = ast.Call(
            "map.set",
            (
                ast.Var(base.id, pointer=f"{vp}/args/0", span=self.at(base, f"{vp}/args/0")),
                self.expr(target.slice, f"{vp}/args/1"),
                self.expr(value, f"{vp}/args/2"),
            ),
            pointer=vp,
            span=self.at(target, vp),
        )
        return ast.Set(base.id, call, pointer=pointer, span=span)

    def aug_assign(self, stmt: pyast.AugAssign, pointer: str, span: Span) -> ast.Stmt:
        if not isinstance(stmt.target, pyast.Name):
            self.refuse(stmt.target, "augmented assignment to anything but a local", "write x = x + ...")
        op = _BINARY.get(type(stmt.op))
        if op is None:
            self.refuse(
                stmt, f"the operator {type(stmt.op).__name__}", _OPERATOR_HINTS.get(type(stmt.op), "")
            )
        vp = f"{pointer}/value"
        left = ast.Var(stmt.target.id, pointer=f"{vp}/left", span=self.at(stmt.target, f"{vp}/left"))
        right = self.expr(stmt.value, f"{vp}/right")
        return ast.Set(
            stmt.target.id,
            ast.Binary(op, left, right, pointer=vp, span=self.at(stmt, vp)),
            pointer=pointer,
            span=span,
        )

    def for_range(self, stmt: pyast.For, pointer: str, span: Span) -> ast.Stmt:
        if stmt.orelse:
            self.refuse(
                stmt.orelse[0], "a for-else clause", "set a flag before `break` and test it after the loop"
            )
        if not isinstance(stmt.target, pyast.Name):
            self.refuse(stmt.target, "a loop target that is not one name", "write `for i in range(a, b):`")
        it = stmt.iter
        if not (
            isinstance(it, pyast.Call)
            and isinstance(it.func, pyast.Name)
            and it.func.id == "range"
            and not it.keywords
            and 1 <= len(it.args) <= 2
        ):
            self.refuse(
                it,
                "a for loop over anything but range(a, b)",
                "loop over indices: for i in range(0, list.count(xs)): x = list.get(xs, i)",
            )
        self.at(stmt.target, f"{pointer}/local")
        if len(it.args) == 1:
            start: ast.Expr = ast.Literal(
                ast.LiteralKind.I32, 0, pointer=f"{pointer}/start", span=self.at(it, f"{pointer}/start")
            )
            end = self.expr(it.args[0], f"{pointer}/end")
        else:
            start = self.expr(it.args[0], f"{pointer}/start")
            end = self.expr(it.args[1], f"{pointer}/end")
        self.local_types[stmt.target.id] = ast.TypeRef("I32")
        body = self.loop_body(stmt.body, f"{pointer}/body")
        return ast.ForRange(stmt.target.id, start, end, body, pointer=pointer, span=span)

    # -- expressions ------------------------------------------------------------------------------

    def expr(self, node: pyast.expr, pointer: str, declared: ast.TypeRef | None = None) -> ast.Expr:
        span = self.at(node, pointer)
        if declared is not None and declared.name in ("I64", "F64") and not declared.arguments:
            annotated = self.annotated_number(node, declared.name, pointer, span)
            if annotated is not None:
                return annotated
        if isinstance(node, pyast.Constant):
            return self.constant(node, pointer, span)
        if isinstance(node, pyast.Name):
            if node.id.startswith("__"):
                self.refuse(node, f"the dunder name {node.id!r}", "use ordinary local names")
            return ast.Var(node.id, pointer=pointer, span=span)
        if isinstance(node, pyast.UnaryOp):
            return self.unary(node, pointer, span)
        if isinstance(node, pyast.BinOp):
            op = _BINARY.get(type(node.op))
            if op is None:
                self.refuse(
                    node, f"the operator {type(node.op).__name__}", _OPERATOR_HINTS.get(type(node.op), "")
                )
            left = self.expr(node.left, f"{pointer}/left")
            right = self.expr(node.right, f"{pointer}/right")
            return ast.Binary(op, left, right, pointer=pointer, span=span)
        if isinstance(node, pyast.BoolOp):
            return self.bool_op(node, pointer, span)
        if isinstance(node, pyast.Compare):
            return self.compare(node, pointer, span)
        if isinstance(node, pyast.Call):
            return self.call(node, pointer, span)
        if isinstance(node, pyast.Subscript):
            return self.index(node, pointer, span)
        if isinstance(node, pyast.List):
            return self.list_literal(node, pointer, span, declared)
        if isinstance(node, pyast.Dict):
            return self.map_literal(node, pointer, span, declared)
        if isinstance(node, pyast.Attribute):
            self.refuse(
                node,
                "attribute access outside a call",
                "attributes only name built-ins and bindings in a call: math.clamp(x, 0, 9)",
            )
        refuse_node(self.src, node)

    def annotated_number(
        self, node: pyast.expr, type_name: str, pointer: str, span: Span
    ) -> ast.Literal | None:
        """``x: I64 = 5`` is the i64 literal 5 and ``x: F64 = 2`` the f64 literal 2.0: the local's
        annotation chooses the kind of an integer constant (the IR has no implicit widening)."""
        negative = isinstance(node, pyast.UnaryOp) and isinstance(node.op, pyast.USub)
        inner = node.operand if isinstance(node, pyast.UnaryOp) and negative else node
        if not (isinstance(inner, pyast.Constant) and type(inner.value) is int):
            return None
        value = -inner.value if negative else inner.value
        if type_name == "I64":
            return ast.Literal(ast.LiteralKind.I64, value, pointer=pointer, span=span)
        try:
            as_float = float(value)
        except OverflowError:
            as_float = math.inf
        return self.constant(pyast.Constant(as_float), pointer, span)

    def constant(self, node: pyast.Constant, pointer: str, span: Span, negative: bool = False) -> ast.Literal:
        value = node.value
        if isinstance(value, bool):
            return ast.Literal(ast.LiteralKind.BOOL, value, pointer=pointer, span=span)
        if isinstance(value, int):
            return ast.Literal(ast.LiteralKind.I32, -value if negative else value, pointer=pointer, span=span)
        if isinstance(value, float):
            if not math.isfinite(value):  # 1e999 parses to inf
                raise reject(
                    "E-JSON-TYPE",
                    "the float literal is not a finite f64 (it overflows to infinity)",
                    f"{pointer}/f64",
                    span,
                    "f64 literals must lie within +-1.7976931348623157e308",
                )
            return ast.Literal(ast.LiteralKind.F64, -value if negative else value, pointer=pointer, span=span)
        if isinstance(value, str):
            if _SURROGATE.search(value):  # "\ud800" in Python source: not valid Unicode text
                raise reject(
                    "E-PY-SYNTAX",
                    "the string literal contains a lone UTF-16 surrogate",
                    f"{pointer}/string",
                    span,
                    "strings must be valid Unicode; write the character itself or a surrogate pair",
                )
            return ast.Literal(ast.LiteralKind.STRING, value, pointer=pointer, span=span)
        if value is None:
            return ast.Literal(ast.LiteralKind.UNIT, None, pointer=pointer, span=span)
        self.refuse(
            node, f"a {type(value).__name__} constant", "use I32, I64(...), F64, Bool or String values"
        )

    def unary(self, node: pyast.UnaryOp, pointer: str, span: Span) -> ast.Expr:
        if isinstance(node.op, pyast.Not):
            operand = self.expr(node.operand, f"{pointer}/operand")
            return ast.Unary(ast.UnaryOp.NOT, operand, pointer=pointer, span=span)
        if isinstance(node.op, pyast.USub):
            inner = node.operand
            if isinstance(inner, pyast.Constant) and type(inner.value) in (int, float):
                return self.constant(inner, pointer, span, negative=True)  # `-5` is the literal -5
            if self.is_i64_literal(inner):
                assert isinstance(inner, pyast.Call)
                return self.i64_literal(inner, pointer, span, negative=True)
            return ast.Unary(
                ast.UnaryOp.NEG, self.expr(inner, f"{pointer}/operand"), pointer=pointer, span=span
            )
        self.refuse(node, f"the operator {type(node.op).__name__}", _OPERATOR_HINTS.get(type(node.op), ""))

    def bool_op(self, node: pyast.BoolOp, pointer: str, span: Span) -> ast.Expr:
        """``a and b and c`` is ``(a && b) && c``: left-associative like the IR's text form."""
        op = ast.BinaryOp.AND if isinstance(node.op, pyast.And) else ast.BinaryOp.OR
        return self.chain(op, node.values, pointer, span)

    def chain(self, op: ast.BinaryOp, values: list[pyast.expr], pointer: str, span: Span) -> ast.Expr:
        if len(values) == 1:
            return self.expr(values[0], pointer)
        left = self.chain(op, values[:-1], f"{pointer}/left", span)
        right = self.expr(values[-1], f"{pointer}/right")
        return ast.Binary(op, left, right, pointer=pointer, span=span)

    def compare(self, node: pyast.Compare, pointer: str, span: Span) -> ast.Expr:
        if len(node.ops) != 1:
            self.refuse(node, "a chained comparison", "write (a < b) and (b < c)")
        op = _COMPARE.get(type(node.ops[0]))
        if op is None:
            self.refuse(
                node,
                f"the comparison {type(node.ops[0]).__name__}",
                _OPERATOR_HINTS.get(type(node.ops[0]), ""),
            )
        left = self.expr(node.left, f"{pointer}/left")
        right = self.expr(node.comparators[0], f"{pointer}/right")
        return ast.Binary(op, left, right, pointer=pointer, span=span)

    def is_i64_literal(self, node: pyast.expr) -> bool:
        return (
            isinstance(node, pyast.Call)
            and isinstance(node.func, pyast.Name)
            and node.func.id == "I64"
            and len(node.args) == 1
            and not node.keywords
            and isinstance(node.args[0], pyast.Constant)
            and type(node.args[0].value) is int
        )

    def i64_literal(self, node: pyast.Call, pointer: str, span: Span, negative: bool = False) -> ast.Literal:
        arg = node.args[0]
        assert isinstance(arg, pyast.Constant) and isinstance(arg.value, int)
        return ast.Literal(
            ast.LiteralKind.I64, -arg.value if negative else arg.value, pointer=pointer, span=span
        )

    def call(self, node: pyast.Call, pointer: str, span: Span) -> ast.Expr:
        func = node.func
        generic: ast.TypeRef | None = None
        if isinstance(func, pyast.Subscript):  # list.empty[I32]() carries a genericType
            generic = self.type_ref(func.slice, f"{pointer}/genericType")
            func = func.value
        name = _dotted(func)
        if name is None:
            self.refuse(
                func,
                "calling anything but a named function",
                "call module functions, built-ins and bindings by name",
            )
        if node.keywords:
            self.refuse(node.keywords[0], "a keyword argument", "pass arguments by position")
        for arg in node.args:
            if isinstance(arg, pyast.Starred):
                refuse_node(self.src, arg)
        if "." not in name and generic is None:
            special = self.lang_call(node, name, pointer, span)
            if special is not None:
                return special
        if any(part.startswith("__") for part in name.split(".")):
            self.refuse(
                func, f"the dunder name {name!r}", "call module functions, built-ins and bindings by name"
            )
        self.at(func, f"{pointer}/call")
        args = tuple(self.expr(a, f"{pointer}/args/{i}") for i, a in enumerate(node.args))
        return ast.Call(name, args, generic, pointer=pointer, span=span)

    def lang_call(self, node: pyast.Call, name: str, pointer: str, span: Span) -> ast.Expr | None:
        """Literal constructors from dotboxd.lang, and the refusal of Python's own built-ins."""
        if name in self.function_ids:
            return None
        if name == "I64" and self.is_i64_literal(node):
            return self.i64_literal(node, pointer, span)
        if name in _LITERAL_CALLS:
            if len(node.args) != 1:
                self.refuse(node, f"{name}(...) without exactly one string", f'write {name}("...")')
            text = self.string_arg(node.args[0], f"the {name} literal")
            kind = _LITERAL_CALLS[name]
            return ast.Literal(
                kind, text.lower() if kind is ast.LiteralKind.GUID else text, pointer=pointer, span=span
            )
        if name == "opaque":
            if len(node.args) != 2:
                self.refuse(node, "opaque(...) without a brand and a value", 'write opaque("Brand", "value")')
            brand = self.string_arg(node.args[0], "the opaque-id brand")
            text = self.string_arg(node.args[1], "the opaque-id value")
            return ast.Literal(ast.LiteralKind.OPAQUE_ID, text, brand, pointer=pointer, span=span)
        if name in LANG_NAMES or name in _HEADER_CALLS:
            self.refuse(
                node,
                f"calling {name}(...) here",
                "I64(n) takes an integer constant; module/requires/meta belong at top level",
            )
        if name in PYTHON_BUILTINS:
            self.refuse(
                node,
                f"the Python built-in {name}()",
                "kernels call only their own functions, DotBoxD built-ins (list.count, string.length, ...) "
                "and host bindings",
                name=name,
            )
        return None

    def index(self, node: pyast.Subscript, pointer: str, span: Span) -> ast.Expr:
        """``xs[i]`` is list.get(xs, i) and ``m[k]`` map.get(m, k), chosen by the local's declared type."""
        if isinstance(node.slice, pyast.Slice):
            refuse_node(self.src, node.slice)
        base = node.value
        known = self.local_types.get(base.id) if isinstance(base, pyast.Name) else None
        intrinsic = {"List": "list.get", "Map": "map.get"}.get(known.name if known else "")
        if intrinsic is None:
            self.refuse(
                node,
                "indexing a value whose type is not a declared List or Map",
                "index a parameter or annotated local (xs: List[I32] = ...), or call list.get/map.get",
            )
        args = (self.expr(base, f"{pointer}/args/0"), self.expr(node.slice, f"{pointer}/args/1"))
        return ast.Call(intrinsic, args, pointer=pointer, span=span)

    def list_literal(
        self, node: pyast.List, pointer: str, span: Span, declared: ast.TypeRef | None
    ) -> ast.Expr:
        if node.elts:
            args = tuple(self.expr(e, f"{pointer}/args/{i}") for i, e in enumerate(node.elts))
            return ast.Call("list.of", args, pointer=pointer, span=span)
        if declared is None or declared.name != "List" or len(declared.arguments) != 1:
            self.refuse(node, "an empty list without a declared type", "annotate it: xs: List[I32] = []")
        return ast.Call("list.empty", (), declared.arguments[0], pointer=pointer, span=span)

    def map_literal(
        self, node: pyast.Dict, pointer: str, span: Span, declared: ast.TypeRef | None
    ) -> ast.Expr:
        """``{k: v, ...}`` on an annotated Map local is map.empty then one map.set per entry."""
        if declared is None or declared.name != "Map":
            self.refuse(
                node,
                "a dict literal without a declared Map type",
                'annotate it: m: Map[String, I32] = {"a": 1}',
            )
        # the pointers describe the nesting map.set(map.set(map.empty(), k0, v0), k1, v1)
        depth = len(node.keys)
        inner = pointer + "/args/0" * depth
        result: ast.Expr = ast.Call("map.empty", (), declared, pointer=inner, span=self.at(node, inner))
        for i, (key, value) in enumerate(zip(node.keys, node.values, strict=True)):
            at = pointer + "/args/0" * (depth - 1 - i)
            if key is None:
                self.refuse(value, "a ** entry in a dict literal", "write each entry explicitly")
            k = self.expr(key, f"{at}/args/1")
            v = self.expr(value, f"{at}/args/2")
            result = ast.Call("map.set", (result, k, v), pointer=at, span=self.at(key, at))
        return result


def _is_docstring(stmt: pyast.stmt) -> bool:
    return (
        isinstance(stmt, pyast.Expr)
        and isinstance(stmt.value, pyast.Constant)
        and isinstance(stmt.value.value, str)
    )
