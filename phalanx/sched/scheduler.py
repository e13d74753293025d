"""The pod scheduling loop: PrioritySort queue, per-pod cycles, and opportunistic batching of identical pods.

Pods leave the queue in PrioritySort order (priority desc, then arrival). Consecutive pods with the same
shape form a run; a run whose scores depend only on each node's own state is placed by the batch path
(kernels.batch), which makes exactly the decisions of the per-pod loop; other runs go pod by pod.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..cluster_models import Pod
from ..kernels import node_resources_fit
from ..kernels.backend import namespace
from ..kernels.batch import NEVER, contenders, fill_times, normalization_epoch_end, pick_order
from ..kernels.normalize import default_normalize
from ..kernels.select import num_feasible_nodes_to_find, sample_feasible, select_best
from .cluster import Cluster
from .config import DEFAULT_PROFILE, Profile
from .cycle import (NORMALIZED_REVERSED, BalanceCache, RESOURCE_SCORES, Evaluation, Prepared, prepare, resource_loads,
                    resource_score, run_filters, run_scores, static_raw_scores)
from .messages import fit_error, reason_histogram
from .shapes import PodShape, ShapeTable

TIE_BREAKS = ("first", "random")
# The kernels take the array namespace as an argument; wiring JAX (jit, x64 scope, device state) and CuPy
# through the scheduler is the backends issue's work, so only numpy is accepted here for now.
SCHEDULER_BACKENDS = ("numpy",)
GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"   # PreEnqueue (SchedulingGates)
NO_NODES_MESSAGE = "no nodes available to schedule pods"                     # ErrNoNodesAvailable
# Largest (candidates x copies x resources) block of resource scores evaluated at once by the batch path.
_BLOCK_ELEMENTS = 1 << 22


@dataclass
class ScheduleResult:
    bindings: dict[str, str] = field(default_factory=dict)        # "ns/name" -> node
    unschedulable: dict[str, str] = field(default_factory=dict)   # "ns/name" -> FitError message
    warnings: list[str] = field(default_factory=list)
    schedule_s: float = 0.0
    pod_cycles: int = 0          # per-pod evaluations over all nodes
    batch_rounds: int = 0        # batch evaluations over all nodes (each places many pods)


class Scheduler:
    """Schedules a Cluster's pending pods with one profile on one array backend."""

    def __init__(self, cluster: Cluster, profile: Profile = DEFAULT_PROFILE, *, backend: str = "numpy",
                 tie_break: str = "first", seed: int = 0, batching: bool = True):
        if tie_break not in TIE_BREAKS:
            raise ValueError(f"tie_break must be one of {TIE_BREAKS}, got {tie_break!r}")
        if backend not in SCHEDULER_BACKENDS:
            raise ValueError(f"backend {backend!r} is not available yet; use one of {SCHEDULER_BACKENDS}")
        self.cluster = cluster
        self.profile = profile
        self.xp = namespace(backend)
        self.backend = backend
        self.tie_break = tie_break
        self.rng = np.random.default_rng(seed)
        self.batching = batching
        self.shapes = ShapeTable(profile.system_default_spreading)
        self.next_start = 0          # nextStartNodeIndex, used when percentageOfNodesToScore < 100
        self.balance_cache = BalanceCache()

    # -- queue -----------------------------------------------------------------------------------
    def _runs(self, pods: list[Pod]) -> list[tuple[PodShape, list[Pod]]]:
        prio = np.array([self.cluster.priority(p) for p in pods], np.int64)
        order = np.lexsort((np.arange(len(pods)), -prio))
        runs: list[tuple[PodShape, list[Pod]]] = []
        for i in order.tolist():
            pod = pods[i]
            shape = self.shapes.intern(pod)
            if runs and runs[-1][0] is shape:
                runs[-1][1].append(pod)
            else:
                runs.append((shape, [pod]))
        return runs

    def schedule(self) -> ScheduleResult:
        """Schedule every pending pod of the cluster; bound pods leave the pending list."""
        mine = self.profile.scheduler_name
        pods = [p for p in self.cluster.pending if p.spec.scheduler_name == mine]
        others = [p for p in self.cluster.pending if p.spec.scheduler_name != mine]
        result = ScheduleResult(warnings=list(self.cluster.warnings))
        result.warnings += [f"Pod {p.key}: spec.schedulerName {p.spec.scheduler_name!r} is not this profile's "
                            f"{mine!r}; left pending" for p in others]
        for pod in pods:
            if pod.spec.scheduling_gates:
                result.unschedulable[pod.key] = GATED_MESSAGE
        runs = self._runs([p for p in pods if not p.spec.scheduling_gates])
        for shape, members in runs:
            if shape.unmodelled:
                more = f" (+{len(members) - 1} more with the same spec)" if len(members) > 1 else ""
                result.warnings.extend(f"Pod {members[0].key}{more}: {w}" for w in shape.unmodelled)
        start = time.perf_counter()
        for shape, members in runs:
            rank = self._rank()
            if self.batching and len(members) > 1 and self._batchable(shape):
                self._place_batch(shape, members, rank, result)
            else:
                for pod in members:
                    self._place_one(shape, pod, rank, result)
        result.schedule_s = time.perf_counter() - start
        self.cluster.pending = others + ([p for p in pods if p.key in result.unschedulable]
                                         if result.unschedulable else [])
        return result

    def _rank(self) -> np.ndarray:
        n = self.cluster.tensors.nodes.size
        return np.arange(n) if self.tie_break == "first" else self.rng.permutation(n)

    def _batchable(self, shape: PodShape) -> bool:
        n = self.cluster.tensors.nodes.size
        return not shape.has_spread and num_feasible_nodes_to_find(self.profile.percentage_of_nodes_to_score, n) == n

    # -- per-pod path ----------------------------------------------------------------------------
    def evaluate(self, shape: PodShape, rank=None, advance: bool = True) -> tuple[Prepared, Evaluation, int]:
        """Filter and score one pod of `shape` against the current state; returns the chosen node or -1.
        advance=False leaves nextStartNodeIndex where it is (explain is a what-if, not a cycle)."""
        xp, tensors = self.xp, self.cluster.tensors
        p = prepare(shape, tensors, self.profile)
        ev = run_filters(xp, p, tensors)
        n = tensors.nodes.size
        wanted = num_feasible_nodes_to_find(self.profile.percentage_of_nodes_to_score, n)
        if wanted < n:
            sampled, visited = sample_feasible(xp, ev.feasible, self.next_start, wanted)
            if advance:
                self.next_start = (self.next_start + visited) % n
            ev.feasible = sampled
        if not bool(xp.any(ev.feasible)) or self._prescore_error(p, ev):
            return p, ev, -1
        run_scores(xp, p, tensors, ev, self.profile, self.balance_cache)
        rank = np.arange(n) if rank is None else rank
        return p, ev, int(select_best(xp, ev.total, ev.feasible, xp.asarray(rank)))

    def _place_one(self, shape: PodShape, pod: Pod, rank, result: ScheduleResult) -> None:
        p, ev, node = self.evaluate(shape, rank)
        result.pod_cycles += 1
        if node < 0:
            result.unschedulable[pod.key] = self.message(ev)
            return
        self._bind(p, np.array([node]), [pod], result)

    def _prescore_error(self, p: Prepared, ev: Evaluation) -> bool:
        """Upstream fails the cycle when NodeAffinity's PreScore cannot parse a preferred term; PreScore runs only
        when more than one node is feasible. The error becomes the evaluation's message."""
        error = p.affinity.preferred_error
        if error is None or "NodeAffinity" not in dict(self.profile.scores) or int(np.sum(ev.feasible)) < 2:
            return False
        ev.prescore_error = f'running PreScore plugin "NodeAffinity": {error}'
        return True

    def message(self, ev: Evaluation) -> str:
        tensors = self.cluster.tensors
        if ev.prescore_error:
            return ev.prescore_error
        if tensors.nodes.size == 0:
            return NO_NODES_MESSAGE
        hist = reason_histogram(ev.filters, ev.codes, ev.payloads, tensors, ev.outside)
        return fit_error(tensors.nodes.size, hist, ev.prefilter_message)

    def _bind(self, p: Prepared, node_ids: np.ndarray, pods: list[Pod], result: ScheduleResult) -> None:
        tensors = self.cluster.tensors
        ports = [tensors.port_column(port) for port in p.shape.host_ports]
        tensors.account(node_ids, p.request, p.shape.nonzero, ports)
        tensors.record_bound(pods, node_ids)
        names = tensors.nodes.names
        for pod, n in zip(pods, node_ids.tolist()):
            result.bindings[pod.key] = names[n]

    # -- batch path ------------------------------------------------------------------------------
    def _place_batch(self, shape: PodShape, members: list[Pod], rank: np.ndarray, result: ScheduleResult) -> None:
        xp, tensors, profile = self.xp, self.cluster.tensors, self.profile
        remaining = members
        while remaining:
            p = prepare(shape, tensors, profile)
            ev = run_filters(xp, p, tensors)
            result.batch_rounds += 1
            cand_nodes = np.flatnonzero(np.asarray(ev.feasible))
            if len(cand_nodes) == 0 or self._prescore_error(p, ev):
                message = self.message(ev)
                for pod in remaining:
                    result.unschedulable[pod.key] = message
                return
            k = len(remaining)
            cap = self._capacity(p, cand_nodes, k)
            static_total, holders = self._static_part(p, ev.feasible, cand_nodes)
            # Only nodes whose first copy ranks among the k best can take any of the k pods.
            sub = contenders(np, self._totals(p, cand_nodes, 1, static_total)[:, 0], rank[cand_nodes], k)
            copies = int(min(cap[sub].max(), k))
            totals = self._totals(p, cand_nodes[sub], copies, static_total[sub])
            cand, copy = pick_order(np, totals, cap[sub], rank[cand_nodes[sub]], k)
            fill_t = np.full(len(cand_nodes), NEVER, np.int64)
            fill_t[sub] = fill_times(np, cand, copy, cap[sub], len(sub))
            take = min(len(cand), normalization_epoch_end(np, fill_t, holders) + 1)
            self._bind(p, cand_nodes[sub[cand[:take]]], remaining[:take], result)
            remaining = remaining[take:]

    def _capacity(self, p: Prepared, cand_nodes: np.ndarray, wanted: int) -> np.ndarray:
        """(C,) copies of the pod each feasible node takes before a filter rejects it (the filters that can
        change with placements of this very shape: resources, pod count, host ports)."""
        nodes = self.cluster.tensors.nodes
        cap = np.full(len(cand_nodes), wanted, np.int64)
        if "NodeResourcesFit" in p.filters:
            cap = node_resources_fit.fit_capacity(np, nodes.allocatable, nodes.requested, nodes.pod_count,
                                                  nodes.allowed_pods, p.fit_request)[cand_nodes]
        if "NodePorts" in p.filters:
            cap = np.minimum(cap, 1)     # a second copy would clash with the first one's host ports
        return cap

    def _static_part(self, p: Prepared, feasible, cand_nodes: np.ndarray):
        """Weighted normalized scores that stay fixed while the feasible set keeps its maxima, per candidate,
        and for each such plugin with a positive maximum the candidates holding it."""
        xp, weights = self.xp, dict(p.scores)
        raw = static_raw_scores(xp, p, self.cluster.tensors)
        static_total = np.zeros(len(cand_nodes), np.int64)
        holders = []
        for plugin, reverse in NORMALIZED_REVERSED.items():
            if plugin not in raw:
                continue
            mine = np.asarray(raw[plugin])[cand_nodes]
            static_total += weights[plugin] * np.asarray(default_normalize(xp, raw[plugin], feasible, reverse))[cand_nodes]
            top = mine.max()
            if top > 0:
                holders.append(mine == top)
        return static_total, holders

    def _totals(self, p: Prepared, cand_nodes: np.ndarray, copies: int, static_total: np.ndarray) -> np.ndarray:
        """(C, copies) int64 total score of the j-th further copy on each candidate."""
        xp, tensors = self.xp, self.cluster.tensors
        totals = np.repeat(static_total[:, None], copies, axis=1)
        step = max(1, _BLOCK_ELEMENTS // max(1, len(cand_nodes)))
        for plugin, weight in p.scores:
            if plugin not in RESOURCE_SCORES:
                continue
            alloc, before = resource_loads(xp, p, tensors, plugin)
            alloc = [a[cand_nodes, None] for a in alloc]
            before = [b[cand_nodes, None] for b in before]
            for j0 in range(0, copies, step):
                j = np.arange(j0 + 1, min(copies, j0 + step) + 1)[None, :]
                totals[:, j0:j0 + j.shape[1]] += weight * resource_score(np, plugin, p, self.profile, alloc, before, j)
        return totals
