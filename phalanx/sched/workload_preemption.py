"""Workload-aware preemption around the plugins (KEP-5710; upstream v1.36 schedule_one_podgroup.go
runWorkloadAwarePreemption): when a PodGroup's cycle fails Unschedulable, the postFilter plugins that implement
PodGroupPostFilter (DefaultPreemption) treat the group as one preemptor. The dry run they are handed re-runs the
group's own cycle (GroupCycle.try_group) on copies of the cluster without some victim units; the cluster itself is
never touched until the victims are evicted (or, waiting at Permit, preempted there), when the cycle ends. A victim
unit is a PodGroup whose disruptionMode is PodGroup (all its pods on nodes, bound or waiting at Permit, at the
group's priority) or a single pod on a node (at its own priority).
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np

from ..cluster_models import Pod, pod_group_priority
from ..cluster_models.gpus import device_request
from ..cluster_models.tensors import bind_existing
from ..kernels import preemption as kernel
from ..kernels.status import SUCCESS
from ..plugins.framework import FIXED, NODE_LOCAL, PER_POD, CycleError, FailedGroupCycle
from ..plugins.topology_placement import NO_PLACEMENTS_MESSAGE
from .backends import make_placer
from .cluster import Nomination
from .cycle import NodeRows, Prepared, WithNodes, copy_capacity, prepare, run_filters
from .podgroups import GROUP_UNSCHEDULABLE
from .topology import placements, unconstrained_unschedulable
from .preemption import _copy_without, pdb_matches
from .records import Preempted

NOT_REGISTERED = "default preemption plugin is not registered, workload aware preemption is disabled"
CONSTRAINED = "workload aware preemption is not supported for pod groups with scheduling constraints"


@dataclass
class VictimUnit:
    """What workload-aware preemption evicts at once."""
    source: object           # the PodGroup (disruptionMode PodGroup) or the pod
    rows: np.ndarray         # (k,) binding-log rows of its bound pods, in binding order
    log: list                # the binding log's pods (rows index it)
    priority: int            # the PodGroup's priority, or the pod's
    is_group: bool           # upstream IsPodGroup: its (first) pod belongs to a PodGroup, whatever the mode
    start: float             # earliest start of its pods (unset: now), on the scheduler's clock

    @property
    def key(self) -> str:
        """The PodGroup's key or the pod's."""
        return self.source.key

    @property
    def pods(self) -> list[Pod]:
        return [self.log[r] for r in self.rows.tolist()]


@dataclass
class _Layout:
    """The victim units of a dry run, unit after unit (positions in GroupDryRun.units)."""
    log: list                    # the binding log's pods (rows index it)
    groups: list                 # the PodGroups in disruptionMode PodGroup, each one unit
    unit_rows: np.ndarray        # (rows,) int64 every unit's binding-log rows, unit after unit, each in binding order
    unit_start: np.ndarray       # (U + 1,) int64 where each unit's rows start in unit_rows
    group: np.ndarray            # (U,) int64 the unit's index in groups, -1 for a single pod
    is_group: np.ndarray         # (U,) bool upstream IsPodGroup (its pod belongs to a PodGroup, whatever the mode)
    priority: np.ndarray         # (U,) int64 the group's priority, a member's group's, or the pod's
    start: np.ndarray            # (U,) float64 earliest start of the unit's pods


class GroupDryRun:
    """The victim units of the cluster and the group's cycle re-run without some of them."""

    def __init__(self, sched, gs, nodes: np.ndarray | None = None):
        self.sched = sched
        self.gs = gs
        self.nodes = nodes       # a topology domain's node ids (beyond v1.36): its units, the cycle inside it
        self._sub = None         # the cluster copy the re-runs use, without the pods in self._gone
        self._gone: dict[str, tuple[Pod, int]] = {}    # pod key -> (pod, node id) taken off self._sub
        self._made: dict[int, VictimUnit] = {}         # position in self.units -> the unit, made when asked for
        self._position: dict[int, int] = {}            # id(unit) -> its position in self.units

    @functools.cached_property
    def units(self) -> list[VictimUnit]:
        """Every bound pod in a unit, in binding order of each unit's first pod."""
        return [self._unit(i) for i in range(len(self._layout.priority))]

    @functools.cached_property
    def unschedulable(self) -> str:
        """The status of a re-run that fails: the group algorithm's (in a domain, its cycle's alone)."""
        if self.nodes is not None:
            return GROUP_UNSCHEDULABLE
        return unconstrained_unschedulable(self.sched.framework_for_group(self.gs))

    def units_below(self, priority: int) -> list[VictimUnit]:
        """The units of lower priority than `priority` (the preemptor's), in self.units' order. When no bound pod
        can be in one (no pod outside a PodGroup, and no PodGroup or its pods, below `priority`), none, found without
        laying out every bound pod's unit (a cost per bound pod, per failed group)."""
        sched, bound = self.sched, self.sched.preemption.rows
        rows = self._rows
        ref = bound.group_ref[rows]
        if not np.any(bound.priority[rows] < priority):
            groups = (bound.group_state(r, sched.groups) for r in np.unique(ref[ref >= 0]).tolist())
            if all(gs is None or pod_group_priority(gs.group, sched.cluster.priority_classes) >= priority
                   for gs in groups):
                return []
        return [self._unit(i) for i in np.flatnonzero(self._layout.priority < priority).tolist()]

    @functools.cached_property
    def _rows(self) -> np.ndarray:
        """The binding-log rows of the pods that may be victims (not removed: bound, or waiting at Permit, as
        upstream's snapshot has them), the dry runs' view of them synced."""
        sched = self.sched
        tensors = sched.cluster.tensors
        sched.preemption.rows.sync(sched.cluster, sched.start_of)
        log, _, removed = tensors.log()
        live = np.ones(len(log), bool)
        live[list(removed)] = False
        return np.flatnonzero(live)

    @functools.cached_property
    def _layout(self) -> "_Layout":
        """Every unit's rows, priority and start, unit after unit; the VictimUnit objects are made when asked for
        (_unit: most failed groups read only the units below their priority)."""
        sched = self.sched
        tensors, cluster = sched.cluster.tensors, sched.cluster
        bound = sched.preemption.rows
        rows = self._rows
        ref = bound.group_ref[rows]
        # References to a PodGroup in disruptionMode PodGroup make one unit per group; every other pod its own, at
        # its group's priority when it is a member of a known group in disruptionMode Pod (upstream
        # newDomainForWorkloadPreemption; TestNewDomainForWorkloadPreemption "pods with pod group
        # (DisruptionModePod)"), else at its own.
        index, groups, whole, group_priority = bound.group_table(sched.groups, cluster.priority_classes)
        of = index[ref]                                   # each row's PodGroup (-1: none)
        unit = np.where(whole[of], of, len(groups) + np.arange(len(rows)))
        order = np.argsort(unit, kind="stable")          # each unit's rows together, in binding order
        rows, unit, ref, of = rows[order], unit[order], ref[order], of[order]
        firsts = np.flatnonzero(np.concatenate([[True], unit[1:] != unit[:-1]])) if len(unit) else \
            np.zeros(0, np.int64)
        lengths = np.diff(np.append(firsts, len(rows)))
        start = bound.start[rows]
        start = np.where(np.isnan(start), sched.now, start)
        earliest = np.minimum.reduceat(start, firsts) if len(firsts) else start
        # Units in binding order of their first pod (the first row of each segment is its earliest).
        final = np.argsort(rows[firsts], kind="stable")
        if self.nodes is not None:          # units with a pod in the domain (a whole group goes with it)
            inside = np.zeros(tensors.nodes.size, bool)
            inside[self.nodes] = True
            hit = inside[tensors.log()[1][rows]]
            final = final[np.logical_or.reduceat(hit, firsts)[final]] if len(firsts) else final
        # Every unit's rows, unit after unit (MemberCount moves units by these arrays).
        unit_rows = rows[np.repeat(firsts[final] - np.cumsum(np.append(0, lengths[final][:-1])), lengths[final])
                         + np.arange(int(lengths[final].sum()))]
        unit_start = np.concatenate([[0], np.cumsum(lengths[final])])
        first = firsts[final]
        group = np.where(unit[first] < len(groups), unit[first], -1)     # the unit is that PodGroup
        own = bound.priority[rows[first]].astype(np.int64)
        priority = np.where(of[first] >= 0, group_priority[of[first]], own)
        return _Layout(tensors.log()[0], groups, unit_rows, unit_start, group, (group >= 0) | (ref[first] >= 0),
                       priority, earliest[final])

    def _unit(self, i: int) -> VictimUnit:
        """The unit at position i of self.units (made once)."""
        hit = self._made.get(i)
        if hit is None:
            lay = self._layout
            log = lay.log
            seg = lay.unit_rows[lay.unit_start[i]: lay.unit_start[i + 1]]
            g = int(lay.group[i])
            hit = self._made[i] = VictimUnit(lay.groups[g] if g >= 0 else log[int(seg[0])], seg, log,
                                             int(lay.priority[i]), bool(lay.is_group[i]), float(lay.start[i]))
            self._position[id(hit)] = i
        return hit

    def index(self, units: list[VictimUnit]) -> np.ndarray:
        """(k,) int64 the positions of `units` (made by this dry run) in self.units (what schedules_without_at
        takes)."""
        return np.array([self._position[id(u)] for u in units], np.int64)

    def schedules_without_at(self, at: np.ndarray) -> str:
        """schedules_without for the units at positions `at` of self.units (the counting path reads them as a mask,
        so a reprieve loop's probes cost no Python per unit)."""
        if self._count is not None:
            return self._count.schedules_without_at(at)
        return self.schedules_without([self._unit(i) for i in np.asarray(at).tolist()])

    def schedules_without(self, units: list[VictimUnit]) -> str:
        """"" when the group's cycle succeeds (minCount reached with at least one member placed) on the cluster
        without `units`; else why it does not."""
        if self._count is not None:
            return self._count.schedules_without_at(self.index(units))
        sched = self.sched
        sub = self._without({p.key: p for u in units for p in u.pods})
        rank = sched.rank()
        if self.nodes is not None:          # the cycle inside the domain, as a topology placement runs it
            sub = sub.restricted(self.nodes, sub.tensors.live_bound_arrays())
            rank = np.arange(len(self.nodes))
        placer = make_placer(sched.backend, sub, sched.framework_for_group(self.gs), sched.placer.batching)
        mark = sub.tensors.log_mark()
        attempt = sched.group_cycle.try_group(self.gs, placer, rank)
        placer.undo(attempt.placed, mark)
        if attempt.error is not None:
            return attempt.error
        # The group algorithm's status when minCount is not reached: the group's "pod group is unschedulable" (an
        # unconstrained group's as its one placement's, topology.unconstrained_unschedulable).
        if attempt.infeasible is None and attempt.placed_count >= 1:
            return ""
        return self.unschedulable

    @property
    def monotone(self) -> bool:
        """Whether giving units back can only make the group place fewer members (true where they are counted:
        more load never passes a node-local Filter, nor takes more copies). Inter-pod terms are not monotone."""
        return self._count is not None

    @functools.cached_property
    def _count(self) -> "MemberCount | None":
        """The counting path when the group's cycle can be counted instead of run (see MemberCount), else None."""
        sched, gs = self.sched, self.gs
        members = [p for p, _ in gs.pending.values()]
        shapes = {id(s): s for s in (sched.member_shape(gs, p, seq) for p, seq in gs.pending.values())}
        if len(shapes) != 1 or len({sched.cluster.priority(p) for p in members}) != 1:
            return None
        shape = next(iter(shapes.values()))
        cluster, framework = sched.cluster, sched.framework_for_group(gs)
        nominations = cluster.nominations
        if shape.host_ports or sched.reserves(shape) or any(p.key in nominations for p in members) \
                or len(framework.split_run(shape, members, cluster)) != 1:
            return None
        p = prepare(shape, cluster, framework)
        if not countable(p):
            return None
        sched.preemption.rows.sync(cluster, sched.start_of)
        load = nominations.load_for(members[0], cluster.priority(members[0]), cluster.tensors) if nominations \
            else None
        unit_rows, unit_start = self._layout.unit_rows, self._layout.unit_start
        return MemberCount(cluster, p, len(members), max(gs.min_count - len(gs.bound), 1), load,
                           sched.preemption.rows.request, unit_rows, unit_start, self.unschedulable, self.nodes)

    def _without(self, gone: dict[str, Pod]):
        """The cluster without the bound pods `gone`: one copy, from which the pods of earlier calls are taken off
        or put back (a unit given back stays given back in the reprieve loop). Pods holding DRA devices or GPU
        shares are taken off a fresh copy each time (putting them back would have to re-take their devices)."""
        cluster = self.sched.cluster
        plain = not any(p.spec.resource_claims or device_request(p) for p in gone.values())
        if self._sub is None or not plain:
            self._sub = _copy_without(cluster, tuple(gone), [])
            self._gone = {key: (pod, cluster.tensors.node_of(key)) for key, pod in gone.items()}
            if not plain:
                self._sub, sub = None, self._sub
                return sub
            return self._sub
        tensors = self._sub.tensors
        for key in [k for k in self._gone if k not in gone]:
            pod, node = self._gone.pop(key)
            bind_existing(tensors, pod, node)
        for key in [k for k in gone if k not in self._gone]:
            self._gone[key] = (gone[key], cluster.tensors.node_of(key))
            tensors.unbind(key)
        return self._sub

    def pdb_violating(self, units: list[VictimUnit]) -> np.ndarray:
        """(U,) bool for units in importance order: evicting the unit, after the units before it, takes some
        PodDisruptionBudget below zero (each pod of each unit counted in turn against shared budgets)."""
        pdbs = self.sched.cluster.disruptions_allowed(self.sched.permit.waiting_keys())
        if not pdbs:
            return np.zeros(len(units), bool)
        pods = [p for u in units for p in u.pods]
        matches, allowed = pdb_matches(pdbs, pods)
        per_pod = kernel.pdb_violating(np.zeros(len(pods), np.int64), matches, allowed)
        owner = np.repeat(np.arange(len(units)), [len(u.pods) for u in units])
        out = np.zeros(len(units), bool)
        np.logical_or.at(out, owner, per_pod)
        return out


