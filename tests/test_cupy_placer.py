"""The CuPy backend (sched/cupy_placer.py) decides as numpy, pod for pod, with no synchronisation inside its loop.

Each test runs twice: on `strict`, a CPU stand-in for CuPy (tests/strict_device.py) that refuses what CuPy refuses
(numpy arrays mixed in, host functions on device arrays) and raises on every implicit synchronisation inside the
placer's loop; and on real CuPy when a GPU is present (its guard: cupyx.allow_synchronize(False)). The CuPy
placer's only reads back are explicit: the stop flag every CHECK_EVERY pods or every batch round (stats.syncs),
and one summary per call."""
from __future__ import annotations

import contextlib

import numpy as np

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import clusters, clusters_with_groups, make_pod, make_profile, profiles
from strict_device import strict_namespace
from test_backend_scheduler import node_events_reach_the_device_table, segment_cases
from test_batching import batch_cases

from phalanx.cluster_models import ClusterObjects
from phalanx.cluster_models.generate import basic_pods, generate_nodes, heterogeneous_pods
from phalanx.kernels.backend import gpu_available
from phalanx.sched import DEFAULT_PROFILE, Cluster, Scheduler, backends, cupy_placer, device_program, jax_placer

DEVICES = ["strict", pytest.param("cupy", marks=pytest.mark.skipif(not gpu_available("cupy"),
                                                                  reason="cupy is not installed or no CUDA GPU"))]
# cupyx.allow_synchronize is deprecated (it cannot see every synchronisation) and warns on each use.
pytestmark = pytest.mark.filterwarnings("ignore:cupyx.allow_synchronize")


def _no_sync_cupy():
    import cupyx
    return cupyx.allow_synchronize(False)


@contextlib.contextmanager
def on_device(device: str):
    """Scheduler(backend="cupy") on `device`: the strict stand-in (its no_sync guard around each queued step, and no
    implicit synchronisation anywhere else either) or CuPy (allow_synchronize around each step)."""
    with pytest.MonkeyPatch.context() as mp:
        if device == "strict":
            xp = strict_namespace()
            mp.setattr(backends, "resolve", lambda name: name)
            mp.setattr(cupy_placer, "namespace", lambda name: xp)
            mp.setattr(cupy_placer, "GUARD", xp.no_sync)
            yield
            assert xp.syncs == 0
        else:
            mp.setattr(cupy_placer, "GUARD", _no_sync_cupy)
            yield


def _both(device, objects_factory, profile=DEFAULT_PROFILE, **kw):
    want_sched = Scheduler(Cluster.from_objects(objects_factory()), profile, **kw)
    want = want_sched.schedule()
    with on_device(device):
        got_sched = Scheduler(Cluster.from_objects(objects_factory()), profile, backend="cupy", **kw)
        got = got_sched.schedule()
    assert got_sched.backend == "cupy"
    return (want_sched, want), (got_sched, got)


def _same(want, got):
    assert list(got.bindings.items()) == list(want.bindings.items())
    assert got.unschedulable == want.unschedulable
    assert got.preemptions == want.preemptions


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=12, deadline=None)
@given(cluster=clusters(max_nodes=10, max_pods=24), profile=profiles())
def test_cupy_schedule_matches_numpy(device, cluster, profile):
    nodes, pods, classes = cluster
    (_, want), (_, got) = _both(device, lambda: ClusterObjects(nodes=nodes, pods=pods, priority_classes=classes,
                                                               warnings=[]), profile)
    _same(want, got)


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=6, deadline=None)
@given(cluster=clusters_with_groups(max_nodes=8, max_pods=20), profile=profiles())
def test_cupy_groups_match_numpy(device, cluster, profile):
    """PodGroup cycles (tentative placement, rollback on the host table) on top of the device runs."""
    nodes, pods, classes, pod_groups = cluster
    (_, want), (_, got) = _both(device, lambda: ClusterObjects(nodes=nodes, pods=pods, priority_classes=classes,
                                                               warnings=[], workloads=[], pod_groups=pod_groups),
                                profile)
    _same(want, got)
    assert got.pod_groups == want.pod_groups


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=8, deadline=None)
@given(case=batch_cases(), copies=st.sampled_from([2, 32]))
def test_cupy_batch_rounds_match_numpy(device, case, copies):
    """Batch rounds on the device (BATCH_COPIES = 2: the copies-seen cut-off bites) give numpy's decisions."""
    nodes, pods, profile = case
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(device_program, "BATCH_COPIES", copies)
        mp.setattr(jax_placer, "SEGMENT_RUN", 0)
        if copies == 2:
            mp.setattr(jax_placer, "BATCH_CHUNK", 16)      # runs over 16 pods take several calls
        (np_sched, want), (got_sched, got) = _both(
            device, lambda: ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[]), profile)
    _same(want, got)
    assert (got_sched.cluster.tensors.nodes.requested == np_sched.cluster.tensors.nodes.requested).all()
    if want.batch_rounds:
        assert got.batch_rounds > 0


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=8, deadline=None)
@given(case=segment_cases())
def test_cupy_segments_match_numpy(device, case):
    """Runs of different shapes placed by one device call each segment: numpy's bindings, in order."""
    nodes, pods = case
    (_, want), (got_sched, got) = _both(
        device, lambda: ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[]), seed=3)
    _same(want, got)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("check_every", [32, 10**9])
