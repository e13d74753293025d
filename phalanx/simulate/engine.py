"""The discrete-event simulator: jobs arrive, their pods are scheduled by a Scheduler on its own clock, run and
complete; a job of several workers makes progress only while all of them run; nodes fail and come back.

The simulator drives the Scheduler through its event API only (add_pods, add_pod_group, delete_pod,
remove_node, add_nodes, advance) and reads what happened from its typed decisions (Scheduler.decisions: one entry
per decision, however many pods it concerns). Scheduling takes no simulated
time. At each event time the scheduler first catches up (backoff expiries, Permit timeouts up to then), then the
events apply, then it schedules what they made possible.

Model (docs/semantics.md, "Simulator"):
- A pod the cluster loses (its node failed, it was preempted) is recreated at once under a new name, as the Job
  controller would; a job that was running loses the progress made since it last started (no checkpoints), and the
  GPU-seconds it ran since then are counted as destroyed.
- When a job has made `duration` seconds of progress its pods are deleted (completed) together.
- A Deployment (JobSpec.kind, the inference class) is created through the Scheduler as its controllers would create
  it (a ReplicaSet and its pods, which system default topology spreading then selects); each bound replica serves
  on its own (running), a lost one is recreated as the ReplicaSet controller would, and the Deployment is deleted
  `duration` seconds after it arrived, its pods with it. Nothing of a service's work is lost with a replica.

Every GPU-second of the run is in exactly one state of the ledger (Ledger.STATES): running (bound to a job that
makes progress, or a Deployment's replica), incomplete (bound to a job that is not running because some of its workers are not bound),
permit (a pod placed and held at Permit), stranded (idle on a partly used node whose free GPUs are fewer than the
smallest worker of a pending job needs, though the node's whole capacity would hold it: capacity lost to
fragmentation), idle (the rest of the idle capacity), down (its node failed).
"""
from __future__ import annotations

import dataclasses
import heapq
import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..cluster_models import ClusterObjects
from ..cluster_models.controllers import Deployment, expand_controllers
from ..cluster_models.generate import RACK, pod_template
from ..cluster_models.gpus import ALI_GPU_COUNT, ALI_GPU_MILLI, ALI_GPU_MODEL, MILLI
from ..cluster_models.objects import PodSchedulingGroup
from ..cluster_models.quantity import milli_value, parse_quantity
from ..cluster_models.workloads import PodGroup
from ..plugins.fgd_score import FGDScore, as_args, typical_pods
from ..plugins.gpu_scoring import DEFAULT_CPU_MILLI
from ..sched import Cluster, Scheduler
from ..sched.config import DEFAULT_CONFIG, DEFAULT_SCHEDULER_NAME, SchedulerConfig, config_from_doc
from ..sched.records import (BOUND, DELETED, PERMIT_REJECTED, UNSCHEDULABLE, WAITING, Deleted, Failed, Placed,
                             Preempted)
from ..sched.scheduler import DEFAULT_PERMIT_TIMEOUT_S
from ..sched.capacity import copies_per_node
from ..sched.preemption import tensors_state
from .autoscaler import Autoscaler, Need, Pending, node_rooms
from .usage import NodeUsage
from .workload import JobSpec


@dataclass(frozen=True)
class Policy:
    """How a workload is scheduled: what a training job becomes and which scheduler runs it."""
    name: str
    groups: bool                  # training jobs are gang PodGroups (minCount = workers); else plain pods
    topology: str | None = None   # the gang's topology constraint (a node label key), e.g. the rack
    preemption: bool = False      # DefaultPreemption and workload-aware preemption (gangs are disruptionMode PodGroup)
    gang_mode: str = "podgroup"   # "permit": members go pod by pod and wait at Permit for the gang (v1.35 style)
    score: str | None = None      # a GPU score policy (SCORES) as the profile's only Score plugin; None: the default
                                  # Score plugins


POLICIES = {p.name: p for p in (
    Policy("pod-by-pod", groups=False),
    Policy("gang", groups=True),
    Policy("gang-topology", groups=True, topology=RACK),
    Policy("gang-preemption", groups=True, preemption=True),
    Policy("gang-permit", groups=True, gang_mode="permit"),
)}

# The GPU score policies of the FGD paper (its names) and the Score plugin each is; "<policy>+<score>" runs a
# policy with that plugin as the only Score plugin (e.g. gang+fgd).
SCORES = {"random": "RandomScore", "dotprod": "DotProductScore", "gpuclustering": "GpuClusteringScore",
          "gpupacking": "GpuPackingScore", "bestfit": "BestFitScore", "fgd": "FGDScore"}


