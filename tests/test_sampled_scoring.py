"""A sampled cycle (percentageOfNodesToScore < 100) runs its Filters round the ring on windows of node rows until it
has found numFeasibleNodesToFind nodes (placement.Placer._filter_ring) and scores those nodes on their rows alone
(cycle.sampled_totals): the same decisions as filtering and scoring every node and reading the sampled ones, which
is how the per-pod path worked before. Kept shapes are sampled on their kept results, the cycles of one lap of the
ring picked at once (select.sampled_windows, Placer.sampled_laps), live Scores on the cycle's own nodes
(Plugin.sampled_scores; PodTopologySpread's at the rows alone): the same decisions again."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phalanx.cluster_models import ClusterObjects
from phalanx.sched import Cluster, Scheduler
from phalanx.kernels import pod_topology_spread as ptsk
from phalanx.kernels import select
from phalanx.sched import cycle, incremental, placement
from phalanx.sched.config import default_config
from strategies import HOSTNAME, ZONE, clusters, interleaved_clusters, make_node, make_pod, make_profile, profiles
from test_incremental import interleaved_cases


def _spy(mp: pytest.MonkeyPatch) -> list:
    """Record what each sampled_totals call of the Placer returns."""
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
    # n100; p2 samples n0..n99 again, where n0 now scores lower -> n1. Without kept shapes (incremental=False), so
    # that each pod has a full cycle (test_sampling.py's by-hand test runs the same with them).
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(200)]
    pods = [make_pod(f"p{i}", cpu="1", memory="1Gi") for i in range(3)]
    cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[]))
    with pytest.MonkeyPatch.context() as mp:
        seen = _spy(mp)
        result = Scheduler(cluster, make_profile(percentage_of_nodes_to_score=50), incremental=False).schedule()
    assert result.bindings == {"default/p0": "n0", "default/p1": "n100", "default/p2": "n1"}
    assert [None if t is None else t.shape for t in seen] == [(100,)] * 3


def _clone(node, name: str, hostname: bool = True):
    """The node under another name (its hostname label too; dropped when not `hostname`)."""
    labels = dict(node.metadata.labels)
    if HOSTNAME in labels:
        labels[HOSTNAME] = name
    if not hostname:
        labels.pop(HOSTNAME, None)
    return node.model_copy(update={"metadata": node.metadata.model_copy(update={"name": name, "labels": labels})})


@settings(max_examples=40, deadline=None)
@given(clusters(max_nodes=6, max_pods=30), profiles(), st.integers(100, 400), st.sampled_from([0, 1, 10, 30, 50, 90]))
def test_sampled_rows_decide_as_every_node(cluster, profile, n_nodes, percentage):
    _check_sampled_paths(cluster, profile, n_nodes, percentage)


@settings(max_examples=30, deadline=None)
@given(interleaved_clusters(max_nodes=6, max_pods=60), profiles(), st.integers(100, 300),
       st.sampled_from([0, 10, 50, 90]))
def test_kept_shapes_sampled_decide_as_every_node(cluster, profile, n_nodes, percentage):
    """As above, on queues of interleaved runs of 1-4 identical pods of a few templates: the shapes come back, so
    most of their runs are sampled on kept results."""
    _check_sampled_paths(cluster, profile, n_nodes, percentage)


def _check_sampled_paths(cluster, profile, n_nodes: int, percentage: int) -> None:
    """Random clusters of 100-400 nodes (a drawn cluster's nodes repeated) and profiles (every Fit strategy,
    plugins and weights drawn), sampled at 0 (adaptive) to 90%: the records (bindings, failure messages) and the
    ring's index are the same whether runs of a shape are sampled on its kept results or not, whether every
    sampled cycle scores on its rows or none does, and whether Filters run on windows of the ring or not."""
    nodes, pods, classes = cluster
    nodes = [*nodes, *(_clone(nodes[i % len(nodes)], f"n{i}") for i in range(len(nodes), n_nodes))]
    profile = dataclasses.replace(profile, percentage_of_nodes_to_score=percentage)
    bound = [p for p in pods if p.spec.node_name]
    pending = [p for p in pods if not p.spec.node_name]

    def run(rows_per_node: int, ring: bool = True, kept: bool = True):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(placement, "_SAMPLED_ROWS_PER_NODE", rows_per_node)
            if not ring:
                mp.setattr(placement.Placer, "_filter_ring", lambda self, p, n: None)
            if not kept:
                mp.setattr(placement.Placer, "_place_kept_sampled", lambda self, shape, pods, rank, out: pods)
            seen = _spy(mp)
            state = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=bound, priority_classes=classes,
                                                        warnings=[]))
            scheduler = Scheduler(state, profile)
            records = scheduler.add_pods(pending) + scheduler.step(0.0)
        return [(r.kind, r.object, r.node, r.message) for r in records], scheduler.next_start, seen

    on, start_on, _ = run(0)                          # kept shapes sampled where they can be
    rows, start_rows, _ = run(0, kept=False)          # every sampled cycle on its rows
    off, start_off, seen_off = run(10 ** 9, kept=False)              # none
    plain, start_plain, _ = run(10 ** 9, ring=False, kept=False)     # nor Filters on windows: every node filtered
    assert on == rows == off == plain and start_on == start_rows == start_off == start_plain
    assert not seen_off


def test_ring_windows_by_hand():
    # Without kept shapes (incremental=False), so that every cycle walks the ring.
    # 300 nodes at 50% look for 150 feasible ones; the first window holds 150 + 37 + 64 = 251 rows. Even nodes are
    # too small for the 3-cpu pods, so the window from nextStartNodeIndex 0 (n0..n250) holds 125 feasible nodes
    # (n1, n3, ..., n249), and the second (502 rows, cut to the 49 left: n251..n299) 25 more, the 150th n299: 300
    # nodes visited. All tie, so p0 takes n1 and the index moves to 300 % 300 = 0; p1 samples the same nodes and
    # n1 now scores lower: n3. A last pod too big for every node walks the whole ring: every node's reasons, from
    # the two windows.
    nodes = [make_node(f"n{i}", cpu="2" if i % 2 == 0 else "8", memory="8Gi") for i in range(300)]
    pods = [make_pod("p0", cpu="3", memory="1Gi"), make_pod("p1", cpu="3", memory="1Gi"),
            make_pod("big", cpu="64", memory="1Gi")]
    cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[]))
    scheduler = Scheduler(cluster, make_profile(percentage_of_nodes_to_score=50), incremental=False)
    walks = []
    with pytest.MonkeyPatch.context() as mp:
        ring = placement.Placer._filter_ring

        def spied(self, p, n):
            out = ring(self, p, n)
            walks.append(None if out is None else (int(out[0].feasible.sum()), out[1]))
            return out
        mp.setattr(placement.Placer, "_filter_ring", spied)
        result = scheduler.schedule()
    assert walks == [(150, 300), (150, 300), (0, None)]
    assert result.bindings == {"default/p0": "n1", "default/p1": "n3"}
    assert scheduler.next_start == 0
    assert result.unschedulable["default/big"].startswith("0/300 nodes are available: 300 Insufficient cpu.")


def test_kept_shape_sampled_by_hand():
    # The same cluster with kept shapes: p0 and p1 (one shape) are sampled on the shape's kept results: the 150 odd
    # nodes from index 0 (300 visited), all tied -> n1; then the same 150, n1 lower -> n3. The big pod's shape has
    # no feasible node: it fails from its kept results with every node's reasons.
    nodes = [make_node(f"n{i}", cpu="2" if i % 2 == 0 else "8", memory="8Gi") for i in range(300)]
    pods = [make_pod("p0", cpu="3", memory="1Gi"), make_pod("p1", cpu="3", memory="1Gi"),
            make_pod("big", cpu="64", memory="1Gi")]
    cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[]))
    scheduler = Scheduler(cluster, make_profile(percentage_of_nodes_to_score=50))
    picked = []
    with pytest.MonkeyPatch.context() as mp:
        best = incremental.ShapeScores.sampled_best

        def spied(self, windows, rank, live=None):
            nodes = best(self, windows, rank, live)
            picked.extend((windows.shape[1], node) for node in nodes.tolist())
            return nodes
        mp.setattr(incremental.ShapeScores, "sampled_best", spied)
        result = scheduler.schedule()
    assert picked == [(150, 1), (150, 3)]
    assert result.bindings == {"default/p0": "n1", "default/p1": "n3"}
    assert scheduler.next_start == 0
    assert result.unschedulable["default/big"].startswith("0/300 nodes are available: 300 Insufficient cpu.")


def _ring_walk(feasible: list[bool], start: int, wanted: int) -> tuple[list[int], int]:
    """findNodesThatPassFilters one node at a time: from start round the ring until `wanted` feasible nodes are
    found; (them, in ring order; the nodes visited)."""
    n = len(feasible)
    found = []
    for visited in range(1, n + 1):
        node = (start + visited - 1) % n
        if feasible[node]:
            found.append(node)
            if len(found) == wanted:
                return found, visited
    return sorted(found), n


@settings(max_examples=300, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=60), st.integers(0, 200), st.integers(1, 20), st.integers(1, 30))
def test_sampled_windows_are_cycles_in_turn_within_a_lap(feasible, start, wanted, most):
    """sampled_windows against cycles walked node by node in turn: the same sampled nodes and nodes visited, as
    many cycles as fit in one lap of the ring (up to `most`), none visiting a node an earlier one sampled."""
    n = len(feasible)
    ids = np.flatnonzero(feasible).astype(np.int64)
    windows, visited = select.sampled_windows(ids, n, start, wanted, most)
    at, total, expected, seen = start, 0, [], set()
    for _ in range(most):
        found, walked = _ring_walk(feasible, at % n, wanted)
        if total + walked > n:
            break
        arc = {(at + j) % n for j in range(walked)}
        assert not arc & seen
        seen |= arc
        expected.append(found)
        total += walked
        at += walked
    assert windows.tolist() == expected and visited == total


def _copies(pod, count: int) -> list:
    return [pod.model_copy(update={"metadata": pod.metadata.model_copy(update={"name": f"{pod.metadata.name}-{i}"})})
            for i in range(count)]


def _check_laps(nodes, bound, classes, profile, pending) -> None:
    """The records and ring index of scheduling `pending` on the nodes holding `bound` are the same with sampled
    laps (Placer.sampled_laps) as one cycle at a time, and as without kept shapes."""
    def run(laps: bool, incremental: bool = True):
        state = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=bound, priority_classes=classes, warnings=[]))
        scheduler = Scheduler(state, profile, incremental=incremental)
        scheduler.placer.sampled_laps = laps
        records = scheduler.add_pods(pending) + scheduler.step(0.0)
        return [(r.kind, r.object, r.node, r.message) for r in records], scheduler.next_start

    assert run(True) == run(False) == run(False, incremental=False)


@settings(max_examples=40, deadline=None)
@given(clusters(max_nodes=6, max_pods=6), profiles(), st.integers(100, 400), st.sampled_from([0, 5, 10, 30, 50]),
       st.lists(st.integers(1, 40), min_size=1, max_size=3))
def test_sampled_laps_decide_as_pod_by_pod(cluster, profile, n_nodes, percentage, run_lengths):
    """Long runs of identical pods on kept results, sampled: the cycles of one lap picked from one state of the
    kept results and placed at once (Placer.sampled_laps) give the records and ring index of one cycle at a time,
    and of cycles without kept shapes."""
    nodes, pods, classes = cluster
    nodes = [*nodes, *(_clone(nodes[i % len(nodes)], f"n{i}") for i in range(len(nodes), n_nodes))]
    profile = dataclasses.replace(profile, percentage_of_nodes_to_score=percentage)
    bound = [p for p in pods if p.spec.node_name]
    pending = [copy for p, count in zip([p for p in pods if not p.spec.node_name], run_lengths)
               for copy in _copies(p, count)]
    _check_laps(nodes, bound, classes, profile, pending)


def _scheduled_with_placements(scheduler) -> tuple:
    """(schedule()'s result, the node ids of each placement it made, in order)."""
    placements = []
    with pytest.MonkeyPatch.context() as mp:
        account = placement.Placer.account

        def spied(self, p, node_ids, placed):
            placements.append(node_ids.tolist())
            return account(self, p, node_ids, placed)
        mp.setattr(placement.Placer, "account", spied)
        return scheduler.schedule(), placements


def test_sampled_laps_by_hand():
    # 400 identical nodes at 25% look for 100 feasible ones: a lap holds four cycles, from n0, n100, n200 and n300,
    # each picking its first node (all tie on the first): 6 copies take n0, n100, n200, n300 in one placement, then,
    # the ring back at n0 where n0 now scores lower, n1 and n101.
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(400)]
    pods = _copies(make_pod("p", cpu="1", memory="1Gi"), 6)
    cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[]))
    scheduler = Scheduler(cluster, make_profile(percentage_of_nodes_to_score=25))
    result, placements = _scheduled_with_placements(scheduler)
    assert placements == [[0, 100, 200, 300], [1, 101]]
    assert [result.bindings[f"default/p-{i}"] for i in range(6)] == ["n0", "n100", "n200", "n300", "n1", "n101"]
    assert scheduler.next_start == 200


