"""NodeResourcesBalancedAllocation: favours nodes whose resource fractions stay close to each other.
Upstream: plugins/noderesources/balanced_allocation.go. Floating point as upstream (float64, same operation
order); the final conversion truncates."""
from __future__ import annotations

from .status import MAX_NODE_SCORE


def _std(xp, requested, allocatable):
    """Population std-dev of min(requested/allocatable, 1) over resources with allocatable > 0 (..., k) -> (...)."""
    k = requested.shape[-1]
    valid = allocatable != 0
    frac = xp.where(valid, requested / xp.where(valid, allocatable, 1), 0.0)
    frac = xp.minimum(frac, 1.0)
    count = xp.sum(valid, axis=-1)
    total = xp.zeros(requested.shape[:-1], dtype=xp.float64)
    for i in range(k):
        total = total + frac[..., i]
    mean = total / xp.maximum(count, 1)
    sq = xp.zeros(requested.shape[:-1], dtype=xp.float64)
    # Upstream appends only valid fractions, so the first two valid ones form the two-resource case.
    first = xp.argmax(valid, axis=-1)
    second = xp.argmax(valid & (xp.arange(k) > first[..., None]), axis=-1)
    pick = lambda idx: xp.take_along_axis(frac, idx[..., None], axis=-1)[..., 0]  # noqa: E731
    two = xp.abs((pick(first) - pick(second)) / 2)
    for i in range(k):
        d = frac[..., i] - mean
        sq = sq + xp.where(valid[..., i], d * d, 0.0)
    many = xp.sqrt(sq / xp.maximum(count, 1))
    return xp.where(count == 2, two, xp.where(count > 2, many, 0.0))


def balance(xp, load, allocatable):
    """balancedResourceScore: int64((1 - std) * 100), in [50, 100]."""
    return ((1 - _std(xp, load, allocatable)) * MAX_NODE_SCORE).astype(xp.int64)


def balanced_allocation_score(xp, after, allocatable, before, compat: str = "1.36"):
    """after / before: load with and without the pod (..., k).

    v1.35 scores the balance with the pod. v1.36 (kubernetes PR 135573) scores the change of balance:
    50 + (50 + with - without) / 2, so 75 means "no change"; every step truncates as in Go.
    """
    with_pod = balance(xp, after, allocatable)
    if compat == "1.35":
        return with_pod
    half = MAX_NODE_SCORE // 2
    return half + (half + with_pod - balance(xp, before, allocatable)) // 2
