"""GPU table, device-level filter and selection, the GPU score policies and FGD against the plain reference
(tests/reference/gpus.py) on random clusters, plus hand-checked toy cases."""
from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from phalanx.cluster_models.alibaba import TraceNodes, TracePods
from phalanx.cluster_models.gpus import GpuTable
from phalanx.kernels import fgd, gpu_fit, gpu_scores
from phalanx.simulate.alibaba import replay_order, typical_pods
from reference import gpus as ref

MODELS = ("A", "B", "C")
xp = np


# ----------------------------------------------------------------------------------------------- strategies
@st.composite
def nodes_st(draw, max_nodes=8):
    n = draw(st.integers(1, max_nodes))
    out = []
    for _ in range(n):
        d = draw(st.sampled_from([0, 1, 2, 4, 8]))
        model = draw(st.sampled_from(MODELS))
        free = draw(st.lists(st.one_of(st.sampled_from([0, 1000, 500]), st.integers(0, 100).map(lambda x: 10 * x)),
                             min_size=d, max_size=d))
        cpu_left = draw(st.integers(0, 16)) * 4000
        tags = {t: draw(st.integers(0, 2)) for t in ("share-gpu", "1-gpu", "2-gpu")}
        out.append({"free": free, "models": [model] * d, "cpu_left": cpu_left, "tags": tags})
    return out


@st.composite
def pod_st(draw):
    count = draw(st.sampled_from([0, 1, 1, 1, 2, 4, 8]))
    if count == 0:
        milli = 0
    elif count == 1:
        milli = draw(st.one_of(st.just(1000), st.integers(1, 100).map(lambda x: 10 * x)))
    else:
        milli = 1000
    models = draw(st.lists(st.sampled_from(MODELS + ("Z",)), max_size=2)) if count else []
    return {"cpu": draw(st.integers(1, 16)) * 1000, "count": count, "milli": milli, "models": models}


@st.composite
def typical_st(draw):
    t = draw(st.integers(1, 5))
    shapes = []
    for _ in range(t):
        p = draw(pod_st())
        shapes.append((p["cpu"], p["milli"], p["count"], "|".join(p["models"])))
    weights = draw(st.lists(st.integers(1, 20), min_size=t, max_size=t))
    total = float(sum(weights))
    typ = [(s, w / total) for s, w in zip(shapes, weights)]
    kernel = fgd.TypicalPods(cpu=tuple(s[0] for s in shapes), milli=tuple(s[1] for s in shapes),
                             count=tuple(s[2] for s in shapes), spec=tuple(s[3] for s in shapes),
                             freq=tuple(w / total for w in weights))
    return typ, kernel


def arrays(nodes):
    """Dense kernel inputs of reference nodes: free (N, D), dev_model (N, D), cpu_left, gpu_count, tag_count."""
    table = GpuTable.build([[(f"g{i}", m, 0) for i, m in enumerate(n["models"])] for n in nodes], MODELS)
    table.milli_used = np.asarray([1000 - f for n in nodes for f in n["free"]], dtype=np.int64)
    free, model = table.dense_free(), table.dense_model()
    cpu = np.asarray([n["cpu_left"] for n in nodes], dtype=np.int64)
    tags = np.asarray([[n["tags"].get(t, 0) for t in ("share-gpu", "1-gpu", "2-gpu")] for n in nodes], dtype=np.int64)
    return table, free, model, cpu, table.per_node_count(), tags


def allowed(pod):
    return gpu_fit.allowed_ids(MODELS, pod["models"]) if pod["count"] else None


# ----------------------------------------------------------------------------------- filter and selection
@given(nodes_st(), pod_st())
def test_fit_filter_matches_reference(nodes, pod):
    _, free, model, *_ = arrays(nodes)
    got = gpu_fit.gpu_fit_filter(xp, free, model, pod["count"], pod["milli"], allowed(pod))
    assert got.tolist() == [ref.fits(n, pod) for n in nodes]


