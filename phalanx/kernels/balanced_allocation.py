"""NodeResourcesBalancedAllocation: favours nodes whose resource fractions stay close to each other.
Upstream: plugins/noderesources/balanced_allocation.go. Floating point as upstream (float64, same operation
order); the final conversion truncates."""
from __future__ import annotations

from .backend import divide, is_jax, pin_rounding
from .status import MAX_NODE_SCORE


def _std(xp, requested, safe, valid):
    """Population std-dev of min(requested/allocatable, 1) over the resources with allocatable > 0.

    requested: one array per resource; safe: allocatable with 0 replaced by 1; valid: allocatable != 0.
    Upstream keeps only the valid fractions, in order; two of them give |f0 - f1| / 2, more the population
    std (summed sequentially), fewer 0."""
    if len(requested) == 2:     # the common case; invalid fractions are masked by the final where
        f0, f1 = (xp.minimum(divide(xp, req, a), 1.0) for req, a in zip(requested, safe))
        return xp.where(valid[0] & valid[1], xp.abs((f0 - f1) / 2), 0.0)
    frac = [xp.where(v, xp.minimum(divide(xp, req, a), 1.0), 0.0) for req, a, v in zip(requested, safe, valid)]
    count = sum(v.astype(xp.int64) for v in valid)
    total = 0.0
    for f in frac:
        total = total + f                  # invalid entries add 0.0, which changes nothing
    mean = total / xp.maximum(count, 1)
    sq = 0.0
    for f, v, req in zip(frac, valid, requested):
        # Each square rounds on its own before it is summed, as in Go (no fused multiply-add).
        d2 = pin_rounding(xp, (f - mean) * (f - mean), xp.minimum(req, 0))
        sq = sq + xp.where(v, d2, 0.0)
    many = xp.sqrt(sq / xp.maximum(count, 1))
    # Exactly two valid among more configured resources: the first two valid fractions, in order.
    first = second = None
    for f, v in zip(frac, valid):
        if first is None:
            first, seen1 = xp.where(v, f, 0.0), v
            second, seen2 = xp.zeros_like(f), xp.zeros_like(v)
            continue
        take2 = v & seen1 & ~seen2
        second = xp.where(take2, f, second)
        seen2 = seen2 | take2
        first = xp.where(v & ~seen1, f, first)
        seen1 = seen1 | v
    two = xp.abs((first - second) / 2)
    return xp.where(count == 2, two, xp.where(count > 2, many, 0.0))


def balance(xp, load, safe, valid):
    """balancedResourceScore: int64((1 - std) * 100), in [50, 100]."""
    return ((1 - _std(xp, load, safe, valid)) * MAX_NODE_SCORE).astype(xp.int64)


def balanced_allocation_score(xp, after, allocatable, before, compat: str = "1.36", before_balance=None):
    """after / before: load with and without the pod, one array per resource.

    v1.35 scores the balance with the pod. v1.36 (kubernetes PR 135573) scores the change of balance:
    50 + (50 + with - without) / 2, so 75 means "no change"; every step truncates as in Go.
    before_balance: balance(before) when the caller already has it (it depends on the node alone).
    """
    valid = [alloc != 0 for alloc in allocatable]
    safe = [xp.maximum(alloc, 1) for alloc in allocatable]      # allocatable is never negative
    if compat == "1.35":
        return balance(xp, after, safe, valid)
    if before_balance is None and is_jax(xp):
        # XLA fuses each pass into the score; a stacked pair it would write out first (a kernel per resource).
        with_pod, before_balance = balance(xp, after, safe, valid), balance(xp, before, safe, valid)
    elif before_balance is None:
        # With and without the pod in one pass over both (half the operations on a few rows, where their count is
        # the cost); elementwise the same arithmetic.
        both = balance(xp, [xp.stack((a, b)) for a, b in zip(after, before)], safe, valid)
        with_pod, before_balance = both[0], both[1]
    else:
        with_pod = balance(xp, after, safe, valid)
    half = MAX_NODE_SCORE // 2
    return half + (half + with_pod - before_balance) // 2


def node_balance(xp, load, allocatable):
    """balance(load) per node: the v1.36 "without the pod" term, a function of the node alone."""
    return balance(xp, load, [xp.maximum(a, 1) for a in allocatable], [a != 0 for a in allocatable])
