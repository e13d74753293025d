"""Placing a run of identical pods: the per-pod path and the exact batch path (opportunistic batching).

Both make the same decisions: each pod takes the best node of the current state, then that node's load
grows. A run stops at its first pod that fits nowhere; the rest of the run would meet the same state and
fail the same way (KEP-4671: "rejecting all subsequent pods from the same homogeneous sub-group").

Whether a run can be batched is the plugins' call: every plugin that runs for the pod declares how its Filter and
Score move while copies of the pod are placed (plugins/framework.py: FIXED, NODE_LOCAL, PER_POD).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from ..cluster_models import Pod
from ..cluster_models.objects import pod_keys
from ..kernels.batch import NEVER, contenders, fill_times, normalization_epoch_end, pick_order, pick_order_few
from ..kernels.domain_batch import DomainScore, domain_pick_order
from ..kernels.select import num_feasible_nodes_to_find, sample_feasible, sampled_windows, select_best, selection_key
from .cluster import Cluster
from ..plugins.framework import DOMAIN, PER_POD, PodInfo, with_post_filter
from .cycle import (Evaluation, Prepared, batchable, capacity_rows, copy_capacity, copy_totals, domain_batchable,
                    fixed_scores, load_keys, prepare, remembered_copies, row_view, run_filters, run_scores,
                    sampled_totals)
from .framework import Framework
from .incremental import ShapeCache, keepable, live_scores
from .messages import fit_error, reason_histogram
from .preemption import KeptFailure, passes_nominated, tensors_state, vectorised, with_nominated, with_nominated_again
from .shapes import PodShape

NO_NODES_MESSAGE = "no nodes available to schedule pods"                     # ErrNoNodesAvailable
# Runs up to max(SHORT_RUN, nodes // _NODES_PER_UPDATE) long are placed on the kept shape (sched/incremental.py);
# longer ones take the batch path over every node.
SHORT_RUN = 8
_NODES_PER_UPDATE = 800
# Shorter runs on a kept shape go pod by pod (one kept-shape update each); from this length a batch round over the
# contenders costs less.
_KEPT_ROUND_MIN = 2
# Most pods of a numpy segment (short runs of kept shapes placed one after another, bound together).
KEPT_SEGMENT_PODS = 512
# A kept round's pick order of up to this many (contender, copy) pairs is sorted in plain Python.
_PICKS_IN_PYTHON = 64
# A sampled cycle scores its feasible nodes on their rows alone (cycle.sampled_totals) when there are at most one in
# this many nodes; more, and the passes over all nodes cost less than the gathers.
_SAMPLED_ROWS_PER_NODE = 2
# A sampled cycle's first window of the ring (Placer._filter_ring) holds the nodes it looks for, a quarter more and
# this many: most cycles find them there.
_RING_SLACK = 64
_NOMINATED_BATCH = 256      # retried preemptors checked on their nominated nodes together, at most
# Largest (candidates x copies x resources) block of resource scores evaluated at once by the batch path.
_BLOCK_ELEMENTS = 1 << 22


@dataclass
class Placement:
    """Load added to the node table for some pods of one shape; enough to undo it exactly."""
    pods: list[Pod]
    node_ids: np.ndarray             # (k,) int64 node id per pod
    request: np.ndarray              # (R,) int64
    nonzero: np.ndarray              # (2,) int64
    ports: list[int]                 # host-port columns
    ports_before: np.ndarray | None  # (k, len(ports)) bool host-port cells before
    scoring: np.ndarray              # (2,) int64 cpu/memory as NodeResourcesFit scoring reads one pod
    reserved: list = field(default_factory=list)   # (plugin, record) of each Reserve (one-pod placements only)
    # Per pod, its Nomination, dropped when it was placed (upstream assume; None: it had none); undo puts them back.
    # None: no pod of the placement was nominated.
    nominations: list | None = None


@dataclass
class _Round:
    """A batch round's evaluation of the next pod over every node."""
    p: Prepared
    ev: Evaluation
    nodes: np.ndarray                # (C,) int64 the feasible nodes
    cap: np.ndarray                  # (C,) int64 copies each takes before a NODE_LOCAL Filter rejects it


@dataclass
class RunFailure:
    """Pods of a run that fit nowhere: the first one failed, the identical ones after it would fail the same way."""
    pods: list[Pod]
    message: str                     # the FitError (or error) text
    rejectors: frozenset             # the plugins that rejected them (empty: an error)


@dataclass
class SegmentOutcome:
    """What placing a segment (runs of several shapes, bound together) did: each member's placements, in order, up
    to the member whose pod was left unplaced; pods placed in all (the members' pods in order, before the first
    left); the evaluations it took."""
    placements: list[list[Placement]]
    placed: int
    pod_cycles: int = 0              # per-pod evaluations over all nodes
    batch_rounds: int = 0            # batch evaluations over all nodes


@dataclass
class RunMember:
    """A short run of a kept shape ready to join a numpy segment (Placer.segment_member)."""
    shape: PodShape
    pods: list[Pod]


@dataclass
class RunOutcome:
    placed: list[Placement] = field(default_factory=list)
    # One per part of the run (Framework.split_run), and one for consecutive pods that failed alike (a run of
    # preemptors, each nominated to a node, fails pod by pod).
    failures: list[RunFailure] = field(default_factory=list)
    pod_cycles: int = 0              # per-pod evaluations over all nodes
    batch_rounds: int = 0            # batch evaluations over all nodes (each places many pods)

    @property
    def failed(self) -> list[Pod]:
        return [pod for f in self.failures for pod in f.pods]

    def fail(self, pods: list[Pod], message: str, rejectors: frozenset) -> None:
        last = self.failures[-1] if self.failures else None
        if last is not None and last.message == message and last.rejectors == rejectors:
            last.pods.extend(pods)
        else:
            self.failures.append(RunFailure(list(pods), message, rejectors))


