"""Every kernel gives bit-identical results on numpy and on the other backends here: JAX (jit, int64/float64 under
the scoped x64 setting; on the GPU when jax has one) whenever jax is installed, CuPy only with a CUDA GPU, and
always the strict CPU stand-in for CuPy (tests/strict_device.py: what CuPy refuses or would synchronise on fails).

Inputs are random: realistic static configuration from random clusters (tests/strategies.py, prepared by
phalanx.sched.cycle.prepare) and plain random arrays for the numeric kernels. Every array input is a jit
argument (never a constant XLA could fold at compile time); static configuration is closed over.
"""
from __future__ import annotations

import contextlib
import importlib.util

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strict_device import strict_namespace
from strict_device import to_host as strict_to_host

from phalanx.cluster_models import ClusterObjects
from phalanx.cluster_models.tensors import BoundPods
from phalanx.kernels import balanced_allocation, batch, node_resources_fit, pod_topology_spread, select
from phalanx.kernels.backend import gpu_available, precision, to_host
from phalanx.kernels.resource_allocation import node_load
from phalanx.plugins.framework import NODE_LOCAL
from phalanx.sched import Cluster
from phalanx.sched.cupy_placer import prepared_on_device
from phalanx.sched.cycle import Prepared, prepare
from phalanx.sched.device_program import NodeArrays, TensorsView
from phalanx.sched.framework import Framework
from phalanx.sched.shapes import ShapeTable
from strategies import clusters, profiles

HAVE_JAX = importlib.util.find_spec("jax") is not None
BACKENDS = [
    "strict",       # tests/strict_device.py: CuPy's rules (no numpy arrays mixed in, no synchronisation) on the CPU
    pytest.param("jax", marks=pytest.mark.skipif(not HAVE_JAX, reason="jax is not installed")),
    pytest.param("cupy", marks=pytest.mark.skipif(not gpu_available("cupy"),
                                                  reason="cupy is not installed or no CUDA GPU is present")),
]
FEW = settings(max_examples=10)


def run(backend: str, fn, arrays: dict, static: dict | None = None):
    """fn(xp, **arrays, **static) on `backend`, results as numpy (nested tuples/lists/dicts kept)."""
    static = static or {}
    if backend == "numpy":
        return fn(np, **arrays, **static)
    if backend == "jax":
        import jax
        import jax.numpy as jnp
        with precision(jnp):
            dev = jax.tree_util.tree_map(jnp.asarray, arrays)
            out = jax.jit(lambda **a: fn(jnp, **a, **static))(**dev)
            return jax.tree_util.tree_map(to_host, out)
    # CuPy and its stand-in: the prepared cycle's states on the device, as the CuPy placer copies them.
    if backend == "strict":
        xp = strict_namespace()
        guard, host = xp.no_sync, strict_to_host
    else:
        import cupy as xp
        guard, host = contextlib.nullcontext, to_host
    dev = {k: _tree(v, xp.asarray) for k, v in arrays.items()}
    static = {k: prepared_on_device(xp.asarray, v) if isinstance(v, Prepared) else v for k, v in static.items()}
    with guard():
        out = fn(xp, **dev, **static)
    return _tree(out, host)


def _tree(x, f):
    if isinstance(x, (list, tuple)):
        return type(x)(_tree(v, f) for v in x)
    if isinstance(x, dict):
        return {k: _tree(v, f) for k, v in x.items()}
    return f(x)


def same(a, b, path="out"):
    """Bit-for-bit equality, dtype included (floats compared by their bits)."""
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}[{i}]")
        return
    if isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            same(a[k], b[k], f"{path}[{k}]")
        return
    x, y = np.asarray(a), np.asarray(b)
    assert x.shape == y.shape, (path, x.shape, y.shape)
    if x.dtype.kind in "iub" and y.dtype.kind in "iub":
        # numpy promotes a Python int and an int8 array differently from JAX in a few places; compare values
        # and require both to be integers of a width holding them (every kernel output is int8/int64/bool).
        assert x.dtype == y.dtype or x.dtype.kind == y.dtype.kind, (path, x.dtype, y.dtype)
        assert np.array_equal(x.astype(np.int64), y.astype(np.int64)), (path, x, y)
    else:
        assert x.dtype == y.dtype == np.float64, (path, x.dtype, y.dtype)
        assert np.array_equal(x.view(np.int64), y.view(np.int64)), (path, x, y)


def check(backend, fn, arrays, static=None):
    want = run("numpy", fn, arrays, static)
    got = run(backend, fn, arrays, static)
    same(want, got, getattr(fn, "__name__", "fn"))
    return want


