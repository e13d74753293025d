"""NodeUnschedulable Filter: cordoned nodes reject pods that do not tolerate the unschedulable taint.
Upstream: plugins/nodeunschedulable."""
from __future__ import annotations

from .status import SUCCESS, UNSCHEDULABLE_AND_UNRESOLVABLE


def node_unschedulable_filter(xp, unschedulable, pod_tolerates: bool):
    blocked = unschedulable & (not pod_tolerates)
    code = xp.where(blocked, UNSCHEDULABLE_AND_UNRESOLVABLE, SUCCESS).astype(xp.int8)
    return code, blocked.astype(xp.int64)
