"""The volume plugins (VolumeRestrictions, VolumeBinding, VolumeZone, NodeVolumeLimits) against the plain reference
(tests/reference/volumes.py) on random clusters with storage: per node the Filter statuses, and whole runs."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from phalanx.cluster_models import parse_objects
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.explain import explain_pod
from reference.profile import make_profile
from reference.scheduler import bound_pods_by_node, ref_filter, ref_schedule
from reference.volumes import Storage
from strategies import explained_filters, first_attempts, storage_clusters

# The default profile's Filters and Scores (the volume plugins among them), without PostFilter: the reference models
# no preemption.
PROFILE = make_profile()


def _cluster(nodes, pods, classes, docs) -> Cluster:
    objects = parse_objects(docs)
    objects.nodes, objects.pods, objects.priority_classes = nodes, [p for p in pods if p.spec.node_name], classes
    return Cluster.from_objects(objects)


def _storage(docs) -> Storage:
    objects = parse_objects(docs)
    return Storage.from_objects(objects.persistent_volumes, objects.persistent_volume_claims,
                                objects.storage_classes, objects.csi_nodes, objects.csi_drivers,
                                objects.csi_storage_capacities, objects.volume_attachments)


@given(storage_clusters())
def test_volume_filters_match_reference(cluster):
    """Per node: the statuses and reasons of every filter up to the first failure, PreFilter rejections and
    PreFilterResults included."""
    nodes, pods, classes, docs = cluster
    state = _cluster(nodes, pods, classes, docs)
    scheduler = Scheduler(state, PROFILE)
    pods_by_node = bound_pods_by_node(nodes, pods)
    storage = _storage(docs)
    for pod in [p for p in pods if not p.spec.node_name][:4]:
        report = explain_pod(scheduler, pod)
        for node, got in zip(nodes, report["nodes"]):
            want = ref_filter(pod, node, pods_by_node[node.metadata.name], nodes, pods_by_node, PROFILE,
                              storage=storage)
            assert explained_filters(got) == [(pl, code, sorted(r)) for pl, code, r in want], (pod.key,
                                                                                               node.metadata.name)


@given(storage_clusters(), st.booleans())
def test_schedule_with_volumes_matches_reference(cluster, batching):
    """Whole runs: the same bindings and messages pod for pod (claims bound and provisioned as pods are placed), and
    the same bindings of claims."""
    nodes, pods, classes, docs = cluster
    storage = _storage(docs)
    want_bindings, want_unschedulable = ref_schedule(nodes, pods, classes, PROFILE, storage=storage)
    state = _cluster(nodes, pods, classes, docs)
    pending = [p for p in pods if not p.spec.node_name]
    bindings, failures = first_attempts(Scheduler(state, PROFILE, batching=batching),
                                        pending)
    assert bindings == want_bindings
    assert failures == want_unschedulable
    assert state.volumes.volume_of == storage.bound
    assert state.volumes.selected == storage.selected
