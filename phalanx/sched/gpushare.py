"""GPU devices in the main Scheduler (issue 5): the GPU-share filter, device allocation, undo and release.

Which pods: a pod whose GPU request is written in the trace's annotation form (`alibabacloud.com/gpu-count`
and/or `alibabacloud.com/gpu-milli`, optionally `alibabacloud.com/gpu-card-model` = `|`-separated allowed models;
read by cluster_models.gpus.gpu_request_from_pod) with a count > 0: a fraction of one GPU, whole GPUs of a model,
or whole GPUs in that form (no node-level resource counts them). Pods asking `nvidia.com/gpu` in their resources
keep the node-level NodeResourcesFit check (upstream semantics) and are not tracked here (docs/semantics.md).

State (`GpuBook`): the cluster's GpuTable (one row per device, rows grouped by node in node-id order) and, per pod
holding devices (bound, waiting at Permit or tentatively placed), its (node name, device indices, milli). A pod
is a shape of its own request (shapes.signature adds it), is never batched and never rides a gang train; the
per-pod path prepares `GpuInputs` (the dense free / model views), `run_filters` runs GpuShare last
(kernels/gpu_share.py over kernels/gpu_fit.py), and after the pod is placed `allocate` picks its devices on the
chosen node, best fit (least free milli that still fits, ties lowest device index: gpu_fit.select_devices), and
returns a `GpuUndo` kept on the Placement. `undo` reverses it exactly; `release` (deletion, Permit rejection)
frees what the pod holds. Node events rebuild the table from the Node objects and re-apply what pods hold.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..cluster_models.gpus import (ALI_GPU_COUNT, ALI_GPU_MILLI, MILLI, GpuRequest, GpuTable, gpu_request_from_pod,
                                   node_gpus)
from ..kernels.gpu_fit import allowed_ids, device_fits, select_devices
from ..kernels.gpu_share import gpu_share_filter

PLUGIN = "GpuShare"


def device_request(pod) -> GpuRequest | None:
    """The pod's device-level GPU request, or None (no annotation form, or count 0). Raises InputError for
    malformed annotations (gpus.check_gpu_request)."""
    ann = pod.metadata.annotations
    if not ann or (ALI_GPU_COUNT not in ann and ALI_GPU_MILLI not in ann):
        return None
    req = gpu_request_from_pod(pod)
    return req if req.count > 0 else None


@dataclass
class GpuInputs:
    """The GpuShare PreFilter result of one pod: the kernel's inputs."""
    pod: str
    count: int
    milli: int
    allowed: tuple | None             # model ids (gpu_fit.allowed_ids), None: any model
    free: np.ndarray                  # (N, D) int64 free milli per device slot (padding, unhealthy: 0)
    model: np.ndarray                 # (N, D) int64 model id per slot (-1: padding or unknown model)
    n_devices: np.ndarray             # (N,) int64

    def filter(self, xp):
        return gpu_share_filter(xp, xp.asarray(self.free), xp.asarray(self.model), xp.asarray(self.n_devices),
                                self.count, self.milli, self.allowed)


@dataclass
class GpuUndo:
    """What one placement took: `milli` on each of `rows` (this book's rows), i.e. devices `index` of `node`."""
    pod: str
    rows: np.ndarray                  # (k,) int64
    milli: int
    node: str
    index: np.ndarray                 # (k,) int64 device index on the node


def _table(nodes) -> GpuTable:
    return GpuTable.build([node_gpus(n) for n in nodes])


