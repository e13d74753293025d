"""Placing a run of identical pods: the per-pod path and the exact batch path (opportunistic batching).

Both make the same decisions: each pod takes the best node of the current state, then that node's load
grows. A run stops at its first pod that fits nowhere; the rest of the run would meet the same state and
fail the same way (KEP-4671: "rejecting all subsequent pods from the same homogeneous sub-group").
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..cluster_models import Pod
from ..kernels import node_resources_fit
from ..kernels.batch import NEVER, contenders, fill_times, normalization_epoch_end, pick_order
from ..kernels.normalize import default_normalize
from ..kernels.select import num_feasible_nodes_to_find, sample_feasible, select_best
from .cluster import Cluster
from .config import Profile
from .cycle import (NORMALIZED_REVERSED, BalanceCache, RESOURCE_SCORES, Evaluation, Prepared, prepare, resource_loads,
                    resource_score, run_filters, run_scores, static_raw_scores)
from .messages import fit_error, reason_histogram
from .shapes import PodShape

NO_NODES_MESSAGE = "no nodes available to schedule pods"                     # ErrNoNodesAvailable
# Largest (candidates x copies x resources) block of resource scores evaluated at once by the batch path.
_BLOCK_ELEMENTS = 1 << 22


@dataclass
class Placement:
    """Load added to the node table for some pods of one shape; enough to undo it exactly."""
    pods: list[Pod]
    node_ids: np.ndarray             # (k,) int64 node id per pod
    request: np.ndarray              # (R,) int64
    nonzero: np.ndarray              # (2,) int64
    ports: list[int]                 # host-port columns
    ports_before: np.ndarray | None  # (k, len(ports)) bool host-port cells before
    claims: object = None            # claims.ClaimUndo: the DRA claims this (one-pod) placement used/allocated
    gpus: object = None              # gpushare.GpuUndo: the GPU share this (one-pod) placement took


@dataclass
class RunOutcome:
    placed: list[Placement] = field(default_factory=list)
    failed: list[Pod] = field(default_factory=list)
    message: str = ""                # why `failed` fit nowhere
    pod_cycles: int = 0              # per-pod evaluations over all nodes
    batch_rounds: int = 0            # batch evaluations over all nodes (each places many pods)


class Placer:
    """Filter/score evaluation and placement of pod runs on one cluster's tensors."""

    def __init__(self, cluster: Cluster, profile: Profile, xp, batching: bool):
        self.cluster = cluster
        self.profile = profile
        self.xp = xp
        self.batching = batching
        self.next_start = 0          # nextStartNodeIndex, used when percentageOfNodesToScore < 100
        self.balance_cache = BalanceCache()

    def place_run(self, shape: PodShape, pods: list[Pod], rank: np.ndarray) -> RunOutcome:
        out = RunOutcome()
        if self.batching and len(pods) > 1 and self._batchable(shape):
            self._place_batch(shape, pods, rank, out)
            return out
        for i, pod in enumerate(pods):
            p, ev, node = self.evaluate(shape, rank)
            out.pod_cycles += 1
            if node < 0:
                out.failed, out.message = pods[i:], self.message(ev)
                break
            pl = self.account(p, np.array([node]), [pod])
            if p.dra is not None:    # DynamicResources: the pod's claims, allocated on its node (undone with pl)
                pl.claims = self.cluster.claims.allocate(p.dra, node, ev.dra_assign)
            if p.gpu is not None:    # GpuShare: the pod's devices on its node, best fit (undone with pl)
                pl.gpus = self.cluster.gpus.allocate(p.gpu, node, pod.key)
            out.placed.append(pl)
        return out

    def nodes_changed(self) -> None:
        """Node rows were added, rewritten or removed: drop what was derived from them."""
        self.balance_cache = BalanceCache()

    def _batchable(self, shape: PodShape) -> bool:
        n = self.cluster.tensors.nodes.size
        # Pods with DRA claims are their own shapes (shapes.signature) and never batched: claims are per pod.
        # GPU-share pods are placed per pod too: devices are chosen per pod (sched/gpushare.py).
        return (not shape.has_spread and not shape.has_claims and shape.gpu is None
                and num_feasible_nodes_to_find(self.profile.percentage_of_nodes_to_score, n) == n)

    # -- per-pod path ----------------------------------------------------------------------------
    def evaluate(self, shape: PodShape, rank=None, advance: bool = True) -> tuple[Prepared, Evaluation, int]:
        """Filter and score one pod of `shape` against the current state; returns the chosen node or -1.
        advance=False leaves nextStartNodeIndex where it is (explain is a what-if, not a cycle)."""
        xp, tensors = self.xp, self.cluster.tensors
        p = prepare(shape, tensors, self.profile)
        if shape.has_claims:        # DynamicResources: this pod's claim state (sched/claims.py)
            p = self.cluster.claims.with_claims(p, shape.pod)
        if shape.gpu is not None:   # GpuShare: the device table's current free milli (sched/gpushare.py)
            p = self.cluster.gpus.with_gpus(p, shape)
        ev = run_filters(xp, p, tensors)
        n = tensors.nodes.size
        wanted = num_feasible_nodes_to_find(self.profile.percentage_of_nodes_to_score, n)
        if wanted < n:
            sampled, visited = sample_feasible(xp, ev.feasible, self.next_start, wanted)
            if advance:
                self.next_start = (self.next_start + int(visited)) % n
            ev.feasible = sampled
        if not bool(xp.any(ev.feasible)) or self._prescore_error(p, ev):
            return p, ev, -1
        run_scores(xp, p, tensors, ev, self.profile, self.balance_cache)
        rank = np.arange(n) if rank is None else rank
        return p, ev, int(select_best(xp, ev.total, ev.feasible, xp.asarray(rank)))

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

    def account(self, p: Prepared, node_ids: np.ndarray, pods: list[Pod]) -> Placement:
        tensors = self.cluster.tensors
        ports = [tensors.port_column(port) for port in p.shape.host_ports]
        before = tensors.account(node_ids, p.request, p.shape.nonzero, ports)
        tensors.record_bound(pods, node_ids)
        return Placement(pods, node_ids, p.request, p.shape.nonzero, ports, before)

    def undo(self, placements: list[Placement], log_mark: int, keep: int = 0) -> None:
        """Take placements back off the node table, newest first, except the first `keep` pods, and cut the
        binding log back to just after them (log_mark: the log's end before the placements)."""
        tensors = self.cluster.tensors
        ends = np.cumsum([len(pl.pods) for pl in placements])
        for pl, end in zip(reversed(placements), reversed(ends.tolist())):
            start = end - len(pl.pods)
            if end <= keep:
                break
            cut = max(keep - start, 0)
            if cut and pl.ports:
                raise ValueError("cannot split a placement with host ports")
            before = pl.ports_before[cut:] if pl.ports_before is not None else None
            tensors.unaccount(pl.node_ids[cut:], pl.request, pl.nonzero, pl.ports, before)
            if pl.claims is not None:      # one-pod placements only: claim shapes are never batched
                self.cluster.claims.undo(pl.claims)
            if pl.gpus is not None:        # one-pod placements only, like claims
                self.cluster.gpus.undo(pl.gpus)
        tensors.truncate_log(log_mark + keep)

    # -- batch path ------------------------------------------------------------------------------
    def _place_batch(self, shape: PodShape, members: list[Pod], rank: np.ndarray, out: RunOutcome) -> None:
        xp, tensors, profile = self.xp, self.cluster.tensors, self.profile
        remaining = members
        while remaining:
            p = prepare(shape, tensors, profile)
            ev = run_filters(xp, p, tensors)
            out.batch_rounds += 1
            cand_nodes = np.flatnonzero(np.asarray(ev.feasible))
            if len(cand_nodes) == 0 or self._prescore_error(p, ev):
                out.failed, out.message = remaining, self.message(ev)
                return
            k = len(remaining)
            cap = copy_capacity(np, p, tensors.nodes, p.fit_request, k)[cand_nodes]
            static_total, holders = fixed_scores(np, p, tensors, ev.feasible)
            static_total, holders = static_total[cand_nodes], [h[cand_nodes] for h in holders]
            # Only nodes whose first copy ranks among the k best can take any of the k pods.
            sub = contenders(np, self._totals(p, cand_nodes, 1, static_total)[:, 0], rank[cand_nodes], k)
            copies = int(min(cap[sub].max(), k))
            totals = self._totals(p, cand_nodes[sub], copies, static_total[sub])
            cand, copy, count = pick_order(np, totals, cap[sub], rank[cand_nodes[sub]], k)
            count = int(count)
            cand, copy = cand[:count], copy[:count]
            fill_t = np.full(len(cand_nodes), NEVER, np.int64)
            fill_t[sub] = fill_times(np, cand, copy, cap[sub], len(sub))
            take = min(count, int(normalization_epoch_end(np, fill_t, holders)) + 1)
            out.placed.append(self.account(p, cand_nodes[sub[cand[:take]]], remaining[:take]))
            remaining = remaining[take:]

    def _totals(self, p: Prepared, cand_nodes: np.ndarray, copies: int, static_total: np.ndarray) -> np.ndarray:
        """(C, copies) int64 total score of the j-th further copy on each candidate, in blocks of copies."""
        step = max(1, _BLOCK_ELEMENTS // max(1, len(cand_nodes)))
        return np.concatenate([
            copy_totals(np, p, self.profile, self.cluster.tensors, cand_nodes, static_total,
                        np.arange(j0 + 1, min(copies, j0 + step) + 1)[None, :])
            for j0 in range(0, copies, step)], axis=1)


# -- the batch path's per-round quantities, over all nodes; the numpy Placer and the compiled JAX rounds
# (sched/jax_placer.py) share them -------------------------------------------------------------------------
def copy_capacity(xp, p: Prepared, nodes, fit_request, default: int):
    """(N,) int64 copies of the pod each node takes before a filter rejects it (the filters that can change with
    placements of this very shape: resources, pod count, host ports); `default` where none of them runs."""
    cap = xp.full((nodes.allocatable.shape[0],), default, dtype=xp.int64)
    if "NodeResourcesFit" in p.filters:
        cap = node_resources_fit.fit_capacity(xp, nodes.allocatable, nodes.requested, nodes.pod_count,
                                              nodes.allowed_pods, fit_request, p.fit_columns)
    if "NodePorts" in p.filters:
        cap = xp.minimum(cap, 1)     # a second copy would clash with the first one's host ports
    return cap


def fixed_scores(xp, p: Prepared, tensors, feasible):
    """The weighted normalized scores that stay fixed while the feasible set keeps its maxima ((N,) int64), and
    per such plugin the feasible nodes holding its maximum ((N,) bool; none when the maximum is 0)."""
    weights = dict(p.scores)
    total = xp.zeros((feasible.shape[0],), dtype=xp.int64)
    holders = []
    for plugin, raw in static_raw_scores(xp, p, tensors).items():
        total = total + weights[plugin] * default_normalize(xp, raw, feasible, NORMALIZED_REVERSED[plugin])
        top = xp.max(xp.where(feasible, raw, 0))          # raw scores are never negative
        holders.append(feasible & (raw == top) & (top > 0))
    return total, holders


def copy_totals(xp, p: Prepared, profile: Profile, tensors, rows, static_total, copies):
    """(len(rows), J) int64 total score of copy copies[0, j] (1 = the next pod) on node rows[r]; static_total:
    fixed_scores' total at those rows."""
    out = static_total[:, None] + xp.zeros(copies.shape, dtype=xp.int64)
    for plugin, weight in p.scores:
        if plugin in RESOURCE_SCORES:
            alloc, before = resource_loads(xp, p, tensors, plugin)
            out = out + weight * resource_score(xp, plugin, p, profile, [a[rows][:, None] for a in alloc],
                                                [b[rows][:, None] for b in before], copies)
    return out
