"""Generate the cases of the standard clock, random and log facades and the ``net.http.get`` refusals:
``conformance/cases/bindings/standard-facades.json``.

    python conformance/tools/make_facade_cases.py          # rewrite the case file
    python conformance/tools/make_facade_cases.py --check  # fail if the file is out of date

Each case registers the binding it calls with the ``{"id": ..., "standard": true}`` marker (README
section 2.3), so the host attaches its facade. Only deterministic behaviour is pinned: the logical
clock, seeded random replay, log budgets at N and N+1, the empty random range and the HTTP facade's refusals that need no network
(``spec/semantics.md`` section 13). The seeded draws are computed here from the algorithm that
section documents, with ``hashlib`` alone: nothing here imports or runs the runtime, so the facade
is checked against the spec, never the other way round.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from dotboxd.conformance.tools.kit import render, write_or_check

OUTPUT = "bindings/standard-facades.json"
GENEROUS_WALL_MS = 60_000  # no expectation may depend on the machine's speed (README section 8)
TAGS = ("bindings", "standard-facade")

Case = dict[str, Any]


def seeded_draw(seed: int, k: int, lo: int, hi: int) -> int:
    """The k-th draw of a run under ``randomSeed`` = seed (spec/semantics.md section 13): the first
    8 bytes (unsigned big-endian) of SHA-256 of ``dotboxd.random.nextI32:<s>:<k>:<attempt>`` for
    attempt = 0, 1, ..., the first below 2^64 - (2^64 mod span), gives lo + (x mod span)."""
    span = hi - lo
    bound = 2**64 - (2**64 % span)
    attempt = 0
    while True:
        digest = hashlib.sha256(f"dotboxd.random.nextI32:{seed}:{k}:{attempt}".encode("ascii")).digest()
        x = int.from_bytes(digest[:8], "big")
        if x < bound:
            return lo + x % span
        attempt += 1


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def kernel(signature: str, body: str) -> str:
    return f'module "facades" version "1.0.0";\nentrypoint fn main({signature}) -> {body}'


def policy(
    grants: list[dict[str, Any]], limits: dict[str, int] | None = None, **extra: Any
) -> dict[str, Any]:
    return {"grants": grants, "limits": {"maxWallTimeMs": GENEROUS_WALL_MS, **(limits or {})}, **extra}


def standard(*ids: str) -> list[dict[str, Any]]:
    return [{"id": bid, "standard": True} for bid in ids]


def case(
    name: str,
    description: str,
    tags: tuple[str, ...],
    text: str,
    pol: dict[str, Any],
    bindings: list[dict[str, Any]],
    expect: dict[str, Any],
    args: list[Any] | None = None,
) -> Case:
    out: Case = {
        "name": name,
        "description": description,
        "tags": [expect["stage"], *TAGS, *tags],
        "kernelText": text,
        "policy": pol,
        "bindings": bindings,
    }
    if args is not None:
        out["args"] = args
    out["expect"] = expect
    return out


def clock_cases() -> list[Case]:
    now = 1_700_000_000_123
    text = kernel("", "I64 {\n    return time.nowUnixMillis();\n}\n")
    return [
        case(
            "run-facade-time-logical-now",
            "under a deterministic policy time.nowUnixMillis returns logicalNowUnixMillis (spec/semantics.md 13)",
            ("time", "deterministic"),
            text,
            policy([{"id": "time.now"}], deterministic={"logicalNowUnixMillis": now}),
            standard("time.nowUnixMillis"),
            {
                "stage": "run",
                "outcome": "ok",
                "value": now,
                "usage": {"hostCalls": 1},
                "bindingCalls": {"time.nowUnixMillis": 1},
            },
        ),
        case(
            "run-facade-time-logical-now-every-call",
            "the logical time is the same for every call of a run (spec/semantics.md 13)",
            ("time", "deterministic"),
            kernel(
                "",
                "I64 {\n    a = time.nowUnixMillis();\n    b = time.nowUnixMillis();\n    return b - a;\n}\n",
            ),
            policy([{"id": "time.now"}], deterministic={"logicalNowUnixMillis": now}),
            standard("time.nowUnixMillis"),
            {
                "stage": "run",
                "outcome": "ok",
                "value": 0,
                "usage": {"hostCalls": 2},
                "bindingCalls": {"time.nowUnixMillis": 2},
            },
        ),
    ]


DRAWS = kernel(
    "lo I32, hi I32",
    "List<I32> {\n    return list.of(random.nextI32(lo, hi), random.nextI32(lo, hi), random.nextI32(lo, hi));\n}\n",
)


def random_cases() -> list[Case]:
    out = []
    for label, seed, lo, hi in (("small", 7, 0, 100), ("full", -12345, -(2**31), 2**31 - 1)):
        out.append(
            case(
                f"run-facade-random-seeded-{label}-range",
                "under a deterministic policy the k-th random.nextI32 of a run is the documented seeded "
                "draw k (spec/semantics.md 13)",
                ("random", "deterministic"),
                DRAWS,
                policy([{"id": "random"}], deterministic={"randomSeed": seed}),
                standard("random.nextI32"),
                {
                    "stage": "run",
                    "outcome": "ok",
                    "value": [seeded_draw(seed, k, lo, hi) for k in (1, 2, 3)],
                    "usage": {"hostCalls": 3},
                    "bindingCalls": {"random.nextI32": 3},
                },
                args=[lo, hi],
            )
        )
    out.append(
        case(
            "run-facade-random-empty-range",
            "random.nextI32 with minInclusive >= maxExclusive is InvalidInput R-BINDING-INVALID, and the "
            "call is counted (spec/semantics.md 13)",
            ("random", "deterministic", "error:InvalidInput"),
            DRAWS,
            policy([{"id": "random"}], deterministic={"randomSeed": 1}),
            standard("random.nextI32"),
            {
                "stage": "run",
                "outcome": "error",
                "error": "InvalidInput",
                "diagnostic": "R-BINDING-INVALID",
                "bindingCalls": {"random.nextI32": 1},
            },
            args=[5, 5],
        )
    )
    return out


LOGS = kernel(
    "n I32",
    'I32 {\n    for i in 0..n {\n        log.info("tick");\n        log.warn("tock");\n    }\n    return n;\n}\n',
)
MESSAGE = kernel("m String", "I32 {\n    log.info(m);\n    return string.length(m);\n}\n")
LOG_GRANT = [{"id": "log.write"}]


def log_cases() -> list[Case]:
    rounds = 2
    events = 2 * rounds  # one log.info and one log.warn per round
    at_limit = "ab\U0001f600cd"  # the emoji is two UTF-16 units
    over = at_limit + "e"
    limit = utf16_length(at_limit)
    return [
        case(
            "run-facade-log-events-at-limit",
            "maxLogEvents log calls are allowed, each one log event (spec/semantics.md 13)",
            ("log", "limits", "limit:maxLogEvents", "at-limit"),
            LOGS,
            policy(LOG_GRANT, {"maxLogEvents": events}),
            standard("log.info", "log.warn"),
            {
                "stage": "run",
                "outcome": "ok",
                "value": rounds,
                "usage": {"logEvents": events},
                "bindingCalls": {"log.info": rounds, "log.warn": rounds},
            },
            args=[rounds],
        ),
        case(
            "run-facade-log-events-over-limit",
            "one log call more than maxLogEvents is QuotaExceeded R-QUOTA-LOG-EVENTS, and the refused event "
            "is counted (spec/semantics.md 13, spec/costs.md 9)",
            ("log", "limits", "limit:maxLogEvents", "over-limit"),
            LOGS,
            policy(LOG_GRANT, {"maxLogEvents": events - 1}),
            standard("log.info", "log.warn"),
            {
                "stage": "run",
                "outcome": "error",
                "error": "QuotaExceeded",
                "diagnostic": "R-QUOTA-LOG-EVENTS",
                "usage": {"logEvents": events},  # the refused attempt counts
                "bindingCalls": {"log.info": rounds, "log.warn": rounds},
            },
            args=[rounds],
        ),
        case(
            "run-facade-log-message-at-limit",
            "a log message of maxLogMessageLength UTF-16 units is allowed (spec/semantics.md 13)",
            ("log", "limits", "limit:maxLogMessageLength", "at-limit"),
            MESSAGE,
            policy(LOG_GRANT, {"maxLogMessageLength": limit}),
            standard("log.info"),
            {
                "stage": "run",
                "outcome": "ok",
                "value": limit,
                "usage": {"logEvents": 1},
                "bindingCalls": {"log.info": 1},
            },
            args=[at_limit],
        ),
        case(
            "run-facade-log-message-over-limit",
            "a log message one UTF-16 unit over maxLogMessageLength is QuotaExceeded R-QUOTA-LOG-MESSAGE "
            "and is not counted as an event (spec/semantics.md 13)",
            ("log", "limits", "limit:maxLogMessageLength", "over-limit"),
            MESSAGE,
            policy(LOG_GRANT, {"maxLogMessageLength": limit}),
            standard("log.info"),
            {
                "stage": "run",
                "outcome": "error",
                "error": "QuotaExceeded",
                "diagnostic": "R-QUOTA-LOG-MESSAGE",
                "usage": {"logEvents": 0},
                "bindingCalls": {"log.info": 1},
            },
            args=[over],
        ),
    ]


def http_cases() -> list[Case]:
    """The HTTP facade's refusals that are decided before any name lookup or connection (so no case
    touches the network): host, port, scheme and IP-literal rules (spec/semantics.md 13)."""
    grant = {"id": "net.http.get", "parameters": {"allowedHosts": "example.com", "maxResponseBytes": "100"}}
    literal_parameters = {
        "allowedHosts": "example.com,127.0.0.1,10.0.0.1",
        "allowedSchemes": "http,https",
        "maxResponseBytes": "100",
    }
    literal_grant = {"id": "net.http.get", "parameters": literal_parameters}
    private_grant = {"id": "net.http.get", "parameters": {**literal_parameters, "allowIpLiterals": "true"}}
    refusals = [
        ("host-not-allowed", "a host outside allowedHosts", grant, "https://example.org/a?token=s3cret"),
        (
            "port-not-allowed",
            "a port other than the entry's (default 443 for https)",
            grant,
            "https://example.com:8443/a",
        ),
        (
            "scheme-not-allowed",
            "http when allowedSchemes is the default (https only)",
            grant,
            "http://example.com/a",
        ),
        ("scheme-not-http", "a scheme that is not http or https", grant, "ftp://example.com/a"),
        (
            "ip-literal",
            "an IP-address host without allowIpLiterals, even when allowedHosts lists it",
            literal_grant,
            "http://127.0.0.1/a",
        ),
        (
            "ip-literal-legacy-form",
            "a decimal IPv4 host (2130706433 = 127.0.0.1) is an IP literal too",
            literal_grant,
            "http://2130706433/a",
        ),
        (
            "loopback-without-private-network",
            "a loopback literal with allowIpLiterals but without allowPrivateNetwork",
            private_grant,
            "http://127.0.0.1/a",
        ),
        (
            "private-without-private-network",
            "a private (RFC 1918) literal without allowPrivateNetwork",
            private_grant,
            "http://10.0.0.1/a",
        ),
    ]
    return [
        case(
            f"run-facade-http-get-refuses-{name}",
            f"net.http.get refuses {what} with PermissionDenied R-BINDING-DENIED before any lookup or "
            "connection: nothing is read or written (spec/semantics.md 13)",
            ("http", "ssrf", "error:PermissionDenied"),
            kernel("u SandboxUri", "String {\n    return net.http.get(u);\n}\n"),
            policy([g], allowRuntimeAsync=True),
            standard("net.http.get"),
            {
                "stage": "run",
                "outcome": "error",
                "error": "PermissionDenied",
                "diagnostic": "R-BINDING-DENIED",
                "bindingCalls": {"net.http.get": 1},
            },
            args=[uri],
        )
        for name, what, g, uri in refusals
    ]


def marker_cases() -> list[Case]:
    """The marker never replaces a binding silently: a second entry with the same id is a duplicate."""
    own = {
        "id": "time.nowUnixMillis",
        "parameters": [],
        "returnType": "I64",
        "effects": ["Cpu", "Time"],
        "capability": "time.now",
        "cost": {"baseFuel": 2},
        "audit": "PerCall",
        "safety": "ReadOnlyExternal",
        "behavior": {"kind": "return", "value": 1},
    }
    return [
        case(
            "validate-facade-standard-and-own-binding-same-id",
            "a case that marks time.nowUnixMillis standard and also declares its own time.nowUnixMillis "
            "registers one id twice: E-BINDING-DUP (spec/validation.md section 8)",
            ("time", "E-BINDING-DUP"),
            kernel("", "I64 {\n    return time.nowUnixMillis();\n}\n"),
            policy([{"id": "time.now"}]),
            [*standard("time.nowUnixMillis"), own],
            {
                "stage": "validate",
                "outcome": "rejected",
                "error": "ValidationError",
                "diagnostic": "E-BINDING-DUP",
            },
        )
    ]


def build() -> str:
    cases = [*clock_cases(), *random_cases(), *log_cases(), *http_cases(), *marker_cases()]
    return render(cases)


def main(argv: list[str] | None = None) -> int:
    text = build()
    return write_or_check(
        __file__, {OUTPUT: text}, argv, summary=f"{len(json.loads(text)['cases'])} cases in {OUTPUT}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