def countable(p: Prepared) -> bool:
    """Whether MemberCount is exact for this cycle: no PreFilter rejected the pod or failed, no Score can fail it,
    and every Filter that runs either reads no pods or only its own node's load, both when pods leave nodes and
    while copies of the pod are placed (so a placement changes nothing but its own node)."""
    if p.rejection is not None or p.error is not None or p.score_error is not None:
        return False
    if any(plugin.skip_behaviour(p.pod, point) == PER_POD for plugin, point in p.skipped if point == "preFilter"):
        return False
    return all((plugin.removal_behaviour(state), plugin.filter_behaviour(state)) in
               ((FIXED, FIXED), (NODE_LOCAL, NODE_LOCAL), (NODE_LOCAL, FIXED)) for plugin, state in p.filters)


class MemberCount:
    """The group's cycle counted instead of run, for a group whose pending members are identical pods whose
    Filters read no pods or only their node's load (countable). Placing a copy then changes only the node that
    took it, and a copy fails only where no node takes one more, so the cycle places min(members, the sum over
    the nodes passing Filter of the copies each takes) pods whichever nodes it picks. Filter reads the cluster
    without the units taken off and with the pods nominated to nodes that count for the members; per-node copies
    are kept and recomputed on the nodes of the units that come or go between calls."""

    def __init__(self, cluster, p: Prepared, members: int, needed: int, load, request: np.ndarray,
                 unit_rows: np.ndarray, unit_start: np.ndarray, unschedulable: str, domain: np.ndarray | None = None):
        tensors = cluster.tensors
        self.tensors = tensors
        self.unschedulable = unschedulable      # the status of a re-run that fails (GroupDryRun.unschedulable)
        self.members = members          # pending members, all of one shape
        self.needed = needed            # members the cycle must place: minCount less those bound, at least one
        self.request = request          # (log rows, R') each binding-log row's requests (BoundRows.request)
        self.p_local = p.node_local()
        fixed = dataclasses.replace(p, filters=tuple(
            (plugin, state) for plugin, state in p.filters if plugin.removal_behaviour(state) == FIXED))
        self.fixed_ok = np.asarray(run_filters(np, fixed, tensors).feasible)     # (N,) bool, PreFilterResult too
        if domain is not None:            # a topology domain: no copy lands outside it
            inside = np.zeros(len(self.fixed_ok), bool)
            inside[domain] = True
            self.fixed_ok = self.fixed_ok & inside
        self.requested = tensors.nodes.requested.copy()      # (N, R) load with the units in self.gone taken off
        self.pod_count = tensors.nodes.pod_count.copy()      # (N,)
        if load is not None:
            self.requested += load[0]
            self.pod_count += load[1]
        self.unit_rows = unit_rows               # binding-log rows of the dry run's units, unit after unit
        self.unit_start = unit_start             # (U + 1,) unit u's rows are unit_rows[unit_start[u]:unit_start[u + 1]]
        self.gone = np.zeros(len(unit_start) - 1, bool)   # (U,) the units taken off now
        self.copies = self._copies(np.arange(tensors.nodes.size))     # (N,) copies each node takes now

    def _copies(self, nodes: np.ndarray) -> np.ndarray:
        view = WithNodes(self.tensors, NodeRows(self.tensors.nodes, nodes, requested=self.requested[nodes],
                                                pod_count=self.pod_count[nodes]))
        ok = self.fixed_ok[nodes] & np.asarray(run_filters(np, self.p_local, view).feasible)
        return np.where(ok, copy_capacity(np, self.p_local, view, self.members), 0)

    def _rows_of(self, units: np.ndarray) -> np.ndarray:
        """The binding-log rows of the units at positions `units`."""
        first, length = self.unit_start[units], self.unit_start[units + 1] - self.unit_start[units]
        ends = np.cumsum(length)
        return self.unit_rows[np.repeat(first - (ends - length), length) + np.arange(int(ends[-1]) if len(ends) else 0)]

    def _move(self, rows: np.ndarray, sign: int) -> np.ndarray:
        """Put the pods of binding-log rows back on (sign 1) or take them off (-1) their nodes; returns the nodes."""
        nodes = self.tensors.log()[1][rows].astype(np.int64)
        width = self.requested.shape[1]
        np.add.at(self.requested, nodes, sign * self.request[rows][:, :width])
        np.add.at(self.pod_count, nodes, sign)
        return nodes

    def schedules_without_at(self, at: np.ndarray) -> str:
        """Whether the group's cycle succeeds without the units at positions `at` of the dry run's units."""
        wanted = np.zeros(len(self.gone), bool)
        wanted[at] = True
        changed = np.flatnonzero(wanted != self.gone)
        if len(changed):
            off = wanted[changed]
            nodes = np.unique(np.concatenate([self._move(self._rows_of(changed[~off]), 1),
                                              self._move(self._rows_of(changed[off]), -1)]))
            self.copies[nodes] = self._copies(nodes)
            self.gone = wanted
        placed = min(self.members, int(self.copies.sum()))
        return "" if placed >= self.needed else self.unschedulable