def policy_named(name: str) -> Policy:
    """A policy by name: one of POLICIES, optionally "+<score>" (SCORES). Raises ValueError for an unknown one."""
    base, plus, score = name.partition("+")
    if base not in POLICIES or (plus and score not in SCORES):
        raise ValueError(f"unknown policy {name!r} (use one of {', '.join(POLICIES)}, optionally followed by "
                         f"+ and a score policy: {', '.join(SCORES)})")
    return dataclasses.replace(POLICIES[base], name=name, score=score) if plus else POLICIES[base]


def score_config(score: str, jobs: list[JobSpec]) -> SchedulerConfig:
    """The default profile with the score policy `score` as its only Score plugin (weight 1). FGDScore's typical
    pods are the workload's: one per worker of every job (its non-zero CPU request, GPU share and models)."""
    plugin = SCORES[score]
    keys = [(milli_value(parse_quantity(job.cpu)) or DEFAULT_CPU_MILLI, job.gpu_milli if job.gpus else 0,
             job.gpus, job.gpu_models) for job in jobs for _ in range(job.workers)]
    profile = {"schedulerName": DEFAULT_SCHEDULER_NAME, "plugins": {
        "multiPoint": {"enabled": [{"name": plugin}]},
        "score": {"enabled": [{"name": plugin, "weight": 1}], "disabled": [{"name": "*"}]}},
        "pluginConfig": score_args(score, typical_pods(keys) if keys else None)}
    return config_from_doc({"kind": "KubeSchedulerConfiguration", "percentageOfNodesToScore": 100,
                            "profiles": [profile]}, f"score policy {score}")


def score_args(score: str, typ) -> list[dict]:
    """The pluginConfig entries of the score policy `score`: FGDScore's typical pods `typ` (None: from the
    Scheduler's input)."""
    if SCORES[score] != FGDScore.name or typ is None:
        return []
    return [{"name": FGDScore.name, "args": {"typicalPods": [a.model_dump(by_alias=True) for a in as_args(typ)]}}]


@dataclass
class Job:
    """A job's state during the run."""
    spec: JobSpec
    live: dict = field(default_factory=dict)      # pod key -> worker index, pods that exist now
    bound: set = field(default_factory=set)       # pod keys bound
    waiting: set = field(default_factory=set)     # pod keys held at Permit
    progress: float = 0.0                         # seconds of progress kept
    running_since: float | None = None            # when the current run (all workers bound) began
    first_start: float | None = None
    finished: float | None = None
    epoch: int = 0                                # bumped when a run stops (its completion event is stale then)
    recreated: int = 0                            # pods recreated so far (names them)
    completing: bool = False                      # its pods are being deleted as completed

    @property
    def running(self) -> bool:
        return self.running_since is not None

    @property
    def short(self) -> bool:
        """Some worker (replica) is not bound and the job is not over."""
        return len(self.bound) < self.spec.workers and self.finished is None


class Ledger:
    """GPU-seconds per state, integrated between changes; every GPU of the cluster is in one state at a time.
    Counts are in milli-GPU (a share of a device holds its milli)."""
    STATES = ("running", "incomplete", "permit", "stranded", "idle", "down", "unprovisioned")

    def __init__(self, total_milli: int, sample_every: float):
        self.total = total_milli
        self.seconds = dict.fromkeys(self.STATES, 0.0)
        self.running = self.incomplete = self.permit = self.down = self.unprovisioned = 0
        self.stranded = None                      # () -> the idle milli-GPUs that are stranded now
        self.now = 0.0
        self.sample_every = sample_every
        self.samples: list[tuple] = []            # (time, milli-GPUs per state in STATES order)

    def counts(self) -> tuple[int, ...]:
        idle = self.total - self.running - self.incomplete - self.permit - self.down - self.unprovisioned
        stranded = self.stranded()
        return self.running, self.incomplete, self.permit, stranded, idle - stranded, self.down, self.unprovisioned

    def advance(self, t: float) -> None:
        if t <= self.now:
            return
        counts = self.counts()
        dt = t - self.now
        for state, n in zip(self.STATES, counts):
            self.seconds[state] += n * dt
        if not self.samples or t - self.samples[-1][0] >= self.sample_every:
            self.samples.append((self.now, counts))
        self.now = t


