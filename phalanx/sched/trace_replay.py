"""Replay of the Alibaba GPU trace the way the FGD paper's experiments do (Weng et al., ATC'23; the simulator's
scripts/generate_config_and_run.py and pkg/simulator/{core,simulator,analysis}.go):

  1. GPU nodes only (openb_node_list_gpu_node.csv); the pods of one pod list.
  2. Typical pods from the whole pod list (popularity threshold 95%, increase step 1, CPU pods included).
  3. Arrival order: pods sorted by name, then shuffled with the seed.
  4. Workload tuning to 1.3 x the cluster's GPU capacity: clones of pods drawn uniformly (with replacement) from
     the pod list are appended until the next clone would pass the target (the check adds the clone's per-GPU
     milli, as the simulator's tuneUpPods does); a list above the target loses uniformly drawn pods instead.
  5. One pod at a time, no departures; a pod that fits nowhere is dropped. Filters: CPU, memory, pod count
     (1001 per node) and the GPU device filter; one score policy; the best node wins, ties to the first node of
     one seeded random order of the nodes (tie_break="perm": the simulator renames every node "%04d-<name>"
     with rand.Perm before the run, and its scheduler fork keeps the smallest name), then the policy's GPU
     selection picks the devices.
  6. After every pod: arrived GPU demand and allocated milli-GPU (the simulator's [Alloc] line).

The random streams (shuffle, clones, ties, the Random policy) come from numpy's PCG64 seeded with `seed`, not from
Go's math/rand: the procedure is the simulator's, the draws are not (docs/semantics.md).

Scores depend only on a node's own state and the pod's shape, so each shape keeps its last scores over all nodes
and only the nodes changed since are rescored (exactly the values a full rescoring would give).
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

import numpy as np

from ..cluster_models.alibaba import TraceNodes, TracePods
from ..cluster_models.errors import InputError
from ..cluster_models.gpus import MILLI, GpuTable
from ..kernels import fgd, gpu_fit, gpu_scores

POLICIES = ("random", "dotprod", "gpuclustering", "gpupacking", "bestfit", "fgd")
# perm: first node of one seeded node permutation drawn after the arrival order (what the simulator's renaming
# + smallest-name rule amounts to); name: the smallest real node name; random: a seeded draw at every tie.
TIE_BREAKS = ("perm", "name", "random")
POD_LIMIT = 1001                 # allocatable pods of the trace's nodes (the simulator's node YAML)
DEFAULT_CPU_MILLI = 100          # schedutil.GetNonzeroRequests: a pod without a CPU request counts 100m
TUNE_RATIO = 1.3
POPULARITY_THRESHOLD = 95        # typical pods: the most frequent shapes covering 95% of the pods
POPULARITY_STEP = 1


def typical_pods(pods: TracePods, threshold: int = POPULARITY_THRESHOLD, step: int = POPULARITY_STEP) -> fgd.TypicalPods:
    """utils.GetTypicalPods (CPU pods included, no GPU weight): shapes (non-zero CPU, GPU milli, GPUs, models)
    by decreasing count (ties: larger CPU, milli, GPUs, model string first), taken `step` at a time until they
    cover `threshold`% of the pods, with frequencies renormalised over the shapes taken."""
    counts: dict[tuple, float] = {}
    for i in range(pods.size):
        key = (max(int(pods.cpu_milli[i]), 0) or DEFAULT_CPU_MILLI, int(pods.gpu_milli[i]), int(pods.num_gpu[i]),
               pods.gpu_spec[i])
        counts[key] = counts.get(key, 0.0) + 1.0
    total = float(pods.size)
    ordered = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    expected = float(threshold) * total / 100.0
    i, taken, cum = 0, 0, 0.0
    freq = [0.0] * len(ordered)
    while cum < expected:
        taken += step
        while i < taken and i < len(ordered):
            cum += ordered[i][1]
            freq[i] = ordered[i][1] / total
            i += 1
    if i < len(ordered):
        ordered = ordered[:i]
        freq = [f / (cum / total) for f in freq[:i]]
    return fgd.TypicalPods(cpu=tuple(k[0] for k, _ in ordered), milli=tuple(k[1] for k, _ in ordered),
                           count=tuple(k[2] for k, _ in ordered), spec=tuple(k[3] for k, _ in ordered),
                           freq=tuple(freq))


def arrival_order(pods: TracePods, gpu_capacity_milli: int, rng: np.random.Generator,
                  ratio: float = TUNE_RATIO) -> np.ndarray:
    """Pod list rows in arrival order: shuffled, then tuned to `ratio` x capacity (SortClusterPods,
    TunePodsByNodeTotalResource). A row may appear more than once (clones)."""
    by_name = np.asarray(sorted(range(pods.size), key=lambda i: pods.names[i]), dtype=np.int64)
    order = by_name[rng.permutation(pods.size)]
    total_milli = pods.num_gpu * pods.gpu_milli
    demand = int(total_milli.sum())
    target = ratio * float(gpu_capacity_milli)
    if ratio <= 0 or float(demand) == target:
        return order
    if float(demand) > target:
        rows = list(order)
        while float(demand) > target and rows:
            k = int(rng.integers(len(rows)))
            demand -= int(total_milli[rows.pop(k)])
        return np.asarray(rows, dtype=np.int64)
    clones = []
    while True:
        k = int(by_name[int(rng.integers(pods.size))])
        if float(demand + int(pods.gpu_milli[k])) > target:
            break
        demand += int(total_milli[k])
        clones.append(k)
    return np.concatenate([order, np.asarray(clones, dtype=np.int64)])


@dataclass
class ReplayResult:
    trace: str
    policy: str
    seed: int
    pods: int                      # pods that arrived (clones included)
    placed: int
    seconds: float                 # the replay loop alone
    gpu_capacity_milli: int
    arrived_milli: np.ndarray      # (pods + 1,) int64 GPU demand arrived after each pod (row 0: before any)
    used_milli: np.ndarray         # (pods + 1,) int64 milli-GPU allocated after each pod
    pod_rows: np.ndarray           # (pods,) int64 pod list row of each arrival
    node_of: np.ndarray            # (pods,) int64 node given, -1 dropped
    devices_of: list = field(default_factory=list)   # (pods,) device indices given (tuple)
    gpus: GpuTable | None = None   # the GPU table after the replay (the input table is left as it was)
    node_names: tuple = ()         # (N,) node names, indexed by node_of

    def alloc_by_arrival(self) -> dict[str, float]:
        """{arrived % of GPU capacity (integer bucket): mean GPU allocation %} as the simulator's
        experiments/analysis/merge_alloc_discrete.py computes it (round(x, 0) buckets; an empty bucket takes the
        rows of its +-1 neighbourhood; values rounded to 2 decimals)."""
        gpus = self.gpu_capacity_milli / MILLI
        arrive = [round(float(a) / gpus / 10, 0) for a in self.arrived_milli]
        alloc = [round(float(u) / gpus / 10, 2) for u in self.used_milli]
        out = {}
        for r in range(0, 131):
            vals = [v for a, v in zip(arrive, alloc) if a == r]
            if not vals:
                vals = [v for a, v in zip(arrive, alloc) if r - 1 <= a <= r + 1]
                if not vals:
                    continue
            out[str(r)] = round(sum(vals) / len(vals), 2)
        return out

    def unallocated_at(self, pct: int = 100) -> float | None:
        v = self.alloc_by_arrival().get(str(pct))
        return None if v is None else round(100.0 - v, 2)


class _Replay:
    def __init__(self, nodes: TraceNodes, pods: TracePods, policy: str, typ: fgd.TypicalPods, rng, tie_break: str):
        xp = self.xp = np
        self.policy, self.rng, self.typ, self.pods = policy, rng, typ, pods
        self.tie_random = tie_break == "random"
        g = nodes.gpus
        self.models = g.models
        self.free = g.dense_free()                      # (N, D) int64
        self.dev_model = g.dense_model()                # (N, D) int64
        self.gpu_count = g.per_node_count()             # (N,) int64
        self.cpu_left = nodes.cpu_milli.copy()          # (N,) int64
        self.mem_left = nodes.memory.copy()             # (N,) int64
        self.pod_count = np.zeros(nodes.size, dtype=np.int64)
        self.stamp = np.zeros(nodes.size, dtype=np.int64)   # (N,) step of the node's last change
        self.step = 1
        tags = sorted({_tag(int(c), int(m)) for c, m in zip(pods.num_gpu, pods.gpu_milli)} - {None})
        self.tag_index = {t: i for i, t in enumerate(tags)}
        self.tag_count = np.zeros((nodes.size, max(len(tags), 1)), dtype=np.int64)
        if policy == "fgd":
            names = [g.models[m] if m >= 0 else "" for m in g.node_model()]
            self.access = fgd.access_matrix(xp, names, typ)        # (N, T) bool
            self.counts = fgd.node_counts(xp, self.free, typ)    # (N, T), (N, T), (N,) int64
            self.frag = fgd.frag_from_counts(xp, *self.counts, self.cpu_left, self.access, typ)   # (N,) float64
        self.cache: dict[tuple, tuple] = {}             # shape -> (stamp, scores (N,), devices (N,))

    def _scores(self, rows, cpu, count, milli, allowed, tag):
        """(scores, FGD devices, FGD F after the placement) of the nodes `rows` for one pod shape."""
        xp = self.xp
        free, cpu_left = self.free[rows], self.cpu_left[rows]
        p = self.policy
        none = np.full(len(rows), -1, dtype=np.int64)
        nof = np.zeros(len(rows), dtype=np.float64)
        if p == "fgd":
            cand = gpu_fit.device_fits(xp, free, self.dev_model[rows], milli, allowed)
            counts = tuple(c[rows] for c in self.counts)
            if count == 1 and milli < MILLI:
                return self._fgd_share(rows, free, cand, counts, cpu, milli)
            return fgd.fgd_score(xp, free, cpu_left, self.access[rows], self.frag[rows], cand, self.typ,
                                 cpu, count, milli, counts)
        if p == "bestfit":
            return gpu_scores.bestfit(xp, cpu_left, free, cpu, count * milli), none, nof
        if p == "dotprod":
            return gpu_scores.dotprod(xp, cpu_left, free, cpu, count * milli), none, nof
        if p == "gpupacking":
            return gpu_scores.gpupacking(xp, free, self.gpu_count[rows], count, milli), none, nof
        if p == "gpuclustering":
            return gpu_scores.gpuclustering(xp, free, self.tag_count[rows], tag), none, nof
        return np.zeros(len(rows), dtype=np.int64), none, nof

    def _fgd_share(self, rows, free, cand, counts, cpu, milli):
        """fgd_score for a fractional pod, scoring each distinct candidate device value of a node once."""
        xp = self.xp
        k_node, k_dev = np.nonzero(fgd.first_of_value(xp, free, cand))
        cnt, frag, total = counts
        score, f_after = fgd.fgd_share_pairs(xp, cnt[k_node], frag[k_node], total[k_node], self.cpu_left[rows][k_node],
                                             self.access[rows][k_node], self.frag[rows][k_node],
                                             free[k_node, k_dev], self.typ, cpu, milli)
        n = len(rows)
        pick, best = fgd.best_pair(xp, score, k_node, k_dev, n)
        has = pick >= 0
        device = np.where(has, k_dev[np.maximum(pick, 0)], -1) if len(k_node) else np.full(n, -1, dtype=np.int64)
        f_new = np.where(has, f_after[np.maximum(pick, 0)], 0.0) if len(k_node) else np.zeros(n)
        return best, device, f_new

    def place(self, i: int):
        """Schedule pod list row i; returns (node, device tuple) or (-1, ())."""
        xp, pods = self.xp, self.pods
        cpu_req, mem = int(pods.cpu_milli[i]), int(pods.memory[i])
        count, milli = int(pods.num_gpu[i]), int(pods.gpu_milli[i])
        allowed = gpu_fit.allowed_ids(self.models, pods.gpu_spec[i].split("|")) if count else None
        cpu = cpu_req or DEFAULT_CPU_MILLI
        feasible = ((self.cpu_left >= cpu_req) & (self.mem_left >= mem) & (self.pod_count + 1 <= POD_LIMIT)
                    & gpu_fit.gpu_fit_filter(xp, self.free, self.dev_model, count, milli, allowed))
        if not feasible.any():
            return -1, ()
        tag = self.tag_index.get(_tag(count, milli), -1)
        if self.policy == "random":
            scores = gpu_scores.random_score(xp, feasible, self.rng.random())
            devices_fgd = f_new = None
        else:
            key = (cpu, count, milli, pods.gpu_spec[i])
            entry = self.cache.get(key)
            if entry is None:
                scores, devices_fgd, f_new = self._scores(np.arange(len(feasible)), cpu, count, milli, allowed, tag)
            else:
                seen, scores, devices_fgd, f_new = entry
                dirty = np.flatnonzero(self.stamp > seen)
                if len(dirty):
                    s, d, f = self._scores(dirty, cpu, count, milli, allowed, tag)
                    scores, devices_fgd, f_new = scores.copy(), devices_fgd.copy(), f_new.copy()
                    scores[dirty], devices_fgd[dirty], f_new[dirty] = s, d, f
            self.cache[key] = (self.step - 1, scores, devices_fgd, f_new)
            if self.policy == "bestfit":
                scores = gpu_scores.min_max_normalize(xp, scores, feasible)
        u = self.rng.random() if self.tie_random else None
        n = int(gpu_scores.pick_max(xp, scores, feasible, u))
        # GPU selection on the chosen node.
        devs = ()
        if count:
            fits = gpu_fit.device_fits(xp, self.free[n:n + 1], self.dev_model[n:n + 1], milli, allowed)
            share = count == 1 and milli < MILLI
            if share and self.policy == "fgd":
                chosen = np.zeros_like(fits)
                chosen[0, int(devices_fgd[n])] = True
            elif share and self.policy == "random":
                chosen = gpu_fit.random_device(xp, fits, np.asarray([self.rng.random()]))
            else:
                chosen = gpu_fit.select_devices(xp, self.free[n:n + 1], fits, count, "best")
            devs = tuple(int(d) for d in np.flatnonzero(chosen[0]))
            self.free[n, list(devs)] -= milli
        self.cpu_left[n] -= cpu_req
        self.mem_left[n] -= mem
        self.pod_count[n] += 1
        if tag >= 0:
            self.tag_count[n, tag] += 1
        self.stamp[n] = self.step
        self.step += 1
        if self.policy == "fgd":
            self.frag[n] = f_new[n]     # F of the state just committed, computed with the score (exact)
            c, f, t = fgd.node_counts(xp, self.free[n:n + 1], self.typ)
            self.counts[0][n], self.counts[1][n], self.counts[2][n] = c[0], f[0], t[0]
        return n, devs


def _tag(count: int, milli: int):
    """GPU affinity tag (GetGpuAffinityFromPodAnnotation): None (no GPU), share-gpu, or <count>-gpu."""
    if count == 0:
        return None
    if count == 1 and milli < MILLI:
        return "share-gpu"
    return f"{count}-gpu"


def _take_nodes(nodes: TraceNodes, rows: np.ndarray) -> TraceNodes:
    """The nodes in the order `rows` (devices follow their nodes)."""
    g = nodes.gpus
    per_node = [[(g.names[j], g.models[g.model[j]] if g.model[j] >= 0 else "", int(g.memory_mib[j]))
                 for j in range(g.offsets[n], g.offsets[n + 1])] for n in rows]
    gpus = GpuTable.build(per_node, g.models)
    dev = np.concatenate([np.arange(g.offsets[n], g.offsets[n + 1]) for n in rows]) if g.size else np.zeros(0, int)
    gpus.milli_used, gpus.healthy = g.milli_used[dev].copy(), g.healthy[dev].copy()
    return TraceNodes(names=tuple(nodes.names[n] for n in rows), cpu_milli=nodes.cpu_milli[rows],
                      memory=nodes.memory[rows], gpus=gpus)


def replay(nodes: TraceNodes, pods: TracePods, policy: str = "fgd", seed: int = 42, trace: str = "",
           tie_break: str = "perm", ratio: float = TUNE_RATIO) -> ReplayResult:
    """Run the experiment once. Raises InputError for an unknown policy or tie-break."""
    if policy not in POLICIES:
        raise InputError(f"--policy: unknown policy {policy!r} (use one of {', '.join(POLICIES)})")
    if tie_break not in TIE_BREAKS:
        raise InputError(f"--tie-break: unknown tie-break {tie_break!r} (use one of {', '.join(TIE_BREAKS)})")
    rng = np.random.default_rng(seed)
    capacity = int(nodes.gpus.size) * MILLI
    order = arrival_order(pods, capacity, rng, ratio)
    by_name = _by_name(nodes)
    # The simulator's syncClusterResourceList: nodes sorted by name, then node i renamed "%04d-" % perm[i].
    node_order = by_name[np.argsort(rng.permutation(nodes.size), kind="stable")] if tie_break == "perm" else by_name
    return replay_order(nodes, pods, order, policy, rng, trace=trace, tie_break=tie_break, seed=seed,
                        node_order=node_order)


def _by_name(nodes: TraceNodes) -> np.ndarray:
    return np.asarray(sorted(range(nodes.size), key=lambda n: nodes.names[n]), dtype=np.int64)


def replay_order(nodes: TraceNodes, pods: TracePods, order: np.ndarray, policy: str, rng: np.random.Generator,
                 typ: fgd.TypicalPods | None = None, trace: str = "", tie_break: str = "name",
                 seed: int = 0, node_order: np.ndarray | None = None) -> ReplayResult:
    """Place the pod list rows `order` one at a time (step 5 of the procedure). typ: typical pods (default: from
    the whole pod list); node_order: node rows in tie-break order (default: by name), ties go to the first
    unless tie_break is "random"."""
    capacity = int(nodes.gpus.size) * MILLI
    typ = typical_pods(pods) if typ is None else typ
    by_name = _by_name(nodes) if node_order is None else np.asarray(node_order, dtype=np.int64)
    ordered = _take_nodes(nodes, by_name)
    t0 = time.perf_counter()
    state = _Replay(ordered, pods, policy, typ, rng, tie_break)
    total_milli = pods.num_gpu * pods.gpu_milli
    arrived = np.zeros(len(order) + 1, dtype=np.int64)
    used = np.zeros(len(order) + 1, dtype=np.int64)
    node_of = np.full(len(order), -1, dtype=np.int64)
    devices_of = []
    a = u = 0
    for k, i in enumerate(order):
        i = int(i)
        a += int(total_milli[i])
        n, devs = state.place(i)
        node_of[k] = by_name[n] if n >= 0 else -1
        devices_of.append(devs)
        if n >= 0:
            u += len(devs) * int(pods.gpu_milli[i])
        arrived[k + 1], used[k + 1] = a, u
    seconds = time.perf_counter() - t0
    g = nodes.gpus
    rank = np.empty_like(by_name)
    rank[by_name] = np.arange(len(by_name))
    final = dataclasses.replace(g, milli_used=np.where(g.healthy, MILLI - state.free[rank[g.node], g.index],
                                                       g.milli_used))
    return ReplayResult(trace=trace, policy=policy, seed=seed, pods=len(order), placed=int((node_of >= 0).sum()),
                        seconds=seconds, gpu_capacity_milli=capacity, arrived_milli=arrived, used_milli=used,
                        pod_rows=order, node_of=node_of, devices_of=devices_of, gpus=final,
                        node_names=nodes.names)