@st.composite
def _spread_cases(draw):
    """Random node labels (key 0: hostname-like, each node its own value; others a few values or missing, one of
    them maybe ""), pod counts per node, ScheduleAnyway constraints and inclusion masks."""
    n = draw(st.integers(1, 30))
    keys = draw(st.integers(1, 3))
    labels = np.full((n, keys), -1, np.int32)
    labels[:, 0] = np.arange(n)
    n_values = [n]
    for k in range(1, keys):
        values = draw(st.integers(1, 4))
        labels[:, k] = draw(st.lists(st.integers(-1, values - 1), min_size=n, max_size=n))
        n_values.append(values)
    constraints, counts = [], []
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.integers(-1, keys - 1))
        empty = draw(st.sampled_from([-1, 0])) if key > 0 else -1
        constraints.append(ptsk.Constraint(key=key, is_hostname=key == 0, max_skew=draw(st.integers(1, 5)),
                                           min_domains=1, selector=None, self_match=1,
                                           honor_affinity=draw(st.booleans()), honor_taints=draw(st.booleans()),
                                           empty_value=empty))
        counts.append(np.array(draw(st.lists(st.integers(0, 6), min_size=n, max_size=n)), np.int64))
    masks = [np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool) for _ in range(3)]
    masks[2][draw(st.integers(0, n - 1))] = True       # a cycle scores at least one node
    rows = np.flatnonzero(masks[2])
    return labels, n_values, constraints, counts, rows, masks[0], masks[1], draw(st.booleans())