@dataclass
class SimResult:
    """What one run measured."""
    policy: str
    seed: int
    nodes: int
    gpus: int
    horizon_s: float
    jobs: dict                   # class -> {"arrived", "started", "finished" (over after it started)}
    pending_s: dict              # class -> {"p50", "p95", "p99"} seconds from arrival to first start
    completion_s: dict           # class -> {"p50", "p95", "p99"} seconds from arrival to completion
    gpu_hours: dict              # ledger state -> GPU-hours
    preemptions: int             # pods preempted
    destroyed_gpu_hours: float   # GPU-hours of progress lost by jobs whose pods were lost while running
    pods_bound: int
    events: int                  # simulated events applied (arrivals, completions, node failures and returns)
    nodes_added: int             # nodes the autoscaler added (0 without one)
    nodes_removed: int           # of those, removed again when they stood empty
    wall_s: float                # time the run took
    scheduler_s: float           # of which in the scheduler
    samples: list = field(default_factory=list, repr=False)   # (time, milli-GPUs per ledger state) over time
    pending_times: dict = field(default_factory=dict, repr=False)   # class -> seconds to first start, per job
    racks: list = field(default_factory=list, repr=False)     # rack names (the node label RACK; "" without it)
    rack_samples: list = field(default_factory=list, repr=False)    # per sample, (racks,) fragmented idle
                                                                    # milli-GPUs: free on nodes partly used

    @property
    def utilization(self) -> float:
        """Running GPU-seconds over the GPU-seconds of nodes that were in the cluster and up."""
        up = self.gpus * self.horizon_s / 3600 - self.gpu_hours["down"] - self.gpu_hours["unprovisioned"]
        return self.gpu_hours["running"] / up if up > 0 else 0.0

    def row(self) -> dict:
        """One flat row (the comparison table, CSV)."""
        out = {"policy": self.policy, "seed": self.seed, "nodes": self.nodes, "gpus": self.gpus,
               "hours": round(self.horizon_s / 3600, 3), "utilization": round(self.utilization, 4)}
        out.update({f"gpu_h_{k}": round(v, 2) for k, v in self.gpu_hours.items()})
        for klass, c in self.jobs.items():
            out.update({f"{klass}_{k}": v for k, v in c.items()})
            out.update({f"{klass}_pending_{q}_s": v for q, v in self.pending_s[klass].items()})
            out.update({f"{klass}_jct_{q}_s": v for q, v in self.completion_s[klass].items()})
        out.update({"preemptions": self.preemptions, "destroyed_gpu_h": round(self.destroyed_gpu_hours, 2),
                    "nodes_added": self.nodes_added, "nodes_removed": self.nodes_removed,
                    "pods_bound": self.pods_bound, "events": self.events, "wall_s": round(self.wall_s, 3),
                    "scheduler_s": round(self.scheduler_s, 3),
                    "events_per_s": round(self.events / self.wall_s, 1) if self.wall_s > 0 else 0.0})
        return out


def _quantiles(values: list[float]) -> dict:
    if not values:
        return {"p50": None, "p95": None, "p99": None}
    q = np.percentile(np.array(values), [50, 95, 99], method="higher")
    return {"p50": round(float(q[0]), 1), "p95": round(float(q[1]), 1), "p99": round(float(q[2]), 1)}


