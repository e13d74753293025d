"""Topology-aware workload scheduling (KEP-5732, TopologyAwareWorkloadScheduling): a PodGroup with a topology
constraint is placed inside one domain of its node label.

The profile's PlacementGenerate plugin (TopologyPlacementGenerator) lists the candidate placements. The group's
cycle runs once per placement on a copy of the cluster restricted to the placement's nodes (upstream's
AssumePlacement: filters, scores, node counts in messages and PodTopologySpread all see only those nodes); a
placement is feasible when the cycle places at least minCount members (basic: one). Feasible placements are
scored by the profile's PlacementScore plugins (NodeResourcesFit, PodGroupPodsCount; weights 1 and 1), the best
one is applied to the real node table, and the caller commits it like any other PodGroup cycle.

Deterministic where upstream is not: placements are tried in order of their first node (upstream: Go map
order), and equal scores go to the first (tie_break="first") or a seeded draw (tie_break="random"); upstream
draws at random.

A placement that cannot hold the members still to place is not tried: when the members share one shape and every
Filter that runs reads only its own node (FIXED / NODE_LOCAL), one Filter pass over the whole cluster bounds how
many copies each node takes, and a placement whose nodes take fewer than needed fails its cycle whatever it does.
The decisions are the same (only infeasible placements are left out; the first placement, whose failures the
message reports, is tried when no placement is feasible); with tie_break="random" every placement is tried, since
each draws from the seeded stream.
"""
from __future__ import annotations

import numpy as np

from ..plugins.framework import FIXED, NODE_LOCAL, CycleError
from ..plugins.topology_placement import NO_PLACEMENTS_MESSAGE
from .backends import make_placer
from .cycle import copy_capacity, prepare, run_filters
from .placement import Placement
from .podgroups import GROUP_UNSCHEDULABLE


def placements_unavailable(n: int) -> str:
    """The PodGroup's condition when no placement can take the group (v1.36 wording)."""
    return f"0/{n} placements are available, first placement status: {GROUP_UNSCHEDULABLE}"


def unconstrained_unschedulable(framework) -> str:
    """The status of a failed cycle of a group without a topology constraint. With a PlacementGenerate plugin (the
    TopologyAwareWorkloadScheduling gate on) v1.36 runs every group through the placement algorithm, an
    unconstrained one as one placement of every node, and rewrites a failure as that placement's
    (schedule_one_podgroup.go podGroupSchedulingAlgorithm, podGroupSchedulingPlacementAlgorithm); workload-aware
    preemption runs after it, appending its reason (its re-runs fail with this status too)."""
    return placements_unavailable(1) if framework.at("placementGenerate") else GROUP_UNSCHEDULABLE


def placements(framework, gs, tensors):
    """The PlacementGenerate plugin's placements for `gs` (None: no constraint, or no such plugin), or a
    CycleError."""
    generators = framework.at("placementGenerate")
    if not generators:
        return None
    names = tensors.nodes.names
    bound = [(key, gs.elsewhere[key] if key in gs.elsewhere else names[tensors.node_of(key)])
             for key in sorted(gs.bound)]
    return generators[0].generate_placements(gs.group, tensors, bound)


