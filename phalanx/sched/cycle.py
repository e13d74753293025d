"""One scheduling cycle for a pod shape: PreFilter (host-side preparation), Filter, PreScore/Score,
NormalizeScore, and the kube-scheduler failure message. All per-node arithmetic is in phalanx.kernels.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..cluster_models.tensors import ClusterTensors
from ..kernels import (balanced_allocation, dynamic_resources, node_affinity, node_ports, node_resources_fit,
                       node_unschedulable, pod_topology_spread, taint_toleration)
from ..kernels.backend import set_at
from ..kernels.normalize import default_normalize
from ..kernels.resource_allocation import ResourceInputs, node_load, resource_inputs
from ..kernels.status import SUCCESS
from .config import Profile
from .shapes import PodShape


@dataclass
class Prepared:
    """PreFilter/PreScore state of one shape against the current vocabularies."""
    shape: PodShape
    request: np.ndarray                       # (R,) int64 what the pod consumes once bound
    fit_request: np.ndarray                   # (R,) int64 what NodeResourcesFit checks (ignoredResources zeroed)
    fit_columns: tuple[int, ...]              # the columns fit_request asks for (> 0)
    tolerates_unschedulable: bool
    taints: taint_toleration.TaintState
    affinity: node_affinity.AffinityState
    port_conflicts: np.ndarray                # (P,) bool
    spread: pod_topology_spread.SpreadState
    fit_inputs: ResourceInputs
    balanced_inputs: ResourceInputs
    filters: tuple[str, ...]                  # filter plugins that run (PreFilter did not skip them)
    scores: tuple[tuple[str, int], ...]       # score plugins that run, with weights
    dra: object = None                        # claims.DraInputs of a pod with DRA claims (ClaimBook.with_claims)
    gpu: object = None                        # gpushare.GpuInputs of a GPU-share pod (GpuBook.with_gpus)


def prepare(shape: PodShape, tensors: ClusterTensors, profile: Profile) -> Prepared:
    pod = shape.pod
    request = shape.request_vector(tensors)
    affinity = node_affinity.pre_filter(pod, tensors.node_labels, tensors.node_index, tensors.nodes.size)
    own_labels = None
    if pod.spec.topology_spread_constraints:
        tensors.bound_pods()      # brings the pod-label and namespace vocabularies up to date
        own_labels = tensors.pod_label_row(pod.metadata.labels)
    spread = pod_topology_spread.pre_filter(pod, tensors.node_labels, tensors.pod_labels, tensors.namespaces,
                                            own_labels)
    runs = {
        "NodeAffinity": affinity.required is not None,
        "NodePorts": bool(shape.host_ports),
        "PodTopologySpread": bool(spread.hard),
    }
    filters = tuple(f for f in profile.filters if runs.get(f, True))
    balanced_inputs = resource_inputs(profile.balanced_resources, tensors.resources, request)
    scoring = {
        "NodeAffinity": bool(affinity.preferred),
        "PodTopologySpread": bool(spread.soft),
        # A pod requesting none of the balanced resources is skipped at PreScore (kubernetes PR 129138).
        "NodeResourcesBalancedAllocation": any(balanced_inputs.pod_request),
    }
    scores = tuple((p, w) for p, w in profile.scores if scoring.get(p, True))
    fit_request = _fit_request(request, tensors, profile)
    return Prepared(
        shape=shape, request=request, fit_request=fit_request,
        fit_columns=node_resources_fit.wanted_columns(fit_request),
        tolerates_unschedulable=node_unschedulable.pre_filter(pod),
        taints=taint_toleration.pre_filter(pod, tensors.taints),
        affinity=affinity,
        port_conflicts=node_ports.conflicts(shape.host_ports, tensors.ports),
        spread=spread,
        fit_inputs=resource_inputs(profile.fit_resources, tensors.resources, request, shape.scoring, shape.nonzero),
        balanced_inputs=balanced_inputs,
        filters=filters, scores=scores)


def is_extended_resource(name: str) -> bool:
    """v1helper.IsExtendedResourceName: a domain-prefixed name outside kubernetes.io/ (hugepages are native)."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def _fit_request(request: np.ndarray, tensors: ClusterTensors, profile: Profile) -> np.ndarray:
    """NodeResourcesFit skips extended resources listed in ignoredResources or under ignoredResourceGroups."""
    if not profile.fit_ignored_resources and not profile.fit_ignored_groups:
        return request
    out = request.copy()
    for col, name in enumerate(tensors.resources.items[: len(request)]):
        if is_extended_resource(name) and (name in profile.fit_ignored_resources
                                           or name.split("/")[0] in profile.fit_ignored_groups):
            out[col] = 0
    return out


