"""The pod cycle: a run of plain pods (one shape, popped from the activeQ) placed by its profile's Placer, the
placed pods bound (or held at Permit), the rest parked in the unschedulable pool with the plugins that rejected
them. Consecutive runs of the same shape at the head of the activeQ are placed together (opportunistic batching
across priorities).

A Placer that places segments takes the short runs at the head of the activeQ that it can place together (JAX: that
share its compiled configuration, in one call; numpy: runs of shapes whose results it keeps, one after another) and
binds them together, when nothing a binding does could change which run comes next: no pod waits in the pool for a
binding, no PodGroup member is pending (Permit), no pod is nominated, no StatefulSet successor is due; and when ties
are broken by one node order for every cycle (not tie_break "random", a permutation per cycle). The runs are placed in
queue order as their own cycles would place them; from the first pod left unplaced (one that fits nowhere), its run
goes through its own cycle (message, PostFilter) once the pods before it are bound, and the runs after it go back to
the activeQ as they were.
"""
from __future__ import annotations

import numpy as np

from ..plugins.framework import POD_BOUND
from .queue import PodRun


# After a segment stopped at a pod that fit nowhere, the next takes at most twice the pods placed before it (at least
# this many), growing back by doubling: the runs after a failed pod are popped, prepared and given back for nothing,
# so a queue whose pods mostly fail (a full cluster) would prepare each of them once per failure before it.
SEGMENT_AFTER_FAILURE = 16


