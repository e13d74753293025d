"""GpuTable: one row per GPU device (structure of arrays), and the GPU request of a pod.

A node's devices come from either
  - node labels and allocatable: `nvidia.com/gpu` (count) with the model in `nvidia.com/gpu.product`, or the
    Alibaba trace's form `alibabacloud.com/gpu-count` / `alibabacloud.com/gpu-milli` with the model in the label
    `alibabacloud.com/gpu-card-model`; or
  - DRA ResourceSlice-like device lists (`spec.nodeName`, `spec.devices[].name`, attribute `productName` or
    `model`, capacity `memory`).

Usage is tracked per device in milli-GPU: 0 (idle) .. 1000 (fully used). A pod asks for either `count` whole
GPUs (milli 1000 each) or a fraction of one GPU (count 1, milli 1..999), optionally restricted to a set of
models. Quantities are exact int64 throughout.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import InputError

MILLI = 1000                      # milli-GPU of one whole device
NVIDIA_GPU = "nvidia.com/gpu"
NVIDIA_PRODUCT_LABEL = "nvidia.com/gpu.product"
ALI_GPU_COUNT = "alibabacloud.com/gpu-count"
ALI_GPU_MILLI = "alibabacloud.com/gpu-milli"
ALI_GPU_MODEL = "alibabacloud.com/gpu-card-model"
# GPU devices one node may have: each is a row of GpuTable and a column of GpuBook's (N, D) views, so a count of
# millions (a typo, "8e9") would exhaust memory instead of failing; real nodes have a few dozen at most.
MAX_NODE_GPUS = 1024

# Device memory (MiB) of the models in the Alibaba trace, as listed by the trace's simulator
# (pkg/type/open-gpu-share/utils/const.go); informational only: no kernel reads it.
MODEL_MEMORY_MIB = {
    "P4": 7611, "2080": 11019, "1080": 11178, "M40": 11448, "T4": 15109, "V100M16": 16160, "P100": 16280,
    "A10": 22731, "3090": 24268, "V100M32": 32510, "A100": 81251, "G1": 10000, "G2": 20000, "G3": 30000,
}


@dataclass
class GpuTable:
    """Every GPU device of the cluster, grouped by node (devices of node n are rows offsets[n]:offsets[n+1])."""

    node: np.ndarray        # (G,) int64 node index of the device
    index: np.ndarray       # (G,) int64 device index on its node (0..count-1)
    model: np.ndarray       # (G,) int64 id into `models`; -1 unknown model
    memory_mib: np.ndarray  # (G,) int64 device memory in MiB (0 unknown)
    milli_used: np.ndarray  # (G,) int64 milli-GPU in use, 0..1000
    healthy: np.ndarray     # (G,) bool  an unhealthy device is never allocated
    offsets: np.ndarray     # (N + 1,) int64 CSR offsets of each node's devices
    models: tuple           # model vocabulary: id -> name
    names: tuple            # (G,) device names (host side, for reports)

    @property
    def size(self) -> int:
        return int(self.node.shape[0])

    @property
    def nodes(self) -> int:
        return int(self.offsets.shape[0]) - 1

    def per_node_count(self) -> np.ndarray:
        """(N,) int64 devices per node."""
        return np.diff(self.offsets)

    def max_devices(self) -> int:
        return int(self.per_node_count().max()) if self.nodes else 0

    def dense_free(self) -> np.ndarray:
        """(N, D) int64 free milli per device slot, D = most devices on a node; padding and unhealthy devices 0."""
        n, d = self.nodes, max(self.max_devices(), 1)
        out = np.zeros((n, d), dtype=np.int64)
        free = np.where(self.healthy, MILLI - self.milli_used, 0)
        out[self.node, self.index] = free
        return out

    def dense_model(self) -> np.ndarray:
        """(N, D) int64 model id per device slot, -1 for padding."""
        n, d = self.nodes, max(self.max_devices(), 1)
        out = np.full((n, d), -1, dtype=np.int64)
        out[self.node, self.index] = self.model
        return out

    def node_model(self) -> np.ndarray:
        """(N,) int64 the model of a node's devices (its first device); -1 for a node without GPUs."""
        out = np.full(self.nodes, -1, dtype=np.int64)
        has = self.per_node_count() > 0
        out[has] = self.model[self.offsets[:-1][has]]
        return out

    def model_id(self, name: str) -> int:
        return self.models.index(name) if name in self.models else -1

    @classmethod
    def build(cls, per_node: list[list[tuple[str, str, int]]], models: tuple = ()) -> GpuTable:
        """per_node[n] = [(device name, model name, memory MiB), ...]. Models are added to the vocabulary in order
        of first appearance after `models`."""
        vocab = list(models)
        node, index, model, memory, names, offsets = [], [], [], [], [], [0]
        for n, devices in enumerate(per_node):
            for i, (name, model_name, mem) in enumerate(devices):
                if model_name and model_name not in vocab:
                    vocab.append(model_name)
                node.append(n)
                index.append(i)
                model.append(vocab.index(model_name) if model_name else -1)
                memory.append(int(mem))
                names.append(name)
            offsets.append(offsets[-1] + len(devices))
        g = len(node)
        return cls(node=np.asarray(node, dtype=np.int64).reshape(g), index=np.asarray(index, dtype=np.int64).reshape(g),
                   model=np.asarray(model, dtype=np.int64).reshape(g),
                   memory_mib=np.asarray(memory, dtype=np.int64).reshape(g),
                   milli_used=np.zeros(g, dtype=np.int64), healthy=np.ones(g, dtype=bool),
                   offsets=np.asarray(offsets, dtype=np.int64), models=tuple(vocab), names=tuple(names))

    @classmethod
    def uniform(cls, counts, model_names) -> GpuTable:
        """count[n] devices of model model_names[n] on node n (the trace's node list)."""
        per_node = [[(f"gpu{i}", m, MODEL_MEMORY_MIB.get(m, 0)) for i in range(int(c))]
                    for c, m in zip(counts, model_names)]
        return cls.build(per_node)