@given(nodes_st(), pod_st(), st.sampled_from(["best", "worst"]))
def test_device_selection_matches_reference(nodes, pod, order):
    _, free, model, *_ = arrays(nodes)
    fits = gpu_fit.device_fits(xp, free, model, pod["milli"], allowed(pod))
    chosen = gpu_fit.select_devices(xp, free, fits, pod["count"], order)
    for n, node in enumerate(nodes):
        if ref.fits(node, pod):
            assert np.flatnonzero(chosen[n]).tolist() == ref.pick_devices(node, pod, order)


@given(nodes_st(), pod_st(), st.floats(0, 0.999))
def test_random_device_is_the_kth_fitting_device(nodes, pod, u):
    _, free, model, *_ = arrays(nodes)
    fits = gpu_fit.device_fits(xp, free, model, pod["milli"], allowed(pod))
    chosen = gpu_fit.random_device(xp, fits, np.full(len(nodes), u))
    for n in range(len(nodes)):
        ok = np.flatnonzero(fits[n])
        want = [int(ok[int(u * len(ok))])] if len(ok) else []
        assert np.flatnonzero(chosen[n]).tolist() == want


def test_fit_and_selection_toy():
    # node 0: 4 x A with free 1000, 300, 1000, 800; node 1: 2 x B idle; node 2: no GPU.
    nodes = [{"free": [1000, 300, 1000, 800], "models": ["A"] * 4, "cpu_left": 0, "tags": {}},
             {"free": [1000, 1000], "models": ["B"] * 2, "cpu_left": 0, "tags": {}},
             {"free": [], "models": [], "cpu_left": 0, "tags": {}}]
    table, free, model, *_ = arrays(nodes)
    assert free.tolist() == [[1000, 300, 1000, 800], [1000, 1000, 0, 0], [0, 0, 0, 0]]
    # 250 milli of any model: node 0 (4 devices >= 250), node 1; node 2 has none.
    assert gpu_fit.gpu_fit_filter(xp, free, model, 1, 250, None).tolist() == [True, True, False]
    # ... restricted to model B: node 1 only.
    assert gpu_fit.gpu_fit_filter(xp, free, model, 1, 250, gpu_fit.allowed_ids(MODELS, ["B"])).tolist() == \
        [False, True, False]
    # a model nobody has: nowhere (not "any").
    assert gpu_fit.allowed_ids(MODELS, ["Z"]) == (gpu_fit.NO_MODEL,)
    assert not gpu_fit.gpu_fit_filter(xp, free, model, 1, 250, gpu_fit.allowed_ids(MODELS, ["Z"])).any()
    # 3 whole GPUs: node 0 has only 2 idle devices -> no; 2 whole GPUs: nodes 0 and 1.
    assert gpu_fit.gpu_fit_filter(xp, free, model, 3, 1000, None).tolist() == [False, False, False]
    assert gpu_fit.gpu_fit_filter(xp, free, model, 2, 1000, None).tolist() == [True, True, False]
    fits = gpu_fit.device_fits(xp, free, model, 250, None)
    # best fit for 250 milli: the 300-free device (index 1); worst fit: the first 1000-free device (index 0).
    assert np.flatnonzero(gpu_fit.select_devices(xp, free, fits, 1, "best")[0]).tolist() == [1]
    assert np.flatnonzero(gpu_fit.select_devices(xp, free, fits, 1, "worst")[0]).tolist() == [0]
    # 800 milli: devices 0, 2 (1000) and 3 (800) fit; tightest is 3.
    fits = gpu_fit.device_fits(xp, free, model, 800, None)
    assert np.flatnonzero(gpu_fit.select_devices(xp, free, fits, 1, "best")[0]).tolist() == [3]
    # two whole GPUs: the lowest-index idle devices 0 and 2.
    fits = gpu_fit.device_fits(xp, free, model, 1000, None)
    assert np.flatnonzero(gpu_fit.select_devices(xp, free, fits, 2, "best")[0]).tolist() == [0, 2]
    assert table.node_model().tolist() == [0, 1, -1]


