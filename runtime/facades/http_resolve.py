"""Resolve a host name once, check every address, and hand back the one to connect to.

The answer is *pinned*: the transport connects to the address returned here and never looks the
name up again, so a resolver that answers "public" for the check and "127.0.0.1" for the connection
(DNS rebinding) gets nowhere. Every address of the answer must pass the private-network rule - a
name that resolves to one public and one private address is refused, not filtered, since the owner
of the name chose to point it inward.

The resolver is injectable (a ``Resolver`` maps a name and port to address texts) so tests can point
a made-up name at 127.0.0.1 without touching the machine's resolver. The default asks the operating
system (``getaddrinfo``), on a helper thread so the call's time limit bounds the wait.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import ipaddress
import socket
import threading
from collections.abc import Callable, Sequence

from dotboxd.runtime.errors import BindingError
from dotboxd.runtime.facades.http_rules import IpAddress, Target, address_problem
from dotboxd.runtime.facades.http_transport import Budget, timed_out

Resolver = Callable[[str, int], Sequence[str]]
"""(host name, port) -> the addresses it resolves to, as text; OSError when it does not resolve."""

_MAX_ADDRESSES = 64
_POOL: concurrent.futures.ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def system_resolver(host: str, port: int) -> Sequence[str]:
    """The operating system's answer for ``host`` (TCP addresses, IPv4 and IPv6)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def _pool() -> concurrent.futures.ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="dotboxd-dns")
        return _POOL


def _not_found() -> BindingError:
    return BindingError("NotFound", "the uri's host name does not resolve")


def checked_address(target: Target, answer: Sequence[str], allow_private: bool) -> IpAddress:
    """The first address of ``answer`` once every one has passed (PermissionDenied otherwise)."""
    if not answer:
        raise _not_found()
    addresses: list[IpAddress] = []
    for text in list(answer)[:_MAX_ADDRESSES]:
        try:
            addresses.append(ipaddress.ip_address(text.split("%", 1)[0]))
        except ValueError:
            raise _not_found() from None
    for address in addresses:
        problem = address_problem(address, allow_private)
        if problem is not None:
            raise BindingError("PermissionDenied", f"the uri's host resolves to {problem}")
    return addresses[0]


def pin(target: Target, resolver: Resolver, allow_private: bool, budget: Budget) -> IpAddress:
    """The address to connect to (blocking): the literal itself, or the checked answer."""
    if target.ip_literal is not None:
        return checked_address(target, [str(target.ip_literal)], allow_private)
    future = _pool().submit(resolver, target.host, target.port)
    try:
        answer = future.result(timeout=budget.left())
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise timed_out() from None
    except (OSError, UnicodeError):
        raise _not_found() from None
    return checked_address(target, answer, allow_private)


async def pin_async(target: Target, resolver: Resolver, allow_private: bool, budget: Budget) -> IpAddress:
    """``pin`` on an event loop (the lookup runs on a worker thread, bounded by the budget)."""
    if target.ip_literal is not None:
        return checked_address(target, [str(target.ip_literal)], allow_private)
    try:
        async with asyncio.timeout(budget.left()):
            answer = await asyncio.get_running_loop().run_in_executor(
                _pool(), resolver, target.host, target.port
            )
    except TimeoutError:
        raise timed_out() from None
    except (OSError, UnicodeError):
        raise _not_found() from None
    return checked_address(target, answer, allow_private)