def node_gpus(node) -> list[tuple[str, str, int]]:
    """The devices of one Node object from its allocatable and labels (nvidia.com/gpu or the Alibaba form)."""
    alloc = node.status.allocatable
    labels = node.metadata.labels
    where = f"Node {node.name}"
    if NVIDIA_GPU in alloc:
        resource = NVIDIA_GPU
        count, model = int(alloc[NVIDIA_GPU]), labels.get(NVIDIA_PRODUCT_LABEL, "")
    elif ALI_GPU_COUNT in alloc or ALI_GPU_MILLI in alloc:
        resource = ALI_GPU_COUNT
        count = int(alloc.get(ALI_GPU_COUNT, 0))
        milli = alloc.get(ALI_GPU_MILLI)
        if milli is not None and int(milli) != count * MILLI:
            raise InputError(f"{where}: status.allocatable[{ALI_GPU_MILLI}]: {int(milli)} is not "
                             f"{ALI_GPU_COUNT} x 1000 ({count * MILLI})")
        model = labels.get(ALI_GPU_MODEL, "")
    else:
        return []
    if count < 0:
        raise InputError(f"{where}: status.allocatable: negative GPU count {count}")
    if count > MAX_NODE_GPUS:
        raise InputError(f"{where}: status.allocatable[{resource}]: {count} GPU devices, more than the "
                         f"{MAX_NODE_GPUS} per node phalanx models")
    return [(f"gpu{i}", model, MODEL_MEMORY_MIB.get(model, 0)) for i in range(count)]


def gpu_table_from_nodes(nodes) -> GpuTable:
    """GpuTable of Node objects (rows follow the node order)."""
    return GpuTable.build([node_gpus(n) for n in nodes])