# ------------------------------------------------------------------------------------------ score policies
@given(nodes_st(), pod_st())
def test_scores_match_reference(nodes, pod):
    _, free, model, cpu, count, tags = arrays(nodes)
    feasible = gpu_fit.gpu_fit_filter(xp, free, model, pod["count"], pod["milli"], allowed(pod)) & (cpu >= pod["cpu"])
    total = pod["count"] * pod["milli"]
    tag = {"share-gpu": 0, "1-gpu": 1, "2-gpu": 2}.get(ref.pod_tag(pod), 3) if pod["count"] else -1
    tags = np.concatenate([tags, np.zeros((len(nodes), 1), dtype=np.int64)], axis=1)
    got = {
        "bestfit": gpu_scores.bestfit(xp, cpu, free, pod["cpu"], total),
        "dotprod": gpu_scores.dotprod(xp, cpu, free, pod["cpu"], total),
        "gpupacking": gpu_scores.gpupacking(xp, free, count, pod["count"], pod["milli"]),
        "gpuclustering": gpu_scores.gpuclustering(xp, free, tags, tag),
    }
    for n, node in enumerate(nodes):
        if not feasible[n]:
            continue
        assert got["bestfit"][n] == ref.bestfit(node, pod)
        assert got["dotprod"][n] == ref.dotprod(node, pod)
        assert got["gpupacking"][n] == ref.gpupacking(node, pod)
        assert got["gpuclustering"][n] == ref.gpuclustering(node, pod)
    if feasible.any():
        idx = np.flatnonzero(feasible)
        norm = gpu_scores.min_max_normalize(xp, got["bestfit"], feasible)
        assert norm[idx].tolist() == ref.normalize([int(got["bestfit"][n]) for n in idx])
        assert (norm[~feasible] == 0).all()


@given(nodes_st(), st.floats(0, 0.999))
def test_random_score(nodes, u):
    _, free, *_ = arrays(nodes)
    feasible = np.asarray([len(n["free"]) > 0 for n in nodes])
    s = gpu_scores.random_score(xp, feasible, u)
    ok = np.flatnonzero(feasible)
    if len(ok):
        assert np.flatnonzero(s == 100).tolist() == [int(ok[int(u * len(ok))])]
        assert (s[s != 100] == 0).all()
    else:
        assert (s == 0).all()


def test_policy_toy_scores():
    # One node: 4 x A, free [1000, 300, 1000, 800], 32 cores left; the pod: 4 cores, 250 milli of one GPU.
    node = {"free": [1000, 300, 1000, 800], "models": ["A"] * 4, "cpu_left": 32000,
            "tags": {"share-gpu": 1, "1-gpu": 0, "2-gpu": 0}}
    _, free, _, cpu, count, tags = arrays([node])
    # BestFit: (32000 - 4000) / 128000 * 0.5 = 0.109375; (3100 - 250) / 8000 * 0.5 = 0.178125; sum 0.2875;
    # (1 - 0.2875) * 100 = 71.25 -> 71.
    assert gpu_scores.bestfit(xp, cpu, free, 4000, 250).tolist() == [71]
    # DotProd: 32000/128000 * 4000/128000 + 3100/8000 * 250/8000 = 0.0078125 + 0.012109375 = 0.019921875;
    # 1 - 0.019921875 / 2 = 0.9900390625 -> int(99.00390625) = 99.
    assert gpu_scores.dotprod(xp, cpu, free, 4000, 250).tolist() == [99]
    # GpuPacking: the node is in use (2 of 4 fully free); 250 milli goes to the tightest device (300 free, not a
    # fully free one) -> case 1: 300 * 100 / 1000 = 30; 100 - 30 / 10 = 97.
    assert gpu_scores.gpupacking(xp, free, count, 1, 250).tolist() == [97]
    # two whole GPUs need the 2 fully free ones -> case 2: 50 - 2 = 48.
    assert gpu_scores.gpupacking(xp, free, count, 2, 1000).tolist() == [48]
    # GpuClustering: 25 * (8000 - 3100) / 8000 = 15 (integer); the node's only tag is share-gpu -> + 75 = 90;
    # a 1-GPU pod (tag 1-gpu absent, node has another tag) -> 15 + 0.
    assert gpu_scores.gpuclustering(xp, free, tags, 0).tolist() == [90]
    assert gpu_scores.gpuclustering(xp, free, tags, 1).tolist() == [15]
    # An idle 8-GPU node: GpuPacking case 3: max(33 - 8, 8) = 25; GpuClustering: 25 * 0 / 8000 + 25 = 25.
    idle = {"free": [1000] * 8, "models": ["A"] * 8, "cpu_left": 0, "tags": {"share-gpu": 0, "1-gpu": 0, "2-gpu": 0}}
    _, free, _, _, count, tags = arrays([idle])
    assert gpu_scores.gpupacking(xp, free, count, 1, 500).tolist() == [25]
    assert gpu_scores.gpuclustering(xp, free, tags, 0).tolist() == [25]
    # NormalizeScore: 71, 50, 60 -> (71-50)*100/21 = 100, 0, (60-50)*100/21 = 47.
    assert gpu_scores.min_max_normalize(xp, np.asarray([71, 50, 60]), np.ones(3, bool)).tolist() == [100, 0, 47]


