"""Runtime state of PodGroups in the scheduler: members by phase, quorum (GangScheduling PreEnqueue), the
feasibility check of the PodGroup cycle (PlacementFeasible), the PodGroupScheduled condition."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field

from ..cluster_models import Pod, PodGroup

# kube-scheduler GangScheduling plugin wordings.
QUORUM_MESSAGE = "waiting for minCount pods from a gang to appear in scheduling queue"
PERMIT_PLUGIN = "GangScheduling"


def infeasible_message(min_count: int, scheduled: int, remaining: int) -> str:
    """GangScheduling PlacementFeasible: the group can no longer reach minCount in this cycle."""
    return f"minCount ({min_count}) cannot be satisfied: {scheduled} scheduled, {remaining} remaining"


def go_duration(seconds: float) -> str:
    """Go's time.Duration.String() for whole and fractional seconds below a day (300 -> "5m0s")."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{secs:g}s"
    if hours:
        return f"{int(hours)}h{int(minutes)}m{text}"
    return f"{int(minutes)}m{text}" if minutes else text


@dataclass(eq=False)
class GroupState:
    group: PodGroup
    first_seq: int = sys.maxsize                     # arrival of its first pending pod: its place in the queue
    pending: dict[str, tuple[Pod, int]] = field(default_factory=dict)    # key -> (pod, seq), not yet placed
    bound: set[str] = field(default_factory=set)
    waiting: dict[str, tuple[Pod, int]] = field(default_factory=dict)   # at Permit (v1.35 mode), holding nodes
    enqueued: set[str] = field(default_factory=set)                     # permit mode: members in the pod queue
    permit_deadline: float | None = None
    rejected_at: int | None = None                   # the scheduler's progress count at the last Permit rejection
    state: str = "idle"                              # idle | active | backoff | unschedulable (queue position)
    attempts: int = 0
    failed_at: float = 0.0
    condition: tuple[str, str, str] | None = None    # PodGroupScheduled (status, reason, message)

    @property
    def key(self) -> str:
        return self.group.key

    @property
    def gang(self) -> bool:
        return self.group.spec.scheduling_policy.gang is not None

    @property
    def min_count(self) -> int:
        """minCount for a gang; 1 for basic (a basic group needs one pod placed to bind anything)."""
        return self.group.spec.scheduling_policy.min_count if self.gang else 1

    @property
    def present(self) -> int:
        return len(self.pending) + len(self.bound) + len(self.waiting)

    def quorum(self) -> bool:
        """PreEnqueue: a gang is not tried before minCount of its pods exist (bound ones included)."""
        return not self.gang or self.present >= self.min_count

    @property
    def scheduled(self) -> bool:
        return self.condition is not None and self.condition[0] == "True"
