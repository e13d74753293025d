"""Preemption around the plugins: the PostFilter extension point (upstream RunPostFilterPlugins), the dry run the
DefaultPreemption plugin asks for (victims per node, upstream SelectVictimsOnNode), pods nominated to nodes and
how Filter counts them (RunFilterPluginsWithNominatedPods), and the eviction of victims (victims waiting at Permit are
preempted there instead).

The dry run has two exact paths:
- vectorised, when every Filter that runs for the preemptor reads no pods (FIXED) or only its node's load columns
  (NODE_LOCAL, monotone: Plugin.removal_behaviour): the Filters run on node-table views whose load has the
  victims taken off (all candidate nodes at once), and the reprieve loop runs over victim rank
  (kernels/preemption.py);
- per node, for anything else (inter-pod affinity, topology spread, DRA claims, GPU shares, host ports): the whole
  cycle (PreFilter and Filter) runs on a copy of the cluster without the victims, one node and one reprieve at a
  time, as upstream does.
Pods nominated to a node count there, for pods of lower or equal priority, in both paths and in every Filter.
The vectorised path's per-node results are kept for the next identical preemptor (DryRunCache) while nothing they
read changes but the pods nominated to nodes; a node whose nominated load changed is evaluated again, unless the
row kept for it with one more such preemptor nominated there (ahead) was made with that load.
"""
from __future__ import annotations

import bisect
import dataclasses
import functools
from dataclasses import dataclass

import numpy as np

from ..cluster_models import Pod, pod_group_priority
from ..cluster_models.tensors import Vocab, bind_existing
from ..kernels import preemption as kernel
from ..kernels.status import ERROR, SUCCESS, UNSCHEDULABLE_AND_UNRESOLVABLE
from ..plugins.default_preemption import NO_VICTIMS
from ..plugins.framework import FIXED, NODE_LOCAL, POD_DELETED, FailedCycle, PodInfo
from ..plugins.labels import selector_matches
from .cluster import Nomination, Nominations
from .cycle import Evaluation, NodeRows, Prepared, WithNodes, prepare, run_filters
from .messages import node_reasons, patched_histogram
from .records import Preempted

# The status a preemption gives the victims waiting at Permit (upstream PreemptPod: waitingPod.Preempt(pluginName,
# "preempted")).
PREEMPTED_AT_PERMIT = "preempted"


class BoundRows:
    """Per binding-log position: what the dry runs read of each bound pod (priority, start time, requests, the
    PodGroup reference it carries), kept up to date as the log grows or is cut back."""

    def __init__(self):
        self.rows = 0
        self.truncations = 0
        self._tensors = None                       # the ClusterTensors whose log the rows follow
        self.priority = np.zeros(0, np.int64)
        self.start = np.zeros(0, np.float64)       # seconds on the scheduler's clock; NaN: unset (read as now)
        self.request = np.zeros((0, 0), np.int64)
        self.group_ref = np.zeros(0, np.int64)     # id in group_refs of the pod's PodGroup reference; -1: none
        # (namespace, schedulingGroup, workloadRef) of each reference seen, and a pod carrying it (the reference is
        # resolved to its PodGroup when victim units are made, so a PodGroup added later counts).
        self.group_refs = Vocab()
        self.group_ref_pods: list[Pod] = []
        # Each reference's PodGroup state (None: no group, or not one), while Groups.version stays `resolved_at`.
        self.resolved: dict[int, object] = {}
        self.resolved_at = -1
        self._groups: tuple | None = None          # group_table's answer, made at Groups.version _groups_at over
        self._groups_at = -1                       # the references then known
        self._group_index: list[int] = []          # per reference, its PodGroup's index in _group_list (-1: none)
        self._group_list: list = []                # the PodGroups references resolve to, in order of first seen
        self._group_ids: dict[int, int] = {}       # id(PodGroup) -> its index in _group_list
        self._group_modes: list[bool] = []         # per PodGroup of _group_list: in disruptionMode PodGroup
        self._group_priorities: list[int] = []     # per PodGroup of _group_list: its priority

    def started(self, cluster, keys: list[str], t: float) -> None:
        """Pods (by key) the scheduler bound at `t`: rows synced while they were only placed (a run's earlier pods
        when a later one runs PostFilter) read no start yet."""
        if not self.rows:           # nothing synced yet (no dry run so far): no row to date
            return
        tensors = cluster.tensors
        for r in [tensors.position(key) for key in keys]:
            if 0 <= r < self.rows:
                self.start[r] = t

    def sync(self, cluster, start_of) -> None:
        tensors = cluster.tensors
        if tensors is not self._tensors:       # a rebuilt node table (a node removed) has its own log: start over
            self._tensors, self.rows, self.truncations = tensors, 0, len(tensors.truncations)
        if len(tensors.truncations) > self.truncations:
            self.rows = min([self.rows, *tensors.truncations[self.truncations:]])
            self.truncations = len(tensors.truncations)
        need, r = tensors.log_mark(), len(tensors.resources)
        if need > len(self.priority) or self.request.shape[1] < r:
            cap = max(need, 2 * len(self.priority), 64) if need > len(self.priority) else len(self.priority)
            self.priority = np.resize(self.priority, cap)
            self.start = np.resize(self.start, cap)
            self.group_ref = np.resize(self.group_ref, cap)
            grown = np.zeros((cap, r), np.int64)
            grown[: len(self.request), : self.request.shape[1]] = self.request
            self.request = grown
        if need == self.rows:
            return
        new, keys = tensors.log()[0][self.rows: need], tensors.log_keys()[self.rows: need]
        priority, start, group_ref = [], [], []
        priority_of = cluster.priority
        # One pass over the pods (those of the input are cold memory by now), all they give at once; the first dry
        # run reads every pod of the input here, so the usual values (a priority set at admission, no PodGroup)
        # are read without a call.
        for pod, key in zip(new, keys):
            spec = pod.spec
            value = spec.priority
            priority.append(value if value is not None else priority_of(pod))
            start.append(start_of(pod, key))
            group_ref.append(-1 if spec.scheduling_group is None and spec.workload_ref is None
                             else self._group_ref(pod))
        sl = slice(self.rows, need)
        self.priority[sl], self.start[sl], self.group_ref[sl] = priority, start, group_ref
        requests = tensors.load_table()[0]
        self.request[sl, : requests.shape[1]] = requests[tensors.log_loads(np.arange(self.rows, need))]
        self.rows = need

    def group_state(self, ref: int, groups):
        """The state of the PodGroup reference `ref` resolves to now (None: none)."""
        if self.resolved_at != groups.version:
            self.resolved, self.resolved_at = {}, groups.version
        if ref not in self.resolved:
            self.resolved[ref] = groups.group_of(self.group_ref_pods[ref])[0]
        return self.resolved[ref]

    def group_table(self, groups, priority_classes) -> tuple[np.ndarray, list, np.ndarray, np.ndarray]:
        """Every reference's PodGroup as arrays: ((refs + 1,) int64 its index in the PodGroups list, -1 for none,
        the last slot -1 (what reference -1 reads); the PodGroups; (G + 1,) bool in disruptionMode PodGroup; (G + 1,)
        int64 their priorities; each with a last slot False / 0 that index -1 reads). Made again when Groups.version
        moves; references new since are added."""
        if self._groups_at != groups.version:
            self._groups_at, self._groups = groups.version, None
            self._group_index, self._group_list, self._group_ids = [], [], {}
            self._group_modes, self._group_priorities = [], []
        index, distinct, ids = self._group_index, self._group_list, self._group_ids
        if self._groups is not None and len(index) == len(self.group_ref_pods):
            return self._groups
        for r in range(len(index), len(self.group_ref_pods)):
            gs = self.group_state(r, groups)
            if gs is None:
                index.append(-1)
                continue
            if id(gs.group) not in ids:
                ids[id(gs.group)] = len(distinct)
                distinct.append(gs.group)
                self._group_modes.append(gs.group.spec.disruption_mode == "PodGroup")
                self._group_priorities.append(pod_group_priority(gs.group, priority_classes))
            index.append(ids[id(gs.group)])
        self._groups = (np.array(index + [-1], np.int64), distinct, np.array(self._group_modes + [False], bool),
                        np.array(self._group_priorities + [0], np.int64))
        return self._groups

    def _group_ref(self, pod: Pod) -> int:
        """The id of the PodGroup reference of a pod that carries one."""
        spec = pod.spec
        ref = self.group_refs.add((pod.metadata.namespace, repr(spec.scheduling_group), repr(spec.workload_ref)))
        if ref == len(self.group_ref_pods):
            self.group_ref_pods.append(pod)
        return ref


