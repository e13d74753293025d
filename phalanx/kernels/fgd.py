"""Fragmentation Gradient Descent (FGD; Weng et al., "Beware of Fragmentation", USENIX ATC'23).

Definitions from the paper's simulator (pkg/utils/frag.go NodeGpuShareFragAmount, pkg/simulator/plugin/
fgd_score.go), re-derived here as array code:

For a node and one typical pod t (share freq_t of the workload, CPU c_t, milli-GPU m_t per GPU, k_t GPUs, allowed
models), the node's idle milli-GPU counts as fragment unless the pod fits:
  - a CPU-only typical pod (m_t = 0): all idle GPU milli is fragment (class XL if the CPU fits, XR if not);
  - the node's model is not allowed: all of it (NA);
  - at least k_t devices have m_t free and the CPU fits (Q3): only the devices with less than m_t free are
    fragment (counted under Q2);
  - otherwise all of it (Q1: neither fits, Q2: GPUs short, Q4: CPU short).
Each amount is weighted by freq_t; the node's fragmentation F is the sum over every class but Q3. A pod's FGD score
on a node is int64(100 * sigmoid((F_before - F_after) / 1000)); a fractional pod tries each device with room and
keeps the best (the first device on ties). F is float64 as in the simulator: the per-class sums are added in
typical-pod order and the classes in the order Q1, Q2, Q4, XL, XR, NA (kernels.backend.sequential_sum), so the
scores, and the ties between nodes, are bit for bit the simulator's.

A node's state enters through per-typical-pod counts that are exact integers: fitting devices cnt[t] and the free
milli of the devices that do not fit frag[t]; a placement changes only the devices it takes, so the state after a
placement is the state before plus the change on those devices (exact), and F is computed from the counts.

Reductions on the per-pod path are array methods (`x.sum(axis=1)`, as numpy, JAX and CuPy arrays all have them):
numpy's `np.sum` wrapper costs more than the sum itself on the few node rows of a kept-shape update.
"""
from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass

import numpy as np

from .backend import sequential_sum, set_at
from .gpu_fit import select_devices
from .gpu_scores import MAX_NODE_SCORE, MILLI


@dataclass(frozen=True)
class TypicalPods:
    """The workload's typical pod shapes (static config): tuples of length T, in the simulator's order."""

    cpu: tuple      # milli-CPU (non-zero request)
    milli: tuple    # milli-GPU per GPU (0: CPU-only)
    count: tuple    # GPUs
    spec: tuple     # allowed models as the trace writes them ("" any)
    freq: tuple     # float64 shares, summing to 1

    @property
    def size(self) -> int:
        return len(self.cpu)

    def __hash__(self) -> int:
        return self._hash

    @functools.cached_property
    def _hash(self) -> int:
        # Hashed on every read of the values kept under it (GpuBook.node_values, derived): its tuples once.
        return hash(tuple(getattr(self, f.name) for f in dataclasses.fields(self)))

    @functools.cached_property
    def columns(self) -> tuple:
        """(cpu, milli, count) (T,) int64 and freq (T,) float64 as host arrays, made once."""
        return (np.asarray(self.cpu, dtype=np.int64).reshape(self.size),
                np.asarray(self.milli, dtype=np.int64).reshape(self.size),
                np.asarray(self.count, dtype=np.int64).reshape(self.size),
                np.asarray(self.freq, dtype=np.float64).reshape(self.size))

    @functools.cached_property
    def milli_levels(self) -> tuple:
        """(levels (U,) int64: the distinct milli-GPU values of the typical pods, level (T,) int64: each pod's
        index among them). Device terms depend on a pod's milli alone, so they are computed once per level."""
        levels, level = np.unique(self.columns[1], return_inverse=True)
        return levels.astype(np.int64), level.astype(np.int64).reshape(self.size)

    @functools.cached_property
    def milli_levels_one(self) -> tuple:
        """milli_levels as Python lists (node_counts_one)."""
        return tuple(a.tolist() for a in self.milli_levels)

    @functools.cached_property
    def class_bits(self) -> tuple:
        """(T,) int64 each pod's 8 gpu_pod + 4 access bits of frag_from_counts' class index, with access true and
        false."""
        gpu_pod = 8 * (self.columns[1] > 0).astype(np.int64)
        return gpu_pod + 4, gpu_pod

    @functools.cached_property
    def gpu_pod(self) -> tuple:
        """(T,) 1 for a GPU typical pod, else 0, as Python ints."""
        return tuple(int(m > 0) for m in self.milli)


