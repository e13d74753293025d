"""Opportunistic batching makes exactly the pod-by-pod loop's decisions; scheduling invariants hold."""
from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from phalanx.cluster_models import ClusterObjects
from phalanx.sched import Cluster, Scheduler
from strategies import make_node, make_pod, make_profile

SHAPES = (((0, 10), (100, 0)), ((0, 0), (100, 10)), ((0, 0), (50, 10), (100, 0)), ((0, 7), (30, 0), (100, 10)))


@st.composite
def batch_cases(draw):
    """Many nodes with few distinct sizes, and long runs of identical pods: the batch path's territory.

    Soft taints and preferred affinity make normalized scores whose maximum moves as nodes fill; MostAllocated
    and RequestedToCapacityRatio make per-node score sequences that rise; host ports cap nodes at one copy."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n_nodes = draw(st.integers(1, 40))
    nodes = []
    for i in range(n_nodes):
        taints = [("maint", "x", "PreferNoSchedule")] if rng.random() < 0.3 else []
        if rng.random() < 0.1:
            taints.append(("spot", "y", "PreferNoSchedule"))
        nodes.append(make_node(f"n{i}", cpu=str(rng.choice([1, 2, 4, 8])), memory=rng.choice(["2Gi", "4Gi", "16Gi"]),
                               pods=int(rng.choice([3, 10, 110])), labels={"tier": str(rng.integers(0, 3))},
                               taints=taints, unschedulable=bool(rng.random() < 0.05)))
    pods = []
    for t in range(draw(st.integers(1, 4))):
        kw = dict(cpu=rng.choice(["100m", "250m", "500m", "1"]), memory=rng.choice(["100Mi", "500Mi", "1Gi"]))
        if rng.random() < 0.4:
            kw["preferred_terms"] = [(int(rng.integers(1, 100)),
                                      {"match_expressions": [{"key": "tier", "operator": "In",
                                                              "values": [str(rng.integers(0, 3))]}]})]
        if rng.random() < 0.3:
            kw["tolerations"] = [{"key": "maint", "operator": "Exists", "effect": "PreferNoSchedule"}]
        if rng.random() < 0.15:
            kw["host_ports"] = [(8080, "TCP", "")]
        if rng.random() < 0.2:
            kw["cpu"] = None          # non-zero defaults in scoring, nothing requested for fit
        priority = int(rng.integers(0, 2))
        for i in range(int(rng.integers(1, 60))):
            pods.append(make_pod(f"t{t}-{i}", priority=priority, **kw))
    # Interleave templates a little so runs break and re-form.
    order = np.argsort(np.arange(len(pods)) + rng.integers(0, 8, len(pods)), kind="stable")
    pods = [pods[i] for i in order]
    profile = make_profile(fit_strategy=draw(st.sampled_from(["LeastAllocated", "MostAllocated",
                                                         "RequestedToCapacityRatio"])),
                      rtcr_shape=draw(st.sampled_from(SHAPES)), compat=draw(st.sampled_from(["1.36", "1.35"])))
    return nodes, pods, profile


def _run(nodes, pods, profile, **kw):
    cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[]))
    scheduler = Scheduler(cluster, profile, **kw)
    return scheduler, scheduler.schedule()


@given(batch_cases(), st.sampled_from(["first", "random"]))
def test_batched_equals_pod_by_pod(case, tie_break):
    nodes, pods, profile = case
    _, batched = _run(nodes, pods, profile, batching=True, tie_break=tie_break, seed=7)
    _, single = _run(nodes, pods, profile, batching=False, tie_break=tie_break, seed=7)
    assert list(batched.bindings.items()) == list(single.bindings.items())   # same nodes, same order
    assert batched.unschedulable == single.unschedulable
    assert batched.batch_rounds <= len(pods)


@given(batch_cases())
def test_no_node_over_capacity(case):
    nodes, pods, profile = case
    scheduler, result = _run(nodes, pods, profile)
    t = scheduler.cluster.tensors.nodes
    assert (t.requested <= t.allocatable).all()
    assert (t.pod_count <= t.allowed_pods).all()
    placed = np.bincount([t.names.index(n) for n in result.bindings.values()], minlength=t.size)
    assert (placed == t.pod_count).all()
    assert len(result.bindings) + len(result.unschedulable) == len(pods)


@given(batch_cases())
def test_same_seed_same_result(case):
    nodes, pods, profile = case
    _, a = _run(nodes, pods, profile, tie_break="random", seed=3)
    _, b = _run(nodes, pods, profile, tie_break="random", seed=3)
    assert a.bindings == b.bindings and a.unschedulable == b.unschedulable
