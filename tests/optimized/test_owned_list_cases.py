"""The owned-list conformance cases exercise the owned path they are written for.

``conformance/cases/collections/owned-lists.json`` pins what both backends must do when a loop
appends to a list it owns (``make_owned_list_cases.py``); the runner and the agreement tests hold
both backends to it. This test makes sure the cases keep testing the in-place path: each kernel must
compile to a take of the list's buffer (``_s_lown``) and inline pushes (``_p_push``), and to no exact
``list.add`` stub call, else a change of the ownership proof would quietly turn the file into one
more test of the exact stubs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dotboxd.runtime.optimized import compile_plan

from .kernels import prepare

CASE_FILE = Path(__file__).resolve().parents[2] / "conformance" / "cases" / "collections" / "owned-lists.json"
KERNELS = sorted({case["kernelText"] for case in json.loads(CASE_FILE.read_text(encoding="utf-8"))["cases"]})


def test_the_file_has_every_loop_kind() -> None:
    assert len(KERNELS) == 3


@pytest.mark.parametrize("text", KERNELS, ids=[f"kernel-{i}" for i in range(len(KERNELS))])
def test_each_owned_list_case_takes_the_owned_path(text: str) -> None:
    source = compile_plan(prepare(text), keep_module=True).source()
    assert source.count("_s_lown(") == 1, source
    assert "_p_push(" in source, source
    assert "_s_i_list_add" not in source, source