@dataclass
class Evaluation:
    filters: tuple[str, ...]                  # plugins that ran, profile order
    codes: dict[str, np.ndarray]              # plugin -> (N,) int8
    payloads: dict[str, np.ndarray]           # plugin -> (N,) int64 reason payload
    feasible: np.ndarray                      # (N,) bool
    outside: np.ndarray | None = None         # (N,) bool nodes left out by NodeAffinity's PreFilterResult
    prefilter_message: str | None = None      # a PreFilter rejected the pod on every node
    prescore_error: str | None = None         # a PreScore failed the cycle (the pod stays pending)
    inclusion: tuple | None = None            # (affinity_ok, taints_ok) (N,) bool, computed once per cycle
    raw: dict[str, np.ndarray] = field(default_factory=dict)         # plugin -> (N,) int64
    normalized: dict[str, np.ndarray] = field(default_factory=dict)  # plugin -> (N,) int64
    total: np.ndarray | None = None           # (N,) int64 weighted sum over feasible nodes
    dra_assign: np.ndarray | None = None      # (N, S) int64 DynamicResources: request index per device slot


def _spread_inputs(xp, p: Prepared, tensors: ClusterTensors, constraints):
    """Matching bound pods per node for each constraint, and the number of values of each node label key."""
    bound = tensors.bound_pods()
    counts = [pod_topology_spread.matching_pods_per_node(xp, bound, tensors.nodes.size, p.spread.namespace,
                                                         c.selector) for c in constraints]
    n_values = [len(v) for v in tensors.node_labels.values]
    return counts, n_values


def run_filters(xp, p: Prepared, tensors: ClusterTensors) -> Evaluation:
    nodes = tensors.nodes
    codes, payloads = {}, {}
    for plugin in p.filters:
        if plugin == "NodeUnschedulable":
            code, payload = node_unschedulable.node_unschedulable_filter(xp, nodes.unschedulable,
                                                                         p.tolerates_unschedulable)
        elif plugin == "TaintToleration":
            code, payload = taint_toleration.taint_toleration_filter(xp, nodes.taints, p.taints.untolerated_hard)
        elif plugin == "NodeAffinity":
            code, payload = node_affinity.node_affinity_filter(xp, nodes.labels, p.affinity.required)
        elif plugin == "NodePorts":
            code, payload = node_ports.node_ports_filter(xp, nodes.host_ports, p.port_conflicts)
        elif plugin == "NodeResourcesFit":
            code, payload = node_resources_fit.fit_filter(xp, nodes.allocatable, nodes.requested, nodes.pod_count,
                                                          nodes.allowed_pods, p.fit_request, p.fit_columns)
        elif plugin == "DynamicResources":   # only for pods with claims (sched/claims.py prepares the inputs)
            code, payload, dra_assign = dynamic_resources.dynamic_resources_filter(xp, *p.dra.kernel_args(xp))
        elif plugin == "GpuShare":   # only for GPU-share pods (sched/gpushare.py prepares the inputs)
            code, payload = p.gpu.filter(xp)
        else:  # PodTopologySpread
            inclusion = inclusion_masks(xp, p, tensors)
            affinity_ok, taints_ok = inclusion
            counts, n_values = _spread_inputs(xp, p, tensors, p.spread.hard)
            code, payload = pod_topology_spread.pod_topology_spread_filter(
                xp, nodes.labels, n_values, counts, p.spread.hard, affinity_ok, taints_ok)
        codes[plugin], payloads[plugin] = code, payload
    feasible = xp.ones((nodes.size,), dtype=bool)
    for code in codes.values():
        feasible = feasible & (code == SUCCESS)
    ev = Evaluation(p.filters, codes, payloads, feasible)
    if "PodTopologySpread" in codes:
        ev.inclusion = inclusion
    if "DynamicResources" in codes:
        ev.dra_assign = dra_assign
    if "NodeAffinity" in p.filters and p.affinity.conflict:
        ev.prefilter_message = node_affinity.CONFLICT
        ev.feasible = xp.zeros((nodes.size,), dtype=bool)
    elif p.dra is not None and p.dra.message:      # DynamicResources PreFilter: a claim or class is missing
        ev.prefilter_message = p.dra.message
        ev.feasible = xp.zeros((nodes.size,), dtype=bool)
    elif "NodeAffinity" in p.filters and p.affinity.candidates is not None:
        ev.outside = ~xp.asarray(p.affinity.candidates)
        ev.feasible = feasible & ~ev.outside
    return ev


def inclusion_masks(xp, p: Prepared, tensors: ClusterTensors):
    """Whether each node matches the pod's node affinity/selector, and tolerates its hard taints
    (PodTopologySpread nodeAffinityPolicy / nodeTaintsPolicy)."""
    nodes = tensors.nodes
    if p.affinity.required is None:
        affinity_ok = xp.ones((nodes.size,), dtype=bool)
    else:
        affinity_ok = node_affinity.node_affinity_filter(xp, nodes.labels, p.affinity.required)[0] == SUCCESS
    taints_ok = taint_toleration.taint_toleration_filter(xp, nodes.taints, p.taints.untolerated_hard)[0] == SUCCESS
    return affinity_ok, taints_ok