def access_matrix(xp, node_model_names, typ: TypicalPods):
    """(N, T) bool host-side: typical pod t may use node n's model (IsNodeAccessibleToPodByType)."""
    rows = []
    for name in node_model_names:
        row = []
        for spec in typ.spec:
            allowed = [m for m in spec.split("|") if m]
            row.append(not allowed or (bool(name) and name in allowed))
        rows.append(row)
    return xp.asarray(rows, dtype=bool).reshape(len(rows), typ.size)


def device_terms(xp, v, typ: TypicalPods):
    """For device free values v (...,): (fits (..., T) bool: v >= m_t, nofit_milli (..., T) int64: v where not)."""
    m = xp.asarray(typ.columns[1])
    fits = v[..., None] >= m
    return fits, xp.where(fits, 0, v[..., None])


def share_counts_after(xp, cnt, frag, total, value, typ: TypicalPods, milli: int):
    """(cnt, frag (..., T), total (...,)) once `milli` is taken from one device with `value` (...,) free: only that
    device's terms move."""
    m = xp.asarray(typ.columns[1])
    left = value[..., None] - milli
    fits_old, fits_new = value[..., None] >= m, left >= m
    # The device leaves the pods it fitted only for (fits_new implies fits_old); its fragment part goes from 0 to
    # what is left where it leaves them, and down by milli where it fitted neither before nor after.
    moved = xp.where(fits_new, 0, xp.where(fits_old, left, -milli))
    return cnt - (fits_old & ~fits_new), frag + moved, total - milli


def whole_counts_after(xp, cnt, frag, total, taken, typ: TypicalPods, count: int):
    """(cnt, frag (..., T), total (...,)) once whole GPUs take `taken` (...,) idle devices (free = MILLI, nothing
    above it) for a pod of `count`: each taken device stops fitting every GPU typical pod and was no one's fragment
    before or after, so only the counts move."""
    gpu_pod = xp.asarray(typ.columns[1]) > 0
    return cnt - taken[..., None] * gpu_pod, frag, total - count * MILLI


def node_counts(xp, free, typ: TypicalPods):
    """(cnt (n, T) int64, frag (n, T) int64, total (n,) int64) of nodes with device rows free (n, D)."""
    levels, level = (xp.asarray(c) for c in typ.milli_levels)
    fits = free[..., None] >= levels                                       # (n, D, U)
    cnt = fits.sum(axis=1).astype(xp.int64)
    frag = xp.where(fits, 0, free[..., None]).sum(axis=1)
    return cnt[:, level], frag[:, level], free.sum(axis=1)


# Fragment classes in the order their sums are added (FragAmountSumExceptQ3 skips Q3, index 2 upstream).
Q1, Q2, Q4, XL, XR, NA = range(6)
CLASSES = 6
# A typical pod's class by 8 gpu_pod + 4 access + 2 gpu_ok + cpu_ok (one gather instead of nested selects): a
# CPU-only pod is XL or XR by its CPU alone; a GPU pod of a model the node lacks is NA; otherwise Q1 (neither
# fits), Q2 (GPUs short), Q4 (CPU short), and the fragment part of a Q3 pod (both fit, index Q3_INDEX) is Q2.
_CLASS_OF = np.array((XR, XL, XR, XL, XR, XL, XR, XL, NA, NA, NA, NA, Q1, Q2, Q4, Q2), np.int64)
Q3_INDEX = 15


def frag_from_counts(xp, cnt, frag, total, cpu_left, access, typ: TypicalPods):
    """F (...,) float64 from cnt, frag (..., T), total, cpu_left (...,) and access (..., T)."""
    cpu_t, _, count_t, freq_t = (xp.asarray(c) for c in typ.columns)
    with_access, without = (xp.asarray(c) for c in typ.class_bits)
    index = xp.where(access, with_access, without) + 2 * (cnt >= count_t) + (cpu_left[..., None] >= cpu_t)
    cls = xp.asarray(_CLASS_OF)[index]
    # freq * float64(gpuMilliLeftTotal), or freq * float64(gpuFragMilli) for Q3.
    # (An int64 operand of a float64 product is converted exactly as astype would.)
    amount = freq_t * xp.where(index == Q3_INDEX, frag, total[..., None])
    if cls.shape != amount.shape:
        cls, amount = xp.broadcast_arrays(cls, amount)
    return sequential_sum(xp, _class_sums(xp, cls, amount))                           # Q1 + Q2 + Q4 + ...