@settings(max_examples=400, deadline=None)
@given(_spread_cases())
def test_spread_scores_at_rows_are_every_nodes_read_there(case):
    """PodTopologySpread's scores of a sampled cycle computed at its nodes alone (pod_topology_spread_score with
    rows, then the normalization over them) equal the scores over every node with those nodes feasible, read there."""
    labels, n_values, constraints, counts, rows, affinity_ok, taints_ok, require_all = case
    feasible = np.zeros(len(labels), bool)
    feasible[rows] = True
    raw, ignored = ptsk.pod_topology_spread_score(np, labels, n_values, counts, constraints, feasible, affinity_ok,
                                                  taints_ok, require_all)
    at_rows, ignored_rows = ptsk.pod_topology_spread_score(np, labels, n_values, counts, constraints, feasible,
                                                           affinity_ok, taints_ok, require_all, rows)
    assert at_rows.tolist() == raw[rows].tolist() and ignored_rows.tolist() == ignored[rows].tolist()
    every = ptsk.pod_topology_spread_normalize(np, raw, feasible, ignored)
    own = ptsk.pod_topology_spread_normalize(np, at_rows, np.ones(len(rows), bool), ignored_rows)
    assert own.tolist() == every[rows].tolist()


@settings(max_examples=30, deadline=None)
@given(interleaved_cases(), st.integers(100, 300), st.sampled_from([0, 10, 30]))
def test_sampled_kept_shapes_with_live_scores_decide_as_full_cycles(case, n_nodes, percentage):
    """Queues of interleaved runs with preferred pod (anti-)affinity (live InterPodAffinity Scores, and a first pod
    whose terms find no pod yet: kept from the second copy on), soft taints and node preferences, sampled: the same
    records and ring index on kept results as with a full sampled cycle for every pod."""
    nodes, pods = case
    nodes = [*nodes, *(_clone(nodes[i % len(nodes)], f"n{i}") for i in range(len(nodes), n_nodes))]
    config = default_config(percentage_of_nodes_to_score=percentage)

    def run(incremental: bool, laps: bool = True):
        cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=[], priority_classes=[], warnings=[]))
        scheduler = Scheduler(cluster, config, incremental=incremental)
        scheduler.placer.sampled_laps = laps
        records = scheduler.add_pods(pods) + scheduler.step(0.0)
        return [(r.kind, r.object, r.node, r.message) for r in records], scheduler.next_start

    assert run(True) == run(True, laps=False) == run(False)


