"""The kernels that came with GPU devices, DRA and topology placement give bit-identical results on numpy and on
JAX (jit, every array a jit argument, static configuration closed over) and, with a CUDA GPU, CuPy.

Inputs come from the same strategies as the kernels' own reference tests (tests/test_gpus.py) or are plain random
arrays of the shapes the callers pass (sched/topology.py, sched/claims.py, plugins/fgd_score.py).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_backend_parity import BACKENDS, FEW, run, same
from test_gpus import allowed, arrays, nodes_st, pod_st, typical_st

from phalanx.kernels import dynamic_resources, fgd, gpu_fit, gpu_scores, topology_placement

TAGS = ("share-gpu", "1-gpu", "2-gpu")


def both(backend, fn, arrays_in, static=None):
    """The kernel on numpy and on `backend`, compared bit for bit."""
    same(run("numpy", fn, arrays_in, static), run(backend, fn, arrays_in, static))


@pytest.mark.parametrize("backend", BACKENDS)
@FEW
@given(nodes=nodes_st(), pod=pod_st(), order=st.sampled_from(["best", "worst"]), u=st.floats(0, 0.999))
def test_gpu_fit_and_selection(backend, nodes, pod, order, u):
    _, free, model, _, _, _ = arrays(nodes)
    static = {"milli": pod["milli"], "allowed": allowed(pod)}
    both(backend, gpu_fit.device_fits, {"free": free, "dev_model": model}, static)
    both(backend, gpu_fit.gpu_fit_filter, {"free": free, "dev_model": model}, dict(static, count=pod["count"]))
    fits = gpu_fit.device_fits(np, free, model, pod["milli"], allowed(pod))
    both(backend, gpu_fit.select_devices, {"free": free, "fits": fits}, {"count": pod["count"], "order": order})
    both(backend, gpu_fit.random_device, {"fits": fits, "u": np.full(len(nodes), u)})


@pytest.mark.parametrize("backend", BACKENDS)
@FEW
@given(nodes=nodes_st(), pod=pod_st(), u=st.floats(0, 0.999))
def test_gpu_score_policies(backend, nodes, pod, u):
    _, free, model, cpu, count, tags = arrays(nodes)
    tags = np.concatenate([tags, np.zeros((len(nodes), 1), dtype=np.int64)], axis=1)
    total = pod["count"] * pod["milli"]
    tag = {0: -1, 1: 1 if pod["milli"] == 1000 else 0, 2: 2}.get(pod["count"], 3)
    feasible = gpu_fit.gpu_fit_filter(np, free, model, pod["count"], pod["milli"], allowed(pod)) & (cpu >= pod["cpu"])
    both(backend, gpu_scores.bestfit, {"cpu_left": cpu, "free": free}, {"cpu_req": pod["cpu"], "gpu_req_total": total})
    both(backend, gpu_scores.dotprod, {"cpu_left": cpu, "free": free}, {"cpu_req": pod["cpu"], "gpu_req_total": total})
    both(backend, gpu_scores.gpupacking, {"free": free, "gpu_count": count},
         {"count": pod["count"], "milli": pod["milli"]})
    both(backend, gpu_scores.gpuclustering, {"free": free, "tag_count": tags}, {"tag": tag})
    scores = gpu_scores.bestfit(np, cpu, free, pod["cpu"], total)
    both(backend, gpu_scores.min_max_normalize, {"scores": scores, "feasible": feasible})
    both(backend, gpu_scores.random_score, {"feasible": feasible, "u": np.float64(u)})


@pytest.mark.parametrize("backend", BACKENDS)
@FEW
@given(nodes=nodes_st(), pod=pod_st(), typical=typical_st())
def test_fgd(backend, nodes, pod, typical):
    """F per node (float64, compared by its bits) and the FGD score / device / F after for the pod."""
    _, typ = typical
    _, free, model, cpu, _, _ = arrays(nodes)
    names = [n["models"][0] if n["models"] else "" for n in nodes]
    access = fgd.access_matrix(np, names, typ)
    both(backend, fgd.node_frag, {"free": free, "cpu_left": cpu, "access": access}, {"typ": typ})
    f_before = fgd.node_frag(np, free, cpu, access, typ)
    cand = gpu_fit.device_fits(np, free, model, pod["milli"], allowed(pod))
    both(backend, fgd.fgd_score, {"free": free, "cpu_left": cpu, "access": access, "f_before": f_before,
                                  "cand": cand},
         {"typ": typ, "cpu_req": pod["cpu"], "count": pod["count"], "milli": pod["milli"]})


@pytest.mark.parametrize("backend", BACKENDS)
@FEW
@given(data=st.data())
def test_topology_placement(backend, data):
    """Domains of a label column, per-domain sums (nodes with allocatable 0 left out) and both placement scores."""
    n = data.draw(st.integers(1, 12))
    d = data.draw(st.integers(1, 4))
    ints = st.integers(0, 10**12)
    labels = np.array([[data.draw(st.integers(-1, d - 1)) for _ in range(2)] for _ in range(n)], np.int32)
    both(backend, topology_placement.domains, {"labels": labels}, {"key": data.draw(st.integers(-1, 2))})
    domain = labels[:, 0].astype(np.int64)
    alloc = [np.array([data.draw(st.sampled_from([0, 4000, 64000])) for _ in range(n)], np.int64) for _ in range(2)]
    load = [np.array([data.draw(ints) % 70000 for _ in range(n)], np.int64) for _ in range(2)]
    both(backend, topology_placement.placement_allocation, {"alloc": alloc, "load": load, "domain": domain},
         {"n_domains": d})
    domain_alloc, domain_load = topology_placement.placement_allocation(np, alloc, load, domain, d)
    group = [np.array([data.draw(st.integers(0, 50000)) for _ in range(d)], np.int64) for _ in range(2)]
    weights = tuple(data.draw(st.integers(1, 3)) for _ in range(2))
    both(backend, topology_placement.placement_fit_score,
         {"group_request": group, "domain_alloc": domain_alloc, "domain_load": domain_load}, {"weights": weights})
    pods = np.array([data.draw(st.integers(1, 64)) for _ in range(d)], np.int64)
    both(backend, topology_placement.pods_count_score, {"pods": pods})


@pytest.mark.parametrize("backend", BACKENDS)
@FEW
@given(data=st.data())
def test_dynamic_resources_filter(backend, data):
    """Random device tables: nodes with up to 4 device slots, 1-3 requests (ExactCount or All), pinned claims."""
    n = data.draw(st.integers(1, 6))
    s = 4
    ids, slots = 0, np.full((n, s), -1, np.int64)
    for i in range(n):
        for j in range(data.draw(st.integers(0, s))):
            slots[i, j] = ids
            ids += 1
    devices = max(ids, 1)
    allocated = np.array([data.draw(st.booleans()) for _ in range(devices)])
    q = data.draw(st.integers(1, 3))
    matches = np.array([[data.draw(st.booleans()) for _ in range(devices)] for _ in range(q)])
    counts = np.array([data.draw(st.integers(1, 3)) for _ in range(q)], np.int64)
    all_mode = np.array([data.draw(st.booleans()) for _ in range(q)])
    pinned = np.array([data.draw(st.integers(-1, n - 1)) for _ in range(data.draw(st.integers(0, 2)))], np.int64)
    both(backend, dynamic_resources.dynamic_resources_filter,
         {"slots": slots, "allocated": allocated, "matches": matches, "counts": counts, "all_mode": all_mode,
          "pinned": pinned})


def _fractional(pod):
    """The pod as one fractional GPU (count 1, milli < 1000): the path fgd.share_score takes (FGDScore)."""
    return dict(pod, count=1, milli=pod["milli"] % 1000 or 500)


@pytest.mark.parametrize("backend", BACKENDS)
@FEW
@given(nodes=nodes_st(), pod=pod_st().map(_fractional), typical=typical_st())
def test_fgd_fractional_pairs(backend, nodes, pod, typical):
    """The fractional-pod FGD path as FGDScore runs it (fgd.share_score): the counts it keeps (node_counts, frag_from_counts),
    first_of_value, fgd_share_pairs on the (node, device) pairs (picked on the host with np.nonzero, as the caller
    does; the kernels themselves are jit-compiled on them), best_pair, and fgd_score given the kept counts."""
    _, typ = typical
    _, free, model, cpu, _, _ = arrays(nodes)
    access = fgd.access_matrix(np, [n["models"][0] if n["models"] else "" for n in nodes], typ)
    both(backend, fgd.node_counts, {"free": free}, {"typ": typ})
    cnt, frag, total = fgd.node_counts(np, free, typ)
    both(backend, fgd.frag_from_counts, {"cnt": cnt, "frag": frag, "total": total, "cpu_left": cpu, "access": access},
         {"typ": typ})
    f_before = fgd.frag_from_counts(np, cnt, frag, total, cpu, access, typ)
    cand = gpu_fit.device_fits(np, free, model, pod["milli"], allowed(pod))
    both(backend, fgd.first_of_value, {"free": free, "cand": cand})
    k_node, k_dev = np.nonzero(fgd.first_of_value(np, free, cand))
    pairs = {"cnt": cnt[k_node], "frag": frag[k_node], "total": total[k_node], "cpu_left": cpu[k_node],
             "access": access[k_node], "f_before": f_before[k_node], "value": free[k_node, k_dev]}
    shape = {"typ": typ, "cpu_req": pod["cpu"], "milli": pod["milli"]}
    both(backend, fgd.fgd_share_pairs, pairs, shape)
    score, _ = fgd.fgd_share_pairs(np, **pairs, **shape)
    both(backend, fgd.best_pair, {"score": score, "node": k_node, "device": k_dev}, {"n": len(nodes)})
    both(backend, fgd.fgd_score, {"free": free, "cpu_left": cpu, "access": access, "f_before": f_before, "cand": cand,
                                  "counts": (cnt, frag, total)},
         dict(shape, count=1))


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=25)
@given(data=st.data())
def test_best_pair_ties(backend, data):
    """best_pair on 12 pairs over 5 nodes (fixed shapes: one compile), pairs grouped by node in any order inside,
    scores from three values (many ties: the lowest device index wins), some nodes without pairs."""
    node = np.sort(np.array(data.draw(st.lists(st.integers(0, 4), min_size=12, max_size=12)), np.int64))
    device = np.array(data.draw(st.permutations(range(12))), np.int64)
    score = np.array(data.draw(st.lists(st.integers(0, 2), min_size=12, max_size=12)), np.int64)
    both(backend, fgd.best_pair, {"score": score, "node": node, "device": device}, {"n": 5})
