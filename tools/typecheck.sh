#!/usr/bin/env bash
# mypy --strict over the library, as the editable install presents it (incremental: the cache in
# .mypy_cache makes a repeated run take seconds instead of a minute). The dotboxd.* namespace is
# assembled from several top-level folders; the editable install (tools/packaging/dotboxd_backend.py)
# puts a tree of folder links on sys.path that mypy follows like any installed package. mypy runs from
# an empty directory because it searches the working directory first, and the repository's own
# dotboxd/ folder holds only part of the package (mypy would silently check that part alone).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
PY=${PYTHON:-.venv/bin/python}
case "$PY" in /*) ;; */*) PY="$root/$PY" ;; esac
away=$(mktemp -d)
trap 'rm -rf "$away"' EXIT
cd "$away"
"$PY" -m mypy --strict -p dotboxd --config-file "$root/pyproject.toml" \
    --python-executable "$PY" --cache-dir "$root/.mypy_cache" "$@"
