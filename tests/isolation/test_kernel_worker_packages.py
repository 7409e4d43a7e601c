"""The kernel worker runs ``python -I -S`` in an empty root: it can import only the packages the host
binds into it (``pool._PACKAGES``). A third-party import added on the kernel path (the worker module,
its validator and both backends) without a bind makes every worker die at start-up, as a new
dependency of ``dotboxd.core.values`` once did. This test imports what a worker imports, in a fresh
interpreter, and checks every third-party top-level package it loaded is bound."""

from __future__ import annotations

import json
import subprocess
import sys

from dotboxd.isolation import pool

_PROBE = """
import json, sys
import dotboxd.isolation.kernel_worker
from dotboxd.runtime.reference import ReferenceBackend
from dotboxd.runtime.optimized import AutoBackend, OptimizedBackend
names = sorted({m.split(".")[0] for m in sys.modules} - set(sys.stdlib_module_names) - {"dotboxd", "__main__"})
print(json.dumps([n for n in names if not n.startswith("_")]))
"""


def test_every_third_party_package_a_kernel_worker_imports_is_bound_into_it() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    bound = {name.split(".")[0] for name in pool._PACKAGES}
    assert loaded, "the probe loaded no third-party package: it did not import the worker's path"
    assert loaded <= bound, (
        f"a kernel worker imports {sorted(loaded - bound)} but the pool does not bind them"
    )
