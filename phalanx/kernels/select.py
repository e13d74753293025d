"""selectHost with a deterministic tie-break: the feasible node with the highest total, lowest rank first.

Upstream breaks ties by heap order over a non-deterministic node order; phalanx ranks nodes instead
(rank = index by default, a seeded permutation on request) so results are reproducible.
"""
from __future__ import annotations

import numpy as np

from .backend import set_at

NONE = -1


def selection_key(xp, total, feasible, rank, n: int):
    """select_best's key per node: total * n + (n - 1 - rank) on feasible nodes, -1 elsewhere (distinct per node:
    the ranks of the n nodes are distinct). Any subset of the nodes may be keyed at once."""
    return xp.where(feasible, total * n + (n - 1 - rank), -1)


def selection_keys_few(total: list[int], rank: list[int], n: int) -> list[int]:
    """selection_key of a few feasible nodes on Python ints (numpy's per-call cost is most of the cost there)."""
    return [t * n + (n - 1 - r) for t, r in zip(total, rank)]


def select_best(xp, total, feasible, rank, by_rank=None):
    """Index of the feasible node with the highest total (lowest rank among equals), or NONE. by_rank: the node of
    each rank (rank's inverse), when given: the best key's rank part names the node, so one plain maximum finds it
    (XLA:CPU runs an argmax, a reduction over value-index pairs, one element at a time)."""
    n = total.shape[0]
    key = selection_key(xp, total, feasible, rank, n)
    if by_rank is not None:
        best = xp.max(key)
        return xp.where(best >= 0, by_rank[n - 1 - best % n], NONE)
    best = xp.argmax(key)
    return xp.where(key[best] >= 0, best, NONE)


def num_feasible_nodes_to_find(percentage: int, n_nodes: int, scoring: bool = True) -> int:
    """numFeasibleNodesToFind: how many feasible nodes a cycle looks for before scoring; one when nothing scores
    them (`scoring` False: the profile has no Score plugin; upstream findNodesThatPassFilters)."""
    if not scoring:
        return min(n_nodes, 1)
    if n_nodes < 100 or percentage >= 100:
        return n_nodes
    if percentage == 0:
        percentage = max(50 - n_nodes // 125, 5)
    return max(n_nodes * percentage // 100, 100)


def sample_feasible(xp, feasible, start, wanted, n=None, among=None):
    """The first `wanted` feasible nodes visiting the cycle's nodes from `start` round their ring, and how many
    nodes were visited (upstream checks nodes in parallel; phalanx visits them in ring order, deterministically).

    The cycle's nodes are `among` ((N,) bool: the nodes a PreFilterResult left, in index order; upstream lists them
    in a Go map's order), default the first `n` (n defaults to N; padded entries must be False). Their ring is
    entered at start modulo their count, as findNodesThatPassFilters indexes its own node list; the caller moves
    nextStartNodeIndex by `visited` modulo all nodes. start, wanted, n may be Python ints or 0-d arrays; `visited`
    is a 0-d int64 array."""
    if among is not None:
        return _sample_among(xp, feasible, start, wanted, among)
    if xp is np and int(wanted) > 0:
        return _sample_host(feasible, int(start), int(wanted), feasible.shape[0] if n is None else int(n))
    # Every node (the usual cycle): the ring is the node order itself, read through one gather (half the passes of
    # the general form below).
    size = feasible.shape[0]
    n = size if n is None else n
    j = xp.arange(size)
    real = j < n
    order = xp.where(real, (j + start) % xp.maximum(n, 1), j)
    in_order = feasible[order] & real
    seen = xp.cumsum(in_order.astype(xp.int64))
    taken_in_order = in_order & (seen <= wanted)
    found = seen[-1] if size else 0
    reached = xp.argmax(seen >= wanted) + 1 if size else 0
    visited = xp.asarray(xp.where(found < wanted, n, reached), dtype=xp.int64)
    return set_at(xp, xp.zeros_like(feasible), order, taken_in_order), visited


def _sample_host(feasible, start: int, wanted: int, n: int):
    """sample_feasible over the first n nodes on the host (one pass and a few slices instead of a gathered ring and
    its prefix sums)."""
    taken, visited = sampled_ids(feasible[:n], start, wanted)
    sampled = np.zeros_like(feasible)
    sampled[taken] = True
    return sampled, np.asarray(visited, dtype=np.int64)


def sampled_ids(feasible: np.ndarray, start: int, wanted: int) -> tuple[np.ndarray, int]:
    """sample_feasible on the host over every node of `feasible` ((N,) bool), for wanted >= 1: the sampled nodes'
    ids ((k,) int64, in ring order) and the nodes visited. The feasible nodes' ids are entered at the first one from
    start round the ring."""
    windows, visited = sampled_windows(np.flatnonzero(feasible), feasible.shape[0], start, wanted, 1)
    return windows[0], visited


def sampled_windows(ids: np.ndarray, n: int, start: int, wanted: int, most: int) -> tuple[np.ndarray, int]:
    """The sampled nodes of up to `most` cycles in turn over one feasible set (ids: its nodes, (m,) int64 ascending,
    of a ring of n nodes), from start, as far as their visits stay within one lap of the ring: ((B, k) int64, each
    row one cycle's sampled ids in ring order; the nodes the B cycles visited together). The cycles' windows are
    consecutive runs of `wanted` ids round the ring, so no cycle visits a node an earlier one sampled (B * wanted <=
    m). With fewer than `wanted` feasible nodes one cycle visits every node (B = 1)."""
    m = len(ids)
    if m < wanted:
        return ids[None, :], n
    entry = start % n
    at = int(np.searchsorted(ids, entry))
    count = min(most, m // wanted) * wanted
    windows = ids[at:at + count] if at + count <= m else np.concatenate((ids[at:], ids[:at + count - m]))
    windows = windows.reshape(-1, wanted)
    return windows, (int(windows[-1, -1]) - entry) % n + 1


def _sample_among(xp, feasible, start, wanted, among):
    """sample_feasible over the nodes `among` (fixed shapes: no compaction, so it also runs in a jitted loop)."""
    i64 = xp.int64
    member = among.astype(i64)
    m = xp.sum(member)
    place = xp.cumsum(member) - member          # each cycle node's index in the cycle's list
    entry = start % xp.maximum(m, 1)
    hit = (feasible & among).astype(i64)
    hits_before = xp.cumsum(hit) - hit
    found = xp.sum(hit)
    skipped = xp.sum(xp.where(place < entry, hit, 0))     # feasible nodes listed before the entry: visited last
    seen = xp.where(place >= entry, hits_before - skipped, found - skipped + hits_before) + 1
    taken = (hit == 1) & (seen <= wanted)
    position = (place - entry) % xp.maximum(m, 1)          # 0 for the node at the entry
    last = xp.sum(xp.where((hit == 1) & (seen == wanted), position + 1, 0))
    visited = xp.asarray(xp.where(found < wanted, m, last), dtype=i64)
    return taken, visited
