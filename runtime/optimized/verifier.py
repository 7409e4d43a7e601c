"""The generated-code verifier: nothing the code generator emits runs unless it passes here first.

Why: the code generator is trusted code, but it is big, and generated Python runs with the host's
full authority. So its output is checked like untrusted input, twice, against the plan it claims
to implement (the Cranelift-verifier idea applied to our own output):

1. **the AST, before ``compile()``**: an allowlist of node types; names only from the function's
   slot table (``R f d lr`` and ``[vtkenj]<n>``) and the stub table; no attribute or subscript
   access at all; no import, global, nonlocal, lambda, with, try, raise, yield, await, class,
   comprehension, f-string or dunder name; constants only ``None``, bools, bounded ints and finite
   floats; every call a plain positional call of a stub or a generated function, with the run
   state first; every loop metered (its body starts with a fuel charge, or it is a bulk chunk
   right after a ``_s_cap`` reservation, or a single-pass block); every generated function is a
   reachable plan function and every binding index names a binding of the plan;
2. **the code objects, after ``compile()``**, recursively: the names they load, their constants,
   their flags (no generator, coroutine, varargs, closures) and their opcodes.

A failure raises ``VerifierFailure``; the caller quarantines the artifact and never runs it.
"""

from __future__ import annotations

import ast
import dis
import math
import re
from collections.abc import Callable
from types import CodeType
from typing import Any

from dotboxd.validator.plan import ExecutionPlan

from .codegen import FIXED_PARAMS
from .errors import VerifierFailure
from .stubs import PURE_HELPERS, RANGE_NAME, STUBS
from .tables import CHARGES, CHUNK_OP, OP, Tables, function_name, guid_name

VERIFIER_VERSION = "dotboxd-py-opt-verifier-1"

MAX_INT = 2**64
MAX_FOLDED_INT = 2**130
"""Constant folding may multiply two allowed constants: code objects may hold up to this."""
MAX_NODES = 2_000_000
"""The verifier's own budget: it refuses (rather than walks) absurdly large modules."""

SLOT = re.compile(r"(?:[vtkenj](?:0|[1-9][0-9]{0,6}))\Z")
FN = re.compile(r"_fn(?:0|[1-9][0-9]{0,6})\Z")
GUID = re.compile(r"_k(?:0|[1-9][0-9]{0,6})\Z")

ALLOWED_NODES: frozenset[type[ast.AST]] = frozenset(
    {
        ast.Module,
        ast.FunctionDef,
        ast.arguments,
        ast.arg,
        ast.Return,
        ast.Assign,
        ast.AugAssign,
        ast.If,
        ast.While,
        ast.For,
        ast.Break,
        ast.Continue,
        ast.Pass,
        ast.Expr,
        ast.Name,
        ast.Load,
        ast.Store,
        ast.Constant,
        ast.Tuple,
        ast.Call,
        ast.BinOp,
        ast.UnaryOp,
        ast.BoolOp,
        ast.Compare,
        ast.Add,
        ast.Sub,
        ast.Mult,
        ast.FloorDiv,
        ast.Mod,
        ast.Div,
        ast.USub,
        ast.Not,
        ast.And,
        ast.Or,
        ast.Lt,
        ast.LtE,
        ast.Gt,
        ast.GtE,
        ast.Eq,
        ast.NotEq,
    }
)
"""Every node type generated code may contain. Anything else (Attribute, Subscript, Import, Global,
Nonlocal, Lambda, With, Try, Raise, Yield, Await, ClassDef, comprehensions, JoinedStr, Starred,
NamedExpr, Delete, Assert, AsyncFunctionDef, ...) is refused wherever it appears."""

