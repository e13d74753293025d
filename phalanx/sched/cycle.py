"""One scheduling cycle for a pod shape, over the profile's plugins: PreFilter (host-side preparation),
Filter over all nodes, PreScore/Score, NormalizeScore and the weighted total. All per-node arithmetic is in the
plugins' kernels; this module only walks the extension points in the profile's order
(upstream: framework/runtime RunPreFilterPlugins ... RunScorePlugins, schedule_one.go).
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field

import numpy as np

from ..cluster_models.tensors import NodeTable
from ..kernels.status import ERROR, SUCCESS
from ..plugins.framework import (DOMAIN, FIXED, NODE_LOCAL, NOT_RUN, PER_POD, SKIP, CycleError, Outcome, PodInfo,
                                 Rejection)
from .framework import Framework
from .messages import disjoint_reason, first_failures
from .shapes import PodShape

# The node table's capacity and load columns: results read from these alone are remembered by one key per row
# (in the order of NodeTable.load).
LOAD_COLUMNS = ("allocatable", "requested", "nonzero_requested", "pod_count", "allowed_pods")
# copy_totals of up to this many (row, copy) pairs, and filter_rows and capacity_rows of up to this many rows, read
# results remembered by node rows (RememberedRows): a lookup per pair, which beyond it costs more than the arrays.
# At most _REMEMBERED_MAX results are kept per cycle state; after _REMEMBERED_TRIAL lookups, a state that found fewer
# than half of them remembered stops (its nodes rarely repeat a row).
_REMEMBERED_PAIRS = 64
_REMEMBERED_MAX = 256
_REMEMBERED_TRIAL = 1024
# What one RememberedRows may hold at most, counted in a kept shape's bytes (incremental.ShapeScores.nbytes): its
# results (a row's key of ~150 bytes, the dictionary's slot, the result) up to the bound and one call's more.
REMEMBERED_BYTES = (_REMEMBERED_MAX + _REMEMBERED_PAIRS) * 400
_UNBOUNDED = 1 << 62       # copies of a pod no Filter limits (capacity_rows remembers the Filters' own limit)


@dataclass
class RememberedRows:
    """Results of a cycle state's plugins on node rows, remembered by the nodes' rows of `columns`: each result is
    a function of those rows (Plugin.score_columns, Plugin.filter_columns). Node pools of one machine type and
    controllers' replicas leave few distinct rows, so most rows a kept shape evaluates again were met before."""
    columns: tuple[str, ...]        # the node-table columns read
    results: dict = field(default_factory=dict)     # key (the rows' bytes, with a copy for scores) -> result
    asked: int = 0                  # keys looked up
    found: int = 0                  # ... and found

    @property
    def worthwhile(self) -> bool:
        """Whether to look up and remember: not after a trial in which fewer than half of the keys were found."""
        return self.asked < _REMEMBERED_TRIAL or 2 * self.found >= self.asked

    def keys(self, tensors, rows: np.ndarray) -> list[bytes]:
        """Each node row's bytes over the columns (LOAD_COLUMNS: one gather from the node table's shared block,
        whose columns are in that order; a view's table, NodeRows, is not one)."""
        nodes = tensors.nodes
        load = nodes.shared_load if self.columns is LOAD_COLUMNS and type(nodes) is NodeTable else None
        if load is not None:
            table = load[rows]
        else:
            as_column = (rows, None)
            table = np.concatenate([column[rows] if column.ndim == 2 else column[as_column]
                                    for column in (getattr(nodes, c) for c in self.columns)], axis=1)
        return table.view(_row_bytes(table.shape[1] * table.itemsize)).ravel().tolist()

    def find(self, keys: list) -> list | None:
        """The results of every key, None when one of them is not remembered."""
        self.asked += len(keys)
        try:
            out = [self.results[key] for key in keys]
        except KeyError:
            return None
        self.found += len(keys)
        return out

    def peek(self, keys: list) -> list | None:
        """find() for a caller that falls back on find's own callers: every key's result, counted as found when
        all are remembered; None and nothing counted otherwise."""
        out = list(map(self.results.get, keys))
        if None in out:
            return None
        self.asked += len(keys)
        self.found += len(keys)
        return out

    def remember(self, items) -> None:
        """Add (key, result) items, forgetting everything first beyond _REMEMBERED_MAX results, and everything for
        good once remembering does not pay."""
        if not self.worthwhile or len(self.results) > _REMEMBERED_MAX:
            self.results.clear()
        if self.worthwhile:
            self.results.update(items)


