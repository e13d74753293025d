"""The Alibaba GPU trace (clusterdata alibaba-gpu-v2023, openb_*) as Scheduler objects: replayed in time by the
simulator, and replayed as the FGD paper's experiment (`phalanx trace alibaba`).

A window of the trace: the pods alive at its start (created before, deleted after) arrive at time 0 and run for
what is left of their life; the pods created inside it arrive when they were created and run for as long as the
trace kept them (deletion_time - scheduled_time, or - creation_time when they were never scheduled). Each pod is a
job of one worker: qos LS (latency-sensitive) is class "inference" at priority 1000, the rest "batch" at 0. GPU
requests keep the trace's form (alibabacloud.com/gpu-count / gpu-milli / gpu-card-model annotations, served by the
GpuShare plugin): shares of a device and model constraints are exact. `clones` > 1 makes each pod arrive that many
times (the same instant, names -c1, -c2, ...), to raise the load as the FGD experiment does.

The FGD paper's experiment replays the trace the way its simulator does (Weng et al., ATC'23; the simulator's
scripts/generate_config_and_run.py and pkg/simulator/{core,simulator,analysis}.go):

  1. GPU nodes only (openb_node_list_gpu_node.csv); the pods of one pod list.
  2. Typical pods from the whole pod list (popularity threshold 95%, increase step 1, CPU pods included): FGDScore's
     args.
  3. Arrival order: pods sorted by name, then shuffled with the seed.
  4. Workload tuning to 1.3 x the cluster's GPU capacity: clones of pods drawn uniformly (with replacement) from
     the pod list are appended until the next clone would pass the target (the check adds the clone's per-GPU
     milli, as the simulator's tuneUpPods does); a list above the target loses uniformly drawn pods instead.
  5. One pod at a time, no departures; a pod that fits nowhere is dropped. A Scheduler whose profile has exactly
     the simulator's filters (NodeResourcesFit on CPU, memory and pods, 1001 per node; GpuShare, the device filter)
     and the policy's Score plugin; every pod arrives before scheduling starts, in arrival order at one priority,
     which is the order the queue takes them in; a pod no node fits waits for an event no replay makes. The best
     node wins, ties to the first node of one seeded random order of the nodes (tie_break="perm": the simulator
     renames every node "%04d-<name>" with rand.Perm before the run, and its scheduler fork keeps the smallest
     name; the nodes are given to the Scheduler in that order), then GpuShare's Reserve takes the devices (the
     policy's pick for FGD and Random shares, best fit otherwise).
  6. After every pod: arrived GPU demand and allocated milli-GPU (the simulator's [Alloc] line).

The random streams (shuffle, clones, node order, then the Scheduler's: RandomScore, --tie-break random) are one
numpy PCG64 seeded with `seed`, not Go's math/rand: the procedure is the simulator's, the draws are not
(docs/semantics.md).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ..cluster_models import ClusterObjects
from ..cluster_models.alibaba import TraceNodes, TracePods
from ..cluster_models.errors import InputError
from ..cluster_models.generate import HOSTNAME, pod_template
from ..cluster_models.gpus import (ALI_GPU_COUNT, ALI_GPU_MILLI, ALI_GPU_MODEL, MILLI, NVIDIA_GPU,
                                   NVIDIA_PRODUCT_LABEL, GpuTable)
from ..cluster_models.objects import Node, NodeSpec, NodeStatus, ObjectMeta
from ..kernels import fgd
from ..plugins.fgd_score import POPULARITY_THRESHOLD
from ..plugins.fgd_score import typical_pods as fgd_typical
from ..plugins.gpu_scoring import DEFAULT_CPU_MILLI
from ..sched import Cluster, Scheduler
from ..sched.config import DEFAULT_SCHEDULER_NAME, SchedulerConfig, config_from_doc
from .engine import SCORES, score_args
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


# -- the FGD paper's experiment (`phalanx trace alibaba`) through the Scheduler: see the module docstring ------

REPLAY_POLICIES = tuple(SCORES)          # the experiment's policies: each runs its Score plugin (engine.SCORES)
# perm: first node of one seeded node permutation drawn after the arrival order (what the simulator's renaming
# + smallest-name rule amounts to); name: the smallest real node name; random: the Scheduler's seeded tie-break.
TIE_BREAKS = ("perm", "name", "random")
POD_LIMIT = 1001                 # allocatable pods of the trace's nodes (the simulator's node YAML)
TUNE_RATIO = 1.3


def typical_pods(pods: TracePods, threshold: int = POPULARITY_THRESHOLD) -> fgd.TypicalPods:
    """The pod list's typical pods (fgd_score.typical_pods over its rows)."""
    return fgd_typical([(max(int(pods.cpu_milli[i]), 0) or DEFAULT_CPU_MILLI, int(pods.gpu_milli[i]),
                         int(pods.num_gpu[i]), pods.gpu_spec[i]) for i in range(pods.size)], threshold)


