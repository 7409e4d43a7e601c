"""A small load generator: C concurrent asyncio clients hammer one operation for D seconds.

Reports throughput and p50/p99 latency; the tests print the numbers and check correctness (every
answer right, no error), never timings (the machine is shared).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpx


@dataclass
class LoadReport:
    name: str
    clients: int
    seconds: float
    latencies: list[float]
    failures: int

    @property
    def throughput(self) -> float:
        return len(self.latencies) / self.seconds

    def percentile(self, q: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")

    def line(self) -> str:
        mean = statistics.fmean(self.latencies) if self.latencies else float("nan")
        return (
            f"{self.name}: {self.clients} clients, {self.seconds:.1f} s, {len(self.latencies)} ok, "
            f"{self.failures} failed, {self.throughput:.0f} req/s, p50 {1000 * self.percentile(0.5):.1f} ms, "
            f"p99 {1000 * self.percentile(0.99):.1f} ms, mean {1000 * mean:.1f} ms"
        )


Operation = Callable[[httpx.AsyncClient, int], Awaitable[bool]]


async def _client(http: httpx.AsyncClient, op: Operation, until: float, out: LoadReport) -> None:
    index = 0
    while time.monotonic() < until:
        started = time.perf_counter()
        ok = await op(http, index)
        elapsed = time.perf_counter() - started
        if ok:
            out.latencies.append(elapsed)
        else:
            out.failures += 1
        index += 1


def run_load(
    name: str, url: str, headers: dict[str, str], op: Operation, clients: int, seconds: float
) -> LoadReport:
    """Each client has its own connection; clients are built (and connected) before the clock starts,
    since building an httpx client costs more than a request here."""
    report = LoadReport(name, clients, seconds, [], 0)

    async def main() -> None:
        pool = [httpx.AsyncClient(base_url=url, headers=headers, timeout=30) for _ in range(clients)]
        try:
            await asyncio.gather(*(http.get("/health") for http in pool))  # connect first
            started = time.monotonic()
            await asyncio.gather(*(_client(http, op, started + seconds, report) for http in pool))
            report.seconds = time.monotonic() - started
        finally:
            await asyncio.gather(*(http.aclose() for http in pool))

    asyncio.run(main())
    return report
