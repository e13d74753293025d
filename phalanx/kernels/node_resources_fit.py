"""NodeResourcesFit: the resource Filter and the LeastAllocated / MostAllocated / RequestedToCapacityRatio scores.

Upstream: pkg/scheduler/framework/plugins/noderesources/{fit,least_allocated,most_allocated,
requested_to_capacity_ratio,resource_allocation}.go.
"""
from __future__ import annotations

import numpy as np

from .backend import round_half_away_div, score_div, trunc_div
from .status import MAX_NODE_SCORE, SUCCESS, UNSCHEDULABLE

TOO_MANY_PODS_BIT = 0          # reason bit 0; insufficient resource column r is bit r + 1
MAX_RESOURCE_COLUMNS = 62      # reasons are one int64 bitmask per node
MAX_CUSTOM_PRIORITY_SCORE = 10  # RequestedToCapacityRatio shape scores are 0..10, scaled to 0..100


def fit_filter(xp, allocatable, requested, pod_count, allowed_pods, request, columns=None, delegated=()):
    """Per-node (code, reasons) for a pod requesting `request` (R,) on nodes with free = allocatable - requested.

    allocatable, requested: (N, R) int64; pod_count, allowed_pods: (N,) int64; request: (R,) int64 host array
    (static per pod shape: only the resources the pod asks for are looked at). A resource the pod does not
    request is never insufficient, even on an overcommitted node. columns: the requested columns, when
    `request` is a device array (its values then stay run-time inputs); default: read from `request`.
    delegated: columns of extended resources a DeviceClass backs (DRAExtendedResource): on a node whose allocatable
    is 0 DynamicResources provides them, so they are not checked there (shouldDelegateResourceToDRA).
    """
    # Arithmetic on the masks rather than where() with scalars: a few rows per call on the kept-shape path, where
    # numpy's per-call cost is the whole cost.
    # (pod_count + 1 > allowed_pods for integers; a bool times a Python int is that int where true, as int64)
    failed = pod_count >= allowed_pods
    reasons = failed * (1 << TOO_MANY_PODS_BIT)
    unresolvable = None
    for r in _wanted(request) if columns is None else columns:
        want = request[r]
        capacity = allocatable[:, r]
        short = want > capacity - requested[:, r]
        # More than the node could ever offer: no eviction can help.
        over = want > capacity
        if r in delegated:
            short, over = short & (capacity > 0), over & (capacity > 0)
        reasons = reasons | short * (1 << (r + 1))
        failed = failed | short
        unresolvable = over if unresolvable is None else unresolvable | over
    # SUCCESS (0) where nothing failed, else UNSCHEDULABLE, or UNSCHEDULABLE_AND_UNRESOLVABLE (the next code) where
    # more is asked than the node could ever offer
    code = failed if unresolvable is None else failed * (UNSCHEDULABLE + unresolvable)
    return code.astype(xp.int8), reasons


def fit_filter_few(allocatable, requested, pod_count, allowed_pods, request, columns=None, delegated=()):
    """fit_filter on a few nodes, host side in plain Python: numpy arrays in, fit_filter's (code, reasons) out. On
    the kept-shape path's few changed rows numpy's per-call cost is many times the comparisons. The values are
    exact int64 quantities (no difference of two of them leaves int64), so Python's integers compare as numpy's."""
    wanted = [(r, int(request[r]), 1 << (r + 1), r in delegated)
              for r in (_wanted(request) if columns is None else columns)]
    codes, reasons = [], []
    for alloc, used, pods, allowed in zip(allocatable.tolist(), requested.tolist(), pod_count.tolist(),
                                          allowed_pods.tolist()):
        failed = pods + 1 > allowed
        bits = int(failed) << TOO_MANY_PODS_BIT
        unresolvable = False
        for r, want, bit, dra in wanted:
            if dra and alloc[r] == 0:
                continue
            if want > alloc[r] - used[r]:
                bits |= bit
                failed = True
            unresolvable = unresolvable or want > alloc[r]
        codes.append(UNSCHEDULABLE + unresolvable if failed else SUCCESS)
        reasons.append(bits)
    return np.array(codes, np.int8), np.array(reasons, np.int64)


