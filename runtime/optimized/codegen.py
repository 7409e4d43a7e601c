"""ExecutionPlan -> Python ``ast.Module``: one generated function per reachable module function.

The generator is a second executable form of ``spec/semantics.md`` and ``spec/costs.md``: it walks
the same plan facts as the reference interpreter (expression types, call targets, and/or order,
dead statements) and emits, for every node, Python that computes the same value and pays the same
charges in the same order (see ``ledger`` for how charges become updates of the local ``f``).

Shape of the output::

    def _fn0(R, f, d, lr, v0, v1):     # R run state, f fuel left, d call frames left, lr loop refund
        ...
        return (value, f)

* locals are Python locals (fast slots) named ``v<i>``, temporaries ``t<i>``, loop state ``k e n j``;
* operations are specialized by static type: I32/I64 arithmetic is Python arithmetic plus an
  inline range check whose failure calls the ``core.arith`` definition (which raises the canonical
  fault), division and remainder take Python's ``//``/``%`` only when both operands are known to be
  non-negative, F64 results are checked finite with ``t - t`` (NaN for +-inf);
* anything that touches the meter, a value's shape, a binding or an intrinsic calls a stub from
  ``stubs.STUBS``; user data (texts, guids, binding ids) is referred to by table index only;
* leaf loops run in bulk chunks (``_s_cap`` reserves iterations, and fuel for fast bodies), with
  the exact per-iteration path (``_s_liter``) whenever a reservation is not possible; for fast
  loops that path is a cold function ``_x<i>`` built only when a run first needs it
  (``cold.py``, ``generate_cold``);
* a statement's own variable receives its value directly when nothing reads it afterwards (a
  stub's or call's result, a checked arithmetic result), and a checked bulk iteration computes the
  loop refund its failure points pass once, where it starts.

Generation cost matters (it is part of the compile latency of every plan): nodes are built by the
positioned constructors of ``pyast``, IR nodes are dispatched on their exact class, and node-free
facts (fixed-parameter loads, ``f < 0``, callee names) are shared nodes.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from dotboxd.core import ast as ir
from dotboxd.core import costs
from dotboxd.core.types import F64, I32, I64, STRING, MapType, SandboxType
from dotboxd.core.values import I32_MAX, I32_MIN, I64_MAX, I64_MIN
from dotboxd.runtime.locations import NO_ORDINAL, operation_ordinals
from dotboxd.validator.plan import CallKind, ExecutionPlan

from . import bounds, codegen_blocks, owned_map_code, scaled_steps
from . import pyast as P
from .block_stubs import FAULTS as BLOCK_FAULTS
from .blocks import block_units
from .codegen_inline_reads import inline_projected_reads
from .codegen_literal_reads import literal_read
from .codegen_strchunk import fast_chunk as fast_text_chunk
from .codegen_text import owned_concat, release_owned_text, take_owned_text
from .cold import LEAVE, NEXT, RETURN, ColdLoop, cold_name, describe, find_loop, loop_ordinals
from .counter_rooms import chunk_fits, collect_counters
from .errors import CompileFailure
from .facts import COMPOSITES, TEXT_LITERALS, PlanFacts, analyze, live
from .ledger import Chunk, Inline, Loop, Segment
from .list_chunks import fast_chunk as fast_list_chunk
from .mapchunk import fast_chunk as fast_map_chunk
from .owned import owned_list
from .owned_maps import READERS, UPDATE, owned_map
from .periodic_tally import periodic_settle
from .signs import nonnegative_nodes
from .stubs import intrinsic_stub_name
from .tables import Tables, function_name, guid_name
from .tally import tallied_fuel, tally_body, tally_unit
from .value_ranges import value_ranges
from .work import WorkCounter

FIXED_PARAMS = ("R", "f", "d", "lr")
"""Every generated function's first parameters: run state, fuel left, frames left, loop refund."""

_RANGES: dict[SandboxType, tuple[int, int]] = {I32: (I32_MIN, I32_MAX), I64: (I64_MIN, I64_MAX)}
_PY_OPS: dict[str, ast.operator] = {"add": P.ADD, "sub": P.SUB, "mul": P.MULT}
_COMPARE: dict[ir.BinaryOp, ast.cmpop] = {
    ir.BinaryOp.LT: P.LT,
    ir.BinaryOp.LTE: P.LTE,
    ir.BinaryOp.GT: P.GT,
    ir.BinaryOp.GTE: P.GTE,
    ir.BinaryOp.EQ: P.EQ,
    ir.BinaryOp.NE: P.NOTEQ,
}
_NONNEG_CLOSED = frozenset({ir.BinaryOp.ADD, ir.BinaryOp.MUL, ir.BinaryOp.DIV, ir.BinaryOp.REM})
"""Integer operations whose result is non-negative when both operands are (or which fail): the
generator's operand-level sign facts, next to the plan-level ones of ``signs.py``."""
_EXPRESSION_FUEL = costs.EXPRESSION_FUEL
LAZY_REFUNDS = 4
"""Failure points of one chunk iteration that may each compute the loop refund themselves (a small
hot body pays nothing for it); a body with more reads it from one slot set per iteration."""
assert _EXPRESSION_FUEL > 0, "expr() charges it without the zero test of charge()"
_OWNED_ADD_BASE = costs.COLLECTION_BASE_FUEL + 1
_WALK_OFFSET = 2
_WALK_NODES = costs.SHAPE_WALK_NODES_PER_FUEL
assert all(
    costs.list_add_flat_fuel(s) == s + _OWNED_ADD_BASE + (s + _WALK_OFFSET) // _WALK_NODES
    for s in (*range(300), 4095, 4096, 10**6, 2**40)
), "the inline fuel of an owned list.add (codegen.owned_add) no longer matches core.costs"
_PLAIN_LITERALS = frozenset(
    {ir.LiteralKind.UNIT, ir.LiteralKind.BOOL, ir.LiteralKind.I32, ir.LiteralKind.I64}
)
"""Literal kinds whose value is a Python constant as it stands (None, bool, int)."""
_R, _F, _D, _LR = (P.name(ident) for ident in FIXED_PARAMS)
"""Loads of the fixed parameters (shared nodes, see ``pyast.name``)."""
_F_STORE = P.store("f")
_NAME_NODES = frozenset({ast.Name, P.Name})
_KIND_OF = {ast.Name: "name", P.Name: "name", ast.Constant: "const", P.Constant: "const"}
"""Operand shapes a bulk forRange loop may read its end from directly (``loop_end``)."""
_EXHAUSTED = P.compare(_F, P.LT, P.const(0))
"""``f < 0``, the test of every fuel check (a shared node: never an operand, never patched)."""
_NO_FRAMES = P.compare(_D, P.LT, P.const(1))
"""``d < 1``, the test before every real call."""


DEFAULT_MAX_COMPILE_NODES = 100_000
"""About 1.3 million generated Python nodes and a few seconds of compile time on a slow machine."""


@dataclass(frozen=True, slots=True)
class GenOptions:
    """Code-generation switches.

    ``bulk_loops`` and ``inline`` are on by default (off only to measure what they buy, and to
    exercise the exact per-iteration path in tests). ``proofs`` has the compile step run the Z3
    prover (``proofs.proof_facts``) and the generator drop the inline fault check of every
    arithmetic node it PROVED can never fault on any run; the generator itself only reads those
    facts (``generate``'s ``safe_nodes``), it never calls the prover."""

    bulk_loops: bool = True
    inline: bool = True
    proofs: bool = False
    block_loops: bool = True
    """Iteration blocks (``blocks.py``, spec/optimized.md 4.2.8; issue 16): an outer loop and the
    bulk ``while`` loops in it draw from one reservation inline (off only to measure what they buy
    and to exercise the per-entry stubs in tests). In the key only when on."""
    max_compile_nodes: int = DEFAULT_MAX_COMPILE_NODES
    """The host's compile budget: a plan whose generated code would cover more IR nodes than this
    (its own plus the inlined copies, ``PlanFacts.generated_nodes``, known before any code is
    generated) is refused with ``CompileFailure`` - the run then fails with ``R-OPT-COMPILE`` or,
    where the backend allows fallback, runs on the reference interpreter. Not part of ``key``: it
    decides whether code is generated, never what code."""

    def __post_init__(self) -> None:
        if type(self.max_compile_nodes) is not int or self.max_compile_nodes < 1:
            raise ValueError("max_compile_nodes must be an integer >= 1")

    def key(self) -> str:
        text = f"bulk={int(self.bulk_loops)};inline={int(self.inline)};proofs={int(self.proofs)}"
        if self.block_loops:
            text += ";blocks=1"
        if self.proofs:
            import z3  # type: ignore[import-untyped]

            text += f";z3={z3.get_version_string()}"
        return text


@dataclass(slots=True)
class Generated:
    module: ast.Module
    tables: Tables
    ir_nodes: int


class Slots:
    """Local names of one generated function: ``<prefix><n>``, numbered per prefix (the verifier
    admits exactly these shapes, ``verifier.SLOT``)."""

    def __init__(self) -> None:
        self._next: dict[str, int] = {}

    def new(self, prefix: str) -> str:
        index = self._next.get(prefix, 0)
        self._next[prefix] = index + 1
        return prefix + str(index)


