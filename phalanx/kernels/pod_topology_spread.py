"""PodTopologySpread: DoNotSchedule constraints filter, ScheduleAnyway constraints score.
Upstream: plugins/podtopologyspread/{common,filtering,scoring}.go.

The score depends on counts over other nodes and on the feasible set: runs of pods with DoNotSchedule constraints
go pod by pod; ScheduleAnyway ones are DOMAIN scores, placed by the sequential loop of kernels/domain_batch.py with
SpreadScores moving their raw scores copy by copy.

Scoring requires every topology key on a node (requireAllTopologies) except for pods spread by the system
default constraints: then no node is ignored, and a node without a key sits in the domain of the value ""
(Go's zero value for a missing label), which takes part in the domain count and the pod counts, though no
node reads it unless a node has the key with the value "".
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .backend import bincount, log_table, pin_rounding, score_div
from .domain_batch import RawModel
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
                              require_all: bool = True, rows=None, dom_counts=None):
    """Raw (N,) int64 scores and the (N,) bool mask of ignored nodes (see ignored_nodes). require_all: False for
    pods spread by the system default constraints (upstream requireAllTopologies). rows: (k,) int64 node ids when
    they are the feasible nodes (a sampled cycle's; `feasible` then unread): the same values at those nodes alone,
    (k,) each. dom_counts: as float_score's."""
    score, scored, ignored = float_score(xp, labels, n_values, counts, constraints, feasible, affinity_ok, taints_ok,
                                         require_all, rows, dom_counts)
    return xp.where(scored, _go_round(xp, score), 0), ignored


def float_score(xp, labels, n_values, counts, constraints, feasible, affinity_ok, taints_ok, require_all: bool = True,
                rows=None, dom_counts=None):
    """The float64 sum before rounding, the scored nodes and the ignored ones (at `rows` alone when given: the
    feasible nodes; only the domains' pod counts read every node). dom_counts: domain_counts' result when the caller
    has it (then nothing reads every node)."""
    n = labels.shape[0]
    own, k = (labels, n) if rows is None else (labels[rows], rows.shape[0])
    # Nodes scored (when feasible) and whose pods count: with every key required, those that have them all.
    own_keys = has_all_keys(xp, own, constraints, k) if require_all else xp.ones((k,), dtype=bool)
    if rows is None:
        ignored = feasible & ~own_keys         # ignored_nodes, without a second pass over the labels
        scored = feasible & own_keys
    else:
        scored = own_keys
        ignored = ~scored
    if dom_counts is None:
        all_keys = own_keys if rows is None else \
            has_all_keys(xp, labels, constraints, n) if require_all else xp.ones((n,), dtype=bool)
        dom_counts = domain_counts(xp, n_values, counts, constraints,
                                   counted_domains(xp, labels, n_values, constraints, all_keys, affinity_ok, taints_ok))
    score = xp.zeros((k,), dtype=xp.float64)
    logs = xp.asarray(log_table(n + 3))     # log(size + 2) for size in [0, n], the same bits on every backend
    for c, count, dom_count in zip(constraints, counts, dom_counts):
        dom = _domains(xp, own, c, k)
        has_key = dom >= 0
        if c.is_hostname:
            size = xp.sum(scored)
            cnt = count if rows is None else count[rows]
        else:
            nv = n_values[c.key] if c.key >= 0 else 0
            value = xp.where(has_key, dom, _missing(c, n_values))
            # Domains of scored nodes; their pod counts come from every node passing the inclusion policies.
            present = bincount(xp, xp.where(scored, value, -1), xp.ones_like(value), nv + 1) > 0
            size = xp.sum(present)
            cnt = xp.where(has_key, dom_count[value], 0)
        score = score + _term(xp, cnt, logs[size + 2], has_key, c.max_skew)
    return score, scored, ignored


def _missing(c: Constraint, n_values) -> int:
    """The domain of a node without the constraint's key: the value id of "", or one more slot when no node has
    that value. Such nodes are scored or counted only when not every key is required."""
    return c.empty_value if c.empty_value >= 0 else (n_values[c.key] if c.key >= 0 else 0)


def counted_domains(xp, labels, n_values, constraints, all_keys, affinity_ok, taints_ok) -> list:
    """Per constraint, each node's domain where its pods count (it has every required key, all_keys, and passes
    the inclusion policies), -1 elsewhere ((N,) each); None for a hostname constraint (counted per node)."""
    n = labels.shape[0]
    out = []
    for c in constraints:
        if c.is_hostname:
            out.append(None)
            continue
        every = _domains(xp, labels, c, n)
        every = xp.where(every >= 0, every, _missing(c, n_values))
        out.append(xp.where(all_keys & _inclusion(xp, c, affinity_ok, taints_ok), every, -1))
    return out


def domain_counts(xp, n_values, counts, constraints, domains) -> list:
    """Per constraint, the matching pods of each domain ((V + 1,) int64: counts summed over counted_domains'
    `domains`), None for a hostname constraint."""
    return [None if d is None else bincount(xp, d, count, (n_values[c.key] if c.key >= 0 else 0) + 1)
            for c, count, d in zip(constraints, counts, domains)]


class SampledSpread:
    """PodTopologySpread's Score of the sampled cycles of one lap of the ring, one after another from one state:
    `windows` ((B, k) int64) holds one cycle's feasible nodes per row, disjoint, and a copy lands on a node of an
    earlier window, so the hostname counts at later windows stay and only the domains' pod counts move. scores(b)
    is what a cycle on windows[b] after the copies so far scores (pod_topology_spread_score at those rows,
    normalized over them); copy(node) counts a copy placed on `node` where the constraint's selector selects it
    (not for an empty selector: countPodsMatchSelector) and the node's pods count."""

    def __init__(self, labels, n_values, counts, constraints, affinity_ok, taints_ok, require_all: bool,
                 windows: np.ndarray):
        n = labels.shape[0]
        all_keys = has_all_keys(np, labels, constraints, n) if require_all else np.ones(n, bool)
        domains = counted_domains(np, labels, n_values, constraints, all_keys, affinity_ok, taints_ok)
        self.dom_counts = domain_counts(np, n_values, counts, constraints, domains)
        self.adds = [(dom_count, d) for c, dom_count, d in zip(constraints, self.dom_counts, domains)
                     if d is not None and c.selector and c.self_match]
        self.args = (labels, n_values, counts, constraints, affinity_ok, taints_ok, require_all)
        self.windows = windows

    def scores(self, b: int) -> np.ndarray:
        labels, n_values, counts, constraints, affinity_ok, taints_ok, require_all = self.args
        rows = self.windows[b]
        raw, ignored = pod_topology_spread_score(np, labels, n_values, counts, constraints, None, affinity_ok,
                                                 taints_ok, require_all, rows, self.dom_counts)
        return pod_topology_spread_normalize(np, raw, np.ones(len(rows), bool), ignored)

    def copy(self, node: int) -> None:
        for dom_count, domains in self.adds:
            if domains[node] >= 0:
                dom_count[domains[node]] += 1


def _term(xp, cnt, weight, has_key, max_skew: int):
    """scoreForCount of the nodes carrying the constraint's key: cnt * weight + (maxSkew - 1), the product rounded
    on its own before the sum, as in Go (no fused multiply-add)."""
    term = pin_rounding(xp, cnt.astype(xp.float64) * weight, xp.minimum(cnt, 0))
    return xp.where(has_key, term + float(max_skew - 1), 0.0)


def spread_scale(xp, raw, lo, hi):
    """NormalizeScore of raw scores of scored nodes whose raw scores range over [lo, hi] (both 0 when no node is
    scored): MaxNodeScore * (max + min - s) / max, in integers, and MaxNodeScore everywhere when max is 0. A raw
    score equal to lo scales to MaxNodeScore whatever hi is."""
    hi = xp.maximum(hi, 0)            # raw scores are never negative: the max over every node, unscored ones at 0
    return xp.where(hi == 0, MAX_NODE_SCORE, score_div(xp, MAX_NODE_SCORE * (hi + lo - raw), xp.maximum(hi, 1)))


def pod_topology_spread_normalize(xp, raw, feasible, ignored):
    scored = feasible & ~ignored
    hi = xp.max(xp.where(scored, raw, 0))
    lo = xp.min(xp.where(scored, raw, 1 << 62))
    lo = xp.where(xp.any(scored), lo, 0)
    return xp.where(scored, spread_scale(xp, xp.where(scored, raw, lo), lo, hi), 0)


@dataclass
class _Part:
    """One constraint of SpreadScores over the candidates."""
    constraint: Constraint
    has_key: np.ndarray            # (C,) bool the candidate carries the topology key
    adds: bool                     # a copy counts for the constraint (its selector selects it)
    size: int                      # scored nodes (hostname) or domains among them: the weight log(size + 2)
    term: np.ndarray               # (C,) float64 scoreForCount now (_term)
    count: np.ndarray | None = None     # hostname: (C,) int64 matching pods on each candidate
    value: np.ndarray | None = None     # otherwise: (C,) int64 each candidate's domain ("" for a missing key)
    counted: np.ndarray | None = None   # (C,) bool the inclusion policies count the candidate's pods
    dom_count: np.ndarray | None = None  # (V,) int64 matching pods per domain, from counted nodes
    present: np.ndarray | None = None   # (V,) int64 scored nodes per domain
    order: np.ndarray | None = None     # candidates by domain; start: (V + 1,) where each domain's begin
    start: np.ndarray | None = None


class SpreadScores(RawModel):
    """PodTopologySpread's raw Score over the candidates (the feasible nodes `rows`) while copies of the pod land, for
    the sequential loop of kernels/domain_batch.py: per constraint the matching pods per node (hostname) or per
    domain, and the number of domains among the scored nodes (the weight log(size + 2)). A copy adds itself where
    the constraint's selector selects it (not for an empty selector: countPodsMatchSelector), to its domain only
    from a node the inclusion policies count, and moves the scoreForCount of its node or of every candidate of its
    domain; a node that fills leaves the scored nodes, and when that changes a weight every raw score moves. The
    arithmetic is float_score's (_term added up in constraint order from 0.0, then _go_round)."""

    def __init__(self, labels, n_values, counts, constraints, feasible, affinity_ok, taints_ok, require_all: bool,
                 rows: np.ndarray):
        n = labels.shape[0]
        self.rows = rows
        all_keys = has_all_keys(np, labels, constraints, n) if require_all else np.ones(n, bool)
        scored = feasible & all_keys
        self.scored = all_keys[rows]
        self.logs = log_table(n + 3)
        self.parts: list[_Part] = []
        domains = counted_domains(np, labels, n_values, constraints, all_keys, affinity_ok, taints_ok)
        dom_counts = domain_counts(np, n_values, counts, constraints, domains)
        for c, count, counted, dom_count in zip(constraints, counts, domains, dom_counts):
            has_key = _domains(np, labels, c, n) >= 0
            part = _Part(c, has_key[rows], bool(c.selector) and bool(c.self_match), 0, np.zeros(len(rows)))
            if c.is_hostname:
                part.count, part.size = np.asarray(count, np.int64)[rows].copy(), int(scored.sum())
            else:
                nv = n_values[c.key] if c.key >= 0 else 0
                value = np.where(has_key, _domains(np, labels, c, n), _missing(c, n_values))
                part.value, part.counted = value[rows].astype(np.int64), counted[rows] >= 0
                part.present = np.bincount(value[scored], minlength=nv + 1)
                part.dom_count = dom_count
                part.size = int((part.present > 0).sum())
                part.order = np.argsort(part.value, kind="stable")
                part.start = np.searchsorted(part.value[part.order], np.arange(nv + 2))
            self.parts.append(part)
        self.raw = np.zeros(len(rows), np.int64)
        self._terms()

    def _cnt(self, part: _Part, idx):
        if part.count is not None:
            return part.count[idx]
        return np.where(part.has_key[idx], part.dom_count[part.value[idx]], 0)

    def _terms(self) -> None:
        """Every candidate's terms and raw score (the weights moved); `raw` is updated in place (the loop reads it)."""
        for part in self.parts:
            part.term = _term(np, self._cnt(part, slice(None)), self.logs[part.size + 2], part.has_key,
                              part.constraint.max_skew)
        self.raw[:] = self._raw(slice(None))

    def _raw(self, idx) -> np.ndarray:
        score = 0.0
        for part in self.parts:
            score = score + part.term[idx]
        return np.where(self.scored[idx], _go_round(np, np.asarray(score, np.float64)), 0)

    def copy(self, c: int):
        domains = []             # the candidates of each domain the copy counts in (c among them)
        for part in self.parts:
            if not part.adds:
                continue
            one = slice(c, c + 1)
            if part.count is not None:
                part.count[c] += 1
                part.term[c] = _term(np, part.count[one], self.logs[part.size + 2], part.has_key[one],
                                     part.constraint.max_skew)[0]
            elif part.counted[c]:
                v = int(part.value[c])
                part.dom_count[v] += 1
                members = part.order[part.start[v]:part.start[v + 1]]
                value = _term(np, part.dom_count[v:v + 1], self.logs[part.size + 2], np.ones(1, bool),
                              part.constraint.max_skew)[0]
                part.term[members] = np.where(part.has_key[members], value, 0.0)
                domains.append(members)
        old = int(self.raw[c])
        if not domains:
            self.raw[c] = self._raw(slice(c, c + 1))[0]
            return c, old
        idx = domains[0] if len(domains) == 1 else np.unique(np.concatenate(domains))
        old = self.raw[idx]
        self.raw[idx] = self._raw(idx)
        return idx, old

    def leave(self, c: int) -> bool:
        if not self.scored[c]:
            return False
        moved = False
        for part in self.parts:
            if part.count is not None:
                part.size -= 1
                moved = True
            else:
                v = int(part.value[c])
                part.present[v] -= 1
                if not part.present[v]:
                    part.size -= 1
                    moved = True
        if moved:
            self._terms()
        return moved
