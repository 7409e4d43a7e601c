"""Small builders shared by the validator tests: text-form modules, bindings, policies, verdicts."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from dotboxd.core.ast import Module
from dotboxd.core.bindings import BindingDescriptor, BindingRegistry, load_binding_manifest
from dotboxd.core.diagnostics import Diagnostic, DotBoxDError
from dotboxd.grammar.text import parse_text
from dotboxd.grammar.wire import import_module
from dotboxd.validator.api import validate
from dotboxd.validator.plan import ExecutionPlan
from dotboxd.validator.policy import Policy


def text(*functions: str, header: str = "") -> Module:
    """Parse a text-form module made of a fixed header, ``header`` items and ``functions``."""
    return parse_text('module "t" version "1.0.0";\n' + header + "\n".join(functions) + "\n")


def main(body: str, params: str = "", ret: str = "I32") -> str:
    return f"entrypoint fn main({params}) -> {ret} {{\n{body}\n}}"


def fn(name: str, body: str, params: str = "", ret: str = "I32") -> str:
    return f"fn {name}({params}) -> {ret} {{\n{body}\n}}"


def wire(obj: Mapping[str, Any]) -> Module:
    return import_module(json.dumps(obj))


def bindings(*entries: Mapping[str, Any]) -> tuple[BindingDescriptor, ...]:
    return load_binding_manifest([dict(e) for e in entries])


def rejection(
    module: Module, policy: Policy | None = None, registry: Any = None, **kwargs: Any
) -> Diagnostic:
    """The root-cause diagnostic of a module the validator must reject."""
    try:
        validate(module, policy, registry, **kwargs)
    except DotBoxDError as error:
        return error.diagnostic
    raise AssertionError("the module was accepted")


def all_rejections(
    module: Module, policy: Policy | None = None, registry: Any = None
) -> tuple[Diagnostic, ...]:
    try:
        validate(module, policy, registry)
    except DotBoxDError as error:
        return error.diagnostics
    raise AssertionError("the module was accepted")


def code_of(module: Module, policy: Policy | None = None, registry: Any = None) -> str:
    return rejection(module, policy, registry).code


def accept(
    module: Module, policy: Policy | None = None, registry: Any = None, **kwargs: Any
) -> ExecutionPlan:
    return validate(module, policy, registry, **kwargs)


def run_case(case: Mapping[str, Any]) -> tuple[str, str | None, str | None]:
    """Run a conformance case dict through import + validate; return (outcome, code, pointer)."""
    try:
        if "kernelText" in case:
            module = parse_text(case["kernelText"])
        else:
            module = import_module(json.dumps(case["module"]))
    except DotBoxDError as error:
        return "import-rejected", error.code, error.diagnostic.pointer
    with tempfile.TemporaryDirectory() as tmp:
        root = str(Path(tmp).resolve())
        for rel, content in case.get("files", {}).items():
            target = Path(root, rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
        try:
            policy = Policy.from_json(case["policy"], {"$ROOT": root}) if "policy" in case else None
            registry = BindingRegistry(load_binding_manifest(case.get("bindings", [])))
            validate(module, policy, registry)
        except DotBoxDError as error:
            return "rejected", error.code, error.diagnostic.pointer
    return "ok", None, None


def codes(diags: Iterable[Diagnostic]) -> list[str]:
    return [d.code for d in diags]