class Simulation:
    """One run of a workload on a cluster under a policy."""

    def __init__(self, nodes: list, jobs: list[JobSpec], policy: Policy, *, hours: float, seed: int = 0,
                 node_failures_per_day: float = 0.0, repair_s: float = 3600.0, sample_every: float = 300.0,
                 autoscaler: Autoscaler | None = None, permit_timeout_s: float = DEFAULT_PERMIT_TIMEOUT_S,
                 keep_decisions: bool = False):
        self.autoscaler = autoscaler
        self.keep_decisions = keep_decisions        # else the scheduler forgets each decision once it is read
        self.initial_nodes = list(nodes)            # the inputs, as given (a checkpoint carries them)
        self.workload = list(jobs)
        self.node_failures_per_day = node_failures_per_day
        pool = autoscaler.pool() if autoscaler is not None else []
        self.nodes = {n.metadata.name: n for n in [*nodes, *pool]}
        self.cluster_nodes = len(nodes)
        self.policy = policy
        self.seed = seed
        self.horizon = hours * 3600.0
        cluster = Cluster.from_objects(ClusterObjects(nodes=list(nodes), pods=[], warnings=[]))
        config = DEFAULT_CONFIG if policy.score is None else score_config(policy.score, jobs)
        self.config = config
        self.sched = Scheduler(cluster, config, seed=seed, preemption=policy.preemption, gang_mode=policy.gang_mode,
                               permit_timeout_s=permit_timeout_s)
        self.usage = NodeUsage(list(self.nodes.values()), len(nodes))
        self.rack_samples: list[np.ndarray] = []
        self.ledger = Ledger(int(self.usage.milli.sum()), sample_every)
        self.ledger.stranded = self._stranded
        self.ledger.unprovisioned = sum(self.usage.milli_of(n.metadata.name) for n in pool)
        self.unschedulable: dict[str, str] = {}     # pods whose last attempt failed -> their job (autoscaler)
        self.template_sched: Scheduler | None = None  # the autoscaler's template node alone (its Filter verdicts)
        self.on_template: dict[str, bool] = {}      # job -> its pods fit an empty template node
        self.last_scan: tuple | None = None         # what the last scan that packed saw, the nodes it asked for in
        self.scan_due = False                       # an autoscaler scan is in the event heap
        self.emptied: dict[str, float] = {}         # autoscaled node -> since when it holds no pod
        self.jobs: dict[str, Job] = {}
        self.pod_job: dict[str, Job] = {}           # pod key -> its job
        self.pending_heap: list[tuple[int, str]] = []   # (milli a worker holds, job name) of jobs not running
                                                        # (lazily cleaned)
        self.events: list[tuple] = []               # (time, seq, kind, payload)
        self._seq = 0
        self.preemptions = 0
        self.destroyed = 0.0                        # GPU-seconds
        self.pods_bound = 0
        self.applied = 0
        self.templates: dict[str, object] = {}      # job name -> its pod template (until the job completes)
        self.scheduler_s = 0.0
        self.wall_s = 0.0                           # spent in run() so far (before a checkpoint it resumed from too)
        self.reached = 0.0                          # run_until has applied everything due before this time
        for spec in jobs:
            if spec.arrival < self.horizon:
                self._push(spec.arrival, "arrive", spec)
        if node_failures_per_day > 0:
            rng = np.random.default_rng([seed, 2])
            rate = node_failures_per_day / 86400.0 * len(nodes)
            t = float(rng.exponential(1.0 / rate))
            names = [n.metadata.name for n in nodes]
            while t < self.horizon:
                self._push(t, "fail", names[int(rng.integers(len(names)))])
                t += float(rng.exponential(1.0 / rate))
        self.repair_s = repair_s
        self.down: set[str] = set()

    def _push(self, t: float, kind: str, payload) -> None:
        heapq.heappush(self.events, (t, self._seq, kind, payload))
        self._seq += 1

    # -- the run ------------------------------------------------------------------------------------
    def run(self, checkpoint_every: float | None = None, on_checkpoint=None) -> SimResult:
        """Run to the horizon. With `checkpoint_every` (simulated seconds), `on_checkpoint(self)` is called each
        time the run reaches a multiple of it (simulate/checkpoint.py saves the state then); pausing there changes
        nothing in the run."""
        start = time.perf_counter()
        if checkpoint_every is not None:
            if not checkpoint_every > 0:
                raise ValueError(f"checkpoint_every must be > 0, got {checkpoint_every!r}")
            stop = (math.floor(self.reached / checkpoint_every) + 1) * checkpoint_every
            while stop < self.horizon:
                self.run_until(stop)
                self.wall_s += time.perf_counter() - start
                start = time.perf_counter()
                on_checkpoint(self)
                stop += checkpoint_every
        self.run_until(self.horizon)
        self._schedule(self.horizon)
        self._advance(self.horizon)
        self.wall_s += time.perf_counter() - start
        return self._result(self.wall_s)

    def run_until(self, stop: float) -> None:
        """Apply every event and scheduler timer due before `stop` (at most the horizon); what is due at `stop` or
        later waits for the next call. The run is the same whatever the calls' stops."""
        while True:
            t = min(self.events[0][0], self.horizon) if self.events else self.horizon
            due = self.sched.next_due()
            if due is not None and due < t:        # the scheduler's own timer first: what it does may add events
                if max(due, self.sched.now) >= stop:
                    break
                self._schedule(max(due, self.sched.now))
                continue
            if t >= self.horizon or t >= stop:
                break
            self._schedule(t)
            self._advance(t)                       # the ledger's last interval ends before the events change it
            while self.events and self.events[0][0] == t:
                _, _, kind, payload = heapq.heappop(self.events)
                self.applied += 1
                getattr(self, f"_on_{kind}")(t, payload)
            self._schedule(t)
        self.reached = max(self.reached, min(stop, self.horizon))

    def _schedule(self, t: float) -> None:
        """Let the scheduler run up to t, then apply what it did (pods it lost are recreated and scheduled too)."""
        for _ in range(100):
            recreate = self._call(self.sched.advance, t)
            if not recreate:
                return
            self._add_pods(recreate)
        raise RuntimeError("simulator: pods lost and recreated 100 times at one instant")

    def _advance(self, t: float) -> None:
        """Integrate the ledger up to t; with each of its samples, the racks' fragmented idle GPUs."""
        taken = len(self.ledger.samples)
        self.ledger.advance(t)
        if len(self.ledger.samples) > taken:
            self.rack_samples.append(self.usage.fragmented())

    def _hold(self, key: str, node: str | None, milli: int) -> None:
        """A pod holds `milli` milli-GPUs of `node` (bound, or placed and waiting at Permit)."""
        self.unschedulable.pop(key, None)
        if node is not None:
            self.usage.hold(key, node, milli)
            self.emptied.pop(node, None)

    def _release(self, key: str, milli: int, t: float) -> None:
        name = self.usage.release(key, milli)
        if name is not None and self.autoscaler is not None and name in self.autoscaler.added:
            self._emptied(name, t)

    def _emptied(self, name: str, t: float) -> None:
        """A node the autoscaler added holds no pod from t: it goes at t + scale_down_s unless a pod comes."""
        self.emptied[name] = t
        self._push(t + self.autoscaler.scale_down_s, "scale_down", name)

    def _call(self, fn, *args) -> list:
        """Call a Scheduler method and apply the decisions it made; returns (job, worker) pairs whose pod must be
        recreated."""
        mark = self.sched.decision_mark()
        t0 = time.perf_counter()
        fn(*args)
        self.scheduler_s += time.perf_counter() - t0
        recreate = []
        entries = self.sched.decisions(mark)
        if not self.keep_decisions:
            self.sched.forget_decisions(mark + len(entries))
        for e in entries:
            self._advance(e.time)
            if isinstance(e, Placed):
                for pod, node in zip(e.pods, e.nodes):
                    self._apply(e.kind, e.time, pod.key, node)
            elif isinstance(e, Failed):
                if e.kind == PERMIT_REJECTED or self.autoscaler is not None:
                    for pod in e.pods:
                        self._apply(e.kind, e.time, pod.key, None)
            elif isinstance(e, Deleted):
                recreate += self._apply(DELETED, e.time, e.key, None)
            elif isinstance(e, Preempted):
                self.preemptions += len(e.victims)
        return recreate

    def _apply(self, kind: str, t: float, key: str, node: str | None) -> list:
        """Update the jobs from one pod's decision; returns (job, worker) pairs whose pod must be recreated."""
        job = self.pod_job.get(key)
        if job is None:
            return []
        if kind == BOUND:
            self.pods_bound += 1
            self._unhold(job, key)
            self._hold(key, node, job.spec.milli)
            job.bound.add(key)
            if job.spec.service:            # a replica serves as soon as it is bound
                self.ledger.running += job.spec.milli
                if job.first_start is None:
                    job.first_start = t
                return []
            if job.running:
                raise AssertionError(f"pod {key} bound to running job {job.spec.name}")
            self.ledger.incomplete += job.spec.milli
            if len(job.bound) == job.spec.workers:
                self._start(job, t)
        elif kind == WAITING:
            job.waiting.add(key)
            self.ledger.permit += job.spec.milli
            self._hold(key, node, job.spec.milli)
        elif kind == PERMIT_REJECTED:
            self._unhold(job, key)
            self._release(key, job.spec.milli, t)
        elif kind == UNSCHEDULABLE:
            if self.autoscaler is not None:
                self.unschedulable[key] = job.spec.name
                if not self.scan_due:
                    self.scan_due = True
                    self._push(t + self.autoscaler.scan_s, "scan", None)
        elif kind == DELETED:
            worker = job.live.pop(key, None)
            self.pod_job.pop(key, None)
            self._unhold(job, key)
            self._release(key, job.spec.milli, t)
            self.unschedulable.pop(key, None)
            if key in job.bound and job.spec.service:
                job.bound.discard(key)
                self.ledger.running -= job.spec.milli
                if job.spec.milli and not job.completing:
                    heapq.heappush(self.pending_heap, (job.spec.milli, job.spec.name))
            elif key in job.bound:
                if job.running:
                    self._stop(job, t)
                job.bound.discard(key)
                self.ledger.incomplete -= job.spec.milli
            if not job.completing and worker is not None:
                return [(job, worker)]
        return []

    def _unhold(self, job: Job, key: str) -> None:
        if key in job.waiting:
            job.waiting.discard(key)
            self.ledger.permit -= job.spec.milli

    def _start(self, job: Job, t: float) -> None:
        gpus = job.spec.demand_milli
        self.ledger.incomplete -= gpus
        self.ledger.running += gpus
        job.running_since = t
        if job.first_start is None:
            job.first_start = t
        self._push(t + job.spec.duration - job.progress, "complete", (job, job.epoch))

    def _stop(self, job: Job, t: float) -> None:
        """A worker of a running job was lost: the run's progress is lost with it (no checkpoints)."""
        gpus = job.spec.demand_milli
        self.ledger.running -= gpus
        self.ledger.incomplete += gpus
        self.destroyed += (t - job.running_since) * gpus
        job.running_since = None
        job.progress = 0.0
        job.epoch += 1
        if gpus:
            heapq.heappush(self.pending_heap, (job.spec.milli, job.spec.name))

    def _stranded(self) -> int:
        """Idle milli-GPUs on up nodes, partly used, whose free capacity is below what the smallest pending worker
        holds while their whole capacity is not."""
        heap = self.pending_heap
        while heap:
            job = self.jobs.get(heap[0][1])
            if job is not None and job.short:
                break
            heapq.heappop(heap)
        if not heap:
            return 0
        return self.usage.stranded(heap[0][0])

    # -- events -------------------------------------------------------------------------------------
    def _on_arrive(self, t: float, spec: JobSpec) -> None:
        job = self.jobs[spec.name] = Job(spec)
        if spec.milli:
            heapq.heappush(self.pending_heap, (spec.milli, spec.name))
        if spec.service:
            self._push(t + spec.duration, "complete", (job, job.epoch))
            self._call(self._create_deployment, job)
            return
        gang = self.policy.groups and spec.workers > 1
        if gang:
            self._call(self.sched.add_pod_group, self._pod_group(spec))
        self._add_pods([(job, i) for i in range(spec.workers)], recreated=False)

    def _create_deployment(self, job: Job) -> None:
        """The Deployment's controllers make its ReplicaSet and pods (their decisions are applied after this)."""
        pods = self.sched.add_controllers([self._deployment(job.spec)])
        self.templates[job.spec.name] = pods[0]       # the ReplicaSet's pod: what recreated replicas copy
        for worker, pod in enumerate(pods):
            job.live[pod.key] = worker
            self.pod_job[pod.key] = job

    def _on_complete(self, t: float, payload) -> None:
        job, epoch = payload
        if job.spec.service:
            self._retire(job, t, f"owner Deployment {job.spec.klass}/{job.spec.name} deleted")
            return
        if epoch != job.epoch or not job.running:
            return
        self._advance(t)
        job.progress = job.spec.duration
        job.running_since = None
        gpus = job.spec.demand_milli
        self.ledger.running -= gpus
        self.ledger.incomplete += gpus       # until its pods are deleted, just below
        self._retire(job, t, "completed")

    def _retire(self, job: Job, t: float, reason: str) -> None:
        """The job is over (completed, or a Deployment deleted): its pods are deleted."""
        job.finished = t
        job.completing = True
        self.templates.pop(job.spec.name, None)
        for key in list(job.live):
            self._call(self.sched.delete_pod, key, reason)

    def _on_fail(self, t: float, name: str) -> None:
        if name in self.down:
            return
        recreate = self._node_out(t, name, failed=True)
        self.down.add(name)
        self._push(t + self.repair_s, "repair", name)
        self._add_pods(recreate)

    def _on_scan(self, t: float, _) -> None:
        """The autoscaler looks at the unschedulable pods and asks for nodes."""
        self.scan_due = False
        # A scan that sees what the last one saw, less the nodes that one asked for (in flight now), packs the
        # pods as it did, into them: it asks for nothing.
        seen = (tensors_state(self.sched.cluster.tensors), tuple(self.unschedulable),
                frozenset(self.autoscaler.in_flight))
        if self.autoscaler.free and seen != self.last_scan:   # with the whole pool asked for, nothing to decide
            for name in self.autoscaler.scale_up(self._pending(), node_rooms(self.sched.cluster),
                                                 node_rooms(self._template_scheduler().cluster)):
                self._push(t + self.autoscaler.provision_s, "provisioned", name)
            self.last_scan = (seen[0], seen[1], frozenset(self.autoscaler.in_flight))
        if self.unschedulable and self.autoscaler.free:
            self.scan_due = True
            self._push(t + self.autoscaler.scan_s, "scan", None)

    def _template_scheduler(self) -> Scheduler:
        """A scheduler of the autoscaler's template node alone, empty (whose Filter verdicts the scans read)."""
        if self.template_sched is None:
            objects = ClusterObjects(nodes=[self.autoscaler.template], pods=[], warnings=[])
            self.template_sched = Scheduler(Cluster.from_objects(objects), self.config)
        return self.template_sched

    def _pending(self) -> list[Pending]:
        """The unschedulable pods as a scan packs them: each job's requests, the nodes in the cluster whose Filter
        its pod passes now, and whether it fits an empty template node."""
        by_job: dict[str, int] = {}
        for job_name in self.unschedulable.values():
            by_job[job_name] = by_job.get(job_name, 0) + 1
        pending = []
        for job_name, count in by_job.items():
            spec = self.jobs[job_name].spec
            pod = self._template(spec)
            requests = self.sched.shape_of(pod).requests        # as NodeResourcesFit counts them
            need = Need(requests.get("cpu", 0), requests.get("memory", 0), spec.gpus, spec.gpu_milli)
            nodes = copies_per_node(self.sched, pod, 1)[0] > 0
            on_template = self.on_template.get(job_name)
            if on_template is None:         # the template node stays empty: its verdict is the job's for good
                on_template = bool(copies_per_node(self._template_scheduler(), pod, 1)[0][0])
                self.on_template[job_name] = on_template
            pending += [Pending(need, nodes, on_template)] * count
        return pending

    def _on_provisioned(self, t: float, name: str) -> None:
        self.autoscaler.joined(name)
        self._node_in(t, name, failed=False)
        self._emptied(name, t)

    def _on_scale_down(self, t: float, name: str) -> None:
        """A node the autoscaler added goes if it held no pod for scale_down_s."""
        since = self.emptied.get(name)
        if name not in self.autoscaler.added or not self.usage.empty(name) or since is None \
                or t - since < self.autoscaler.scale_down_s:
            return
        del self.emptied[name]
        self._node_out(t, name, failed=False)
        self.autoscaler.gone(name)

    def _on_repair(self, t: float, name: str) -> None:
        self.down.discard(name)
        self._node_in(t, name, failed=True)

    def _node_out(self, t: float, name: str, failed: bool) -> list:
        """A node leaves the cluster (failed, or removed by the autoscaler); its pods are deleted and its GPUs go to
        the ledger's down or unprovisioned state. Returns the lost pods to recreate."""
        self._advance(t)
        recreate = self._call(self.sched.remove_node, name)
        self.usage.set_up(name, False)
        if failed:
            self.ledger.down += self.usage.milli_of(name)
        else:
            self.ledger.unprovisioned += self.usage.milli_of(name)
        return recreate

    def _node_in(self, t: float, name: str, failed: bool) -> None:
        """A node (re)joins the cluster: repaired, or provisioned by the autoscaler."""
        self._advance(t)
        self.usage.set_up(name, True)
        if failed:
            self.ledger.down -= self.usage.milli_of(name)
        else:
            self.ledger.unprovisioned -= self.usage.milli_of(name)
        self._call(self.sched.add_nodes, [self.nodes[name]])

    # -- objects ------------------------------------------------------------------------------------
    def _pod_group(self, spec: JobSpec) -> PodGroup:
        pg = {"schedulingPolicy": {"gang": {"minCount": spec.workers}}, "priority": spec.priority}
        if self.policy.topology:
            pg["schedulingConstraints"] = {"topology": [{"key": self.policy.topology}]}
        if self.policy.preemption:
            pg["disruptionMode"] = "PodGroup"
        return PodGroup.model_validate({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                                        "metadata": {"name": spec.name, "namespace": spec.klass}, "spec": pg})

    def _add_pods(self, workers: list, recreated: bool = True) -> None:
        """Create the pods of (job, worker index) pairs: a job's first pods, or pods the Job controller recreates
        (named apart: -r1, -r2, ...)."""
        pods = []
        for job, worker in workers:
            spec = job.spec
            template = self._template(spec)
            if recreated:
                job.recreated += 1
                name = f"{spec.name}-{worker}-r{job.recreated}"
            else:
                name = f"{spec.name}-{worker}"
            meta = template.metadata.model_copy(update={"name": name})
            pod = template.model_copy(update={"metadata": meta})
            job.live[pod.key] = worker
            self.pod_job[pod.key] = job
            pods.append(pod)
        self._call(self.sched.add_pods, pods)

    def _template(self, spec: JobSpec):
        """The pod every worker of `spec` is a copy of (one spec object per job: intake validates it once); a
        Deployment's is a pod of its ReplicaSet, as the controllers make it."""
        template = self.templates.get(spec.name)
        if template is None:
            if spec.service:
                template = expand_controllers([self._deployment(spec)], [], lambda ds: []).pods[0]
            else:
                template = self._job_pod(spec)
            self.templates[spec.name] = template
        return template

    def _deployment(self, spec: JobSpec) -> Deployment:
        """The apps/v1 Deployment of a service: `workers` replicas of the job's pod, selected by its job label."""
        pod = self._job_pod(spec)
        return Deployment.model_validate({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": spec.name, "namespace": spec.klass},
            "spec": {"replicas": spec.workers, "selector": {"matchLabels": {"job": spec.name}},
                     "template": {"metadata": {"labels": pod.metadata.labels, "annotations": pod.metadata.annotations},
                                  "spec": pod.spec.model_dump(by_alias=True, exclude_none=True, mode="json")}}})

    def _job_pod(self, spec: JobSpec):
        """A worker of `spec` as the simulator makes it (a gang member when the policy makes gangs)."""
        shared = spec.gpus and (spec.gpu_milli < MILLI or spec.gpu_models)
        template = pod_template(spec.cpu, spec.memory, gpus=0 if shared else spec.gpus, namespace=spec.klass,
                                labels={"job": spec.name, "class": spec.klass})
        if shared:           # a share of a device, or devices of some models: GpuShare (sched/gpushare.py)
            notes = {ALI_GPU_COUNT: str(spec.gpus), ALI_GPU_MILLI: str(spec.gpu_milli)}
            if spec.gpu_models:
                notes[ALI_GPU_MODEL] = spec.gpu_models
            template = template.model_copy(update={"metadata": template.metadata.model_copy(
                update={"annotations": notes})})
        update = {"priority": spec.priority}
        if self.policy.groups and spec.workers > 1 and not spec.service:
            update["scheduling_group"] = PodSchedulingGroup(pod_group_name=spec.name)
        template = template.model_copy(update={"spec": template.spec.model_copy(update=update)})
        return template

    # -- the result ---------------------------------------------------------------------------------
    def _result(self, wall_s: float) -> SimResult:
        classes = sorted({j.spec.klass for j in self.jobs.values()})
        counts, pending, completion, waits = {}, {}, {}, {}
        for klass in classes:
            of = [j for j in self.jobs.values() if j.spec.klass == klass]
            # Finished: over after it ran (a Deployment deleted before any replica started is over, not finished).
            done = [j for j in of if j.finished is not None and j.first_start is not None]
            counts[klass] = {"arrived": len(of), "started": sum(j.first_start is not None for j in of),
                             "finished": len(done)}
            waits[klass] = [j.first_start - j.spec.arrival for j in of if j.first_start is not None]
            pending[klass] = _quantiles(waits[klass])
            completion[klass] = _quantiles([j.finished - j.spec.arrival for j in done])
        return SimResult(self.policy.name, self.seed, self.cluster_nodes, self.ledger.total // MILLI, self.horizon,
                         counts, pending, completion,
                         {k: v / 3600 / MILLI for k, v in self.ledger.seconds.items()},
                         self.preemptions, self.destroyed / 3600 / MILLI, self.pods_bound, self.applied,
                         self.autoscaler.joins if self.autoscaler else 0,
                         self.autoscaler.removed if self.autoscaler else 0, wall_s,
                         self.scheduler_s, self.ledger.samples, waits, self.usage.racks, self.rack_samples)
