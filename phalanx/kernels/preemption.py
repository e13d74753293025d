"""DefaultPreemption's dry run as array functions over all candidate nodes at once (upstream:
pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go SelectVictimsOnNode,
pkg/scheduler/framework/preemption/preemption.go DryRunPreemption, filterPodsWithPDBViolation,
pickOneNodeForPreemption).

Victims are rows of a flat table (one row per potential victim: a bound pod of lower priority on a potential node);
per-node sequences are segments of that table after `victim_order` sorts it. The reprieve loop runs over victim
rank: rank r of every node is tried at once.
"""
from __future__ import annotations

import numpy as np

MAX_INT32 = 2**31 - 1


def num_candidates(n: int, percentage: int, absolute: int) -> int:
    """calculateNumCandidates: n * percentage / 100 (truncating), at least `absolute`, at most n."""
    return min(max(n * percentage // 100, absolute), n)


def victim_order(node, priority, start, tiebreak) -> np.ndarray:
    """Row order grouping victims by node, most important first within a node (MoreImportantPod: higher priority,
    then the earlier start); `tiebreak` orders equally important pods (upstream's sort is unstable)."""
    return np.lexsort((tiebreak, start, -priority, node))


def segment_rank(node_sorted) -> np.ndarray:
    """(V,) position of each row within its node's segment (rows sorted by node)."""
    v = len(node_sorted)
    if v == 0:
        return np.zeros(0, np.int64)
    first = np.ones(v, bool)
    first[1:] = node_sorted[1:] != node_sorted[:-1]
    starts = np.flatnonzero(first)
    seg = np.cumsum(first) - 1
    return np.arange(v) - starts[seg]


def pdb_violating(node_sorted, matches, allowed) -> np.ndarray:
    """filterPodsWithPDBViolation per node: walking each node's victims in importance order, every matching PDB's
    budget is decremented, and a victim that takes any budget below zero violates. matches: (V, B) bool (a victim
    a PDB counts: same namespace, labelled, selected, not already in disruptedPods), rows in importance order per
    node; allowed: (B,) status.disruptionsAllowed. Each node starts again from the full budgets."""
    v, b = matches.shape
    if v == 0 or b == 0:
        return np.zeros(v, bool)
    counts = np.cumsum(matches, axis=0, dtype=np.int64)
    first = np.ones(v, bool)
    first[1:] = node_sorted[1:] != node_sorted[:-1]
    starts = np.flatnonzero(first)
    seg = np.cumsum(first) - 1
    before = np.zeros((len(starts), b), np.int64)
    before[1:] = counts[starts[1:] - 1]
    within = counts - before[seg]
    return np.any(matches & (within > allowed[None, :]), axis=1)


def reprieve_order(node_sorted, violating) -> np.ndarray:
    """Permutation of victim rows (importance order per node) that puts each node's PDB-violating victims first,
    each part keeping importance order (the order SelectVictimsOnNode tries to reprieve them in)."""
    return np.lexsort((np.arange(len(node_sorted)), ~violating, node_sorted))


def reprieve(rank, fits_with) -> np.ndarray:
    """The reprieve loop over victim rank, all nodes at once. `fits_with(rows)`: for victim rows (one per node),
    whether the preemptor still fits on their nodes with these rows added back to those reprieved before (the
    caller keeps that state). Returns (V,) bool: the victim is reprieved."""
    kept = np.zeros(len(rank), bool)
    for r in range(int(rank.max()) + 1 if len(rank) else 0):
        rows = np.flatnonzero(rank == r)
        kept[rows[fits_with(rows)]] = True
    return kept


def scan_prefix(hits, violating, size: int, wanted: int, fine: int = 0, bad: int = 0) -> int:
    """How many of `size` potential nodes DryRunPreemption looks at, in scan order: it stops once it holds a
    candidate that violates no PDB and at least `wanted` candidates (each list is bounded by `wanted`). hits: the
    candidates' positions among them (ascending); violating: whether each violates a PDB; fine, bad: candidates
    (not violating, violating) among the nodes scanned before these; `size` when it does not stop here."""
    if scan_done(fine, bad, wanted):     # enough before these: the first node stops it
        return min(1, size)
    if not violating.any():              # the stop is at the candidate that makes enough of them
        need = max(1, wanted - min(bad, wanted)) - fine
        return int(hits[need - 1]) + 1 if need <= len(hits) else size
    fine = fine + np.cumsum(~violating)
    bad = np.minimum(bad + np.cumsum(violating), wanted)
    done = np.flatnonzero((fine > 0) & (np.minimum(fine, wanted) + bad >= wanted))
    return int(hits[done[0]]) + 1 if len(done) else size


def scan_done(fine: int, bad: int, wanted: int) -> bool:
    """Whether DryRunPreemption stops with `fine` candidates that violate no PDB and `bad` that do."""
    return fine > 0 and min(fine, wanted) + min(bad, wanted) >= wanted


def pick_one(violations, top_priority, priority_sum, count, top_start) -> int:
    """pickOneNodeForPreemption over candidates in candidate order: fewest PDB violations, lowest highest-victim
    priority, smallest sum of (priority + MaxInt32 + 1), fewest victims, latest earliest start among the
    highest-priority victims; ties go to the first candidate."""
    if len(violations) <= 1:
        return 0
    left = None          # the candidates still tied (None: all of them)
    for key, latest in ((violations, False), (top_priority, False), (priority_sum, False), (count, False),
                        (top_start, True)):
        key = key if left is None else key[left]
        lo, hi = key.min(), key.max()
        if lo == hi:     # a criterion every tied candidate meets alike (the usual case) keeps them all
            continue
        hit = np.flatnonzero(key == (hi if latest else lo))
        left = hit if left is None else left[hit]
        if len(left) == 1:
            break
    return 0 if left is None else int(left[0])


def unit_order(priority, is_group, size, start, tiebreak) -> np.ndarray:
    """Victim units (workload-aware preemption) most important first, upstream moreImportantVictim: higher
    priority; at equal priority a PodGroup before a single pod; two single pods: the earlier start; two groups: more
    pods, then the earlier start. `tiebreak` orders equally important units (upstream's sort is unstable)."""
    is_group = np.asarray(is_group, bool)
    size_key = np.where(is_group, -np.asarray(size, np.int64), 0)
    return np.lexsort((tiebreak, start, size_key, ~is_group, -np.asarray(priority, np.int64)))


def longest_reprieve(n: int, fits_without_first) -> int:
    """The reprieve loop's next step when giving units back can only make the preemptor fit worse (monotone):
    how many of the next `n` units in reprieve order are all given back. fits_without_first(k): whether the
    preemptor still fits with the first k of them given back together (true for k = 0). Each of those k would
    have been given back one at a time too (every state on the way holds fewer pods), and the unit after them
    would not: a galloping search finds k in O(log n) calls instead of n."""
    good, bad, step = 0, None, 1
    while bad is None:                       # gallop: 1, 2, 4, ... past the last prefix that fits
        k = min(good + step, n)
        if k == good:
            return n
        if fits_without_first(k):
            good, step = k, 2 * step
        else:
            bad = k
    while bad - good > 1:                    # bisect between it and the first prefix that does not
        mid = (good + bad) // 2
        if fits_without_first(mid):
            good = mid
        else:
            bad = mid
    return good
