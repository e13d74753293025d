"""Kept per-shape results (sched/incremental.py) make exactly the decisions of a full cycle per pod, and what they
keep equals a full evaluation of the current state, through placements, deletions and node events."""
from __future__ import annotations

import dataclasses
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phalanx.cluster_models import ClusterObjects
from phalanx.kernels.status import SUCCESS
from phalanx.sched import DEFAULT_PROFILE, Cluster, Scheduler
from phalanx.sched import messages
from phalanx.sched.incremental import ShapeCache
from reference.scheduler import ref_schedule
from strategies import first_attempts, interleaved_clusters, make_node, make_pod, profiles


def _split(pods):
    bound = [p for p in pods if p.spec.node_name]
    pending = [p for p in pods if not p.spec.node_name and p.status.phase not in ("Succeeded", "Failed")]
    return bound, pending


@given(interleaved_clusters(max_nodes=10, max_pods=40), profiles(), st.booleans())
@settings(max_examples=60)
def test_interleaved_queue_matches_reference(cluster, profile, batching):
    """Runs of a few shapes, interleaved: the same bindings and messages as the plain reference, pod for pod."""
    nodes, pods, classes = cluster
    want_bindings, want_unschedulable = ref_schedule(nodes, pods, classes, profile)
    bound, pending = _split(pods)
    state = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=bound, priority_classes=classes, warnings=[]))
    bindings, failures = first_attempts(Scheduler(state, profile, batching=batching), pending)
    assert bindings == want_bindings
    assert failures == want_unschedulable


