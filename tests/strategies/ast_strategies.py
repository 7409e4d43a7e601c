"""Hypothesis strategies for arbitrary import-valid ASTs (syntax level: they need not type-check).

Every tree drawn here passes the wire importer's rules: identifiers are non-blank, free of control
characters and of host-reference fragments; literals satisfy their kind's rule (i32/i64 ranges,
finite f64, canonical lowercase guids, portable paths, absolute URIs, branded opaque ids); versions
are canonical ``M.m.p``; metadata is sorted with unique keys; nesting stays far inside the wire
budgets (depth 64). Names deliberately include the awkward cases the text form must quote: keywords,
dots in odd places, spaces, punctuation, quotes, backticks, backslashes and non-ASCII letters.

Public strategies: ``identifiers``, ``type_names``, ``type_refs``, ``literals``, ``expressions``,
``statements``, ``functions``, ``modules`` (and the literal helpers ``paths``, ``uris``,
``safe_texts``, ``versions``). Depth parameters bound recursion explicitly. Each builder is cached, so
calling it again returns the same strategy object (Hypothesis validates a strategy once, and
rebuilding these trees per draw would dominate test time).
"""

from __future__ import annotations

from functools import cache

from hypothesis import strategies as st

from dotboxd.core import ast
from dotboxd.grammar import literals as rules
from dotboxd.grammar.text import keywords

_KEYWORDS = sorted(keywords())

_SAFE_CHARS = st.characters(exclude_categories=["Cc", "Cs"])
_NO_SURROGATES = st.characters(exclude_categories=["Cs"])
_PLAIN_SEGMENT = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,7}", fullmatch=True)


def _clean(text: str) -> bool:
    """No host-reference fragment (the wire's E-IR-CLR-REF scan applies to names and texts)."""
    return rules.dangerous_fragment(text) is None


def _valid_identifier(text: str) -> bool:
    return rules.identifier_problem(text) is None and _clean(text)


@cache
def safe_texts(min_size: int = 0, max_size: int = 20) -> st.SearchStrategy[str]:
    """Strings with no lone surrogates and no host-reference fragment (control characters allowed)."""
    return st.text(_NO_SURROGATES, min_size=min_size, max_size=max_size).filter(_clean)


@st.composite
def _plain_names(draw: st.DrawFn) -> str:
    segments = draw(st.lists(_PLAIN_SEGMENT, min_size=1, max_size=3))
    return ".".join(segments)


@cache
def identifiers() -> st.SearchStrategy[str]:
    """Valid IR identifiers, mostly plain (``level``, ``math.abs``) with keywords and odd names mixed in."""
    odd = st.text(_SAFE_CHARS, min_size=1, max_size=12)
    tricky = st.sampled_from(
        ["a.", ".a", "a..b", "1abc", "a-b", "x y", "`", "\\", '"q"', "é", "ünïcode", "a.1"]
    )
    return st.one_of(_plain_names(), _plain_names(), st.sampled_from(_KEYWORDS), tricky, odd).filter(
        _valid_identifier
    )


@cache
def type_names() -> st.SearchStrategy[str]:
    """Identifiers without '<' or '>' (the wire rejects those in type names)."""
    builtin = st.sampled_from(["I32", "I64", "F64", "Bool", "String", "Unit", "Guid", "SandboxPath"])
    return st.one_of(builtin, identifiers()).filter(lambda n: "<" not in n and ">" not in n)


@cache
def type_refs(depth: int = 2) -> st.SearchStrategy[ast.TypeRef]:
    scalar = type_names().map(lambda n: ast.TypeRef(n))
    if depth <= 0:
        return scalar
    generic = st.builds(
        lambda n, args: ast.TypeRef(n, tuple(args)),
        st.sampled_from(["List", "Map", "Record"]) | type_names(),
        st.lists(type_refs(depth - 1), min_size=1, max_size=3),
    )
    return st.one_of(scalar, generic)


_GUIDS = st.uuids().map(str)


@st.composite
def _paths(draw: st.DrawFn) -> str:
    segment_chars = st.characters(exclude_categories=("Cc", "Cs"), exclude_characters="/\\:")
    segments = draw(
        st.lists(
            st.text(segment_chars, min_size=1, max_size=8).filter(
                lambda s: s not in (".", "..") and not s.endswith((" ", "."))
            ),
            min_size=1,
            max_size=4,
        )
    )
    return "/".join(segments)


@cache
def paths() -> st.SearchStrategy[str]:
    """Portable relative paths (the wire's path rule)."""
    return _paths().filter(lambda p: rules.path_problem(p) is None and _clean(p))


@st.composite
def _uris(draw: st.DrawFn) -> str:
    scheme = draw(st.from_regex(r"[A-Za-z][A-Za-z0-9+.\-]{0,5}", fullmatch=True))
    host = draw(st.from_regex(r"[a-z0-9][a-z0-9.\-]{0,12}", fullmatch=True))
    port = draw(st.one_of(st.just(""), st.integers(1, 65535).map(lambda p: f":{p}")))
    rest = draw(st.one_of(st.just(""), st.text(_SAFE_CHARS, max_size=10).map(lambda t: "/" + t)))
    return f"{scheme}://{host}{port}{rest}"


@cache
def uris() -> st.SearchStrategy[str]:
    """Absolute ``scheme://host`` URIs without userinfo (the wire's uri rule)."""
    return _uris().filter(lambda u: rules.uri_problem(u) is None and _clean(u))


_BRANDS = st.from_regex(r"[A-Z][A-Za-z0-9_]{0,10}", fullmatch=True).filter(_clean)
_OPAQUE_VALUES = st.from_regex(r"[A-Za-z0-9_.:\-]{1,16}", fullmatch=True).filter(_clean)