@functools.lru_cache(maxsize=64)
def _row_bytes(width: int) -> np.dtype:
    """A row of `width` bytes as one value (RememberedRows.keys: its bytes, hashable)."""
    return np.dtype((np.void, width))


def _remembered_rows(plugins, read: str) -> RememberedRows | None:
    """A RememberedRows over the columns the plugins read (their attribute `read`; LOAD_COLUMNS when those are all
    among them, so that a kept shape's Filters and Scores share one key per row), None when one of them reads more
    (it names none) or there are none."""
    columns: list[str] = []
    for plugin in plugins:
        named = getattr(plugin, read)
        if not named:
            return None
        columns += [c for c in named if c not in columns]
    if not columns:
        return None
    return RememberedRows(LOAD_COLUMNS if set(columns) <= set(LOAD_COLUMNS) else tuple(columns))


@dataclass
class Prepared:
    """The cycle state of one shape against the current vocabularies: what each plugin's PreFilter/PreScore made
    of the pod, and which Filter and Score plugins run."""
    pod: PodInfo
    filters: tuple[tuple[object, object], ...]          # (plugin, Filter state) of each filter that runs, in order
    scores: tuple[tuple[object, object, int], ...]      # (plugin, Score state, weight) of each score that runs
    rejection: str | None = None          # a PreFilter rejected the pod on every node: the FitError's text
    rejected_by: str | None = None        # ... that PreFilter's plugin (None: the PreFilterResults of `narrowing`
                                          # have no node in common)
    error: str | None = None              # a PreFilter or Filter failed: the cycle's error text
    score_error: str | None = None        # a PreScore or Score failed (reported with two or more feasible nodes)
    allowed: np.ndarray | None = None     # (N,) bool nodes a PreFilterResult left (None: every node)
    narrowing: tuple[str, ...] = ()       # plugins whose PreFilterResult narrowed the nodes
    named: frozenset[str] | None = None   # the node names the PreFilterResults have in common (None: every node)
    skipped: tuple = ()                   # (plugin, "preFilter" | "preScore") where the pod was skipped
    _node_local: "Prepared | None" = field(default=None, init=False, repr=False)   # node_local(), once made
                                                                                 # (a replaced copy makes its own)
    _vectorised: bool | None = field(default=None, init=False, repr=False)   # preemption.vectorised, once made
    _reserving: tuple | None = field(default=None, init=False, repr=False)   # reserving(), once made

    @property
    def shape(self) -> PodShape:
        return self.pod.shape

    @property
    def request(self) -> np.ndarray:
        return self.pod.request

    def reserving(self, framework) -> tuple:
        """(plugin, Filter state) of the Filters that ran for the pod whose plugin has a Reserve, in the profile's
        Reserve order (the state is one profile's: made once)."""
        if self._reserving is None:
            self._reserving = tuple((plugin, state) for plugin in framework.at("reserve")
                                    for ran, state in self.filters if ran is plugin)
        return self._reserving

    def node_local(self) -> "Prepared":
        """The cycle with only the Filters whose removal_behaviour is NODE_LOCAL (they read the load of their own
        node row alone: what pods taken off or nominated to a node move), every node allowed."""
        if self._node_local is None:
            self._node_local = dataclasses.replace(self, allowed=None, filters=tuple(
                (plugin, state) for plugin, state in self.filters if plugin.removal_behaviour(state) == NODE_LOCAL))
        return self._node_local

    @functools.cached_property
    def row_totals(self) -> RememberedRows | None:
        """copy_totals' NODE_LOCAL totals (the weighted sum of the NODE_LOCAL scores) remembered by node rows:
        key (copy, the rows' bytes); None when a NODE_LOCAL score reads more than node-table columns, or there is
        none. (A replaced copy of the state makes its own.)"""
        return _remembered_rows([plugin for plugin, state, _ in self.scores
                                 if plugin.score_behaviour(state) == NODE_LOCAL], "score_columns")

    @functools.cached_property
    def row_capacity(self) -> RememberedRows | None:
        """copy_capacity's copies per node remembered by node rows (capacity_rows); None when a NODE_LOCAL Filter
        (filter_behaviour) reads more than node-table columns, or there is none."""
        return _remembered_rows([plugin for plugin, state in self.filters
                                 if plugin.filter_behaviour(state) == NODE_LOCAL], "filter_columns")

    @functools.cached_property
    def row_filters(self) -> RememberedRows | None:
        """The Filters' (code, payload) per filter remembered by node rows (filter_rows); None when a Filter reads
        more than node-table columns, or there is none."""
        return _remembered_rows([plugin for plugin, _ in self.filters], "filter_columns")

    @property
    def filter_names(self) -> tuple[str, ...]:
        return tuple(plugin.name for plugin, _ in self.filters)

    @property
    def weights(self) -> dict[str, int]:
        return {plugin.name: weight for plugin, _, weight in self.scores}

    def states(self):
        """(plugin, Filter state or None, Score state or None) of every plugin that runs."""
        by_name: dict[str, list] = {}
        for plugin, state in self.filters:
            by_name[plugin.name] = [plugin, state, None]
        for plugin, state, _ in self.scores:
            by_name.setdefault(plugin.name, [plugin, None, None])[2] = state
        return [tuple(v) for v in by_name.values()]


