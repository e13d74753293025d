"""What a simulation step reports: decisions and condition changes, in the order they happened."""
from __future__ import annotations

from dataclasses import dataclass

BOUND = "Bound"                        # a pod was bound to `node`
UNSCHEDULABLE = "Unschedulable"        # an attempt left the pod pending; `message` says why
WAITING = "WaitingOnPermit"            # placed on `node`, held at Permit until its gang is complete
PERMIT_REJECTED = "PermitRejected"     # a waiting pod was rejected (timeout); its node was released
DELETED = "Deleted"                    # a pod left the cluster (deleted, completed, or its node removed)
POD_GROUP_SCHEDULED = "PodGroupScheduled"   # the PodGroup condition changed; `status`, `reason`, `message`


@dataclass(frozen=True)
class Record:
    time: float
    kind: str
    object: str                        # "namespace/name" of the pod or PodGroup
    node: str | None = None
    message: str = ""
    status: str | None = None          # condition status ("True" / "False") for POD_GROUP_SCHEDULED
    reason: str | None = None          # condition reason ("Unschedulable") for POD_GROUP_SCHEDULED