def test_preferred_affinity_run_kept_from_its_second_pod_by_hand():
    # 300 identical nodes at 50% look for 150. The pods prefer (weight 100) nodes holding an app=a pod (hostname):
    # p0 finds none, so InterPodAffinity skips it and it has a full cycle: n0..n149 tie -> n0. Its copy now makes
    # the Score run: p1..p3 go on the kept shape with the Score live, on their own nodes (sampled_live), and as a
    # copy moves the score of its own node alone (a per-node key), the two cycles of a lap share one PreScore: p1
    # samples n150..n299, none holds a pod -> n150; p2 samples n0..n149, n0 holds p0 (200 more) -> n0; then p3, a
    # lap of its own -> n150.
    term = {"weight": 100, "pod_affinity_term": {"label_selector": {"match_labels": {"app": "a"}},
                                                 "topology_key": HOSTNAME}}
    nodes = [make_node(f"n{i}", cpu="8", memory="16Gi") for i in range(300)]
    pods = _copies(make_pod("p", cpu="1", memory="1Gi", labels={"app": "a"}, pod_affinity={
        "pod_affinity": {"preferred_during_scheduling_ignored_during_execution": [term]}}), 4)
    cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[]))
    scheduler = Scheduler(cluster, make_profile(percentage_of_nodes_to_score=50))
    live = []
    with pytest.MonkeyPatch.context() as mp:
        sampled_live = incremental.ShapeCache.sampled_live

        def spied(s, states, windows, caches):
            live.append(windows.shape)
            return sampled_live(s, states, windows, caches)
        mp.setattr(incremental.ShapeCache, "sampled_live", staticmethod(spied))
        result = scheduler.schedule()
    assert [result.bindings[f"default/p-{i}"] for i in range(4)] == ["n0", "n150", "n0", "n150"]
    assert live == [(2, 150), (1, 150)]
    assert scheduler.next_start == 0