def prepare(shape: PodShape, cluster, framework: Framework) -> Prepared:
    """PreFilter, then what each Filter reads; PreScore, then what each Score reads (host side, per pod shape)."""
    pod = PodInfo(shape, shape.request_vector(cluster.tensors))
    out = Prepared(pod, (), ())

    pre: dict[str, object] = {}
    for plugin in framework.at("preFilter"):
        result = plugin.pre_filter(pod, cluster)
        if isinstance(result, Outcome):
            if isinstance(result, Rejection):
                out.rejection, out.rejected_by = result.message, plugin.name
                return out
            if isinstance(result, CycleError):
                out.error = f'running PreFilter plugin "{plugin.name}": {result.message}'
                return out
            out.allowed = result.allowed if out.allowed is None else out.allowed & result.allowed
            out.named = result.names if out.named is None else out.named & result.names
            out.narrowing += (plugin.name,)
            if not out.named:       # nothing in common: the plugins that narrowed are the rejectors
                out.rejection, out.rejected_by = disjoint_reason(out.narrowing), None
                return out
            result = result.state
        pre[plugin.name] = result
    filters = []
    for plugin in framework.at("filter"):
        result = pre.get(plugin.name, NOT_RUN)
        if result is SKIP:
            out.skipped += ((plugin, "preFilter"),)
            continue
        state = plugin.filter_state(pod, cluster, result)
        if isinstance(state, CycleError):
            out.error = out.error or f'running "{plugin.name}" filter plugin: {state.message}'
            continue
        filters.append((plugin, state))
    out.filters = tuple(filters)
    pre_filtered, pre = pre, {}
    for plugin in framework.at("preScore"):
        result = plugin.pre_score(pod, cluster)
        if isinstance(result, CycleError):
            out.score_error = out.score_error or f'running PreScore plugin "{plugin.name}": {result.message}'
        pre[plugin.name] = result
    scores = []
    weights = framework.weights
    for plugin in framework.at("score"):
        if plugin.score_reads_filter:
            result = _filter_left(plugin, pre_filtered, out.filters)
        else:
            result = pre.get(plugin.name, NOT_RUN)
            if result is SKIP:
                out.skipped += ((plugin, "preScore"),)
                continue
            if isinstance(result, CycleError):
                continue
        state = plugin.score_state(pod, cluster, result)
        if state is SKIP:          # the Score is 0 on every node for this pod: nothing to add
            out.skipped += ((plugin, "score"),)
            continue
        if isinstance(state, CycleError):
            # RunScorePlugins' wording: the first failing plugin's error, wrapped twice.
            out.score_error = out.score_error or (f'running Score plugins: plugin "{plugin.name}" failed with: '
                                                  f'{state.message}')
            continue
        scores.append((plugin, state, weights.get(plugin.name, 1)))
    out.scores = tuple(scores)
    return out