# ------------------------------------------------------------------------------------------------------ FGD
def _fgd_inputs(nodes, kernel_typ):
    table, free, model, cpu, _, _ = arrays(nodes)
    names = [n["models"][0] if n["models"] else "" for n in nodes]
    access = fgd.access_matrix(xp, names, kernel_typ)
    return free, model, cpu, access


@given(nodes_st(), typical_st())
def test_fgd_node_frag_matches_reference_bit_for_bit(nodes, typ):
    ref_typ, kernel_typ = typ
    free, _, cpu, access = _fgd_inputs(nodes, kernel_typ)
    got = fgd.node_frag(xp, free, cpu, access, kernel_typ)
    assert got.tolist() == [ref.node_frag(n, ref_typ) for n in nodes]


@given(nodes_st(), pod_st(), typical_st())
def test_fgd_score_and_device_match_reference(nodes, pod, typ):
    ref_typ, kernel_typ = typ
    free, model, cpu, access = _fgd_inputs(nodes, kernel_typ)
    before = fgd.node_frag(xp, free, cpu, access, kernel_typ)
    cand = gpu_fit.device_fits(xp, free, model, pod["milli"], allowed(pod))
    score, device, f_new = fgd.fgd_score(xp, free, cpu, access, before, cand, kernel_typ, pod["cpu"], pod["count"],
                                         pod["milli"])
    share = pod["count"] == 1 and pod["milli"] < 1000
    if share:
        k_node, k_dev = np.nonzero(fgd.first_of_value(xp, free, cand))
        s2, f2 = fgd.fgd_share_pairs(xp, *[c[k_node] for c in fgd.node_counts(xp, free, kernel_typ)],
                                     cpu[k_node], access[k_node], before[k_node], free[k_node, k_dev], kernel_typ,
                                     pod["cpu"], pod["milli"])
        pick, best = fgd.best_pair(xp, s2, k_node, k_dev, len(nodes))
    for n, node in enumerate(nodes):
        if not ref.fits(node, pod) or node["cpu_left"] < pod["cpu"]:
            continue
        want_score, want_dev = ref.fgd(node, pod, ref_typ)
        assert (int(score[n]), int(device[n])) == (want_score, want_dev)
        # F after the placement = F of the node as the replay commits it
        after = dict(node, free=list(node["free"]), cpu_left=node["cpu_left"] - pod["cpu"])
        devs = [want_dev] if share else ref.pick_devices(node, pod, "best")
        for d in devs:
            after["free"][d] -= pod["milli"]
        assert float(f_new[n]) == ref.node_frag(after, ref_typ)
        if share:
            assert int(best[n]) == want_score and int(k_dev[pick[n]]) == want_dev and float(f2[pick[n]]) == f_new[n]


