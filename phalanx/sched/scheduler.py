"""The scheduler: events in, an explicit clock, and the wiring between the queue, the pod cycle, the PodGroup
cycle and Permit (each in its own module).

Pods leave the activeQ in QueueSort order (PrioritySort: priority desc, then arrival). A plain pod is placed by
its own cycle (pod_cycle.py); consecutive plain pods of one shape are placed together by the exact batch path
(placement.py). A PodGroup is one queue entry: its pending members are placed from one snapshot and bound
together when at least minCount are placed (group_cycle.py). With gang_mode="permit" gangs instead go pod by pod
and placed members wait at Permit (permit.py), holding their nodes, until the gang is complete or the timeout
rejects them all (the v1.35 GangScheduling plugin).

Every profile of the configuration is a Framework with its own Placer; a pod goes to the profile its
spec.schedulerName names, and pods no profile serves are reported and left pending.

Time never passes by itself: `step(until=t)` moves the clock, `run_until_idle()` goes on while anything can
still happen without an outside event. Events (pods, groups, nodes added or removed) come in through methods.
"""
from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..cluster_models import InputError, Job, Node, Pod, PodGroup, job_objects, owned_by, pod_group_priority
from ..cluster_models.controllers import expand_controllers
from ..cluster_models.gpus import device_request, node_gpus
from ..cluster_models.images import NodeImages
from ..cluster_models.load import cyclic_gc_paused
from ..cluster_models.objects import Replicas, dns_subdomain_problem, pod_keys, rfc3339_seconds
from ..cluster_models.tensors import add_nodes, bind_existing, compile_nodes, update_node
from ..plugins.framework import (ALL_EVENTS, GROUP_MEMBER_ADDED, NODE_ADDED, NODE_UPDATED, NOMINATED_POD_DELETED,
                                 POD_BOUND, POD_DELETED)
from .backends import SCHEDULER_BACKENDS, make_placer
from .cluster import Cluster, Nomination, daemon_nodes
from .config import DEFAULT_CONFIG, Profile, SchedulerConfig, args_from_input, without_plugin
from .cycle import Evaluation, Prepared
from .framework import Framework
from .group_cycle import GroupAttempt, GroupCycle
from .permit import Permit
from .placement import NO_NODES_MESSAGE, Placer
from .pod_cycle import PodCycle
from .preemption import Preemption
from .workload_preemption import WorkloadPreemption
from .podgroups import PERMIT_TIMEOUT_S, GroupState, Groups
from .queue import Parked, PodRun, SchedulingQueue, cut_runs
from .records import (BOUND, UNSCHEDULABLE, DecisionLog, Deleted, Failed, GroupCondition, Placed,
                      Preempted, Record)
from .shapes import PodShape, ShapeTable, template_runs

__all__ = ["GANG_MODES", "NO_NODES_MESSAGE", "ScheduleResult", "Scheduler", "GroupAttempt"]

TIE_BREAKS = ("first", "random")
GANG_MODES = ("podgroup", "permit")
DEFAULT_PERMIT_TIMEOUT_S = PERMIT_TIMEOUT_S


@dataclass
class ScheduleResult:
    bindings: dict[str, str] = field(default_factory=dict)        # "ns/name" -> node
    unschedulable: dict[str, str] = field(default_factory=dict)   # "ns/name" -> last reason it is pending
    unserved: list[str] = field(default_factory=list)             # pods naming a schedulerName no profile serves
    warnings: list[str] = field(default_factory=list)
    schedule_s: float = 0.0      # intake (queueing, PreEnqueue, shapes) and scheduling
    intake_s: float = 0.0        # the intake part of schedule_s
    pod_cycles: int = 0          # per-pod evaluations over all nodes
    batch_rounds: int = 0        # batch evaluations over all nodes (each places many pods)
    group_attempts: int = 0      # PodGroup cycles
    compiles: int = 0            # JAX: programs compiled by this call (the rest came from the process's cache)
    compile_s: float = 0.0       # JAX: the part of schedule_s spent tracing and compiling them
    # Preemptions in the order they happened: preemptor, kind ("Pod"), nominated node, victims ("ns/name").
    preemptions: list[dict] = field(default_factory=list)
    pod_groups: dict[str, tuple[str, str, str]] = field(default_factory=dict)   # key -> PodGroupScheduled
                                                                                # (status, reason, message)
    # DRA: pod -> the devices its claims hold, {claim, request, driver, pool, device} each (pods bound here)
    allocations: dict[str, list[dict[str, str]]] = field(default_factory=dict)


@dataclass
class _Reported:
    """One warning line about an unmodelled constraint, naming every pod it affects (counted, the first few
    listed), kept up to date in place as more such pods arrive."""
    warnings: list[str]          # the list the line is in
    index: int                   # its position there
    pods: list[str] = field(default_factory=list)

    def line(self, text: str) -> str:
        if len(self.pods) == 1:
            return f"Pod {self.pods[0]}: {text}"
        listed = ", ".join(self.pods[:3]) + (", ..." if len(self.pods) > 3 else "")
        return f"{len(self.pods)} pods ({listed}): {text}"


def _not_created(successors: dict[str, Pod]) -> list[str]:
    """One warning per OrderedReady StatefulSet whose later pods were never created: the pod they wait for (the
    first of the chain) is not bound."""
    made = {pod.key for pod in successors.values()}
    out = []
    for head in (key for key in successors if key not in made):
        chain, key = [], head
        while key in successors:
            key = successors[key].key
            chain.append(key)
        owner = successors[head].metadata.owner_references[0].name
        namespace = successors[head].metadata.namespace
        out.append(f"StatefulSet {namespace}/{owner}: {len(chain)} pod{'s' if len(chain) > 1 else ''} not created "
                   f"({chain[0]}{', ...' if len(chain) > 1 else ''}): podManagementPolicy OrderedReady creates each "
                   f"pod once the one before it runs, and {head} is not bound")
    return out