def static_raw_scores(xp, p: Prepared, tensors: ClusterTensors) -> dict[str, np.ndarray]:
    """Raw scores that depend only on the node's fixed properties (never on pods placed on it)."""
    nodes = tensors.nodes
    out = {}
    for plugin, _ in p.scores:
        if plugin == "TaintToleration":
            out[plugin] = taint_toleration.taint_toleration_score(xp, nodes.taints, p.taints.untolerated_prefer)
        elif plugin == "NodeAffinity":
            out[plugin] = node_affinity.node_affinity_score(xp, nodes.labels, p.affinity.preferred)
    return out


NORMALIZED_REVERSED = {"TaintToleration": True, "NodeAffinity": False}
RESOURCE_SCORES = ("NodeResourcesFit", "NodeResourcesBalancedAllocation")


def resource_score(xp, plugin: str, p: Prepared, profile: Profile, alloc, load_before, copies, before_balance=None):
    """Score of the `copies`-th further copy of the pod (1 = the pod itself): per resource, copies - 1 bound
    copies' load plus the incoming pod's request on top of load_before. alloc, load_before: one array per
    resource, broadcastable with copies."""
    inputs = p.fit_inputs if plugin == "NodeResourcesFit" else p.balanced_inputs
    if isinstance(copies, int) and copies == 1:     # the per-pod path: the load is already "before"
        before = load_before
    else:
        before = [load + (copies - 1) * added for load, added in zip(load_before, inputs.pod_load)]
    after = [b + req for b, req in zip(before, inputs.pod_request)]
    if plugin == "NodeResourcesFit":
        return node_resources_fit.fit_score(xp, profile.fit_strategy, after, alloc, inputs.weights,
                                            profile.rtcr_shape)
    return balanced_allocation.balanced_allocation_score(xp, after, alloc, before, profile.compat, before_balance)


def resource_loads(xp, p: Prepared, tensors: ClusterTensors, plugin: str):
    nodes = tensors.nodes
    inputs = p.fit_inputs if plugin == "NodeResourcesFit" else p.balanced_inputs
    return node_load(xp, nodes.allocatable, nodes.requested, nodes.nonzero_requested, inputs)


class BalanceCache:
    """The v1.36 BalancedAllocation "without the pod" term per node. It depends on the node alone, so it is
    kept across pods and recomputed only for nodes whose load changed since it was last read."""

    def __init__(self):
        self.entries: dict[tuple, tuple[np.ndarray, int]] = {}

    def get(self, xp, tensors: ClusterTensors, inputs: ResourceInputs, alloc, load):
        key = (inputs.columns, inputs.nonzero)
        chunks = tensors.changes
        hit = self.entries.get(key)
        if hit is None:
            values = balanced_allocation.node_balance(xp, load, alloc)
        else:
            values, seen = hit
            if seen < len(chunks):
                rows = np.unique(np.concatenate(chunks[seen:]))
                values = set_at(xp, values, rows, balanced_allocation.node_balance(
                    xp, [x[rows] for x in load], [a[rows] for a in alloc]))
        self.entries[key] = (values, len(chunks))
        return values


def run_scores(xp, p: Prepared, tensors: ClusterTensors, ev: Evaluation, profile: Profile,
               balance_cache: BalanceCache | None = None) -> Evaluation:
    """Fill raw, normalized and total scores for the feasible nodes of `ev`."""
    feasible = ev.feasible
    raw = static_raw_scores(xp, p, tensors)
    normalized = {}
    for plugin, reverse in NORMALIZED_REVERSED.items():
        if plugin in raw:
            normalized[plugin] = default_normalize(xp, raw[plugin], feasible, reverse)
    for plugin, _ in p.scores:
        if plugin in RESOURCE_SCORES:
            alloc, before = resource_loads(xp, p, tensors, plugin)
            cached = None
            if plugin == "NodeResourcesBalancedAllocation" and balance_cache is not None and profile.compat != "1.35":
                cached = balance_cache.get(xp, tensors, p.balanced_inputs, alloc, before)
            raw[plugin] = resource_score(xp, plugin, p, profile, alloc, before, 1, cached)  # feasible nodes are read
            normalized[plugin] = raw[plugin]
        elif plugin == "PodTopologySpread":
            if ev.inclusion is None:
                ev.inclusion = inclusion_masks(xp, p, tensors)
            affinity_ok, taints_ok = ev.inclusion
            counts, n_values = _spread_inputs(xp, p, tensors, p.spread.soft)
            score, ignored = pod_topology_spread.pod_topology_spread_score(
                xp, tensors.nodes.labels, n_values, counts, p.spread.soft, feasible, affinity_ok, taints_ok)
            raw[plugin] = score
            normalized[plugin] = pod_topology_spread.pod_topology_spread_normalize(xp, score, feasible, ignored)
    total = xp.zeros((tensors.nodes.size,), dtype=xp.int64)
    for plugin, weight in p.scores:
        total = total + weight * normalized[plugin]
    ev.raw, ev.normalized, ev.total = raw, normalized, xp.where(feasible, total, 0)
    return ev