def _class_sums(xp, cls, amount):
    """(..., 6) float64: per fragment class, the amounts (..., T) of the typical pods in that class added in
    typical-pod order, from 0.0. numpy: bincount adds its weights in input order (row by row, t ascending), one
    pass over (..., T); other backends mask (..., 6, T) and add along T in order."""
    if xp.__name__ == "numpy":
        lead = cls.shape[:-1]
        rows = math.prod(lead)
        if not rows:
            return xp.zeros((*lead, CLASSES))       # (bincount of nothing is int64)
        at = cls.reshape(rows, -1) + (xp.arange(rows, dtype=xp.int64) * CLASSES)[:, None]
        sums = xp.bincount(at.ravel(), weights=amount.ravel(), minlength=rows * CLASSES)
        return sums.reshape(*lead, CLASSES)
    classes = xp.arange(CLASSES, dtype=cls.dtype)
    terms = xp.where(cls[..., None, :] == classes[:, None], amount[..., None, :], 0.0)   # (..., 6, T)
    return sequential_sum(xp, terms)                                                    # typical-pod order


def node_frag(xp, free, cpu_left, access, typ: TypicalPods):
    """F (n,) float64 of nodes: free (n, D), cpu_left (n,), access (n, T)."""
    cnt, frag, total = node_counts(xp, free, typ)
    return frag_from_counts(xp, cnt, frag, total, cpu_left, access, typ)


def _score(xp, f_before, f_after):
    """int64(sigmoid((before - after) / 1000) * 100), in fewer array operations: (after - before) / 1000 is -x bit
    for bit (a difference and a quotient change sign exactly), and the cast truncates as trunc does (the value is in
    [0, 100])."""
    return ((1.0 / (1.0 + xp.exp((f_after - f_before) / 1000.0))) * float(MAX_NODE_SCORE)).astype(xp.int64)


def fgd_score(xp, free, cpu_left, access, f_before, cand, typ: TypicalPods, cpu_req: int, count: int, milli: int,
              counts=None):
    """FGD score (n,) int64, the device chosen (n,) int64 for a fractional pod (-1 otherwise, and on nodes with
    no candidate) and F after that placement (n,) float64, over nodes with device rows free (n, D), cpu_left (n,), access (n, T), current F f_before (n,).
    cand (n, D) bool: devices the pod may use (gpu_fit.device_fits). cpu_req: the pod's non-zero CPU request.
    counts: node_counts(free) when the caller keeps them (they change only with the node)."""
    cnt, frag, total = node_counts(xp, free, typ) if counts is None else counts
    cpu_after = cpu_left - cpu_req
    no_device = xp.full(free.shape[:1], -1, dtype=xp.int64)
    if count == 0:
        f_after = frag_from_counts(xp, cnt, frag, total, cpu_after, access, typ)
        return _score(xp, f_before, f_after), no_device, f_after
    if milli == MILLI:
        # Whole GPUs take idle devices: the counts move by the devices taken, min(count, candidates)
        # (select_devices gives a node with fewer candidates all of them).
        taken = xp.minimum(cand.sum(axis=1), count).astype(xp.int64)
        f_after = frag_from_counts(xp, *whole_counts_after(xp, cnt, frag, total, taken, typ, count), cpu_after,
                                   access, typ)
        return _score(xp, f_before, f_after), no_device, f_after
    fits_old, nofit_old = device_terms(xp, free, typ)                # (n, D, T)
    after = free - milli
    fits_new, nofit_new = device_terms(xp, after, typ)
    d_cnt = fits_new.astype(xp.int64) - fits_old.astype(xp.int64)
    d_frag = nofit_new - nofit_old
    if count == 1:
        # One candidate state per device: only that device loses `milli`.
        f_after = frag_from_counts(xp, cnt[:, None, :] + d_cnt, frag[:, None, :] + d_frag,
                                   (total - milli)[:, None], cpu_after[:, None], access[:, None, :], typ)
        s = xp.where(cand, _score(xp, f_before[:, None], f_after), -1)
        best = xp.max(s, axis=1)
        device = xp.argmax(s, axis=1).astype(xp.int64)
        f_new = xp.take_along_axis(f_after, device[:, None], axis=1)[:, 0]
        return best, xp.where(best >= 0, device, -1), f_new
    # Several shares of GPUs: the packing order's devices (NodeResource.Sub: least free first).
    used = select_devices(xp, free, cand, count, "best")
    w = used.astype(xp.int64)[..., None]
    f_after = frag_from_counts(xp, cnt + xp.sum(w * d_cnt, axis=1), frag + xp.sum(w * d_frag, axis=1),
                               total - count * milli, cpu_after, access, typ)
    return _score(xp, f_before, f_after), no_device, f_after


