"""Incremental per-shape evaluation: each pod shape's Filter verdicts and total scores over every node, kept
between the shape's cycles. After placements only the nodes whose load changed since (tensors.changes) are
evaluated again, and the best node is read from a kept key (BestKey; per-block maxima on large clusters), instead
of every plugin over every node.

A shape is kept only while nothing but node load moves what its Filters return:
- every Filter that runs reads no pods (kept_behaviour FIXED) or only its own node's state, which moves only with
  the node's load (NODE_LOCAL: the node table's load columns, or host state read when the Filter runs, as
  GpuShare's devices); a Reserve that keeps per-pod state runs for each pod placed on kept results;
- no Score that is kept holds a host copy of node state (kept_behaviour), no PreFilter or PreScore failed;
- the plugins whose PreFilter or PreScore skip the pod depending on the bound pods still would (prepare_token;
  a live Score's PreScore runs in every cycle anyway), and no copy of the pod could make a skipped plugin run
  (skip_behaviour).
Scores that are FIXED (a function of the node, normalized over the feasible nodes) or NODE_LOCAL (their own node's
load, not normalized) and read no bound pods are kept. The others (PodTopologySpread, InterPodAffinity: they read
the bound pods) are live: their PreScore and Score run over every node in each cycle, on the kept feasible set,
and are added to the kept total. Only shapes without live Scores are placed in batch rounds.
FIXED normalized scores stay while a node holding each normalization's extreme stays feasible
(normalization_holders); when the last one leaves, or a node becomes feasible again (pods removed), the shape is
evaluated again over all nodes. Node rows added, rewritten or removed drop every kept shape (Placer.nodes_changed).

The kept rows are exactly what a full cycle computes now: the same plugin calls (Filters on node rows, the batch
path's copy_totals for the next pod), so decisions are the per-pod path's (tests/test_incremental.py).
"""
from __future__ import annotations

import bisect
import dataclasses
import functools
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from ..kernels.backend import smallest
from ..kernels.batch import NEVER, fill_times
from ..kernels.select import selection_key, selection_keys_few
from ..kernels.status import SUCCESS
from ..plugins.framework import FIXED, NODE_LOCAL, NOT_RUN, PER_POD, SKIP, CycleError
from .cycle import (REMEMBERED_BYTES, Evaluation, Prepared, batchable, copy_totals, domain_batchable, filter_rows,
                    load_keys, prepare, remembered_passes, row_view, run_filters, run_scores)
from .messages import first_failures, patched_histogram
from .shapes import PodShape

# What the kept shapes of one Placer may hold; the least recently used go first.
DEFAULT_BUDGET_BYTES = 256 << 20
# A shape is kept while it comes back within this many load changes (tensors.changes entries) of its last cycle;
# beyond it, or with more than 1/_MAX_ROWS_FRACTION of the rows changed (and more than _ROWS_ALWAYS), a full cycle
# is cheaper.
_MAX_CHUNKS = 256
_MAX_ROWS_FRACTION = 8
_ROWS_ALWAYS = 64
_ARGMAX_TOP = 8        # top(k) by argmax passes up to this k, by a partition beyond
_KEY_BLOCK = 256       # nodes per block of a BestKey
_BLOCKED_FROM = 40_000 # nodes from which a BestKey keeps its blocks' maxima (below, argmax passes cost less)
_LEADERS_FROM = 2_000  # nodes from which a BestKey keeps its leaders (below, argmax passes cost less)
_LEADERS = 128         # leaders found at once: about twice this many, at least this many
_LEADERS_SET = 64      # a change of more rows drops the leaders (found again when next read)
_PATCHED_ROWS = 32     # a failing pod's reason histogram is patched on up to this many changed nodes (a Python loop
                       # over them), counted over every node beyond


