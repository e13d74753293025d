"""Score policies of the GPU-cluster simulator of Weng et al. (ATC'23, hkust-adsl/kubernetes-scheduler-simulator,
pkg/simulator/plugin/*_score.go): BestFit, DotProduct, GpuPacking, GpuClustering, Random. FGD is in fgd.py.

Every score takes node state rows (any subset of nodes, leading dimension n) and the pod's shape as static
Python values, and returns the plugin's raw integer score (n,) int64. Float arithmetic follows the Go source
operation by operation (float64, same order); `int64(x)` truncates toward zero.

  cpu_left   (n,) int64    allocatable milli-CPU minus the requests of the pods on the node
  free       (n, D) int64  free milli-GPU per device slot (padding 0)
  gpu_count  (n,) int64    devices on the node
  tag_count  (n, K) int64  pods on the node per GPU-affinity tag (GpuClustering): share-gpu, 1-gpu, 2-gpu, ...
"""
from __future__ import annotations

from .backend import trunc_div
from .gpu_fit import select_devices

MAX_NODE_SCORE = 100
MILLI = 1000
MAX_SPEC_CPU = 128000   # gpushareutils.MaxSpecCpu: milli-CPU of the largest node
MAX_SPEC_GPU = 8000     # gpushareutils.MaxSpecGpu: milli-GPU of the largest node


def _trunc_int(xp, x):
    """Go int64(float64): truncation toward zero."""
    return xp.trunc(x).astype(xp.int64)


def bestfit(xp, cpu_left, free, cpu_req: int, gpu_req_total: int):
    """getBestFitScore: 100 * (1 - (0.5 (cpuFree - cpuReq) / 128000 + 0.5 (gpuFree - gpuReq) / 8000)), truncated.
    Higher is better (less left over); NormalizeScore (min_max_normalize) follows."""
    cpu_term = ((cpu_left.astype(xp.float64) - float(cpu_req)) / float(MAX_SPEC_CPU)) * 0.5
    gpu_free = xp.sum(free, axis=1).astype(xp.float64)
    gpu_term = ((gpu_free - float(gpu_req_total)) / float(MAX_SPEC_GPU)) * 0.5
    score = cpu_term + gpu_term
    return _trunc_int(xp, (1.0 - score) * float(MAX_NODE_SCORE))


def min_max_normalize(xp, scores, feasible):
    """plugin.NormalizeScore over the feasible nodes: (s - lowest) * 100 / (highest - lowest), integer division;
    every node 0 when all scores are equal. Infeasible nodes get 0."""
    big = xp.iinfo(xp.int64).max
    lo = xp.min(xp.where(feasible, scores, big))
    hi = xp.max(xp.where(feasible, scores, lo))      # no feasible node: hi = lo, span 0 (no int64 overflow)
    span = hi - lo
    out = xp.where(span == 0, 0, ((scores - lo) * MAX_NODE_SCORE) // xp.maximum(span, 1))
    return xp.where(feasible, out, 0)


def dotprod(xp, cpu_left, free, cpu_req: int, gpu_req_total: int):
    """calculateDotProductScore with DimExtMethod merge and NormMethod max (the paper's DotProd): node vector
    (cpuLeft, gpuMilliLeft) and pod vector (cpuReq, gpuReq), each divided by (128000, 8000); score
    int64(100 * (1 - dot / 2)). A node short of CPU has no match group and scores 0."""
    n0 = cpu_left.astype(xp.float64) / float(MAX_SPEC_CPU)
    n1 = xp.sum(free, axis=1).astype(xp.float64) / float(MAX_SPEC_GPU)
    p0 = float(cpu_req) / float(MAX_SPEC_CPU)
    p1 = float(gpu_req_total) / float(MAX_SPEC_GPU)
    dot = n0 * p0 + n1 * p1
    cur = 1.0 - dot / 2.0
    score = _trunc_int(xp, float(MAX_NODE_SCORE) * cur)
    return xp.where(cpu_left < cpu_req, 0, score)


def gpupacking(xp, free, gpu_count, count: int, milli: int):
    """getPackingScore, from high to low:
      1. only partly used GPUs are used: max(100 - (sum over used GPUs of free*100/1000) / 10, 50)
      2. fully free GPUs of a node in use are needed: max(50 - fully free GPUs used, 33)
      3. the node is idle (every GPU fully free): max(33 - fully free GPUs, fully free GPUs)
    The GPUs used are the packing order's (least free first). A pod without GPU milli scores 0."""
    if milli <= 0 or count <= 0:
        return xp.zeros(free.shape[:1], dtype=xp.int64)
    fully = free == MILLI
    n_fully = xp.sum(fully, axis=1)
    case3 = xp.maximum(MAX_NODE_SCORE // 3 - n_fully, n_fully)
    used = select_devices(xp, free, free >= milli, count, "best")
    fully_used = xp.sum(used & fully, axis=1)
    case2 = xp.maximum(MAX_NODE_SCORE // 2 - fully_used, MAX_NODE_SCORE // 3)
    ratio = xp.sum(xp.where(used, (free * 100) // MILLI, 0), axis=1)
    case1 = xp.maximum(MAX_NODE_SCORE - ratio // 10, MAX_NODE_SCORE // 2)
    return xp.where(n_fully == gpu_count, case3, xp.where(fully_used > 0, case2, case1)).astype(xp.int64)


def gpuclustering(xp, free, tag_count, tag: int):
    """GpuClusteringScore: 25 * (8000 - gpuMilliLeft) / 8000 (integers) plus 75 when the node's only affinity tag is
    the pod's, 50 when the node has the pod's tag among others, 25 when the node has no GPU pod, 0 otherwise.
    tag: the pod's affinity tag column in tag_count; -1 (no GPU) scores 0."""
    if tag < 0:
        return xp.zeros(free.shape[:1], dtype=xp.int64)
    left = xp.sum(free, axis=1)
    has = tag_count[:, tag] > 0
    distinct = xp.sum(tag_count > 0, axis=1)
    base = xp.where(has, xp.where(distinct == 1, MAX_NODE_SCORE * 3 // 4, MAX_NODE_SCORE * 2 // 4),
                    xp.where(distinct == 0, MAX_NODE_SCORE // 4, 0))
    part = trunc_div(xp, (MAX_NODE_SCORE // 4) * (MAX_SPEC_GPU - left), xp.asarray(MAX_SPEC_GPU, dtype=xp.int64))
    return (part + base).astype(xp.int64)


def random_score(xp, feasible, u: float):
    """RandomScore: PreScore picks one of the feasible nodes uniformly (the floor(u * feasible)-th in node order,
    u in [0, 1)); it scores 100, every other node 0."""
    cnt = xp.sum(feasible)
    k = xp.floor(u * cnt).astype(xp.int64)
    pos = xp.cumsum(feasible.astype(xp.int64)) - 1
    return xp.where(feasible & (pos == k), MAX_NODE_SCORE, 0).astype(xp.int64)
