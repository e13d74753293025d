"""The scheduling queue: activeQ (PrioritySort), backoffQ and the unschedulable pool, on an explicit clock.

Entries are runs of plain pods (consecutive in queue order, one shape, one priority) or PodGroups. Every
entry is keyed by (-priority, arrival sequence); a run's key is its first pod's. An entry pushed later (a
PodGroup reaching quorum, a pod back from backoff) may fall between the pods of a queued run, so a popped run
gives back the pods that come after the next entry.
"""
from __future__ import annotations

import bisect
import heapq
import itertools
from dataclasses import dataclass

from ..cluster_models import Pod
from .shapes import PodShape

# kube-scheduler defaults (podInitialBackoffSeconds, podMaxBackoffSeconds).
INITIAL_BACKOFF_S = 1.0
MAX_BACKOFF_S = 10.0


def backoff_s(attempts: int) -> float:
    """Backoff after `attempts` failed attempts: 1 s, doubling, at most 10 s."""
    doublings = min(max(attempts - 1, 0), 64)      # the cap is reached long before; keeps the power finite
    return min(INITIAL_BACKOFF_S * 2.0 ** doublings, MAX_BACKOFF_S)


@dataclass(eq=False)
class PodRun:
    shape: PodShape
    pods: list[Pod]
    seqs: list[int]                  # arrival sequence per pod
    priority: int


class SchedulingQueue:
    def __init__(self):
        self._active: list = []          # heap of (-priority, seq, tiebreak, entry)
        self._backoff: list = []         # heap of (ready_at, seq, tiebreak, entry)
        self._tiebreak = itertools.count()

    def push_active(self, entry, priority: int, seq: int) -> None:
        heapq.heappush(self._active, (-priority, seq, next(self._tiebreak), entry))

    def push_backoff(self, entry, ready_at: float, seq: int) -> None:
        heapq.heappush(self._backoff, (ready_at, seq, next(self._tiebreak), entry))

    def peek_active(self):
        return self._active[0][3] if self._active else None

    def pop_active(self):
        if not self._active:
            return None
        entry = heapq.heappop(self._active)[3]
        if isinstance(entry, PodRun) and self._active:
            top_prio, top_seq = self._active[0][0], self._active[0][1]
            if top_prio == -entry.priority:
                # Never an empty run: pods with the next entry's seq (a tie) stay in this one.
                cut = max(1, bisect.bisect_left(entry.seqs, top_seq))
                if cut < len(entry.seqs):
                    rest = PodRun(entry.shape, entry.pods[cut:], entry.seqs[cut:], entry.priority)
                    entry = PodRun(entry.shape, entry.pods[:cut], entry.seqs[:cut], entry.priority)
                    self.push_active(rest, rest.priority, rest.seqs[0])
        return entry

    def next_backoff_expiry(self) -> float | None:
        return self._backoff[0][0] if self._backoff else None

    def pop_expired(self, now: float) -> list:
        """Entries whose backoff is over, with their (priority, seq) for the activeQ."""
        out = []
        while self._backoff and self._backoff[0][0] <= now:
            out.append(heapq.heappop(self._backoff)[3])
        return out

    def entries(self) -> list:
        """Every queued entry, in no particular order."""
        return [item[3] for item in self._active] + [item[3] for item in self._backoff]

    def __len__(self) -> int:
        return len(self._active) + len(self._backoff)


def cut_runs(pods: list[Pod], shapes: list[PodShape], priorities: list[int], seqs: list[int]) -> list[PodRun]:
    """Pods in queue order -> runs of consecutive pods with one shape and one priority."""
    runs: list[PodRun] = []
    for pod, shape, prio, seq in zip(pods, shapes, priorities, seqs):
        last = runs[-1] if runs else None
        if last is not None and last.shape is shape and last.priority == prio:
            last.pods.append(pod)
            last.seqs.append(seq)
        else:
            runs.append(PodRun(shape, [pod], [seq], prio))
    return runs
