"""The single registry of DotBoxD diagnostic and runtime error codes.

Every code the project emits is listed here exactly once with its SandboxError category and a
one-line meaning; ``spec/diagnostics.md`` documents the same table and a test keeps them in step.
Import/validation codes follow DotBoxD's families (``E-JSON-*``, ``E-IR-*``, ``E-STRUCT-*``, ...);
run-time failures use ``R-*`` codes so a result always names a stable reason, not just a category.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Category(StrEnum):
    """SandboxError categories (DotBoxD spec section 8)."""

    VALIDATION = "ValidationError"
    POLICY_DENIED = "PolicyDenied"
    PERMISSION_DENIED = "PermissionDenied"
    NOT_FOUND = "NotFound"
    INVALID_INPUT = "InvalidInput"
    QUOTA_EXCEEDED = "QuotaExceeded"
    TIMEOUT = "Timeout"
    CANCELLED = "Cancelled"
    BINDING_FAILURE = "BindingFailure"
    VERIFIER_FAILURE = "VerifierFailure"
    CACHE_INVALID = "CacheInvalid"
    HOST_FAILURE = "HostFailure"


@dataclass(frozen=True, slots=True)
class CodeInfo:
    code: str
    category: Category
    summary: str


_V = Category.VALIDATION

_TABLE: tuple[CodeInfo, ...] = (
    # --- wire import (strict JSON) -------------------------------------------------------------
    CodeInfo("E-JSON-INVALID", _V, "malformed JSON or UTF-8 (comments, trailing commas, NaN, surrogates)"),
    CodeInfo("E-JSON-LIMIT", _V, "an import budget was exceeded (size, depth, tokens, items, string bytes)"),
    CodeInfo("E-JSON-SCHEMA", _V, "an unknown or duplicate property"),
    CodeInfo("E-JSON-MISSING", _V, "a required property is missing"),
    CodeInfo("E-JSON-TYPE", _V, "a value has the wrong JSON kind, or a number is out of range"),
    CodeInfo("E-JSON-VERSION", _V, "a version string does not match ^v?N(.N.N)?$"),
    CodeInfo("E-JSON-VISIBILITY", _V, "visibility is neither 'entrypoint' nor 'private'"),
    CodeInfo("E-JSON-STATEMENT", _V, "unknown statement op or statement shape"),
    CodeInfo("E-JSON-OP", _V, "unknown binary or unary operator"),
    CodeInfo("E-JSON-EXPR", _V, "an object that is no known expression shape"),
    CodeInfo("E-JSON-PATH", _V, "a path literal that is not a canonical portable relative path"),
    CodeInfo("E-JSON-URI", _V, "a uri literal that is not an absolute scheme://host URI without userinfo"),
    CodeInfo("E-JSON-GUID", _V, "a guid literal that is not 8-4-4-4-12 hex"),
    CodeInfo("E-JSON-OPAQUE", _V, "an opaqueId literal whose brand or value breaks the opaque-id rules"),
    CodeInfo("E-JSON-ID", _V, "an opaque-id value carries a path traversal ('..')"),
    CodeInfo(
        "E-IR-ID", _V, "an identifier is blank or holds a control, bidi, zero-width or separator character"
    ),
    CodeInfo("E-IR-CLR-REF", _V, "a name or literal smuggles a host/CLR reference"),
    CodeInfo("E-TEXT-SYNTAX", _V, "the readable text form does not parse"),
    CodeInfo("E-PY-SYNTAX", _V, "a Python kernel file is not UTF-8 or does not parse as Python"),
    CodeInfo(
        "E-PY-UNSUPPORTED", _V, "a Python construct outside the kernel subset (import, class, lambda, ...)"
    ),
    CodeInfo("E-PY-MODULE", _V, "a Python kernel file lacks, repeats or misspells its module(...) header"),
    # --- canonical form ------------------------------------------------------------------------
    CodeInfo(
        "E-CANON-LIMIT", _V, "the canonical form would exceed its budget (escapes double per nesting level)"
    ),
    # --- validation (issue 3: validator passes, bindings, policy, plan) ---------------------------
    CodeInfo("E-IR-VERSION", _V, "targetSandboxVersion is not a supported 1.x version (<= 1.0.0)"),
    CodeInfo(
        "E-IR-CAPABILITY", _V, "a capability request is not a concrete capability id (wildcard, trailing '.')"
    ),
    CodeInfo("E-STRUCT-ENTRY", _V, "the module has no entrypoint function"),
    CodeInfo("E-STRUCT-DUP-FN", _V, "two functions share an id"),
    CodeInfo("E-STRUCT-DUP-PARAM", _V, "two parameters of a function share a name"),
    CodeInfo("E-STRUCT-DUP-CAP", _V, "a capability is requested twice"),
    CodeInfo("E-STRUCT-METADATA", _V, "reserved dotboxd.* metadata is unknown or malformed"),
    CodeInfo("E-STRUCT-DEPTH", _V, "statements and expressions nest deeper than the validator's limit (200)"),
    CodeInfo("E-TYPE-UNKNOWN", _V, "an unknown, forbidden, deferred or undeclared (opaque-id) type"),
    CodeInfo("E-TYPE-ARITY", _V, "a type has the wrong number of type arguments"),
    CodeInfo("E-TYPE-MAP-KEY", _V, "a map key type that is not Bool, I32, I64, String, path, uri or a brand"),
    CodeInfo("E-TYPE-DEPTH", _V, "a type nests composites deeper than 8"),
    CodeInfo(
        "E-TYPE-MISMATCH", _V, "an operand, argument, condition, assignment or return has the wrong type"
    ),
    CodeInfo(
        "E-LOCAL-UNKNOWN", _V, "a variable is read where no local or parameter of that name is in scope"
    ),
    CodeInfo("E-LOCAL-TYPE", _V, "a local is assigned a value of another type than its first assignment"),
    CodeInfo("E-LOCAL-SHADOW", _V, "a forRange local reuses a name that is already in scope"),
    CodeInfo("E-LOCAL-LOOP-VAR", _V, "a forRange loop variable is assigned inside its loop"),
    CodeInfo("E-CALL-UNKNOWN", _V, "a call names no built-in, module function or registered binding"),
    CodeInfo(
        "E-CALL-SURFACE", _V, "a call names a built-in outside the policy's languageSurface (an extension)"
    ),
    CodeInfo("E-CALL-ARITY", _V, "a call has the wrong number of arguments"),
    CodeInfo("E-CALL-GENERIC", _V, "genericType is missing where required or present where not allowed"),
    CodeInfo("E-CALL-RECORD-INDEX", _V, "record.get index is not a constant i32 within the record"),
    CodeInfo("E-CALL-RECURSION", _V, "functions call themselves, directly or through other functions"),
    CodeInfo("E-CONST-HUGE", _V, "a string literal is longer than the constant limit"),
    CodeInfo("E-CONST-RANGE", _V, "an integer literal is outside the range of its type"),
    CodeInfo("E-CONST-FLOAT", _V, "an f64 literal is NaN or infinite"),
    CodeInfo("E-LOOP-CONTROL", _V, "break or continue outside a loop"),
    CodeInfo("E-FN-RETURN", _V, "a path through a function ends without return"),
    CodeInfo("E-BINDING-REQUIRED", _V, "a binding descriptor lacks a required field"),
    CodeInfo("E-BINDING-ID", _V, "a binding id is not a dotted identifier"),
    CodeInfo("E-BINDING-DANGER", _V, "a binding id or capability is rooted in a host (CLR) namespace"),
    CodeInfo("E-BINDING-EFFECT", _V, "binding effects are empty or carry unknown bits"),
    CodeInfo("E-BINDING-AUDIT", _V, "unknown audit level/kind, or an effectful binding without audit"),
    CodeInfo(
        "E-BINDING-SAFETY", _V, "unknown or refused safety class (DangerousRequiresReview, false purity)"
    ),
    CodeInfo(
        "E-BINDING-CAP", _V, "capability missing for side effects, gating only pure effects, or malformed"
    ),
    CodeInfo("E-BINDING-GRANT", _V, "a custom capability has no grant validator"),
    CodeInfo("E-BINDING-CAP-EFFECT", _V, "a built-in capability is paired with the wrong effects"),
    CodeInfo("E-BINDING-COST", _V, "a cost model value is negative or not an integer"),
    CodeInfo("E-BINDING-COMPILED", _V, "the compiled stub is not allowlisted or does not fit the binding"),
    CodeInfo("E-BINDING-TYPE", _V, "a binding type is not a built-in sandbox type (object, brand, hint...)"),
    CodeInfo("E-BINDING-DUP", _V, "a binding id is registered twice or equals a built-in call name"),
    CodeInfo("E-BINDING-MANIFEST", _V, "a binding manifest is malformed"),
    CodeInfo("E-POLICY-SCHEMA", Category.POLICY_DENIED, "a policy file is malformed"),
    CodeInfo(
        "E-POLICY-LIMIT", Category.POLICY_DENIED, "a policy limit is negative, not an integer or unknown"
    ),
    CodeInfo("E-POLICY-BRAND", Category.POLICY_DENIED, "a declared opaque-id type name is invalid"),
    CodeInfo("E-POLICY-EFFECT", Category.POLICY_DENIED, "required effects are not allowed, or unknown bits"),
    CodeInfo(
        "E-POLICY-GRANT",
        Category.POLICY_DENIED,
        "a grant is malformed, duplicated or reserved, names a capability no registered binding requires, "
        "or (strict mode) is unused",
    ),
    CodeInfo(
        "E-POLICY-GRANT-PARAM", Category.POLICY_DENIED, "a grant's parameters break its capability's rules"
    ),
    CodeInfo("E-POLICY-CAP", Category.POLICY_DENIED, "a requested or required capability is not granted"),
    CodeInfo(
        "E-POLICY-DETERMINISM",
        Category.POLICY_DENIED,
        "a deterministic policy meets time, random, IO or async",
    ),
    CodeInfo("E-POLICY-REVOKED", Category.POLICY_DENIED, "a capability the plan needs was revoked"),
    CodeInfo(
        "W-POLICY-WILDCARD", Category.POLICY_DENIED, "warning only: a wildcard grant covers many capabilities"
    ),
    CodeInfo(
        "W-POLICY-UNUSED-GRANT",
        Category.POLICY_DENIED,
        "warning only: a grant the module does not use (strict mode rejects it)",
    ),
    CodeInfo("E-PLAN-BINDINGS", _V, "a binding of the plan is missing or changed in the current catalogue"),
    CodeInfo("E-PLAN-INTEGRITY", _V, "a plan's hash does not match its contents"),
    # --- prover (issue 6: static bounds; strict mode = policy requireStaticBound) ----------------
    CodeInfo(
        "E-PROOF-REFUTED", Category.POLICY_DENIED, "requireStaticBound: a budget is refuted by an input"
    ),
    CodeInfo("E-PROOF-UNPROVEN", Category.POLICY_DENIED, "requireStaticBound: a budget is not proved"),
    # --- run time (issue 4: reference interpreter, meter, host API) -------------------------------
    CodeInfo("R-ARITH-OVERFLOW", Category.INVALID_INPUT, "integer result out of range (and MIN/-1, MIN%-1)"),
    CodeInfo("R-ARITH-DIVIDE-BY-ZERO", Category.INVALID_INPUT, "integer division or remainder by zero"),
    CodeInfo("R-ARITH-NOT-FINITE", Category.INVALID_INPUT, "an F64 operation produced NaN or an infinity"),
    CodeInfo("R-ARITH-CLAMP-RANGE", Category.INVALID_INPUT, "math.clamp called with low > high"),
    CodeInfo("R-STRING-RANGE", Category.INVALID_INPUT, "substring outside the string or cutting a pair"),
    CodeInfo("R-LIST-INDEX", Category.INVALID_INPUT, "list.get or list.slice index out of range"),
    CodeInfo("R-PARSE-INT", Category.INVALID_INPUT, "parse.int of text that is not a decimal I32"),
    CodeInfo(
        "R-FORMAT", Category.INVALID_INPUT, "format.simple template with a bad brace or a missing argument"
    ),
    CodeInfo("R-RECORD-INDEX", Category.INVALID_INPUT, "record.get index out of range"),
    CodeInfo("R-VALUE-TYPE", Category.INVALID_INPUT, "an input value does not match its declared type"),
    CodeInfo("R-ENTRY-UNKNOWN", Category.INVALID_INPUT, "the entrypoint does not exist or is not visible"),
    CodeInfo("R-INPUT-BOUND", Category.INVALID_INPUT, "an input is outside the policy's inputBounds"),
    CodeInfo("R-ENTRY-ARITY", Category.INVALID_INPUT, "not one input per parameter, in a list or tuple"),
    CodeInfo("R-MAP-KEY-MISSING", Category.NOT_FOUND, "map.get on a key the map does not hold"),
    CodeInfo("R-QUOTA-FUEL", Category.QUOTA_EXCEEDED, "fuel exhausted (MaxFuel)"),
    CodeInfo("R-QUOTA-LOOP", Category.QUOTA_EXCEEDED, "loop iteration budget exhausted (MaxLoopIterations)"),
    CodeInfo("R-QUOTA-CALL-DEPTH", Category.QUOTA_EXCEEDED, "call depth exceeded (MaxCallDepth)"),
    CodeInfo("R-QUOTA-ALLOCATION", Category.QUOTA_EXCEEDED, "MaxAllocatedBytes exhausted"),
    CodeInfo("R-QUOTA-LIST-LENGTH", Category.QUOTA_EXCEEDED, "a list longer than MaxListLength"),
    CodeInfo("R-QUOTA-MAP-ENTRIES", Category.QUOTA_EXCEEDED, "a map with more than MaxMapEntries entries"),
    CodeInfo("R-QUOTA-COLLECTION-DEPTH", Category.QUOTA_EXCEEDED, "collections nested deeper than allowed"),
    CodeInfo("R-QUOTA-COLLECTION-ELEMENTS", Category.QUOTA_EXCEEDED, "MaxTotalCollectionElements exhausted"),
    CodeInfo("R-QUOTA-STRING-LENGTH", Category.QUOTA_EXCEEDED, "a string longer than MaxStringLength"),
    CodeInfo("R-QUOTA-STRING-BYTES", Category.QUOTA_EXCEEDED, "MaxTotalStringBytes exhausted"),
    CodeInfo("R-QUOTA-HOST-CALLS", Category.QUOTA_EXCEEDED, "host call budget exhausted (MaxHostCalls)"),
    CodeInfo("R-QUOTA-BINDING-CALLS", Category.QUOTA_EXCEEDED, "a binding's maxCallsPerRun exhausted"),
    CodeInfo("R-QUOTA-LOG-EVENTS", Category.QUOTA_EXCEEDED, "log event budget exhausted (MaxLogEvents)"),
    CodeInfo("R-QUOTA-LOG-MESSAGE", Category.QUOTA_EXCEEDED, "a log message longer than MaxLogMessageLength"),
    CodeInfo("R-QUOTA-FILE-READ", Category.QUOTA_EXCEEDED, "file read byte budget exhausted"),
    CodeInfo("R-QUOTA-FILE-WRITE", Category.QUOTA_EXCEEDED, "file write byte budget exhausted"),
    CodeInfo("R-QUOTA-NETWORK-READ", Category.QUOTA_EXCEEDED, "network read byte budget exhausted"),
    CodeInfo("R-QUOTA-NETWORK-WRITE", Category.QUOTA_EXCEEDED, "network write byte budget exhausted"),
    CodeInfo(
        "R-QUOTA-COMMANDS", Category.QUOTA_EXCEEDED, "host-state command budget exhausted (MaxCommands)"
    ),
    CodeInfo("R-TIMEOUT", Category.TIMEOUT, "the run's wall-time budget is exhausted (MaxWallTime)"),
    CodeInfo("R-BINDING-TIMEOUT", Category.TIMEOUT, "a binding outlived the remaining wall time"),
    CodeInfo("R-CANCELLED", Category.CANCELLED, "the host cancelled the run"),
    CodeInfo("R-PLAN-BINDING", _V, "a binding call that the execution plan does not reference"),
    CodeInfo("R-CAPABILITY-DENIED", Category.PERMISSION_DENIED, "a binding's capability is not granted"),
    CodeInfo("R-ASYNC-DENIED", Category.PERMISSION_DENIED, "an async binding without dotboxd.runtime.async"),
    CodeInfo("R-BINDING-FAILED", Category.BINDING_FAILURE, "a binding raised (its exception is withheld)"),
    CodeInfo("R-BINDING-RETURN", Category.BINDING_FAILURE, "a binding returned an ill-typed value"),
    CodeInfo("R-BINDING-PENDING", Category.BINDING_FAILURE, "a pending awaitable without the async grant"),
    CodeInfo("R-BINDING-AUDIT", Category.BINDING_FAILURE, "a binding did not write its required audit event"),
    CodeInfo("R-BINDING-DENIED", Category.PERMISSION_DENIED, "a binding refused the request"),
    CodeInfo("R-BINDING-NOT-FOUND", Category.NOT_FOUND, "a binding reported a missing resource"),
    CodeInfo("R-BINDING-INVALID", Category.INVALID_INPUT, "a binding rejected its arguments"),
    CodeInfo("R-BINDING-QUOTA", Category.QUOTA_EXCEEDED, "a binding reported a quota of its own exhausted"),
    CodeInfo("R-HOST-INTERNAL", Category.HOST_FAILURE, "an internal runtime fault (failed closed)"),
    CodeInfo("R-BACKEND-UNAVAILABLE", Category.HOST_FAILURE, "the requested backend is not available"),
    CodeInfo(
        "R-ASYNC-LOOP",
        Category.HOST_FAILURE,
        "a sync execute cannot await an async binding (its loop is not running, or is this thread's)",
    ),
    CodeInfo(
        "R-HOST-COMMAND",
        Category.HOST_FAILURE,
        "a host command could not be applied after a successful run (committed commands rolled back)",
    ),
    # --- postures 2 and 3 (issue 14): trusted plugins, the OS-boundary worker ------------------
    CodeInfo(
        "E-PLUGIN-LOAD",
        Category.HOST_FAILURE,
        "a plugin could not be loaded (missing, raised, or no contract)",
    ),
    CodeInfo("E-PLUGIN-CONFLICT", Category.HOST_FAILURE, "a plugin name, method, event or binding is taken"),
    CodeInfo("E-PLUGIN-UNKNOWN", Category.HOST_FAILURE, "no plugin of that name is loaded"),
    CodeInfo(
        "E-ISOLATION-UNAVAILABLE",
        Category.HOST_FAILURE,
        "a layer the isolation profile requires cannot be set up on this machine (the run is refused)",
    ),
    CodeInfo("E-ISOLATION-PROFILE", Category.INVALID_INPUT, "an unknown isolation profile or a bad limit"),
    CodeInfo(
        "E-HOST-RUN-ID",
        Category.INVALID_INPUT,
        "a run id given to execute is not 1-128 printable ASCII characters without spaces",
    ),
    CodeInfo("R-WORKER-FAILED", Category.INVALID_INPUT, "the isolated job raised or exited without a result"),
    CodeInfo("R-WORKER-TIMEOUT", Category.TIMEOUT, "the watchdog killed the worker at its wall-time limit"),
    CodeInfo("R-WORKER-KILLED", Category.QUOTA_EXCEEDED, "the worker was killed by a signal (an rlimit)"),
    CodeInfo(
        "R-WORKER-RESULT",
        Category.HOST_FAILURE,
        "a frame from the worker is malformed, too big, or not allowed by the plan (a forged binding "
        "call, meter, event or result)",
    ),
    CodeInfo(
        "R-WORKER-INTEGRITY",
        Category.HOST_FAILURE,
        "a kernel worker refused the plan: a module, policy, binding-manifest or plan hash it "
        "computed differs from the host's",
    ),
    # --- distributed jobs (issue 21) ----------------------------------------------------------
    CodeInfo(
        "E-DIST-INTEGRITY",
        _V,
        "a distributed job's module, policy, binding manifest or plan hash differs on the worker",
    ),
    CodeInfo(
        "E-DIST-SETUP",
        _V,
        "a distributed job's worker setup function is missing, fails or returns no bindings",
    ),
    CodeInfo(
        "E-DIST-OPTION", Category.INVALID_INPUT, "a distributed job was called with a bad option or partition"
    ),
    CodeInfo(
        "R-JOB-RECORD",
        Category.HOST_FAILURE,
        "a record of a distributed job failed and the job was told to fail",
    ),
    # --- the networked server (issue 15): config and request outcomes, never a kernel run ---------
    CodeInfo(
        "E-SERVER-CONFIG",
        Category.INVALID_INPUT,
        "server.toml is malformed, or names a bad tenant, policy or plugin",
    ),
    CodeInfo(
        "E-SERVER-REQUEST",
        Category.INVALID_INPUT,
        "a request body is not the expected shape, too large, or arrived too slowly",
    ),
    CodeInfo(
        "E-SERVER-NOT-FOUND", Category.NOT_FOUND, "no RPC method, installed extension or route of that name"
    ),
    CodeInfo(
        "E-SERVER-QUOTA",
        Category.QUOTA_EXCEEDED,
        "a tenant's installed-kernel quota or run-rate limit is exhausted",
    ),
    CodeInfo(
        "E-SERVER-RPC-ARGS", Category.INVALID_INPUT, "RPC arguments do not match the method's parameter types"
    ),
    CodeInfo(
        "E-SERVER-RPC-FAILED",
        Category.HOST_FAILURE,
        "a service RPC method raised or returned a value of the wrong type",
    ),
    CodeInfo(
        "E-SERVER-BUSY",
        Category.QUOTA_EXCEEDED,
        "the server is at its connection limit (max_connections); the request was not read",
    ),
    CodeInfo(
        "E-SERVER-UNREACHABLE",
        Category.HOST_FAILURE,
        "the client could not reach the server, the connection failed or timed out before an answer, or "
        "the server closed the event stream being read",
    ),
    # --- event kernels (issue 15): plugin envelopes installed into an EventHub ----------------
    CodeInfo("E-EVENT-CONTRACT", _V, "a plugin envelope targets an event contract this host does not serve"),
    CodeInfo("E-EVENT-UNKNOWN", _V, "a subscription names an event type the contract does not publish"),
    CodeInfo(
        "E-EVENT-ENTRYPOINT",
        _V,
        "shouldHandle or handle is missing or not an entrypoint, shouldHandle does not return Bool, or a "
        "subscription names another kernel",
    ),
    CodeInfo(
        "E-EVENT-PARAM",
        _V,
        "an event-kernel parameter is neither an event field e_<name> nor a live setting, has another "
        "type, or a setting comes before an event field",
    ),
    CodeInfo(
        "E-EVENT-SETTING",
        Category.INVALID_INPUT,
        "a live setting is ill-declared (type, default, range) or a value is unknown, ill-typed or out of range",
    ),
    CodeInfo(
        "E-EVENT-FILTER-IMPURE",
        Category.POLICY_DENIED,
        "a shouldHandle filter reaches effects beyond Cpu and Alloc (filters must be pure)",
    ),
    CodeInfo(
        "E-EVENT-DUPLICATE", Category.INVALID_INPUT, "the owner already has a plugin with that pluginId"
    ),
    CodeInfo(
        "E-EVENT-QUOTA",
        Category.QUOTA_EXCEEDED,
        "the owner is at its installed-envelope quota, or one run's fuel limit exceeds its fuel per second",
    ),
    CodeInfo(
        "E-EVENT-NOT-INSTALLED", Category.NOT_FOUND, "the owner has no installed plugin with that pluginId"
    ),
    CodeInfo(
        "E-EVENT-FIELDS",
        Category.INVALID_INPUT,
        "a published event's fields do not match its event type (missing, extra or ill-typed field)",
    ),
    # --- optimized backend (issue 7) -----------------------------------------------------------
    CodeInfo(
        "R-OPT-VERIFIER", Category.VERIFIER_FAILURE, "generated code failed the verifier and was quarantined"
    ),
    CodeInfo(
        "R-OPT-COMPILE",
        Category.HOST_FAILURE,
        "the optimized backend could not compile the plan (a generator failure, or over the host's "
        "compile budget) and no fallback was allowed",
    ),
)

_BY_CODE: dict[str, CodeInfo] = {}


def register(*infos: CodeInfo) -> None:
    """Add codes owned by a later layer's module; each code may be registered once only."""
    for info in infos:
        if info.code in _BY_CODE:
            raise ValueError(f"duplicate code {info.code}")
        _BY_CODE[info.code] = info


register(*_TABLE)


def category_of(code: str) -> str:
    """The category name of ``code`` (ValidationError for codes not registered, which a test forbids)."""
    info = _BY_CODE.get(code)
    return info.category.value if info else Category.VALIDATION.value


def all_codes() -> dict[str, CodeInfo]:
    """Every registered code (a copy)."""
    return dict(_BY_CODE)
