"""A host's tests of its own kernels with the dotboxd pytest plugin (see docs/testing.md)."""

from __future__ import annotations

from pathlib import Path

from game_world_demo import KERNEL, World

from dotboxd.host import Policy
from dotboxd.testing import KernelTester

CASES = Path(__file__).with_name("cases")


def test_the_purge_kernel_is_accepted_under_the_host_policy(dotboxd: KernelTester) -> None:
    plan = dotboxd.accept(KERNEL)
    assert plan.entrypoints == ("main",)
    assert plan.required_capabilities == ("game.world.monster.write.kill",)


def test_without_the_grant_the_kernel_is_refused_at_install(dotboxd: KernelTester, world: World) -> None:
    dotboxd.reject(KERNEL, "E-POLICY-CAP", pointer="/capabilityRequests/0", policy=Policy.default())
    assert world.kill_calls == 0


def test_both_backends_agree_and_leave_the_world_alone(dotboxd: KernelTester, world: World) -> None:
    both = dotboxd.run_both(KERNEL, "main", [[1, 2, 3, 4]])
    assert both.value == 3
    assert both.reference.binding_calls == {"game.world.kill": 4}
    assert world.monsters == {1, 2, 3, 7}  # compared runs never apply their queued kills


def test_the_host_case_files_pass_on_both_backends(dotboxd: KernelTester) -> None:
    report = dotboxd.run_cases(CASES)
    assert report.passed == len(report.results) == 2 * 3
