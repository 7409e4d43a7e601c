"""A run id the host program chooses: ``None`` is a fresh one, text of 1-128 printable ASCII
characters is kept as given on every path, anything else is ``E-HOST-RUN-ID`` before the run.

Before the rule the ordinary path kept any truthy object (``5`` came back as an ``int`` run id, a
newline reached every audit event, a megabyte string was copied into each) and silently replaced
``""`` and ``0`` by a fresh id, while the fast lane sent those to the ordinary path: one argument,
several behaviours. A refused run id runs nothing: no audit event reaches an observer.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.host.run_ids import MAX_RUN_ID_LENGTH
from dotboxd.host.sandbox_host import SandboxHost

KERNEL = """
module "ids" version "1.0.0";

entrypoint fn main(n I32) -> I32 {
    return n + 1;
}
"""

BAD_RUN_IDS: tuple[object, ...] = (
    "",
    0,
    5,
    1.5,
    True,
    b"ab",
    ["l"],
    object(),
    "a\nb",
    "tab\there",
    "with space",
    "caf\u00e9",
    "\x7f",
    "x" * (MAX_RUN_ID_LENGTH + 1),
    type("Text", (str,), {})("subclass"),  # a str subclass could change how it is spelled later
)
GOOD_RUN_IDS = ("r", "job-7:row-3", "!~" * 4, "e" * MAX_RUN_ID_LENGTH)
BACKENDS = ("reference", "optimized")


def _host(observed: bool = False) -> tuple[SandboxHost, list[Any], Any]:
    """A host, the events its observer saw (observers off: runs take the fast lane), its plan."""
    seen: list[Any] = []
    host = SandboxHost(observers=[seen.append] if observed else ())
    plan = host.prepare(KERNEL)
    return host, seen, plan


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bad_run_id_is_refused_before_the_run_on_every_path(backend: str) -> None:
    for observed in (False, True):  # observers off: the fast lane's path; on: the ordinary one
        host, seen, plan = _host(observed)
        assert host.execute(plan, "main", [1], backend=backend).ok  # warm: the hot path is taken next
        assert bool(seen) == observed  # an observer sees a run's events
        seen.clear()
        for run_id in BAD_RUN_IDS:
            for call in ("execute", "execute_async"):
                with pytest.raises(DotBoxDError) as error:
                    if call == "execute":
                        host.execute(plan, "main", [1], backend=backend, run_id=run_id)  # type: ignore[arg-type]
                    else:
                        asyncio.run(host.execute_async(plan, "main", [1], backend=backend, run_id=run_id))  # type: ignore[arg-type]
                diagnostic = error.value.diagnostic
                assert (diagnostic.code, diagnostic.pointer) == ("E-HOST-RUN-ID", "/run_id"), run_id
                assert diagnostic.category == "InvalidInput" and "run_id=None" in diagnostic.hint
                assert "\n" not in diagnostic.message and len(diagnostic.message) < 200
        assert seen == []  # nothing ran: no event of any refused run reached an observer


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_good_run_id_is_kept_exactly_and_none_is_a_fresh_one(backend: str) -> None:
    host, _, plan = _host()
    for run_id in GOOD_RUN_IDS:
        for _ in range(2):  # the second run takes the hot path
            result = host.execute(plan, "main", [1], backend=backend, run_id=run_id)
            assert result.ok and result.value == 2 and result.run_id == run_id
            assert type(result.run_id) is str and result.to_json()["runId"] == run_id
        via_async = asyncio.run(host.execute_async(plan, "main", [1], backend=backend, run_id=run_id))
        assert via_async.run_id == run_id
    fresh = {host.execute(plan, "main", [1], backend=backend).run_id for _ in range(3)}
    assert len(fresh) == 3 and all(re.fullmatch(r"[0-9a-f]{32}", i) for i in fresh)
