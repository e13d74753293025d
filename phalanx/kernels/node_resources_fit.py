"""NodeResourcesFit: the resource Filter and the LeastAllocated / MostAllocated / RequestedToCapacityRatio scores.

Upstream: pkg/scheduler/framework/plugins/noderesources/{fit,least_allocated,most_allocated,
requested_to_capacity_ratio,resource_allocation}.go.
"""
from __future__ import annotations

from .backend import round_half_away_div, trunc_div
from .status import MAX_NODE_SCORE, SUCCESS, UNSCHEDULABLE, UNSCHEDULABLE_AND_UNRESOLVABLE

TOO_MANY_PODS_BIT = 0          # reason bit 0; insufficient resource column r is bit r + 1
MAX_RESOURCE_COLUMNS = 62      # reasons are one int64 bitmask per node
MAX_CUSTOM_PRIORITY_SCORE = 10  # RequestedToCapacityRatio shape scores are 0..10, scaled to 0..100


def fit_filter(xp, allocatable, requested, pod_count, allowed_pods, request):
    """Per-node (code, reasons) for a pod requesting `request` (R,) on nodes with free = allocatable - requested.

    allocatable, requested: (N, R) int64; pod_count, allowed_pods: (N,) int64; request: (R,) int64.
    A resource the pod does not request is never insufficient, even on an overcommitted node.
    """
    too_many = pod_count + 1 > allowed_pods
    wanted = request > 0
    insufficient = wanted & (request > allocatable - requested)
    # More than the node could ever offer: no eviction can help.
    unresolvable = (wanted & (request > allocatable)).any(axis=1)
    bits = xp.asarray([1 << (r + 1) for r in range(allocatable.shape[1])], dtype=xp.int64)
    reasons = xp.where(too_many, 1 << TOO_MANY_PODS_BIT, 0) | xp.sum(xp.where(insufficient, bits, 0), axis=1)
    failed = too_many | insufficient.any(axis=1)
    code = xp.where(failed, xp.where(unresolvable, UNSCHEDULABLE_AND_UNRESOLVABLE, UNSCHEDULABLE), SUCCESS)
    return code.astype(xp.int8), reasons.astype(xp.int64)


def fit_capacity(xp, allocatable, requested, pod_count, allowed_pods, request):
    """How many more copies of the pod each node can take before fit_filter fails: (N,) int64."""
    by_pods = xp.maximum(allowed_pods - pod_count, 0)
    wanted = request > 0
    free = xp.maximum(allocatable - requested, 0)
    per_resource = xp.where(wanted, free // xp.where(wanted, request, 1), by_pods[:, None])
    return xp.minimum(by_pods, xp.min(per_resource, axis=1))


def least_allocated(xp, requested, allocatable, weights):
    """requested, allocatable: (..., k) int64 after placing the pod; weights: (k,) int64. -> (...) int64.

    A resource with allocatable 0 is left out, weight included.
    """
    valid = allocatable != 0
    safe = xp.where(valid, allocatable, 1)
    per = xp.where(requested > allocatable, 0, ((allocatable - requested) * MAX_NODE_SCORE) // safe)
    return _weighted_mean(xp, per, valid, weights)


def most_allocated(xp, requested, allocatable, weights):
    valid = allocatable != 0
    safe = xp.where(valid, allocatable, 1)
    per = (xp.minimum(requested, allocatable) * MAX_NODE_SCORE) // safe
    return _weighted_mean(xp, per, valid, weights)


def _weighted_mean(xp, per, valid, weights):
    total = xp.sum(xp.where(valid, per * weights, 0), axis=-1)
    wsum = xp.sum(xp.where(valid, weights, 0), axis=-1)
    return xp.where(wsum == 0, 0, total // xp.maximum(wsum, 1))


def broken_linear(xp, shape, utilization):
    """helper.BuildBrokenLinearFunction on already scaled (utilization, score) points; Go truncating division."""
    out = xp.full(utilization.shape, shape[-1][1], dtype=xp.int64)
    # Walk the segments from the last so the first segment whose end bounds p wins.
    for i in range(len(shape) - 1, -1, -1):
        u, s = shape[i]
        if i == 0:
            value = xp.full(utilization.shape, s, dtype=xp.int64)
        else:
            u0, s0 = shape[i - 1]
            value = s0 + trunc_div(xp, (s - s0) * (utilization - u0), xp.asarray(u - u0, dtype=xp.int64))
        out = xp.where(utilization <= u, value, out)
    return out


def requested_to_capacity_ratio(xp, requested, allocatable, weights, shape):
    """shape: ((utilization, score 0..10), ...) as configured; scores are scaled to 0..100 first."""
    scaled = tuple((u, s * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for u, s in shape)
    valid = allocatable != 0
    safe = xp.where(valid, allocatable, 1)
    over = requested > allocatable
    utilization = xp.where(over, 100, (requested * 100) // safe)
    per = broken_linear(xp, scaled, utilization)
    counted = valid & (per > 0)
    total = xp.sum(xp.where(counted, per * weights, 0), axis=-1)
    wsum = xp.sum(xp.where(counted, weights, 0), axis=-1)
    return xp.where(wsum == 0, 0, round_half_away_div(total, xp.maximum(wsum, 1)))


def fit_score(xp, strategy, requested, allocatable, weights, shape=()):
    if strategy == "LeastAllocated":
        return least_allocated(xp, requested, allocatable, weights)
    if strategy == "MostAllocated":
        return most_allocated(xp, requested, allocatable, weights)
    return requested_to_capacity_ratio(xp, requested, allocatable, weights, shape)
