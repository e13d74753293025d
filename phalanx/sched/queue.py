"""The scheduling queue: activeQ (QueueSort order), backoffQ, the unschedulable pool and the pods PreEnqueue
holds back, on an explicit clock.

Entries are runs of plain pods (consecutive in queue order, one shape, one priority) or PodGroups. Every entry is
keyed by the profile's QueueSort key (PrioritySort: -priority, then the queue timestamp); a run's key is its first
pod's. An entry pushed later (a PodGroup reaching quorum, a pod back from backoff) may fall between the pods of a
queued run, so a popped run gives back the pods that come after the next entry.

Pods are known by their arrival (a sequence number given when they are added), never by name alone: a pod deleted
while queued is marked by its arrival, so a pod re-created under the same name is a new pod.

A rejected plain pod waits in the unschedulable pool with the plugins that rejected it; a cluster event moves it
to the activeQ (or the backoffQ while its backoff runs) only when one of those plugins registered the event and
its queueing hint says the event may help (upstream's QueueingHint). A pod rejected for no plugin's reason (an
error) is moved by any event.
"""
from __future__ import annotations

import bisect
import heapq
import itertools
import operator
from dataclasses import dataclass

from ..cluster_models import Pod
from .shapes import PodShape, run_starts

# kube-scheduler defaults (podInitialBackoffSeconds, podMaxBackoffSeconds).
INITIAL_BACKOFF_S = 1.0
MAX_BACKOFF_S = 10.0


def backoff_s(attempts: int, initial: float = INITIAL_BACKOFF_S, maximum: float = MAX_BACKOFF_S) -> float:
    """Backoff after `attempts` failed attempts: `initial`, doubling, at most `maximum`; none before any attempt
    (upstream's calculateBackoffDuration)."""
    if attempts <= 0:
        return 0.0
    doublings = min(attempts - 1, 64)      # the cap is reached long before; keeps the power finite
    return min(initial * 2.0 ** doublings, maximum)


@dataclass(eq=False)
class PodRun:
    shape: PodShape
    pods: list[Pod]
    seqs: list[int] | range          # arrival sequence per pod (a range when consecutive: replicas' arrivals)
    priority: int


@dataclass
class Parked:
    """A pod in the unschedulable pool."""
    pod: Pod
    shape: PodShape
    seq: int
    priority: int
    plugins: tuple                    # the plugins that rejected it (empty: an error; any event may help)
    events: frozenset                 # the events those plugins registered


@dataclass
class Attempts:
    count: int = 0                   # failed attempts
    failed_at: float = 0.0           # clock time of the last failure


