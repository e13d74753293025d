"""Opportunistic batching: place k identical pods with exactly the decisions of the pod-by-pod loop.

For one pod shape, while the normalized scores stay fixed, node n's total for its j-th copy is a known
sequence s[n, j] (j < cap[n]), and the loop picks argmax over nodes of the current head (ties: lowest rank).
Taking the running minimum of each row turns it into non-increasing "block keys": a node whose next copy
scores at least its current key keeps winning until a copy scores less (see docs/architecture.md, Batching).
The loop's pick order is then the sort of all (node, j) by (-key, rank, j).
"""
from __future__ import annotations

from .backend import cummin, min_at, smallest

NEVER = 1 << 62


def pick_order(xp, totals, cap, rank, k: int):
    """totals: (C, J) int64 score of copy j on candidate c; cap: (C,) copies that fit (entries j >= cap are
    ignored); rank: (C,) distinct non-negative tie-break ranks. Returns (candidate (P,), copy (P,), count): the
    picks of the sequential loop in order, P = min(k, C * J) (a static size), of which the first
    count = min(k, sum(min(cap, J))) are real; entries from `count` on are to be ignored."""
    c_count, j_count = totals.shape
    p = min(k, c_count * j_count)
    if p == 0:
        empty = xp.zeros((0,), dtype=xp.int64)
        return empty, empty, xp.asarray(0, dtype=xp.int64)
    j = xp.arange(j_count)
    valid = j[None, :] < cap[:, None]
    key = cummin(xp, xp.where(valid, totals, NEVER), axis=1)
    hi = xp.max(xp.where(valid, key, 0))
    span = xp.max(rank) + 1
    order_key = ((hi - key) * span + rank[:, None]) * j_count + j[None, :]
    order_key = xp.where(valid, order_key, NEVER).reshape(-1)
    count = xp.minimum(xp.sum(valid), k).astype(xp.int64)
    flat = smallest(xp, order_key, p)
    return flat // j_count, flat % j_count, count


def pick_order_few(totals: list[list[int]], cap: list[int], rank: list[int], k: int) -> tuple:
    """pick_order on a few (candidate, copy) pairs, host side in plain Python (numpy's per-call cost is most of
    the cost there), its arrays given as lists: the same picks, only the `count` real ones (lists of `count` ints,
    and count)."""
    j_count = len(totals[0]) if totals else 0
    order = []
    for c, (row, fits, r) in enumerate(zip(totals, cap, rank)):
        key = NEVER
        for j in range(min(fits, j_count)):
            key = min(key, row[j])        # a copy never scores above an earlier one on the same node
            order.append((-key, r, j, c))
    order.sort()
    picked = order[:k]
    return [c for *_, c in picked], [j for _, _, j, _ in picked], len(picked)


def contenders(xp, first, rank, k: int, eligible=None):
    """Indices of the candidates that can receive any of the next k picks: those whose first copy is among the
    k best by (-score, rank), in increasing index order. Every copy of any other node comes after k first
    copies of better nodes. eligible: (C,) bool, the candidates that may be chosen at all (default all; the
    fixed-shape form used under jit); with fewer than k eligible the rest of the k are ineligible ones."""
    c = first.shape[0]
    if c <= k:
        return xp.arange(c)
    span = xp.max(rank) + 1
    if eligible is None:
        order_key = (xp.max(first) - first) * span + rank
    else:
        top = xp.max(xp.where(eligible, first, xp.min(first)))
        order_key = xp.where(eligible, (top - first) * span + rank, NEVER + rank)
    return xp.sort(smallest(xp, order_key, k))


def fill_times(xp, cand, copy, cap, c_count: int, count=None):
    """(C,) pick index at which each candidate takes its last fitting copy, NEVER if it does not fill.
    count: how many of the picks are real (pick_order's third result); default all."""
    t = xp.arange(cand.shape[0])
    fills = copy == cap[cand] - 1
    if count is not None:
        fills = fills & (t < count)
    out = xp.full((c_count,), NEVER, dtype=xp.int64)
    return min_at(xp, out, cand, xp.where(fills, t, NEVER))


def normalization_epoch_end(xp, fill_t, holder_sets):
    """Picks up to and including the returned index keep the normalization; NEVER when it never changes.
    A 0-d int64 array.

    holder_sets: for each normalized plugin, (C,) bool of candidates holding its feasible max; empty when that
    max is 0 (nothing to lose). The max (and so every normalized score) changes once all holders are full."""
    end = xp.asarray(NEVER, dtype=xp.int64)
    for holders in holder_sets:
        end = xp.minimum(end, xp.where(xp.any(holders), xp.max(xp.where(holders, fill_t, -1)), NEVER))
    return end