def _filter_left(plugin, pre_filtered: dict, filters) -> object:
    """What a Score that reads its PreFilter's and Filter's cycle state (score_reads_filter) finds there: the
    Filter's state; SKIP when the PreFilter ran but left nothing for a Filter (it skipped the pod, or the profile
    runs no Filter of the plugin); NOT_RUN when the profile runs no PreFilter of the plugin."""
    for other, state in filters:
        if other.name == plugin.name:
            return state
    return NOT_RUN if pre_filtered.get(plugin.name, NOT_RUN) is NOT_RUN else SKIP


class WithNodes:
    """The cluster tensors with another node table (row subsets, replaced load columns): what Filters that read
    only their own node's row are run on. node_rows: the node ids of its rows (a NodeRows table names its own),
    for plugins that read host state of the nodes (GpuShare: their devices) or per-node masks (NodeAffinity's
    node names) besides the table."""

    def __init__(self, tensors, nodes, node_rows: np.ndarray | None = None):
        self._tensors = tensors
        self.nodes = nodes
        self.node_rows = nodes._rows if node_rows is None and isinstance(nodes, NodeRows) else node_rows

    def __getattr__(self, name):
        return getattr(self._tensors, name)


class NodeRows:
    """The node table's rows `rows`, each column sliced when first read (a Filter reads a few of them); columns
    given as keywords replace the table's (e.g. the load with pods taken off or nominated)."""

    def __init__(self, table, rows: np.ndarray, **columns):
        self._table = table
        self._rows = rows
        self.__dict__.update(columns)

    def __getattr__(self, name):
        column = getattr(self._table, name)
        column = column[self._rows] if isinstance(column, np.ndarray) else [column[i] for i in self._rows.tolist()]
        setattr(self, name, column)
        return column


@dataclass
class Evaluation:
    filters: tuple[str, ...]                  # plugins that ran, profile order
    codes: dict[str, np.ndarray]              # plugin -> (N,) int8
    payloads: dict[str, np.ndarray]           # plugin -> (N,) int64 reason payload
    feasible: np.ndarray                      # (N,) bool
    extras: dict[str, object] = field(default_factory=dict)   # plugin -> what its Filter returned besides
    outside: np.ndarray | None = None         # (N,) bool nodes left out by a PreFilterResult
    narrowing: tuple[str, ...] = ()           # the plugins whose PreFilterResult left them out
    prefilter_message: str | None = None      # a PreFilter rejected the pod on every node
    rejected_by: str | None = None            # ... that PreFilter's plugin (None: `narrowing`'s, disjoint)
    error: str | None = None                  # a plugin failed the cycle (the pod stays pending with this text)
    # Nodes where a Filter failed (upstream's Error status) before any other rejected them: (N,) int64 index into
    # `failures`, -1 none; None when no Filter failed. The cycle fails with the first such node its walk meets
    # (`error`: the first in node order; a sampled cycle looks again, Placer.evaluate).
    failing: np.ndarray | None = None
    failures: tuple[str, ...] = ()
    raw: dict[str, np.ndarray] = field(default_factory=dict)         # plugin -> (N,) int64
    normalized: dict[str, np.ndarray] = field(default_factory=dict)  # plugin -> (N,) int64
    total: np.ndarray | None = None           # (N,) int64 weighted sum over feasible nodes
    _first: np.ndarray | None = field(default=None, repr=False)   # first_failed(), once computed
    _histogram: dict | None = field(default=None, repr=False)     # messages.reason_histogram, once computed
    _status: np.ndarray | None = field(default=None, repr=False)  # preemption.node_status, once computed
    _ahead: tuple | None = field(default=None, repr=False)        # preemption._ahead_of, once computed

    def first_failed(self) -> np.ndarray:
        """(N,) int index into `filters` of the first plugin that rejects each node, -1 when none does (the
        message and the rejectors of a failed cycle both read it; computed once)."""
        if self._first is None:
            codes = {k: np.asarray(v) for k, v in self.codes.items()}
            self._first = first_failures(self.filters, codes, len(np.asarray(self.feasible)))
        return self._first


