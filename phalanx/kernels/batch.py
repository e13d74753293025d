"""Opportunistic batching: place k identical pods with exactly the decisions of the pod-by-pod loop.

For one pod shape, while the normalized scores stay fixed, node n's total for its j-th copy is a known
sequence s[n, j] (j < cap[n]), and the loop picks argmax over nodes of the current head (ties: lowest rank).
Taking the running minimum of each row turns it into non-increasing "block keys": a node whose next copy
scores at least its current key keeps winning until a copy scores less (see docs/architecture.md, Batching).
The loop's pick order is then the sort of all (node, j) by (-key, rank, j).
"""
from __future__ import annotations

NEVER = 1 << 62


def cummin(xp, a, axis: int):
    if xp.__name__.startswith("jax"):
        import jax.lax
        return jax.lax.cummin(a, axis=axis)
    return xp.minimum.accumulate(a, axis=axis)


def pick_order(xp, totals, cap, rank, k: int):
    """totals: (C, J) int64 score of copy j on candidate c; cap: (C,) copies that fit (entries j >= cap are
    ignored); rank: (C,) distinct tie-break ranks. Returns (candidate (P,), copy (P,)) of the first P = min(k,
    sum(min(cap, J))) picks of the sequential loop, in order."""
    c_count, j_count = totals.shape
    j = xp.arange(j_count)
    valid = j[None, :] < cap[:, None]
    key = cummin(xp, xp.where(valid, totals, NEVER), axis=1)
    hi = xp.max(xp.where(valid, key, 0)) if c_count else 0
    span = int(xp.max(rank)) + 1 if c_count else 1
    order_key = ((hi - key) * span + rank[:, None]) * j_count + j[None, :]
    order_key = xp.where(valid, order_key, NEVER).reshape(-1)
    total_valid = int(xp.sum(valid))
    p = min(k, total_valid)
    if p == 0:
        empty = xp.zeros((0,), dtype=xp.int64)
        return empty, empty
    if p < order_key.shape[0] and hasattr(xp, "argpartition"):
        part = xp.argpartition(order_key, p - 1)[:p]
        flat = part[xp.argsort(order_key[part])]
    else:
        flat = xp.argsort(order_key)[:p]
    return flat // j_count, flat % j_count


def contenders(xp, first, rank, k: int):
    """Indices of the candidates that can receive any of the next k picks: those whose first copy is among the
    k best by (-score, rank). Every copy of any other node comes after k first copies of better nodes."""
    c = first.shape[0]
    if c <= k:
        return xp.arange(c)
    span = int(xp.max(rank)) + 1
    order_key = (xp.max(first) - first) * span + rank
    return xp.sort(xp.argpartition(order_key, k - 1)[:k])


def fill_times(xp, cand, copy, cap, c_count: int):
    """(C,) pick index at which each candidate takes its last fitting copy, NEVER if it does not fill."""
    fills = copy == cap[cand] - 1
    t = xp.arange(cand.shape[0])
    out = xp.full((c_count,), NEVER, dtype=xp.int64)
    if xp.__name__.startswith("jax"):
        return out.at[cand].min(xp.where(fills, t, NEVER))
    idx = cand[fills]
    out[idx] = t[fills]
    return out


def normalization_epoch_end(xp, fill_t, holder_sets) -> int:
    """Picks up to and including the returned index keep the normalization; NEVER when it never changes.

    holder_sets: for each normalized plugin whose feasible max is positive, (C,) bool of candidates holding that
    max. The max (and so every normalized score) changes once all holders are full."""
    end = NEVER
    for holders in holder_sets:
        end = min(end, int(xp.max(xp.where(holders, fill_t, -1))))
    return end