@dataclass
class VictimSelection:
    """SelectVictimsOnNode computed for some nodes, in scan order (what DryRunCache.store keeps)."""
    nodes: np.ndarray                 # (k,) node ids
    fits: np.ndarray                  # (k,) bool: the node is a candidate (the preemptor fits after evictions)
    unneeded: np.ndarray              # (k,) bool: the preemptor fits with every potential victim given back
    violations: np.ndarray            # (k,) int64 victims whose eviction violates a PDB
    top_priority: np.ndarray          # (k,) int64 highest victim priority
    priority_sum: np.ndarray          # (k,) int64 sum of (victim priority + MaxInt32 + 1)
    count: np.ndarray                 # (k,) int64 victims
    top_start: np.ndarray             # (k,) float64 earliest start among the highest-priority victims
    victim_rows: np.ndarray           # binding-log rows of the victims, node after node, most important first
    offsets: np.ndarray               # (k + 1,) each node's victims are victim_rows[offsets[i]:offsets[i + 1]]
    reasons: list                     # (k,) each node's failure reasons (tuple of strings), () for a candidate


@dataclass
class DryRunBatch:
    """SelectVictimsOnNode for some nodes, in scan order: which are candidates (what DefaultPreemption's scan
    reads; the rest of their results, by node, from the DryRun)."""
    nodes: np.ndarray                 # (k,) node ids
    fits: np.ndarray                  # (k,) bool: the node is a candidate (the preemptor fits after evictions)
    results: "DryRunCache"            # where the other results are

    def violations_at(self, at: np.ndarray) -> np.ndarray:
        """Victims whose eviction violates a PDB on the batch's nodes at positions `at`."""
        return self.results.violations[self.nodes[at]]


def _load_view(tensors, requested, pod_count):
    """The cluster tensors with the node table's load columns replaced (what NODE_LOCAL filters read)."""
    return WithNodes(tensors, dataclasses.replace(tensors.nodes, requested=requested, pod_count=pod_count))


def node_status(ev: Evaluation, n: int) -> np.ndarray:
    """(N,) int8 each node's status code (its first failing Filter's); nodes a PreFilter rejected or left out
    are UnschedulableAndUnresolvable. Computed once per evaluation."""
    if ev._status is None:
        ev._status = _node_status(ev, n)
    return ev._status


def _node_status(ev: Evaluation, n: int) -> np.ndarray:
    if ev.prefilter_message is not None or ev.error is not None:
        return np.full(n, UNSCHEDULABLE_AND_UNRESOLVABLE, np.int8)
    first = ev.first_failed()           # what the message read too
    out = np.zeros(n, np.int8)
    for i, name in enumerate(ev.filters):
        rows = first == i
        out[rows] = np.asarray(ev.codes[name])[rows]
    if ev.outside is not None:
        out[np.asarray(ev.outside)] = UNSCHEDULABLE_AND_UNRESOLVABLE
    return out


def pdb_matches(pdbs: list, pods: list[Pod]) -> tuple[np.ndarray, np.ndarray]:
    """((V, B) bool which PDB counts which pod, (B,) disruptionsAllowed now). pdbs: Cluster.disruptions_allowed().
    A PDB counts a pod of its namespace with labels its (non-empty) selector matches, not already in its
    disruptedPods."""
    matches = np.zeros((len(pods), len(pdbs)), bool)
    if pdbs:
        for i, pod in enumerate(pods):
            labels = pod.metadata.labels
            if not labels:
                continue
            for j, (pdb, _) in enumerate(pdbs):
                sel = pdb.spec.selector
                if (pdb.metadata.namespace == pod.metadata.namespace and sel is not None
                        and (sel.match_labels or sel.match_expressions) and selector_matches(sel, labels)
                        and pod.metadata.name not in (pdb.status.disrupted_pods if pdb.status else {})):
                    matches[i, j] = True
    return matches, np.array([a for _, a in pdbs], np.int64)


def vectorised(p: Prepared) -> bool:
    """Whether Filter, with pods taken off nodes or nominated to them, can run on load views (see module doc).
    Asked for every preemptor of a run (the kept cycle, its dry run): once per Prepared."""
    if p._vectorised is None:
        p._vectorised = not p.shape.host_ports and all(plugin.removal_behaviour(state) in (FIXED, NODE_LOCAL)
                                                       for plugin, state in p.filters)
    return p._vectorised


def with_nominated(xp, cluster, framework, p: Prepared, pod: Pod, priority: int) -> Evaluation:
    """Filter on every node as RunFilterPluginsWithNominatedPods runs it: where pods of priority >= `priority` are
    nominated, Filter must pass with them (pass 0) and without them (pass 1)."""
    tensors = cluster.tensors
    if vectorised(p):
        # Monotone node-local filters: pass 1 never fails where pass 0 passed, so pass 0 alone decides.
        load = cluster.nominations.load_for(pod, priority, tensors)
        if load is None:
            return run_filters(xp, p, tensors)
        requested, count = tensors.nodes.requested + load[0], tensors.nodes.pod_count + load[1]
        return run_filters(np, p, _load_view(tensors, requested, count))
    ev = run_filters(xp, p, tensors)
    nominees = cluster.nominations.for_pod(pod, priority, tensors.node_index)
    for node in sorted({n for _, n in nominees}):
        extra = [(nom.pod, n) for nom, n in nominees if n == node]
        sub = _copy_without(cluster, (), extra)
        ev0 = run_filters(np, prepare(p.shape, sub, framework), sub.tensors)
        if not bool(np.asarray(ev0.feasible)[node]):
            for name in ev.codes:
                ev.codes[name] = np.asarray(ev.codes[name]).copy()
                ev.payloads[name] = np.asarray(ev.payloads[name]).copy()
                if name in ev0.codes:
                    ev.codes[name][node] = np.asarray(ev0.codes[name])[node]
                    ev.payloads[name][node] = np.asarray(ev0.payloads[name])[node]
            ev.feasible = np.asarray(ev.feasible).copy()
            ev.feasible[node] = False
    return ev


def tensors_state(tensors) -> tuple:
    """What identifies the node table's state apart from pods nominated to nodes: the table and its vocabularies'
    widths, its load changes, the binding log (growth, cuts, removals)."""
    nodes = tensors.nodes
    return (id(tensors), nodes.requested.shape, nodes.labels.shape, nodes.taints.shape, nodes.host_ports.shape,
            len(tensors.changes), tensors.log_mark(), len(tensors.truncations), tensors.removals())


@dataclass
class KeptFailure:
    """A failed cycle's Filter results, pods nominated to nodes counted, kept for the next pod of its run: an
    identical pod that sees the same state but for the pods nominated since (Placer.place_each hands it on; the
    state is checked again before it is used)."""
    p: Prepared
    ev: Evaluation
    pod: Pod            # the pod evaluated (its own nomination was left out)
    priority: int
    mark: int           # Nominations.mark() before it was evaluated
    state: tuple        # tensors_state() then: used only while it holds (nothing but nominations changed)
    message: str        # the FitError of `ev`, before PostFilter's text
    rejectors: frozenset    # the plugins that rejected the pod in `ev` (placement.rejectors)