@st.composite
def interleaved_cases(draw):
    """Nodes of a few sizes with soft taints (TaintToleration's normalization moves as the nodes holding its extreme
    fill), and queues of runs of 1-6 pods of a few templates, some preferring node labels, some tolerating."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    nodes = []
    for i in range(draw(st.integers(2, 30))):
        taints = [("maint", "x", "PreferNoSchedule")] if rng.random() < 0.3 else []
        if rng.random() < 0.15:
            taints.append(("spot", "y", "PreferNoSchedule"))
        nodes.append(make_node(f"n{i}", cpu=str(rng.choice([1, 2, 4])), memory=rng.choice(["2Gi", "4Gi", "16Gi"]),
                               pods=int(rng.choice([3, 10, 110])), labels={"tier": str(rng.integers(0, 3))},
                               taints=taints, unschedulable=bool(rng.random() < 0.05),
                               gpu=int(rng.choice([0, 0, 2]))))
    templates = []
    for _ in range(draw(st.integers(1, 5))):
        kw = dict(cpu=str(rng.choice(["100m", "250m", "500m", "1"])), memory=str(rng.choice(["100Mi", "500Mi", "1Gi"])))
        if rng.random() < 0.3:
            kw["preferred_terms"] = [(int(rng.integers(1, 100)), {"match_expressions": [
                {"key": "tier", "operator": "In", "values": [str(rng.integers(0, 3))]}]})]
        if rng.random() < 0.3:
            kw["tolerations"] = [{"key": "maint", "operator": "Exists", "effect": "PreferNoSchedule"}]
        if rng.random() < 0.2:
            kw["gpu"] = "1"
        if rng.random() < 0.1:
            kw["host_ports"] = [(8080, "TCP", "")]
        if rng.random() < 0.4:
            kw["labels"] = {"app": str(rng.choice(["a", "b"]))}
        if rng.random() < 0.3:
            kw["pod_affinity"] = _pod_terms(rng)
        templates.append(kw)
    pods, wanted = [], draw(st.integers(1, 120))
    while len(pods) < wanted:
        kw = templates[int(rng.integers(0, len(templates)))]
        pods += [make_pod(f"p{len(pods) + j}", **kw) for j in range(int(rng.integers(1, 7)))]
    return nodes, pods


def _pod_terms(rng) -> dict:
    """Preferred pod (anti-)affinity on hostname or tier (their scores are live in kept shapes), now and then a
    required anti-affinity (the shape is then not kept)."""
    def term():
        return {"label_selector": {"match_labels": {"app": str(rng.choice(["a", "b"]))}},
                "topology_key": str(rng.choice(["kubernetes.io/hostname", "tier"]))}
    kind = str(rng.choice(["pod_affinity", "pod_anti_affinity"]))
    part = {"preferred_during_scheduling_ignored_during_execution": [
        {"weight": int(rng.integers(1, 100)), "pod_affinity_term": term()}]}
    if kind == "pod_anti_affinity" and rng.random() < 0.3:
        part["required_during_scheduling_ignored_during_execution"] = [term()]
    return {kind: part}


def _records(nodes, pods, incremental: bool, batching: bool = True, tie_break: str = "first"):
    """Records of a run with events between rounds: the first half queued, bound pods deleted, a node cordoned
    and one tainted, the second half queued. Returns (records, scheduler)."""
    from phalanx.cluster_models.objects import Taint
    cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=[], priority_classes=[], warnings=[]))
    sched = Scheduler(cluster, batching=batching, tie_break=tie_break, seed=3, incremental=incremental)
    half = len(pods) // 2
    records = sched.add_pods(pods[:half]) + sched.step(0.0)
    bound = [r.object for r in records if r.kind == "Bound"]
    for key in bound[::3]:
        records += sched.delete_pod(key)
    records += sched.add_pods(pods[half:]) + sched.step(0.0)
    node = nodes[0].model_copy(update={"spec": nodes[0].spec.model_copy(update={"unschedulable": True})})
    records += sched.update_node(node)
    last = nodes[-1]
    tainted = last.model_copy(update={"spec": last.spec.model_copy(update={
        "taints": [*last.spec.taints, Taint(key="late", value="z", effect="PreferNoSchedule")]})})
    records += sched.update_node(tainted)
    if bound and bound[-1] not in bound[::3]:
        records += sched.delete_pod(bound[-1])
    records += sched.step(30.0)
    return [(r.kind, r.object, getattr(r, "node", None), getattr(r, "message", None)) for r in records], sched


@given(interleaved_cases(), st.booleans(), st.sampled_from(["first", "random"]), st.booleans())
@settings(max_examples=60, deadline=None)
def test_incremental_equals_full_cycles_through_events(case, batching, tie_break, leaders):
    """Placements, deletions (nodes become feasible again), node updates (kept shapes dropped): the same records
    with kept shapes as with a full cycle per run; with the kept keys' leaders (BestKey) on these few nodes too,
    three at a time (found again often)."""
    from phalanx.sched import incremental
    nodes, pods = case
    with mock.patch.object(incremental, "_LEADERS_FROM", 1 if leaders else incremental._LEADERS_FROM), \
            mock.patch.object(incremental, "_LEADERS", 3):
        kept, _ = _records(nodes, pods, incremental=True, batching=batching, tie_break=tie_break)
    full, _ = _records(nodes, pods, incremental=False, batching=batching, tie_break=tie_break)
    assert kept == full


@given(interleaved_cases())
@settings(max_examples=40, deadline=None)
def test_kept_results_equal_a_full_evaluation(case):
    """Every kept shape's feasibility and totals equal what a full cycle computes on the state left at the end."""
    nodes, pods = case
    _, sched = _records(nodes, pods, incremental=True)
    placer = sched.placer
    rank = sched.rank()
    # Every shape kept, then more of the pods placed: the kept rows are brought up to date after placements.
    for shape in {id(shape): shape for shape in map(sched.shape_of, pods)}.values():
        placer.kept.get(shape, sched.cluster, placer.framework, rank, placer.caches, again=True)
    sched.add_pods([pod.model_copy(update={"metadata": pod.metadata.model_copy(update={"name": f"again-{i}"})})
                    for i, pod in enumerate(pods[: len(pods) // 2])])
    sched.step(60.0)
    for entry in list(placer.kept.entries.values()):
        kept = placer.kept.get(entry.shape, sched.cluster, placer.framework, rank, placer.caches)
        if kept is None:            # not met for long: dropped, as it should be
            continue
        _, ev, node = placer.evaluate(entry.shape, rank, advance=False)
        feasible = np.asarray(ev.feasible)
        assert np.array_equal(kept.feasible, feasible)
        if feasible.any() and not kept.live:       # (a live Score is added to the key alone)
            assert np.array_equal(kept.total[feasible], np.asarray(ev.total)[feasible])
        assert kept.best() == node


def _kept_after_events(case, seed: int):
    """The node table, a generator seeded with `seed` and the kept shapes left by _records on `case`, with each of
    the case's pod shapes kept now (the events drop most of them)."""
    nodes, pods = case
    _, sched = _records(nodes, pods, incremental=True)
    placer, rank = sched.placer, sched.rank()
    for shape in {id(shape): shape for shape in map(sched.shape_of, pods)}.values():
        placer.kept.get(shape, sched.cluster, placer.framework, rank, placer.caches, again=True)
    return sched.cluster.tensors, np.random.default_rng(seed), list(placer.kept.entries.values())


@given(interleaved_cases(), st.integers(0, 2**32 - 1))
@settings(max_examples=40, deadline=None)
def test_remembered_totals_equal_the_arrays(case, seed):
    """copy_totals read from the totals remembered by node rows (Prepared.row_totals) equal the arrays' on every
    kept shape, for the next pod and for copies, on rows met before and new, also when the memory is full and
    starts again."""
    from phalanx.sched import cycle
    tensors, rng, entries = _kept_after_events(case, seed)
    n = tensors.nodes.size
    for entry in entries:
        p = entry.scoring
        remembered = p.row_totals
        if remembered is None:
            continue
        for _ in range(6):
            rows = rng.integers(0, n, int(rng.integers(1, min(n, 8) + 1)))
            static = rng.integers(0, 500, len(rows))
            copies = 1 if rng.random() < 0.5 else np.arange(1, int(rng.integers(2, 6)))[None, :]
            want = cycle._array_totals(np, p, tensors, rows, static, copies)
            got = cycle.copy_totals(np, p, tensors, rows, static, copies)
            assert got.dtype == np.int64 and got.tolist() == np.broadcast_to(want, got.shape).tolist()
        assert remembered.results
        rows, zeros = np.arange(min(n, 4)), np.zeros(min(n, 4), np.int64)
        want = cycle._array_totals(np, p, tensors, rows, zeros, 1).tolist()
        cycle._REMEMBERED_MAX, was = 0, cycle._REMEMBERED_MAX         # full: forgotten, then filled again
        try:
            assert cycle.copy_totals(np, p, tensors, rows, zeros, 1).tolist() == want
        finally:
            cycle._REMEMBERED_MAX = was
        # Found too rarely: forgotten for good, and the arrays answer.
        remembered.asked, remembered.found = cycle._REMEMBERED_TRIAL, cycle._REMEMBERED_TRIAL // 2 - 1
        remembered.remember([])
        assert not remembered.worthwhile and not remembered.results
        assert cycle.copy_totals(np, p, tensors, rows, zeros, 1).tolist() == want and not remembered.results


@given(interleaved_cases(), st.integers(0, 2**32 - 1))
@settings(max_examples=30, deadline=None)
def test_remembered_filters_equal_the_filters(case, seed):
    """A kept shape's NODE_LOCAL Filters on node rows (filter_rows), and the copies its nodes take (capacity_rows),
    remembered by those rows, are what the Filters and copy_capacity return on them, first met or met again."""
    from phalanx.sched.cycle import NodeRows, WithNodes, capacity_rows, copy_capacity, filter_rows
    tensors, rng, entries = _kept_after_events(case, seed)
    n = tensors.nodes.size
    for entry in entries:
        local = entry.local
        for _ in range(4):
            rows = rng.integers(0, n, int(rng.integers(1, min(n, 8) + 1)))
            view = WithNodes(tensors, NodeRows(tensors.nodes, rows), rows)
            want = [(plugin.name, *plugin.filter(np, state, view)[:2]) for plugin, state in local.filters]
            got = filter_rows(local, tensors, rows)
            assert [(name, c.dtype, c.tolist(), p.dtype, p.tolist()) for name, c, p in got] == \
                [(name, np.asarray(c).dtype, np.asarray(c).tolist(), np.asarray(p).dtype, np.asarray(p).tolist())
                 for name, c, p in want]
            default = int(rng.integers(1, 9))
            cap = capacity_rows(entry.prepared, tensors, rows, default)
            assert cap.dtype == np.int64
            assert cap.tolist() == np.broadcast_to(copy_capacity(np, entry.prepared, view, default), len(rows)).tolist()


@given(interleaved_cases(), st.integers(0, 2**32 - 1))
@settings(max_examples=30, deadline=None)
def test_remembered_passes_and_copies_equal_the_arrays(case, seed):
    """What a kept shape reads without arrays once rows were met: remembered_passes (its update of rows that stay
    feasible) answers exactly when every Filter passes with payload 0 on every row, with the arrays' totals of the
    next pod; remembered_copies (a kept round) gives capacity_rows' copies and the arrays' totals of each copy."""
    from phalanx.sched.cycle import (NodeRows, WithNodes, _array_totals, capacity_rows, copy_totals, filter_rows,
                                     load_keys, remembered_copies, remembered_passes)
    tensors, rng, entries = _kept_after_events(case, seed)
    n = tensors.nodes.size
    for entry in entries:
        local, scoring, p = entry.local, entry.scoring, entry.prepared
        for _ in range(4):
            rows = rng.integers(0, n, int(rng.integers(1, min(n, 8) + 1)))
            keys = load_keys(tensors, rows, local.row_filters, scoring.row_totals, p.row_capacity)
            if keys is None:
                continue
            zeros = np.zeros(len(rows), np.int64)
            filter_rows(local, tensors, rows, keys)          # met: remembered from here on (while worthwhile)
            want_next = copy_totals(np, scoring, tensors, rows, zeros, 1, keys)[:, 0].tolist()
            view = WithNodes(tensors, NodeRows(tensors.nodes, rows), rows)
            passes = np.ones(len(rows), bool)
            for plugin, state in local.filters:
                code, payload = plugin.filter(np, state, view)[:2]
                passes &= (np.asarray(code) == SUCCESS) & (np.asarray(payload) == 0)
            got = remembered_passes(local, scoring, keys)
            kept = [scoring.row_totals] + ([local.row_filters] if local.filters else [])
            if None in kept or not all(r.worthwhile for r in kept):
                assert got is None or passes.all()
            else:
                assert (got is not None) == bool(passes.all())
            if got is not None:
                assert got == want_next == _array_totals(np, scoring, tensors, rows, zeros, 1)[:, 0].tolist()
            most = int(rng.integers(1, 5))
            cap = capacity_rows(p, tensors, rows, most, keys)
            if cap.max() < 1:
                continue
            copies = np.arange(1, int(cap.max()) + 1)[None, :]
            copy_totals(np, scoring, tensors, rows, zeros, copies, keys)
            few = remembered_copies(p, scoring, keys, most)
            if few is None:
                assert None in (p.row_capacity, scoring.row_totals) or copies.size * len(rows) > 64 \
                    or not (p.row_capacity.worthwhile and scoring.row_totals.worthwhile)
                continue
            caps, totals = few
            assert caps == cap.tolist()
            assert totals == _array_totals(np, scoring, tensors, rows, zeros, copies).tolist()


@st.composite
def pooled_cases(draw):
    """A kube mix in small: pools of identical nodes, queues of runs of 1-6 pods of a few plain templates. Node rows
    repeat, so kept shapes read their rows' results remembered (remembered_passes, remembered_copies); small pools
    fill up, so rows also leave the feasible set."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    pools = [dict(cpu=str(rng.choice([2, 4, 32])), memory=str(rng.choice(["4Gi", "16Gi", "256Gi"])),
                  pods=int(rng.choice([4, 10, 110])), gpu=int(rng.choice([0, 8])))
             for _ in range(draw(st.integers(1, 2)))]
    nodes = [make_node(f"n{i}", **pools[i % len(pools)]) for i in range(draw(st.integers(2, 24)))]
    templates = [dict(cpu=str(rng.choice(["250m", "1", "2"])), memory=str(rng.choice(["512Mi", "2Gi", "8Gi"])),
                      **({"gpu": "1"} if rng.random() < 0.2 else {}))
                 for _ in range(draw(st.integers(2, 4)))]
    pods, wanted = [], draw(st.integers(10, 150))
    while len(pods) < wanted:
        kw = templates[int(rng.integers(0, len(templates)))]
        pods += [make_pod(f"p{len(pods) + j}", **kw) for j in range(int(rng.integers(1, 7)))]
    return nodes, pods


@given(pooled_cases(), st.booleans())
@settings(max_examples=40, deadline=None)
def test_remembered_rows_decide_as_full_cycles(case, batching):
    """On node pools, where kept shapes update their rows and make their rounds from remembered results, the
    records through events equal full cycles', and every kept shape equals a full evaluation at the end."""
    nodes, pods = case
    kept, sched = _records(nodes, pods, incremental=True, batching=batching)
    full, _ = _records(nodes, pods, incremental=False, batching=batching)
    assert kept == full
    placer, rank = sched.placer, sched.rank()
    for entry in list(placer.kept.entries.values()):
        now = placer.kept.get(entry.shape, sched.cluster, placer.framework, rank, placer.caches)
        if now is None:
            continue
        _, ev, node = placer.evaluate(entry.shape, rank, advance=False)
        assert np.array_equal(now.feasible, np.asarray(ev.feasible))
        if now.feasible.any():
            assert np.array_equal(now.total[now.feasible], np.asarray(ev.total)[now.feasible])
        assert now.best() == node


def test_pools_read_remembered_rows():
    """A node pool does go through the reads without arrays (else the tests above would not test them), and
    decides as full cycles."""
    from phalanx.sched import cycle, incremental, placement
    calls = {"passes": 0, "copies": 0}

    def counted(name, function):
        def wrapped(*args):
            found = function(*args)
            calls[name] += found is not None
            return found
        return wrapped

    def records(kept: bool) -> tuple[list, Scheduler]:
        cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=[], priority_classes=[], warnings=[]))
        sched = Scheduler(cluster, incremental=kept)
        return [(r.kind, r.object, getattr(r, "node", None)) for r in sched.add_pods(pods) + sched.step(0.0)], sched
    rng = np.random.default_rng(7)
    nodes = [make_node(f"n{i}", cpu="32", memory="256Gi", pods=110, gpu=8) for i in range(60)]
    shapes = [dict(cpu="250m", memory="512Mi"), dict(cpu="1", memory="2Gi"), dict(cpu="2", memory="8Gi")]
    pods = []
    while len(pods) < 300:
        kw = shapes[int(rng.integers(0, 3))]
        pods += [make_pod(f"p{len(pods) + j}", **kw) for j in range(int(rng.integers(1, 5)))]
    with mock.patch.object(incremental, "remembered_passes", counted("passes", cycle.remembered_passes)), \
            mock.patch.object(placement, "remembered_copies", counted("copies", cycle.remembered_copies)):
        kept, sched = records(True)
    assert calls["passes"] >= 10 and calls["copies"] >= 10, calls
    assert kept == records(False)[0]
    placer, rank = sched.placer, sched.rank()
    for entry in list(placer.kept.entries.values()):
        now = placer.kept.get(entry.shape, sched.cluster, placer.framework, rank, placer.caches)
        _, ev, node = placer.evaluate(entry.shape, rank, advance=False)
        assert np.array_equal(now.total, np.asarray(ev.total)) and now.best() == node


def test_plugins_reading_more_than_the_node_table_are_not_remembered():
    """A NODE_LOCAL score or Filter that does not name the node-table columns it reads (a GPU score reads the
    device book) leaves its cycle state's results unremembered."""
    from phalanx.plugins.node_resources_fit import NodeResourcesFit
    from phalanx.sched.cycle import Prepared

    class Unnamed(NodeResourcesFit):
        score_columns = ()

    class UnnamedFilter(NodeResourcesFit):
        filter_columns = ()

    fit = NodeResourcesFit()
    assert Prepared(pod=None, filters=(), scores=((fit, None, 1),)).row_totals is not None
    assert Prepared(pod=None, filters=(), scores=((fit, None, 1), (Unnamed(), None, 1))).row_totals is None
    assert Prepared(pod=None, filters=(), scores=()).row_totals is None
    assert Prepared(pod=None, filters=((fit, None),), scores=()).row_filters is not None
    assert Prepared(pod=None, filters=((fit, None), (UnnamedFilter(), None)), scores=()).row_filters is None


def _soft_taints(n: int):
    return [(f"k{i}", "v", "PreferNoSchedule") for i in range(n)]


def test_normalization_moves_when_its_holder_fills():
    """TaintToleration normalizes by the most untolerated soft taints among feasible nodes. n2 holds that maximum
    (2); once a pod pinned there fills it, the maximum is 1 and n1's and n3's normalized score falls from 50 to 0:
    the kept shape is built again and decides as the reference does."""
    nodes = [make_node("n0", cpu="1", taints=_soft_taints(0)), make_node("n1", cpu="4", taints=_soft_taints(1)),
             make_node("n2", cpu="1", taints=_soft_taints(2)), make_node("n3", cpu="2", taints=_soft_taints(1))]
    a = dict(cpu="500m", memory="128Mi")
    pinned = dict(cpu="1", memory="128Mi", node_selector={"kubernetes.io/hostname": "n2"},
                  tolerations=[{"operator": "Exists"}])
    pods = [make_pod("a0", **a), make_pod("a1", **a), make_pod("pin", **pinned),
            *[make_pod(f"a{i}", **a) for i in range(2, 10)]]
    want_bindings, _ = ref_schedule(nodes, pods, [], DEFAULT_PROFILE)
    # One cycle at a time, so the shape is kept (from a1 on) before the pinned pod fills n2.
    steps = [step for i, pod in enumerate(pods[:3]) for step in (("add", [pod]), ("step", float(i)))]
    steps += [("add", pods[3:]), ("step", 3.0)]
    records, kept = _bindings_and_builds(nodes, steps, incremental=True)
    assert {obj: node for kind, obj, node in records if kind == "Bound"} == want_bindings
    assert want_bindings["default/pin"] == "n2"
    assert kept.builds == 2      # at a1, and again when n2, the only node with two soft taints, left


def test_shapes_beyond_the_budget_are_evicted_and_decisions_stay():
    nodes = [make_node(f"n{i}", cpu=str(1 + i % 4)) for i in range(12)]
    pods = [make_pod(f"p{i}", cpu=["100m", "200m", "300m", "400m"][(i // 2) % 4], memory="64Mi") for i in range(80)]
    def run(budget):
        cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=[], priority_classes=[], warnings=[]))
        sched = Scheduler(cluster)
        sched.placer.kept = ShapeCache(budget)
        return first_attempts(sched, pods), sched.placer.kept
    (small, cache_small), (large, cache_large) = run(1), run(1 << 24)     # (a shape counts its remembered rows too)
    assert small == large
    assert len(cache_small.entries) == 1 and len(cache_large.entries) == 4


@pytest.mark.parametrize("incremental", [True, False])
def test_kube_mix_toy_matches_reference(incremental):
    """The benchmark's pod mix (four shapes cycling in runs of 4, 3, 2, 1) on a small cluster, against the
    reference."""
    from phalanx.cluster_models.generate import generate_nodes, kube_mix_pods
    nodes = generate_nodes(20, node_type="kube-mix", taint_fraction=0.3, unschedulable_fraction=0.1)
    pods = kube_mix_pods(300)
    want_bindings, want_unschedulable = ref_schedule(nodes, pods, [], DEFAULT_PROFILE)
    cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=[], priority_classes=[], warnings=[]))
    sched = Scheduler(cluster, incremental=incremental)
    bindings, failures = first_attempts(sched, pods)
    assert bindings == want_bindings and failures == want_unschedulable
    assert (sched.placer.kept is not None and sched.placer.kept.row_updates > 0) == incremental


def test_kube_mix_toy_places_kept_runs_in_segments():
    """With kept shapes, short runs at the head of the activeQ are placed one after another and bound together
    (Placer.place_segment): the toy's runs go mostly in segments, with the reference's decisions, and the same
    records as runs placed and bound one at a time. Its failing pods (cordoned and tainted nodes fill up) stop
    segments; their runs' own cycles fail them."""
    from phalanx.cluster_models.generate import generate_nodes, kube_mix_pods
    nodes = generate_nodes(20, node_type="kube-mix", taint_fraction=0.3, unschedulable_fraction=0.1)
    pods = kube_mix_pods(700)
    want_bindings, want_unschedulable = ref_schedule(nodes, pods, [], DEFAULT_PROFILE)

    def run(segments: bool):
        cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=[], priority_classes=[], warnings=[]))
        sched = Scheduler(cluster)
        if not segments:
            sched.placer.segment_pods = 0
        calls = []
        place_segment = sched.placer.place_segment
        with mock.patch.object(sched.placer, "place_segment",
                               side_effect=lambda *a: calls.append(1) or place_segment(*a)):
            records = sched.add_pods(pods) + sched.step(0.0)
        return [(r.kind, r.object, getattr(r, "node", None), getattr(r, "message", None)) for r in records], calls

    records, calls = run(True)
    assert {obj: node for kind, obj, node, _ in records if kind == "Bound"} == want_bindings
    assert {obj for kind, obj, _, _ in records if kind == "Unschedulable"} == set(want_unschedulable)
    assert want_unschedulable and len(calls) > 1
    alone, none = run(False)
    assert records == alone and not none


