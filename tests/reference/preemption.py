"""Plain reference of DefaultPreemption's PostFilter (kube-scheduler v1.36), one node and one victim at a time.

Upstream: pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go (PostFilter,
SelectVictimsOnNode, calculateNumCandidates), pkg/scheduler/framework/preemption/preemption.go (Preempt,
findCandidates, DryRunPreemption, filterPodsWithPDBViolation, SelectCandidate, pickOneNodeForPreemption),
pkg/scheduler/framework/runtime/framework.go (RunFilterPluginsWithNominatedPods, addGENominatedPods),
pkg/scheduler/util/utils.go (MoreImportantPod, GetEarliestPodStartTime), framework/types.go (FitError),
pkg/scheduler/framework/preemption/executor.go (PreemptPod: a victim waiting at Permit is preempted there).
Research notes with the v1.36 details: /work/scratch/preemption-v1.36.md (not in the repository).

Where upstream is random, this reference takes the deterministic rule phalanx documents:
* potential nodes are scanned in node order (upstream: map order), starting at `offset` (upstream: rand);
* the scan is sequential (upstream: 16 workers), so the early stop is exact;
* ties after the last criterion go to the first candidate in scan order (upstream: map order);
* sorts of equally important pods keep input order (upstream: sort.Slice, unstable).
A pod's start time is given by `start_of` (upstream: status.startTime, or now when unset).

Inputs are phalanx's Pod / Node models; `priority_of(pod)` and `start_of(pod)` give each pod's priority and
start time; nodes and pods_by_node are as in tests/reference/scheduler.py (the pods on a node: bound, or waiting at
Permit, which hold their node alike).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import plugins as P
from .scheduler import fit_error_message, ref_filter

MAX_INT32 = 2**31 - 1
NEVER_ELIGIBLE = "not eligible due to preemptionPolicy=Never."
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_CLAIMS = "no new claims to deallocate"           # DynamicResources' PostFilter for a pod without claims
WAIT_FAILED = "waiting on permit for pod: preempted"   # a waiting victim's binding cycle error (WaitOnPermit)


@dataclass
class RefPDB:
    """policy/v1 PodDisruptionBudget as preemption reads it."""
    namespace: str
    match_labels: dict | None                 # spec.selector.matchLabels; None or {}: selects nothing (v1.36)
    disruptions_allowed: int                  # status.disruptionsAllowed
    disrupted_pods: frozenset = frozenset()   # status.disruptedPods (names)


@dataclass
class RefCandidate:
    node: str
    victims: list                            # most important first
    pdb_violations: int


@dataclass
class RefPreemption:
    node: str | None                         # the nominated node, None when preemption did not help
    victims: list = field(default_factory=list)
    message: str = ""                        # PostFilter text ("" on success)
    candidates: list = field(default_factory=list)   # every candidate the dry run found, in scan order


def num_candidates(n: int, percentage: int = 10, absolute: int = 100) -> int:
    """calculateNumCandidates: n * percentage / 100 (truncating), at least `absolute`, at most n."""
    c = n * percentage // 100
    return min(max(c, absolute), n)


def more_important(a, b, priority_of, start_of) -> bool:
    """MoreImportantPod: higher priority, then the earlier start."""
    pa, pb = priority_of(a), priority_of(b)
    if pa != pb:
        return pa > pb
    return start_of(a) < start_of(b)


def by_importance(pods, priority_of, start_of) -> list:
    """Most important first; equally important pods keep their order (insertion sort, plainly)."""
    out: list = []
    for pod in pods:
        i = 0
        while i < len(out) and not more_important(pod, out[i], priority_of, start_of):
            i += 1
        out.insert(i, pod)
    return out


def matching_pdbs(pod, pdbs) -> list[int]:
    """The PDBs that count the pod: same namespace, a labelled pod, a non-empty selector it matches, and not
    already in the PDB's disruptedPods."""
    labels = P.pod_labels(pod)
    if not labels:
        return []
    return [i for i, pdb in enumerate(pdbs)
            if pdb.namespace == P.pod_namespace(pod) and pdb.match_labels
            and all(labels.get(k) == v for k, v in pdb.match_labels.items())
            and pod.metadata.name not in pdb.disrupted_pods]


def takes_budget_below_zero(pod, pdbs, allowed: list[int]) -> bool:
    """Decrement every PDB that counts the pod (`allowed`, in place); whether one went below zero."""
    violated = False
    for i in matching_pdbs(pod, pdbs):
        allowed[i] -= 1
        violated = violated or allowed[i] < 0
    return violated


def pdb_split(pods, pdbs) -> tuple[list, list]:
    """filterPodsWithPDBViolation: (violating, non-violating), each in the given order; the budgets are shared
    by the pods in order and every matching PDB is decremented."""
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    violating, fine = [], []
    for pod in pods:
        (violating if takes_budget_below_zero(pod, pdbs, allowed) else fine).append(pod)
    return violating, fine