_CODE_OPS = frozenset(
    {
        "CACHE",
        "NOP",
        "RESUME",
        "POP_TOP",
        "PUSH_NULL",
        "COPY",
        "SWAP",
        "LOAD_CONST",
        "LOAD_FAST",
        "STORE_FAST",
        "LOAD_GLOBAL",
        "LOAD_NAME",
        "STORE_NAME",
        "BINARY_OP",
        "COMPARE_OP",
        "UNARY_NOT",
        "UNARY_NEGATIVE",
        "BUILD_TUPLE",
        "BUILD_LIST",
        "LIST_EXTEND",
        "LIST_APPEND",
        "LIST_TO_TUPLE",
        "CALL_FUNCTION_EX",
        "UNPACK_SEQUENCE",
        "PRECALL",
        "CALL",
        "GET_ITER",
        "FOR_ITER",
        "END_FOR",
        "JUMP_FORWARD",
        "JUMP_BACKWARD",
        "JUMP_BACKWARD_NO_INTERRUPT",
        "JUMP_IF_FALSE_OR_POP",
        "JUMP_IF_TRUE_OR_POP",
        "POP_JUMP_FORWARD_IF_FALSE",
        "POP_JUMP_FORWARD_IF_TRUE",
        "POP_JUMP_BACKWARD_IF_FALSE",
        "POP_JUMP_BACKWARD_IF_TRUE",
        "POP_JUMP_FORWARD_IF_NONE",
        "POP_JUMP_FORWARD_IF_NOT_NONE",
        "POP_JUMP_IF_FALSE",
        "POP_JUMP_IF_TRUE",
        "RETURN_VALUE",
        "RETURN_CONST",
        "MAKE_FUNCTION",
        "EXTENDED_ARG",
    }
)
"""Opcodes generated code compiles to; anything else (imports, attribute and subscript access,
globals writes, closures, exception handling, class building, ...) fails the code check."""

_CODE_OPCODES = frozenset(dis.opmap[name] for name in _CODE_OPS if name in dis.opmap)

_FORBIDDEN_FLAGS = 0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200
"""CO_VARARGS, CO_VARKEYWORDS, CO_GENERATOR, CO_COROUTINE, CO_ITERABLE_COROUTINE, CO_ASYNC_GENERATOR."""


def _fail(reason: str, node: ast.AST | None = None) -> VerifierFailure:
    where = f" (line {getattr(node, 'lineno', '?')})" if node is not None else ""
    return VerifierFailure(reason + where)


PAYING_STUBS = frozenset(
    {"_s_text", "_s_ceq", "_s_bind", *(name for name in STUBS if name.startswith("_s_i_"))}
)
"""Stubs whose fourth argument is the fuel segment they pay before anything else."""

_BIN_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Div)
_CMP_OPS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)


