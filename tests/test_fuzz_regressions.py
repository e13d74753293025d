"""Regressions for the defects an outside fuzz of the simulation API found (issue 17), each failing before its fix."""
from __future__ import annotations

import pytest
from strategies import make_node, make_pod, make_pod_group

from phalanx.cluster_models import ClusterObjects
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.podgroups import MEMBER_UNSCHEDULABLE, QUORUM_MESSAGE


def _one_node(**kw) -> Scheduler:
    return Scheduler(Cluster.from_objects(ClusterObjects(nodes=[make_node("n0", cpu="4", memory="8Gi")], **kw)))


@pytest.mark.parametrize("second", ["200m", "100m"], ids=["other-spec", "same-spec"])
def test_a_name_deleted_twice_is_never_bound(second):
    """Two lives of one name, each deleted while pending: the first stale queue entry must not consume the second
    deletion (it used to bind a pod that no longer exists, or raise KeyError)."""
    s = _one_node()
    s.add_pods([make_pod("p0", cpu="100m")])
    s.delete_pod("default/p0")
    s.add_pods([make_pod("p0", cpu=second)])
    s.delete_pod("default/p0")
    assert s.run_until_idle() == []
    assert s.cluster.tensors.nodes.requested.sum() == 0


def test_a_name_deleted_then_added_again_binds_once():
    s = _one_node()
    s.add_pods([make_pod("p0", cpu="100m")])
    s.delete_pod("default/p0")
    s.add_pods([make_pod("p0", cpu="300m")])
    records = s.run_until_idle()
    assert [(r.kind, r.object, r.node) for r in records] == [("Bound", "default/p0", "n0")]
    assert s.cluster.tensors.nodes.requested[0, s.cluster.tensors.resources.ids["cpu"]] == 300


def test_gang_that_loses_a_member_while_queued_goes_back_to_preenqueue():
    """v1.36: nothing re-checks a queued gang; its cycle fails (Permit never reaches minCount), and the requeue runs
    PreEnqueue, which holds the members until a new member arrives."""
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(2)]
    s = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes, pod_groups=[make_pod_group("g", min_count=3)])))
    s.add_pods([make_pod(f"m{i}", cpu="1", pod_group="g") for i in range(3)])
    s.delete_pod("default/m2")
    out = s.step(0.0)
    messages = [(r.object, r.message) for r in out if r.kind == "Unschedulable"]
    # No pod is bound, so workload-aware preemption has no victim and says so in the group's status.
    failed = MEMBER_UNSCHEDULABLE + ", No preemption victims found for incoming preemptor"
    assert messages == [("default/m0", failed), ("default/m1", failed),
                        ("default/m0", QUORUM_MESSAGE), ("default/m1", QUORUM_MESSAGE)]
    assert s.step(60.0) == []                       # held: no retry without a new member
    s.add_pods([make_pod("m3", cpu="1", pod_group="g")])
    bound = {r.object for r in s.run_until_idle() if r.kind == "Bound"}
    assert bound == {"default/m0", "default/m1", "default/m3"}


@pytest.mark.parametrize("where", ["unschedulable pool", "gated", "gang member"])
def test_deleting_a_pod_outside_the_pod_runs_leaves_no_deletion_marker(where):
    """Found by the soak test (tests/test_soak.py): a deletion marker was left for every pending pod deleted
    from the unschedulable pool, the gated pool or its PodGroup; nothing ever consumed them, so they grew with
    the events of a long simulation."""
    s = _one_node(pod_groups=[make_pod_group("g", min_count=3)])
    if where == "unschedulable pool":
        s.add_pods([make_pod("p0", cpu="64")])
        s.run_until_idle()
    elif where == "gated":
        s.add_pods([make_pod("p0", cpu="100m", scheduling_gates=["wait"])])
    else:
        s.add_pods([make_pod("p0", cpu="100m", pod_group="g")])      # waits for quorum
    s.delete_pod("default/p0")
    assert s.queue.deleted == set()
    assert s.run_until_idle() == []
