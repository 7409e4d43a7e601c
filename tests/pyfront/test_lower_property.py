"""Property: lowering a Python file either fails with a located diagnostic or yields a module that
validates. Sources come from a small grammar of the subset (well-typed I32 kernels), optionally
damaged with junk (refused constructs, truncation, random characters)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.grammar.pyfront import lower_python
from dotboxd.host import Policy, SandboxHost

HEAD = 'from dotboxd.lang import I32, entrypoint, module\nmodule("prop", version="1.0.0")\n\n'
HOST = SandboxHost()
POLICY = Policy.builder().with_fuel(20_000).build()
JUNK = [
    "import os",
    "class K: pass",
    "y = lambda q: q",
    "y = [i for i in range(3)]",
    "global a",
    'exec("1")',
    "try:\n    pass\nexcept E:\n    pass",
    "with f() as g:\n    pass",
    "y = (z := 1)",
    "y = f(*a)",
    "yield a",
    "y = a.real",
    "y = a if b else 1",
    "y = 1 < a < 3",
    'y = f"{a}"',
    "y = a ** 2",
    "for m in a:\n    pass",
    "del a",
    "y = ((((((((a))))))))",
    "y = undefined_name + 1",
    "y = 'text' + 1",
    "y = math.abs(1, 2)",
    "break",
    "return 'wrong type'",
    "def inner() -> I32:\n    return 1",
]


@dataclass
class Scope:
    """Names readable here (all I32) and a counter for fresh names."""

    names: list[str]
    fresh: list[int] = field(default_factory=lambda: [0])

    def new_name(self) -> str:
        self.fresh[0] += 1
        return f"v{self.fresh[0]}"

    def child(self) -> Scope:
        return Scope(list(self.names), self.fresh)


def int_expr(draw: st.DrawFn, scope: Scope, depth: int) -> str:
    if depth <= 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.booleans()):
            return str(draw(st.integers(-50, 50)))
        return draw(st.sampled_from(scope.names))
    kind = draw(st.integers(0, 3))
    left = int_expr(draw, scope, depth - 1)
    right = int_expr(draw, scope, depth - 1)
    if kind == 0:
        return f"({left} {draw(st.sampled_from(['+', '-', '*', '//', '%']))} {right})"
    if kind == 1:
        return f"-({left})"
    if kind == 2:
        return f"math.{draw(st.sampled_from(['min', 'max']))}({left}, {right})"
    return f"math.abs({left})"


def bool_expr(draw: st.DrawFn, scope: Scope, depth: int) -> str:
    left, right = int_expr(draw, scope, depth), int_expr(draw, scope, depth)
    cmp = f"{left} {draw(st.sampled_from(['<', '<=', '>', '>=', '==', '!=']))} {right}"
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return f"not ({cmp})"
    if kind == 1:
        return f"({cmp}) {draw(st.sampled_from(['and', 'or']))} ({bool_expr(draw, scope, 0)})"
    return cmp


def block(draw: st.DrawFn, scope: Scope, depth: int, indent: str, assignable: list[str]) -> list[str]:
    """Statements; only ``assignable`` outer locals (never loop variables) may be reassigned."""
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.integers(0, 4)) if depth > 0 else 0
        if kind == 0 or not assignable:
            name = scope.new_name()
            lines.append(f"{indent}{name} = {int_expr(draw, scope, 2)}")
            scope.names.append(name)
            assignable = [*assignable, name]
        elif kind == 1:
            lines.append(f"{indent}{draw(st.sampled_from(assignable))} = {int_expr(draw, scope, 2)}")
        elif kind == 2:
            lines.append(f"{indent}if {bool_expr(draw, scope, 1)}:")
            lines += block(draw, scope.child(), depth - 1, indent + "    ", assignable)
            if draw(st.booleans()):
                lines.append(f"{indent}elif {bool_expr(draw, scope, 1)}:")
                lines += block(draw, scope.child(), depth - 1, indent + "    ", assignable)
            if draw(st.booleans()):
                lines.append(f"{indent}else:")
                lines += block(draw, scope.child(), depth - 1, indent + "    ", assignable)
        else:
            inner = scope.child()
            var = inner.new_name()
            lines.append(
                f"{indent}for {var} in range({draw(st.integers(-2, 2))}, {int_expr(draw, scope, 1)}):"
            )
            inner.names.append(var)
            lines += block(draw, inner, depth - 1, indent + "    ", assignable)
            if draw(st.booleans()):
                lines.append(f"{indent}    {draw(st.sampled_from(['break', 'continue']))}")
    return lines


@st.composite
def kernels(draw: st.DrawFn) -> str:
    scope = Scope(["a", "b"])
    lines = block(draw, scope, 2, "    ", [])
    lines.append(f"    return {int_expr(draw, scope, 2)}")
    return HEAD + "@entrypoint\ndef main(a: I32, b: I32) -> I32:\n" + "\n".join(lines) + "\n"


@st.composite
def damaged(draw: st.DrawFn) -> str:
    source = draw(kernels())
    lines = source.split("\n")
    how = draw(st.integers(0, 2))
    if how == 0:  # insert a junk statement into the function body
        at = draw(st.integers(5, max(5, len(lines) - 2)))
        junk = ["    " + j for j in draw(st.sampled_from(JUNK)).split("\n")]
        return "\n".join(lines[:at] + junk + lines[at:])
    if how == 1:  # truncate anywhere
        return source[: draw(st.integers(0, len(source)))]
    at = draw(st.integers(0, len(source) - 1))  # overwrite one character
    return source[:at] + draw(st.characters(codec="utf-8")) + source[at + 1 :]


def _located_within(error: DotBoxDError, source: str) -> bool:
    line_count = source.count("\n") + 1
    return all(d.span is not None and 1 <= d.span.line <= line_count for d in error.diagnostics[:1])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kernels())
def test_lowered_subset_kernel_validates_and_backends_agree(source: str) -> None:
    module = lower_python(source, "prop.py")
    plan = HOST.prepare(module, POLICY)
    outcomes = []
    for backend in ("reference", "optimized"):
        result = HOST.execute(plan, "main", [7, -3], backend=backend)
        error = result.error
        outcomes.append((result.ok, result.value, None if error is None else error.code, result.usage))
    assert outcomes[0] == outcomes[1]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged())
def test_lowering_fails_located_or_the_module_validates(source: str) -> None:
    try:
        module = lower_python(source, "junk.py")
    except DotBoxDError as error:
        assert _located_within(error, source), error.diagnostics[0]
        return
    try:
        HOST.prepare(module, POLICY)
    except DotBoxDError as error:  # lowered, but ill-typed: still located in the Python file
        assert _located_within(error, source), error.diagnostics[0]
