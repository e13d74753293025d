"""percentageOfNodesToScore < 100: numFeasibleNodesToFind nodes from nextStartNodeIndex, round the ring."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from phalanx.cluster_models import ClusterObjects
from phalanx.sched import Cluster, Scheduler
from reference.profile import ref_profile
from reference.scheduler import ref_schedule
from strategies import clusters, first_attempts, make_node, make_pod, make_profile, profiles


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


def _pinned(name, node, cpu="1"):
    """A pod whose required node affinity names one node (a DaemonSet pod's): NodeAffinity's PreFilterResult."""
    return make_pod(name, cpu=cpu, memory="1Gi",
                    required_terms=[{"match_fields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}])


def test_prefilter_result_is_the_cycles_ring_by_hand():
    # 200 empty nodes, 50%. d0 is pinned to n150: its cycle's node list is [n150] alone (numFeasibleNodesToFind 1),
    # one node is processed, nextStartNodeIndex (0 + 1) % 200 = 1. p1 then samples n1..n100, all tied -> n1, and
    # the index moves to 101. (Counting the PreFilterResult's nodes as the whole ring would leave it at 0 -> n0.)
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(200)]
    pods = [_pinned("d0", "n150"), make_pod("p1", cpu="1", memory="1Gi")]
    cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[]))
    scheduler = Scheduler(cluster, make_profile(percentage_of_nodes_to_score=50))
    result = scheduler.schedule()
    assert result.bindings == {"default/d0": "n150", "default/p1": "n1"}
    assert scheduler.next_start == 101


def test_failed_prefilter_result_cycles_move_the_ring_by_hand():
    # Three identical pods pinned to n7, each too large for it: each cycle processes its one node and fails, so the
    # index moves by 1 per pod (3 in all, the last two failing as the first did). p3 then samples n3..n102 -> n3.
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(200)]
    pods = [_pinned(f"d{i}", "n7", cpu="8") for i in range(3)] + [make_pod("p3", cpu="1", memory="1Gi")]
    cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[]))
    scheduler = Scheduler(cluster, make_profile(percentage_of_nodes_to_score=50))
    result = scheduler.schedule()
    assert result.bindings == {"default/p3": "n3"}
    assert sorted(result.unschedulable) == ["default/d0", "default/d1", "default/d2"]


@settings(max_examples=60)
@given(clusters(max_nodes=10, max_pods=24), profiles(), st.data())
def test_no_score_profile_ring_matches_reference(cluster, profile, data):
    """Without Score plugins a cycle takes the first feasible node round nextStartNodeIndex's ring, over the nodes a
    PreFilterResult leaves when there is one: whole runs as the reference's ring, with pinned pods (to one or two
    nodes, possibly absent) slipped into the queue."""
    nodes, pods, classes = cluster
    profile = make_profile(filters=ref_profile(profile).filters, scores=())
    pods = list(pods)
    for i in range(data.draw(st.integers(0, 4))):
        names = data.draw(st.lists(st.integers(0, len(nodes)), min_size=1, max_size=2, unique=True))
        pinned = make_pod(f"pinned-{i}", cpu=data.draw(st.sampled_from(["100m", "1", "64"])), required_terms=[
            {"match_fields": [{"key": "metadata.name", "operator": "In", "values": [f"n{j}"]}]} for j in names])
        pods.insert(data.draw(st.integers(0, len(pods))), pinned)
    want_bindings, want_unschedulable = ref_schedule(nodes, pods, classes, profile)
    bound = [p for p in pods if p.spec.node_name]
    state = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=bound, priority_classes=classes, warnings=[]))
    pending = [p for p in pods if not p.spec.node_name and p.status.phase not in ("Succeeded", "Failed")]
    bindings, failures = first_attempts(Scheduler(state, profile), pending)
    assert bindings == want_bindings
    assert failures == want_unschedulable
