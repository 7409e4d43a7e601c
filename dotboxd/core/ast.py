"""The typed AST of a kernel module: frozen, slotted dataclasses, one class per IR shape.

Both source forms (the JSON wire format and the readable text form) produce exactly this tree, and
every later stage (validator, prover, backends, canonical hash) consumes only it. Each node carries
its RFC 6901 JSON pointer in the wire form and its source span; neither takes part in equality, so
two trees are equal exactly when they denote the same program.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum

from dotboxd.core.diagnostics import Span


@dataclass(frozen=True, slots=True)
class Node:
    """Location bookkeeping shared by every node (excluded from equality and hashing)."""

    pointer: str = field(default="", compare=False, kw_only=True, repr=False)
    span: Span | None = field(default=None, compare=False, kw_only=True, repr=False)


# ---------------------------------------------------------------------------------------------
# Types (syntax only: the validator decides which names exist)


@dataclass(frozen=True, slots=True)
class TypeRef(Node):
    """``"I32"`` or ``{"name": "Map", "arguments": ["String", "I32"]}``."""

    name: str
    arguments: tuple[TypeRef, ...] = ()

    def __str__(self) -> str:
        if not self.arguments:
            return self.name
        return f"{self.name}<{', '.join(str(a) for a in self.arguments)}>"


# ---------------------------------------------------------------------------------------------
# Expressions


class LiteralKind(StrEnum):
    """The ten literal keys of wire format v1 (the enum value is the JSON key)."""

    UNIT = "unit"
    BOOL = "bool"
    I32 = "i32"
    I64 = "i64"
    F64 = "f64"
    STRING = "string"
    GUID = "guid"
    OPAQUE_ID = "opaqueId"
    PATH = "path"
    URI = "uri"


LiteralValue = None | bool | int | float | str


@dataclass(frozen=True, slots=True)
class Literal(Node):
    """A constant. ``value`` is None for unit, a bool, an int (i32/i64), a finite float (f64) or a
    str (string, guid in lowercase canonical form, opaque-id value, path, uri). ``brand`` is the
    opaque-id type name and None for every other kind."""

    kind: LiteralKind
    value: LiteralValue
    brand: str | None = None


@dataclass(frozen=True, slots=True)
class Var(Node):
    name: str


@dataclass(frozen=True, slots=True)
class Call(Node):
    """A call to a built-in, a module function or a host binding (resolved by the validator)."""

    name: str
    args: tuple[Expr, ...] = ()
    generic_type: TypeRef | None = None


class UnaryOp(StrEnum):
    NOT = "not"
    NEG = "-"


@dataclass(frozen=True, slots=True)
class Unary(Node):
    op: UnaryOp
    operand: Expr


class BinaryOp(StrEnum):
    """Binary operators by their wire name; ``symbol`` is the canonical/text spelling."""

    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    DIV = "div"
    REM = "rem"
    EQ = "eq"
    NE = "ne"
    LT = "lt"
    LTE = "lte"
    GT = "gt"
    GTE = "gte"
    AND = "and"
    OR = "or"

    @property
    def symbol(self) -> str:
        return BINARY_SYMBOLS[self]


BINARY_SYMBOLS: dict[BinaryOp, str] = {
    BinaryOp.ADD: "+",
    BinaryOp.SUB: "-",
    BinaryOp.MUL: "*",
    BinaryOp.DIV: "/",
    BinaryOp.REM: "%",
    BinaryOp.EQ: "==",
    BinaryOp.NE: "!=",
    BinaryOp.LT: "<",
    BinaryOp.LTE: "<=",
    BinaryOp.GT: ">",
    BinaryOp.GTE: ">=",
    BinaryOp.AND: "&&",
    BinaryOp.OR: "||",
}


@dataclass(frozen=True, slots=True)
class Binary(Node):
    op: BinaryOp
    left: Expr
    right: Expr


Expr = Var | Literal | Call | Unary | Binary


# ---------------------------------------------------------------------------------------------
# Statements (exactly the eight ops of wire format v1)


@dataclass(frozen=True, slots=True)
class Set(Node):
    name: str
    value: Expr


@dataclass(frozen=True, slots=True)
class Return(Node):
    value: Expr


@dataclass(frozen=True, slots=True)
class ExprStmt(Node):
    value: Expr


@dataclass(frozen=True, slots=True)
class If(Node):
    condition: Expr
    then: tuple[Stmt, ...]
    else_: tuple[Stmt, ...] = ()


@dataclass(frozen=True, slots=True)
class While(Node):
    condition: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class ForRange(Node):
    local: str
    start: Expr
    end: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class Continue(Node):
    pass


@dataclass(frozen=True, slots=True)
class Break(Node):
    pass


Stmt = Set | Return | ExprStmt | If | While | ForRange | Continue | Break


def statement_parts(stmt: Stmt) -> tuple[tuple[Expr, ...], tuple[tuple[Stmt, ...], ...]]:
    """A statement's expressions, then its blocks, each in evaluation and source order (``if``:
    condition, then, else; ``while``: condition, body; ``for``: start, end, body). One definition for
    the walkers that visit every operation of a body in a fixed order (run-time error locations,
    call scans), so a new statement kind is added to all of them here."""
    if isinstance(stmt, Set | Return | ExprStmt):
        return (stmt.value,), ()
    if isinstance(stmt, If):
        return (stmt.condition,), (stmt.then, stmt.else_)
    if isinstance(stmt, While):
        return (stmt.condition,), (stmt.body,)
    if isinstance(stmt, ForRange):
        return (stmt.start, stmt.end), (stmt.body,)
    return (), ()


def statement_expressions(
    stmts: tuple[Stmt, ...], ends_block: Callable[[Stmt], bool] | None = None
) -> Iterator[Expr]:
    """The expressions the statements of ``stmts`` hold directly (not their subexpressions), in
    ``statement_parts`` order, nested blocks included. With ``ends_block``, a block's statements
    after one for which it is true are skipped (a walker's own rule for dead code)."""
    for stmt in stmts:
        expressions, blocks = statement_parts(stmt)
        yield from expressions
        for block in blocks:
            yield from statement_expressions(block, ends_block)
        if ends_block is not None and ends_block(stmt):
            return


# ---------------------------------------------------------------------------------------------
# Declarations


class Visibility(StrEnum):
    ENTRYPOINT = "entrypoint"
    PRIVATE = "private"


@dataclass(frozen=True, slots=True)
class Param(Node):
    name: str
    type: TypeRef


@dataclass(frozen=True, slots=True)
class Function(Node):
    id: str
    visibility: Visibility
    parameters: tuple[Param, ...]
    return_type: TypeRef
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class CapabilityRequest(Node):
    """A request is never a grant: only the host policy grants."""

    id: str
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Module(Node):
    """A whole kernel module. ``version`` and ``target_sandbox_version`` are canonical ``M.m.p``;
    ``metadata`` is sorted by key so that property order never changes the tree."""

    id: str
    version: str
    target_sandbox_version: str
    capability_requests: tuple[CapabilityRequest, ...]
    functions: tuple[Function, ...]
    metadata: tuple[tuple[str, str], ...] = ()

    def function(self, function_id: str) -> Function | None:
        for fn in self.functions:
            if fn.id == function_id:
                return fn
        return None


DEFAULT_TARGET_VERSION = "1.0.0"