class Scheduler:
    """Schedules a Cluster's pods with a configuration's profiles on one array backend."""

    def __init__(self, cluster: Cluster, profile: Profile | SchedulerConfig = DEFAULT_CONFIG, *,
                 backend: str = "numpy", tie_break: str = "first", seed: int = 0, batching: bool = True,
                 gang_mode: str = "podgroup", permit_timeout_s: float = DEFAULT_PERMIT_TIMEOUT_S,
                 preemption: bool = True, topology_preemption: bool = False, incremental: bool = True,
                 rng: np.random.Generator | None = None):
        """rng: the random stream to draw from (tie-breaks, RandomScore) instead of default_rng(seed), for a caller
        that drew from it before (the trace replay's arrival order and node order come first)."""
        if tie_break not in TIE_BREAKS:
            raise ValueError(f"tie_break must be one of {TIE_BREAKS}, got {tie_break!r}")
        if backend not in SCHEDULER_BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; use one of {SCHEDULER_BACKENDS}")
        if gang_mode not in GANG_MODES:
            raise ValueError(f"gang_mode must be one of {GANG_MODES}, got {gang_mode!r}")
        if not permit_timeout_s > 0:
            raise ValueError(f"permit_timeout_s must be > 0, got {permit_timeout_s!r}")
        config = profile if isinstance(profile, SchedulerConfig) else SchedulerConfig((profile,))
        if not preemption:          # as profiles without DefaultPreemption
            config = without_plugin(config, "DefaultPreemption")
        self.config = config = args_from_input(config, cluster)
        self.cluster = cluster
        self.tie_break = tie_break
        self.rng = cluster.rng = np.random.default_rng(seed) if rng is None else rng
        self._node_order = np.arange(0)      # rank() for tie_break "first"
        self.gang_mode = gang_mode
        self.permit_timeout_s = float(permit_timeout_s)
        self.frameworks = {p.scheduler_name: Framework(p) for p in config.profiles}
        # backends.py; raises BackendUnavailable
        self.placers = {name: make_placer(backend, cluster, fw, batching, incremental)
                        for name, fw in self.frameworks.items()}
        self.shapes_by_profile = {name: ShapeTable(fw, cluster) for name, fw in self.frameworks.items()}
        self.backend = self.placer.backend                                 # "auto" resolved
        self.preemption = Preemption(self)
        # Beyond v1.36: workload-aware preemption for topology-constrained PodGroups (v1.36 refuses them).
        self.workload_preemption = WorkloadPreemption(self, topology=topology_preemption)
        for placer in self.placers.values():
            placer.post_filter = self.preemption.post_filter
        self.now = 0.0
        self.queue = SchedulingQueue(config.pod_initial_backoff_s, config.pod_max_backoff_s,
                                     pop_from_backoff=config.gate("SchedulerPopFromBackoffQ"))
        self.groups = Groups(cluster)
        self.pod_cycle = PodCycle(self)
        self.group_cycle = GroupCycle(self)
        self.permit = Permit(self)
        self.log = DecisionLog()
        self._reserves: dict[int, bool] = {}                 # id(PodShape) -> whether a Reserve plugin keeps state
        # (profile, rejectors) -> (the rejecting plugins, the events they wait for): what park reads per pod, alike
        # for a run's pods
        self._waits: dict[tuple[Framework, frozenset], tuple[tuple, frozenset]] = {}
        self.pending_message: dict[str, str] = {}            # pending pod -> why it is pending
        self.arrival: dict[str, int] = {}                    # pod added here -> its queue seq (arrival or last failure)
        self.unserved: dict[str, Pod] = {}                   # pods naming a schedulerName no profile serves
        self.progress = 0                                    # bindings + outside events, to spot livelocks
        self.bindings_made = 0                               # ... the bindings among them (outside_progress)
        self.stats = ScheduleResult()
        # Start times: the clock's zero is the latest status.startTime of the input (the simulation begins after
        # the snapshot); a pod bound here starts when it is bound.
        starts = [rfc3339_seconds(p.status.start_time) for p, _ in cluster.tensors.live_bound()
                  if p.status.start_time is not None]
        self.clock_origin = max(starts, default=0.0)
        self.started: dict[str, float] = {}                  # pod bound here -> its bind time
        self._seq = 0
        self._reported: dict[str, _Reported] = {}            # unmodelled-constraint text -> its warning line
        self._created: list[Pod] = []                        # pods a controller made on a binding, to add next
        self.on_attempt: Callable[[int], None] | None = None  # told how many pods each attempt takes (progress bars)
        for pod, _ in cluster.tensors.live_bound():
            gs = self.groups.resolve(pod)[0]
            if gs is not None:
                gs.bound.add(pod.key)
                self.groups.of_pod[pod.key] = gs
        for pod, node in cluster.bound_elsewhere:
            gs = self.groups.resolve(pod)[0]
            if gs is not None:
                gs.bound.add(pod.key)
                gs.elsewhere[pod.key] = node
                self.groups.of_pod[pod.key] = gs

    # -- profiles --------------------------------------------------------------------------------------
    @property
    def profile(self) -> Profile:
        """The first profile (the only one in most configurations)."""
        return self.config.profiles[0]

    @property
    def placer(self) -> Placer:
        return self.placers[self.profile.scheduler_name]

    @property
    def shapes(self) -> ShapeTable:
        return self.shapes_by_profile[self.profile.scheduler_name]

    @property
    def framework(self) -> Framework:
        return self.frameworks[self.profile.scheduler_name]

    def placer_for(self, pod: Pod) -> Placer:
        placer = self.placers.get(pod.spec.scheduler_name)
        return self.placer if placer is None else placer

    def compile_stats(self) -> tuple[int, float]:
        """(programs compiled, seconds spent compiling) by this scheduler's placers so far (0 off JAX)."""
        stats = [placer.stats for placer in self.placers.values() if hasattr(placer, "stats")]
        return sum(s.compiles for s in stats), sum(s.compile_s for s in stats)

    def member_shape(self, gs: GroupState, pod: Pod, seq: int) -> PodShape:
        """A pending member's shape, remembered by its arrival for the group's cycles."""
        shape = gs.shapes.get(seq)
        if shape is None:
            shape = gs.shapes[seq] = self.shape_of(pod)
        return shape

    def framework_for(self, pod: Pod) -> Framework:
        """The profile serving the pod (the first one for a pod no profile serves)."""
        return self.frameworks.get(pod.spec.scheduler_name) or self.framework

    def nominate(self, pod: Pod, node: str) -> None:
        """The pod waits for `node` (status.nominatedNodeName): its columns go on the cluster's tables first (Filter
        binds nominated pods on cluster copies, which share the vocabularies), its request over their resources."""
        shape = self.shape_of(pod)
        self.cluster.grow_vocabularies([(pod, shape)])
        self.cluster.nominations[pod.key] = Nomination(pod, node, self.cluster.priority(pod),
                                                       shape.request_vector(self.cluster.tensors))

    def shape_of(self, pod: Pod) -> PodShape:
        return self._shape_table(pod).intern(pod)

    def shapes_of(self, pods: list[Pod], starts: list[int] | None = None) -> list[PodShape]:
        """shape_of for each pod, consecutive pods of one profile interned together (ShapeTable.intern_all; `starts`:
        the pods' template runs, when known)."""
        if len(self.shapes_by_profile) == 1:       # every pod's table is the one profile's
            return self.shapes.intern_all(pods, starts)
        shapes: list[PodShape] = []
        for _, run in itertools.groupby(pods, key=lambda pod: pod.spec.scheduler_name):
            run = list(run)
            shapes += self._shape_table(run[0]).intern_all(run)
        return shapes

    def _shape_table(self, pod: Pod) -> ShapeTable:
        table = self.shapes_by_profile.get(pod.spec.scheduler_name)
        return self.shapes if table is None else table

    def framework_for_group(self, gs: GroupState) -> Framework:
        """A group's pods are scheduled by one profile: its first pending member's (upstream requires them to
        name the same scheduler)."""
        def of_first():
            first = next(iter(gs.pending.values()), None)
            return self.framework_for(first[0]) if first else self.framework
        return gs.by_pending("framework", of_first)

    def placer_for_group(self, gs: GroupState) -> Placer:
        return self.placers[self.framework_for_group(gs).profile.scheduler_name]

    def reserves(self, shape: PodShape) -> bool:
        """Whether a plugin keeps per-pod state for this shape's pods (Reserve: DRA claims, GPU shares)."""
        hit = self._reserves.get(id(shape))      # shapes live as long as their ShapeTable: ids are stable
        if hit is None:
            fw = self.framework_for(shape.pod)
            hit = self._reserves[id(shape)] = any(plugin.reserves_for(shape.pod, self.cluster)
                                                  for plugin in fw.at("reserve"))
        return hit

    # -- compatibility with the one-pass API -------------------------------------------------------
    @property
    def next_start(self) -> int:
        return self.placer.next_start

    def evaluate(self, shape: PodShape, rank=None, advance: bool = True) -> tuple[Prepared, Evaluation, int]:
        return self.placer.evaluate(shape, rank, advance)

    def message(self, ev: Evaluation) -> str:
        return self.placer.message(ev)

    def try_group(self, gs: GroupState, placer: Placer | None = None, rank: np.ndarray | None = None) -> GroupAttempt:
        return self.group_cycle.try_group(gs, placer, rank)

    def schedule(self) -> ScheduleResult:
        """Take every pod waiting in `cluster.pending`, run until idle, and report this call's decisions: pods
        bound, and for each pod still pending the last reason why."""
        result = ScheduleResult(warnings=list(self.cluster.warnings) + list(self.config.warnings))
        start_log, self.stats = len(self.log), result
        compiled = self.compile_stats()
        t0 = time.perf_counter()
        with cyclic_gc_paused():     # the queue's entries for every pending pod: long-lived, no garbage cycles
            self.add_pods(self.cluster.pending, result.warnings)
        result.intake_s = time.perf_counter() - t0
        # Cycles make placements, bindings and records that live on, and next to no garbage cycles (measured: none
        # left by Heterogeneous, KubeMix, Deployment, PreemptionBasic and GangScheduling runs, 317 objects by 5,000
        # anti-affine pods), so the cyclic collector only walks them again and again (~10% of a Heterogeneous run
        # on JAX); it runs again once the call returns.
        with cyclic_gc_paused():
            self._run(math.inf)       # run_until_idle without making Records (the log is read directly below)
        result.schedule_s = time.perf_counter() - t0
        result.compiles, result.compile_s = (now - before for now, before in zip(self.compile_stats(), compiled))
        result.bindings = self.log.bindings(start_log)
        result.preemptions = [e.summary() for e in self.log.since(start_log) if isinstance(e, Preempted)]
        result.unschedulable = dict(self.pending_message)
        result.unserved = list(self.unserved)
        result.pod_groups = {key: gs.condition for key, gs in self.groups.states.items() if gs.condition is not None}
        result.warnings += _not_created(self.cluster.successors)
        result.allocations = self.cluster.claims.allocations(result.bindings)
        self.cluster.pending = [p for p in self.cluster.pending if p.key in self.unserved] if self.unserved else []
        return result

    # -- events in ----------------------------------------------------------------------------------
    def add_pods(self, pods, warnings: list[str] | None = None) -> list[Record]:
        """Pending pods arrive now (in this order). Raises InputError, changing nothing, for a pod that is
        already bound, already known, or names an unknown PriorityClass. Pods naming a schedulerName no profile
        serves are left pending and reported (a warning, ScheduleResult.unserved)."""
        pods = list(pods)
        starts = template_runs(pods)
        keys = self._check_new(pods, starts)
        start = len(self.log)
        self.progress += 1
        plain: list[Pod] = []
        plain_seqs: list[int] = []
        touched: list[GroupState] = []
        arrived = []
        arrival, frameworks = self.arrival, self.frameworks
        pre_enqueue, shared = self.pre_enqueue, {}
        register = self.cluster.claims.register
        # The ids of the PodSpec objects of pods that went straight to the queue without a group, claims or a
        # PreEnqueue answer of their own, while no pod waits in `arrived`: later pods of these specs that are not
        # nominated go the same way (templates interleaved in arrival order each take that way once). The pods of
        # the call are alive until it returns, so these ids are not reused meanwhile.
        plain_specs: set[int] = set()
        first_seq, self._seq = self._seq, self._seq + len(pods)      # every pod takes one, served or not
        for a, end in zip(starts, starts[1:]):
            for i in range(a, end):
                pod, key, seq = pods[i], keys[i], first_seq + i
                if id(pod.spec) in plain_specs and not pod.status.nominated_node_name:
                    # The rest of its template run (one spec, one status) goes the same way, all at once.
                    arrival.update(zip(keys[i:end], range(seq, first_seq + end)))
                    plain += pods[i:end]
                    plain_seqs += range(seq, first_seq + end)
                    break
                framework = frameworks.get(pod.spec.scheduler_name)
                if framework is None:
                    self.unserved[key] = pod
                    if warnings is not None:
                        warnings.append(f"Pod {key}: spec.schedulerName {pod.spec.scheduler_name!r} is served by no "
                                        f"profile ({', '.join(frameworks)}); left pending")
                    continue
                arrival[key] = seq
                if pod.status.nominated_node_name:
                    self.nominate(pod, pod.status.nominated_node_name)
                gs, _ = self.groups.resolve(pod)
                member = gs is not None and not (self.gang_mode == "permit" and not gs.gang)
                if member:
                    self.groups.join(gs, pod, seq, key)  # a member counts for its group (quorum) from now on
                    touched.append(gs)
                if gs is not None or arrived:
                    arrived.append((pod, seq, framework, gs, member))
                    plain_specs.clear()
                elif pre_enqueue(pod, seq, framework, None, shared):     # no group, none before: nothing to wait for
                    register(pod, None)
                    plain.append(pod)
                    plain_seqs.append(seq)
                    if self._plain_template(pod.spec, framework):
                        plain_specs.add(id(pod.spec))
        # PreEnqueue once every pod of the call has arrived (they arrive together: a gang's quorum counts them all),
        # in arrival order from the first pod with a group on.
        for pod, seq, framework, gs, member in arrived:
            if pre_enqueue(pod, seq, framework, gs if member else None, shared):
                # DRA: the pod's claims; its PodGroup's spec.resourceClaims decide which are shared
                register(pod, gs.group if gs is not None else None)
                if not member:
                    plain.append(pod)
                    plain_seqs.append(seq)
        # All of them, in arrival order (the usual call): their template runs are known.
        self._enqueue_plain(plain, plain_seqs, warnings, starts if len(plain) == len(pods) else None)
        for gs in dict.fromkeys(touched):
            self._group_changed(gs, warnings)
        return self.log.records(start)

    def _check_new(self, pods: list[Pod], starts: list[int] | None = None, keys: list[str] | None = None) -> list[str]:
        """The keys of pods about to arrive (`starts`: their template runs, `keys` theirs, when known); InputError for
        the first one that is bound, known, named twice, or names an unknown PriorityClass or bad GPU-share
        annotations."""
        if starts is None:
            starts = template_runs(pods)
        if keys is None:
            keys = pod_keys(pods)
        bad, problem = len(pods), None        # the first pod whose template is refused, and why
        # What is checked reads a pod's spec and annotations alone: a run's pods share them, and so do runs of one
        # template interleaved with others, checked once; (spec, annotations) ids of those that passed (the pods of
        # the call are alive until it returns, so the ids are not reused meanwhile).
        passed: set[tuple[int, int]] = set()
        for a in starts[:-1]:
            pod = pods[a]
            spec = pod.spec
            template = (id(spec), id(pod.metadata.annotations))
            if template in passed:
                continue
            if spec.node_name:
                bad, problem = a, InputError(f"Pod {keys[a]}: spec.nodeName: already bound; add it to the cluster "
                                             f"input instead")
                break
            try:
                self.cluster.priority(pod)
                device_request(pod)      # GPU-share annotations are valid (sched/gpushare.py)
            except InputError as error:
                bad, problem = a, error
                break
            passed.add(template)
        arrival, unserved, tensors = self.arrival, self.unserved, self.cluster.tensors
        check_bound = tensors.log_mark() > 0
        if check_bound or not (arrival.keys().isdisjoint(keys) and unserved.keys().isdisjoint(keys)):
            known = next((key for key in keys[:bad] if key in arrival or key in unserved
                          or (check_bound and tensors.node_of(key) >= 0)), None)
            if known is not None:
                raise InputError(f"Pod {known}: metadata.name: already exists")
        if problem is not None:
            raise problem
        if len(set(keys)) < len(keys):
            dup = next(k for i, k in enumerate(keys) if k in keys[:i])
            raise InputError(f"Pod {dup}: metadata.name: already exists")
        return keys

    def add_replicas(self, template: Pod, count: int, prefix: str | None = None, start: int = 0,
                     warnings: list[str] | None = None) -> list[Record]:
        """The columnar bulk arrival for simulators: `count` pending pods of `template`, named prefix + index (prefix
        default: the template's name and "-"; indexes from `start`), with no Pod object made until a cycle takes
        them (cluster_models.Replicas): a pending replica costs its arrival entry alone. Decisions and records are
        add_pods' for the same pods (Replicas' objects). A template PreEnqueue holds back, or that has a PodGroup,
        claims, a nominated node or a schedulerName no profile serves, is added by add_pods with its pods made.
        InputError, changing nothing, as add_pods raises it, and for a count or start that is not an integer >= 0 or
        names that are not DNS subdomains."""
        for what, value in (("replicas", count), ("start", start)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InputError(f"Pod {template.key}: {what}: must be a non-negative integer (got {value!r})")
        prefix = f"{template.metadata.name}-" if prefix is None else prefix
        replicas = Replicas(template, prefix, start, count)
        if not count:
            return []
        for name in dict.fromkeys((f"{prefix}{start}", f"{prefix}{start + count - 1}")):   # the others: other digits
            problem = dns_subdomain_problem(name)
            if problem is not None:
                raise InputError(f"Pod {template.metadata.namespace}/{name}: metadata.name: {problem}")
        framework = self.frameworks.get(template.spec.scheduler_name)
        if (framework is None or not self._plain_template(template.spec, framework)
                or template.status.nominated_node_name or self.groups.resolve(template)[0] is not None
                or self._pre_enqueue_verdict(template, framework)[0] is not None):
            return self.add_pods(list(replicas), warnings)
        keys = self._check_new(replicas, [0, count], replicas.keys())
        log_start = len(self.log)
        self.progress += 1
        seqs = range(self._seq, self._seq + count)
        self._seq += count
        self.arrival.update(zip(keys, seqs))
        shape = self.shape_of(template)
        if warnings is not None and shape.unmodelled:
            self._warn_unmodelled(keys, shape, warnings)
        priority = self.cluster.priority(template)
        self.queue.push_active(PodRun(shape, replicas, seqs, priority), priority, seqs[0])
        return self.log.records(log_start)

    @staticmethod
    def _plain_template(spec, framework: Framework) -> bool:
        """Whether the pods of this spec get one PreEnqueue answer for all and name no group or claims: once one of
        them is queued, its replicas join the queue without asking again."""
        return (framework.shared_pre_enqueue and spec.scheduling_group is None and spec.workload_ref is None
                and not spec.resource_claims)

    def pre_enqueue(self, pod: Pod, seq: int, framework: Framework, gs: GroupState | None,
                    shared: dict | None = None) -> bool:
        """The profile's PreEnqueue plugins in order: True when the pod may enter the queue (a group member: its
        group's cycle); otherwise the first plugin that holds it back says why, and the pod waits (in the queue's
        held pool, or its group's) for an event that plugin registered. `shared`: answers shared by the pods of
        one arrival with one PodSpec object and one PodGroup, when no plugin reads more (pre_enqueue_reads)."""
        if shared is not None and framework.shared_pre_enqueue:
            # The pods of the call are alive until it returns, so these ids are not reused meanwhile.
            key = (id(framework), id(pod.spec), id(gs))
            verdict = shared.get(key)
            if verdict is None:
                verdict = shared[key] = self._pre_enqueue_verdict(pod, framework)
        else:
            verdict = self._pre_enqueue_verdict(pod, framework)
        plugin, message = verdict
        if plugin is None:
            return True
        if gs is None:
            self.queue.held[pod.key] = (pod, seq)
        else:
            gs.pending.pop(pod.key, None)
            gs.held[pod.key] = (pod, seq, plugin)
        if self.pending_message.get(pod.key) != message:
            self.fail([pod], message)
        return False

    def _pre_enqueue_verdict(self, pod: Pod, framework: Framework) -> tuple:
        """(the first PreEnqueue plugin that holds the pod back, its message), or (None, None)."""
        for plugin in framework.at("preEnqueue"):
            message = plugin.pre_enqueue(pod, self.groups)
            if message is not None:
                return plugin, message
        return None, None

    def add_pod_group(self, group: PodGroup) -> list[Record]:
        """A PodGroup appears; pods that were waiting for it join it."""
        if group.key in self.groups.states or group.key in self.groups.keys:
            raise InputError(f"PodGroup {group.key}: metadata.name: already exists")
        pod_group_priority(group, self.cluster.priority_classes)     # admission: its PriorityClass must exist
        start = len(self.log)
        self.progress += 1
        self.cluster.pod_groups.append(group)
        self.groups.added(group)
        touched = []
        for key, (pod, seq) in sorted(self.queue.held.items(), key=lambda kv: kv[1][1]):
            gs, reason = self.groups.resolve(pod)
            if gs is None or gs.group.key != group.key or (self.gang_mode == "permit" and not gs.gang):
                continue
            del self.queue.held[key]
            self.groups.join(gs, pod, seq)
            touched.append(gs)
        for gs in dict.fromkeys(touched):
            for pod, seq in [v for v in gs.pending.values()]:
                if self.pre_enqueue(pod, seq, self.framework_for_group(gs), gs):
                    self.cluster.claims.register(pod, gs.group)      # DRA claims, now that the group is known
            self._group_changed(gs)
        return self.log.records(start)

    def add_job(self, job: Job) -> list[Record]:
        """The Job controller's reaction to a new Job: its Workload and gang PodGroup (Indexed Jobs with
        parallelism > 1 and completions == parallelism), then its pods."""
        if any(j.key == job.key for j in self.cluster.jobs):
            raise InputError(f"Job {job.key}: metadata.name: already exists")
        made = job_objects(job)
        start = len(self.log)
        if made.pod_group is not None and any(g.key == made.pod_group.key for g in self.cluster.pod_groups):
            raise InputError(f"Job {job.key}: PodGroup {made.pod_group.key} already exists")
        self.cluster.jobs.append(job)
        if made.workload is not None:
            self.cluster.workloads.append(made.workload)
        if made.pod_group is not None:
            self.add_pod_group(made.pod_group)
        self.add_pods(made.pods)
        return self.log.records(start)

    def add_controllers(self, controllers: list) -> list[Pod]:
        """Workload controllers appear (Deployments, ReplicaSets, ReplicationControllers, StatefulSets, DaemonSets):
        each creates its pods as at load (cluster_models.controllers) and they arrive now, in that order; the
        ReplicaSets (a Deployment's too), ReplicationControllers and StatefulSets select pods for the system default
        topology spreading from now on, as loaded ones do. Returns the pods created. Raises InputError, changing
        nothing, for a CronJob (add_job takes its Job), an OrderedReady StatefulSet of more than one pod, or a pod
        name that exists."""
        tensors = self.cluster.tensors
        made = expand_controllers(list(controllers), [], lambda ds: daemon_nodes(ds, tensors),
                                  claims=self.cluster.volumes.claims)
        if made.jobs:
            raise InputError(f"CronJob {made.jobs[0].metadata.namespace}/{made.jobs[0].metadata.name}: add its Job "
                             f"with add_job")
        if made.successors:
            pod = next(iter(made.successors.values()))
            raise InputError(f"Pod {pod.key}: podManagementPolicy OrderedReady: StatefulSets added while scheduling "
                             f"must be Parallel")
        self._check_new(made.pods)
        # Before the pods arrive: their shapes read their default spreading selector.
        self.cluster.default_selectors.add_owners([*controllers, *made.replica_sets])
        self.cluster.volumes.add_claims(made.claims)          # a StatefulSet's claims before its pods
        self.add_pods(made.pods)
        return made.pods

    def delete_job(self, key: str) -> list[Record]:
        """Deleting a Job removes what it owns: its pods (bound or pending), its PodGroup and Workload."""
        job = next((j for j in self.cluster.jobs if j.key == key), None)
        if job is None:
            raise InputError(f"Job {key}: not found")
        start = len(self.log)
        owned = [p.key for p in self._pods_of(job)]
        for pod_key in owned:
            self.delete_pod(pod_key, f"owner Job {key} deleted")
        for group in [g for g in self.cluster.pod_groups if owned_by(g, job)]:
            self.cluster.pod_groups.remove(group)
            self.groups.states.pop(group.key, None)
        self.cluster.workloads = [w for w in self.cluster.workloads if not owned_by(w, job)]
        self.cluster.jobs.remove(job)
        self.groups.reindex()
        return self.log.records(start)

    def _pods_of(self, job: Job) -> list[Pod]:
        live = [p for p, _ in self.cluster.tensors.live_bound() if owned_by(p, job)]
        for gs in self.groups.values():
            live += [p for p, _ in gs.waiting.values() if owned_by(p, job)]
            live += [p for p, _ in gs.pending.values() if owned_by(p, job)]
        live += [parked.pod for parked in self.queue.unschedulable.values() if owned_by(parked.pod, job)]
        live += [p for p in self.queue.queued_pods() if owned_by(p, job)]
        unique = {p.key: p for p in live}
        return list(unique.values())

    def delete_pod(self, key: str, reason: str = "deleted") -> list[Record]:
        """A pod leaves the cluster (deleted, or completed: reason says which). Its node's resources are
        released, and pods and groups waiting for cluster changes are retried."""
        return self.delete_pods([key], reason)

    def delete_pods(self, keys: list[str], reason: str = "deleted") -> list[Record]:
        """Pods leave the cluster together (the victims of one preemption): each as delete_pod would, in order,
        and one POD_DELETED event for those that were on nodes, which moves the pooled pods that one event per pod
        in turn would have moved (cluster_event's `each`). Nothing is deleted unless every key is a pod here."""
        start = len(self.log)
        self.remove_pods(keys, reason)
        return self.log.records(start)

    def remove_pods(self, keys: list[str], reason: str) -> None:
        """delete_pods without making the records (preemption's evictions: the log has them). A pending pod with a
        nominated node leaves an event of its own, after those of the pods on nodes, to the pods of its priority or
        lower (they counted it on that node; upstream deletePodFromSchedulingQueue: AssignedPodDelete with
        getLEPriorityPreCheck)."""
        nominations = self.cluster.nominations
        nominated = [nominations.get(key) for key in keys if key in nominations] if nominations else []
        freed = self.take_off(keys, reason)
        if freed:
            self.cluster_event(POD_DELETED, freed, each=True)
        for nom in nominated:
            self.cluster_event(NOMINATED_POD_DELETED, [nom.pod], at_most_priority=nom.priority)

    def take_off(self, keys: list[str], reason: str) -> list[Pod]:
        """remove_pods without the cluster event: the pods taken off their nodes, for the caller's event (each
        object one event, in order, as cluster_event(each=True) reads them)."""
        seen: set[str] = set()
        for key in keys:
            if key in seen or not self.knows(key):
                raise InputError(f"Pod {key}: not found")
            seen.add(key)
        return self.forget_pods(keys, self.cluster.tensors.unbind_all(keys)[1], reason)

    def forget_pods(self, keys: list[str], taken: list[Pod | None], reason: str) -> list[Pod]:
        """take_off after the node table: the pods of `keys`, each taken off its node already (`taken`: the pod,
        None if it was not bound), leave the groups, queues, plugins and nominations, each logged Deleted.
        Returns the pods that were on a node."""
        freed = self.drop_pods(keys, taken)
        self.log_deleted(keys, reason)
        return freed

    def log_deleted(self, keys: list[str], reason: str) -> None:
        """A Deleted record for each pod of `keys`, now."""
        now, log = self.now, self.log
        for key in keys:
            log.append(Deleted(now, key, reason))

    def drop_pods(self, keys: list[str], taken: list[Pod | None]) -> list[Pod]:
        """forget_pods without the records (the caller logs them: a cycle's evictions, after each preemption's
        entry)."""
        # What the Reserve plugins hold, for all the pods at once (DynamicResources releases the claims unregister
        # below would: whichever runs first frees them, the other finds them free); a pod deleted while it waits at
        # Permit is rejected there first.
        waiting = [key for key, pod in zip(keys, taken) if pod is not None and key not in self.started]
        if waiting:
            self.permit_rejected(waiting)
        self.release_plugins(keys)
        self.progress += len(keys)
        groups, queue, cluster = self.groups.of_pod, self.queue, self.cluster
        claims, nominations = cluster.claims, cluster.nominations
        unserved, arrival, pending, started = self.unserved, self.arrival, self.pending_message, self.started
        freed = []
        for key, pod in zip(keys, taken):
            gs = groups.pop(key, None) if groups else None
            on_node = pod is not None
            claims.unregister(key)      # DRA: its claims released, those generated for it alone deleted
            in_runs = gs is None
            if gs is not None:
                gs.bound.discard(key)
                gs.elsewhere.pop(key, None)
                gs.waiting.pop(key, None)
                gs.pending.pop(key, None)
                gs.held.pop(key, None)
                in_runs = key in gs.enqueued        # permit mode: members go through the pod queue
                gs.enqueued.discard(key)
                if not gs.waiting:
                    self.permit.cleared(gs)
            pooled = queue.forget(key)
            if unserved:
                unserved.pop(key, None)
            seq = arrival.pop(key, None)
            if seq is not None and not on_node and not pooled and in_runs:
                # In a run in the activeQ or backoffQ (not a member waiting in its group): its arrival marks it
                # gone, and the marker goes when the run comes up.
                queue.deleted.add(seq)
            if pending:
                pending.pop(key, None)
            if nominations:
                nominations.pop(key, None)
            started.pop(key, None)
            if on_node:
                freed.append(pod)
        return freed

    def add_nodes(self, nodes: list[Node]) -> list[Record]:
        start = len(self.log)
        names = {n.metadata.name for n in nodes}
        clash = names & set(self.cluster.tensors.node_index) or (len(names) < len(nodes) and names)
        if clash:
            raise InputError(f"Node {sorted(clash)[0]}: metadata.name: already exists")
        for node in nodes:
            node_gpus(node)                    # a node's GPU devices refused before anything changes
        self.progress += 1
        add_nodes(self.cluster.tensors, nodes)
        self.cluster.claims.relink(self.cluster.tensors.node_index)    # DRA devices of the new nodes
        self.cluster.nodes.extend(nodes)
        self.cluster.gpus.rebuild(self.cluster.nodes)                  # GpuShare: devices of the new nodes
        self.cluster.images = NodeImages.of(self.cluster.nodes)        # ImageLocality
        self._nodes_changed()
        for node in nodes:
            self.cluster_event(NODE_ADDED, node)
        return self.log.records(start)

    def update_node(self, node: Node) -> list[Record]:
        """A node's labels, taints, allocatable or cordon changed; pods already on it stay."""
        start = len(self.log)
        i = self.cluster.tensors.node_index.get(node.metadata.name)
        if i is None:
            raise InputError(f"Node {node.metadata.name}: not found")
        node_gpus(node)                        # its GPU devices refused before anything changes
        self.progress += 1
        old = self.cluster.nodes[i]
        update_node(self.cluster.tensors, node)
        self.cluster.nodes[i] = node
        self.cluster.gpus.rebuild(self.cluster.nodes)                  # GpuShare: its devices may have changed
        self.cluster.images = NodeImages.of(self.cluster.nodes)        # ImageLocality
        self._nodes_changed()
        self.cluster_event(NODE_UPDATED, (old, node))
        return self.log.records(start)

    def remove_node(self, name: str) -> list[Record]:
        """A node leaves; pods on it are deleted (a controller would recreate them as new pods)."""
        start = len(self.log)
        tensors = self.cluster.tensors
        node_id = tensors.node_index.get(name)
        if node_id is None:
            raise InputError(f"Node {name}: not found")
        self.progress += 1
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
        self.cluster.images = NodeImages.of(keep)                      # ImageLocality
        # The rebuilt table has vocabularies of its own: nominated pods get their columns and requests again.
        for _, nom in list(self.cluster.nominations.items()):
            self.nominate(nom.pod, nom.node)
        self._nodes_changed()
        for placer in self.placers.values():
            placer.next_start = placer.next_start % max(1, len(keep))
        self.cluster_event(POD_DELETED, None)
        return self.log.records(start)

    def _nodes_changed(self) -> None:
        for placer in self.placers.values():
            placer.nodes_changed()
        self.preemption.nodes_changed()

    # -- the clock ----------------------------------------------------------------------------------
    def step(self, until: float) -> list[Record]:
        """Schedule everything that can go before time `until` (seconds on this scheduler's clock), then set
        the clock to `until`. Returns what happened, in order."""
        start = len(self.log)
        self.advance(until)
        return self.log.records(start)

    def advance(self, until: float) -> None:
        """step() without making a Record per pod: what happened is decisions(mark) (a simulator's fast path)."""
        if until < self.now:
            raise ValueError(f"until={until} is before the scheduler's clock ({self.now})")
        self._run(until)
        if math.isfinite(until):
            self.now = until

    def decision_mark(self) -> int:
        """Where the decision log ends now (decisions() reads from there)."""
        return len(self.log)

    def decisions(self, since: int) -> list:
        """The decision log's typed entries from `since` on (records.py: Placed, Failed, Deleted, GroupCondition,
        Preempted), one per decision however many pods it concerns."""
        return self.log.since(since)

    def forget_decisions(self, upto: int) -> None:
        """Drop the logged decisions before mark `upto` (records and decisions no longer return them): a long
        simulation that has read them keeps its memory flat."""
        self.log.forget(upto)

    def next_due(self) -> float | None:
        """When the scheduler next has something to do on its own (a backoff ending, a Permit timeout, a flush of
        the unschedulable pool); None when only an outside event can make anything happen. A simulator steps to
        min(this, its next event)."""
        due = [t for t in (self.queue.next_backoff_expiry(), self.permit.next_deadline(), self.next_flush()[0])
               if t is not None]
        return min(due) if due else None

    def outside_progress(self) -> int:
        """The progress count without the bindings: what a flush of the unschedulable pool may find changed. A
        binding wakes the pooled pods it may help through its event (PodBound: the rejectors' hints); those it left
        in the pool, and parked PodGroups (which bindings never wake), would fail again the same way."""
        return self.progress - self.bindings_made

    def next_flush(self) -> tuple[float | None, bool]:
        """(the next flush tick that moves a pooled pod or a parked group, None if none waits; whether that flush, or a
        later one, would retry something that failed before the latest outside progress)."""
        progress = self.outside_progress()
        pods, pods_useful = self.queue.flush_order.next_flush(progress)
        groups, groups_useful = self.groups.flush_order.next_flush(progress)
        ticks = [t for t in (pods, groups) if t is not None]
        return (min(ticks) if ticks else None), pods_useful or groups_useful

    def _flush_unschedulable(self) -> None:
        """Upstream's flushUnschedulablePodsLeftover, for the latest flush tick at or before now: the safety net
        for events a rejector missed. Pods and groups that waited in the pool for longer than 5 min are retried as
        after a wildcard event (whatever their rejectors registered); held pods stay held, as upstream skips gated
        pods whose PreEnqueue plugin registered no wildcard event (none does)."""
        ready = self.queue.flush(self.now)
        if ready:
            self._enqueue_plain([p.pod for p in ready], [p.seq for p in ready])
        for gs in self.groups.flush_order.due(self.now):
            self._activate_group(gs)

    def run_until_idle(self) -> list[Record]:
        """Go on, moving the clock to backoff expiries, Permit timeouts and flushes of the unschedulable pool that
        follow an outside event (next_flush), until nothing can happen without an outside event. Returns what
        happened.

        In permit mode gangs that want the same nodes can take turns at Permit for ever (each timeout frees the
        nodes the other gang waits for, as upstream's would). That is no progress, so run_until_idle also stops
        before a Permit timeout would reject a gang a second time with nothing bound and no event in between;
        the waiting gang keeps its nodes, and `step` carries the alternation on."""
        start = len(self.log)
        self._run(math.inf)
        return self.log.records(start)

    def _run(self, until: float) -> None:
        while True:
            if self._created:
                created, self._created = self._created, []
                self.add_pods(created, self.stats.warnings)
            self._release_backoff()
            self._flush_unschedulable()
            self.permit.expire()
            entry = self.queue.pop_active()
            if entry is None and self.queue.pop_from_backoff:
                entry = self.queue.pop_backoff()
                if isinstance(entry, GroupState):
                    entry.state = "active"
            if entry is not None:
                if isinstance(entry, GroupState):
                    if self.on_attempt is not None:
                        self.on_attempt(len(entry.pending))
                    self.group_cycle.attempt(entry)
                else:
                    if self.on_attempt is not None:
                        self.on_attempt(len(entry.pods))
                    self.pod_cycle.attempt(entry)
                continue
            backoff, permit = self.queue.next_backoff_expiry(), self.permit.next_deadline()
            flush, useful = self.next_flush()
            due = [t for t in (backoff, permit, flush) if t is not None]
            if not due or min(due) > until:
                return
            if until == math.inf:
                # A futile flush (nothing happened since those pods failed) is done on the way to something else
                # (step would do it), never waited for.
                worth = [t for t in (backoff, permit, flush if useful else None) if t is not None]
                if permit is not None and permit == min(worth) and self.permit.livelock(permit):
                    return
                if permit is None and not useful and self.queue.only_futile_retries(self.progress):
                    return       # upstream retries such pods for ever; with no progress each would fail again
            self.now = max(self.now, min(due))

    # -- records ------------------------------------------------------------------------------------
    @property
    def records(self) -> list[Record]:
        """Everything that happened so far."""
        return self.log.records()

    def start_of(self, pod: Pod, key: str | None = None) -> float:
        """status.startTime on the scheduler's clock; NaN when unset (preemption reads it as now). key: the pod's,
        where the caller has it at hand."""
        t = self.started.get(pod.key if key is None else key)
        if t is not None:
            return t
        if pod.status.start_time is not None:
            return rfc3339_seconds(pod.status.start_time) - self.clock_origin
        return math.nan

    def bound(self, pods: list[Pod], node_ids: np.ndarray, parts: list | None = None) -> list[str]:
        """Pods bound to their nodes now (records, start times, events); returns their keys. `parts`: (end, then)
        pairs cutting the pods into consecutive bindings (a train's gangs), each logged as its own entry and
        followed by then(its keys)."""
        self.progress += 1
        self.bindings_made += 1
        keys = pod_keys(pods)
        now = self.now
        self.started.update(dict.fromkeys(keys, now))
        successors = self.cluster.successors
        if successors:           # OrderedReady StatefulSets create the next pod once this one runs
            self._created += [successors.pop(key) for key in keys if key in successors]
        self.preemption.rows.started(self.cluster, keys, now)
        nodes = list(map(self.cluster.tensors.nodes.names.__getitem__, node_ids.tolist()))
        if parts is None:
            self.log.append(Placed(BOUND, now, list(pods), keys, node_ids, nodes))
        else:
            start = 0
            for end, then in parts:
                self.log.append(Placed(BOUND, now, pods[start:end], keys[start:end], node_ids[start:end],
                                       nodes[start:end]))
                then(keys[start:end])
                start = end
        pending = self.pending_message
        if pending:
            for key in keys:
                pending.pop(key, None)
        if self.queue.listening(POD_BOUND):
            self.cluster_event(POD_BOUND, pods)
        return keys

    def fail(self, pods: list[Pod], message: str, kind: str = UNSCHEDULABLE) -> None:
        self.log.append(Failed(kind, self.now, pods, message))
        for pod in pods:
            self.pending_message[pod.key] = message

    def set_condition(self, gs: GroupState, status: str, reason: str, message: str) -> None:
        """PodGroupScheduled; True is terminal (v1.36: a later cycle never regresses it)."""
        if gs.scheduled or gs.condition == (status, reason, message):
            return
        gs.condition = (status, reason, message)
        self.log.append(GroupCondition(self.now, gs.key, status, reason, message))

    # -- the unschedulable pool and queueing hints -------------------------------------------------------
    def requeued(self, seqs: list[int], pods: list[Pod]) -> list[int]:
        """The queue places of pods that just failed, in order: a plain pod takes the next one, as upstream's
        AddUnschedulableIfNotPresent sets its queue timestamp to the failure (PrioritySort then puts it behind the
        pods of its priority queued before); a PodGroup member keeps its arrival (its group's queue place reads it)."""
        of_pod, arrival, out = self.groups.of_pod, self.arrival, []
        for pod, seq in zip(pods, seqs):
            if pod.key not in of_pod and arrival.get(pod.key) == seq:
                seq, self._seq = self._seq, self._seq + 1
                arrival[pod.key] = seq
            out.append(seq)
        return out

    def park(self, pod: Pod, seq: int, rejectors: frozenset) -> None:
        """A pod that fit nowhere waits in the unschedulable pool for an event one of its rejectors registered."""
        self.park_run([pod], [seq], rejectors, self.shape_of(pod))

    def park_run(self, pods: list[Pod], seqs: list[int], rejectors: frozenset, shape: PodShape) -> None:
        """park for pods of one shape (so one profile) rejected alike, in order."""
        framework = self.framework_for(pods[0])
        waits = self._waits.get((framework, rejectors))
        if waits is None:
            plugins = tuple(framework.plugin(name) for name in sorted(rejectors) if name in framework.plugins)
            events = frozenset().union(*(p.events for p in plugins)) if plugins else ALL_EVENTS
            waits = self._waits[(framework, rejectors)] = (plugins, events)
        priority = self.cluster.priority
        progress = self.outside_progress()
        self.queue.park_all([Parked(pod, shape, seq, priority(pod), *waits, progress) for pod, seq in zip(pods, seqs)],
                            self.now)

    def requeue_parked(self, event: str, keys: set[str]) -> None:
        """The pooled pods `keys` move as an event that helps them would move them (to the activeQ, or the backoffQ
        while backing off): upstream's check of a failed pod against the events received while it was in flight."""
        self._wake(event, lambda parked: parked.pod.key in keys)

    def _wake(self, event: str, helps, skip=None) -> None:
        """The pooled pods waiting for `event` that `helps` moves, to the activeQ (those whose backoff is over, as
        one batch) or the backoffQ."""
        ready = self.queue.wake(event, helps, self.now, skip)
        self._enqueue_plain([p.pod for p in ready], [p.seq for p in ready])

    def retry_after_error(self, pods: list[Pod], seqs: list[int], shape: PodShape) -> None:
        """Pods of one shape that failed with an error (no plugin rejected them: upstream's podErrorBackoffQ) are
        tried again when their backoff ends, with no event."""
        priority = self.cluster.priority
        self.queue.retry_errors([PodRun(shape, [pod], [seq], priority(pod)) for pod, seq in zip(pods, seqs)],
                                self.now, self.progress)

    def cluster_event(self, event: str, objects, each: bool = False, at_most_priority: int | None = None) -> None:
        """An event that may make pending pods fit: every pooled pod whose rejectors registered it and whose hint
        says it may help moves to the activeQ, or to the backoffQ while backing off; waiting groups are woken.
        at_most_priority: only pods (and groups, by their queue priority) of this priority or lower are moved.

        each: `objects` (a list) stand for one event per object, in turn (pods deleted together). A pooled pod
        moves at the first object whose hint helps it, and the pods moved at one object enter the activeQ as one
        batch, after those of the objects before: the runs that events one by one would have queued. Exact
        because nothing the events in between would change is read by a hint (the pool, the pod, the object, the
        cluster's default spreading selectors), and the activeQ and backoffQ order entries by their own keys."""
        def helps_with(parked: Parked, objs) -> bool:
            # A pod no plugin rejected waits for any change but a binding elsewhere.
            if not parked.plugins:
                return event != POD_BOUND
            return any(event in p.events and p.hint(event, parked.pod, objs, self.cluster) for p in parked.plugins)

        first: dict[int, int] = {}          # each: pooled pod's arrival seq -> the object that moves it
        # Rejectors (Parked.plugins) of which one registered the event with no hint of its own: any object helps.
        any_helps: dict[tuple, bool] = {}

        def helps_first(parked: Parked) -> bool:
            always = any_helps.get(parked.plugins)
            if always is None:
                always = any_helps[parked.plugins] = any(event in p.events and not p.hints for p in parked.plugins)
            i = 0 if always and objects else next((i for i, obj in enumerate(objects) if helps_with(parked, [obj])), -1)
            first[parked.seq] = i
            return i >= 0

        skip = None
        if at_most_priority is not None:
            pool = self.queue.unschedulable
            skip = lambda key: pool[key].priority > at_most_priority          # noqa: E731
        if each:
            ready = self.queue.wake(event, helps_first, self.now, skip)
            batches: dict[int, tuple[list, list]] = {}      # object -> (pods, seqs) it moves
            for parked in ready:                # in arrival order, as each event takes them
                pods, seqs = batches.setdefault(first[parked.seq], ([], []))
                pods.append(parked.pod)
                seqs.append(parked.seq)
            for i in sorted(batches):
                self._enqueue_plain(*batches[i])
        else:
            self._wake(event, lambda parked: helps_with(parked, objects), skip)
        if event != POD_BOUND:
            for gs in self.groups.unschedulable():
                if at_most_priority is None or self.groups.queue_key(gs)[0] <= at_most_priority:
                    self._activate_group(gs)

    def release(self, pod_key: str) -> None:
        """A placed pod leaves its node (Permit rejection): its load, and what its plugins reserved."""
        self.cluster.tensors.unbind(pod_key)
        self.permit_rejected([pod_key])
        self.release_plugins([pod_key])

    def permit_rejected(self, pod_keys: list[str]) -> None:
        """Placed pods that were not bound (waiting at Permit) are rejected: every profile's Reserve plugins run
        Unreserve for them."""
        for framework in self.frameworks.values():
            for plugin in framework.at("reserve"):
                plugin.permit_rejected(pod_keys, self.cluster)

    def release_plugins(self, pod_keys: list[str]) -> None:
        """The pods left their nodes: every profile's Reserve plugins drop what each held."""
        for framework in self.frameworks.values():
            for plugin in framework.at("reserve"):
                plugin.release(pod_keys, self.cluster)

    # -- queue bookkeeping ------------------------------------------------------------------------------
    def knows(self, key: str) -> bool:
        """Whether a pod of this key is pending here or bound (a group member bound to a node not in the node table
        too)."""
        if key in self.arrival or key in self.unserved or self.cluster.tensors.node_of(key) >= 0:
            return True
        gs = self.groups.of_pod.get(key)
        return gs is not None and key in gs.elsewhere

    def _enqueue_plain(self, pods: list[Pod], seqs: list[int], warnings: list[str] | None = None,
                       starts: list[int] | None = None) -> None:
        """Pods (with their arrival seqs) into the activeQ as runs; runs are cut in queue order. `starts`: the pods'
        template runs, when known."""
        if not pods:
            return
        if starts is None:
            starts = template_runs(pods)
        priority = self.cluster.priority
        prios = [priority(pods[a]) for a in starts[:-1]]         # a run's pods share their spec: one priority
        by_seq = np.array(seqs)
        # Usually one priority, in arrival order (replicas of one spec): already in queue order.
        if len(set(prios)) > 1 or not (by_seq[1:] > by_seq[:-1]).all():
            order = np.lexsort((by_seq, -np.repeat(prios, np.diff(starts)))).tolist()
            pods, seqs = [pods[i] for i in order], [seqs[i] for i in order]
            starts = template_runs(pods)
            prios = [priority(pods[a]) for a in starts[:-1]]
        shapes = self.shapes_of(pods, starts)
        if warnings is not None:
            for pod, shape in zip(pods, shapes):
                if shape.unmodelled:
                    self._warn_unmodelled([pod.key], shape, warnings)
        for run in cut_runs(pods, shapes, np.repeat(prios, np.diff(starts)).tolist(), seqs):
            self.queue.push_active(run, run.priority, run.seqs[0])

    def _warn_unmodelled(self, keys: list[str], shape: PodShape, warnings: list[str]) -> None:
        """What of the pods (of one shape) phalanx does not model, one warning line per text naming every pod it
        concerns."""
        for text in shape.unmodelled:
            entry = self._reported.get(text)
            if entry is None or entry.warnings is not warnings:
                entry = self._reported[text] = _Reported(warnings, len(warnings))
                warnings.append("")
            entry.pods += keys
            warnings[entry.index] = entry.line(text)

    def _group_changed(self, gs: GroupState, warnings: list[str] | None = None) -> None:
        """Members were added (or the group appeared): held members whose holding plugin registered the event go
        through PreEnqueue again, and the group is woken if it waits."""
        for pod, seq, plugin in sorted(gs.held.values(), key=lambda v: v[1]):
            if GROUP_MEMBER_ADDED not in plugin.events:
                continue
            del gs.held[pod.key]
            gs.pending[pod.key] = (pod, seq)
            if self.pre_enqueue(pod, seq, self.framework_for_group(gs), gs):
                self.cluster.claims.register(pod, gs.group)
        if len(gs.shapes) > len(gs.pending):        # members left: forget their shapes
            gs.shapes = {seq: gs.shapes[seq] for _, seq in gs.pending.values() if seq in gs.shapes}
        for pod, seq in gs.pending.values():
            if seq not in gs.shapes:
                shape = gs.shapes[seq] = self.shape_of(pod)
                if shape.unmodelled and warnings is not None:
                    self._warn_unmodelled([pod.key], shape, warnings)
        if self.gang_mode == "permit":
            ready = [(p, s) for p, s in gs.pending.values() if p.key not in gs.enqueued]
            gs.enqueued.update(p.key for p, _ in ready)
            self._enqueue_plain([p for p, _ in ready], [s for _, s in ready], warnings)
            # Members rejected at Permit wait for this ({Pod, Add} of a member, {PodGroup, Add}).
            self.cluster_event(GROUP_MEMBER_ADDED, [gs])
            return
        if gs.state in ("idle", "unschedulable"):
            self._activate_group(gs)

    def _activate_group(self, gs: GroupState) -> None:
        if not gs.pending:
            gs.state = "idle"
            return
        ready_at = self.queue.backoff_end(gs.failed_at, gs.attempts) if gs.attempts else self.now
        if ready_at <= self.now:
            gs.state = "active"
            self.queue.push_active(gs, *self.groups.queue_key(gs))
        else:
            gs.state = "backoff"
            self.queue.push_backoff(gs, ready_at, gs.first_seq, self.groups.queue_key(gs)[0])

    def _release_backoff(self) -> None:
        for entry in self.queue.pop_expired(self.now):
            if isinstance(entry, GroupState):
                if entry.state == "backoff":
                    entry.state = "active"
                    self.queue.push_active(entry, *self.groups.queue_key(entry))
            else:
                self.queue.push_active(entry, entry.priority, entry.seqs[0])

    def rank(self) -> np.ndarray:
        """Node order for ties: node order (one read-only array per cluster size), or a permutation per cycle."""
        n = self.cluster.tensors.nodes.size
        if self.tie_break != "first":
            return self.rng.permutation(n)
        if len(self._node_order) != n:
            self._node_order = np.arange(n)
            self._node_order.flags.writeable = False
        return self._node_order

    # -- state for tests and explain ----------------------------------------------------------------
    @property
    def _group_of(self) -> dict[str, GroupState]:
        return self.groups.of_pod