@given(nodes_st(), pod_st(), typical_st())
def test_fgd_one_node_matches_arrays_bit_for_bit(nodes, pod, typ):
    """The plain-Python one-node functions (kept-shape updates of one node) give the array functions' counts, F,
    score, device and F after exactly, node by node."""
    _, kernel_typ = typ
    free, model, cpu, access = _fgd_inputs(nodes, kernel_typ)
    counts = fgd.node_counts(xp, free, kernel_typ)
    before = fgd.frag_from_counts(xp, *counts, cpu, access, kernel_typ)
    cand = gpu_fit.device_fits(xp, free, model, pod["milli"], allowed(pod))
    share = pod["count"] == 1 and pod["milli"] < 1000
    if share:
        want = fgd.share_score(xp, free, cand, counts, cpu, access, before, kernel_typ, pod["cpu"], pod["milli"])
    else:
        want = fgd.fgd_score(xp, free, cpu, access, before, cand, kernel_typ, pod["cpu"], pod["count"], pod["milli"])
    for n in range(len(nodes)):
        one = (counts[0][n].tolist(), counts[1][n].tolist(), int(counts[2][n]))
        assert fgd.node_counts_one(free[n].tolist(), kernel_typ) == one
        terms = fgd.node_terms(kernel_typ, tuple(access[n].tolist()))
        f_before = fgd.frag_one(*one, int(cpu[n]), terms)
        assert f_before == float(before[n])
        got = fgd.fgd_score_one(free[n].tolist(), cand[n].tolist(), one, int(cpu[n]), terms, f_before, pod["cpu"],
                                pod["count"], pod["milli"])
        assert got == (int(want[0][n]), int(want[1][n]), float(want[2][n]))
        assert all(type(v) is t for v, t in zip(got, (int, int, float)))
        if share and got[1] >= 0:
            after = fgd.share_counts_after(xp, *(c[n:n + 1] for c in counts), free[n, [got[1]]], kernel_typ,
                                           pod["milli"])
            assert fgd.share_counts_after_one(*one, int(free[n, got[1]]), kernel_typ, pod["milli"]) == \
                (after[0][0].tolist(), after[1][0].tolist(), int(after[2][0]))


def test_fgd_fragmentation_hand_worked():
    # Typical pods (cpu, milli, count, models), frequencies:
    #   a: 8 cores, 500 milli x 1 GPU    freq 0.5
    #   b: 16 cores, 1000 milli x 2 GPUs freq 0.25
    #   c: 4 cores, CPU only             freq 0.25
    typ = fgd.TypicalPods(cpu=(8000, 16000, 4000), milli=(500, 1000, 0), count=(1, 2, 0), spec=("", "", ""),
                          freq=(0.5, 0.25, 0.25))
    # Node X: 4 GPUs free [1000, 1000, 300, 0] (2300 idle milli), 32 cores left.
    #   a: 2 devices have >= 500 and 32 >= 8 cores -> Q3: fragment = devices below 500 = 300 + 0 = 300 -> 0.5 * 300
    #      = 150 under Q2.
    #   b: 2 devices with 1000 free, 32 >= 16 cores -> Q3: fragment = 300 + 0 -> 0.25 * 300 = 75 under Q2.
    #   c: CPU only, fits -> XL: all idle milli counts: 0.25 * 2300 = 575.
    #   F = Q1 0 + Q2 (150 + 75) + Q4 0 + XL 575 + XR 0 + NA 0 = 800.
    # Node Y: 2 GPUs free [400, 1000] (1400 idle), 10 cores left.
    #   a: one device >= 500, 10 >= 8 cores -> Q3: fragment 400 -> 0.5 * 400 = 200 under Q2.
    #   b: only one device with 1000 -> GPUs short, 10 < 16 cores -> Q1: 0.25 * 1400 = 350.
    #   c: fits -> XL: 0.25 * 1400 = 350.
    #   F = 350 + 200 + 0 + 350 = 900.
    # Node Z: model-restricted typical pod cannot use it -> NA; see below.
    free = np.asarray([[1000, 1000, 300, 0], [400, 1000, 0, 0]], dtype=np.int64)
    cpu = np.asarray([32000, 10000], dtype=np.int64)
    access = fgd.access_matrix(xp, ["A", "A"], typ)
    assert fgd.node_frag(xp, free, cpu, access, typ).tolist() == [800.0, 900.0]
    # The same node X with only 6 cores left: a -> Q4 (GPU fits, CPU short): 0.5 * 2300 = 1150; b -> Q4:
    # 0.25 * 2300 = 575; c -> XL (6 >= 4): 575. F = 1150 + 575 + 575 = 2300 (all idle GPU is fragment).
    assert fgd.node_frag(xp, free[:1], np.asarray([6000]), access[:1], typ).tolist() == [2300.0]
    # With typical pod a restricted to model B, node X (model A): a -> NA: 0.5 * 2300 = 1150; b -> Q3: 75 (Q2);
    # c -> XL: 575. F = 75 + 575 + 1150 = 1800.
    typ_b = fgd.TypicalPods(cpu=typ.cpu, milli=typ.milli, count=typ.count, spec=("B", "", ""), freq=typ.freq)
    access_b = fgd.access_matrix(xp, ["A"], typ_b)
    assert access_b.tolist() == [[False, True, True]]
    assert fgd.node_frag(xp, free[:1], cpu[:1], access_b, typ_b).tolist() == [1800.0]
    # FGD score of a 500-milli, 8-core pod on node X:
    #   on device 0 or 1 (1000 -> 500): 3 devices keep >= 500 (500, 1000 ... ) a: fragment 300 + 0 = 300 -> 150;
    #     b: only one device with 1000 left, 24 >= 16 cores -> Q2: 0.25 * 1800 = 450; c: XL 0.25 * 1800 = 450.
    #     F' = 150 + 450 + 450 = 1050; score = int(100 * sigmoid((800 - 1050) / 1000)) = int(43.78...) = 43.
    #   on device 2 (300 < 500): not a candidate; device 3 (0): not a candidate.
    #   Devices 0 and 1 tie at 43: the first (0) wins.
    cand = gpu_fit.device_fits(xp, free[:1], np.zeros((1, 4), dtype=np.int64), 500, None)
    before = np.asarray([800.0])
    score, device, f_new = fgd.fgd_score(xp, free[:1], cpu[:1], access[:1], before, cand, typ, 8000, 1, 500)
    assert (score.tolist(), device.tolist(), f_new.tolist()) == ([43], [0], [1050.0])
    # Two whole GPUs (16 cores) on node X take devices 0 and 1: idle 300; a: no device >= 500, 16 >= 8 -> Q2:
    # 0.5 * 300 = 150; b: Q2: 0.25 * 300 = 75; c: XL 75. F' = 150 + 75 + 75 = 300;
    # score = int(100 * sigmoid(0.5)) = int(62.24...) = 62.
    cand = gpu_fit.device_fits(xp, free[:1], np.zeros((1, 4), dtype=np.int64), 1000, None)
    score, device, f_new = fgd.fgd_score(xp, free[:1], cpu[:1], access[:1], before, cand, typ, 16000, 2, 1000)
    assert (score.tolist(), device.tolist(), f_new.tolist()) == ([62], [-1], [300.0])


