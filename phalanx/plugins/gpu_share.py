"""GpuShare (phalanx's own, not an upstream plugin): pods whose annotations ask for a share of a GPU
(alibabacloud.com/gpu-milli, gpu-count, gpu-card-model, as the Alibaba traces' simulator reads them) are placed
per device, best fit. docs/semantics.md, "GPU shares in the Scheduler".

The device table and who holds which share is the cluster's GpuBook (sched/gpushare.py, reached through the
cluster handle). PreFilter prepares the request, Filter reads the free milli per device of the nodes it checks
(kernels/gpu_share.py), Reserve takes the best-fitting devices on the chosen node (or those a Score plugin's
policy picked: DevicePick), Unreserve gives them back.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cluster_models.gpus import NVIDIA_GPU, device_request
from ..kernels.gpu_share import REASONS
from .framework import NODE_ADDED, NODE_LOCAL, NODE_UPDATED, PER_POD, POD_DELETED, SKIP, Plugin


@dataclass(frozen=True)
class DevicePick:
    """The devices a Score plugin's policy gives a pod on the chosen node (Plugin.pick), for GpuShare's Reserve."""
    index: np.ndarray          # (count,) int64 device indices on the node


class GpuShare(Plugin):
    name = "GpuShare"
    signs_from_template = True         # the annotations
    events = frozenset({POD_DELETED, NODE_ADDED, NODE_UPDATED})

    def signature(self, pod):
        # The request lives in annotations (not in the spec), so it joins the shape's signature.
        req = device_request(pod)
        return None if req is None else (req.count, req.milli, list(req.models))

    def request_pattern(self, pod, cluster):
        # A pod without a share request (annotations: alike in a family) is skipped whatever it requests.
        return () if device_request(pod.pod) is None else None

    def pre_filter(self, pod, cluster):
        req = device_request(pod.pod)
        if req is None:
            return SKIP
        own = int(pod.shape.requests.get(NVIDIA_GPU, 0))   # whole devices it asks for besides its share
        return cluster.gpus.prepare(pod.pod.key, req, own)

    def filter(self, xp, state, tensors):
        return state.filter(xp, tensors.node_rows)

    def reasons(self, payload, tensors):
        return [REASONS[payload]]

    def filter_behaviour(self, state):
        return PER_POD

    def kept_behaviour(self, state):
        # The state reads the GpuBook when Filter runs, and a node's devices change only with its load (a share is
        # taken, undone or released with the pod's load; node events drop kept results).
        return NODE_LOCAL

    def host_only(self) -> bool:
        return True

    def reserves_for(self, pod, cluster) -> bool:
        return device_request(pod) is not None

    def reserve(self, state, node, pod, cluster, assignment, picks=()):
        # A Score plugin whose policy also chooses the devices (FGDScore, RandomScore) picked them for this node.
        index = next((pick.index for pick in picks if isinstance(pick, DevicePick)), None)
        return cluster.gpus.allocate(state, node, pod.key, index)

    def unreserve(self, record, cluster):
        cluster.gpus.undo(record)

    def release(self, pod_keys, cluster):
        gpus = cluster.gpus
        for key in pod_keys:
            gpus.release(key)

    def replay(self, record, cluster):
        return cluster.gpus.replay(record)