def fits_with_nominated(pod, node, node_pods, nodes, pods_by_node, profile, priority_of, nominated) -> tuple:
    """RunFilterPluginsWithNominatedPods: the pod must pass with the pods nominated to this node whose priority is
    >= its own added, and (when any were added) without them. Returns (fits, reasons of the failing status)."""
    name = P.node_name(node)
    extra = [q for q, n in nominated if n == name and priority_of(q) >= priority_of(pod) and q is not pod]
    passes = [(node_pods + extra)] + ([node_pods] if extra else [])
    for here in passes:
        view = dict(pods_by_node)
        view[name] = here
        status = ref_filter(pod, node, here, nodes, view, profile)
        if status and status[-1][1] != P.SUCCESS:
            return False, status[-1][2]
    return True, []


def select_victims_on_node(pod, node, nodes, pods_by_node, profile, priority_of, start_of, pdbs, nominated=()):
    """SelectVictimsOnNode: (victims most important first, PDB violations) or (None, reasons of the failure)."""
    name = P.node_name(node)
    node_pods = list(pods_by_node.get(name, []))
    potential = [p for p in node_pods if priority_of(p) < priority_of(pod)]
    if not potential:
        return None, [NO_VICTIMS]
    remaining = [p for p in node_pods if priority_of(p) >= priority_of(pod)]
    fits, reasons = fits_with_nominated(pod, node, remaining, nodes, pods_by_node, profile, priority_of, nominated)
    if not fits:
        return None, reasons
    potential = by_importance(potential, priority_of, start_of)
    violating, fine = pdb_split(potential, pdbs)
    victims, violations = [], 0
    for group, counts in ((violating, True), (fine, False)):
        for p in group:
            trial = remaining + [p]
            ok, _ = fits_with_nominated(pod, node, trial, nodes, pods_by_node, profile, priority_of, nominated)
            if ok:
                remaining = trial          # reprieved
            else:
                victims.append(p)
                violations += counts
    if violating and fine:
        victims = by_importance(victims, priority_of, start_of)
    return (victims, violations), []


def pick_one(candidates: list[RefCandidate], priority_of, start_of) -> RefCandidate | None:
    """pickOneNodeForPreemption: the ordered criteria; ties go to the first in scan order."""
    if not candidates:
        return None
    if len(candidates) == 1:
        return candidates[0]

    def earliest_top_start(c):
        top = priority_of(c.victims[0])
        return min(start_of(v) for v in c.victims if priority_of(v) == top)

    criteria = (
        lambda c: -c.pdb_violations,
        lambda c: -priority_of(c.victims[0]),
        lambda c: -sum(priority_of(v) + MAX_INT32 + 1 for v in c.victims),
        lambda c: -len(c.victims),
        earliest_top_start,                       # the latest earliest start among top-priority victims wins
    )
    left = list(candidates)
    for score in criteria:
        best = max(score(c) for c in left)
        left = [c for c in left if score(c) == best]
        if len(left) == 1:
            return left[0]
    return left[0]


def ref_actuate(victims, waiting) -> tuple[list, dict]:
    """PreemptPod for each victim (v1.36 preemption Executor): a pod waiting at Permit (`waiting`: their keys) is
    preempted there, waitingPod.Preempt(pluginName, "preempted"), and not deleted: its binding cycle fails with that
    error status, which WaitOnPermit wraps ("waiting on permit for pod: preempted"), Unreserve frees its node and
    the pod goes back to the queue to retry after its backoff; any other victim is deleted. A waiting pod is a
    potential victim like a bound one (it is assumed on its node): nothing before this step tells them apart.
    Returns (the victims deleted, {victim preempted at Permit: its failure message}), each in victim order."""
    deleted = [v for v in victims if P.pod_key(v) not in waiting]
    at_permit = {P.pod_key(v): WAIT_FAILED for v in victims if P.pod_key(v) in waiting}
    return deleted, at_permit


def ref_preempt(pod, nodes, pods_by_node, profile, priority_of, start_of, pdbs=(), nominated=(), statuses=None,
                percentage: int = 10, absolute: int = 100, offset: int = 0, dra: bool = True) -> RefPreemption:
    """The PostFilter phase of one failed cycle. `statuses`: node name -> "Unschedulable" or
    "UnschedulableAndUnresolvable" from the main cycle (default: each node's own filter status); `nominated`:
    (pod, node name) of pods waiting on a nomination; `dra`: DynamicResources runs first (the default profile)."""
    prefix = f"{NO_CLAIMS}, " if dra else ""
    if pod.spec.preemption_policy == "Never":
        return RefPreemption(None, message=f"{prefix}preemption: {NEVER_ELIGIBLE}")
    if statuses is None:
        statuses = {}
        for node in nodes:
            st = ref_filter(pod, node, pods_by_node.get(P.node_name(node), []), nodes, pods_by_node, profile)
            statuses[P.node_name(node)] = st[-1][1] if st and st[-1][1] != P.SUCCESS else P.SUCCESS
    potential = [n for n in nodes if statuses.get(P.node_name(n)) == P.UNSCHEDULABLE]
    wanted = num_candidates(len(potential), percentage, absolute)
    fine: list[RefCandidate] = []
    violating: list[RefCandidate] = []
    failed: dict[str, list[str]] = {}
    for i in range(len(potential)):
        node = potential[(offset + i) % len(potential)]
        found, reasons = select_victims_on_node(pod, node, nodes, pods_by_node, profile, priority_of, start_of,
                                                pdbs, nominated)
        if found is None:
            failed[P.node_name(node)] = reasons
            continue
        victims, violations = found
        bucket = fine if violations == 0 else violating
        if len(bucket) < wanted:
            bucket.append(RefCandidate(P.node_name(node), victims, violations))
        if fine and len(fine) + len(violating) >= wanted:
            break
    candidates = fine + violating
    if not candidates:
        reasons = {name: failed.get(name, [NOT_HELPFUL]) for name in (P.node_name(n) for n in nodes)}
        return RefPreemption(None, message=f"{prefix}preemption: {fit_error_message(len(nodes), reasons)}")
    best = pick_one(candidates, priority_of, start_of)
    return RefPreemption(best.node, best.victims, "", candidates)


