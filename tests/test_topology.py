"""Topology-aware workload scheduling (KEP-5732): a PodGroup with schedulingConstraints.topology lands in one
domain of its node label. Hand-checked toy clusters; every number below is worked out in the comments.

Nodes are make_node's defaults (4 cpu, 8Gi, 110 pods) with one nvidia.com/gpu each; group pods ask 100m cpu,
128Mi and one GPU, so a node takes one of them. Racks are the label "rack".
"""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from reference.groups import ref_schedule_groups
from strategies import (
    first_attempts,
    clusters_with_groups,
    make_node,
    make_pod,
    make_pod_group,
    profiles,
)

from phalanx.cluster_models import ClusterObjects
from phalanx.cluster_models.tensors import restrict
from phalanx.cluster_models.workloads import (
    PodGroupSchedulingConstraints,
    TopologyConstraint,
)
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.podgroups import MEMBER_UNSCHEDULABLE

# What workload-aware preemption appends to a failed topology-constrained group's status in v1.36.
CONSTRAINED = ", workload aware preemption is not supported for pod groups with scheduling constraints"
from phalanx.sched.records import BOUND, POD_GROUP_SCHEDULED, UNSCHEDULABLE

RACK = "rack"


def rack_nodes(layout):
    """layout: {"a": 2, "b": 3} -> n1, n2 in rack a, n3..n5 in rack b (input order)."""
    nodes, i = [], 0
    for rack, count in layout.items():
        for _ in range(count):
            i += 1
            nodes.append(make_node(f"n{i}", gpu=1, labels={RACK: rack} if rack else {}))
    return nodes


def member(name, group="g", **kw):
    return make_pod(name, cpu="100m", memory="128Mi", gpu=1, pod_group=group, **kw)


def scheduler(nodes, pods=(), groups=(), **kw):
    objects = ClusterObjects(nodes=list(nodes), pods=list(pods), priority_classes=[], warnings=[],
                             workloads=[], pod_groups=list(groups))
    return Scheduler(Cluster.from_objects(objects), **kw)


def bound_nodes(records):
    return {r.object.split("/")[1]: r.node for r in records if r.kind == BOUND}


def test_gang_goes_to_the_only_rack_that_holds_it():
    """Racks a (n1, n2) and b (n3, n4, n5), gang of 3 (minCount 3): only b has three free GPUs. Without the
    constraint the gang would take n1, n2, n3."""
    s = scheduler(rack_nodes({"a": 2, "b": 3}), groups=[make_pod_group("g", min_count=3, topology=RACK)])
    s.add_pods([member(f"m{i}") for i in range(3)])
    out = s.run_until_idle()
    assert bound_nodes(out) == {"m0": "n3", "m1": "n4", "m2": "n5"}
    assert [(r.status, r.reason) for r in out if r.kind == POD_GROUP_SCHEDULED] == [("True", "Scheduled")]


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")
def test_auto_backend_places_a_topology_gang():
    """backend auto resolves to "numpy+jax"; the placement's own placer is made from that name (it once raised
    "unknown backend 'numpy+jax'")."""
    s = scheduler(rack_nodes({"a": 2, "b": 3}), groups=[make_pod_group("g", min_count=3, topology=RACK)],
                  backend="auto")
    s.add_pods([member(f"m{i}") for i in range(3)])
    assert bound_nodes(s.run_until_idle()) == {"m0": "n3", "m1": "n4", "m2": "n5"}


def test_without_the_constraint_the_gang_spans_racks():
    s = scheduler(rack_nodes({"a": 2, "b": 3}), groups=[make_pod_group("g", min_count=3)])
    s.add_pods([member(f"m{i}") for i in range(3)])
    assert bound_nodes(s.run_until_idle()) == {"m0": "n1", "m1": "n2", "m2": "n3"}


def test_fuller_rack_wins_the_placement_score():
    """Racks a (n1-n3) and b (n4-n6), both can take the gang of 3. n4 carries a bound pod of 2 cpu / 1Gi.
    PodGroupPodsCount: 3 pods in each -> 100 and 100. NodeResourcesFit ScorePlacement (MostAllocated, cpu and
    memory weight 1) over each rack's 12 cpu / 24Gi with the group's 300m / 384Mi added:
      a: cpu 300 * 100 // 12000 = 2; memory 402653184 * 100 // 25769803776 = 1; (2 + 1) // 2 = 1 -> total 101
      b: cpu 2300 * 100 // 12000 = 19; memory 1476395008 * 100 // 25769803776 = 5; (19 + 5) // 2 = 12 -> 112
    so b wins although a comes first; inside b the pod-by-pod scores (LeastAllocated) prefer the empty n5, n6
    first and then n4."""
    loaded = make_pod("busy", cpu="2", memory="1Gi", node_name="n4")
    s = scheduler(rack_nodes({"a": 3, "b": 3}), pods=[loaded],
                  groups=[make_pod_group("g", min_count=3, topology=RACK)])
    s.add_pods([member(f"m{i}") for i in range(3)])
    assert sorted(bound_nodes(s.run_until_idle()).values()) == ["n4", "n5", "n6"]


