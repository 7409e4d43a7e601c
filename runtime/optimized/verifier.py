"""The generated-code verifier: nothing the code generator emits runs unless it passes here first.

Why: the code generator is trusted code, but it is big, and generated Python runs with the host's
full authority. So its output is checked like untrusted input, twice, against the plan it claims
to implement (the Cranelift-verifier idea applied to our own output):

1. **the AST, before ``compile()``**: an allowlist of node types; names only from the function's
   slot table (``R f d lr`` and ``[vtkenjc]<n>``) and the stub table; no attribute or subscript
   access at all; no import, global, nonlocal, lambda, with, try, raise, yield, await, class,
   comprehension, f-string or dunder name; constants only ``None``, bools, bounded ints and finite
   floats; every call a plain positional call of a stub or a generated function, with the run
   state first; every loop metered (its body starts with a fuel charge, or it is a bulk chunk
   right after a ``_s_cap`` reservation, or a single-pass block; a ``while`` is ``while True:``, or
   ``while <slot> < <slot or int>:`` when its body starts with a ``_s_cap`` reservation); every generated function is a
   reachable plan function and every binding index names a binding of the plan; every bulk
   reservation is the one the plan's loop calls for (``reservations.py``: its loop kind, ``R f d
   lr``, start and stop, and worst fuel, frames and work recomputed from the plan), and every
   give-back of reserved iterations refunds at most what its chunk reserved and has not started,
   and every call's loop refund (``lr``, or ``lr`` plus its chunk's unstarted iterations: ``verify_refunds``)
   is exactly the one its place owes; an iteration block's pool (``bk<n>``) stands only in the
   forms ``verify_blocks`` approves (rule 24); every fuel constant is the one the segment or
   ``core.costs`` formula it pays says (``verify_charges``, rule 26), every fault site is the plan's
   operation at its location and every overflow guard is the exact range test of its stub
   (``verify_overflow``, rule 27), and no overflow site of the table lost all its guarded stubs
   (rule 28);
2. **the code objects, after ``compile()``**, recursively: the names they load, their constants,
   their flags (no generator, coroutine, varargs, closures) and their opcodes.

The cold exact paths of fast loops (``cold.py``) are a second module, built when a run first needs
one; ``verify_cold_module`` holds it to the same rules, with the cold functions ``_x<i>`` (whose
parameters and result tuple are derived from the plan's loop) in place of the plan functions. In the
hot module a call of ``_x<i>`` is checked against the same description: its argument count and the
length of the tuple its results are unpacked into.

A failure raises ``VerifierFailure``; the caller quarantines the artifact and never runs it.
"""

from __future__ import annotations

import ast
import dis
import math
import re
from collections import Counter
from collections.abc import Container
from types import CodeType
from typing import Any

from dotboxd.runtime.locations import operation_nodes
from dotboxd.validator.plan import ExecutionPlan

from . import (
    inline_reads,
    verify_blocks,
    verify_inline_reads,
    verify_list_chunks,
    verify_literal_reads,
    verify_mapchunk,
    verify_maps,
    verify_overflow,
    verify_reads,
    verify_strchunk,
)
from . import pyast as P
from . import verify_refunds as refunds
from .codegen import FIXED_PARAMS
from .cold import cold_name, describe, find_loop
from .counter_rooms import check_room
from .errors import VerifierFailure
from .ownership import check_ownership
from .reservations import Reservation, expected_reservations, plan_facts, proofs_flag
from .stubs import FAULT_ARITIES, PURE_HELPERS, RANGE_NAME, STUBS
from .tables import CHARGES, CHUNK_OP, OP, Tables, function_name, guid_name
from .ticks import Tick, expected_ticks
from .verify_blocks import POOL
from .verify_charges import ChargeRules
from .verify_parts import PARTS, TAKE, PartsRules, literal_text_args
from .walk_index import indexed_walks

VERIFIER_VERSION = "dotboxd-py-opt-verifier-24"  # 24: an inline read's value slot is a local or a temporary, never the fuel (rule 29); 23: inline reads of a projected event (rule 29, verify_inline_reads); fuel constants tied to their segments and the fast chunks to their checked copies (rule 26), fault sites to the plan and overflow tests exact (rule 27), every overflow site keeps a guarded stub (rule 28), plain arithmetic before a pass's charge (rule 7); a statement or call object at two places of the tree is refused, a pool read approved for one place, rule 25 counts where each event name stands, an owned list's or buffer's name node at one place only, a view read approved for one place, a map chunk's fuel approvals counted per place (review6); 22: which entries take a projected host event (rule 25, verify_projection); 21: iteration blocks (rule 24); 20: fused literal reads tied to the plan's calls (rule 23); 19: a units store that is not a sum is refused by rule 20 itself (it ended as a malformed module), a zero-step local is no counter (rule 8, it refused valid loops); 18: a counter reset may divide + - * of names (rule 11); 17: fast list chunks (rule 22), c<n> slots; 16: pre-checked fast text chunks (rule 21); 15: pre-checked owned-map chunks (rule 20); 14: every call's loop refund tied to its chunk (rule 19); 13: list-read views (g<n>); 12: _s_mox's refund tied to its chunk; 11: counter resets in _s_capm rooms; 10: owned-text parts (p<n>); 9: owned-map dicts and cells (m<n>, u<n>); 8: counter rooms, work ticks and owned lists tied to the plan; 7: owned-list buffers (b<n>); 6: reservations and give-backs tied to the plan; 5: _s_capm

MAX_INT = 2**64
MAX_FOLDED_INT = 2**130
"""Constant folding may multiply two allowed constants: code objects may hold up to this."""
MAX_NODES = 2_000_000
"""The verifier's own budget: it refuses (rather than walks) absurdly large modules."""

SLOT = re.compile(
    r"(?:(?:[vtkenjc]|mc)(?:0|[1-9][0-9]{0,6}))\Z"
)  # mc<n>: a pre-checked map chunk's tally (rule 20); c<n>: a fast list chunk's fuel and length (rule 22)
FN = re.compile(r"_(?:fn|x)(?:0|[1-9][0-9]{0,6})\Z")
"""A generated function's name: ``_fn<i>`` (a plan function) or ``_x<i>`` (a cold exact path)."""
GUID = re.compile(r"_k(?:0|[1-9][0-9]{0,6})\Z")
BUFFER = re.compile(r"b(?:0|[1-9][0-9]{0,6})\Z")
"""An owned list's raw, mutable buffer (``codegen.take_owned``). Unlike a slot it may never be read
as a value: it is stored only by ``b<n>, t<n> = _s_lown(R, v<n>)`` and loaded only as the buffer
argument of ``_BUFFER_ARGS``'s callees, so generated code can neither alias nor return it."""
_BUFFER_ARGS = {"_p_len": (0, 1), "_p_push": (0, 2), "_s_lmat": (1, 2), "_s_lox": (4, 6)}
"""Callee -> (position of its buffer argument, its argument count)."""

