"""Shared test configuration: Hypothesis profiles chosen by the environment.

``CI=true`` selects the bounded "ci" profile so the whole suite stays well under 15 minutes on two
cores; ``DOTBOXD_DEEP=1`` selects a long local fuzzing profile; otherwise "dev" is used.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "dev", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("deep", max_examples=5_000, deadline=None, suppress_health_check=list(HealthCheck))

if os.environ.get("DOTBOXD_DEEP") == "1":
    settings.load_profile("deep")
elif os.environ.get("CI", "").lower() == "true":
    settings.load_profile("ci")
else:
    settings.load_profile("dev")