def wanted_columns(request) -> tuple[int, ...]:
    """The resource columns a (host) request vector asks for."""
    return tuple(_wanted(request))


def _wanted(request) -> list[int]:
    if len(request) > MAX_RESOURCE_COLUMNS:
        raise ValueError(f"at most {MAX_RESOURCE_COLUMNS} resource columns are supported")
    return [r for r in range(len(request)) if request[r] > 0]


def fit_capacity(xp, allocatable, requested, pod_count, allowed_pods, request, columns=None, delegated=()):
    """How many more copies of the pod each node can take before fit_filter fails: (N,) int64."""
    cap = xp.maximum(allowed_pods - pod_count, 0)
    for r in _wanted(request) if columns is None else columns:
        fits = xp.maximum(allocatable[:, r] - requested[:, r], 0) // request[r]
        cap = xp.minimum(cap, xp.where(allocatable[:, r] > 0, fits, cap) if r in delegated else fits)
    return cap


# The scores below take one array per configured resource (k of them, each of the same shape: (N,) for one
# pod, (C, J) for J further copies in the batch path) and the weights as Python ints. Allocatable amounts are
# never negative (the loader rejects them, as API validation does), so max(allocatable, 1) is a safe divisor
# that only differs where allocatable is 0, and those resources are left out.

def least_allocated(xp, requested, allocatable, weights):
    """requested: load after placing the pod; a resource with allocatable 0 is left out, weight included."""
    per, valid = [], []
    for req, alloc in zip(requested, allocatable):
        # A request above capacity scores 0: clipping the free amount at 0 gives exactly that.
        per.append(score_div(xp, xp.maximum(alloc - req, 0) * MAX_NODE_SCORE, xp.maximum(alloc, 1)))
        valid.append(alloc != 0)
    return _weighted_mean(xp, per, valid, weights)


def most_allocated(xp, requested, allocatable, weights):
    per, valid = [], []
    for req, alloc in zip(requested, allocatable):
        per.append(score_div(xp, xp.minimum(req, alloc) * MAX_NODE_SCORE, xp.maximum(alloc, 1)))
        valid.append(alloc != 0)
    return _weighted_mean(xp, per, valid, weights)


def _weighted_mean(xp, per, valid, weights):
    """Integer mean of the per-resource scores weighted by `weights` over the valid resources (0 if none).
    Invalid resources score 0 by construction, so only the weight sum needs the mask, and where no resource is
    valid the total is 0 and so is the quotient."""
    total = wsum = 0
    for score, ok, w in zip(per, valid, weights):
        total = total + (score if w == 1 else score * w)
        wsum = wsum + (ok if w == 1 else ok * w)
    return score_div(xp, total, xp.maximum(wsum, 1))


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
    """shape: ((utilization, score 0..10), ...) as configured; scores are scaled to 0..100 first. Resources
    scoring 0 are left out of the average with their weight; the mean is rounded (math.Round)."""
    scaled = tuple((u, s * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for u, s in shape)
    total = wsum = 0
    for req, alloc, w in zip(requested, allocatable, weights):
        valid = alloc != 0
        utilization = xp.where(req > alloc, 100, score_div(xp, req * 100, xp.maximum(alloc, 1)))
        per = broken_linear(xp, scaled, utilization)
        counted = valid & (per > 0)
        total = total + xp.where(counted, per * w, 0)
        wsum = wsum + xp.where(counted, w, 0)
    return xp.where(wsum == 0, 0, round_half_away_div(total, xp.maximum(wsum, 1)))


def fit_score(xp, strategy, requested, allocatable, weights, shape=()):
    if strategy == "LeastAllocated":
        return least_allocated(xp, requested, allocatable, weights)
    if strategy == "MostAllocated":
        return most_allocated(xp, requested, allocatable, weights)
    return requested_to_capacity_ratio(xp, requested, allocatable, weights, shape)
