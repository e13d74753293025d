"""Whole runs on the JAX backend give the numpy backend's bindings and messages, pod for pod; one compiled
program serves every cluster of a padding bucket; backend names and missing packages fail with one line."""
from __future__ import annotations

import contextlib
import importlib.util
import itertools

import numpy as np

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import (clusters, clusters_with_groups, make_node, make_pod, make_profile, profiles,
                        storage_clusters)
from test_batching import batch_cases

from phalanx.cluster_models import ClusterObjects, parse_objects
from phalanx.cluster_models.generate import basic_pods, generate_nodes
from phalanx.kernels.backend import BackendUnavailable, gpu_available
from phalanx.sched import DEFAULT_PROFILE, Cluster, Scheduler

pytestmark = pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")


def _both(objects_factory, profile, **kw):
    out = []
    for backend in ("numpy", "jax"):
        scheduler = Scheduler(Cluster.from_objects(objects_factory()), profile, backend=backend, **kw)
        out.append((scheduler, scheduler.schedule()))
    return out


@settings(max_examples=10)
@given(cluster=clusters(max_nodes=10, max_pods=24), profile=profiles())
def test_jax_schedule_matches_numpy(cluster, profile):
    nodes, pods, classes = cluster
    (_, want), (jax_sched, got) = _both(
        lambda: ClusterObjects(nodes=nodes, pods=pods, priority_classes=classes, warnings=[]), profile)
    assert got.bindings == want.bindings
    assert got.unschedulable == want.unschedulable
    assert jax_sched.backend == "jax"
    # Runs where InterPodAffinity takes part go eagerly (its states are made on the host); others are compiled.
    inter_pod = any(p.spec.affinity is not None and (p.spec.affinity.pod_affinity or p.spec.affinity.pod_anti_affinity)
                    for p in pods)
    assert jax_sched.placer.stats.calls > 0 or not (want.bindings or want.unschedulable) or inter_pod


@settings(max_examples=8)
@given(cluster=storage_clusters())
def test_jax_volumes_match_numpy(cluster):
    """Pods with claims and disks (the volume plugins' pods go pod by pod on the host) among plain pods: the same
    bindings and messages, and the same claims bound and provisioned."""
    nodes, pods, classes, docs = cluster

    def objects():
        found = parse_objects(docs)
        found.nodes, found.pods, found.priority_classes = nodes, pods, classes
        return found
    (numpy_sched, want), (jax_sched, got) = _both(objects, DEFAULT_PROFILE)
    assert got.bindings == want.bindings
    assert got.unschedulable == want.unschedulable
    assert jax_sched.cluster.volumes.state() == numpy_sched.cluster.volumes.state()


@settings(max_examples=6)
@given(cluster=clusters_with_groups(max_nodes=8, max_pods=20), profile=profiles())
def test_jax_groups_match_numpy(cluster, profile):
    """PodGroup cycles (tentative placement, rollback on the host table) on top of the compiled runs."""
    nodes, pods, classes, pod_groups = cluster
    (_, want), (_, got) = _both(
        lambda: ClusterObjects(nodes=nodes, pods=pods, priority_classes=classes, warnings=[], workloads=[],
                               pod_groups=pod_groups), profile)
    assert got.bindings == want.bindings
    assert got.unschedulable == want.unschedulable
    assert got.pod_groups == want.pod_groups


@settings(max_examples=8)
@given(case=batch_cases(), copies=st.sampled_from([2, 32]))
def test_jax_batch_rounds_match_numpy(case, copies):
    """The batch rounds inside the compiled loop (contenders, copies scored ahead, the normalization and
    copies-seen cut-offs) give numpy's decisions; BATCH_COPIES = 2 makes the copies-seen cut-off bite, and
    there runs longer than 16 pods take several compiled calls (BATCH_CHUNK). Segments are off (SEGMENT_RUN 0):
    the short runs here would go there instead (test_jax_segments_match_numpy)."""
    from phalanx.sched import device_program, jax_placer
    nodes, pods, profile = case
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(jax_placer, "SEGMENT_RUN", 0)
        mp.setattr(device_program, "BATCH_COPIES", copies)
        if copies == 2:
            mp.setattr(jax_placer, "BATCH_CHUNK", 16)
        mp.setattr(jax_placer, "PROGRAMS", jax_placer.ProgramCache(jax_placer.PROGRAMS.capacity))
        (np_sched, want), (jax_sched, got) = _both(
            lambda: ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[]), profile)
    assert list(got.bindings.items()) == list(want.bindings.items())
    assert got.unschedulable == want.unschedulable
    assert (jax_sched.cluster.tensors.nodes.requested == np_sched.cluster.tensors.nodes.requested).all()
    if want.batch_rounds:
        assert got.batch_rounds > 0


