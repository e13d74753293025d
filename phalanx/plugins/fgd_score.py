"""FGDScore (Fragmentation Gradient Descent, the FGD paper's policy): favours the node whose GPU fragmentation,
measured against the workload's typical pods, grows least with the pod: int(100 sigmoid((F - F') / 1000)); a
share of a GPU tries each device with room and takes the best one (the first on ties), and that is the device
GpuShare's Reserve gives it (pick). Simulator: pkg/simulator/plugin/fgd_score.go, pkg/utils/frag.go. Arithmetic:
kernels/fgd.py.

Typical pods are FGDScore's args: given inline in pluginConfig (`typicalPods`: cpuMilli, gpuMilli per GPU,
gpuCount, gpuModels, frequency), or, when left out, computed from the pods of the scheduler's input (pending and
bound when the Scheduler is made) as the simulator computes them from its pod list: the most frequent shapes until
they cover `popularityThreshold`% of the pods, frequencies renormalised over them (typical_pods).
"""
from __future__ import annotations

import math

import numpy as np
from pydantic import Field, model_validator

from ..cluster_models import pod_requests
from ..cluster_models.errors import InputError
from ..cluster_models.gpus import MILLI, check_gpu_request, gpu_request_from_pod
from ..kernels import fgd
from ..kernels.gpu_fit import device_fits
from ..kernels.gpu_scores import MAX_NODE_SCORE
from .framework import PluginArgs
from .gpu_scoring import DEFAULT_CPU_MILLI, GpuScore, NodeView, cpu_left, node_view
from .gpu_share import DevicePick

# Up to this many nodes a read of the kept values computes are computed node by node in plain Python (kernels/fgd.py
# fgd_score_one, node_counts_one, frag_one; GpuBook.node_values' one): on a few nodes numpy's per-call cost exceeds
# the arithmetic.
_ROWS_IN_PYTHON = 4
# Views of at least this many nodes are scored once per distinct node (kernels/fgd.py distinct_nodes): a full cycle
# or a new request over most nodes of a cluster, whose nodes of one type mostly look alike.
_DISTINCT_FROM = 256
POPULARITY_THRESHOLD = 95        # the simulator's default podPopularityThreshold (podIncreaseStep 1)


class TypicalPod(PluginArgs):
    cpu_milli: int = Field(ge=0)                 # non-zero CPU request, millicores
    gpu_milli: int = 0                           # milli-GPU per GPU
    gpu_count: int = 0
    gpu_models: str = ""                         # allowed models, "|"-separated ("" any)
    frequency: float = Field(gt=0)               # share of the workload

    @model_validator(mode="after")
    def _request(self):
        try:
            check_gpu_request(self.gpu_count, self.gpu_milli, "typical pod", ("gpuCount", "gpuMilli"))
        except InputError as exc:
            raise ValueError(str(exc).removeprefix("typical pod: ")) from None
        if not math.isfinite(self.frequency):
            raise ValueError(f"frequency: must be finite (got {self.frequency})")
        return self


class FGDScoreArgs(PluginArgs):
    typical_pods: list[TypicalPod] = Field(default_factory=list)     # empty: from the input's pods
    popularity_threshold: int = Field(POPULARITY_THRESHOLD, ge=1, le=100)


def typical_pods(keys, threshold: int = POPULARITY_THRESHOLD, step: int = 1) -> fgd.TypicalPods:
    """utils.GetTypicalPods (CPU pods included, no GPU weight) over one key per pod of the workload, (non-zero
    milli-CPU, milli-GPU per GPU, GPUs, models string): shapes by decreasing count (ties: larger CPU, milli, GPUs,
    model string first), taken `step` at a time until they cover `threshold`% of the pods, with frequencies
    renormalised over the shapes taken."""
    counts: dict[tuple, float] = {}
    for key in keys:
        counts[key] = counts.get(key, 0.0) + 1.0
    total = float(sum(counts.values()))
    ordered = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    expected = float(threshold) * total / 100.0
    i, taken, cum = 0, 0, 0.0
    freq = [0.0] * len(ordered)
    while cum < expected:
        taken += step
        while i < taken and i < len(ordered):
            cum += ordered[i][1]
            freq[i] = ordered[i][1] / total
            i += 1
    if i < len(ordered):
        ordered = ordered[:i]
        freq = [f / (cum / total) for f in freq[:i]]
    return fgd.TypicalPods(cpu=tuple(k[0] for k, _ in ordered), milli=tuple(k[1] for k, _ in ordered),
                           count=tuple(k[2] for k, _ in ordered), spec=tuple(k[3] for k, _ in ordered),
                           freq=tuple(freq))


