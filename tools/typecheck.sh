#!/usr/bin/env bash
# mypy --strict over the library. The dotboxd.* namespace is assembled from several top-level folders
# (setuptools package-dir), which mypy cannot follow through an editable install, so we mirror the
# mapping with symlinks in .typecheck/ and check that tree.
set -euo pipefail
cd "$(dirname "$0")/.."
tree=.typecheck/dotboxd
rm -rf .typecheck && mkdir -p "$tree"
for entry in dotboxd/*; do ln -s "../../$entry" "$tree/$(basename "$entry")"; done
for pkg in grammar validator runtime conformance; do ln -s "../../$pkg" "$tree/$pkg"; done
PY=${PYTHON:-.venv/bin/python}
exec "$PY" -m mypy --strict --no-incremental -p dotboxd --config-file pyproject.toml --python-executable "$PY" "$@"
