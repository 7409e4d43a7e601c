"""Type-directed expressions: ``ExprGen.expr(t, depth)`` draws an expression of exactly type ``t``.

Nothing here consults the grammar. For a wanted type the generator lists every way it knows to
produce a value of that type in the current typing context - a readable local of that type, a
literal, a constructor, an operator or built-in whose result type is ``t`` (with operands drawn at
their own required types), an accessor into a container holding ``t``, or a call to an earlier
function or a fixture binding returning ``t`` - and picks one by weight. ``depth`` and the
function's node budget bound the recursion; at depth 0 only leaves (locals, literals, empty or
literal-built collections) remain, and every type has one, so drawing always terminates.

Operands that would make most runs fail are biased towards safe forms (a non-zero literal divisor,
``math.clamp`` with ordered literal bounds, ``list.get(list.add(xs, d), 0)``) but the raw forms
are drawn too: overflow, a missing key or a bad index are outcomes worth pinning.
"""

from __future__ import annotations

from collections.abc import Callable

from dotboxd.core import ast
from dotboxd.core.types import (
    BOOL,
    F64,
    I32,
    I64,
    STRING,
    UNIT,
    ListType,
    MapType,
    RecordType,
    SandboxType,
    to_type_ref,
)

from . import vocab
from .context import Scope
from .source import Source

B = ast.BinaryOp
K = ast.LiteralKind
Producer = Callable[[], ast.Expr]
_ARITH = (B.ADD, B.SUB, B.MUL, B.DIV, B.REM)
_ORDER = (B.LT, B.LTE, B.GT, B.GTE)
_NUMERIC = (I32, I64, F64)
#: Deepest type the generator wraps in a container for an accessor (keeps types far below 8).
_MAX_WRAP_DEPTH = 3


def call(name: str, *args: ast.Expr, generic: SandboxType | None = None) -> ast.Call:
    return ast.Call(name, tuple(args), None if generic is None else to_type_ref(generic))


def i32(value: int) -> ast.Literal:
    return ast.Literal(K.I32, value)


