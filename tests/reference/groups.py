"""Plain reference for PodGroup scheduling (scheduling.k8s.io/v1alpha2, kube-scheduler v1.36 semantics as
phalanx models them): one pass over entities (plain pods and PodGroups), no retries, no preemption.

Semantics (the contract the real scheduler is compared against):

* Pods in a terminal phase are ignored; pods with spec.nodeName are bound load; pods for another scheduler
  are ignored.  Pending pods keep their input index (arrival order).
* A pending pod with scheduling gates is unschedulable with the SchedulingGates message and is never placed;
  it counts toward its gang's quorum (v1.36 AllPodsCount counts every pod the scheduler knows of the group).  The gates are checked before the group reference (SchedulingGates
  is the first PreEnqueue plugin upstream).  A pending pod whose group reference dangles is unschedulable
  with PodGroupIndex's reason.
* Entities: each plain pending pod; each PodGroup with at least one pending (non-gated) member.
  minCount = gang.minCount, or 1 for basic.  Bound members = non-terminal pods with spec.nodeName that
  resolve to the group.
* Quorum (GangScheduling PreEnqueue): pending (gated too) + bound members < minCount -> every pending member waits
  with QUORUM_MESSAGE; the group is not attempted.
* Entity priority: a group's is its first member's in v1.36's queue, which holds pods (the PodGroup's own
  spec.priority is for preemption): the max effective priority of its pending members, its arrival the smallest
  arrival index among those members; a plain pod's effective priority and arrival.  Entities run in order of
  (-priority, arrival), each against all earlier bindings.
* A group cycle walks its pending members by (-effective priority, arrival index), cut into runs of
  consecutive members with one `phalanx.sched.shapes.signature` (homogeneous sub-groups).  Inside a run,
  the first pod that does not fit ends the run: it and the rest of the run get its FitError.  Every run is
  tried (v1.36 has no early stop).  Then bound + placed < minCount fails the cycle (GangScheduling's Permit
  keeps waiting): the cycle's placements are undone and every member without a FitError gets
  "pod group is unschedulable, waiting for minCount pods from a gang to be scheduled", followed by what
  workload-aware preemption appends (profiles here have no PostFilter plugin: ", default preemption plugin is
  not registered, workload aware preemption is disabled"; nothing in compat 1.35).  Otherwise the placements
  are bound.

This module imports phalanx.sched.shapes.signature (the definition of "homogeneous") and the input layer's
PodGroupIndex; everything else is the plain per-node reference of tests/reference/scheduler.py.
"""

from __future__ import annotations

from phalanx.cluster_models import ClusterObjects
from phalanx.cluster_models.workloads import PodGroupIndex
from phalanx.sched.shapes import signature

from . import plugins as P
from .profile import ref_profile
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


# errPodGroupUnschedulable, then GangScheduling's Permit status (v1.36 submitPodGroupAlgorithmResult).
MEMBER_UNSCHEDULABLE = "pod group is unschedulable, waiting for minCount pods from a gang to be scheduled"


def group_min_count(group) -> int:
    gang = group.spec.scheduling_policy.gang
    return gang.min_count if gang is not None else 1


def group_queue_key(members, classes) -> tuple[int, int]:
    """members: [(arrival index, pod)] pending members of the group -> (priority, arrival) of its first member."""
    best = None
    for idx, pod in members:
        prio = effective_priority(pod, classes)
        if best is None or prio > best[0] or (prio == best[0] and idx < best[1]):
            best = (prio, idx)
    return best


def _try_group_cycle(group, members, bound_count, nodes, pods_by_node, classes, profile, image_nodes=None,
                     ring: list | None = None):
    """One PodGroup cycle on `nodes`; its placements stay in `pods_by_node` (the caller keeps or undoes them).
    Returns (ordered members, placed [(pod, node)], fit_errors {key: FitError}, the placeable members' message
    when minCount is not reached, else None)."""
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

    placed = []  # (pod, node) tentative placements of this cycle, in order
    fit_errors = {}  # pod key -> FitError message
    for run in runs:
        failure = None
        for pod in run:
            if failure is not None:
                fit_errors[P.pod_key(pod)] = failure  # not evaluated again
                continue
            res = ref_schedule_one(pod, nodes, pods_by_node, profile, image_nodes=image_nodes, ring=ring)
            if res.node is None:
                failure = res.message
                fit_errors[P.pod_key(pod)] = failure
                continue
            pods_by_node[res.node].append(pod)  # tentative: later pods of this cycle see it
            placed.append((pod, res.node))
    if bound_count + len(placed) < min_count:
        return ordered, placed, fit_errors, MEMBER_UNSCHEDULABLE
    return ordered, placed, fit_errors, None


