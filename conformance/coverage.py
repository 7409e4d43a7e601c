"""What the corpus exercises, measured from the cases themselves: codes, operators, built-ins, limits,
error categories and fixture behaviours (``dotboxd conformance coverage`` and the coverage test).

Nothing is taken on trust from names or descriptions:

* a **code** is exercised by a case whose ``expect.diagnostic`` pins it; the required codes are the
  registered ones (``dotboxd/core/codes.py``) that ``spec/`` documents;
* an **operator** or **built-in** is exercised, per operand type, by a run-stage case whose module uses
  it in live code: every run case is imported and validated, and the operand types come from the
  validator's plan (``plan.type_of``) - a static measure (a call in a branch the run does not take
  counts), which the curated run cases avoid;
* a **limit** is exercised at N by a case tagged ``limit:<name>`` and ``at-limit`` that the limit does
  not refuse, and at N+1 by one tagged ``over-limit`` that expects the limit's own code (the import
  budgets' ``budget-<name>`` tags count as ``limit:json.<name>``); the policy limits come from
  ``Limits``, so a new limit is missing until a case pins it;
* an **error category** by a case whose ``expect.error`` pins it; a **behaviour kind** by a run case
  with a fixture of that kind that pins ``bindingCalls`` of at least 1 for it.

Only spec-derived cases count: the generated regression cases (tag ``regression``) are not evidence.

What the case format cannot express is listed, with the reason, in ``UNREACHABLE_*``; those lists are
checked too (an entry must exist and must really be missing from the corpus).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dotboxd.conformance import stage_validate
from dotboxd.conformance.model import CATEGORIES, Case
from dotboxd.conformance.pipeline import import_stage
from dotboxd.conformance.shape import BEHAVIOR_PARAMS
from dotboxd.conformance.workspace import case_root
from dotboxd.core import ast
from dotboxd.core.builtins import BUILTINS
from dotboxd.core.codes import all_codes
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.core.limits import LIMITS
from dotboxd.core.types import ListType, MapType, RecordType, type_kind
from dotboxd.validator.plan import CallKind, ExecutionPlan

SPEC_DIR = Path(__file__).resolve().parents[1] / "spec"

#: The tag of generated cases whose expectations come from the reference interpreter.
REGRESSION_TAG = "regression"

SECTIONS: tuple[str, ...] = ("codes", "operators", "builtins", "limits", "categories", "behaviors")

# --- what cannot be expressed as a case, and why (keep these short and honest) -------------------

UNREACHABLE_CODES: dict[str, str] = {
    "E-STRUCT-DEPTH": "both importers refuse deeper input first (the 64-level wire depth budget, "
    "E-JSON-LIMIT); the rule guards trees built in Python",
    "E-CONST-RANGE": "both importers refuse an out-of-range literal first (E-JSON-TYPE); the rule guards "
    "trees built in Python",
    "E-CONST-FLOAT": "both importers refuse a non-finite literal first (E-JSON-TYPE); the rule guards trees "
    "built in Python",
    "E-BINDING-GRANT": "a binding read from a manifest always has a grant validator (no grantParameters "
    "means parameterless grants); only host code can omit it",
    "E-POLICY-REVOKED": "revocation is a host API call (policy.revoke), not part of the policy document",
    "W-POLICY-WILDCARD": "a warning, never an outcome; the case format has no warnings",
    "W-POLICY-UNUSED-GRANT": "a warning, never an outcome; the case format has no warnings",
    "E-PLAN-BINDINGS": "needs a plan run against a different binding catalogue; a case has one catalogue",
    "E-PLAN-INTEGRITY": "needs a tampered plan object; a case never holds a plan",
    "R-RECORD-INDEX": "the validator proves every record.get index constant and in range "
    "(E-CALL-RECORD-INDEX)",
    "R-PLAN-BINDING": "plans are built from the catalogue they run with; only host API misuse reaches it",
    "R-CAPABILITY-DENIED": "needs a grant revoked or expired between validation and the call (host API "
    "or the wall clock)",
    "R-ASYNC-DENIED": "the validator already requires dotboxd.runtime.async for an async binding "
    "(E-POLICY-CAP); this is the run-time backstop",
    "R-CANCELLED": "cancellation is a host API call; the case format has no way to cancel",
    "R-HOST-INTERNAL": "an internal runtime fault; a case that reaches it has found a bug",
    "R-BACKEND-UNAVAILABLE": "the runner reports an unknown backend as 'unsupported' before running",
    "R-ASYNC-LOOP": "host misuse of the synchronous execute (its event loop is not running, or is the "
    "calling thread's own); the runner always has a running loop",
    "R-HOST-COMMAND": "fixtures never enqueue host commands, and every file write a case makes is checked at the call against the run's earlier writes, so only a change on disk between the run and its batch (a race no case can stage) fails one",
    "R-OPT-VERIFIER": "the optimized backend's verifier rejecting its own generated code; a valid module "
    "cannot make correct code generation fail",
    "R-OPT-COMPILE": "the optimized backend failing to compile a valid plan; a case that reaches it has "
    "found a bug",
}
HOST_FEATURE_CODES: dict[str, str] = {
    **{
        code: "a trusted-plugin host API outcome (dotboxd.plugins), not part of a kernel run"
        for code in ("E-PLUGIN-LOAD", "E-PLUGIN-CONFLICT", "E-PLUGIN-UNKNOWN")
    },
    **{
        code: "an isolated worker's own outcome (dotboxd.isolation: a Python job, or a kernel worker that failed), never a kernel's"
        for code in (
            "E-ISOLATION-UNAVAILABLE",
            "E-ISOLATION-PROFILE",
            "R-WORKER-FAILED",
            "R-WORKER-TIMEOUT",
            "R-WORKER-KILLED",
            "R-WORKER-RESULT",
            "R-WORKER-INTEGRITY",
        )
    },
    **{
        code: "a distributed job's outcome (dotboxd.distributed), decided around kernel runs, not in one"
        for code in ("E-DIST-INTEGRITY", "E-DIST-SETUP", "E-DIST-OPTION", "R-JOB-RECORD")
    },
    **{
        code: "a networked server outcome (dotboxd.server: config, request, quota, RPC), not a kernel run"
        for code in (
            "E-SERVER-CONFIG",
            "E-SERVER-REQUEST",
            "E-SERVER-NOT-FOUND",
            "E-SERVER-QUOTA",
            "E-SERVER-RPC-ARGS",
            "E-SERVER-RPC-FAILED",
            "E-SERVER-BUSY",
            "E-SERVER-UNREACHABLE",
        )
    },
    "E-HOST-RUN-ID": "a bad run id given to SandboxHost.execute by the host program, refused before "
    "any run (the case format has no run id)",
    **{
        code: "an event-kernel envelope's install, settings or publish outcome (dotboxd.events), "
        "decided around kernel runs, not in one"
        for code in (
            "E-EVENT-CONTRACT",
            "E-EVENT-UNKNOWN",
            "E-EVENT-ENTRYPOINT",
            "E-EVENT-PARAM",
            "E-EVENT-SETTING",
            "E-EVENT-FILTER-IMPURE",
            "E-EVENT-DUPLICATE",
            "E-EVENT-QUOTA",
            "E-EVENT-NOT-INSTALLED",
            "E-EVENT-FIELDS",
        )
    },
}
"""Codes of host features around kernel runs (plugins, isolated Python jobs, distributed jobs, event
kernels, the networked server): a kernel case cannot reach them, and their own test suites pin them
(tests/plugins, tests/isolation, tests/distributed, tests/events, tests/server)."""
UNREACHABLE_CATEGORIES: dict[str, str] = {
    "Cancelled": "cancellation is a host API call (R-CANCELLED)",
    "VerifierFailure": "raised only when generated code fails the optimized backend's verifier; a module "
    "cannot make correct code generation fail on purpose",
    "CacheInvalid": "a cache-identity failure of the optimized backend; no case input controls the cache",
    "HostFailure": "infrastructure faults (R-HOST-INTERNAL, R-HOST-COMMAND, R-BACKEND-UNAVAILABLE, R-ASYNC-LOOP), see the "
    "codes",
}
UNREACHABLE_LIMITS: dict[str, str] = {
    "maxWallTimeMs": "wall time is not deterministic; Timeout cases use a small limit and a long run, "
    "never an exact boundary",
    "structDepth": "E-STRUCT-DEPTH (nesting 200) cannot be reached through either importer (see the codes)",
    "canonicalUnits": "the exact canonical length of a module is the canonical writer's own computation; "
    "the budget is exercised far below and far above (hostile-input/canonical.json), not at N",
}

# --- required operand types ----------------------------------------------------------------------

NUMERIC_KINDS: tuple[str, ...] = ("I32", "I64", "F64")
ALL_KINDS: tuple[str, ...] = (
    "Unit",
    "Bool",
    "I32",
    "I64",
    "F64",
    "String",
    "Guid",
    "SandboxPath",
    "SandboxUri",
    "Opaque",
    "List",
    "Map",
    "Record",
)
MAP_KEY_KINDS: tuple[str, ...] = ("Bool", "I32", "I64", "String", "SandboxPath", "SandboxUri", "Opaque")
_ELEMENT_GENERIC = frozenset(
    {"list.empty", "list.of", "list.count", "list.get", "list.add", "record.new", "record.get"}
)
_KEY_GENERIC = frozenset({"map.empty", "map.containsKey", "map.get", "map.set", "map.remove", "map.keys"})
_ANY_KIND = frozenset({"list.slice", "map.count"})
"""Extension intrinsics whose work never looks at an element or key (they copy or count): one case
of any kind covers them (``name:any``)."""


def required_operators() -> list[str]:
    """``op:kind`` for every binary and unary operator and every operand kind it accepts."""
    keys: list[str] = []
    for op in ast.BinaryOp:
        if op in (ast.BinaryOp.AND, ast.BinaryOp.OR):
            kinds: Sequence[str] = ("Bool",)
        elif op in (ast.BinaryOp.EQ, ast.BinaryOp.NE):
            kinds = ALL_KINDS
        else:
            kinds = NUMERIC_KINDS
        keys += [f"{op.value}:{kind}" for kind in kinds]
    keys += ["not:Bool"] + [f"-:{kind}" for kind in NUMERIC_KINDS]
    return keys


def required_builtins() -> list[str]:
    """``name:operand`` for every built-in: the element/field kind of the generic list and record
    built-ins, the key kind of the map built-ins, the argument types of the others (numeric.toF64
    takes I32 or I64)."""
    keys: list[str] = []
    for name, builtin in BUILTINS.items():
        if name in _ELEMENT_GENERIC:
            keys += [f"{name}:{kind}" for kind in ALL_KINDS]
        elif name in _KEY_GENERIC:
            keys += [f"{name}:{kind}" for kind in MAP_KEY_KINDS]
        elif name in _ANY_KIND:
            keys.append(f"{name}:any")
        else:
            params = builtin.signature.split(")")[0].lstrip("(")
            keys += [f"{name}:{alternative.strip()}" for alternative in params.split("|")]
    return keys


#: limit name -> the code its N+1 case must expect (every policy limit's from the core limit table)
LIMIT_CODES: dict[str, str] = {
    **{spec.json_name: spec.quota_code for spec in LIMITS},
    "maxCallsPerRun": "R-QUOTA-BINDING-CALLS",
    "inputBounds": "R-INPUT-BOUND",
    "typeDepth": "E-TYPE-DEPTH",
    "constantLength": "E-CONST-HUGE",
    "staticBound": "E-PROOF-REFUTED",
    "json.documentBytes": "E-JSON-LIMIT",
    "json.depth": "E-JSON-LIMIT",
    "json.tokens": "E-JSON-LIMIT",
    "json.items": "E-JSON-LIMIT",
    "json.stringBytes": "E-JSON-LIMIT",
    "json.totalStringBytes": "E-JSON-LIMIT",
}


def policy_limit_names() -> list[str]:
    """Every policy limit by its JSON (camelCase) name, from the core limit table."""
    return [spec.json_name for spec in LIMITS]


def required_limits() -> list[str]:
    return sorted(set(policy_limit_names()) | set(LIMIT_CODES) | set(UNREACHABLE_LIMITS))


_ABBREVIATED = re.compile(r"\b([ERW]-[A-Z0-9]+)-[A-Z0-9-]*[A-Z0-9]((?:, -[A-Z0-9-]*[A-Z0-9])+)")


def spec_documented_codes(spec_dir: Path = SPEC_DIR) -> set[str] | None:
    """Registered codes named anywhere in ``spec/*.md`` (None when no spec directory is shipped).
    A list that abbreviates a family (``R-QUOTA-FUEL, -LOOP, -CALL-DEPTH``) names each member."""
    files = sorted(spec_dir.glob("**/*.md")) if spec_dir.is_dir() else []
    if not files:
        return None
    text = "\n".join(path.read_text(encoding="utf-8") for path in files)
    for match in _ABBREVIATED.finditer(text):
        family = match.group(1)
        text += "\n" + " ".join(f"{family}{suffix}" for suffix in match.group(2).split(", ") if suffix)
    return {code for code in all_codes() if re.search(re.escape(code) + r"(?![A-Z0-9-])", text)}


