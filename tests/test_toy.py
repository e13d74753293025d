"""The toy cluster of phalanx.cluster_models.generate, worked out by hand."""
from __future__ import annotations

from phalanx.cluster_models import ClusterObjects
from phalanx.cluster_models.generate import toy_cluster
from phalanx.sched import DEFAULT_PROFILE as DEFAULT, Cluster, Scheduler
from phalanx.sched.config import with_compat
from phalanx.sched.explain import explain_pod


def _toy(profile=DEFAULT):
    nodes, pods = toy_cluster()
    cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[]))
    return Scheduler(cluster, profile)


def test_toy_placements():
    # web-0 (1 cpu / 1Gi). node-c: taint dedicated=ml:NoSchedule, not tolerated -> filtered.
    # node-a (4 cpu / 8Gi, empty):
    #   LeastAllocated: cpu (4000-1000)*100/4000 = 75, memory (8-1)/8*100 = 87.5 -> 87; (75+87)/2 = 81
    #   Balanced v1.36: with pod fractions .25/.125 -> std .0625 -> 93; without 0/0 -> 100;
    #                   50 + (50 + 93 - 100)//2 = 71
    #   TaintToleration: no PreferNoSchedule taints anywhere -> 100 x 3 = 300. Total 452.
    # node-b (busy uses 3 cpu / 2Gi): LeastAllocated: cpu 0, memory (8-3)/8 -> 62; (0+62)/2 = 31
    #   Balanced: with 1.0/.375 -> std .3125 -> 68; without .75/.25 -> 75; 50 + (50+68-75)//2 = 71. Total 402.
    # -> node-a. web-1: node-a now 2 cpu / 2Gi after: LA cpu 50, mem 75 -> 62; Balanced with .5/.25 -> 87,
    #    without .25/.125 -> 93: 50 + 44//2 = 72; total 434 > 402 -> node-a again.
    # ml (6 cpu, tolerates the taint): a has 2 cpu free, b 1 cpu -> only node-c (8 cpu) fits.
    result = _toy().schedule()
    assert result.bindings == {"default/web-0": "node-a", "default/web-1": "node-a", "default/ml": "node-c"}
    assert result.unschedulable == {}


def test_toy_explain_numbers():
    nodes, pods = toy_cluster()
    report = explain_pod(_toy(), pods[1])
    by_name = {n["name"]: n for n in report["nodes"]}
    assert by_name["node-a"]["scores"]["NodeResourcesFit"] == {"raw": 81, "normalized": 81}
    assert by_name["node-a"]["scores"]["NodeResourcesBalancedAllocation"]["raw"] == 71
    assert by_name["node-a"]["total"] == 452
    assert by_name["node-b"]["total"] == 402
    assert by_name["node-c"]["first_failure"] == "TaintToleration"
    assert by_name["node-c"]["filters"]["TaintToleration"] == {
        "status": "UnschedulableAndUnresolvable", "reasons": ["node(s) had untolerated taint(s)"],
        "taint": "dedicated=ml:NoSchedule"}
    assert report["selected"] == "node-a"


def test_toy_v135_balanced():
    # v1.35 scores the balance with the pod only: node-a 93, node-b 68.
    nodes, pods = toy_cluster()
    report = explain_pod(_toy(with_compat(DEFAULT, "1.35")), pods[1])
    by_name = {n["name"]: n for n in report["nodes"]}
    assert by_name["node-a"]["scores"]["NodeResourcesBalancedAllocation"]["raw"] == 93
    assert by_name["node-b"]["scores"]["NodeResourcesBalancedAllocation"]["raw"] == 68


def test_toy_unschedulable_message():
    # A 5-cpu pod: node-a has 4 cpu allocatable (5 > 4: unresolvable), node-b 1 cpu free, node-c tainted.
    # Histogram sorted as strings: "1 node(s) had untolerated taint(s)" < "2 Insufficient cpu".
    # Preemption cannot help anywhere: the taint and 5 cpu > 4 allocatable are both UnschedulableAndUnresolvable.
    nodes, pods = toy_cluster()
    big = pods[1].model_copy(deep=True)
    big.metadata.name = "big"
    big.spec.containers[0].resources.requests["cpu"] = 5000
    scheduler = _toy()
    scheduler.cluster.add_pods([big])
    result = scheduler.schedule()
    assert result.unschedulable["default/big"] == (
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. no new claims to deallocate,"
        " preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")
