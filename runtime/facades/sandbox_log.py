"""``log.info`` / ``log.warn``: a kernel's log line, as a sanitized ``SandboxLog`` audit event.

A log message is kernel-chosen text headed for a host's log sink, so it is treated as hostile:

1. the message must be text (InvalidInput otherwise);
2. the run's log budget is charged with the message's UTF-16 length *before* anything is written:
   longer than ``maxLogMessageLength`` is ``R-QUOTA-LOG-MESSAGE``, one event more than
   ``maxLogEvents`` is ``R-QUOTA-LOG-EVENTS`` (both QuotaExceeded; a message refused for its length
   is not an event, an event refused by the count is counted, as every refused attempt is);
3. the text is cleaned: control characters (C0, DEL, C1), line and paragraph separators and bidi
   embedding/override/isolate characters become spaces (no forged log lines, no text that renders
   in a different order than it is stored), lone surrogates become U+FFFD (a sink that encodes
   UTF-8 must not choke on a half pair a substring left behind);
4. one ``SandboxLog`` event is written with resource ``log:info`` or ``log:warn``, the cleaned
   message (the audit log then redacts secret-looking values and bounds it to its text limit),
   and the fields ``level`` and ``length`` (the original UTF-16 length, so truncation is visible).

The bindings are PerCall, so the runtime adds its own ``SandboxLog`` success record of the call
(``binding:log.info``) after this one; a refused call gets the runtime's failure record instead.
"""

from __future__ import annotations

import re

from dotboxd.core.values import utf16_len
from dotboxd.runtime.context import BindingContext
from dotboxd.runtime.errors import BindingError

CAPABILITY = "log.write"

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_message(text: str) -> str:
    """``text`` with control, separator and bidi characters as spaces and lone surrogates as U+FFFD."""
    cleaned = _UNSAFE.sub(" ", text)
    if not cleaned.isascii():
        # a pair written as two code points (from UTF-16 slicing) is kept as the character it encodes
        cleaned = cleaned.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        cleaned = _LONE_SURROGATE.sub("\ufffd", cleaned)
    return cleaned


def _log(ctx: BindingContext, level: str, message: object) -> None:
    if not isinstance(message, str):
        raise BindingError("InvalidInput", "a log message is text")
    ctx.charge_log_event(message)
    ctx.audit(
        f"log:{level}",
        message=clean_message(message),
        fields={"level": level, "length": utf16_len(message)},
    )


def log_info(ctx: BindingContext, message: str) -> None:
    """``log.info(message)``."""
    _log(ctx, "info", message)


def log_warn(ctx: BindingContext, message: str) -> None:
    """``log.warn(message)``."""
    _log(ctx, "warn", message)