_PLAIN_NODES: frozenset[type[ast.AST]] = frozenset(
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

_KIND: dict[type[ast.AST], type[ast.AST]] = {kind: kind for kind in _PLAIN_NODES}
_KIND.update((cls, base) for cls, base in P.POSITIONED.items() if base in _PLAIN_NODES)
_KIND.update((kind, kind) for kind in verify_maps.NODES)  # owned maps' forms, checked by verify_maps
"""Concrete node class -> the ``ast`` node type it is: the plain classes (``ast.parse`` output, the
disk cache) and the code generator's positioned twins (``pyast``: the same class plus a class-level
source position). The verifier dispatches on this exact-class table, never on ``isinstance``."""

ALLOWED_NODES: frozenset[type[ast.AST]] = frozenset(_KIND)
"""Every node class generated code may contain. Anything else (Attribute, Subscript, Import, Global,
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

_INLINE_READ_OPS = ("LOAD_ATTR", "STORE_ATTR", "IS_OP")
"""Opcodes rule 29's inline reads compile to (the only attribute access and identity test the AST
check admits: the run state's slots, the snapshot's class)."""

_CODE_OPCODES = frozenset(
    dis.opmap[name] for name in (*_CODE_OPS, *verify_maps.OPCODES, *_INLINE_READ_OPS) if name in dis.opmap
)

_FORBIDDEN_FLAGS = 0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200
"""CO_VARARGS, CO_VARKEYWORDS, CO_GENERATOR, CO_COROUTINE, CO_ITERABLE_COROUTINE, CO_ASYNC_GENERATOR."""


def _fail(reason: str, node: ast.AST | None = None) -> VerifierFailure:
    where = f" (line {getattr(node, 'lineno', '?')})" if node is not None else ""
    return VerifierFailure(reason + where)


PAYING_STUBS = frozenset(
    {
        "_s_text",
        "_s_ceq",
        "_s_bind",
        *verify_literal_reads.STUBS,
        *(name for name in STUBS if name.startswith("_s_i_")),
    }
)
"""Stubs whose fourth argument is the fuel segment they pay before anything else."""

_BIN_OPS = frozenset({ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Div})
_CMP_OPS = frozenset({ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq})
_UNARY_OPS = frozenset({ast.USub, ast.Not})
_BOOL_OPS = frozenset({ast.And, ast.Or})
_FAULT_STUBS = {f"_s_f{arity}": arity for arity in FAULT_ARITIES}
_CHUNK_STUBS = {f"_s_c{arity}": arity for arity in FAULT_ARITIES}
_FIXED_ARITY = {"_s_cap": 10, "_s_capm": 11, "_s_tick": 5, "_s_lown": 2}
"""Stubs whose every argument is positional data of fixed count (a wrong count would be a raw
``TypeError`` at run time)."""
_REFUND_AT = dict(refunds.REFUND_AT)
"""Where each stub receives its loop refund (``verify_refunds``), as a plain dict: looked up per call."""
_RESERVATIONS = frozenset({"_s_cap", "_s_capm"})
"""The fixed-arity stubs that may only stand where the plan has a bulk loop (``reservations``)."""

_MALFORMED = (AttributeError, TypeError, ValueError, IndexError, KeyError, RecursionError)
"""What reading a malformed tree (a missing field, a wrong field type, absurd nesting) raises while
it is checked: such a tree is refused like any other bad one."""


class _AstVerifier:
    """One pass over a generated module: every node is visited once and its exact class is looked
    up in ``_KIND``; the code for that node type knows which children it may have and checks them.

    Why it is shaped like this: the verifier runs on every compilation, so it must be cheap.
    Statements are checked block by block, and each expression tree is walked with an explicit
    stack (one loop turn per node, not one call); names already found to be good loads or stores
    are remembered, so their next use is one set lookup. Nodes are counted as they are reached and
    the count is checked before each block and each list of children is taken on, so an oversize
    module is refused before it is walked."""

    def __init__(
        self,
        plan: ExecutionPlan,
        tables: Tables,
        globals_allowed: frozenset[str] | None,
        cold: bool,
        options_key: str = "",
    ) -> None:
        self.plan = plan
        self.tables = tables
        self.globals = allowed_globals(tables) if globals_allowed is None else globals_allowed
        self.callees: set[str] = set()
        """Callees already found good: allowed globals but ``_range`` (a for-loop's only) and the
        GUID constants (values)."""
        self.cold = cold
        """Checking the cold module (``_x<i>``) rather than the hot one (``_fn<i>``)."""
        names = cold_name if cold else function_name
        self.function_names = {names(i) for i in range(len(tables.colds if cold else tables.functions))}
        self.arity: dict[str, int] = {}
        """Generated function -> the number of arguments it takes."""
        self.results: dict[str, int] = {}
        """Cold function -> the length of the tuple it returns."""
        self.returns = 2
        """Length of the tuple the function being checked returns."""
        self.nodes = 0
        self.placed: set[int] = set()
        """``id`` of every statement and call met so far: each may stand at one place only. Forms
        are approved by the identity of their nodes (rule 24's block calls, statements and loops,
        reservations, chunk guards): a tamperer could otherwise share an approved node object into
        a place of its choosing (``_s_bkend`` inside its loop), and the generator shares neither -
        but for an inline read's inner fallback, the very statement of its outer one (rule 29): only
        the outer one is walked here, and the whole form is compared with its rebuild."""
        self.loads: set[str] = {name for name in FIXED_PARAMS if name != "R"}
        """Names already found to be good loads (slots and this artifact's GUID constants)."""
        self.stores: set[str] = {"f"}
        """Names already found to be good assignment targets (the fuel and slots)."""
        self.buffers: set[str] = set()
        """Owned-list buffers the function being checked has stored so far (``b<n>``, only from
        ``_s_lown``; a buffer name of another function is not one of them)."""
        self.buffer_rooms: dict[str, str] = {}
        """Each of those buffers' room slot, as its ``_s_lown`` returned it (rule 22's room term)."""
        self.quick_rooms: set[str] = set()
        """The room slots fast list chunks test against (each stored once: ``check_rooms``)."""
        self.quick_chunks: dict[int, ast.stmt] = {}
        """``id`` of each loop of a fast list chunk and of the checked chunk after it -> their
        reservation (rule 22, ``verify_list_chunks``)."""
        self.maps = verify_maps.MapRules()
        """Owned-map dicts and cells stored so far (``m<n>``, ``u<n>``, only from ``_s_mown``)."""
        self.parts = PartsRules()
        """Owned-text parts lists stored so far and the calls approved to use them (``verify_parts``)."""
        self.reads = verify_reads.ReadRules()
        self.literal_reads = verify_literal_reads.LiteralReadRules(plan, tables)
        self.inline_reads = verify_inline_reads.InlineReadRules(plan, tables)
        """The inline forms of a projected event's reads (rule 29, ``verify_inline_reads``)."""
        self.fids: dict[str, str] = (
            {} if cold else {function_name(i): fid for i, fid in enumerate(tables.functions)}
        )
        self.fn: ast.FunctionDef | None = None
        """The fused literal reads met so far (rule 23, ``verify_literal_reads``)."""
        """List-read views stored so far and the reads approved to use them (``verify_reads``)."""
        self.charge_sites: frozenset[int] = frozenset()
        self.charges = ChargeRules(tables)
        """Rule 26 (verifseg): the fuel constants tied to the segments they pay (``verify_charges``)."""
        self.overflow_ops: dict[int, str] = {}
        """Fault site -> its operation, for rule 27's overflow tests (``verify_overflow``)."""
        self.guarded_sites: set[int] = set()
        """The overflow sites whose guarded stubs rule 27 met so far (rule 28, verifseg2)."""
        self.paid_sites: frozenset[int] = frozenset()
        self.op_sites: frozenset[int] = frozenset()
        self.chunk_sites: frozenset[int] = frozenset()
        self.options_key = options_key
        self.expected: dict[str, tuple[Reservation, ...]] = {}
        """Generated function -> its reservations as the plan determines them (``reservations``)."""
        self.pending: list[Reservation] = []
        """The reservations of the function being checked not yet matched, in order."""
        self.approved: set[int] = set()
        """``id`` of the reservation calls matched against the plan: any other is refused."""
        self.chunk: refunds.ChunkNames | None = None
        """Inside a bulk chunk's body: (reserved count ``n``, iteration name, forRange start ``k``)."""
        self.refund_chunk: refunds.ChunkNames | None = None
        """The chunk whose refund a failing call owes: ``chunk``, also inside the single-pass blocks
        (``while True: ... break``, an inlined call) of its body, where a give-back is not allowed."""
        self.refund_slots = refunds.NO_SLOTS
        """The innermost chunk's per-iteration refund slots approved so far (``verify_refunds``)."""
        self.proofs = proofs_flag(options_key)
        self.ticks: dict[str, tuple[Tick, ...]] = {}
        """Generated function -> its work ticks as the plan determines them (``ticks``)."""
        self.pending_ticks: list[Tick] = []
        self.owned_reservations: dict[int, bool] = {}
        """The function's bulk loops (by ``id``) -> whether the plan proves a list owned in each."""
        self.expected_blocks: dict[str, tuple[int, ...]] = {}
        """Generated function -> the work units of its block loops (rule 24, ``verify_blocks``)."""
        self.blocks = verify_blocks.BlockRules(())
        self.block_pool: tuple[str, int] | None = None
        """Inside a block loop's body: its pool and units (rule 24)."""
        self.pool_chunk: tuple[str, str] | None = None
        """Inside a pool loop's chunk: its count and iteration (rule 24)."""

    def count(self, more: int) -> None:
        self.nodes += more
        if self.nodes > MAX_NODES:
            raise _fail("generated module is too large to verify")

    # --- tables against the plan ----------------------------------------------------------------

    def check_tables(self) -> None:
        plan = self.plan
        tables = self.tables
        if len(set(tables.functions)) != len(tables.functions):
            raise _fail("a function is listed twice")
        for index, fid in enumerate(tables.functions):
            info = plan.functions.get(fid)
            if info is None or not info.reachable:
                raise _fail(f"generated function for '{fid}', which is not a reachable plan function")
            self.arity[function_name(index)] = len(FIXED_PARAMS) + len(info.function.parameters)
        for bid in tables.bindings:
            if plan.binding(bid) is None:
                raise _fail(f"binding '{bid}' is not in the plan")
        for index, (fn_index, ordinal) in enumerate(tables.colds):
            fid = tables.functions[fn_index]
            loop = find_loop(plan, fid, ordinal)
            if loop is None:
                raise _fail(f"cold path {index} names no loop of '{fid}'")
            cold = describe(plan, fid, loop)
            self.arity[cold_name(index)] = len(FIXED_PARAMS) + len(cold.params)
            self.results[cold_name(index)] = cold.result_arity
        charges, paid, ops, chunk_ops = set(), set(), set(), set()
        for index, site in enumerate(tables.sites):
            kind = site[0]
            if kind == CHARGES:
                charges.add(index)
                if len(site[1]) > 0:
                    paid.add(index)
            elif kind == OP:
                ops.add(index)
            elif kind == CHUNK_OP:
                chunk_ops.add(index)
        self.charge_sites = frozenset(charges)
        self.paid_sites = frozenset(paid)
        self.op_sites = frozenset(ops)
        self.chunk_sites = frozenset(chunk_ops)
        self.overflow_ops = verify_overflow.site_ops(tables)
        if self.overflow_ops:  # rule 27 (verifseg); the walk of the plan is shared with rule 23's
            operations = self.literal_reads.operations = operation_nodes(plan.module)
            verify_overflow.check_sites(plan, tables, operations)
        if not self.cold:  # a cold path is one exact iteration of a leaf loop: no reservation, no tick
            facts = plan_facts(plan, self.options_key)
            self.expected = expected_reservations(plan, tables, self.options_key, facts)
            self.ticks = expected_ticks(plan, tables, facts)
            self.expected_blocks = verify_blocks.expected_blocks(plan, tables, self.options_key, facts)

    # --- the module -------------------------------------------------------------------------

    def check(self, module: ast.AST) -> None:
        self.check_tables()
        if type(module) is not ast.Module or getattr(module, "type_ignores", None):
            raise _fail("not a plain module")
        seen: set[str] = set()
        body = module.body
        self.count(len(body))
        for stmt in body:
            if _KIND.get(type(stmt)) is not ast.FunctionDef:
                raise _fail(f"{type(stmt).__name__} at module level (only function definitions)", stmt)
            assert isinstance(stmt, ast.FunctionDef)
            if stmt.name not in self.function_names or stmt.name in seen:
                raise _fail(f"unexpected function name {stmt.name!r}", stmt)
            seen.add(stmt.name)
            self.function(stmt)
        if seen != self.function_names:
            raise _fail("a plan function has no generated function")
        if not self.cold:  # rule 28 (verifseg2): no overflow site lost its guard with its stub
            verify_overflow.check_present(self.overflow_ops, self.guarded_sites)

    def function(self, fn: ast.FunctionDef) -> None:
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
        self.count(1 + len(args.args))
        self.returns = self.results.get(fn.name, 2) if self.cold else 2
        params = []
        for a in args.args:
            if (
                _KIND.get(type(a)) is not ast.arg
                or a.annotation is not None
                or getattr(a, "type_comment", None)
            ):
                raise _fail("annotations are not allowed", fn)
            params.append(a.arg)
        fixed = len(FIXED_PARAMS)
        if tuple(params[:fixed]) != FIXED_PARAMS or len(params) != self.arity[fn.name]:
            raise _fail("parameters do not match the plan function", fn)
        if len(set(params)) != len(params) or not all(
            type(p) is str and SLOT.match(p) for p in params[fixed:]
        ):
            raise _fail("parameters must be distinct slots", fn)
        self.pending = list(self.expected.get(fn.name, ()))
        self.pending.reverse()  # popped from the end, in plan order
        self.pending_ticks = list(self.ticks.get(fn.name, ()))
        self.pending_ticks.reverse()
        self.buffers = set()
        self.buffer_rooms = {}
        self.quick_rooms = set()
        self.maps = verify_maps.MapRules()  # like buffers: a dict or cell another function took is not one
        self.map_chunks = verify_mapchunk.MapChunkRules(fn)  # rule 20, per function like the dicts
        self.fast_map_loops: dict[int, ast.stmt] = {}
        """Pre-checked map chunks' ``for`` loops (by ``id``) -> the reservation they run under."""
        self.parts = PartsRules()  # and a parts list another function took is not one either
        self.reads = verify_reads.ReadRules()  # nor a view
        self.owned_reservations = {}
        self.blocks = verify_blocks.BlockRules(self.expected_blocks.get(fn.name, ()))
        self.fn = fn
        self.tick_at(fn.body, _unbound_prefix(fn.body))
        self.block(fn.body, 0)
        self.inline_reads.function_done(fn)
        self.blocks.finish()
        self.charges.check(fn)  # rule 26 (verifseg): on a tree the rules above accepted
        self.guarded_sites |= verify_overflow.check_tests(
            self.charges, self.overflow_ops
        )  # rule 27 (verifseg)
        self.charges.reset()
        self.reads.check_stores(fn)
        verify_list_chunks.check_rooms(fn, self.quick_rooms)
        if self.pending:
            raise _fail("a bulk loop of the plan has no reservation", fn)
        if self.pending_ticks:
            raise _fail("a work tick of the plan is missing", fn)
        if self.buffers:
            self.owned_lists(fn, set(params))

    def owned_lists(self, fn: ast.FunctionDef, params: set[str]) -> None:
        """The function takes owned-list buffers: each list must be owned (``ownership``) and each
        loop it serves a bulk loop the plan proves a list owned in."""
        if self.cold:
            raise _fail("a cold path takes no owned list", fn)
        for loop_id, take in check_ownership(fn, params).items():
            if not self.owned_reservations.get(loop_id, False):
                raise _fail("an owned list taken for a loop the plan owns no list in", take.loop)

    def tick_at(self, block: list[ast.stmt], index: int) -> None:
        """Match a tick standing at ``block[index]`` (a function's first statement, or the one after
        a loop body's iteration charge) against the plan's next one (``ticks``)."""
        stmt: Any = block[index] if index < len(block) else None
        if not (_KIND.get(type(stmt)) is ast.Expr and _calls_stub(stmt.value, "_s_tick")):
            return
        if not self.pending_ticks:
            raise _fail("a work tick the plan does not have", stmt)
        nodes, heavy = self.pending_ticks.pop()
        args = stmt.value.args
        if not (
            len(args) == _FIXED_ARITY["_s_tick"]
            and all(_is_name(a, name) for a, name in zip(args[:3], ("R", "f", "lr"), strict=True))
            and _is_const(args[3], nodes)
            and _is_const(args[4], heavy)
        ):
            raise _fail("a work tick's numbers differ from the plan's", stmt)
        self.approved.add(id(stmt.value))

    def iteration_tick(self, body: list[ast.stmt]) -> None:
        """The tick right after a loop body's top-level iteration charge, if any."""
        for index, stmt in enumerate(body):
            if _is_charge(body, index) and _calls(getattr(stmt, "value", None), "_s_liter"):  # type: ignore[arg-type]
                self.tick_at(body, index + 1)
                return

    # --- statements ---------------------------------------------------------------------------

    def block(self, stmts: list[ast.stmt], depth: int) -> None:
        if not stmts:
            raise _fail("empty block")
        self.count(len(stmts))
        stores = self.stores
        stmt: Any
        placed = self.placed
        for index, stmt in enumerate(stmts):
            if id(stmt) in placed:
                raise _fail("one statement object stands at two places of the module", stmt)
            placed.add(id(stmt))
            kind = _KIND.get(type(stmt))
            if kind is ast.Assign and verify_blocks.stores_pool(stmt):
                self.pool_store(stmts, index)
            elif kind is ast.Assign and _calls_stub(stmt.value, "_s_lown"):
                self.take_buffer(stmt)
            elif kind is ast.Assign and verify_maps.is_take(stmt):
                self.operands(self.maps.take(self, stmt))
                self.map_chunks.take(stmts, index)
            elif kind is ast.Assign and verify_maps.is_item_store(stmt):
                self.operands(self.maps.item_store(self, stmt))
            elif kind is ast.Assign and _calls_stub(stmt.value, TAKE):
                self.parts.take(self, stmt)
            elif kind is ast.Assign and verify_reads.is_take(stmt):
                self.count(1)
                self.call_tree(self.reads.take(stmts, index, SLOT.match))
            elif kind is ast.Assign:
                targets = stmt.targets
                target: Any = targets[0] if len(targets) == 1 else None
                target_kind = type(target)
                if (
                    target_kind in _NAMES
                    and type(target.ctx) is ast.Store
                    and (target.id in stores or _good_store(target, stores))
                    and not stmt.type_comment
                ):
                    self.nodes += 1
                elif (
                    target_kind in _TUPLES
                    and len(target.elts) == 2
                    and type(target.ctx) is ast.Store
                    and _good_store(target.elts[0], stores)
                    and _good_store(target.elts[1], stores)
                    and type(stmt.value) in _CALLS
                    and type(stmt.value.func) in _NAMES
                    and stmt.value.func.id not in self.results
                    and not stmt.type_comment
                ):
                    self.nodes += 3  # a pair from a stub or a plan function
                else:
                    self.assign_targets(stmt)
                value = stmt.value
                if type(value) in _CALLS:
                    self.call_tree(value)
                else:
                    self.expr(value)
                    self.refund_slots.see(stmts, stmt, self.refund_chunk)
            elif kind is ast.If and verify_strchunk.is_form(stmt):
                self.fast_text_chunk(stmt, stmts, index, depth)
            elif kind is ast.If and verify_inline_reads.is_form(stmt):
                assert self.fn is not None
                self.block([stmt.orelse[0]], depth)  # its fallback: a fused read (rules 19, 23) first
                self.inline_reads.check(stmt, self.fn, self.fids.get(self.fn.name), depth > 0)
            elif kind is ast.If:
                self.parts.approve(stmt)
                self.reads.approve(stmt)
                self.expr(stmt.test)
                self.block(stmt.body, depth)
                if stmt.orelse:
                    self.block(stmt.orelse, depth)
            elif kind is ast.AugAssign:
                target = stmt.target
                if not (type(target) in _NAMES and target.id == "f" and type(target.ctx) is ast.Store):
                    raise _fail("augmented assignment only updates the fuel", stmt)
                if type(stmt.op) not in (ast.Add, ast.Sub):
                    raise _fail("fuel is only added to or subtracted from", stmt)
                self.nodes += 1
                self.expr(stmt.value)
            elif kind is ast.Expr:
                if _KIND.get(type(stmt.value)) is not ast.Call:
                    raise _fail("expression statements must be calls", stmt)
                if _calls(stmt.value, "_s_lback") and not (
                    index + 1 < len(stmts) and _KIND.get(type(stmts[index + 1])) in (ast.Break, ast.Return)
                ):
                    raise _fail("a give-back of reserved iterations must leave the chunk", stmt)
                self.call_tree(stmt.value)
            elif kind is ast.Return:
                if self.block_pool is not None:
                    raise _fail("a block loop is left only at its end, where its pool goes back", stmt)
                returned = stmt.value
                if not (_KIND.get(type(returned)) is ast.Tuple and len(returned.elts) == self.returns):
                    raise _fail(
                        "functions return (value, fuel), cold paths (signal, fuel, value, *locals)", stmt
                    )
                self.expr(returned)
            elif kind is ast.While:
                self.while_(stmt, depth)
            elif kind is ast.For:
                self.for_(stmt, stmts, index, depth)
            elif kind is ast.Break or kind is ast.Continue:
                if depth == 0:
                    raise _fail("break/continue outside a loop", stmt)
                if (
                    kind is ast.Break
                    and self.pool_chunk is not None
                    and self.chunk is not None
                    and id(stmt) not in self.blocks.takes
                ):
                    raise _fail("a chunk of a pool loop is left taking what it started", stmt)
            elif kind is not ast.Pass:
                raise _fail(f"statement {type(stmt).__name__} is not allowed", stmt)

    def pool_store(self, stmts: list[ast.stmt], index: int) -> None:
        """An assignment to a block's pool (rule 24, ``verify_blocks``): the start of a block loop,
        a chunk's exit take, or a form a block or pool loop check approved; anything else is
        refused. Its other target (``f`` or the chunk's count) and its value are checked as usual."""
        stmt: Any = stmts[index]
        if id(stmt) not in self.blocks.statements:
            if self.block_pool is None:
                if self.chunk is not None or self.cold:
                    raise _fail("a block loop stands only outside chunks, in a plan function", stmt)
                self.blocks.open(stmts, index)
            elif self.pool_chunk is not None and self.chunk is not None:
                self.blocks.take(stmts, index, self.block_pool[0], self.pool_chunk[1])
            else:
                raise _fail("a pool is stored only in the forms of its block", stmt)
        target = stmt.targets[0]
        elements = target.elts if _KIND.get(type(target)) is ast.Tuple else [target]
        self.count(1 + len(elements))
        for element in elements:
            if id(element) not in self.blocks.stores:
                self.target(element)
        if _KIND.get(type(stmt.value)) is ast.Call:
            self.call_tree(stmt.value)
        else:
            self.expr(stmt.value)

    def fast_text_chunk(self, stmt: ast.If, stmts: list[ast.stmt], index: int, depth: int) -> None:
        """A pre-checked fast chunk of an owned text (rule 21, ``verify_strchunk``): its exact
        shape, then its parts under the ordinary rules, the form's calls approved."""
        reserved = None
        if index == 1 and _is_reservation(stmts, 0):
            reservation: Any = stmts[0]
            reserved = (reservation.targets[0].id, reservation.value.args[4])
        self.parts.approved.update(verify_strchunk.check(stmt, reserved, self.parts.taken))
        self.charges.text_chunks.append((stmt, stmts[index + 1] if index + 1 < len(stmts) else None))
        self.call_tree(stmt.test)  # type: ignore[arg-type]
        loop: Any
        settled: Any
        advance: Any
        loop, settled, advance, _ = stmt.body
        self.count(3)
        self.target(loop.target)
        for arg in loop.iter.args:
            self.expr(arg)
        self.block(loop.body, depth + 1)
        self.assign_fast_chunk_locals(settled)
        self.target(advance.targets[0])
        self.expr(advance.value)

    def assign_fast_chunk_locals(self, stmt: Any) -> None:
        """``f, L, h, r = _s_strdone(...)``: four targets (a shape ``assign_targets`` refuses)."""
        self.count(1 + len(stmt.targets[0].elts))
        for element in stmt.targets[0].elts:
            self.target(element)
        self.call_tree(stmt.value)

    def take_buffer(self, stmt: ast.Assign) -> None:
        """``b<n>, t<n> = _s_lown(R, v<n>)``: the only store of an owned-list buffer."""
        targets = stmt.targets
        target: Any = targets[0] if len(targets) == 1 else None
        if not (
            type(target) in _TUPLES
            and type(target.ctx) is ast.Store
            and len(target.elts) == 2
            and type(target.elts[0]) in _NAMES
            and type(target.elts[0].ctx) is ast.Store
            and type(target.elts[0].id) is str
            and BUFFER.match(target.elts[0].id)
            and not getattr(stmt, "type_comment", None)
        ):
            raise _fail("_s_lown is unpacked into a buffer and a slot", stmt)
        self.target(target.elts[1])
        self.count(3)
        self.buffers.add(target.elts[0].id)
        if type(target.elts[1]) in _NAMES:
            self.buffer_rooms[target.elts[0].id] = target.elts[1].id
        self.call_tree(stmt.value)  # type: ignore[arg-type]

    def operands(self, nodes: list[ast.expr]) -> None:
        for node in nodes:
            self.expr(node)

    def buffer_arg(self, node: ast.expr, owner: ast.Call) -> None:
        if not (
            type(node) in _NAMES
            and type(node.ctx) is ast.Load  # type: ignore[attr-defined]
            and node.id in self.buffers  # type: ignore[attr-defined]
        ):
            raise _fail(f"{owner.func.id} needs an owned buffer taken by _s_lown", owner)  # type: ignore[attr-defined]

    def assign_targets(self, stmt: ast.Assign) -> None:
        """The targets of an assignment that is not a plain store to a known slot."""
        targets = stmt.targets
        if len(targets) != 1 or getattr(stmt, "type_comment", None):
            raise _fail("chained assignment", stmt)
        target = targets[0]
        if _KIND.get(type(target)) is ast.Tuple:
            assert isinstance(target, ast.Tuple)
            value = stmt.value
            if _KIND.get(type(value)) is not ast.Call:
                raise _fail("pair unpacking needs a call", stmt)
            callee = value.func  # type: ignore[attr-defined]
            cold = self.results.get(callee.id) if type(callee) in _NAMES else None
            if type(target.ctx) is not ast.Store or len(target.elts) != (2 if cold is None else cold):
                raise _fail("only pair unpacking (and the results of a cold path) is allowed", stmt)
            self.count(1 + len(target.elts))
            for element in target.elts:
                self.target(element)
        else:
            self.count(1)
            self.target(target)

    def target(self, node: ast.expr) -> None:
        if type(node) not in _NAMES or type(node.ctx) is not ast.Store:  # type: ignore[attr-defined]
            raise _fail("assignment targets are names", node)
        assert isinstance(node, ast.Name)
        ident = node.id
        if ident in self.stores:
            return
        if not (type(ident) is str and SLOT.match(ident)):
            raise _fail(f"assignment to {ident!r}, which is not a slot", node)
        self.stores.add(ident)

    def pool_while(self, loop: ast.While) -> None:
        """A bulk ``while`` inside a block body draws from the pool (rule 24): its form, and the
        plan's next bulk loop for it (rule 8's order, rule 11's rooms)."""
        assert self.block_pool is not None
        if not self.pending:
            raise _fail("a pool loop the plan has no bulk loop for", loop)
        want = self.pending.pop()
        if want.bounded:
            raise _fail("a pool loop's kind differs from the plan's loop", loop)
        pool, units = self.block_pool
        chunk, rooms = self.blocks.pool_loop(loop, pool, units, want.constants)
        self.charges.fast_chunks.append((chunk, want.constants[0], True))  # rule 26 (verifseg2)
        for room in rooms or [None]:
            wrong = check_room(
                want.counters,
                "_s_cap" if room is None else "_s_capm",
                [room],
                chunk.body,
                self.proofs,
                self.site_op,
            )
            if wrong is not None:
                raise _fail(wrong, loop)
        self.owned_reservations[id(loop)] = False

    def while_(self, loop: ast.While, depth: int) -> None:
        test = loop.test
        body = loop.body
        if loop.orelse:
            raise _fail("while loops have no else", loop)
        passes_once = False
        pool_level = self.block_pool is not None and self.pool_chunk is None
        if pool_level and not _is_true_constant(test):
            raise _fail("the loops of a block body are its pool loops", loop)
        if pool_level:
            self.pool_while(loop)
        elif _is_true_constant(test):
            if _is_reservation(body, 0):
                self.reservation(loop, None)
            elif not _is_charge(body, _arithmetic_prefix(body)):
                if not _single_pass(body):
                    raise _fail("a loop body does not start with a meter charge", loop)
                passes_once = True
        elif _bounds_test(test):
            # ``while k < e:`` only in front of a bulk reservation, which checks the deadline and
            # cancellation and charges the pass's iterations before anything else runs
            if not _is_reservation(body, 0):
                raise _fail("a bounded loop must start with a bulk reservation", loop)
            assert isinstance(test, ast.Compare)
            self.reservation(loop, test)
            self.expr(test)
        else:
            raise _fail("loops are `while True:` or `while <slot> < <slot or constant>:`, without else", loop)
        self.count(1)
        self.iteration_tick(body)
        saved = self.chunk, self.refund_chunk, self.refund_slots
        self.chunk = None  # a break in here would leave this loop, not the chunk
        if not passes_once:  # a real loop owes no chunk's refund; a single pass still owes its chunk's
            self.refund_chunk, self.refund_slots = None, refunds.NO_SLOTS
        self.block(body, depth + 1)
        self.chunk, self.refund_chunk, self.refund_slots = saved

    def for_(self, loop: ast.For, block: list[ast.stmt], index: int, depth: int) -> None:
        self.count(1)
        self.target(loop.target)
        iterator = loop.iter
        if not (
            _KIND.get(type(iterator)) is ast.Call
            and type(iterator.func) in _NAMES  # type: ignore[attr-defined]
            and iterator.func.id == RANGE_NAME  # type: ignore[attr-defined]
            and type(iterator.func.ctx) is ast.Load  # type: ignore[attr-defined]
            and 1 <= len(iterator.args) <= 2  # type: ignore[attr-defined]
            and not iterator.keywords  # type: ignore[attr-defined]
        ):
            raise _fail("for-loops only iterate over _range(...)", loop)
        assert isinstance(iterator, ast.Call)
        self.count(2)
        for arg in iterator.args:
            self.expr(arg)
        between = index == 2 and (verify_mapchunk.is_guard(block[1]) or verify_strchunk.is_form(block[1]))
        follows = index == 1 or between  # rule 20's guard or rule 21's fast text chunk stands between
        reserved = block[0] if follows and _is_reservation(block, 0) else None
        if reserved is None:
            reserved = self.fast_map_loops.get(id(loop)) or self.quick_chunks.get(id(loop))
        bulk = reserved is not None and _ranges_over(iterator, reserved)
        pool_owner = self.blocks.loops.get(id(loop))
        pooled = self.blocks.chunks.get(id(loop))
        if self.block_pool is not None and self.pool_chunk is None and pooled is None:
            raise _fail("the loops of a block body are its pool loops", loop)
        if getattr(loop, "type_comment", None):
            raise _fail("type comments are not allowed", loop)
        if pool_owner is not None or pooled is not None:
            self.block_or_pool_loop(loop, pool_owner, pooled, depth)
            return
        if not (bulk or _is_charge(loop.body, 0)):
            raise _fail("a loop body does not start with a meter charge", loop)
        if not bulk:
            self.iteration_tick(loop.body)
        saved = self.chunk, self.refund_chunk, self.refund_slots
        if bulk:
            self.refund_slots = refunds.RefundSlots(loop.body)
            assert reserved is not None
            self.chunk = self.chunk_names(loop, reserved, self.refund_slots.stores)
        else:
            self.chunk = None  # a give-back refunds the innermost chunk's iterations only
            self.refund_slots = refunds.NO_SLOTS
        self.refund_chunk = self.chunk
        self.block(loop.body, depth + 1)
        self.chunk, self.refund_chunk, self.refund_slots = saved
        if loop.orelse:
            self.block(loop.orelse, depth + 1)

    def block_or_pool_loop(
        self, loop: ast.For, block: tuple[str, int] | None, pooled: tuple[str, str] | None, depth: int
    ) -> None:
        """The ``for`` of a block loop (its body under the pool, rule 24) or a pool loop's chunk
        (which stores neither its count nor its iteration: then every take is within the pool)."""
        saved = self.chunk, self.refund_chunk, self.refund_slots, self.block_pool, self.pool_chunk
        if block is not None:
            self.block_pool = block
            self.chunk, self.refund_chunk, self.refund_slots = None, None, refunds.NO_SLOTS
        else:
            assert pooled is not None
            self.refund_slots = refunds.RefundSlots(loop.body)
            for name in pooled:
                if self.refund_slots.stores[name]:
                    raise _fail(f"a pool loop's chunk assigns {name!r}, which its takes read", loop)
            self.pool_chunk = pooled
            self.chunk = self.refund_chunk = (pooled[0], pooled[1], None)
        self.block(loop.body, depth + 1)
        self.chunk, self.refund_chunk, self.refund_slots, self.block_pool, self.pool_chunk = saved
        if loop.orelse:
            self.block(loop.orelse, depth + 1)

    def chunk_names(self, loop: ast.For, reservation: ast.stmt, stores: Counter[str]) -> refunds.ChunkNames:
        """The names a chunk's give-backs are computed from - the reserved count ``n``, the
        iteration ``j`` (or ``v`` with its start ``k``) - which its body must never assign: then
        ``n - j`` (``n - (v - k)``) and that minus 1 lie in ``[0, n]``, never more than reserved."""
        assert isinstance(reservation, ast.Assign) and isinstance(reservation.targets[0], ast.Name)
        assert isinstance(loop.target, ast.Name) and isinstance(loop.iter, ast.Call)
        n = reservation.targets[0].id
        start_arg = loop.iter.args[0] if len(loop.iter.args) == 2 else None
        start = start_arg.id if isinstance(start_arg, ast.Name) else None
        fixed = {n, loop.target.id} | ({start} if start is not None else set())
        if len(fixed) != (3 if start is not None else 2):
            raise _fail("a chunk's count, iteration and start are distinct names", loop)
        for name in fixed:
            if stores[name]:  # every name the body stores (``RefundSlots`` counted them)
                raise _fail(f"a chunk body assigns {name!r}, which its give-backs read", loop)
        return n, loop.target.id, start

    def reservation(self, loop: ast.While, test: ast.Compare | None) -> None:
        """A bulk reservation against the plan's next bulk loop (``reservations``): its kind,
        ``R f d lr``, where it starts and stops (a forRange: the names of its ``while k < stop:``
        test; a while loop: 0 and None), ``worst need work heavy`` exactly as the plan says, the
        counters' room (``counter_rooms``) and whether an owned list may be taken for it."""
        stmt = loop.body[0]
        assert isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call)
        call = stmt.value
        if self.block_pool is not None:
            raise _fail("a loop in a block draws from its pool, it reserves nothing", stmt)
        if not self.pending:
            raise _fail("a reservation the plan has no bulk loop for", stmt)
        want = self.pending.pop()
        if want.bounded != (test is not None):
            raise _fail("a reservation's loop kind differs from the plan's loop", stmt)
        args = call.args
        if len(args) != _FIXED_ARITY[call.func.id]:  # type: ignore[attr-defined]
            raise _fail("a reservation called with the wrong number of arguments", stmt)
        if not all(_is_name(a, name) for a, name in zip(args[:4], ("R", "f", "d", "lr"), strict=True)):
            raise _fail("a reservation takes the run state, fuel, frame budget and lr as they are", stmt)
        if test is None:
            bounds_ok = _is_const(args[4], 0) and _is_const(args[5], None)
        else:
            bounds_ok = _same_leaf(args[4], test.left) and _same_leaf(args[5], test.comparators[0])
        if not bounds_ok:
            raise _fail("a reservation's start or stop is not its loop's", stmt)
        if not all(_is_const(a, c) for a, c in zip(args[6:10], want.constants, strict=True)):
            raise _fail("a reservation's worst fuel, frames or work differ from the plan's", stmt)
        at = 2 if len(loop.body) > 2 and verify_strchunk.is_form(loop.body[1]) else 1  # rule 21
        quick_at = at == 1 and len(loop.body) > 1 and _KIND.get(type(loop.body[1])) is not ast.For
        if quick_at and not verify_mapchunk.is_guard(loop.body[1]) and call.func.id == "_s_cap":  # type: ignore[attr-defined]
            quick = verify_list_chunks.check(loop.body, self.buffer_rooms, self.reads.sizes)  # rule 22
            at = quick.checked_at
            self.charges.list_chunks.append((loop.body, at, quick.loop))  # rule 26 (verifseg)
            self.quick_chunks[id(quick.loop)] = self.quick_chunks[id(loop.body[at])] = stmt
            self.reads.approved.update(quick.reads)
            if quick.room is not None:
                self.quick_rooms.add(quick.room)
        chunk: Any = loop.body[at] if len(loop.body) > at else None
        bodies = []
        if verify_mapchunk.is_guard(chunk):  # rule 20: a pre-checked copy before the checked chunk
            checked = loop.body[2] if len(loop.body) > 2 else None
            fast = self.map_chunks.check(chunk, stmt, checked)
            self.fast_map_loops[id(fast)] = stmt
            bodies.append(fast.body)
            chunk = checked
        if _KIND.get(type(chunk)) is not ast.For:
            raise _fail("a reservation is followed by its chunk", stmt)
        self.charges.fast_chunks.append((chunk, want.constants[0], False))  # rule 26 (verifseg)
        for body in [chunk.body, *bodies]:
            wrong_room = check_room(want.counters, call.func.id, args, body, self.proofs, self.site_op)  # type: ignore[attr-defined]
            if wrong_room is not None:
                raise _fail(wrong_room, stmt)
        self.owned_reservations[id(loop)] = want.owned
        self.approved.add(id(call))

    # --- expressions --------------------------------------------------------------------------

    def expr(self, root: ast.expr) -> None:
        """Check one expression tree, iteratively (a stack of nodes still to check).

        The commonest trees - a comparison or arithmetic of two good names or small integers, such
        as ``f < 0`` or ``t1 > 2147483647`` - are settled up front, without the stack."""
        loads = self.loads
        top: Any = root
        top_kind = type(top)
        if top_kind in _COMPARES:
            ops = top.ops
            comparators = top.comparators
            if (
                len(ops) == 1
                and len(comparators) == 1
                and type(ops[0]) in _CMP_OPS
                and _good_leaf(top.left, loads)
                and _good_leaf(comparators[0], loads)
            ):
                self.count(3)
                return
        elif (
            top_kind in _BINOPS
            and type(top.op) in _BIN_OPS
            and _good_leaf(top.left, loads)
            and _good_leaf(top.right, loads)
        ):
            self.count(3)
            return
        budget = MAX_NODES - self.nodes
        seen = 0
        stack = [root]
        pop = stack.pop
        push = stack.append
        while stack:
            node: Any = pop()
            seen += 1
            kind = _KIND.get(type(node))
            if kind is ast.Name:
                if not (node.id in loads and type(node.ctx) is ast.Load):
                    self.load(node)
            elif kind is ast.Constant:
                value = node.value
                if not (type(value) is int and -MAX_INT <= value <= MAX_INT):
                    _check_constant(node)
            elif kind is ast.Call:
                operands = self.call(node)
                seen += 1  # the callee's name
                if len(operands) > budget:
                    raise _fail("generated module is too large to verify")
                stack.extend(operands)
            elif kind is ast.BinOp:
                if type(node.op) not in _BIN_OPS:
                    raise _fail(f"operator {type(node.op).__name__}", node)
                push(node.right)
                push(node.left)
            elif kind is ast.Subscript and verify_reads.is_view_read(node):
                stack.extend(self.reads.subscript(node))
            elif kind is ast.Subscript:
                stack.extend(self.maps.subscript(node))
            elif kind is ast.Compare and verify_maps.is_membership(node):
                stack.extend(self.maps.membership(node))
            elif kind is ast.Compare:
                ops = node.ops
                comparators = node.comparators
                if len(ops) != len(comparators) or not all(type(op) in _CMP_OPS for op in ops):
                    raise _fail("comparison operator", node)
                if len(comparators) > budget:
                    raise _fail("generated module is too large to verify")
                stack.extend(comparators)
                push(node.left)
            elif kind is ast.UnaryOp:
                if type(node.op) not in _UNARY_OPS:
                    raise _fail(f"operator {type(node.op).__name__}", node)
                push(node.operand)
            elif kind is ast.BoolOp:
                if type(node.op) not in _BOOL_OPS:
                    raise _fail("boolean operator", node)
                if len(node.values) > budget:
                    raise _fail("generated module is too large to verify")
                stack.extend(node.values)
            elif kind is ast.Tuple:
                if type(node.ctx) is not ast.Load:
                    raise _fail("tuple in a store position", node)
                if len(node.elts) > budget:
                    raise _fail("generated module is too large to verify")
                stack.extend(node.elts)
            else:
                raise _fail(f"node type {type(node).__name__} is not allowed", node)
            if seen > budget:
                raise _fail("generated module is too large to verify")
        self.nodes += seen

    def call_tree(self, node: ast.Call) -> None:
        """``expr`` for a call (most statements' value): its operands are mostly good names and
        integer constants, settled here; anything else goes through ``expr``."""
        operands = self.call(node)
        self.count(2 + len(operands))  # the call, its callee and its operands
        loads = self.loads
        for arg in operands:
            kind = type(arg)
            if kind in _NAMES:
                if arg.id in loads and type(arg.ctx) is ast.Load:  # type: ignore[attr-defined]
                    continue
            elif kind in _CONSTS:
                value = arg.value  # type: ignore[attr-defined]
                if type(value) is int and -MAX_INT <= value <= MAX_INT:
                    continue
            self.nodes -= 1  # ``expr`` counts it
            self.expr(arg)

    def load(self, node: ast.Name) -> None:
        ident = node.id
        if type(node.ctx) is not ast.Load:
            raise _fail("assignment inside an expression", node)
        if type(ident) is not str:
            raise _fail("malformed name", node)
        if ident in self.loads:
            return
        if ident.startswith("__"):
            raise _fail(f"dunder name {ident!r}", node)
        if ident == "R":
            raise _fail("the run state is only ever a stub's first argument", node)
        if POOL.match(ident):
            if id(node) in self.blocks.loads:
                self.blocks.loads.remove(id(node))  # approved for one place (see ``placed``)
                return
            raise _fail("a pool is read only in the forms of its block", node)
        if SLOT.match(ident) or (GUID.match(ident) and ident in self.globals):
            self.loads.add(ident)
            return
        if ident in self.globals:
            raise _fail(f"stub {ident!r} used as a value", node)
        raise _fail(f"name {ident!r} is neither a slot nor a stub", node)

    def call(self, node: ast.Call) -> list[ast.expr]:
        """Check a call's shape, callee and table indexes; return the arguments still to check."""
        if id(node) in self.placed:
            raise _fail("one call object stands at two places of the module", node)
        self.placed.add(id(node))
        func: Any = node.func
        if type(func) not in _NAMES:
            raise _fail("calls only reach stubs and generated functions", node)
        callee = func.id
        if callee not in self.callees:
            if callee == RANGE_NAME:
                raise _fail("_range may only drive a for-loop", node)
            if verify_inline_reads.forbidden_callee(callee):
                raise _fail(f"{callee} outside an inline read", node)  # rule 29
            if callee not in self.globals or GUID.match(callee):
                raise _fail("calls only reach stubs and generated functions", node)
            self.callees.add(callee)
        if type(func.ctx) is not ast.Load or node.keywords:
            raise _fail("calls are positional", node)
        args = node.args
        at = _REFUND_AT.get(callee)
        if at is None and callee in self.arity:
            at = 3  # a generated function's or cold path's ``(R, f, d, lr, ...)``
        if self.block_pool is not None:
            self.block_call(callee, args, node, at)
        elif callee in verify_blocks.BLOCK_STUBS and id(node) not in self.blocks.calls:
            raise _fail(f"{callee} outside the forms of a block", node)
        elif at is not None:
            lref: Any = args[at] if len(args) > at else None
            if not (self.refund_chunk is None and type(lref) in _NAMES and lref.id == "lr"):
                self.refund_arg(callee, lref, node)  # the commonest refund, plain ``lr``, settled above
        elif callee in refunds.CHUNK_FAULTS:
            self.chunk_iteration(callee, args, node)
        if callee in verify_maps.TABLE_ARGS:
            if callee == "_s_mox":
                self.owned_map_refund(args, node)
            args = self.maps.table_call(self, callee, args, node)
            self.nodes += 1
        elif callee in verify_maps.TAKES:
            raise _fail(f"{callee} is only unpacked into an owned map's dict, cell and slots", node)
        taker = _BUFFER_ARGS.get(callee)
        if taker is not None:
            position, count = taker
            if len(args) != count:
                raise _fail(f"{callee} called with the wrong number of arguments", node)
            self.buffer_arg(args[position], node)
            self.nodes += 1
            if callee == "_s_lox":
                _index(args, 3, self.charge_sites, node)
            args = [*args[:position], *args[position + 1 :]]
        if callee == verify_reads.TAKE:
            self.reads.call(node)
        rest = self.parts.call(callee, node, self.charge_sites)
        if rest is not None:
            self.nodes += 1
            args = rest
        if callee in PURE_HELPERS:
            if callee == verify_mapchunk.FITS and id(node) not in self.map_chunks.approved:
                raise _fail(f"{callee} is only a pre-checked map chunk's guard", node)
            if callee == verify_strchunk.NUMBER_TEXT and id(node) not in self.parts.approved:
                raise _fail(f"{callee} outside a fast text chunk", node)  # rule 21
            return args
        first = args[0] if args else None
        if not (type(first) in _NAMES and first.id == "R" and type(first.ctx) is ast.Load):  # type: ignore[union-attr]
            raise _fail(f"{callee} must receive the run state first", node)
        self.nodes += 1
        arity = self.arity.get(callee)
        if arity is not None:
            if self.cold and callee in self.results:
                raise _fail("a cold path never calls a cold path", node)
            if len(args) != arity:
                raise _fail(f"{callee} called with the wrong number of arguments", node)
        else:
            self.stub_args(callee, args, node)
        return args[1:]

    def block_call(self, callee: str, args: list[ast.expr], node: ast.Call, at: int | None) -> None:
        """A call inside a block body (rule 24): outside its chunks fault stubs and cold paths with
        the refund ``lr + bk``; in a chunk ``_s_bk<k>(R, f, j, lr + bk, site, ...)``; anywhere the
        block's own approved stub calls and pure helpers. Nothing else may read the meter while the
        pool holds iterations ahead."""
        assert self.block_pool is not None
        pool = self.block_pool[0]
        if callee in PURE_HELPERS or id(node) in self.blocks.calls:
            return
        if callee in verify_blocks.ARITIES:
            if self.pool_chunk is None or len(args) not in verify_blocks.ARITIES[callee]:
                raise _fail(f"{callee} stands only in a pool loop's chunk, with its operands", node)
            if not _is_name(args[2], self.pool_chunk[1]):
                raise _fail(f"{callee} takes its chunk's iteration", node)
            self.blocks.refund(args[3], pool)
            _index(args, 4, self.chunk_sites, node)
            if len(args) != 5 + int(callee[-1]):
                raise _fail(f"{callee} takes {callee[-1]} operand(s)", node)
            return
        if self.pool_chunk is not None:
            raise _fail(f"{callee} in a pool loop's chunk", node)
        cold = callee in self.results
        if at is None or not (cold or callee == "_s_fx" or callee in _FAULT_STUBS):
            raise _fail(f"{callee} in a block body", node)
        self.blocks.refund(args[at] if len(args) > at else None, pool)

    def refund_arg(self, callee: str, lref: Any, node: ast.Call) -> None:
        """The loop refund a stub or generated function receives is the one its place owes (rule 19,
        ``verify_refunds``): ``lr`` outside a chunk, ``lr`` plus its unstarted iterations inside."""
        problem = refunds.refund_problem(lref, self.refund_chunk, self.refund_slots)
        if problem is not None:
            raise _fail(f"{callee}: {problem}", node)

    def chunk_iteration(self, callee: str, args: list[ast.expr], node: ast.Call) -> None:
        """A fast chunk fault stub receives its chunk's iteration, from which it computes the refund."""
        problem = refunds.iteration_problem(args[2] if len(args) > 2 else None, self.refund_chunk)
        if problem is not None:
            raise _fail(f"{callee}: {problem}", node)

    def site_op(self, site: int) -> str | None:
        """The operation of fault site ``site`` of the artifact's tables, or None when it is not one."""
        sites = self.tables.sites
        if not 0 <= site < len(sites):
            return None
        kind, data = sites[site]
        if kind == OP and type(data) is str:
            return data
        if kind == CHUNK_OP and type(data) is tuple and data and type(data[0]) is str:
            return data[0]
        return None

    def stub_args(self, callee: str, args: list[ast.expr], node: ast.Call) -> None:
        site: Any = args[3] if len(args) > 3 else None
        site = site.value if type(site) in _CONSTS and type(site.value) is int else None
        if callee == "_s_fx":
            self.charges.fx_calls.append(node)  # rule 26: each one right after its segment's payment
            if site not in self.paid_sites:
                _index(args, 3, self.paid_sites, node)  # raises, with the reason
        elif callee in _FAULT_STUBS:
            self.charges.fault_calls.append((node, self.refund_chunk))  # rules 26 and 27 (verifseg)
            if site not in self.op_sites:
                _index(args, 3, self.op_sites, node)
            if len(args) != 4 + _FAULT_STUBS[callee]:
                raise _fail(f"{callee} takes {callee[-1]} operand(s)", node)
        elif callee in _CHUNK_STUBS:
            self.charges.fault_calls.append((node, self.refund_chunk))
            _index(args, 3, self.chunk_sites, node)
            if len(args) != 4 + _CHUNK_STUBS[callee]:
                raise _fail(f"{callee} takes {callee[-1]} operand(s)", node)
        elif callee in _FIXED_ARITY:
            if len(args) != _FIXED_ARITY[callee]:
                raise _fail(f"{callee} called with the wrong number of arguments", node)
            if callee in _RESERVATIONS and id(node) not in self.approved:
                raise _fail(f"{callee} outside the start of a bulk loop the plan has", node)
            if callee == "_s_tick" and id(node) not in self.approved:
                raise _fail("a work tick away from a function's entry and a loop's iteration charge", node)
        elif callee == "_s_lback":
            self.give_back(args, node)
        elif callee in verify_blocks.BLOCK_STUBS:
            if id(node) not in self.blocks.calls and callee not in verify_blocks.ARITIES:
                raise _fail(f"{callee} outside the forms of a block", node)
            if callee in verify_blocks.ARITIES:  # a pool chunk's fault stub (rules 26 and 27, verifseg2)
                self.charges.fault_calls.append((node, self.refund_chunk))
        elif callee == verify_mapchunk.OVERSHOT:
            if id(node) not in self.map_chunks.approved or len(args) != 1:
                raise _fail(f"{callee} stands only in a pre-checked map chunk's exits", node)
        elif callee == "_s_tlit":
            literal_text_args(args, len(self.tables.texts), node)
        elif callee in verify_strchunk.STUBS and id(node) not in self.parts.approved:
            raise _fail(f"{callee} outside a fast text chunk", node)
        elif callee in verify_literal_reads.STUBS:
            self.literal_reads.check(callee, args, node, self.charge_sites)
        elif callee in PAYING_STUBS:
            if site not in self.charge_sites:
                _index(args, 3, self.charge_sites, node)
            if callee == "_s_text":
                _index(args, 4, range(len(self.tables.texts)), node)
            elif callee == "_s_bind":
                _index(args, 4, range(len(self.tables.bindings)), node)
                if len(args) != 6 or _KIND.get(type(args[5])) is not ast.Tuple:
                    raise _fail("_s_bind takes its arguments as one tuple", node)

    def give_back(self, args: list[ast.expr], node: ast.Call) -> None:
        """``_s_lback(R, n - j)``, ``n - (v - k)``, or either minus 1, inside the chunk of ``n``: it
        refunds iterations that chunk reserved and has not started, never more (``chunk_names``)."""
        self.unstarted(args[1] if len(args) == 2 else None, node, "a give-back")

    def owned_map_refund(self, args: list[ast.expr], node: ast.Call) -> None:
        """``_s_mox(R, f, lr + u, ...)``, ``u`` the chunk's unstarted iterations as a give-back
        counts them (rule 14): an owned map's exact path runs only inside a bulk chunk, and the
        refund it hands the meter is computed right in its arguments, so it is checked here."""
        refund: Any = args[2] if len(args) > 2 else None
        if not (
            _KIND.get(type(refund)) is ast.BinOp
            and type(refund.op) is ast.Add
            and _is_name(refund.left, "lr")
        ):
            raise _fail("_s_mox refunds lr plus the chunk's unstarted iterations", node)
        self.unstarted(refund.right, node, "_s_mox's refund")

    def unstarted(self, count: Any, node: ast.Call, what: str) -> None:
        """``count`` is ``n - j``, ``n - (v - k)``, or either minus 1, for the innermost chunk of ``n``."""
        if self.chunk is None:
            raise _fail(f"{what} outside a bulk chunk", node)
        if not refunds.unstarted_ok(count, self.chunk):
            raise _fail(f"{what} must be the chunk's unstarted iterations", node)


def _unbound_prefix(body: list[ast.stmt]) -> int:
    """How many ``slot = None`` statements open a function (the locals a cold call may pass before
    they are first assigned): its entry tick stands right after them."""
    index = 0
    for stmt in body:
        value: Any = getattr(stmt, "value", None)
        if not (_KIND.get(type(stmt)) is ast.Assign and _is_const(value, None)):
            break
        index += 1
    return index


def _calls_stub(value: Any, stub: str) -> bool:
    return type(value) in _CALLS and type(value.func) in _NAMES and value.func.id == stub


_NAMES = frozenset({ast.Name, P.Name})
_TUPLES = frozenset({ast.Tuple, P.Tuple})
_CALLS = frozenset({ast.Call, P.Call})
_CONSTS = frozenset({ast.Constant, P.Constant})
_COMPARES = frozenset({ast.Compare, P.Compare})
_BINOPS = frozenset({ast.BinOp, P.BinOp})


def _good_leaf(node: Any, loads: set[str]) -> bool:
    """A load of a name already found good, or an integer constant within bounds; anything else
    (including names not seen yet) is left to the full walk, which says what is wrong."""
    kind = type(node)
    if kind in _NAMES:
        return node.id in loads and type(node.ctx) is ast.Load
    if kind in _CONSTS:
        value = node.value
        return type(value) is int and -MAX_INT <= value <= MAX_INT
    return False


def _good_store(node: Any, stores: set[str]) -> bool:
    """A plain store to ``f`` or a slot (remembered in ``stores``); anything else is left to
    ``assign_targets``, which says what is wrong."""
    if type(node) not in _NAMES or type(node.ctx) is not ast.Store:
        return False
    ident = node.id
    if ident in stores:
        return True
    if type(ident) is str and SLOT.match(ident):
        stores.add(ident)
        return True
    return False


def _index(args: list[ast.expr], at: int, valid: Container[int], node: ast.Call) -> None:
    """``args[at]`` is a constant table index naming an entry of the right kind (``valid``)."""
    if len(args) <= at:
        raise _fail("missing table index", node)
    arg = args[at]
    if not (_KIND.get(type(arg)) is ast.Constant and type(arg.value) is int):  # type: ignore[attr-defined]
        raise _fail("table index out of range", node)
    assert isinstance(arg, ast.Constant)
    if arg.value not in valid:
        raise _fail("table index out of range or naming the wrong kind of entry", node)


def _is_name(node: Any, ident: str) -> bool:
    return type(node) in _NAMES and node.id == ident and type(node.ctx) is ast.Load


def _is_const(node: Any, value: int | None) -> bool:
    """A constant that is exactly ``value`` (an int of that value, or None), never a bool."""
    return type(node) in _CONSTS and type(node.value) is type(value) and node.value == value


def _same_leaf(node: Any, want: Any) -> bool:
    """Both the same slot load or the same integer constant (a reservation's start and stop)."""
    if type(want) in _NAMES:
        return _is_name(node, want.id)
    return type(want) in _CONSTS and type(want.value) is int and _is_const(node, want.value)


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


def _arithmetic_prefix(body: list[ast.stmt]) -> int:
    """How many statements open ``body`` as ``t = <arithmetic of slots and constants>`` (no call,
    subscript or control flow): a loop condition's operand computed before the condition's paying
    stub (``t0 = -v1; t1, f = _s_i_math_min(R, f, lr, s, t0, 1)``). Every pass runs them straight
    into the charge after them - they cannot leave or repeat the pass - so that charge still comes
    first in every pass (rule 7)."""
    count = 0
    for stmt in body:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
        if not (isinstance(target, ast.Name) and target.id != "f" and _arithmetic(stmt.value)):  # type: ignore[attr-defined]
            return count
        count += 1
    return count


def _arithmetic(node: ast.expr) -> bool:
    """A slot, an int constant, or ``+ - *`` and unary minus of them."""
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.USub) and _arithmetic(node.operand)
    if isinstance(node, ast.BinOp):
        return (
            isinstance(node.op, (ast.Add, ast.Sub, ast.Mult))
            and _arithmetic(node.left)
            and _arithmetic(node.right)
        )
    return False