def topology_attempt(cycle, gs, candidates):
    """Place `gs` in its best placement among `candidates` (node ids each), from the current state. Returns a
    GroupAttempt whose placements are in the node table (node ids of the whole cluster), or, when no placement is
    feasible, the first placement's failures and `group_message` set."""
    from .group_cycle import GroupAttempt  # group_cycle imports this module

    sched = cycle.sched
    cluster = sched.cluster
    attempt = GroupAttempt(members=len(gs.pending))
    if isinstance(candidates, CycleError):
        attempt.error = candidates.message
        return attempt
    if not candidates:
        attempt.group_message = NO_PLACEMENTS_MESSAGE
        return attempt
    framework = sched.framework_for_group(gs)
    cluster.grow_vocabularies((p, sched.member_shape(gs, p, seq)) for p, seq in gs.pending.values())
    live = cluster.tensors.live_bound_arrays()

    def attempt_in(nodes):
        sub = cluster.restricted(nodes, live)
        placer = make_placer(sched.backend, sub, framework, sched.placer.batching)
        rank = np.arange(len(nodes)) if sched.tie_break == "first" else sched.rng.permutation(len(nodes))
        return cycle.try_group(gs, placer, rank)

    room = _copies_bound(sched, framework, gs) if sched.tie_break == "first" and len(candidates) > 1 else None
    need = max(gs.min_count - len(gs.bound), 1)
    tried = [(i, nodes, attempt_in(nodes)) for i, nodes in enumerate(candidates)
             if room is None or int(room[nodes].sum()) >= need]
    feasible = [(nodes, a) for _, nodes, a in tried
                if a.infeasible is None and a.placed_count >= 1 and a.placed_count + len(gs.bound) >= gs.min_count]
    if not feasible:
        first = tried[0][2] if tried and tried[0][0] == 0 else attempt_in(candidates[0])
        first.group_message = placements_unavailable(len(candidates))
        first.placed_elsewhere, first.placed = first.placed_count, []    # on the restricted copy, now dropped
        return first
    best = 0 if len(feasible) == 1 else _best(sched, framework, gs, feasible)
    nodes, chosen = feasible[best]
    chosen.placed = [_apply(sched, pl, nodes) for pl in chosen.placed]
    return chosen


def _copies_bound(sched, framework, gs) -> np.ndarray | None:
    """(N,) int64 copies of the group's pending members each node could take, an upper bound of what any
    placement's cycle places there; None unless the members share one shape whose Filters read only their own
    node (then one Filter pass over the whole cluster gives what each restricted copy would see)."""
    shapes = {id(s): s for s in (sched.member_shape(gs, p, seq) for p, seq in gs.pending.values())}
    if len(shapes) != 1:
        return None
    p = prepare(next(iter(shapes.values())), sched.cluster, framework)
    if p.rejection is not None or p.error is not None:
        return None
    for plugin, state in p.filters:
        if plugin.host_only() or plugin.removal_behaviour(state) not in (FIXED, NODE_LOCAL) \
                or plugin.filter_behaviour(state) not in (FIXED, NODE_LOCAL):
            return None
    tensors = sched.cluster.tensors
    ev = run_filters(np, p, tensors)
    return np.where(np.asarray(ev.feasible), np.asarray(copy_capacity(np, p, tensors, len(gs.pending))), 0)


def _best(sched, framework, gs, feasible) -> int:
    """Index into `feasible` of the placement with the highest weighted PlacementScore total."""
    tries = [(nodes, attempt.placed) for nodes, attempt in feasible]
    total = np.zeros(len(feasible), np.int64)
    for plugin in framework.at("placementScore"):
        total += (framework.placement_weights.get(plugin.name, 1)
                  * plugin.score_placement(tries, sched.cluster, len(gs.bound)))
    order = np.arange(len(feasible)) if sched.tie_break == "first" else sched.rng.permutation(len(feasible))
    winners = np.flatnonzero(total == total.max())
    return int(winners[np.argmin(order[winners])])


def _apply(sched, pl: Placement, nodes: np.ndarray) -> Placement:
    """A placement made on a restricted copy, made again on the real node table (node ids mapped back)."""
    tensors = sched.cluster.tensors
    node_ids = nodes[pl.node_ids]
    before = tensors.account(node_ids, pl.request, pl.nonzero, pl.ports)
    tensors.record_bound(pl.pods, node_ids, (pl.request, pl.nonzero))
    reserved = [(plugin, plugin.replay(record, sched.cluster)) for plugin, record in pl.reserved]
    return Placement(pl.pods, node_ids, pl.request, pl.nonzero, pl.ports, before, pl.scoring, reserved)