# --- the report ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Item:
    """One thing the corpus should exercise: ``cases`` names the cases that do, ``exempt`` the reason
    it cannot be a case; ``required`` is False for informative items (codes spec/ does not document)."""

    section: str
    key: str
    cases: tuple[str, ...]
    required: bool = True
    exempt: str | None = None

    @property
    def missing(self) -> bool:
        return self.required and not self.cases and self.exempt is None

    def to_json(self) -> dict[str, Any]:
        return {
            "section": self.section,
            "key": self.key,
            "required": self.required,
            "cases": len(self.cases),
            "examples": list(self.cases[:3]),
            "exempt": self.exempt,
        }


@dataclass(slots=True)
class CoverageReport:
    items: list[Item] = field(default_factory=list)
    areas: dict[str, int] = field(default_factory=dict)
    unanalysed: list[str] = field(default_factory=list)

    def section(self, name: str) -> list[Item]:
        return [item for item in self.items if item.section == name]

    def missing(self) -> list[Item]:
        return [item for item in self.items if item.missing]

    def to_json(self) -> dict[str, Any]:
        return {
            "areas": dict(self.areas),
            "missing": [item.key for item in self.missing()],
            "unanalysed": list(self.unanalysed),
            "items": [item.to_json() for item in self.items],
        }


