"""The rule for a run id the host program chooses (``execute(..., run_id=...)``).

A run id is written verbatim into every audit event of the run, its ``RunSummary``, the result
(``runId``) and the per-run bookkeeping of the file facades, so it must be a short, printable token.
Before this rule the ordinary path kept any truthy object (``5`` stayed an ``int``, a newline reached
the audit log, a megabyte-long string was copied into each event) and replaced ``""`` and ``0`` with a
fresh id, while the fast lane took only text: two paths, two behaviours. Now ``None`` means a fresh
id and anything that is not 1-128 printable ASCII characters without spaces is refused before the
run (``E-HOST-RUN-ID``), the same on every path.
"""

from __future__ import annotations

from dotboxd.core.diagnostics import reject

MAX_RUN_ID_LENGTH = 128


def check_run_id(run_id: object) -> None:
    """Refuse a chosen run id that breaks the rule (``None``, a fresh id, is not checked here)."""
    if (
        type(run_id) is str
        and 0 < len(run_id) <= MAX_RUN_ID_LENGTH
        and all("!" <= ch <= "~" for ch in run_id)
    ):
        return
    shown = type(run_id).__name__ if type(run_id) is not str else f"{len(run_id)} characters"
    raise reject(
        "E-HOST-RUN-ID",
        f"run_id must be 1-{MAX_RUN_ID_LENGTH} printable ASCII characters without spaces (got {shown})",
        "/run_id",
        hint="pass run_id=None for a fresh id, or a short token such as 'job-7:row-3'",
    )