def run_filters(xp, p: Prepared, tensors) -> Evaluation:
    n = tensors.nodes.allocatable.shape[0]
    codes, payloads, extras = {}, {}, {}
    feasible = xp.ones((n,), dtype=bool)
    for plugin, state in p.filters:
        out = plugin.filter(xp, state, tensors)
        codes[plugin.name], payloads[plugin.name] = out[0], out[1]
        if len(out) > 2:
            extras[plugin.name] = out[2]
        feasible = feasible & (out[0] == SUCCESS)
    ev = Evaluation(p.filter_names, codes, payloads, feasible, extras, narrowing=p.narrowing)
    if p.rejection is not None or p.error is not None:
        ev.prefilter_message, ev.rejected_by, ev.error = p.rejection, p.rejected_by, p.error
        ev.feasible = xp.zeros((n,), dtype=bool)
        return ev
    if p.allowed is not None:
        ev.outside = ~xp.asarray(p.allowed)
        ev.feasible = feasible & ~ev.outside
    _filter_errors(p, ev)
    return ev


def _filter_errors(p: Prepared, ev: Evaluation) -> None:
    """ev.failing / ev.failures / ev.error from the Filters that failed on some node (code ERROR). Upstream runs a
    node's Filters in order and stops at the first that does not pass, so a Filter's error counts only where the
    Filters before it passed; a node a PreFilterResult left out is not evaluated at all."""
    erring = [(i, plugin.filter_errors(state)) for i, (plugin, state) in enumerate(p.filters)]
    erring = [(i, texts) for i, texts in erring if texts]
    if not erring:          # the usual cycle: no Filter can fail
        return
    names = [plugin.name for plugin, _ in p.filters]
    n = np.asarray(ev.feasible).shape[0]
    reached = np.ones(n, bool) if ev.outside is None else ~np.asarray(ev.outside)
    failing, failures, done = np.full(n, -1, np.int64), [], 0
    for i, texts in erring:
        for name in names[done:i]:
            reached &= np.asarray(ev.codes[name]) == SUCCESS
        done = i
        hit = reached & (np.asarray(ev.codes[names[i]]) == ERROR)
        # the payload there: the index into this plugin's messages
        failing[hit] = len(failures) + np.asarray(ev.payloads[names[i]])[hit]
        failures += [f'running "{names[i]}" filter plugin: {text}' for text in texts]
    if (failing >= 0).any():
        ev.failing, ev.failures = failing, tuple(failures)
        ev.error = ev.failures[int(failing[np.flatnonzero(failing >= 0)[0]])]


def run_scores(xp, p: Prepared, tensors, ev: Evaluation, caches: dict | None = None) -> Evaluation:
    """Fill raw, normalized and total scores for the feasible nodes of `ev`. caches: plugin name -> dict kept
    across cycles on one cluster (None: no caching)."""
    feasible = ev.feasible
    total = xp.zeros((tensors.nodes.allocatable.shape[0],), dtype=xp.int64)
    for plugin, state, weight in p.scores:
        cache = None if caches is None else caches.setdefault(plugin.name, {})
        raw = plugin.score(xp, state, tensors, feasible, cache)
        ev.raw[plugin.name] = raw
        ev.normalized[plugin.name] = plugin.normalize(xp, raw, feasible, state, tensors)
        total = total + weight * ev.normalized[plugin.name]
    ev.total = xp.where(feasible, total, 0)
    return ev


