"""Structure-of-arrays tensors compiled from Node and Pod objects.

Everything a kernel reads about nodes and bound pods is an int64/int32/bool numpy array here; strings
live only in vocabularies (string -> dense id). Arrays grow by reallocation when a new resource, label
key, taint, host port or bound pod appears, so ids already handed out stay valid.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .objects import Node, Pod, PodAffinityTerm, pod_keys
from .requests import pod_load

_LOAD_VECTORS_KEPT = 4096     # pod_load results whose vectors ClusterTensors.load_vectors keeps
_KEPT_POD_CLASSES = 4096     # label rows and term classes kept per labels dict / affinity object of bound pods
_FEW_CHANGES = 16          # changed_since: up to this many changes of as many node ids in all are merged in Python

# Resource columns 0..2 are fixed; extended resources (nvidia.com/gpu, hugepages-2Mi, ...) follow.
CPU, MEMORY, EPHEMERAL_STORAGE = 0, 1, 2
BASE_RESOURCES = ("cpu", "memory", "ephemeral-storage")


class Vocab:
    """Dense ids for strings (or any hashable), in order of first appearance."""

    def __init__(self, items=()):
        self.ids: dict = {}
        self.items: list = []
        self._derived: dict = {}        # key -> (size when made, value); see derived()
        for item in items:
            self.add(item)

    def derived(self, key, make):
        """make(self), remembered under `key` until the vocabulary grows (ids never change, so its size dates
        whatever was computed from it)."""
        hit = self._derived.get(key)
        if hit is not None and hit[0] == len(self.items):
            return hit[1]
        value = make(self)
        self._derived[key] = (len(self.items), value)
        return value

    def add(self, item) -> int:
        i = self.ids.get(item)
        if i is None:
            i = self.ids[item] = len(self.items)
            self.items.append(item)
        return i

    def get(self, item) -> int:
        return self.ids.get(item, -1)

    def __len__(self) -> int:
        return len(self.items)


class LabelVocab:
    """Label keys, and per key the values seen; value ids are per key so masks over them stay small."""

    def __init__(self):
        self.keys = Vocab()
        self.values: list[Vocab] = []
        self._numeric: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def add(self, key: str, value: str) -> tuple[int, int]:
        k = self.keys.ids.get(key)
        if k is None:
            k = self.keys.add(key)
            self.values.append(Vocab())
        values = self.values[k]
        v = values.ids.get(value)
        if v is None:             # a new value: the key's numeric reading is out of date
            v = values.add(value)
            self._numeric.pop(k, None)
        return k, v

    def value_id(self, key_id: int, value: str) -> int:
        return -1 if key_id < 0 else self.values[key_id].get(value)

    def numeric(self, key_id: int) -> tuple[np.ndarray, np.ndarray]:
        """(value as int64, parsed ok) per value id of a key, for Gt/Lt (upstream parses base-10 int64)."""
        cached = self._numeric.get(key_id)
        if cached is None:
            vals = self.values[key_id].items
            num = np.zeros(len(vals), np.int64)
            ok = np.zeros(len(vals), bool)
            for i, v in enumerate(vals):
                parsed = parse_int64_label(v)
                if parsed is not None:
                    num[i], ok[i] = parsed, True
            cached = self._numeric[key_id] = (num, ok)
        return cached


def parse_int64_label(value: str) -> int | None:
    """strconv.ParseInt(value, 10, 64): optional sign, ASCII digits only, within int64."""
    body = value[1:] if value[:1] in "+-" else value
    if not body or not body.isascii() or not body.isdigit():
        return None
    number = int(value)
    return number if -(1 << 63) <= number < (1 << 63) else None


def _grow_columns(a: np.ndarray, cols: int, fill) -> np.ndarray:
    if a.shape[1] >= cols:
        return a
    # Column-major: kernels read one resource (or label key) across all nodes at a time.
    out = np.full((a.shape[0], cols), fill, a.dtype, order="F")
    out[:, : a.shape[1]] = a
    return out


@dataclass
class NodeTable:
    names: list[str]                # N node names, index = node id
    allocatable: np.ndarray         # (N, R) int64  cpu in millicores, bytes, counts
    requested: np.ndarray           # (N, R) int64  sum of bound pods' requests
    nonzero_requested: np.ndarray   # (N, 2) int64  cpu/memory with the 100m / 200Mi scoring defaults
    pod_count: np.ndarray           # (N,)   int64  bound pods
    allowed_pods: np.ndarray        # (N,)   int64  allocatable "pods"
    unschedulable: np.ndarray       # (N,)   bool   spec.unschedulable
    labels: np.ndarray              # (N, K) int32  value id per label key, -1 absent
    taints: np.ndarray              # (N, T) int16  position of taint t in node.spec.taints, -1 absent
    host_ports: np.ndarray          # (N, P) bool   a bound pod uses port vocabulary entry p
    # (N, 2R + 4) int64 column-major: allocatable, requested, nonzero_requested, pod_count and allowed_pods side by
    # side, those five being its views (share_load_columns): a node's whole load row is one gather.
    load: np.ndarray | None = None

    @property
    def size(self) -> int:
        return len(self.names)

    @property
    def shared_load(self) -> np.ndarray | None:
        """`load`, while the five load columns are its views (None: not laid out so, or a copy of the table with a
        column replaced)."""
        load = self.load
        # Spelled out, not a loop over the columns: asked for on every placement and kept-shape key.
        if load is None or self.allocatable.base is not load or self.requested.base is not load or \
                self.nonzero_requested.base is not load or self.pod_count.base is not load or \
                self.allowed_pods.base is not load:
            return None
        return load

    def nbytes(self) -> int:
        return sum(getattr(self, f).nbytes for f in ("allocatable", "requested", "nonzero_requested", "pod_count",
                                                     "allowed_pods", "unschedulable", "labels", "taints",
                                                     "host_ports"))


def share_load_columns(table: NodeTable) -> None:
    """Lay the five load columns side by side in one column-major block, table.load, each becoming its view (their
    values copied)."""
    n, r = table.allocatable.shape
    load = np.empty((n, 2 * r + 4), np.int64, order="F")
    load[:, :r], load[:, r:2 * r], load[:, 2 * r:2 * r + 2] = table.allocatable, table.requested, table.nonzero_requested
    load[:, 2 * r + 2], load[:, 2 * r + 3] = table.pod_count, table.allowed_pods
    table.load = load
    table.allocatable, table.requested, table.nonzero_requested = load[:, :r], load[:, r:2 * r], load[:, 2 * r:2 * r + 2]
    table.pod_count, table.allowed_pods = load[:, 2 * r + 2], load[:, 2 * r + 3]


@dataclass
class BoundPods:
    """Pods already on nodes, as far as inter-pod plugins (PodTopologySpread) need them."""
    node: np.ndarray                # (M,) int32  node id
    namespace: np.ndarray           # (M,) int32  namespace vocabulary id
    labels: np.ndarray              # (M, Kp) int32 value id per pod label key, -1 absent
    terminating: np.ndarray         # (M,) bool   metadata.deletionTimestamp set, or removed (not counted by
                                    #             PodTopologySpread)
    count: int = 0                  # rows in use; arrays are over-allocated to amortise appends
    removed: np.ndarray | None = None   # (M,) bool unbound since (deleted, rejected at Permit); InterPodAffinity
                                        # counts terminating pods but not removed ones. None: no row removed

    @classmethod
    def empty(cls, capacity: int = 64) -> "BoundPods":
        return cls(np.zeros(capacity, np.int32), np.zeros(capacity, np.int32), np.full((capacity, 0), -1, np.int32),
                   np.zeros(capacity, bool), 0, np.zeros(capacity, bool))

    def view(self) -> "BoundPods":
        m = self.count
        removed = None if self.removed is None else self.removed[:m]
        return BoundPods(self.node[:m], self.namespace[:m], self.labels[:m], self.terminating[:m], m, removed)

    def rows(self, first: int) -> "BoundPods":
        """The rows from `first` on (pods bound since a reader last looked)."""
        m = self.count
        removed = None if self.removed is None else self.removed[first:m]
        return BoundPods(self.node[first:m], self.namespace[first:m], self.labels[first:m],
                         self.terminating[first:m], m - first, removed)

    def live(self) -> np.ndarray:
        """(M,) bool rows of pods still on their node (terminating ones included)."""
        if self.removed is None:
            return np.ones(self.count, bool)
        return ~self.removed[: self.count]


@dataclass
class Load:
    """One pod's load as bound pods add it to the node table."""
    request: np.ndarray             # (R',) int64 request vector (R': the resource columns when it was made)
    nonzero: np.ndarray             # (2,) int64 nonzero requests
    # (R + 3,) int64 what one pod adds to the requested, nonzero_requested and pod_count columns, side by side in
    # NodeTable.load (R: the table's resource columns when it was made; None: not made yet)
    delta: np.ndarray | None = None

    def delta_over(self, r: int) -> np.ndarray:
        """`delta` over r resource columns."""
        if self.delta is None or len(self.delta) != r + 3:
            self.delta = load_deltas([self.request], [self.nonzero], r)[0]
        return self.delta