def measure(all_cases: Sequence[Case], spec_dir: Path = SPEC_DIR) -> CoverageReport:
    """The coverage of ``all_cases`` (see the module docstring). Regression cases (tag
    ``regression``: expectations recorded from the reference interpreter) are counted per area but
    never count as coverage: only spec-derived cases do."""
    report = CoverageReport()
    for case in all_cases:
        report.areas[case.area] = report.areas.get(case.area, 0) + 1
    cases = [case for case in all_cases if REGRESSION_TAG not in case.tags]
    report.items += _codes(cases, spec_dir)
    ops, builtins, unanalysed = _run_features(cases)
    report.unanalysed = unanalysed
    report.items += _features_items("operators", required_operators(), ops)
    report.items += _features_items("builtins", required_builtins(), builtins)
    report.items += _limits(cases)
    report.items += _categories(cases)
    report.items += _behaviors(cases)
    return report


def _features_items(section: str, required: list[str], found: Mapping[str, list[str]]) -> list[Item]:
    """Required keys (exercised or not), then keys the corpus exercises beyond them (informative)."""
    items = [Item(section, key, tuple(found.get(key, ()))) for key in required]
    wanted = set(required)
    items += [
        Item(section, key, tuple(v), required=False) for key, v in sorted(found.items()) if key not in wanted
    ]
    return items


