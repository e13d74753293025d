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

    result = benchmark.pedantic(scenario.schedule, setup=setup, rounds=3 if scenario.nodes < 50_000 else 1)
    pods = len(result.bindings) + len(result.unschedulable)
    assert pods == scenario.pods
    rate = pods / benchmark.stats.stats.min
    benchmark.extra_info.update(pods=pods, nodes=scenario.nodes, pods_per_s=round(rate), backend="numpy")
    print(f"\n{name}: {rate:,.0f} pods/s (numpy, best of {benchmark.stats.stats.rounds})")


# --- GPU trace replay (issue 5): one FGD-paper replay of the Alibaba default trace per policy -----------------
TRACE_REPLAYS = {"TraceReplay_AlibabaDefault_FGD": "fgd", "TraceReplay_AlibabaDefault_BestFit": "bestfit"}


@pytest.mark.parametrize("name", list(TRACE_REPLAYS))
def test_trace_replay(benchmark, name):
    from phalanx.cluster_models.alibaba import default_data_dir
    from phalanx.trace_runs import load
    from phalanx.simulate.alibaba import replay
    if default_data_dir() is None:
        pytest.skip("trace data not found (set PHALANX_DATA)")
    nodes, pods = load("openb_pod_list_default.csv")
    result = benchmark.pedantic(lambda: replay(nodes, pods, TRACE_REPLAYS[name], 42), rounds=3)
    assert result.pods > pods.size            # inflated to 130% of GPU capacity
    benchmark.extra_info.update(pods=result.pods, nodes=nodes.size, placed=result.placed,
                                replay_s=round(result.seconds, 3), backend="numpy")
    print(f"\n{name}: {result.pods} pods on {nodes.size} nodes, replay {result.seconds:.2f}s (numpy)")