def first_of_value(xp, free, cand):
    """(n, D) bool: candidate devices whose free value no lower-index candidate of the node has. Devices with equal
    free milli leave the node in the same state, so only the first of them needs scoring."""
    d = free.shape[1]
    same = (free[:, :, None] == free[:, None, :]) & cand[:, None, :]          # [n, d, e]: e has d's value
    earlier = xp.arange(d)[None, :] < xp.arange(d)[:, None]                     # [d, e]: e < d
    return cand & ~(same & earlier[None]).any(axis=2)


def fgd_share_pairs(xp, cnt, frag, total, cpu_left, access, f_before, value, typ: TypicalPods, cpu_req: int,
                    milli: int):
    """FGD of a fractional pod on candidate (node, device) pairs, K of them: the node's counts cnt, frag (K, T),
    total, cpu_left, f_before (K,), access (K, T) and the device's free milli value (K,). Returns (score (K,) int64,
    F after (K,) float64): the same numbers fgd_score gives for that device."""
    f_after = frag_from_counts(xp, *share_counts_after(xp, cnt, frag, total, value, typ, milli), cpu_left - cpu_req,
                               access, typ)
    return _score(xp, f_before, f_after), f_after


def share_score(xp, free, cand, counts, cpu_left, access, f_before, typ: TypicalPods, cpu_req: int, milli: int):
    """fgd_score for a fractional pod on nodes with device rows free (n, D), scoring each distinct candidate free
    value of a node once (first_of_value): (score (n,) int64, device (n,) int64, F after (n,) float64), -1 / -1 /
    0.0 on nodes without a candidate. Host side (the pairs are a data-dependent selection); the per-pair arithmetic
    is fgd_share_pairs."""
    n = free.shape[0]
    k_node, k_dev = xp.nonzero(first_of_value(xp, free, cand))
    cnt, frag, total = counts
    score, f_after = fgd_share_pairs(xp, cnt[k_node], frag[k_node], total[k_node], cpu_left[k_node],
                                     access[k_node], f_before[k_node], free[k_node, k_dev], typ, cpu_req, milli)
    if n == 1 and len(k_node):
        # One node (most kept-shape updates): its pairs come in device order (nonzero), so its first best pair is
        # best_pair's choice, without the sort.
        at = score.argmax(keepdims=True)
        return score[at], k_dev[at], f_after[at]
    pick, best = best_pair(xp, score, k_node, k_dev, n)
    if not len(k_node):
        return best, xp.full(n, -1, dtype=xp.int64), xp.zeros(n)
    has = pick >= 0
    at = xp.maximum(pick, 0)
    return best, xp.where(has, k_dev[at], -1), xp.where(has, f_after[at], 0.0)


def best_pair(xp, score, node, device, n: int):
    """Per node (n,): the pair with the highest score, the lowest device index on ties; -1 where a node has none.
    Pairs must be grouped by node (any order inside). Returns (pair index, score) per node."""
    order = xp.lexsort((device, -score, node))
    head = xp.concatenate([xp.ones(order.shape[:1], dtype=bool)[:1], node[order][1:] != node[order][:-1]])
    # Each node's first pair in that order is written to its row; the other pairs go to a spare row n that is
    # dropped (fixed shapes, jit-able: no boolean indexing).
    row = xp.where(head, node[order], n)
    empty = xp.full((n + 1,), -1, dtype=xp.int64)
    out = set_at(xp, empty, row, order.astype(xp.int64))[:n]
    best = set_at(xp, empty, row, score[order].astype(xp.int64))[:n]
    return out, best


