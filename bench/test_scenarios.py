"""pytest-benchmark scenarios named after scheduler_perf. Only scheduling is timed; cluster building is setup.

Run: make bench   (or: .venv/bin/python -m pytest bench --benchmark-only -s -k SchedulingBasic_5000)
"""
from __future__ import annotations

import pytest

from phalanx.scenarios import SCENARIOS
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.config import default_config

NAMES = [n for n in SCENARIOS if not n.startswith("SchedulingBasic_500Nodes")]


@pytest.mark.parametrize("name", NAMES)
def test_scenario(benchmark, name):
    _run(benchmark, name, 100)


# Upstream's adaptive sampling (percentageOfNodesToScore 0): what kube-scheduler and scheduler_perf run with when a
# configuration leaves it out; phalanx's default scores every node.
SAMPLED = ["SchedulingBasic_5000Nodes_10000Pods", "SchedulingKubeMix_5000Nodes_5000Pods",
           "SchedulingKubeMix_50000Nodes_3000Pods", "Heterogeneous_5000Nodes_10000Pods"]


@pytest.mark.parametrize("name", SAMPLED)
def test_scenario_sampled(benchmark, name):
    _run(benchmark, name, 0)


def _run(benchmark, name: str, percentage: int) -> None:
    scenario = SCENARIOS[name]
    config = default_config(percentage_of_nodes_to_score=percentage)

    def setup():
        return (Scheduler(Cluster.from_objects(scenario.build()), config),), {}

    result = benchmark.pedantic(scenario.schedule, setup=setup, rounds=3 if scenario.nodes < 50_000 else 1)
    pods = len(result.bindings) + len(result.unschedulable)
    assert pods == scenario.pods
    rate = pods / benchmark.stats.stats.min
    benchmark.extra_info.update(pods=pods, nodes=scenario.nodes, pods_per_s=round(rate), backend="numpy",
                                percentage_of_nodes_to_score=percentage)
    print(f"\n{name}: {rate:,.0f} pods/s (numpy, percentageOfNodesToScore {percentage}, best of "
          f"{benchmark.stats.stats.rounds})")


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