WAP_NOT_REGISTERED = "default preemption plugin is not registered, workload aware preemption is disabled"


def _with_wap_reason(message: str, profile) -> str:
    """A failed group's status with what workload-aware preemption appends (v1.36 runWorkloadAwarePreemption). The
    profiles this reference runs have no PostFilter plugin, so it is always "not registered"; compat 1.35 had no
    workload-aware preemption."""
    ref = ref_profile(profile)
    if "DefaultPreemption" in ref.post_filters:
        raise NotImplementedError("the group reference does not model preemption")
    return message if ref.compat == "1.35" else f"{message}, {WAP_NOT_REGISTERED}"


def _undo(placed, pods_by_node) -> None:
    for pod, node in placed:  # by identity: the very object appended by the cycle
        on_node = pods_by_node[node]
        for i in range(len(on_node) - 1, -1, -1):
            if on_node[i] is pod:
                del on_node[i]
                break


def _run_group_cycle(group, members, bound_count, nodes, pods_by_node, classes, profile, bindings, unschedulable,
                     ring: list | None = None):
    """One scheduling cycle of a PodGroup.  members: [(arrival index, pod)] pending, non-gated members.
    Binds into `bindings` / `pods_by_node` only if the cycle succeeds."""
    ordered, placed, fit_errors, message = _try_group_cycle(group, members, bound_count, nodes, pods_by_node,
                                                            classes, profile, ring=ring)
    if message is not None:
        _undo(placed, pods_by_node)
        message = _with_wap_reason(message, profile)
        for _idx, pod in ordered:
            key = P.pod_key(pod)
            unschedulable[key] = fit_errors.get(key, message)
        return
    for pod, node in placed:
        bindings[P.pod_key(pod)] = node
    for key, message in fit_errors.items():
        unschedulable[key] = message


def placement_fit_score(domain_nodes, placed_pods, pods_by_node, profile) -> int:
    """NodeResourcesFit ScorePlacement: MostAllocated over the placement's nodes, per configured resource:
    (allocated on nodes with allocatable > 0 + the placed pods' requests, non-zero defaulted) / allocatable."""
    total = weights = 0
    for name, weight in ref_profile(profile).fit_resources:
        group_request = sum(P.score_pod_request(pod, name, False) for pod in placed_pods)
        if group_request == 0 and P.is_scalar_resource(name):
            continue
        alloc = used = 0
        for node in domain_nodes:
            node_alloc = P.node_allocatable(node).get(name, 0)
            if node_alloc == 0:
                continue
            state = P.node_state(node, pods_by_node[P.node_name(node)])
            alloc += node_alloc
            used += {P.CPU: state.nonzero_cpu, P.MEMORY: state.nonzero_mem}.get(name, state.requested.get(name, 0))
        if alloc == 0:
            continue
        total += P.most_requested_score(used + group_request, alloc) * weight
        weights += weight
    return total // weights if weights else 0


def _run_topology_cycle(group, members, bound_nodes, nodes, pods_by_node, classes, profile, bindings,
                        unschedulable):
    """KEP-5732: one placement per value of the constraint's node label (in order of the value's first node);
    the cycle is tried on each placement's nodes alone; the feasible placement with the best NodeResourcesFit
    placement score + PodGroupPodsCount (normalized to the best) wins, ties to the first."""
    key = group.spec.scheduling_constraints.topology[0].key
    keys = [P.pod_key(pod) for _idx, pod in members]
    domains: dict = {}
    for node in nodes:
        value = P.node_labels(node).get(key)
        if value is not None:
            domains.setdefault(value, []).append(node)
    if bound_nodes:
        # v1.36 topologyaware: the bound members' domains, in pod key order; an Error status on the first member
        # on a node without the label, or on the first second domain.
        label_of = {P.node_name(n): P.node_labels(n).get(key) for n in nodes}
        held, message = [], None
        for pod_key, node in sorted(bound_nodes):
            value = label_of.get(node)
            if value is None:
                message = f"no topology domain found for pod {pod_key}"
                break
            if held and value != held[0]:
                message = f"more than 1 domain found for pod group: {held[0]}, {value}"
                break
            held.append(value)
        if message is not None:
            for k in keys:
                unschedulable[k] = f"cannot determine domain for already scheduled pods: {message}"
            return
        domains = {held[0]: domains[held[0]]}
    if not domains:
        for k in keys:
            unschedulable[k] = _with_wap_reason("no feasible placements found", profile)
        return
    min_count = group_min_count(group)
    trials = []
    for domain_nodes in domains.values():
        # Each placement's cycle runs on a copy of the cluster with a scheduler of its own (nextStartNodeIndex 0).
        ordered, placed, fit_errors, message = _try_group_cycle(group, members, len(bound_nodes), domain_nodes,
                                                                pods_by_node, classes, profile, image_nodes=nodes,
                                                                ring=[0])
        _undo(placed, pods_by_node)
        trials.append((domain_nodes, placed, fit_errors, message))
    feasible = [t for t in trials if t[3] is None and len(t[1]) >= 1 and len(t[1]) + len(bound_nodes) >= min_count]
    if not feasible:
        _domain_nodes, _placed, fit_errors, message = trials[0]
        fallback = _with_wap_reason(message or f"0/{len(trials)} placements are available, first placement "
                                    "status: pod group is unschedulable", profile)
        for k in keys:
            unschedulable[k] = fit_errors.get(k, fallback)
        return
    best_count = max(len(placed) + len(bound_nodes) for _n, placed, _f, _m in feasible)
    scores = []
    for domain_nodes, placed, _fit_errors, _message in feasible:
        fit = placement_fit_score(domain_nodes, [pod for pod, _node in placed], pods_by_node, profile)
        count = (len(placed) + len(bound_nodes)) * 100 // best_count
        scores.append(fit + count)
    chosen = feasible[scores.index(max(scores))] if len(feasible) > 1 else feasible[0]
    _domain_nodes, placed, fit_errors, _message = chosen
    for pod, node in placed:
        pods_by_node[node].append(pod)
        bindings[P.pod_key(pod)] = node
    for k, message in fit_errors.items():
        unschedulable[k] = message


