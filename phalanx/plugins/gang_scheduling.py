"""GangScheduling: a gang PodGroup's pods are not queued before minCount of them exist (PreEnqueue), and a placed
member waits at Permit until minCount members are scheduled (assumed or bound). Upstream (v1.36):
pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go.

The group's state (members pending, waiting at Permit, bound) is the scheduler's; the plugin reads it through the
handle it is given (`group_of(pod)` -> the group's state, or None and the reason the pod waits).
"""
from __future__ import annotations

from .framework import GROUP_MEMBER_ADDED, Plugin

QUORUM_MESSAGE = "waiting for minCount pods from a gang to appear in scheduling queue"
WAIT_MESSAGE = "waiting for minCount pods from a gang to be scheduled"
PERMIT_TIMEOUT_S = 300.0          # permitTimeoutDuration: 5 minutes
ALLOW, WAIT = "Allow", "Wait"


class GangScheduling(Plugin):
    name = "GangScheduling"
    events = frozenset({GROUP_MEMBER_ADDED})     # {Pod, Add} of a member, {PodGroup, Add}
    pre_enqueue_reads = "group"                  # membership is in the spec, quorum is the group's

    def pre_enqueue(self, pod, groups) -> str | None:
        if pod.spec.scheduling_group is None and pod.spec.workload_ref is None:
            return None                          # not a PodGroup member
        group, reason = groups.group_of(pod)
        if reason is not None:
            return reason                        # its PodGroup does not exist (yet)
        if group is not None and not group.quorum():
            return QUORUM_MESSAGE
        return None

    def hint(self, event: str, pod, objects, cluster) -> bool:
        # isSchedulableAfterPodAdded / isSchedulableAfterPodGroupAdded: a member of the pod's own group (objects:
        # the groups whose members were added, or which appeared).
        return any(pod.key in group.pending for group in objects)

    def permit(self, group, scheduled: int) -> tuple[str, str, float]:
        """(ALLOW or WAIT, message, timeout) for a member just placed, `scheduled` members of its group being
        assumed or bound (that one included)."""
        if group.gang and scheduled < group.min_count:
            return WAIT, WAIT_MESSAGE, PERMIT_TIMEOUT_S
        return ALLOW, "", 0.0