def load_deltas(requests: list[np.ndarray], nonzeros: list[np.ndarray], r: int) -> np.ndarray:
    """(k, r + 3) int64: what one pod of each (request vector, nonzero requests) adds to the requested,
    nonzero_requested and pod_count columns over r resource columns, side by side as in NodeTable.load (a segment
    binds hundreds of distinct requests at once)."""
    out = np.empty((len(requests), r + 3), np.int64)
    out[:, :r] = padded_rows(requests, r)
    out[:, r: r + 2] = stacked(nonzeros, 2)
    out[:, r + 2] = 1
    return out


def padded_rows(vectors: list[np.ndarray], width: int) -> np.ndarray:
    """(len(vectors), width) int64: each vector (at most `width` long) zero-padded to `width`; vectors of one length
    are read from their bytes at once (stacked)."""
    out = np.zeros((len(vectors), width), np.int64)
    lengths = {len(v) for v in vectors}
    if len(lengths) == 1:
        length = lengths.pop()
        out[:, :length] = stacked(vectors, length)
    else:
        for row, v in zip(out, vectors):
            row[:len(v)] = v
    return out


def stacked(vectors: list[np.ndarray], width: int) -> np.ndarray:
    """(len(vectors), width) int64 from int64 vectors `width` long, read from their bytes at once (np.stack of
    hundreds of small arrays costs ~1 us each)."""
    return np.frombuffer(b"".join([np.asarray(v, np.int64).tobytes() for v in vectors]),
                         np.int64).reshape(len(vectors), width)


# Kinds of pod (anti-)affinity terms a bound pod holds.
REQUIRED_AFFINITY, REQUIRED_ANTI_AFFINITY, PREFERRED_AFFINITY, PREFERRED_ANTI_AFFINITY = 0, 1, 2, 3


@dataclass(frozen=True)
class TermClass:
    """Pod (anti-)affinity terms equal in everything InterPodAffinity reads of them (bound pods built from one
    template share one class)."""
    kind: int                       # REQUIRED_AFFINITY ... PREFERRED_ANTI_AFFINITY
    weight: int                     # preferred terms' weight (0 for required ones)
    term: PodAffinityTerm
    namespace: str                  # the owner's namespace (a term without namespaces and namespaceSelector means it)