class _FunctionEmitter:
    """Emits one module function (and everything inlined into its bulk loops)."""

    def __init__(self, gen: _Generator, fid: str) -> None:
        self.gen = gen
        self.signs = gen.signs
        self.plan = gen.plan
        self.tables = gen.tables
        self.info = gen.plan.functions[fid]
        self.slots = Slots()
        self.out: list[ast.stmt] = []
        self.live = True
        self.segment: Segment | None = None
        self.loops: list[Loop] = []
        self.chunk: Chunk | None = None
        self.inlines: list[Inline] = []
        self.vars: dict[str, str] = {}
        self.aliases: dict[str, tuple[ast.expr, bool]] = {}
        self.nonneg_ops: dict[int, ast.expr] = {}
        """Operand nodes whose value is known >= 0 (from ``signs``), by ``id``. The node is kept as the
        value so that it stays alive: an operand the generator drops would otherwise free its ``id``
        for a later, unrelated node, which would then look non-negative."""
        self.upper_check: tuple[ast.If, str, int, bool] | None = None
        """The last one-sided upper overflow test emitted in a fast chunk: (its ``if``, the slot it
        tests, the bound, whether that slot is a fresh temporary), for ``fused_step`` to nest under
        the next step's test (and ``scaled_steps`` to test the product's operand instead)."""
        self.pool: tuple[str, int] | None = None
        """(pool slot, units) inside the body of a block loop (``blocks.py``), else None."""
        self.inline_depth = 0
        """Calls being inlined around the current point (the budget is spent by the outermost)."""
        self.cold_results: list[str] | None = None
        """Set while emitting a cold exact path: the slots it hands back (``cold.py``)."""
        self.cold_bound: dict[str, None] = {}
        """Slots a cold call passes that must be bound at function entry (``slot = None``)."""
        self.top_bound: set[str] = set()
        self.tested_key: tuple[str, str] | None = None
        """(result slot, key slot) of the last inline ``map.containsKey`` on an owned map."""
        self.known_key: owned_map_code.KnownKey | None = None
        """Whether the owned map holds a key slot, known from the branch of a ``containsKey`` test
        the current statements stand in (``owned_map_code.KnownKey``)."""
        """Slots bound before the current top-level statement of the function: parameters and the
        targets of earlier top-level assignments (a cold call there needs no ``slot = None``)."""

    # --- the function ----------------------------------------------------------------------

    def emit_function(self) -> ast.FunctionDef:
        params = []
        for param in self.info.function.parameters:
            params.append(self.var(param.name))
        entry = self.gen.work.entry(self.info.id)
        if entry is not None:  # a deadline check at bounded intervals of real work (``stubs.tick``)
            self.emit(P.expr_stmt(P.call("_s_tick", _R, _F, _LR, P.const(entry[0]), P.const(entry[1]))))
        bound = self.top_bound = set(params)
        dead = self.plan.dead_statements
        for stmt in self.info.function.body:  # ``block``, noting the locals bound at the top level
            if id(stmt) in dead:
                continue
            if not self.live:
                break
            self.statement(stmt)
            if isinstance(stmt, ir.Set):
                bound.add(self.vars[stmt.name])
        if self.live:
            self.barrier()
            self.emit(P.expr_stmt(P.call("_s_noret", _R, _F, _LR)))
        name = self.gen.function_names[self.info.id]
        unbound = list(self.cold_bound)
        # a cold call may come before the loop body first assigned a local it passes
        self.out[0:0] = [P.assign(slot, P.const(None)) for slot in unbound]
        return P.function(name, [*FIXED_PARAMS, *params], self.out)

    def emit_cold(self, index: int, cold: ColdLoop) -> ast.FunctionDef:
        """The cold function ``_x<index>``: one exact iteration of ``cold.loop`` (for a while loop
        its condition, the iteration charge and the body; for a forRange loop the body, after the
        caller charged the iteration), checked code throughout (``cold.py``)."""
        params = [self.var(ir_name) for ir_name in cold.params]
        self.cold_results = [self.var(ir_name) for ir_name in cold.results]
        self.loops.append(Loop(None))
        loop = cold.loop
        if isinstance(loop, ir.While):
            test = self.expr(loop.condition)
            self.branch(P.not_(test), lambda: self.leave_loop())
            self.emit(self.liter())
        if self.live:
            self.block(loop.body)
        if self.live:
            self.barrier()
            self.emit(self.cold_return(NEXT))
        return P.function(cold_name(index), [*FIXED_PARAMS, *params], self.out)

    def cold_return(self, signal: int, value: ast.expr | None = None) -> ast.stmt:
        assert self.cold_results is not None
        rest = [P.name(slot) for slot in self.cold_results]
        return P.ret(P.tuple_(P.const(signal), _F, value if value is not None else P.const(None), *rest))

    def cold_call(self, stmt: ir.While | ir.ForRange) -> list[ast.stmt]:
        """The hot side of a cold exact path: call ``_x<i>`` with the locals it uses, take back the
        ones it assigns, then go on, leave the loop or return as it says."""
        assert self.chunk is None, "bulk loops hold no loops, so a cold call is never inside a chunk"
        cold = describe(self.plan, self.info.id, stmt)
        index = self.gen.cold_index(self.info.id, stmt)
        params = [self.var(ir_name) for ir_name in cold.params]
        results = [self.var(ir_name) for ir_name in cold.results]
        ivar = self.vars.get(stmt.local) if isinstance(stmt, ir.ForRange) else None
        bound = self.top_bound
        self.cold_bound.update((slot, None) for slot in params if slot != ivar and slot not in bound)
        signal, value = self.slots.new("t"), self.slots.new("t")
        targets = P.Tuple([P.store(signal), P.store("f"), P.store(value), *map(P.store, results)], P.STORE)
        call = P.call(cold_name(index), _R, _F, _D, self.lref(), *map(P.name, params))
        out: list[ast.stmt] = [P.Assign([targets], call)]
        returning: list[ast.stmt] = [P.ret(P.tuple_(P.name(value), _F))]
        if cold.returns and cold.leaves:
            out.append(P.if_(P.compare(P.name(signal), P.EQ, P.const(RETURN)), returning))
        if cold.leaves:
            out.append(P.if_(P.name(signal), [P.break_()]))
        elif cold.returns:
            out.append(P.if_(P.name(signal), returning))
        out.append(P.continue_())
        return out

    def var(self, ir_name: str) -> str:
        slot = self.vars.get(ir_name)
        if slot is None:
            slot = self.slots.new("v")
            self.vars[ir_name] = slot
        return slot

    # --- output and accounting -------------------------------------------------------------

    def emit(self, stmt: ast.stmt) -> None:
        self.out.append(stmt)

    def charge(self, amount: int) -> None:
        """One charge of the reference interpreter, at this point of the evaluation order."""
        if amount <= 0:
            return
        if self.chunk is not None and self.chunk.fast:
            self.chunk.ahead -= amount
            return
        if self.segment is None:
            self.segment = Segment(self.out, len(self.out), self.lref())
        self.segment.charges.append(amount)

    def barrier(self) -> None:
        """Close the open segment with an inline check placed where it opened: the charges are paid
        before the evaluation they pay for, and nothing after this point is paid in advance."""
        segment = self.segment
        if segment is None:
            return
        self.segment = None
        charges = segment.charges
        site = self.tables.segment(tuple(charges))
        check = P.call("_s_fx", _R, _F, segment.lref, P.Constant(site))
        segment.out[segment.index : segment.index] = [
            P.AugAssign(_F_STORE, P.SUB, P.Constant(sum(charges))),
            P.If(_EXHAUSTED, [P.ExprStmt(check)], []),
        ]

    def take_segment(self) -> int:
        """Close the open segment by handing it to the stub called next, which pays it first (0:
        nothing to pay). Only the evaluation of pure operands lies between its opening and the stub."""
        segment = self.segment
        if segment is None:
            return 0
        self.segment = None
        return self.tables.segment(tuple(segment.charges))

    def take_located_segment(self, at: int) -> int:
        """``take_segment`` for the stub call of operation ``at``: a site of its own (an empty
        segment too), so the stub can locate the error the operation raises."""
        segment = self.segment
        self.segment = None
        return self.tables.located_segment(tuple(segment.charges) if segment is not None else (), at)

    def fuel(self) -> ast.expr:
        """The exact remaining fuel here (call ``barrier`` first in checked code)."""
        if self.chunk is not None and self.chunk.fast:
            return self.chunk.exact_fuel()
        assert self.segment is None
        return _F

    def lref(self) -> ast.expr:
        """Reserved loop iterations a failure here must give back (including the caller's)."""
        chunk = self.chunk
        if chunk is None:
            return _LR if self.pool is None else codegen_blocks.refund(self.pool[0])
        if chunk.started and chunk.refund_at is not None:
            if chunk.owned_map is not None:
                # only failure paths read it (an owned map's forms pass it to ``_s_mox`` alone, which
                # the verifier requires in this form; any other stub such a loop calls adds three
                # operations, less than a refund per iteration)
                return P.add(_LR, chunk.unstarted(1))
            # the same in every use of one iteration: computed once, where the iteration starts,
            # or where a failure happens (``chunk_body`` picks, once it knows how many there are)
            if chunk.refund is None and not (chunk.counter_fixed and chunk.owned_text is not None):
                # numbered at the first failure point whether or not it is set in the end, so the
                # slots after it keep their names (owned-text loops never had one)
                chunk.refund = self.slots.new("t")
            if chunk.counter_fixed:
                refund = P.add(_LR, chunk.unstarted(1))
                chunk.refund_uses.append(refund)
                return refund
            assert chunk.refund is not None
            return P.name(chunk.refund)
        return P.add(_LR, chunk.unstarted(chunk.started))

    def fault_args(self) -> list[ast.expr]:
        self.barrier()
        return [_R, self.fuel(), self.lref()]

    def ordinal(self, node: ir.Node) -> int:
        """The operation ordinal of ``node`` (``runtime.locations``): its failures are located there."""
        return self.gen.operations.get(id(node), NO_ORDINAL)

    def fault_call(self, op: str, at: int, *operands: ast.expr) -> ast.expr:
        """The call of the fault stub for ``op`` at operation ``at`` (one site per operation, so the
        stub can locate the error it raises)."""
        chunk = self.chunk
        if chunk is not None and chunk.fast:
            # the exact fuel and refund are computed by the stub from the site's constants
            site = self.tables.chunk_fault_site(op, chunk.ahead, chunk.started, at)
            chunk.fault_sites.append(site)
            if chunk.pool is not None:  # the refund is the pool's, passed in (``block_stubs``)
                stub = BLOCK_FAULTS[len(operands) - 1]
                owed = codegen_blocks.refund(chunk.pool[0])
                return P.call(stub, _R, _F, P.name(chunk.ivar), owed, P.const(site), *operands)
            stub = ("_s_c1", "_s_c2", "_s_c3")[len(operands) - 1]
            return P.call(stub, _R, _F, P.name(chunk.ivar), P.const(site), *operands)
        site = self.tables_fault_site(op, at)
        stub = ("_s_f1", "_s_f2", "_s_f3")[len(operands) - 1]
        return P.call(stub, *self.fault_args(), P.const(site), *operands)

    def tables_fault_site(self, op: str, at: int) -> int:
        site = self.gen.fault_sites.get((op, at))
        if site is None:
            site = self.tables.fault_site(op, at)
            self.gen.fault_sites[(op, at)] = site
        return site

    def stub_pair(
        self, stub: str, *args: ast.expr, dest: str | None = None, at: int = NO_ORDINAL
    ) -> ast.expr:
        """``t, f = stub(R, f, lref, site, *args)``: a stub that first pays the open segment
        ``site``, then syncs the meter, does its work and returns its value and the new fuel. The
        value goes straight to the statement's variable ``dest`` when there is one (the stub has
        read its arguments by then, and nothing reads them after)."""
        assert self.chunk is None or not self.chunk.fast, "fast code never calls a syncing stub"
        site = self.take_segment() if at == NO_ORDINAL else self.take_located_segment(at)
        temp = dest if dest is not None else self.slots.new("t")
        call = P.call(stub, _R, _F, self.lref(), P.Constant(site), *args)
        self.out.append(P.Assign([P.Tuple([P.Name(temp, P.STORE), _F_STORE], P.STORE)], call))
        return P.Name(temp, P.LOAD)

    # --- blocks and branches ----------------------------------------------------------------

    def block(self, statements: tuple[ir.Stmt, ...]) -> None:
        dead = self.plan.dead_statements
        for stmt in statements:
            if id(stmt) in dead:
                continue
            if not self.live:
                return
            self.statement(stmt)

    def sub_block(self, body: Callable[[], None] | None, ahead: int) -> tuple[list[ast.stmt], bool, int]:
        saved_out, saved_live = self.out, self.live
        self.out, self.live = [], True
        if self.chunk is not None:
            self.chunk.ahead = ahead
        if body is not None:
            body()
        self.barrier()
        result = (self.out, self.live, self.chunk.ahead if self.chunk is not None else 0)
        self.out, self.live = saved_out, saved_live
        return result

    def branch(
        self, test: ast.expr, then: Callable[[], None], orelse: Callable[[], None] | None = None
    ) -> None:
        """``if test: then else: orelse``, reconciling fast accounting where the arms join."""
        self.barrier()
        start = self.chunk.ahead if self.chunk is not None else 0
        arms = [self.sub_block(then, start), self.sub_block(orelse, start)]
        joining = [(body, ahead) for body, is_live, ahead in arms if is_live]
        if self.chunk is not None and self.chunk.fast and joining:
            join = max(ahead for _, ahead in joining)
            for body, ahead in joining:
                if join != ahead:
                    body.append(P.aug("f", P.SUB, P.const(join - ahead)))
            self.chunk.ahead = join
        self.live = bool(joining)
        self.emit(P.if_(test, arms[0][0], arms[1][0]))

    # --- statements ---------------------------------------------------------------------------

    def statement(self, stmt: ir.Stmt) -> None:
        self.charge(costs.STATEMENT_FUEL)
        kind = type(stmt)  # IR node classes are final: dispatch on the exact class
        if kind is not ir.Set and kind is not ir.ExprStmt:
            self.known_key = None  # a nested branch or loop: what its code runs after is not known
        if kind is ir.Set:
            assert isinstance(stmt, ir.Set)
            target = self.var(stmt.name)
            value = self.expr(stmt.value, target)
            if not (type(value) is P.Name and value.id == target):
                self.emit(P.assign(target, value))
            if self.known_key is not None and self.known_key.key == target:
                self.known_key = None  # the key slot now holds another key
        elif kind is ir.ExprStmt:
            assert isinstance(stmt, ir.ExprStmt)
            self.expr(stmt.value)
        elif kind is ir.Return:
            assert isinstance(stmt, ir.Return)
            self.return_(self.expr(stmt.value))
        elif kind is ir.If:
            assert isinstance(stmt, ir.If)
            test = self.expr(stmt.condition)
            dead = self.plan.dead_statements
            has_else = any(id(s) not in dead for s in stmt.else_)
            key = self.tested_slot(stmt.condition, test)
            self.branch(
                test,
                lambda: self.known_block(stmt.then, key, True),
                (lambda: self.known_block(stmt.else_, key, False)) if has_else else None,
            )
            self.known_key = None
        elif kind is ir.Break:
            self.break_()
        elif kind is ir.Continue:
            self.continue_()
        elif kind is ir.ForRange:
            assert isinstance(stmt, ir.ForRange)
            self.for_range(stmt)
        else:
            assert isinstance(stmt, ir.While)
            self.while_(stmt)

    def tested_slot(self, condition: ir.Expr, test: ast.expr) -> str | None:
        """The key slot when ``condition`` is exactly an inline ``map.containsKey`` on the loop's
        owned map (``test`` its result slot, straight from ``owned_map_op``), else None."""
        tested = self.tested_key
        self.tested_key = None
        if not (
            isinstance(condition, ir.Call) and condition.name == "map.containsKey" and tested is not None
        ):
            return None
        return tested[1] if type(test) in _NAME_NODES and test.id == tested[0] else None  # type: ignore[attr-defined]

    def known_block(self, statements: tuple[ir.Stmt, ...], key: str | None, present: bool) -> None:
        """A branch of an ``if`` on ``containsKey(m, key)``: its owned-map forms may use that the key
        is (not) in the dict (``owned_map_code.KnownKey``), until something can change that."""
        self.known_key = owned_map_code.KnownKey(key, present) if key is not None else None
        self.block(statements)
        self.known_key = None

    def return_(self, value: ast.expr) -> None:
        if self.inlines:
            inline = self.inlines[-1]
            self.emit(P.assign(inline.result, value))
            inline.edges.append((self.out, self.chunk.ahead if self.chunk is not None else 0))
            self.live = False
            return
        self.barrier()
        if self.cold_results is not None:
            self.emit(self.cold_return(RETURN, value))
            self.live = False
            return
        fuel = self.fuel()
        if self.chunk is not None:
            self.emit(P.expr_stmt(P.call("_s_lback", _R, self.chunk.unstarted(1))))
        self.emit(P.ret(P.tuple_(value, fuel)))
        self.live = False

    def break_(self) -> None:
        self.barrier()
        if self.cold_results is not None:
            self.leave_loop()
            return
        chunk = self.loops[-1].chunk
        if chunk is not None:
            if chunk.fast:
                self.emit(P.assign("f", chunk.exact_fuel()))
            if chunk.pool is not None:
                self.emit(codegen_blocks.take(chunk.pool[0], P.add(chunk.index(), P.const(1))))
            else:
                self.emit(P.expr_stmt(P.call("_s_lback", _R, chunk.unstarted(1))))
        self.emit(P.break_())
        self.live = False

    def continue_(self) -> None:
        self.barrier()
        if self.cold_results is not None:
            self.emit(self.cold_return(NEXT))
            self.live = False
            return
        chunk = self.loops[-1].chunk
        if chunk is not None and chunk.fast:
            fix = P.const(0)
            update = P.aug("f", P.ADD, fix)
            chunk.continue_fixes.append((fix, chunk.ahead, self.out, update))
            self.emit(update)
        self.emit(P.continue_())
        self.live = False

    # --- loops ----------------------------------------------------------------------------------

    def loop_body(self, statements: tuple[ir.Stmt, ...], chunk: Chunk | None) -> tuple[list[ast.stmt], bool]:
        saved_chunk = self.chunk
        self.chunk = chunk
        self.loops.append(Loop(chunk))
        body, body_live, _ = self.sub_block(lambda: self.block(statements), chunk.ahead if chunk else 0)
        self.loops.pop()
        self.chunk = saved_chunk
        return body, body_live

    def unreachable(self) -> ast.stmt:
        """The exact path of a loop whose iterations were reserved but whose fuel was not: the
        reservation was refused only because the loop budget is spent, so ``_s_lend``'s iteration
        charge raises; if it ever did not, the stub fails closed rather than skip the body."""
        return P.expr_stmt(P.call("_s_lend", _R, _F, self.lref()))

    def liter(self) -> ast.stmt:
        return P.assign("f", P.call("_s_liter", _R, _F, self.lref()))

    def iteration_tick(self, stmt: ir.While | ir.ForRange) -> list[ast.stmt]:
        """After the iteration charge of a loop run iteration by iteration: a work tick when its own
        body is heavy (``WorkCounter.iteration``), which the meter's cadence alone would not bound."""
        work = self.gen.work.iteration(stmt)
        if work is None:
            return []
        return [P.expr_stmt(P.call("_s_tick", _R, _F, self.lref(), P.const(work[0]), P.const(work[1])))]

    def loop_strategy(self, stmt: ir.While | ir.ForRange) -> tuple[bool, bool]:
        """(bulk, fast): whether the loop runs in chunks, and whether its fuel is reserved too."""
        facts = self.gen.facts.loops[id(stmt)]
        if not self.gen.options.bulk_loops or not facts.leaf:
            return False, False
        return True, facts.fast

    def for_range(self, stmt: ir.ForRange) -> None:
        start = self.expr(stmt.start)
        end = self.expr(stmt.end)
        self.barrier()
        ivar = self.var(stmt.local)
        bulk, fast = self.loop_strategy(stmt)
        units = self.block_units(stmt) if not bulk else None
        if units is not None:
            self.block_loop(stmt, ivar, start, end, units)
            return
        if not bulk:
            body, _ = self.loop_body(stmt.body, None)
            self.emit(P.range_loop(ivar, [start, end], [self.liter(), *self.iteration_tick(stmt), *body]))
            self.live = True
            return
        k, n = self.slots.new("k"), self.slots.new("n")
        self.emit(P.assign(k, start))
        stop = self.loop_end(stmt, end, ivar)
        facts = self.gen.facts.loops[id(stmt)]
        outer_lref = self.lref()
        room, counted = self.counter_room(stmt.body, stmt.local)
        reserve = P.call(
            "_s_cap" if room is None else "_s_capm",
            _R,
            _F,
            _D,
            outer_lref,
            P.name(k),
            stop(),
            P.const(facts.worst if fast else 0),
            P.const(facts.need_depth if fast else 0),
            P.const(facts.work),
            P.const(facts.heavy),
            *([] if room is None else [room]),
        )
        assigned = frozenset({ivar, *(self.var(name) for name in sorted(_assigned_names(stmt.body)))})
        chunk = Chunk(fast=fast, n=n, ivar=ivar, start=k, assigned=assigned, counted=counted)
        chunk.counter_fixed = stmt.local not in _assigned_names(stmt.body)
        chunk.owned = self.take_owned(stmt, fast)
        chunk.owned_map = self.take_owned_map(stmt, fast, chunk.owned is None)
        if chunk.owned is None and chunk.owned_map is None and not fast and self.gen.options.bulk_loops:
            chunk.owned_text = take_owned_text(self, stmt, _INLINE_BUILTINS)
        chunk_body, body_live = self.chunk_body(stmt.body, chunk)
        text_chunk = fast_text_chunk(chunk.owned_text, chunk_body, ivar, k, n)  # owned strings, issue 16
        base = chunk.finish(body_live)
        self.tables.set_chunk_base(chunk.fault_sites, base)
        periodic = (ivar, k) if chunk.counter_fixed else None
        chunk_body, done = self.settle_chunk(chunk_body, fast, n, base, periodic)
        done.append(P.assign(k, P.add(P.name(k), P.name(n))))
        done.append(P.continue_())
        precise: list[ast.stmt] = [P.if_(P.name(n), done)]
        if fast:
            precise.append(self.liter())
            precise.append(P.assign(ivar, P.name(k)))
            precise.append(P.assign(k, P.add(P.name(k), P.const(1))))
            precise.extend(self.cold_call(stmt))
        else:
            precise.append(self.unreachable())
        bulk_loop = P.range_loop(ivar, [P.name(k), P.add(P.name(k), P.name(n))], chunk_body, precise)
        # the loop test replaces an exit check after each chunk: ``_s_cap`` starts every pass
        test = P.compare(P.name(k), P.LT, stop())
        for view in chunk.view_stmts:
            self.emit(view)
        quick = None
        if not fast and room is None and chunk.owned_map is None and chunk.owned_text is None:
            buffer = chunk.owned[1] if chunk.owned is not None else None
            quick = fast_list_chunk(
                chunk_body, n=n, ivar=ivar, start=k, buffer=buffer, new_slot=self.slots.new
            )
        pre_checked = self.pre_checked_map_chunk(chunk, chunk_body, fast, ivar, k)
        if text_chunk is not None:
            pre_checked = [*pre_checked, text_chunk]
        self.emit(
            P.While(test, [P.assign(n, reserve), *(quick or []), *pre_checked, bulk_loop, P.break_()], [])
        )
        self.release_owned(chunk)
        self.live = True

    def block_units(self, stmt: ir.ForRange) -> int | None:
        """The pool units when ``stmt`` runs as an iteration block (``blocks.py``), else None."""
        options = self.gen.options
        if (
            not (options.block_loops and options.bulk_loops)
            or self.pool is not None
            or self.chunk is not None
        ):
            return None
        if self.cold_results is not None or self.inlines:
            return None
        return block_units(self.plan, self.gen.facts, stmt)

    def block_loop(self, stmt: ir.ForRange, ivar: str, start: ast.expr, end: ast.expr, units: int) -> None:
        """A loop whose iterations and inner chunks draw from one pool (``codegen_blocks``)."""
        pool = self.slots.new("bk")
        self.emit(codegen_blocks.start(pool))
        saved, self.pool = self.pool, (pool, units)
        body, _ = self.loop_body(stmt.body, None)
        self.pool = saved
        draw = codegen_blocks.draw_iteration(pool, units)
        self.emit(P.range_loop(ivar, [start, end], [draw, *body]))
        self.emit(codegen_blocks.end(pool, units))
        self.live = True

    def pre_checked_map_chunk(
        self, chunk: Chunk, checked: list[ast.stmt], fast: bool, ivar: str, start: str
    ) -> list[ast.stmt]:
        """A checked forRange chunk over an owned map also gets a pre-checked copy, run when its
        reservation's worst case fits (``mapchunk``, issue 16); [] when the body has none."""
        owned = chunk.owned_map
        if owned is None or fast or not self.gen.options.bulk_loops:
            return []
        tally = self.slots.new("mc")  # a kind of its own: the other slots keep their numbers
        made = fast_map_chunk(checked, owned, tally, chunk.n, ivar, start)
        return [] if made is None else [made.stmt]

    def settle_chunk(
        self, body: list[ast.stmt], fast: bool, n: str, base: int, periodic: tuple[str, str] | None = None
    ) -> tuple[list[ast.stmt], list[ast.stmt]]:
        """(the chunk body, what a chunk that ran all ``n`` iterations pays): ``f -= n * base``. A
        fast body's branch charges go to a tally (``tally.py``), set to 0 here, before the loop;
        a completed chunk then also pays the tally and sets it back to 0. A forRange chunk
        (``periodic``: its iteration variable and start) whose dearer arm is taken on a residue of
        the counter counts that arm in closed form instead (``periodic_tally.py``)."""
        unit = tally_unit(body) if fast else 0
        if not unit:
            return body, [P.aug("f", P.SUB, P.mul(P.name(n), P.const(base)))] if fast and base else []
        closed = periodic_settle(body, *periodic, n, base) if periodic is not None else None
        if closed is not None:
            return closed
        counter = self.slots.new("t")
        self.emit(P.assign(counter, P.const(0)))
        spent = tallied_fuel(counter, unit)
        paid = P.add(P.mul(P.name(n), P.const(base)), spent) if base else spent
        return tally_body(body, counter, unit), [P.aug("f", P.SUB, paid), P.assign(counter, P.const(0))]

    def loop_end(self, stmt: ir.ForRange, end: ast.expr, ivar: str) -> Callable[[], ast.expr]:
        """How the bulk loop reads its end: the operand itself when it is a constant, a temporary or
        a local the loop never assigns (it cannot change while the loop runs), else a copy ``e<i>``
        taken before the loop (the reference evaluates the end once)."""
        kind = _KIND_OF.get(type(end))
        if kind == "const":
            value = end.value  # type: ignore[attr-defined]
            return lambda: P.const(value)
        if kind == "name":
            slot = end.id  # type: ignore[attr-defined]
            if slot.startswith("t") or (
                slot != ivar and slot not in {self.vars.get(name) for name in _assigned_names(stmt.body)}
            ):
                return lambda: P.name(slot)
        stop = self.slots.new("e")
        self.emit(P.assign(stop, end))
        return lambda: P.name(stop)

    def chunk_body(
        self, statements: tuple[ir.Stmt, ...], chunk: Chunk, prelude: Callable[[], None] | None = None
    ) -> tuple[list[ast.stmt], bool]:
        """The body of a bulk chunk: (while: the condition and its exit, then) the iteration's 5 fuel
        and the statements, in fast or checked-with-reservation mode."""
        saved_chunk = self.chunk
        self.chunk = chunk
        self.loops.append(Loop(chunk))

        def body() -> None:
            if prelude is not None:
                prelude()
                if not self.live:
                    return
            if not chunk.fast:
                chunk.refund_at = (self.out, len(self.out))
            self.charge(costs.LOOP_ITERATION_FUEL)
            self.block(statements)

        out, body_live, _ = self.sub_block(body, 0)
        self.loops.pop()
        self.chunk = saved_chunk
        if len(chunk.refund_uses) > LAZY_REFUNDS:
            if chunk.refund is None:
                chunk.refund = self.slots.new("t")
            _ReadSlot(chunk.refund_uses, chunk.refund).visit_block(out)
        elif chunk.refund_uses:
            chunk.refund = None  # every failure point computes it: no slot to set per iteration
        if chunk.refund is not None and chunk.refund_at is not None:
            block, index = chunk.refund_at
            block.insert(index, P.assign(chunk.refund, P.add(_LR, chunk.unstarted(1))))
        return out, body_live

    def while_(self, stmt: ir.While) -> None:
        self.barrier()
        bulk, fast = self.loop_strategy(stmt)
        if not bulk:
            saved_chunk, self.chunk = self.chunk, None
            self.loops.append(Loop(None))

            def one_iteration() -> None:
                test = self.expr(stmt.condition)
                self.branch(P.not_(test), lambda: self.leave_loop())
                self.emit(self.liter())
                for tick in self.iteration_tick(stmt):
                    self.emit(tick)
                self.block(stmt.body)

            body, _, _ = self.sub_block(one_iteration, 0)
            self.loops.pop()
            self.chunk = saved_chunk
            self.emit(P.while_true(body))
            self.live = True
            return
        facts = self.gen.facts.loops[id(stmt)]
        n, j = self.slots.new("n"), self.slots.new("j")
        outer_lref = self.lref()
        room, counted = self.counter_room(stmt.body, None)
        reserve = P.call(
            "_s_cap" if room is None else "_s_capm",
            _R,
            _F,
            _D,
            outer_lref,
            P.const(0),
            P.const(None),
            P.const(facts.worst if fast else 0),
            P.const(facts.need_depth if fast else 0),
            P.const(facts.work),
            P.const(facts.heavy),
            *([] if room is None else [room]),
        )
        assigned = frozenset(self.var(name) for name in sorted(_assigned_names(stmt.body)))
        chunk = Chunk(fast=fast, n=n, ivar=j, start=None, started=0, assigned=assigned, counted=counted)
        chunk.counter_fixed = True  # ``j`` is the code generator's own counter
        if self.pool is not None:
            assert fast and not facts.need_depth, "blocks.block_units admits only such inner loops"
            chunk.pool = self.pool
        chunk.owned = self.take_owned(stmt, fast)
        chunk.owned_map = self.take_owned_map(stmt, fast, chunk.owned is None)
        if chunk.owned is None and chunk.owned_map is None and not fast and self.gen.options.bulk_loops:
            chunk.owned_text = take_owned_text(self, stmt, _INLINE_BUILTINS)

        def condition() -> None:
            chunk.started = 0
            test = self.expr(stmt.condition)
            self.branch(P.not_(test), lambda: self.condition_exit(chunk))
            chunk.started = 1

        chunk_body, body_live = self.chunk_body(stmt.body, chunk, condition)
        base = chunk.finish(body_live)
        self.tables.set_chunk_base(chunk.fault_sites, base)
        chunk_body, done = self.settle_chunk(chunk_body, fast, n, base)
        if chunk.pool is not None:
            done.append(codegen_blocks.take(chunk.pool[0], P.name(n)))
        done.append(P.continue_())

        if fast:
            exact = self.cold_call(stmt)
        else:
            self.loops.append(Loop(None))

            def exact_iteration() -> None:
                test = self.expr(stmt.condition)
                self.branch(P.not_(test), lambda: self.leave_loop())
                self.emit(self.unreachable())
                self.live = False

            exact, _, _ = self.sub_block(exact_iteration, 0)
            self.loops.pop()
        bulk_loop = P.range_loop(j, [P.name(n)], chunk_body, [P.if_(P.name(n), done), *exact])
        for view in chunk.view_stmts:
            self.emit(view)
        if chunk.pool is not None:
            draw = codegen_blocks.draw_chunk(n, chunk.pool[0], room, facts.worst, chunk.pool[1])
            self.emit(P.while_true([*draw, bulk_loop, P.break_()]))
            self.live = True
            return
        self.emit(P.while_true([P.assign(n, reserve), bulk_loop, P.break_()]))
        self.release_owned(chunk)
        self.live = True

    def take_owned(self, stmt: ir.While | ir.ForRange, fast: bool) -> tuple[str, str, str] | None:
        """A checked bulk loop that appends to an owned list (``owned.owned_list``): take its buffer
        and room before the loop (``b, t = _s_lown(R, v)``, one of the chunk's view statements);
        None when the loop has no such list (or is fast: its cold exact path takes values)."""
        if fast or not self.gen.options.bulk_loops:
            return None
        name = owned_list(self.plan, self.info, stmt, _INLINE_BUILTINS)
        if name is None:
            return None
        slot, buffer, room = self.var(name), self.slots.new("b"), self.slots.new("t")
        self.emit(P.assign2(buffer, room, P.call("_s_lown", _R, P.name(slot))))
        return slot, buffer, room

    def release_owned(self, chunk: Chunk) -> None:
        """After the loop: the list's value again (``v = _s_lmat(R, b)``, which settles its adds),
        or the map's (``v = _s_mmat(R, m)``)."""
        if chunk.owned is not None:
            slot, buffer, _ = chunk.owned
            self.emit(P.assign(slot, P.call("_s_lmat", _R, P.name(buffer))))
        if chunk.owned_map is not None:
            self.emit(owned_map_code.release(chunk.owned_map))
        if chunk.owned_text is not None:
            release_owned_text(self, chunk.owned_text)

    def take_owned_map(
        self, stmt: ir.While | ir.ForRange, fast: bool, free: bool
    ) -> owned_map_code.Owned | None:
        """A checked bulk loop that updates an owned map (``owned_maps.owned_map``): take it into a
        dict before the loop (``m, u, room, most = _s_mown(R, v)``); None when the loop has no
        such map, is fast, or already owns a list (``free`` False)."""
        if fast or not free or not self.gen.options.bulk_loops:
            return None
        name = owned_map(self.plan, self.info, stmt, _INLINE_BUILTINS)
        if name is None:
            return None
        local = self.info.local_types[name]
        text_keys = isinstance(local, MapType) and local.key == STRING
        owned = owned_map_code.allocate(self.var(name), self.slots.new, text_keys)
        for take in owned_map_code.take(owned):
            self.emit(take)
        return owned

    def owned_map_op(
        self, builtin: str, owned: owned_map_code.Owned, args: list[ast.expr], dest: str | None, at: int
    ) -> ast.expr:
        """An operation on the chunk's owned map, inline (``owned_map_code.operation``)."""
        operands = [self.leaf(arg) for arg in args[1:]]
        total = sum(self.segment.charges) if self.segment is not None else 0
        site = self.take_located_segment(at)
        out = owned.slot if builtin == UPDATE else dest if dest is not None else self.slots.new("t")
        head = [_R, _F, self.lref(), P.Constant(site)]
        known = self.known_key
        key = operands[0] if operands else None
        present = (
            known.present if known is not None and type(key) in _NAME_NODES and key.id == known.key else None  # type: ignore[union-attr]
        )
        for stmt in owned_map_code.operation(
            builtin, owned, operands, out, total, head, lambda: self.slots.new("t"), present
        ):
            self.emit(stmt)
        if builtin == UPDATE and known is not None:
            # a set never removes a key; setting the known-absent key makes it present
            self.known_key = (
                owned_map_code.KnownKey(known.key, True) if known.present or present is False else None
            )
        if builtin == "map.containsKey" and type(key) in _NAME_NODES and key.id.startswith("v"):  # type: ignore[union-attr]
            self.tested_key = (out, key.id)  # type: ignore[union-attr]  # an IR local's slot (a temporary could be a computed key)
        return P.name(out)

    def leaf(self, value: ast.expr) -> ast.expr:
        """``value`` as a name or constant, evaluated once (into a temporary when it is neither)."""
        if type(value) in _NAME_NODES or type(value) in (ast.Constant, P.Constant):
            return value
        temp = self.slots.new("t")
        self.emit(P.assign(temp, value))
        return P.name(temp)

    def owned_add(self, owned: tuple[str, str, str], item: ast.expr, at: int) -> ast.expr:
        """``v = list.add(v, x)`` on the chunk's owned list: the size is the buffer's length ``s``,
        the fuel ``segment + list_add_flat_fuel(s)`` (``2 + s + 1`` copy, ``(s + 2) // 64`` walk,
        the formula ``_OWNED_ADD_FUEL`` checks against ``core.costs``), and the add is
        ``if f >= fuel and s < room: f = f - fuel; _p_push(b, x)``; otherwise ``_s_lox`` settles,
        materializes and runs the exact stub, which fails where the reference fails. Allocation,
        elements and the deadline cadence are settled later in one step (``stubs.settle_owned``)."""
        slot, buffer, room = owned
        total = sum(self.segment.charges) if self.segment is not None else 0
        site = self.take_located_segment(at)
        size, fuel = self.slots.new("t"), self.slots.new("t")
        self.emit(P.assign(size, P.call("_p_len", P.name(buffer))))
        walk = P.binop(P.add(P.name(size), P.const(_WALK_OFFSET)), P.FLOORDIV, P.const(_WALK_NODES))
        self.emit(P.assign(fuel, P.add(P.add(P.name(size), P.const(_OWNED_ADD_BASE + total)), walk)))
        exact = P.call("_s_lox", _R, _F, self.lref(), P.Constant(site), P.name(buffer), item)
        self.emit(
            P.if_(
                P.and_(P.compare(_F, P.GTE, P.name(fuel)), P.compare(P.name(size), P.LT, P.name(room))),
                [
                    P.assign("f", P.sub(_F, P.name(fuel))),
                    P.expr_stmt(P.call("_p_push", P.name(buffer), item)),
                ],
                [P.expr_stmt(exact)],
            )
        )
        return P.name(slot)

    def counter_room(
        self, body: tuple[ir.Stmt, ...], loop_local: str | None
    ) -> tuple[ast.expr | None, frozenset[int]]:
        """The room of the body's *counters* and the update nodes it makes safe.

        A counter is an I32/I64 local that the (leaf) body assigns only as ``c = c + k`` or
        ``c = c - k`` with constant ``k``, or resets as ``c = x % m`` with constant ``m`` when
        ``|m| - 1`` leaves a chunk's room of steps (``acc = (acc + i) % 1000003`` beside
        ``acc = acc - 1``: after a reset the counter is within ``|m| - 1`` of zero, so from there a
        whole chunk of steps cannot overflow and the room from the current value still bounds the
        chunk). One iteration moves it by at most ``up`` (the sum of its
        positive steps, as if every branch ran) and ``down``; so a chunk of at most
        ``(MAX - c) // up`` and ``(c - MIN) // down`` iterations can overflow none of those updates,
        whose inline checks are then dropped (``arith_int``). The generated code computes that room
        before each chunk and reserves no more (``_s_capm``); an update that would overflow runs on
        the exact path, which checks it. Updates the prover already PROVED safe need no room.
        Returns (None, empty) when the body has no counter to gain from."""
        steps: dict[str, list[tuple[int, ir.Binary]]] = {}
        other: set[str] = set() if loop_local is None else {loop_local}
        resets: dict[str, int] = {}
        collect_counters(body, steps, other, resets)
        rooms: list[ast.expr] = []
        counted: set[int] = set()
        safe = self.gen.safe_nodes
        for name in sorted(steps):
            updates = [(k, b) for k, b in steps[name] if id(b) not in safe]
            if name in other or not updates:
                continue
            t = self.plan.type_of(updates[0][1].left)
            if t not in _RANGES:
                continue
            low, high = _RANGES[t]
            up = sum(k for k, _ in steps[name] if k > 0)
            down = sum(-k for k, _ in steps[name] if k < 0)
            if not chunk_fits(low, high, up, down, resets.get(name, 0)):
                continue  # a reset this large could leave less room than a chunk: checked steps
            value = P.name(self.var(name))
            if up:
                rooms.append(_room(P.sub(P.const(high), value), up))
            if down:
                rooms.append(_room(P.sub(value, P.const(low)), down))
            counted.update(id(b) for _, b in updates)
        if not rooms:
            return None, frozenset()
        return (rooms[0] if len(rooms) == 1 else P.call("_p_min", *rooms)), frozenset(counted)

    def leave_loop(self) -> None:
        """The loop's own exit (a false condition) on the exact path."""
        self.emit(P.break_() if self.cold_results is None else self.cold_return(LEAVE))
        self.live = False

    def condition_exit(self, chunk: Chunk) -> None:
        """A false condition inside a bulk chunk: the current iteration never started."""
        if chunk.fast:
            self.emit(P.assign("f", chunk.exact_fuel()))
        if chunk.pool is not None:
            self.emit(codegen_blocks.take(chunk.pool[0], chunk.index()))
        else:
            self.emit(P.expr_stmt(P.call("_s_lback", _R, chunk.unstarted(0))))
        self.emit(P.break_())
        self.live = False

    # --- expressions ----------------------------------------------------------------------------

    def expr(self, node: ir.Expr, dest: str | None = None) -> ast.expr:
        """Emit ``node`` (its charges, then its evaluation) and return a side-effect-free operand for
        its value: a name, a constant, or an operation on such operands that cannot fail (a
        comparison, a negation, arithmetic known not to overflow). Such an operand may be evaluated
        where it is used: nothing it reads changes before (IR locals change only at statements)."""
        chunk = self.chunk  # ``charge(EXPRESSION_FUEL)``, inline: this runs for every IR expression
        if chunk is not None and chunk.fast:
            chunk.ahead -= _EXPRESSION_FUEL
        else:
            segment = self.segment
            if segment is None:
                segment = self.segment = Segment(self.out, len(self.out), self.lref())
            segment.charges.append(_EXPRESSION_FUEL)
        kind = type(node)  # IR node classes are final: dispatch on the exact class
        operand: ast.expr
        if kind is ir.Var:
            assert isinstance(node, ir.Var)
            alias = self.aliases.get(node.name) if self.aliases else None
            if alias is not None:
                source, nonneg = alias
                operand = P.name(source.id) if isinstance(source, ast.Name) else P.const(source.value)  # type: ignore[attr-defined]
                if nonneg:
                    self.nonneg_ops[id(operand)] = operand
                return operand
            slot = self.vars.get(node.name)
            operand = P.Name(slot if slot is not None else self.var(node.name), P.LOAD)
        elif kind is ir.Literal:
            operand = self.literal(node, dest)  # type: ignore[arg-type]
        elif kind is ir.Binary:
            operand = self.binary(node, dest)  # type: ignore[arg-type]
        elif kind is ir.Call:
            operand = self.call(node, dest)  # type: ignore[arg-type]
        else:
            operand = self.unary(node)  # type: ignore[arg-type]
        if id(node) in self.signs:
            self.nonneg_ops[id(operand)] = operand
        return operand

    def literal(self, node: ir.Literal, dest: str | None = None) -> ast.expr:
        kind = node.kind
        if kind in _PLAIN_LITERALS:
            return P.Constant(node.value)
        if kind in TEXT_LITERALS:
            return self.stub_pair("_s_text", P.const(self.tables.text(node)), dest=dest)
        if kind is ir.LiteralKind.GUID:
            assert isinstance(node.value, str)
            return P.name(guid_name(self.tables.guid(node.value)))
        if kind is ir.LiteralKind.F64:
            assert isinstance(node.value, int | float) and not isinstance(node.value, bool)
            return P.const(float(node.value))
        value = node.value
        assert value is None or isinstance(value, bool | int)
        return P.const(value)

    def temp(self, dest: str | None, operands: tuple[ast.expr, ...]) -> str:
        """Where to put a result: the statement's own variable when no operand reads it."""
        if dest is not None and not any(_reads(op, dest) for op in operands):
            return dest
        return self.slots.new("t")

    def unary(self, node: ir.Unary) -> ast.expr:
        operand = self.expr(node.operand)
        if node.op is ir.UnaryOp.NOT:
            return P.not_(operand)
        t = self.plan.type_of(node)
        if t == F64:
            return P.neg(operand)
        _, high = _RANGES[t]
        out = self.slots.new("t")
        self.emit(P.assign(out, P.neg(operand)))
        if id(node) in self.gen.safe_nodes or id(node) in self.gen.range_safe:
            return P.name(out)
        op = "neg_" + _suffix(t)
        self.emit(
            P.if_(
                bounds.above(P.name(out), high),
                [P.assign(out, self.fault_call(op, self.ordinal(node), operand))],
            )
        )
        return P.name(out)

    def binary(self, node: ir.Binary, dest: str | None) -> ast.expr:
        op = node.op
        if op in (ir.BinaryOp.AND, ir.BinaryOp.OR):
            return self.short_circuit(node)
        left_type = self.plan.type_of(node.left)
        left = self.expr(node.left)
        right = self.expr(node.right)
        if op in (ir.BinaryOp.EQ, ir.BinaryOp.NE) and isinstance(left_type, COMPOSITES):
            equal = self.stub_pair("_s_ceq", left, right, dest=dest if op is ir.BinaryOp.EQ else None)
            return equal if op is ir.BinaryOp.EQ else P.not_(equal)
        if op in _COMPARE:
            return P.compare(left, _COMPARE[op], right)
        if left_type == F64:
            return self.arith_f64(op.value, self.ordinal(node), left, right, dest)
        value = self.arith_int(node, left_type, left, right, dest)
        if op in _NONNEG_CLOSED and self.is_nonneg(left) and self.is_nonneg(right):
            self.nonneg_ops[id(value)] = value  # e.g. an inlined ``x * x + 1`` called with ``i % 100``
        return value

    def short_circuit(self, node: ir.Binary) -> ast.expr:
        first, second = (
            (node.right, node.left) if id(node) in self.plan.right_first else (node.left, node.right)
        )
        value = self.expr(first)
        out = self.slots.new("t")
        self.emit(P.assign(out, value))
        test: ast.expr = P.name(out) if node.op is ir.BinaryOp.AND else P.not_(P.name(out))

        def evaluate_second() -> None:
            self.emit(P.assign(out, self.expr(second)))

        self.branch(test, evaluate_second)
        return P.name(out)

    def fused_step(self, left: ast.expr, bound: int) -> list[ast.stmt]:
        """``t = a * b`` then ``t + k`` (``3 * x + 1``): when ``t``'s own upper test is the statement
        just emitted in a fast chunk, take it out and return it, to run only when the step's test
        (``t > MAX - k``, implied by ``t > MAX``) passes. The common path then runs one test
        instead of two; the rare one runs both in their order, so the first overflow still faults
        first, with the same operands. Fast chunks only: there no fuel statement is ever emitted
        between two statements, so nothing else can have been placed after the test."""
        held, self.upper_check = self.upper_check, None
        if held is None or not self.out or self.out[-1] is not held[0]:
            return []
        check, slot, checked, _ = held
        if not (isinstance(left, ast.Name) and left.id == slot and checked >= bound):
            return []
        self.out.pop()
        return [check]

    def is_nonneg(self, operand: ast.expr) -> bool:
        if id(operand) in self.nonneg_ops:
            return True
        value = _const_int(operand)
        return value is not None and value >= 0

    def arith_int(
        self, node: ir.Binary, t: SandboxType, left: ast.expr, right: ast.expr, dest: str | None
    ) -> ast.expr:
        op = node.op.value
        at = self.ordinal(node)
        low, high = _RANGES[t]
        fault = f"{op}_{_suffix(t)}"
        both_nonneg = self.is_nonneg(left) and self.is_nonneg(right)
        constant = _const_int(right)
        chunk = self.chunk
        safe = (
            id(node) in self.gen.safe_nodes
            or id(node) in self.gen.range_safe  # value_ranges.py: the operands' intervals fit
            or (chunk is not None and id(node) in chunk.counted)
        )
        if op in ("add", "sub") and constant is not None and not safe and not (op == "sub" and both_nonneg):
            # ``x + c`` overflows exactly when ``x > MAX - c`` (``x - c``: ``x < MIN + c``): test the
            # operand first and compute straight into the statement's variable
            out = dest if dest is not None else self.slots.new("t")
            grows = (constant >= 0) == (op == "add")
            bound = high - abs(constant) if grows else low + abs(constant)
            test = bounds.above(left, bound) if grows else bounds.below(left, bound)
            failing: list[ast.stmt] = [P.assign(out, self.fault_call(fault, at, left, right))]
            direct = P.binop(left, _PY_OPS[op], right)
            if grows:
                fresh = self.upper_check is not None and self.upper_check[3]
                nested = self.fused_step(left, bound)
                if nested and fresh and self.out and isinstance(left, ast.Name):
                    fused = scaled_steps.step(self.out[-1], left.id, nested[0], out, direct, bound, failing)
                    if fused is not None:  # ``k * x + c``: the operand tested, no temporary
                        self.out[-1] = fused
                        return P.name(out)
                failing = nested + failing
            self.emit(P.if_(test, failing, [P.assign(out, direct)]))
            return P.name(out)
        if op in _PY_OPS and (safe or (op == "sub" and both_nonneg)):
            if dest is None:
                return P.binop(left, _PY_OPS[op], right)  # cannot fail: a pure operand, no temporary
            # cannot fail, so no check reads the operands afterwards: straight into the variable,
            # even when an operand reads it (``c = c + 1``)
            self.emit(P.assign(dest, P.binop(left, _PY_OPS[op], right)))
            return P.name(dest)
        out = self.temp(dest, (left, right))
        if op in _PY_OPS:
            self.emit(P.assign(out, P.binop(left, _PY_OPS[op], right)))
            checks: ast.expr | None
            if safe or (op == "sub" and both_nonneg):
                checks = None  # proved, or [0, max] - [0, max] always fits
            elif both_nonneg:
                checks = bounds.above(P.name(out), high)
            else:
                signs = (self.is_nonneg(left), self.is_nonneg(right))
                checks = _range_checks(op, out, right, low, high, signs)
            if checks is not None:
                check = P.if_(checks, [P.assign(out, self.fault_call(fault, at, left, right))])
                self.emit(check)
                if chunk is not None and chunk.fast and _upper_only(checks):
                    self.upper_check = (check, out, high, out != dest)
            return P.name(out)
        # div / rem: Python's // and % agree with truncation when both operands are >= 0
        py_op: ast.operator = P.FLOORDIV if op == "div" else P.MOD
        divisor = _const_int(right)
        positive = divisor is not None and divisor > 0
        if not self.is_nonneg(left) and type(left) is P.BinOp:
            # a pure operand the guard and the division would both compute: compute it once
            held = self.slots.new("t")
            self.emit(P.assign(held, left))
            left = P.name(held)
            out = self.temp(dest, (left, right))  # the operand no longer reads the destination
        guards: list[ast.expr] = []
        if not positive:
            guards.append(P.compare(right, P.GT, P.const(0)))
        if not self.is_nonneg(left):
            guards.append(P.compare(left, P.GTE, P.const(0)))
        if not guards:
            if dest is None:
                return P.binop(left, py_op, right)  # cannot fail: a pure operand, no temporary
            self.emit(P.assign(dest, P.binop(left, py_op, right)))
            return P.name(dest)
        fast: list[ast.stmt] = [P.assign(out, P.binop(left, py_op, right))]
        slow: list[ast.stmt] = [P.assign(out, self.fault_call(fault, at, left, right))]
        self.emit(P.if_(guards[0] if len(guards) == 1 else P.and_(*guards), fast, slow))
        return P.name(out)

    def arith_f64(self, op: str, at: int, left: ast.expr, right: ast.expr, dest: str | None) -> ast.expr:
        fault = f"{op}_f64"
        out = self.temp(dest, (left, right))
        if op == "rem":
            self.emit(P.assign(out, self.fault_call(fault, at, left, right)))
            return P.name(out)
        not_finite = P.binop(P.name(out), P.SUB, P.name(out))  # NaN (truthy) for +-inf
        if op == "div":
            computed = [
                P.assign(out, P.binop(left, P.DIV, right)),
                P.if_(not_finite, [P.assign(out, self.fault_call(fault, at, left, right))]),
            ]
            self.emit(
                P.if_(
                    P.compare(right, P.NOTEQ, P.const(0.0)),
                    computed,
                    [P.assign(out, self.fault_call(fault, at, left, right))],
                )
            )
            return P.name(out)
        self.emit(P.assign(out, P.binop(left, _PY_OPS[op], right)))
        self.emit(P.if_(not_finite, [P.assign(out, self.fault_call(fault, at, left, right))]))
        return P.name(out)

    # --- calls ------------------------------------------------------------------------------------

    def call(self, node: ir.Call, dest: str | None = None) -> ast.expr:
        owned = self.chunk.owned_text if self.chunk is not None else None
        if owned is not None and dest == owned.slot and node.name == "string.concatBudgeted":
            return owned_concat(self, owned, node)  # the proof: every such Set in the loop is one
        target = self.plan.call_target(node)
        if target.kind is CallKind.FUNCTION and self.chunk is not None and self.chunk.fast:
            return self.inline_call(node, target.name)
        fused = literal_read(self, node, target.name, dest) if target.kind is CallKind.BUILTIN else None
        if fused is not None:  # ``map.get(m, "literal")``: one stub call (``codegen_literal_reads``)
            return fused
        args = [self.expr(a) for a in node.args]
        if target.kind is CallKind.BUILTIN:
            return self.builtin(target.name, args, dest, self.ordinal(node))
        if target.kind is CallKind.FUNCTION:
            self.barrier()
            self.emit(
                P.if_(
                    _NO_FRAMES,
                    [P.expr_stmt(P.call("_s_deep", _R, _F, self.lref()))],
                )
            )
            out = dest if dest is not None else self.slots.new("t")
            callee = self.gen.function_names[target.name]
            depth = P.sub(_D, P.const(1))
            self.emit(P.assign2(out, "f", P.call(callee, _R, _F, depth, self.lref(), *args)))
            return P.name(out)
        index = self.tables.binding(target.name)
        return self.stub_pair("_s_bind", P.const(index), P.tuple_(*args), dest=dest, at=self.ordinal(node))

    def builtin(
        self, builtin: str, args: list[ast.expr], dest: str | None = None, at: int = NO_ORDINAL
    ) -> ast.expr:
        if (
            builtin == "string.concatBudgeted"
            and dest is not None
            and isinstance(args[0], ast.Name)
            and args[0].id == dest
        ):
            return self.append_text(dest, args[1], at)
        chunk = self.chunk
        if (
            builtin == "list.add"
            and chunk is not None
            and chunk.owned is not None
            and dest == chunk.owned[0]
            and type(args[0]) in _NAME_NODES
            and args[0].id == dest  # type: ignore[attr-defined]
        ):
            return self.owned_add(chunk.owned, args[1], at)
        if (
            chunk is not None
            and chunk.owned_map is not None
            and (builtin in READERS or (builtin == UPDATE and dest == chunk.owned_map.slot))
            and type(args[0]) in _NAME_NODES
            and args[0].id == chunk.owned_map.slot  # type: ignore[attr-defined]
        ):
            return self.owned_map_op(builtin, chunk.owned_map, args, dest, at)
        if (
            builtin == "list.get"
            and chunk is not None
            and type(args[0]) in _NAME_NODES
            and args[0].id.startswith("v")  # type: ignore[attr-defined]  # an IR local, not a temporary
            and args[0].id not in chunk.assigned  # type: ignore[attr-defined]
        ):
            return self.list_read(chunk, args, dest, at)
        if builtin not in _INLINE_BUILTINS:
            stub = _STUB_NAMES.get(builtin)
            if stub is None:
                stub = _STUB_NAMES[builtin] = intrinsic_stub_name(builtin)
            return self.stub_pair(stub, *args, dest=dest, at=at)
        self.charge(costs.BUILTIN_COSTS[builtin].base)
        if builtin == "numeric.toI64":
            return args[0]
        out = dest if dest is not None else self.slots.new("t")
        self.emit(P.assign(out, P.call(_INLINE_BUILTINS[builtin], *args)))
        return P.name(out)

    def list_read(self, chunk: Chunk, args: list[ast.expr], dest: str | None, at: int) -> ast.expr:
        """``list.get(xs, i)`` in a bulk chunk where ``xs`` holds one list for the whole loop: its size
        and read fuel (``2 + size``, ``costs.read_fuel``) are read once before the loop, with the
        segment the call closes (``need = fuel + segment``), and the call is
        ``if f >= need and i >= 0 and i < size: f = f - need; t = g[i]`` (``g = _p_lbuf(xs)``, the
        list's buffer, taken right after its size: ``verify_reads``), else the
        stub, which charges and fails exactly (fuel short, index out of range). What the inline
        read skips is the meter's own bookkeeping of a successful read: its deadline cadence (the
        chunk's reservation checks the deadline and cancellation, and the read counts as one unit
        of the chunk's bounded work) - never a charge."""
        lst = args[0].id  # type: ignore[attr-defined]
        view = chunk.views.get(lst)
        if view is None:
            size, fuel, items = self.slots.new("t"), self.slots.new("t"), self.slots.new("g")
            view = chunk.views[lst] = (size, fuel, items)
            chunk.view_stmts.append(P.assign(size, P.call("_p_lsize", P.name(lst))))
            chunk.view_stmts.append(P.assign(items, P.call("_p_lbuf", P.name(lst))))
            chunk.view_stmts.append(P.assign(fuel, P.call("_p_rfuel", P.name(size))))
        size, fuel, items = view
        total = sum(self.segment.charges) if self.segment is not None else 0
        site = self.take_located_segment(at)
        need = fuel
        if total:  # the read fuel plus the segment the call closes, added once before the loop
            need = chunk.needs.get((fuel, total), "")
            if not need:
                need = chunk.needs[(fuel, total)] = self.slots.new("t")
                chunk.view_stmts.append(P.assign(need, P.add(P.name(fuel), P.const(total))))
        index = args[1]
        if not isinstance(index, ast.Name):  # the verifier reads a view only at a name
            named = self.slots.new("t")
            self.emit(P.assign(named, index))
            index = P.name(named)
        # ``i >= 0`` even where the sign is known: the verifier admits no view read without it
        tests = [
            P.compare(_F, P.GTE, P.name(need)),
            P.compare(index, P.GTE, P.const(0)),
            P.compare(index, P.LT, P.name(size)),
        ]
        out = dest if dest is not None else self.slots.new("t")
        stub = P.call("_s_i_list_get", _R, _F, self.lref(), P.Constant(site), *args)
        self.emit(
            P.if_(
                P.and_(*tests),
                [
                    P.assign("f", P.sub(_F, P.name(need))),
                    P.assign(out, ast.Subscript(P.name(items), index, P.LOAD, **P.POSITION)),
                ],
                [P.Assign([P.Tuple([P.Name(out, P.STORE), _F_STORE], P.STORE)], stub)],
            )
        )
        return P.name(out)

    def append_text(self, dest: str, suffix: ast.expr, at: int) -> ast.expr:
        """``s = string.concatBudgeted(s, x)``: ``f = _s_cat(R, f, lref, site, s, x)`` (every charge
        of the built-in, as its stub pays them) then ``s = s + x``, which CPython runs as an
        in-place append when ``s`` holds the text's only reference, and as a copy otherwise, so no
        other holder ever sees the text change. Building a string in a loop is then linear."""
        assert self.chunk is None or not self.chunk.fast, "fast code never calls a syncing stub"
        if not isinstance(suffix, ast.Name):  # evaluated once, read twice
            temp = self.slots.new("t")
            self.emit(P.assign(temp, suffix))
            suffix = P.Name(temp, P.LOAD)
        site = self.take_segment() if at == NO_ORDINAL else self.take_located_segment(at)
        target = P.Name(dest, P.LOAD)
        self.out.append(
            P.Assign([_F_STORE], P.call("_s_cat", _R, _F, self.lref(), P.Constant(site), target, suffix))
        )
        again = P.Name(suffix.id, P.LOAD)
        self.out.append(P.assign(dest, P.binop(P.Name(dest, P.LOAD), P.ADD, again)))
        return P.Name(dest, P.LOAD)

    def inline_call(self, node: ir.Call, callee_id: str) -> ast.expr:
        """A call inside a fast bulk loop: the callee's body, inlined (its frame depth was checked
        when the chunk was reserved). The generation budget is enforced here, while generating:
        each outermost inlined call spends its expanded size from what ``facts`` planned
        (``PlanFacts.inlined_nodes``), so a disagreement between plan and generator can never
        inline more than the budget (it fails closed as ``CompileFailure``)."""
        if self.inline_depth == 0:
            self.gen.inline_left -= self.gen.facts.functions[callee_id].size
            if self.gen.inline_left < 0:
                raise CompileFailure("inlining went over the plan's inline budget")
        self.inline_depth += 1
        self.known_key = None
        try:
            return self.inline_body(node, callee_id)
        finally:
            self.inline_depth -= 1

    def inline_body(self, node: ir.Call, callee_id: str) -> ast.expr:
        args = [self.expr(a) for a in node.args]
        callee = self.plan.functions[callee_id].function
        saved_vars, saved_aliases = self.vars, self.aliases
        self.vars, self.aliases = {}, {}
        assigned = _assigned_names(callee.body)
        for param, arg in zip(callee.parameters, args, strict=True):
            if isinstance(arg, ast.Name | ast.Constant) and param.name not in assigned:
                self.aliases[param.name] = (arg, self.is_nonneg(arg))  # read-only: use the argument
            else:
                slot = self.var(param.name)
                self.emit(P.assign(slot, arg))
                if param.name not in assigned:  # its sign is the argument's (``i % 100`` >= 0)
                    self.aliases[param.name] = (P.name(slot), self.is_nonneg(arg))
        statements = tuple(live(self.plan, callee.body))
        if _straight(statements):
            for stmt in statements[:-1]:
                self.statement(stmt)
            last = statements[-1]
            assert isinstance(last, ir.Return)
            self.charge(costs.STATEMENT_FUEL)
            value = self.expr(last.value)
            self.vars, self.aliases = saved_vars, saved_aliases
            if isinstance(value, ast.Name | ast.Constant):
                return value
            out = self.slots.new("t")
            self.emit(P.assign(out, value))
            return P.name(out)
        inline = Inline(self.slots.new("t"))
        self.inlines.append(inline)
        assert self.chunk is not None
        body, body_live, _ = self.sub_block(lambda: self.block(callee.body), self.chunk.ahead)
        self.inlines.pop()
        self.vars, self.aliases = saved_vars, saved_aliases
        assert not body_live, "the validator proves every path returns"
        join = max(ahead for _, ahead in inline.edges)
        for edge, ahead in inline.edges:
            if join != ahead:
                edge.append(P.aug("f", P.SUB, P.const(join - ahead)))
            edge.append(P.break_())
        body.append(P.break_())
        self.emit(P.while_true(body))
        self.chunk.ahead = join
        return P.name(inline.result)