def _skips_hold(kept, states: list | None) -> bool:
    """Whether the live Scores whose PreScore skips the pod now (the pods they read left since the shape was kept)
    stay skipped while copies of it are placed (Plugin.skip_behaviour), so a lap's cycles may share one state."""
    running = {plugin for plugin, _, _ in states or ()}
    return all(plugin.skip_behaviour(kept.prepared.pod, "preScore") != PER_POD
               for plugin, _ in kept.live if plugin not in running)


def rejectors(ev: Evaluation) -> frozenset:
    """The plugins that rejected the pod (upstream's UnschedulablePlugins): each node's first failing Filter, the
    PreFilterResults that left nodes out, the PreFilter that rejected it outright; none for an error."""
    if ev.error:
        return frozenset()
    if ev.prefilter_message:
        return frozenset({ev.rejected_by}) if ev.rejected_by else frozenset(ev.narrowing)
    hits = np.bincount(ev.first_failed() + 1, minlength=len(ev.filters) + 1)[1:]
    names = {ev.filters[i] for i in np.flatnonzero(hits).tolist()}
    if ev.outside is not None and bool(np.asarray(ev.outside).any()):
        names.update(ev.narrowing)
    return frozenset(names)


class Placer:
    """Filter/score evaluation and placement of pod runs on one cluster's tensors, for one profile."""

    # Most pods of a segment: runs of different shapes placed one after another and bound together (segment_member /
    # place_segment; the JAX Placer's in one compiled call); 0: runs are placed and bound one at a time.
    segment_pods = 0

    def __init__(self, cluster: Cluster, framework: Framework, xp, batching: bool, incremental: bool = True):
        self.cluster = cluster
        self.framework = framework
        self.profile = framework.profile
        self.xp = xp
        self.batching = batching
        # Shapes' results kept between their cycles (sched/incremental.py); numpy arrays on the host.
        self.kept = ShapeCache() if incremental and xp is np else None
        if self.kept is not None:
            self.segment_pods = KEPT_SEGMENT_PODS
        self.next_start = 0          # nextStartNodeIndex, used when percentageOfNodesToScore < 100
        self.caches: dict[str, dict] = {}     # per plugin, kept across cycles (tensors.changes tells what moved)
        # PostFilter for a pod no node fits: (placer, pod, prepared, evaluation) -> (message, nominated); None: the
        # failure stands as Filter left it (sched/preemption.py sets it).
        self.post_filter = None
        # A failed, nominated pod's cycle is kept for the next pod of its run (preemptors); False: every cycle is
        # made afresh (tests compare the two).
        self.keep_failures = xp is np
        # Pods retried on the nodes they were nominated to are checked there together (_place_nominated); False:
        # one at a time (tests compare the two).
        self.batch_nominated = True
        # Sampled cycles of copies within one lap of the ring are picked from one state of the kept results
        # (_place_kept_sampled); False: one pod at a time (tests compare the two).
        self.sampled_laps = True

    def nodes_to_find(self, n: int) -> int:
        """How many feasible nodes a cycle over `n` nodes looks for (numFeasibleNodesToFind; one when the profile has
        no Score plugin)."""
        return num_feasible_nodes_to_find(self.profile.percentage_of_nodes_to_score, n, self.profile.scoring)

    def sampling(self) -> bool:
        n = self.cluster.tensors.nodes.size
        return self.nodes_to_find(n) < n

    # -- segments: short runs of kept shapes, bound together ----------------------------------------------------
    def segment_member(self, shape: PodShape, pods: list[Pod], head=None) -> RunMember | None:
        """The run ready to join a segment (`head`: its first member, None for the first itself), or None when it
        must go on its own: a run place_part would not start on its shape's kept results (sampled nodes,
        nominations, a long run, plugins that tell its pods apart) or whose shape is not kept yet."""
        cluster, kept = self.cluster, self.kept
        if kept is None or cluster.nominations or (self.batching and len(pods) > self.short_run()) \
                or not kept.holds(shape) or self.sampling():
            return None
        parts = self.framework.split_run(shape, pods, cluster)
        if len(parts) != 1 or parts[0][0] is not shape:
            return None
        return RunMember(shape, pods)

    def place_segment(self, members: Iterable[RunMember], rank: np.ndarray) -> SegmentOutcome:
        """The members' pods in order on their shapes' kept results, as their own cycles would place them, until a
        pod is left: one no node fits, or a shape that cannot be kept now. That pod and the rest of its run are left
        to the caller (its run's own cycle then says why and runs PostFilter, after the pods placed before it are
        bound, as they were before its cycle)."""
        out, placements, placed = RunOutcome(), [], 0
        for m in list(members):         # every member made before any is placed (RunMember: kept shapes held)
            start = len(out.placed)
            left = self._place_kept(m.shape, m.pods, rank, out, fail=False)
            placements.append(out.placed[start:])
            placed += len(m.pods) - len(left)
            if left:
                break
        return SegmentOutcome(placements, placed, out.pod_cycles, out.batch_rounds)

    def place_run(self, shape: PodShape, pods: list[Pod], rank: np.ndarray) -> RunOutcome:
        """Place a run of pods of one shape, in order; each part the plugins still tell apart (split_run) stops at
        its first pod that fits nowhere."""
        out = RunOutcome()
        for part_shape, part in self.framework.split_run(shape, pods, self.cluster):
            self.place_part(part_shape, part, rank, out)
        return out

    def place_part(self, shape: PodShape, pods: list[Pod], rank: np.ndarray, out: RunOutcome) -> None:
        """Short runs go on kept shape results, long ones in batches; a long run that cannot be batched goes on
        kept results too; what is left, pod by pod with a full cycle each."""
        sampling = self.sampling()
        if sampling and self.kept is not None and not self.cluster.nominations:
            pods = self._place_kept_sampled(shape, pods, rank, out)
            if not pods:
                return
            if self.batching and self.sampled_laps and len(pods) > 1 and not self.cluster.nominations:
                pods = self._place_sampled_rounds(shape, pods, rank, out)
                if not pods:
                    return
        eligible = not sampling and not self.cluster.nominations
        short = not self.batching or len(pods) <= self.short_run()
        keep = self.kept is not None and eligible
        if keep and short:
            pods = self._place_kept(shape, pods, rank, out)
            if not pods:
                return
            eligible = not self.cluster.nominations        # a failed pod may have been nominated (preemption)
        if self.batching and len(pods) > 1 and eligible:
            pods = self._place_batches(shape, pods, rank, out, kept=keep and not short)
            if not pods:
                return
        # (sampled: a copy may make the shape keepable, as below; nominations are looked at per pod there)
        keep = keep or (sampling and self.kept is not None)
        self.place_each(shape, pods, rank, out, keep=keep and len(pods) > 1,
                        rebatch=self.batching and eligible and len(pods) > 2, sampled=sampling)

    def _place_batches(self, shape: PodShape, pods: list[Pod], rank: np.ndarray, out: RunOutcome,
                       kept: bool) -> list[Pod]:
        """A run in batch rounds when the plugins allow one (kernels/batch.py, or kernels/domain_batch.py for DOMAIN
        scores), else on kept results (kept); returns the pods left for the per-pod path."""
        p = prepare(shape, self.cluster, self.framework)
        if batchable(p):
            return self._place_rounds(shape, pods, rank, out, batchable, self._batch_picks)
        if domain_batchable(p):
            return self._place_rounds(shape, pods, rank, out, domain_batchable, self._domain_picks)
        return self._place_kept(shape, pods, rank, out) if kept else pods

    def short_run(self) -> int:
        """Runs up to this long are placed on the kept shape; longer ones take the batch path over every node (one
        kept-shape update costs about what a batch round costs over _NODES_PER_UPDATE nodes)."""
        return max(SHORT_RUN, self.cluster.tensors.nodes.size // _NODES_PER_UPDATE)

    def place_each(self, shape: PodShape, pods: list[Pod], rank: np.ndarray, out: RunOutcome,
                   keep: bool = False, rebatch: bool = False, sampled: bool = False) -> None:
        """The per-pod path: each pod's own cycle. A pod no node fits goes through PostFilter (preemption); when
        it was nominated the run goes on, otherwise the rest of the run fails as it did. A copy may make a skipped
        plugin run (e.g. the first pod of a run with preferred pod affinity and no pod to match yet), so after the
        first placement the rest goes in batch rounds when the plugins allow them now (rebatch), and after each
        placement on the kept shape when it can be kept now (keep; sampled: nodes are sampled, so sampled cycles on
        it)."""
        i = 0
        failed = None        # the last pod's failed cycle, while only nominations changed since (preemptors)
        nominations = self.cluster.nominations
        while i < len(pods):
            if rebatch and i == 1 and not nominations:
                left = self._place_batches(shape, pods[i:], rank, out, kept=False)
                i = len(pods) - len(left)
                if not left:
                    return
            # Sampled, only after the first copy (what makes a skipped plugin run): a shape that stays unkeepable
            # would be prepared again for every pod (a required anti-affinity's PreFilter token moves with each).
            if keep and i and not nominations and (i == 1 or not sampled):
                left = (self._place_kept_sampled if sampled else self._place_kept)(shape, pods[i:], rank, out)
                i = len(pods) - len(left)
                if not left:
                    return
            if nominations and failed is None and self.batch_nominated:
                taken = self._place_nominated(shape, pods[i:], out)
                if taken:
                    i += taken
                    continue
            pod = pods[i]
            i += 1
            mark, state = nominations.mark(), tensors_state(self.cluster.tensors)
            if failed is not None and failed.state != state:
                failed = None
            p, ev, node = self.evaluate(shape, rank, pod=pod, failed=failed)
            out.pod_cycles += 1
            if node >= 0:
                failed = None
                picks = self.picks(p, node)
                pl = self.account(p, np.array([node]), [pod])
                pl.reserved = self.reserve(p, ev.extras, node, pod, picks)
                if nominations:
                    pl.nominations = [nominations.pop(pod.key, None)]
                out.placed.append(pl)
                continue
            # with_nominated_again hands the kept cycle's results back whole where nothing moved: so do its message
            # and rejectors.
            again = failed is not None and ev is failed.ev
            fit_message, why = (failed.message, failed.rejectors) if again else (self.message(ev), rejectors(ev))
            message, nominated = self.after_failure(pod, p, ev, fit_message)
            if nominated:
                if again:           # kept's results stand whole: they now stand for this pod, at this mark
                    failed.pod, failed.mark = pod, mark
                elif self.keep_failures:
                    failed = KeptFailure(p, ev, pod, self.cluster.priority(pod), mark, state, fit_message, why)
                else:
                    failed = None
                out.fail([pod], message, why)
                continue
            out.fail(pods[i - 1:], message, why)
            self.skip_cycles(ev, len(pods) - i)
            break

    def _place_nominated(self, shape: PodShape, pods: list[Pod], out: RunOutcome) -> int:
        """Retried preemptors: the pods at the front of the run (one priority) nominated to distinct nodes are placed
        there at once as far as Filter passes for each on its node (evaluateNominatedNode, without scoring). Exact
        when the shape can be kept (incremental.keepable: placing a copy changes no other node's Filter and no
        PreFilter) and no Filter that runs reserves per-pod state. Returns how many were placed (0: go pod by
        pod)."""
        cluster = self.cluster
        nominations, index = cluster.nominations, cluster.tensors.node_index
        priority = cluster.priority(pods[0])
        nodes: list[int] = []
        seen: set[int] = set()
        for pod in pods[:_NOMINATED_BATCH]:
            own = nominations.get(pod.key)
            node = index.get(own.node, -1) if own is not None else -1
            if node < 0 or node in seen or cluster.priority(pod) != priority:
                break
            seen.add(node)
            nodes.append(node)
        if len(nodes) < 2:
            return 0
        p = prepare(shape, cluster, self.framework)
        if not keepable(p, self.framework) or p.reserving(self.framework):
            return 0
        passes = passes_nominated(cluster, p, pods[: len(nodes)], priority, nodes)
        if passes is None:
            return 0
        taken = len(nodes) if passes.all() else int(np.argmin(passes))
        if not taken:
            return 0
        # One placement for them all (no Filter that ran reserves; the nodes are distinct): one node-table update,
        # one log append; undone pod by pod as far as a group cycle keeps them.
        placed = self.account(p, np.array(nodes[:taken], np.int64), pods[:taken])
        placed.nominations = nominations.pop_all(pod_keys(pods[:taken]))
        out.pod_cycles += taken
        out.placed.append(placed)
        return taken

    def _place_kept(self, shape: PodShape, pods: list[Pod], rank: np.ndarray, out: RunOutcome,
                    fail: bool = True) -> list[Pod]:
        """A run on kept shape results (sched/incremental.py): one pod takes the kept best node; more go as the
        batch path places them, its rounds on the k best nodes of the kept key (the contenders) instead of every
        node. A pod no node fits fails from the kept Filter results with the full cycle's message and PostFilter
        (_fail_kept; fail False: it is returned with the rest, unattempted). Returns the pods left for the per-pod
        path: after a pod nominated by preemption, or all of them when the shape cannot be kept now."""
        while pods:
            kept = self.kept.get(shape, self.cluster, self.framework, rank, self.caches, again=len(pods) > 1)
            if kept is None:
                return pods
            if len(pods) < _KEPT_ROUND_MIN or not self.batching or not kept.rounds:
                node = kept.best()
                if node < 0:
                    return self._fail_kept(kept, pods, out) if fail else pods
                self._place_one_kept(kept, node, pods[0], out)
                pods = pods[1:]
                continue
            take, nodes = self._kept_round(kept, len(pods), rank)
            if not take:
                return self._fail_kept(kept, pods, out) if fail and kept.best() < 0 else pods
            out.batch_rounds += 1
            out.placed.append(self.account(kept.prepared, nodes, pods[:take]))
            pods = pods[take:]
        return []

    def _place_kept_sampled(self, shape: PodShape, pods: list[Pod], rank: np.ndarray, out: RunOutcome) -> list[Pod]:
        """Sampled cycles (percentageOfNodesToScore) on kept shape results: each samples the kept feasible nodes
        round the ring from nextStartNodeIndex and picks among them (ShapeScores.sampled_best), as the per-pod path's
        cycle would. Cycles that follow one another within one lap of the ring (kernels/select.py sampled_windows)
        visit no node an earlier one of them took: when copies change nothing but their own node's row
        (ShapeScores.rounds), their picks are made from the kept results as they stand and placed at once. Scores
        that read bound pods (live: PodTopologySpread, InterPodAffinity) are run for each cycle on its own nodes
        (ShapeCache.sampled_live) from one PreScore for the whole lap when nothing moves pod by pod
        (ShapeScores.copies_local): with the same scores when a copy moves their score on its own node alone
        (Plugin.copies_move_own_node: per-node topology keys), else cycle after cycle by their lap models
        (_lap_picks). Returns the pods left for the per-pod path: all of them when the shape cannot be kept now or
        has a PreFilterResult; those after a pod nominated by preemption."""
        n = self.cluster.tensors.nodes.size
        wanted = self.nodes_to_find(n)
        i = 0
        while i < len(pods):
            kept = self.kept.get(shape, self.cluster, self.framework, rank, self.caches, again=len(pods) - i > 1,
                                 live=False)
            if kept is None or kept.prepared.allowed is not None:
                return pods[i:]
            ids = kept.feasible_ids()
            if not len(ids):
                return self._fail_kept(kept, pods[i:], out)
            states = None
            if kept.live:
                states = self.kept.live_states(kept, self.cluster, self.framework)
                if states is None:
                    return pods[i:]
            laps = self.sampled_laps and (kept.rounds or kept.copies_local and _skips_hold(kept, states))
            windows, visited = sampled_windows(ids, n, self.next_start, wanted, len(pods) - i if laps else 1)
            nodes = None
            if len(windows) > 1 and states and not all(plugin.copies_move_own_node(state, kept.tensors)
                                                       for plugin, state, _ in states):
                nodes = self._lap_picks(kept, states, windows, rank)
                if nodes is None:           # a live Score has no lap model: one cycle
                    windows, visited = sampled_windows(ids, n, self.next_start, wanted, 1)
            if nodes is None:
                live = None if states is None else self.kept.sampled_live(kept, states, windows, self.caches)
                nodes = kept.sampled_best(windows, rank, live)
            self.next_start = (self.next_start + visited) % n
            if len(nodes) == 1:
                self._place_one_kept(kept, int(nodes[0]), pods[i], out)
            else:
                out.pod_cycles += len(nodes)
                out.placed.append(self.account(kept.prepared, nodes, pods[i:i + len(nodes)]))
            i += len(nodes)
        return []

    def _place_sampled_rounds(self, shape: PodShape, pods: list[Pod], rank: np.ndarray, out: RunOutcome) -> list[Pod]:
        """Sampled cycles of a run the batch path would place (cycle.batchable: a copy moves only its own node's
        Filters and Scores) whose shape is not kept between runs (a Filter state the kept rows cannot bring up to
        date, as required anti-affinity per node: prepared again whenever a pod with such terms binds). The run's own
        results from one full cycle (ShapeCache.run_results), then its cycles lap after lap as _place_kept_sampled
        picks them; between laps only the nodes the run took move: out of the feasible ones once they hold their
        copy capacity (what the round's NODE_LOCAL Filters allow), else scored for their next copy on their new load
        (copy_totals). Returns the pods left for the per-pod path: all of them when the run cannot go so (a live
        Score, a PreFilterResult), those from the first that no node fits (its full cycle reports it)."""
        cluster, tensors = self.cluster, self.cluster.tensors
        p = prepare(shape, cluster, self.framework)
        if p.rejection is not None or p.error is not None or p.score_error is not None or p.allowed is not None \
                or not batchable(p) or live_scores(p):
            return pods
        s = self.kept.run_results(p, shape, tensors, rank, self.caches)
        n = tensors.nodes.size
        wanted = self.nodes_to_find(n)
        cap = copy_capacity(np, p, tensors, len(pods))
        taken = np.zeros(n, np.int64)         # (N,) copies of the run each node holds
        i = 0
        while i < len(pods):
            ids = s.feasible_ids()
            if not len(ids):
                return pods[i:]
            windows, visited = sampled_windows(ids, n, self.next_start, wanted, len(pods) - i)
            self.next_start = (self.next_start + visited) % n
            nodes = s.sampled_best(windows, rank)
            out.pod_cycles += len(nodes)
            out.placed.append(self.account(p, nodes, pods[i:i + len(nodes)]))
            i += len(nodes)
            taken[nodes] += 1
            full = taken[nodes] >= cap[nodes]
            if full.any():
                s.feasible[nodes[full]] = False
                s.feasible_changed()
            more = nodes[~full]
            if len(more):
                s.total[more] = copy_totals(np, s.scoring, tensors, more, s.fixed_total[more], 1)[:, 0]
        return []

    def _lap_picks(self, kept, states: list, windows: np.ndarray, rank: np.ndarray) -> np.ndarray | None:
        """The picks of a lap's sampled cycles ((B,) int64, one per row of `windows`) on kept results whose live
        Scores move other nodes with each copy (a Deployment's spreading across zones): one after another, each
        live Score's lap model (Plugin.sampled_lap) scoring a cycle after the copies before it; None when a live
        Score has none."""
        laps = [(plugin.sampled_lap(state, kept.tensors, windows, self.caches.setdefault(plugin.name, {})), weight)
                for plugin, state, weight in states]
        if any(lap is None for lap, _ in laps):
            return None
        nodes = np.zeros(len(windows), np.int64)
        for b in range(len(windows)):
            live = sum(weight * lap.scores(b) for lap, weight in laps)
            nodes[b] = kept.sampled_best(windows[b:b + 1], rank, live[None, :])[0]
            for lap, _ in laps:
                lap.copy(int(nodes[b]))
        return nodes

    def _place_one_kept(self, kept, node: int, pod: Pod, out: RunOutcome) -> None:
        """One pod's cycle on kept results that chose `node`: its Score plugins' picks, load and Reserve."""
        out.pod_cycles += 1
        picks = self.picks(kept.prepared, node)
        pl = self.account(kept.prepared, np.array([node]), [pod])
        pl.reserved = self.reserve(kept.prepared, {}, node, pod, picks)
        out.placed.append(pl)

    def _fail_kept(self, kept, pods: list[Pod], out: RunOutcome) -> list[Pod]:
        """The first pod fits nowhere: it fails with the full cycle's message and PostFilter, from the kept Filter
        results (what a full cycle would return now). Nominated (preemption): the pods after it are returned for
        the per-pod path, which counts nominated pods; otherwise they fail the same way."""
        ev = kept.evaluation(self.framework)
        out.pod_cycles += 1
        message, nominated = self.after_failure(pods[0], kept.prepared, ev, self.message(ev))
        if nominated:
            out.fail(pods[:1], message, rejectors(ev))
            return pods[1:]
        out.fail(pods, message, rejectors(ev))
        return []

    def _kept_round(self, kept, k: int, rank: np.ndarray) -> tuple[int, np.ndarray]:
        """One batch round for the next k pods from kept results: (how many are placed, their nodes)."""
        p, tensors = kept.prepared, self.cluster.tensors
        cand = kept.top(k)
        if not len(cand):
            return 0, cand
        keys = load_keys(tensors, cand, p.row_capacity, kept.scoring.row_totals)
        few = None if keys is None else remembered_copies(p, kept.scoring, keys, k)
        if few is not None:         # (the contenders' rows were all met before: no array is made)
            caps, local = few
            totals = [[fixed + part for part in parts] for fixed, parts in zip(kept.fixed_total[cand].tolist(), local)]
            pick, copy, take = pick_order_few(totals, caps, rank[cand].tolist(), k)
            cap = caps
        else:
            cap = capacity_rows(p, tensors, cand, k, keys)
            totals = self._totals(kept.scoring, cand, int(min(cap.max(), k)), kept.fixed_total[cand], keys)
            if totals.size <= _PICKS_IN_PYTHON:
                pick, copy, take = pick_order_few(totals.tolist(), cap.tolist(), rank[cand].tolist(), k)
            else:
                pick, copy, count = pick_order(np, totals, cap, rank[cand], k)
                take = int(count)
        if kept.holders:
            take = min(take, kept.normalization_end(cand, pick[:take], copy[:take], cap) + 1)
        return take, cand[pick[:take]]

    def after_failure(self, pod: Pod, p: Prepared, ev: Evaluation, message: str) -> tuple[str, bool]:
        """PostFilter for a pod no node fits: (its message, the PostFilter text appended; whether it was
        nominated to a node, so the rest of its run is still tried)."""
        if self.post_filter is None or ev.error is not None or not self.cluster.tensors.nodes.size:
            return message, False
        extra, nominated = self.post_filter(self, pod, p, ev)
        return (message if nominated else with_post_filter(message, extra)), nominated

    def picks(self, p: Prepared, node: int) -> tuple:
        """What the profile's Score plugins pick for the pod on its chosen node (Plugin.pick), asked before the pod's
        load is placed there, when a Reserve plugin keeps state for the pod (its Filter ran for it)."""
        if not p.reserving(self.framework):
            return ()
        return tuple(pick for plugin, state, _ in p.scores
                     if (pick := plugin.pick(state, node, self.cluster)) is not None)

    def reserve(self, p: Prepared, extras: dict, node: int, pod: Pod, picks: tuple = ()) -> list:
        """Reserve: the per-pod state of the plugins that ran for the pod, taken on its node. extras: what their
        Filters returned besides codes and payloads (Evaluation.extras; none on kept results, whose keepable
        Filters return none); picks: the Score plugins' picks (Placer.picks)."""
        return [(plugin, plugin.reserve(state, node, pod, self.cluster, extras.get(plugin.name), picks))
                for plugin, state in p.reserving(self.framework)]

    def nodes_changed(self) -> None:
        """Node rows were added, rewritten or removed: drop what was derived from them."""
        self.caches = {}
        if self.kept is not None:
            self.kept.clear()

    # -- per-pod path ----------------------------------------------------------------------------
    def evaluate(self, shape: PodShape, rank=None, advance: bool = True, pod: Pod | None = None,
                 failed: KeptFailure | None = None) -> tuple[Prepared, Evaluation, int]:
        """Filter and score one pod of `shape` (`pod`, default the shape's own) against the current state; returns
        the chosen node or -1. Pods nominated to nodes count there (RunFilterPluginsWithNominatedPods); a pod with
        a nominated node takes it without scoring when it passes there, and in a cycle (advance) no other node is
        evaluated then (upstream evaluateNominatedNode: `ev` covers that node alone). advance=False leaves
        nextStartNodeIndex where it is and evaluates every node (explain is a what-if, not a cycle). failed: the
        failed cycle of an identical pod just before, nothing changed since but nominations (its PreFilter stands,
        and only the nodes whose nominations changed are evaluated again)."""
        xp, tensors, cluster = self.xp, self.cluster.tensors, self.cluster
        pod = shape.pod if pod is None else pod
        p = prepare(shape, cluster, self.framework) if failed is None else failed.p
        n = tensors.nodes.size
        again = False        # `failed`'s results handed on whole: no node fits, as none did
        samples = self.sampling()
        ring = None          # a sampled cycle's Filters round the ring (_filter_ring)
        if not (cluster.nominations and p.rejection is None and p.error is None):
            ring = self._filter_ring(p, n) if samples and advance and xp is np else None
            ev = run_filters(xp, p, tensors) if ring is None else ring[0]
        else:
            priority = cluster.priority(pod)
            own = cluster.nominations.get(pod.key)
            node = tensors.node_index.get(own.node, -1) if own is not None else -1
            passes = None if node < 0 or not advance else passes_nominated(cluster, p, [pod], priority, [node])
            if passes is not None and passes[0]:
                return p, Evaluation(p.filter_names, {}, {}, np.ones(1, bool)), node
            ev = None if failed is None else with_nominated_again(cluster, self.framework, failed, pod, priority)
            if ev is None:
                ev = with_nominated(xp, cluster, self.framework, p, pod, priority)
            again = failed is not None and ev is failed.ev
            if node >= 0 and bool(np.asarray(ev.feasible)[node]):
                return p, ev, node
        if samples and ev.failing is not None:
            self._sampled_error(ev, n, advance)
        sampling = samples and ev.error is None and ev.prefilter_message is None
        if sampling and ring is not None and ring[1] is not None:     # ev.feasible is the sample already
            self.next_start = (self.next_start + ring[1]) % n
        elif sampling:
            among = None if ev.outside is None else ~xp.asarray(ev.outside)
            wanted = self.nodes_to_find(n if among is None else int(xp.sum(among)))
            sampled, visited = sample_feasible(xp, ev.feasible, self.next_start, wanted, among=among)
            if advance:
                self.next_start = (self.next_start + int(visited)) % n
            ev.feasible = sampled
        if again or ev.error is not None or not bool(xp.any(ev.feasible)) or self._score_error(p, ev):
            return p, ev, -1
        rank = np.arange(n) if rank is None else rank
        if sampling and advance and xp is np:
            rows = np.flatnonzero(ev.feasible)
            if _SAMPLED_ROWS_PER_NODE * len(rows) <= n:
                total = sampled_totals(np, p, tensors, ev, rows, self.caches)
                return p, ev, int(rows[np.argmax(selection_key(np, total, True, rank[rows], n))])
        run_scores(xp, p, tensors, ev, self.caches)
        return p, ev, int(select_best(xp, ev.total, ev.feasible, xp.asarray(rank)))

    def _sampled_error(self, ev: Evaluation, n: int, advance: bool) -> None:
        """A sampled cycle meets a Filter's error (ev.failing) only on a node its walk reaches: the ring of its nodes
        from nextStartNodeIndex up to the numFeasibleNodesToFind-th that passes (sample_feasible's walk). The first it
        meets fails the cycle, and nextStartNodeIndex moves past the nodes processed before it (upstream updates it
        whether or not the walk failed; phalanx's walk is sequential); none met: the cycle goes on, sampled."""
        ids = np.arange(n) if ev.outside is None else np.flatnonzero(~np.asarray(ev.outside))
        ring = np.roll(ids, -(self.next_start % len(ids)))
        hits = np.flatnonzero(np.asarray(ev.feasible)[ring])
        wanted = self.nodes_to_find(len(ids))
        end = int(hits[wanted - 1]) + 1 if len(hits) >= wanted else len(ring)
        met = np.flatnonzero(ev.failing[ring[:end]] >= 0)
        if not met.size:
            ev.error = None
            return
        ev.error = ev.failures[int(ev.failing[ring[met[0]]])]
        if advance:
            self.next_start = (self.next_start + int(met[0])) % n

    def _filter_ring(self, p: Prepared, n: int) -> tuple[Evaluation, int | None] | None:
        """A sampled cycle's Filters round the ring from nextStartNodeIndex, stopping as upstream's
        findNodesThatPassFilters does once numFeasibleNodesToFind nodes passed: on windows of node rows, each twice
        the last, until they hold that many. Returns (an Evaluation whose feasible nodes are that sample, the nodes
        visited up to the last of them): its codes and payloads are left out, as only a cycle where no node fits
        reads them. When the whole ring holds fewer: (every node's Evaluation, as run_filters makes it, None).
        None when a Filter may read more than its node's row (preemption.vectorised) or keeps host state, or a
        PreFilter narrowed the nodes or failed the cycle: run_filters over every node then."""
        if p.rejection is not None or p.error is not None or p.allowed is not None or not vectorised(p) \
                or any(plugin.host_only() for plugin, _ in p.filters):
            return None
        tensors = self.cluster.tensors
        wanted = self.nodes_to_find(n)
        start = self.next_start % n
        parts: list[tuple[np.ndarray, Evaluation]] = []
        found, lo, size = 0, 0, wanted + wanted // 4 + _RING_SLACK
        while lo < n:
            rows = (np.arange(lo, min(n, lo + size)) + start) % n
            part = run_filters(np, p, row_view(tensors, rows))
            if part.extras:
                return None
            hits = np.flatnonzero(part.feasible)
            if found + len(hits) >= wanted:
                last = wanted - found - 1
                feasible = np.zeros(n, bool)
                for before, earlier in parts:
                    feasible[before[earlier.feasible]] = True
                feasible[rows[hits[:last + 1]]] = True
                return Evaluation(p.filter_names, {}, {}, feasible, narrowing=p.narrowing), lo + int(hits[last]) + 1
            parts.append((rows, part))
            found += len(hits)
            lo += len(rows)
            size *= 2
        # The windows cover the ring in order from `start`: rolled back by it, they are in node order.
        def whole(read) -> np.ndarray:
            return np.roll(np.concatenate([read(part) for _, part in parts]), start)
        return Evaluation(p.filter_names, {name: whole(lambda e: e.codes[name]) for name in p.filter_names},
                          {name: whole(lambda e: e.payloads[name]) for name in p.filter_names},
                          whole(lambda e: e.feasible), narrowing=p.narrowing), None

    def skip_cycles(self, ev: Evaluation, count: int) -> None:
        """The ring after `count` more cycles of pods identical to the one `ev` failed, which fail alike: each
        visits every node a PreFilterResult left (nextStartNodeIndex moves by their count, modulo all nodes; with
        no PreFilterResult by all nodes, i.e. not at all)."""
        if count and ev.outside is not None and self.sampling() and ev.prefilter_message is None and ev.error is None:
            n = self.cluster.tensors.nodes.size
            self.next_start = (self.next_start + count * int(np.count_nonzero(~np.asarray(ev.outside)))) % n

    @staticmethod
    def _score_error(p: Prepared, ev: Evaluation) -> bool:
        """A PreScore or Score error fails the cycle; scoring runs only when more than one node is feasible."""
        if p.score_error is None or int(np.sum(np.asarray(ev.feasible))) < 2:
            return False
        ev.error = p.score_error
        return True

    def message(self, ev: Evaluation) -> str:
        tensors = self.cluster.tensors
        if ev.error:
            return ev.error
        if tensors.nodes.size == 0:
            return NO_NODES_MESSAGE
        hist = reason_histogram(self.framework, ev, tensors)
        return fit_error(tensors.nodes.size, hist, ev.prefilter_message)

    def account(self, p: Prepared | PodInfo, node_ids: np.ndarray, pods: list[Pod]) -> Placement:
        """The pods bound to node_ids on the node table (p: what they request, a Prepared or its PodInfo)."""
        tensors = self.cluster.tensors
        ports = [tensors.port_column(port) for port in p.shape.host_ports] if p.shape.host_ports else []
        before = tensors.bind(pods, node_ids, p.request, p.shape.nonzero, ports, p.shape.pod_terms)
        return Placement(pods, node_ids, p.request, p.shape.nonzero, ports, before, p.shape.scoring)

    def undo(self, placements: list[Placement], log_mark: int, keep: int = 0) -> None:
        """Take placements back off the node table, newest first, except the first `keep` pods, and cut the
        binding log back to just after them (log_mark: the log's end before the placements)."""
        tensors = self.cluster.tensors
        ends = np.cumsum([len(pl.pods) for pl in placements])
        for pl, end in zip(reversed(placements), reversed(ends.tolist())):
            start = end - len(pl.pods)
            if end <= keep:
                break
            cut = max(keep - start, 0)
            # Host-port cells saved per pod restore exactly only where no node took two of its pods.
            if cut and pl.ports and len(np.unique(pl.node_ids)) < len(pl.node_ids):
                raise ValueError("cannot split a placement with host ports on a node twice")
            before = pl.ports_before[cut:] if pl.ports_before is not None else None
            tensors.unaccount(pl.node_ids[cut:], pl.request, pl.nonzero, pl.ports, before)
            for plugin, record in reversed(pl.reserved):     # one-pod placements only: never batched
                plugin.unreserve(record, self.cluster)
            if pl.nominations is not None:
                for pod, nomination in reversed(list(zip(pl.pods[cut:], pl.nominations[cut:]))):    # newest first
                    if nomination is not None:
                        self.cluster.nominations[pod.key] = nomination
        tensors.truncate_log(log_mark + keep)

    # -- batch path ------------------------------------------------------------------------------
    def _round(self, shape: PodShape, remaining: list[Pod], out: RunOutcome, allowed) -> "_Round | list[Pod]":
        """A batch round's evaluation over every node; or, when there is no round to make, the pods to return:
        all of them when the plugins no longer allow the round (`allowed(prepared)` is false) or no node fits the
        next pod and PostFilter plugins may still act on it (the per-pod path takes them), none when they failed."""
        p = prepare(shape, self.cluster, self.framework)
        if not allowed(p):
            return remaining
        ev = run_filters(np, p, self.cluster.tensors)
        out.batch_rounds += 1
        nodes = np.flatnonzero(np.asarray(ev.feasible))
        if len(nodes) == 0 or self._score_error(p, ev):
            if self.post_filter is not None and ev.error is None:
                return remaining
            out.fail(remaining, self.message(ev), rejectors(ev))
            return []
        return _Round(p, ev, nodes, copy_capacity(np, p, self.cluster.tensors, len(remaining))[nodes])

    def _place_rounds(self, shape: PodShape, members: list[Pod], rank: np.ndarray, out: RunOutcome, allowed,
                      picks) -> list[Pod]:
        """Places what it can, round after round: each round evaluates every node once (_round), then
        `picks(round, k, rank)` says which nodes the next k pods take, in order (as many as the round can tell).
        Returns the pods left as _round says."""
        remaining = members
        while remaining:
            r = self._round(shape, remaining, out, allowed)
            if isinstance(r, list):
                return r
            nodes = picks(r, len(remaining), rank)
            if not len(nodes):
                return remaining
            out.placed.append(self.account(r.p, nodes, remaining[:len(nodes)]))
            remaining = remaining[len(nodes):]
        return []

    def _batch_picks(self, r: _Round, k: int, rank: np.ndarray) -> np.ndarray:
        """A round of the batch path (kernels/batch.py): the greedy's picks while the normalizations hold."""
        p, cand_nodes, cap = r.p, r.nodes, r.cap
        static_total, holders = fixed_scores(np, p, self.cluster.tensors, r.ev.feasible)
        static_total, holders = static_total[cand_nodes], [h[cand_nodes] for h in holders]
        # Only nodes whose first copy ranks among the k best can take any of the k pods.
        sub = contenders(np, self._totals(p, cand_nodes, 1, static_total)[:, 0], rank[cand_nodes], k)
        copies = int(min(cap[sub].max(), k))
        totals = self._totals(p, cand_nodes[sub], copies, static_total[sub])
        cand, copy, count = pick_order(np, totals, cap[sub], rank[cand_nodes[sub]], k)
        count = int(count)
        cand, copy = cand[:count], copy[:count]
        fill_t = np.full(len(cand_nodes), NEVER, np.int64)
        fill_t[sub] = fill_times(np, cand, copy, cap[sub], len(sub))
        take = min(count, int(normalization_epoch_end(np, fill_t, holders)) + 1)
        return cand_nodes[sub[cand[:take]]]

    def _domain_picks(self, r: _Round, k: int, rank: np.ndarray) -> np.ndarray:
        """A round for a run whose Scores include DOMAIN ones (copies move the raw scores of their node's domains,
        and the normalization with them): the copies picked one after another (kernels/domain_batch.py)."""
        p, cand_nodes, cap, tensors = r.p, r.nodes, r.cap, self.cluster.tensors
        static_total, holders = fixed_scores(np, p, tensors, r.ev.feasible)
        copies = int(min(cap.max(), k, max(1, _BLOCK_ELEMENTS // len(cand_nodes))))
        totals = self._totals(p, cand_nodes, copies, static_total[cand_nodes])
        scores = [DomainScore(weight, plugin.copy_model(state, tensors, r.ev.feasible, cand_nodes,
                                                        self.caches.setdefault(plugin.name, {})),
                              lambda raw, lo, hi, plugin=plugin: plugin.scale(np, raw, lo, hi))
                  for plugin, state, weight in p.scores if plugin.score_behaviour(state) == DOMAIN]
        picks = domain_pick_order(totals, cap, rank[cand_nodes], tensors.nodes.size, k, scores,
                                  [h[cand_nodes] for h in holders if h.any()])
        return cand_nodes[picks]

    def _totals(self, p: Prepared, cand_nodes: np.ndarray, copies: int, static_total: np.ndarray,
                keys: list | None = None) -> np.ndarray:
        """(C, copies) int64 total score of the j-th further copy on each candidate, in blocks of copies. keys: as
        for copy_totals."""
        step = max(1, _BLOCK_ELEMENTS // max(1, len(cand_nodes)))
        blocks = [copy_totals(np, p, self.cluster.tensors, cand_nodes, static_total,
                              np.arange(j0 + 1, min(copies, j0 + step) + 1)[None, :], keys)
                  for j0 in range(0, copies, step)]
        return blocks[0] if len(blocks) == 1 else np.concatenate(blocks, axis=1)
