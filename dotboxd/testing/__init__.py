"""Testing helpers for host developers: their own kernels, against their own bindings.

    from dotboxd.testing import KernelTester

    tester = KernelTester(SandboxHost(bindings=[kill]), policy)
    plan = tester.accept(kernel_text)                       # AssertionError with the diagnostic if refused
    tester.reject(kernel_text, "E-CAP-MISSING", pointer="/functions/0/body/0")
    both = tester.run_both(kernel_text, "main", [3])       # reference and optimized agree exactly
    report = tester.run_cases("tests/kernel_cases")          # case files in the conformance format

The same object is the ``dotboxd`` fixture of the pytest plugin (``dotboxd.testing.plugin``,
registered as a ``pytest11`` entry point), built from the ``dotboxd_bindings`` and
``dotboxd_policy`` fixtures a host overrides in its ``conftest.py``. The helpers use only the
public host API and the conformance runner's comparison, so a host's test means what the
project's own tests mean.
"""

from dotboxd.testing.cases import HostCaseError, run_host_cases
from dotboxd.testing.kernels import BothBackends, KernelTester

__all__ = ["BothBackends", "HostCaseError", "KernelTester", "run_host_cases"]
