"""Capacity questions on a cluster state (`phalanx capacity`): can n copies of a pod shape be placed now, in one
domain of a topology label or anywhere; if not, how many fit per domain and what binds; how much GPU capacity sits
in domains where no pending PodGroup fits; which pending PodGroups would fit once named workloads are evicted.

Copies per node are what the batch path counts (cycle.copy_capacity): every Filter of the profile runs once on the
current state, and the NODE_LOCAL ones (NodeResourcesFit's resources and pod count) say how many copies each
feasible node takes. Filters whose verdict moves with every copy (PER_POD: inter-pod anti-affinity on a key wider
than a node, topology spreading) are judged for the first copy only; the answer then says so.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..cluster_models import Pod
from ..cluster_models.gpus import NVIDIA_GPU
from ..plugins.framework import NODE_LOCAL, PER_POD
from .cycle import copy_capacity, prepare, run_filters
from .messages import reason_histogram
from .scheduler import Scheduler

WHOLE_CLUSTER = "(whole cluster)"


@dataclass
class DomainFit:
    domain: str          # the topology label's value, or WHOLE_CLUSTER
    nodes: int           # nodes of the domain
    copies: int          # copies of the pod the domain takes now
    free_gpus: int       # nvidia.com/gpu not requested on its nodes


@dataclass
class Answer:
    """Whether `count` copies of a pod fit now, and the per-domain detail."""
    pod: str                         # the shape's description
    count: int
    key: str | None                  # topology label key (None: the whole cluster is one domain)
    fits: bool
    where: str | None                # the domain with the most room among those that fit (ties: name order)
    domains: list[DomainFit]         # every domain, most copies first
    total: int                       # copies the whole cluster takes (domains together)
    rejected: dict[str, int]         # for nodes taking no copy: Filter reason -> nodes (the FitError's reasons)
    limited_by: dict[str, int]       # for nodes taking some: the resource that runs out first -> nodes
    approximate: list[str] = field(default_factory=list)   # Filters judged for the first copy only

    def summary(self) -> str:
        scope = f"one {self.key} domain" if self.key else "the cluster"
        head = (f"{self.count} x {self.pod}: fits in {scope}" + (f" ({self.where})" if self.key else "")
                if self.fits else f"{self.count} x {self.pod}: does not fit in {scope}")
        lines = [head + f"; {self.total:,} cop{'y' if self.total == 1 else 'ies'} fit in all"]
        for d in self.domains[:10]:
            lines.append(f"  {d.domain:<24} {d.nodes:>6} nodes  {d.copies:>7,} copies  {d.free_gpus:>7,} free GPUs")
        if len(self.domains) > 10:
            lines.append(f"  ... {len(self.domains) - 10} more domains")
        if self.rejected:
            lines.append("nodes taking no copy: " + ", ".join(f"{n:,} {r}" for r, n in self.rejected.items()))
        if self.limited_by:
            lines.append("on the others, what runs out first: "
                         + ", ".join(f"{r} on {n:,} nodes" for r, n in self.limited_by.items()))
        if self.approximate:
            lines.append(f"judged for the first copy only: {', '.join(self.approximate)}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {"pod": self.pod, "count": self.count, "key": self.key, "fits": self.fits, "where": self.where,
                "total": self.total, "domains": [d.__dict__ for d in self.domains], "rejected": self.rejected,
                "limited_by": self.limited_by, "approximate": self.approximate}


def copies_per_node(scheduler: Scheduler, pod: Pod, most: int) -> tuple[np.ndarray, object, object]:
    """((N,) int64 copies of `pod` each node takes now, at most `most`; the prepared shape; its evaluation)."""
    shape = scheduler.shape_of(pod)
    placer = scheduler.placer_for(pod)
    cluster = scheduler.cluster
    scheduler.cluster.grow_vocabularies([(pod, shape)])
    p = prepare(shape, cluster, placer.framework)
    ev = run_filters(np, p, cluster.tensors)
    if p.rejection is not None or p.error is not None or ev.error is not None:
        return np.zeros(cluster.tensors.nodes.size, np.int64), p, ev
    cap = np.asarray(copy_capacity(np, p, cluster.tensors, most))
    return np.where(np.asarray(ev.feasible), np.minimum(cap, most), 0).astype(np.int64), p, ev


def _domains(tensors, key: str | None) -> tuple[np.ndarray, list[str]]:
    """((N,) domain id per node, -1 without the label; domain names)."""
    n = tensors.nodes.size
    if key is None:
        return np.zeros(n, np.int64), [WHOLE_CLUSTER]
    k = tensors.node_labels.keys.get(key)
    if k < 0:
        return np.full(n, -1, np.int64), []
    values = tensors.nodes.labels[:, k].astype(np.int64)
    return values, list(tensors.node_labels.values[k].items)


def _free_gpus(tensors) -> np.ndarray:
    col = tensors.resources.get(NVIDIA_GPU)
    if col < 0:
        return np.zeros(tensors.nodes.size, np.int64)
    return np.maximum(tensors.nodes.allocatable[:, col] - tensors.nodes.requested[:, col], 0)


def answer(scheduler: Scheduler, pod: Pod, count: int, key: str | None, describe: str) -> Answer:
    """Can `count` copies of `pod` be placed now (in one domain of label `key`, or anywhere)?"""
    tensors = scheduler.cluster.tensors
    copies, p, ev = copies_per_node(scheduler, pod, count)
    domain, names = _domains(tensors, key)
    keyed = domain >= 0
    per_domain = np.bincount(domain[keyed], weights=copies[keyed], minlength=len(names)).astype(np.int64)
    nodes = np.bincount(domain[keyed], minlength=len(names))
    gpus = np.bincount(domain[keyed], weights=_free_gpus(tensors)[keyed], minlength=len(names)).astype(np.int64)
    fits = [DomainFit(names[d], int(nodes[d]), int(per_domain[d]), int(gpus[d])) for d in range(len(names))
            if nodes[d]]
    fits.sort(key=lambda d: (-d.copies, d.domain))
    total = int(per_domain.sum())
    where = next((d.domain for d in fits if d.copies >= count), None)
    rejected: dict[str, int] = {}
    if p.rejection is not None:
        rejected[p.rejection] = tensors.nodes.size
    elif p.error is not None or ev.error is not None:
        rejected[p.error or ev.error] = tensors.nodes.size
    else:
        hist = reason_histogram(scheduler.placer_for(pod).framework, ev, tensors)
        rejected = dict(sorted(hist.items(), key=lambda kv: -kv[1]))
    limited = _limited_by(tensors, p, copies, count)
    approximate = sorted(plugin.name for plugin, state in p.filters if plugin.filter_behaviour(state) == PER_POD)
    return Answer(describe, count, key, where is not None, where, fits, total, rejected, limited, approximate)


def _limited_by(tensors, p, copies: np.ndarray, count: int) -> dict[str, int]:
    """For nodes taking some copies but fewer than `count`: which resource (or the pod count) runs out first."""
    rows = np.flatnonzero((copies > 0) & (copies < count))
    if not len(rows) or not any(plugin.filter_behaviour(state) == NODE_LOCAL for plugin, state in p.filters):
        return {}
    nodes = tensors.nodes
    names = list(tensors.resources.items)
    request = np.zeros(len(names), np.int64)
    request[: len(p.request)] = p.request[: len(names)]
    asked = np.flatnonzero(request > 0)
    free = nodes.allocatable[rows][:, asked] - nodes.requested[rows][:, asked]
    per_resource = free // request[asked]
    slots = (nodes.allowed_pods[rows] - nodes.pod_count[rows])[:, None]
    table = np.concatenate([per_resource, slots], axis=1)
    labels = [names[i] for i in asked] + ["pods"]
    first = np.argmin(table, axis=1)
    out = {labels[i]: int(c) for i, c in enumerate(np.bincount(first, minlength=len(labels))) if c}
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


@dataclass
class GroupFit:
    group: str           # namespace/name of a pending PodGroup
    needed: int          # members still to place for minCount
    key: str | None      # its topology key (or the question's)
    domains: list[str]   # domains (or WHOLE_CLUSTER) where it fits now


def pending_groups(scheduler: Scheduler, default_key: str | None) -> list[GroupFit]:
    """Each PodGroup with pending members: where its remaining minCount fits now (copies of its first pending
    member; members of one group are alike in the usual Job and training templates)."""
    cluster = scheduler.cluster
    pending: dict[str, list[Pod]] = {}
    for pod in cluster.pending:
        ref = pod.spec.scheduling_group
        if ref is not None:
            pending.setdefault(f"{pod.metadata.namespace}/{ref.pod_group_name}", []).append(pod)
    bound: dict[str, int] = {}
    for pod, _ in cluster.tensors.live_bound():
        ref = pod.spec.scheduling_group
        if ref is not None:
            k = f"{pod.metadata.namespace}/{ref.pod_group_name}"
            bound[k] = bound.get(k, 0) + 1
    out = []
    for group in cluster.pod_groups:
        members = pending.get(group.key)
        if not members:
            continue
        needed = max(group.spec.scheduling_policy.min_count - bound.get(group.key, 0), 1)
        keys = group.spec.topology_keys
        key = keys[0] if keys else default_key
        copies, _, _ = copies_per_node(scheduler, members[0], needed)
        domain, names = _domains(cluster.tensors, key)
        keyed = domain >= 0
        per_domain = np.bincount(domain[keyed], weights=copies[keyed], minlength=len(names))
        out.append(GroupFit(group.key, needed, key, [names[d] for d in np.flatnonzero(per_domain >= needed)]))
    return out


def stranded_gpus(scheduler: Scheduler, groups: list[GroupFit], key: str | None) -> dict[str, int]:
    """Free GPUs per domain of `key` where none of the pending groups fits (all domains when none is pending)."""
    tensors = scheduler.cluster.tensors
    domain, names = _domains(tensors, key)
    keyed = domain >= 0
    gpus = np.bincount(domain[keyed], weights=_free_gpus(tensors)[keyed], minlength=len(names)).astype(np.int64)
    served = {d for g in groups if g.key == key for d in g.domains}
    return {names[d]: int(gpus[d]) for d in range(len(names)) if gpus[d] and names[d] not in served}
