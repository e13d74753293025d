"""Runtime state of PodGroups in the scheduler: members by phase, quorum (GangScheduling PreEnqueue), the
PodGroupScheduled condition, and the registry resolving a pod to its group."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field

from ..cluster_models import ClusterObjects, Pod, PodGroup, PodGroupIndex
from ..plugins.gang_scheduling import PERMIT_TIMEOUT_S, QUORUM_MESSAGE, WAIT_MESSAGE
from .queue import FlushOrder

__all__ = ["GROUP_UNSCHEDULABLE", "GroupState", "Groups", "MEMBER_UNSCHEDULABLE", "PERMIT_TIMEOUT_S",
           "QUORUM_MESSAGE", "WAIT_MESSAGE"]

# The status of a PodGroup cycle that placed too few members (v1.36 errPodGroupUnschedulable): the PodGroup's
# condition message, and, with GangScheduling's Permit status appended, the message of its placeable members.
GROUP_UNSCHEDULABLE = "pod group is unschedulable"
MEMBER_UNSCHEDULABLE = f"{GROUP_UNSCHEDULABLE}, {WAIT_MESSAGE}"


class Members(dict):
    """A group's pending members, key -> (pod, seq), counting the changes made to them: their order by priority and
    arrival (Groups.members_in_order) is kept until they change."""
    __slots__ = ("changes",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.changes = 0

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        self.changes += 1

    def __delitem__(self, key):
        super().__delitem__(key)
        self.changes += 1

    def pop(self, *args):
        self.changes += 1
        return super().pop(*args)


@dataclass(eq=False)
class GroupState:
    group: PodGroup
    pending: Members = field(default_factory=Members)    # key -> (pod, seq), not yet placed
    held: dict[str, tuple[Pod, int, object]] = field(default_factory=dict)   # members PreEnqueue holds back: key ->
                                                                             # (pod, seq, the plugin holding it)
    bound: set[str] = field(default_factory=set)
    elsewhere: dict[str, str] = field(default_factory=dict)    # those bound to a node not in the node table
                                                               # (Cluster.bound_elsewhere): key -> node name
    waiting: dict[str, tuple[Pod, int]] = field(default_factory=dict)   # at Permit (v1.35 mode), holding nodes
    enqueued: set[str] = field(default_factory=set)                     # permit mode: members in the pod queue
    permit_deadline: float | None = None
    joined: int = 0                                  # members joined so far (a member added, or the group appeared
                                                     # for held ones): what a pod waiting at Permit has seen
    rejected_at: int | None = None                   # the scheduler's progress count at the last Permit rejection
    state: str = "idle"                              # idle | active | backoff | unschedulable (queue position)
    attempts: int = 0
    failed_at: float = 0.0
    failed_progress: int | None = None               # the scheduler's outside_progress at the last failed cycle
    condition: tuple[str, str, str] | None = None    # PodGroupScheduled (status, reason, message)
    shapes: dict = field(default_factory=dict)       # arrival seq -> PodShape of pending members (Scheduler.member_shape)
    order: int = 0                                   # its place in Groups.states (made in this order)
    derived: dict = field(default_factory=dict)      # what -> (pending, its changes, value): by_pending's values

    @property
    def key(self) -> str:
        return self.group.key

    def by_pending(self, what: str, make):
        """make(), a value of the pending members alone (their order, shapes, schedulers), kept until they change."""
        pending = self.pending
        hit = self.derived.get(what)
        if hit is not None and hit[0] is pending and hit[1] == pending.changes:
            return hit[2]
        value = make()
        self.derived[what] = (pending, pending.changes, value)
        return value

    @property
    def first_seq(self) -> int:
        """Arrival of its first pending member (held members are not in the queue): its place in the queue."""
        return min((seq for _, seq in self.pending.values()), default=sys.maxsize)

    @property
    def gang(self) -> bool:
        return self.group.spec.scheduling_policy.gang is not None

    @property
    def min_count(self) -> int:
        """minCount for a gang; 1 for basic (a basic group needs one pod placed to bind anything)."""
        return self.group.spec.scheduling_policy.min_count if self.gang else 1

    @property
    def present(self) -> int:
        """Every member the scheduler knows (v1.36 AllPodsCount): pending, held at PreEnqueue (gated ones too),
        waiting at Permit, bound."""
        return len(self.pending) + len(self.held) + len(self.bound) + len(self.waiting)

    def quorum(self) -> bool:
        """PreEnqueue: a gang is not tried before minCount of its pods exist."""
        return not self.gang or self.present >= self.min_count

    @property
    def scheduled(self) -> bool:
        return self.condition is not None and self.condition[0] == "True"


def _progress(gs: "GroupState") -> int:
    return -1 if gs.failed_progress is None else gs.failed_progress


class Groups:
    """The PodGroups the scheduler knows, and which group each pod belongs to (the handle GangScheduling reads)."""

    def __init__(self, cluster):
        self.cluster = cluster
        self.states: dict[str, GroupState] = {}
        self.of_pod: dict[str, GroupState] = {}              # pod key -> its group, for grouped pods
        # The groups a failed cycle left unschedulable, some moved on since (unschedulable() drops those): a
        # cluster event retries them without a walk over every group state (a simulation keeps tens of thousands).
        self._parked: dict[str, GroupState] = {}
        # The same groups by their failure, for the unschedulable pool's flush.
        self.flush_order = FlushOrder(lambda at, progress, gs: (
            self._waiting(gs) and gs.failed_at == at and _progress(gs) == progress))
        self._made = 0
        self.version = 0            # bumped whenever the PodGroups change (what a pod's reference resolves to)
        self.reindex()

    def reindex(self) -> None:
        self._index = PodGroupIndex(ClusterObjects(pod_groups=self.cluster.pod_groups,
                                                   workloads=self.cluster.workloads))
        self.keys = {g.key for g in self.cluster.pod_groups}      # every PodGroup's namespace/name
        self.version += 1

    def added(self, group) -> None:
        """A PodGroup appeared (cluster.pod_groups has it already)."""
        self._index.add(group)
        self.keys.add(group.key)
        self.version += 1

    def resolve(self, pod: Pod) -> tuple[GroupState | None, str | None]:
        """(its group's state or None, why it waits when its group does not exist)."""
        if pod.spec.scheduling_group is None and pod.spec.workload_ref is None:
            return None, None                    # most pods: no group (the common case, kept cheap)
        res = self._index.resolve(pod)
        if res.group is None:
            return None, res.reason
        gs = self.states.get(res.group.key)
        if gs is None:
            gs = self.new_state(res.group)
        return gs, None

    def new_state(self, group: PodGroup) -> GroupState:
        """The scheduler's state of a group it had none of."""
        gs = self.states[group.key] = GroupState(group, order=self._made)
        self._made += 1
        return gs

    def park(self, gs: GroupState) -> None:
        """The group waits, unschedulable, for a cluster change."""
        gs.state = "unschedulable"
        self._parked[gs.key] = gs
        self.flush_order.push(gs.failed_at, _progress(gs), gs)

    def unschedulable(self) -> list[GroupState]:
        """The groups waiting unschedulable, in the order of `states`."""
        self._parked = {key: gs for key, gs in self._parked.items() if self._waiting(gs)}
        return sorted(self._parked.values(), key=lambda gs: gs.order)

    def _waiting(self, gs: GroupState) -> bool:
        """Whether a parked group still waits unschedulable (not moved on, not dropped or made anew since)."""
        return gs.state == "unschedulable" and self.states.get(gs.key) is gs

    def pod_group(self, pod: Pod):
        """The PodGroup the pod's reference resolves to now, or None; reads only (no group state is made)."""
        gs = self.of_pod.get(pod.key)
        return gs.group if gs is not None else self._index.resolve(pod).group

    def group_of(self, pod: Pod) -> tuple[GroupState | None, str | None]:
        gs = self.of_pod.get(pod.key)
        return (gs, None) if gs is not None else self.resolve(pod)

    def join(self, gs: GroupState, pod: Pod, seq: int, key: str | None = None) -> None:
        """The pod (`key`: its key, when known) is a pending member of the group."""
        key = pod.key if key is None else key
        gs.pending[key] = (pod, seq)
        gs.joined += 1
        self.of_pod[key] = gs

    def queue_key(self, gs: GroupState) -> tuple[int, int]:
        """(priority, arrival) of the group's activeQ entry. v1.36's queue holds the members themselves and a group
        cycle starts when one is popped (podGroupInfoForPod), so the group goes where its first member would: its
        highest pending member priority, the earliest arrival among those members. The PodGroup's own priority is
        what preemption reads, not the queue."""
        ordered = self.members_in_order(gs)
        if not ordered:                  # every member left while the group waited: it is dropped when popped
            return 0, gs.first_seq
        pod, seq = ordered[0]
        return self.cluster.priority(pod), seq

    def members_in_order(self, gs: GroupState) -> list[tuple[Pod, int]]:
        """Pending members by (priority desc, arrival), kept until they change (a pod's priority does not); the
        list is shared: read it, do not change it."""
        priority = self.cluster.priority
        return gs.by_pending("order", lambda: sorted(gs.pending.values(), key=lambda ps: (-priority(ps[0]), ps[1])))

    def values(self):
        return self.states.values()