def gpu_table_from_resource_slices(slices: list[dict], node_names: list[str]) -> GpuTable:
    """GpuTable from DRA ResourceSlice-like dicts: {"spec": {"nodeName", "devices": [{"name", "attributes":
    {"productName": {"string": ...}} or {"model": ...}, "capacity": {"memory": {"value": "16Gi"}}}]}}."""
    from .quantity import parse_quantity
    index = {name: i for i, name in enumerate(node_names)}
    per_node: list[list[tuple[str, str, int]]] = [[] for _ in node_names]
    for k, rs in enumerate(slices):
        name = (rs.get("metadata") or {}).get("name", f"#{k}")
        spec = rs.get("spec") or {}
        node = spec.get("nodeName")
        if node not in index:
            raise InputError(f"ResourceSlice {name}: spec.nodeName: unknown node {node!r}")
        for j, dev in enumerate(spec.get("devices") or []):
            attrs = dev.get("attributes") or {}
            model = ""
            for key in ("productName", "model"):
                if key in attrs:
                    v = attrs[key]
                    model = str(v.get("string", "")) if isinstance(v, dict) else str(v)
                    break
            mem = 0
            cap = (dev.get("capacity") or {}).get("memory")
            if cap is not None:
                raw = cap.get("value") if isinstance(cap, dict) else cap
                try:
                    mem = int(parse_quantity(raw) // (1024 * 1024))
                except ValueError:
                    raise InputError(f"ResourceSlice {name}: spec.devices[{j}].capacity.memory: "
                                     f"invalid quantity {raw!r}") from None
            per_node[index[node]].append((str(dev.get("name", f"dev{j}")), model, mem))
    return GpuTable.build(per_node)


@dataclass(frozen=True)
class GpuRequest:
    """What a pod asks of GPUs: `count` devices with `milli` free each, of one of `models` (empty: any)."""

    count: int = 0
    milli: int = 0
    models: tuple = ()

    @property
    def share(self) -> bool:
        """A fraction of one GPU (the trace simulator's GPU-sharing pod)."""
        return self.count == 1 and self.milli < MILLI

    @property
    def total_milli(self) -> int:
        return self.count * self.milli

    @property
    def affinity(self) -> int:
        """The GPU affinity tag GpuClustering groups pods by (the simulator's GetGpuAffinityFromPodAnnotation), as a
        column: -1 no GPU, 0 a share of one GPU ("share-gpu"), k whole GPUs ("<k>-gpu")."""
        if self.count == 0:
            return -1
        return 0 if self.share else self.count


def check_gpu_request(count: int, milli: int, where: str, fields: tuple[str, str] = ("num_gpu", "gpu_milli")) -> None:
    """Whole GPUs (milli 1000) or a fraction of one GPU (count 1, milli 1..1000); no GPU: count 0, milli 0. `fields`:
    the names of count and milli in the input (the trace's columns by default)."""
    count_field, milli_field = fields
    if count < 0:
        raise InputError(f"{where}: {count_field}: must be >= 0 (got {count})")
    if count == 0 and milli != 0:
        raise InputError(f"{where}: {milli_field}: must be 0 when {count_field} is 0 (got {milli})")
    if count == 1 and not 1 <= milli <= MILLI:
        raise InputError(f"{where}: {milli_field}: must be 1..1000 for one GPU (got {milli})")
    if count > 1 and milli != MILLI:
        raise InputError(f"{where}: {milli_field}: must be 1000 when {count_field} > 1 (got {milli})")


def gpu_request_from_pod(pod) -> GpuRequest:
    """`nvidia.com/gpu` requests (whole GPUs), or the Alibaba annotations alibabacloud.com/gpu-count, -gpu-milli and
    -gpu-card-model (`|`-separated allowed models)."""
    where = f"Pod {pod.key}"
    ann = pod.metadata.annotations or {}
    if ALI_GPU_COUNT in ann or ALI_GPU_MILLI in ann:
        try:
            count = int(ann.get(ALI_GPU_COUNT, "1"))
            milli = int(ann.get(ALI_GPU_MILLI, str(MILLI)))
        except ValueError:
            raise InputError(f"{where}: metadata.annotations: {ALI_GPU_COUNT} and {ALI_GPU_MILLI} must be "
                             f"integers") from None
        check_gpu_request(count, milli, where)
        models = tuple(m for m in ann.get(ALI_GPU_MODEL, "").split("|") if m)
        return GpuRequest(count, milli, models)
    count = 0
    for c in pod.spec.containers:
        count += int(c.resources.requests.get(NVIDIA_GPU, c.resources.limits.get(NVIDIA_GPU, 0)))
    return GpuRequest(count, MILLI if count else 0, ())


def device_request(pod) -> GpuRequest | None:
    """The pod's device-level GPU request, or None (no annotation form, or count 0). Raises InputError for
    malformed annotations (gpus.check_gpu_request)."""
    ann = pod.metadata.annotations
    if not ann or (ALI_GPU_COUNT not in ann and ALI_GPU_MILLI not in ann):
        return None
    req = gpu_request_from_pod(pod)
    return req if req.count > 0 else None
