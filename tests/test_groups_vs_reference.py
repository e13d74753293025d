"""PodGroup scheduling against the plain reference (tests/reference/groups.py) on random clusters."""
from __future__ import annotations

import pytest
from hypothesis import given
from reference.groups import ref_schedule_groups
from strategies import clusters_with_groups, first_attempts, profiles

from phalanx.cluster_models import ClusterObjects
from phalanx.sched import Cluster, Scheduler


@pytest.mark.parametrize("batching", [True, False], ids=["batching", "no-batching"])
@given(cluster=clusters_with_groups(), profile=profiles())
def test_groups_match_reference(batching, cluster, profile):
    """Whole runs with PodGroups: the same bindings and the same messages, pod for pod."""
    nodes, pods, classes, pod_groups = cluster
    want_bindings, want_unschedulable = ref_schedule_groups(nodes, pods, pod_groups, classes, profile)
    objects = ClusterObjects(nodes=nodes, pods=[p for p in pods if p.spec.node_name], priority_classes=classes,
                             warnings=[], workloads=[], pod_groups=pod_groups)
    pending = [p for p in pods if not p.spec.node_name and p.status.phase not in ("Succeeded", "Failed")]
    bindings, failures = first_attempts(Scheduler(Cluster.from_objects(objects), profile, batching=batching), pending)
    assert bindings == want_bindings
    assert failures == want_unschedulable
