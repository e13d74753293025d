"""InterPodAffinity: required pod affinity / anti-affinity (Filter) and preferred terms (Score).
Upstream: pkg/scheduler/framework/plugins/interpodaffinity/{filtering,scoring}.go.

Upstream keeps maps (topologyKey, value) -> count. Here a count per topology domain is a segment sum of per-node
counts over the node's value of the term's key (`domain_totals`), read back at every node; a node without the key
has no domain.
"""
from __future__ import annotations

import numpy as np

from .backend import bincount, divide
from .status import MAX_NODE_SCORE, UNSCHEDULABLE, UNSCHEDULABLE_AND_UNRESOLVABLE

AFFINITY_BIT, ANTI_AFFINITY_BIT, EXISTING_ANTI_AFFINITY_BIT = 1, 2, 3


def matching_pods_per_node(xp, bound_node, match, n_nodes: int):
    """(N,) int64: bound pods selected by `match` ((M,) bool or int64 weights), summed per node."""
    return bincount(xp, bound_node, match, n_nodes)


def domain_totals(xp, labels, key: int, n_values: int, per_node, rows=None, unique: bool = False):
    """((N,) int64 the sum of per_node over the node's domain of key, (N,) bool the node has the key).
    Nodes without the key contribute nothing and read 0. rows: (k,) int64 node ids: the same at those nodes alone,
    (k,) each; unique: each node carrying the key has a value of its own (its domain is itself), so a node's total
    is its own per_node (no sum over every node)."""
    n = labels.shape[0] if rows is None else rows.shape[0]
    if key < 0 or n_values == 0:
        return xp.zeros((n,), dtype=xp.int64), xp.zeros((n,), dtype=bool)
    dom = labels[:, key] if rows is None else labels[rows, key]
    has = dom >= 0
    if unique:
        own = per_node if rows is None else per_node[rows]
        return xp.where(has, own, 0).astype(xp.int64), has
    totals = bincount(xp, labels[:, key], per_node, n_values)
    return xp.where(has, totals[xp.where(has, dom, 0)], 0), has


def interpod_affinity_filter(xp, labels, n_values, affinity, self_affine: bool, anti, existing):
    """labels: (N, K) node label value ids; n_values: values per key.
    affinity: (key, (N,) pods matching ALL required affinity terms per node) per required affinity term;
    self_affine: the pod matches all its own required affinity terms (first pod of a group);
    anti: (key, (N,) pods matching the term per node) per required anti-affinity term;
    existing: (key, (N,) existing pods whose required anti-affinity terms of that key match the pod, per node).
    Returns (code (N,) int8, payload (N,) int64): the first failing check in upstream's order."""
    n = labels.shape[0]
    code = xp.zeros((n,), dtype=xp.int8)
    payload = xp.zeros((n,), dtype=xp.int64)
    # Applied last-check-first, so that the first failing check in upstream's order decides.
    for terms, bit in ((existing, EXISTING_ANTI_AFFINITY_BIT), (anti, ANTI_AFFINITY_BIT)):
        if terms:
            fail = _occupied(xp, labels, n_values, terms)
            code = xp.where(fail, UNSCHEDULABLE, code)
            payload = xp.where(fail, bit, payload)
    if affinity:
        missing = xp.zeros((n,), dtype=bool)
        pods_exist = xp.ones((n,), dtype=bool)
        anywhere = xp.zeros((), dtype=xp.int64)      # matching pods on nodes with a term's key (upstream: the map)
        for key, per_node in affinity:
            total, has = domain_totals(xp, labels, key, n_values[key] if key >= 0 else 0, per_node)
            missing = missing | ~has
            pods_exist = pods_exist & (total > 0)
            anywhere = anywhere + xp.sum(xp.where(has, per_node, 0))
        # The first pod of a group whose terms select itself may go where no matching pod is yet.
        first_pod = (anywhere == 0) & self_affine
        fail = missing | (~pods_exist & ~first_pod)
        code = xp.where(fail, UNSCHEDULABLE_AND_UNRESOLVABLE, code)
        payload = xp.where(fail, AFFINITY_BIT, payload)
    return code.astype(xp.int8), payload.astype(xp.int64)