# -- every plugin over random clusters ------------------------------------------------------------------------

def _prepared(cluster, profile, limit=3):
    nodes, pods, classes = cluster
    bound = [p for p in pods if p.spec.node_name]
    pending = [p for p in pods if not p.spec.node_name]
    state = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=bound, priority_classes=classes, warnings=[]))
    framework = Framework(profile)
    table = ShapeTable(framework, state)
    return state, [prepare(table.intern(pod), state, framework) for pod in pending[:limit]]


_NODE_FIELDS = ("allocatable", "requested", "nonzero_requested", "pod_count", "allowed_pods", "unschedulable",
                "labels", "taints", "host_ports")


def _arrays(state):
    nodes = state.tensors.nodes
    bound = state.tensors.bound_pods()
    return {**{f: getattr(nodes, f) for f in _NODE_FIELDS}, "bound_node": bound.node,
            "bound_namespace": bound.namespace, "bound_labels": bound.labels, "bound_terminating": bound.terminating}


def _plugin_outputs(xp, feasible, *, p, node_labels, count, **a):
    """Every plugin that runs for the prepared pod: Filter codes and payloads, copy capacity, raw and normalized
    scores, the scores of further copies (batch path), on tensors made of the jit arguments."""
    nodes = NodeArrays(a["allocatable"].shape[0], *(a[f] for f in _NODE_FIELDS))
    tensors = TensorsView(nodes, node_labels, BoundPods(a["bound_node"], a["bound_namespace"], a["bound_labels"],
                                                        a["bound_terminating"], count))
    out = {}
    for plugin, state in p.filters:
        out[f"filter {plugin.name}"] = plugin.filter(xp, state, tensors)[:2]
        if plugin.filter_behaviour(state) == NODE_LOCAL:
            out[f"capacity {plugin.name}"] = plugin.copy_capacity(xp, state, tensors)
    for plugin, state, _ in p.scores:
        raw = plugin.score(xp, state, tensors, feasible)
        out[f"score {plugin.name}"] = (raw, plugin.normalize(xp, raw, feasible, state, tensors))
        if plugin.score_behaviour(state) == NODE_LOCAL:
            out[f"copies {plugin.name}"] = plugin.copy_scores(xp, state, tensors, xp.arange(nodes.size),
                                                                xp.arange(1, 5)[None, :])
    return out


@pytest.mark.parametrize("backend", BACKENDS)
@FEW
@given(cluster=clusters(), profile=profiles(), data=st.data())
def test_plugins(backend, cluster, profile, data):
    """Every plugin's Filter, Score and NormalizeScore, and its batch-path quantities, bit for bit."""
    state, prepared = _prepared(cluster, profile)
    n = state.tensors.nodes.size
    for p in prepared:
        feasible = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool)
        count = state.tensors.bound_pods().count
        check(backend, _plugin_outputs, {"feasible": feasible, **_arrays(state)},
              {"p": p, "node_labels": state.tensors.node_labels, "count": count})
        for plugin, state_, _ in p.scores:
            if plugin.name == "NodeResourcesBalancedAllocation":
                alloc, load = node_load(np, state.tensors.nodes.allocatable, state.tensors.nodes.requested,
                                        state.tensors.nodes.nonzero_requested, state_)
                check(backend, balanced_allocation.node_balance, {"load": load, "allocatable": alloc})


# -- numeric kernels over random arrays -----------------------------------------------------------------------

def _ints(lo, hi, size):
    return st.lists(st.integers(lo, hi), min_size=size, max_size=size).map(lambda v: np.array(v, np.int64))


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=25)
@given(data=st.data(), k=st.integers(2, 5), n=st.integers(1, 9),
       strategy=st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]),
       compat=st.sampled_from(["1.35", "1.36"]))