def _codes(cases: Sequence[Case], spec_dir: Path) -> list[Item]:
    pinned: dict[str, list[str]] = defaultdict(list)
    for case in cases:
        if case.expect.diagnostic is not None:
            pinned[case.expect.diagnostic].append(case.name)
    documented = spec_documented_codes(spec_dir)
    items = []
    for code in all_codes():
        required = documented is None or code in documented
        exempt = UNREACHABLE_CODES.get(code) or HOST_FEATURE_CODES.get(code)
        items.append(Item("codes", code, tuple(pinned.get(code, ())), required, exempt))
    return items


def _limits(cases: Sequence[Case]) -> list[Item]:
    at: dict[str, list[str]] = defaultdict(list)
    over: dict[str, list[str]] = defaultdict(list)
    for case in cases:
        for name in limit_tags(case):
            if "at-limit" in case.tags and case.expect.diagnostic != LIMIT_CODES.get(name):
                at[name].append(case.name)
            if "over-limit" in case.tags and case.expect.diagnostic == LIMIT_CODES.get(name):
                over[name].append(case.name)
    items = []
    for name in required_limits():
        reason = UNREACHABLE_LIMITS.get(name)
        items.append(Item("limits", f"{name} at N", tuple(at.get(name, ())), exempt=reason))
        items.append(Item("limits", f"{name} at N+1", tuple(over.get(name, ())), exempt=reason))
    return items


