"""``conformance run --wire``: every case sent with its module in wire JSON.

An implementation that has only the JSON wire form (the text form is optional) can still run the
corpus: a ``kernelText`` case is imported here with the text importer and sent as ``moduleText``
holding the wire JSON ``dotboxd fmt --to json`` would print. The other sources already are wire
JSON (``module``, ``moduleText``, ``moduleBase64``; a generator expands to wire JSON).

Two things cannot carry over, and both are reported, never silently passed:

* a case whose text the text importer refuses tests the text form itself; it has no wire form
  and is listed as *text-only* (not run);
* ``line``/``column`` expectations of a converted case point into the text, not into the wire
  JSON sent, so they are not compared (the code, category, pointer, value and usage still are).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from dotboxd.conformance.model import Actual, Case, unsupported
from dotboxd.conformance.protocol import Evaluator
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.grammar.text import parse_text
from dotboxd.grammar.wire import dumps_wire


@dataclass(frozen=True, slots=True)
class WireSelection:
    """The cases to send (converted where needed) and, by name, the reason each other one has no
    wire form."""

    cases: list[Case]
    text_only: dict[str, str]


def wire_case(case: Case) -> Case | str:
    """``case`` with its module in wire JSON, or why it has none (a reason string)."""
    if case.source_key != "kernelText":
        return case
    try:
        module = parse_text(str(case.raw["kernelText"]))
    except DotBoxDError as error:
        return f"the text importer refuses its kernelText ({error.diagnostic.code}): it tests the text form"
    raw = {key: value for key, value in case.raw.items() if key != "kernelText"}
    raw["moduleText"] = dumps_wire(module)
    expect = replace(case.expect, line=None, column=None)
    return replace(case, raw=raw, source_key="moduleText", expect=expect)


def wire_cases(cases: Sequence[Case]) -> WireSelection:
    """Every case that has a wire form, converted; the others with their reasons."""
    selection = WireSelection([], {})
    for case in cases:
        converted = wire_case(case)
        if isinstance(converted, str):
            selection.text_only[case.name] = converted
        else:
            selection.cases.append(converted)
    return selection


def wire_only(evaluate: Evaluator) -> Evaluator:
    """``evaluate`` as an implementation without the text form would answer: a request whose
    module is ``kernelText`` is ``unsupported`` at import (``conformance serve --wire-only``, the
    stand-in the tests run ``--wire`` against)."""

    def answer(case: Mapping[str, Any], backend: str, stage: str) -> Actual:
        if "kernelText" in case:
            return unsupported("import", "this implementation has no text form: send wire JSON (--wire)")
        return evaluate(case, backend, stage)

    return answer