def _occupied(xp, labels, n_values, terms):
    """(N,) bool nodes whose domain of some term's key holds a counted pod."""
    fail = xp.zeros((labels.shape[0],), dtype=bool)
    for key, per_node in terms:
        total, has = domain_totals(xp, labels, key, n_values[key] if key >= 0 else 0, per_node)
        fail = fail | (has & (total > 0))
    return fail


def interpod_affinity_score(xp, labels, n_values, by_key, rows=None, unique=()):
    """(N,) int64 raw scores (may be negative): for each (key, (N,) signed weights of the matching pods per node),
    the node's domain total. Nodes without a key get nothing from it. rows: (k,) int64 node ids: the same at those
    nodes alone; unique: the keys whose values are each on one node alone (domain_totals)."""
    n = labels.shape[0] if rows is None else rows.shape[0]
    score = xp.zeros((n,), dtype=xp.int64)
    for key, per_node in by_key:
        total, _ = domain_totals(xp, labels, key, n_values[key] if key >= 0 else 0, per_node, rows, key in unique)
        score = score + total
    return score


def feasible_range(xp, raw, feasible):
    """(max, min) of raw over the feasible nodes (sentinels when none is feasible)."""
    big = 1 << 62
    return xp.max(xp.where(feasible, raw, -big)), xp.min(xp.where(feasible, raw, big))


def minmax_scale(xp, raw, lo, hi):
    """int64(100 * ((raw - lo) / (hi - lo))) for raw scores of feasible nodes whose raw scores range over [lo, hi];
    0 when hi == lo. The division comes first, then the multiplication, then truncation, as in Go's float64
    arithmetic. A raw score equal to lo scales to 0 whatever hi is."""
    diff = xp.maximum(hi - lo, 0)
    frac = divide(xp, (raw - lo).astype(xp.float64), xp.maximum(diff, 1).astype(xp.float64))
    return xp.where(diff > 0, (float(MAX_NODE_SCORE) * frac).astype(xp.int64), 0)


def interpod_affinity_normalize(xp, raw, feasible):
    """NormalizeScore: minmax_scale over the feasible nodes, 0 elsewhere."""
    hi, lo = feasible_range(xp, raw, feasible)
    return xp.where(feasible, minmax_scale(xp, xp.where(feasible, raw, lo), lo, hi), 0)


def interpod_affinity_normalize_rows(xp, raw):
    """NormalizeScore of sampled cycles' raw scores, (..., k) one cycle's nodes on the last axis, all feasible."""
    return minmax_scale(xp, raw, xp.min(raw, axis=-1, keepdims=True), xp.max(raw, axis=-1, keepdims=True))


class SampledAffinity:
    """InterPodAffinity's Score of the sampled cycles of one lap of the ring, one after another from one state
    (windows (B, k) int64, one cycle's feasible nodes per row, disjoint): scores(b) is a cycle's on windows[b] after
    the copies so far (interpod_affinity_score at those rows, normalized over them); copy(node) adds a copy's
    weights (`copy`: (key, weight) of the pod's terms and the copy's that select each other) to its node."""

    def __init__(self, labels, n_values, by_key, copy, unique, windows):
        self.per_node = {key: per_node.copy() for key, per_node in by_key}      # copies add to them
        for key, _ in copy:
            self.per_node.setdefault(key, np.zeros(labels.shape[0], np.int64))
        self.labels, self.n_values, self.copy_weights, self.unique, self.windows = labels, n_values, copy, unique, \
            windows

    def scores(self, b: int):
        raw = interpod_affinity_score(np, self.labels, self.n_values, tuple(self.per_node.items()), self.windows[b],
                                      self.unique)
        return interpod_affinity_normalize_rows(np, raw)

    def copy(self, node: int) -> None:
        for key, weight in self.copy_weights:
            self.per_node[key][node] += weight


__all__ = ["AFFINITY_BIT", "ANTI_AFFINITY_BIT", "EXISTING_ANTI_AFFINITY_BIT", "SampledAffinity", "domain_totals",
           "feasible_range", "interpod_affinity_filter", "interpod_affinity_normalize",
           "interpod_affinity_normalize_rows", "minmax_scale", "interpod_affinity_score",
           "matching_pods_per_node"]