def limit_tags(case: Case) -> list[str]:
    """The limits a case is tagged with (``limit:<name>``, or an import budget's ``budget-<name>``)."""
    names = [tag.removeprefix("limit:") for tag in case.tags if tag.startswith("limit:")]
    names += [f"json.{tag.removeprefix('budget-')}" for tag in case.tags if tag.startswith("budget-")]
    return names


def _categories(cases: Sequence[Case]) -> list[Item]:
    pinned: dict[str, list[str]] = defaultdict(list)
    for case in cases:
        if case.expect.error is not None:
            pinned[case.expect.error].append(case.name)
    return [
        Item("categories", name, tuple(pinned.get(name, ())), exempt=UNREACHABLE_CATEGORIES.get(name))
        for name in CATEGORIES
    ]


def _behaviors(cases: Sequence[Case]) -> list[Item]:
    ran: dict[str, list[str]] = defaultdict(list)
    for case in cases:
        calls = case.expect.binding_calls or {}
        for entry in case.raw.get("bindings", []):
            behavior = entry.get("behavior")
            if isinstance(behavior, Mapping) and calls.get(str(entry.get("id")), 0) >= 1:
                ran[str(behavior.get("kind"))].append(case.name)
    return [Item("behaviors", kind, tuple(ran.get(kind, ()))) for kind in BEHAVIOR_PARAMS]


# --- operators and built-ins, from the plans of the run cases -------------------------------------


def _run_features(cases: Sequence[Case]) -> tuple[dict[str, list[str]], dict[str, list[str]], list[str]]:
    ops: dict[str, list[str]] = defaultdict(list)
    builtins: dict[str, list[str]] = defaultdict(list)
    unanalysed: list[str] = []
    for case in cases:
        if case.expect.stage != "run":
            continue
        plan = _plan_of(case)
        if plan is None:
            unanalysed.append(case.name)
            continue
        seen: set[tuple[str, str]] = set()
        for section, key in _features(plan):
            if (section, key) not in seen:
                seen.add((section, key))
                (ops if section == "op" else builtins)[key].append(case.name)
    return ops, builtins, unanalysed


def _plan_of(case: Case) -> ExecutionPlan | None:
    """The case's execution plan, validated exactly as the runner does (None if it does not validate)."""
    try:
        module = import_stage(case.raw, case.origin)
        if not isinstance(module, ast.Module):
            return None
        with case_root(case.raw) as root:
            plan = stage_validate.validate_case(module, case.raw, root).plan
    except (DotBoxDError, ValueError):
        return None
    return plan if isinstance(plan, ExecutionPlan) else None


def _features(plan: ExecutionPlan) -> Iterator[tuple[str, str]]:
    for function in plan.module.functions:
        yield from _block(plan, function.body)