def test_typical_pods_by_hand():
    # 20 pods: 10 x (1 core, 500 milli), 6 x (2 cores, whole GPU), 3 x (4 cores, CPU only), 1 x (8 cores, 2 GPUs).
    # Sorted by count: 10, 6, 3, 1; 95% of 20 = 19 pods: the first three shapes cover 19 -> stop.
    # Frequencies renormalised over 19: 10/20 / (19/20), 6/20 / (19/20), 3/20 / (19/20).
    rows = [(1000, 1, 500)] * 10 + [(2000, 1, 1000)] * 6 + [(4000, 0, 0)] * 3 + [(8000, 2, 1000)]
    pods = TracePods(names=tuple(f"p{i:02d}" for i in range(20)),
                     cpu_milli=np.asarray([r[0] for r in rows]), memory=np.zeros(20, dtype=np.int64),
                     num_gpu=np.asarray([r[1] for r in rows]), gpu_milli=np.asarray([r[2] for r in rows]),
                     gpu_spec=("",) * 20)
    typ = typical_pods(pods)
    assert typ.cpu == (1000, 2000, 4000) and typ.milli == (500, 1000, 0) and typ.count == (1, 1, 0)
    assert typ.freq == (0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95)


# ------------------------------------------------------------------------- whole replay against the reference
@st.composite
def small_trace(draw):
    n = draw(st.integers(1, 6))
    nodes = []
    for k in range(n):
        d = draw(st.sampled_from([1, 2, 4, 8]))
        nodes.append({"name": f"n{draw(st.integers(0, 99)):02d}-{k}", "cpu": draw(st.integers(1, 8)) * 8000,
                      "mem": draw(st.integers(1, 8)) * 1000, "models": [draw(st.sampled_from(MODELS))] * d})
    pods = []
    for _ in range(draw(st.integers(1, 30))):
        p = draw(pod_st())
        p["cpu"] = draw(st.integers(0, 8)) * 2000
        p["mem"] = draw(st.integers(0, 4)) * 500
        pods.append(p)
    order = draw(st.lists(st.integers(0, len(pods) - 1), min_size=1, max_size=40))
    return nodes, pods, order


