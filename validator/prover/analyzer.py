"""The static cost semantics: an abstract interpreter that mirrors the reference interpreter's charges.

It walks one function of a validated plan the way ``runtime/reference`` executes it, but over
abstract values (``domain.py``) and symbolic cost vectors (``state.py``): every charge the meter
makes at run time - 1 fuel per statement and per expression node, 5 fuel and 1 loop unit per
iteration, the collection and built-in charges of ``dotboxd.core.costs``, one host call per binding
call, the shape charge of every new value - is added here at the same point, with the same amount
as a function of the values' sizes. Module functions are inlined (there is no recursion).

Loops: ``forRange`` runs ``max(0, end - start)`` times; a ``while`` needs a ranking function first
(``termination.py``). Each loop body is analysed twice: a *probe* pass with fresh atoms for the
locals it modifies yields each local's change per iteration, from which a loop-head invariant
follows; the *final* pass, with atoms constrained by that invariant, yields the per-iteration cost
and the safety obligations. Loop atoms are eliminated at the loop exit, so every bound reported is
over the entry inputs only.

Every operation that can fail for a reason other than a quota (overflow, division by zero, an index
out of range, a binding) gets a safety obligation (``safety.py``) and, unless proved safe, ends the
*must* prefix used for counterexamples.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from dotboxd.core import ast, costs
from dotboxd.core.types import F64, I32, I64, ListType, MapType, RecordType, SandboxType
from dotboxd.core.values import utf16_len
from dotboxd.validator.plan import CallKind, ExecutionPlan

from . import intervals, termination
from .domain import (
    INT_RANGES,
    OTHER,
    UNKNOWN_BOOL,
    ABool,
    AInt,
    AText,
    AVal,
    Domain,
)
from .obligations import ObligationLog
from .report import LoopFact, SafetyFact, Witness
from .state import (
    ALLOCATION,
    FUEL,
    HOST_CALLS,
    LOOPS,
    STRING_BYTES,
    Candidate,
    Flow,
    Lower,
    State,
    Upper,
    add_lower,
    add_upper,
    binding_resource,
    join_lower,
    join_upper,
    lower_delta,
    plus_lower,
    plus_upper,
    upper_delta,
)
from .sym import FALSE, TRUE, ZERO, Cond, Poly, ProverLimit, Sym, const
from .text import Namer

MAX_STEPS = 60_000
"""Abstract evaluation steps per analysed function before the prover gives up (UNKNOWN)."""

MAX_CANDIDATES = 48
MAX_PC = 48
MAX_RANKING_CANDIDATES = 4

_TEXT_LITERALS = frozenset(
    {ast.LiteralKind.STRING, ast.LiteralKind.PATH, ast.LiteralKind.URI, ast.LiteralKind.OPAQUE_ID}
)
_COMPARISONS = {
    ast.BinaryOp.LT: "lt",
    ast.BinaryOp.LTE: "le",
    ast.BinaryOp.GT: "gt",
    ast.BinaryOp.GTE: "ge",
}
_NEGATED = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt", "eq": "ne", "ne": "eq"}
_FLIPPED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}


@dataclass
class FunctionAnalysis:
    """The raw result of analysing one function (before any budget question is asked)."""

    function: str
    upper: Upper
    candidates: list[Candidate]
    loops: list[LoopFact]
    safety: dict[str, SafetyFact]
    safe_nodes: set[int]
    unsafe_nodes: set[int]
    note: str = ""
    complete: bool = True


_Summary = tuple[AVal, Upper, Lower, bool, bool, Cond | None]


@dataclass
class _Frame:
    function: str
    top: bool


@dataclass
class LoopAtoms:
    """Atoms introduced for one loop, with the ranges used to eliminate them at its exit."""

    elim: dict[int, tuple[Poly, Poly]] = field(default_factory=dict)


class Analyzer:
    """Analyses functions of one plan under one policy. Not thread-safe; one per proof run."""

    def __init__(self, plan: ExecutionPlan, sym: Sym, domain: Domain, log: ObligationLog) -> None:
        self.plan = plan
        self.sym = sym
        self.dom = domain
        self.log = log
        self.facts: dict[int, list[Cond]] = {}
        self.probe = 0
        self.steps = 0
        self.frames: list[_Frame] = []
        self.candidates: list[Candidate] = []
        self.loop_facts: list[LoopFact] = []
        self.safety: dict[str, SafetyFact] = {}
        self.safe_nodes: set[int] = set()
        self.unsafe_nodes: set[int] = set()
        self.refute_arith: Callable[[State, dict[int, int], Cond], Witness | None] | None = None
        self._loop_counter = 0
        self.namer = Namer(sym)
        self._summaries: dict[tuple[object, ...], list[tuple[tuple[Cond, ...], _Summary]]] = {}

    # --- entry ---------------------------------------------------------------------------------

    def analyze(
        self,
        function_id: str,
        params: list[AVal],
        input_charges: bool,
        input_sbytes: dict[int, Poly] | None = None,
    ) -> FunctionAnalysis:
        """Analyse ``function_id`` called with abstract ``params`` (an entrypoint run when
        ``input_charges``: the inputs' shape charges come first)."""
        self.steps = 0
        self.candidates = []
        self.loop_facts = []
        self.safety = {}
        self.safe_nodes = set()
        self.unsafe_nodes = set()
        self._summaries = {}
        info = self.plan.functions[function_id]
        st = State({p.name: v for p, v in zip(info.function.parameters, params, strict=True)})
        if input_charges:
            for index, v in enumerate(params):
                sbytes = (input_sbytes or {}).get(index)
                if sbytes is None:
                    self._shape_charge(st, v)
                else:  # the input's own string bytes, exactly (an atom of the input model)
                    self.fuel(st, self.sym.fdiv(self.dom.nodes_hi(v), costs.SHAPE_WALK_NODES_PER_FUEL), 0)
                    self.charge(st, STRING_BYTES, sbytes, sbytes)
        self.frames = [_Frame(function_id, True)]
        flow = self.block(info.function.body, st)
        upper = join_upper(self.sym, [s.U for s, _ in flow.returns]) if flow.returns else {}
        for key in (FUEL, LOOPS, HOST_CALLS, ALLOCATION):
            upper.setdefault(key, ZERO)
        upper[ALLOCATION] = self.total_allocation(upper)
        upper.pop(STRING_BYTES, None)
        candidates = [
            Candidate(c.pc, tuple(sorted(self.lower_allocation(dict(c.L)).items()))) for c in self.candidates
        ]
        return FunctionAnalysis(
            function_id,
            upper,
            candidates,
            list(self.loop_facts),
            dict(self.safety),
            set(self.safe_nodes),
            set(self.unsafe_nodes),
        )

    def total_allocation(self, upper: Upper) -> Poly | None:
        """Allocation = text bytes (never more than maxTotalStringBytes on a quota-free prefix)
        + everything else."""
        text, rest = upper.get(STRING_BYTES, ZERO), upper.get(ALLOCATION, ZERO)
        if text is None or rest is None:
            return None
        return self.sym.add(rest, self.sym.min(text, const(self.dom.q.string_bytes)))

    def lower_allocation(self, low: Lower) -> Lower:
        out = dict(low)
        out[ALLOCATION] = self.sym.add(out.get(ALLOCATION, ZERO), out.pop(STRING_BYTES, ZERO))
        return out

    # --- bookkeeping ---------------------------------------------------------------------------

    def step(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise ProverLimit("the function is too large to analyse within the prover's budget")
        self.log.steps_left -= 1
        if self.log.steps_left < 0:
            raise ProverLimit("the module is too large to analyse within the prover's budget")

    @property
    def function(self) -> str:
        return self.frames[-1].function

    def charge(self, st: State, resource: str, up: Poly | None, low: Poly | None = None) -> None:
        if self.probe:
            return
        add_upper(self.sym, st.U, resource, up)
        must = up if low is None else low
        if not st.lstop and must is not None:
            add_lower(self.sym, st.L, resource, must)

    def fuel(self, st: State, amount: int | Poly, low: int | Poly | None = None) -> None:
        up = const(amount) if isinstance(amount, int) else amount
        lo = None if low is None else (const(low) if isinstance(low, int) else low)
        self.charge(st, FUEL, up, lo)

    def stop(self, st: State) -> None:
        """End the must prefix here (a non-quota failure may happen next, or this point on is not
        surely reached); leave a refutation candidate if the prefix was must."""
        if self.probe or st.lstop:
            return
        if st.record:
            self._candidate(st)
        st.lstop = True

    def _candidate(self, st: State) -> None:
        if len(self.candidates) >= MAX_CANDIDATES:
            return
        cand = Candidate(st.pc, tuple(sorted(st.L.items())))
        if cand not in self.candidates:
            self.candidates.append(cand)

    def add_pc(self, st: State, c: Cond) -> bool:
        """Narrow the path condition; False if it is full (the caller then treats the branch as
        inexact)."""
        if c == TRUE or c in st.pc:
            return True
        if len(st.pc) >= MAX_PC:
            return False
        st.pc = (*st.pc, c)
        return True

    def local_type_at(self, loop: ast.Stmt, name: str) -> SandboxType | None:
        """The type of ``name`` at the head of ``loop`` (block scoping may rebind it)."""
        return self.plan.functions[self.function].type_at_loop(loop, name)

    # --- statements ----------------------------------------------------------------------------

    def block(self, statements: tuple[ast.Stmt, ...], st: State) -> Flow:
        out = Flow()
        current: State | None = st
        for stmt in statements:
            if current is None:
                break
            self.step()
            self.fuel(current, costs.STATEMENT_FUEL)
            flow = self.statement(stmt, current)
            out.absorb(flow)
            current = flow.normal
        out.normal = current
        return out

    def statement(self, stmt: ast.Stmt, st: State) -> Flow:
        if isinstance(stmt, ast.Set):
            st.vars[stmt.name] = self.eval(stmt.value, st)
            return Flow(st)
        if isinstance(stmt, ast.ExprStmt):
            self.eval(stmt.value, st)
            return Flow(st)
        if isinstance(stmt, ast.Return):
            value = self.eval(stmt.value, st)
            if self.frames[-1].top and st.record and not st.lstop and not self.probe:
                self._candidate(st)
            return Flow(None, returns=[(st, value)])
        if isinstance(stmt, ast.If):
            return self._if(stmt, st)
        if isinstance(stmt, ast.While | ast.ForRange):
            return self._loop(stmt, st)
        if isinstance(stmt, ast.Break):
            return Flow(None, breaks=[st])
        return Flow(None, continues=[st])

    def _if(self, node: ast.If, st: State) -> Flow:
        value = self.eval(node.condition, st)
        c = value.cond if isinstance(value, ABool) else None
        if c is TRUE or c == TRUE:
            return self.block(node.then, st)
        if c == FALSE:
            return self.block(node.else_, st)
        then_st, else_st = st.copy(), st.copy()
        exact = c is not None and self.add_pc(then_st, c) and self.add_pc(else_st, self.sym.not_(c))
        if not exact:
            then_st.pc, else_st.pc = st.pc, st.pc
            then_st.record = else_st.record = False
        self.refine(then_st, node.condition, True)
        self.refine(else_st, node.condition, False)
        ft = self.block(node.then, then_st)
        fe = self.block(node.else_, else_st)
        out = Flow()
        out.absorb(ft)
        out.absorb(fe)
        normals = [s for s in (ft.normal, fe.normal) if s is not None]
        if not normals:
            return out
        if len(normals) == 1:
            n = normals[0]
            if not exact:
                # the other branch may leave: what follows is not surely reached
                if st.record and not st.lstop and not self.probe:
                    self._candidate(st)
                n.record = st.record
                n.lstop = True
            out.normal = n
            return out
        leaves = any(f.returns or f.breaks or f.continues for f in (ft, fe))
        if not exact and leaves and st.record and not st.lstop and not self.probe:
            # a branch the prover cannot tell apart may leave early: the join is not surely reached
            self._candidate(st)
        out.normal = self._join_states(st, ft.normal, fe.normal, c if exact else None)
        if not exact and leaves:
            out.normal.lstop = True
        return out

    def _join_states(self, base: State, a: State | None, b: State | None, cond: Cond | None) -> State:
        assert a is not None and b is not None
        s = self.sym
        names = [n for n in a.vars if n in b.vars] + [n for n in a.vars if n not in b.vars]
        names += [n for n in b.vars if n not in a.vars]
        merged: dict[str, AVal] = {}
        for name in names:
            va, vb = a.vars.get(name), b.vars.get(name)
            joined = self.dom.join(va, vb, cond) if va is not None and vb is not None else (va or vb)
            assert joined is not None
            merged[name] = joined
        out = State(merged, base.pc, record=base.record, risk=a.risk or b.risk)
        if not self.probe:
            du = join_upper(s, [upper_delta(s, a.U, base.U), upper_delta(s, b.U, base.U)], cond)
            out.U = plus_upper(s, base.U, du)
            dl = join_lower(s, [lower_delta(s, a.L, base.L), lower_delta(s, b.L, base.L)], cond)
            out.L = plus_lower(s, base.L, dl)
        else:
            out.U, out.L = dict(base.U), dict(base.L)
        out.lstop = base.lstop
        out.assumed = max(a.assumed, b.assumed)
        if a.lstop or b.lstop:
            self.stop(out)
        elif cond is not None:
            self._carry_paths(out, base.pc, cond, [a.pc, b.pc])
        return out

    def _carry_paths(
        self, st: State, base_pc: tuple[Cond, ...], cond: Cond, pcs: list[tuple[Cond, ...]]
    ) -> None:
        """After an exact merge, keep what each branch learned on the way to the merge (an inner
        branch that returned, an operation assumed not to fail): the merge is reached only along
        one of them, so the disjunction of their path conditions beyond the common part holds."""
        s = self.sym
        extras = [pc[len(base_pc) :] for pc in pcs]
        if extras == [(cond,), (s.not_(cond),)]:
            return  # nothing beyond the branch condition itself
        if not self.add_pc(st, s.or_(*(s.and_(*e) for e in extras))):
            self.stop(st)

    # --- refinement ----------------------------------------------------------------------------

    def refine(self, st: State, cond: ast.Expr, truth: bool) -> None:
        """Narrow ``st`` by knowing that ``cond`` evaluated to ``truth``."""
        if isinstance(cond, ast.Unary) and cond.op is ast.UnaryOp.NOT:
            self.refine(st, cond.operand, not truth)
            return
        if not isinstance(cond, ast.Binary):
            return
        op = cond.op
        if (op is ast.BinaryOp.AND and truth) or (op is ast.BinaryOp.OR and not truth):
            self.refine(st, cond.left, truth)
            self.refine(st, cond.right, truth)
            return
        rel = _COMPARISONS.get(op) or (
            "eq" if op is ast.BinaryOp.EQ else "ne" if op is ast.BinaryOp.NE else None
        )
        if rel is None:
            return
        if self.plan.type_of(cond.left) not in INT_RANGES:
            return
        if not truth:
            rel = _NEGATED[rel]
        left = self.peek(cond.left, st)
        right = self.peek(cond.right, st)
        if not isinstance(left, AInt) or not isinstance(right, AInt):
            return
        s = self.sym
        if left.exact is not None and right.exact is not None:
            self.add_pc(st, _relation(s, rel, left.exact, right.exact))
        if isinstance(cond.left, ast.Var) and left.exact is None:
            st.vars[cond.left.name] = _narrow(s, left, rel, right)
        if isinstance(cond.right, ast.Var) and right.exact is None:
            st.vars[cond.right.name] = _narrow(s, right, _FLIPPED[rel], left)

    def peek(self, expr: ast.Expr, st: State) -> AVal:
        """The value of a side-effect-free look at ``expr`` (no charges, no obligations)."""
        scratch = st.copy()
        self.probe += 1
        try:
            return self.eval(expr, scratch)
        finally:
            self.probe -= 1

    # --- expressions ---------------------------------------------------------------------------

    def eval(self, e: ast.Expr, st: State) -> AVal:
        self.step()
        self.fuel(st, costs.EXPRESSION_FUEL)
        if isinstance(e, ast.Literal):
            return self._literal(e, st)
        if isinstance(e, ast.Var):
            found = st.vars.get(e.name)
            if found is not None:
                return found
            t = self.plan.expr_types.get(id(e))
            return self.dom.top(t) if t is not None else OTHER
        if isinstance(e, ast.Unary):
            return self._unary(e, st)
        if isinstance(e, ast.Binary):
            return self._binary(e, st)
        return self._call(e, st)

    def _literal(self, e: ast.Literal, st: State) -> AVal:
        kind = e.kind
        if kind in (ast.LiteralKind.I32, ast.LiteralKind.I64):
            assert isinstance(e.value, int)
            return self.dom.int_const(e.value, I32 if kind is ast.LiteralKind.I32 else I64)
        if kind is ast.LiteralKind.BOOL:
            return ABool(TRUE if e.value else FALSE)
        if kind in _TEXT_LITERALS:
            assert isinstance(e.value, str)
            n = utf16_len(e.value)
            if n > self.dom.q.string_length:
                st.risk = True
            value = AText(const(n), const(n))
            self._shape_charge(st, value)
            return value
        return OTHER

    def _unary(self, e: ast.Unary, st: State) -> AVal:
        operand = self.eval(e.operand, st)
        if e.op is ast.UnaryOp.NOT:
            if isinstance(operand, ABool) and operand.cond is not None:
                return ABool(self.sym.not_(operand.cond))
            return UNKNOWN_BOOL
        if not isinstance(operand, AInt):
            return OTHER  # F64 negation never fails
        s = self.sym
        lo_t, _hi_t = INT_RANGES[operand.type]
        x = operand.exact
        if x is not None:
            fault = s.eq(s.add_const(x, -lo_t))
            self.safety_check(st, e, "neg", fault, f"{operand.type} overflow (negating {lo_t})", True)
            result = s.neg(x)
            self._in_type(st, fault, result, operand.type)
            return AInt(result, result, operand.type)
        fault = s.ge(s.sub(const(lo_t), operand.lo))
        self.safety_check(st, e, "neg", fault, f"{operand.type} overflow (negating {lo_t})", False)
        lo, hi = intervals.neg(s, (operand.lo, operand.hi))
        return self._clip(AInt(lo, hi, operand.type))

    def _binary(self, e: ast.Binary, st: State) -> AVal:
        op = e.op
        if op in (ast.BinaryOp.AND, ast.BinaryOp.OR):
            return self._short_circuit(e, st)
        left_type = self.plan.type_of(e.left)
        left = self.eval(e.left, st)
        right = self.eval(e.right, st)
        s = self.sym
        if op in _COMPARISONS:
            if (
                isinstance(left, AInt)
                and isinstance(right, AInt)
                and left.exact is not None
                and right.exact is not None
            ):
                return ABool(_relation(s, _COMPARISONS[op], left.exact, right.exact))
            return UNKNOWN_BOOL
        if op in (ast.BinaryOp.EQ, ast.BinaryOp.NE):
            return self._equality(e, left, right, left_type, st)
        if isinstance(left, AInt) and isinstance(right, AInt):
            return self._arith(e, left, right, st)
        # F64 arithmetic: a non-finite result is InvalidInput, which the prover does not track
        self.stop(st)
        return OTHER

    def _equality(self, e: ast.Binary, left: AVal, right: AVal, t: SandboxType, st: State) -> AVal:
        s = self.sym
        negate = e.op is ast.BinaryOp.NE
        if isinstance(t, ListType | MapType | RecordType):
            self.fuel(st, s.add(self.dom.nodes_hi(left), self.dom.nodes_hi(right)), 2)
            return UNKNOWN_BOOL
        c: Cond | None = None
        if isinstance(left, AInt) and isinstance(right, AInt):
            if left.exact is not None and right.exact is not None:
                c = s.eq(s.sub(left.exact, right.exact))
        elif (
            isinstance(left, ABool)
            and isinstance(right, ABool)
            and left.cond is not None
            and right.cond is not None
        ):
            both = s.and_(left.cond, right.cond)
            neither = s.and_(s.not_(left.cond), s.not_(right.cond))
            c = s.or_(both, neither)
        if c is None:
            return UNKNOWN_BOOL
        return ABool(s.not_(c) if negate else c)

    def _short_circuit(self, e: ast.Binary, st: State) -> AVal:
        s = self.sym
        first, second = (e.right, e.left) if id(e) in self.plan.right_first else (e.left, e.right)
        v1 = self.eval(first, st)
        c1 = v1.cond if isinstance(v1, ABool) else None
        is_or = e.op is ast.BinaryOp.OR
        if c1 is not None and c1 == (TRUE if is_or else FALSE):
            return v1
        # the second operand runs only when the first does not decide: charge it as "may run"
        saved_l, saved_stop, saved_record, saved_pc = dict(st.L), st.lstop, st.record, st.pc
        saved_vars = dict(st.vars)
        saved_assumed = st.assumed
        st.record = False
        if c1 is not None:
            self.add_pc(st, s.not_(c1) if is_or else c1)
        self.refine(st, first, not is_or)
        v2 = self.eval(second, st)
        faulted = (st.lstop and not saved_stop) or st.assumed > saved_assumed
        st.L, st.record, st.pc, st.vars = saved_l, saved_record, saved_pc, saved_vars
        st.lstop, st.assumed = saved_stop, saved_assumed
        if faulted:
            self.stop(st)
        c2 = v2.cond if isinstance(v2, ABool) else None
        if c1 is None or c2 is None:
            return UNKNOWN_BOOL
        return ABool(s.or_(c1, c2) if is_or else s.and_(c1, c2))

    def _arith(self, e: ast.Binary, a: AInt, b: AInt, st: State) -> AVal:
        s = self.sym
        t = a.type
        lo_t, hi_t = INT_RANGES[t]
        op = e.op
        xa, xb = a.exact, b.exact
        exact = xa is not None and xb is not None
        name = op.value
        if op in (ast.BinaryOp.ADD, ast.BinaryOp.SUB, ast.BinaryOp.MUL):
            if xa is not None and xb is not None:
                r = (
                    s.add(xa, xb)
                    if op is ast.BinaryOp.ADD
                    else s.sub(xa, xb)
                    if op is ast.BinaryOp.SUB
                    else s.mul(xa, xb)
                )
                fault = s.or_(s.lt(r, const(lo_t)), s.lt(const(hi_t), r))
                self.safety_check(st, e, name, fault, f"{t} overflow", True)
                self._in_type(st, fault, r, t)
                return AInt(r, r, t)
            if op is ast.BinaryOp.ADD:
                lo, hi = intervals.add(s, (a.lo, a.hi), (b.lo, b.hi))
            elif op is ast.BinaryOp.SUB:
                lo, hi = intervals.sub(s, (a.lo, a.hi), (b.lo, b.hi))
            elif xb is not None and xb.is_const:
                lo, hi = intervals.scale(s, (a.lo, a.hi), xb.const)
            elif xa is not None and xa.is_const:
                lo, hi = intervals.scale(s, (b.lo, b.hi), xa.const)
            else:
                lo, hi = intervals.mul(s, (a.lo, a.hi), (b.lo, b.hi))
            fault = s.or_(s.lt(lo, const(lo_t)), s.lt(const(hi_t), hi))
            self.safety_check(st, e, name, fault, f"{t} overflow", False)
            return self._clip(AInt(lo, hi, t))
        # div / rem: a zero divisor, and MIN / -1
        if xb is not None:
            zero = s.eq(xb)
            minus_one = s.eq(s.add_const(xb, 1))
        else:
            zero = s.and_(s.ge(s.neg(b.lo)), s.ge(b.hi))
            minus_one = s.and_(s.ge(s.add_const(s.neg(b.lo), -1)), s.ge(s.add_const(b.hi, 1)))
        at_min = s.eq(s.add_const(xa, -lo_t)) if xa is not None else s.ge(s.sub(const(lo_t), a.lo))
        fault = s.or_(zero, s.and_(at_min, minus_one))
        self.safety_check(st, e, name, fault, "division by zero, or MIN / -1", exact)
        k = xb.const if xb is not None and xb.is_const else 0
        if op is ast.BinaryOp.DIV:
            if k != 0 and xa is not None:
                q = _trunc_div_exact(s, xa, abs(k))
                q = s.neg(q) if k < 0 else q
                return AInt(q, q, t)
            if k != 0:
                lo, hi = intervals.trunc_div_const(s, (a.lo, a.hi), abs(k))
                if k < 0:
                    lo, hi = intervals.neg(s, (lo, hi))
                return self._clip(AInt(lo, hi, t))
            lo, hi = intervals.trunc_div(s, (a.lo, a.hi))
            return self._clip(AInt(lo, hi, t))
        if k != 0 and xa is not None:
            q = _trunc_div_exact(s, xa, abs(k))
            r = s.sub(xa, s.scale(q, abs(k)))
            return AInt(r, r, t)
        lo, hi = intervals.trunc_rem(s, (a.lo, a.hi), (b.lo, b.hi))
        return self._clip(AInt(lo, hi, t))

    def _clip(self, v: AInt) -> AInt:
        """Values on surviving paths are in their type's range (an overflow would have failed)."""
        lo_t, hi_t = INT_RANGES[v.type]
        lo, hi = intervals.meet(self.sym, (v.lo, v.hi), (const(lo_t), const(hi_t)))
        return AInt(lo, hi, v.type)

    def _in_type(self, st: State, fault: Cond, r: Poly, t: SandboxType) -> None:
        if fault != FALSE:
            lo_t, hi_t = INT_RANGES[t]
            s = self.sym
            self.add_pc(st, s.and_(s.le(const(lo_t), r), s.le(r, const(hi_t))))

    # --- calls ---------------------------------------------------------------------------------

    def _call(self, e: ast.Call, st: State) -> AVal:
        args = [self.eval(a, st) for a in e.args]
        target = self.plan.call_target(e)
        if target.kind is CallKind.BUILTIN:
            from .builtin_rules import apply_builtin

            return apply_builtin(self, target.name, args, e, st)
        if target.kind is CallKind.FUNCTION:
            return self._inline(target.name, args, st)
        desc = target.binding
        assert desc is not None
        self.stop(st)  # capability gate, then the binding itself may fail
        st.risk = True
        self.charge(st, HOST_CALLS, const(costs.HOST_CALL_COUNT))
        self.charge(st, binding_resource(desc.id), const(costs.HOST_CALL_COUNT))
        cost = desc.cost
        if cost is not None and cost.base_fuel:
            self.fuel(st, cost.base_fuel)
        result = self.dom.top(desc.return_type)
        self._shape_charge(st, result)
        if cost is not None:
            sb = self.dom.sbytes_hi(result)
            if cost.allocation_from_return_bytes:
                self.charge(st, ALLOCATION, sb, ZERO)
            if cost.per_byte_fuel:
                self.fuel(st, self.sym.scale(sb, cost.per_byte_fuel), 0)
        return result

    def _inline(self, function_id: str, args: list[AVal], st: State) -> AVal:
        """Analyse a call by analysing the callee's body with the argument values. A call with the
        same callee, arguments and path state as an earlier one reuses its summary (so a call
        tree that repeats itself costs linear, not exponential, work)."""
        key = (function_id, tuple(args), st.lstop, st.record, self.probe > 0)
        known = self._summaries.setdefault(key, [])
        # a summary made under a path condition that the current one extends still holds here
        # (more premises only make its proofs easier)
        summary = next((sm for pc, sm in known if st.pc[: len(pc)] == pc), None)
        if summary is None:
            summary = self._summarise(function_id, args, st)
            known.append((st.pc, summary))
        value, du, dl, stopped, risk, assumed = summary
        s = self.sym
        if not self.probe:
            st.U = plus_upper(s, st.U, du)
        st.risk = st.risk or risk
        if not st.lstop:
            if stopped:
                # the callee may fail (or leave its must path) before any of its returns: its
                # lower cost is a join over returns whose path conditions (such as "this index is
                # in range") are not carried here, so it must not join the caller's must prefix.
                # The must path ends at the call; the callee's own candidates, recorded while it
                # was analysed, keep its prefix together with the conditions that make it must.
                self.stop(st)
                return value
            if assumed is not None:
                if not self.add_pc(st, assumed):
                    self.stop(st)  # the same: without its assumption the callee's cost is not must
                    return value
                st.assumed += 1
            st.L = plus_lower(s, st.L, dl)
        return value

    def _summarise(self, function_id: str, args: list[AVal], st: State) -> _Summary:
        info = self.plan.functions[function_id]
        callee = st.copy()
        callee.vars = {p.name: v for p, v in zip(info.function.parameters, args, strict=True)}
        self.frames.append(_Frame(function_id, False))
        try:
            flow = self.block(info.function.body, callee)
        finally:
            self.frames.pop()
        returns = flow.returns
        if not returns:  # validated functions always return; be safe
            return self.dom.top(info.return_type), {FUEL: None}, {}, True, True, None
        s = self.sym
        value: AVal | None = None
        for _, v in returns:
            value = self.dom.join(value, v)
        assert value is not None
        du: Upper = {}
        dl: Lower = {}
        if not self.probe:
            du = join_upper(s, [upper_delta(s, r.U, st.U) for r, _ in returns])
            dl = join_lower(s, [lower_delta(s, r.L, st.L) for r, _ in returns])
        stopped = any(r.lstop for r, _ in returns)
        risk = any(r.risk for r, _ in returns)
        assumed: Cond | None = None
        if not stopped and any(r.assumed > st.assumed for r, _ in returns):
            assumed = s.or_(*(s.and_(*r.pc[len(st.pc) :]) for r, _ in returns))
        return value, du, dl, stopped, risk, assumed

    # --- shape charges -------------------------------------------------------------------------

    def _shape_charge(self, st: State, v: AVal) -> None:
        """The charge of a newly created value: nodes // 64 fuel, its string bytes as allocation."""
        s = self.sym
        walk = s.fdiv(self.dom.nodes_hi(v), costs.SHAPE_WALK_NODES_PER_FUEL)
        self.fuel(st, walk, 0)
        self.charge(st, STRING_BYTES, self.dom.sbytes_hi(v), self.dom.sbytes_lo(v))

    # --- safety --------------------------------------------------------------------------------

    def safety_check(self, st: State, node: ast.Node, op: str, fault: Cond, words: str, exact: bool) -> None:
        """Record whether ``fault`` can hold at ``node`` on this path; end the must prefix if so."""
        from .safety import check_safety

        if self.probe:
            return
        proved = check_safety(self, st, node, op, fault, words, exact)
        if proved:
            return
        # with exact operands the operation fails exactly when ``fault`` holds: a run that goes on
        # satisfies its negation, so a must path continues under that condition
        if exact and st.record and not st.lstop and self.add_pc(st, self.sym.not_(fault)):
            st.assumed += 1
        else:
            self.stop(st)

    # --- loops ---------------------------------------------------------------------------------

    def _loop(self, node: ast.While | ast.ForRange, st: State) -> Flow:
        return termination.analyze_loop(self, node, st)

    @contextmanager
    def probing(self) -> Iterator[None]:
        self.probe += 1
        try:
            yield
        finally:
            self.probe -= 1

    def fresh_tag(self) -> int:
        self._loop_counter += 1
        return self._loop_counter


def _relation(s: Sym, rel: str, a: Poly, b: Poly) -> Cond:
    if rel == "lt":
        return s.lt(a, b)
    if rel == "le":
        return s.le(a, b)
    if rel == "gt":
        return s.lt(b, a)
    if rel == "ge":
        return s.le(b, a)
    if rel == "eq":
        return s.eq(s.sub(a, b))
    return s.ne(s.sub(a, b))


def _narrow(s: Sym, v: AInt, rel: str, other: AInt) -> AInt:
    """``v`` knowing ``v rel other``."""
    lo, hi = v.lo, v.hi
    if rel == "lt":
        hi = s.min(hi, s.add_const(other.hi, -1))
    elif rel == "le":
        hi = s.min(hi, other.hi)
    elif rel == "gt":
        lo = s.max(lo, s.add_const(other.lo, 1))
    elif rel == "ge":
        lo = s.max(lo, other.lo)
    elif rel == "eq":
        lo, hi = s.max(lo, other.lo), s.min(hi, other.hi)
    return AInt(lo, hi, v.type)


def _trunc_div_exact(s: Sym, x: Poly, k: int) -> Poly:
    """``x / k`` rounded toward zero for a constant ``k >= 1``, exactly."""
    if k == 1:
        return x
    return s.ite(s.ge(x), s.fdiv(x, k), s.neg(s.fdiv(s.neg(x), k)))


__all__ = ["F64", "MAX_STEPS", "ZERO", "Analyzer", "FunctionAnalysis", "LoopAtoms"]