def arrival_order(pods: TracePods, gpu_capacity_milli: int, rng: np.random.Generator,
                  ratio: float = TUNE_RATIO) -> np.ndarray:
    """Pod list rows in arrival order: shuffled, then tuned to `ratio` x capacity (SortClusterPods,
    TunePodsByNodeTotalResource). A row may appear more than once (clones)."""
    by_name = np.asarray(sorted(range(pods.size), key=lambda i: pods.names[i]), dtype=np.int64)
    order = by_name[rng.permutation(pods.size)]
    total_milli = pods.num_gpu * pods.gpu_milli
    demand = int(total_milli.sum())
    target = ratio * float(gpu_capacity_milli)
    if ratio <= 0 or float(demand) == target:
        return order
    if float(demand) > target:
        rows = list(order)
        while float(demand) > target and rows:
            k = int(rng.integers(len(rows)))
            demand -= int(total_milli[rows.pop(k)])
        return np.asarray(rows, dtype=np.int64)
    clones = []
    while True:
        k = int(by_name[int(rng.integers(pods.size))])
        if float(demand + int(pods.gpu_milli[k])) > target:
            break
        demand += int(total_milli[k])
        clones.append(k)
    return np.concatenate([order, np.asarray(clones, dtype=np.int64)])


@dataclass
class ReplayResult:
    trace: str
    policy: str
    seed: int
    pods: int                      # pods that arrived (clones included)
    placed: int
    seconds: float                 # the Scheduler's schedule() (intake and scheduling)
    gpu_capacity_milli: int
    arrived_milli: np.ndarray      # (pods + 1,) int64 GPU demand arrived after each pod (row 0: before any)
    used_milli: np.ndarray         # (pods + 1,) int64 milli-GPU allocated after each pod
    pod_rows: np.ndarray           # (pods,) int64 pod list row of each arrival
    node_of: np.ndarray            # (pods,) int64 node given, -1 dropped
    devices_of: list = field(default_factory=list)   # (pods,) device indices given (tuple)
    gpus: GpuTable | None = None   # the GPU table after the replay (the input table is left as it was)
    node_names: tuple = ()         # (N,) node names, indexed by node_of

    def alloc_by_arrival(self) -> dict[str, float]:
        """{arrived % of GPU capacity (integer bucket): mean GPU allocation %} as the simulator's
        experiments/analysis/merge_alloc_discrete.py computes it (round(x, 0) buckets; an empty bucket takes the
        rows of its +-1 neighbourhood; values rounded to 2 decimals)."""
        gpus = self.gpu_capacity_milli / MILLI
        arrive = [round(float(a) / gpus / 10, 0) for a in self.arrived_milli]
        alloc = [round(float(u) / gpus / 10, 2) for u in self.used_milli]
        out = {}
        for r in range(0, 131):
            vals = [v for a, v in zip(arrive, alloc) if a == r]
            if not vals:
                vals = [v for a, v in zip(arrive, alloc) if r - 1 <= a <= r + 1]
                if not vals:
                    continue
            out[str(r)] = round(sum(vals) / len(vals), 2)
        return out

    def unallocated_at(self, pct: int = 100) -> float | None:
        v = self.alloc_by_arrival().get(str(pct))
        return None if v is None else round(100.0 - v, 2)


