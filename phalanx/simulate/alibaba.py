"""The Alibaba GPU trace (clusterdata alibaba-gpu-v2023, openb_*) replayed in time by the simulator.

A window of the trace: the pods alive at its start (created before, deleted after) arrive at time 0 and run for
what is left of their life; the pods created inside it arrive when they were created and run for as long as the
trace kept them (deletion_time - scheduled_time, or - creation_time when they were never scheduled). Each pod is a
job of one worker: qos LS (latency-sensitive) is class "inference" at priority 1000, the rest "batch" at 0. GPU
requests keep the trace's form (alibabacloud.com/gpu-count / gpu-milli / gpu-card-model annotations, served by the
GpuShare plugin): shares of a device and model constraints are exact. `clones` > 1 makes each pod arrive that many
times (the same instant, names -c1, -c2, ...), to raise the load as the FGD experiment does.
"""
from __future__ import annotations

import numpy as np

from ..cluster_models.alibaba import TraceNodes, TracePods
from ..cluster_models.errors import InputError
from ..cluster_models.generate import HOSTNAME
from ..cluster_models.gpus import MILLI, NVIDIA_GPU, NVIDIA_PRODUCT_LABEL
from ..cluster_models.objects import Node, NodeSpec, NodeStatus, ObjectMeta
from .workload import PRIORITY, JobSpec

DAY = 86400.0


def trace_nodes(nodes: TraceNodes) -> list[Node]:
    """The trace's nodes as Node objects: cpu, memory, nvidia.com/gpu and the GPU model label."""
    counts = nodes.gpus.per_node_count()
    first = nodes.gpus.offsets[:-1]
    out = []
    for i, name in enumerate(nodes.names):
        labels = {HOSTNAME: name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
        allocatable = {"cpu": f"{int(nodes.cpu_milli[i])}m", "memory": str(int(nodes.memory[i])), "pods": "110"}
        if counts[i]:
            allocatable[NVIDIA_GPU] = str(int(counts[i]))
            labels[NVIDIA_PRODUCT_LABEL] = nodes.gpus.models[int(nodes.gpus.model[first[i]])]
        out.append(Node(metadata=ObjectMeta(name=name, labels=labels), spec=NodeSpec(),
                        status=NodeStatus(allocatable=allocatable, capacity=allocatable)))
    return out


def trace_jobs(pods: TracePods, start_day: float, hours: float, clones: int = 1) -> list[JobSpec]:
    """The jobs of the window [start_day, start_day + hours), in arrival order."""
    if pods.creation is None:
        raise InputError("the pod list has no creation_time/deletion_time/scheduled_time columns: it cannot be "
                         "replayed in time")
    if clones < 1:
        raise InputError(f"clones must be at least 1, got {clones}")
    start, end = start_day * DAY, start_day * DAY + hours * 3600.0
    began = np.where(pods.scheduled >= 0, np.maximum(pods.scheduled, pods.creation), pods.creation)
    alive = (pods.creation < start) & (pods.deletion > start)
    arriving = (pods.creation >= start) & (pods.creation < end)
    jobs = []
    for i in np.flatnonzero(alive | arriving)[np.argsort(np.maximum(pods.creation, start)[alive | arriving],
                                                         kind="stable")].tolist():
        arrival = max(float(pods.creation[i]) - start, 0.0)
        duration = float(pods.deletion[i] - max(began[i], start))
        if duration <= 0:
            continue
        klass = "inference" if pods.qos and pods.qos[i] == "LS" else "batch"
        for c in range(clones):
            name = pods.names[i] if clones == 1 else f"{pods.names[i]}-c{c + 1}"
            jobs.append(JobSpec(name, klass, arrival, 1, int(pods.num_gpu[i]), f"{int(pods.cpu_milli[i])}m",
                                str(int(pods.memory[i])), duration, PRIORITY[klass],
                                gpu_milli=int(pods.gpu_milli[i]) if pods.num_gpu[i] else MILLI,
                                gpu_models=pods.gpu_spec[i]))
    return jobs
