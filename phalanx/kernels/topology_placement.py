"""Topology-aware workload scheduling (KEP-5732): placements as node-label domains, and the placement scores.

Upstream: pkg/scheduler/framework/plugins/topologyaware (TopologyPlacement generates one placement per value of
the constraint's node label), noderesources ScorePlacement (MostAllocated over the placement's nodes, the
group's pods included) and podgrouppodscount (pods the placement takes, normalized to the best placement).
All placements are scored at once: per-node terms are summed per domain, then scored per domain.
"""
from __future__ import annotations

from .backend import bincount
from .node_resources_fit import most_allocated
from .status import MAX_NODE_SCORE


def domains(xp, labels, key: int):
    """(N,) int64 domain (label value id) of each node for label key column `key`; -1 where the label is absent
    (or the key is unknown: key < 0). Such nodes are in no placement."""
    n = labels.shape[0]
    if key < 0 or key >= labels.shape[1]:
        return xp.full((n,), -1, dtype=xp.int64)
    return labels[:, key].astype(xp.int64)


def placement_allocation(xp, alloc, load, domain, n_domains: int):
    """Per-domain sums of the nodes' allocatable and allocated amounts, one (D,) pair per configured resource.

    alloc, load: one (N,) int64 array per resource (node_load: cpu/memory allocated as NonZeroRequested);
    domain: (N,) int64, -1 outside every placement. A node with allocatable 0 for a resource adds nothing to that
    resource (upstream skips it), so its load is masked with its allocatable.
    """
    out_alloc, out_load = [], []
    for a, used in zip(alloc, load):
        out_alloc.append(bincount(xp, domain, a, n_domains))
        out_load.append(bincount(xp, domain, xp.where(a > 0, used, 0), n_domains))
    return out_alloc, out_load


def placement_fit_score(xp, group_request, domain_alloc, domain_load, weights):
    """NodeResourcesFit ScorePlacement: MostAllocated of (nodes' allocated + the group's requests placed in the
    placement) over the placement's allocatable, per configured resource, weighted integer mean. (D,) int64.

    group_request: one (D,) int64 array per resource (the placed pods' requests, non-zero defaulted for
    cpu/memory); a resource the configuration skips has domain_alloc 0 and drops out with its weight."""
    requested = [g + used for g, used in zip(group_request, domain_load)]
    return most_allocated(xp, requested, domain_alloc, weights)


def pods_count_score(xp, pods):
    """PodGroupPodsCount, normalized: pods (bound members + members placed) per placement * 100 / the best
    placement's count. (D,) int64; every entry must be a feasible placement (the best count is > 0)."""
    best = xp.max(pods)
    return pods * MAX_NODE_SCORE // xp.maximum(best, 1)