@given(interleaved_cases(), st.booleans())
@settings(max_examples=40, deadline=None)
def test_segments_decide_as_runs_one_at_a_time(case, batching):
    """Placements, deletions, node updates: the same records with the kept shapes' runs placed in segments as
    placed and bound one run at a time."""
    from phalanx.sched import placement
    nodes, pods = case
    together, _ = _records(nodes, pods, incremental=True, batching=batching)
    with mock.patch.object(placement, "KEPT_SEGMENT_PODS", 0):
        alone, sched = _records(nodes, pods, incremental=True, batching=batching)
    assert not sched.placer.segment_pods
    assert together == alone


def _bindings_and_builds(nodes, steps, incremental: bool):
    """Run `steps` ((kind, arg): ("add", pods), ("delete", key), ("step", t)); returns (records, kept cache)."""
    cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=[], priority_classes=[], warnings=[]))
    sched = Scheduler(cluster, incremental=incremental)
    records = []
    for kind, arg in steps:
        records += {"add": sched.add_pods, "delete": sched.delete_pod, "step": sched.step}[kind](arg)
    return [(r.kind, r.object, getattr(r, "node", None)) for r in records], sched.placer.kept


def test_a_node_feasible_again_rebuilds_the_shape():
    """A pod deleted frees a node that was full for the shape: the kept shape is built again (a new feasible node
    may move a normalization), and the waiting pod lands there."""
    nodes = [make_node("n0", cpu="1"), make_node("n1", cpu="1")]
    a = [make_pod(f"a{i}", cpu="600m", memory="64Mi") for i in range(4)]
    steps = [("add", a[:1]), ("step", 0.0), ("add", a[1:2]), ("step", 1.0), ("add", a[2:3]), ("step", 2.0),
             ("delete", "default/a0"), ("step", 20.0), ("add", a[3:]), ("step", 40.0)]
    kept_records, kept = _bindings_and_builds(nodes, steps, incremental=True)
    full_records, _ = _bindings_and_builds(nodes, steps, incremental=False)
    assert kept_records == full_records
    bound = [(obj, node) for kind, obj, node in kept_records if kind == "Bound"]
    assert bound[:2] == [("default/a0", "n0"), ("default/a1", "n1")] and ("default/a2", "n0") in bound
    assert kept.builds == 2         # at a1 (the shape's second cycle), and when n0 could take a2 again


