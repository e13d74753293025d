"""The kernels and the scheduler against the plain reference (tests/reference) on random clusters."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from phalanx.cluster_models import ClusterObjects
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.explain import explain_pod
from reference.scheduler import ref_filter, ref_schedule, ref_scores
from strategies import clusters, explained_filters, first_attempts, profiles

SCORE_PLUGINS = ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity",
                 "NodeResourcesBalancedAllocation"]


def _state(nodes, pods, classes):
    """The cluster with its bound pods, and the pending pods to probe one at a time."""
    bound = [p for p in pods if p.spec.node_name]
    pending = [p for p in pods if not p.spec.node_name]
    cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=bound, priority_classes=classes, warnings=[]))
    pods_by_node = {n.metadata.name: [p for p in bound if p.spec.node_name == n.metadata.name
                                      and p.status.phase not in ("Succeeded", "Failed")] for n in nodes}
    return cluster, pending, pods_by_node


@given(clusters(), profiles())
def test_filters_match_reference(cluster, profile):
    """Per node: the statuses and reasons of every filter up to the first failure, as the reference."""
    nodes, pods, classes = cluster
    state, pending, pods_by_node = _state(nodes, pods, classes)
    scheduler = Scheduler(state, profile)
    for pod in pending[:4]:
        report = explain_pod(scheduler, pod)
        for node, got in zip(nodes, report["nodes"]):
            want = ref_filter(pod, node, pods_by_node[node.metadata.name], nodes, pods_by_node, profile)
            assert explained_filters(got) == [(pl, code, sorted(r)) for pl, code, r in want], (pod.key,
                                                                                               node.metadata.name)


@pytest.mark.parametrize("plugin", SCORE_PLUGINS)
@given(cluster=clusters(), profile=profiles())
def test_scores_match_reference(plugin, cluster, profile):
    """Raw and normalized scores of one plugin on the feasible nodes, as the reference."""
    nodes, pods, classes = cluster
    state, pending, pods_by_node = _state(nodes, pods, classes)
    scheduler = Scheduler(state, profile)
    for pod in pending[:4]:
        report = explain_pod(scheduler, pod)
        feasible = [n for n, r in zip(nodes, report["nodes"]) if r["total"] is not None]
        if not feasible:
            continue
        want = ref_scores(pod, feasible, nodes, pods_by_node, profile).get(plugin)
        got = {r["name"]: (r["scores"][plugin]["raw"], r["scores"][plugin]["normalized"])
               for r in report["nodes"] if r["total"] is not None and plugin in r["scores"]
               and not r["scores"][plugin].get("skipped")}
        assert got == (want or {}), pod.key


@given(clusters(max_nodes=10, max_pods=24), profiles(), st.booleans())
def test_schedule_matches_reference(cluster, profile, batching):
    """Whole runs: the same bindings and the same messages, pod for pod, with and without batching."""
    nodes, pods, classes = cluster
    want_bindings, want_unschedulable = ref_schedule(nodes, pods, classes, profile)
    bound = [p for p in pods if p.spec.node_name]
    state = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=bound, priority_classes=classes, warnings=[]))
    pending = [p for p in pods if not p.spec.node_name and p.status.phase not in ("Succeeded", "Failed")]
    bindings, failures = first_attempts(Scheduler(state, profile, batching=batching), pending)
    assert bindings == want_bindings
    assert failures == want_unschedulable
