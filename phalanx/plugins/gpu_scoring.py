"""What the GPU-cluster score policies share: the Score plugins of the simulator of Weng et al., "Beware of
Fragmentation" (ATC'23; hkust-adsl/kubernetes-scheduler-simulator, pkg/simulator/plugin/*_score.go), each in its
own module under their simulator names: FGDScore, BestFitScore, DotProductScore, GpuPackingScore,
GpuClusteringScore, RandomScore. docs/semantics.md, "GPU score policies as Score plugins".

A policy scores a node from the pod's GPU request and the node's own state, read when Score runs: the free
milli-GPU of its devices (the cluster's GpuBook, sched/gpushare.py: shares taken, devices whole-GPU pods hold at 0),
their models, and its unrequested CPU (the node table). The arithmetic is in kernels/gpu_scores.py and
kernels/fgd.py. The pod's request is its annotation form (alibabacloud.com/gpu-count, gpu-milli, gpu-card-model,
served by GpuShare) or whole `nvidia.com/gpu` devices of any model.

A node's raw score moves only when its load does, so the book keeps each request's raw scores over every node and
scores again only the nodes whose load changed since (GpuScore.node_scores). Scores that need nothing else (all but
BestFit, min-max normalized over the feasible nodes, and RandomScore) are NODE_LOCAL: kept per-shape results
(sched/incremental.py) read them for the nodes placed on since, and copies of one pod are scored from the state the
earlier copies leave (the batch path): c copies of a whole-GPU pod hold c x count more of the node's lowest-index
idle devices (the best-fit choice for whole GPUs). Shares are never batched (GpuShare's Filter is PER_POD).
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np

from ..cluster_models.gpus import MILLI, NVIDIA_GPU, device_request, gpu_request_from_pod
from ..kernels.gpu_fit import allowed_ids
from ..kernels.gpu_share import without_whole_devices
from .framework import NODE_LOCAL, Plugin

DEFAULT_CPU_MILLI = 100      # schedutil.GetNonzeroRequests: a pod without a CPU request counts 100m


@dataclass(frozen=True)
class GpuScoreState:
    """The pod as the GPU score policies read it, and the book they read the nodes' devices from."""
    count: int                 # GPUs
    milli: int                 # milli-GPU per GPU (1000: whole devices)
    models: tuple              # allowed model names (empty: any)
    allowed: tuple | None      # their ids in the book's model vocabulary (gpu_fit.allowed_ids), None: any
    cpu: int                   # non-zero milli-CPU request (the simulator's pod resource)
    cpu_request: int           # milli-CPU request as the node table counts it
    own_whole: int             # nvidia.com/gpu a share pod also asks (held besides its share, as GpuShare sees)
    affinity: int              # GpuRequest.affinity: -1 no GPU, 0 a share, k whole GPUs
    requests_nothing: bool     # the pod requests no resource at all
    book: object               # the cluster's GpuBook, read when Score runs

    @property
    def share(self) -> bool:
        return self.count == 1 and self.milli < MILLI

    def __hash__(self) -> int:
        return self._hash

    @functools.cached_property
    def _hash(self) -> int:
        # The key of the pod's scores in the book (GpuScore.node_scores), hashed on each read: once.
        return hash(tuple(getattr(self, f.name) for f in dataclasses.fields(self)))


def gpu_score_state(pod, cluster) -> GpuScoreState:
    """`pod`: the PodInfo of the cycle."""
    req = gpu_request_from_pod(pod.pod)
    requests = pod.shape.requests
    cpu_request = int(requests.get("cpu", 0))
    own = int(requests.get(NVIDIA_GPU, 0)) if device_request(pod.pod) is not None else 0
    return GpuScoreState(req.count, req.milli, req.models, allowed_ids(cluster.gpus.table.models, req.models),
                         cpu_request or DEFAULT_CPU_MILLI, cpu_request, own, req.affinity, not requests,
                         cluster.gpus)


@dataclass
class NodeView:
    """The nodes a score reads (n of them: every node, or some rows), after `copies - 1` earlier copies of the pod."""
    rows: np.ndarray | None    # (n,) int64 node ids, None: every node in id order
    free: np.ndarray           # (n, D) int64 free milli-GPU per device slot
    model: np.ndarray          # (n, D) int64 model id per slot, -1 padding
    devices: np.ndarray        # (n,) int64 devices per node
    cpu_left: np.ndarray       # (n,) int64 allocatable milli-CPU less the requests of the pods on the node
    copies: int                # earlier copies of the pod already on each of these nodes (0: the next pod)
    tensors: object            # the node table read (ClusterTensors)