def test_resource_scores_many_resources(backend, data, k, n, strategy, compat):
    """The resource scores with 2..5 resources (BalancedAllocation's std-dev branch), zero allocatables,
    requests above capacity and large quantities (bytes)."""
    alloc = [data.draw(_ints(0, 1 << 40, n)) for _ in range(k)]
    before = [data.draw(_ints(0, 1 << 40, n)) for _ in range(k)]
    after = [b + data.draw(_ints(0, 1 << 38, n)) for b in before]
    weights = tuple(data.draw(st.integers(1, 5)) for _ in range(k))
    shape = ((0, 0), (30, 7), (100, 10))
    check(backend, node_resources_fit.fit_score, {"requested": after, "allocatable": alloc},
          {"strategy": strategy, "weights": weights, "shape": shape})
    check(backend, balanced_allocation.balanced_allocation_score,
          {"after": after, "allocatable": alloc, "before": before}, {"compat": compat})

    def std(xp, after, alloc):     # the float64 std-dev itself, before the score truncates it
        return balanced_allocation._std(xp, after, [xp.maximum(a, 1) for a in alloc], [a != 0 for a in alloc])

    check(backend, std, {"after": after, "alloc": alloc})


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=25)
@given(data=st.data(), n=st.integers(1, 40), skews=st.lists(st.integers(1, 6), min_size=1, max_size=3))
def test_spread_score_floats(backend, data, n, skews):
    """PodTopologySpread's float score with large counts: log(size + 2) from one table and cnt * weight rounded
    before max_skew - 1 is added (a fused multiply-add would differ in the last bit)."""
    keys = len(skews)
    labels = np.stack([data.draw(_ints(-1, 5, n)) for _ in range(keys)], axis=1).astype(np.int32)
    counts = [data.draw(_ints(0, 1 << 20, n)) for _ in range(keys)]
    feasible = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool)
    constraints = tuple(pod_topology_spread.Constraint(key=i, is_hostname=(i == 0), max_skew=s, min_domains=1,
                                                       selector=(), self_match=1, honor_affinity=True,
                                                       honor_taints=False) for i, s in enumerate(skews))

    def score(xp, labels, counts, feasible, ok):
        raw, ignored = pod_topology_spread.pod_topology_spread_score(xp, labels, [6] * keys, counts, constraints,
                                                                     feasible, ok, ok)
        floats = pod_topology_spread.float_score(xp, labels, [6] * keys, counts, constraints, feasible, ok, ok)
        return raw, ignored, pod_topology_spread.pod_topology_spread_normalize(xp, raw, feasible, ignored), floats

    check(backend, score, {"labels": labels, "counts": counts, "feasible": feasible, "ok": np.ones(n, bool)})


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=25)
@given(data=st.data(), n=st.integers(1, 30))
def test_select_and_sample(backend, data, n):
    total = data.draw(_ints(0, 500, n))
    feasible = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool)
    rank = np.array(data.draw(st.permutations(range(n))), np.int64)
    check(backend, select.select_best, {"total": total, "feasible": feasible, "rank": rank})
    # With the rank's inverse (the compiled programs'), a plain maximum's key names the same node.
    by_rank = np.argsort(rank)
    assert int(select.select_best(np, total, feasible, rank, by_rank)) == int(select.select_best(np, total, feasible,
                                                                                                 rank))
    check(backend, select.select_best, {"total": total, "feasible": feasible, "rank": rank, "by_rank": by_rank})
    start, wanted = data.draw(st.integers(0, n - 1)), data.draw(st.integers(1, n + 2))
    # Python-int start/wanted (static) and array start/wanted (what a jitted loop passes).
    check(backend, select.sample_feasible, {"feasible": feasible}, {"start": start, "wanted": wanted})
    pad = data.draw(st.integers(0, 5))
    padded = np.concatenate([feasible, np.zeros(pad, bool)])
    check(backend, select.sample_feasible, {"feasible": padded, "start": np.int64(start), "wanted": np.int64(wanted),
                                            "n": np.int64(n)})
    # The padded ring visits the same nodes as the unpadded one.
    sampled, visited = select.sample_feasible(np, feasible, start, wanted)
    psampled, pvisited = select.sample_feasible(np, padded, np.int64(start), np.int64(wanted), np.int64(n))
    assert psampled[:n].tolist() == sampled.tolist() and not psampled[n:].any() and int(pvisited) == int(visited)
    # A PreFilterResult's nodes: their own ring, entered at start modulo their count; as a plain walk over them.
    among = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool)
    check(backend, select.sample_feasible, {"feasible": feasible, "among": among}, {"start": start, "wanted": wanted})
    listed = np.flatnonzero(among).tolist()
    taken, visited = [], len(listed)
    for step in range(len(listed)):
        node = listed[(start + step) % len(listed)]
        if feasible[node] and len(taken) < wanted:
            taken.append(node)
            if len(taken) == wanted:
                visited = step + 1
    sampled, got_visited = select.sample_feasible(np, feasible, start, wanted, among=among)
    assert np.flatnonzero(sampled).tolist() == sorted(taken) and int(got_visited) == visited
    # Every node listed: the general form gives the usual cycle's answer.
    everyone, every_visited = select.sample_feasible(np, feasible, start, wanted, among=np.ones(n, bool))
    usual, usual_visited = select.sample_feasible(np, feasible, start, wanted)
    assert everyone.tolist() == usual.tolist() and int(every_visited) == int(usual_visited)


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=25)
@given(data=st.data(), c=st.integers(1, 8), j=st.integers(1, 5), k=st.integers(1, 30))
def test_batch_kernels(backend, data, c, j, k):
    """pick_order (its first `count` picks), contenders, fill_times, normalization_epoch_end."""
    totals = np.stack([data.draw(_ints(0, 300, j)) for _ in range(c)])
    cap = data.draw(_ints(0, j + 1, c))
    rank = np.array(data.draw(st.permutations(range(c))), np.int64)
    holders = [np.array(data.draw(st.lists(st.booleans(), min_size=c, max_size=c)), bool) for _ in range(2)]

    def flow(xp, totals, cap, rank, holders):
        cand, copy, count = batch.pick_order(xp, totals, cap, rank, k)
        fill = batch.fill_times(xp, cand, copy, cap, c, count)
        return cand, copy, count, fill, batch.normalization_epoch_end(xp, fill, holders)

    want = run("numpy", flow, {"totals": totals, "cap": cap, "rank": rank, "holders": holders})
    got = run(backend, flow, {"totals": totals, "cap": cap, "rank": rank, "holders": holders})
    count = int(want[2])
    assert count == min(k, int(np.minimum(cap, j).sum()))
    same(want[0][:count], got[0][:count], "cand")
    same(want[1][:count], got[1][:count], "copy")
    same(want[2:], got[2:], "count, fill_times, epoch_end")
    first = totals[:, 0]
    check(backend, batch.contenders, {"first": first, "rank": rank}, {"k": min(k, 6)})
    # The fixed-shape form: the eligible ones among the k best are those the plain form picks among eligible.
    eligible = holders[0]
    chosen = check(backend, batch.contenders, {"first": first, "rank": rank, "eligible": eligible}, {"k": min(k, 6)})
    idx = np.flatnonzero(eligible)
    if len(idx) and len(chosen) < c:
        plain = idx[batch.contenders(np, first[idx], rank[idx], min(k, 6))]
        assert sorted(int(i) for i in chosen if eligible[i]) == sorted(plain.tolist())