@dataclass
class ShapeScores:
    """One shape's results over all N nodes, valid for `tensors` up to change `mark`."""
    shape: PodShape
    tensors: object               # the ClusterTensors described (identity)
    resources: int                # resource columns when prepared (a new column prepares the shape again)
    tokens: tuple                 # the framework's prepare tokens (for the live Scores, preFilter's only) when
                                  # prepared
    prepared: Prepared
    local: Prepared               # the NODE_LOCAL Filters alone, run again on changed node rows
    scoring: Prepared             # the kept Scores alone (copy_totals reads them)
    mark: int                     # len(tensors.changes) the arrays reflect
    static_ok: np.ndarray         # (N,) bool the FIXED Filters pass and no PreFilterResult leaves the node out
    feasible: np.ndarray          # (N,) bool every Filter passes
    fixed_total: np.ndarray       # (N,) int64 weighted normalized FIXED scores
    holders: list                 # per normalization, (N,) bool: it stays while one of them is feasible
    total: np.ndarray             # (N,) int64 fixed_total + weighted NODE_LOCAL scores of the next pod (on the
                                  # feasible nodes; elsewhere as last scored)
    rank: np.ndarray              # the tie-break ranks `key` was made with
    key: BestKey                  # select_best's key: total * N + (N - 1 - rank), -1 if infeasible
    live: tuple = ()              # (plugin, weight) of the Scores that read bound pods: run over every node each
                                  # cycle, from a fresh PreScore, and added to `total` in `key`
    rounds: bool = False          # copies of the pod may be placed in batch rounds (cycle.batchable, nothing live)
    copies_local: bool = False    # no plugin moves pod by pod as copies are placed (cycle.batchable or
                                  # domain_batchable): a lap's sampled cycles share one PreScore of the live
                                  # Scores (Placer._place_kept_sampled)
    codes: dict = dataclasses.field(default_factory=dict)       # Filter plugin -> (N,) int8 its codes now
    payloads: dict = dataclasses.field(default_factory=dict)    # Filter plugin -> (N,) int64 its reason payloads now
    failure: Evaluation | None = None   # evaluation() until the Filter results change: pods failing in a row share
                                        # it, and its message (the reason histogram over every node) is made once
    failed: tuple | None = None         # (len(tensors.changes), evaluation()) of the last failing pod: the next one's
                                        # histogram is patched on the nodes changed since
    fixed_raw: tuple = ()               # (plugin, Score state, weight, (N,) int64 raw score) of each FIXED Score whose
                                        # raw scores differ between nodes: a sampled cycle normalizes them over its
                                        # own feasible nodes
    ids: np.ndarray | None = None       # (F,) int64 the feasible nodes' ids, found when a sampled cycle asks, until
                                        # `feasible` changes
    held: list | None = None            # per normalization, how many of its holders are feasible, counted when a
                                        # batch round asks, until `feasible` changes

    @functools.cached_property
    def live_plugins(self) -> frozenset:
        return frozenset(plugin for plugin, _ in self.live)

    @property
    def nbytes(self) -> int:
        arrays = (self.static_ok, self.feasible, self.fixed_total, self.total, *self.key.arrays, *self.holders,
                  *self.codes.values(), *self.payloads.values(), *(raw for *_, raw in self.fixed_raw))
        remembered = (self.local.row_filters, self.scoring.row_totals, self.prepared.row_capacity)
        return sum(a.nbytes for a in arrays) + REMEMBERED_BYTES * sum(r is not None for r in remembered)

    def evaluation(self, framework) -> Evaluation:
        """The Filter results a full cycle would return now (what a failing pod's message and rejectors read). Its
        arrays are copies: the last one stays as it was, and when few nodes changed since, the next one's first
        failing Filters and reason histogram are the last one's patched on those nodes."""
        if self.failure is None:
            p, tensors = self.prepared, self.tensors
            outside = None if p.allowed is None else ~np.asarray(p.allowed)
            ev = Evaluation(p.filter_names, {k: v.copy() for k, v in self.codes.items()},
                            {k: v.copy() for k, v in self.payloads.items()}, self.feasible.copy(), outside=outside,
                            narrowing=p.narrowing)
            if self.failed is not None:
                rows = tensors.changed_since(self.failed[0])
                if len(rows) <= _PATCHED_ROWS:
                    old = self.failed[1]
                    ev._first = old.first_failed().copy()
                    ev._first[rows] = first_failures(ev.filters, {k: v[rows] for k, v in ev.codes.items()}, len(rows))
                    ev._histogram = patched_histogram(framework, old, ev, rows, tensors)
            self.failure = ev
            self.failed = (len(tensors.changes), ev)
        return self.failure

    def best(self) -> int:
        """The node select_best picks, -1 when no node is feasible."""
        return self.key.best()

    def feasible_changed(self) -> None:
        """Forget what was derived from `feasible` (set after nodes left it)."""
        self.ids = self.held = None

    def normalization_end(self, cand: np.ndarray, pick, copy, cap) -> int:
        """batch.normalization_epoch_end for a batch round over the candidates `cand` (its real picks `pick`, `copy`
        and the candidates' capacities `cap`, arrays or lists, as batch.fill_times reads them): the last pick index
        (NEVER: none) that keeps every FIXED normalization. One with a feasible holder outside the candidates keeps
        (that holder never fills in the round), so only the candidates are read."""
        if self.held is None:
            self.held = [int(np.count_nonzero(h & self.feasible)) for h in self.holders]
        end, fill, feasible = NEVER, None, None
        for holders, held in zip(self.holders, self.held):
            if not held or held > len(cand):      # no feasible holder, or one outside the candidates
                continue
            if feasible is None:
                feasible = self.feasible[cand]
            inside = holders[cand] & feasible
            if int(np.count_nonzero(inside)) == held:
                if fill is None:
                    fill = fill_times(np, np.asarray(pick, np.int64), np.asarray(copy, np.int64),
                                      np.asarray(cap, np.int64), len(cand))
                end = min(end, int(fill[inside].max()))
        return end

    def feasible_ids(self) -> np.ndarray:
        """The feasible nodes' ids, ascending (a sampled cycle's ring; most changes leave them as they were)."""
        if self.ids is None:
            self.ids = np.flatnonzero(self.feasible)
        return self.ids

    def sampled_best(self, windows: np.ndarray, rank: np.ndarray, live: np.ndarray | None = None) -> np.ndarray:
        """The nodes sampled cycles pick ((B,) int64), one per row of `windows` ((B, k) int64: a cycle's feasible
        sampled nodes), as cycle.sampled_totals scores them: the kept NODE_LOCAL part of the total, the FIXED Scores
        normalized over the cycle's nodes alone, and for a shape with live Scores `live` ((B, k) int64), their
        total at those nodes (ShapeCache.sampled_live)."""
        total = self.total[windows] - self.fixed_total[windows]
        if live is not None:
            total += live
        if self.fixed_raw:
            every = np.ones(windows.shape[1], bool)
            for b, rows in enumerate(windows):
                view = row_view(self.tensors, rows)
                for plugin, state, weight, raw in self.fixed_raw:
                    part = plugin.normalize(np, raw[rows], every, state, view)
                    total[b] += part if weight == 1 else weight * part
        keys = selection_key(np, total, True, rank[windows], len(rank))
        return windows[np.arange(len(windows)), keys.argmax(axis=1)]

    def top(self, k: int) -> np.ndarray:
        """The feasible nodes select_best would pick first, up to k of them (kernels.batch.contenders for the next
        k pods), best first."""
        return self.key.top(k)