class _AstVerifier:
    """One pass over the generated module: every node is visited once, by a handler that knows
    exactly which children its node type may have; anything unexpected fails."""

    def __init__(self, plan: ExecutionPlan, tables: Tables) -> None:
        self.plan = plan
        self.tables = tables
        self.globals = allowed_globals(tables)
        self.function_names = {function_name(i) for i in range(len(tables.functions))}
        self.nodes = 0

    def tick(self) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _fail("generated module is too large to verify")

    # --- tables against the plan ----------------------------------------------------------------

    def check_tables(self) -> None:
        plan = self.plan
        if len(set(self.tables.functions)) != len(self.tables.functions):
            raise _fail("a function is listed twice")
        for fid in self.tables.functions:
            info = plan.functions.get(fid)
            if info is None or not info.reachable:
                raise _fail(f"generated function for '{fid}', which is not a reachable plan function")
        for bid in self.tables.bindings:
            if plan.binding(bid) is None:
                raise _fail(f"binding '{bid}' is not in the plan")

    # --- the module -------------------------------------------------------------------------

    def check(self, module: ast.AST) -> None:
        self.check_tables()
        if type(module) is not ast.Module or getattr(module, "type_ignores", None):
            raise _fail("not a plain module")
        seen: set[str] = set()
        for stmt in module.body:
            if type(stmt) is not ast.FunctionDef:
                raise _fail(f"{type(stmt).__name__} at module level (only function definitions)", stmt)
            if stmt.name not in self.function_names or stmt.name in seen:
                raise _fail(f"unexpected function name {stmt.name!r}", stmt)
            seen.add(stmt.name)
            self.function(stmt)
        if seen != self.function_names:
            raise _fail("a plan function has no generated function")

    def function(self, fn: ast.FunctionDef) -> None:
        self.tick()
        args = fn.args
        if fn.decorator_list or fn.returns is not None or getattr(fn, "type_comment", None):
            raise _fail("decorators and annotations are not allowed", fn)
        if type(args) is not ast.arguments:
            raise _fail("malformed parameters", fn)
        if (
            args.posonlyargs
            or args.vararg
            or args.kwonlyargs
            or args.kw_defaults
            or args.kwarg
            or args.defaults
        ):
            raise _fail("only plain positional parameters are allowed", fn)
        params = []
        for a in args.args:
            if type(a) is not ast.arg or a.annotation is not None or getattr(a, "type_comment", None):
                raise _fail("annotations are not allowed", fn)
            params.append(a.arg)
        fid = self.tables.functions[int(fn.name[3:])]
        expected = len(FIXED_PARAMS) + len(self.plan.functions[fid].function.parameters)
        if tuple(params[: len(FIXED_PARAMS)]) != FIXED_PARAMS or len(params) != expected:
            raise _fail("parameters do not match the plan function", fn)
        if len(set(params)) != len(params) or not all(SLOT.match(p) for p in params[len(FIXED_PARAMS) :]):
            raise _fail("parameters must be distinct slots", fn)
        self.body(fn.body, 0)

    # --- statements ---------------------------------------------------------------------------

    def body(self, stmts: list[ast.stmt], depth: int) -> None:
        if not stmts:
            raise _fail("empty block")
        for index, stmt in enumerate(stmts):
            self.statement(stmt, stmts, index, depth)

    def statement(self, stmt: ast.stmt, block: list[ast.stmt], index: int, depth: int) -> None:
        self.tick()
        kind = type(stmt)
        if kind is ast.Assign:
            assert isinstance(stmt, ast.Assign)
            if len(stmt.targets) != 1 or getattr(stmt, "type_comment", None):
                raise _fail("chained assignment", stmt)
            target = stmt.targets[0]
            if type(target) is ast.Tuple:
                assert isinstance(target, ast.Tuple)
                if type(target.ctx) is not ast.Store or len(target.elts) != 2:
                    raise _fail("only pair unpacking is allowed", stmt)
                if type(stmt.value) is not ast.Call:
                    raise _fail("pair unpacking needs a call", stmt)
                for element in target.elts:
                    self.target(element)
            else:
                self.target(target)
            self.expr(stmt.value)
        elif kind is ast.AugAssign:
            assert isinstance(stmt, ast.AugAssign)
            target = stmt.target
            if not (type(target) is ast.Name and target.id == "f" and type(target.ctx) is ast.Store):
                raise _fail("augmented assignment only updates the fuel", stmt)
            if type(stmt.op) not in (ast.Add, ast.Sub):
                raise _fail("fuel is only added to or subtracted from", stmt)
            self.expr(stmt.value)
        elif kind is ast.Expr:
            assert isinstance(stmt, ast.Expr)
            if type(stmt.value) is not ast.Call:
                raise _fail("expression statements must be calls", stmt)
            self.expr(stmt.value)
        elif kind is ast.Return:
            assert isinstance(stmt, ast.Return)
            value = stmt.value
            if not (type(value) is ast.Tuple and len(value.elts) == 2):
                raise _fail("functions return (value, fuel)", stmt)
            self.expr(value)
        elif kind is ast.If:
            assert isinstance(stmt, ast.If)
            self.expr(stmt.test)
            self.body(stmt.body, depth)
            if stmt.orelse:
                self.body(stmt.orelse, depth)
        elif kind is ast.While:
            assert isinstance(stmt, ast.While)
            self.while_(stmt, depth)
        elif kind is ast.For:
            assert isinstance(stmt, ast.For)
            self.for_(stmt, block, index, depth)
        elif kind is ast.Break or kind is ast.Continue:
            if depth == 0:
                raise _fail("break/continue outside a loop", stmt)
        elif kind is not ast.Pass:
            raise _fail(f"statement {kind.__name__} is not allowed", stmt)

    def target(self, node: ast.expr) -> None:
        self.tick()
        if type(node) is not ast.Name or type(node.ctx) is not ast.Store:
            raise _fail("assignment targets are names", node)
        ident = node.id
        if ident != "f" and not SLOT.match(ident):
            raise _fail(f"assignment to {ident!r}, which is not a slot", node)

    def while_(self, loop: ast.While, depth: int) -> None:
        test = loop.test
        if not (type(test) is ast.Constant and test.value is True) or loop.orelse:
            raise _fail("loops are `while True:` without else", loop)
        self.tick()
        body = loop.body
        if not (_is_charge(body, 0) or _is_reservation(body, 0) or _single_pass(body)):
            raise _fail("a loop body does not start with a meter charge", loop)
        self.body(body, depth + 1)

    def for_(self, loop: ast.For, block: list[ast.stmt], index: int, depth: int) -> None:
        self.target(loop.target)
        iterator = loop.iter
        if not (
            type(iterator) is ast.Call
            and type(iterator.func) is ast.Name
            and iterator.func.id == RANGE_NAME
            and 1 <= len(iterator.args) <= 2
            and not iterator.keywords
        ):
            raise _fail("for-loops only iterate over _range(...)", loop)
        assert isinstance(iterator, ast.Call)
        self.tick()
        for arg in iterator.args:
            self.expr(arg)
        bulk = index == 1 and _is_reservation(block, 0) and _ranges_over(iterator, block[0])
        if not (bulk or _is_charge(loop.body, 0)):
            raise _fail("a loop body does not start with a meter charge", loop)
        if getattr(loop, "type_comment", None):
            raise _fail("type comments are not allowed", loop)
        self.body(loop.body, depth + 1)
        if loop.orelse:
            self.body(loop.orelse, depth + 1)

    # --- expressions --------------------------------------------------------------------------

    def expr(self, node: ast.expr) -> None:
        self.tick()
        kind = type(node)
        if kind is ast.Name:
            self.load(node)  # type: ignore[arg-type]
        elif kind is ast.Constant:
            _check_constant(node)  # type: ignore[arg-type]
        elif kind is ast.BinOp:
            assert isinstance(node, ast.BinOp)
            if type(node.op) not in _BIN_OPS:
                raise _fail(f"operator {type(node.op).__name__}", node)
            self.expr(node.left)
            self.expr(node.right)
        elif kind is ast.UnaryOp:
            assert isinstance(node, ast.UnaryOp)
            if type(node.op) not in (ast.USub, ast.Not):
                raise _fail(f"operator {type(node.op).__name__}", node)
            self.expr(node.operand)
        elif kind is ast.BoolOp:
            assert isinstance(node, ast.BoolOp)
            if type(node.op) not in (ast.And, ast.Or):
                raise _fail("boolean operator", node)
            for value in node.values:
                self.expr(value)
        elif kind is ast.Compare:
            assert isinstance(node, ast.Compare)
            if not all(type(op) in _CMP_OPS for op in node.ops) or len(node.ops) != len(node.comparators):
                raise _fail("comparison operator", node)
            self.expr(node.left)
            for value in node.comparators:
                self.expr(value)
        elif kind is ast.Call:
            self.call(node)  # type: ignore[arg-type]
        elif kind is ast.Tuple:
            assert isinstance(node, ast.Tuple)
            if type(node.ctx) is not ast.Load:
                raise _fail("tuple in a store position", node)
            for value in node.elts:
                self.expr(value)
        else:
            raise _fail(f"node type {kind.__name__} is not allowed", node)

    def load(self, node: ast.Name) -> None:
        ident = node.id
        if type(node.ctx) is not ast.Load:
            raise _fail("assignment inside an expression", node)
        if ident.startswith("__"):
            raise _fail(f"dunder name {ident!r}", node)
        if ident == "R":
            raise _fail("the run state is only ever a stub's first argument", node)
        if ident in FIXED_PARAMS or SLOT.match(ident) or (GUID.match(ident) and ident in self.globals):
            return
        if ident in self.globals:
            raise _fail(f"stub {ident!r} used as a value", node)
        raise _fail(f"name {ident!r} is neither a slot nor a stub", node)

    def call(self, node: ast.Call) -> None:
        func = node.func
        if type(func) is not ast.Name or func.id not in self.globals or GUID.match(func.id):
            raise _fail("calls only reach stubs and generated functions", node)
        assert isinstance(func, ast.Name)
        if type(func.ctx) is not ast.Load or node.keywords:
            raise _fail("calls are positional", node)
        self.tick()
        callee = func.id
        if callee == RANGE_NAME:
            raise _fail("_range may only drive a for-loop", node)
        args = node.args
        if callee in PURE_HELPERS:
            for arg in args:
                self.expr(arg)
            return
        first = args[0] if args else None
        if not (type(first) is ast.Name and first.id == "R" and type(first.ctx) is ast.Load):
            raise _fail(f"{callee} must receive the run state first", node)
        for arg in args[1:]:
            self.expr(arg)
        if FN.match(callee):
            fid = self.tables.functions[int(callee[3:])]
            if len(args) != len(FIXED_PARAMS) + len(self.plan.functions[fid].function.parameters):
                raise _fail(f"{callee} called with the wrong number of arguments", node)
            return
        self.stub_args(callee, args, node)

    def stub_args(self, callee: str, args: list[ast.expr], node: ast.Call) -> None:
        tables = self.tables
        if callee == "_s_fx":
            self._index(args, 3, tables.sites, node, lambda s: s[0] == CHARGES and len(s[1]) > 0)
        elif callee in ("_s_f1", "_s_f2", "_s_f3"):
            self._index(args, 3, tables.sites, node, lambda s: s[0] == OP)
            if len(args) != 4 + int(callee[-1]):
                raise _fail(f"{callee} takes {callee[-1]} operand(s)", node)
        elif callee in ("_s_c1", "_s_c2", "_s_c3"):
            self._index(args, 5, tables.sites, node, lambda s: s[0] == CHUNK_OP)
            if len(args) != 6 + int(callee[-1]):
                raise _fail(f"{callee} takes {callee[-1]} operand(s)", node)
        elif callee in PAYING_STUBS:
            self._index(args, 3, tables.sites, node, lambda s: s[0] == CHARGES)
            if callee == "_s_text":
                self._index(args, 4, tables.texts, node, lambda s: True)
            elif callee == "_s_bind":
                self._index(args, 4, tables.bindings, node, lambda s: True)
                if len(args) != 6 or type(args[5]) is not ast.Tuple:
                    raise _fail("_s_bind takes its arguments as one tuple", node)

    def _index(
        self, args: list[ast.expr], at: int, table: list[Any], node: ast.Call, ok: Callable[[Any], bool]
    ) -> None:
        if len(args) <= at:
            raise _fail("missing table index", node)
        arg = args[at]
        if not (type(arg) is ast.Constant and type(arg.value) is int and 0 <= arg.value < len(table)):
            raise _fail("table index out of range", node)
        assert isinstance(arg, ast.Constant)
        if not ok(table[arg.value]):
            raise _fail("table index names the wrong kind of entry", node)


