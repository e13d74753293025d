"""selectHost with a deterministic tie-break: the feasible node with the highest total, lowest rank first.

Upstream breaks ties by heap order over a non-deterministic node order; phalanx ranks nodes instead
(rank = index by default, a seeded permutation on request) so results are reproducible.
"""
from __future__ import annotations

NONE = -1


def select_best(xp, total, feasible, rank):
    """Index of the feasible node with the highest total (lowest rank among equals), or NONE."""
    n = total.shape[0]
    key = xp.where(feasible, total * n + (n - 1 - rank), -1)
    best = xp.argmax(key)
    return xp.where(key[best] >= 0, best, NONE)


def num_feasible_nodes_to_find(percentage: int, n_nodes: int) -> int:
    """numFeasibleNodesToFind: how many feasible nodes a cycle looks for before scoring."""
    if n_nodes < 100 or percentage >= 100:
        return n_nodes
    if percentage == 0:
        percentage = max(50 - n_nodes // 125, 5)
    return max(n_nodes * percentage // 100, 100)


def sample_feasible(xp, feasible, start: int, wanted: int):
    """The first `wanted` feasible nodes visiting nodes from `start` round the ring, and how many nodes were
    visited (upstream checks nodes in parallel; phalanx visits them in ring order, deterministically)."""
    n = feasible.shape[0]
    order = (xp.arange(n) + start) % n
    in_order = feasible[order]
    seen = xp.cumsum(in_order)
    taken_in_order = in_order & (seen <= wanted)
    found = int(seen[-1]) if n else 0
    visited = n if found < wanted else int(xp.argmax(seen >= wanted)) + 1
    sampled = xp.zeros_like(feasible)
    if xp.__name__.startswith("jax"):
        sampled = sampled.at[order].set(taken_in_order)
    else:
        sampled[order] = taken_in_order
    return sampled, visited
