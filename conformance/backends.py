"""Which backends this runner has, and the two ways of asking one about a case.

``reference`` is this project's pipeline on the reference interpreter; ``optimized`` exists once
``dotboxd.runtime.optimized`` does. Either can run its cases through the host's synchronous
``execute`` (the default) or through ``execute_async`` on an event loop (``via="execute_async"``,
the CLI's ``--via``): the expectations are the same, so the corpus checks both entry points. An ``ImplBackend`` forwards the case to an external process
over the line-delimited JSON protocol (``dotboxd.conformance.protocol``).
"""

from __future__ import annotations

from typing import Protocol

from dotboxd.conformance.model import Actual, Case
from dotboxd.conformance.pipeline import evaluate
from dotboxd.conformance.protocol import ImplClient
from dotboxd.conformance.sources import wire_request_case
from dotboxd.conformance.stage_run import VIA_SYNC, Via


class Backend(Protocol):
    name: str

    def evaluate(self, case: Case) -> Actual: ...


class InProcessBackend:
    """This project's own pipeline, called directly (its run stage through ``via``)."""

    def __init__(self, name: str, via: Via = VIA_SYNC) -> None:
        self.name = name
        self.via: Via = via

    def evaluate(self, case: Case) -> Actual:
        return evaluate(case.raw, self.name, case.expect.stage, case.origin, self.via)


class ImplBackend:
    """An external implementation behind ``--impl``, asked for one backend name."""

    def __init__(self, client: ImplClient, name: str) -> None:
        self.client = client
        self.name = name

    def evaluate(self, case: Case) -> Actual:
        return self.client.ask(wire_request_case(case), self.name, case.expect.stage)