def node_events_reach_the_device_table(backend: str) -> None:
    """The device placers keep the padded node table on the device between calls; a node rewritten in place
    (cordoned, resized) must be copied again before the next pods are placed."""
    from strategies import make_node, make_pod
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(3)]
    scheduler = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes, pods=[], priority_classes=[], warnings=[])),
                          backend=backend)
    scheduler.add_pods([make_pod(f"a{i}", cpu="1", memory="1Gi") for i in range(3)])
    scheduler.run_until_idle()
    assert scheduler.placer.stats.uploads == 1
    scheduler.update_node(make_node("n0", cpu="4", memory="8Gi", unschedulable=True))
    scheduler.update_node(make_node("n1", cpu="1", memory="8Gi"))
    scheduler.add_pods([make_pod(f"b{i}", cpu="1", memory="1Gi") for i in range(4)])
    scheduler.run_until_idle()
    bound = {r.object: r.node for r in scheduler.records if r.kind == "Bound"}
    assert {bound[f"default/b{i}"] for i in range(3)} == {"n2"}
    assert not any(r.object == "default/b3" and r.kind == "Bound" for r in scheduler.records)
    assert scheduler.placer.stats.uploads == 2


def test_node_events_reach_the_device_table():
    node_events_reach_the_device_table("jax")


def test_no_implicit_transfers_while_scheduling():
    """Every host<->device copy of the JAX placer is explicit (device_put / device_get): whole schedules of
    identical, heterogeneous and failing pods run under jax.transfer_guard("disallow"), which raises on any
    implicit one. The node table is copied to the device once."""
    import jax
    from phalanx.cluster_models.generate import heterogeneous_pods
    from strategies import make_pod

    def objects():
        mixed = [p.model_copy(update={"metadata": p.metadata.model_copy(update={"name": f"h-{i}"})})
                 for i, p in enumerate(heterogeneous_pods(12, seed=5))]
        pods = basic_pods(30) + mixed + [make_pod(f"big{i}", cpu="64") for i in range(2)]
        return ClusterObjects(nodes=generate_nodes(20, seed=2), pods=pods, priority_classes=[], warnings=[])

    want = Scheduler(Cluster.from_objects(objects())).schedule()
    Scheduler(Cluster.from_objects(objects()), backend="jax").schedule()        # compiles outside the guard
    scheduler = Scheduler(Cluster.from_objects(objects()), backend="jax")
    with jax.transfer_guard("disallow"):
        got = scheduler.schedule()
    assert got.bindings == want.bindings and got.unschedulable == want.unschedulable
    assert len(want.unschedulable) == 2 and scheduler.placer.stats.compiles == 0
    assert scheduler.placer.stats.uploads == 1


def test_sampling_and_long_runs_match_numpy():
    """percentageOfNodesToScore < 100 (the ring start carried through the compiled loop) and a run longer than
    one chunk, with pods left over that fit nowhere (the FitError built from the compiled call's codes)."""
    from phalanx.sched import jax_placer
    profile = make_profile(percentage_of_nodes_to_score=10)
    objects = lambda: ClusterObjects(nodes=generate_nodes(150), pods=basic_pods(6050), priority_classes=[],  # noqa: E731
                                     warnings=[])
    (np_sched, want), (jax_sched, got) = _both(objects, profile)
    assert got.bindings == want.bindings and got.unschedulable == want.unschedulable
    assert jax_sched.next_start == np_sched.next_start
    assert len(want.unschedulable) > 0 and len(want.bindings) > jax_placer.CHUNK