# Odd 64-bit multipliers of distinct_nodes' row hash (int64 products wrap; collisions are checked).
_ROW_HASH = np.random.default_rng(0x46474400).integers(1, 2**62, 64, dtype=np.int64) * 2 + 1


def distinct_nodes(free, model, cpu_left):
    """Host side: one node per distinct (free milli per device slot, model per slot, CPU left) of nodes free, model
    (n, D), cpu_left (n,): (first (U,) int64 node indices, inverse (n,) int64 each node's index in first), or None
    when no two nodes are alike. A node's FGD counts, F, score, device and F after are functions of these alone, and
    the idle nodes of one type are most of a cluster's: large views are scored once per distinct node. Rows are
    grouped by a hash and confirmed equal to their group's first (None on a collision: no grouping)."""
    key = np.concatenate([free, model, cpu_left[:, None]], axis=1)
    if key.shape[1] > len(_ROW_HASH):
        return None
    _, first, inverse = np.unique(key @ _ROW_HASH[:key.shape[1]], return_index=True, return_inverse=True)
    if len(first) == len(key) or not (key[first][inverse] == key).all():
        return None
    return first.astype(np.int64), inverse.reshape(-1).astype(np.int64)


# -- one node in plain Python -----------------------------------------------------------------------------------
# Most kept-shape updates score one node, where numpy's per-call cost (~5-8k instructions a call) is many times the
# arithmetic on its T typical pods and D devices. These functions take one node's values as Python numbers and give
# the array functions' results bit for bit: the same integer arithmetic, and the same float64 operations in the same
# order (per class in typical-pod order from 0.0, the classes left to right), with numpy's exp (math.exp differs
# from it in the last bit for a few percent of arguments).

@dataclass(frozen=True)
class NodeTerms:
    """A node's typical pods as the one-node functions read them, grouped by the fragment classes each can fall in
    on that node. Each class takes amounts from one group alone, so adding a group's amounts in typical-pod order
    adds every class's in frag_from_counts' order; a pod's class is found by two or three comparisons instead of
    frag_from_counts' class index."""
    gpu: tuple     # (t, milli, cpu, count, freq) per GPU pod that may use the node's model: Q1, Q2 (Q3's part), Q4
    cpu: tuple     # (cpu, freq) per CPU-only pod: XL, XR
    na: tuple      # freq per GPU pod that may not: NA


def node_counts_one(free, typ: TypicalPods) -> tuple:
    """node_counts of one node whose device slots have `free` milli (D ints): (cnt, frag lists of T, total)."""
    levels, level = typ.milli_levels_one
    values = sorted(free)
    fitting, below = len(values), 0
    cnt_at, frag_at = [], []
    for m in levels:                 # ascending: the devices below a level are a prefix of the sorted values
        while fitting and values[-fitting] < m:
            below += values[-fitting]
            fitting -= 1
        cnt_at.append(fitting)
        frag_at.append(below)
    return [cnt_at[u] for u in level], [frag_at[u] for u in level], sum(free)


@functools.lru_cache(maxsize=256)
def node_terms(typ: TypicalPods, access: tuple) -> NodeTerms:
    """The NodeTerms of a node whose access row (T bools, access_matrix) is `access`."""
    gpu, cpu, na = [], [], []
    for t, (cpu_t, milli_t, count_t, freq_t, a) in enumerate(zip(typ.cpu, typ.milli, typ.count, typ.freq, access)):
        if not milli_t:
            cpu.append((cpu_t, freq_t))
        elif a:
            gpu.append((t, milli_t, cpu_t, count_t, freq_t))
        else:
            na.append(freq_t)
    return NodeTerms(tuple(gpu), tuple(cpu), tuple(na))