def row_view(tensors, rows: np.ndarray) -> WithNodes:
    """The cluster tensors with the node table's rows `rows` alone ((k,) int64 node ids)."""
    return WithNodes(tensors, NodeRows(tensors.nodes, rows), rows)


def sampled_totals(xp, p: Prepared, tensors, ev: Evaluation, rows, caches: dict | None = None):
    """The weighted total of the nodes `rows` ((k,) int64 node ids: every feasible node of `ev`, which sampling
    left few). Upstream scores and normalizes the feasible nodes alone: a NODE_LOCAL Score is its copy_scores on
    those rows (the next pod's, unnormalized), a FIXED one its raw scores read at them and normalized over them
    (NormalizeScore sees those nodes' scores alone; the node table is cut to their rows too); any other Score gives
    its sampled_scores (by default run as run_scores runs it, over every node with the feasible ones marked and
    caches as there, and read at the rows). The weighted sum run_scores makes at those rows, with NODE_LOCAL
    arithmetic and FIXED normalizations on k rows instead of N. ev.raw, ev.normalized and ev.total stay unset."""
    total = xp.zeros((rows.shape[0],), dtype=xp.int64)
    view = every = None
    for plugin, state, weight in p.scores:
        behaviour = plugin.score_behaviour(state)
        if behaviour == NODE_LOCAL:
            part = plugin.copy_scores(xp, state, tensors, rows, 1)[:, 0]
        elif behaviour == FIXED:
            if view is None:
                view, every = row_view(tensors, rows), xp.ones((rows.shape[0],), dtype=bool)
            raw = plugin.score(xp, state, tensors, ev.feasible)[rows]
            part = plugin.normalize(xp, raw, every, state, view)
        else:
            cache = None if caches is None else caches.setdefault(plugin.name, {})
            part = plugin.sampled_scores(xp, state, tensors, ev.feasible, rows, cache)
        total = total + (part if weight == 1 else weight * part)
    return total


# -- the batch path's per-round quantities, over all nodes; the numpy Placer, the compiled JAX rounds
# (sched/jax_placer.py) and the kept shapes (sched/incremental.py) share them ---------------------------------
def _score_behaviours(p: Prepared) -> set[str] | None:
    """The Scores' batching behaviours, None when some plugin's Filter, Score or skip moves in a way no batch path
    follows (PER_POD)."""
    if any(plugin.filter_behaviour(state) == PER_POD for plugin, state in p.filters) \
            or any(plugin.skip_behaviour(p.pod, point) == PER_POD for plugin, point in p.skipped):
        return None
    behaviours = {plugin.score_behaviour(state) for plugin, state, _ in p.scores}
    return None if PER_POD in behaviours else behaviours


def batchable(p: Prepared) -> bool:
    """Every plugin that runs keeps its Filter and Score exact under the batch path's rounds (kernels/batch.py)."""
    behaviours = _score_behaviours(p)
    return behaviours is not None and DOMAIN not in behaviours


def domain_batchable(p: Prepared) -> bool:
    """Copies of the pod are placed exactly by the sequential loop of kernels/domain_batch.py: some Score is DOMAIN,
    every other plugin would allow the batch path's rounds."""
    behaviours = _score_behaviours(p)
    return behaviours is not None and DOMAIN in behaviours


def copy_capacity(xp, p: Prepared, tensors, default: int):
    """(N,) int64 copies of the pod each node takes before a NODE_LOCAL filter rejects it; `default` where none
    of them runs."""
    cap = xp.full((tensors.nodes.allocatable.shape[0],), default, dtype=xp.int64)
    for plugin, state in p.filters:
        if plugin.filter_behaviour(state) == NODE_LOCAL:
            cap = xp.minimum(cap, plugin.copy_capacity(xp, state, tensors))
    return cap