def replay_config(policy: str, typ: fgd.TypicalPods) -> SchedulerConfig:
    """The experiment's profile: the simulator's filters and the policy's Score plugin alone."""
    plugin = SCORES[policy]
    only = lambda *names: {"enabled": [{"name": n} for n in names]}      # noqa: E731
    profile = {"schedulerName": DEFAULT_SCHEDULER_NAME, "plugins": {
        "multiPoint": {"enabled": [{"name": plugin, "weight": 1}], "disabled": [{"name": "*"}]},
        "queueSort": only("PrioritySort"), "preFilter": only("NodeResourcesFit", "GpuShare"),
        "filter": only("NodeResourcesFit", "GpuShare"), "reserve": only("GpuShare"), "bind": only("DefaultBinder")},
        "pluginConfig": score_args(policy, typ)}
    # Every node is scored, as the simulator's (percentageOfNodesToScore 100).
    return config_from_doc({"kind": "KubeSchedulerConfiguration", "percentageOfNodesToScore": 100,
                            "profiles": [profile]}, "trace replay")


def replay_nodes(nodes: TraceNodes, rows: np.ndarray) -> list[Node]:
    """The trace's nodes `rows`, in that order, as the replay's Node objects: cpu, memory, 1001 pods, and their
    devices in the trace's GPU form (alibabacloud.com/gpu-count and the gpu-card-model label)."""
    g = nodes.gpus
    counts = g.per_node_count()
    out = []
    for n in rows.tolist():
        allocatable = {"cpu": f"{int(nodes.cpu_milli[n])}m", "memory": str(int(nodes.memory[n])),
                       "pods": str(POD_LIMIT)}
        labels = {HOSTNAME: nodes.names[n]}
        if counts[n]:
            allocatable[ALI_GPU_COUNT] = str(int(counts[n]))
            model = int(g.model[g.offsets[n]])
            if model >= 0:
                labels[ALI_GPU_MODEL] = g.models[model]
        out.append(Node(metadata=ObjectMeta(name=nodes.names[n], labels=labels), spec=NodeSpec(),
                        status=NodeStatus(allocatable=allocatable, capacity=allocatable)))
    return out


def replay_pods(pods: TracePods, order: np.ndarray) -> list:
    """One Pod per arrival (`order`: pod list rows), named `<k>-<name>` (clones arrive more than once): its CPU and
    memory requests, and its GPUs in the trace's annotation form (served by GpuShare). Arrivals of one request
    share one template's spec and annotations."""
    templates = {}
    out = []
    # The request columns of the arrivals as Python ints at once (not a numpy scalar per value).
    columns = zip(*(c[order].tolist() for c in (pods.cpu_milli, pods.memory, pods.num_gpu, pods.gpu_milli)))
    for k, (i, (cpu, memory, gpus, milli)) in enumerate(zip(order.tolist(), columns)):
        key = (cpu, memory, gpus, milli, pods.gpu_spec[i])
        template = templates.get(key)
        if template is None:
            template = pod_template(f"{cpu}m", str(memory))
            if gpus:
                notes = {ALI_GPU_COUNT: str(gpus), ALI_GPU_MILLI: str(milli)}
                if pods.gpu_spec[i]:
                    notes[ALI_GPU_MODEL] = pods.gpu_spec[i]
                template = template.model_copy(update={"metadata": template.metadata.model_copy(
                    update={"annotations": notes})})
            templates[key] = template
        out.append(template.replaced(metadata=template.metadata.replaced(name=f"{k}-{pods.names[i]}")))
    return out