def _reads(node: ast.expr, ident: str) -> bool:
    """Whether the operand ``node`` loads the name ``ident``."""
    kind = P.POSITIONED.get(type(node), type(node))
    if kind is ast.Name:
        return node.id == ident  # type: ignore[attr-defined, no-any-return]
    if kind is ast.Constant:
        return False
    if kind is ast.BinOp:
        return _reads(node.left, ident) or _reads(node.right, ident)  # type: ignore[attr-defined]
    if kind is ast.UnaryOp:
        return _reads(node.operand, ident)  # type: ignore[attr-defined]
    return any(isinstance(n, ast.Name) and n.id == ident for n in ast.walk(node))


class _ReadSlot:
    """Replaces the given expression nodes (by identity) with a load of ``slot``.

    Why not an ``ast.NodeTransformer``: its generic visit dispatches through ``getattr`` for every
    node of the chunk and was a tenth of the generator's time; this walk replaces in place, with
    the same result (a replaced node is not descended into; every other node is, but for the
    names, constants, contexts and operators, which hold no expression)."""

    def __init__(self, nodes: list[ast.expr], slot: str) -> None:
        self.ids = {id(node) for node in nodes}
        self.slot = slot

    def visit_block(self, block: list[ast.stmt]) -> None:
        """Replace in place (issue 16: skipping the leaves, most of the nodes, halves the walk)."""
        ids, slot = self.ids, self.slot
        stack: list[ast.AST] = list(block)
        while stack:
            node = stack.pop()
            for field in node._fields:
                value = getattr(node, field, None)
                if type(value) is list:
                    for index, item in enumerate(value):
                        if id(item) in ids:
                            value[index] = P.name(slot)
                        elif isinstance(item, ast.AST) and type(item) not in _LEAVES:
                            stack.append(item)
                elif isinstance(value, ast.AST):
                    if id(value) in ids:
                        setattr(node, field, P.name(slot))
                    elif type(value) not in _LEAVES:
                        stack.append(value)


