"""The pod cycle: a run of plain pods (one shape, popped from the activeQ) placed by its profile's Placer, the
placed pods bound (or held at Permit), the rest parked in the unschedulable pool with the plugins that rejected
them. Consecutive runs of the same shape at the head of the activeQ are placed together (opportunistic batching
across priorities)."""
from __future__ import annotations

import numpy as np

from .queue import PodRun


class PodCycle:
    def __init__(self, sched):
        self.sched = sched

    def attempt(self, entry: PodRun) -> None:
        sched = self.sched
        queue = sched.queue
        runs = [entry]
        while isinstance(queue.peek_active(), PodRun) and queue.peek_active().shape is entry.shape:
            runs.append(queue.pop_active())
        pods, seqs, prios = queue.alive(runs)
        if not pods:
            return
        placer = sched.placer_for(pods[0])
        out = placer.place_run(entry.shape, pods, sched.rank())
        sched.stats.pod_cycles += out.pod_cycles
        sched.stats.batch_rounds += out.batch_rounds
        for pl in out.placed:
            self._commit(pl, placer.framework)
        if out.failures:
            seq_of = {pod.key: seq for pod, seq in zip(pods, seqs)}
            for failure in out.failures:
                sched.fail(failure.pods, failure.message)
                for pod in failure.pods:
                    sched.park(pod, seq_of[pod.key], failure.rejectors)
        sched.preemption.actuate()        # victims go once their preemptors wait in the queue

    def _commit(self, pl, framework) -> None:
        """Bind placed plain pods; gang members in permit mode go through Permit first, holding their nodes."""
        sched = self.sched
        if not sched.groups.of_pod:
            sched.bound(pl.pods, pl.node_ids)
            return
        for pod, node in zip(pl.pods, pl.node_ids.tolist()):
            gs = sched.groups.of_pod.get(pod.key)
            if gs is None or not gs.gang or sched.permit.run(gs, pod, node, framework):
                sched.bound([pod], np.array([node]))