def test_equal_placements_go_to_the_first():
    """Racks a (n1, n2) and b (n3, n4), identical and empty, gang of 2: equal scores, the first rack wins."""
    s = scheduler(rack_nodes({"a": 2, "b": 2}), groups=[make_pod_group("g", min_count=2, topology=RACK)])
    s.add_pods([member("m0"), member("m1")])
    assert bound_nodes(s.run_until_idle()) == {"m0": "n1", "m1": "n2"}


def test_no_rack_holds_the_gang():
    """Racks a (n1, n2) and b (n3, n4), gang of 3: nothing binds. The first placement (rack a) places m0, m1
    and m2 fits none of its 2 nodes; the group's condition says no placement is available."""
    s = scheduler(rack_nodes({"a": 2, "b": 2}), groups=[make_pod_group("g", min_count=3, topology=RACK)])
    s.add_pods([member(f"m{i}") for i in range(3)])
    before = s.cluster.tensors.nodes.requested.copy()
    out = s.step(0)
    assert not [r for r in out if r.kind == BOUND]
    messages = {r.object.split("/")[1]: r.message for r in out if r.kind == UNSCHEDULABLE}
    assert messages == {"m2": "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.",
                        "m0": MEMBER_UNSCHEDULABLE + CONSTRAINED, "m1": MEMBER_UNSCHEDULABLE + CONSTRAINED}
    assert [(r.status, r.message) for r in out if r.kind == POD_GROUP_SCHEDULED] == [
        ("False", "0/2 placements are available, first placement status: pod group is unschedulable" + CONSTRAINED)]
    assert np.array_equal(s.cluster.tensors.nodes.requested, before)
    assert s.cluster.tensors.live_bound() == []


def test_nodes_without_the_label_are_in_no_placement():
    """n1, n2 unlabelled, n3 in rack a: a gang of 2 fits nowhere (rack a has one GPU)."""
    s = scheduler(rack_nodes({"": 2, "a": 1}), groups=[make_pod_group("g", min_count=2, topology=RACK)])
    s.add_pods([member("m0"), member("m1")])
    out = s.step(0)
    assert not [r for r in out if r.kind == BOUND]
    assert [r.message for r in out if r.kind == POD_GROUP_SCHEDULED] == [
        "0/1 placements are available, first placement status: pod group is unschedulable" + CONSTRAINED]


def test_no_labelled_node_at_all():
    s = scheduler(rack_nodes({"": 2}), groups=[make_pod_group("g", min_count=1, topology=RACK)])
    s.add_pods([member("m0")])
    out = s.step(0)
    assert [(r.kind, r.message) for r in out] == [(UNSCHEDULABLE, "no feasible placements found" + CONSTRAINED),
                                                  (POD_GROUP_SCHEDULED, "no feasible placements found" + CONSTRAINED)]


def test_later_members_join_the_rack_of_the_bound_ones():
    """Basic group with a topology constraint: m0 is already bound on n3 (rack b). Racks a (n1, n2) and
    b (n3, n4): a new member may only go to rack b, so it takes n4, not the empty n1."""
    bound = member("m0", node_name="n3")
    s = scheduler(rack_nodes({"a": 2, "b": 2}), pods=[bound], groups=[make_pod_group("g", topology=RACK)])
    s.add_pods([member("m1")])
    assert bound_nodes(s.run_until_idle()) == {"m1": "n4"}


def test_bound_members_in_two_racks_block_the_group():
    bound = [member("m0", node_name="n1"), member("m1", node_name="n3")]
    s = scheduler(rack_nodes({"a": 2, "b": 2}), pods=bound, groups=[make_pod_group("g", topology=RACK)])
    s.add_pods([member("m2")])
    out = s.step(0)
    # v1.36 (topologyaware plugin): an Error status, its text naming the domains in the order found.
    message = "cannot determine domain for already scheduled pods: more than 1 domain found for pod group: a, b"
    assert [r.message for r in out if r.kind == UNSCHEDULABLE] == [message]
    conditions = [r for r in out if r.kind == "PodGroupScheduled"]
    assert [(r.status, r.reason, r.message) for r in conditions] == [("False", "SchedulerError", message)]


def test_basic_group_binds_what_fits_in_the_best_rack():
    """Basic group of 3 with a topology constraint; racks a (n1) and b (n2, n3): b takes two members (pods count
    2 vs 1: 100 vs 50, and its fit score is not lower), the third stays pending."""
    s = scheduler(rack_nodes({"a": 1, "b": 2}), groups=[make_pod_group("g", topology=RACK)])
    s.add_pods([member(f"m{i}") for i in range(3)])
    out = s.step(0)
    assert bound_nodes(out) == {"m0": "n2", "m1": "n3"}
    assert [r.object for r in out if r.kind == UNSCHEDULABLE] == ["default/m2"]