_LEAVES = frozenset(
    {P.Name, P.Constant, ast.Name, ast.Constant, ast.Load, ast.Store}
    | {type(op) for op in (P.ADD, P.SUB, P.MULT, P.DIV, P.FLOORDIV, P.MOD, P.USUB, P.NOT, P.AND, P.OR)}
    | {type(op) for op in (P.LT, P.LTE, P.GT, P.GTE, P.EQ, P.NOTEQ)}
)
"""Node classes with no expression inside: ``_ReadSlot`` does not descend into them."""


def _assigned_names(block: tuple[ir.Stmt, ...]) -> set[str]:
    names: set[str] = set()
    for stmt in block:
        if isinstance(stmt, ir.Set):
            names.add(stmt.name)
        elif isinstance(stmt, ir.If):
            names |= _assigned_names(stmt.then) | _assigned_names(stmt.else_)
        elif isinstance(stmt, ir.While | ir.ForRange):
            names |= _assigned_names(stmt.body)
            if isinstance(stmt, ir.ForRange):
                names.add(stmt.local)
    return names


def _upper_only(test: ast.expr) -> bool:
    """``test`` is a one-sided upper test (``bounds.above``): no ``<`` anywhere in it."""
    return not any(
        isinstance(op, ast.Lt) for node in ast.walk(test) if isinstance(node, ast.Compare) for op in node.ops
    )


