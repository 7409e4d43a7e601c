"""An entrypoint the plan lacks gets no dispatch record: each run still reports R-ENTRY-UNKNOWN, the
same result as before, but a caller naming many (or megabyte-long) unknown entrypoints can neither
fill the host's LRU with them nor push out the records of real entrypoints (a server's tenant
could, on the host every tenant shares)."""

from __future__ import annotations

import pytest

from dotboxd.host.sandbox_host import SandboxHost

KERNEL = """
module "known" version "1.0.0";

entrypoint fn main(n I32) -> I32 {
    return n + 1;
}
"""


@pytest.mark.parametrize("backend", ["reference", "optimized"])
def test_unknown_entrypoints_leave_the_dispatch_lru_as_it_was(backend: str) -> None:
    host = SandboxHost(dispatch_cache_size=4)
    plan = host.prepare(KERNEL)
    assert host.execute(plan, "main", [1], backend=backend).value == 2
    assert host.dispatch_records == 1
    answers = []
    for index in range(10):
        for _ in range(2):  # the second call of a name would find its record, were it kept
            result = host.execute(plan, f"mian{index}" + "x" * 100_000, [1], backend=backend)
            answers.append((result.ok, result.error.code if result.error else ""))
    assert set(answers) == {(False, "R-ENTRY-UNKNOWN")}
    assert host.dispatch_records == 1  # main's record is still there, nothing else is
    assert host.execute(plan, "main", [2], backend=backend).value == 3
    small = host.execute(plan, "mian", [1], backend=backend)
    assert small.error is not None and "did you mean 'main'" in small.error.safe_message