def test_one_compile_per_bucket():
    """Two clusters whose node counts share a padding bucket (21 and 23 nodes -> 24) reuse one program."""
    from phalanx.sched.jax_placer import bucket
    assert bucket(21) == bucket(23) == 24 and bucket(25) == 28 and bucket(20) == 20
    counts = []
    for n_nodes in (21, 23):
        objects = ClusterObjects(nodes=generate_nodes(n_nodes, seed=3), pods=basic_pods(40), priority_classes=[],
                                 warnings=[])
        scheduler = Scheduler(Cluster.from_objects(objects), backend="jax")
        result = scheduler.schedule()
        assert len(result.bindings) == 40
        counts.append(scheduler.placer.stats.compiles)
    assert counts[1] == 0, counts          # the second cluster compiled nothing
    assert counts[0] <= 1


def test_backend_names():
    objects = ClusterObjects(nodes=generate_nodes(3), pods=basic_pods(2), priority_classes=[], warnings=[])
    with pytest.raises(ValueError, match="unknown backend 'tpu'"):
        Scheduler(Cluster.from_objects(objects), backend="tpu")
    auto = Scheduler(Cluster.from_objects(objects), backend="auto")
    assert auto.backend == "numpy+jax"          # GPU or not: the measured choice (sched/backends.py)
    if gpu_available("cupy"):
        assert Scheduler(Cluster.from_objects(objects), backend="cupy").backend == "cupy"
    else:       # cupy missing or no GPU: one line, never a silent numpy run
        with pytest.raises(BackendUnavailable, match="^backend 'cupy'"):
            Scheduler(Cluster.from_objects(objects), backend="cupy")


def test_cli_backend_errors_are_one_line():
    from typer.testing import CliRunner

    from phalanx.cli import app
    runner = CliRunner()
    if not gpu_available("cupy"):
        res = runner.invoke(app, ["bench", "SchedulingBasic_500Nodes_1000Pods", "--backend", "cupy"])
        assert res.exit_code == 2
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: --backend: backend 'cupy'"), lines
    res = runner.invoke(app, ["bench", "SchedulingBasic_500Nodes_1000Pods", "--backend", "jax", "--json"])
    assert res.exit_code == 0, res.output
    import json
    report = json.loads(res.stdout)
    assert report["backend"] == "jax" and report["bound"] == 1000 and "compile_s" in report and "run_s" in report