def frag_one(cnt, frag, total: int, cpu_left: int, terms: NodeTerms, taken: int = 0, value: int = MILLI,
             milli: int = 0) -> float:
    """frag_from_counts of one node (cnt, frag sequences of T; total, cpu_left ints; terms its NodeTerms), with the
    counts moved by a placement as they are read (no lists of the counts after): whole GPUs taking `taken` idle
    devices (whole_counts_after), or a share taking `milli` from a device with `value` free (share_counts_after);
    `total` and `cpu_left` are the node's after the placement."""
    left = value - milli
    amount = float(total)            # (an int operand of a float product is converted exactly so)
    q1 = q2 = q4 = 0.0
    for t, m, cpu_t, count_t, freq_t in terms.gpu:
        if left >= m:                # the device fits the pod after as before (none taken: every device)
            c, f = cnt[t] - taken, frag[t]
        elif value >= m:             # it no longer does: its left part becomes fragment
            c, f = cnt[t] - 1, frag[t] + left
        else:                        # it fitted neither time: its fragment shrinks by milli
            c, f = cnt[t], frag[t] - milli
        if c >= count_t:
            if cpu_left >= cpu_t:    # Q3: its fragment part counts under Q2
                q2 += freq_t * f
            else:
                q4 += freq_t * amount
        elif cpu_left >= cpu_t:
            q2 += freq_t * amount
        else:
            q1 += freq_t * amount
    xl = xr = na = 0.0
    for cpu_t, freq_t in terms.cpu:
        if cpu_left >= cpu_t:
            xl += freq_t * amount
        else:
            xr += freq_t * amount
    for freq_t in terms.na:
        na += freq_t * amount
    return q1 + q2 + q4 + xl + xr + na


def score_one(f_before: float, f_after: float) -> int:
    """_score of one node."""
    return int((1.0 / (1.0 + float(np.exp((f_after - f_before) / 1000.0)))) * float(MAX_NODE_SCORE))


def share_counts_after_one(cnt, frag, total: int, value: int, typ: TypicalPods, milli: int) -> tuple:
    """share_counts_after of one node whose device with `value` free gives `milli`: (cnt, frag lists, total)."""
    left = value - milli
    cnt_after, frag_after = [], []
    for m, c, f in zip(typ.milli, cnt, frag):
        if left >= m:                  # fits before and after: nothing moves
            cnt_after.append(c)
            frag_after.append(f)
        elif value >= m:               # fitted, no longer does: its left part becomes fragment
            cnt_after.append(c - 1)
            frag_after.append(f + left)
        else:                          # fitted neither time: its fragment shrinks by milli
            cnt_after.append(c)
            frag_after.append(f - milli)
    return cnt_after, frag_after, total - milli


def whole_counts_after_one(cnt, frag, total: int, taken: int, typ: TypicalPods, count: int) -> tuple:
    """whole_counts_after of one node whose `taken` idle devices go to a pod of `count` whole GPUs."""
    return [c - taken * g for c, g in zip(cnt, typ.gpu_pod)], frag, total - count * MILLI


def fgd_score_one(free, cand, counts, cpu_left: int, terms: NodeTerms, f_before: float, cpu_req: int, count: int,
                  milli: int) -> tuple:
    """fgd_score (count 0, whole GPUs) or share_score (count 1, a share) of one node: free and cand its device slots
    (D,), counts its node_counts (cnt, frag, total), terms its NodeTerms. Returns (score, device, F after) as Python
    numbers: -1 / -1 / 0.0 for a share without a candidate device; several shares of GPUs are left to fgd_score."""
    cnt, frag, total = counts
    cpu_after = cpu_left - cpu_req
    if count == 0:
        f_after = frag_one(cnt, frag, total, cpu_after, terms)
        return score_one(f_before, f_after), -1, f_after
    if milli == MILLI:
        f_after = frag_one(cnt, frag, total - count * MILLI, cpu_after, terms, taken=min(sum(cand), count))
        return score_one(f_before, f_after), -1, f_after
    if count != 1:
        raise ValueError("fgd_score_one: several shares of GPUs go to fgd_score")
    # Each distinct candidate value once, in device order (first_of_value); the first best device wins (best_pair).
    best, device, f_best = -1, -1, 0.0
    seen = set()
    for d, (value, ok) in enumerate(zip(free, cand)):
        if not ok or value in seen:
            continue
        seen.add(value)
        f_after = frag_one(cnt, frag, total - milli, cpu_after, terms, value=value, milli=milli)
        score = score_one(f_before, f_after)
        if score > best:
            best, device, f_best = score, d, f_after
    return best, device, f_best
