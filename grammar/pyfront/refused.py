"""What the Python front end refuses, and the supported alternative each refusal names.

One table so that the lowerer, the spec (spec/python-front.md) and the refusal tests all speak of
the same constructs. Every refusal is ``E-PY-UNSUPPORTED`` at the construct's Python line:column.
"""

from __future__ import annotations

import ast as pyast
import builtins
from typing import NoReturn

from dotboxd.core.diagnostics import reject
from dotboxd.grammar.pyfront.source import PySource

# Python node class -> (what it is, the hint naming the supported alternative)
REFUSED: dict[type[pyast.AST], tuple[str, str]] = {
    pyast.Import: (
        "an import",
        "import only names from dotboxd.lang: `from dotboxd.lang import I32, entrypoint`",
    ),
    pyast.ImportFrom: (
        "an import",
        "import only names from dotboxd.lang: `from dotboxd.lang import I32, entrypoint`",
    ),
    pyast.ClassDef: ("a class", "kernels are functions; pass values as parameters or use Record[...]"),
    pyast.AsyncFunctionDef: ("an async function", "write a plain `def`; async work happens inside bindings"),
    pyast.Lambda: ("a lambda", "define a module-level function and call it"),
    pyast.ListComp: (
        "a list comprehension",
        "build the list in a `for i in range(a, b):` loop with list.add",
    ),
    pyast.SetComp: ("a set comprehension", "build a Map in a `for i in range(a, b):` loop with map.set"),
    pyast.DictComp: ("a dict comprehension", "build the map in a `for i in range(a, b):` loop with map.set"),
    pyast.GeneratorExp: ("a generator expression", "use a `for i in range(a, b):` loop"),
    pyast.Global: ("a global statement", "kernels have no globals; pass values as parameters"),
    pyast.Nonlocal: ("a nonlocal statement", "kernels have no closures; pass values as parameters"),
    pyast.Try: ("a try statement", "faults end the run; check values with `if` before the call"),
    pyast.TryStar: ("a try statement", "faults end the run; check values with `if` before the call"),
    pyast.Raise: ("a raise statement", "return a value that says what went wrong"),
    pyast.Assert: ("an assert statement", "use `if not cond: return ...`"),
    pyast.With: ("a with statement", "kernels hold no resources; call the binding directly"),
    pyast.AsyncWith: ("an async with statement", "call the binding directly"),
    pyast.AsyncFor: ("an async for loop", "use `for i in range(a, b):`"),
    pyast.Yield: ("yield", "return one value; build a List to return many"),
    pyast.YieldFrom: ("yield from", "return one value; build a List to return many"),
    pyast.Await: ("await", "call async bindings like any other binding; the runtime awaits them"),
    pyast.NamedExpr: ("an assignment expression (walrus)", "assign with a separate `x = ...` statement"),
    pyast.Starred: ("star-arguments", "pass each argument explicitly"),
    pyast.IfExp: ("a conditional expression", "use an if/else statement that assigns a local"),
    pyast.Set: ("a set literal", "use a Map[K, Bool] built with map.set"),
    pyast.Tuple: ("a tuple", "use a List, a Record (record.new) or separate locals"),
    pyast.Slice: ("a slice", "copy elements in a `for i in range(a, b):` loop"),
    pyast.JoinedStr: ("an f-string", "join strings with the string built-ins (string.concatBudgeted)"),
    pyast.Delete: ("a del statement", "assign a new value instead (map.remove for map entries)"),
    pyast.Match: ("a match statement", "use if/elif/else"),
}
if hasattr(pyast, "TypeAlias"):  # Python 3.12+
    REFUSED[pyast.TypeAlias] = ("a type alias", "write the full type at each use")

PYTHON_BUILTINS: frozenset[str] = frozenset(name for name in dir(builtins) if not name.startswith("_"))
"""Python's own built-in names: calling one (``print``, ``exec``, ``open``...) is refused, since a
kernel can only call module functions, DotBoxD built-ins and host bindings."""


def refuse(src: PySource, node: pyast.AST, what: str, hint: str, **evidence: object) -> NoReturn:
    """Raise E-PY-UNSUPPORTED for ``node`` (at its Python line:column)."""
    raise reject(
        "E-PY-UNSUPPORTED",
        f"{what} is not part of the kernel subset of Python",
        "",
        src.span(node),
        hint,
        construct=type(node).__name__,
        **evidence,
    )


def refuse_node(src: PySource, node: pyast.AST) -> NoReturn:
    """Refuse a node by its class, with the table's hint (or a generic one)."""
    what, hint = REFUSED.get(
        type(node),
        (
            f"the Python construct {type(node).__name__}",
            "kernels use a small Python subset: functions, assignments, if/while/for-range, return and calls",
        ),
    )
    refuse(src, node, what, hint)
