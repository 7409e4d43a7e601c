"""The areas of the corpus: what part of the language a case file checks.

The summary table, ``--area`` and the coverage report group cases by area. An area is a property of
a case *file*: a file in ``cases/<area>/`` belongs to ``<area>``; the four stage directories
(``import/``, ``validate/``, ``policy/``, ``run/``) predate the areas and are kept where other tests
and tools expect them, so each of their files is assigned an area here, once. A file outside the
corpus (an implementer's own cases) belongs to the directory it sits in.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

#: The areas of issue 5, in the order the summary lists them, plus ``generated`` (regression cases
#: recorded from the reference interpreter, never spec-derived; see conformance/README.md).
AREAS: tuple[str, ...] = (
    "import",
    "structure",
    "types",
    "effects-capabilities",
    "policy",
    "control-flow",
    "arithmetic",
    "strings",
    "collections",
    "records",
    "bindings",
    "limits",
    "hostile-input",
    "generated",
)

#: Directories below ``cases/`` that hold files of several areas, listed file by file below.
STAGE_DIRECTORIES: frozenset[str] = frozenset({"import", "validate", "policy", "run"})

#: Corpus-relative path of every file in a stage directory -> its area.
FILE_AREAS: dict[str, str] = {
    # the strict importer: accepted documents, shapes, literal and identifier rules, positions
    "import/accepted.json": "import",
    "import/boundary-rules.json": "import",
    "import/identifiers.json": "import",
    "import/literals.json": "import",
    "import/locations.json": "import",
    "import/ops-and-versions.json": "import",
    "import/shape.json": "import",
    "import/text-form.json": "import",
    "import/python-form.json": "import",
    # budgets at N and N+1
    "import/budgets.json": "limits",
    # parser differentials, smuggled host references, traversal paths, SSRF-shaped uris
    "import/dangerous-references.json": "hostile-input",
    "import/duplicates.json": "hostile-input",
    "import/paths.json": "hostile-input",
    "import/strictness.json": "hostile-input",
    "import/trojan-and-descriptors.json": "hostile-input",
    "import/uris.json": "hostile-input",
    # the validator's rule table (tests/validator/case_table.py writes these files)
    "validate/structure.json": "structure",
    "validate/locals.json": "structure",
    "validate/calls.json": "structure",
    "validate/types.json": "types",
    "validate/control-flow.json": "control-flow",
    "validate/literals.json": "limits",
    "validate/bindings.json": "bindings",
    "policy/policy.json": "policy",
    # run-stage cases (conformance/tools/make_run_cases.py writes these files, one per area)
    **{f"run/{area}.json": area for area in AREAS if area not in ("import", "policy", "generated")},
    # the extension built-ins of dotboxd-1+ext1 (conformance/tools/make_ext_builtin_cases.py); the
    # file sits in its area's directory, listed here so the generator's output has one named owner
    "strings/ext-builtins.json": "strings",
    # string.split, string.replace, format.simple and map.keys (conformance/tools/make_ext_text_cases.py)
    "strings/ext-text-builtins.json": "strings",
    # string.lastIndexOf, the first built-in added as one record (conformance/tools/make_last_index_cases.py)
    "strings/last-index-of.json": "strings",
    # loops that append to a list they own, run to the end or stopped mid-loop at each limit
    # (conformance/tools/make_owned_list_cases.py)
    "collections/owned-lists.json": "collections",
    # strings built by a concatenation loop, at each limit it can reach (make_owned_string_cases.py)
    "strings/owned-string-loops.json": "strings",
}


def corpus_relative(path: Path, corpus_root: Path) -> PurePosixPath | None:
    """``path`` relative to the corpus root, or None when it lies outside the corpus."""
    try:
        return PurePosixPath(path.resolve().relative_to(corpus_root.resolve()).as_posix())
    except ValueError:
        return None


def area_of(path: Path, corpus_root: Path) -> str:
    """The area of the case file at ``path`` (see the module docstring)."""
    relative = corpus_relative(path, corpus_root)
    if relative is not None and len(relative.parts) > 1:
        key = relative.as_posix()
        if relative.parts[0] in STAGE_DIRECTORIES:
            return FILE_AREAS.get(key, relative.parts[0])
        return relative.parts[0]
    parts = path.resolve().parts
    for index in range(len(parts) - 2, -1, -1):
        if parts[index] == "cases" and index + 1 < len(parts) - 1:
            return parts[index + 1]
    return path.resolve().parent.name or "."