def _is_reservation(block: list[ast.stmt], index: int) -> bool:
    """``n<i> = _s_cap(R, ...)`` or ``_s_capm(R, ...)``: a bulk reservation (it charges the chunk's
    loop iterations and guarantees the fuel of a fast chunk; ``_s_capm`` also caps the count by the
    room of the body's counters, see ``stubs.reserve``'s ``most``)."""
    if index >= len(block):
        return False
    stmt = block[index]
    return (
        isinstance(stmt, ast.Assign)
        and isinstance(stmt.targets[0], ast.Name)
        and stmt.targets[0].id.startswith("n")
        and (_calls(stmt.value, "_s_cap") or _calls(stmt.value, "_s_capm"))
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


def _is_true_constant(test: ast.expr) -> bool:
    """``True`` written as a plain constant (the test of a ``while True:`` loop). The kind check
    comes first and decides which node classes pass, exactly as before; the ``isinstance`` only
    narrows the type for mypy (every class ``_KIND`` maps to ``ast.Constant`` is one)."""
    return _KIND.get(type(test)) is ast.Constant and isinstance(test, ast.Constant) and test.value is True


def _bounds_test(test: ast.expr) -> bool:
    """``<name> < <name or int constant>``: a test that calls nothing and cannot raise on the ints
    it compares (what the names are, ``expr`` checks)."""
    if _KIND.get(type(test)) is not ast.Compare:
        return False
    assert isinstance(test, ast.Compare)
    return (
        len(test.ops) == 1
        and type(test.ops[0]) is ast.Lt
        and len(test.comparators) == 1
        and type(test.left) in _NAMES
        and (
            type(test.comparators[0]) in _NAMES
            or (type(test.comparators[0]) in _CONSTS and type(test.comparators[0].value) is int)  # type: ignore[attr-defined]
        )
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
            if isinstance(stmt, ast.For) and continues(stmt.orelse):
                return True  # a for-loop's else runs after it: its continue targets this loop
            # a nested loop's body: its continue targets that loop, not this one
        return False

    return not continues(body)


# --- code objects -----------------------------------------------------------------------------


def verify_code(code: CodeType, plan_globals: frozenset[str]) -> None:
    """Check a compiled module and every code object inside it."""
    names_allowed = plan_globals | inline_reads.ATTRIBUTES  # the run state's slots: rule 29's forms
    stack = [code]
    seen = 0
    while stack:
        current = stack.pop()
        seen += 1
        if seen > 100_000:
            raise _fail("too many code objects")
        where = current.co_name
        if current.co_flags & _FORBIDDEN_FLAGS:
            raise _fail(f"code object {where} has forbidden flags")
        if current.co_freevars or current.co_cellvars:
            raise _fail(f"code object {where} uses closures")
        opcodes = current.co_code[0::2]  # the unspecialized bytecode: one opcode byte per 2-byte unit
        attributes = not _ATTRIBUTE_OPCODES.isdisjoint(opcodes)
        allowed = names_allowed if attributes else plan_globals
        if not allowed.issuperset(current.co_names):
            ident = next(n for n in current.co_names if n not in allowed)
            raise _fail(f"code object {where} names {ident!r}")
        if attributes:
            _check_attribute_names(current, plan_globals)
        for ident in current.co_varnames:
            if not (
                ident in FIXED_PARAMS
                or SLOT.match(ident)
                or BUFFER.match(ident)
                or POOL.match(ident)
                or PARTS.match(ident)
                or verify_reads.VIEW.match(ident)
                or any(kind.match(ident) for kind in verify_maps.LOCALS)
            ):
                raise _fail(f"code object {where} has local {ident!r}")
        for const in current.co_consts:
            if type(const) is int and -MAX_FOLDED_INT <= const <= MAX_FOLDED_INT:
                continue
            if isinstance(const, CodeType):
                if not FN.match(const.co_name):
                    raise _fail(f"unexpected code object {const.co_name!r}")
                stack.append(const)
            else:
                _check_code_constant(const, where)
        if not _CODE_OPCODES.issuperset(opcodes):
            opcode = next(op for op in opcodes if op not in _CODE_OPCODES)
            raise _fail(f"opcode {dis.opname[opcode]} in {where}")


_ATTRIBUTE_OPCODES = frozenset(dis.opmap[name] for name in ("LOAD_ATTR", "STORE_ATTR"))
_GLOBAL_OPNAMES = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "STORE_NAME"})