class BestKey:
    """select_best's key per node (distinct on the feasible nodes, -1 elsewhere). From _BLOCKED_FROM nodes on, the
    maximum of each block of _KEY_BLOCK nodes is kept: the best node is an argmax over the blocks, then one inside
    the best block (the first maximum, as one argmax over every node finds it), the k best lie in the k blocks of
    largest maxima, and changing a few rows recomputes only their blocks. Below, one argmax pass over every node
    costs less than that bookkeeping.

    From _LEADERS_FROM nodes on, once rows are set, the nodes whose keys exceed a bound (about 2 * _LEADERS of them
    when found) are kept in order too, the leaders: a change of a few rows moves nodes in and out of them in Python,
    and best() and top(k) read them while they hold k nodes, instead of passes over every node (a kept shape's next
    pods mostly go to its leaders, whose keys then fall). A node is a leader exactly while its key exceeds the bound;
    the leaders are held as keys alone, whose rank part names the node (`rank`: the ranks the keys were made with)."""

    def __init__(self, values: np.ndarray, rank: np.ndarray):
        n = len(values)
        self.blocked = n >= _BLOCKED_FROM
        self._large = n >= _LEADERS_FROM
        self._leading = False                    # reading the leaders: from the first set() on (a key made for one
                                                 # cycle, as a live shape's, is read once, by argmax passes)
        self._leaders: list | None = None        # the leaders' keys, ascending (None: found when read)
        self._bound = -1                         # every node that is not a leader has a key <= this
        self._rank = rank                        # (N,) int64 the tie-break ranks in the keys
        self._by_rank: np.ndarray | None = None  # (N,) int64 the node of each rank, made when leaders are first read
        if not self.blocked:
            self.values = values                              # (N,) int64 the key
            return
        self.block = block = _KEY_BLOCK
        padded = np.full(-(-n // block) * block, -1, np.int64)     # padding never wins: keyed -1
        padded[:n] = values
        self.values = padded[:n]                            # (N,) int64 the key (a view: write through set)
        self._blocks = padded.reshape(-1, block)            # (N / block, block) int64 the same memory
        self._block_max = self._blocks.max(axis=1)          # (N / block,) int64

    @property
    def arrays(self) -> tuple:
        return (self._blocks, self._block_max) if self.blocked else (self.values,)

    def set(self, rows: np.ndarray, values) -> None:
        """Key the distinct nodes `rows` with `values` (an array or a list)."""
        leaders = self._leaders
        old = self.values[rows].tolist() if leaders is not None and len(rows) <= _LEADERS_SET else None
        self.values[rows] = values
        if self.blocked:
            blocks = rows // self.block            # a block named twice gets the same maximum twice
            self._block_max[blocks] = self._blocks[blocks].max(axis=1)
        self._leading = self._large
        if old is None:
            self._leaders = None                   # found again when next read
            return
        bound = self._bound
        # (values given as a list: the rows' keys as set, which a gather would read back)
        for was, value in zip(old, values if type(values) is list else self.values[rows].tolist()):
            if was > bound:
                del leaders[bisect.bisect_left(leaders, was)]
            if value > bound:
                bisect.insort(leaders, value)

    def best(self) -> int:
        """The node with the largest key, -1 when none is feasible."""
        if self._leading:
            leaders = self._holding(1)
            return self._nodes(leaders[-1:])[0] if leaders else -1
        if not self.blocked:
            node = int(self.values.argmax())
            return node if self.values[node] >= 0 else -1
        block = int(self._block_max.argmax())
        if self._block_max[block] < 0:
            return -1
        return block * self.block + int(self._blocks[block].argmax())

    def top(self, k: int) -> np.ndarray:
        """The feasible nodes with the k largest keys, largest first (fewer when fewer are feasible)."""
        if not self._leading or k > _LEADERS:
            return self._largest(k)
        return np.array(self._nodes(self._holding(k)[:-k - 1:-1]), np.int64)

    def _nodes(self, keys: list) -> list:
        """The nodes of feasible keys."""
        n = len(self.values)
        if self._by_rank is None:
            self._by_rank = np.empty(n, np.int64)
            self._by_rank[self._rank] = np.arange(n)
        by_rank = self._by_rank
        return [int(by_rank[n - 1 - key % n]) for key in keys]

    def _holding(self, k: int) -> list:
        """The leaders, found again first when they hold fewer than k nodes and others are feasible."""
        if self._leaders is None or (len(self._leaders) < k and self._bound >= 0):
            self._find_leaders()
        return self._leaders

    def _find_leaders(self) -> None:
        values = self.values
        # The keys above a threshold taken from a strided sample (one pass over the nodes, no partition of them
        # all): about 2 * _LEADERS of them. With fewer than _LEADERS above it, the _LEADERS largest exactly.
        aim = 2 * _LEADERS
        stride = max(1, len(values) // (4 * aim))
        sample = values[::stride]
        above = -(-aim // stride)                  # sample keys left above the threshold
        bound = -1
        if above < len(sample):
            bound = max(int(np.partition(sample, len(sample) - above - 1)[len(sample) - above - 1]), -1)
        nodes = np.flatnonzero(values > bound)
        if bound >= 0 and len(nodes) < _LEADERS:
            nodes = self._largest(_LEADERS + 1)
            # With more feasible nodes than leaders, the largest key left out bounds the others.
            bound = int(values[nodes[_LEADERS]]) if len(nodes) > _LEADERS else -1
            nodes = nodes[:_LEADERS]
        keys = values[nodes]
        keys.sort()
        self._bound = bound
        self._leaders = keys.tolist()

    def _largest(self, k: int) -> np.ndarray:
        """top(k) from the arrays."""
        key = self.values
        if self.blocked:
            # Keys are distinct: a block holding one of the k largest has a larger maximum than every block holding
            # none, so they are all among the k blocks of largest maxima. (Their k largest are ordered in Python:
            # a few values.)
            count = len(self._block_max)
            blocks = np.argpartition(self._block_max, count - k)[count - k:] if k < count else np.arange(count)
            values = self._blocks[blocks].ravel()
            size = len(values)
            order = np.argpartition(values, size - k)[size - k:] if k < size else np.arange(size)
            block, starts = self.block, (blocks * self.block).tolist()
            return np.array([starts[at // block] + at % block
                             for value, at in sorted(zip(values[order].tolist(), order.tolist()), reverse=True)
                             if value >= 0], np.int64)
        if k > _ARGMAX_TOP:
            best = smallest(np, -key, k)
            return best[key[best] >= 0]
        # A few argmax passes beat a partition of every node; the picked keys are masked, then put back.
        picked, values = [], []
        for _ in range(k):
            node = int(key.argmax())
            if key[node] < 0:
                break
            picked.append(node)
            values.append(key[node])
            key[node] = -1
        key[picked] = values
        return np.array(picked, np.int64)


def keepable(p: Prepared, framework) -> bool:
    """Whether nothing but node load moves what the shape's Filters return, and its Scores either move only with
    node load (kept) or can be run again alone (live; see the module docstring)."""
    if p.rejection is not None or p.error is not None or p.score_error is not None:
        return False
    for plugin, state in p.filters:
        if plugin.kept_behaviour(state) not in (FIXED, NODE_LOCAL):
            return False
    # A skipped plugin that a copy of the pod may make run (its own terms, once bound, select it) would be
    # prepared again after every placement. Live Scores run afresh in every cycle, host state or not.
    return not any(plugin.host_only() and plugin.kept_behaviour(state) == PER_POD and _kept_score(plugin, state)
                   for plugin, state, _ in p.scores) \
        and all(plugin.skip_behaviour(p.pod, point) != PER_POD for plugin, point in p.skipped)


def live_scores(p: Prepared) -> tuple:
    """(plugin, weight) of the Scores that run for the pod and are not kept (they read bound pods): run afresh in
    every cycle of a kept shape."""
    return tuple((plugin, weight) for plugin, st, weight in p.scores if not _kept_score(plugin, st))


def _kept_score(plugin, state) -> bool:
    """A Score that moves only with its node's load (NODE_LOCAL) or not at all (FIXED): kept between cycles."""
    return plugin.score_behaviour(state) in (FIXED, NODE_LOCAL) and not plugin.reads_bound_pods()


class ShapeCache:
    """The kept ShapeScores of one Placer, least recently used first."""

    def __init__(self, budget_bytes: int = DEFAULT_BUDGET_BYTES):
        self.budget_bytes = budget_bytes
        self.entries: OrderedDict[int, ShapeScores] = OrderedDict()     # shape id -> its results
        self.used = 0                            # bytes the entries hold
        self.refused: dict[int, tuple] = {}      # shape id -> (shape, tensors, resources, tokens) found not keepable
        # shape id -> len(tensors.changes) at its last cycle without kept results: a shape is kept when it comes
        # back within _MAX_CHUNKS changes (a shape met once, or rarely, costs nothing beyond its full cycles)
        self.last_seen: dict[int, int] = {}
        self.builds = 0                          # full evaluations made to (re)build a shape
        self.row_updates = 0                     # node rows evaluated again

    def clear(self) -> None:
        self.entries.clear()
        self.refused.clear()
        self.last_seen.clear()
        self.used = 0

    def holds(self, shape: PodShape) -> bool:
        """Whether the shape's results are kept (they may still be found stale when next read)."""
        entry = self.entries.get(shape.id)
        return entry is not None and entry.shape is shape

    def get(self, shape: PodShape, cluster, framework, rank: np.ndarray, caches: dict,
            again: bool = False, live: bool = True) -> ShapeScores | None:
        """The shape's kept results brought up to date, or None when the shape cannot be kept now. caches: the
        Placer's per-plugin score caches (what a full cycle passes its Scores); again: more pods of the shape
        follow at once (then a shape met for the first time is kept right away); live: the key of a shape with live
        Scores is made with them over every node (False: left as it was, for a sampled cycle that scores them on
        its own nodes, sampled_live)."""
        tensors = cluster.tensors
        if not tensors.nodes.size:            # no node: the full cycle's "no nodes available"
            return None
        resources = len(tensors.resources)
        entry = self.entries.get(shape.id)
        now = len(tensors.changes)
        if entry is not None and entry.shape is shape and entry.tensors is tensors and entry.resources == resources \
                and entry.tokens == framework.prepare_tokens(cluster, entry.live_plugins):
            self.entries.move_to_end(shape.id)
            # Not met for long (more than _MAX_CHUNKS changes): built again at once, as when its rows are stale (a
            # shape kept before recurs; a full cycle now would be followed by a build at its next cycle).
            if now - entry.mark <= _MAX_CHUNKS and self._sync(entry, rank):
                return entry if not (live and entry.live) or self._live_key(entry, cluster, framework, rank, caches) \
                    else None
            p = entry.prepared
        else:
            last = self.last_seen.get(shape.id)
            self.last_seen[shape.id] = now
            if not again and (last is None or now - last > _MAX_CHUNKS):
                return None
            tokens = framework.prepare_tokens(cluster)
            refused = self.refused.get(shape.id)
            if refused is not None and refused[0] is shape and refused[1] is tensors \
                    and refused[2:] == (resources, tokens):
                return None
            p = prepare(shape, cluster, framework)
            if not keepable(p, framework):
                self._drop(shape.id)
                self.refused[shape.id] = (shape, tensors, resources, tokens)
                return None
        entry = self._build(p, shape, tensors, resources, rank, caches)
        entry.tokens = framework.prepare_tokens(cluster, entry.live_plugins)
        self._store(entry)
        return entry if not (live and entry.live) or self._live_key(entry, cluster, framework, rank, caches) else None

    def _drop(self, shape_id: int) -> None:
        gone = self.entries.pop(shape_id, None)
        self.used -= gone.nbytes if gone is not None else 0

    def _store(self, entry: ShapeScores) -> None:
        old = self.entries.pop(entry.shape.id, None)
        self.used += entry.nbytes - (old.nbytes if old is not None else 0)
        self.entries[entry.shape.id] = entry
        while self.used > self.budget_bytes and len(self.entries) > 1:
            _, gone = self.entries.popitem(last=False)
            self.used -= gone.nbytes

    def _build(self, p: Prepared, shape: PodShape, tensors, resources: int, rank: np.ndarray,
               caches: dict) -> ShapeScores:
        """The shape's results from one full cycle (what the per-pod path computes), plus what keeping them needs."""
        self.builds += 1
        scoring = dataclasses.replace(p, scores=tuple(sc for sc in p.scores if _kept_score(sc[0], sc[1])))
        live = live_scores(p)
        ev = run_filters(np, p, tensors)
        feasible = np.asarray(ev.feasible).copy()
        static_ok = np.ones(len(feasible), bool) if ev.outside is None else ~np.asarray(ev.outside)
        for plugin, st in p.filters:
            if plugin.kept_behaviour(st) == FIXED:
                static_ok &= np.asarray(ev.codes[plugin.name]) == SUCCESS
        local = dataclasses.replace(p, allowed=None, filters=tuple(
            (plugin, st) for plugin, st in p.filters if plugin.kept_behaviour(st) == NODE_LOCAL))
        fixed_total = np.zeros(len(feasible), np.int64)
        holders, fixed_raw = [], []
        total = np.zeros(len(feasible), np.int64)
        if feasible.any():
            run_scores(np, scoring, tensors, ev, caches)
            for plugin, st, weight in scoring.scores:
                part = weight * ev.normalized[plugin.name]
                total = total + part
                if plugin.score_behaviour(st) == FIXED:
                    fixed_total = fixed_total + part
                    raw = np.asarray(ev.raw[plugin.name])
                    # Equal raw scores normalize to equal ones: over any sampled nodes such a Score adds the same to
                    # each, which changes no pick.
                    if raw.min() != raw.max():
                        fixed_raw.append((plugin, st, weight, raw))
                    holders += [h for h in plugin.normalization_holders(np, ev.raw[plugin.name], feasible, st)
                                if h.any()]          # no holder: nothing to lose (a maximum of 0)
        key = BestKey(selection_key(np, total, feasible, rank, len(rank)), rank)
        return ShapeScores(shape, tensors, resources, (), p, local, scoring, len(tensors.changes), static_ok,
                           feasible, fixed_total, holders, total, rank, key, live, rounds=not live and batchable(p),
                           copies_local=batchable(p) or domain_batchable(p),
                           codes={k: np.asarray(v).copy() for k, v in ev.codes.items()},
                           payloads={k: np.asarray(v).copy() for k, v in ev.payloads.items()},
                           fixed_raw=tuple(fixed_raw))

    def run_results(self, p: Prepared, shape: PodShape, tensors, rank: np.ndarray, caches: dict) -> ShapeScores:
        """A run's results from one full cycle, for that run alone (not kept: Placer._place_sampled_rounds)."""
        return self._build(p, shape, tensors, len(tensors.resources), rank, caches)

    def _live_key(self, s: ShapeScores, cluster, framework, rank: np.ndarray, caches: dict) -> bool:
        """select_best's key with the live Scores run now over every node (PreScore first, as a cycle runs it);
        False when one of them fails the cycle (the full cycle then reports it)."""
        states = self.live_states(s, cluster, framework)
        if states is None:
            return False
        total = s.total
        for plugin, state, weight in states:
            raw = plugin.score(np, state, s.tensors, s.feasible, caches.setdefault(plugin.name, {}))
            total = total + weight * plugin.normalize(np, raw, s.feasible, state, s.tensors)
        s.rank, s.key = rank, BestKey(selection_key(np, total, s.feasible, rank, len(rank)), rank)
        return True

    @staticmethod
    def sampled_live(s: ShapeScores, states: list, windows: np.ndarray, caches: dict) -> np.ndarray:
        """Sampled cycles' live Scores at their nodes `windows` ((B, k) int64, a cycle's nodes per row), weighted
        and summed, (B, k) int64: each Score from the state `states` holds (live_states), as cycle.sampled_totals
        runs a DOMAIN or PER_POD Score (Plugin.sampled_scores). More than one cycle share the state only when
        copies move no node's live Score but their own (Plugin.copies_move_own_node) and the windows are disjoint."""
        sampled = np.zeros(len(s.feasible), bool)
        sampled[windows] = True
        total = np.zeros(windows.shape, np.int64)
        for plugin, state, weight in states:
            total += weight * plugin.sampled_scores(np, state, s.tensors, sampled, windows,
                                                    caches.setdefault(plugin.name, {}))
        return total

    @staticmethod
    def live_states(s: ShapeScores, cluster, framework) -> list | None:
        """(plugin, Score state, weight) of the live Scores that run for the pod now, from a fresh PreScore (those
        it skips left out); None when one of them fails the cycle."""
        pod = s.prepared.pod
        pre_scoring = framework.at("preScore")
        out = []
        for plugin, weight in s.live:
            pre = plugin.pre_score(pod, cluster) if plugin in pre_scoring else NOT_RUN
            if pre is SKIP:
                continue
            state = pre if isinstance(pre, CycleError) else plugin.score_state(pod, cluster, pre)
            if isinstance(state, CycleError):
                return None
            out.append((plugin, state, weight))
        return out

    def _sync(self, s: ShapeScores, rank: np.ndarray) -> bool:
        """Evaluate again the node rows whose load changed since `s.mark`; False when the normalization of a FIXED
        score may have moved or too many rows changed (the shape is then evaluated again over all nodes)."""
        tensors = s.tensors
        changes = tensors.changes
        if s.mark < len(changes):
            rows = tensors.changed_since(s.mark)
            if len(rows) > _ROWS_ALWAYS and len(rows) * _MAX_ROWS_FRACTION > len(s.feasible):
                return False
            s.mark = len(changes)
            s.failure = None
            self.row_updates += len(rows)
            # One key per row for the remembered Filter and Score results (cycle.RememberedRows).
            keys = load_keys(tensors, rows, s.local.row_filters, s.scoring.row_totals)
            if keys is not None and s.rank is rank and not s.live:
                # Rows feasible before that pass every Filter again with nothing to report (most changed rows): their
                # codes and payloads stay, only their totals and keys move. (A few rows' bools: no zero byte among
                # them is cheaper to ask than a reduction.)
                local = remembered_passes(s.local, s.scoring, keys)
                if local is not None and b"\0" not in s.feasible[rows].tobytes():
                    total = [fixed + part for fixed, part in zip(s.fixed_total[rows].tolist(), local)]
                    s.total[rows] = total
                    s.key.set(rows, selection_keys_few(total, rank[rows].tolist(), len(rank)))
                    return True
            ok = s.static_ok[rows]
            if s.local.filters:
                # The NODE_LOCAL Filters on the changed rows, straight into the kept codes (run_filters' Evaluation
                # and masks would cost more than the Filters on a few rows; keepable Filters return nothing else).
                for name, code, payload in filter_rows(s.local, tensors, rows, keys):
                    s.codes[name][rows] = code
                    s.payloads[name][rows] = payload
                    ok &= code == SUCCESS
            was = s.feasible[rows]
            # (bool arrays of a few rows: their bytes compare at a fraction of a ufunc pass and a reduction)
            moved = ok.tobytes() != was.tobytes()
            if moved:
                if (ok & ~was).any():
                    return False
                s.feasible_changed()
                left = rows[was & ~ok]
                s.feasible[left] = False
                # With no feasible node left nothing is normalized; a node feasible again builds the shape anew.
                if any(h[left].any() and not (h & s.feasible).any() for h in s.holders) and s.feasible.any():
                    return False
                s.feasible[rows] = ok
            # Only the nodes the Filters pass are scored: a node that fails them is keyed -1 and, feasible again,
            # builds the shape anew (most changed nodes are the ones filling up).
            scored = rows[ok]
            if len(scored):
                if keys is not None and len(scored) < len(rows):
                    keys = [key for key, passes in zip(keys, ok.tolist()) if passes]
                s.total[scored] = copy_totals(np, s.scoring, tensors, scored, s.fixed_total[scored], 1, keys)[:, 0]
            # Rows infeasible before and after keep their key (-1).
            if s.rank is rank and not s.live and (moved or len(scored)):
                s.key.set(rows, selection_key(np, s.total[rows], ok, rank[rows], len(rank)))
        if s.rank is not rank and not s.live:
            s.rank, s.key = rank, BestKey(selection_key(np, s.total, s.feasible, rank, len(rank)), rank)
        return True
