"""Each row of spec/python-front.md's lowering table: a Python kernel and the text-form module it
must lower to (compared as trees, so the check is exact), plus where the nodes point."""

from __future__ import annotations

import pytest

from dotboxd.core import ast
from dotboxd.grammar.pyfront import lower_python
from dotboxd.grammar.text import parse_text
from dotboxd.host import SandboxHost

PAIRS: list[tuple[str, str, str]] = [
    (
        "statements",
        '''
"""Module docstring."""
from __future__ import annotations

from dotboxd.lang import Bool, I32, Unit, entrypoint, module

module("stmts", version="2", target="1.0.0")


def helper(n: I32) -> Unit:
    """A docstring is not a statement."""
    pass
    return


@entrypoint
def main(n: I32, flag: Bool) -> I32:
    total = 0
    for i in range(n):
        if i % 2 == 0:
            continue
        elif i > 7:
            break
        else:
            total += i
    k = 0
    while k < 3 and not flag:
        k = k + 1
        total -= 1
    total *= 2
    total //= 3
    total /= 1
    total %= 1000
    helper(n)
    return total
''',
        """
module "stmts" version "2.0.0";
fn helper(n I32) -> Unit { return (); }
entrypoint fn main(n I32, flag Bool) -> I32 {
    total = 0;
    for i in 0 .. n {
        if i % 2 == 0 { continue; } else if i > 7 { break; } else { total = total + i; }
    }
    k = 0;
    while k < 3 && !flag { k = k + 1; total = total - 1; }
    total = total * 2;
    total = total / 3;
    total = total / 1;
    total = total % 1000;
    helper(n);
    return total;
}
""",
    ),
    (
        "literals_and_calls",
        """
from dotboxd.lang import Bool, F64, I64, String, entrypoint, guid, meta, module, opaque, path, requires, uri

module("lits", version="1.0.0")
requires("file.read")
meta("owner", "team")


@entrypoint
def main(a: I64) -> Bool:
    big = I64(5) + -I64(7) + a
    f = -2.5 * 1e3
    s = "tab\\there é"
    p = path("config/a.json")
    u = uri("https://example.com/x")
    g = guid("0F8FAD5B-D9CB-469F-A165-70867728950E")
    o = opaque("PlayerId", "p-1")
    nothing = None
    m = math.clamp(3, -2147483648, 9)
    return (1 < 2) == (True or False)
""",
        r"""
module "lits" version "1.0.0";
requires "file.read";
meta "owner" = "team";
entrypoint fn main(a I64) -> Bool {
    big = 5L + -7L + a;
    f = -2.5 * 1000.0;
    s = "tab\there é";
    p = path"config/a.json";
    u = uri"https://example.com/x";
    g = guid"0f8fad5b-d9cb-469f-a165-70867728950e";
    o = opaque PlayerId "p-1";
    nothing = ();
    m = math.clamp(3, -2147483648, 9);
    return (1 < 2) == (true || false);
}
""",
    ),
    (
        "collections",
        """
from dotboxd.lang import I32, List, Map, String, entrypoint, module

module("colls", version="1.0.0")


@entrypoint
def main(xs: List[I32], scores: Map[String, I32]) -> I32:
    ys: List[I32] = []
    zs = [1, 2, 3]
    ws = list.empty[I32]()
    m: Map[String, I32] = {"a": 1, "b": 2}
    e: Map[String, I32] = {}
    m["c"] = xs[0]
    scores["d"] = 4
    return zs[1] + m["a"] + scores["d"] + list.count(ys) + list.count(ws)
""",
        """
module "colls" version "1.0.0";
entrypoint fn main(xs List<I32>, scores Map<String, I32>) -> I32 {
    ys = list.empty[I32]();
    zs = list.of(1, 2, 3);
    ws = list.empty[I32]();
    m = map.set(map.set(map.empty[Map<String, I32>](), "a", 1), "b", 2);
    e = map.empty[Map<String, I32>]();
    m = map.set(m, "c", list.get(xs, 0));
    scores = map.set(scores, "d", 4);
    return list.get(zs, 1) + map.get(m, "a") + map.get(scores, "d") + list.count(ys) + list.count(ws);
}
""",
    ),
]


@pytest.mark.parametrize(("python", "text"), [p[1:] for p in PAIRS], ids=[p[0] for p in PAIRS])
def test_python_lowers_to_the_text_form_tree(python: str, text: str) -> None:
    assert lower_python(python, "k.py") == parse_text(text)


def test_collection_kernel_runs_on_both_backends() -> None:
    module = lower_python(PAIRS[2][1], "colls.py")
    host = SandboxHost()
    plan = host.prepare(module)
    values = {
        backend: host.execute(plan, "main", [[5, 6], {"x": 1}], backend=backend).value
        for backend in ("reference", "optimized")
    }
    assert values == {"reference": 2 + 1 + 4, "optimized": 2 + 1 + 4}


def test_nodes_carry_wire_pointers_and_python_positions() -> None:
    module = lower_python(PAIRS[0][1], "k.py")
    main = module.functions[1]
    loop = main.body[1]
    assert isinstance(loop, ast.ForRange)
    assert loop.pointer == "/functions/1/body/1" and loop.span is not None
    assert (loop.span.line, loop.span.column) == (19, 5)
    branch = loop.body[0]
    assert isinstance(branch, ast.If) and branch.condition.pointer == "/functions/1/body/1/body/0/condition"
    assert branch.condition.span is not None and (
        branch.condition.span.line,
        branch.condition.span.column,
    ) == (20, 12)
