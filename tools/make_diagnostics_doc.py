"""Write ``spec/diagnostics.md``: every code of ``dotboxd/core/codes.py`` with its category, the stage
that emits it, its meaning and one example.

    python tools/make_diagnostics_doc.py          # rewrite spec/diagnostics.md
    python tools/make_diagnostics_doc.py --check  # fail if it is out of date

The code, category and meaning come from the registry (the one source of truth); the stage and the
example are written here by hand, one per code. A code registered without an example stops the
script, so the document can never silently miss a code (``tests/docs/test_self_contained.py`` also
checks the written file against the registry); an example whose code is no longer registered is
simply not printed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dotboxd.core.codes import all_codes  # noqa: E402

TARGET = ROOT / "spec" / "diagnostics.md"

#: (prefix, stage) pairs, most specific first: the stage that reports codes with that prefix.
STAGES: tuple[tuple[str, str], ...] = (
    ("E-TEXT-", "import (text form)"),
    ("E-PY-", "import (Python form)"),
    ("E-JSON-", "import"),
    ("E-IR-VERSION", "validation: structure"),
    ("E-IR-CAPABILITY", "validation: structure"),
    ("E-IR-", "import (and validation of built ASTs)"),
    ("E-CANON-", "canonicalization (hashing)"),
    ("E-STRUCT-", "validation: structure"),
    ("E-TYPE-", "validation: types"),
    ("E-LOCAL-", "validation: names and scopes"),
    ("E-CALL-", "validation: calls"),
    ("E-CONST-", "validation: literals"),
    ("E-LOOP-", "validation: control flow"),
    ("E-FN-", "validation: control flow"),
    ("E-BINDING-", "binding registry"),
    ("E-POLICY-", "policy (loading and resolution)"),
    ("W-POLICY-", "policy resolution (warning in the plan)"),
    ("E-PLAN-", "plan (execution time re-check)"),
    ("E-PROOF-", "prover (requireStaticBound)"),
    ("E-DIST-", "distributed job (client or worker)"),
    ("R-JOB-", "distributed job (client)"),
    ("R-OPT-", "run: optimized backend"),
    ("E-PLUGIN-", "plugins (trusted, not a boundary)"),
    ("E-SERVER-", "networked server (config, requests, quotas, RPC)"),
    ("E-EVENT-", "event kernels (EventHub install, settings, publish)"),
    ("E-ISOLATION-", "isolated worker (setup)"),
    ("E-HOST-", "host API (execute arguments)"),
    ("R-WORKER-", "isolated worker (job outcome)"),
    ("R-", "run"),
)

EXAMPLES: dict[str, str] = {
    "E-JSON-INVALID": '`{"id": "m",}` (trailing comma)',
    "E-JSON-LIMIT": "a document of 1 MiB + 1 byte, or 65 nested arrays",
    "E-JSON-SCHEMA": '`{"id": "m", "id": "n", ...}` (duplicate property)',
    "E-JSON-MISSING": 'a function without `"returnType"`',
    "E-JSON-TYPE": '`{"i32": 2147483648}`',
    "E-JSON-VERSION": '`"version": "1.0"`',
    "E-JSON-VISIBILITY": '`"visibility": "public"`',
    "E-JSON-STATEMENT": '`{"op": "goto"}` as a statement',
    "E-JSON-OP": '`{"op": "pow", "left": ..., "right": ...}`',
    "E-JSON-EXPR": '`{"number": 1}` as an expression',
    "E-JSON-PATH": '`{"path": "../secret.txt"}`',
    "E-JSON-URI": '`{"uri": "https://user@host/"}`',
    "E-JSON-GUID": '`{"guid": "not-a-guid"}`',
    "E-JSON-OPAQUE": '`{"opaqueId": {"type": "ItemId", "value": "a/b"}}`',
    "E-JSON-ID": '`{"opaqueId": {"type": "ItemId", "value": "..:secret"}}`',
    "E-IR-ID": 'a function id `"main\\u200b"` (zero-width space), or `""`',
    "E-IR-CLR-REF": '`{"call": "System.IO.File.ReadAllText"}`, or a local named `rawIlBytes`',
    "E-TEXT-SYNTAX": "`fn f() -> I32 { return 1 }` (missing `;`)",
    "E-CANON-LIMIT": "string literals nested in calls so deep that the escaped canonical text exceeds its budget",
    "E-IR-VERSION": '`"targetSandboxVersion": "2.0.0"`',
    "E-IR-CAPABILITY": 'a capability request `{"id": "file.*"}`',
    "E-STRUCT-ENTRY": "a module whose functions are all private",
    "E-STRUCT-DUP-FN": "two functions with the id `main`",
    "E-STRUCT-DUP-PARAM": "`fn f(a I32, a I32)`",
    "E-STRUCT-DUP-CAP": "`file.read` requested twice",
    "E-STRUCT-METADATA": '`"metadata": {"dotboxd.unknown": "x"}`',
    "E-STRUCT-SHADOW": "a module function named `math.abs`",
    "E-STRUCT-DEPTH": "an expression nested 201 levels deep",
    "E-TYPE-UNKNOWN": "a parameter of type `Object`",
    "E-TYPE-ARITY": "`Map<String>`",
    "E-TYPE-MAP-KEY": "`Map<F64, I32>`",
    "E-TYPE-DEPTH": "`List<List<List<List<List<List<List<List<List<I32>>>>>>>>>`",
    "E-TYPE-MISMATCH": "`return 1 + 2L;` (I32 plus I64)",
    "E-LOCAL-UNKNOWN": "`return y;` with no `y` in scope",
    "E-LOCAL-TYPE": '`x = 1; x = "a";`',
    "E-LOCAL-SHADOW": "`for i in 0..3 { for i in 0..3 { } }`",
    "E-LOCAL-LOOP-VAR": "`for i in 0..3 { i = 5; }`",
    "E-CALL-UNKNOWN": "`return nosuch.call();`",
    "E-CALL-ARITY": "`math.abs(1, 2)`",
    "E-CALL-SURFACE": '`string.contains(s, "spam")` under a policy whose `languageSurface` is `dotboxd-1`',
    "E-CALL-GENERIC": "`list.empty()` without `[I32]`",
    "E-CALL-RECORD-INDEX": "`record.get(r, 5)` on a two-field record",
    "E-CALL-RECURSION": "`fn f() -> I32 { return f(); }`",
    "E-CONST-HUGE": "a string literal longer than the policy's `maxStringLength`",
    "E-CONST-RANGE": "an AST built in Python with an i32 literal of 2^31",
    "E-CONST-FLOAT": "an AST built in Python with an f64 literal NaN",
    "E-LOOP-CONTROL": "`break;` outside any loop",
    "E-FN-RETURN": "`fn f(b Bool) -> I32 { if b { return 1; } }`",
    "E-BINDING-REQUIRED": "a descriptor without a return type",
    "E-BINDING-ID": 'a binding id `"game..kill"`',
    "E-BINDING-DANGER": 'a binding id `"System.IO.readAll"`',
    "E-BINDING-EFFECT": "a binding with no effects, or with bit 1024",
    "E-BINDING-AUDIT": "an effectful binding with audit level `None`",
    "E-BINDING-SAFETY": "safety `DangerousRequiresReview`",
    "E-BINDING-CAP": "a binding with the FileWrite effect and no capability",
    "E-BINDING-GRANT": "a custom capability `game.kill` without a grant validator",
    "E-BINDING-CAP-EFFECT": "capability `file.read` on a binding whose effects lack FileRead",
    "E-BINDING-COST": "`baseFuel: -1`",
    "E-BINDING-COMPILED": 'a compiled target stub `"os.system"`',
    "E-BINDING-TYPE": "a binding returning a declared brand `PlayerId` or a host type",
    "E-BINDING-DUP": "`math.sqrt` registered twice, or a binding named `math.abs`",
    "E-BINDING-MANIFEST": '`{"manifestVersion": 2, ...}`',
    "E-POLICY-SCHEMA": '`{"grants": "all"}`',
    "E-POLICY-LIMIT": '`"limits": {"maxFuel": -1}`',
    "E-POLICY-BRAND": 'declaring the opaque-id type `"itemId"` (lowercase)',
    "E-POLICY-EFFECT": "a module that needs FileRead under a policy allowing only Cpu|Alloc",
    "E-POLICY-GRANT": "a `net.http.get` grant the module never uses",
    "E-POLICY-GRANT-PARAM": "a `file.read` grant without `root`",
    "E-POLICY-CAP": "a module requesting `file.read` with no grant for it",
    "E-POLICY-DETERMINISM": "a deterministic policy and a module calling `time.nowUnixMillis`",
    "E-POLICY-REVOKED": "running a plan after `policy.revoke('file.read')`",
    "W-POLICY-WILDCARD": "a grant `file.*`",
    "W-POLICY-UNUSED-GRANT": "an unused grant under `rejectUnusedGrants: false`",
    "E-PLAN-BINDINGS": "a plan run after its binding was re-registered with other effects",
    "E-PLAN-INTEGRITY": "a plan whose stored hash no longer matches its parts",
    "E-PROOF-REFUTED": "`while true { }` under `requireStaticBound`",
    "E-PROOF-UNPROVEN": "a loop bounded only by an input under `requireStaticBound` without `inputBounds`, "
    "or a module whose `proveRlimit` is spent before its budgets are proved",
    "R-ARITH-OVERFLOW": "`2147483647 + 1`",
    "R-ARITH-DIVIDE-BY-ZERO": "`1 / 0`",
    "R-ARITH-NOT-FINITE": "`1e308 * 10.0`",
    "R-ARITH-CLAMP-RANGE": "`math.clamp(5, 10, 1)`",
    "R-STRING-RANGE": '`string.substring("abc", 2, 5)`',
    "R-LIST-INDEX": "`list.get(xs, 10)` on a three-element list",
    "R-PARSE-INT": '`parse.int("12a")` or `parse.int("2147483648")`',
    "R-FORMAT": '`format.simple("{1}", list.of("a"))` (no argument 1) or `format.simple("a}b", xs)`',
    "R-RECORD-INDEX": "a record read past its fields by a Python-built plan",
    "R-VALUE-TYPE": '`main(level I32)` called with `"ten"`',
    "R-ENTRY-UNKNOWN": "executing entrypoint `nosuch`",
    "R-INPUT-BOUND": "an input of 1000 where `inputBounds` allows at most 100",
    "R-ENTRY-ARITY": "`main(a I32, b I32)` called with one argument",
    "R-MAP-KEY-MISSING": '`map.get(m, "absent")`',
    "R-QUOTA-FUEL": "`while true { }` under the default `maxFuel`",
    "R-QUOTA-LOOP": "a loop of 10,001 iterations with `maxLoopIterations` 10,000",
    "R-QUOTA-CALL-DEPTH": "a call chain deeper than `maxCallDepth`",
    "R-QUOTA-ALLOCATION": "building strings past `maxAllocatedBytes`",
    "R-QUOTA-LIST-LENGTH": "appending past `maxListLength`",
    "R-QUOTA-MAP-ENTRIES": "putting one entry more than `maxMapEntries`",
    "R-QUOTA-COLLECTION-DEPTH": "nesting lists deeper than `maxCollectionDepth`",
    "R-QUOTA-COLLECTION-ELEMENTS": "more elements in all collections than `maxTotalCollectionElements`",
    "R-QUOTA-STRING-LENGTH": "a concatenation longer than `maxStringLength`",
    "R-QUOTA-STRING-BYTES": "more string bytes in total than `maxTotalStringBytes`",
    "R-QUOTA-HOST-CALLS": "the 101st binding call under `maxHostCalls` 100",
    "R-QUOTA-BINDING-CALLS": "the 101st call of a binding with `maxCallsPerRun` 100",
    "R-QUOTA-LOG-EVENTS": "one `log.info` more than `maxLogEvents`",
    "R-QUOTA-LOG-MESSAGE": "a `log.info` message longer than `maxLogMessageLength`",
    "R-QUOTA-FILE-READ": "`file.readText` of a file larger than the grant's `maxBytesPerRun`",
    "R-QUOTA-FILE-WRITE": "`file.writeText` past the write budget",
    "R-QUOTA-NETWORK-READ": "a binding reporting more network bytes read than allowed",
    "R-QUOTA-NETWORK-WRITE": "a binding reporting more network bytes written than allowed",
    "R-QUOTA-COMMANDS": "a second `file.writeText` under `maxCommands: 1`",
    "R-TIMEOUT": "a run still computing after `maxWallTimeMs`",
    "R-BINDING-TIMEOUT": "a binding that sleeps past the run's remaining wall time",
    "R-CANCELLED": "the host sets the run's cancel token",
    "R-PLAN-BINDING": "compiled code calling a binding its plan does not list",
    "R-CAPABILITY-DENIED": "a binding call after its capability's grant expired",
    "R-ASYNC-DENIED": "an async binding called without the `dotboxd.runtime.async` grant",
    "R-BINDING-FAILED": "a binding that raises `RuntimeError('db password hunter2')` (the text is withheld)",
    "R-BINDING-RETURN": 'a binding declared `-> SandboxPath` returning `"../x"`',
    "R-BINDING-PENDING": "a synchronous binding returning an unfinished coroutine",
    "R-BINDING-AUDIT": "a PerResource binding that writes no audit event",
    "R-BINDING-DENIED": "a binding raising `BindingError('PermissionDenied', ...)`",
    "R-BINDING-NOT-FOUND": "`file.readText` of a missing file",
    "R-BINDING-INVALID": "a binding raising `BindingError('InvalidInput', ...)`",
    "R-BINDING-QUOTA": "a binding raising `BindingError('QuotaExceeded', ...)`",
    "R-HOST-INTERNAL": "an unexpected exception inside the runtime (failed closed)",
    "R-BACKEND-UNAVAILABLE": "`execute(..., backend='gpu')`",
    "R-HOST-COMMAND": "a queued file write refused when the host applies it after the run",
    "E-EVENT-CONTRACT": 'an envelope with `"contract": "chess"` installed into a `game.world` hub',
    "E-EVENT-UNKNOWN": 'a subscription to `{"event": "monster.healed"}` that the contract does not publish',
    "E-EVENT-ENTRYPOINT": "`shouldHandle` declared `-> I32`, or a private `handle`",
    "E-EVENT-PARAM": "`shouldHandle(e_colour String)` on an event without a `colour` field",
    "E-EVENT-SETTING": "`update_settings(..., {'threshold': 500})` when its range is 0..100",
    "E-EVENT-FILTER-IMPURE": "a `shouldHandle` that calls `host.message.send`",
    "E-EVENT-DUPLICATE": "installing pluginId `low-health` twice for one owner",
    "E-EVENT-QUOTA": "a ninth envelope when the owner's quota is eight",
    "E-EVENT-NOT-INSTALLED": "`uninstall(owner, 'nope')`",
    "E-EVENT-FIELDS": "`publish('monster.damaged', {'monster': 1})` without its `health` field",
    "E-PLUGIN-LOAD": "a plugin file without `setup`",
    "E-PLUGIN-CONFLICT": "two plugins both named `tick`",
    "E-PLUGIN-UNKNOWN": "`unload('nope')`",
    "E-ISOLATION-UNAVAILABLE": "libseccomp missing under the strict profile",
    "E-ISOLATION-PROFILE": "`--profile lax` or `--timeout-ms 0`",
    "R-WORKER-FAILED": "a job whose `main` raises",
    "R-WORKER-TIMEOUT": "`while True: pass`",
    "R-WORKER-KILLED": "a job past its CPU rlimit",
    "R-WORKER-RESULT": "a job writing garbage to the result pipe, or a kernel worker forging a binding call",
    "R-WORKER-INTEGRITY": "a kernel worker that re-validates the plan and gets another plan hash than the host's",
    "E-PY-SYNTAX": "`s = '\\d'` (invalid escape) or bytes that are not UTF-8",
    "E-PY-UNSUPPORTED": "`y = lambda q: q`",
    "E-PY-MODULE": 'a kernel file without `module("id", version="1")`',
    "R-ASYNC-LOOP": "a synchronous `execute` of a plan with an async binding, called on a thread whose event loop is running",
    "R-OPT-VERIFIER": "generated Python that calls a name outside the stub allowlist",
    "R-OPT-COMPILE": "the optimized backend asked to run a plan it cannot compile, with fallback off",
    "E-SERVER-CONFIG": "`[limits] ws_queue_size = 0` in server.toml, or a tenant without a token",
    "E-SERVER-REQUEST": 'a request body over `max_body_bytes`, or `{"kernel": 1}`',
    "E-SERVER-NOT-FOUND": "`POST /v1/rpc/no.such.method`, or another tenant's extension id",
    "E-SERVER-QUOTA": "installing a kernel past `max_installed_kernels`, or invoking past `runs_per_second`",
    "E-SERVER-RPC-ARGS": '`{"args": ["3", 40]}` for a method taking `(I32, I32)`',
    "E-SERVER-RPC-FAILED": "an RPC method that raises `RuntimeError`",
    "E-SERVER-BUSY": "a request on a connection past `max_connections` (answered 503)",
    "E-SERVER-UNREACHABLE": "`DotBoxDClient` pointed at a port nothing listens on, or a server that resets the connection",
    "E-HOST-RUN-ID": '`execute(plan, run_id="")`, `run_id=5` or a run id holding a newline',
    "E-DIST-INTEGRITY": "a worker receives module bytes whose hash is not the job's `moduleHash`",
    "E-DIST-SETUP": "worker setup `myapp.workers:missing` names no importable function",
    "E-DIST-OPTION": '`on_error="ignore"`, or a partition that is not a list',
    "R-JOB-RECORD": '`on_error="fail"` and a record\'s run ends with `R-QUOTA-FUEL`',
}

HEADER = """# Diagnostics and error codes

