"""Maps share structure between versions (a HAMT), and no version ever changes.

``MapValue.set``/``remove`` build a new version that shares most of the trie with the old one. These
properties check what a kernel can observe: every version it still holds keeps exactly the entries it
had, whatever is done to versions derived from it (on the values directly, and through kernels on
both backends), and canonical order, equality and hashing do not depend on how a map was built.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dotboxd.core.values import ListValue, MapValue, value_token, values_equal
from dotboxd.host import SandboxHost
from dotboxd.runtime.optimized import ArtifactCache, OptimizedBackend
from dotboxd.validator.policy import Policy

_keys = st.one_of(st.integers(-50, 50), st.text(alphabet="ab\u00e9\U0001f600", max_size=4))
_items = st.one_of(st.integers(-5, 5), st.text(max_size=3), st.lists(st.integers(0, 3), max_size=3))


def _value(item: Any) -> Any:
    return ListValue(item) if isinstance(item, list) else item


@given(
    steps=st.lists(
        st.tuples(st.integers(0, 60), st.booleans(), _keys, _items),
        max_size=80,
    )
)
def test_every_map_version_keeps_its_entries_whatever_is_derived_from_it(
    steps: list[tuple[int, bool, Any, Any]],
) -> None:
    """Versions form a tree (each step updates a random earlier version); afterwards every version
    still equals its own dict model entry for entry, in size and canonical order."""
    versions = [MapValue()]
    models: list[dict[object, Any]] = [{}]
    for pick, is_set, key, item in steps:
        i = pick % len(versions)
        token = (type(key), key)
        model = dict(models[i])
        if is_set:
            versions.append(versions[i].set(key, _value(item)))
            model[token] = (key, _value(item))
        else:
            versions.append(versions[i].remove(key))
            model.pop(token, None)
        models.append(model)
    for version, model in zip(versions, models, strict=True):
        assert len(version) == len(model)
        for token, (key, item) in model.items():
            assert version.contains(key) and values_equal(version.get(key), item), token
        rebuilt = MapValue(model.values())
        assert values_equal(version, rebuilt) and hash(version) == hash(rebuilt)
        assert value_token(version) == value_token(rebuilt)
        assert version.sorted_entries() == rebuilt.sorted_entries()
        assert version.shape == rebuilt.shape


@given(st.lists(_keys, max_size=30), st.randoms(use_true_random=False))
def test_map_equality_and_order_do_not_depend_on_insertion_order(keys: list[Any], rnd: Any) -> None:
    forward = MapValue()
    for k in keys:
        forward = forward.set(k, 1)
    shuffled = list(keys)
    rnd.shuffle(shuffled)
    backward = MapValue((k, 1) for k in shuffled)
    assert values_equal(forward, backward) and hash(forward) == hash(backward)
    assert forward.sorted_entries() == backward.sorted_entries()


# --- through kernels, on both backends --------------------------------------------------------

HOLD_OLD = """module "hold" version "1.0.0";
fn checksum(m Map<I32, I32>, keys List<I32>) -> I32 {
    total = 0;
    for i in 0 .. list.count(keys) {
        k = list.get(keys, i);
        if map.containsKey(m, k) { total = (total * 31 + map.get(m, k) + k) % 1000003; }
        else { total = (total * 31 + 7) % 1000003; }
    }
    return total;
}
entrypoint fn main(keys List<I32>) -> List<I32> {
    m = map.empty[Map<I32, I32>]();
    for i in 0 .. list.count(keys) { m = map.set(m, list.get(keys, i), i); }
    old = m;
    before = checksum(old, keys);
    for i in 0 .. list.count(keys) {
        k = list.get(keys, i);
        if i % 3 == 0 { m = map.remove(m, k); } else { m = map.set(m, k, i * 100 + 1); }
    }
    return list.of(before, checksum(old, keys), map.count(old), map.count(m), checksum(m, keys));
}"""

_HOST = SandboxHost(backends={"optimized": OptimizedBackend(cache=ArtifactCache())})
_PLAN = _HOST.prepare(
    HOLD_OLD,
    Policy.builder()
    .with_fuel(10**8)
    .with_max_loop_iterations(10**6)
    .with_limits(max_host_calls=10**6)
    .build(),
)


def _model(keys: list[int]) -> list[int]:
    def checksum(m: dict[int, int]) -> int:
        total = 0
        for k in keys:
            total = (total * 31 + m[k] + k) % 1000003 if k in m else (total * 31 + 7) % 1000003
        return total

    old = {k: i for i, k in enumerate(keys)}
    new = dict(old)
    for i, k in enumerate(keys):
        if i % 3 == 0:
            new.pop(k, None)
        else:
            new[k] = i * 100 + 1
    return [checksum(old), checksum(old), len(old), len(new), checksum(new)]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=40))  # non-negative: % truncates in DotBoxD
def test_a_kernel_held_old_map_never_changes_after_updates_to_a_new_one(keys: list[int]) -> None:
    expected = _model(keys)
    for backend in ("reference", "optimized"):
        result = _HOST.execute(_PLAN, "main", [keys], backend=backend)
        assert result.ok, result.error
        assert isinstance(result.value, ListValue) and list(result.value.items) == expected, backend