def _on_rows(filters: tuple[str, ...], moved: Evaluation, base: Evaluation, rows: np.ndarray) -> Evaluation:
    """Filter results on the node rows `rows`: `moved`'s (computed on those rows) for the Filters it ran, `base`'s
    (over every node) for the others."""
    codes, payloads = {}, {}
    feasible = np.ones(len(rows), bool)
    for name in filters:
        source, at = (moved, slice(None)) if name in moved.codes else (base, rows)
        codes[name] = np.asarray(source.codes[name])[at]
        payloads[name] = np.asarray(source.payloads[name])[at]
        feasible &= codes[name] == SUCCESS
    return Evaluation(filters, codes, payloads, feasible)


def with_nominated_again(cluster, framework, kept: KeptFailure, pod: Pod, priority: int) -> Evaluation | None:
    """with_nominated for `pod`, of kept's shape and priority, from kept's results: only the nodes whose
    nominations changed since (and both pods' own nominated nodes, whose load one of them leaves out) are
    evaluated again, the message's histogram and the node statuses patched on those rows. None where that is not
    exact (some Filter reads more than its node's row, the changes are forgotten, another priority)."""
    nominations, tensors, old = cluster.nominations, cluster.tensors, kept.ev
    if priority != kept.priority or old.extras or not vectorised(kept.p):
        return None
    changed = nominations.changed_since(kept.mark)
    if changed is None:
        return None
    for key in (pod.key, kept.pod.key):
        nom = nominations.get(key)
        if nom is not None:
            changed.add(nom.node)
    index = tensors.node_index
    ids = sorted([index[name] for name in changed if name in index])
    if old._ahead is not None and len(ids) <= _FEW:
        ahead_requested, ahead_count, same = old._ahead
        # A row or two per preemptor of a run: scalar reads beat numpy's per-call cost.
        if all(same[v] and ahead_count[v] == c and ahead_requested[v].tolist() == r
               for v, (r, c) in zip(ids, nominations.load_rows(pod, priority, tensors, ids))):
            return old
    rows = np.array(ids, np.int64)
    requested, count = nominations.load_at([pod], priority, tensors, rows)
    view = NodeRows(tensors.nodes, rows, requested=tensors.nodes.requested[rows] + requested,
                    pod_count=tensors.nodes.pod_count[rows] + count)
    # Nominated pods move only the NODE_LOCAL Filters; the others' results on these rows stand.
    moved = run_filters(np, kept.p.node_local(), WithNodes(tensors, view))
    if all(np.array_equal(moved.codes[name], old.codes[name][rows])
           and np.array_equal(moved.payloads[name], old.payloads[name][rows]) for name in moved.codes):
        # Nothing moved (a node that failed fails alike with more pods nominated there): kept's results stand
        # whole, its message, statuses and rejectors with them; likely for the next pod of the run too.
        if old._ahead is None:
            old._ahead = _ahead_of(tensors, nominations, kept, pod, priority)
        return old
    sub = _on_rows(old.filters, moved, old, rows)
    sub.narrowing = old.narrowing
    if old.outside is not None:
        sub.outside = old.outside[rows]
        sub.feasible = sub.feasible & ~sub.outside
    # A failed cycle's results (no scores): the previous pod's, copied, then patched on the rows.
    ev = Evaluation(old.filters, {k: np.array(v) for k, v in old.codes.items()},
                    {k: np.array(v) for k, v in old.payloads.items()}, np.array(old.feasible),
                    outside=old.outside, narrowing=old.narrowing)
    for name in ev.codes:
        ev.codes[name][rows] = sub.codes[name]
        ev.payloads[name][rows] = sub.payloads[name]
    ev.feasible[rows] = sub.feasible
    if old._first is not None:
        ev._first = old._first.copy()
        ev._first[rows] = sub.first_failed()
    if old._histogram is not None:
        ev._histogram = patched_histogram(framework, old, ev, rows, tensors)
    if old._status is not None:
        ev._status = old._status.copy()
        ev._status[rows] = node_status(sub, len(rows))
    return ev


def _ahead_of(tensors, nominations: Nominations, kept: KeptFailure, pod: Pod, priority: int) -> tuple:
    """The NODE_LOCAL Filters on every node with one more pod of kept's requests nominated there than now (what a
    node becomes when the next preemptor of a run is nominated to it): ((N, R) requested and (N,) pod count
    nominated, for `pod`; (N,) bool whether every code and payload then is kept's). Node-local, so where a node's
    nominated load is that again, kept's results there stand whenever this says so, without running Filter."""
    requested, count = nominations.load_at([pod], priority, tensors, np.arange(tensors.nodes.size))
    width = requested.shape[1]
    requested[:, : min(width, len(kept.p.request))] += kept.p.request[:width]
    count += 1
    ev = run_filters(np, kept.p.node_local(), _load_view(tensors, tensors.nodes.requested + requested,
                                                         tensors.nodes.pod_count + count))
    same = np.ones(len(count), bool)
    for name in ev.codes:
        same &= (ev.codes[name] == kept.ev.codes[name]) & (ev.payloads[name] == kept.ev.payloads[name])
    return requested, count, same


def passes_nominated(cluster, p: Prepared, pods: list[Pod], priority: int, nodes: np.ndarray) -> np.ndarray | None:
    """evaluateNominatedNode for pods of one shape and priority, each on its own nominated node (`nodes`,
    distinct): (k,) bool whether each passes every Filter there alone, with the pods nominated there that count
    for it (a PreFilterResult is not consulted, as upstream does not); None when some Filter may read more than
    its node's row (the caller evaluates every node instead)."""
    if not vectorised(p):
        return None
    tensors, nominations = cluster.tensors, cluster.nominations
    nodes = np.asarray(nodes, np.int64)
    requested, count = nominations.load_at([], priority, tensors, nodes)
    # Each pod's own nomination does not count for it: taken off its node's row, the rows of one request vector (a
    # run's pods share it) at once, rather than each pod's row searched for and patched in turn.
    row_of = {node: i for i, node in enumerate(nodes.tolist())}
    own_rows: dict[int, tuple[np.ndarray, list[int]]] = {}
    for pod in pods:
        own = nominations.get(pod.key)
        row = -1 if own is None or own.priority < priority else row_of.get(tensors.node_index.get(own.node, -1), -1)
        if row >= 0:
            own_rows.setdefault(id(own.request), (own.request, []))[1].append(row)
    for request, rows in own_rows.values():
        np.subtract.at(requested[:, : len(request)], rows, request)
        np.subtract.at(count, rows, 1)
    rows = NodeRows(tensors.nodes, nodes, requested=tensors.nodes.requested[nodes] + requested,
                    pod_count=tensors.nodes.pod_count[nodes] + count)
    return np.asarray(run_filters(np, dataclasses.replace(p, allowed=None), WithNodes(tensors, rows)).feasible)


def _copy_without(cluster, removed: tuple, added: list[tuple[Pod, int]]):
    """A copy of the cluster without the bound pods `removed` (keys; their load and what their plugins held
    released on the copy) and with `added` (pod, node id) bound: nominated pods, whose columns the real tables
    have had since they were nominated (the copy shares the vocabularies)."""
    tensors = cluster.tensors
    sub = cluster.restricted(np.arange(tensors.nodes.size), tensors.live_bound_arrays())
    for key in removed:
        sub.tensors.unbind(key)
        sub.claims.release(key)
        sub.gpus.release(key)
    for pod, node in added:
        bind_existing(sub.tensors, pod, node)
    return sub


