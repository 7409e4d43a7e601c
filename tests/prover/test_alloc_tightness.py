"""Allocation bounds follow the input's own string bytes, not the worst case of every text.

An input ``List<String>`` is charged, at entry, exactly the string bytes it holds. The prover used
to bound that charge by "every item a text of ``maxStringLength`` units" (131,072 bytes per item),
so on a list of two short texts the bound was 262,144 where the run allocated 6: that single term
made the allocatedBytes tightness p90 on the generated corpus 2,033x. Those bytes are now an atom of
the input model, which a bound evaluated on an input reads exactly; the budget questions still see
its whole range.

The same holds for the values a kernel builds: a list, map or record carries a bound on the bytes
of all its texts together (from the parts it is built of), which every copy of it is charged; a
path or URI input has its own string-bytes atom, and a collection nested in an input is no larger
than the input's element count. Those bounds are facts about one value, so the last tests check
that a loop or a branch that changes the value never keeps them.
"""

from __future__ import annotations

from typing import Any

from dotboxd.core.types import to_type_ref
from dotboxd.core.values import Value, decode_typed
from dotboxd.grammar import literals
from dotboxd.host import Policy, SandboxHost
from dotboxd.validator.plan import ExecutionPlan
from dotboxd.validator.prover import Verdict, prove_plan

SOURCE = """module "t" version "1.0.0";
entrypoint fn main(xs List<String>, m Map<String, I32>) -> I32 {
  return list.count(xs) + map.count(m);
}
"""


def test_an_input_of_texts_is_bounded_by_its_own_string_bytes() -> None:
    """Threat: an unsound or useless allocation bound (T-PRV-01): the bound on each input is at
    least the run's allocation and, for this kernel, equal to it."""
    host = SandboxHost()
    plan = host.prepare(SOURCE, Policy.builder().with_limits(max_wall_time_ms=60_000).build())
    report = prove_plan(plan)
    budget = report.function("main").budget("allocatedBytes")
    assert budget is not None and budget.verdict is Verdict.PROVED
    for args in ([["ab", "c"], [["k", 1]]], [[], []], [["\U0001d11e" * 50] * 3, [["x" * 70, 2], ["y", 3]]]):
        result = host.execute(plan, "main", args, encoding="json")
        assert result.ok
        bound = report.bound_at("main", "allocatedBytes", _decoded(plan, args))
        assert bound == result.usage.allocated_bytes


def _decoded(plan: ExecutionPlan, args: list[Any]) -> list[Value]:
    types = plan.functions["main"].parameter_types
    return [decode_typed(a, to_type_ref(t), literals) for a, t in zip(args, types, strict=True)]


COLLECTIONS = """module "t" version "1.0.0";
entrypoint fn main(r Record<I32, Map<String, String>, SandboxUri>, u SandboxUri, p SandboxPath) -> I32 {
  xs = list.add(list.add(list.of(r), r), r);
  m = record.get(list.get(xs, 1), 1);
  m2 = map.set(m, "k", "vw");
  ys = list.of(u, u, record.get(r, 2));
  zs = list.slice(list.add(ys, u), 1, 2);
  keys = map.keys(m);
  return list.count(xs) + map.count(m2) + list.count(zs) + list.count(keys);
}
"""

_COLLECTION_INPUTS: list[list[Any]] = [
    [[1, [], "https://a.example/"], "https://b.example/x", "a/b"],
    [[2, [["k", "v"], ["key", "value\U0001d11e"]], "http://h/"], "https://u.example/", "p"],
    [
        [3, [[f"k{i}", "v" * i] for i in range(20)], "https://c.example/" + "q" * 300],
        "https://z.example/" + "z" * 500,
        "d/" * 40 + "e",
    ],
]


def test_texts_inside_built_collections_are_bounded_by_their_parts_not_by_count_times_the_longest() -> None:
    """Threat: an unsound or useless allocation bound (T-PRV-01). A collection built from known
    parts (``list.of``, ``list.add``, ``map.set``, ``list.slice``, ``map.keys``) holds exactly their
    texts, and a path or URI input holds its own bytes: the bound on each input is at least the
    run's allocation and within 2x of it (it was thousands of times the allocation when every list
    item and every URI counted as a text of maxStringLength units)."""
    host = SandboxHost()
    plan = host.prepare(COLLECTIONS, Policy.builder().with_limits(max_wall_time_ms=60_000).build())
    report = prove_plan(plan)
    for args in _COLLECTION_INPUTS:
        result = host.execute(plan, "main", args, encoding="json")
        assert result.ok, result.error
        bound = report.bound_at("main", "allocatedBytes", _decoded(plan, args))
        actual = result.usage.allocated_bytes
        assert bound is not None and actual <= bound <= 2 * actual, (bound, actual)


REPLACED = """module "t" version "1.0.0";
entrypoint fn main(r Record<String, List<String>>, n I32) -> I32 {
  if n > 2 {
    q = r;
  } else {
    q = record.new[Record<String, List<String>>](string.concatBudgeted(record.get(r, 0), record.get(r, 0)), record.get(r, 1));
  }
  xs = list.add(list.of(q), q);
  ys = list.add(xs, q);
  return list.count(ys);
}
"""

GROWING = """module "t" version "1.0.0";
entrypoint fn main(r Record<String, List<String>>, n I32) -> I32 {
  xs = list.of(r);
  acc = record.get(r, 1);
  for i in 0..n {
    xs = list.add(xs, r);
    acc = list.add(acc, string.concatBudgeted(record.get(r, 0), list.get(acc, 0)));
  }
  if n > 2 {
    xs = list.of(record.new[Record<String, List<String>>]("x", list.of("y")));
  }
  ys = list.add(xs, r);
  zs = list.add(acc, "z");
  return list.count(ys) + list.count(zs);
}
"""


def test_a_collection_grown_in_a_loop_never_keeps_the_byte_bound_of_its_entry_value() -> None:
    """Threat: an unsound allocation bound (T-PRV-01). The total-bytes bound of a collection is a
    fact about one value: a loop that adds to the collection (and appends texts built from it) or
    a branch that replaces it must not carry the entry value's bound to the loop head or the merge,
    or the bound would fall below what the run allocates."""
    host = SandboxHost()
    for source in (REPLACED, GROWING):
        _check_sound(host, source)


def _check_sound(host: SandboxHost, source: str) -> None:
    plan = host.prepare(source, Policy.builder().with_limits(max_wall_time_ms=60_000).build())
    report = prove_plan(plan)
    for n in (0, 1, 2, 3, 6):
        for text, items in (("", ["a"]), ("ab" * 300, ["b" * 40, "c"]), ("\U0001d11e" * 9, ["d" * 100])):
            args: list[Any] = [[text, items], n]
            result = host.execute(plan, "main", args, encoding="json")
            assert result.ok, result.error
            bound = report.bound_at("main", "allocatedBytes", _decoded(plan, args))
            assert bound is not None and result.usage.allocated_bytes <= bound, (args, bound)