def capacity_rows(p: Prepared, tensors, rows: np.ndarray, default: int, keys: list | None = None) -> np.ndarray:
    """copy_capacity on the node rows `rows` ((n,) int64 node ids): (n,) int64, remembered by those rows when every
    NODE_LOCAL Filter names the node-table columns it reads (Prepared.row_capacity). keys: as for copy_totals."""
    remembered = p.row_capacity if len(rows) <= _REMEMBERED_PAIRS else None
    found = None
    if remembered is not None and remembered.worthwhile:
        if keys is None or remembered.columns is not LOAD_COLUMNS:
            keys = remembered.keys(tensors, rows)
        found = remembered.find(keys)
    if found is None:
        found = copy_capacity(np, p, row_view(tensors, rows), _UNBOUNDED).tolist()
        if remembered is not None and remembered.worthwhile:
            remembered.remember(zip(keys, found))
    return np.minimum(np.array(found, np.int64), default)


def fixed_scores(xp, p: Prepared, tensors, feasible):
    """The weighted normalized FIXED scores, which stay put while the feasible set keeps the nodes their
    normalization depends on ((N,) int64), and those nodes (per plugin, (N,) bool masks)."""
    total = xp.zeros((feasible.shape[0],), dtype=xp.int64)
    holders = []
    for plugin, state, weight in p.scores:
        if plugin.score_behaviour(state) != FIXED:
            continue
        raw = plugin.score(xp, state, tensors, feasible)
        total = total + weight * plugin.normalize(xp, raw, feasible, state, tensors)
        holders += plugin.normalization_holders(xp, raw, feasible, state)
    return total, holders


def copy_totals(xp, p: Prepared, tensors, rows, static_total, copies, keys: list | None = None):
    """(len(rows), J) int64 total score of copy copies[0, j] (1 = the next pod) on node rows[r]; static_total:
    fixed_scores' total at those rows. copies may be the int 1: the next pod alone (J = 1, fewer operations).
    keys: the rows' keys over LOAD_COLUMNS (RememberedRows.keys), when the caller has them."""
    if xp is np and len(rows) * (1 if isinstance(copies, int) else copies.shape[1]) <= _REMEMBERED_PAIRS:
        remembered = p.row_totals
        if remembered is not None and remembered.worthwhile:
            if keys is None or remembered.columns is not LOAD_COLUMNS:
                keys = remembered.keys(tensors, rows)
            return _remembered_totals(p, tensors, rows, static_total, copies, remembered, keys)
    return _array_totals(xp, p, tensors, rows, static_total, copies)


def _array_totals(xp, p: Prepared, tensors, rows, static_total, copies):
    out = static_total[:, None] if isinstance(copies, int) else static_total[:, None] + xp.zeros(copies.shape,
                                                                                                 dtype=xp.int64)
    for plugin, state, weight in p.scores:
        if plugin.score_behaviour(state) == NODE_LOCAL:
            part = plugin.copy_scores(xp, state, tensors, rows, copies)
            out = out + (part if weight == 1 else weight * part)
    return out


def _remembered_totals(p: Prepared, tensors, rows: np.ndarray, static_total: np.ndarray, copies,
                       remembered: RememberedRows, keys: list) -> np.ndarray:
    """copy_totals from the NODE_LOCAL totals remembered by node rows (keys: the rows'); rows met for the first time
    are computed by the arrays and remembered."""
    wanted = [1] if isinstance(copies, int) else copies[0].tolist()
    pairs = [(j, key) for key in keys for j in wanted]
    local = remembered.find(pairs)
    if local is None:
        local = _array_totals(np, p, tensors, rows, np.zeros(len(rows), np.int64), copies).ravel().tolist()
        remembered.remember(zip(pairs, local))
    return static_total[:, None] + np.array(local, np.int64).reshape(len(rows), len(wanted))


