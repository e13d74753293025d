"""Workload-aware preemption around the plugins (KEP-5710; upstream v1.36 schedule_one_podgroup.go
runWorkloadAwarePreemption): when a PodGroup's cycle fails Unschedulable, the postFilter plugins that implement
PodGroupPostFilter (DefaultPreemption) treat the group as one preemptor. The dry run they are handed re-runs the
group's own cycle (GroupCycle.try_group) on copies of the cluster without some victim units; the cluster itself is
never touched until the victims are evicted, when the cycle ends. A victim unit is a PodGroup whose disruptionMode
is PodGroup (all its bound pods, at the group's priority) or a single bound pod (at its own priority).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..cluster_models import Pod
from ..cluster_models.gpus import device_request
from ..cluster_models.tensors import bind_existing
from ..kernels import preemption as kernel
from ..kernels.status import SUCCESS
from ..plugins.framework import FailedGroupCycle
from .backends import make_placer
from .cluster import Nomination
from .podgroups import GROUP_UNSCHEDULABLE
from .preemption import _copy_without, pdb_matches
from .records import Preempted

NOT_REGISTERED = "default preemption plugin is not registered, workload aware preemption is disabled"
CONSTRAINED = "workload aware preemption is not supported for pod groups with scheduling constraints"


@dataclass
class VictimUnit:
    """What workload-aware preemption evicts at once."""
    key: str                 # the PodGroup's key (disruptionMode PodGroup) or the pod's
    pods: list[Pod]          # its bound pods, in binding order
    priority: int            # the PodGroup's priority, or the pod's
    is_group: bool           # upstream IsPodGroup: its (first) pod belongs to a PodGroup, whatever the mode
    start: float             # earliest start of its pods (unset: now), on the scheduler's clock


def group_priority(group, cluster) -> int:
    """util.PodGroupPriority: spec.priority, or the value of spec.priorityClassName (what admission writes into
    spec.priority), else 0. Member pods' priorities are not read."""
    spec = group.spec
    if spec.priority is not None:
        return spec.priority
    if spec.priority_class_name:
        cls = cluster.priority_classes.get(spec.priority_class_name)
        return cls.value if cls is not None else 0
    return 0


class GroupDryRun:
    """The victim units of the cluster and the group's cycle re-run without some of them."""

    def __init__(self, sched, gs, spared: set[str]):
        self.sched = sched
        self.gs = gs
        self.spared = spared
        self._sub = None         # the cluster copy the re-runs use, without the pods in self._gone
        self._gone: dict[str, tuple[Pod, int]] = {}    # pod key -> (pod, node id) taken off self._sub

    @functools.cached_property
    def units(self) -> list[VictimUnit]:
        """Every bound pod in a unit, in binding order of each unit's first pod."""
        sched, cluster = self.sched, self.sched.cluster
        now = sched.now - sched.clock_origin
        units: dict[str, VictimUnit] = {}
        for pod, _ in cluster.tensors.live_bound():
            if pod.key in self.spared:
                continue
            start = sched.start_of(pod)
            start = now if np.isnan(start) else start
            in_group = pod.spec.scheduling_group is not None or pod.spec.workload_ref is not None
            gs = sched.groups.group_of(pod)[0] if in_group else None
            group = gs.group if gs is not None else None
            if group is not None and group.spec.disruption_mode == "PodGroup":
                unit = units.get(group.key)
                if unit is None:
                    unit = units[group.key] = VictimUnit(group.key, [], group_priority(group, cluster), True, start)
                unit.pods.append(pod)
                unit.start = min(unit.start, start)
            else:
                units[pod.key] = VictimUnit(pod.key, [pod], cluster.priority(pod), in_group, start)
        return list(units.values())

    def schedules_without(self, units: list[VictimUnit]) -> str:
        """"" when the group's cycle succeeds (minCount reached with at least one member placed) on the cluster
        without `units`; else why it does not."""
        sched = self.sched
        sub = self._without({p.key: p for u in units for p in u.pods})
        placer = make_placer(sched.backend, sub, sched.framework_for_group(self.gs), sched.placer.batching)
        mark = sub.tensors.log_mark()
        attempt = sched.group_cycle.try_group(self.gs, placer, sched.rank())
        placer.undo(attempt.placed, mark)
        if attempt.error is not None:
            return attempt.error
        # The group algorithm's status when minCount is not reached is the group's "pod group is unschedulable".
        return "" if attempt.infeasible is None and attempt.placed_count >= 1 else GROUP_UNSCHEDULABLE

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
        pods = [p for u in units for p in u.pods]
        matches, allowed = pdb_matches(self.sched.cluster.disruptions_allowed(), pods)
        per_pod = kernel.pdb_violating(np.zeros(len(pods), np.int64), matches, allowed)
        owner = np.repeat(np.arange(len(units)), [len(u.pods) for u in units])
        out = np.zeros(len(units), bool)
        np.logical_or.at(out, owner, per_pod)
        return out


class WorkloadPreemption:
    """runWorkloadAwarePreemption for a PodGroup whose cycle failed Unschedulable: the text its status gains, or
    the preemption (victims evicted when the cycle ends, placeable members nominated where the failed cycle put
    them)."""

    def __init__(self, sched):
        self.sched = sched

    def run(self, gs, placed: list[tuple[Pod, int]]) -> str:
        """`placed`: (member, node id) the failed cycle placed. Returns "" when the group preempts, else the
        reason appended to its status."""
        sched = self.sched
        framework = sched.framework_for_group(gs)
        if not framework.context.workload_aware_preemption:
            return ""
        plugins = [pl for pl in framework.at("postFilter") if pl.implements("pod_group_post_filter")]
        if not plugins:
            return NOT_REGISTERED
        if gs.group.spec.scheduling_constraints is not None and gs.group.spec.scheduling_constraints.topology:
            return CONSTRAINED
        members = [p for p, _ in gs.pending.values()]
        # The re-runs place them on copies sharing the vocabularies.
        sched.cluster.grow_vocabularies((p, sched.member_shape(gs, p, seq)) for p, seq in gs.pending.values())
        policy = "Never" if any(sched.cluster.preemption_policy(p) == "Never" for p in members) else \
            "PreemptLowerPriority"
        failed = FailedGroupCycle(gs.key, group_priority(gs.group, sched.cluster), policy,
                                  GroupDryRun(sched, gs, sched.groups.waiting_keys()))
        reasons = []
        for plugin in plugins:
            result = plugin.pod_group_post_filter(failed, sched.cluster)
            if result.code == SUCCESS:
                break
            reasons.append(result.message)
        else:
            return ", ".join(reasons)
        nominations, names = sched.cluster.nominations, sched.cluster.tensors.nodes.names
        nominated = {}
        for pod, node in placed:
            nominated[pod.key] = names[node]
            nominations[pod.key] = Nomination(pod, names[node], sched.cluster.priority(pod),
                                              sched.shape_of(pod).request_vector(sched.cluster.tensors))
        sched.preemption.pending.append(Preempted(sched.now, gs.key, "", [p.key for p in result.victims],
                                                  kind="PodGroup", nominated=nominated))
        return ""
