"""PodTopologySpread: DoNotSchedule constraints filter, ScheduleAnyway constraints score.
Upstream: plugins/podtopologyspread/{common,filtering,scoring}.go.

The score depends on counts over other nodes and on the feasible set, so pods with spread constraints
are never batched; they take the per-pod path.

Scoring requires every topology key on a node (requireAllTopologies) except for pods spread by the system
default constraints: then no node is ignored, and a node without a key sits in the domain of the value ""
(Go's zero value for a missing label), which takes part in the domain count and the pod counts, though no
node reads it unless a node has the key with the value "".
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .backend import bincount, log_table, pin_rounding
from .node_affinity import term_matches
from .status import MAX_NODE_SCORE, UNSCHEDULABLE, UNSCHEDULABLE_AND_UNRESOLVABLE

MISSING_LABEL_BIT, SKEW_BIT = 1, 2
HOSTNAME = "kubernetes.io/hostname"


@dataclass(frozen=True)
class Constraint:
    key: int                      # node label key id (-1: no node has it)
    is_hostname: bool
    max_skew: int
    min_domains: int
    selector: tuple | None        # LabelTests over pod labels (AND); None matches no pod
    self_match: int               # 1 when the incoming pod matches its own selector
    honor_affinity: bool          # nodeAffinityPolicy Honor (default)
    honor_taints: bool            # nodeTaintsPolicy Honor (default Ignore)
    empty_value: int = -1         # value id of "" for the key (-1: no node has it); nodes without the key join
                                  # that domain when not every topology key is required


def matching_pods_per_node(xp, bound, n_nodes: int, namespace: int, selector):
    """(N,) int64: bound, non-terminating pods of the namespace that the selector matches, per node.
    An empty selector counts nothing (upstream countPodsMatchSelector), though it matches the pod itself.
    namespace -1 (no bound pod shares the pod's namespace) matches no row; it may be a 0-d array."""
    if not selector or bound.count == 0:
        return xp.zeros((n_nodes,), dtype=xp.int64)
    match = (bound.namespace == namespace) & ~bound.terminating & term_matches(xp, bound.labels, selector)
    return bincount(xp, bound.node, match, n_nodes)


def _domains(xp, labels, c: Constraint, n_nodes: int):
    if c.key < 0:
        return xp.full((n_nodes,), -1, dtype=xp.int32)
    return labels[:, c.key]


def has_all_keys(xp, labels, constraints, n_nodes: int):
    ok = xp.ones((n_nodes,), dtype=bool)
    for c in constraints:
        ok = ok & (_domains(xp, labels, c, n_nodes) >= 0)
    return ok


def ignored_nodes(xp, labels, constraints, feasible, require_all: bool):
    """Feasible nodes the score leaves out (IgnoredNodes): those missing a topology key, when every key is
    required."""
    if not require_all:
        return xp.zeros_like(feasible)
    return feasible & ~has_all_keys(xp, labels, constraints, labels.shape[0])


def pod_topology_spread_filter(xp, labels, n_values, counts, constraints, affinity_ok, taints_ok):
    """labels: (N, K) node label value ids; n_values: values per key; counts: per-constraint (N,) matching pods;
    affinity_ok / taints_ok: (N,) whether the node passes the pod's node affinity / hard taints (inclusion policies).
    Reason payload bits: MISSING_LABEL_BIT, SKEW_BIT (of the first failing constraint)."""
    n = labels.shape[0]
    all_keys = has_all_keys(xp, labels, constraints, n)
    code = xp.zeros((n,), dtype=xp.int8)
    reason = xp.zeros((n,), dtype=xp.int64)
    # Walk backwards so the first constraint in spec order that fails decides code and reason.
    for c, count in reversed(list(zip(constraints, counts))):
        dom = _domains(xp, labels, c, n)
        eligible = all_keys & _inclusion(xp, c, affinity_ok, taints_ok)
        size = n_values[c.key] if c.key >= 0 else 0
        dom_e = xp.where(eligible, dom, -1)
        dom_count = bincount(xp, dom_e, count, size)
        dom_present = bincount(xp, dom_e, xp.ones_like(count), size) > 0
        n_domains = xp.sum(dom_present)
        lowest = xp.min(xp.where(dom_present, dom_count, 1 << 40)) if size else 1 << 40
        min_match = xp.where(n_domains < c.min_domains, 0, lowest)
        has_key = dom >= 0
        safe = xp.where(has_key, dom, 0)
        match_num = xp.where(has_key, dom_count[safe], 0) if size else xp.zeros((n,), dtype=xp.int64)
        skew_fail = match_num + c.self_match - min_match > c.max_skew
        code = xp.where(~has_key, UNSCHEDULABLE_AND_UNRESOLVABLE, xp.where(skew_fail, UNSCHEDULABLE, code))
        reason = xp.where(~has_key, MISSING_LABEL_BIT, xp.where(skew_fail, SKEW_BIT, reason))
    return code.astype(xp.int8), reason.astype(xp.int64)


def _inclusion(xp, c: Constraint, affinity_ok, taints_ok):
    ok = affinity_ok if c.honor_affinity else xp.ones_like(affinity_ok)
    return ok & taints_ok if c.honor_taints else ok


def _go_round(xp, x):
    """math.Round for x >= 0: halves away from zero (numpy's round is half-to-even)."""
    f = xp.floor(x)
    return xp.where(x - f >= 0.5, f + 1, f).astype(xp.int64)


def pod_topology_spread_score(xp, labels, n_values, counts, constraints, feasible, affinity_ok, taints_ok,
                              require_all: bool = True):
    """Raw (N,) int64 scores and the (N,) bool mask of ignored nodes (see ignored_nodes). require_all: False for
    pods spread by the system default constraints (upstream requireAllTopologies)."""
    score, scored, ignored = float_score(xp, labels, n_values, counts, constraints, feasible, affinity_ok, taints_ok,
                                         require_all)
    return xp.where(scored, _go_round(xp, score), 0), ignored


def float_score(xp, labels, n_values, counts, constraints, feasible, affinity_ok, taints_ok, require_all: bool = True):
    """The float64 sum before rounding, the scored nodes and the ignored ones."""
    n = labels.shape[0]
    # Nodes scored (when feasible) and whose pods count: with every key required, those that have them all.
    all_keys = has_all_keys(xp, labels, constraints, n) if require_all else xp.ones((n,), dtype=bool)
    ignored = feasible & ~all_keys         # ignored_nodes, without a second pass over the labels
    scored = feasible & all_keys
    score = xp.zeros((n,), dtype=xp.float64)
    logs = xp.asarray(log_table(n + 3))     # log(size + 2) for size in [0, n], the same bits on every backend
    for c, count in zip(constraints, counts):
        dom = _domains(xp, labels, c, n)
        has_key = dom >= 0
        if c.is_hostname:
            size = xp.sum(scored)
            cnt = count
        else:
            nv = n_values[c.key] if c.key >= 0 else 0
            # A node without the key is in the domain "": the value's own id, or one more slot when no node has
            # that value. Such nodes are scored or counted only when not every key is required.
            value = xp.where(has_key, dom, c.empty_value if c.empty_value >= 0 else nv)
            # Domains of scored nodes; their pod counts come from every node passing the inclusion policies.
            present = bincount(xp, xp.where(scored, value, -1), xp.ones_like(count), nv + 1) > 0
            size = xp.sum(present)
            counted = all_keys & _inclusion(xp, c, affinity_ok, taints_ok)
            dom_count = bincount(xp, xp.where(counted, value, -1), count, nv + 1)
            cnt = xp.where(has_key, dom_count[value], 0)
        weight = logs[size + 2]
        # cnt * weight rounds on its own before max_skew - 1 is added, as in Go (no fused multiply-add).
        term = pin_rounding(xp, cnt.astype(xp.float64) * weight, xp.minimum(cnt, 0))
        score = score + xp.where(has_key, term + float(c.max_skew - 1), 0.0)
    return score, scored, ignored


def pod_topology_spread_normalize(xp, raw, feasible, ignored):
    scored = feasible & ~ignored
    hi = xp.max(xp.where(scored, raw, 0))
    lo = xp.min(xp.where(scored, raw, 1 << 62))
    lo = xp.where(xp.any(scored), lo, 0)
    out = xp.where(hi == 0, MAX_NODE_SCORE, MAX_NODE_SCORE * (hi + lo - raw) // xp.maximum(hi, 1))
    return xp.where(scored, out, 0)