def test_a_shape_not_met_for_long_is_built_again():
    """After more than 256 load changes without a cycle of the shape, its kept results are built again over every
    node at its next cycle, not updated row by row; decisions stay those of full cycles."""
    nodes = [make_node(f"n{i}", cpu="64", memory="64Gi") for i in range(8)]
    a = [make_pod(f"a{i}", cpu="300m", memory="64Mi") for i in range(2)]
    others = [make_pod(f"o{i}", cpu=["100m", "200m"][i % 2], memory="64Mi") for i in range(300)]
    steps = [("add", [a[0]]), ("step", 0.0), ("add", [a[1]]), ("step", 1.0), ("add", others), ("step", 2.0),
             ("add", [make_pod("a2", cpu="300m", memory="64Mi")]), ("step", 3.0)]
    kept_records, kept = _bindings_and_builds(nodes, steps, incremental=True)
    full_records, _ = _bindings_and_builds(nodes, steps, incremental=False)
    assert kept_records == full_records
    # Built for a1 and for the two other shapes, and again for a2, which came after 300 changes.
    assert kept.builds == 4 and len(kept.entries) == 3


@given(st.integers(1, 1300), st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 40)), max_size=12),
       st.integers(1, 12), st.randoms(use_true_random=False))
def test_best_key_blocks_follow_changes(n, changes, k, rnd):
    """BestKey, with its blocks' maxima (over several blocks) and without, with its leaders (few or many of them,
    dropped by changes of more or fewer rows) and without: after each change of a few rows (some made infeasible),
    best() is the first argmax over every node, top(k) the k largest feasible keys in order, and values the keys as
    set."""

    from phalanx.sched import incremental
    plain = np.array([rnd.choice((-1, rnd.randrange(100) * n + (n - 1 - i))) for i in range(n)], np.int64)
    with mock.patch.object(incremental, "_BLOCKED_FROM", rnd.choice((1, n + 1))), \
            mock.patch.object(incremental, "_KEY_BLOCK", rnd.choice((4, 256))), \
            mock.patch.object(incremental, "_LEADERS_FROM", rnd.choice((1, n + 1))), \
            mock.patch.object(incremental, "_LEADERS", rnd.choice((1, 3, 32))), \
            mock.patch.object(incremental, "_LEADERS_SET", rnd.choice((2, 64))):
        key = incremental.BestKey(plain.copy(), np.arange(n))
        for seed, count in changes:
            rows = np.array(sorted({(seed + 7919 * j) % n for j in range(count)}), np.int64)
            values = np.array([-1 if (seed + r) % 3 == 0 else (seed % 100) * n + (n - 1 - r) for r in rows],
                              np.int64)
            plain[rows] = values
            key.set(rows, values)
            best = int(np.argmax(plain))
            assert key.best() == (best if plain[best] >= 0 else -1)
            want = sorted((i for i in range(n) if plain[i] >= 0), key=lambda i: -plain[i])[:k]
            assert key.top(k).tolist() == want
            assert np.array_equal(key.values, plain)


