"""A sampled cycle (percentageOfNodesToScore < 100) scores the feasible nodes it found on their rows alone
(cycle.sampled_totals, placement.Placer.evaluate): the same decisions as scoring every node and reading the
sampled ones, which is how the per-pod path scored them before."""
from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phalanx.cluster_models import ClusterObjects
from phalanx.sched import Cluster, Scheduler
from phalanx.sched import cycle, placement
from strategies import HOSTNAME, clusters, make_node, make_pod, make_profile, profiles


def _spy(mp: pytest.MonkeyPatch) -> list:
    """Record what each sampled_totals call of the Placer returns (None: it fell back to every node)."""
    seen = []

    def spied(*args):
        out = cycle.sampled_totals(*args)
        seen.append(out)
        return out
    mp.setattr(placement, "sampled_totals", spied)
    return seen


def test_sampled_rows_by_hand():
    # test_sampling's ring by hand, scored on the rows: 200 identical nodes at 50% look for 100, and 2 x 100 <= 200
    # sends each cycle's 100 feasible nodes to sampled_totals. p0 ties on n0..n99 -> n0; p1 samples n100..n199 ->
    # n100; p2 samples n0..n99 again, where n0 now scores lower -> n1.
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(200)]
    pods = [make_pod(f"p{i}", cpu="1", memory="1Gi") for i in range(3)]
    cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[]))
    with pytest.MonkeyPatch.context() as mp:
        seen = _spy(mp)
        result = Scheduler(cluster, make_profile(percentage_of_nodes_to_score=50)).schedule()
    assert result.bindings == {"default/p0": "n0", "default/p1": "n100", "default/p2": "n1"}
    assert [None if t is None else t.shape for t in seen] == [(100,)] * 3


def _clone(node, name: str):
    labels = dict(node.metadata.labels)
    if HOSTNAME in labels:
        labels[HOSTNAME] = name
    return node.model_copy(update={"metadata": node.metadata.model_copy(update={"name": name, "labels": labels})})


@settings(max_examples=40, deadline=None)
@given(clusters(max_nodes=6, max_pods=30), profiles(), st.integers(100, 180), st.sampled_from([0, 1, 10, 30, 50, 90]))
def test_sampled_rows_decide_as_every_node(cluster, profile, n_nodes, percentage):
    """Random clusters of 100-180 nodes (a drawn cluster's nodes repeated) and profiles (every Fit strategy,
    plugins and weights drawn), sampled at 0 (adaptive) to 90%: the records (bindings, failure messages) and the
    ring's index are the same whether every sampled cycle scores on its rows or none does."""
    nodes, pods, classes = cluster
    nodes = [*nodes, *(_clone(nodes[i % len(nodes)], f"n{i}") for i in range(len(nodes), n_nodes))]
    profile = dataclasses.replace(profile, percentage_of_nodes_to_score=percentage)
    bound = [p for p in pods if p.spec.node_name]
    pending = [p for p in pods if not p.spec.node_name]

    def run(rows_per_node: int):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(placement, "_SAMPLED_ROWS_PER_NODE", rows_per_node)
            seen = _spy(mp)
            state = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=bound, priority_classes=classes,
                                                        warnings=[]))
            scheduler = Scheduler(state, profile)
            records = scheduler.add_pods(pending) + scheduler.step(0.0)
        return [(r.kind, r.object, r.node, r.message) for r in records], scheduler.next_start, seen

    on, start_on, seen_on = run(0)                # every sampled cycle on its rows
    off, start_off, seen_off = run(10 ** 9)       # none
    assert on == off and start_on == start_off
    assert not seen_off