@cache
def literals() -> st.SearchStrategy[ast.Literal]:
    """Every literal kind within its rule."""
    kind = ast.LiteralKind
    return st.one_of(
        st.just(ast.Literal(kind.UNIT, None)),
        st.booleans().map(lambda b: ast.Literal(kind.BOOL, b)),
        st.integers(-(2**31), 2**31 - 1).map(lambda n: ast.Literal(kind.I32, n)),
        st.sampled_from([-(2**31), 2**31 - 1, 0, -1]).map(lambda n: ast.Literal(kind.I32, n)),
        st.integers(-(2**63), 2**63 - 1).map(lambda n: ast.Literal(kind.I64, n)),
        st.floats(allow_nan=False, allow_infinity=False).map(lambda f: ast.Literal(kind.F64, f)),
        safe_texts().map(lambda s: ast.Literal(kind.STRING, s)),
        _GUIDS.map(lambda g: ast.Literal(kind.GUID, g)),
        paths().map(lambda p: ast.Literal(kind.PATH, p)),
        uris().map(lambda u: ast.Literal(kind.URI, u)),
        st.builds(lambda b, v: ast.Literal(kind.OPAQUE_ID, v, b), _BRANDS, _OPAQUE_VALUES),
    )


@cache
def expressions(depth: int = 3) -> st.SearchStrategy[ast.Expr]:
    """Expressions up to ``depth`` operator levels (calls, unary and binary operators nest)."""
    leaves = st.one_of(literals(), identifiers().map(ast.Var))
    if depth <= 0:
        return leaves
    sub = expressions(depth - 1)
    call = st.builds(
        lambda name, args, generic: ast.Call(name, tuple(args), generic),
        identifiers(),
        st.lists(sub, max_size=3),
        st.none() | type_refs(1),
    )
    unary = st.builds(ast.Unary, st.sampled_from(list(ast.UnaryOp)), sub)
    binary = st.builds(ast.Binary, st.sampled_from(list(ast.BinaryOp)), sub, sub)
    return st.one_of(leaves, call, unary, binary)


@cache
def _blocks(depth: int, expr_depth: int) -> st.SearchStrategy[tuple[ast.Stmt, ...]]:
    return st.lists(statements(depth, expr_depth), max_size=3).map(tuple)


@cache
def statements(depth: int = 2, expr_depth: int = 2) -> st.SearchStrategy[ast.Stmt]:
    """Statements with blocks nested up to ``depth`` levels."""
    expr = expressions(expr_depth)
    simple = st.one_of(
        st.builds(ast.Set, identifiers(), expr),
        st.builds(ast.Return, expr),
        st.builds(ast.ExprStmt, expr),
        st.just(ast.Continue()),
        st.just(ast.Break()),
    )
    if depth <= 0:
        return simple
    block = _blocks(depth - 1, expr_depth)
    compound = st.one_of(
        st.builds(ast.If, expr, block, block),
        st.builds(ast.While, expr, block),
        st.builds(ast.ForRange, identifiers(), expr, expr, block),
    )
    return st.one_of(simple, compound)


@cache
def params() -> st.SearchStrategy[ast.Param]:
    return st.builds(ast.Param, identifiers(), type_refs(1))


@cache
def functions(depth: int = 2, expr_depth: int = 2) -> st.SearchStrategy[ast.Function]:
    return st.builds(
        lambda fid, vis, ps, rt, body: ast.Function(fid, vis, tuple(ps), rt, body),
        identifiers(),
        st.sampled_from(list(ast.Visibility)),
        st.lists(params(), max_size=3),
        type_refs(2),
        _blocks(depth, expr_depth),
    )


_VERSIONS = st.tuples(*(st.integers(0, 2**31 - 1) for _ in range(3))).map(lambda t: ".".join(map(str, t)))
_SMALL_VERSIONS = st.sampled_from(["1.0.0", "0.1.0", "2.3.4", "1.0.1"])


@cache
def versions() -> st.SearchStrategy[str]:
    """Canonical ``M.m.p`` versions (each part fits in an Int32)."""
    return st.one_of(_SMALL_VERSIONS, _VERSIONS)


@cache
def capability_requests() -> st.SearchStrategy[ast.CapabilityRequest]:
    cap_ids = st.one_of(
        st.sampled_from(["file.read", "file.write", "game.world.monster.write.kill"]), identifiers()
    )
    return st.builds(ast.CapabilityRequest, cap_ids, st.none() | safe_texts())


@cache
def metadata() -> st.SearchStrategy[tuple[tuple[str, str], ...]]:
    """Sorted (key, value) pairs with unique keys, as the AST keeps them."""
    return st.dictionaries(identifiers(), safe_texts(), max_size=3).map(lambda d: tuple(sorted(d.items())))


@cache
def modules(depth: int = 2, expr_depth: int = 2, max_functions: int = 3) -> st.SearchStrategy[ast.Module]:
    """Whole modules: header, capability requests, metadata and functions."""
    return st.builds(
        lambda mid, ver, target, reqs, fns, meta: ast.Module(mid, ver, target, tuple(reqs), tuple(fns), meta),
        identifiers(),
        versions(),
        st.one_of(st.just(ast.DEFAULT_TARGET_VERSION), versions()),
        st.lists(capability_requests(), max_size=3),
        st.lists(functions(depth, expr_depth), max_size=max_functions),
        metadata(),
    )


__all__ = [
    "capability_requests",
    "expressions",
    "functions",
    "identifiers",
    "literals",
    "metadata",
    "modules",
    "params",
    "paths",
    "safe_texts",
    "statements",
    "type_names",
    "type_refs",
    "uris",
    "versions",
]