def _with_anti_affinity(pod, topology_key: str):
    """The pod with one required anti-affinity term instead of its pod (anti-)affinity and spread constraints: to
    pods of its own app across `topology_key` (per node for the hostname: copies then block each other's node
    alone, and the run goes in sampled rounds)."""
    data = pod.model_dump(exclude_unset=True)
    data["spec"].pop("topology_spread_constraints", None)
    affinity = data["spec"].setdefault("affinity", {})
    affinity.pop("pod_affinity", None)
    affinity["pod_anti_affinity"] = {"required_during_scheduling_ignored_during_execution": [
        {"topology_key": topology_key, "label_selector": {"match_labels": {"app": pod.metadata.labels["app"]}}}]}
    return type(pod).model_validate(data)


def test_sampled_rounds_by_hand():
    # test_sampled_laps_by_hand's 400 nodes at 25%, the copies now keeping away from each other's node (required
    # anti-affinity on the hostname), so the shape is not kept (its PreFilter moves with every copy) and the run
    # goes in sampled rounds: the first lap takes n0, n100, n200, n300 at once; back at n0, now blocked, the fifth
    # cycle walks n0..n101 for 100 feasible nodes (n100 blocked too) and takes n1; the sixth walks n102..n202 (n200
    # blocked) and takes n102, leaving the ring at n203.
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(400)]
    pods = _copies(_with_anti_affinity(make_pod("p", cpu="1", memory="1Gi", labels={"app": "a"}), HOSTNAME), 6)
    cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[]))
    scheduler = Scheduler(cluster, make_profile(percentage_of_nodes_to_score=25))
    result, placements = _scheduled_with_placements(scheduler)
    assert placements == [[0, 100, 200, 300], [1, 102]]
    assert [result.bindings[f"default/p-{i}"] for i in range(6)] == ["n0", "n100", "n200", "n300", "n1", "n102"]
    assert scheduler.next_start == 203


