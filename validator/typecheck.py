"""Pass 4, types: every expression has exactly one sandbox type and every use fits it.

Invariants established:

* parameter, return and ``genericType`` types resolve: known names only, generic arity, map keys,
  nesting depth, opaque-id brands declared by the policy (E-TYPE-UNKNOWN/-ARITY/-MAP-KEY/-DEPTH);
* numeric operators need the same numeric type on both sides and nothing is widened; ordering needs
  numbers; ``eq``/``ne`` need identical types; ``and``/``or``/``not`` need Bool (E-TYPE-MISMATCH,
  with both types as evidence);
* ``if``/``while`` conditions are Bool, ``forRange`` bounds are I32, returns match the declared
  return type (E-TYPE-MISMATCH);
* a local keeps the type of its first assignment while it is in scope (E-LOCAL-TYPE). Scopes follow
  the names pass, with DotBoxD's type rule: sibling blocks (the branches of an ``if``, two loop
  bodies) may bind one name with different types, and a name bound in both branches of an ``if``
  survives it only when both gave it the same type (else a later read is E-LOCAL-UNKNOWN and a later
  ``set`` binds it afresh). ``local_types`` keeps each name's first type; a loop head at which a name
  in scope has another type records it (``loop_types``, for the prover);
* every call resolves (module function, then built-in, then host binding, as in DotBoxD: a module
  function shadows a built-in or binding of its id inside the module; else E-CALL-UNKNOWN, or
  E-IR-CLR-REF for a host-machinery name) with the right arity (E-CALL-ARITY), argument types
  (E-TYPE-MISMATCH), ``genericType`` use (E-CALL-GENERIC) and, for ``record.get``, a constant
  in-range index (E-CALL-RECORD-INDEX);
* dead statements (after an unconditional exit in their block) are type-checked like live ones, but
  only live code contributes effects, callees and bindings to the function's facts.

It also decides, for every ``and``/``or``, whether the right operand runs first (spec/semantics.md section 4): only
when neither operand can fail (fuel, time and cancellation aside: no operator that can overflow or
divide by zero, no text literal, no built-in whose ``can_fail`` is set, no binding or module-function
call) and the right one has strictly fewer expression nodes. So moving an operand never changes
whether a run fails or with which error, only how much fuel the short-circuit saves. Errors are typed as an internal error type that silences every
check it takes part in, so one mistake yields one diagnostic.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

from dotboxd.core import ast
from dotboxd.core.builtins import BUILTINS, SURFACES, CallSite, CallTypeError, GenericRule
from dotboxd.core.effects import Effect
from dotboxd.core.types import (
    BOOL,
    I32,
    LITERAL_TYPES,
    NUMERIC_TYPES,
    OpaqueIdType,
    SandboxType,
    TypeProblem,
    resolve_or_problem,
    type_problem_error,
)
from dotboxd.grammar.literals import dangerous_fragment

from .context import Context, FunctionFacts
from .plan import CallKind, CallTarget


class _ErrorType(SandboxType):
    """The type of an expression that already failed; every check involving it is skipped."""

    __slots__ = ()

    def __str__(self) -> str:
        return "<error>"

    def to_json(self) -> Any:
        return None


ERROR: SandboxType = _ErrorType()

#: Text-carrying literals allocate (Alloc comes from text and composite literals).
ALLOCATING_LITERALS = frozenset(
    {ast.LiteralKind.STRING, ast.LiteralKind.PATH, ast.LiteralKind.URI, ast.LiteralKind.OPAQUE_ID}
)
_ARITH = frozenset({ast.BinaryOp.ADD, ast.BinaryOp.SUB, ast.BinaryOp.MUL, ast.BinaryOp.DIV, ast.BinaryOp.REM})
_ORDER = frozenset({ast.BinaryOp.LT, ast.BinaryOp.LTE, ast.BinaryOp.GT, ast.BinaryOp.GTE})
_LOGIC = frozenset({ast.BinaryOp.AND, ast.BinaryOp.OR})
_WIDEN_HINT = "convert explicitly with numeric.toI64 or numeric.toF64; nothing is widened implicitly"


def run(ctx: Context) -> None:
    checker = _Checker(ctx)
    for fid, fn in ctx.functions.items():
        ctx.facts[fid] = checker.signature(fn)
    for fid in ctx.functions:
        checker.body(ctx.facts[fid])


class _Checker:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.brands = ctx.policy.declared_opaque_id_types
        self.brand_types: dict[str, OpaqueIdType] = {}
        self.facts: FunctionFacts | None = None
        self.locals: dict[str, SandboxType] = {}
        # the names in scope now: type and pointer of the binding's first assignment
        self.scope: dict[str, tuple[SandboxType, str]] = {}
        # names dropped after an if whose branches bound them with different types (for messages)
        self.dropped: dict[str, tuple[str, SandboxType, SandboxType]] = {}
        self.effects = Effect.CPU
        self.purity: dict[int, tuple[bool, int]] = {}
        self.name_checked: dict[str, bool] = {}
        self.types = ctx.expr_types
        self.targets = ctx.call_targets

    # -- signatures -----------------------------------------------------------------------------

    def resolve(self, ref: ast.TypeRef) -> SandboxType:
        try:
            return resolve_or_problem(ref, self.brands)
        except TypeProblem as problem:
            self.ctx.diagnostics.extend(type_problem_error(problem, ref).diagnostics)
            return ERROR

    def signature(self, fn: ast.Function) -> FunctionFacts:
        params = tuple(self.resolve(p.type) for p in fn.parameters)
        ret = self.resolve(fn.return_type)
        facts = FunctionFacts(fn, params, ret)
        facts.local_types = {p.name: t for p, t in zip(fn.parameters, params, strict=True)}
        return facts

    # -- bodies ---------------------------------------------------------------------------------

    def body(self, facts: FunctionFacts) -> None:
        self.facts = facts
        self.locals = facts.local_types
        self.scope = {
            p.name: (t, p.pointer)
            for p, t in zip(facts.function.parameters, facts.parameter_types, strict=True)
        }
        self.dropped = {}
        self.effects = Effect.CPU
        self.block(facts.function.body, True)
        facts.direct_effects = self.effects
        facts.effects = self.effects

    def block(self, stmts: tuple[ast.Stmt, ...], live: bool) -> bool:
        exits = False
        dead = self.ctx.dead
        for s in stmts:
            if not live:
                dead.add(id(s))
            if self.stmt(s, live):
                exits = True
                live = False
        return exits

    def stmt(self, s: ast.Stmt, live: bool) -> bool:
        tp = type(s)
        if tp is ast.Set:
            assert isinstance(s, ast.Set)
            self.assign(s.name, self.expr(s.value, live), s.pointer, s)
            return False
        if tp is ast.Return:
            assert isinstance(s, ast.Return)
            t = self.expr(s.value, live)
            assert self.facts is not None
            want = self.facts.return_type
            if t is not ERROR and want is not ERROR and t != want:
                self.ctx.report(
                    "E-TYPE-MISMATCH",
                    f"function '{self.facts.function.id}' returns {want}, but this returns {t}",
                    s.value.pointer or s.pointer,
                    s.value.span or s.span,
                    'return a value of the declared type (Unit functions return {"unit": true})',
                    expected=str(want),
                    actual=str(t),
                )
            return True
        if tp is ast.ExprStmt:
            assert isinstance(s, ast.ExprStmt)
            self.expr(s.value, live)
            return False
        if tp is ast.If:
            assert isinstance(s, ast.If)
            self.condition(s.condition, live, "if")
            outer = self.scope
            self.scope = dict(outer)
            then_exits = self.block(s.then, live)
            then_scope = self.scope
            self.scope = dict(outer)
            else_exits = self.block(s.else_, live)
            else_scope = self.scope
            self.scope = outer
            self.join_branches(s, outer, then_scope, then_exits, else_scope, else_exits)
            return then_exits and else_exits
        if tp is ast.While:
            assert isinstance(s, ast.While)
            self.condition(s.condition, live, "while")
            self.loop_body(s, s.body, live)
            return False
        if tp is ast.ForRange:
            assert isinstance(s, ast.ForRange)
            for bound, what in ((s.start, "start"), (s.end, "end")):
                self.expect(bound, live, I32, f"forRange {what} must be", "convert the bound to I32")
            self.loop_body(s, s.body, live, counter=s.local)
            return False
        return tp is ast.Break or tp is ast.Continue

    def loop_body(
        self, loop: ast.While | ast.ForRange, body: tuple[ast.Stmt, ...], live: bool, counter: str = ""
    ) -> None:
        """Check a loop body in a child scope: nothing bound inside it (nor the counter) escapes."""
        assert self.facts is not None
        rebound = {n: t for n, (t, _) in self.scope.items() if t is not ERROR and self.locals.get(n) != t}
        if rebound:
            self.facts.loop_types[id(loop)] = rebound
        outer = self.scope
        self.scope = dict(outer)
        if counter:
            self.assign(counter, I32, loop.pointer, loop)
        self.block(body, live)
        self.scope = outer

    def join_branches(
        self,
        node: ast.If,
        outer: dict[str, tuple[SandboxType, str]],
        then_scope: dict[str, tuple[SandboxType, str]],
        then_exits: bool,
        else_scope: dict[str, tuple[SandboxType, str]],
        else_exits: bool,
    ) -> None:
        """The scope after an ``if``: what a branch that falls through bound survives when the other
        branch always exits; when both fall through, only names both bound with one type survive."""
        assert self.facts is not None
        if then_exits != else_exits:
            survivors = {
                n: v for n, v in (else_scope if then_exits else then_scope).items() if n not in outer
            }
        else:
            survivors = {}
            for name, (t, ptr) in then_scope.items():
                other = else_scope.get(name)
                if name in outer or other is None:
                    continue
                if t == other[0] or other[0] is ERROR:
                    survivors[name] = (t, ptr)
                elif t is ERROR:
                    survivors[name] = other
                else:
                    self.dropped[name] = (node.pointer, t, other[0])
            if then_exits:  # dead code follows: it may read what either branch bound
                for name, v in else_scope.items():
                    if name not in outer and name not in then_scope:
                        survivors[name] = v
                for name, v in then_scope.items():
                    if name not in outer and name not in else_scope:
                        survivors[name] = v
        for name in survivors:
            self.dropped.pop(name, None)
        self.scope.update(survivors)

    def assign(self, name: str, t: SandboxType, pointer: str, node: ast.Stmt) -> None:
        bound = self.scope.get(name)
        old = None if bound is None else bound[0]
        if old is None or old is ERROR:
            self.scope[name] = (t, pointer if bound is None else bound[1])
            self.dropped.pop(name, None)
            if self.locals.get(name) in (None, ERROR):
                self.locals[name] = t
            return
        if t is ERROR or t == old:
            return
        self.ctx.report(
            "E-LOCAL-TYPE",
            f"local '{name}' was first assigned {old} and cannot now hold {t}",
            pointer,
            node.span,
            "use another local name for the new value (a name keeps its type while it is in scope)",
            local=name,
            declared=str(old),
            assigned=str(t),
            first=bound[1] if bound is not None else "",
        )

    def unknown_local(self, e: ast.Var) -> None:
        dropped = self.dropped.get(e.name)
        if dropped is None:
            self.ctx.report(
                "E-LOCAL-UNKNOWN", f"'{e.name}' is not assigned before this read", e.pointer, e.span
            )
            return
        at, t1, t2 = dropped
        self.ctx.report(
            "E-LOCAL-UNKNOWN",
            f"'{e.name}' is not in scope here: the branches of the if at {at or '/'} bound it with "
            f"different types ({t1} and {t2})",
            e.pointer,
            e.span,
            "assign it before the if, or give it one type in both branches",
            name=e.name,
            types=[str(t1), str(t2)],
            statement=at,
        )

    def condition(self, e: ast.Expr, live: bool, what: str) -> None:
        self.expect(e, live, BOOL, f"{what} condition must be", 'compare explicitly, e.g. {"op": "ne", ...}')

    def expect(self, e: ast.Expr, live: bool, want: SandboxType, must_be: str, hint: str) -> None:
        """Type ``e`` and report E-TYPE-MISMATCH unless it is ``want`` (an unknown type stays quiet)."""
        t = self.expr(e, live)
        if t is not ERROR and t != want:
            self.ctx.report(
                "E-TYPE-MISMATCH",
                f"{must_be} {want}, got {t}",
                e.pointer,
                e.span,
                hint,
                expected=str(want),
                actual=str(t),
            )

    # -- expressions ----------------------------------------------------------------------------

    def expr(self, e: ast.Expr, live: bool) -> SandboxType:
        rule = _EXPR_RULES.get(type(e))
        if rule is None:
            self.ctx.report(
                "E-JSON-EXPR", f"unknown expression node {type(e).__name__}", getattr(e, "pointer", "")
            )
            return ERROR
        t = rule(self, e, live)
        self.types[id(e)] = t
        return t

    def var(self, e: ast.Var, live: bool) -> SandboxType:
        found = self.scope.get(e.name)
        if found is None:
            self.unknown_local(e)
            return ERROR
        return found[0]

    def literal(self, e: ast.Literal, live: bool) -> SandboxType:
        self.ctx.literals.append(e)
        kind = e.kind
        if live and kind in ALLOCATING_LITERALS:
            self.effects |= Effect.ALLOC
        t = LITERAL_TYPES.get(kind)
        if t is not None:
            return t
        if kind is ast.LiteralKind.OPAQUE_ID:
            brand = e.brand
            if brand is None or brand not in self.brands:
                self.ctx.report(
                    "E-TYPE-UNKNOWN",
                    f"opaque id type '{brand}' is not declared by the policy",
                    e.pointer,
                    e.span,
                    "the host policy must declare the opaque id type (declare_opaque_id_type)",
                    type=str(brand),
                    reason="undeclared-brand",
                )
                return ERROR
            cached = self.brand_types.get(brand)
            if cached is None:
                cached = self.brand_types[brand] = OpaqueIdType(brand)
            return cached
        self.ctx.report("E-JSON-EXPR", f"unknown literal kind {kind!r}", e.pointer, e.span)
        return ERROR

    def unary(self, e: ast.Unary, live: bool) -> SandboxType:
        t = self.expr(e.operand, live)
        if t is ERROR:
            return ERROR
        if e.op is ast.UnaryOp.NOT:
            if t == BOOL:
                return BOOL
            want = "Bool"
        else:
            if t in NUMERIC_TYPES:
                return t
            want = "I32, I64 or F64"
        self.ctx.report(
            "E-TYPE-MISMATCH",
            f"unary '{e.op.value}' needs {want}, got {t}",
            e.pointer,
            e.span,
            "",
            operator=e.op.value,
            expected=want,
            actual=str(t),
        )
        return ERROR

    def binary(self, e: ast.Binary, live: bool) -> SandboxType:
        lt = self.expr(e.left, live)
        rt = self.expr(e.right, live)
        op = e.op
        if op in _LOGIC:
            result = self.logic(e, lt, rt)
            if result is BOOL:
                self.decide_order(e)
            return result
        if lt is ERROR or rt is ERROR:
            return ERROR
        if op in _ARITH or op in _ORDER:
            if lt == rt and lt in NUMERIC_TYPES:
                return lt if op in _ARITH else BOOL
            what = "arithmetic" if op in _ARITH else "ordering"
            self.mismatch(
                e, f"{what} operator '{op.value}' needs the same numeric type on both sides", lt, rt
            )
            return ERROR
        if lt == rt:  # eq / ne: identical types of any kind
            return BOOL
        self.mismatch(e, f"'{op.value}' compares values of identical types only", lt, rt)
        return ERROR

    def logic(self, e: ast.Binary, lt: SandboxType, rt: SandboxType) -> SandboxType:
        bad = [(side, t) for side, t in (("left", lt), ("right", rt)) if t is not ERROR and t != BOOL]
        if bad:
            side, t = bad[0]
            operand = e.left if side == "left" else e.right
            self.ctx.report(
                "E-TYPE-MISMATCH",
                f"'{e.op.value}' needs Bool operands; the {side} operand is {t}",
                operand.pointer or e.pointer,
                operand.span or e.span,
                "",
                operator=e.op.value,
                left=str(lt),
                right=str(rt),
            )
            return ERROR
        return ERROR if lt is ERROR or rt is ERROR else BOOL

    def mismatch(self, e: ast.Binary, message: str, lt: SandboxType, rt: SandboxType) -> None:
        # The pointer names the expression (the stable location); the caret goes under the operand
        # at fault: the non-numeric one of an arithmetic or ordering operator, else the right one.
        numeric_only = e.op in _ARITH or e.op in _ORDER
        operand = e.left if numeric_only and lt not in NUMERIC_TYPES and rt in NUMERIC_TYPES else e.right
        self.ctx.report(
            "E-TYPE-MISMATCH",
            f"{message}: left is {lt}, right is {rt}",
            e.pointer,
            operand.span or e.span,
            _WIDEN_HINT,
            operator=e.op.value,
            left=str(lt),
            right=str(rt),
        )

    # -- and/or operand order -------------------------------------------------------------------

    def decide_order(self, e: ast.Binary) -> None:
        left_safe, left_size = self.failure_free_size(e.left)
        right_safe, right_size = self.failure_free_size(e.right)
        if left_safe and right_safe and right_size < left_size:
            self.ctx.right_first.add(id(e))

    def failure_free_size(self, e: ast.Expr) -> tuple[bool, int]:
        """(whether ``e`` cannot fail except on fuel, time or cancellation; its expression nodes)."""
        key = id(e)
        known = self.purity.get(key)
        if known is not None:
            return known
        if isinstance(e, ast.Var):
            result = (True, 1)
        elif isinstance(e, ast.Literal):
            result = (e.kind not in ALLOCATING_LITERALS, 1)  # a new text is charged (shape quotas)
        elif isinstance(e, ast.Unary):
            safe, size = self.failure_free_size(e.operand)
            result = (safe and e.op is not ast.UnaryOp.NEG, size + 1)  # -MIN overflows
        elif isinstance(e, ast.Binary):
            ls, lsz = self.failure_free_size(e.left)
            rs, rsz = self.failure_free_size(e.right)
            result = (ls and rs and e.op not in _ARITH, lsz + rsz + 1)  # overflow, / 0, non-finite
        else:
            assert isinstance(e, ast.Call)
            safe, size = True, 1
            for a in e.args:
                a_safe, a_size = self.failure_free_size(a)
                safe = safe and a_safe
                size += a_size
            target = self.targets.get(id(e))
            builtin = target.builtin if target is not None else None
            # a module function may fail anywhere; every binding call takes a host call
            safe = safe and builtin is not None and not builtin.can_fail
            result = (safe, size)
        self.purity[key] = result
        return result

    # -- calls ----------------------------------------------------------------------------------

    def call(self, e: ast.Call, live: bool) -> SandboxType:
        arg_types = tuple(self.expr(a, live) for a in e.args)
        name = e.name
        if not self.call_name_ok(e):
            return ERROR
        facts = self.ctx.facts.get(name)
        builtin = BUILTINS.get(name) if facts is None else None
        if builtin is not None:
            self.targets[id(e)] = CallTarget(CallKind.BUILTIN, name, builtin=builtin)
            self.surface_check(e, builtin.surface)
            if live and builtin.allocates:
                self.effects |= Effect.ALLOC
            return self.builtin_call(e, builtin.generic, arg_types)
        if e.generic_type is not None:
            shadow = " (a function of this module, which shadows the built-in)" if name in BUILTINS else ""
            self.ctx.report(
                "E-CALL-GENERIC",
                f"'{name}'{shadow} takes no genericType (only list.empty, map.empty and record.new do)",
                e.generic_type.pointer or e.pointer,
                e.span,
                "remove genericType",
                call=name,
            )
            return ERROR
        if facts is not None:
            self.targets[id(e)] = CallTarget(CallKind.FUNCTION, name)
            assert self.facts is not None
            self.facts.all_callees.setdefault(name, e)
            if live:
                self.facts.live_callees.setdefault(name, e)
            self.check_args(e, f"function '{name}'", facts.parameter_types, arg_types)
            assert facts.return_type is not None
            return facts.return_type
        binding = self.ctx.catalog.get(name)
        if binding is not None:
            self.targets[id(e)] = CallTarget(CallKind.BINDING, name, binding=binding)
            if live:
                assert self.facts is not None
                self.facts.live_bindings.setdefault(name, e)
                self.effects |= binding.required_effects
            self.check_args(e, f"binding '{name}'", binding.parameters, arg_types)
            return binding.return_type
        self.unknown_call(e)
        return ERROR

    def call_name_ok(self, e: ast.Call) -> bool:
        ok = self.name_checked.get(e.name)
        if ok is None:
            fragment = dangerous_fragment(e.name)
            ok = fragment is None
            self.name_checked[e.name] = ok
        if not ok:
            self.ctx.report(
                "E-IR-CLR-REF",
                f"call '{e.name}' names host machinery",
                e.pointer,
                e.span,
                "kernels reach the host only through registered bindings",
                call=e.name,
                fragment=dangerous_fragment(e.name) or "",
            )
        return ok

    def surface_check(self, e: ast.Call, surface: str) -> None:
        """A built-in outside the policy's language surface is E-CALL-SURFACE, naming the built-in
        and the surface it needs (``dotboxd.core.builtins.SURFACES``, smallest first)."""
        allowed = self.ctx.policy.language_surface
        if SURFACES.index(surface) <= SURFACES.index(allowed):
            return
        self.ctx.report(
            "E-CALL-SURFACE",
            f"built-in '{e.name}' belongs to language surface {surface}, but the policy allows only {allowed}",
            e.pointer,
            e.span,
            f"write it with {allowed} built-ins, or use a policy whose languageSurface is {surface}",
            call=e.name,
            surface=surface,
        )

    def unknown_call(self, e: ast.Call) -> None:
        known = sorted({*BUILTINS, *self.ctx.functions, *self.ctx.catalog})
        close = difflib.get_close_matches(e.name, known, n=3)
        self.ctx.report(
            "E-CALL-UNKNOWN",
            f"'{e.name}' is not a built-in, a function of this module or a registered host binding",
            e.pointer,
            e.span,
            f"did you mean {', '.join(close)}?"
            if close
            else "the host must register a binding before a kernel can call it",
            call=e.name,
        )

    def check_args(
        self, e: ast.Call, callee: str, params: tuple[SandboxType, ...], args: tuple[SandboxType, ...]
    ) -> None:
        if len(params) != len(args):
            self.ctx.report(
                "E-CALL-ARITY",
                f"{callee} takes {len(params)} argument(s), got {len(args)}",
                e.pointer,
                e.span,
                "",
                call=e.name,
                expected=len(params),
                actual=len(args),
            )
            return
        for i, (want, got) in enumerate(zip(params, args, strict=True)):
            if got is not ERROR and want is not ERROR and got != want:
                arg = e.args[i]
                self.ctx.report(
                    "E-TYPE-MISMATCH",
                    f"argument {i + 1} of {callee} must be {want}, got {got}",
                    arg.pointer or e.pointer,
                    arg.span or e.span,
                    _WIDEN_HINT if want in NUMERIC_TYPES and got in NUMERIC_TYPES else "",
                    call=e.name,
                    argument=i + 1,
                    expected=str(want),
                    actual=str(got),
                )
                return

    def builtin_call(self, e: ast.Call, rule: GenericRule, arg_types: tuple[SandboxType, ...]) -> SandboxType:
        generic: SandboxType | None = None
        if rule is GenericRule.FORBIDDEN:
            if e.generic_type is not None:
                self.ctx.report(
                    "E-CALL-GENERIC",
                    f"'{e.name}' takes no genericType (only list.empty, map.empty and record.new do)",
                    e.generic_type.pointer or e.pointer,
                    e.span,
                    "remove genericType",
                    call=e.name,
                )
                return ERROR
        else:
            if e.generic_type is None:
                what = (
                    "the element type T"
                    if rule is GenericRule.ELEMENT
                    else "the whole collection/record type"
                )
                self.ctx.report(
                    "E-CALL-GENERIC",
                    f"'{e.name}' needs a genericType ({what})",
                    e.pointer,
                    e.span,
                    'add "genericType"',
                    call=e.name,
                )
                return ERROR
            generic = self.resolve(e.generic_type)
            if generic is ERROR:
                return ERROR
        if any(t is ERROR for t in arg_types):
            return ERROR
        const_ints: tuple[int | None, ...] = ()
        if e.name == "record.get":
            const_ints = tuple(
                a.value
                if type(a) is ast.Literal and a.kind is ast.LiteralKind.I32 and type(a.value) is int
                else None
                for a in e.args
            )
        builtin = BUILTINS[e.name]
        try:
            return builtin.result_type(CallSite(arg_types, generic, const_ints))
        except CallTypeError as err:
            node: Any = (
                e.args[err.arg_index] if err.arg_index is not None and err.arg_index < len(e.args) else e
            )
            evidence: dict[str, Any] = {"call": e.name}
            if err.arg_index is not None:
                evidence["argument"] = err.arg_index + 1
            if err.expected is not None:
                evidence["expected"] = err.expected
                evidence["actual"] = err.actual
            if err.code == "E-CALL-ARITY":
                evidence["actual"] = len(arg_types)
            self.ctx.report(
                err.code,
                err.message,
                node.pointer or e.pointer,
                node.span or e.span,
                f"signature: {e.name} {builtin.signature}",
                **evidence,
            )
            return ERROR


#: The rule typing each expression node (looked up by exact class, as the node types are final).
_EXPR_RULES: dict[type[ast.Expr], Callable[[_Checker, Any, bool], SandboxType]] = {
    ast.Var: _Checker.var,
    ast.Literal: _Checker.literal,
    ast.Binary: _Checker.binary,
    ast.Call: _Checker.call,
    ast.Unary: _Checker.unary,
}
