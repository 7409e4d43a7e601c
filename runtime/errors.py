"""Run-time errors: what a failed run reports to the host, and nothing more.

A ``SandboxError`` names a category (spec/diagnostics.md: QuotaExceeded, InvalidInput, ...), a stable ``R-*``
code from ``dotboxd.core.codes`` and a *safe* message. Safe means written by us for the kernel
author: never a host exception's text, a host path, a traceback or a limit's value (a kernel must
not learn the host's budget by probing). Validation failures that surface at run time keep their
``Diagnostic``.

Bindings that want to refuse a request on purpose raise ``BindingError`` with one of a few
categories; any other exception from host code is sanitized to BindingFailure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dotboxd.core.codes import all_codes, category_of
from dotboxd.core.diagnostics import Diagnostic, DotBoxDException, Span
from dotboxd.core.values import SandboxFault


class SandboxError(SandboxFault):
    """A run-time failure with category, stable code, safe message and optional diagnostic."""

    def __init__(self, code: str, safe_message: str, diagnostic: Diagnostic | None = None) -> None:
        if code not in all_codes():
            raise ValueError(f"unregistered error code {code!r}")
        super().__init__(code, safe_message)
        self.diagnostic = diagnostic
        self.host_exception: BaseException | None = None
        """A binding's own exception, carried only from the binding call to its failure audit
        event (``runtime.binding_call``); never part of ``info()``."""

    @classmethod
    def from_fault(cls, fault: SandboxFault) -> SandboxError:
        if isinstance(fault, SandboxError):
            return fault
        error = cls(fault.code, fault.safe_message)
        error.location = fault.location
        return error

    def info(self) -> ErrorInfo:
        location = self.location
        if location is None:
            return ErrorInfo(self.category, self.code, self.safe_message, self.diagnostic)
        return ErrorInfo(self.category, self.code, self.safe_message, self.diagnostic, *location)


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """The error part of an ``ExecutionResult`` (immutable; safe to hand to any caller)."""

    category: str
    code: str
    safe_message: str
    diagnostic: Diagnostic | None = None
    pointer: str = ""
    """For a run-time error raised by an operation: the JSON pointer of its node (else empty)."""
    span: Span | None = None
    """... and the node's ``line:column`` in the source, when the source was text or JSON."""

    def to_json(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "code": self.code,
            "message": self.safe_message,
            "diagnostic": self.diagnostic.to_json() if self.diagnostic else None,
            "pointer": self.pointer,
            "line": self.span.line if self.span else None,
            "column": self.span.column if self.span else None,
        }

    def located(self) -> Diagnostic | None:
        """The error as a ``Diagnostic`` at its node (for a caret excerpt), when it has a location."""
        if not self.pointer and self.span is None:
            return None
        return Diagnostic(self.code, self.safe_message, self.pointer, self.span)


def error_info_from_diagnostic(diagnostic: Diagnostic) -> ErrorInfo:
    """An ``ErrorInfo`` for a rejection (import/validation/policy) that ended a host call."""
    return ErrorInfo(category_of(diagnostic.code), diagnostic.code, diagnostic.message, diagnostic)


# Categories a binding may choose when it refuses a request on purpose, and their codes.
_BINDING_CODES = {
    "PermissionDenied": "R-BINDING-DENIED",
    "NotFound": "R-BINDING-NOT-FOUND",
    "InvalidInput": "R-BINDING-INVALID",
    "QuotaExceeded": "R-BINDING-QUOTA",
}


class BindingError(DotBoxDException):
    """Raised by a binding to refuse a request with a chosen, safe category.

    ``BindingError("NotFound", "no such monster")`` becomes a NotFound SandboxError carrying that
    message (so binding authors must keep it free of secrets, as they would any audit text).
    Categories other than PermissionDenied, NotFound, InvalidInput and QuotaExceeded are refused
    at construction.
    """

    def __init__(self, category: str, safe_message: str) -> None:
        if category not in _BINDING_CODES:
            raise ValueError(f"a binding may not raise category {category!r}")
        super().__init__(safe_message)
        self.category = category
        self.safe_message = safe_message

    def to_sandbox_error(self) -> SandboxError:
        return SandboxError(_BINDING_CODES[self.category], _truncate(self.safe_message))


def _truncate(text: str, limit: int = 200) -> str:
    """Binding-chosen messages are bounded and single-line."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