@st.composite
def segment_cases(draw):
    """Short runs of many shapes (each its own requests) in one queue: what the JAX placer takes in segments. Pods
    too large for any node fail in the middle of a segment; running low-priority pods give high-priority ones that
    fail something to preempt (PostFilter, nominations); host ports and soft constraints vary the configuration."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    nodes = [make_node(f"n{i}", cpu=str(rng.choice([1, 2, 4])), memory=str(rng.choice(["2Gi", "4Gi"])),
                       pods=int(rng.choice([4, 110])), labels={"tier": str(rng.integers(0, 2))},
                       taints=[("maint", "x", "PreferNoSchedule")] if rng.random() < 0.3 else [])
             for i in range(draw(st.integers(1, 12)))]
    pods = [make_pod(f"old-{i}", cpu="500m", memory="512Mi", priority=0, node_name=nodes[i % len(nodes)].metadata.name)
            for i in range(draw(st.integers(0, 6)))]
    ports = draw(st.booleans())
    for r in range(draw(st.integers(1, 30))):
        kw = dict(cpu=f"{int(rng.integers(1, 40)) * 50}m", memory=f"{int(rng.integers(1, 40)) * 64}Mi",
                  priority=int(rng.integers(0, 3)))
        if rng.random() < 0.1:
            kw["cpu"] = "64"                      # fits nowhere: the segment stops there
        if rng.random() < 0.2:
            kw["preferred_terms"] = [(int(rng.integers(1, 100)), {"match_expressions": [
                {"key": "tier", "operator": "In", "values": [str(rng.integers(0, 2))]}]})]
        if ports and rng.random() < 0.3:
            kw["host_ports"] = [(8080, "TCP", "")]
        pods += [make_pod(f"r{r}-{i}", **kw) for i in range(int(rng.integers(1, 4)))]
    return nodes, pods


@settings(max_examples=10, deadline=None)
@given(case=segment_cases(), tie_break=st.sampled_from(["first", "first", "random"]))
def test_jax_segments_match_numpy(case, tie_break):
    """Runs of different shapes placed by one compiled call each segment give numpy's run-by-run decisions: the same
    bindings in the same order, the same failures and messages, the same preemptions. With tie_break "random" (a
    node permutation drawn per cycle) there are no segments."""
    nodes, pods = case
    (_, want), (jax_sched, got) = _both(
        lambda: ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[]), DEFAULT_PROFILE,
        tie_break=tie_break, seed=3)
    assert list(got.bindings.items()) == list(want.bindings.items())
    assert got.unschedulable == want.unschedulable
    assert got.preemptions == want.preemptions


@contextlib.contextmanager
def _call_pods(count: int):
    """Meanwhile, segments of `count` pods per compiled call (jax_placer.CALL_PODS), none of them read back before
    the segment is made whole (as if every call were still running): every call is chained after the one before."""
    from phalanx.sched import jax_placer
    old, jax_placer.CALL_PODS = jax_placer.CALL_PODS, count
    finished, jax_placer.JaxPlacer._finished = jax_placer.JaxPlacer._finished, lambda self, pending: False
    try:
        yield
    finally:
        jax_placer.CALL_PODS, jax_placer.JaxPlacer._finished = old, finished


@settings(max_examples=10, deadline=None)
@given(case=segment_cases(), call_pods=st.integers(1, 6))
def test_jax_segments_in_chained_calls_match_numpy(case, call_pods):
    """A segment placed by several chained calls (a few pods each here, started before the one before has finished)
    decides as numpy: a call after one that stopped at a pod places nothing, and the runs it held go back."""
    nodes, pods = case
    with _call_pods(call_pods):
        (_, want), (jax_sched, got) = _both(
            lambda: ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[]), DEFAULT_PROFILE, seed=3)
    assert list(got.bindings.items()) == list(want.bindings.items())
    assert got.unschedulable == want.unschedulable
    assert got.preemptions == want.preemptions


def test_chained_segment_calls_continue_node_sampling():
    """With percentageOfNodesToScore under 100 the chained calls carry nextStartNodeIndex from one to the next on the
    device: the same nodes as numpy's pod-by-pod cycles, through a pod that fits nowhere and past it."""
    from phalanx.sched.config import default_config
    nodes = [make_node(f"n{i}", cpu=str(2 + i % 3), memory="8Gi") for i in range(180)]
    pods = [make_pod(f"p{i}", cpu=f"{100 + 25 * (i % 13)}m", memory=f"{256 + 64 * (i % 7)}Mi") for i in range(60)]
    pods[37] = make_pod("p37", cpu="64", memory="1Gi")         # fits nowhere: the call it is in stops there
    profile = default_config(percentage_of_nodes_to_score=30)
    with _call_pods(8):
        (numpy_sched, want), (jax_sched, got) = _both(
            lambda: ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[]), profile)
    assert jax_sched.placer.stats.segments > 2
    assert list(got.bindings.items()) == list(want.bindings.items())
    assert got.unschedulable == want.unschedulable and "default/p37" in got.unschedulable
    assert jax_sched.next_start == numpy_sched.next_start


@pytest.mark.parametrize("newcomer", ["resource", "label values", "host port"])
def test_a_vocabulary_growing_in_a_chained_segment_decides_as_numpy(newcomer):
    """A run in the middle of a segment whose PreFilter grows a vocabulary (a resource column no node has, label
    values past the head's bucket, a host port: the table or the buckets change) does not join; the calls before it
    are read back before the table is copied in again, and the runs after it are placed as numpy places them."""
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi", labels={"zone": f"z{i % 3}"}) for i in range(12)]
    pods = [make_pod(f"p{i}", cpu=f"{100 + 25 * (i % 13)}m", memory=f"{256 + 64 * (i % 7)}Mi") for i in range(40)]
    odd = {"resource": dict(containers=[{"cpu": "100m", "example.com/new": "1"}]),
           "label values": dict(cpu="100m", node_selector={"zone": "z1"}, required_terms=[{"match_expressions": [
               {"key": "zone", "operator": "NotIn", "values": [f"v{j}" for j in range(40)]}]}]),
           "host port": dict(cpu="100m", host_ports=[(9000 + j, "TCP", "") for j in range(9)])}[newcomer]
    pods[20] = make_pod("odd", **odd)
    with _call_pods(3):
        (_, want), (_, got) = _both(lambda: ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[]),
                                    DEFAULT_PROFILE)
    assert list(got.bindings.items()) == list(want.bindings.items())
    assert got.unschedulable == want.unschedulable