class GpuBook:
    """The cluster's GPU devices and who holds which share of them."""

    def __init__(self, table: GpuTable, names):
        self.table = table
        self.names = list(names)                                  # node names, node-id order (= table nodes)
        self.index = {n: i for i, n in enumerate(self.names)}
        self.held: dict[str, tuple[str, np.ndarray, int]] = {}    # pod -> (node, device indices, milli)

    @classmethod
    def from_nodes(cls, nodes) -> GpuBook:
        return cls(_table(nodes), [n.metadata.name for n in nodes])

    @classmethod
    def empty(cls, names) -> GpuBook:
        return cls(GpuTable.build([[] for _ in names]), names)

    # -- PreFilter / Filter inputs --------------------------------------------------------------------
    def prepare(self, pod_key: str, req: GpuRequest) -> GpuInputs:
        t = self.table
        return GpuInputs(pod_key, req.count, req.milli, allowed_ids(t.models, req.models), t.dense_free(),
                         t.dense_model(), t.per_node_count())

    def with_gpus(self, p, shape):
        """A Prepared (sched.cycle) with the GpuShare filter added after every other filter."""
        return dataclasses.replace(p, gpu=self.prepare(shape.pod.key, shape.gpu), filters=p.filters + (PLUGIN,))

    # -- placements ---------------------------------------------------------------------------------------
    def allocate(self, g: GpuInputs, node: int, pod_key: str) -> GpuUndo:
        """The pod placed on `node` takes `count` devices there: best fit among its devices that fit."""
        t = self.table
        lo, hi = int(t.offsets[node]), int(t.offsets[node + 1])
        free = np.where(t.healthy[lo:hi], MILLI - t.milli_used[lo:hi], 0)[None, :]
        fits = device_fits(np, free, t.model[lo:hi][None, :], g.milli, g.allowed)
        index = np.flatnonzero(select_devices(np, free, fits, g.count, "best")[0]).astype(np.int64)
        if len(index) != g.count:
            raise AssertionError(f"GpuShare: pod {pod_key} placed on a node without {g.count} fitting devices")
        return self._take(pod_key, self.names[node], index, g.milli)

    def _take(self, pod_key: str, node_name: str, index: np.ndarray, milli: int) -> GpuUndo:
        rows = self.table.offsets[self.index[node_name]] + index
        self.table.milli_used[rows] += milli
        self.held[pod_key] = (node_name, index, milli)
        return GpuUndo(pod_key, rows, milli, node_name, index)

    def undo(self, rec: GpuUndo) -> None:
        """Exactly undo `allocate` (placements undone newest first)."""
        self.table.milli_used[rec.rows] -= rec.milli
        self.held.pop(rec.pod, None)

    def release(self, pod_key: str) -> None:
        """The pod no longer holds its devices (deleted, completed, rejected at Permit)."""
        held = self.held.pop(pod_key, None)
        if held is not None:
            node_name, index, milli = held
            self.table.milli_used[self.table.offsets[self.index[node_name]] + index] -= milli

    def add_bound(self, pod, node: int, req: GpuRequest) -> str | None:
        """A pod already on `node` in the input takes its share there (best fit, input order). Returns a warning
        when its node has no fitting devices (the pod stays, holding nothing)."""
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
        count is dropped from the pod's holding)."""
        held = self.held
        self.__init__(_table(nodes), [n.metadata.name for n in nodes])
        counts = self.table.per_node_count()
        for pod_key, (node_name, index, milli) in held.items():
            node = self.index.get(node_name)
            if node is None:
                continue
            kept = index[index < counts[node]]
            if len(kept):
                self._take(pod_key, node_name, kept, milli)

    def restricted(self, node_ids: np.ndarray, names) -> GpuBook:
        """A copy for a restricted copy of the cluster (topology.py): the devices of `node_ids`, renumbered."""
        t = self.table
        counts = t.per_node_count()[node_ids]
        rows = (np.concatenate([np.arange(t.offsets[n], t.offsets[n + 1]) for n in node_ids])
                if len(node_ids) else np.zeros(0, np.int64)).astype(np.int64)
        sub = GpuTable(node=np.repeat(np.arange(len(node_ids), dtype=np.int64), counts), index=t.index[rows],
                       model=t.model[rows], memory_mib=t.memory_mib[rows], milli_used=t.milli_used[rows].copy(),
                       healthy=t.healthy[rows].copy(),
                       offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64), models=t.models,
                       names=tuple(t.names[r] for r in rows.tolist()))
        book = GpuBook(sub, names)
        book.held = dict(self.held)
        return book

    def replay(self, rec: GpuUndo) -> GpuUndo:
        """Take here what `rec` took on a restricted copy (same node name and device indices)."""
        return self._take(rec.pod, rec.node, rec.index, rec.milli)

    def snapshot(self) -> tuple:
        """Everything allocation changes, for exactness tests."""
        return (self.table.milli_used.copy(),
                {k: (n, i.tolist(), m) for k, (n, i, m) in sorted(self.held.items())})
