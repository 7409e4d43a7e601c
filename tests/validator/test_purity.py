"""validator.purity: an entrypoint is pure when its transitive effects stay within Cpu|Alloc; the
refusal names the extra effects and every impure binding reachable, through helpers too."""

from __future__ import annotations

import pytest

from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.host import Cost, Int32, Policy, SandboxHost, host_binding
from dotboxd.validator.purity import impure_bindings, require_pure
from tests.probes import read_probe


@read_probe("shop.price", capability="shop.read")
def price(item: Int32) -> Int32:
    return item * 2


@host_binding(id="shop.double", cost=Cost(base_fuel=1))
def double(item: Int32) -> Int32:
    return item * 2


MODULE = """module "shop" version "1.0.0";
requires "shop.read" reason "prices";
entrypoint fn pure(x I32) -> I32 {
    return shop.double(x) + math.abs(x);
}
fn helper(x I32) -> I32 {
    return shop.price(x);
}
entrypoint fn indirect(x I32) -> I32 {
    return helper(x);
}
"""


def test_pure_and_impure_entrypoints_are_told_apart() -> None:
    host = SandboxHost(bindings=[price, double])
    plan = host.prepare(MODULE, Policy.builder().grant("shop.read").build())
    require_pure(plan, "pure", code="E-EVENT-FILTER-IMPURE")
    assert impure_bindings(plan, "pure") == ()
    assert impure_bindings(plan, "indirect") == ("shop.price",)
    with pytest.raises(DotBoxDError) as caught:
        require_pure(plan, "indirect", code="E-EVENT-FILTER-IMPURE", pointer="/entrypoints/shouldHandle")
    diagnostic = caught.value.diagnostic
    assert (diagnostic.code, diagnostic.pointer) == ("E-EVENT-FILTER-IMPURE", "/entrypoints/shouldHandle")
    assert diagnostic.evidence == {
        "function": "indirect",
        "effects": ["HostStateRead"],
        "bindings": ["shop.price"],
    }
    assert diagnostic.span is not None and diagnostic.span.line == 9
