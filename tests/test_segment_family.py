"""A JAX segment's family members: a run whose pods differ from the segment head's only in their resource requests
(one shape family) and whose plugins that read requests find the head's patterns (Plugin.request_pattern) joins
without a PreFilter of its own, its run-time amounts gathered from its amount vector at the head's sources
(sched/jax_placer.py _family_member); exactly what preparing it fully and comparing its states with the head's
(_amounts_joining) gives."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import _cluster_base, _request_dicts, make_pod, profiles

from phalanx.cluster_models import ClusterObjects
from phalanx.kernels.resource_allocation import (ResourcePlan, amount_sources, amounts, pod_amounts,
                                                 resource_inputs)
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.cycle import prepare


@st.composite
def families(draw):
    """(objects, profile, pairs): a random cluster's nodes and templates; each pair is a pod of a template and a pod
    of the same template with other requests (containers', init containers', pod-level), both pending."""
    nnodes, nodes, classes, templates = draw(_cluster_base(8))
    pods, pairs = [], []
    for i, t in enumerate(templates):
        other = dict(t, containers=[draw(_request_dicts()) for _ in t["containers"]],
                     init_containers=[(draw(_request_dicts(allow_gpu=False)), sidecar)
                                      for _, sidecar in t["init_containers"]],
                     pod_level=draw(st.sampled_from([t["pod_level"], None, {"cpu": "3", "memory": "2Gi"}])))
        pair = (make_pod(f"t{i}", **t), make_pod(f"v{i}", **other))
        pods += pair
        pairs.append(pair)
    return ClusterObjects(nodes=nodes, pods=pods, priority_classes=classes, warnings=[]), draw(profiles()), pairs


def test_family_ignores_requests_alone():
    """Requests, limits and init containers' requests stay out of the family; tolerations, images and labels read by
    a plugin do not."""
    objects = ClusterObjects(nodes=[], pods=[], priority_classes=[], warnings=[])
    sched = Scheduler(Cluster.from_objects(objects))
    base = dict(containers=[{"cpu": "1", "memory": "1Gi"}], init_containers=[({"cpu": "2"}, False)])
    same = [make_pod("a", **base),
            make_pod("b", containers=[{"cpu": "3"}], init_containers=[({"memory": "5Gi"}, False)]),
            make_pod("c", containers=[{}], init_containers=[({}, False)], pod_level={"cpu": "4", "memory": "1Gi"})]
    differ = [make_pod("d", tolerations=[{"key": "k", "operator": "Exists"}], **base),
              make_pod("e", images=["img/a"], **base),
              make_pod("f", containers=[{"cpu": "1"}, {"cpu": "1"}], init_containers=base["init_containers"]),
              make_pod("g", containers=base["containers"], init_containers=[({"cpu": "2"}, True)])]
    families_of = [sched.shape_of(p).family for p in same + differ]
    assert len(set(families_of[:3])) == 1
    assert len(set(families_of)) == 1 + len(differ)


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax not installed")
@settings(max_examples=40, deadline=None)
@given(case=families())
def test_a_family_member_with_the_heads_patterns_joins_with_its_own_amounts(case):
    """It joins exactly when comparing its fully prepared states with the head's finds one configuration
    (_amounts_joining), and its gathered amounts are the ones that comparison splits off."""
    from phalanx.sched.jax_placer import _amounts_joining
    objects, profile, pairs = case
    sched = Scheduler(Cluster.from_objects(objects), profile, backend="jax")
    cluster, placer = sched.cluster, sched.placer
    for head_pod, pod in pairs:
        head = placer.segment_member(sched.shape_of(head_pod), [head_pod])
        if head is None:
            continue
        shape = sched.shape_of(pod)
        joined = placer.segment_member(shape, [pod], head)
        want = _amounts_joining(prepare(shape, cluster, placer.framework), head, head.pads[0])
        assert (joined is None) == (want is None)
        if joined is None:
            continue
        assert joined.static is head.static
        runtime = joined.amounts(head)      # a family member's: its amount vector gathered at the head's sources
        assert runtime.keys() == want.keys()
        assert all(np.array_equal(runtime[k], want[k]) for k in want)


@settings(max_examples=200, deadline=None)
@given(width=st.integers(1, 6), data=st.data())
def test_amount_sources_gather_what_resource_inputs_reads(width, data):
    """For any plan and pods requesting the same columns, gathering a pod's amount vector at one pod's sources gives
    the pod's own amounts."""
    k = data.draw(st.integers(1, 4))
    columns = tuple(data.draw(st.lists(st.integers(-1, width + 1), min_size=k, max_size=k)))
    nonzero = tuple(data.draw(st.sampled_from([-1, 0, 1])) if 0 <= c < 2 else -1 for c in columns)
    plan = ResourcePlan(columns, nonzero, (1,) * k, tuple(data.draw(st.booleans()) for _ in range(k)))
    requested = data.draw(st.lists(st.booleans(), min_size=width, max_size=width))

    def pair():
        return np.array(data.draw(st.lists(st.integers(0, 10**9), min_size=2, max_size=2)), np.int64)

    def pod():
        """(request, scoring, nonzero)"""
        return np.array([data.draw(st.integers(1, 10**9)) if r else 0 for r in requested], np.int64), pair(), pair()

    first, (request, scoring, nonzero) = pod(), pod()
    sources = amount_sources(resource_inputs(plan, *first))
    own, _ = amounts(resource_inputs(plan, request, scoring, nonzero))
    # Two columns more than the pods request, as a compiled program's padded width.
    assert pod_amounts(np.pad(request, (0, 2)), nonzero, scoring)[sources].tolist() == own