def load_keys(tensors, rows: np.ndarray, *remembered: RememberedRows | None) -> list | None:
    """The rows' keys over LOAD_COLUMNS, for copy_totals and filter_rows on those rows (or a part of them), when one
    of `remembered` is keyed by them and would be read; else None."""
    if len(rows) <= _REMEMBERED_PAIRS:
        for r in map(_by_load, remembered):
            if r is not None and r.worthwhile:
                return r.keys(tensors, rows)
    return None


def _by_load(remembered: RememberedRows | None) -> RememberedRows | None:
    """remembered, when it is keyed by rows over LOAD_COLUMNS (the keys load_keys gives)."""
    return remembered if remembered is not None and remembered.columns is LOAD_COLUMNS else None


def remembered_passes(filtering: Prepared, scoring: Prepared, keys: list) -> list[int] | None:
    """For node rows of these keys (over LOAD_COLUMNS): copy_totals' NODE_LOCAL part for the next pod (scoring's,
    without static_total) when, for every row, it and filter_rows' results (filtering's) are remembered and every
    Filter returned SUCCESS with payload 0 there; else None. What a kept shape's rows that stay feasible need: no
    array is made."""
    totals, filters = _by_load(scoring.row_totals), _by_load(filtering.row_filters)
    if totals is None or (filtering.filters and filters is None):
        return None
    if filtering.filters:
        found = filters.peek(keys)
        if found is None or found != [((SUCCESS, 0),) * len(filtering.filters)] * len(keys):
            return None
    return totals.peek([(1, key) for key in keys])


def remembered_copies(p: Prepared, scoring: Prepared, keys: list, most: int
                      ) -> tuple[list[int], list[list[int]]] | None:
    """For node rows of these keys (over LOAD_COLUMNS): capacity_rows' copies per row (at most `most`), and per row
    copy_totals' NODE_LOCAL part (scoring's, without static_total) of copies 1 .. the largest of them, when all are
    remembered and they are at most _REMEMBERED_PAIRS; else None. A kept round's few contenders, as lists."""
    capacity, totals = _by_load(p.row_capacity), _by_load(scoring.row_totals)
    caps = None if capacity is None or totals is None else capacity.peek(keys)
    if caps is None:
        return None
    caps = [min(c, most) for c in caps]
    copies = max(caps)
    if not 0 < copies * len(keys) <= _REMEMBERED_PAIRS:
        return None
    local = totals.peek([(j, key) for key in keys for j in range(1, copies + 1)])
    if local is None:
        return None
    return caps, [local[i:i + copies] for i in range(0, len(local), copies)]


def filter_rows(p: Prepared, tensors, rows: np.ndarray, keys: list | None = None
                ) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(name, code (n,) int8, payload (n,) int64) of each of p's Filters on the node rows `rows`, whose Filters
    read their own node's row alone (a kept shape's NODE_LOCAL Filters on its changed rows); remembered by those
    rows when every Filter names the node-table columns it reads (Prepared.row_filters). keys: as for
    copy_totals."""
    remembered = p.row_filters if len(rows) <= _REMEMBERED_PAIRS else None
    if remembered is not None and remembered.worthwhile:
        if keys is None or remembered.columns is not LOAD_COLUMNS:
            keys = remembered.keys(tensors, rows)
        found = remembered.find(keys)
        if found is not None:
            return [(plugin.name, np.array([f[i][0] for f in found], np.int8),
                     np.array([f[i][1] for f in found], np.int64)) for i, (plugin, _) in enumerate(p.filters)]
    view = row_view(tensors, rows)
    out = [(plugin.name, *plugin.filter(np, state, view)[:2]) for plugin, state in p.filters]
    if remembered is not None and remembered.worthwhile:
        remembered.remember(zip(keys, zip(*(zip(code.tolist(), payload.tolist()) for _, code, payload in out))))
    return out