def _check_attribute_names(code: CodeType, plan_globals: frozenset[str]) -> None:
    """A code object with attribute access (only rule 29's inline reads compile to it): every
    attribute is one of the run state's slots the form uses, and every global still a global."""
    for instruction in dis.get_instructions(code):
        opname, name = instruction.opname, instruction.argval
        if opname in ("LOAD_ATTR", "STORE_ATTR") and name not in inline_reads.ATTRIBUTES:
            raise _fail(f"{opname} of {name!r} in {code.co_name}")
        if opname in _GLOBAL_OPNAMES and name not in plan_globals:
            raise _fail(f"code object {code.co_name} names {name!r}")


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


def verify_module(
    module: ast.AST,
    tables: Tables,
    plan: ExecutionPlan,
    globals_allowed: frozenset[str] | None = None,
    options_key: str = "",
) -> None:
    """The AST check (raises ``VerifierFailure``). ``globals_allowed`` is ``allowed_globals(tables)``
    when the caller has it already; ``options_key`` is the artifact key's generation options
    (``GenOptions.key``: whether loops run in bulk and calls are inlined decide what each bulk
    reservation must be; empty means the defaults)."""
    try:
        with indexed_walks():  # the plan ties' walks share one index of the tree (issue 16)
            _AstVerifier(plan, tables, globals_allowed, cold=False, options_key=options_key).check(module)
    except _MALFORMED as error:
        raise _fail(f"malformed module ({type(error).__name__})") from None


