"""The PodGroup cycle: a group's pending members placed from one snapshot, bound together when minCount is
reached, every tentative placement undone exactly otherwise (KEP-4671 "Workload Scheduling Cycle"); consecutive
all-or-nothing gangs of one shape placed as one run (gang trains); topology-constrained groups placed in their
best domain (topology.py)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from ..cluster_models import Pod
from .placement import Placement, Placer
from .preemption import tensors_state
from .podgroups import MEMBER_UNSCHEDULABLE, GroupState
from .queue import cut_runs
from .shapes import PodShape
from .topology import placements, topology_attempt, unconstrained_unschedulable


# Gangs in one train, at first: a train places gang after gang as their own cycles would, so a long queue of them
# may go as several trains with the same result. A train that fails gives its later gangs back to the activeQ,
# which costs their member lists and shapes (one train per attempt on a long queue of failing gangs), so after a
# failure trains are one gang long and double while every gang of the last one was placed.
_TRAIN_GANGS = 4096


@dataclass
class Shortfall:
    """A failed cycle of a gang of identical members, all needed (GroupCycle._uniform_shape), and the state in which
    it holds. Without a topology constraint: how many members the state took before one fit nowhere and that pod's
    failure, so a later gang of the shape that needs more members fails the same way. With one: the whole failed
    attempt, for a later gang of the same size. Either holds as long as nothing happened since but that cycle's
    own placements, undone (the state is compared), so the cycle is not run again: saturated clusters retry
    thousands of waiting gangs after every pod that leaves."""
    nodes: np.ndarray            # (placed,) int64 the node each member placed (on the cluster) before the first
                                 # failure took
    failed: list                 # [(start, end, FitError, rejectors)]: the failed members' ranges in member order
    infeasible: str | None       # GroupAttempt's fields of the failed cycle
    group_message: str | None
    placed_elsewhere: int
    members: int | None          # the gang size it holds for (topology); None: any size above `placed`
    state: tuple

    @property
    def placed(self) -> int:
        return len(self.nodes)

    def attempt(self, members: list[Pod]) -> "GroupAttempt":
        """The failed cycle of a gang with these members (in member order)."""
        failed = self.failed if self.members is not None else [(self.placed, len(members), *self.failed[0][2:])]
        return GroupAttempt(len(members), failed=[(members[a:b], message, rejectors)
                                                  for a, b, message, rejectors in failed],
                            infeasible=self.infeasible, group_message=self.group_message,
                            placed_elsewhere=self.placed_elsewhere)


@dataclass
class GroupAttempt:
    """One PodGroup cycle: what was placed, what fit nowhere and why, and whether minCount was reached."""
    members: int
    placed: list[Placement] = field(default_factory=list)
    failed: list[tuple[list[Pod], str, frozenset]] = field(default_factory=list)   # (pods, FitError, rejectors)
    infeasible: str | None = None      # too few members placed for minCount: the placeable members' message
    group_message: str | None = None   # topology groups: why no placement could take the group (its condition)
    error: str | None = None           # the cycle failed with an error (SchedulerError)
    placed_elsewhere: int = 0          # topology groups that failed: members the first placement's copy took

    @property
    def placed_count(self) -> int:
        return sum(len(pl.pods) for pl in self.placed)


class GroupCycle:
    def __init__(self, sched):
        self.sched = sched
        self.train_gangs = _TRAIN_GANGS     # the next train's length at most
        self.shortfalls: dict[tuple, Shortfall] = {}   # _key -> the last failed cycle of its gangs
        self.keep_shortfalls = True         # False: every gang's cycle runs (tests compare the two)

    def attempt(self, gs: GroupState) -> None:
        if gs.state == "active" and not gs.pending:
            gs.state = "idle"
        elif gs.state == "active" and self._mixed_schedulers(gs):
            self._failed(gs)
        elif gs.state == "active":
            shape = self._train_shape(gs)
            if shape is None:
                self._cycle(gs)
            else:
                self._train(gs, shape)
            self.sched.preemption.actuate()     # victims go once their preemptors wait in the queue

    def try_group(self, gs: GroupState, placer: Placer | None = None, rank: np.ndarray | None = None) -> GroupAttempt:
        """Place the group's pending members from the current state (members by priority, then arrival; runs
        of identical members batched). Every member is tried (v1.36 has no early stop); the cycle succeeds when
        the members placed and those already bound reach minCount (GangScheduling's Permit; basic groups: one).
        The placements stay in the node table; the caller commits or undoes them. `placer`/`rank`: a topology
        placement's restricted copy of the cluster (topology.py) instead of the whole one."""
        sched = self.sched
        placer = sched.placer_for_group(gs) if placer is None else placer
        members = sched.groups.members_in_order(gs)
        pods = [p for p, _ in members]
        shapes = [sched.member_shape(gs, p, seq) for p, seq in members]
        attempt = GroupAttempt(members=len(pods))
        for run in cut_runs(pods, shapes, [0] * len(pods), [s for _, s in members]):
            out = placer.place_run(run.shape, run.pods, sched.rank() if rank is None else rank)
            sched.stats.pod_cycles += out.pod_cycles
            sched.stats.batch_rounds += out.batch_rounds
            attempt.placed.extend(out.placed)
            attempt.failed += [(f.pods, f.message, f.rejectors) for f in out.failures]
        if len(gs.bound) + attempt.placed_count < gs.min_count:
            attempt.infeasible = MEMBER_UNSCHEDULABLE
        return attempt

    def group_attempt(self, gs: GroupState) -> GroupAttempt:
        """The cycle's placements (topology placements when the group is constrained)."""
        sched = self.sched
        candidates = placements(sched.framework_for_group(gs), gs, sched.cluster.tensors)
        if candidates is None:
            return self.try_group(gs)
        return topology_attempt(self, gs, candidates)

    def _train_shape(self, gs: GroupState) -> PodShape | None:
        """The one shape of a gang that can ride a train (consecutive such gangs placed in one batch):
        _uniform_shape, without a topology constraint."""
        return None if gs.group.spec.scheduling_constraints else self._uniform_shape(gs)

    def _uniform_shape(self, gs: GroupState) -> PodShape | None:
        """The one shape of a gang that needs all its pending pods, has none placed yet and no host ports; None
        otherwise. Random tie-breaks draw per cycle, so such gangs are never coalesced nor answered from another's
        cycle."""
        sched = self.sched
        if sched.tie_break != "first" or not gs.gang or gs.bound or gs.waiting or gs.min_count != len(gs.pending):
            return None
        shape = gs.by_pending("shape", lambda: _one(sched.member_shape(gs, p, seq) for p, seq in gs.pending.values()))
        # Pods whose plugins keep per-pod state (DRA claims, GPU shares) never ride a train.
        ok = shape is not None and not shape.host_ports and not sched.reserves(shape)
        return shape if ok else None

    def _train(self, first: GroupState, shape: PodShape) -> None:
        """Consecutive all-or-nothing gangs of one shape (up to train_gangs), placed as one run of pods. The
        greedy places pod after pod either way, so every gang fully placed in the run gets exactly the nodes its
        own cycle would give it; the first gang cut short fails as its own cycle would (same state, same order),
        its placements are undone, and the gangs after it go back to the activeQ to be tried against the state
        without it."""
        sched = self.sched
        train = [first]
        while len(train) < self.train_gangs:
            nxt = sched.queue.peek_active()
            if not (isinstance(nxt, GroupState) and nxt.state == "active" and self._train_shape(nxt) is shape):
                break
            train.append(sched.queue.pop_active())
        if len(train) == 1:
            self._cycle(first)
            if not first.pending:
                self.train_gangs *= 2
            return
        members = [[p for p, _ in sched.groups.members_in_order(gs)] for gs in train]
        pods = [p for m in members for p in m]
        placer = sched.placer_for_group(first)
        if len(placer.framework.split_run(shape, pods, sched.cluster)) > 1:
            for gs in train:          # plugins tell the members apart: each gang its own cycle, in queue order
                self._cycle(gs)
            return
        i, offset, nodes = 0, 0, np.zeros(0, np.int64)
        kept = self._shortfall(placer, shape, first)
        if kept is not None:                 # the first gang is cut short as the train would cut it
            got, message, nodes = kept.placed, kept.failed[0][2], kept.nodes
        else:
            mark = sched.cluster.tensors.log_mark()
            moves = self._moves(placer)
            out = placer.place_run(shape, pods, sched.rank())
            sched.stats.pod_cycles += out.pod_cycles
            sched.stats.batch_rounds += out.batch_rounds
            placed = len(pods) - len(out.failed)
            if out.placed:
                nodes = np.concatenate([pl.node_ids for pl in out.placed])
            i, parts = 0, []
            while i < len(train) and offset + len(members[i]) <= placed:
                offset += len(members[i])
                parts.append((offset, partial(self._scheduled, train[i])))
                i += 1
            if parts:
                sched.bound(pods[:offset], nodes[:offset], parts)
            if i == len(train):
                self.train_gangs *= 2
                return
            if out.placed:
                placer.undo(out.placed, mark, keep=offset)
            got, message = placed - offset, out.failures[0].message
            if i == 0:
                failure = out.failures[0]
                self._remember(placer, shape, first, nodes[:got], GroupAttempt(
                    len(members[0]), failed=[(members[0][got:], failure.message, failure.rejectors)],
                    infeasible=MEMBER_UNSCHEDULABLE), moves)
        self.train_gangs = 1
        short, m = train[i], members[i]
        sched.stats.group_attempts += 1
        sched.fail(m[got:], message)
        extra = sched.workload_preemption.run(short, list(zip(m[:got], nodes[offset:offset + got].tolist())))
        sched.fail(m[:got], _with(MEMBER_UNSCHEDULABLE, extra))
        sched.set_condition(short, "False", "Unschedulable",
                            _with(unconstrained_unschedulable(sched.framework_for_group(short)), extra))
        self._failed(short)
        for gs in train[i + 1:]:
            sched.queue.push_active(gs, *sched.groups.queue_key(gs))

    def _cycle(self, gs: GroupState) -> None:
        sched = self.sched
        sched.stats.group_attempts += 1
        mark = sched.cluster.tensors.log_mark()
        shape, placer = self._uniform_shape(gs), sched.placer_for_group(gs)
        kept = self._shortfall(placer, shape, gs) if shape is not None else None
        if kept is not None:
            members = [p for p, _ in sched.groups.members_in_order(gs)]
            attempt = kept.attempt(members)
            placed = list(zip(members[:kept.placed], kept.nodes.tolist()))
        else:
            moves = self._moves(placer)
            attempt = self.group_attempt(gs)
        failed = {id(p) for pods, _, _ in attempt.failed for p in pods}     # pending members' own objects
        for pods, message, _ in attempt.failed:
            sched.fail(pods, message)
        if attempt.error is not None:
            sched.fail([p for p, _ in gs.pending.values() if id(p) not in failed], attempt.error)
            sched.set_condition(gs, "False", "SchedulerError", attempt.error)
        elif attempt.infeasible is not None or attempt.group_message is not None:
            if kept is None:
                placed = [(pod, node) for pl in attempt.placed for pod, node in zip(pl.pods, pl.node_ids.tolist())]
            if attempt.placed:
                placer.undo(attempt.placed, mark)
            if shape is not None and kept is None:
                self._remember(placer, shape, gs, np.array([node for _, node in placed], np.int64), attempt, moves)
            extra = sched.workload_preemption.run(gs, placed)      # on the state without this cycle's placements
            rest = [p for p, _ in gs.pending.values() if id(p) not in failed]
            sched.fail(rest, _with(attempt.infeasible or attempt.group_message, extra))
            sched.set_condition(gs, "False", "Unschedulable", _with(
                attempt.group_message or unconstrained_unschedulable(sched.framework_for_group(gs)), extra))
        else:
            for pl in attempt.placed:
                self._bind(gs, pl.pods, pl.node_ids)
            sched.set_condition(gs, "True", "Scheduled", "")
        if gs.pending:
            self._failed(gs)
        else:
            gs.state = "idle"

    def _bind(self, gs: GroupState, pods: list[Pod], node_ids: np.ndarray) -> None:
        """Members placed for good: bound, and out of the group's pending members."""
        self._members_bound(gs, self.sched.bound(pods, node_ids))

    @staticmethod
    def _members_bound(gs: GroupState, keys: list[str]) -> None:
        for key in keys:
            del gs.pending[key]
        gs.bound.update(keys)

    def _scheduled(self, gs: GroupState, keys: list[str]) -> None:
        """A train's gang bound whole (its pods `keys`): its cycle succeeded."""
        self.sched.stats.group_attempts += 1
        self._members_bound(gs, keys)
        gs.state = "idle"
        self.sched.set_condition(gs, "True", "Scheduled", "")

    # -- kept shortfalls ----------------------------------------------------------------------------------
    def _moves(self, placer: Placer) -> tuple:
        """What a failed cycle may move besides the node table: nominations, nextStartNodeIndex, where the next
        preemption scan starts."""
        sched = self.sched
        return sched.cluster.nominations.mark(), placer.next_start, sched.preemption.next_offset

    def _state(self, placer: Placer) -> tuple:
        sched = self.sched
        return tensors_state(sched.cluster.tensors), sched.progress, self._moves(placer)

    def _key(self, placer: Placer, shape: PodShape, gs: GroupState) -> tuple | None:
        """What a gang's cycle outcome is kept under: its profile, shape and priority (pods nominated at or above
        it count against it). None for a gang with a nominated member: its own nominations do not count against
        it, so it sees a state of its own."""
        nominations = self.sched.cluster.nominations
        if nominations and any(key in nominations for key in gs.pending):
            return None
        pod = next(iter(gs.pending.values()))[0]
        return id(placer), id(shape), self.sched.cluster.priority(pod), repr(gs.group.spec.scheduling_constraints)

    def _remember(self, placer: Placer, shape: PodShape, gs: GroupState, nodes: np.ndarray, attempt: GroupAttempt,
                  moves: tuple) -> None:
        """After a failed cycle of the gang `gs` of `shape`, its placements (on `nodes`, members in order) undone and
        before workload-aware preemption runs on that state: kept when the cycle moved nothing but the node table
        (no nomination, no scan position) and its failed members are ranges in member order."""
        key = self._key(placer, shape, gs)
        if key is None or moves != self._moves(placer):
            return
        index = {pod.key: i for i, (pod, _) in enumerate(self.sched.groups.members_in_order(gs))}
        failed = []
        for pods, message, rejectors in attempt.failed:
            at = [index[pod.key] for pod in pods]
            if not at or at != list(range(at[0], at[0] + len(at))):
                return
            failed.append((at[0], at[0] + len(at), message, rejectors))
        topology = gs.group.spec.scheduling_constraints is not None
        suffix = len(failed) == 1 and failed[0][:2] == (len(nodes), len(gs.pending))
        if not failed or (not topology and (not suffix or attempt.infeasible != MEMBER_UNSCHEDULABLE)):
            return
        self.shortfalls[key] = Shortfall(nodes, failed, attempt.infeasible, attempt.group_message,
                                         attempt.placed_elsewhere, len(gs.pending) if topology else None,
                                         self._state(placer))

    def _shortfall(self, placer: Placer, shape: PodShape, gs: GroupState) -> Shortfall | None:
        """The kept failure for the gang `gs` of `shape`: when it holds now and the gang needs more members than it
        placed."""
        if not self.keep_shortfalls:
            return None
        key = self._key(placer, shape, gs)
        kept = self.shortfalls.get(key) if key is not None else None
        if kept is None or kept.state != self._state(placer):
            return None
        if kept.placed >= len(gs.pending) if kept.members is None else kept.members != len(gs.pending):
            return None
        return kept

    def _mixed_schedulers(self, gs: GroupState) -> bool:
        """Whether the pending members name different schedulers; then each fails with upstream's error
        (scheduleOnePodGroup: frameworkForPodGroup, the first member naming another scheduler than the first's),
        and no cycle runs."""
        def other_scheduler():
            names = [pod.spec.scheduler_name for pod, _ in self.sched.groups.members_in_order(gs)]
            return names[0], next((name for name in names if name != names[0]), None)
        first, other = gs.by_pending("schedulers", other_scheduler)
        if other is not None:
            members = [pod for pod, _ in self.sched.groups.members_in_order(gs)]
            self.sched.fail(members, f"all pods in a single pod group should have the same .spec.schedulerName "
                                     f"set, got: {json.dumps(other)} and {json.dumps(first)}")
        return other is not None

    def _failed(self, gs: GroupState) -> None:
        sched = self.sched
        gs.attempts += 1
        gs.failed_at = sched.now
        gs.failed_progress = sched.outside_progress()
        sched.groups.park(gs)
        if not gs.quorum():
            # Members deleted while the gang was queued: v1.36 checks nothing before the cycle, but the failed
            # members are requeued through PreEnqueue, which now holds them back until members arrive.
            framework = sched.framework_for_group(gs)
            for pod, seq in sorted(gs.pending.values(), key=lambda v: v[1]):
                sched.pre_enqueue(pod, seq, framework, gs)
            if not gs.pending:
                gs.state = "idle"


def _one(shapes) -> PodShape | None:
    """The shape every one of `shapes` is, None when they are several (or none)."""
    distinct = {id(shape): shape for shape in shapes}
    return next(iter(distinct.values())) if len(distinct) == 1 else None


def _with(message: str, reason: str) -> str:
    """A group status with the reason workload-aware preemption gave appended (upstream Status.AppendReason)."""
    return f"{message}, {reason}" if reason else message
