"""Topology-aware workload scheduling (KEP-5732, TopologyAwareWorkloadScheduling): a PodGroup with a topology
constraint is placed inside one domain of its node label.

Each domain (label value) is a placement. The group's cycle runs once per placement on a copy of the cluster
restricted to the placement's nodes (upstream's AssumePlacement: filters, scores, node counts in messages and
PodTopologySpread all see only those nodes); a placement is feasible when the cycle places at least minCount
(basic: one) members. Feasible placements are scored with NodeResourcesFit's ScorePlacement (MostAllocated over
the placement, the group included) plus PodGroupPodsCount (weights 1 and 1), the best one is applied to the
real node table, and the caller commits it like any other PodGroup cycle.

Deterministic where upstream is not: placements are tried in order of their first node (upstream: Go map
order), and equal scores go to the first (tie_break="first") or a seeded draw (tie_break="random"); upstream
draws at random.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..cluster_models.tensors import BASE_RESOURCES, restrict
from ..kernels import topology_placement
from ..kernels.resource_allocation import node_load, resource_inputs
from .backends import make_placer
from .placement import Placement

NO_PLACEMENTS_MESSAGE = "no feasible placements found"


def placements_unavailable(n: int) -> str:
    """The PodGroup's condition when no placement can take the group (v1.36 wording)."""
    return f"0/{n} placements are available, first placement status: pod group is unschedulable"


def topology_attempt(sched, gs):
    """Place `gs` (a PodGroup with a topology constraint) in its best placement, from the current state.
    Returns a GroupAttempt whose placements are in the node table (node ids of the whole cluster), or, when no
    placement is feasible, the first placement's failures and `group_message` set."""
    from .scheduler import GroupAttempt  # the scheduler imports this module

    tensors = sched.cluster.tensors
    key = gs.group.spec.topology_keys[0]
    domain = np.asarray(topology_placement.domains(np, tensors.nodes.labels, tensors.node_labels.keys.get(key)))
    candidates, problem = _placements(tensors, domain, [tensors.node_of(k) for k in gs.bound])
    attempt = GroupAttempt(members=len(gs.pending))
    if problem is not None or not candidates:
        attempt.infeasible = attempt.group_message = problem or NO_PLACEMENTS_MESSAGE
        return attempt
    _grow_vocabularies(sched, gs)
    live = tensors.live_bound()
    tried = []
    for nodes in candidates:
        sub = restrict(tensors, nodes, live)
        # DRA claim state is copied too (sched/claims.py): each try allocates on its own copy.
        claims = sched.cluster.claims.restricted(sub.node_index)
        gpus = sched.cluster.gpus.restricted(nodes, sub.nodes.names)     # GpuShare state too (sched/gpushare.py)
        placer = make_placer(sched.backend, dataclasses.replace(sched.cluster, tensors=sub, claims=claims, gpus=gpus),
                             sched.profile, sched.placer.batching)
        rank = np.arange(len(nodes)) if sched.tie_break == "first" else sched.rng.permutation(len(nodes))
        tried.append((nodes, sched.try_group(gs, placer, rank)))
    feasible = [(nodes, a) for nodes, a in tried
                if a.infeasible is None and a.placed_count >= 1 and a.placed_count + len(gs.bound) >= gs.min_count]
    if not feasible:
        first = tried[0][1]
        first.group_message = placements_unavailable(len(candidates))
        first.placed_elsewhere, first.placed = first.placed_count, []    # on the restricted copy, now dropped
        return first
    best = 0 if len(feasible) == 1 else _best(sched, gs, domain, feasible)
    nodes, chosen = feasible[best]
    chosen.placed = [_apply(sched, pl, nodes) for pl in chosen.placed]
    return chosen


def _placements(tensors, domain: np.ndarray, bound_nodes: list[int]) -> tuple[list[np.ndarray], str | None]:
    """Node ids of each placement, in order of their first node; with members already bound, only their domain."""
    labelled = np.flatnonzero(domain >= 0)
    values, first = np.unique(domain[labelled], return_index=True)
    values = values[np.argsort(first, kind="stable")]
    if bound_nodes:
        held = {int(domain[n]) for n in bound_nodes}
        if -1 in held or len(held) > 1:
            names = sorted(tensors.nodes.names[n] for n in set(bound_nodes))
            return [], f"cannot determine domain for already scheduled pods: they are on nodes {names}"
        values = np.array(sorted(held), np.int64)
    return [np.flatnonzero(domain == v) for v in values.tolist()], None


