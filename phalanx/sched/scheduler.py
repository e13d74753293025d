"""The scheduler: a workload-aware queue on an explicit clock, pod cycles, PodGroup cycles and Permit.

Pods leave the activeQ in PrioritySort order (priority desc, then arrival). A plain pod is placed by its own
cycle; consecutive plain pods of one shape are placed together by the exact batch path (placement.py). A
PodGroup is one queue entry: its pending members are placed from one snapshot (members by priority, then
arrival; identical members batched) and bound together when at least minCount are placed, else every
tentative placement is undone and the group backs off (KEP-4671 "Workload Scheduling Cycle"). With
gang_mode="permit" gangs instead go pod by pod and placed members wait at Permit, holding their nodes, until
the gang is complete or the timeout rejects them all (the v1.35 GangScheduling plugin).

Time never passes by itself: `step(until=t)` moves the clock, `run_until_idle()` goes on while anything can
still happen without an outside event. Events (pods, groups, nodes added or removed) come in through methods.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..cluster_models import ClusterObjects, InputError, Job, Node, Pod, PodGroup, PodGroupIndex, job_objects, owned_by
from ..cluster_models.tensors import add_nodes, bind_existing, compile_nodes, update_node
from .backends import SCHEDULER_BACKENDS, make_placer
from .cluster import Cluster
from .config import DEFAULT_PROFILE, Profile
from .cycle import BalanceCache, Evaluation, Prepared
from .gpushare import device_request
from .placement import NO_NODES_MESSAGE, Placement, Placer
from .podgroups import PERMIT_PLUGIN, QUORUM_MESSAGE, GroupState, go_duration, infeasible_message
from .queue import PodRun, SchedulingQueue, backoff_s, cut_runs
from .records import (BOUND, DELETED, PERMIT_REJECTED, POD_GROUP_SCHEDULED, UNSCHEDULABLE, WAITING, Record)
from .shapes import PodShape, ShapeTable
from .topology import topology_attempt

__all__ = ["GANG_MODES", "GATED_MESSAGE", "NO_NODES_MESSAGE", "ScheduleResult", "Scheduler", "GroupAttempt"]

TIE_BREAKS = ("first", "random")
GANG_MODES = ("podgroup", "permit")
GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"   # PreEnqueue (SchedulingGates)
DEFAULT_PERMIT_TIMEOUT_S = 300.0


@dataclass
class ScheduleResult:
    bindings: dict[str, str] = field(default_factory=dict)        # "ns/name" -> node
    unschedulable: dict[str, str] = field(default_factory=dict)   # "ns/name" -> last reason it is pending
    warnings: list[str] = field(default_factory=list)
    schedule_s: float = 0.0      # intake (queueing, PreEnqueue, shapes) and scheduling
    intake_s: float = 0.0        # the intake part of schedule_s
    pod_cycles: int = 0          # per-pod evaluations over all nodes
    batch_rounds: int = 0        # batch evaluations over all nodes (each places many pods)
    group_attempts: int = 0      # PodGroup cycles
    pod_groups: dict[str, tuple[str, str, str]] = field(default_factory=dict)   # key -> PodGroupScheduled
                                                                                # (status, reason, message)


@dataclass
class GroupAttempt:
    """One PodGroup cycle: what was placed, what fit nowhere and why, and whether minCount was reached."""
    members: int
    placed: list[Placement] = field(default_factory=list)
    failed: list[tuple[list[Pod], str]] = field(default_factory=list)   # (pods, FitError) per run
    infeasible: str | None = None      # PlacementFeasible's message when the group cannot reach minCount
    group_message: str | None = None   # topology groups: why no placement could take the group (its condition)
    placed_elsewhere: int = 0          # topology groups that failed: members the first placement's copy took

    @property
    def placed_count(self) -> int:
        return sum(len(pl.pods) for pl in self.placed)


class Scheduler:
    """Schedules a Cluster's pods with one profile on one array backend."""

    def __init__(self, cluster: Cluster, profile: Profile = DEFAULT_PROFILE, *, backend: str = "numpy",
                 tie_break: str = "first", seed: int = 0, batching: bool = True, gang_mode: str = "podgroup",
                 permit_timeout_s: float = DEFAULT_PERMIT_TIMEOUT_S):
        if tie_break not in TIE_BREAKS:
            raise ValueError(f"tie_break must be one of {TIE_BREAKS}, got {tie_break!r}")
        if backend not in SCHEDULER_BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; use one of {SCHEDULER_BACKENDS}")
        if gang_mode not in GANG_MODES:
            raise ValueError(f"gang_mode must be one of {GANG_MODES}, got {gang_mode!r}")
        if not permit_timeout_s > 0:
            raise ValueError(f"permit_timeout_s must be > 0, got {permit_timeout_s!r}")
        self.cluster = cluster
        self.profile = profile
        self.backend = backend
        self.tie_break = tie_break
        self.rng = np.random.default_rng(seed)
        self.gang_mode = gang_mode
        self.permit_timeout_s = float(permit_timeout_s)
        self.placer = make_placer(backend, cluster, profile, batching)   # backends.py; raises BackendUnavailable
        self.backend = self.placer.backend                                 # "auto" resolved
        self.shapes = ShapeTable(profile.system_default_spreading)
        self.now = 0.0
        self.queue = SchedulingQueue()
        self.groups: dict[str, GroupState] = {}
        self._index = PodGroupIndex(ClusterObjects(pod_groups=cluster.pod_groups, workloads=cluster.workloads))
        self._group_of: dict[str, GroupState] = {}           # pod key -> its group, for grouped pods
        self._dangling: dict[str, tuple[Pod, int]] = {}      # pods whose PodGroup is missing
        self._gated: dict[str, Pod] = {}
        self._unschedulable: dict[str, tuple[Pod, PodShape, int, int]] = {}   # key -> (pod, shape, seq, prio)
        self._attempts: dict[str, tuple[int, float]] = {}    # pod key -> (failed attempts, last failure time)
        self._last_message: dict[str, str] = {}              # pending pod -> why it is pending
        self._deleted: dict[str, int] = {}                   # queued plain pods deleted before their turn: key
                                                             # -> the next seq then (older pods of that name are gone)
        self._progress = 0                                   # bindings + outside events, to spot Permit livelocks
        self._seq = 0
        self._log: list[tuple] = []                          # decisions, materialised as Records on demand
        self._stats = ScheduleResult()
        self._live: set[str] = set()                         # pods added and not deleted (pending or bound)
        self._warned: set[int] = set()                       # shapes whose unmodelled constraints were reported
        for pod, _ in cluster.tensors.live_bound():
            gs = self._resolve(pod)[0]
            if gs is not None:
                gs.bound.add(pod.key)
                self._group_of[pod.key] = gs

    # -- compatibility with the one-pass API -------------------------------------------------------
    @property
    def next_start(self) -> int:
        return self.placer.next_start

    @property
    def balance_cache(self) -> BalanceCache:
        return self.placer.balance_cache

    def evaluate(self, shape: PodShape, rank=None, advance: bool = True) -> tuple[Prepared, Evaluation, int]:
        return self.placer.evaluate(shape, rank, advance)

    def message(self, ev: Evaluation) -> str:
        return self.placer.message(ev)

    def schedule(self) -> ScheduleResult:
        """Take every pod waiting in `cluster.pending`, run until idle, and report this call's decisions: pods
        bound, and for each pod still pending the last reason why."""
        mine = self.profile.scheduler_name
        others = [p for p in self.cluster.pending if p.spec.scheduler_name != mine]
        result = ScheduleResult(warnings=list(self.cluster.warnings))
        result.warnings += [f"Pod {p.key}: spec.schedulerName {p.spec.scheduler_name!r} is not this profile's "
                            f"{mine!r}; left pending" for p in others]
        start_log, self._stats = len(self._log), result
        t0 = time.perf_counter()
        self.add_pods([p for p in self.cluster.pending if p.spec.scheduler_name == mine], result.warnings)
        result.intake_s = time.perf_counter() - t0
        self._run(math.inf)       # run_until_idle without making Records (the log is read directly below)
        result.schedule_s = time.perf_counter() - t0
        for entry in self._log[start_log:]:
            if entry[0] == BOUND:
                result.bindings.update(zip((p.key for p in entry[2]), entry[4]))
        result.unschedulable = dict(self._last_message)
        result.pod_groups = {key: gs.condition for key, gs in self.groups.items() if gs.condition is not None}
        self.cluster.pending = others
        return result

    # -- events in ----------------------------------------------------------------------------------
    def add_pods(self, pods, warnings: list[str] | None = None) -> list[Record]:
        """Pending pods arrive now (in this order). Raises InputError, changing nothing, for a pod that is
        already bound, already known, or names an unknown PriorityClass."""
        pods = list(pods)
        keys = [p.key for p in pods]
        seen = set(keys)
        check_bound = self.cluster.tensors.log_mark() > 0
        for pod, key in zip(pods, keys):
            if pod.spec.node_name:
                raise InputError(f"Pod {key}: spec.nodeName: already bound; add it to the cluster input instead")
            if key in self._live or (check_bound and self.cluster.tensors.node_of(key) >= 0):
                raise InputError(f"Pod {key}: metadata.name: already exists")
            self.cluster.priority(pod)
            device_request(pod)          # GPU-share annotations are valid (sched/gpushare.py)
        if len(seen) < len(keys):
            dup = next(k for i, k in enumerate(keys) if k in keys[:i])
            raise InputError(f"Pod {dup}: metadata.name: already exists")
        start = len(self._log)
        self._progress += 1
        self._live.update(seen)
        plain: list[tuple[Pod, int]] = []
        touched: list[GroupState] = []
        for pod in pods:
            seq, self._seq = self._seq, self._seq + 1
            if pod.spec.scheduling_gates:
                self._gated[pod.key] = pod
                self._fail([pod], GATED_MESSAGE)
                continue
            gs, reason = self._resolve(pod)
            if reason is None:    # DRA: the pod's claims; its PodGroup's spec.resourceClaims decide which are shared
                self.cluster.claims.register(pod, gs.group if gs is not None else None)
            if reason is not None:
                self._dangling[pod.key] = (pod, seq)
                self._fail([pod], reason)
            elif gs is None or (self.gang_mode == "permit" and not gs.gang):
                plain.append((pod, seq))
            else:
                self._join(gs, pod, seq)
                touched.append(gs)
        self._enqueue_plain(plain, warnings)
        for gs in dict.fromkeys(touched):
            self._group_changed(gs, warnings)
        return self._records(start)

    def add_pod_group(self, group: PodGroup) -> list[Record]:
        """A PodGroup appears; pods that were waiting for it join it."""
        if group.key in self.groups or any(g.key == group.key for g in self.cluster.pod_groups):
            raise InputError(f"PodGroup {group.key}: metadata.name: already exists")
        start = len(self._log)
        self._progress += 1
        self.cluster.pod_groups.append(group)
        self._index = PodGroupIndex(ClusterObjects(pod_groups=self.cluster.pod_groups,
                                                   workloads=self.cluster.workloads))
        waiting = sorted(self._dangling.values(), key=lambda ps: ps[1])
        touched = []
        for pod, seq in waiting:
            gs, reason = self._resolve(pod)
            if reason is None:
                del self._dangling[pod.key]
                self.cluster.claims.register(pod, gs.group)      # DRA claims, now that the group is known
                self._join(gs, pod, seq)
                touched.append(gs)
        for gs in dict.fromkeys(touched):
            self._group_changed(gs)
        return self._records(start)

    def add_job(self, job: Job) -> list[Record]:
        """The Job controller's reaction to a new Job: its Workload and gang PodGroup (Indexed Jobs with
        parallelism > 1 and completions == parallelism), then its pods."""
        if any(j.key == job.key for j in self.cluster.jobs):
            raise InputError(f"Job {job.key}: metadata.name: already exists")
        made = job_objects(job)
        start = len(self._log)
        if made.pod_group is not None and any(g.key == made.pod_group.key for g in self.cluster.pod_groups):
            raise InputError(f"Job {job.key}: PodGroup {made.pod_group.key} already exists")
        self.cluster.jobs.append(job)
        if made.workload is not None:
            self.cluster.workloads.append(made.workload)
        if made.pod_group is not None:
            self.add_pod_group(made.pod_group)
        self.add_pods(made.pods)
        return self._records(start)

    def delete_job(self, key: str) -> list[Record]:
        """Deleting a Job removes what it owns: its pods (bound or pending), its PodGroup and Workload."""
        job = next((j for j in self.cluster.jobs if j.key == key), None)
        if job is None:
            raise InputError(f"Job {key}: not found")
        start = len(self._log)
        owned = [p.key for p in self._pods_of(job)]
        for pod_key in owned:
            self.delete_pod(pod_key, f"owner Job {key} deleted")
        for group in [g for g in self.cluster.pod_groups if owned_by(g, job)]:
            self.cluster.pod_groups.remove(group)
            self.groups.pop(group.key, None)
        self.cluster.workloads = [w for w in self.cluster.workloads if not owned_by(w, job)]
        self.cluster.jobs.remove(job)
        self._index = PodGroupIndex(ClusterObjects(pod_groups=self.cluster.pod_groups,
                                                   workloads=self.cluster.workloads))
        return self._records(start)

    def _pods_of(self, job: Job) -> list[Pod]:
        live = [p for p, _ in self.cluster.tensors.live_bound() if owned_by(p, job)]
        for gs in self.groups.values():
            live += [p for p, _ in gs.waiting.values() if owned_by(p, job)]
            live += [p for p, _ in gs.pending.values() if owned_by(p, job)]
        live += [p for p, *_ in self._unschedulable.values() if owned_by(p, job)]
        live += [p for p in self._queued_pods() if owned_by(p, job)]
        unique = {p.key: p for p in live}
        return list(unique.values())

    def _queued_pods(self) -> list[Pod]:
        """Plain pods still in the activeQ or backoffQ."""
        return [p for entry in self.queue.entries() if isinstance(entry, PodRun)
                for p, seq in zip(entry.pods, entry.seqs) if not self._is_deleted(p, seq)]

    def _is_deleted(self, pod: Pod, seq: int) -> bool:
        """A queued pod deleted before its turn (a pod re-created under its name arrives later: not deleted)."""
        return seq < self._deleted.get(pod.key, -1)

    def delete_pod(self, key: str, reason: str = "deleted") -> list[Record]:
        """A pod leaves the cluster (deleted, or completed: reason says which). Its node's resources are
        released, and pods and groups waiting for cluster changes are retried."""
        start = len(self._log)
        if not self._known(key):
            raise InputError(f"Pod {key}: not found")
        self._progress += 1
        gs = self._group_of.pop(key, None)
        freed = self.cluster.tensors.unbind(key) >= 0
        self.cluster.claims.unregister(key)      # DRA: its claims released, those generated for it alone deleted
        self.cluster.gpus.release(key)           # GpuShare: the GPU share it held
        # Only plain pods (and, in permit mode, members let into the pod queue) sit in the queue's runs.
        in_runs = gs is None or (self.gang_mode == "permit" and (not gs.gang or key in gs.enqueued))
        if gs is not None:
            gs.bound.discard(key)
            gs.waiting.pop(key, None)
            gs.pending.pop(key, None)
            gs.enqueued.discard(key)
            if not gs.waiting:
                gs.permit_deadline = None
        parked = [pool.pop(key, None) is not None for pool in (self._unschedulable, self._dangling, self._gated)]
        self._last_message.pop(key, None)
        self._attempts.pop(key, None)
        self._live.discard(key)
        if not freed and in_runs and not any(parked):
            self._deleted[key] = self._seq
        self._log.append((DELETED, self.now, key, reason))
        if freed:
            self._cluster_changed()
        return self._records(start)

    def add_nodes(self, nodes: list[Node]) -> list[Record]:
        start = len(self._log)
        names = {n.metadata.name for n in nodes}
        clash = names & set(self.cluster.tensors.node_index) or (len(names) < len(nodes) and names)
        if clash:
            raise InputError(f"Node {sorted(clash)[0]}: metadata.name: already exists")
        self._progress += 1
        add_nodes(self.cluster.tensors, nodes)
        self.cluster.claims.relink(self.cluster.tensors.node_index)    # DRA devices of the new nodes
        self.cluster.nodes.extend(nodes)
        self.cluster.gpus.rebuild(self.cluster.nodes)                  # GpuShare: devices of the new nodes
        self.placer.nodes_changed()
        self._cluster_changed()
        return self._records(start)

    def update_node(self, node: Node) -> list[Record]:
        """A node's labels, taints, allocatable or cordon changed; pods already on it stay."""
        start = len(self._log)
        i = self.cluster.tensors.node_index.get(node.metadata.name)
        if i is None:
            raise InputError(f"Node {node.metadata.name}: not found")
        self._progress += 1
        update_node(self.cluster.tensors, node)
        self.cluster.nodes[i] = node
        self.cluster.gpus.rebuild(self.cluster.nodes)                  # GpuShare: its devices may have changed
        self.placer.nodes_changed()
        self._cluster_changed()
        return self._records(start)

    def remove_node(self, name: str) -> list[Record]:
        """A node leaves; pods on it are deleted (a controller would recreate them as new pods)."""
        start = len(self._log)
        tensors = self.cluster.tensors
        node_id = tensors.node_index.get(name)
        if node_id is None:
            raise InputError(f"Node {name}: not found")
        self._progress += 1
        for pod, n in tensors.live_bound():
            if n == node_id:
                self.delete_pod(pod.key, f"node {name} removed")
        keep = [n for n in self.cluster.nodes if n.metadata.name != name]
        survivors = tensors.live_bound()
        rebuilt = compile_nodes(keep)
        for pod, n in survivors:
            bind_existing(rebuilt, pod, rebuilt.node_index[tensors.nodes.names[n]])
        self.cluster.tensors, self.cluster.nodes = rebuilt, keep
        self.cluster.claims.relink(rebuilt.node_index)                 # DRA device rows follow node ids
        self.cluster.gpus.rebuild(keep)                                # GpuShare rows follow node ids
        self.placer.nodes_changed()
        self.placer.next_start = self.placer.next_start % max(1, len(keep))
        self._cluster_changed()
        return self._records(start)

    # -- the clock ----------------------------------------------------------------------------------
    def step(self, until: float) -> list[Record]:
        """Schedule everything that can go before time `until` (seconds on this scheduler's clock), then set
        the clock to `until`. Returns what happened, in order."""
        if until < self.now:
            raise ValueError(f"until={until} is before the scheduler's clock ({self.now})")
        start = len(self._log)
        self._run(until)
        if math.isfinite(until):
            self.now = until
        return self._records(start)

    def run_until_idle(self) -> list[Record]:
        """Go on, moving the clock to backoff expiries and Permit timeouts, until nothing can happen without an
        outside event. Returns what happened.

        In permit mode gangs that want the same nodes can take turns at Permit for ever (each timeout frees the
        nodes the other gang waits for, as upstream's would). That is no progress, so run_until_idle also stops
        before a Permit timeout would reject a gang a second time with nothing bound and no event in between;
        the waiting gang keeps its nodes, and `step` carries the alternation on."""
        start = len(self._log)
        self._run(math.inf)
        return self._records(start)

    def _run(self, until: float) -> None:
        while True:
            self._release_backoff()
            self._expire_permits()
            entry = self.queue.pop_active()
            if entry is not None:
                self._attempt(entry)
                continue
            backoff, permit = self.queue.next_backoff_expiry(), self._next_permit_deadline()
            due = [t for t in (backoff, permit) if t is not None]
            if not due or min(due) > until:
                return
            if until == math.inf and permit == min(due) and self._permit_livelock(permit):
                return
            self.now = max(self.now, min(due))

    def _permit_livelock(self, deadline: float) -> bool:
        """A gang timing out at `deadline` was already rejected at Permit with nothing bound and no outside event
        since: the timeouts only hand the same nodes from gang to gang."""
        return any(gs.permit_deadline == deadline and gs.rejected_at == self._progress for gs in self.groups.values())

    # -- records ------------------------------------------------------------------------------------
    @property
    def records(self) -> list[Record]:
        """Everything that happened so far."""
        return self._records(0)

    def _records(self, start: int) -> list[Record]:
        out: list[Record] = []
        for entry in self._log[start:]:
            kind, t = entry[0], entry[1]
            if kind in (BOUND, WAITING):
                out.extend(Record(t, kind, p.key, node) for p, node in zip(entry[2], entry[4]))
            elif kind == UNSCHEDULABLE or kind == PERMIT_REJECTED:
                out.extend(Record(t, kind, p.key, message=entry[3]) for p in entry[2])
            elif kind == DELETED:
                out.append(Record(t, kind, entry[2], message=entry[3]))
            else:
                status, reason, message = entry[3]
                out.append(Record(t, kind, entry[2], message=message, status=status, reason=reason))
        return out

    def _bound(self, pods: list[Pod], node_ids: np.ndarray) -> None:
        self._progress += 1
        names = self.cluster.tensors.nodes.names
        self._log.append((BOUND, self.now, pods, node_ids, [names[n] for n in node_ids.tolist()]))
        if self._last_message:
            for pod in pods:
                self._last_message.pop(pod.key, None)

    def _fail(self, pods: list[Pod], message: str, kind: str = UNSCHEDULABLE) -> None:
        self._log.append((kind, self.now, pods, message))
        for pod in pods:
            self._last_message[pod.key] = message

    def _set_condition(self, gs: GroupState, status: str, reason: str, message: str) -> None:
        """PodGroupScheduled; True is terminal (KEP-4671: later failed cycles do not regress it)."""
        if gs.scheduled or gs.condition == (status, reason, message):
            return
        gs.condition = (status, reason, message)
        self._log.append((POD_GROUP_SCHEDULED, self.now, gs.key, gs.condition))

    # -- queue bookkeeping ------------------------------------------------------------------------------
    def _known(self, key: str) -> bool:
        return key in self._live or self.cluster.tensors.node_of(key) >= 0

    def _resolve(self, pod: Pod) -> tuple[GroupState | None, str | None]:
        res = self._index.resolve(pod)
        if res.group is None:
            return None, res.reason
        gs = self.groups.get(res.group.key)
        if gs is None:
            gs = self.groups[res.group.key] = GroupState(res.group)
        return gs, None

    def _join(self, gs: GroupState, pod: Pod, seq: int) -> None:
        gs.pending[pod.key] = (pod, seq)
        gs.first_seq = min(gs.first_seq, seq)
        self._group_of[pod.key] = gs

    def _enqueue_plain(self, pods: list[tuple[Pod, int]], warnings: list[str] | None = None) -> None:
        """Pods (with their arrival seq) into the activeQ as runs; runs are cut in queue order."""
        if not pods:
            return
        prios = [self.cluster.priority(p) for p, _ in pods]
        order = np.lexsort((np.array([s for _, s in pods]), -np.array(prios, np.int64))).tolist()
        ordered = [pods[i][0] for i in order]
        shapes = [self._shape(p, warnings) for p in ordered]
        for run in cut_runs(ordered, shapes, [prios[i] for i in order], [pods[i][1] for i in order]):
            self.queue.push_active(run, run.priority, run.seqs[0])

    def _shape(self, pod: Pod, warnings: list[str] | None) -> PodShape:
        shape = self.shapes.intern(pod)
        if shape.unmodelled and warnings is not None and shape.id not in self._warned:
            self._warned.add(shape.id)
            warnings.extend(f"Pod {pod.key}: {w}" for w in shape.unmodelled)
        return shape

    def _group_priority(self, gs: GroupState) -> int:
        """PodGroup spec.priority, else its priorityClassName's value, else its highest pending member's."""
        spec = gs.group.spec
        if spec.priority is not None:
            return spec.priority
        if spec.priority_class_name:
            cls = self.cluster.priority_classes.get(spec.priority_class_name)
            if cls is None:
                raise InputError(f"PodGroup {gs.key}: spec.priorityClassName: PriorityClass "
                                 f"\"{spec.priority_class_name}\" not found")
            return cls.value
        return max((self.cluster.priority(p) for p, _ in gs.pending.values()), default=0)

    def _group_changed(self, gs: GroupState, warnings: list[str] | None = None) -> None:
        """Members were added (or the group appeared): PreEnqueue again, and wake the group if it waits."""
        for pod, _ in gs.pending.values():
            self._shape(pod, warnings)
        if not gs.quorum():
            self._fail([p for p, _ in gs.pending.values() if self._last_message.get(p.key) != QUORUM_MESSAGE],
                       QUORUM_MESSAGE)
            return
        if self.gang_mode == "permit":
            ready = [(p, s) for p, s in gs.pending.values() if p.key not in gs.enqueued]
            gs.enqueued.update(p.key for p, _ in ready)
            self._enqueue_plain(ready, warnings)
            return
        if gs.state in ("idle", "unschedulable"):
            self._activate_group(gs)

    def _activate_group(self, gs: GroupState) -> None:
        if not gs.pending:
            gs.state = "idle"
            return
        ready_at = gs.failed_at + backoff_s(gs.attempts) if gs.attempts else self.now
        if ready_at <= self.now:
            gs.state = "active"
            self.queue.push_active(gs, self._group_priority(gs), gs.first_seq)
        else:
            gs.state = "backoff"
            self.queue.push_backoff(gs, ready_at, gs.first_seq)

    def _cluster_changed(self, exclude: GroupState | None = None) -> None:
        """A change that can make pending pods fit (resources freed, a node added or changed): every pod and
        group waiting in the unschedulable pool moves to the activeQ, or to the backoffQ while backing off."""
        ready: list[tuple[Pod, int]] = []
        for key, (pod, shape, seq, prio) in list(self._unschedulable.items()):
            if exclude is not None and self._group_of.get(key) is exclude:
                continue
            del self._unschedulable[key]
            attempts, failed_at = self._attempts.get(key, (0, self.now))
            ready_at = failed_at + backoff_s(attempts)
            if ready_at <= self.now:
                ready.append((pod, seq))
            else:
                self.queue.push_backoff(PodRun(shape, [pod], [seq], prio), ready_at, seq)
        self._enqueue_plain(ready)
        for gs in self.groups.values():
            if gs.state == "unschedulable" and gs is not exclude:
                self._activate_group(gs)

    def _release_backoff(self) -> None:
        for entry in self.queue.pop_expired(self.now):
            if isinstance(entry, GroupState):
                if entry.state == "backoff":
                    entry.state = "active"
                    self.queue.push_active(entry, self._group_priority(entry), entry.first_seq)
            else:
                self.queue.push_active(entry, entry.priority, entry.seqs[0])

    def _rank(self) -> np.ndarray:
        n = self.cluster.tensors.nodes.size
        return np.arange(n) if self.tie_break == "first" else self.rng.permutation(n)

    def _park(self, pods: list[Pod], shape: PodShape, seqs: list[int], prio: int) -> None:
        """Pods that fit nowhere wait in the unschedulable pool for a cluster event."""
        for pod, seq in zip(pods, seqs):
            attempts = self._attempts.get(pod.key, (0, 0.0))[0] + 1
            self._attempts[pod.key] = (attempts, self.now)
            self._unschedulable[pod.key] = (pod, shape, seq, prio)

    # -- attempts -----------------------------------------------------------------------------------
    def _attempt(self, entry) -> None:
        if isinstance(entry, GroupState):
            if entry.state == "active" and not entry.pending:
                entry.state = "idle"
            elif entry.state == "active":
                shape = self._train_shape(entry)
                if shape is None:
                    self._group_cycle(entry)
                else:
                    self._gang_train(entry, shape)
            return
        runs = [entry]
        while isinstance(self.queue.peek_active(), PodRun) and self.queue.peek_active().shape is entry.shape:
            runs.append(self.queue.pop_active())      # opportunistic batching across priorities
        pods = [p for r in runs for p in r.pods]
        seqs = [s for r in runs for s in r.seqs]
        prios = [r.priority for r in runs for _ in r.pods]
        if self._deleted:
            alive = [i for i, (p, s) in enumerate(zip(pods, seqs)) if not self._is_deleted(p, s)]
            for i in sorted(set(range(len(pods))) - set(alive)):
                del self._deleted[pods[i].key]
            pods, seqs, prios = [pods[i] for i in alive], [seqs[i] for i in alive], [prios[i] for i in alive]
            if not pods:
                return
        out = self.placer.place_run(entry.shape, pods, self._rank())
        self._stats.pod_cycles += out.pod_cycles
        self._stats.batch_rounds += out.batch_rounds
        for pl in out.placed:
            self._commit_plain(pl)
        if out.failed:
            self._fail(out.failed, out.message)
            k = len(pods) - len(out.failed)
            for pod, seq, prio in zip(out.failed, seqs[k:], prios[k:]):
                self._park([pod], entry.shape, [seq], prio)

    def _commit_plain(self, pl: Placement) -> None:
        """Bind placed plain pods; in permit mode gang members wait at Permit instead, holding their nodes."""
        if not self._group_of:
            self._bound(pl.pods, pl.node_ids)
            return
        names = self.cluster.tensors.nodes.names
        for pod, node in zip(pl.pods, pl.node_ids.tolist()):
            gs = self._group_of.get(pod.key)
            if gs is None or not gs.gang:
                self._bound([pod], np.array([node]))
                continue
            gs.waiting[pod.key] = gs.pending.pop(pod.key)
            self._log.append((WAITING, self.now, [pod], None, [names[node]]))
            self._last_message.pop(pod.key, None)
            if gs.permit_deadline is None:
                gs.permit_deadline = self.now + self.permit_timeout_s
            if len(gs.waiting) + len(gs.bound) >= gs.min_count:
                self._allow(gs)

    def _allow(self, gs: GroupState) -> None:
        tensors = self.cluster.tensors
        pods = [p for p, _ in gs.waiting.values()]
        self._bound(pods, np.array([tensors.node_of(p.key) for p in pods], np.int64))
        gs.bound.update(gs.waiting)
        gs.waiting.clear()
        gs.permit_deadline = None
        self._set_condition(gs, "True", "Scheduled", "")

    def _next_permit_deadline(self) -> float | None:
        deadlines = [gs.permit_deadline for gs in self.groups.values() if gs.permit_deadline is not None]
        return min(deadlines) if deadlines else None

    def _expire_permits(self) -> None:
        for gs in self.groups.values():
            if gs.permit_deadline is None or gs.permit_deadline > self.now:
                continue
            waiting = list(gs.waiting.values())
            pods = [p for p, _ in waiting]
            message = f"rejected due to timeout after waiting {go_duration(self.permit_timeout_s)} at plugin " \
                      f"{PERMIT_PLUGIN}"
            for pod in pods:
                self.cluster.tensors.unbind(pod.key)
                self.cluster.claims.release(pod.key)     # DRA: claims left without users are deallocated
                self.cluster.gpus.release(pod.key)       # GpuShare: its GPU share
            gs.waiting.clear()
            gs.permit_deadline = None
            gs.rejected_at = self._progress
            self._fail(pods, message, PERMIT_REJECTED)
            for pod, seq in waiting:
                gs.pending[pod.key] = (pod, seq)
                self._park([pod], self.shapes.intern(pod), [seq], self.cluster.priority(pod))
            self._set_condition(gs, "False", "Unschedulable", message)
            self._cluster_changed(exclude=gs)

    def try_group(self, gs: GroupState, placer: Placer | None = None, rank: np.ndarray | None = None) -> GroupAttempt:
        """Place the group's pending members from the current state (members by priority, then arrival; runs
        of identical members batched), stopping as soon as minCount is out of reach. The placements stay in
        the node table; the caller commits or undoes them. `placer`/`rank`: a topology placement's restricted
        copy of the cluster (topology.py) instead of the whole one."""
        placer = self.placer if placer is None else placer
        members = sorted(gs.pending.values(), key=lambda ps: (-self.cluster.priority(ps[0]), ps[1]))
        pods = [p for p, _ in members]
        shapes = [self.shapes.intern(p) for p in pods]
        attempt = GroupAttempt(members=len(pods))
        scheduled, remaining = len(gs.bound), len(pods)
        for run in cut_runs(pods, shapes, [0] * len(pods), [s for _, s in members]):
            out = placer.place_run(run.shape, run.pods, self._rank() if rank is None else rank)
            self._stats.pod_cycles += out.pod_cycles
            self._stats.batch_rounds += out.batch_rounds
            attempt.placed.extend(out.placed)
            if out.failed:
                attempt.failed.append((out.failed, out.message))
            scheduled += len(run.pods) - len(out.failed)
            remaining -= len(run.pods)
            if scheduled + remaining < gs.min_count:
                attempt.infeasible = infeasible_message(gs.min_count, scheduled, remaining)
                break
        return attempt

    def _train_shape(self, gs: GroupState) -> PodShape | None:
        """The one shape of a gang that needs all its pending pods, has none placed yet and no host ports (so
        consecutive such gangs can be placed in one batch); None otherwise. Random tie-breaks draw one
        permutation per cycle, so they are not coalesced."""
        if (self.tie_break != "first" or not gs.gang or gs.bound or gs.waiting or gs.min_count != len(gs.pending)
                or gs.group.spec.scheduling_constraints):
            return None
        shapes = {id(shape): shape for shape in (self.shapes.intern(p) for p, _ in gs.pending.values())}
        shape = next(iter(shapes.values())) if len(shapes) == 1 else None
        # Pods with DRA claims or GPU shares never ride a train: per-pod state (sched/claims.py, gpushare.py).
        ok = shape is not None and not shape.host_ports and not shape.has_claims and shape.gpu is None
        return shape if ok else None

    def _gang_train(self, first: GroupState, shape: PodShape) -> None:
        """Consecutive all-or-nothing gangs of one shape, placed as one run of pods. The greedy places pod after
        pod either way, so every gang fully placed in the run gets exactly the nodes its own cycle would give
        it; the first gang cut short fails as its own cycle would (same state, same order), its placements
        are undone, and the gangs after it go back to the activeQ to be tried against the state without it."""
        train = [first]
        while True:
            nxt = self.queue.peek_active()
            if not (isinstance(nxt, GroupState) and nxt.state == "active" and self._train_shape(nxt) is shape):
                break
            train.append(self.queue.pop_active())
        if len(train) == 1:
            self._group_cycle(first)
            return
        members = [[p for p, _ in sorted(gs.pending.values(), key=lambda ps: (-self.cluster.priority(ps[0]), ps[1]))]
                   for gs in train]
        pods = [p for m in members for p in m]
        mark = self.cluster.tensors.log_mark()
        out = self.placer.place_run(shape, pods, self._rank())
        self._stats.pod_cycles += out.pod_cycles
        self._stats.batch_rounds += out.batch_rounds
        placed = len(pods) - len(out.failed)
        nodes = np.concatenate([pl.node_ids for pl in out.placed]) if out.placed else np.zeros(0, np.int64)
        offset = 0
        for i, (gs, m) in enumerate(zip(train, members)):
            if offset + len(m) > placed:
                break
            self._stats.group_attempts += 1
            self._bound(m, nodes[offset:offset + len(m)])
            for pod in m:
                del gs.pending[pod.key]
                gs.bound.add(pod.key)
            gs.state = "idle"
            self._set_condition(gs, "True", "Scheduled", "")
            offset += len(m)
        else:
            return
        self.placer.undo(out.placed, mark, keep=offset)
        short, m = train[i], members[i]
        self._stats.group_attempts += 1
        got = placed - offset
        self._fail(m[got:], out.message)
        message = infeasible_message(short.min_count, got, 0)
        self._fail(m[:got], message)
        self._set_condition(short, "False", "Unschedulable", message)
        short.attempts += 1
        short.failed_at = self.now
        short.state = "unschedulable"
        for gs in train[i + 1:]:
            self.queue.push_active(gs, self._group_priority(gs), gs.first_seq)

    def _group_cycle(self, gs: GroupState) -> None:
        self._stats.group_attempts += 1
        mark = self.cluster.tensors.log_mark()
        attempt = topology_attempt(self, gs) if gs.group.spec.topology_keys else self.try_group(gs)
        failed_keys = {p.key for pods, _ in attempt.failed for p in pods}
        for pods, message in attempt.failed:
            self._fail(pods, message)
        if attempt.infeasible is not None or attempt.group_message is not None:
            self.placer.undo(attempt.placed, mark)
            rest = [p for p, _ in gs.pending.values() if p.key not in failed_keys]
            self._fail(rest, attempt.infeasible or attempt.group_message)
            self._set_condition(gs, "False", "Unschedulable", attempt.group_message or attempt.infeasible)
        else:
            for pl in attempt.placed:
                self._bound(pl.pods, pl.node_ids)
                for pod in pl.pods:
                    del gs.pending[pod.key]
                    gs.bound.add(pod.key)
            self._set_condition(gs, "True", "Scheduled", "")
        if gs.pending:
            gs.attempts += 1
            gs.failed_at = self.now
            gs.state = "unschedulable"
        else:
            gs.state = "idle"