def test_cupy_sampling_long_runs_and_failures(device, check_every):
    """percentageOfNodesToScore < 100 (the ring start carried through the loop), all-distinct pods, runs longer
    than a chunk, pods that fit nowhere (the FitError from the call's codes); the stop flag is fetched once per
    CHECK_EVERY pods, not per pod. With the flag never fetched, every step up to the run's length is queued after
    the first pod that fits nowhere, and changes nothing."""
    def objects():
        mixed = [p.model_copy(update={"metadata": p.metadata.model_copy(update={"name": f"h-{i}"})})
                 for i, p in enumerate(heterogeneous_pods(40, seed=5))]
        pods = mixed + [make_pod(f"p{i}", cpu="1", memory="1Gi") for i in range(460)] + [
            make_pod(f"big{i}", cpu="64") for i in range(2)]
        return ClusterObjects(nodes=generate_nodes(110, seed=2), pods=pods, priority_classes=[], warnings=[])
    profile = make_profile(percentage_of_nodes_to_score=10)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cupy_placer, "CHECK_EVERY", check_every)
        (np_sched, want), (got_sched, got) = _both(device, objects, profile)
    _same(want, got)
    assert got_sched.next_start == np_sched.next_start
    stats = got_sched.placer.stats
    assert len(want.unschedulable) > 2 and stats.calls > 0
    assert stats.syncs <= (len(want.bindings) + len(want.unschedulable)) // check_every + stats.calls
    assert (got_sched.cluster.tensors.nodes.requested == np_sched.cluster.tensors.nodes.requested).all()


@pytest.mark.parametrize("device", DEVICES)
def test_cupy_places_runs_and_segments_on_the_device(device):
    """A fixed queue that must use the device: a long run of identical pods (batch rounds) and short runs of
    different amounts (segments), numpy's decisions."""
    def objects():
        pods = [make_pod(f"same-{i}", cpu="500m", memory="1Gi") for i in range(40)]
        pods += [make_pod(f"d{i}-{j}", cpu=f"{100 + 50 * i}m", memory="256Mi") for i in range(12) for j in range(2)]
        return ClusterObjects(nodes=generate_nodes(12, seed=4), pods=pods, priority_classes=[], warnings=[])
    (_, want), (got_sched, got) = _both(device, objects)
    _same(want, got)
    stats = got_sched.placer.stats
    assert got.batch_rounds > 0 and stats.segments > 0 and stats.calls > stats.segments


@pytest.mark.parametrize("device", DEVICES)
def test_cupy_node_events_reach_the_device_table(device):
    with on_device(device):
        node_events_reach_the_device_table("cupy")


def test_strict_stand_in_catches_a_synchronising_step():
    """The guard bites: a placement loop whose step reads a value back (a mutation: the stop flag fetched inside
    the guarded step) fails on the strict stand-in."""
    objects = ClusterObjects(nodes=generate_nodes(5, seed=1), pods=basic_pods(3), priority_classes=[], warnings=[])
    from strict_device import ImplicitSync
    with on_device("strict"), pytest.MonkeyPatch.context() as mp:
        mp.setattr(cupy_placer, "CHECK_EVERY", 1)
        original = device_program.HostLoop.__call__

        def fetch_inside(self, cond, body, carry):
            return original(self, cond, lambda c: (bool(cond(c)), body(c))[1], carry)
        mp.setattr(device_program.HostLoop, "__call__", fetch_inside)
        with pytest.raises(ImplicitSync):
            Scheduler(Cluster.from_objects(objects), backend="cupy").schedule()


def test_to_device_copies_every_array_of_a_state():
    """Plugin states reach the device whole: arrays inside named tuples, tuples, dicts and dataclasses."""
    import dataclasses
    from typing import NamedTuple

    @dataclasses.dataclass(frozen=True)
    class State:
        mask: np.ndarray
        weight: int

    class Pair(NamedTuple):
        a: np.ndarray
        b: tuple

    copied = []

    def put(a):
        copied.append(a)
        return ("dev", a.tolist())
    tree = (Pair(np.array([1]), (np.array([2]), 3)), {"k": State(np.array([4]), 5)}, [np.array([6])])
    out = cupy_placer.to_device(put, tree)
    assert out == (Pair(("dev", [1]), (("dev", [2]), 3)), {"k": State(("dev", [4]), 5)}, [("dev", [6])])
    assert len(copied) == 4
