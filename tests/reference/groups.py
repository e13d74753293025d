"""Plain reference for PodGroup scheduling (scheduling.k8s.io/v1alpha2, kube-scheduler v1.36 semantics as
phalanx models them): one pass over entities (plain pods and PodGroups), no retries, no preemption.

Semantics (the contract the real scheduler is compared against):

* Pods in a terminal phase are ignored; pods with spec.nodeName are bound load; pods for another scheduler
  are ignored.  Pending pods keep their input index (arrival order).
* A pending pod with scheduling gates is unschedulable with the SchedulingGates message and takes no further
  part (it is not counted in any group).  The gates are checked before the group reference (SchedulingGates
  is the first PreEnqueue plugin upstream).  A pending pod whose group reference dangles is unschedulable
  with PodGroupIndex's reason.
* Entities: each plain pending pod; each PodGroup with at least one pending (non-gated) member.
  minCount = gang.minCount, or 1 for basic.  Bound members = non-terminal pods with spec.nodeName that
  resolve to the group.
* Quorum (GangScheduling PreEnqueue): pending + bound members < minCount -> every pending member waits
  with QUORUM_MESSAGE; the group is not attempted.
* Entity priority: the PodGroup's spec.priority, else its spec.priorityClassName's value, else the max
  effective priority of its pending members; a plain pod's effective priority.  Entities run in order of
  (-priority, smallest arrival index of their pending members), each against all earlier bindings.
* A group cycle walks its pending members by (-effective priority, arrival index), cut into runs of
  consecutive members with one `phalanx.sched.shapes.signature` (homogeneous sub-groups).  Inside a run,
  the first pod that does not fit ends the run: it and the rest of the run get its FitError.  After each
  run, scheduled (bound + placed) + remaining (members of later runs) < minCount fails the cycle: the
  cycle's placements are undone and every member without a FitError gets
  "minCount (M) cannot be satisfied: S scheduled, R remaining".  Otherwise the placements are bound.

This module imports phalanx.sched.shapes.signature (the definition of "homogeneous") and the input layer's
PodGroupIndex; everything else is the plain per-node reference of tests/reference/scheduler.py.
"""

from __future__ import annotations

from phalanx.cluster_models import ClusterObjects
from phalanx.cluster_models.workloads import PodGroupIndex
from phalanx.sched.shapes import signature

from . import plugins as P
from .scheduler import (
    _check_profile,
    _is_terminal,
    bound_pods_by_node,
    effective_priority,
    pending_pods,
    priority_class_map,
    ref_schedule_one,
)

GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"
QUORUM_MESSAGE = "waiting for minCount pods from a gang to appear in scheduling queue"


def min_count_message(min_count: int, scheduled: int, remaining: int) -> str:
    return f"minCount ({min_count}) cannot be satisfied: {scheduled} scheduled, {remaining} remaining"


def group_min_count(group) -> int:
    gang = group.spec.scheduling_policy.gang
    return gang.min_count if gang is not None else 1


def group_priority(group, members, classes) -> int:
    """members: [(arrival index, pod)] pending members of the group."""
    if group.spec.priority is not None:
        return group.spec.priority
    if group.spec.priority_class_name:
        pc = classes.get(group.spec.priority_class_name)
        if pc is None:
            raise ValueError(f'PodGroup {group.key}: PriorityClass "{group.spec.priority_class_name}" not found')
        return pc.value
    best = None
    for _idx, pod in members:
        prio = effective_priority(pod, classes)
        if best is None or prio > best:
            best = prio
    return best