def test_sampled_rounds_score_the_next_copy_by_hand():
    # 200 identical nodes without a hostname label at 50% look for 100: the term holds no node back, so a node takes
    # copies until full and is scored for each. A lap holds two cycles: p0 and p1 tie on n0..n99 and n100..n199 ->
    # n0, n100; the next lap finds them lower (one pod more) -> n1, n101; then n2, n102.
    nodes = [_clone(make_node(f"n{i}", cpu="4", memory="8Gi"), f"n{i}", hostname=False) for i in range(200)]
    pods = _copies(_with_anti_affinity(make_pod("p", cpu="1", memory="1Gi", labels={"app": "a"}), HOSTNAME), 6)
    cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[]))
    scheduler = Scheduler(cluster, make_profile(percentage_of_nodes_to_score=50))
    result, placements = _scheduled_with_placements(scheduler)
    assert placements == [[0, 100], [1, 101], [2, 102]]
    assert [result.bindings[f"default/p-{i}"] for i in range(6)] == ["n0", "n100", "n1", "n101", "n2", "n102"]
    assert scheduler.next_start == 0


@settings(max_examples=40, deadline=None)
@given(clusters(max_nodes=6, max_pods=6), profiles(), st.integers(100, 400), st.sampled_from([0, 5, 10, 30, 50]),
       st.lists(st.integers(1, 60), min_size=1, max_size=3), st.lists(st.sampled_from([HOSTNAME, HOSTNAME, ZONE]),
                                                                      min_size=3, max_size=3), st.integers(0, 4))
def test_sampled_rounds_decide_as_pod_by_pod(cluster, profile, n_nodes, percentage, run_lengths, keys, unnamed):
    """Runs of identical pods with required anti-affinity to their own app (per node, or by zone: not batchable,
    so pod by pod), sampled: placed in sampled rounds (Placer._place_sampled_rounds) they give the records and ring
    index of one full cycle per pod, with and without kept shapes. Every `unnamed`-th node (none for 0) has no
    hostname label: the term does not hold it back, so it takes copies until full, scored for each."""
    nodes, pods, classes = cluster
    nodes = [*nodes, *(_clone(nodes[i % len(nodes)], f"n{i}", hostname=not unnamed or i % unnamed)
                       for i in range(len(nodes), n_nodes))]
    profile = dataclasses.replace(profile, percentage_of_nodes_to_score=percentage)
    bound = [p for p in pods if p.spec.node_name]
    pending = [copy for p, count, key in zip([p for p in pods if not p.spec.node_name], run_lengths, keys)
               for copy in _copies(_with_anti_affinity(p, key), count)]
    _check_laps(nodes, bound, classes, profile, pending)


