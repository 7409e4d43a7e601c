"""Running one case through this project's own pipeline: import -> validate -> run.

Each stage either hands its product to the next one or ends the case with an ``Actual``. The stages
are imported plainly (this package cannot load without them); a backend this tree lacks, or a case
this pipeline cannot use, ends the case as ``unsupported`` (an honest failure, never a pass), and an
exception that is not a ``DotBoxDError`` ends it as ``crash``: the case format promises a diagnostic
for every bad input, so a traceback is itself a conformance failure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from dotboxd.conformance import stage_run, stage_validate
from dotboxd.conformance.availability import in_process_unavailable
from dotboxd.conformance.errors import CaseFormatError
from dotboxd.conformance.model import CRASH, STAGES, Actual, unsupported
from dotboxd.conformance.sources import module_source, source_key_of
from dotboxd.conformance.workspace import case_root
from dotboxd.core.ast import Module
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.grammar.pyfront import lower_python
from dotboxd.grammar.text import parse_text
from dotboxd.grammar.wire import import_module


def rejected(stage: str, error: DotBoxDError) -> Actual:
    """The ``Actual`` of a stage that refused the module (its root-cause diagnostic)."""
    diagnostic = error.diagnostic
    return Actual(
        stage=stage,
        outcome="rejected",
        error=diagnostic.category,
        diagnostic=diagnostic.code,
        pointer=diagnostic.pointer,
        line=diagnostic.span.line if diagnostic.span else None,
        column=diagnostic.span.column if diagnostic.span else None,
        message=diagnostic.message,
    )


_HOST_PATH = re.compile(r"(?:[A-Za-z]:)?[\\/][^\s'\"]*")


def crashed(stage: str, exc: BaseException) -> Actual:
    """A ``crash``: the exception's type and the first line of its text, cut short and with
    anything that looks like a file-system path replaced by ``<path>`` (a response leaves the host,
    so it must not carry a temporary directory or an install location, nor a traceback)."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    text = _HOST_PATH.sub("<path>", text)[:300]
    return Actual(stage=stage, outcome=CRASH, message=f"internal error: {type(exc).__name__}: {text}")


def import_stage(raw: Mapping[str, Any], where: str) -> Module | Actual:
    """The imported ``Module``, or the ``Actual`` that ends the case at import."""
    key = source_key_of(raw)
    if key is None:
        return unsupported("import", "the case needs exactly one module source")
    try:
        source = module_source(raw, key, where)
    except (CaseFormatError, ValueError) as exc:
        return unsupported("import", f"unusable module source: {exc}")
    if source.form == "python":
        return lower_python(source.data, "kernel.py")
    if source.form == "text":
        return parse_text(source.data)
    return import_module(source.data)


def evaluate(
    raw: Mapping[str, Any],
    backend: str,
    stop_after: str = "run",
    where: str = "case",
    via: stage_run.Via = stage_run.VIA_SYNC,
) -> Actual:
    """Run the case object ``raw`` on ``backend`` up to and including ``stop_after``; the run stage
    goes through the host entry point ``via`` (``execute`` or ``execute_async``)."""
    reason = in_process_unavailable(backend)
    if reason is not None:
        return unsupported(None, reason)
    if stop_after not in STAGES:
        return unsupported(None, f"unknown stage {stop_after!r}")
    stage = "import"
    try:
        module = import_stage(raw, where)
        if isinstance(module, Actual):
            return module
        if stop_after == "import":
            return Actual(stage="import", outcome="ok")
        stage = "validate"
        with case_root(raw) as root:
            validated = stage_validate.validate_case(module, raw, root)
            if stop_after == "validate":
                return Actual(stage="validate", outcome="ok")
            stage = "run"
            return stage_run.run_case(validated, raw, backend, via)
    except DotBoxDError as exc:
        return rejected(stage, exc)
    except CaseFormatError as exc:
        return unsupported(stage, f"unusable case: {exc}")
    except Exception as exc:
        return crashed(stage, exc)