def _run_group_cycle(group, members, bound_count, nodes, pods_by_node, classes, profile, bindings, unschedulable):
    """One scheduling cycle of a PodGroup.  members: [(arrival index, pod)] pending, non-gated members.
    Binds into `bindings` / `pods_by_node` only if the cycle succeeds."""
    min_count = group_min_count(group)
    ordered = sorted(members, key=lambda t: (-effective_priority(t[1], classes), t[0]))

    # runs: maximal consecutive members with one signature
    runs = []
    last_sig = None
    for _idx, pod in ordered:
        sig = signature(pod)
        if runs and sig == last_sig:
            runs[-1].append(pod)
        else:
            runs.append([pod])
        last_sig = sig

    scheduled = bound_count
    remaining = len(ordered)
    placed = []  # (pod, node) tentative placements of this cycle, in order
    fit_errors = {}  # pod key -> FitError message
    for run in runs:
        failure = None
        for pod in run:
            if failure is not None:
                fit_errors[P.pod_key(pod)] = failure  # not evaluated again
                continue
            res = ref_schedule_one(pod, nodes, pods_by_node, profile)
            if res.node is None:
                failure = res.message
                fit_errors[P.pod_key(pod)] = failure
                continue
            pods_by_node[res.node].append(pod)  # tentative: later pods of this cycle see it
            placed.append((pod, res.node))
            scheduled += 1
        remaining -= len(run)
        if scheduled + remaining < min_count:
            for pod, node in placed:  # undo this cycle (by identity: the very object appended above)
                on_node = pods_by_node[node]
                for i in range(len(on_node) - 1, -1, -1):
                    if on_node[i] is pod:
                        del on_node[i]
                        break
            message = min_count_message(min_count, scheduled, remaining)
            for _idx, pod in ordered:
                key = P.pod_key(pod)
                unschedulable[key] = fit_errors.get(key, message)
            return
    for pod, node in placed:
        bindings[P.pod_key(pod)] = node
    for key, message in fit_errors.items():
        unschedulable[key] = message


def ref_schedule_groups(nodes, pods, pod_groups, priority_classes, profile):
    """Returns (bindings {"ns/name": node}, unschedulable {"ns/name": message})."""
    _check_profile(profile)
    classes = priority_class_map(priority_classes)
    pods_by_node = bound_pods_by_node(nodes, pods)
    index = PodGroupIndex(ClusterObjects(nodes=list(nodes), pods=list(pods), priority_classes=list(classes.values()),
                                         warnings=[], workloads=[], pod_groups=list(pod_groups)))
    bindings: dict = {}
    unschedulable: dict = {}

    # bound members per group (by PodGroup key)
    bound_members: dict = {}
    for pod in pods:
        if _is_terminal(pod) or not pod.spec.node_name:
            continue
        group = index.resolve(pod).group
        if group is not None:
            bound_members[group.key] = bound_members.get(group.key, 0) + 1

    # pending pods: gates, dangling references, then plain pods and group members
    plain = []  # [(arrival index, pod)]
    members: dict = {}  # PodGroup key -> [(arrival index, pod)]
    groups: dict = {}  # PodGroup key -> PodGroup
    for idx, pod in pending_pods(pods):
        key = P.pod_key(pod)
        if pod.spec.scheduling_gates:
            unschedulable[key] = GATED_MESSAGE
            continue
        resolution = index.resolve(pod)
        if resolution.reason is not None:
            unschedulable[key] = resolution.reason
            continue
        if resolution.group is None:
            plain.append((idx, pod))
            continue
        gkey = resolution.group.key
        groups[gkey] = resolution.group
        members.setdefault(gkey, []).append((idx, pod))

    # entities: (-priority, first arrival index, kind, payload)
    entities = []
    for idx, pod in plain:
        entities.append((-effective_priority(pod, classes), idx, "pod", pod))
    for gkey, group in groups.items():
        mine = members[gkey]
        if len(mine) + bound_members.get(gkey, 0) < group_min_count(group):
            for _idx, pod in mine:
                unschedulable[P.pod_key(pod)] = QUORUM_MESSAGE
            continue
        first = min(idx for idx, _pod in mine)
        entities.append((-group_priority(group, mine, classes), first, "group", gkey))
    entities.sort(key=lambda e: (e[0], e[1]))

    for _negprio, _first, kind, payload in entities:
        if kind == "pod":
            pod = payload
            res = ref_schedule_one(pod, nodes, pods_by_node, profile)
            if res.node is None:
                unschedulable[P.pod_key(pod)] = res.message
            else:
                bindings[P.pod_key(pod)] = res.node
                pods_by_node[res.node].append(pod)
        else:
            _run_group_cycle(groups[payload], members[payload], bound_members.get(payload, 0), nodes, pods_by_node,
                             classes, profile, bindings, unschedulable)
    return bindings, unschedulable