def _room(span: ast.expr, step: int) -> ast.expr:
    """Iterations a counter with ``span`` of room can take in steps of at most ``step``."""
    return span if step == 1 else P.binop(span, P.FLOORDIV, P.const(step))


def _straight(statements: tuple[ir.Stmt, ...]) -> bool:
    """Only the last statement returns and nothing before it branches to a return."""
    if not statements or not isinstance(statements[-1], ir.Return):
        return False
    return all(not isinstance(s, ir.If | ir.Return) for s in statements[:-1])


def _suffix(t: SandboxType) -> str:
    return "i32" if t == I32 else "i64" if t == I64 else "f64"


def _const_int(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


def _range_checks(
    op: str, out: str, right: ast.expr, low: int, high: int, nonneg: tuple[bool, bool]
) -> ast.expr:
    """The inline overflow test; one side suffices when the right operand is a known constant, or
    when a known sign (``nonneg``: left, right) bounds one side: ``x + y`` with either operand
    non-negative is at least the other one, so at least ``MIN``; ``x - y`` with ``y >= 0`` is at
    most ``x``; ``x - y`` with ``x >= 0`` is at least ``-MAX > MIN``."""
    constant = _const_int(right)
    grows: bool | None = None
    if constant is not None and op in ("add", "sub"):
        grows = constant >= 0 if op == "add" else constant <= 0
    elif op == "add" and (nonneg[0] or nonneg[1]):
        grows = True
    elif op == "sub" and (nonneg[0] or nonneg[1]):
        grows = not nonneg[1]
    if grows is None:
        return bounds.outside(P.name(out), low, high)
    return bounds.above(P.name(out), high) if grows else bounds.below(P.name(out), low)


_STUB_NAMES: dict[str, str] = {}
"""Built-in -> the name of its stub (``intrinsic_stub_name``), remembered."""

_INLINE_BUILTINS: dict[str, str] = {
    "numeric.toI64": "",
    "numeric.toF64": "_p_tof64",
}
"""Built-ins compiled inline: constant cost, no failure, no host call (their base fuel, then the shared
definition). The pure functions (``math.*``, ``string.*``, ``int32.*``) are never inlined: each call
is a host call (``Builtin.counts_as_host_call``), charged through the meter by their stub."""


class _Generator:
    """What every function emitter of one generation shares: the plan, its facts and the tables.

    With ``tables`` it builds the cold exact paths of an existing artifact (``generate_cold``): that
    code is checked code without loops, and it needs no sign facts or proofs (each only ever drops a
    check, so code generated without them is exact too)."""

    def __init__(
        self,
        plan: ExecutionPlan,
        options: GenOptions,
        tables: Tables | None = None,
        safe_nodes: frozenset[int] = frozenset(),
    ) -> None:
        self.plan = plan
        self.options = options
        self.fault_sites: dict[tuple[str, int], int] = {}
        self.operations = operation_ordinals(plan.module)
        """``id(node)`` -> operation ordinal (``runtime.locations``), for the sites of failures."""
        self.ordinals: dict[str, dict[int, int]] = {}
        self.safe_nodes = safe_nodes if tables is None else frozenset()
        self.inline_left = 0
        if tables is None:
            self.facts = analyze(plan, inline=options.inline)
            if self.facts.generated_nodes > options.max_compile_nodes:
                raise CompileFailure(
                    f"the plan needs {self.facts.generated_nodes} IR nodes of generated code, over "
                    f"the compile budget of {options.max_compile_nodes}"
                )
            self.inline_left = self.facts.inlined_nodes
            ranges = value_ranges(plan)
            self.signs: frozenset[int] = nonnegative_nodes(plan) | ranges.nonneg
            self.range_safe = ranges.safe
            self.tables = Tables()
            self.tables.functions = sorted(fid for fid, info in plan.functions.items() if info.reachable)
        else:
            self.facts = PlanFacts()
            self.signs = frozenset()
            self.range_safe = frozenset()
            self.tables = tables
        self.work = self.facts.work or WorkCounter(plan)  # analyze's counter, from this same plan
        self.function_index = {fid: i for i, fid in enumerate(self.tables.functions)}
        self.function_names = {fid: function_name(i) for fid, i in self.function_index.items()}

    def cold_index(self, fid: str, loop: ir.While | ir.ForRange) -> int:
        """Register ``loop``'s cold exact path; its index names ``_x<index>``."""
        ordinals = self.ordinals.get(fid)
        if ordinals is None:
            ordinals = self.ordinals[fid] = loop_ordinals(self.plan, fid)
        self.tables.colds.append((self.function_index[fid], ordinals[id(loop)]))
        return len(self.tables.colds) - 1

    def run(self) -> Generated:
        functions: list[ast.stmt] = []
        for fid in self.tables.functions:
            fn = _FunctionEmitter(self, fid).emit_function()
            inline_projected_reads(fn, self.plan, fid, self.tables)  # rule 29: a projected event's reads
            functions.append(fn)
        module = P.module(functions)
        return Generated(module, self.tables, self.facts.plan_nodes)  # the reachable functions' nodes


def generate(
    plan: ExecutionPlan, options: GenOptions | None = None, safe_nodes: frozenset[int] = frozenset()
) -> Generated:
    """Generate the Python module for every reachable function of ``plan``.

    ``safe_nodes`` are proof facts, the ``id`` of each arithmetic node of ``plan`` proved never to
    fault (``proofs.proof_facts``, empty unless the options ask for proofs): their inline checks are
    left out. Facts are an input so that generation stays a pure function of the plan."""
    return _Generator(plan, options or GenOptions(), safe_nodes=safe_nodes).run()


def generate_cold(plan: ExecutionPlan, tables: Tables) -> ast.Module:
    """The module of the cold exact paths ``tables.colds`` names (``cold.py``); the sites it needs
    are appended to ``tables``, which must be a copy of the artifact's own."""
    gen = _Generator(plan, GenOptions(), tables)
    functions: list[ast.stmt] = []
    for index, (fn_index, ordinal) in enumerate(list(tables.colds)):
        fid = tables.functions[fn_index]
        loop = find_loop(plan, fid, ordinal)
        if loop is None:
            raise ValueError("a cold path names no loop of its function")
        functions.append(_FunctionEmitter(gen, fid).emit_cold(index, describe(plan, fid, loop)))
    return P.module(functions)