def pod_key(pod) -> tuple:
    """A Pod's typical-pod key: (non-zero milli-CPU, milli-GPU per GPU, GPUs, models string)."""
    req = gpu_request_from_pod(pod)
    return (int(pod_requests(pod).get("cpu", 0)) or DEFAULT_CPU_MILLI, req.milli, req.count, "|".join(req.models))


def as_args(typ: fgd.TypicalPods) -> list[TypicalPod]:
    return [TypicalPod(cpu_milli=c, gpu_milli=m, gpu_count=k, gpu_models=s, frequency=f)
            for c, m, k, s, f in zip(typ.cpu, typ.milli, typ.count, typ.spec, typ.freq)]


def _some_nodes(view: NodeView, at: np.ndarray) -> NodeView:
    """The view's nodes `at` (indices into the view)."""
    rows = at if view.rows is None else view.rows[at]
    return NodeView(rows, view.free[at], view.model[at], view.devices[at], view.cpu_left[at], view.copies,
                    view.tensors)


class FGDScore(GpuScore):
    name = "FGDScore"
    Args = FGDScoreArgs

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        pods = self.args.typical_pods
        self.typical = fgd.TypicalPods(cpu=tuple(p.cpu_milli for p in pods), milli=tuple(p.gpu_milli for p in pods),
                                       count=tuple(p.gpu_count for p in pods),
                                       spec=tuple(p.gpu_models for p in pods), freq=tuple(p.frequency for p in pods))
        self._state_key = ("FGDScore", self.typical)      # the book's node_values key of the nodes' own state

    @classmethod
    def args_from_input(cls, args, cluster):
        if args.typical_pods:
            return args
        pods = [*cluster.pending, *(pod for pod, _ in cluster.tensors.live_bound())]
        if not pods:
            return args
        typ = typical_pods([pod_key(p) for p in pods], args.popularity_threshold)
        return args.model_copy(update={"typical_pods": as_args(typ)})

    def _access(self, book, rows):
        """(n, T) bool: typical pod t may use the model of node rows[i] (rows None: every node)."""
        access = book.derived(("FGDScore access", self.typical), lambda b: fgd.access_matrix(np, b.node_models(),
                                                                                              self.typical))
        return access if rows is None else access.take(rows, axis=0)

    def _node_state(self, state, view):
        """(cnt (n, T), frag (n, T), total (n,), F (n,)) of the view's nodes (kernels/fgd.py node_counts, F). A node's
        own are kept by the book and computed again only where its load changed; a view after copies of the pod, or
        with the devices a share pod's own nvidia.com/gpu would hold, is computed as it stands."""
        typ = self.typical
        if view.copies or state.own_whole:
            return self._fragmentation(view, typ, self._access(state.book, view.rows))
        values = self._own_state(state, view.tensors)
        return values if view.rows is None else tuple(v[view.rows] for v in values)

    def _own_state(self, state, tensors):
        """(cnt (N, T), frag (N, T), total (N,), F (N,)) of every node as it stands, kept by the book."""
        return state.book.node_values(self._state_key, lambda rows: self._own_rows(state, tensors, rows), None,
                                      lambda node: self._own_node(state, tensors, node), _ROWS_IN_PYTHON)

    def _own_rows(self, state, tensors, rows):
        """_own_state's values of the nodes `rows` (None: every node)."""
        return self._fragmentation(node_view(state, tensors, rows), self.typical, self._access(state.book, rows))

    def _own_node(self, state, tensors, node: int) -> tuple:
        """_own_state's entries of one node (most often one a CPU-only pod was placed on: no carry, GpuShare's
        Reserve does not run for it), in plain Python (fgd.node_counts_one, frag_one)."""
        book = state.book
        free = book.devices(slice(node, node + 1), state.own_whole)[0].tolist()[0]
        cnt, frag, total = fgd.node_counts_one(free, self.typical)
        return cnt, frag, total, fgd.frag_one(cnt, frag, total, int(cpu_left(tensors, node)), self._terms(book)[node])

    def _terms(self, book) -> list:
        """Per node its fgd.NodeTerms."""
        typ = self.typical
        return book.derived(("FGDScore node terms", typ), lambda b: [
            fgd.node_terms(typ, tuple(row)) for row in self._access(b, None).tolist()])

    @staticmethod
    def _fragmentation(view, typ, access):
        counts = fgd.node_counts(np, view.free, typ)
        return (*counts, fgd.frag_from_counts(np, *counts, view.cpu_left, access, typ))

    def evaluate(self, state, view):
        """(score (n,) int64, device (n,) int64: a share's best device, -1 otherwise, F after (n,) float64: the
        node's fragmentation with the pod placed as scored) on the view's nodes."""
        if state.requests_nothing:       # the simulator's FGDScore: a pod that requests nothing scores 100
            n = view.free.shape[0]
            # No F after (NaN): such a pod carries nothing (_carries).
            return np.full(n, MAX_NODE_SCORE, dtype=np.int64), np.full(n, -1, dtype=np.int64), np.full(n, np.nan)
        if view.free.shape[0] >= _DISTINCT_FROM:
            groups = fgd.distinct_nodes(view.free, view.model, view.cpu_left)
            if groups is not None:
                first, inverse = groups
                return tuple(a[inverse] for a in self.evaluate(state, _some_nodes(view, first)))
        typ = self.typical
        access = self._access(state.book, view.rows)
        cnt, frag, total, f_before = self._node_state(state, view)
        cand = device_fits(np, view.free, view.model, state.milli, state.allowed)
        if state.share:
            return fgd.share_score(np, view.free, cand, (cnt, frag, total), view.cpu_left, access, f_before, typ,
                                   state.cpu, state.milli)
        return fgd.fgd_score(np, view.free, view.cpu_left, access, f_before, cand, typ, state.cpu, state.count,
                             state.milli, (cnt, frag, total))

    def one_by_one(self, state, tensors):
        # A pod that requests nothing, or whose own nvidia.com/gpu the node's own values do not show, and several
        # shares of GPUs are left to evaluate.
        if state.requests_nothing or state.own_whole or not (state.share or state.count == 0 or state.milli == MILLI):
            return None, 0
        return (lambda node: self._score_node(state, tensors, node)), _ROWS_IN_PYTHON

    def _score_node(self, state, tensors, node: int) -> tuple:
        """evaluate's (score, device, F after) of one node as it stands, in plain Python: fgd.fgd_score_one."""
        book = state.book
        free, model, _ = book.devices(slice(node, node + 1))
        free, model = free.tolist()[0], model.tolist()[0]
        milli, allowed = state.milli, state.allowed
        # gpu_fit.device_fits of its devices
        cand = [v >= milli and (allowed is None or m in allowed) for v, m in zip(free, model)]
        cnt, frag, total, f_before = self._own_state(state, tensors)
        return fgd.fgd_score_one(free, cand, (cnt[node].tolist(), frag[node].tolist(), int(total[node])),
                                 int(cpu_left(tensors, node)), self._terms(book)[node], float(f_before[node]),
                                 state.cpu, state.count, milli)

    def pick(self, state, node, cluster):
        # The device the share's score on the node was computed with (the node unchanged since: kept values).
        _, device, f_after = self.node_scores(state, cluster.tensors, np.array([node], np.int64))
        if self._carries(state):
            self._carry(state, node, int(device[node]), f_after[node], cluster.tensors)
        return DevicePick(device[node:node + 1].copy()) if state.share else None

    @staticmethod
    def _carries(state) -> bool:
        """Whether the score's F after is the node's own once the pod is reserved there: the CPU the score takes
        off is what the node table counts, the devices are a share of the one scored or whole idle ones (any of
        them leave the same counts), and the node's own values are the ones kept (no nvidia.com/gpu of its own)."""
        return not state.requests_nothing and not state.own_whole and state.cpu == state.cpu_request \
            and (state.share or (state.milli == MILLI and state.count > 0))

    def _carry(self, state, node: int, device: int, f_after, tensors) -> None:
        """Give the book the node's own values once the pod is reserved there (GpuBook.carry): the counts after the
        devices it takes and the score's F after, so that they are not computed again. One node: in plain Python
        (kernels/fgd.py *_one)."""
        cnt, frag, total, _ = self._own_state(state, tensors)
        counts = (cnt[node].tolist(), frag[node].tolist(), int(total[node]))
        if state.share:
            value = int(state.book.devices(slice(node, node + 1))[0][0, device])
            after = fgd.share_counts_after_one(*counts, value, self.typical, state.milli)
            devices = [device]
        else:
            after = fgd.whole_counts_after_one(*counts, state.count, self.typical, state.count)
            devices = None
        state.book.carry(self._state_key, node, (*after, float(f_after)), (state.count, state.milli, devices),
                         int(cpu_left(tensors, node)) - state.cpu)