def node_view(state: GpuScoreState, tensors, rows) -> NodeView:
    """The nodes `rows` (None: every node) as they are now."""
    free, model, devices = state.book.devices(rows, state.own_whole)
    return NodeView(rows, free, model, devices, cpu_left(tensors, rows), 0, tensors)


def cpu_left(tensors, rows):
    """Allocatable milli-CPU less the requests of the pods on the nodes `rows` (None: every node; an int: a scalar)."""
    nodes = tensors.nodes
    cpu = tensors.resources.get("cpu")
    # The column first: indexing its rows costs less than indexing (rows, column) of the table.
    alloc, used = nodes.allocatable[:, cpu], nodes.requested[:, cpu]
    return alloc - used if rows is None else alloc[rows] - used[rows]


def after_copies(state: GpuScoreState, view: NodeView, copies: int) -> NodeView:
    """The view once `copies` more copies of the pod are on each node: their CPU requested, and for whole GPUs
    the lowest-index idle devices they take (best fit); shares are never placed in copies."""
    if copies == 0:
        return view
    if state.share:
        raise AssertionError("GPU-share pods are placed one by one (GpuShare's Filter is PER_POD)")
    free = view.free
    if state.count:
        free = without_whole_devices(np, free, np.full(free.shape[0], copies * state.count, np.int64))
    return NodeView(view.rows, free, view.model, view.devices, view.cpu_left - copies * state.cpu_request,
                    view.copies + copies, view.tensors)


class GpuScore(Plugin):
    """Base of the GPU score policies: Score only (no PreScore upstream), read from the GpuBook when it runs."""
    signs_from_template = True         # the annotations

    def signature(self, pod):
        # The annotation form of the request is not in the spec (as GpuShare signs it).
        req = device_request(pod)
        return None if req is None else (req.count, req.milli, list(req.models))

    def score_state(self, pod, cluster, pre):
        return gpu_score_state(pod, cluster)

    def host_only(self) -> bool:
        return True

    def kept_behaviour(self, state) -> str:
        return NODE_LOCAL              # the state reads the book when Score runs: no copy of node state

    def score_behaviour(self, state) -> str:
        return NODE_LOCAL

    def score(self, xp, state, tensors, feasible, cache=None):
        feasible = np.asarray(feasible)
        raw = self.node_scores(state, tensors, np.flatnonzero(feasible))[0]
        return xp.asarray(np.where(feasible, raw, 0))      # the book's array moves on later reads: a new one

    def copy_scores(self, xp, state, tensors, rows, copies):
        rows = np.asarray(rows, np.int64)
        if isinstance(copies, int):          # the next pod alone (copy_totals' one column)
            return xp.asarray(self.node_scores(state, tensors, rows)[0][rows][:, None])
        wanted = np.asarray(copies)[0].tolist()
        view = node_view(state, tensors, rows) if max(wanted) > 1 else None
        columns = [self.node_scores(state, tensors, rows)[0][rows] if j == 1
                   else self.evaluate(state, after_copies(state, view, j - 1))[0] for j in wanted]
        return xp.asarray(np.stack(columns, axis=1))

    def node_scores(self, state: GpuScoreState, tensors, rows: np.ndarray | None = None) -> tuple:
        """evaluate's arrays over every node for this pod's request, as the nodes `rows` are now (None: every node;
        the others' entries may be older). A node's score moves only with its own load, so the book keeps them per
        request and evaluates again only the nodes read whose load changed since they were last evaluated
        (GpuBook.node_values; the replay's trick: a request met again long after costs what the nodes placed on
        since cost, and only the nodes its Filters pass are scored)."""
        return state.book.node_values((self.name, state),
                                      lambda rows: self.evaluate(state, node_view(state, tensors, rows)), rows,
                                      *self.one_by_one(state, tensors))

    def one_by_one(self, state: GpuScoreState, tensors) -> tuple:
        """(one(node) -> evaluate's entries of that node as it stands, and the most nodes a read computes so;
        GpuBook.node_values) for a policy that scores a few nodes at less cost one by one; (None, 0) for none."""
        return None, 0

    def evaluate(self, state: GpuScoreState, view: NodeView) -> tuple:
        """(raw scores (n,) int64, ...) of the pod on the view's nodes (numpy, host side); a policy may add per-node
        arrays its pick reads."""
        raise NotImplementedError