def ref_schedule_groups(nodes, pods, pod_groups, priority_classes, profile):
    """Returns (bindings {"ns/name": node}, unschedulable {"ns/name": message})."""
    _check_profile(profile)
    classes = priority_class_map(priority_classes)
    pods_by_node = bound_pods_by_node(nodes, pods)
    index = PodGroupIndex(ClusterObjects(nodes=list(nodes), pods=list(pods), priority_classes=list(classes.values()),
                                         warnings=[], workloads=[], pod_groups=list(pod_groups)))
    bindings: dict = {}
    unschedulable: dict = {}

    # bound members per group (by PodGroup key), and their nodes
    bound_members: dict = {}
    bound_nodes: dict = {}
    for pod in pods:
        if _is_terminal(pod) or not pod.spec.node_name:
            continue
        group = index.resolve(pod).group
        if group is not None:
            bound_members[group.key] = bound_members.get(group.key, 0) + 1
            bound_nodes.setdefault(group.key, []).append((P.pod_key(pod), pod.spec.node_name))

    # pending pods: gates, dangling references, then plain pods and group members
    plain = []  # [(arrival index, pod)]
    members: dict = {}  # PodGroup key -> [(arrival index, pod)]
    groups: dict = {}  # PodGroup key -> PodGroup
    gated_members: dict = {}  # PodGroup key -> gated pending members (they count toward the quorum, v1.36)
    for idx, pod in pending_pods(pods):
        key = P.pod_key(pod)
        if pod.spec.scheduling_gates:
            unschedulable[key] = GATED_MESSAGE
            group = index.resolve(pod).group
            if group is not None:
                gated_members[group.key] = gated_members.get(group.key, 0) + 1
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
        if len(mine) + bound_members.get(gkey, 0) + gated_members.get(gkey, 0) < group_min_count(group):
            for _idx, pod in mine:
                unschedulable[P.pod_key(pod)] = QUORUM_MESSAGE
            continue
        prio, first = group_queue_key(mine, classes)
        entities.append((-prio, first, "group", gkey))
    entities.sort(key=lambda e: (e[0], e[1]))

    ring = [0]      # nextStartNodeIndex (read only by profiles without Score plugins; a failed cycle keeps its moves)
    for _negprio, _first, kind, payload in entities:
        if kind == "pod":
            pod = payload
            res = ref_schedule_one(pod, nodes, pods_by_node, profile, ring=ring)
            if res.node is None:
                unschedulable[P.pod_key(pod)] = res.message
            else:
                bindings[P.pod_key(pod)] = res.node
                pods_by_node[res.node].append(pod)
        elif groups[payload].spec.scheduling_constraints and groups[payload].spec.scheduling_constraints.topology:
            _run_topology_cycle(groups[payload], members[payload], bound_nodes.get(payload, []), nodes, pods_by_node,
                                classes, profile, bindings, unschedulable)
        else:
            _run_group_cycle(groups[payload], members[payload], bound_members.get(payload, 0), nodes, pods_by_node,
                             classes, profile, bindings, unschedulable, ring=ring)
    return bindings, unschedulable