def _grow_vocabularies(sched, gs) -> None:
    """Columns the group's pods may need, added to the real tables first, so the restricted copies (which share
    the vocabularies) never add any."""
    tensors = sched.cluster.tensors
    for pod, _ in gs.pending.values():
        shape = sched.shapes.intern(pod)
        shape.request_vector(tensors)
        for port in shape.host_ports:
            tensors.port_column(port)
        tensors.pod_label_row(pod.metadata.labels)
        tensors.namespaces.add(pod.metadata.namespace or "default")


def _best(sched, gs, domain: np.ndarray, feasible) -> int:
    """Index into `feasible` of the placement with the highest NodeResourcesFit + PodGroupPodsCount score."""
    tensors, profile = sched.cluster.tensors, sched.profile
    n_res = len(tensors.resources)
    request = np.zeros((len(feasible), n_res), np.int64)         # the group's placed pods, per placement
    scoring = np.zeros((len(feasible), 2), np.int64)             # the same, cpu/memory non-zero defaulted
    for d, (_, attempt) in enumerate(feasible):
        for pl in attempt.placed:
            shape = sched.shapes.intern(pl.pods[0])
            request[d, : len(pl.request)] += len(pl.pods) * pl.request
            scoring[d] += len(pl.pods) * shape.scoring
    # Resources any placement's pods request decide the configured columns; a placement whose pods skip an
    # extended resource scores it with allocatable 0 (left out with its weight), as its own cycle would.
    inputs = resource_inputs(profile.fit_resources, tensors.resources, request.sum(axis=0),
                             scoring.sum(axis=0), np.zeros(2, np.int64))
    alloc, load = node_load(np, tensors.nodes.allocatable, tensors.nodes.requested, tensors.nodes.nonzero_requested,
                            inputs)
    placement_of = np.full(tensors.nodes.size, -1, np.int64)
    for d, (nodes, _) in enumerate(feasible):
        placement_of[nodes] = d
    domain_alloc, domain_load = topology_placement.placement_allocation(np, alloc, load, placement_of, len(feasible))
    group = []
    for r, ((name, _), col, which) in enumerate(zip(profile.fit_resources, inputs.columns, inputs.nonzero)):
        if col < 0:
            group.append(np.zeros(len(feasible), np.int64))
            continue
        group.append(scoring[:, which] if which >= 0 else request[:, col])
        if name not in BASE_RESOURCES:
            domain_alloc[r] = np.where(request[:, col] > 0, domain_alloc[r], 0)
    fit = topology_placement.placement_fit_score(np, group, domain_alloc, domain_load, inputs.weights)
    pods = np.array([a.placed_count + len(gs.bound) for _, a in feasible], np.int64)
    total = np.asarray(fit) + np.asarray(topology_placement.pods_count_score(np, pods))
    order = np.arange(len(feasible)) if sched.tie_break == "first" else sched.rng.permutation(len(feasible))
    winners = np.flatnonzero(total == total.max())
    return int(winners[np.argmin(order[winners])])


def _apply(sched, pl: Placement, nodes: np.ndarray) -> Placement:
    """A placement made on a restricted copy, made again on the real node table (node ids mapped back)."""
    tensors = sched.cluster.tensors
    node_ids = nodes[pl.node_ids]
    before = tensors.account(node_ids, pl.request, pl.nonzero, pl.ports)
    tensors.record_bound(pl.pods, node_ids)
    claims = sched.cluster.claims.replay(pl.claims) if pl.claims is not None else None   # DRA allocations
    gpus = sched.cluster.gpus.replay(pl.gpus) if pl.gpus is not None else None           # GPU shares
    return Placement(pl.pods, node_ids, pl.request, pl.nonzero, pl.ports, before, claims, gpus)