class ExprGen:
    """Draws expressions in one scope."""

    def __init__(self, src: Source, scope: Scope) -> None:
        self.src = src
        self.scope = scope

    # -- entry point ----------------------------------------------------------------------------

    def expr(self, t: SandboxType, depth: int) -> ast.Expr:
        """An expression of type ``t`` (at most ``depth`` operator levels, budget permitting)."""
        fn = self.scope.fn
        fn.spend()
        if fn.budget <= 0:
            depth = 0
        options: list[tuple[int, Producer]] = []
        names = self.scope.names_of(t)
        if names:
            options.append((8, lambda: ast.Var(self.src.choice(names))))
        if vocab.literal_able(t):
            options.append((4, lambda: vocab.literal(self.src, t)))
        options.extend(self._constructors(t, depth))
        if depth > 0:
            options.extend(self._operators(t, depth - 1))
            options.extend(self._accessors(t, depth - 1))
            options.extend(self._calls(t, depth - 1))
        return self.src.weighted(options)()

    def simple(self, t: SandboxType) -> ast.Var | ast.Literal:
        """A readable local or a literal of the scalar or opaque-id type ``t``: cheap, and safe to
        evaluate twice (``copy_leaf`` duplicates it)."""
        names = self.scope.names_of(t)
        if names and self.src.chance(60):
            return ast.Var(self.src.choice(names))
        return vocab.literal(self.src, t)

    # -- constructors ---------------------------------------------------------------------------

    def _constructors(self, t: SandboxType, depth: int) -> list[tuple[int, Producer]]:
        inner = max(depth - 1, 0)
        if isinstance(t, ListType):
            element = t.element
            out: list[tuple[int, Producer]] = [
                (2, lambda: self._note(call("list.empty", generic=element), "lists"))
            ]
            if element == UNIT:
                out.append((1, lambda: self._note(call("list.of"), "lists")))
            out.append((3, lambda: self._list_of(element, inner)))
            return out
        if isinstance(t, MapType):
            return [(3, lambda: self._note(call("map.empty", generic=t), "maps"))]
        if isinstance(t, RecordType):
            return [(4, lambda: self._record_new(t, inner))]
        return []

    def _list_of(self, element: SandboxType, depth: int) -> ast.Expr:
        self.scope.env.note("lists")
        count = self.src.integer(1, 3)
        return call("list.of", *(self.expr(element, depth) for _ in range(count)))

    def _record_new(self, t: RecordType, depth: int) -> ast.Expr:
        self.scope.env.note("records")
        return call("record.new", *(self.expr(f, depth) for f in t.fields), generic=t)

    def _note(self, e: ast.Expr, feature: str) -> ast.Expr:
        self.scope.env.note(feature)
        return e

    # -- operators and built-ins by result type -------------------------------------------------

    def _operators(self, t: SandboxType, d: int) -> list[tuple[int, Producer]]:
        if t == I32:
            return [
                (10, lambda: self._arith(I32, d)),
                (1, lambda: ast.Unary(ast.UnaryOp.NEG, self.expr(I32, d))),
                (1, lambda: call("math.abs", self.expr(I32, d))),
                (
                    2,
                    lambda: call(
                        self.src.choice(("math.min", "math.max")), self.expr(I32, d), self.expr(I32, d)
                    ),
                ),
                (1, lambda: self._clamp(d)),
                (2, lambda: self._strings(call("string.length", self.expr(STRING, d)))),
                (
                    1,
                    lambda: self._strings(
                        call("string.compareOrdinal", self.expr(STRING, d), self.expr(STRING, d))
                    ),
                ),
                (2, lambda: call("list.count", self.expr(self._pick_list_type(), d))),
            ]
        if t == I64:
            return [
                (8, lambda: self._note(self._arith(I64, d), "i64")),
                (1, lambda: ast.Unary(ast.UnaryOp.NEG, self.expr(I64, d))),
                (4, lambda: self._note(call("numeric.toI64", self.expr(I32, d)), "conversions")),
            ]
        if t == F64:
            return [
                (8, lambda: self._note(self._arith(F64, d), "f64")),
                (1, lambda: ast.Unary(ast.UnaryOp.NEG, self.expr(F64, d))),
                (1, lambda: self._sqrt(d)),
                (
                    2,
                    lambda: call(
                        self.src.choice(("math.floor", "math.ceil", "math.round")), self.expr(F64, d)
                    ),
                ),
                (
                    3,
                    lambda: self._note(
                        call("numeric.toF64", self.expr(self.src.choice((I32, I64)), d)), "conversions"
                    ),
                ),
            ]
        if t == BOOL:
            return [
                (2, lambda: ast.Unary(ast.UnaryOp.NOT, self.expr(BOOL, d))),
                (
                    4,
                    lambda: ast.Binary(
                        self.src.choice((B.AND, B.OR)), self.expr(BOOL, d), self.expr(BOOL, d)
                    ),
                ),
                (8, lambda: self._compare(d)),
                (5, lambda: self._equality(d)),
                (1, lambda: self._strings(call("string.isEmpty", self.expr(STRING, d)))),
                (1, lambda: self._strings(call("string.equals", self.expr(STRING, d), self.expr(STRING, d)))),
                (2, lambda: self._contains_key(d)),
            ]
        if t == STRING:
            return [
                (3, lambda: self._strings(call("int32.toStringInvariant", self.expr(I32, d)))),
                (
                    4,
                    lambda: self._strings(
                        call("string.concatBudgeted", self.expr(STRING, d), self.expr(STRING, d))
                    ),
                ),
                (2, lambda: self._substring(d)),
            ]
        if isinstance(t, ListType):
            return [(4, lambda: call("list.add", self.expr(t, d), self.expr(t.element, d)))]
        if isinstance(t, MapType):
            return [
                (
                    5,
                    lambda: self._note(
                        call("map.set", self.expr(t, d), self._key(t.key, d), self.expr(t.value, d)), "maps"
                    ),
                ),
                (1, lambda: self._note(call("map.remove", self.expr(t, d), self._key(t.key, d)), "maps")),
            ]
        return []

    def _strings(self, e: ast.Expr) -> ast.Expr:
        return self._note(e, "strings")

    def _arith(self, t: SandboxType, d: int) -> ast.Expr:
        op = self.src.weighted(((4, B.ADD), (3, B.SUB), (2, B.MUL), (1, B.DIV), (1, B.REM)))
        left = self.expr(t, d)
        if op in (B.DIV, B.REM) and self.src.chance(80):
            right: ast.Expr = self._nonzero(t)
        elif op is B.MUL and self.src.chance(60):
            right = self._small(t)
        else:
            right = self.expr(t, d)
        return ast.Binary(op, left, right)

    def _nonzero(self, t: SandboxType) -> ast.Literal:
        if t == F64:
            return ast.Literal(K.F64, self.src.choice((0.5, 2.0, -4.0, 3.0, 10.0)))
        value = self.src.choice((1, 2, 3, 7, -1, -2, 10))
        return ast.Literal(K.I32 if t == I32 else K.I64, value)

    def _small(self, t: SandboxType) -> ast.Literal:
        if t == F64:
            return ast.Literal(K.F64, self.src.choice((0.0, 1.0, 2.0, -1.5)))
        return ast.Literal(K.I32 if t == I32 else K.I64, self.src.integer(-3, 3))

    def _clamp(self, d: int) -> ast.Expr:
        if self.src.chance(80):
            lo = self.src.integer(-20, 10)
            bounds: tuple[ast.Expr, ast.Expr] = (i32(lo), i32(lo + self.src.integer(0, 30)))
        else:
            bounds = (self.expr(I32, d), self.expr(I32, d))
        return call("math.clamp", self.expr(I32, d), *bounds)

    def _sqrt(self, d: int) -> ast.Expr:
        if self.src.chance(70):
            arg: ast.Expr = ast.Literal(K.F64, self.src.choice((0.0, 1.0, 2.0, 16.0, 0.25, 1e6)))
        else:
            arg = self.expr(F64, d)
        return self._note(call("math.sqrt", arg), "f64")

    def _compare(self, d: int) -> ast.Expr:
        t = self.src.weighted(((6, I32), (2, I64), (2, F64)))
        return ast.Binary(self.src.choice(_ORDER), self.expr(t, d), self.expr(t, d))

    def _equality(self, d: int) -> ast.Expr:
        t = self._pick_type(lambda _: True)
        if isinstance(t, (ListType, MapType, RecordType)):
            self.scope.env.note("composite-equality")
        return ast.Binary(self.src.choice((B.EQ, B.NE)), self.expr(t, d), self.expr(t, d))

    def _contains_key(self, d: int) -> ast.Expr:
        mt = self._pick_type(lambda t: isinstance(t, MapType), self._fresh_map_type)
        assert isinstance(mt, MapType)
        return self._note(call("map.containsKey", self.expr(mt, d), self._key(mt.key, d)), "maps")

    def _substring(self, d: int) -> ast.Expr:
        self.scope.env.note("strings")
        if self.src.chance(75):
            text = self.simple(STRING)
            again = copy_leaf(text)
            length = call("math.min", i32(self.src.integer(0, 4)), call("string.length", again))
            return call("string.substringBudgeted", text, i32(0), length)
        return call("string.substringBudgeted", self.expr(STRING, d), self.expr(I32, d), self.expr(I32, d))

    def _key(self, key_type: SandboxType, d: int) -> ast.Expr:
        """Map keys: mostly locals or small literals so that lookups hit now and then."""
        if key_type == I32 and self.src.chance(50):
            return i32(self.src.integer(0, 3))
        if key_type == STRING and self.src.chance(40):
            return ast.Literal(K.STRING, self.src.choice(("a", "b", "")))
        return self.expr(key_type, d)

    # -- accessors into containers holding t ----------------------------------------------------

    def _accessors(self, t: SandboxType, d: int) -> list[tuple[int, Producer]]:
        if t.depth > _MAX_WRAP_DEPTH:
            return []
        return [
            (2, lambda: self._list_get(t, d)),
            (1, lambda: self._map_get(t, d)),
            (2, lambda: self._record_get(t, d)),
        ]

    def _list_get(self, t: SandboxType, d: int) -> ast.Expr:
        self.scope.env.note("lists")
        lt = ListType(t)
        form = self.src.weighted(((50, "total"), (38, "literal"), (12, "raw")))
        if form == "total":  # the first element, or the default when the list is empty
            return call("list.get", call("list.add", self._container(lt, d), self.expr(t, d)), i32(0))
        if form == "literal":
            count = self.src.integer(1, 3)
            items = call("list.of", *(self.expr(t, d) for _ in range(count)))
            return call("list.get", items, i32(self.src.integer(0, count - 1)))
        index: ast.Expr = i32(self.src.integer(0, 2)) if self.src.chance(70) else self.expr(I32, d)
        return call("list.get", self._container(lt, d), index)

    def _map_get(self, t: SandboxType, d: int) -> ast.Expr:
        self.scope.env.note("maps")
        holders = [
            n for n, have in self.scope.visible.items() if isinstance(have, MapType) and have.value == t
        ]
        if holders and self.src.chance(60):
            name = self.src.choice(holders)
            mt = self.scope.visible[name]
            assert isinstance(mt, MapType)
            container: ast.Expr = ast.Var(name)
        else:
            mt = MapType(vocab.draw_key_type(self.src, self.scope.env.brands), t)
            container = self.expr(mt, d)
        if self.src.chance(85):  # total: look up the key just set
            key = self._key_literal_or_var(mt.key)
            return call("map.get", call("map.set", container, key, self.expr(t, d)), copy_leaf(key))
        return call("map.get", container, self._key(mt.key, d))

    def _container(self, t: SandboxType, d: int) -> ast.Expr:
        """A readable local of type ``t`` when there is one (usually), else an expression."""
        names = self.scope.names_of(t)
        if names and self.src.chance(70):
            return ast.Var(self.src.choice(names))
        return self.expr(t, d)

    def _key_literal_or_var(self, key_type: SandboxType) -> ast.Var | ast.Literal:
        names = self.scope.names_of(key_type)
        if names and self.src.chance(50):
            return ast.Var(self.src.choice(names))
        return vocab.literal(self.src, key_type)

    def _record_get(self, t: SandboxType, d: int) -> ast.Expr:
        self.scope.env.note("records")
        holders = [
            (n, i)
            for n, have in self.scope.visible.items()
            if isinstance(have, RecordType)
            for i, f in enumerate(have.fields)
            if f == t
        ]
        if holders and self.src.chance(60):
            name, index = self.src.choice(holders)
            return call("record.get", ast.Var(name), i32(index))
        fields = [vocab.draw_type(self.src, self.scope.env.brands, 1) for _ in range(self.src.integer(0, 2))]
        index = self.src.integer(0, len(fields))
        fields.insert(index, t)
        return call("record.get", self.expr(RecordType(tuple(fields)), d), i32(index))

    # -- calls ----------------------------------------------------------------------------------

    def _calls(self, t: SandboxType, d: int) -> list[tuple[int, Producer]]:
        out: list[tuple[int, Producer]] = []
        for fn in self.scope.env.functions:
            if fn.ret == t:
                out.append((4, self._bound_call(fn.name, [p for _, p in fn.params], d, False)))
        for b in self.scope.env.bindings:
            if b.ret == t:
                out.append((3, self._bound_call(b.id, list(b.params), d, True)))
        return out

    def _bound_call(self, name: str, params: list[SandboxType], d: int, binding: bool) -> Producer:
        if binding:
            return lambda: self.call_binding(name, params, d)
        return lambda: self.call_function(name, params, d)

    def call_function(self, name: str, params: list[SandboxType], d: int) -> ast.Expr:
        self.scope.env.note("calls")
        return call(name, *(self.expr(p, d) for p in params))

    def call_binding(self, bid: str, params: list[SandboxType], d: int) -> ast.Expr:
        self.scope.env.note("bindings")
        return call(bid, *(self.expr(p, d) for p in params))

    # -- type choice ----------------------------------------------------------------------------

    def _pick_type(
        self, want: Callable[[SandboxType], bool], fallback: Callable[[], SandboxType] | None = None
    ) -> SandboxType:
        """Usually a type some readable local already has (so expressions interact), else a new one."""
        seen = [t for t in dict.fromkeys(self.scope.visible.values()) if want(t)]
        if seen and self.src.chance(60):
            return self.src.choice(seen)
        if fallback is not None:
            return fallback()
        return vocab.draw_type(self.src, self.scope.env.brands, 2)

    def _pick_list_type(self) -> SandboxType:
        return self._pick_type(
            lambda t: isinstance(t, ListType),
            lambda: ListType(vocab.draw_type(self.src, self.scope.env.brands, 1)),
        )

    def _fresh_map_type(self) -> SandboxType:
        brands = self.scope.env.brands
        return MapType(vocab.draw_key_type(self.src, brands), vocab.draw_type(self.src, brands, 1))


def copy_leaf(e: ast.Expr) -> ast.Expr:
    """A separate node equal to the local or literal ``e`` (AST nodes are never shared: the plan
    keys facts by node identity)."""
    if isinstance(e, ast.Var):
        return ast.Var(e.name)
    if isinstance(e, ast.Literal):
        return ast.Literal(e.kind, e.value, e.brand)
    raise ValueError("only locals and literals are copied")
