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
its queueing hint says the event may help (upstream's QueueingHint). A pod that failed with an error (no plugin
rejected it) waits in the error backoffQ instead (upstream's podErrorBackoffQ) and is tried again when its backoff
ends, with no event.

Nothing else moves a pooled pod but upstream's flush (flushUnschedulablePodsLeftover): on the flush ticks, multiples
of 30 s of the scheduler's clock, pods pooled for strictly longer than 5 min since their last failure go to the
activeQ (or the backoffQ) as after a wildcard event. Pods PreEnqueue holds back are not flushed.

With SchedulerPopFromBackoffQ (`pop_from_backoff`) backoffs end at upstream's 1 s ordering windows, the backoffQ
is ordered by window, then priority and queue place, and its head (never the error backoffQ's) is taken whenever
the activeQ is empty.
"""
from __future__ import annotations

import bisect
import heapq
import itertools
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass

from ..cluster_models import Pod
from .shapes import PodShape, run_starts

# kube-scheduler defaults (podInitialBackoffSeconds, podMaxBackoffSeconds).
INITIAL_BACKOFF_S = 1.0
MAX_BACKOFF_S = 10.0
ORDERING_WINDOW_S = 1.0       # backoffQOrderingWindowDuration (SchedulerPopFromBackoffQ)
# DefaultPodMaxInUnschedulablePodsDuration. No KubeSchedulerConfiguration field sets it; upstream's only knob is the
# deprecated kube-scheduler flag --pod-max-in-unschedulable-pods-duration (its removal was postponed, kubernetes#110175).
MAX_IN_UNSCHEDULABLE_S = 300.0
# flushUnschedulablePodsLeftover's period: wait.Until from the queue's Run, so at the start and every 30 s after.
FLUSH_PERIOD_S = 30.0


def flush_tick(since: float, max_in: float = MAX_IN_UNSCHEDULABLE_S, period: float = FLUSH_PERIOD_S) -> float:
    """The first flush tick (a multiple of `period`) at which a pod pooled at `since` has been pooled for strictly
    longer than `max_in` (upstream compares currentTime - Timestamp > podMaxInUnschedulablePodsDuration)."""
    tick = math.floor((since + max_in) / period) * period
    # The division rounds; the comparison upstream makes decides.
    while tick - since <= max_in:
        tick += period
    while tick - period - since > max_in:
        tick -= period
    return tick


class FlushOrder:
    """What waits in the unschedulable pool (pods, or failed PodGroups) by (failure time, outside progress at it), for
    the pool's flush: the oldest first, without a walk over the pool. An item is pushed at each failure; those that
    left the pool or failed again since (`current` says no) are dropped as they come to the front."""

    def __init__(self, current: Callable[[float, int, object], bool]):
        self.current = current           # current(failed_at, progress, item): whether the entry is still the item's
        self._heap: list = []            # (failed_at, progress, tiebreak, item)
        self._tiebreak = itertools.count()

    def push(self, failed_at: float, progress: int, item) -> None:
        heapq.heappush(self._heap, (failed_at, progress, next(self._tiebreak), item))

    def rebuild(self, entries) -> None:
        """Only these (failed_at, progress, item) entries, in their order (a restored checkpoint)."""
        self._heap = [(at, progress, next(self._tiebreak), item) for at, progress, item in entries]
        heapq.heapify(self._heap)

    def _oldest(self) -> tuple | None:
        heap = self._heap
        while heap and not self.current(heap[0][0], heap[0][1], heap[0][3]):
            heapq.heappop(heap)
        return heap[0] if heap else None

    def next_flush(self, progress: int) -> tuple[float | None, bool]:
        """(the next flush tick that moves an item, None if none waits; whether some item failed before outside
        progress `progress`: with none since, a flushed item would fail again the same way)."""
        oldest = self._oldest()
        if oldest is None:
            return None, False
        return flush_tick(oldest[0]), oldest[1] != progress

    def due(self, now: float) -> list:
        """The items the flush of the latest tick at or before `now` moves (pooled for longer than
        MAX_IN_UNSCHEDULABLE_S), oldest first, taken out of the order."""
        out = []
        if not self._heap:        # (every turn of the scheduler's loop asks)
            return out
        tick = math.floor(now / FLUSH_PERIOD_S) * FLUSH_PERIOD_S
        while (oldest := self._oldest()) is not None and tick - oldest[0] > MAX_IN_UNSCHEDULABLE_S:
            heapq.heappop(self._heap)
            out.append(oldest[3])
        return out


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
    plugins: tuple                    # the plugins that rejected it (empty: any event may help; a Permit rejection)
    events: frozenset                 # the events those plugins registered
    progress: int = 0                 # the scheduler's outside_progress at its failure (none since: a flush is futile)


@dataclass
class Attempts:
    count: int = 0                   # failed attempts
    failed_at: float = 0.0           # clock time of the last failure


@dataclass(frozen=True)
class ErrorRetry:
    """A pod in the error backoffQ."""
    run: PodRun                      # the pod, as the run it goes back to the activeQ as
    progress: int                    # the scheduler's progress count at its failure (none since: it fails again)


class SchedulingQueue:
    def __init__(self, initial_backoff_s: float = INITIAL_BACKOFF_S, max_backoff_s: float = MAX_BACKOFF_S,
                 pop_from_backoff: bool = False):
        self.initial_backoff_s = initial_backoff_s
        self.max_backoff_s = max_backoff_s
        self.pop_from_backoff = pop_from_backoff
        self._active: list = []          # heap of (-priority, seq, tiebreak, entry)
        self._backoff: list = []         # heap of (ready_at, -priority or 0, seq, tiebreak, entry)
        self._errors: list = []          # heap of (ready_at, seq, tiebreak, ErrorRetry)
        self._tiebreak = itertools.count()
        self.unschedulable: dict[str, Parked] = {}     # the pool, by pod key
        self.attempts: dict[str, Attempts] = {}        # failed attempts per pending pod
        self.held: dict[str, tuple[Pod, int]] = {}     # PreEnqueue said wait (gated, PodGroup missing): key -> (pod, seq)
        self.deleted: set[int] = set()                 # arrivals of queued pods deleted before their turn
        self._listening: dict[str, set[str]] = {}      # event -> keys of pooled pods whose rejectors registered it
        # Pooled pods by their failure, for the flush.
        self.flush_order = FlushOrder(lambda at, progress, parked: self.unschedulable.get(parked.pod.key) is parked)

    def backoff(self, attempts: int) -> float:
        return backoff_s(attempts, self.initial_backoff_s, self.max_backoff_s)

    # -- the activeQ and backoffQ ------------------------------------------------------------------
    def push_active(self, entry, priority: int, seq: int) -> None:
        heapq.heappush(self._active, (-priority, seq, next(self._tiebreak), entry))

    def push_backoff(self, entry, ready_at: float, seq: int, priority: int = 0) -> None:
        # Within one ordering window upstream orders the backoffQ as the activeQ (lessBackoffCompletedWithPriority);
        # without windows by the end of the backoff alone.
        rank = -priority if self.pop_from_backoff else 0
        heapq.heappush(self._backoff, (ready_at, rank, seq, next(self._tiebreak), entry))

    def push_error(self, retry: ErrorRetry, ready_at: float, seq: int) -> None:
        heapq.heappush(self._errors, (ready_at, seq, next(self._tiebreak), retry))

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

    def pop_backoff(self):
        """The backoffQ's head, backing off or not (SchedulerPopFromBackoffQ: the activeQ is empty); None when the
        backoffQ is empty."""
        return heapq.heappop(self._backoff)[-1] if self._backoff else None

    def next_backoff_expiry(self) -> float | None:
        """When the first backoff (of either backoffQ) ends."""
        ends = [heap[0][0] for heap in (self._backoff, self._errors) if heap]
        return min(ends) if ends else None

    def only_futile_retries(self, progress: int) -> bool:
        """Whether the backoffQ is empty and every pod of the error backoffQ failed at scheduler progress
        `progress`: with nothing changed since, each retry would fail again the same way."""
        return not self._backoff and all(item[3].progress == progress for item in self._errors)

    def pop_expired(self, now: float) -> list:
        """Entries whose backoff is over: the backoffQ's, then the error backoffQ's (popEachBackoffCompleted)."""
        out = []
        while self._backoff and self._backoff[0][0] <= now:
            out.append(heapq.heappop(self._backoff)[-1])
        while self._errors and self._errors[0][0] <= now:
            out.append(heapq.heappop(self._errors)[3].run)
        return out

    def in_order(self) -> tuple[list, list, list]:
        """The activeQ as (priority, seq, entry), the backoffQ as (ready time, priority, seq, entry) and the error
        backoffQ as (ready time, seq, ErrorRetry), each in the order they would leave (pushing them back in that
        order rebuilds the queues)."""
        active = [(-prio, seq, entry) for prio, seq, _, entry in sorted(self._active, key=lambda item: item[:3])]
        backoff = [(at, -rank, seq, entry) for at, rank, seq, _, entry in sorted(self._backoff, key=lambda i: i[:4])]
        return active, backoff, [(at, seq, retry) for at, seq, _, retry in sorted(self._errors, key=lambda i: i[:3])]

    def entries(self) -> list:
        """Every queued entry, in no particular order."""
        return ([item[3] for item in self._active] + [item[-1] for item in self._backoff]
                + [item[3].run for item in self._errors])

    def __len__(self) -> int:
        return len(self._active) + len(self._backoff) + len(self._errors)

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
            self.flush_order.push(now, entry.progress, entry)
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

    def reorder_pool(self) -> None:
        """The flush's order of the pool rebuilt from each pooled pod's failure (attempts restored after parking)."""
        self.flush_order.rebuild((self.attempts[key].failed_at, parked.progress, parked)
                                 for key, parked in self.unschedulable.items())

    def flush(self, now: float) -> list[Parked]:
        """The flush of the latest tick at or before `now`: pods pooled for longer than MAX_IN_UNSCHEDULABLE_S leave
        the pool as after a wildcard event (every rejector's hint is skipped: queueAfterBackoff): those whose backoff
        is over are returned (for the activeQ), the others go to the backoffQ."""
        ready = []
        for parked in self.flush_order.due(now):
            self._requeue(parked, now, ready)
        return ready

    def retry_errors(self, runs: list[PodRun], now: float, progress: int) -> None:
        """Pods that failed with an error (no plugin rejected them) wait in the error backoffQ for the end of their
        backoff (upstream: AddUnschedulableIfNotPresent queues them after backoff, podErrorBackoffQ)."""
        for run in runs:
            key = run.pods[0].key
            att = self.failed(key, now)
            self._drop(key)
            self.push_error(ErrorRetry(run, progress), self.backoff_end(att.failed_at, att.count), run.seqs[0])

    def ready_at(self, key: str, now: float) -> float:
        att = self.attempts.get(key)
        return now if att is None else self.backoff_end(att.failed_at, att.count)

    def backoff_end(self, failed_at: float, attempts: int) -> float:
        """When a pod that failed `attempts` times, the last at `failed_at`, stops backing off. Under SchedulerPopFromBackoffQ upstream
        truncates the end to its ordering window and backs off while that is not before the current window, so the
        pod is ready at the next window (isPodBackingoff)."""
        end = failed_at + self.backoff(attempts)
        if not self.pop_from_backoff or attempts == 0:
            return end
        return (math.floor(end / ORDERING_WINDOW_S) + 1) * ORDERING_WINDOW_S

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
            self._requeue(parked, now, ready)
        return ready

    def _requeue(self, parked: Parked, now: float, ready: list) -> None:
        """A pod leaves the pool: into `ready` (for the activeQ) when its backoff is over, else to the backoffQ."""
        key = parked.pod.key
        self._drop(key)
        at = self.ready_at(key, now)
        if at <= now:
            ready.append(parked)
        else:
            self.push_backoff(PodRun(parked.shape, [parked.pod], [parked.seq], parked.priority), at, parked.seq,
                              parked.priority)

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