@given(st.lists(st.integers(-1, 50), min_size=1, max_size=40), st.integers(1, 20))
def test_top_is_the_best_feasible_keys_in_order(values, k):
    """ShapeScores.top(k): the nodes with the k largest keys (ties impossible: keys hold a distinct rank; here the
    node index breaks them), best first, infeasible ones (key -1) left out; by argmax passes or by a partition."""
    from phalanx.sched.incremental import BestKey, ShapeScores
    n = len(values)
    key = np.array([v * n + (n - 1 - i) if v >= 0 else -1 for i, v in enumerate(values)], np.int64)
    kept = BestKey(key, np.arange(n))
    scores = ShapeScores(**{f.name: None for f in dataclasses.fields(ShapeScores)} | {"key": kept})
    want = sorted((i for i in range(n) if key[i] >= 0), key=lambda i: -key[i])[:k]
    assert scores.top(k).tolist() == want
    assert np.array_equal(scores.key.values, key)        # the kept key is left as it was
    assert scores.best() == (want[0] if want else -1)


def test_deployment_replicas_keep_their_node_local_scores_and_score_spreading_live():
    """A Deployment's replicas are spread by the system default constraints (PodTopologySpread's Score reads the
    bound pods): the shape is kept with that Score run over every node each cycle (live), the rest kept. Same
    records as full cycles, through a deletion and a node update. Batching is off: with it, a run this long goes in
    domain rounds (tests/test_domain_batch.py)."""
    from phalanx.cluster_models.controllers import Deployment
    from phalanx.cluster_models.generate import generate_nodes
    from phalanx.cluster_models.objects import Taint
    nodes = generate_nodes(40, seed=2, taint_fraction=0.2)
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
        {"name": "c", "resources": {"requests": {"cpu": "300m", "memory": "1Gi"}}}]}}
    deployment = Deployment.model_validate({"metadata": {"name": "web"}, "spec": {
        "replicas": 150, "selector": {"matchLabels": {"app": "web"}}, "template": template}})

    def run(incremental):
        cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, controllers=[deployment]))
        sched = Scheduler(cluster, incremental=incremental, batching=False)
        records = sched.add_pods(cluster.pending) + sched.step(0.0)
        live = [plugin.name for e in (sched.placer.kept.entries.values() if incremental else ()) for plugin, _ in e.live]
        bound = [r.object for r in records if r.kind == "Bound"]
        records += sched.delete_pod(bound[7])
        node = nodes[3].model_copy(update={"spec": nodes[3].spec.model_copy(update={
            "taints": [Taint(key="late", value="z", effect="PreferNoSchedule")]})})
        records += sched.update_node(node) + sched.step(30.0)
        return [(r.kind, r.object, getattr(r, "node", None), getattr(r, "message", None)) for r in records], live

    kept, live = run(True)
    full, _ = run(False)
    assert kept == full
    assert sum(1 for r in kept if r[0] == "Bound") > 100
    assert live == ["PodTopologySpread"]