def _block(plan: ExecutionPlan, body: tuple[ast.Stmt, ...]) -> Iterator[tuple[str, str]]:
    for stmt in body:
        if plan.is_dead(stmt):
            continue
        if isinstance(stmt, (ast.Set, ast.Return, ast.ExprStmt)):
            yield from _expr(plan, stmt.value)
        elif isinstance(stmt, ast.If):
            yield from _expr(plan, stmt.condition)
            yield from _block(plan, stmt.then)
            yield from _block(plan, stmt.else_)
        elif isinstance(stmt, ast.While):
            yield from _expr(plan, stmt.condition)
            yield from _block(plan, stmt.body)
        elif isinstance(stmt, ast.ForRange):
            yield from _expr(plan, stmt.start)
            yield from _expr(plan, stmt.end)
            yield from _block(plan, stmt.body)


def _expr(plan: ExecutionPlan, e: ast.Expr) -> Iterator[tuple[str, str]]:
    if isinstance(e, ast.Binary):
        yield "op", f"{e.op.value}:{type_kind(plan.type_of(e.left))}"
        yield from _expr(plan, e.left)
        yield from _expr(plan, e.right)
    elif isinstance(e, ast.Unary):
        yield "op", f"{e.op.value}:{type_kind(plan.type_of(e.operand))}"
        yield from _expr(plan, e.operand)
    elif isinstance(e, ast.Call):
        if plan.call_target(e).kind is CallKind.BUILTIN:  # not a module function shadowing it
            for operand in _builtin_operands(plan, e):
                yield "builtin", f"{e.name}:{operand}"
        for arg in e.args:
            yield from _expr(plan, arg)


def _builtin_operands(plan: ExecutionPlan, call: ast.Call) -> list[str]:
    name = call.name
    result = plan.type_of(call)
    first = plan.type_of(call.args[0]) if call.args else None
    if name in ("list.empty", "list.of") and isinstance(result, ListType):
        return [type_kind(result.element)]
    if name in ("list.count", "list.get", "list.add") and isinstance(first, ListType):
        return [type_kind(first.element)]
    if name in _ANY_KIND:
        return ["any"]
    if name == "map.empty" and isinstance(result, MapType):
        return [type_kind(result.key)]
    if name in _KEY_GENERIC and isinstance(first, MapType):
        return [type_kind(first.key)]
    if name == "record.new" and isinstance(result, RecordType):
        return sorted({type_kind(f) for f in result.fields})
    if name == "record.get":
        return [type_kind(result)]
    return [", ".join(str(plan.type_of(arg)) for arg in call.args)]


# --- rendering -----------------------------------------------------------------------------------


def render_text(report: CoverageReport, verbose: bool = False) -> str:
    """Per section: how much is exercised, what is missing, what cannot be a case and why."""
    lines = ["areas: " + ", ".join(f"{area} {n}" for area, n in sorted(report.areas.items()))]
    for name in SECTIONS:
        items = report.section(name)
        required = [item for item in items if item.required]
        covered = [item for item in required if item.cases]
        exempt = [item for item in required if not item.cases and item.exempt]
        missing = [item for item in required if item.missing]
        lines.append("")
        lines.append(
            f"{name}: {len(covered)} of {len(required)} exercised, {len(exempt)} not expressible as a case, "
            f"{len(missing)} missing"
        )
        if verbose:
            lines += [
                f"  ok       {item.key} ({len(item.cases)}: {', '.join(item.cases[:3])})" for item in covered
            ]
        elif covered:
            lines.append(
                "  exercised: " + _wrap(", ".join(f"{item.key} ({len(item.cases)})" for item in covered))
            )
        lines += [f"  MISSING  {item.key}" for item in missing]
        lines += [f"  n/a      {item.key}: {item.exempt}" for item in exempt]
        extra = [item for item in items if not item.required]
        if extra:
            informative = ", ".join(f"{item.key} ({len(item.cases)})" for item in extra)
            label = "not documented in spec/" if name == "codes" else "also exercised"
            lines.append(f"  {label}: " + _wrap(informative))
    if report.unanalysed:
        lines.append("")
        lines.append(f"run cases that did not validate (not analysed): {', '.join(report.unanalysed)}")
    missing = report.missing()
    lines.append("")
    lines.append("COMPLETE" if not missing else f"INCOMPLETE: {len(missing)} missing")
    return "\n".join(lines)


def _wrap(text: str, width: int = 100) -> str:
    words, lines, line = text.split(" "), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return "\n    ".join(lines)
