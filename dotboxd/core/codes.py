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
    CodeInfo("E-IR-ID", _V, "an identifier is blank or contains control characters"),
    CodeInfo("E-IR-CLR-REF", _V, "a name or literal smuggles a host/CLR reference"),
    CodeInfo("E-TEXT-SYNTAX", _V, "the readable text form does not parse"),
    CodeInfo("E-TEXT-ENCODING", _V, "a text-form source file is not valid UTF-8"),
    CodeInfo("E-SOURCE-LIMIT", _V, "a source file is larger than any module may be (reading stops there)"),
    # --- canonical form ------------------------------------------------------------------------
    CodeInfo("E-CANON-LIMIT", _V, "the canonical form would exceed its budget (escapes double per nesting level)"),
    # --- run time (issue 4: reference interpreter, meter, host API) -------------------------------
    CodeInfo("R-ARITH-OVERFLOW", Category.INVALID_INPUT, "integer result out of range, or MIN / -1, MIN % -1"),
    CodeInfo("R-ARITH-DIVIDE-BY-ZERO", Category.INVALID_INPUT, "integer division or remainder by zero"),
    CodeInfo("R-ARITH-NOT-FINITE", Category.INVALID_INPUT, "an F64 operation produced NaN or an infinity"),
    CodeInfo("R-ARITH-CLAMP-RANGE", Category.INVALID_INPUT, "math.clamp called with low > high"),
    CodeInfo("R-STRING-RANGE", Category.INVALID_INPUT, "substring range outside the string or splitting a pair"),
    CodeInfo("R-LIST-INDEX", Category.INVALID_INPUT, "list.get index out of range"),
    CodeInfo("R-RECORD-INDEX", Category.INVALID_INPUT, "record.get index out of range"),
    CodeInfo("R-VALUE-TYPE", Category.INVALID_INPUT, "an input value does not match its declared type"),
    CodeInfo("R-ENTRY-UNKNOWN", Category.INVALID_INPUT, "the entrypoint does not exist or is not visible"),
    CodeInfo("R-ENTRY-ARITY", Category.INVALID_INPUT, "the number of inputs differs from the parameters"),
    CodeInfo("R-MAP-KEY-MISSING", Category.NOT_FOUND, "map.get on a key the map does not hold"),
    CodeInfo("R-QUOTA-FUEL", Category.QUOTA_EXCEEDED, "fuel exhausted (MaxFuel)"),
    CodeInfo("R-QUOTA-LOOP", Category.QUOTA_EXCEEDED, "loop iteration budget exhausted (MaxLoopIterations)"),
    CodeInfo("R-QUOTA-CALL-DEPTH", Category.QUOTA_EXCEEDED, "call depth exceeded (MaxCallDepth)"),
    CodeInfo("R-QUOTA-ALLOCATION", Category.QUOTA_EXCEEDED, "allocation budget exhausted (MaxAllocatedBytes)"),
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
    CodeInfo("R-TIMEOUT", Category.TIMEOUT, "the run's wall-time budget is exhausted (MaxWallTime)"),
    CodeInfo("R-BINDING-TIMEOUT", Category.TIMEOUT, "a binding did not finish within the remaining wall time"),
    CodeInfo("R-CANCELLED", Category.CANCELLED, "the host cancelled the run"),
    CodeInfo("R-PLAN-BINDING", _V, "a binding call that the execution plan does not reference"),
    CodeInfo("R-PLAN-FOREIGN", _V, "the plan was not prepared by this host (bindings or seal differ)"),
    CodeInfo("R-CAPABILITY-DENIED", Category.PERMISSION_DENIED, "a binding's capability is not granted"),
    CodeInfo("R-ASYNC-DENIED", Category.PERMISSION_DENIED, "an async binding without dotboxd.runtime.async"),
    CodeInfo("R-CAPABILITY-REVOKED", Category.POLICY_DENIED, "a capability the plan reaches was revoked"),
    CodeInfo("R-BINDING-FAILED", Category.BINDING_FAILURE, "a binding raised (the host exception is withheld)"),
    CodeInfo("R-BINDING-RETURN", Category.BINDING_FAILURE, "a binding returned a value of the wrong type/shape"),
    CodeInfo("R-BINDING-PENDING", Category.BINDING_FAILURE, "a binding returned a pending awaitable, no async"),
    CodeInfo("R-BINDING-AUDIT", Category.BINDING_FAILURE, "a binding did not write its required audit event"),
    CodeInfo("R-BINDING-DENIED", Category.PERMISSION_DENIED, "a binding refused the request (outside its grant)"),
    CodeInfo("R-BINDING-NOT-FOUND", Category.NOT_FOUND, "a binding reported a missing resource"),
    CodeInfo("R-BINDING-INVALID", Category.INVALID_INPUT, "a binding rejected its arguments"),
    CodeInfo("R-BINDING-QUOTA", Category.QUOTA_EXCEEDED, "a binding reported a quota of its own exhausted"),
    CodeInfo("R-HOST-INTERNAL", Category.HOST_FAILURE, "an internal runtime fault (failed closed)"),
    CodeInfo("R-BACKEND-UNAVAILABLE", Category.HOST_FAILURE, "the requested execution backend is not available"),
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
