"""Language surfaces: a policy limited to ``dotboxd-1`` refuses every extension built-in by name,
and ``dotboxd check`` / ``dotboxd prove`` report what the moderation example needs and proves."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from dotboxd.cli.main import main
from dotboxd.core.builtins import BASE_SURFACE, BUILTINS, EXT_SURFACE
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.host import Policy, SandboxHost

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODERATION = EXAMPLES / "moderation.dbk"

_SAMPLE_ARGS = {
    "I32": "1",
    "F64": "1.0",
    "String": '"a"',
    "List<T>": "list.of(1)",
    "List<String>": 'list.of("a")',
    "Map<K, V>": "map.empty[Map<I32, I32>]()",
}


def _cli(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue() + err.getvalue()


def _call_kernel(name: str) -> str:
    params = BUILTINS[name].signature.split(" -> ")[0][1:-1]  # "(List<T>, I32 start)" -> inner text
    for generic in _SAMPLE_ARGS:  # a comma inside Map<K, V> is not a parameter separator
        params = params.replace(generic, generic.replace(", ", ","))
    args = ", ".join(_SAMPLE_ARGS[p.split(" ")[0].replace(",", ", ")] for p in params.split(", "))
    # the call sits in a branch that never runs: a dead call is refused all the same
    return f'module "t" version "1.0.0";\nentrypoint fn main() -> I32 {{\nif false {{ {name}({args}); }}\nreturn 0;\n}}\n'


@pytest.mark.parametrize("name", sorted(n for n, b in BUILTINS.items() if b.surface == EXT_SURFACE))
def test_extension_builtin_is_refused_by_a_dotboxd1_only_policy(name: str) -> None:
    host = SandboxHost()
    source = _call_kernel(name)
    host.prepare(source, Policy.default())  # the default surface admits it
    with pytest.raises(DotBoxDError) as info:
        host.prepare(source, Policy.builder().with_language_surface(BASE_SURFACE).build())
    (diag,) = info.value.diagnostics
    assert diag.code == "E-CALL-SURFACE"
    assert f"'{name}'" in diag.message and EXT_SURFACE in diag.message
    assert diag.pointer == "/functions/0/body/0/then/0/value"
    assert diag.span is not None and (diag.span.line, diag.span.column) == (3, 12)


def test_language_surface_in_the_policy_json_and_hash() -> None:
    base = Policy.from_json({"languageSurface": "dotboxd-1"})
    assert base.language_surface == BASE_SURFACE and base.to_json()["languageSurface"] == BASE_SURFACE
    default = Policy.from_json({})
    assert default.language_surface == EXT_SURFACE and "languageSurface" not in default.to_json()
    assert base.policy_hash != default.policy_hash
    assert Policy.from_json(json.dumps(base.to_json())).policy_hash == base.policy_hash
    with pytest.raises(DotBoxDError) as info:
        Policy.from_json('{"languageSurface": "dotboxd-2"}')
    (diag,) = info.value.diagnostics
    assert diag.code == "E-POLICY-SCHEMA" and diag.pointer == "/languageSurface"
    with pytest.raises(DotBoxDError):
        Policy.builder().with_language_surface("nope").build()


def test_moderation_example_fuel_is_proved_within_budget() -> None:
    code, out = _cli("prove", str(MODERATION), "--policy", str(EXAMPLES / "moderation-policy.json"))
    assert code == 0, out
    assert "fuel: PROVED" in out and "requireStaticBound: met" in out
    code, out = _cli("check", str(MODERATION))
    assert code == 0 and f"language surface: {EXT_SURFACE}" in out


def test_moderation_example_fails_cleanly_under_a_dotboxd1_only_policy() -> None:
    strict = str(EXAMPLES / "moderation-dotboxd1-policy.json")
    for command in ("check", "prove"):
        code, out = _cli(command, str(MODERATION), "--policy", strict)
        assert code == 1, out
        assert "E-CALL-SURFACE" in out and "Traceback" not in out
        assert "'string.contains'" in out and "'string.toLowerInvariant'" in out


@pytest.mark.parametrize("backend", ["reference", "optimized"])
def test_moderation_example_folds_case(backend: str) -> None:
    host = SandboxHost()
    plan = host.prepare(
        MODERATION.read_text(encoding="utf-8"), Policy.from_json({"limits": {"maxWallTimeMs": 60000}})
    )
    verdicts = {
        message: host.execute(plan, "main", [message], backend=backend).value  # type: ignore[arg-type]
        for message in ("hello", "SPAM spam", "Free Money, no ScAm", "spa m")
    }
    assert verdicts == {"hello": 0, "SPAM spam": 1, "Free Money, no ScAm": 2, "spa m": 0}
