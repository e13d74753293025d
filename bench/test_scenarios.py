"""pytest-benchmark scenarios named after scheduler_perf. Only scheduling is timed; cluster building is setup.

Run: make bench   (or: .venv/bin/python -m pytest bench --benchmark-only -s -k SchedulingBasic_5000)
"""
from __future__ import annotations

import pytest

from phalanx.scenarios import SCENARIOS
from phalanx.sched import Cluster, Scheduler

NAMES = [n for n in SCENARIOS if not n.startswith("SchedulingBasic_500Nodes")]


@pytest.mark.parametrize("name", NAMES)
def test_scenario(benchmark, name):
    scenario = SCENARIOS[name]

    def setup():
        return (Scheduler(Cluster.from_objects(scenario.build())),), {}

    result = benchmark.pedantic(lambda s: s.schedule(), setup=setup, rounds=3 if scenario.nodes < 50_000 else 1)
    pods = len(result.bindings) + len(result.unschedulable)
    assert pods == scenario.pods
    rate = pods / benchmark.stats.stats.min
    benchmark.extra_info.update(pods=pods, nodes=scenario.nodes, pods_per_s=round(rate), backend="numpy")
    print(f"\n{name}: {rate:,.0f} pods/s (numpy, best of {benchmark.stats.stats.rounds})")