def _trace_tables(nodes, pods) -> tuple[TraceNodes, TracePods]:
    """A small_trace's nodes and pods as the replay's tables."""
    table = GpuTable.build([[(f"g{i}", m, 0) for i, m in enumerate(n["models"])] for n in nodes], MODELS)
    tn = TraceNodes(names=tuple(n["name"] for n in nodes), cpu_milli=np.asarray([n["cpu"] for n in nodes]),
                    memory=np.asarray([n["mem"] for n in nodes]), gpus=table)
    tp = TracePods(names=tuple(f"p{i}" for i in range(len(pods))), cpu_milli=np.asarray([p["cpu"] for p in pods]),
                   memory=np.asarray([p["mem"] for p in pods]), num_gpu=np.asarray([p["count"] for p in pods]),
                   gpu_milli=np.asarray([p["milli"] for p in pods]),
                   gpu_spec=tuple("|".join(p["models"]) for p in pods))
    return tn, tp


@given(small_trace(), st.sampled_from(["bestfit", "dotprod", "gpupacking", "gpuclustering", "fgd"]))
def test_replay_matches_reference_replay(trace, policy):
    nodes, pods, order = trace
    tn, tp = _trace_tables(nodes, pods)
    typ = typical_pods(tp)
    ref_typ = list(zip(zip(typ.cpu, typ.milli, typ.count, typ.spec), typ.freq))
    ref_pods = [dict(p, models=[m for m in p["models"] if m]) for p in pods]
    want = ref.replay(nodes, ref_pods, order, policy, ref_typ)
    got = replay_order(tn, tp, np.asarray(order, dtype=np.int64), policy, np.random.default_rng(0), typ=typ)
    names = [tn.names[n] if n >= 0 else None for n in got.node_of]
    assert list(zip(names, [list(d) for d in got.devices_of])) == want
    # GPU table after the replay: used milli per device = what the placements took
    used = {}
    for (name, devs), i in zip(want, order):
        for d in devs:
            used[(name, d)] = used.get((name, d), 0) + pods[i]["milli"]
    g = got.gpus
    for j in range(g.size):
        assert int(g.milli_used[j]) == used.get((tn.names[g.node[j]], int(g.index[j])), 0)


@given(small_trace(), st.sampled_from([(0, 2), (8, 10**9)]))
def test_fgd_replay_on_alike_nodes_whatever_the_path(trace, limits):
    """FGDScore scored once per distinct node (views from 2 nodes on) or node by node in plain Python (views of up
    to 8 nodes) places as the reference replay does, on a cluster where every node has a twin."""
    from unittest import mock

    from phalanx.plugins import fgd_score
    nodes, pods, order = trace
    nodes = nodes + [dict(n, name=f"{n['name']}-twin") for n in nodes]
    tn, tp = _trace_tables(nodes, pods)
    typ = typical_pods(tp)
    ref_typ = list(zip(zip(typ.cpu, typ.milli, typ.count, typ.spec), typ.freq))
    want = ref.replay(nodes, [dict(p, models=[m for m in p["models"] if m]) for p in pods], order, "fgd", ref_typ)
    few, distinct = limits
    with mock.patch.object(fgd_score, "_ROWS_IN_PYTHON", few), mock.patch.object(fgd_score, "_DISTINCT_FROM", distinct):
        got = replay_order(tn, tp, np.asarray(order, dtype=np.int64), "fgd", np.random.default_rng(0), typ=typ)
    names = [tn.names[n] if n >= 0 else None for n in got.node_of]
    assert list(zip(names, [list(d) for d in got.devices_of])) == want


