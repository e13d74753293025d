"""Permit: placed pods that a Permit plugin holds (waiting pods), their deadlines, allowing, rejecting and
preempting them.

In gang_mode="permit" (the v1.35 GangScheduling gate) gang members go through the pod queue one by one; a placed
member waits at Permit, holding its node, until the profile's Permit plugins allow it (GangScheduling: minCount
members placed), or until the timeout rejects every waiting member of its group, or until a preemption chooses it as
a victim (upstream waitingPod.Preempt: it leaves its node and retries, nothing is deleted).
"""
from __future__ import annotations

import numpy as np

from ..cluster_models.durations import duration_text
from ..plugins.framework import GROUP_MEMBER_ADDED, POD_DELETED, fit_error
from ..plugins.gang_scheduling import ALLOW
from .podgroups import GroupState
from .records import PERMIT_REJECTED, WAITING, Placed

PLUGIN = "GangScheduling"
REJECTED_BY = frozenset({PLUGIN})
# WaitOnPermit's text for a waiting pod whose status is an error, not a rejection (a preempted one's).
WAIT_FAILED = "waiting on permit for pod: {}"
_NONE: frozenset[str] = frozenset()


class Permit:
    def __init__(self, sched):
        self.sched = sched
        self.timed: dict[str, GroupState] = {}      # groups with waiting members (a deadline), by key
        # waiting pod's key -> its group's `joined` when it began waiting: members added since are events received
        # while it was in flight (upstream's inFlightEvents), which its rejection at Permit is checked against
        self._joined_at: dict[str, int] = {}

    def _deadline(self, gs: GroupState, deadline: float | None) -> None:
        gs.permit_deadline = deadline
        if deadline is None:
            self.timed.pop(gs.key, None)
        else:
            self.timed[gs.key] = gs

    def waiting_keys(self) -> frozenset[str]:
        """Pods waiting at Permit in any group (they hold nodes; a preemption that chooses one preempts it here
        rather than deleting it)."""
        return frozenset([key for gs in self.timed.values() for key in gs.waiting]) if self.timed else _NONE

    def cleared(self, gs: GroupState) -> None:
        """The group has no waiting member left (they were deleted): no deadline."""
        self._deadline(gs, None)

    def run(self, gs: GroupState, pod, node: int, framework) -> bool:
        """Permit for a gang member just placed on `node`: True when it may be bound now; otherwise it waits (its
        group's waiting members are all allowed once a plugin says so)."""
        sched = self.sched
        plugins = framework.at("permit")
        if not plugins:
            return True
        gs.waiting[pod.key] = gs.pending.pop(pod.key)
        self._joined_at[pod.key] = gs.joined
        sched.log.append(Placed(WAITING, sched.now, [pod], [pod.key], np.array([node]),
                                [sched.cluster.tensors.nodes.names[node]]))
        sched.pending_message.pop(pod.key, None)
        if gs.permit_deadline is None:
            self._deadline(gs, sched.now + sched.permit_timeout_s)
        scheduled = len(gs.waiting) + len(gs.bound)
        if all(plugin.permit(gs, scheduled)[0] == ALLOW for plugin in plugins):
            self.allow(gs)
        return False

    def allow(self, gs: GroupState) -> None:
        sched = self.sched
        tensors = sched.cluster.tensors
        pods = [p for p, _ in gs.waiting.values()]
        sched.bound(pods, np.array([tensors.node_of(p.key) for p in pods], np.int64))
        gs.bound.update(gs.waiting)
        for key in gs.waiting:
            self._joined_at.pop(key, None)
        gs.waiting.clear()
        self._deadline(gs, None)
        sched.set_condition(gs, "True", "Scheduled", "")

    def next_deadline(self) -> float | None:
        deadlines = [gs.permit_deadline for gs in self.timed.values()]
        return min(deadlines) if deadlines else None

    def expire(self) -> None:
        """Reject every waiting member of the groups whose deadline has come; their nodes are released."""
        sched = self.sched
        due = [gs for gs in self.timed.values() if gs.permit_deadline <= sched.now]
        if len(due) > 1:                         # in the groups' own order, as they are retried
            order = {key: i for i, key in enumerate(sched.groups.states)}
            due.sort(key=lambda gs: order.get(gs.key, len(order)))
        for gs in due:
            waiting = list(gs.waiting.values())
            pods = [p for p, _ in waiting]
            # bindingCycle makes a Permit rejection a FitError over the one node the pod was placed on.
            reason = f"rejected due to timeout after waiting {duration_text(round(sched.permit_timeout_s * 10**9))} " \
                     f"at plugin {PLUGIN}"
            message = fit_error(1, {reason: 1})
            for pod in pods:
                sched.release(pod.key)
            gs.waiting.clear()
            self._deadline(gs, None)
            gs.rejected_at = sched.progress
            sched.fail(pods, message, PERMIT_REJECTED)
            # bindingCycle's FitError names the rejecting plugin: the pods wait for an event it registered (a member
            # of the group added), or the pool's flush; one added while they waited moves them at once.
            seen = [gs.joined > self._joined_at.pop(pod.key, gs.joined) for pod, _ in waiting]
            for pod, seq in waiting:
                gs.pending[pod.key] = (pod, seq)
                sched.park(pod, seq, REJECTED_BY)
            if any(seen):
                moved = {pod.key for (pod, _), added in zip(waiting, seen) if added}
                sched.requeue_parked(GROUP_MEMBER_ADDED, moved)
            sched.set_condition(gs, "False", "Unschedulable", message)
            # Forgetting them is upstream's AssignedPodDelete for the other pooled pods (the rejected ones wait for
            # their rejector's events alone).
            sched.cluster_event(POD_DELETED, None)

    def preempt(self, keys: list[str], status: str) -> list:
        """waitingPod.Preempt for the waiting pods `keys` a preemption chose as victims (upstream v1.36,
        kubernetes#135719); returns them. Each one's binding cycle fails with an error whose message is `status`
        ("preempted"): it is reported as WaitOnPermit reports an error (WAIT_FAILED), is no rejection (no
        unschedulable plugin, no PodGroup condition) and goes to the error backoffQ, tried again when its backoff
        ends, with no event. Its node and what its Reserve plugins held are released (Unreserve: GangScheduling
        forgets it, so the group's other waiting members wait on, their deadline unchanged). The caller sends the
        event for the freed nodes."""
        sched = self.sched
        sched.progress += len(keys)
        pods, seqs = [], []
        for key in keys:
            gs = sched.groups.of_pod[key]
            sched.release(key)
            pod, seq = gs.waiting.pop(key)
            self._joined_at.pop(key, None)
            gs.pending[key] = (pod, seq)
            pods.append(pod)
            seqs.append(seq)
            if not gs.waiting:
                self._deadline(gs, None)
        sched.fail(pods, WAIT_FAILED.format(status), PERMIT_REJECTED)
        for pod, seq in zip(pods, seqs):
            sched.retry_after_error([pod], [seq], sched.shape_of(pod))
        return pods

    def livelock(self, deadline: float) -> bool:
        """A gang timing out at `deadline` was already rejected at Permit with nothing bound and no outside event
        since: the timeouts only hand the same nodes from gang to gang."""
        return any(gs.permit_deadline == deadline and gs.rejected_at == self.sched.progress
                   for gs in self.timed.values())
