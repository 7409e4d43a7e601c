"""One diagnostic type for every rejection, from the JSON scanner to the policy resolver.

A security reviewer reads these, so each carries a stable code, the SandboxError category, a
location (JSON pointer plus 1-based line:column when the source is known), a message, evidence
(the facts that justify the verdict: both types of a mismatch, the call cycle, ...) and a hint.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dotboxd.core.codes import category_of
from dotboxd.core.visible import visible


@dataclass(frozen=True, slots=True)
class Span:
    """A 1-based line and column in the source text (UTF-16 agnostic: counts code points).

    ``end_column`` (exclusive, same line; 0 when unknown) lets a caret excerpt underline the whole
    offending operand rather than its first character. It is presentation only: it takes no part in
    equality, and the JSON rendering keeps ``line`` and ``column``."""

    line: int
    column: int
    end_column: int = field(default=0, compare=False)

    def __str__(self) -> str:
        return f"{self.line}:{self.column}"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A single, self-explaining rejection."""

    code: str
    message: str
    pointer: str = ""
    span: Span | None = None
    evidence: Mapping[str, Any] = field(default_factory=dict)
    hint: str = ""

    @property
    def category(self) -> str:
        """The SandboxError category this code belongs to (ValidationError, PolicyDenied, ...)."""
        return category_of(self.code)

    def to_json(self) -> dict[str, Any]:
        """A stable JSON rendering (keys always present, in a fixed order)."""
        return {
            "code": self.code,
            "category": self.category,
            "message": self.message,
            "pointer": self.pointer,
            "line": self.span.line if self.span else None,
            "column": self.span.column if self.span else None,
            "evidence": dict(self.evidence),
            "hint": self.hint,
        }

    def render(self, source: str | None = None, filename: str = "<input>") -> str:
        """Human-readable text: `file:line:col: CODE message`, an excerpt with a caret, evidence, hint.

        Every part may hold author-controlled text (names, literals, the quoted source line), so each
        line is passed through :func:`visible`: no control, bidi or zero-width character reaches the
        reader's terminal raw."""
        where = f"{filename}:{self.span}" if self.span else filename
        lines = [f"{where}: error[{self.code}] {self.message}"]
        if self.pointer:
            lines.append(f"  at {self.pointer}")
        if source is not None and self.span is not None:
            lines.extend(caret_excerpt(source, self.span))
        for key, value in self.evidence.items():
            lines.append(f"  evidence: {key} = {_evidence_text(value)}")
        if self.hint:
            lines.append(f"  hint: {self.hint}")
        return "\n".join(visible(line) for line in lines)


def _evidence_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def caret_excerpt(source: str, span: Span, width: int = 100) -> list[str]:
    """The source line of ``span`` (clipped to ``width`` characters around the column) and a caret.

    The line is shown through :func:`visible` (a comment may hold ESC sequences or a bidi override),
    and the caret is placed under the escaped text, so it still points at the offending character."""
    # Split on "\n" only: both parsers count lines that way, while str.splitlines() would also
    # break on U+2028, U+0085 and friends, which may stand raw inside string literals.
    source_lines = [line.removesuffix("\r") for line in source.split("\n")]
    if not 1 <= span.line <= len(source_lines):
        return []
    text = source_lines[span.line - 1]
    col = max(span.column - 1, 0)
    start = max(0, col - width // 2)
    clipped = text[start : start + width]
    prefix = "..." if start > 0 else ""
    gutter = f"{span.line:>5} | "
    lead = len(visible(clipped[: col - start]))
    end = min(span.end_column - 1, start + width) if span.end_column > span.column else col + 1
    marks = max(len(visible(clipped[col - start : end - start])), 1)
    return [gutter + prefix + visible(clipped), " " * (len(gutter) + len(prefix) + lead) + "^" * marks]


class DotBoxDException(Exception):
    """The one base class of every exception DotBoxD defines, so a host needs one ``except``:
    ``DotBoxDError`` (an input rejected before running: import, validation, policy, bindings),
    ``SandboxFault``/``SandboxError`` (a run-time failure; ``execute`` returns these as a failed
    result rather than raising) and ``BindingError`` (raised by a binding to refuse on purpose)."""


class DotBoxDError(DotBoxDException):
    """Raised by every stage for a rejected input; carries one or more diagnostics (root cause first)."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        if not diagnostics:
            raise ValueError("DotBoxDError needs at least one diagnostic")
        self.diagnostics: tuple[Diagnostic, ...] = tuple(diagnostics)
        first = self.diagnostics[0]
        # str(error) ends up in host logs and tracebacks: escaped like every other rendering
        super().__init__(visible(f"{first.code}: {first.message}"))

    @property
    def diagnostic(self) -> Diagnostic:
        """The root cause."""
        return self.diagnostics[0]

    @property
    def code(self) -> str:
        return self.diagnostics[0].code


def reject(
    code: str,
    message: str,
    pointer: str = "",
    span: Span | None = None,
    hint: str = "",
    **evidence: Any,
) -> DotBoxDError:
    """Build (not raise) an error with a single diagnostic; callers write ``raise reject(...)``."""
    return DotBoxDError([Diagnostic(code, message, pointer, span, evidence, hint)])