def test_distinct_nodes_groups_equal_rows():
    free = np.asarray([[1000, 500], [1000, 500], [500, 1000], [1000, 500], [0, 0]], np.int64)
    model = np.asarray([[0, 0], [0, 0], [0, 0], [0, 0], [-1, -1]], np.int64)
    cpu = np.asarray([8000, 8000, 8000, 4000, 8000], np.int64)
    first, inverse = fgd.distinct_nodes(free, model, cpu)
    # nodes 0 and 1 alike; 2 (device order), 3 (CPU) and 4 differ
    assert len(first) == 4 and inverse[0] == inverse[1] and len(set(inverse[1:].tolist())) == 4
    assert (free[first][inverse] == free).all() and (cpu[first][inverse] == cpu).all()
    assert fgd.distinct_nodes(free[1:], model[1:], cpu[1:]) is None        # all distinct: no grouping


# ------------------------------------------------------------- FGDScore's carried rows (GpuBook.carry)
def _fresh_fgd_rows(book) -> int:
    """Assert every FGDScore node-state row the book keeps as current equals the node's values computed afresh
    (counts of its devices, F at its CPU left); returns how many keys were checked."""
    t = book.owner.tensors
    checked = 0
    for key, (table, values, computed, _) in book._values.items():
        if not isinstance(key[1], fgd.TypicalPods) or table is not t:
            continue
        stale = t.change_stamps() >= computed
        typ = key[1]
        free, _, _ = book.devices()
        cpu = t.resources.get("cpu")
        cpu_left = t.nodes.allocatable[:, cpu] - t.nodes.requested[:, cpu]
        counts = fgd.node_counts(xp, free, typ)
        want = (*counts, fgd.frag_from_counts(xp, *counts, cpu_left, fgd.access_matrix(xp, book.node_models(), typ),
                                              typ))
        for got, w in zip(values, want):
            assert got[~stale].tolist() == w[~stale].tolist()
        checked += 1
    return checked


def _replay_checking_carries(monkeypatch, trace) -> int:
    """The FGD replay of `trace` with every carried row checked against the nodes afresh; returns the carries."""
    from phalanx.sched.gpushare import GpuBook
    carried = []
    take = GpuBook._take_carried

    def checked(book, *args):
        computed = {k: v[2].copy() for k, v in book._values.items()}
        take(book, *args)
        if any(k not in computed or (v[2] != computed[k]).any() for k, v in book._values.items()):
            carried.append(_fresh_fgd_rows(book))

    monkeypatch.setattr(GpuBook, "_take_carried", checked)
    nodes, pods, order = trace
    tn, tp = _trace_tables(nodes, pods)
    replay_order(tn, tp, np.asarray(order, dtype=np.int64), "fgd", np.random.default_rng(0))
    assert all(carried)            # each carry wrote the FGD state key, which was then checked
    return len(carried)


@given(small_trace())
def test_fgd_carried_rows_equal_rows_computed_afresh(trace):
    import pytest
    with pytest.MonkeyPatch.context() as monkeypatch:
        _replay_checking_carries(monkeypatch, trace)


def test_fgd_carries_shares_and_whole_gpus(monkeypatch):
    nodes = [{"name": "a", "cpu": 32000, "mem": 8000, "models": ["A"] * 4},
             {"name": "b", "cpu": 16000, "mem": 8000, "models": ["B"] * 2}]
    pods = [{"cpu": 2000, "mem": 100, "count": 1, "milli": 300, "models": []},
            {"cpu": 4000, "mem": 100, "count": 2, "milli": 1000, "models": []},
            {"cpu": 2000, "mem": 100, "count": 1, "milli": 500, "models": ["B"]},
            {"cpu": 0, "mem": 100, "count": 1, "milli": 200, "models": []},      # 100m counted, 0 requested
            {"cpu": 1000, "mem": 100, "count": 0, "milli": 0, "models": []}]
    order = [0, 1, 2, 0, 3, 4, 0, 2, 1, 0]
    # every share and whole-GPU pod placed with a CPU request carries: 8 of them less the second 2-GPU pod, which
    # finds no 2 idle devices (the 0-CPU share and the CPU-only pod carry nothing)
    assert _replay_checking_carries(monkeypatch, (nodes, pods, order)) == 7
