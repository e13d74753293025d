"""percentageOfNodesToScore < 100: numFeasibleNodesToFind nodes from nextStartNodeIndex, round the ring."""
from __future__ import annotations

from phalanx.cluster_models import ClusterObjects
from phalanx.sched import Cluster, Scheduler
from strategies import make_node, make_pod, make_profile


def test_ring_sampling_by_hand():
    # 200 identical empty nodes, 50%: numFeasibleNodesToFind = max(200 * 50 // 100, 100) = 100.
    # pod 0: nodes 0..99 are sampled, all tie -> n0; 100 nodes visited, next start 100.
    # pod 1: nodes 100..199 -> n100; next start (100 + 100) % 200 = 0.
    # pod 2: nodes 0..99 again; n0 now carries a pod (lower LeastAllocated) -> n1.
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(200)]
    pods = [make_pod(f"p{i}", cpu="1", memory="1Gi") for i in range(3)]
    cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[]))
    scheduler = Scheduler(cluster, make_profile(percentage_of_nodes_to_score=50))
    result = scheduler.schedule()
    assert result.bindings == {"default/p0": "n0", "default/p1": "n100", "default/p2": "n1"}
    assert scheduler.next_start == 100
    assert result.batch_rounds == 0 and result.pod_cycles == 3     # sampling turns batching off


def test_small_clusters_score_every_node():
    # Fewer than 100 nodes: every node is scored whatever the percentage, and batching stays on.
    nodes = [make_node(f"n{i}") for i in range(50)]
    pods = [make_pod(f"p{i}", cpu="1") for i in range(10)]
    cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[]))
    result = Scheduler(cluster, make_profile(percentage_of_nodes_to_score=10)).schedule()
    assert len(result.bindings) == 10 and result.batch_rounds >= 1