class WorkloadPreemption:
    """runWorkloadAwarePreemption for a PodGroup whose cycle failed Unschedulable: the text its status gains, or
    the preemption (victims evicted when the cycle ends, placeable members nominated where the failed cycle put
    them)."""

    def __init__(self, sched, topology: bool = False):
        self.sched = sched
        self.topology = topology    # beyond v1.36: topology-constrained groups preempt in their cheapest domain

    def run(self, gs, placed: list[tuple[Pod, int]]) -> str:
        """`placed`: (member, node id) the failed cycle placed. Returns "" when the group preempts, else the
        reason appended to its status."""
        outcome = self.what_if(gs)
        if isinstance(outcome, str):
            return outcome
        sched, result = self.sched, outcome.result
        nominations, names = sched.cluster.nominations, sched.cluster.tensors.nodes.names
        nominated = {}
        for pod, node in placed:
            nominated[pod.key] = names[node]
            nominations[pod.key] = Nomination(pod, names[node], sched.cluster.priority(pod),
                                              sched.shape_of(pod).request_vector(sched.cluster.tensors))
        sched.preemption.pending.append(Preempted(sched.now, gs.key, "", [p.key for p in result.victims],
                                                  kind="PodGroup", nominated=nominated, domain=outcome.domain))
        return ""

    def what_if(self, gs) -> "str | GroupPreemption":
        """The group's PodGroupPostFilter plugins run in order, changing nothing: the preemption the first
        succeeding plugin chose, or the reason appended to the group's status ("" when workload-aware preemption
        is off)."""
        sched = self.sched
        framework = sched.framework_for_group(gs)
        if not framework.context.workload_aware_preemption:
            return ""
        plugins = [pl for pl in framework.at("postFilter") if pl.implements("pod_group_post_filter")]
        if not plugins:
            return NOT_REGISTERED
        constrained = gs.group.spec.scheduling_constraints is not None and gs.group.spec.scheduling_constraints.topology
        if constrained and not self.topology:
            return CONSTRAINED
        members = [p for p, _ in gs.pending.values()]
        # The re-runs place them on copies sharing the vocabularies.
        sched.cluster.grow_vocabularies((p, sched.member_shape(gs, p, seq)) for p, seq in gs.pending.values())
        policy = "Never" if any(sched.cluster.preemption_policy(p) == "Never" for p in members) else \
            "PreemptLowerPriority"
        priority = pod_group_priority(gs.group, sched.cluster.priority_classes)
        if not constrained:
            return self._in(gs, plugins, priority, policy, None)
        domains = placements(framework, gs, sched.cluster.tensors)
        if isinstance(domains, CycleError):
            return domains.message
        tried = [self._in(gs, plugins, priority, policy, nodes) for nodes in domains]
        chosen = [t for t in tried if not isinstance(t, str)]
        if not chosen:
            return tried[0] if tried else NO_PLACEMENTS_MESSAGE
        return chosen[kernel.pick_one(*(np.array(c) for c in zip(*(t.criteria() for t in chosen))))]

    def _in(self, gs, plugins, priority: int, policy: str, nodes) -> "str | GroupPreemption":
        """The plugins over the whole cluster (nodes None, as v1.36) or inside one topology domain."""
        sched = self.sched
        dry_run = GroupDryRun(sched, gs, nodes)
        failed = FailedGroupCycle(gs.key, priority, policy, dry_run)
        reasons = []
        for plugin in plugins:
            result = plugin.pod_group_post_filter(failed, sched.cluster)
            if result.code == SUCCESS:
                return GroupPreemption(result, dry_run, "" if nodes is None else self._domain_name(gs, nodes))
            reasons.append(result.message)
        return ", ".join(reasons)

    def _domain_name(self, gs, nodes: np.ndarray) -> str:
        """`key=value` of a topology domain (its first node's label)."""
        tensors = self.sched.cluster.tensors
        key = gs.group.spec.topology_keys[0]
        labels = tensors.nodes.labels[int(nodes[0])]
        column = tensors.node_labels.keys.get(key)
        return f"{key}={tensors.node_labels.values[column].items[int(labels[column])]}"


@dataclass
class GroupPreemption:
    """What workload-aware preemption chose for a PodGroup: the plugin's result (its victims), the dry run it
    read, and the topology domain it preempted in ("" for the whole cluster)."""
    result: object
    dry_run: GroupDryRun
    domain: str

    def criteria(self) -> tuple:
        """pickOneNodeForPreemption's criteria over the victims, to compare domains: PDB-violating victim units (as
        the plugin counted them, against the budgets every more important potential victim used), the highest
        victim priority, the sum of (priority + MaxInt32 + 1) per victim pod, the victim pods, the earliest start
        among the highest-priority units. A pod's priority is its unit's (a whole group's: the group's)."""
        victims = {p.key for p in self.result.victims}
        units = [u for u in self.dry_run.units if any(p.key in victims for p in u.pods)]
        prio = np.array([u.priority for u in units for _ in u.rows], np.int64)
        top = int(prio.max())
        violations = self.result.pdb_violations
        return (violations, top, int(np.sum(prio + kernel.MAX_INT32 + 1)), len(prio),
                min(u.start for u in units if u.priority == top))