def pod_term_classes(pod: Pod) -> list[TermClass]:
    """The pod's (anti-)affinity terms as a bound pod holds them (pods without pod affinity hold none)."""
    affinity = pod.spec.affinity
    out = []
    if affinity is None:
        return out
    for kind, part, preferred in ((REQUIRED_AFFINITY, affinity.pod_affinity, False),
                                  (REQUIRED_ANTI_AFFINITY, affinity.pod_anti_affinity, False),
                                  (PREFERRED_AFFINITY, affinity.pod_affinity, True),
                                  (PREFERRED_ANTI_AFFINITY, affinity.pod_anti_affinity, True)):
        if part is None:
            continue
        if preferred:
            terms = [(w.weight, w.pod_affinity_term) for w in part.preferred_during_scheduling_ignored_during_execution]
        else:
            terms = [(0, t) for t in part.required_during_scheduling_ignored_during_execution]
        out += [TermClass(kind, weight, term, pod.metadata.namespace) for weight, term in terms]
    return out


@dataclass
class AffinityTerms:
    """The pod (anti-)affinity terms of the bound pods: one row per (pod, term), the term as a class id."""
    pod: np.ndarray                 # (T,) int32 BoundPods row of the pod holding the term
    cls: np.ndarray                 # (T,) int32 TermClass id
    count: int = 0                  # rows in use
    classes: list[TermClass] = field(default_factory=list)
    index: dict = field(default_factory=dict)      # class key -> id
    pods_seen: int = 0              # binding-log positions scanned so far
    # (namespace, labels) of a pod -> (C,) bool the classes selecting it (InterPodAffinity's memo; classes are only
    # ever appended, so an entry is extended, never invalidated)
    selecting: dict = field(default_factory=dict)
    # InterPodAffinity's PreScore sums per incoming pod, brought up to date with the rows added since (its memo)
    score_sums: dict = field(default_factory=dict)
    kinds: set = field(default_factory=set)        # the kinds of term the classes hold
    # (id of a pod's spec.affinity, namespace) -> (that affinity, held so its id stays its own; its class ids)
    pod_classes: dict = field(default_factory=dict)
    added: int = 0                  # rows ever added (never decreases: tells readers that terms came)
    added_anti: int = 0             # of those, required anti-affinity rows (the only ones PreFilter reads)

    @classmethod
    def empty(cls) -> "AffinityTerms":
        return cls(np.zeros(16, np.int32), np.zeros(16, np.int32))

    def add(self, row: int, pod: Pod) -> None:
        for c in self._class_ids(pod):
            if self.count == len(self.pod):
                self.pod = np.resize(self.pod, 2 * self.count)
                self.cls = np.resize(self.cls, 2 * self.count)
            self.pod[self.count], self.cls[self.count] = row, c
            self.count += 1
            self.added += 1
            self.added_anti += self.classes[c].kind == REQUIRED_ANTI_AFFINITY

    def _class_ids(self, pod: Pod) -> list[int]:
        """The class ids of the pod's terms, classes new to the table added; kept per spec.affinity object and
        namespace (a controller's replicas share theirs, and classes are never dropped)."""
        affinity, ns = pod.spec.affinity, pod.metadata.namespace
        hit = self.pod_classes.get((id(affinity), ns))
        if hit is not None and hit[0] is affinity:
            return hit[1]
        ids = []
        for tc in pod_term_classes(pod):
            key = (tc.kind, tc.weight, tc.namespace, tc.term.model_dump_json())
            c = self.index.get(key)
            if c is None:
                c = self.index[key] = len(self.classes)
                self.classes.append(tc)
                self.kinds.add(tc.kind)
            ids.append(c)
        if len(self.pod_classes) >= _KEPT_POD_CLASSES:
            self.pod_classes.clear()
        self.pod_classes[(id(affinity), ns)] = (affinity, ids)
        return ids

    def truncate(self, rows: int) -> None:
        """Forget the terms of BoundPods rows >= rows."""
        self.count = int(np.searchsorted(self.pod[: self.count], rows))
        self.pods_seen = min(self.pods_seen, rows)