class SchedulingQueue:
    def __init__(self, initial_backoff_s: float = INITIAL_BACKOFF_S, max_backoff_s: float = MAX_BACKOFF_S):
        self.initial_backoff_s = initial_backoff_s
        self.max_backoff_s = max_backoff_s
        self._active: list = []          # heap of (-priority, seq, tiebreak, entry)
        self._backoff: list = []         # heap of (ready_at, seq, tiebreak, entry)
        self._tiebreak = itertools.count()
        self.unschedulable: dict[str, Parked] = {}     # the pool, by pod key
        self.attempts: dict[str, Attempts] = {}        # failed attempts per pending pod
        self.held: dict[str, tuple[Pod, int]] = {}     # PreEnqueue said wait (gated, PodGroup missing): key -> (pod, seq)
        self.deleted: set[int] = set()                 # arrivals of queued pods deleted before their turn
        self._listening: dict[str, set[str]] = {}      # event -> keys of pooled pods whose rejectors registered it

    def backoff(self, attempts: int) -> float:
        return backoff_s(attempts, self.initial_backoff_s, self.max_backoff_s)

    # -- the activeQ and backoffQ ------------------------------------------------------------------
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
        """Entries whose backoff is over."""
        out = []
        while self._backoff and self._backoff[0][0] <= now:
            out.append(heapq.heappop(self._backoff)[3])
        return out

    def in_order(self) -> tuple[list, list]:
        """The activeQ as (priority, seq, entry) and the backoffQ as (ready time, seq, entry), each in the order they
        would leave (pushing them back in that order rebuilds both queues)."""
        active = [(-prio, seq, entry) for prio, seq, _, entry in sorted(self._active, key=lambda item: item[:3])]
        return active, [(at, seq, entry) for at, seq, _, entry in sorted(self._backoff, key=lambda item: item[:3])]

    def entries(self) -> list:
        """Every queued entry, in no particular order."""
        return [item[3] for item in self._active] + [item[3] for item in self._backoff]

    def __len__(self) -> int:
        return len(self._active) + len(self._backoff)

    # -- deletion by arrival -----------------------------------------------------------------------
    def alive(self, runs: list[PodRun]) -> tuple[list[Pod], list[int], list[int]]:
        """(pods, seqs, priorities) of the runs' pods that were not deleted while queued (their markers go)."""
        if not self.deleted:
            if len(runs) == 1:              # the usual entry: no flattening
                run = runs[0]
                return list(run.pods), list(run.seqs), [run.priority] * len(run.pods)
            return ([p for run in runs for p in run.pods], [q for run in runs for q in run.seqs],
                    [run.priority for run in runs for _ in run.pods])
        pods, seqs, prios = [], [], []
        for run in runs:
            for pod, seq in zip(run.pods, run.seqs):
                if seq in self.deleted:
                    self.deleted.discard(seq)
                else:
                    pods.append(pod), seqs.append(seq), prios.append(run.priority)
        return pods, seqs, prios

    def queued_pods(self) -> list[Pod]:
        """Plain pods still in the activeQ or backoffQ."""
        return [p for entry in self.entries() if isinstance(entry, PodRun)
                for p, seq in zip(entry.pods, entry.seqs) if seq not in self.deleted]

    # -- failures and the unschedulable pool ---------------------------------------------------------
    def failed(self, key: str, now: float) -> Attempts:
        att = self.attempts.setdefault(key, Attempts())
        att.count += 1
        att.failed_at = now
        return att

    def park_all(self, parked: list[Parked], now: float) -> None:
        """Pods that fit nowhere wait in the unschedulable pool for an event their rejectors registered."""
        listening = self._listening
        for entry in parked:
            key = entry.pod.key
            self.failed(key, now)
            self._drop(key)
            self.unschedulable[key] = entry
            for event in entry.events:
                keys = listening.get(event)
                if keys is None:
                    keys = listening[event] = set()
                keys.add(key)

    def _drop(self, key: str) -> Parked | None:
        parked = self.unschedulable.pop(key, None)
        if parked is not None:
            for event in parked.events:
                keys = self._listening[event]
                keys.discard(key)
                if not keys:     # a set keeps its size once grown: iterating an emptied big one is not free
                    del self._listening[event]
        return parked

    def listening(self, event: str) -> bool:
        """Whether any pooled pod waits for `event`."""
        return bool(self._listening.get(event))

    def ready_at(self, key: str, now: float) -> float:
        att = self.attempts.get(key)
        return now if att is None else att.failed_at + self.backoff(att.count)

    def wake(self, event: str | None, helps, now: float, skip=None) -> list[Parked]:
        """Move the pool's pods waiting for `event` (None: every pod) for which `helps(parked)` is true: those whose
        backoff is over are returned (for the activeQ), the others go to the backoffQ. `skip(key)`: pods to leave
        in the pool."""
        ready = []
        keys = list(self.unschedulable) if event is None else sorted(self._listening.get(event, ()),
                                                                      key=lambda k: self.unschedulable[k].seq)
        for key in keys:
            parked = self.unschedulable[key]
            if (skip is not None and skip(key)) or not helps(parked):
                continue
            self._drop(key)
            at = self.ready_at(key, now)
            if at <= now:
                ready.append(parked)
            else:
                self.push_backoff(PodRun(parked.shape, [parked.pod], [parked.seq], parked.priority), at, parked.seq)
        return ready

    def forget(self, key: str) -> bool:
        """Drop a pod from the pools (deleted); whether it was in one."""
        self.attempts.pop(key, None)
        return (self._drop(key) is not None) | (self.held.pop(key, None) is not None)


def cut_runs(pods: list[Pod], shapes: list[PodShape], priorities: list[int], seqs: list[int]) -> list[PodRun]:
    """Pods in queue order (distinct arrivals, ascending within a priority) -> runs of consecutive pods with one
    shape and one priority."""
    bounds = run_starts(len(pods), [(shapes, operator.is_not), (priorities, operator.ne)])

    def seqs_of(a: int, b: int):
        # A run of consecutive arrivals keeps them as a range: ascending and distinct, they are consecutive when
        # the last is as far from the first as the run is long.
        return range(seqs[a], seqs[b - 1] + 1) if seqs[b - 1] - seqs[a] == b - 1 - a else seqs[a:b]
    return [PodRun(shapes[a], pods[a:b], seqs_of(a, b), priorities[a]) for a, b in zip(bounds, bounds[1:])]