@pytest.mark.skipif(not HAVE_JAX, reason="jax is not installed")
def test_pin_rounding_stops_fused_multiply_add():
    """XLA turns a*b + c into a fused multiply-add (one rounding); pin_rounding keeps numpy's two roundings."""
    import jax
    import jax.numpy as jnp

    from phalanx.kernels.backend import pin_rounding
    rng = np.random.default_rng(0)
    a, b, c = rng.random(4096) * 100, rng.random(4096) * 10, rng.integers(0, 5, 4096).astype(np.float64)
    cnt = rng.integers(0, 1000, 4096)
    want = a * b + c
    with precision(jnp):
        fused = np.asarray(jax.jit(lambda a, b, c: a * b + c)(a, b, c))
        pinned = np.asarray(jax.jit(lambda a, b, c, cnt: pin_rounding(jnp, a * b, jnp.minimum(cnt, 0)) + c)(
            a, b, c, cnt))
    assert np.array_equal(pinned.view(np.int64), want.view(np.int64))
    if jax.default_backend() == "cpu":
        assert not np.array_equal(fused.view(np.int64), want.view(np.int64))   # the hazard is real here


@pytest.mark.parametrize("backend", BACKENDS)
def test_score_div_is_floor_division(backend):
    """backend.score_div gives a // b wherever b > 0 and |a / b| < 2**51, on the dividends that stress a float
    quotient: near the int64 limit (not exactly representable in float64), exact multiples and one either side,
    negative ones, and quotients up to 2**50."""
    from phalanx.kernels.backend import score_div
    rng = np.random.default_rng(7)
    b = np.concatenate([rng.integers(1, 2**62, 4000), rng.integers(1, 1000, 4000), np.ones(1000, np.int64),
                        rng.integers(2**40, 2**53, 1000)])
    q = np.concatenate([rng.integers(0, 101, 4000), rng.integers(-2**20, 2**20, 4000),
                        rng.integers(-2**50, 2**50, 1000), rng.integers(0, 1000, 1000)])
    q = np.clip(q, -(2**62) // b, (2**62) // b)          # keep q * b inside int64
    a = q * b + rng.integers(-1, 2, len(b))              # exact multiples and their neighbours
    a[:100] = 2**63 - 1 - rng.integers(0, 2**20, 100)    # the largest dividends, score-sized quotients
    b[:100] = a[:100] // rng.integers(1, 101, 100)
    want = a // b
    assert (np.abs(want) < 2**51).all()
    same(run(backend, lambda xp, a, b: score_div(xp, a, b), {"a": a, "b": b}), want)
