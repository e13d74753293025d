"""prepare's `like`: a pod that differs from another only in its resource requests (one shape family) takes the other's
results of the plugins that do not read requests (Plugin.reads_requests), and its cycle state is the one a full
prepare makes (what the JAX placer's segment members rely on, sched/jax_placer.py segment_member)."""
from __future__ import annotations

import pickle

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import _cluster_base, _request_dicts, make_pod, profiles

from phalanx.cluster_models import ClusterObjects
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.cycle import prepare
from phalanx.sched.shapes import family


def _same_prepared(a, b) -> None:
    assert (a.rejection, a.rejected_by, a.error, a.score_error) == (b.rejection, b.rejected_by, b.error, b.score_error)
    assert a.narrowing == b.narrowing
    assert [(plugin.name, point) for plugin, point in a.skipped] == [(plugin.name, point) for plugin, point in b.skipped]
    assert (a.allowed is None) == (b.allowed is None)
    if a.allowed is not None:
        assert np.array_equal(a.allowed, b.allowed)
    assert [plugin.name for plugin, _ in a.filters] == [plugin.name for plugin, _ in b.filters]
    assert [(plugin.name, weight) for plugin, _, weight in a.scores] == [(plugin.name, weight) for plugin, _, weight in b.scores]
    for (_, x), (_, y) in zip(a.filters, b.filters):
        assert pickle.dumps(x) == pickle.dumps(y)
    for (_, x, _), (_, y, _) in zip(a.scores, b.scores):
        assert pickle.dumps(x) == pickle.dumps(y)
    assert np.array_equal(a.request, b.request)


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


@settings(max_examples=60, deadline=None)
@given(case=families())
def test_a_family_member_prepared_like_its_head_is_prepared_alike(case):
    objects, profile, pairs = case
    sched = Scheduler(Cluster.from_objects(objects), profile)
    cluster, framework = sched.cluster, sched.placer.framework
    for head_pod, pod in pairs:
        head, shape = sched.shape_of(head_pod), sched.shape_of(pod)
        assert family(head, framework) == family(shape, framework)
        like = prepare(head, cluster, framework, record=True)
        _same_prepared(prepare(head, cluster, framework), like)       # recording changes nothing
        _same_prepared(prepare(shape, cluster, framework, like=like), prepare(shape, cluster, framework))


def test_family_ignores_requests_alone():
    """Requests, limits and init containers' requests stay out of the family; tolerations, images and labels read by
    a plugin do not."""
    objects = ClusterObjects(nodes=[], pods=[], priority_classes=[], warnings=[])
    sched = Scheduler(Cluster.from_objects(objects))
    framework = sched.placer.framework
    base = dict(containers=[{"cpu": "1", "memory": "1Gi"}], init_containers=[({"cpu": "2"}, False)])
    same = [make_pod("a", **base),
            make_pod("b", containers=[{"cpu": "3"}], init_containers=[({"memory": "5Gi"}, False)]),
            make_pod("c", containers=[{}], init_containers=[({}, False)], pod_level={"cpu": "4", "memory": "1Gi"})]
    differ = [make_pod("d", tolerations=[{"key": "k", "operator": "Exists"}], **base),
              make_pod("e", images=["img/a"], **base),
              make_pod("f", containers=[{"cpu": "1"}, {"cpu": "1"}], init_containers=base["init_containers"]),
              make_pod("g", containers=base["containers"], init_containers=[({"cpu": "2"}, True)])]
    families_of = [family(sched.shape_of(p), framework) for p in same + differ]
    assert len(set(families_of[:3])) == 1
    assert len(set(families_of)) == 1 + len(differ)


@settings(max_examples=40, deadline=None)
@given(case=families())
def test_a_family_member_with_the_heads_patterns_joins_with_its_own_amounts(case):
    """The JAX segments' short way (jax_placer._family_amounts): a member of the head's family whose plugins that read
    requests find the head's patterns (Plugin.request_pattern) takes the head's compiled configuration without its
    states being compared. It joins exactly when comparing its fully prepared states with the head's finds one
    configuration (_amounts_joining), with the amounts that comparison splits off."""
    import importlib.util
    if importlib.util.find_spec("jax") is None:
        return
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
        if joined is not None:
            assert joined.static is head.static and joined.runtime.keys() == want.keys()
            assert all(np.array_equal(joined.runtime[k], want[k]) for k in want)