@settings(max_examples=10, deadline=None)
@given(case=segment_cases(), jax_first=st.booleans())
def test_auto_mixing_numpy_runs_and_jax_segments_decides_as_numpy(case, jax_first):
    """backend "auto" on a CPU: segments alternately placed by JAX and left to numpy's runs (whatever the
    measurements would say) give numpy's decisions, failures and preemptions."""
    nodes, pods = case

    def objects():
        return ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[])
    want = Scheduler(Cluster.from_objects(objects()), DEFAULT_PROFILE, seed=3).schedule()
    auto = Scheduler(Cluster.from_objects(objects()), DEFAULT_PROFILE, backend="auto", seed=3)
    turns = itertools.cycle([jax_first, not jax_first])
    auto.placer.use_jax = lambda: next(turns)
    got = auto.schedule()
    assert list(got.bindings.items()) == list(want.bindings.items())
    assert got.unschedulable == want.unschedulable
    assert got.preemptions == want.preemptions


def test_auto_takes_the_path_measured_faster():
    """JAX is tried only after PROBE_AFTER_S of numpy short runs; then each segment goes to the path with the lower
    seconds per pod (JAX's compile time left out), the other one measured again every RECHECK-th segment."""
    from phalanx.sched.auto_placer import PROBE_AFTER_S, RECHECK, AutoPlacer, Cost
    placer = AutoPlacer.__new__(AutoPlacer)
    placer.numpy_cost, placer.jax_cost, placer.segments, placer.refused = Cost(), Cost(), 0, False
    placer.numpy_cost.add(PROBE_AFTER_S / 2, 1000)
    assert not placer.use_jax()                            # segment 1
    placer.numpy_cost.add(PROBE_AFTER_S / 2, 1000)        # 1 ms per pod
    assert placer.use_jax()                                # segment 2: JAX never measured, tried
    placer.refused = True                                  # ... and it turned the head down: asked again at 64
    assert [seg for seg in range(3, RECHECK + 2) if placer.use_jax()] == [RECHECK]
    placer.segments = 2
    placer.jax_cost.add(0.5, 1000)                         # 0.5 ms per pod: JAX, numpy again at 64 and 128
    segments = range(3, 3 + 2 * RECHECK)
    assert [seg for seg in segments if not placer.use_jax()] == [RECHECK, 2 * RECHECK]
    placer.jax_cost.add(10.0, 1000)                        # 5.25 ms per pod: numpy, JAX again at 192
    segments = range(segments.stop, segments.stop + RECHECK)
    assert [seg for seg in segments if placer.use_jax()] == [3 * RECHECK]


def test_segment_member_joins_only_the_heads_configuration():
    """A run joins a segment's head exactly when their cycles differ only in their amounts (compared state by state,
    not by one pickled key): other requests join, with their own amounts; a toleration, a preferred node affinity
    term, a host port or an extended resource asked for change the compiled configuration and keep the run out
    (each may head a segment of its own)."""
    taint = ("maint", "x", "PreferNoSchedule")
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi", labels={"tier": str(i % 2)}, taints=[taint] if i else [],
                       extra={"example.com/foo": "2"} if i == 2 else None) for i in range(3)]
    base = dict(cpu="100m", memory="256Mi")
    pods = {"head": make_pod("head", **base), "amounts": make_pod("amounts", cpu="300m", memory="1Gi"),
            "tolerates": make_pod("tolerates", tolerations=[{"key": "maint", "operator": "Exists"}], **base),
            "prefers": make_pod("prefers", preferred_terms=[(5, {"match_expressions": [
                {"key": "tier", "operator": "In", "values": ["1"]}]})], **base),
            "ports": make_pod("ports", host_ports=[(8080, "TCP", "")], **base),
            "foo": make_pod("foo", containers=[{"example.com/foo": "1", **base}])}
    sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes, pods=list(pods.values()), priority_classes=[],
                                                          warnings=[])), backend="jax")

    def member(name, head=None):
        return sched.placer.segment_member(sched.shape_of(pods[name]), [pods[name]], head)

    head = member("head")
    joined = member("amounts", head)
    assert joined is not None and joined.static is head.static
    assert joined.prepared is None and joined.runtime is None       # the head's family: not prepared, gathered
    amounts = joined.amounts(head)
    assert head.runtime.keys() == amounts.keys()
    assert any(not np.array_equal(amounts[k], head.runtime[k]) for k in head.runtime)
    assert all(np.array_equal(v, member("amounts").runtime[k]) for k, v in amounts.items())
    for name in ("tolerates", "prefers", "ports", "foo"):
        assert member(name, head) is None, name
        assert member(name, member(name)) is not None, name