# Up to this many nodes (one or two per preemptor of a run), DryRunCache reads and copies rows and keeps its counts
# one scalar at a time: numpy's per-call cost would be the whole cost.
_FEW = 8


class NodeResults:
    """Dry-run results laid out over every node (VictimSelection rows, stored): `first` is where a node's victims
    start in DryRunCache.victims, `reason` the id of its failure reasons in DryRunCache.reasons (-1: a candidate),
    `criteria` the id of a candidate's node-choice criteria in DryRunCache.criteria_seen (-1: not a candidate),
    `unneeded` whether the preemptor fits there with no victim (neither a candidate nor a failure: an error).
    The columns are fields of one record per node (`records`), so a node's result moves in one copy."""
    ROW = np.dtype([("fits", bool), ("unneeded", bool), ("violations", np.int64), ("top_priority", np.int64),
                    ("priority_sum", np.int64), ("count", np.int64), ("top_start", np.float64), ("reason", np.int64),
                    ("first", np.int64), ("criteria", np.int64)])

    def __init__(self, n: int):
        self.known = np.zeros(n, bool)
        self.records = np.zeros(n, self.ROW)
        self.records["reason"] = self.records["criteria"] = -1
        self.fits, self.unneeded, self.violations, self.top_priority, self.priority_sum, self.count, self.top_start, \
            self.reason, self.first, self.criteria = (self.records[name] for name in self.ROW.names)  # (n,) views each

    def put(self, nodes: np.ndarray, sel: VictimSelection, at: slice, reason: np.ndarray, first: np.ndarray,
            criteria: np.ndarray) -> None:
        """Keep the results at positions `at` of `sel` (with their reason, victim start and criteria ids) for
        `nodes`."""
        self.known[nodes] = True
        self.fits[nodes] = sel.fits[at]
        self.unneeded[nodes] = sel.unneeded[at]
        self.violations[nodes] = sel.violations[at]
        self.top_priority[nodes] = sel.top_priority[at]
        self.priority_sum[nodes] = sel.priority_sum[at]
        self.count[nodes] = sel.count[at]
        self.top_start[nodes] = sel.top_start[at]
        self.reason[nodes] = reason[at]
        self.first[nodes] = first[at]
        self.criteria[nodes] = criteria[at]

    def take(self, other: "NodeResults", nodes: np.ndarray) -> None:
        """The results `other` holds for `nodes` become theirs here."""
        self.known[nodes] = True
        self.records[nodes] = other.records[nodes]


class KnownCandidates:
    """The candidates among the nodes a kept DryRunCache knows (node ids, ascending), how many of them violate a PDB
    and how many have each node-choice criteria id: all a scan reads when it knows every node, no candidate
    violates a PDB and all tie (DryRun.settled), kept up to date node by node instead of counted per scan."""

    def __init__(self):
        self.nodes: list[int] = []
        self.violating = 0
        self.criteria: dict[int, int] = {}        # criteria id -> candidates with it

    @classmethod
    def of(cls, results: "DryRunCache") -> "KnownCandidates":
        out = cls()
        at = np.flatnonzero(results.known & results.fits)
        out.nodes = at.tolist()
        out.violating = int(np.count_nonzero(results.violations[at]))
        for criteria in results.criteria[at].tolist():
            out.criteria[criteria] = out.criteria.get(criteria, 0) + 1
        return out

    def add(self, node: int, violations: int, criteria: int) -> None:
        bisect.insort(self.nodes, node)
        self.violating += violations > 0
        self.criteria[criteria] = self.criteria.get(criteria, 0) + 1

    def remove(self, node: int, violations: int, criteria: int) -> None:
        del self.nodes[bisect.bisect_left(self.nodes, node)]
        self.violating -= violations > 0
        self.criteria[criteria] -= 1
        if not self.criteria[criteria]:
            del self.criteria[criteria]