@dataclass
class ClusterTensors:
    nodes: NodeTable
    bound: BoundPods
    resources: Vocab                # resource name -> column of allocatable/requested
    node_labels: LabelVocab
    taints: Vocab                   # (key, value, effect) -> column of NodeTable.taints
    ports: Vocab                    # (host_ip, protocol, port) -> column of NodeTable.host_ports
    namespaces: Vocab
    pod_labels: LabelVocab
    node_index: dict[str, int] = field(default_factory=dict)
    # Binding log, in order: the pods and, chunk by chunk, their node ids (no per-pod tuples: a million
    # small objects would cost more than the placement itself).
    _bound_pods: list[Pod] = field(default_factory=list)
    _bound_nodes: np.ndarray = field(default_factory=lambda: np.zeros(64, np.int32))   # (capacity,) node ids;
                                                        # the first len(_bound_pods) are the log's
    _removed: set[int] = field(default_factory=set)      # log positions of pods unbound since (deleted, rejected)
    _removed_last: int = -1                               # the largest of them (-1: none)
    _position: dict[str, int] | None = None               # pod key -> log position, built on first use
    _keys: list[str] | None = None                        # each log position's pod key, built with _position
    # Node ids whose load changed, one array per change, oldest first: caches of per-node terms read it.
    _changes: list[np.ndarray] = field(default_factory=list)
    # Per node, the position in _changes of the last change listing it (-1: none), through change _stamped - 1
    # (change_stamps folds in the rest): what changed after a mark is one comparison, whoever asks
    _stamps: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64), repr=False)
    _stamped: int = 0
    _terms: AffinityTerms = field(default_factory=AffinityTerms.empty)
    truncations: list[int] = field(default_factory=list)  # every truncate_log mark, in order (readers of log
                                                          # positions drop rows from the smallest new one)
    node_rewrites: int = 0          # update_node calls so far (node labels read by caches may have changed)
    # load_vectors' answers by pod_load result: (that requests dict, held so its id stays its own; request vector;
    # nonzero requests).
    _load_vectors: dict[int, tuple] = field(default_factory=dict)
    # Each log position's load as an id in _loads (-1: not told when recorded, read from the pod when asked): what
    # evictions and preemption's dry runs read of many bound pods, whose objects are cold memory by then.
    _bound_loads: np.ndarray = field(default_factory=lambda: np.full(64, -1, np.int32))   # (capacity,)
    _loads: list[Load] = field(default_factory=list)            # by id
    _load_ids: dict[bytes, int] = field(default_factory=dict)    # request and nonzero bytes -> id in _loads
    # _load_id's answers by vector: id(request) -> (request, nonzero, id in _loads), the vectors held so their ids
    # stay their own (a kept shape binds with the same vectors run after run; vectors are never written once made)
    _load_of_vectors: dict[int, tuple] = field(default_factory=dict)
    # _bound_label_row's answers: id of a pod's labels dict -> (that dict, held so its id stays its own; its row)
    _label_rows: dict[int, tuple[dict, np.ndarray]] = field(default_factory=dict)
    # unique_label_values' answers: label key id -> ((nodes, node_rewrites) when found, the answer)
    _unique_keys: dict[int, tuple[tuple[int, int], bool]] = field(default_factory=dict)

    # -- growth ---------------------------------------------------------------------------------
    def resource_column(self, name: str) -> int:
        col = self.resources.add(name)
        r = len(self.resources)
        if self.nodes.allocatable.shape[1] < r:
            self.nodes.allocatable = _grow_columns(self.nodes.allocatable, r, 0)
            self.nodes.requested = _grow_columns(self.nodes.requested, r, 0)
            share_load_columns(self.nodes)
        return col

    def port_column(self, port: tuple[str, str, int]) -> int:
        col = self.ports.add(port)
        self.nodes.host_ports = _grow_columns(self.nodes.host_ports, len(self.ports), False)
        return col

    def pod_label_row(self, labels: dict[str, str]) -> np.ndarray:
        pairs = [self.pod_labels.add(k, v) for k, v in labels.items()]
        row = np.full(len(self.pod_labels.keys), -1, np.int32)
        for k, v in pairs:
            row[k] = v
        return row

    def _bound_label_row(self, labels: dict[str, str]) -> np.ndarray:
        """pod_label_row kept per labels dict (a controller's replicas share theirs; value ids never change)."""
        hit = self._label_rows.get(id(labels))
        if hit is None or hit[0] is not labels:
            if len(self._label_rows) >= _KEPT_POD_CLASSES:
                self._label_rows.clear()
            hit = self._label_rows[id(labels)] = (labels, self.pod_label_row(labels))
        return hit[1]

    def request_vector(self, requests: dict[str, int]) -> np.ndarray:
        ids = self.resources.ids
        for name in requests:
            if name != "pods" and name not in ids:
                self.resource_column(name)
        vec = np.zeros(len(self.resources), np.int64)
        for name, qty in requests.items():
            if name != "pods":
                vec[ids[name]] = qty
        return vec

    def load_vectors(self, pod: Pod) -> tuple[np.ndarray, np.ndarray]:
        """((R,) int64 request vector, (2,) int64 nonzero requests) of a bound pod's load. Pods of a template share
        one pod_load result, so its vectors are kept with it (evictions read them pod by pod); a column added since
        is one the pod does not request, and the load columns are updated up to the vector's width. Shared: do not
        change them."""
        requests, nonzero = pod_load(pod)
        hit = self._load_vectors.get(id(requests))
        if hit is None or hit[0] is not requests:
            if len(self._load_vectors) >= _LOAD_VECTORS_KEPT:
                self._load_vectors.clear()
            vector = self.request_vector(requests)
            hit = self._load_vectors[id(requests)] = (requests, vector, np.array(nonzero, np.int64))
        return hit[1], hit[2]

    # -- bound pods -------------------------------------------------------------------------------
    def account(self, node_ids: np.ndarray, request: np.ndarray, nonzero: np.ndarray, ports: list[int]):
        """Add the load of one pod shape placed on node_ids (a node may repeat) to the node table. Returns the
        host-port cells as they were before (None without ports), which `unaccount` needs to undo exactly."""
        return self._account(node_ids, self._load_id(request, nonzero), ports)

    def bind(self, pods: list[Pod], node_ids: np.ndarray, request: np.ndarray, nonzero: np.ndarray,
             ports: list[int], pod_terms: bool = True):
        """account and record_bound for pods of one shape, their load looked up once; returns account's.
        pod_terms False: the pods hold no pod (anti-)affinity term (has_pod_terms of their shared spec)."""
        load = self._load_id(request, nonzero)
        before = self._account(node_ids, load, ports)
        self._record(pods, node_ids, load, pod_terms)
        return before

    def bind_runs(self, runs: list[tuple[list[Pod], np.ndarray, np.ndarray, np.ndarray]]) -> None:
        """bind for runs of different shapes without host ports, (pods, node_ids, request, nonzero) each, in order: one
        update of the load columns and one record for all of them (a segment's pods, sched/jax_placer.py)."""
        runs = [run for run in runs if len(run[0])]
        if not runs:
            return
        block, r = self._load_block()
        loads = np.array([self._load_id(request, nonzero) for _, _, request, nonzero in runs], np.int64)
        per_pod = np.repeat(np.arange(len(runs)), [len(pods) for pods, *_ in runs])
        node_ids = np.concatenate([ids for _, ids, _, _ in runs])
        deltas = load_deltas([request for _, _, request, _ in runs], [nonzero for _, _, _, nonzero in runs], r)
        np.add.at(block[:, r: 2 * r + 3], node_ids, deltas[per_pod])
        self._changes.append(node_ids)
        self._record([pod for pods, *_ in runs for pod in pods], node_ids, loads[per_pod])

    def _account(self, node_ids: np.ndarray, load: int, ports: list[int]):
        self._add_load(node_ids, load, 1)
        if not ports:
            return None
        cells = np.ix_(np.asarray(node_ids), ports)
        before = self.nodes.host_ports[cells].copy()
        self.nodes.host_ports[cells] = True
        return before

    def unaccount(self, node_ids: np.ndarray, request: np.ndarray, nonzero: np.ndarray, ports: list[int],
                  ports_before) -> None:
        """Exactly undo `account` (integer subtraction; host-port cells restored to what account returned).
        Undo placements in reverse order."""
        self._add_load(node_ids, self._load_id(request, nonzero), -1)
        if ports:
            self.nodes.host_ports[np.ix_(np.asarray(node_ids), ports)] = ports_before

    def _load_block(self) -> tuple[np.ndarray, int]:
        """(NodeTable.load: the requested, nonzero_requested and pod_count columns side by side; the resource columns)."""
        nodes = self.nodes
        block = nodes.shared_load
        if block is None:           # a column was replaced since the table was laid out: lay it out again
            share_load_columns(nodes)
            block = nodes.load
        return block, nodes.requested.shape[1]

    def _add_load(self, node_ids: np.ndarray, load: int, sign: int) -> None:
        """Add (sign 1) or take off (-1) the load of id `load` once per entry of node_ids (a node may repeat): one
        update of the requested, nonzero_requested and pod_count columns, side by side in NodeTable.load."""
        block, r = self._load_block()
        delta = self._loads[load].delta_over(r)
        if len(node_ids) == 1:        # the per-pod path: plain indexing beats ufunc.at
            row = block[int(node_ids[0]), r: 2 * r + 3]
            if sign > 0:
                row += delta
            else:
                row -= delta
        else:
            (np.add if sign > 0 else np.subtract).at(block[:, r: 2 * r + 3], node_ids, delta)
        self._changes.append(np.asarray(node_ids))

    def record_bound(self, pods: list[Pod], node_ids, load: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """Remember which pod went where; BoundPods rows are built from this log only when needed. load: the
        (request vector, nonzero requests) the pods were accounted with, when they share one (one shape)."""
        self._record(pods, node_ids, -1 if load is None else self._load_id(*load))

    def _record(self, pods: list[Pod], node_ids, load, pod_terms: bool = True) -> None:
        """Log the pods on node_ids with their load id (one int, or one per pod). pod_terms False: none of the pods
        holds a pod (anti-)affinity term."""
        start = len(self._bound_pods)
        if self._keys is not None:
            keys = pod_keys(pods)
            self._keys += keys
            self._position.update(zip(keys, range(start, start + len(keys))))
        self._bound_pods.extend(pods)
        end = len(self._bound_pods)
        if end > len(self._bound_nodes):          # grown by doubling: appends cost O(1) amortized
            cap = max(end, 2 * len(self._bound_nodes))
            self._bound_nodes = np.resize(self._bound_nodes, cap)
            self._bound_loads = np.resize(self._bound_loads, cap)
        self._bound_nodes[start:end] = node_ids
        self._bound_loads[start:end] = load
        if not pod_terms and self._terms.pods_seen == start:
            self._terms.pods_seen = end          # affinity_terms would find nothing in them

    def _load_id(self, request: np.ndarray, nonzero: np.ndarray) -> int:
        """The id of a (request vector, nonzero requests) in _loads, by value (each cycle prepares its own vector):
        as many ids as distinct pod requests."""
        hit = self._load_of_vectors.get(id(request))
        if hit is not None and hit[0] is request and hit[1] is nonzero:
            return hit[2]
        given = nonzero
        nonzero = np.asarray(nonzero, np.int64)
        key = request.tobytes() + nonzero.tobytes()
        at = self._load_ids.get(key)
        if at is None:
            at = self._load_ids[key] = len(self._loads)
            self._loads.append(Load(request.copy(), nonzero.copy()))
        if len(self._load_of_vectors) >= _LOAD_VECTORS_KEPT:
            self._load_of_vectors.clear()
        self._load_of_vectors[id(request)] = (request, given, at)
        return at

    def log_loads(self, rows: np.ndarray) -> np.ndarray:
        """(k,) the load ids (see load_table) of the binding-log positions `rows`."""
        ids = self._bound_loads[rows]
        for j in np.flatnonzero(ids < 0).tolist():        # recorded without a load (a restricted copy's log)
            row = int(rows[j])
            ids[j] = self._bound_loads[row] = self._load_id(*self.load_vectors(self._bound_pods[row]))
        return ids

    def load_table(self) -> tuple[np.ndarray, np.ndarray]:
        """((L, R) int64 request vectors over today's resource columns, (L, 2) int64 nonzero requests) by load id."""
        request = np.zeros((len(self._loads), len(self.resources)), np.int64)
        for i, load in enumerate(self._loads):
            request[i, : len(load.request)] = load.request
        return request, np.array([load.nonzero for load in self._loads], np.int64).reshape(-1, 2)

    def unique_label_values(self, key: int) -> bool:
        """Whether every node carrying label key `key` has a value no other node has (kubernetes.io/hostname in most
        clusters): kept until nodes are added or rewritten (a removed node rebuilds the tensors)."""
        epoch = (self.nodes.size, self.node_rewrites)
        hit = self._unique_keys.get(key)
        if hit is None or hit[0] != epoch:
            values = self.nodes.labels[:, key]
            values = values[values >= 0]
            hit = self._unique_keys[key] = (epoch, len(np.unique(values)) == len(values))
        return hit[1]

    @property
    def node_rows(self) -> np.ndarray | None:
        """Node ids of the rows `nodes` holds: None, every node in id order (sched.cycle.WithNodes views hold some
        rows and name them)."""
        return None

    @property
    def changes(self) -> list[np.ndarray]:
        """Node ids whose load changed, one array per change, oldest first (read-only)."""
        return self._changes

    def change_stamps(self) -> np.ndarray:
        """(N,) int64 per node the position in `changes` of the last change listing it, -1 for none: the node's load
        moved after mark m when its stamp is >= m. Read-only; later calls update it in place. The list only grows,
        so each change is folded in once."""
        stamps, n = self._stamps, self.nodes.size
        if len(stamps) < n:                 # rows appended (add_nodes)
            stamps = self._stamps = np.concatenate([stamps, np.full(n - len(stamps), -1, np.int64)])
        changes = self._changes
        for i in range(self._stamped, len(changes)):
            stamps[changes[i]] = i
        self._stamped = len(changes)
        return stamps

    def changed_since(self, seen: int) -> np.ndarray:
        """(k,) int64 the node ids of changes[seen:], each once, ascending."""
        new = self._changes[seen:]
        # The per-pod path's few one-node changes: a set beats a pass over the nodes (not a batch's many nodes).
        if len(new) <= _FEW_CHANGES and sum(map(len, new)) <= _FEW_CHANGES:
            return np.array(sorted({n for chunk in new for n in chunk.tolist()}), np.int64)
        return (self.change_stamps() >= seen).nonzero()[0]

    def log_mark(self) -> int:
        """Where the binding log ends now; `truncate_log` goes back to it."""
        return len(self._bound_pods)

    def truncate_log(self, mark: int) -> None:
        """Forget every binding recorded after `mark` (their load is undone separately, by `unaccount`)."""
        if self._keys is not None:
            for key in self._keys[mark:]:
                del self._position[key]
            del self._keys[mark:]
        if self._removed_last >= mark:           # rare: a pod bound after the mark was removed since
            self._removed = {i for i in self._removed if i < mark}
            self._removed_last = max(self._removed, default=-1)
        self.truncations.append(mark)
        del self._bound_pods[mark:]
        self.bound.count = min(self.bound.count, mark)
        self._terms.truncate(mark)

    def log(self) -> tuple[list[Pod], np.ndarray, set[int]]:
        """The binding log (read-only): pods in binding order, their node ids, and the positions unbound since."""
        return self._bound_pods, self._flat_nodes(), self._removed

    def removals(self) -> int:
        """How many log positions were unbound (grows with every removal; a cut-back log may lower it)."""
        return len(self._removed)

    def live_bound_arrays(self) -> tuple[list[Pod], np.ndarray]:
        """(pods on a node now, in binding order; (M,) int64 their node ids): what restrict takes."""
        pods, nodes = self._bound_pods, self._flat_nodes()
        if not self._removed:
            return list(pods), nodes.astype(np.int64)
        keep = np.ones(len(pods), bool)
        keep[list(self._removed)] = False
        rows = np.flatnonzero(keep)
        return [pods[i] for i in rows.tolist()], nodes[rows].astype(np.int64)

    def live_bound(self) -> list[tuple[Pod, int]]:
        """(pod, node id) of every pod on a node now, in binding order."""
        pods, nodes = self.live_bound_arrays()
        return list(zip(pods, nodes.tolist()))

    def log_keys(self) -> list[str]:
        """Each binding-log position's pod key (read-only): what reads keys of many bound pods takes them here
        rather than from each pod, whose metadata is cold memory by then."""
        if self._keys is None:
            self._keys = pod_keys(self._bound_pods)
            self._position = dict(zip(self._keys, range(len(self._keys))))
        return self._keys

    def node_of(self, key: str) -> int:
        """Node id a live pod is bound to, -1 if it is not bound."""
        if self._position is None:
            self.log_keys()
        i = self._position.get(key, -1)
        if i < 0 or i in self._removed:
            return -1
        return int(self._bound_nodes[i])       # a logged position: within _flat_nodes()

    def position(self, key: str) -> int:
        """Binding-log position of a live bound pod, -1 if it is not bound."""
        if self.node_of(key) < 0:
            return -1
        return self._position[key]

    def pod_of(self, key: str) -> Pod | None:
        """The live bound pod with this key, None if there is none."""
        if self.node_of(key) < 0:
            return None
        return self._bound_pods[self._position[key]]

    def _flat_nodes(self) -> np.ndarray:
        return self._bound_nodes[: len(self._bound_pods)]

    def unbind(self, key: str) -> int:
        """Take a bound pod off its node (deleted, completed, rejected at Permit); returns the node id, -1 if the
        pod was not bound. Its BoundPods row stays, flagged like a terminating pod, which no plugin counts."""
        return self.unbind_all([key])[0][0]

    def unbind_all(self, keys: list[str]) -> tuple[list[int], list[Pod | None]]:
        """unbind for several pods at once (the victims of a cycle's preemptions): per key the node id and the pod
        taken off it, -1 and None if not bound (a key met again is not bound any more). The load of pods of one
        load id (log_loads) comes off in one step for all their nodes (integers: the same sums), one change."""
        if self._position is None:
            self.log_keys()
        position, removed, pods = self._position, self._removed, self._bound_pods
        # Log positions first (a key met again is not bound any more), then the node ids and flags of them all at once.
        at = []
        for key in keys:
            i = position.get(key, -1)
            if i < 0 or i in removed:
                at.append(-1)
                continue
            removed.add(i)
            at.append(i)
        rows = [i for i in at if i >= 0]
        if not rows:
            return [-1] * len(keys), [None] * len(keys)
        self._removed_last = max(self._removed_last, max(rows))
        rows_array = np.array(rows, np.int64)
        row_nodes = self._bound_nodes[rows_array].astype(np.int64)
        flagged = rows_array[rows_array < self.bound.count]
        self.bound.terminating[flagged] = True
        self.bound.removed[flagged] = True
        # The load of pods of one load id comes off in one step for all their nodes, in order of first appearance.
        ids = self.log_loads(rows_array)
        distinct, first = np.unique(ids, return_index=True)
        for load in distinct[np.argsort(first)].tolist():
            self._add_load(row_nodes[ids == load], load, -1)
        node_of = dict(zip(rows, row_nodes.tolist()))
        # No port column: no pod bound here (or on a copy sharing the vocabulary) has a host port.
        ports = {node for i, node in node_of.items() if pod_host_ports(pods[i])} if len(self.ports) else set()
        nodes = [node_of[i] if i >= 0 else -1 for i in at]
        taken = [pods[i] if i >= 0 else None for i in at]
        for node in ports:
            self._recompute_ports(node)
        return nodes, taken

    def _recompute_ports(self, node: int) -> None:
        """A node's host-port row from the pods still on it (two pods may share a port when NodePorts is off)."""
        self.nodes.host_ports[node] = False
        for pod, n in self.live_bound():
            if n == node:
                for port in pod_host_ports(pod):
                    self.nodes.host_ports[node, self.port_column(port)] = True

    def bound_pods(self) -> BoundPods:
        """The BoundPods table, brought up to date with every recorded binding."""
        b = self.bound
        if b.count < len(self._bound_pods):
            new = self._bound_pods[b.count:]
            node_ids = self._flat_nodes()[b.count:]
            rows = [self._bound_label_row(p.metadata.labels) for p in new]
            need = b.count + len(new)
            if need > len(b.node):
                cap = max(need, 2 * len(b.node))
                b.node = np.resize(b.node, cap)
                b.namespace = np.resize(b.namespace, cap)
                b.terminating = np.resize(b.terminating, cap)
                b.removed = np.resize(b.removed, cap)
            width = len(self.pod_labels.keys)
            if b.labels.shape != (len(b.node), width):       # more rows or label keys: a table made anew
                labels = np.full((len(b.node), width), -1, np.int32)
                labels[: b.count, : b.labels.shape[1]] = b.labels[: b.count]
                b.labels = labels
            else:                         # written in place, as the other columns (rows a cut-back log left)
                b.labels[b.count:need] = -1
            for j, row in enumerate(rows):
                b.labels[b.count + j, : len(row)] = row
            sl = slice(b.count, need)
            b.node[sl] = node_ids
            b.namespace[sl] = [self.namespaces.add(p.metadata.namespace or "default") for p in new]
            b.removed[sl] = [b.count + j in self._removed for j in range(len(new))]
            b.terminating[sl] = [p.metadata.deletion_timestamp is not None for p in new] | b.removed[sl]
            b.count = need
        return b.view()


    def affinity_terms(self) -> AffinityTerms:
        """The pod (anti-)affinity terms of the bound pods (rows are binding-log positions, which are BoundPods
        rows), up to date."""
        terms = self._terms
        log = self._bound_pods
        if terms.pods_seen < len(log):
            # A plain loop: cheaper per pod than mapping attrgetters over them (the dotted reads go through the models'
            # __getattr__ hook either way), and no fixed cost for the few pods a kept-shape placement binds.
            for row, pod in enumerate(log[terms.pods_seen:], terms.pods_seen):
                if has_pod_terms(pod.spec):
                    terms.add(row, pod)
            terms.pods_seen = len(log)
        return terms


def has_pod_terms(spec) -> bool:
    """Whether a PodSpec holds pod affinity or anti-affinity terms (which affinity_terms keeps)."""
    affinity = spec.affinity
    return affinity is not None and (affinity.pod_affinity is not None or affinity.pod_anti_affinity is not None)


def pod_host_ports(pod: Pod) -> list[tuple[str, str, int]]:
    """(hostIP, protocol, hostPort) of every port with a host port, of the containers and the restartable init
    containers (upstream GetHostPorts); an empty hostIP means 0.0.0.0."""
    out = []
    sidecars = [c for c in pod.spec.init_containers if c.restart_policy == "Always"]
    for c in [*pod.spec.containers, *sidecars]:
        for p in c.ports:
            if p.host_port:
                out.append((p.host_ip or "0.0.0.0", p.protocol or "TCP", p.host_port))
    return out


def compile_nodes(nodes: list[Node]) -> ClusterTensors:
    """Node objects -> ClusterTensors with no pods bound."""
    table = NodeTable(
        names=[], allocatable=np.zeros((0, len(BASE_RESOURCES)), np.int64, order="F"),
        requested=np.zeros((0, len(BASE_RESOURCES)), np.int64, order="F"),
        nonzero_requested=np.zeros((0, 2), np.int64, order="F"), pod_count=np.zeros(0, np.int64),
        allowed_pods=np.zeros(0, np.int64), unschedulable=np.zeros(0, bool),
        labels=np.zeros((0, 0), np.int32, order="F"), taints=np.zeros((0, 0), np.int16, order="F"),
        host_ports=np.zeros((0, 0), bool))
    tensors = ClusterTensors(nodes=table, bound=BoundPods.empty(), resources=Vocab(BASE_RESOURCES),
                             node_labels=LabelVocab(), taints=Vocab(), ports=Vocab(), namespaces=Vocab(),
                             pod_labels=LabelVocab())
    add_nodes(tensors, nodes)
    return tensors


def add_nodes(tensors: ClusterTensors, nodes: list[Node]) -> None:
    """Append rows for new nodes (no pods on them); vocabularies grow as needed."""
    table, first, n = tensors.nodes, tensors.nodes.size, len(nodes)
    for node in nodes:
        for name in node.status.allocatable:
            if name != "pods":
                tensors.resources.add(name)
    r = len(tensors.resources)

    def grown(a: np.ndarray, cols: int, fill) -> np.ndarray:
        out = np.full((first + n, cols), fill, a.dtype, order="F")
        out[:first, : a.shape[1]] = a
        return out

    table.allocatable = grown(table.allocatable, r, 0)
    table.requested = grown(table.requested, r, 0)
    table.nonzero_requested = grown(table.nonzero_requested, 2, 0)
    table.host_ports = grown(table.host_ports, table.host_ports.shape[1], False)
    table.pod_count = np.concatenate([table.pod_count, np.zeros(n, np.int64)])
    table.allowed_pods = np.concatenate([table.allowed_pods, np.zeros(n, np.int64)])
    table.unschedulable = np.concatenate([table.unschedulable, np.zeros(n, bool)])
    rows = [_node_row(tensors, node) for node in nodes]
    table.labels = grown(table.labels, len(tensors.node_labels.keys), -1)
    table.taints = grown(table.taints, len(tensors.taints), -1)
    _write_rows(tensors, first, nodes, rows)
    share_load_columns(table)
    names = [node.metadata.name for node in nodes]
    tensors.node_index.update(zip(names, range(first, first + n)))
    table.names.extend(names)


def update_node(tensors: ClusterTensors, node: Node) -> None:
    """Rewrite a node's row from its new object (labels, taints, allocatable, cordon); its load stays."""
    i = tensors.node_index[node.metadata.name]
    for name in node.status.allocatable:
        if name != "pods":
            tensors.resource_column(name)
    row = _node_row(tensors, node)
    tensors.node_rewrites += 1
    table = tensors.nodes
    table.labels = _grow_columns(table.labels, len(tensors.node_labels.keys), -1)
    table.taints = _grow_columns(table.taints, len(tensors.taints), -1)
    _write_rows(tensors, i, [node], [row])


def _node_row(tensors: ClusterTensors, node: Node) -> tuple[list[tuple[int, int]], list[int]]:
    """(label key id, value id) pairs and taint ids of a node; adds what is new to the vocabularies."""
    return ([tensors.node_labels.add(k, v) for k, v in node.metadata.labels.items()],
            [tensors.taints.add((t.key, t.value, t.effect)) for t in node.spec.taints])


def _write_rows(tensors: ClusterTensors, first: int, nodes: list[Node], rows: list) -> None:
    """The nodes' own columns of rows first, first + 1, ..., all of them: what an object does not list is absent
    (0 / -1). Column by column over all the rows (a node pool's nodes share their allocatable list: written once)."""
    table = tensors.nodes
    span = slice(first, first + len(nodes))
    table.allocatable[span] = 0
    table.allowed_pods[span] = 0
    table.labels[span] = -1
    table.taints[span] = -1
    table.unschedulable[span] = [node.spec.unschedulable for node in nodes]
    by_list: dict[int, tuple[dict, list[int]]] = {}       # id(allocatable) -> (it, its rows)
    for i, node in enumerate(nodes, first):
        allocatable = node.status.allocatable
        entry = by_list.get(id(allocatable))
        if entry is None:
            by_list[id(allocatable)] = (allocatable, [i])
        else:
            entry[1].append(i)
    for allocatable, at in by_list.values():
        for name, qty in allocatable.items():
            if name == "pods":
                table.allowed_pods[at] = qty
            else:
                table.allocatable[at, tensors.resources.ids[name]] = qty
    labels = [(i, k, v) for i, (pairs, _) in enumerate(rows, first) for k, v in pairs]
    if labels:
        at, k, v = np.array(labels, np.int64).T
        table.labels[at, k] = v
    taints = [(i, t, position) for i, (_, ids) in enumerate(rows, first) for position, t in enumerate(ids)]
    if taints:
        at, t, position = np.array(taints, np.int64).T
        table.taints[at, t] = position


def restrict(tensors: ClusterTensors, node_ids: np.ndarray,
             live: tuple[list[Pod], np.ndarray] | None = None) -> ClusterTensors:
    """A copy of the cluster seen through the nodes `node_ids` (ascending) only: their rows, renumbered 0..k-1,
    and the pods bound to them, in binding order; vocabularies are shared (grow them on `tensors` first: the copy
    must not add columns). What a scheduling framework sees under a placement's node list (KEP-5732
    AssumePlacement); placing pods on the copy leaves `tensors` untouched. `live`: tensors.live_bound_arrays(),
    when the caller restricts to several node sets in a row."""
    node_ids = np.asarray(node_ids, np.int64)
    t = tensors.nodes
    table = NodeTable([t.names[i] for i in node_ids.tolist()], t.allocatable[node_ids], t.requested[node_ids],
                      t.nonzero_requested[node_ids], t.pod_count[node_ids], t.allowed_pods[node_ids],
                      t.unschedulable[node_ids], t.labels[node_ids], t.taints[node_ids], t.host_ports[node_ids])
    share_load_columns(table)
    sub = ClusterTensors(nodes=table, bound=BoundPods.empty(), resources=tensors.resources,
                         node_labels=tensors.node_labels, taints=tensors.taints, ports=tensors.ports,
                         namespaces=tensors.namespaces, pod_labels=tensors.pod_labels,
                         node_index={name: i for i, name in enumerate(table.names)})
    renumber = np.full(t.size, -1, np.int64)
    renumber[node_ids] = np.arange(len(node_ids))
    live_pods, live_nodes = tensors.live_bound_arrays() if live is None else live
    at = renumber[live_nodes]
    rows = np.flatnonzero(at >= 0)
    if len(rows):
        sub.record_bound([live_pods[i] for i in rows.tolist()], at[rows].astype(np.int32))
    return sub


def bind_existing(tensors: ClusterTensors, pod: Pod, node_id: int) -> None:
    """Account a pod that the input already shows bound (spec.nodeName)."""
    request, nonzero = tensors.load_vectors(pod)
    ports = [tensors.port_column(p) for p in pod_host_ports(pod)]
    tensors.bind([pod], np.array([node_id]), request, nonzero, ports)
