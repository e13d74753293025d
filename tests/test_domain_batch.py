"""Runs whose scores move on the domain of the node that takes a copy (DOMAIN scores: InterPodAffinity for pods
whose terms select the pod itself) are placed by a sequential loop (kernels/domain_batch.py) with exactly the
pod-by-pod loop's decisions."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from phalanx.cluster_models import ClusterObjects
from phalanx.kernels.domain_batch import AddedWeights, DomainScore, domain_pick_order
from phalanx.kernels.interpod_affinity import minmax_scale
from phalanx.sched import Cluster, Scheduler
from reference.domain_batch import minmax, ref_pick_order
from strategies import HOSTNAME, RACK, ZONE, make_node, make_pod, make_profile


# -- the loop against its plain reference --------------------------------------------------------------------
@st.composite
def loop_cases(draw):
    c = draw(st.integers(1, 25))
    j = draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    totals = rng.integers(0, draw(st.sampled_from([3, 50, 400])), (c, j))
    if draw(st.booleans()):
        totals = np.sort(totals, axis=1)[:, ::-1] if draw(st.booleans()) else np.sort(totals, axis=1)
    cap = rng.integers(0, j + 3, c)
    rank = rng.permutation(c + int(rng.integers(0, 5)))[:c]
    scores = []
    for _ in range(draw(st.integers(1, 2))):
        raw = rng.integers(-20, 20, c) if draw(st.booleans()) else np.zeros(c, np.int64)
        domains = []
        for _ in range(draw(st.integers(1, 2))):
            kind = draw(st.sampled_from(["node", "few", "some-missing"]))
            dom = np.arange(c) if kind == "node" else rng.integers(0, 3, c)
            if kind == "some-missing":
                dom = np.where(rng.random(c) < 0.3, -1, dom)
            domains.append((dom.astype(np.int64), int(draw(st.sampled_from([1, 2, 5, -1, -3])))))
        scores.append((int(draw(st.integers(1, 5))), raw.astype(np.int64), domains))
    holders = [h for h in (rng.random(c) < 0.3 for _ in range(draw(st.integers(0, 2)))) if (h & (cap > 0)).any()]
    return totals.astype(np.int64), cap.astype(np.int64), rank.astype(np.int64), draw(st.integers(1, 3 * c * j)), \
        scores, holders


@given(loop_cases())
def test_pick_order_equals_the_plain_loop(case):
    totals, cap, rank, k, scores, holders = case
    n = int(rank.max()) + 1
    picks = domain_pick_order(totals, cap, rank, n, k,
                              [DomainScore(w, AddedWeights(raw, tuple(domains)),
                                           lambda r, lo, hi: minmax_scale(np, r, lo, hi))
                               for w, raw, domains in scores], holders)
    expected = ref_pick_order(totals.tolist(), cap.tolist(), rank.tolist(), k,
                              [(w, raw.tolist(), [(d.tolist(), a) for d, a in domains]) for w, raw, domains in scores],
                              [h.tolist() for h in holders])
    assert picks.tolist() == expected


def test_minmax_scale_is_gos_float_arithmetic():
    # 100 * (1/3) = 33.33 -> 33; 100 * (2/3) = 66.67 -> 66; 7/7 -> 100; equal extremes -> 0
    assert minmax_scale(np, np.array([1, 2, 7, 0]), 0, 3).tolist()[:2] == [33, 66]
    assert minmax_scale(np, np.array([7]), 0, 7).tolist() == [100]
    assert minmax_scale(np, np.array([4, 4]), 4, 4).tolist() == [0, 0]
    assert [minmax(v, -3, 9) for v in (-3, 0, 5, 9)] == minmax_scale(np, np.array([-3, 0, 5, 9]), -3, 9).tolist()


# -- whole runs: hand-checked toys --------------------------------------------------------------------------
def _schedule(nodes, pods, profile=None, **kw):
    cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[]))
    scheduler = Scheduler(cluster, *([] if profile is None else [profile]), **kw)
    return scheduler.schedule()


def _self_affine(name, key, weight=1, anti=False, **kw):
    term = {"weight": weight, "pod_affinity_term": {"topology_key": key,
                                                   "label_selector": {"match_labels": {"app": "web"}}}}
    part = "pod_anti_affinity" if anti else "pod_affinity"
    return make_pod(name, cpu="100m", memory="100Mi", labels={"app": "web"},
                    pod_affinity={part: {"preferred_during_scheduling_ignored_during_execution": [term]}}, **kw)


@pytest.mark.parametrize("incremental", [True, False])
def test_copies_pile_up_on_their_host_until_it_is_full(incremental):
    # Three identical nodes holding 3 pods each. The first pod's PreScore skips (no web pod yet) and the tie goes to
    # n0. From then on n0's raw InterPodAffinity score is 2 per web pod there (its term selects them, and theirs
    # select it), the others' 0: n0 normalizes to 100 (x2) against a LeastAllocated edge of a few points for the
    # empty nodes, so it takes copies until full; then n1 and n2 tie at 0 and n1 (lower rank) starts over.
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi", pods=3, labels={HOSTNAME: f"n{i}"}) for i in range(3)]
    pods = [_self_affine(f"w{i}", HOSTNAME) for i in range(12)]
    result = _schedule(nodes, pods, incremental=incremental)
    assert [result.bindings[f"default/w{i}"] for i in range(9)] == ["n0"] * 3 + ["n1"] * 3 + ["n2"] * 3
    assert set(result.unschedulable) == {f"default/w{i}" for i in (9, 10, 11)}
    assert result.pod_cycles <= 2          # the first pod's cycle (and the failure's); the rest in rounds


def test_copies_alternate_inside_their_zone():
    # n0, n1 in zone z1, n2, n3 in z2, 2 pods each. Pod 1 ties everywhere: n0. Pod 2: z1's nodes both read 2 (one
    # web pod in the zone, both ways) -> 100 each, z2's 0; n1 is emptier (LeastAllocated): n1. Pod 3: z1 both 100,
    # equal load: n0 (rank). Pod 4: n0 is full: n1. Pod 5: z1 full, z2 both 0: n2 (rank). Pod 6: z2 both read 2 ->
    # equal extremes -> 0 both; n3 is emptier: n3. Pods 7, 8: n2, n3.
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi", pods=2, labels={HOSTNAME: f"n{i}", ZONE: f"z{1 + i // 2}"})
             for i in range(4)]
    pods = [_self_affine(f"w{i}", ZONE) for i in range(8)]
    result = _schedule(nodes, pods, incremental=False)
    assert [result.bindings[f"default/w{i}"] for i in range(8)] == ["n0", "n1", "n0", "n1", "n2", "n3", "n2", "n3"]
    assert result.pod_cycles == 1


def test_preferred_anti_affinity_spreads_copies():
    # weight 3 anti-affinity to its own app on hostname: a node holding k web pods reads -6k. Pod 1 -> n0 (tie);
    # pod 2: n0 reads -6, the others 0 -> n0 normalizes to 0, the others to 100: n1 (rank); pod 3: n2; pod 4: all
    # read -6 -> equal -> 0 everywhere, LeastAllocated equal -> n0 again; and so on round the nodes.
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi", pods=10, labels={HOSTNAME: f"n{i}"}) for i in range(3)]
    pods = [_self_affine(f"w{i}", HOSTNAME, weight=3, anti=True) for i in range(7)]
    result = _schedule(nodes, pods, incremental=False)
    assert [result.bindings[f"default/w{i}"] for i in range(7)] == ["n0", "n1", "n2", "n0", "n1", "n2", "n0"]


# -- whole runs: random clusters, batched against pod by pod ------------------------------------------------
def _zoned_nodes(rng, n_nodes: int, zones: list[str], taint: tuple) -> list:
    """Nodes with a hostname, most in a zone and some in a rack, a few with `taint`, of a few sizes."""
    nodes = []
    for i in range(n_nodes):
        labels = {HOSTNAME: f"n{i}"}
        if rng.random() < 0.85:
            labels[ZONE] = str(rng.choice(zones))
        if rng.random() < 0.65:
            labels[RACK] = f"r{rng.integers(0, 4)}"
        nodes.append(make_node(f"n{i}", cpu=str(rng.choice([1, 2, 4])), memory=str(rng.choice(["1Gi", "4Gi"])),
                               pods=int(rng.choice([2, 3, 5, 110])), labels=labels,
                               taints=[taint] if rng.random() < 0.15 else []))
    return nodes


@st.composite
def domain_cases(draw):
    """Nodes in zones and racks, bound pods holding terms, and long runs of pods whose preferred (anti-)affinity
    or required affinity (hardPodAffinityWeight) selects their own app on hostname, zone or rack; soft taints
    (FIXED normalizations that move as nodes fill) and MostAllocated (rising per-node scores) in some."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n_nodes = draw(st.integers(1, 24))
    nodes = _zoned_nodes(rng, n_nodes, ["z0", "z1", "z2"], ("maint", "x", "PreferNoSchedule"))

    def affinity(app):
        terms = {}
        for part in ("pod_affinity", "pod_anti_affinity"):
            preferred = [{"weight": int(rng.integers(1, 100)), "pod_affinity_term": {
                "topology_key": str(rng.choice([HOSTNAME, HOSTNAME, ZONE, RACK])),
                "label_selector": {"match_labels": {"app": str(rng.choice([app, app, app, "other"]))}}}}
                for _ in range(int(rng.choice([0, 1, 1, 2])))]
            required = []
            if part == "pod_affinity" and rng.random() < 0.1:
                required = [{"topology_key": ZONE, "label_selector": {"match_labels": {"app": app}}}]
            if preferred or required:
                terms[part] = {"preferred_during_scheduling_ignored_during_execution": preferred,
                               "required_during_scheduling_ignored_during_execution": required}
        return terms or None

    pods = []
    for i in range(draw(st.integers(0, 6))):
        app = str(rng.choice(["web", "db"]))
        pods.append(make_pod(f"b{i}", cpu="100m", memory="100Mi", labels={"app": app}, pod_affinity=affinity(app),
                             node_name=f"n{rng.integers(0, n_nodes)}"))
    for t in range(draw(st.integers(1, 3))):
        app = str(rng.choice(["web", "db"]))
        kw = dict(cpu=str(rng.choice(["100m", "250m", "500m"])), memory=str(rng.choice(["100Mi", "300Mi"])),
                  labels={"app": app}, pod_affinity=affinity(app))
        if rng.random() < 0.3:
            kw["tolerations"] = [{"key": "maint", "operator": "Exists", "effect": "PreferNoSchedule"}]
        pods += [make_pod(f"t{t}-{i}", **kw) for i in range(int(rng.integers(2, 40)))]
    profile = make_profile(fit_strategy=draw(st.sampled_from(["LeastAllocated", "MostAllocated"])),
                           hard_pod_affinity_weight=draw(st.sampled_from([1, 0, 7])),
                           ignore_preferred_terms_of_existing_pods=draw(st.booleans()),
                           scores=(("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1),
                                   ("PodTopologySpread", 2), ("InterPodAffinity", draw(st.sampled_from([1, 2, 5]))),
                                   ("NodeResourcesBalancedAllocation", 1)))
    return nodes, pods, profile


@given(domain_cases(), st.sampled_from(["first", "random"]))
def test_domain_rounds_equal_pod_by_pod(case, tie_break):
    nodes, pods, profile = case
    single = _schedule(nodes, pods, profile, batching=False, incremental=False, tie_break=tie_break, seed=5)
    for incremental in (False, True):
        batched = _schedule(nodes, pods, profile, incremental=incremental, tie_break=tie_break, seed=5)
        assert list(batched.bindings.items()) == list(single.bindings.items())
        assert batched.unschedulable == single.unschedulable
    event(f"runs in rounds: {batched.pod_cycles < single.pod_cycles}")


# -- PodTopologySpread's raw-score model against its Score recomputed from scratch ----------------------------
@given(data=st.data(), n=st.integers(1, 30))
def test_spread_model_tracks_the_score(data, n):
    """SpreadScores moved copy by copy (and node by node as they fill) equals pod_topology_spread_score computed
    again over the counts and the feasible set after each copy."""
    from phalanx.kernels import pod_topology_spread as pts
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    keys = data.draw(st.integers(1, 3))
    labels = np.stack([np.arange(n) if i == 0 else rng.integers(-1, 3, n) for i in range(keys)], axis=1)
    labels = np.where(rng.random((n, keys)) < 0.1, -1, labels).astype(np.int32)
    n_values = [n] + [3] * (keys - 1)
    constraints = tuple(pts.Constraint(
        key=i, is_hostname=i == 0, max_skew=int(rng.integers(1, 6)), min_domains=1,
        selector=data.draw(st.sampled_from([(), None, ("test",)])), self_match=int(rng.integers(0, 2)),
        honor_affinity=bool(rng.integers(0, 2)), honor_taints=bool(rng.integers(0, 2)),
        empty_value=int(rng.choice([-1, 2]))) for i in range(keys))
    counts = [rng.integers(0, 4, n) for _ in range(keys)]
    feasible = rng.random(n) < 0.8
    affinity_ok, taints_ok = rng.random(n) < 0.8, rng.random(n) < 0.8
    require_all = data.draw(st.booleans())
    rows = np.flatnonzero(feasible)
    model = pts.SpreadScores(labels, n_values, counts, constraints, feasible, affinity_ok, taints_ok, require_all,
                             rows)

    def fresh():
        raw, _ = pts.pod_topology_spread_score(np, labels, n_values, counts, constraints, feasible, affinity_ok,
                                               taints_ok, require_all)
        return raw[rows]

    alive = feasible[rows].copy()
    assert model.raw[alive].tolist() == fresh()[alive].tolist()
    for _ in range(data.draw(st.integers(0, 3 * n))):
        if not alive.any():
            break
        c = int(rng.choice(np.flatnonzero(alive)))
        for count, con in zip(counts, constraints):
            count[rows[c]] += int(bool(con.selector) and con.self_match)
        model.copy(c)
        if rng.random() < 0.3:                       # the node filled
            alive[c] = False
            feasible[rows[c]] = False
            model.leave(c)
        assert model.raw[alive].tolist() == fresh()[alive].tolist()


def test_spread_scale_is_the_normalization():
    # hi 10, lo 2: 100 * (10 + 2 - s) // 10 -> s=2: 100, s=7: 50, s=10: 20; hi 0 -> 100 everywhere
    from phalanx.kernels.pod_topology_spread import spread_scale
    assert spread_scale(np, np.array([2, 7, 10]), 2, 10).tolist() == [100, 50, 20]
    assert spread_scale(np, np.array([0, 0]), 0, 0).tolist() == [100, 100]


# -- whole runs with PodTopologySpread: explicit ScheduleAnyway constraints and Deployments' default spreading --
@st.composite
def spread_cases(draw):
    """Nodes in zones and racks (some without them, some tainted, some with too little room), pods bound already,
    and long runs of pods spread by their own ScheduleAnyway constraints or, as a Deployment's replicas, by the
    system default constraints."""
    from phalanx.cluster_models.controllers import Deployment
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n_nodes = draw(st.integers(1, 24))
    nodes = _zoned_nodes(rng, n_nodes, ["z0", "z1", "z2", ""], ("dedicated", "x", "NoSchedule"))
    pods = [make_pod(f"b{i}", cpu="100m", memory="100Mi", labels={"app": str(rng.choice(["web", "db"]))},
                     node_name=f"n{rng.integers(0, n_nodes)}") for i in range(draw(st.integers(0, 8)))]
    controllers = []
    for t in range(draw(st.integers(1, 3))):
        app = str(rng.choice(["web", "db"]))
        cpu = str(rng.choice(["100m", "250m", "500m"]))
        count = int(rng.integers(2, 40))
        if rng.random() < 0.4:
            controllers.append(Deployment.model_validate({"metadata": {"name": f"d{t}"}, "spec": {
                "replicas": count, "selector": {"matchLabels": {"app": app, "d": str(t)}},
                "template": {"metadata": {"labels": {"app": app, "d": str(t)}},
                             "spec": {"containers": [{"name": "c", "resources": {"requests": {
                                 "cpu": cpu, "memory": "100Mi"}}}]}}}}))
            continue
        spread = []
        for key in rng.choice([HOSTNAME, ZONE, RACK], size=int(rng.integers(1, 4)), replace=False):
            c = {"max_skew": int(rng.integers(1, 4)), "topology_key": str(key), "when_unsatisfiable": "ScheduleAnyway",
                 "label_selector": {"match_labels": {"app": str(rng.choice([app, app, "other"]))}}}
            if rng.random() < 0.3:
                c["node_taints_policy"] = "Honor"
            if rng.random() < 0.2:
                c["node_affinity_policy"] = "Ignore"
            spread.append(c)
        kw = {"node_selector": {RACK: "r1"}} if rng.random() < 0.15 else {}
        pods += [make_pod(f"t{t}-{i}", cpu=cpu, memory="100Mi", labels={"app": app}, spread=spread, **kw)
                 for i in range(count)]
    profile = make_profile(fit_strategy=draw(st.sampled_from(["LeastAllocated", "MostAllocated"])),
                           scores=(("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1),
                                   ("PodTopologySpread", draw(st.sampled_from([1, 2, 5]))), ("InterPodAffinity", 2),
                                   ("NodeResourcesBalancedAllocation", 1)))
    return nodes, pods, controllers, profile


@given(spread_cases(), st.sampled_from(["first", "random"]))
def test_spread_rounds_equal_pod_by_pod(case, tie_break):
    nodes, pods, controllers, profile = case

    def run(**kw):
        cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, controllers=controllers))
        return Scheduler(cluster, profile, tie_break=tie_break, seed=5, **kw).schedule()

    single = run(batching=False, incremental=False)
    for incremental in (False, True):
        batched = run(incremental=incremental)
        assert list(batched.bindings.items()) == list(single.bindings.items())
        assert batched.unschedulable == single.unschedulable
    event(f"runs in rounds: {batched.pod_cycles < single.pod_cycles}")