class DryRunCache(NodeResults):
    """Per-node results of the dry run (VictimSelection rows over every node), filled as nodes are asked for. Every
    dry run keeps its results here; the vectorised dry run's are kept across the failed cycles of identical
    preemptors (one shape, one priority) while nothing else they read changes: the binding log (pods bound or
    waiting at Permit) and the load columns, the nodes, the clock, the pods waiting at Permit (which PDBs do not
    count healthy), the PDBs (`key`). Pods nominated to a node change its result, so a node whose nominations
    changed since it was evaluated is evaluated again (`refresh`), and so is a preemptor's own nominated node (the
    load there leaves the preemptor itself out). Ids of the same state give the same rows; the scan, the early stop
    and the choice among candidates stay with the plugin.

    Under one key a node's result is a function of the load nominated there alone. A kept dry run evaluates each
    node twice in one batch: with the nominated load now, and with one more pod of the preemptor's requests
    nominated there (`ahead`, with that load): what the node becomes when the next preemptor of a run nominates
    it. A stale node whose nominated load is that of its ahead row takes it instead of being evaluated again."""

    def __init__(self):
        self.key = None
        self.memo: dict = {}

    def reset(self, key, n: int, mark: int = 0) -> None:
        self.key = key
        self.memo = {}                                   # what every dry run under this key computes alike
        self.mark = mark                                 # Nominations.mark() the results are up to date with
        self.own: list[int] = []                         # nodes evaluated leaving the preemptor's own nomination out
        self.forgotten: set[int] = set()                 # nodes evaluated once, stale since
        NodeResults.__init__(self, n)                    # each node's result, where known
        self.unknown = n                                 # nodes not known (a scan need not look when none is)
        # The candidates among them, for a kept cache (a dry run's own results are not scanned again).
        self.listed = KnownCandidates() if key is not None else None
        self.reasons = Vocab()                           # failure reasons (tuples) seen
        # Node-choice criteria (tuples, as DryRun.criteria orders them) seen: candidates with one id tie.
        self.criteria_seen = Vocab()
        self.victims = np.zeros(0, np.int64)             # each node's victims: victims[first:first + count]
        self.ahead = NodeResults(n)                      # each node's result with the load `ahead_load` nominated
        self.ahead_load: tuple[np.ndarray, np.ndarray] | None = None    # ((N, R) requested, (N,) pod count)

    def refresh(self, nominations: Nominations, node_index: dict, pod: Pod) -> None:
        """Before `pod`'s dry run: forget the nodes whose nominations changed since the last one, and the nodes
        whose load left a preemptor's own nomination out (the last one's and this one's)."""
        changed = nominations.changed_since(self.mark)
        self.mark = nominations.mark()
        if changed is None:
            self.known[:] = False
            self.unknown, self.listed = len(self.known), KnownCandidates()
            self.forgotten.clear()
            changed = ()
        own = nominations.get(pod.key)
        ids = [node_index[name] for name in changed if name in node_index] + self.own
        self.own = [node_index[own.node]] if own is not None and own.node in node_index else []
        for node in ids + self.own:
            if self.known[node]:
                self._unlist([node])
                self.known[node] = False
                self.unknown += 1
                self.forgotten.add(node)

    def to_evaluate(self, nodes: np.ndarray) -> np.ndarray:
        """The stale ones of `nodes` (not evaluated since what they read last changed), and with them every node
        forgotten since it was evaluated: later scans meet those again (one per preemptor in a run of them), so one
        batch serves several preemptors. Ascending."""
        if not self.unknown:
            return nodes[:0]
        stale = nodes[~self.known[nodes]]
        if not len(stale) or not self.forgotten:
            return stale
        wanted = np.zeros(len(self.known), bool)        # a mask over the nodes: cheaper than sorting the union
        wanted[stale] = True
        wanted[list(self.forgotten)] = True
        self.forgotten.clear()
        return np.flatnonzero(wanted)

    def take_ahead(self, nodes: np.ndarray, requested: np.ndarray, count: np.ndarray) -> np.ndarray:
        """Nodes whose ahead row was made with the nominated load they have now ((k, R) requested, (k,) pod
        count) take it as their result; returns the others' positions in `nodes`."""
        if self.ahead_load is None:
            return np.arange(len(nodes))
        ahead_requested, ahead_count = self.ahead_load
        if len(nodes) > _FEW:
            hit = self.ahead.known[nodes] & (ahead_count[nodes] == count)
            hit &= (ahead_requested[nodes] == requested).all(axis=1)
            taken = nodes[hit]
            self._unlist(taken)
            self.take(self.ahead, taken)
            self._list(taken)
            return np.flatnonzero(~hit)
        return np.array(self.take_ahead_few(nodes.tolist(), list(zip(requested.tolist(), count.tolist()))), np.int64)

    def take_ahead_few(self, nodes: list[int], loads: list[tuple[list[int], int]]) -> list[int]:
        """take_ahead for a node or two (per preemptor of a run), their nominated loads in Python values
        (Nominations.load_rows): scalar reads and copies beat numpy's per-call cost. Returns the others'
        positions."""
        if self.ahead_load is None:
            return list(range(len(nodes)))
        ahead_requested, ahead_count = self.ahead_load
        known, left = self.ahead.known, []
        for j, (node, (r, c)) in enumerate(zip(nodes, loads)):
            if not (known[node] and ahead_count[node] == c and ahead_requested[node].tolist() == r):
                left.append(j)
                continue
            self._unlist([node])
            self.known[node] = True
            self.records[node] = self.ahead.records[node]
            self._list([node])
        return left

    def _unlist(self, nodes) -> None:
        """`nodes` (distinct) are about to get new results or be forgotten: the known ones leave the counts (many at
        once: _list counts again)."""
        if len(nodes) > _FEW:
            return
        for node in nodes if isinstance(nodes, list) else nodes.tolist():
            if not self.known[node]:
                self.unknown -= 1
            elif self.listed is not None and self.fits[node]:
                self.listed.remove(node, int(self.violations[node]), int(self.criteria[node]))

    def _list(self, nodes) -> None:
        """`nodes` (distinct) got their results: they enter the counts."""
        if len(nodes) > _FEW:
            self.unknown = len(self.known) - int(np.count_nonzero(self.known))
            if self.listed is not None:
                self.listed = KnownCandidates.of(self)
            return
        if self.listed is not None:
            for node in nodes if isinstance(nodes, list) else nodes.tolist():
                if self.fits[node]:
                    self.listed.add(node, int(self.violations[node]), int(self.criteria[node]))

    def store(self, sel: VictimSelection, ahead: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """Keep `sel`'s results. ahead: ((k, R) requested, (k,) pod count): sel's second half is its first half's k
        nodes again, with that load nominated, kept as their ahead rows."""
        reason = np.array([self.reasons.add(r) if r else -1 for r in sel.reasons], np.int64)
        criteria = np.full(len(sel.nodes), -1, np.int64)
        at = np.flatnonzero(sel.fits)
        criteria[at] = [self.criteria_seen.add(c) for c in zip(
            sel.violations[at].tolist(), sel.top_priority[at].tolist(), sel.priority_sum[at].tolist(),
            sel.count[at].tolist(), sel.top_start[at].tolist())]
        first = len(self.victims) + sel.offsets[:-1]
        self.victims = np.concatenate([self.victims, sel.victim_rows])
        k = len(sel.nodes) if ahead is None else len(sel.nodes) // 2
        nodes = sel.nodes[:k]
        self._unlist(nodes)
        self.put(nodes, sel, slice(None, k), reason, first, criteria)
        self._list(nodes)
        if ahead is None:
            return
        if self.ahead_load is None:
            n = len(self.known)
            self.ahead_load = (np.zeros((n, ahead[0].shape[1]), np.int64), np.zeros(n, np.int64))
        self.ahead.put(nodes, sel, slice(k, None), reason, first, criteria)
        self.ahead_load[0][nodes] = ahead[0]
        self.ahead_load[1][nodes] = ahead[1]

    def batch(self, nodes: np.ndarray) -> DryRunBatch:
        return DryRunBatch(nodes, self.fits[nodes], self)

    def victim_rows(self, node: int) -> list[int]:
        """Binding-log rows of the victims on `node`, most important first."""
        first, count = int(self.first[node]), int(self.count[node])
        return self.victims[first: first + count].tolist()

    def failures(self, nodes: np.ndarray) -> dict[tuple[str, ...], int]:
        ids = self.reason[nodes]
        failing, hits = np.unique(ids[ids >= 0], return_counts=True)
        return {self.reasons.items[i]: c for i, c in zip(failing.tolist(), hits.tolist())}


class DryRun:
    """SelectVictimsOnNode for one failed cycle of one pod (handed to PostFilter plugins). Nothing is computed
    until a plugin asks for a node."""

    def __init__(self, cluster, framework, p: Prepared, pod: Pod, priority: int, rows: BoundRows, now: float,
                 nominations: Nominations, waiting: frozenset[str], cache: "DryRunCache | None" = None):
        self.cluster = cluster
        self.framework = framework
        self.p = p
        self.pod = pod
        self.priority = priority
        self.rows = rows
        self.now = now
        self.nominations = nominations
        self.waiting = waiting           # pods waiting at Permit: victims as bound pods are, but not healthy to PDBs
        self.vectorised = vectorised(p)
        self.log_pods = cluster.tensors.log()[0]
        # Kept results get rows ahead (DryRunCache), which only a later dry run under the same key can read.
        self.ahead = cache is not None and self.vectorised
        if not self.ahead:
            # Results of this dry run alone (the per-node path's results depend on more than nominated load).
            cache = DryRunCache()
            cache.reset(None, cluster.tensors.nodes.size)
        self.results = cache
        self.scanned_to = -1             # the node the scan stopped after (-1: none scanned)
        self._pdbs = None

    def chunk(self, left: int, missing: int, scanned: int = 0, found: int = 0) -> int:
        """How many nodes the next select() takes when `missing` more candidates are wanted after `found` in the
        first `scanned` nodes: vectorised, as many nodes as that rate says hold them (at first, the rate among the
        nodes the kept results know, or every node), with room to spare, doubling the scan while none was found;
        else one at a time."""
        if not self.vectorised:
            return 1
        if scanned == 0:
            # One chunk usually reaches the stop in a run of preemptors, whose kept results know most nodes.
            results = self.results
            known = len(results.known) - results.unknown
            fits = len(results.listed.nodes) if results.listed is not None else \
                int(np.count_nonzero(results.fits & results.known))
            return min(left, max(missing, 64, 2 * missing * known // fits if fits else 0))
        if found == 0:
            return min(left, scanned)
        return min(left, max(64, 2 * missing * scanned // found))

    @functools.cached_property
    def nominees(self) -> list[tuple[Nomination, int]]:
        """Per-node path: (nomination, node id) of those pods."""
        return self.nominations.for_pod(self.pod, self.priority, self.cluster.tensors.node_index)

    def _shared(self, name: str, make):
        """A value every dry run under the same cache key computes alike: made once per key."""
        memo = self.results.memo
        if name not in memo:
            memo[name] = make()
        return memo[name]

    @functools.cached_property
    def potential(self) -> tuple[np.ndarray, np.ndarray]:
        """(binding-log rows, their nodes) of the potential victims anywhere: live (bound or waiting at Permit: a
        waiting pod is assumed on its node, as upstream's snapshot has it) and of lower priority."""
        return self._shared("potential", self._potential)

    @functools.cached_property
    def _potential_by_node(self) -> tuple[np.ndarray, np.ndarray]:
        """The potential victims' rows grouped by node, most important first within a node (victim_order, once per
        cache key rather than per batch), and (N + 1,) where each node's group starts."""
        def make():
            rows, nodes = self.potential
            order = kernel.victim_order(nodes, self.rows.priority[rows], self._start(rows), rows)
            return rows[order], np.searchsorted(nodes[order], np.arange(self.cluster.tensors.nodes.size + 1))
        return self._shared("by_node", make)

    def _potential(self) -> tuple[np.ndarray, np.ndarray]:
        _, nodes, removed = self.cluster.tensors.log()
        live = np.ones(len(self.log_pods), bool)
        if removed:
            live[list(removed)] = False
        lower = self.rows.priority[: len(self.log_pods)] < self.priority
        rows = np.flatnonzero(live & lower)
        return rows, nodes[rows].astype(np.int64)

    @functools.cached_property
    def _fixed_codes(self) -> Evaluation:
        """The FIXED Filters over every node, once (per cache key): removing pods does not move them (their state
        may hold per-node arrays, so they are not re-run on row subsets)."""
        def make():
            p = dataclasses.replace(self.p, allowed=None, filters=tuple(
                (plugin, state) for plugin, state in self.p.filters if plugin.removal_behaviour(state) == FIXED))
            return run_filters(np, p, self.cluster.tensors)
        return self._shared("fixed", make)

    def _evaluate_rows(self, nodes: np.ndarray, requested: np.ndarray, count: np.ndarray) -> Evaluation:
        """Every Filter on the node rows `nodes` with their load replaced (potential nodes are all inside any
        PreFilterResult, so it is not applied)."""
        rows = NodeRows(self.cluster.tensors.nodes, nodes, requested=requested, pod_count=count)
        moved = run_filters(np, self.p.node_local(), WithNodes(self.cluster.tensors, rows))
        return _on_rows(self.p.filter_names, moved, self._fixed_codes, nodes)

    def node_name(self, node: int) -> str:
        return self.cluster.tensors.nodes.names[node]

    # -- what DefaultPreemption reads of nodes select() evaluated --------------------------------------
    def criteria(self, nodes: np.ndarray) -> tuple[np.ndarray, ...]:
        """What pickOneNodeForPreemption orders `nodes` by: (PDB violations, highest victim priority, sum of (victim
        priority + MaxInt32 + 1), victims, earliest start among the highest-priority victims)."""
        r = self.results
        return r.violations[nodes], r.top_priority[nodes], r.priority_sum[nodes], r.count[nodes], r.top_start[nodes]

    def alike(self, nodes: np.ndarray) -> bool:
        """Whether the candidates `nodes` all meet the node-choice criteria alike (pickOneNodeForPreemption then
        takes the first), read from each node's criteria id."""
        ids = self.results.criteria[nodes]
        return bool(ids.min() == ids.max())

    def victims_of(self, node: int) -> tuple[tuple[Pod, ...], tuple[str, ...]]:
        """The victims on `node`, most important first, and their keys."""
        rows, keys = self.results.victim_rows(node), self.cluster.tensors.log_keys()
        return tuple(map(self.log_pods.__getitem__, rows)), tuple(map(keys.__getitem__, rows))

    def failures(self, nodes: np.ndarray) -> dict[tuple[str, ...], int]:
        """Failure reasons (tuple) -> how many of `nodes` fail with them (not candidates)."""
        return self.results.failures(nodes)

    def unneeded(self, nodes: np.ndarray) -> list[str]:
        """The names of those of `nodes` (in their order) where the preemptor fits with every potential victim
        given back: SelectVictimsOnNode succeeds there without a victim."""
        names = self.cluster.tensors.nodes.names
        return [names[n] for n in nodes[self.results.unneeded[nodes]].tolist()]

    # -- what both paths share ----------------------------------------------------------------------
    def _victims_by_node(self, nodes: np.ndarray):
        """Potential victims on `nodes` in importance order, grouped by node in the order of `nodes`: (rows,
        batch position of each row's node)."""
        grouped, bounds = self._potential_by_node
        nodes = np.asarray(nodes, np.int64)
        count = bounds[nodes + 1] - bounds[nodes]
        ends = np.cumsum(count)
        rows = grouped[np.repeat(bounds[nodes] - (ends - count), count) + np.arange(int(ends[-1]) if len(ends) else 0)]
        return rows, np.repeat(np.arange(len(nodes)), count)

    def _start(self, rows: np.ndarray) -> np.ndarray:
        """Start times of binding-log rows on the scheduler's clock; unset reads as now (GetPodStartTime)."""
        start = self.rows.start[rows]
        return np.where(np.isnan(start), self.now, start)

    def _pdb_matches(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self._pdbs is None:
            self._pdbs = self.cluster.disruptions_allowed(self.waiting)
        if not self._pdbs:
            return np.zeros((len(rows), 0), bool), np.zeros(0, np.int64)
        return pdb_matches(self._pdbs, [self.log_pods[r] for r in rows.tolist()])

    def _summary(self, nodes, fits, rows, at, victim, violating, reasons) -> VictimSelection:
        k = len(nodes)
        # Upstream lists the victims in reprieve order (PDB-violating first) and then sorts them by importance;
        # Go sorts a few elements by insertion, so equally important victims keep their reprieve order.
        met = np.empty(len(rows), np.int64)
        keep = victim & fits[at]
        if not keep.any():           # a node the preemptor fits (if any) needs no victim
            nothing = np.zeros(k, np.int64)
            lowest = np.full(k, np.iinfo(np.int64).min, np.int64)
            return VictimSelection(np.asarray(nodes), np.zeros(k, bool), fits, nothing, lowest, nothing, nothing,
                                   np.full(k, np.inf), np.zeros(0, np.int64), np.zeros(k + 1, np.int64), reasons)
        met[kernel.reprieve_order(at, violating)] = np.arange(len(rows))
        rows, at, violating, met = rows[keep], at[keep], violating[keep], met[keep]
        prio, start = self.rows.priority[rows], self._start(rows)
        order = kernel.victim_order(at, prio, start, met)
        rows, at, violating, prio, start = rows[order], at[order], violating[order], prio[order], start[order]
        count = np.bincount(at, minlength=k).astype(np.int64)
        offsets = np.concatenate([[0], np.cumsum(count)])
        top = np.full(k, np.iinfo(np.int64).min, np.int64)
        np.maximum.at(top, at, prio)
        total = np.zeros(k, np.int64)
        np.add.at(total, at, prio + kernel.MAX_INT32 + 1)
        top_start = np.full(k, np.inf)
        is_top = prio == top[at]
        np.minimum.at(top_start, at[is_top], start[is_top])
        violations = np.bincount(at[violating], minlength=k).astype(np.int64)
        # A node where every potential victim was given back is no candidate: DryRunPreemption turns
        # SelectVictimsOnNode's success without victims into an Error status.
        unneeded = fits & (count == 0)
        return VictimSelection(np.asarray(nodes), fits & ~unneeded, unneeded, violations, top, total, count, top_start,
                               rows, offsets, reasons)

    # -- select ---------------------------------------------------------------------------------------
    def stopped_at(self, node: int) -> None:
        """The scan stopped after `node` (the next preemption's scan starts after it, with tie_break "first")."""
        self.scanned_to = node

    def settled(self) -> list[int] | None:
        """The candidates (node ids, ascending) when the kept results know every node, no candidate violates a PDB
        and all meet the node-choice criteria alike: the scan then needs no dry run, and takes its first
        candidate. None otherwise."""
        results = self.results
        if results.listed is None:
            return None
        self._settle()
        listed = results.listed
        return None if results.unknown or listed.violating or len(listed.criteria) > 1 else listed.nodes

    def _settle(self) -> None:
        """The nodes preemptors were nominated to since: those whose ahead row holds take it before a scan (usually
        every one), so the scan finds no stale node."""
        results = self.results
        if self.ahead and results.forgotten and results.ahead_load is not None:
            tensors = self.cluster.tensors
            if len(results.forgotten) <= _FEW:
                forgotten = sorted(results.forgotten)
                left = results.take_ahead_few(forgotten, self.nominations.load_rows(self.pod, self.priority, tensors,
                                                                                   forgotten))
                results.forgotten = {forgotten[j] for j in left}
                return
            forgotten = np.array(sorted(results.forgotten), np.int64)
            requested, count = self.nominations.load_at([self.pod], self.priority, tensors, forgotten)
            results.forgotten = set(forgotten[results.take_ahead(forgotten, requested, count)].tolist())

    def select(self, nodes: np.ndarray) -> DryRunBatch:
        nodes = np.asarray(nodes, np.int64)
        results = self.results
        self._settle()
        stale = results.to_evaluate(nodes)
        if not len(stale):
            pass
        elif not self.vectorised:
            results.store(self._select_each(stale, *self._victims(stale)))
        else:
            tensors = self.cluster.tensors
            requested, count = self.nominations.load_at([self.pod], self.priority, tensors, stale)
            left = results.take_ahead(stale, requested, count)
            if len(left) < len(stale):
                stale, requested, count = stale[left], requested[left], count[left]
            if len(stale) and self.ahead:
                # The same nodes again with one more pod like this one nominated (DryRunCache.ahead).
                width = requested.shape[1]
                more = requested.copy()
                more[:, : min(width, len(self.p.request))] += self.p.request[:width]
                rows, at, violating = self._victims(stale)
                results.store(self._select_vectorised(
                    np.concatenate([stale, stale]), np.concatenate([requested, more]),
                    np.concatenate([count, count + 1]), np.concatenate([rows, rows]),
                    np.concatenate([at, at + len(stale)]), np.concatenate([violating, violating])),
                    ahead=(more, count + 1))
            elif len(stale):
                results.store(self._select_vectorised(stale, requested, count, *self._victims(stale)))
        return results.batch(nodes)

    def _victims(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The potential victims on `nodes` (_victims_by_node: rows, batch positions), and which of them violate a
        PDB (filterPodsWithPDBViolation)."""
        rows, at = self._victims_by_node(nodes)
        matches, allowed = self._pdb_matches(rows)
        return rows, at, kernel.pdb_violating(at, matches, allowed)

    def _select_vectorised(self, nodes, nominee_requested, nominee_count, rows, at, violating) -> VictimSelection:
        """SelectVictimsOnNode on `nodes` with the load nominated there ((k, R) requested, (k,) pod count) added."""
        tensors = self.cluster.tensors
        k = len(nodes)
        victims = np.bincount(at, minlength=k)
        has_victims = victims > 0
        table = tensors.nodes
        width = table.requested.shape[1]
        # The load-reading Filters read only their node's row, so they run on these k rows alone.
        requested, count = table.requested[nodes] + nominee_requested, table.pod_count[nodes] + nominee_count
        if len(at):            # `at` is sorted: each node's victims are one segment
            starts = np.flatnonzero(np.concatenate([[True], at[1:] != at[:-1]]))
            requested[at[starts]] -= np.add.reduceat(self.rows.request[rows][:, :width], starts, axis=0)
            count -= victims
        ev = self._evaluate_rows(nodes, requested, count)
        fits = np.asarray(ev.feasible) & has_victims
        failing = np.flatnonzero(has_victims & ~fits)
        reasons: list[tuple[str, ...]] = [()] * k
        for j, r in zip(failing.tolist(), node_reasons(self.framework, ev, failing, tensors)):
            reasons[j] = r
        for j in np.flatnonzero(~has_victims).tolist():
            reasons[j] = (NO_VICTIMS,)
        if not fits.any():
            return self._summary(nodes, fits, rows, at, np.ones(len(rows), bool), violating, reasons)
        # Reprieve in order: each node's PDB-violating victims first, then the rest, most important first.
        order = kernel.reprieve_order(at, violating)
        r_rows, r_at = rows[order], at[order]
        rank = kernel.segment_rank(r_at)
        live = fits[r_at]
        r_rows, r_at, rank = r_rows[live], r_at[live], rank[live]
        r_req = self.rows.request[r_rows][:, :width]

        # On candidate nodes the FIXED Filters passed and stay passed: a reprieve re-runs the load-reading ones.
        def fits_with(sel):
            at_sel = r_at[sel]                   # one row per node
            trial_req, trial_count = requested[at_sel] + r_req[sel], count[at_sel] + 1
            trial = NodeRows(table, nodes[at_sel], requested=trial_req, pod_count=trial_count)
            ok = np.asarray(run_filters(np, self.p.node_local(), WithNodes(tensors, trial)).feasible)
            requested[at_sel[ok]] = trial_req[ok]
            count[at_sel[ok]] = trial_count[ok]
            return ok

        kept = kernel.reprieve(rank, fits_with)
        victim = np.ones(len(rows), bool)
        victim[order[live][kept]] = False
        return self._summary(nodes, fits, rows, at, victim, violating, reasons)

    def _select_each(self, nodes, rows, at, violating) -> VictimSelection:
        k = len(nodes)
        fits = np.zeros(k, bool)
        victim = np.ones(len(rows), bool)
        reasons: list[tuple[str, ...]] = [()] * k
        for i, node in enumerate(np.asarray(nodes).tolist()):
            mine = np.flatnonzero(at == i)
            ok, why = False, (NO_VICTIMS,)
            if len(mine):
                keys = [self.log_pods[r].key for r in rows[mine].tolist()]
                ok, why = self._fits_without(node, set(keys))
            if not ok:
                reasons[i] = why
                continue
            fits[i] = True
            removed = set(keys)
            order = mine[kernel.reprieve_order(at[mine], violating[mine])]
            for j in order.tolist():
                key = self.log_pods[rows[j]].key
                trial = removed - {key}
                if self._fits_without(node, trial)[0]:
                    removed = trial
                    victim[j] = False
        return self._summary(nodes, fits, rows, at, victim, violating, reasons)

    def _fits_without(self, node: int, removed: set) -> tuple[bool, tuple[str, ...]]:
        """Whether the preemptor passes every Filter on `node` with `removed` gone: with the pods nominated there
        (pass 0), and without them (pass 1) when there are any; else the failing status's reasons."""
        extra = [(nom.pod, n) for nom, n in self.nominees if n == node]
        for added in ([extra, []] if extra else [[]]):
            sub = _copy_without(self.cluster, tuple(removed), added)
            p = prepare(self.p.shape, sub, self.framework)
            ev = run_filters(np, p, sub.tensors)
            if ev.prefilter_message is not None or ev.error is not None:
                return False, (ev.prefilter_message or ev.error,)
            if not bool(np.asarray(ev.feasible)[node]):
                return False, node_reasons(self.framework, ev, [node], sub.tensors)[0]
        return True, ()


@dataclass
class PostFilterOutcome:
    """What the PostFilter plugins made of a failed cycle."""
    message: str                 # their reasons ("" when one succeeded)
    nominate: str | None         # the node to nominate, "" to clear the nomination, None to keep it
    success: object              # the succeeding plugin's PostFilterResult (victims), or None
    dry_run: DryRun | None       # None when no plugin reads nodes (Plugin.post_filter_reads_nodes)
    changes: tuple = ()          # the plugins' changes to the cluster (PostFilterResult.changes), in order


class Preemption:
    """The PostFilter extension point for pods no node fits: runs the profile's PostFilter plugins in order
    (RunPostFilterPlugins), keeps the nominations they make, and evicts the victims when the cycle ends."""

    def __init__(self, sched):
        self.sched = sched
        self.rows = BoundRows()
        self.pending: list[Preempted] = []
        self.next_offset = 0            # where the next candidate scan starts (tie_break "first")
        self.cache = DryRunCache()      # the dry run's per-node results, for the next identical preemptor
        self.caching = True             # False: every dry run evaluates its nodes afresh (tests compare the two)
        self._grown = None              # (tables, shape, namespace, labels) post_filter last grew vocabularies for

    def nodes_changed(self) -> None:
        """Node rows were added, rewritten or removed: no per-node result stands."""
        self.cache = DryRunCache()

    def post_filter(self, placer, pod: Pod, p: Prepared, ev: Evaluation) -> tuple[str, bool]:
        """(the PostFilter message, "" when a plugin succeeded; whether the pod was nominated to a node)."""
        outcome = self.what_if(placer, pod, p, ev)
        if outcome is None:
            return "", False
        sched, cluster = self.sched, self.sched.cluster
        for change in outcome.changes:
            change(cluster)
        nominations, dry_run = cluster.nominations, outcome.dry_run
        nominate, success, priority, key = outcome.nominate, outcome.success, cluster.priority(pod), pod.key
        if dry_run is not None and dry_run.scanned_to >= 0:
            self.next_offset = dry_run.scanned_to + 1
        if nominate == "":
            nominations.pop(key, None)
        elif nominate is not None:
            for other_key, other in nominations.on_node(nominate):  # lower-priority pods nominated there lose it
                if other.priority < priority:
                    del nominations[other_key]
            # Filter binds nominated pods on cluster copies (with_nominated, the dry run), which share the
            # vocabularies: the columns the pod needs go on this cluster's tables first (vocabularies only grow, so
            # once for the pods of a run: same tables, shape, namespace and labels).
            grown = (cluster.tensors, p.shape, pod.metadata.namespace, tuple(pod.metadata.labels.items()))
            last = self._grown
            if last is None or last[0] is not grown[0] or last[1] is not grown[1] or last[2:] != grown[2:]:
                cluster.grow_vocabularies([(pod, p.shape)])
                self._grown = grown
            nominations[key] = Nomination(pod, nominate, priority, p.request)
        if success is not None:
            victims = success.victim_keys if success.victim_keys is not None else [v.key for v in success.victims]
            self.pending.append(Preempted(sched.now, key, nominate, list(victims)))
        return outcome.message, success is not None

    def failed_cycle(self, placer, pod: Pod, p: Prepared, ev: Evaluation, codes: np.ndarray | None = None,
                     offset: int | None = None) -> FailedCycle:
        """What the PostFilter plugins read of `pod`'s failed cycle `ev`: the node statuses, the dry run (when a
        plugin reads nodes), the scan's offset. `codes` and `offset` replace the cycle's statuses and the offset
        (upstream's unit tests hand PostFilter a NodeToStatus and fix the random offset; tests do the same)."""
        sched, cluster = self.sched, self.sched.cluster
        tensors = cluster.tensors
        priority = cluster.priority(pod)
        nominations = cluster.nominations
        nom = nominations.get(pod.key)
        nominated = tensors.node_index.get(nom.node, -1) if nom is not None else -1
        dry_run = None
        if placer.framework.post_filter_reads_nodes:
            if codes is None:
                codes = node_status(ev, tensors.nodes.size)
            self.rows.sync(cluster, sched.start_of)
            waiting = sched.permit.waiting_keys()
            key = (id(placer.framework), id(p.shape), priority, tensors_state(tensors), sched.now, waiting,
                   len(cluster.pdbs))
            if self.cache.key != key:
                self.cache.reset(key, tensors.nodes.size, nominations.mark())
            self.cache.refresh(nominations, tensors.node_index, pod)
            dry_run = DryRun(cluster, placer.framework, p, pod, priority, self.rows, sched.now, nominations, waiting,
                             self.cache if self.caching else None)
        else:
            codes = None
        if offset is None:
            offset = self.next_offset if sched.tie_break == "first" else int(sched.rng.integers(1 << 31))
        spec = pod.spec
        group = None if spec.scheduling_group is None and spec.workload_ref is None else sched.groups.pod_group(pod)
        return FailedCycle(PodInfo(p.shape, p.request, pod), priority, cluster.preemption_policy(pod), codes,
                           nominated, dry_run, offset, group)

    def what_if(self, placer, pod: Pod, p: Prepared, ev: Evaluation) -> "PostFilterOutcome | None":
        """Run the profile's PostFilter plugins in order (RunPostFilterPlugins) for a pod no node fits, changing
        nothing (no nomination, no eviction); None when the profile has none."""
        plugins = placer.framework.at("postFilter")
        if not plugins:
            return None
        failed = self.failed_cycle(placer, pod, p, ev)
        cluster, dry_run = self.sched.cluster, failed.dry_run
        reasons, nominate, success, changes = [], None, None, []
        for plugin in plugins:
            result = plugin.post_filter(failed, cluster)
            changes += result.changes
            if result.code == SUCCESS:
                success, nominate, reasons = result, result.nominate, []
                break
            if result.code == ERROR:
                # RunPostFilterPlugins stops at an error and returns no result: the nomination stays and the
                # message is the error's alone.
                reasons, nominate = [result.message], None
                break
            if result.nominate is not None:
                nominate = result.nominate
            if result.code == UNSCHEDULABLE_AND_UNRESOLVABLE:
                reasons = [result.message]
                break
            reasons.append(result.message)
        return PostFilterOutcome(", ".join(r for r in reasons if r), nominate, success, dry_run, tuple(changes))

    def actuate(self) -> None:
        """Carry out this cycle's preemptions (the preemptors are back in the queue already, so the freed nodes wake
        them): victims waiting at Permit are preempted there (upstream PreemptPod: waitingPod.Preempt, no deletion),
        the others evicted; a victim an earlier preemption already took is not taken again. Upstream deletes the
        victims one by one, each deletion an event, and a preempted waiting pod's binding cycle frees its node when it
        fails; those of this cycle's preemptions make one batch of events, in order (the evicted pods', then the
        preempted waiting pods'), that wakes the same pods as those events would (Scheduler.cluster_event with
        `each`: no hint reads what the evictions in between change)."""
        if not self.pending:         # most cycles preempt nothing
            return
        sched = self.sched
        pending, self.pending = self.pending, []
        waiting = sched.permit.waiting_keys()
        if waiting:
            _mark_waiting(pending, waiting)
        # Every evicted victim off its node in one step (the node table is read by nothing in between; a victim
        # evicted already, by an earlier preemption, comes back None), then off the queues and plugins in one pass,
        # then each preemption's records in order.
        evicting = [v for entry in pending for v in entry.evicted]
        _, taken = sched.cluster.tensors.unbind_all(evicting)
        keys, start = [], 0
        for entry in pending:
            evicted = entry.evicted
            end = start + len(evicted)
            if any(pod is None for pod in taken[start:end]):
                gone = {v for v, pod in zip(evicted, taken[start:end]) if pod is None}
                entry.victims = [v for v in entry.victims if v not in gone]
                evicted = entry.evicted
            keys += evicted
            start = end
        pods = [pod for pod in taken if pod is not None]
        freed = sched.drop_pods(keys, pods)
        for entry in pending:
            sched.log.append(entry)
            sched.log_deleted(entry.evicted, entry.reason)
            if entry.rejected:
                freed += sched.permit.preempt(entry.rejected, PREEMPTED_AT_PERMIT)
        if freed:
            sched.cluster_event(POD_DELETED, freed, each=True)


def _mark_waiting(pending: list[Preempted], waiting: frozenset[str]) -> None:
    """Each preemption's victims waiting at Permit (`rejected`: preempted there, not evicted); one an earlier
    preemption of the cycle already chose leaves the later one's victims (it is preempted once)."""
    taken: set[str] = set()
    for entry in pending:
        if taken:
            entry.victims = [v for v in entry.victims if v not in taken]
        entry.rejected = [v for v in entry.victims if v in waiting]
        taken.update(entry.rejected)