def verify_cold_module(
    module: ast.AST, tables: Tables, plan: ExecutionPlan, globals_allowed: frozenset[str] | None = None
) -> None:
    """The AST check of a module of cold exact paths (``cold.py``): the same rules, with the cold
    functions ``_x<i>`` of ``tables.colds`` instead of the plan functions."""
    try:
        with indexed_walks():
            _AstVerifier(plan, tables, globals_allowed, cold=True).check(module)
    except _MALFORMED as error:
        raise _fail(f"malformed module ({type(error).__name__})") from None


_BASE_GLOBALS = frozenset({*STUBS, *PURE_HELPERS, *inline_reads.HELPERS, RANGE_NAME})


def allowed_globals(tables: Tables) -> frozenset[str]:
    """Every global name generated code for ``tables`` may load: stubs, pure helpers, ``_range``,
    its own functions (plan functions and cold paths) and its GUID constants."""
    own = [function_name(i) for i in range(len(tables.functions))]
    own += [cold_name(i) for i in range(len(tables.colds))]
    own += [guid_name(i) for i in range(len(tables.guids))]
    own += inline_reads.key_values(tables.texts)  # rule 29's key constants
    return _BASE_GLOBALS.union(own)


__all__ = [
    "ALLOWED_NODES",
    "VERIFIER_VERSION",
    "allowed_globals",
    "verify_code",
    "verify_cold_module",
    "verify_module",
]