def _check_constant(node: ast.Constant) -> None:
    value = node.value
    if value is None or isinstance(value, bool):
        return
    if type(value) is int:
        if -MAX_INT <= value <= MAX_INT:
            return
        raise _fail("oversize integer constant", node)
    if type(value) is float:
        if math.isfinite(value):
            return
        raise _fail("non-finite float constant", node)
    raise _fail(f"constant of type {type(value).__name__} is not allowed", node)


def _is_fuel_check(stmt: ast.stmt) -> bool:
    """``if f < 0: _s_fx(R, ...)``."""
    return (
        isinstance(stmt, ast.If)
        and isinstance(stmt.test, ast.Compare)
        and isinstance(stmt.test.left, ast.Name)
        and stmt.test.left.id == "f"
        and len(stmt.test.ops) == 1
        and isinstance(stmt.test.ops[0], ast.Lt)
        and isinstance(stmt.test.comparators[0], ast.Constant)
        and stmt.test.comparators[0].value == 0
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], ast.Expr)
        and _calls(stmt.body[0].value, "_s_fx")
        and not stmt.orelse
    )


def _calls(node: ast.AST, stub: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == stub


def _is_charge(block: list[ast.stmt], index: int) -> bool:
    """``f -= <positive int>`` followed by its exhaustion check, ``f = _s_liter(R, ...)``, or a
    paying stub call with a non-empty segment (whose site the AST check confirms)."""
    if index >= len(block):
        return False
    stmt = block[index]
    if (
        isinstance(stmt, ast.AugAssign)
        and isinstance(stmt.target, ast.Name)
        and stmt.target.id == "f"
        and isinstance(stmt.op, ast.Sub)
        and isinstance(stmt.value, ast.Constant)
        and type(stmt.value.value) is int
        and stmt.value.value >= 1
    ):
        return index + 1 < len(block) and _is_fuel_check(block[index + 1])
    if not isinstance(stmt, ast.Assign):
        return False
    target = stmt.targets[0]
    if isinstance(target, ast.Name):
        return target.id == "f" and _calls(stmt.value, "_s_liter")
    # ``t, f = _s_<paying stub>(R, f, lr, site, ...)`` with a non-empty segment: the stub pays first
    value = stmt.value
    return (
        isinstance(target, ast.Tuple)
        and isinstance(target.elts[1], ast.Name)
        and target.elts[1].id == "f"
        and isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in PAYING_STUBS
        and len(value.args) > 3
        and isinstance(value.args[3], ast.Constant)
        and type(value.args[3].value) is int
        and value.args[3].value > 0
    )


def _is_reservation(block: list[ast.stmt], index: int) -> bool:
    """``n<i> = _s_cap(R, ...)``: a bulk reservation (it charges the chunk's loop iterations and
    guarantees the fuel of a fast chunk)."""
    if index >= len(block):
        return False
    stmt = block[index]
    return (
        isinstance(stmt, ast.Assign)
        and isinstance(stmt.targets[0], ast.Name)
        and stmt.targets[0].id.startswith("n")
        and _calls(stmt.value, "_s_cap")
    )


def _ranges_over(iterator: ast.Call, reservation: ast.stmt) -> bool:
    """The for-loop runs exactly the reserved iterations: ``_range(n)`` or ``_range(k, k + n)``."""
    assert isinstance(reservation, ast.Assign) and isinstance(reservation.targets[0], ast.Name)
    reserved = reservation.targets[0].id
    args = iterator.args
    if len(args) == 1:
        return isinstance(args[0], ast.Name) and args[0].id == reserved
    start, stop = args
    return (
        isinstance(start, ast.Name)
        and isinstance(stop, ast.BinOp)
        and isinstance(stop.op, ast.Add)
        and isinstance(stop.left, ast.Name)
        and stop.left.id == start.id
        and isinstance(stop.right, ast.Name)
        and stop.right.id == reserved
    )


def _single_pass(body: list[ast.stmt]) -> bool:
    """A ``while True:`` that cannot iterate: it ends with ``break`` and no ``continue`` targets it."""
    if not body or not isinstance(body[-1], ast.Break):
        return False

    def continues(stmts: list[ast.stmt]) -> bool:
        for stmt in stmts:
            if isinstance(stmt, ast.Continue):
                return True
            if isinstance(stmt, ast.If) and (continues(stmt.body) or continues(stmt.orelse)):
                return True
            # a nested loop's continue targets that loop, not this one
        return False

    return not continues(body)


# --- code objects -----------------------------------------------------------------------------


def verify_code(code: CodeType, plan_globals: frozenset[str]) -> None:
    """Check a compiled module and every code object inside it."""
    stack = [code]
    seen = 0
    while stack:
        current = stack.pop()
        seen += 1
        if seen > 100_000:
            raise _fail("too many code objects")
        if current.co_flags & _FORBIDDEN_FLAGS:
            raise _fail(f"code object {current.co_name} has forbidden flags")
        if current.co_freevars or current.co_cellvars:
            raise _fail(f"code object {current.co_name} uses closures")
        for ident in current.co_names:
            if ident not in plan_globals:
                raise _fail(f"code object {current.co_name} names {ident!r}")
        for ident in current.co_varnames:
            if not (ident in FIXED_PARAMS or SLOT.match(ident)):
                raise _fail(f"code object {current.co_name} has local {ident!r}")
        for const in current.co_consts:
            if isinstance(const, CodeType):
                if not FN.match(const.co_name):
                    raise _fail(f"unexpected code object {const.co_name!r}")
                stack.append(const)
            else:
                _check_code_constant(const, current.co_name)
        raw = current.co_code  # the unspecialized bytecode: one opcode byte per 2-byte code unit
        for opcode in raw[0::2]:
            if opcode not in _CODE_OPCODES:
                raise _fail(f"opcode {dis.opname[opcode]} in {current.co_name}")


def _check_code_constant(value: object, where: str) -> None:
    if value is None or isinstance(value, bool):
        return
    if type(value) is int and -MAX_FOLDED_INT <= value <= MAX_FOLDED_INT:
        return
    if type(value) is float:
        return  # folding two finite floats may overflow to inf; the AST check bounds the sources
    if type(value) is str and FN.match(value):
        return  # a generated function's own name
    if type(value) is tuple:
        for item in value:
            _check_code_constant(item, where)
        return
    raise _fail(f"constant {type(value).__name__} in code object {where}")


def verify_module(module: ast.AST, tables: Tables, plan: ExecutionPlan) -> None:
    """The AST check (raises ``VerifierFailure``)."""
    _AstVerifier(plan, tables).check(module)


def allowed_globals(tables: Tables) -> frozenset[str]:
    """Every global name generated code for ``tables`` may load: stubs, pure helpers, ``_range``,
    its own functions and its GUID constants."""
    names = set(STUBS) | set(PURE_HELPERS) | {RANGE_NAME}
    names |= {function_name(i) for i in range(len(tables.functions))}
    names |= {guid_name(i) for i in range(len(tables.guids))}
    return frozenset(names)


__all__ = ["ALLOWED_NODES", "VERIFIER_VERSION", "allowed_globals", "verify_code", "verify_module"]