def test_a_cluster_without_nodes_fails_pods_as_full_cycles_do():
    """The only node removed: kept shapes step aside and the pods fail with the full cycle's message."""
    nodes = [make_node("n0", cpu="1")]
    spread = [{"max_skew": 1, "topology_key": "topology.kubernetes.io/zone", "when_unsatisfiable": "ScheduleAnyway",
               "label_selector": {"match_labels": {"app": "a"}}}]
    pods = [make_pod(f"p{i}", cpu="100m", memory="64Mi", labels={"app": "a"}, spread=spread) for i in range(3)]

    def run(incremental):
        cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=[], priority_classes=[], warnings=[]))
        sched = Scheduler(cluster, incremental=incremental)
        records = sched.add_pods(pods[:1]) + sched.step(0.0) + sched.remove_node("n0")
        records += sched.add_pods(pods[1:]) + sched.step(1.0)
        return [(r.kind, r.object, getattr(r, "message", None)) for r in records]

    kept = run(True)
    assert kept == run(False)
    assert ("Unschedulable", "default/p1", "no nodes available to schedule pods") in kept


def test_failing_pods_in_turn_patch_their_reason_histogram(monkeypatch):
    """Pods of a shape that fits nowhere (too much memory), in turn with pods that fill the nodes' CPU one at a
    time: from its third pod on, each failing pod's reason histogram is the last one's patched on the nodes placed
    on since (ShapeScores.evaluation), and the messages are the full cycles'."""
    from phalanx.sched import incremental
    patched = []
    monkeypatch.setattr(incremental, "patched_histogram",
                        lambda *args: patched.append(1) or messages.patched_histogram(*args))
    nodes = [make_node(f"n{i}", cpu="4", memory="16Gi") for i in range(5)]
    pods = []
    for i in range(24):
        pods += [make_pod(f"s{i}", cpu="1", memory="1Gi"), make_pod(f"b{i}", cpu="2", memory="20Gi")]

    def records(keep: bool):
        cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=[], priority_classes=[], warnings=[]))
        sched = Scheduler(cluster, batching=False, incremental=keep)
        return [(r.kind, r.object, getattr(r, "node", None), getattr(r, "message", None))
                for r in sched.add_pods(pods) + sched.step(0.0)]

    kept = records(True)
    assert len(patched) >= 15 and kept == records(False)
    # the histogram moved: nodes full of small pods report insufficient CPU as well
    messages_seen = {m for kind, _, _, m in kept if m}
    assert any("Insufficient cpu" in m for m in messages_seen) and len(messages_seen) > 3
