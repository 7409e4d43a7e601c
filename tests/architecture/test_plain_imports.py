"""Dependencies that are plain and one-way, so readers and tools see them (issue 17, item 5).

The conformance stages import what they run by name (no module-name strings through ``importlib``);
the optimized code generator takes proof facts as an input rather than calling the prover; and the
prover's helper modules see the analyzer through ``validator/prover/interface.py``, never its class.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports (relative ones as written, e.g. ``.analyzer``), at any depth."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add("." * node.level + (node.module or ""))
    return found


def _names(path: Path) -> set[str]:
    return {node.id for node in ast.walk(ast.parse(path.read_text("utf-8"))) if isinstance(node, ast.Name)}


def test_conformance_stages_import_their_stages_plainly() -> None:
    for name in ("pipeline", "stage_validate", "stage_run"):
        path = ROOT / "conformance" / f"{name}.py"
        assert not {"importlib", "importlib.util"} & _imports(path), path
        assert "optional_module" not in _names(path), path


def test_code_generation_never_calls_the_prover() -> None:
    for path in sorted((ROOT / "runtime" / "optimized").glob("*.py")):
        if path.name == "proofs.py":  # the compile step's one call, before generation
            continue
        assert not any(name.startswith("dotboxd.validator.prover") for name in _imports(path)), path


def _imports_the_analyzer_class(path: Path) -> bool:
    return any(
        isinstance(node, ast.ImportFrom)
        and node.module == "analyzer"
        and any(alias.name == "Analyzer" for alias in node.names)
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
    )


def test_prover_helpers_do_not_import_the_analyzer_back() -> None:
    """Only the driver that builds an ``Analyzer`` imports the class; helpers use the interface."""
    importers = sorted(
        path.name
        for path in (ROOT / "validator" / "prover").glob("*.py")
        if _imports_the_analyzer_class(path)
    )
    assert importers == ["prover.py"]
