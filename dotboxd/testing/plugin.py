"""The pytest plugin (entry point ``pytest11: dotboxd``): fixtures for testing a host's kernels.

A host overrides ``dotboxd_bindings`` (its binding descriptors) and, if it wants, ``dotboxd_policy``
in its ``conftest.py``; tests then ask for ``dotboxd`` (a ``KernelTester``) or ``dotboxd_host``.
Nothing here runs unless a test requests one of these fixtures.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from dotboxd.core.bindings import BindingDescriptor
from dotboxd.host import Policy, SandboxHost
from dotboxd.testing.kernels import KernelTester


@pytest.fixture
def dotboxd_bindings() -> Sequence[BindingDescriptor]:
    """The host's bindings: none by default; override this fixture in your ``conftest.py``."""
    return ()


@pytest.fixture
def dotboxd_policy() -> Policy | None:
    """The policy kernels are checked against: ``None`` means the default (pure computation)."""
    return None


@pytest.fixture
def dotboxd_host(dotboxd_bindings: Sequence[BindingDescriptor]) -> SandboxHost:
    """A fresh ``SandboxHost`` with the host's bindings (one per test, so no state is shared)."""
    return SandboxHost(bindings=dotboxd_bindings)


@pytest.fixture
def dotboxd(dotboxd_host: SandboxHost, dotboxd_policy: Policy | None) -> KernelTester:
    """Accept / reject / run-on-both-backends / run-case-files assertions on ``dotboxd_host``."""
    return KernelTester(dotboxd_host, dotboxd_policy)