class PodCycle:
    def __init__(self, sched):
        self.sched = sched
        self.segment_limit: dict = {}       # placer -> most pods its next segment takes (SEGMENT_AFTER_FAILURE)

    def attempt(self, entry: PodRun) -> None:
        sched = self.sched
        pods, seqs, prios = sched.queue.alive(self._runs(entry))
        if not pods:
            return
        placer = sched.placer_for(pods[0])
        member = placer.segment_member(entry.shape, pods) if placer.segment_pods and self._segments_allowed() else None
        if member is None:
            self._place(placer, entry.shape, pods, seqs)
        else:
            self._place_segment(placer, member, seqs, prios)
        sched.preemption.actuate()        # victims go once their preemptors wait in the queue

    def _runs(self, entry: PodRun) -> list[PodRun]:
        """The entry and the runs of its shape right after it in the activeQ."""
        queue = self.sched.queue
        runs = [entry]
        while isinstance(queue.peek_active(), PodRun) and queue.peek_active().shape is entry.shape:
            runs.append(queue.pop_active())
        return runs

    def _segments_allowed(self) -> bool:
        """Whether the run just taken may start a segment: another run follows it, no binding can change which, and
        every cycle breaks ties by one node order (tie_break "random" draws a permutation per cycle)."""
        sched = self.sched
        return isinstance(sched.queue.peek_active(), PodRun) and sched.tie_break == "first" and not (
            sched.groups.of_pod or sched.queue.listening(POD_BOUND) or sched.cluster.successors
            or sched.cluster.nominations)

    def _place(self, placer, shape, pods: list, seqs: list[int]) -> None:
        sched = self.sched
        out = placer.place_run(shape, pods, sched.rank())
        sched.stats.pod_cycles += out.pod_cycles
        sched.stats.batch_rounds += out.batch_rounds
        self._commit(out.placed, placer.framework)
        if out.failures:
            seq_of = dict(zip(map(id, pods), seqs))        # the run's pods are distinct objects
            for failure in out.failures:
                sched.fail(failure.pods, failure.message)
                seqs = sched.requeued([seq_of[id(pod)] for pod in failure.pods], failure.pods)
                if failure.rejectors:
                    sched.park_run(failure.pods, seqs, failure.rejectors, shape)
                else:
                    sched.retry_after_error(failure.pods, seqs, shape)

    def _place_segment(self, placer, head, seqs: list[int], prios: list[int]) -> None:
        """The head run and the runs after it that join it (Placer.segment_member with the head), placed together:
        the placer takes them as they are made (JAX: places the first while the next are made)."""
        sched = self.sched
        queue = sched.queue
        members, queued = [head], [(seqs, prios)]      # queued: each member's arrivals and priorities
        limit = self.segment_limit.get(placer, placer.segment_pods)

        def joining():
            """The head, then each run popped from the activeQ that joins it, up to `limit` pods in all; the first
            that does not join goes back, and ends the segment."""
            yield head
            size = len(head.pods)
            while size < limit and isinstance(queue.peek_active(), PodRun):
                entry = queue.pop_active()
                if sched.on_attempt is not None:
                    sched.on_attempt(len(entry.pods))
                pods, seqs, prios = queue.alive(self._runs(entry))
                if not pods:
                    continue
                member = (placer.segment_member(entry.shape, pods, head) if sched.placer_for(pods[0]) is placer
                          else None)
                if member is None:
                    self._give_back(entry.shape, pods, seqs, prios)
                    return
                members.append(member)
                queued.append((seqs, prios))
                size += len(pods)
                yield member

        outcome = placer.place_segment(joining(), sched.rank())
        placements, placed = outcome.placements, outcome.placed
        size = sum(len(member.pods) for member in members)
        sched.stats.pod_cycles += outcome.pod_cycles
        sched.stats.batch_rounds += outcome.batch_rounds
        self.segment_limit[placer] = (min(2 * limit, placer.segment_pods) if placed == size
                                      else max(2 * placed, SEGMENT_AFTER_FAILURE))
        # The members up to the first with a pod left unplaced, bound together (one binding entry, as a run placed in
        # parts: no pod waits for bindings while a segment is formed).
        stop = next((i for i, (member, done) in enumerate(zip(members, placements))
                     if sum(len(pl.pods) for pl in done) < len(member.pods)), None)
        self._commit([pl for done in placements[:len(members) if stop is None else stop + 1] for pl in done],
                     placer.framework)
        if stop is not None:
            # Its first pod left unplaced: the runs after it go back to the activeQ where they were, and its own
            # cycle places it or says why it fits nowhere and runs PostFilter.
            member = members[stop]
            taken = sum(len(pl.pods) for pl in placements[stop])
            for later, (seqs, prios) in zip(members[stop + 1:], queued[stop + 1:]):
                self._give_back(later.shape, later.pods, seqs, prios)
            self._place(placer, member.shape, member.pods[taken:], queued[stop][0][taken:])

    def _give_back(self, shape, pods: list, seqs: list[int], prios: list[int]) -> None:
        """Pods popped from the activeQ but not attempted go back as the runs they were (one priority each)."""
        start = 0
        for end in [i for i in range(1, len(pods)) if prios[i] != prios[i - 1]] + [len(pods)]:
            self.sched.queue.push_active(PodRun(shape, pods[start:end], seqs[start:end], prios[start]), prios[start],
                                         seqs[start])
            start = end

    def _commit(self, placed: list, framework) -> None:
        """Bind placed plain pods, in order; gang members in permit mode go through Permit first, holding their
        nodes. Without gangs and without a pod waiting for bindings, the placements are one binding entry (its
        records are per pod all the same): a run placed in parts (per-pod cycles, batch rounds, retried preemptors
        in batches) is bound in one step."""
        sched = self.sched
        if not sched.groups.of_pod:
            if len(placed) > 1 and not sched.queue.listening(POD_BOUND):
                sched.bound([pod for pl in placed for pod in pl.pods], np.concatenate([pl.node_ids for pl in placed]))
                return
            for pl in placed:
                sched.bound(pl.pods, pl.node_ids)
            return
        for pl in placed:
            for pod, node in zip(pl.pods, pl.node_ids.tolist()):
                gs = sched.groups.of_pod.get(pod.key)
                if gs is None or not gs.gang or sched.permit.run(gs, pod, node, framework):
                    sched.bound([pod], np.array([node]))
