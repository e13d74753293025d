"""Hypothesis profiles: `ci` (default, fits the 15-minute CI budget), `device` (6 examples: GPU runs on a lease of
minutes, quick local checks) and `long` (make test-long: >= 1,000 random clusters per property). Tests marked `long`
(soak and memory runs of minutes) run only under `long`."""
import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=200, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# A few examples per property: device runs (a GPU lease is minutes) and quick local checks.
settings.register_profile("device", max_examples=6, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("long", max_examples=1000, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


LONG = os.environ.get("HYPOTHESIS_PROFILE") == "long"


def pytest_collection_modifyitems(config, items):
    if LONG:
        return
    skip = pytest.mark.skip(reason="a long run: make test-long")
    for item in items:
        if "long" in item.keywords:
            item.add_marker(skip)