def test_same_static_compares_configurations_exactly():
    """The segment test of static states (_same_static) says equal only for one configuration: types count (1, True
    and 1.0 are three), arrays by dtype, shape and bytes, containers and dataclasses item by item; values it does not
    know (floats, sets) by their pickles, so -0.0 and 0.0 differ."""
    from phalanx.plugins.node_resources_fit import FilterState
    from phalanx.sched.jax_placer import _same_static

    def state(columns, request=None):
        return FilterState(request, columns, ())
    assert _same_static(state((0, 1)), state((0, 1)))
    assert _same_static(state((0, 10 ** 12)), state((0, int("1" + "0" * 12))))     # equal ints, two objects
    assert not _same_static(state((0, 1)), state((0, 2)))
    assert not _same_static(state((0, 1)), state((0, True)))
    assert not _same_static(state((0, 1)), state((0, 1.0)))
    assert not _same_static(state((0, 1)), state([0, 1]))
    assert not _same_static(state((0, 1)), state((0, 1, 2)))
    a = np.array([1, 2], np.int64)
    assert _same_static(state((0,), a), state((0,), a.copy()))
    assert not _same_static(state((0,), a), state((0,), a.astype(np.int32)))
    assert not _same_static(state((0,), a), state((0,), a.reshape(2, 1)))
    assert not _same_static(state((0,), a), state((0,), a[::-1].copy()))
    assert _same_static((0.5, frozenset({1})), (0.5, frozenset({1})))
    assert not _same_static((0.0,), (-0.0,))
    assert not _same_static(frozenset({1}), frozenset({2}))


def test_segment_stops_at_a_pod_that_fits_nowhere():
    """Six runs of distinct shapes; the fourth fits nowhere. The first segment places three runs, the fourth fails
    through its own cycle (its FitError), and the last two come back from the activeQ as the next segment."""
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(3)]
    sizes = ["100m", "200m", "300m", "16", "400m", "500m"]
    pods = [make_pod(f"p{i}", cpu=cpu, memory="256Mi") for i, cpu in enumerate(sizes)]
    (_, want), (jax_sched, got) = _both(
        lambda: ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[]), DEFAULT_PROFILE)
    assert list(got.bindings) == ["default/p0", "default/p1", "default/p2", "default/p4", "default/p5"]
    assert list(got.bindings.items()) == list(want.bindings.items())
    assert got.unschedulable == want.unschedulable
    assert got.unschedulable["default/p3"].startswith("0/3 nodes are available: 3 Insufficient cpu.")
    assert jax_sched.placer.stats.segments == 2


def test_segments_shrink_after_a_pod_that_fits_nowhere():
    """On a full cluster most pods fit nowhere: after each, the runs popped behind it go back to the activeQ unplaced.
    The next segment takes at most SEGMENT_AFTER_FAILURE pods (twice those placed before the failure), so a queue of
    n failing pods prepares about 17n members at most, not n^2 / 2 as with segments of 512 (decisions as numpy's)."""
    from phalanx.sched.pod_cycle import SEGMENT_AFTER_FAILURE

    nodes = [make_node("n0", cpu="2", memory="8Gi")]
    pods = [make_pod(f"p{i}", cpu=f"{300 + i}m", memory="64Mi") for i in range(300)]
    numpy_sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[],
                                                                warnings=[])))
    want = numpy_sched.schedule()
    jax_sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[],
                                                              warnings=[])), backend="jax")
    placer, members = jax_sched.placer, []
    joined = placer.segment_member
    placer.segment_member = lambda shape, run, head=None: members.append(shape) or joined(shape, run, head)
    got = jax_sched.schedule()
    assert list(got.bindings.items()) == list(want.bindings.items())
    assert got.unschedulable == want.unschedulable
    assert len(got.bindings) == 6 and len(got.unschedulable) == 294      # 300m..305m: six fit in 2 cpu
    assert len(members) <= 300 * (SEGMENT_AFTER_FAILURE + 1)       # 43,370 with segments of 512 after a failure
    assert jax_sched.pod_cycle.segment_limit[placer] == SEGMENT_AFTER_FAILURE