@st.composite
def _preferring_runs(draw):
    """(nodes, pods, percentage): 100-400 nodes, each with its hostname and one of a few zones (some without), and
    runs of 1-30 identical pods preferring or avoiding (weight 1-100) pods of their own app or another on the
    hostname (a copy moves its own node's score alone: a lap's cycles share one PreScore) or the zone (it moves its
    zone's: a lap's cycles scored one after another by the plugin's lap model), and some spreading themselves
    (ScheduleAnyway) across the hostname or the zone."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    zones = draw(st.integers(1, 6))
    nodes = [make_node(f"n{i}", cpu=str(rng.choice([2, 4, 8])), memory="16Gi",
                       labels={ZONE: f"z{rng.integers(zones)}"} if rng.random() < 0.95 else {})
             for i in range(draw(st.integers(100, 400)))]
    templates = []
    for t in range(draw(st.integers(1, 3))):
        terms = {kind: {"preferred_during_scheduling_ignored_during_execution": [
            {"weight": int(rng.integers(1, 101)), "pod_affinity_term": {
                "label_selector": {"match_labels": {"app": str(rng.choice(["a", "b"]))}},
                "topology_key": str(rng.choice([HOSTNAME, HOSTNAME, ZONE]))}}]}
            for kind in ("pod_affinity", "pod_anti_affinity") if rng.random() < 0.6}
        app = str(rng.choice(["a", "b"]))
        spread = [{"max_skew": int(rng.integers(1, 6)), "topology_key": str(rng.choice([HOSTNAME, ZONE, ZONE])),
                   "when_unsatisfiable": "ScheduleAnyway",
                   "label_selector": {"match_labels": {"app": app if rng.random() < 0.8 else "c"}}}
                  for _ in range(int(rng.choice([0, 0, 1, 2])))]
        templates.append(make_pod(f"t{t}", cpu=str(rng.choice(["250m", "1"])), memory="1Gi", labels={"app": app},
                                  pod_affinity=terms or None, spread=spread))
    pods = []
    for _ in range(draw(st.integers(1, 6))):
        pods += _copies(templates[int(rng.integers(len(templates)))], int(rng.integers(1, 31)))
    pods = [p.model_copy(update={"metadata": p.metadata.model_copy(update={"name": f"p{i}"})})
            for i, p in enumerate(pods)]
    return nodes, pods, draw(st.sampled_from([0, 5, 10, 30, 50]))


@settings(max_examples=40, deadline=None)
@given(_preferring_runs())
def test_sampled_laps_with_live_scores_decide_as_pod_by_pod(case):
    """Runs with preferred pod (anti-)affinity and ScheduleAnyway spreading, sampled on kept results with the Scores
    live: the cycles of a lap sharing one PreScore where copies move their own node's score alone (hostname terms),
    or scored one after another by the lap models (Plugin.sampled_lap) where they move their zone's, give the
    records and ring index of one cycle at a time, and of full cycles."""
    nodes, pods, percentage = case
    profile = make_profile(percentage_of_nodes_to_score=percentage)
    _check_laps(nodes, [], [], profile, pods)


def test_sampled_laps_after_the_pods_a_live_score_read_left():
    # Pods preferring their own app across the zone (InterPodAffinity live, a copy moving its zone's scores), kept
    # from a first run of two, after the pods they preferred were deleted: the kept shape's live Score skips the next
    # pod (the lap then holds one cycle: its copies make the Score run again) and is scored lap by lap by its lap
    # model afterwards. 400 nodes in two zones (alternating, every 100th unschedulable), 25%: the same records and
    # ring index with laps as without.
    term = {"weight": 100, "pod_affinity_term": {"label_selector": {"match_labels": {"app": "a"}},
                                                 "topology_key": ZONE}}
    nodes = [make_node(f"n{i}", cpu="8", memory="16Gi", labels={ZONE: f"z{i % 2}"}, unschedulable=i % 100 == 99)
             for i in range(400)]
    template = make_pod("p", cpu="1", memory="1Gi", labels={"app": "a"}, pod_affinity={
        "pod_affinity": {"preferred_during_scheduling_ignored_during_execution": [term]}})
    seed = make_pod("seed", cpu="1", memory="1Gi", labels={"app": "a"}, node_name="n0")

    def run(laps: bool):
        cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=[seed], priority_classes=[], warnings=[]))
        scheduler = Scheduler(cluster, make_profile(percentage_of_nodes_to_score=25))
        scheduler.placer.sampled_laps = laps
        first, rest = _copies(template, 8)[:2], _copies(template, 8)[2:]
        records = scheduler.add_pods(first) + scheduler.step(0.0)
        records += scheduler.delete_pods(["default/seed", "default/p-0", "default/p-1"])
        records += scheduler.add_pods(rest) + scheduler.step(1.0)
        return [(r.kind, r.object, r.node, r.message) for r in records], scheduler.next_start

    assert run(True) == run(False)
