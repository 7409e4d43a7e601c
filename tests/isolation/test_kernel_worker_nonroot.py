"""The non-root path: a host that is not root gets its namespaces from a user namespace.

CI runs as root, where the strict profile drops the worker to ``nobody`` (``uid-drop``). A host that
runs as an ordinary user cannot switch uid; it must make a user namespace first (``user-ns``), and
only then the network, mount and PID namespaces. This test becomes such a host: it starts a Python
interpreter as uid/gid 65534 with no groups and no capabilities (``setpriv``) and runs a kernel with
``isolation="worker"`` and a job with ``run_python`` there, each under the strict profile.

The interpreter must be one that user can execute: this one, or the system interpreter of the same
version (a ``pyenv`` interpreter under ``/root`` is not reachable once the capabilities are gone); the
venv's site-packages are added to its path (their extensions are built for this minor version).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig

import pytest

from .layers import expected_layers

SETPRIV = shutil.which("setpriv")
UNPRIVILEGED = ["--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all"]

SCRIPT = """
import json, os, site, sys
site.addsitedir(sys.argv[-1])
from dotboxd.host import SandboxHost
from dotboxd.isolation import run_python
from dotboxd.isolation.pool import WorkerPool
from dotboxd.isolation.worker import group_members
KERNEL = 'module "k" version "1.0.0";\\nentrypoint fn main(a I32, b I32) -> I32 { return a * 10 + b; }'
host = SandboxHost()
plan = host.prepare(KERNEL)
with WorkerPool(size=1) as pool:
    isolated = host.execute(plan, "main", [4, 3], isolation="worker", worker_pool=pool)
    pids = pool.pids()
local = host.execute(plan, "main", [4, 3])
job = run_python("def main(x):\\n    return x + 1\\n", 41)
print(json.dumps({
    "uid": os.getuid(),
    "value": [isolated.value, local.value],
    "usage": [isolated.usage.to_json(), local.usage.to_json()],
    "layers": list(isolated.isolation_layers),
    "jobLayers": list(job.layers),
    "jobOk": job.ok and job.value == 42,
    "leftover": [p for p in pids if group_members(p)],
}))
"""


def _interpreter() -> str | None:
    """An interpreter of this Python version that uid 65534 can execute, or None."""
    assert SETPRIV is not None
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (os.path.realpath(sys.executable), f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        if not os.path.exists(candidate):
            continue
        # exec'd inside a user namespace, as the worker will be (where no capability is left)
        probe = subprocess.run(
            [
                SETPRIV,
                *UNPRIVILEGED,
                "unshare",
                "--user",
                "--map-root-user",
                "--",
                candidate,
                "-c",
                "import sys; print(sys.version_info[:2])",
            ],
            capture_output=True,
            text=True,
            timeout=30,
            cwd="/tmp",
        )
        if probe.returncode == 0 and probe.stdout.strip() == str(tuple(sys.version_info[:2])):
            return candidate
    return None


@pytest.mark.skipif(
    SETPRIV is None, reason="util-linux 'setpriv' is not installed: cannot become an unprivileged user"
)
@pytest.mark.skipif(os.geteuid() != 0, reason="only root can start the unprivileged host this test needs")
def test_worker_nonroot_host_gets_its_namespaces_from_a_user_namespace() -> None:
    interpreter = _interpreter()
    if interpreter is None:
        pytest.skip(f"no python{sys.version_info.major}.{sys.version_info.minor} that uid 65534 may execute")
    site_packages = sysconfig.get_paths()["purelib"]
    assert SETPRIV is not None
    done = subprocess.run(
        [SETPRIV, *UNPRIVILEGED, interpreter, "-c", SCRIPT, site_packages],
        capture_output=True,
        text=True,
        timeout=180,
        cwd="/tmp",
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["uid"] == 65534
    assert report["value"] == [43, 43] and report["usage"][0] == report["usage"][1]
    strict_unprivileged = expected_layers(euid=65534)
    assert set(report["layers"]) == strict_unprivileged and "uid-drop" not in report["layers"]
    assert report["jobOk"] and set(report["jobLayers"]) == strict_unprivileged
    assert report["leftover"] == []