# -- workload-aware preemption (KEP-5710, v1.36 PodGroupPostFilter) ------------------------------------------
NO_GROUP_VICTIMS = "No preemption victims found for incoming preemptor"


@dataclass
class RefUnit:
    """A victim unit: a PodGroup with disruptionMode PodGroup (all its pods on nodes, bound or waiting at Permit)
    or one pod on a node."""
    key: str
    pods: list
    priority: int
    is_group: bool           # its pod belongs to a PodGroup (whatever the mode)
    start: float             # earliest start of its pods


def ref_units(bound_pods, group_of, group_priority, priority_of, start_of) -> list[RefUnit]:
    """Units in order of their first pod in `bound_pods`. group_of(pod): the PodGroup of a pod (None if none)."""
    units: dict = {}
    for pod in bound_pods:
        group = group_of(pod)
        if group is not None and group.spec.disruption_mode == "PodGroup":
            key = f"{group.metadata.namespace}/{group.metadata.name}"
            if key not in units:
                units[key] = RefUnit(key, [], group_priority(group), True, start_of(pod))
            units[key].pods.append(pod)
            units[key].start = min(units[key].start, start_of(pod))
        else:
            # a Pod-mode group's member: its group's priority (upstream TestNewDomainForWorkloadPreemption)
            key = f"{P.pod_namespace(pod)}/{pod.metadata.name}"
            priority = group_priority(group) if group is not None else priority_of(pod)
            units[key] = RefUnit(key, [pod], priority, pod.spec.scheduling_group is not None, start_of(pod))
    return list(units.values())


def more_important_unit(a: RefUnit, b: RefUnit) -> bool:
    """moreImportantVictim: higher priority; a PodGroup before a single pod; two pods: the earlier start; two
    groups: more pods, then the earlier start."""
    if a.priority != b.priority:
        return a.priority > b.priority
    if a.is_group != b.is_group:
        return a.is_group
    if a.is_group and len(a.pods) != len(b.pods):
        return len(a.pods) > len(b.pods)
    return a.start < b.start


def unit_pdb_split(units, pdbs) -> tuple[list, list]:
    """(violating, non-violating) units, each in the given order: a unit violates when one of its pods, counted in
    turn against the shared budgets, takes a budget below zero."""
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    violating, fine = [], []
    for unit in units:
        violated = [takes_budget_below_zero(pod, pdbs, allowed) for pod in unit.pods]   # every pod counts
        (violating if any(violated) else fine).append(unit)
    return violating, fine


def ref_workload_preempt(priority, policy, units, schedules_without, pdbs=()) -> tuple[bool, list, str]:
    """selectVictimsOnDomain over the one cluster-wide domain: (success, victim pods in order, the status message
    when it failed). schedules_without(units) -> "" when the group's cycle succeeds without them, else why not."""
    if policy == "Never":
        return False, [], NEVER_ELIGIBLE
    potential = [u for u in units if u.priority < priority]
    if not potential:
        return False, [], NO_GROUP_VICTIMS
    message = schedules_without(potential)
    if message:
        return False, [], message
    ordered: list = []
    for unit in potential:               # insertion sort: equally important units keep their order
        i = 0
        while i < len(ordered) and not more_important_unit(unit, ordered[i]):
            i += 1
        ordered.insert(i, unit)
    violating, fine = unit_pdb_split(ordered, pdbs)
    removed, to_preempt = list(ordered), []
    for unit in violating + fine:
        trial = [u for u in removed if u is not unit]
        if schedules_without(trial):
            to_preempt.append(unit)
        else:
            removed = trial
    victims: list = []                   # insertion sort: equally important units keep their reprieve order
    for unit in to_preempt:
        i = 0
        while i < len(victims) and not more_important_unit(unit, victims[i]):
            i += 1
        victims.insert(i, unit)
    return True, [p for u in victims for p in u.pods], ""