Every code DotBoxD emits is registered once in `dotboxd/core/codes.py` with its SandboxError category
and meaning; this table lists each of them with the stage that reports it and one example input.
A test keeps the table and the registry in step (every registered code appears here, with the
registry's category). Codes are stable: tools and hosts may match on them.

Categories are DotBoxD's `SandboxError` codes. ValidationError: the input was rejected before a plan
existed (or, at run time, a binding is not in the plan). PolicyDenied: the policy refuses a
capability, effect or binding. PermissionDenied: a binding refuses (missing capability, async without
the grant, outside its root). NotFound: a file, record or map key is missing. InvalidInput: a bad
argument, overflow, division by zero, a non-finite result, a bad range or an entrypoint mismatch.
QuotaExceeded: a metered limit (the message never reveals the limit). Timeout: the run's or a
binding's wall time. Cancelled: the host cancelled. BindingFailure: a binding failed; its exception
text is withheld. VerifierFailure: generated code was refused (a security event). CacheInvalid: a
cache identity check failed. HostFailure: an infrastructure fault.

Prefixes: `E-*` are diagnostics of import, validation, policy and the prover, reported with a JSON
pointer and, when the source is known, a `line:column` (`spec/ir.md` section 8); `W-*` are warnings
kept in the plan; `R-*` are run-time errors carried by a run's result (`spec/semantics.md` section 9).
Human renderings escape every invisible character (`spec/ir.md` section 8).

| code | category | stage | meaning | example |
|---|---|---|---|---|
"""


def stage_of(code: str) -> str:
    for prefix, stage in STAGES:
        if code.startswith(prefix):
            return stage
    raise SystemExit(f"no stage for {code}")


def build() -> str:
    codes = all_codes()
    missing = sorted(set(codes) - set(EXAMPLES))
    if missing:
        raise SystemExit(f"write an example for {missing} in {Path(__file__).name}")
    rows = [
        f"| `{code}` | {info.category.value} | {stage_of(code)} | {info.summary.replace('|', '/')} | "
        f"{EXAMPLES[code].replace('|', '/')} |"
        for code, info in codes.items()
    ]
    return HEADER + "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if spec/diagnostics.md is out of date")
    args = parser.parse_args(argv)
    text = build()
    if args.check:
        if not TARGET.exists() or TARGET.read_text(encoding="utf-8") != text:
            print(f"{TARGET} is out of date; run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
