"""GPU devices in the main Scheduler (issue 5): the GPU-share filter, device allocation, undo and release, and the
devices whole-GPU (`nvidia.com/gpu`) pods take.

Which pods: a pod whose GPU request is written in the trace's annotation form (`alibabacloud.com/gpu-count`
and/or `alibabacloud.com/gpu-milli`, optionally `alibabacloud.com/gpu-card-model` = `|`-separated allowed models;
read by cluster_models.gpus.gpu_request_from_pod) with a count > 0: a fraction of one GPU, whole GPUs of a model,
or whole GPUs in that form (no node-level resource counts them). Pods asking `nvidia.com/gpu` in their resources
keep the node-level NodeResourcesFit check (upstream semantics, the batch and JAX paths unchanged); the two kinds
see each other through one rule per node, below.

State (`GpuBook`): the cluster's GpuTable (one row per device, rows grouped by node in node-id order) with the
milli the shares use, and, per pod holding a share (bound, waiting at Permit or tentatively placed), its (node
name, device indices, milli). A pod is a shape of its own request (shapes.signature adds it), is never batched
and never rides a gang train; the per-pod path prepares `GpuInputs` (the dense free / model views), `run_filters`
runs GpuShare last (kernels/gpu_share.py over kernels/gpu_fit.py), and after the pod is placed `allocate` picks
its devices on the chosen node, best fit (least free milli that still fits, ties lowest device index:
gpu_fit.select_devices), and returns a `GpuUndo` kept on the Placement. `undo` reverses it exactly; `release`
(deletion, Permit rejection) frees what the pod holds. Node events rebuild the table from the Node objects and
re-apply what pods hold.

Whole `nvidia.com/gpu` pods and shares on one node (a node whose devices come from allocatable nvidia.com/gpu):
  - whole GPUs held by shares: every device a share uses (milli_used > 0) counts as one requested nvidia.com/gpu
    of its node. `extra` (per node) is added to the node table's requested nvidia.com/gpu whenever shares change
    (take, undo, release, rebuild), so NodeResourcesFit -- per pod, batched, on JAX, in topology copies -- checks
    a whole-GPU request against the devices no share uses. Without shares `extra` is 0 and the node table is the
    one upstream has.
  - devices held by whole-GPU pods: the node's requested nvidia.com/gpu less `extra` (`whole_counts`) is the
    number of devices its whole-GPU pods hold; they are modelled on its lowest-index devices that no share uses
    (`device_used`), and the GpuShare filter and device choice see those devices as full. Which physical devices
    they have is the device plugin's choice (made at kubelet admission, not by the scheduler); the rule (a node's
    devices are all of one model) only decides which indices shares get. Being a function of the share table and
    the node table, this needs no bookkeeping on the placement paths, and undo / release of either kind of pod
    restores it exactly (docs/semantics.md, "Whole GPUs and shares on one node").
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cluster_models.gpus import MILLI, NVIDIA_GPU, GpuRequest, GpuTable, gpu_request_from_pod, node_gpus
from ..kernels.gpu_fit import allowed_ids, device_fits, select_devices
from ..kernels.gpu_share import (allowed_devices, gpu_share_filter, ranked_share_filter, share_failure,
                                 without_whole_devices)

_VALUES_KEPT = 1024      # node_values() keys kept (per request of each GPU score policy, and FGD's fragmentation)
_FEW_ROWS = 16           # node_values(): up to this many nodes (or changes since all were current) checked one by one
_CARRY_CHANGES = 1       # carry(): load changes a placement makes on its node (its load; `extra` stays put there)


@dataclass
class GpuInputs:
    """The GpuShare PreFilter result of one pod: its request, and the book its Filter reads when it runs (the free
    devices are read then, not copied here, so results kept between the pod's cycles stay exact:
    sched/incremental.py)."""
    pod: str
    count: int
    milli: int
    allowed: tuple | None             # model ids (gpu_fit.allowed_ids), None: any model
    own_whole: int                    # the pod's own nvidia.com/gpu request (whole devices besides its share)
    book: "GpuBook"

    def filter(self, xp, rows=None):
        """Filter codes and payloads of the nodes `rows` (None: every node)."""
        code, payload = self.book.share_failure(self.allowed, self.count)
        if rows is not None:
            code, payload = code[rows], payload[rows]
        failure = (xp.asarray(code), xp.asarray(payload))
        ranked = None if self.allowed is not None else self.book.ranked_free(self.count)
        if ranked is not None:
            return ranked_share_filter(failure, xp.asarray(ranked if rows is None else ranked[rows]), self.milli)
        free, model, _ = self.book.devices(rows, self.own_whole)
        return gpu_share_filter(xp, xp.asarray(free), xp.asarray(model), failure, self.count, self.milli,
                                self.allowed)


@dataclass
class GpuUndo:
    """What one placement took: `milli` on each of the devices `index` of `node`."""
    pod: str
    milli: int
    node: str
    index: np.ndarray                 # (k,) int64 device index on the node


def _table(nodes) -> GpuTable:
    return GpuTable.build([node_gpus(n) for n in nodes])


def _stale(tensors, at: np.ndarray, clean: int, rows: np.ndarray | None):
    """GpuBook.node_values' nodes to compute among `rows` (None: every node; in that order): those a change from the
    one their values were computed at (`at`) on lists. clean: a count of changes at which every node's values were
    current (-1 none): then only the nodes changed since may be stale. A few nodes are looked up one by one (a list),
    more as arrays (an array)."""
    stamps = tensors.change_stamps()
    if rows is None:
        if clean < 0 or len(tensors.changes) - clean > _FEW_ROWS:
            return (stamps >= at).nonzero()[0]
        rows = tensors.changed_since(clean)
    if len(rows) <= _FEW_ROWS:
        return [r for r in rows.tolist() if stamps[r] >= at[r]]
    return rows[stamps[rows] >= at[rows]]


class GpuBook:
    """The cluster's GPU devices and who holds which share of them."""

    def __init__(self, table: GpuTable, names):
        self.table = table
        self.names = list(names)                                  # node names, node-id order (= table nodes)
        self.index = {n: i for i, n in enumerate(self.names)}
        self.held: dict[str, tuple[str, np.ndarray, int]] = {}    # pod -> (node, device indices, milli)
        self.owner = None                 # the Cluster whose .tensors (node table) this book corrects (attach)
        self.extra = np.zeros(len(self.names), np.int64)          # per node: devices shares use, counted in the
        self._extra_on = None             # requested nvidia.com/gpu of this ClusterTensors (the one they are in)
        self._counts = table.per_node_count()                     # (N,) int64 devices per node
        self._width = max(table.max_devices(), 1)                 # D: device slots per node in the dense views
        self._free = table.dense_free()   # (N, D) int64 the table's free milli per device slot, kept with it
        self._model = table.dense_model()  # (N, D) int64 model id per slot (-1 padding)
        self._sorted = np.sort(self._free, axis=1)    # (N, D) int64 each node's free milli per slot, ascending
        self._tags = None                 # affinity_counts' state, see there
        self._derived: dict = {}          # derived(): values of the node set (models), until a node event
        self._values: dict = {}           # node_values(): key -> (node table, values, (N,) int64 per node the
                                          # len(changes) its values were computed at (-1 never), the len(changes)
                                          # at which all were last, -1 never), least recently read first
        self._carried = None              # carry(): the row a Score plugin has for the placement being made

    @classmethod
    def from_nodes(cls, nodes) -> GpuBook:
        return cls(_table(nodes), [n.metadata.name for n in nodes])

    @classmethod
    def empty(cls, names) -> GpuBook:
        return cls(GpuTable.build([[] for _ in names]), names)

    def attach(self, owner) -> None:
        """Read the node table from `owner.tensors` (a Cluster; node ids = this book's nodes). `extra` as it is
        now is taken to be in that table already (0 for a new book; a restricted copy's rows copy it)."""
        self.owner = owner
        self._extra_on = owner.tensors

    # -- whole-GPU pods and shares on one node ------------------------------------------------------------
    def _tensors(self):
        return None if self.owner is None else self.owner.tensors

    def _gpu_column(self, t) -> int:
        col = -1 if t is None else t.resources.get(NVIDIA_GPU)
        return col if 0 <= col < t.nodes.requested.shape[1] else -1

    def whole_counts(self, own: int = 0) -> np.ndarray:
        """(N,) int64 devices held by whole-GPU pods: requested nvidia.com/gpu less `extra`, plus `own` (a pod's
        own request, not placed yet), on nodes whose devices come from allocatable nvidia.com/gpu (elsewhere 0)."""
        t = self._tensors()
        col = self._gpu_column(t)
        if col < 0 or not self.names:
            return np.zeros(len(self.names), np.int64)
        nodes = t.nodes
        applied = self.extra if self._extra_on is t else 0
        return np.where(nodes.allocatable[:, col] > 0, np.maximum(nodes.requested[:, col] - applied, 0) + own, 0)

    def device_used(self) -> np.ndarray:
        """(G,) int64 milli in use per device, devices held by whole-GPU pods included (at 1000)."""
        t = self.table
        free = without_whole_devices(np, t.dense_free(), self.whole_counts())
        held = (free[t.node, t.index] == 0) & t.healthy & (t.milli_used == 0)
        return t.milli_used + np.where(held, MILLI, 0)

    def _refresh(self, nodes=None) -> None:
        """Bring `extra` (devices used by shares) of `nodes` (default all) up to date in the node table."""
        t = self._tensors()
        if t is None:
            return
        if self._extra_on is not t:           # a new node table (remove_node compiles one): nothing in it yet
            self.extra[:] = 0
            self._extra_on = t
        col = self._gpu_column(t)
        if col < 0:                           # no node advertises nvidia.com/gpu: nothing to correct
            return
        tab = self.table
        if nodes is None:
            busy = np.bincount(tab.node[tab.milli_used > 0], minlength=len(self.names)).astype(np.int64)
            ids = np.arange(len(self.names))
        else:
            ids = np.asarray(nodes, np.int64)
            busy = np.array([int(np.count_nonzero(tab.milli_used[tab.offsets[n]:tab.offsets[n + 1]]))
                             for n in ids.tolist()], np.int64)
        busy = np.where(t.nodes.allocatable[ids, col] > 0, busy, 0)
        delta = busy - self.extra[ids]
        moved = ids[delta != 0]
        if len(moved):
            t.nodes.requested[moved, col] += delta[delta != 0]
            self.extra[moved] = busy[delta != 0]
            t.changes.append(moved)           # a load change: caches and device-resident copies re-read these

    # -- PreFilter / Filter inputs --------------------------------------------------------------------
    def prepare(self, pod_key: str, req: GpuRequest, own_whole: int = 0) -> GpuInputs:
        """own_whole: the pod's own nvidia.com/gpu request (whole devices it would hold besides its share)."""
        return GpuInputs(pod_key, req.count, req.milli, allowed_ids(self.table.models, req.models), own_whole, self)

    def devices(self, rows=None, own: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The devices of the nodes `rows` (None: every node; node ids, or a slice of them: one node's read costs less
        as a slice) as the GpuShare filter and the GPU scores read them:
        free (n, D) int64 milli per device slot (padding, unhealthy devices and the devices whole-GPU pods hold: 0;
        `own`: whole devices the pod asks besides, held too), model (n, D) int64 model id (-1 padding) and
        devices (n,) int64 per node. The arrays may be the book's own: read them before the next placement."""
        if rows is None:
            free, model, count = self._free, self._model, self._counts
        elif isinstance(rows, slice):
            free, model, count = self._free[rows], self._model[rows], self._counts[rows]
        else:                            # (numpy's fancy indexing of rows costs twice what take does)
            free, model, count = self._free.take(rows, axis=0), self._model.take(rows, axis=0), self._counts.take(rows)
        if self._gpu_column(self._tensors()) < 0:      # no node counts whole devices: none is held
            return free, model, count
        whole = self.whole_counts(own)
        return without_whole_devices(np, free, whole if rows is None else whole[rows]), model, count

    def ranked_free(self, count: int) -> np.ndarray | None:
        """(N,) int64 each node's count-th most free device slot (milli; devices() as a pod without whole devices of
        its own reads them, padding 0): a pod that names no model finds `count` devices with its milli free where
        that one has it. None where some node counts whole devices (which devices they hold moves with the node
        table) or no node has `count` slots. Read-only; it moves with later placements."""
        width = self._sorted.shape[1]
        if count > width or self._gpu_column(self._tensors()) >= 0:
            return None
        return self._sorted[:, width - count]

    def share_failure(self, allowed, count: int) -> tuple[np.ndarray, np.ndarray]:
        """(code (N,) int8, payload (N,) int64) each node reports when fewer than `count` of its devices of a model
        in `allowed` (model ids, None: any) fit (kernels.gpu_share.share_failure, from allowed_devices: unhealthy
        devices included), kept until the devices are rebuilt. Read-only."""
        return self.derived(("share failure", allowed, count), lambda book: share_failure(
            np, allowed_devices(np, book._model, book._counts, allowed), count))

    def node_models(self) -> list[str]:
        """(N,) the model name of each node's devices (its first device; "" without GPUs or of unknown model)."""
        t = self.table
        return [t.models[m] if m >= 0 else "" for m in t.node_model().tolist()]

    def derived(self, key, make):
        """make(self), remembered under `key` until the devices are rebuilt (node events): what plugins compute
        from the nodes' models alone (FGDScore's model access per typical pod, share_failure)."""
        hit = self._derived.get(key)
        if hit is None:
            hit = self._derived[key] = make(self)
        return hit

    def node_values(self, key, compute, rows: np.ndarray | None = None, one=None, few: int = 0) -> tuple:
        """compute(rows) -> a tuple of (n, ...) arrays for the nodes `rows` (None: every node), for values that move
        only with a node's own load (FGDScore's fragmentation, a request's GPU scores): kept for every node and
        computed again only for the nodes the node table's changes list since. rows: the nodes the caller reads
        ((k,) int64; None: every node); the values of the other nodes may be left as they were, and are computed
        when a read asks for them (a kept shape reads the nodes its Filters pass, most of the changed ones fail
        them). one(node) -> the node's entries of the arrays (a number or a sequence each), the same values as
        compute's: when at most `few` nodes are to be computed (most reads of a kept shape's update), each is
        computed alone and written entry by entry (compute's arrays and their writes cost more than a few nodes'
        arithmetic). The arrays returned are updated in place by later reads: use them before the next one."""
        t = self._tensors()
        n = len(self.names)
        now = len(t.changes)
        hit = self._values.pop(key, None)
        if hit is None or hit[0] is not t:
            if rows is None:
                values, at = compute(None), np.full(n, now, np.int64)
            else:
                part = compute(rows)
                values = tuple(np.zeros((n, *v.shape[1:]), v.dtype) for v in part)
                for v, new in zip(values, part):
                    v[rows] = new
                at = np.full(n, -1, np.int64)
                at[rows] = now
            clean = now if rows is None else -1
        else:
            _, values, at, clean = hit
            if clean < now:               # (else every node is as it was when all were computed)
                todo = _stale(t, at, clean, rows)
                if len(todo) > few:
                    todo = np.asarray(todo, np.int64)
                    for v, new in zip(values, compute(todo)):
                        v[todo] = new
                    at[todo] = now
                else:
                    for node in todo.tolist() if isinstance(todo, np.ndarray) else todo:
                        for v, new in zip(values, one(node)):
                            v[node] = new
                        at[node] = now
                if rows is None:
                    clean = now
        self._values[key] = (t, values, at, clean)
        if len(self._values) > _VALUES_KEPT:
            del self._values[next(iter(self._values))]
        return values

    def carry(self, key, node: int, row: tuple, request: tuple, cpu_left: int) -> None:
        """A Score plugin knows the node_values(key) row `row` (per array of the key, the node's entry: a sequence or
        a number) that `node` has once the pod being placed there is reserved (FGDScore: its score's F after):
        request (count, milli, device indices or None for any idle ones) and the node's unrequested CPU then. Asked
        after the node is chosen and before its load is placed (Plugin.pick), taken at Reserve (allocate) when
        nothing but that placement changed since and it is that request: the row is written instead of computed
        again at the next read."""
        t = self._tensors()
        self._carried = (key, node, row, request, cpu_left, t, len(t.changes))

    def _take_carried(self, carried, node: int, g: GpuInputs, index: list) -> None:
        """After `allocate` took the devices `index` (a list) on `node` for g: write the carried row if it describes
        the node now. It does when the placement is the one it was made for (node, request, devices, the CPU left
        after), the book's devices changed by it alone (any other take, undo or release drops the carry) and the node
        table's load once, on that node (the row is the node's whole values: whatever else the key's values hold).
        Not where some node counts whole devices: which devices show as theirs moves with shares taken."""
        key, at, row, (count, milli, devices), cpu_left, t, mark = carried
        if at != node or (count, milli) != (g.count, g.milli) or t is not self._tensors() \
                or (devices is not None and index != devices) or self._gpu_column(t) >= 0:
            return
        changes = t.changes
        hit = self._values.get(key)
        if hit is None or hit[0] is not t or len(changes) - mark > _CARRY_CHANGES \
                or any(n != node for chunk in changes[mark:] for n in chunk.tolist()):
            return
        cpu = t.resources.get("cpu")
        if int(t.nodes.allocatable[node, cpu] - t.nodes.requested[node, cpu]) != cpu_left:
            return
        values, computed = hit[1], hit[2]
        for v, new in zip(values, row):
            v[node] = new
        computed[node] = len(changes)

    def affinity_counts(self, width: int = 1) -> np.ndarray:
        """(N, max(width, K)) int64 pods on each node per GPU affinity tag (GpuRequest.affinity: column 0 pods
        sharing a GPU, column k pods of k whole GPUs; pods without GPUs are not counted), over the bound pods of the
        node table's binding log. Bindings appended since the last read are added; a removal or an undo recounts
        from the tags kept per log position."""
        t = self._tensors()
        n = len(self.names)
        if t is None:
            return np.zeros((n, width), np.int64)
        pods, nodes, removed = t.log()
        state = self._tags
        if state is None or state[0] is not t or state[1] != n:
            state = (t, n, 0, 0, np.zeros(0, np.int64), np.zeros((n, 1), np.int64))
        _, _, cuts, removals, tag_of, counts = state
        recount = removals != t.removals() or len(t.truncations) > cuts
        seen = len(tag_of)
        if len(t.truncations) > cuts:              # an undo cut the log back: the tags after the cut are gone
            seen = min(seen, min(t.truncations[cuts:]))
            tag_of = tag_of[:seen]
        new = np.asarray([gpu_request_from_pod(p).affinity for p in pods[seen:]], np.int64)
        tag_of = np.concatenate([tag_of, new])
        cols = max(counts.shape[1], int(new.max()) + 1 if len(new) else 0)
        if recount or cols > counts.shape[1]:
            live = tag_of >= 0
            live[list(removed)] = False
            rows, counts = np.flatnonzero(live), np.zeros((n, cols), np.int64)
        else:
            rows = seen + np.flatnonzero(new >= 0)
        counts = counts + np.bincount(nodes[rows].astype(np.int64) * cols + tag_of[rows],
                                      minlength=n * cols).reshape(n, cols)
        self._tags = (t, n, len(t.truncations), t.removals(), tag_of, counts)
        return counts if cols >= width else np.pad(counts, ((0, 0), (0, width - cols)))

    # -- placements ---------------------------------------------------------------------------------------
    def allocate(self, g: GpuInputs, node: int, pod_key: str, index: np.ndarray | None = None) -> GpuUndo:
        """The pod placed on `node` (its own load already in the node table) takes `count` devices there: `index`
        when a Score plugin's policy picked them (Plugin.pick), else best fit among its devices that fit and that
        whole-GPU pods do not hold."""
        free, model, _ = self.devices(slice(node, node + 1))   # its own whole devices are in the node table now
        fits = device_fits(np, free, model, g.milli, g.allowed)
        ok = fits[0].tolist()                # one node's few devices: lists cost less than numpy's calls on them
        if index is None and g.milli == MILLI:
            # Whole devices: every fitting one is idle (free = MILLI, nothing above it), so best fit is index order.
            picked = [d for d, fit in enumerate(ok) if fit][:g.count]
        elif index is None:
            picked = np.flatnonzero(select_devices(np, free, fits, g.count, "best")[0]).tolist()
        else:
            picked = index.tolist()
        if len(picked) != g.count or not all(ok[d] for d in picked):
            raise AssertionError(f"GpuShare: pod {pod_key} placed on a node without {g.count} fitting devices")
        carried = self._carried
        undo = self._take(pod_key, self.names[node], np.array(picked, np.int64), g.milli)
        if carried is not None:
            self._take_carried(carried, node, g, picked)
        return undo

    def _take(self, pod_key: str, node_name: str, index: np.ndarray, milli: int, refresh: bool = True) -> GpuUndo:
        node = self.index[node_name]
        self._carried = None
        self._add(node, index, milli)
        self.held[pod_key] = (node_name, index, milli)
        if refresh:
            self._refresh([node])
        return GpuUndo(pod_key, milli, node_name, index)

    def _add(self, node: int, index: np.ndarray, milli: int) -> None:
        """`milli` more in use on the devices `index` of `node` (less where negative). Element by element: a pod
        holds a few devices, where numpy's fancy indexing costs several times more."""
        used, free, first = self.table.milli_used, self._free[node], int(self.table.offsets[node])
        for d in index.tolist():
            used[first + d] += milli
            free[d] -= milli
        row = self._sorted[node]
        row[:] = free
        row.sort()

    def undo(self, rec: GpuUndo) -> None:
        """Exactly undo `allocate` (placements undone newest first)."""
        self._carried = None
        node = self.index[rec.node]
        self._add(node, rec.index, -rec.milli)
        self.held.pop(rec.pod, None)
        self._refresh([node])

    def release(self, pod_key: str) -> None:
        """The pod no longer holds its devices (deleted, completed, rejected at Permit)."""
        held = self.held.pop(pod_key, None)
        if held is not None:
            self._carried = None
            node_name, index, milli = held
            node = self.index[node_name]
            self._add(node, index, -milli)
            self._refresh([node])

    def add_bound(self, pod, node: int, req: GpuRequest) -> str | None:
        """A pod already on `node` in the input takes its share there (best fit, input order; the devices of the
        input's whole-GPU pods are held first). Returns a warning when its node has no fitting devices (the pod
        stays, holding nothing)."""
        g = self.prepare(pod.key, req)
        code, _ = g.filter(np)
        if code[node] != 0:
            return (f"Pod {pod.key}: metadata.annotations: its GPU request does not fit the free GPUs of node "
                    f"{self.names[node]}; not accounted")
        self.allocate(g, node, pod.key)
        return None

    # -- node events and topology copies --------------------------------------------------------------
    def rebuild(self, nodes) -> None:
        """Nodes were added, updated or removed: the table is rebuilt from the Node objects (node-id order) and
        what pods hold is taken again on the devices that still exist (a device index beyond a node's new
        count is dropped from the pod's holding); `extra` is taken out of the node table and put in again (a
        table compiled anew, as remove_node makes, has none)."""
        t = self._tensors()
        col = self._gpu_column(t)
        if t is not None and self._extra_on is t and col >= 0:
            had = np.flatnonzero(self.extra)          # node ids before the event (add/update keep them)
            if len(had):
                t.nodes.requested[had, col] -= self.extra[had]
                t.changes.append(had)
        held, owner = self.held, self.owner
        self.__init__(_table(nodes), [n.metadata.name for n in nodes])
        self.hold_again([(pod_key, *holding) for pod_key, holding in held.items()])
        if owner is not None:
            self.attach(owner)
            self._refresh()

    def hold_again(self, held) -> None:
        """Pods take the devices they held again (a rebuilt table, a restored checkpoint): (pod key, node name,
        device indices, milli) each, in order; an index beyond its node's devices is dropped, a node not here
        skipped."""
        counts = self.table.per_node_count()
        for pod_key, node_name, index, milli in held:
            node = self.index.get(node_name)
            if node is None:
                continue
            kept = index[index < counts[node]]
            if len(kept):
                self._take(pod_key, node_name, kept, milli, refresh=False)
        if self.owner is not None:
            self._refresh()

    def restricted(self, node_ids: np.ndarray, names) -> GpuBook:
        """A copy for a restricted copy of the cluster (topology.py): the devices of `node_ids`, renumbered.
        Attach it to the copy's Cluster (its node table rows carry `extra` as the whole one's do)."""
        t = self.table
        node_ids = np.asarray(node_ids, np.int64)
        counts = t.per_node_count()[node_ids]
        # each node's device rows, in node order: its first row plus 0..count-1
        before = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        rows = np.repeat(t.offsets[node_ids] - before, counts) + np.arange(int(counts.sum()), dtype=np.int64)
        sub = GpuTable(node=np.repeat(np.arange(len(node_ids), dtype=np.int64), counts), index=t.index[rows],
                       model=t.model[rows], memory_mib=t.memory_mib[rows], milli_used=t.milli_used[rows].copy(),
                       healthy=t.healthy[rows].copy(),
                       offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64), models=t.models,
                       names=tuple(t.names[r] for r in rows.tolist()))
        book = GpuBook(sub, names)
        book.held = dict(self.held)
        book.extra = self.extra[np.asarray(node_ids, np.int64)].copy()
        return book

    def replay(self, rec: GpuUndo) -> GpuUndo:
        """Take here what `rec` took on a restricted copy (same node name and device indices)."""
        return self._take(rec.pod, rec.node, rec.index, rec.milli)

    def snapshot(self) -> tuple:
        """Everything allocation changes, for exactness tests: share milli per device, who holds what, milli per
        device with whole-GPU pods' devices, and `extra`."""
        return (self.table.milli_used.copy(),
                {k: (n, i.tolist(), m) for k, (n, i, m) in sorted(self.held.items())},
                self.device_used(), self.extra.copy())