def test_restrict_sees_only_the_placement():
    """restrict: rows of n2, n3 only, renumbered, with the pod bound on n3 and not the one on n1."""
    nodes = rack_nodes({"a": 3})
    pods = [make_pod("p1", cpu="1", node_name="n1"), make_pod("p3", cpu="2", node_name="n3")]
    s = scheduler(nodes, pods=pods)
    sub = restrict(s.cluster.tensors, np.array([1, 2]))
    assert sub.nodes.names == ["n2", "n3"]
    assert sub.nodes.requested[:, 0].tolist() == [0, 2000]
    assert [(p.metadata.name, n) for p, n in sub.live_bound()] == [("p3", 1)]
    assert s.cluster.tensors.nodes.size == 3


@st.composite
def clusters_with_topology_groups(draw):
    """clusters_with_groups() with a "rack" label on most nodes (1-3 racks, some nodes unlabelled) and a topology
    constraint on each PodGroup with probability 3/4."""
    nodes, pods, classes, groups = draw(clusters_with_groups())
    racks = draw(st.integers(1, 3))
    for node in nodes:
        rack = draw(st.integers(-1, racks - 1))
        if rack >= 0:
            node.metadata.labels[RACK] = f"r{rack}"
    for group in groups:
        if draw(st.integers(0, 3)) > 0:
            group.spec.scheduling_constraints = PodGroupSchedulingConstraints(topology=[TopologyConstraint(key=RACK)])
    return nodes, pods, classes, groups


@pytest.mark.parametrize("batching", [True, False], ids=["batching", "no-batching"])
@settings(max_examples=150)
@given(cluster=clusters_with_topology_groups(), profile=profiles())
def test_topology_groups_match_reference(batching, cluster, profile):
    """Whole runs with topology-constrained PodGroups against the plain reference (tests/reference/groups.py):
    the same bindings and messages, pod for pod; and every constrained group's bound members share one rack."""
    nodes, pods, classes, groups = cluster
    want_bindings, want_unschedulable = ref_schedule_groups(nodes, pods, groups, classes, profile)
    objects = ClusterObjects(nodes=nodes, pods=[p for p in pods if p.spec.node_name], priority_classes=classes,
                             warnings=[], workloads=[], pod_groups=groups)
    s = Scheduler(Cluster.from_objects(objects), profile, batching=batching)
    pending = [p for p in pods if not p.spec.node_name and p.status.phase not in ("Succeeded", "Failed")]
    bindings, failures = first_attempts(s, pending)
    assert bindings == want_bindings
    assert failures == want_unschedulable
    rack_of = {n.metadata.name: n.metadata.labels.get(RACK) for n in nodes}
    for key, gs in s.groups.states.items():
        placed_now = [k for k in gs.bound if k in bindings]
        if gs.group.spec.topology_keys and placed_now:
            # members placed by this run share one rack with every member bound before (input nodeName)
            racks = {rack_of[s.cluster.tensors.nodes.names[s.cluster.tensors.node_of(k)]] for k in gs.bound}
            assert len(racks) == 1 and None not in racks, (key, racks)
            event("constrained group bound")


def test_explain_a_group_no_rack_can_hold():
    """explain_group runs the topology cycle as a what-if: rack a (n1, n2) is tried first and places 2 of 3."""
    from phalanx.sched import explain_group

    s = scheduler(rack_nodes({"a": 2, "b": 2}), groups=[make_pod_group("g", min_count=3, topology=RACK)])
    s.add_pods([member(f"m{i}") for i in range(3)])
    before = s.cluster.tensors.nodes.requested.copy()
    report = explain_group(s, "default/g")
    assert report["message"] == (
        "PodGroup default/g: 2/3 pods placeable; 1 pods: 0/2 nodes are available: 2 Insufficient nvidia.com/gpu.; "
        "pod group is unschedulable, waiting for minCount pods from a gang to be scheduled; "
        "0/2 placements are available, first placement status: pod group is unschedulable")
    assert np.array_equal(s.cluster.tensors.nodes.requested, before)


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")
def test_jax_backend_places_topology_groups_like_numpy():
    """The restricted copies run on the scheduler's backend: JAX gives the numpy placement (rack b, as in
    test_fuller_rack_wins_the_placement_score)."""
    results = []
    for backend in ("numpy", "jax"):
        loaded = make_pod("busy", cpu="2", memory="1Gi", node_name="n4")
        s = scheduler(rack_nodes({"a": 3, "b": 3}), pods=[loaded],
                      groups=[make_pod_group("g", min_count=3, topology=RACK)], backend=backend)
        s.add_pods([member(f"m{i}") for i in range(3)])
        results.append(bound_nodes(s.run_until_idle()))
    assert results[0] == results[1] and sorted(results[0].values()) == ["n4", "n5", "n6"]
