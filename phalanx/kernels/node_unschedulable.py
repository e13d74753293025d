"""NodeUnschedulable: nodes with spec.unschedulable reject pods that do not tolerate
node.kubernetes.io/unschedulable:NoSchedule. Upstream: plugins/nodeunschedulable."""
from __future__ import annotations

from .status import SUCCESS, UNSCHEDULABLE_AND_UNRESOLVABLE
from .tolerations import tolerates

REASONS = ("node(s) were unschedulable",)
UNSCHEDULABLE_TAINT = ("node.kubernetes.io/unschedulable", "", "NoSchedule")


def pre_filter(pod) -> bool:
    """Whether the pod tolerates the unschedulable taint (then unschedulable nodes are fine)."""
    return any(tolerates(t, *UNSCHEDULABLE_TAINT) for t in pod.spec.tolerations)


def node_unschedulable_filter(xp, unschedulable, pod_tolerates: bool):
    blocked = unschedulable & (not pod_tolerates)
    code = xp.where(blocked, UNSCHEDULABLE_AND_UNRESOLVABLE, SUCCESS).astype(xp.int8)
    return code, blocked.astype(xp.int64)