def replay(nodes: TraceNodes, pods: TracePods, policy: str = "fgd", seed: int = 42, trace: str = "",
           tie_break: str = "perm", ratio: float = TUNE_RATIO) -> ReplayResult:
    """Run the experiment once. Raises InputError for an unknown policy or tie-break."""
    if policy not in SCORES:
        raise InputError(f"--policy: unknown policy {policy!r} (use one of {', '.join(SCORES)})")
    if tie_break not in TIE_BREAKS:
        raise InputError(f"--tie-break: unknown tie-break {tie_break!r} (use one of {', '.join(TIE_BREAKS)})")
    rng = np.random.default_rng(seed)
    capacity = int(nodes.gpus.size) * MILLI
    order = arrival_order(pods, capacity, rng, ratio)
    by_name = _by_name(nodes)
    # The simulator's syncClusterResourceList: nodes sorted by name, then node i renamed "%04d-" % perm[i].
    node_order = by_name[np.argsort(rng.permutation(nodes.size), kind="stable")] if tie_break == "perm" else by_name
    return replay_order(nodes, pods, order, policy, rng, trace=trace, tie_break=tie_break, seed=seed,
                        node_order=node_order)


def _by_name(nodes: TraceNodes) -> np.ndarray:
    return np.asarray(sorted(range(nodes.size), key=lambda n: nodes.names[n]), dtype=np.int64)


def replay_order(nodes: TraceNodes, pods: TracePods, order: np.ndarray, policy: str, rng: np.random.Generator,
                 typ: fgd.TypicalPods | None = None, trace: str = "", tie_break: str = "name",
                 seed: int = 0, node_order: np.ndarray | None = None) -> ReplayResult:
    """Place the pod list rows `order` one at a time (step 5 of the procedure). typ: typical pods (default: from
    the whole pod list); node_order: node rows in tie-break order (default: by name), ties go to the first
    unless tie_break is "random"."""
    capacity = int(nodes.gpus.size) * MILLI
    typ = typical_pods(pods) if typ is None else typ
    by_name = _by_name(nodes) if node_order is None else np.asarray(node_order, dtype=np.int64)
    arrivals = replay_pods(pods, np.asarray(order, np.int64))
    cluster = Cluster.from_objects(ClusterObjects(nodes=replay_nodes(nodes, by_name), pods=arrivals, warnings=[]))
    sched = Scheduler(cluster, replay_config(policy, typ), tie_break="random" if tie_break == "random" else "first",
                      preemption=False, rng=rng)
    result = sched.schedule()
    node_ids = cluster.tensors.node_index
    book = cluster.gpus
    node_of = np.full(len(order), -1, dtype=np.int64)
    devices_of = []
    for k, pod in enumerate(arrivals):
        bound = result.bindings.get(pod.key)
        if bound is not None:
            node_of[k] = by_name[node_ids[bound]]
        held = book.held.get(pod.key)
        devices_of.append(() if held is None else tuple(int(d) for d in held[1]))
    total_milli = pods.num_gpu * pods.gpu_milli
    rows = np.asarray(order, np.int64)
    arrived = np.concatenate([[0], np.cumsum(total_milli[rows])]).astype(np.int64)
    used = np.concatenate([[0], np.cumsum(np.where(node_of >= 0, total_milli[rows], 0))]).astype(np.int64)
    # The book's device rows follow the Scheduler's node order; the input's follow the trace's.
    g = nodes.gpus
    rank = np.empty_like(by_name)
    rank[by_name] = np.arange(len(by_name))
    t = book.table
    final = dataclasses.replace(g, milli_used=t.milli_used[t.offsets[rank[g.node]] + g.index].copy())
    return ReplayResult(trace=trace, policy=policy, seed=seed, pods=len(order), placed=int((node_of >= 0).sum()),
                        seconds=result.schedule_s, gpu_capacity_milli=capacity, arrived_milli=arrived,
                        used_milli=used, pod_rows=rows, node_of=node_of, devices_of=devices_of, gpus=final,
                        node_names=nodes.names)
