"""NodeResourcesFit: the resource Filter (pods, cpu, memory, ephemeral-storage, extended resources) and the
LeastAllocated / MostAllocated / RequestedToCapacityRatio scores; the PodGroup placement score (KEP-5732).
Upstream: pkg/scheduler/framework/plugins/noderesources/{fit,least_allocated,most_allocated,
requested_to_capacity_ratio,resource_allocation}.go; args and their validation:
pkg/scheduler/apis/config/{types_pluginargs.go,v1/defaults.go,validation/validation_pluginargs.go}."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from pydantic import Field, field_validator, model_validator

from ..cluster_models.errors import InputError
from ..cluster_models.objects import Int32, Int64, qualified_name_errors
from ..cluster_models.requests import pod_load
from ..cluster_models.tensors import BASE_RESOURCES
from ..kernels import node_resources_fit as kernel
from ..kernels import topology_placement
from ..kernels.resource_allocation import (ZERO, ResourceInputs, amount_sources, amounts, copy_loads, node_load,
                                           resource_inputs, resource_plan, with_amounts)
from .framework import (NODE_ADDED, NODE_LOCAL, NODE_UPDATED, NOMINATED_POD_DELETED, NOT_RUN, POD_DELETED, ArgsInvalid,
                        Pads, Plugin, PluginArgs, pad1)

TOO_MANY_PODS = "Too many pods"
# A Filter over up to this many nodes (a kept shape's changed rows) runs in plain Python (fit_filter_few): below it
# numpy's fixed cost per call exceeds Python's per node.
_FEW_ROWS = 12


def is_extended_resource(name: str) -> bool:
    """v1helper.IsExtendedResourceName: a domain-prefixed name outside kubernetes.io/ (hugepages are native)."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


class ResourceSpec(PluginArgs):
    name: str
    weight: Int64 = 0        # 0 (or unset) means 1 (SetDefaults_NodeResources*Args)


def default_resources() -> list[ResourceSpec]:
    """defaultResourceSpec (pkg/scheduler/apis/config/v1/defaults.go): cpu and memory, weight 1."""
    return [ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1)]


def defaulted_resources(resources: list[ResourceSpec]) -> list[ResourceSpec]:
    """SetDefaults_NodeResourcesFitArgs / SetDefaults_NodeResourcesBalancedAllocationArgs: an empty (or absent) list
    is cpu and memory; an unset or 0 weight is 1."""
    if not resources:
        return default_resources()
    return [r if r.weight else ResourceSpec(name=r.name, weight=1) for r in resources]


class UtilizationShapePoint(PluginArgs):
    utilization: Int32
    score: Int32


class RequestedToCapacityRatioParam(PluginArgs):
    shape: list[UtilizationShapePoint] = Field(default_factory=list)


SCORING_STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")   # supportedScoringStrategyTypes


class ScoringStrategy(PluginArgs):
    # One of SCORING_STRATEGIES (checked by NodeResourcesFitArgs, as upstream). A scoringStrategy given without a type
    # keeps it empty and is refused; only an absent scoringStrategy is defaulted (SetDefaults_NodeResourcesFitArgs).
    type: str = ""
    resources: list[ResourceSpec] = Field(default_factory=default_resources)
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None

    @field_validator("resources")
    @classmethod
    def _defaults(cls, resources: list[ResourceSpec]) -> list[ResourceSpec]:
        return defaulted_resources(resources)


class NodeResourcesFitArgs(PluginArgs):
    # validatePluginConfig's table keys ValidateNodeResourcesFitArgs by "NodeResourcesFitArgs", a name no plugin has,
    # so a configuration's validation never runs it: NewFit does, when a profile enables the plugin (the error then
    # names the profile and the plugin, its paths relative to the args).
    validated_at_construction: ClassVar[bool] = True
    ignored_resources: list[str] = Field(default_factory=list)
    ignored_resource_groups: list[str] = Field(default_factory=list)
    scoring_strategy: ScoringStrategy = Field(default_factory=lambda: ScoringStrategy(type="LeastAllocated"))

    @model_validator(mode="after")
    def _validate(self):
        """ValidateNodeResourcesFitArgs (validation_pluginargs.go): ignored resources and groups, the strategy's type,
        validateResources (every weight in (0, 100], after defaulting), with type RequestedToCapacityRatio its
        requestedToCapacityRatio (required) and validateFunctionShape at scoringStrategy.requestedToCapacityRatio.shape,
        with another type no requestedToCapacityRatio (Forbidden); all errors, aggregated as upstream prints them."""
        strategy = self.scoring_strategy
        errors = [f'ignoredResources[{i}]: Invalid value: "{name}": {problem}'
                  for i, name in enumerate(self.ignored_resources) for problem in qualified_name_errors(name)]
        for i, group in enumerate(self.ignored_resource_groups):
            if "/" in group:
                errors.append(f'ignoredResourceGroups[{i}]: Invalid value: "{group}": resource group name can\'t '
                              f"contain '/'")
            errors += [f'ignoredResourceGroups[{i}]: Invalid value: "{group}": {problem}'
                       for problem in qualified_name_errors(group)]
        if strategy.type not in SCORING_STRATEGIES:
            errors.append(f'scoringStrategy.type: Unsupported value: "{strategy.type}": supported values: '
                          + ", ".join(f'"{t}"' for t in SCORING_STRATEGIES))
        errors += [f"scoringStrategy.resources[{i}].weight: Invalid value: {r.weight}: resource weight of {r.name} "
                   f"not in valid range (0, 100]" for i, r in enumerate(strategy.resources) if not 0 < r.weight <= 100]
        ratio = strategy.requested_to_capacity_ratio
        if strategy.type == "RequestedToCapacityRatio":              # #132120 (v1.36)
            if ratio is None:
                errors.append("scoringStrategy.requestedToCapacityRatio: Required value: must be specified when type "
                              "is RequestedToCapacityRatio")
            else:
                errors += shape_errors(ratio.shape, "scoringStrategy.requestedToCapacityRatio.shape")
        elif ratio is not None:
            errors.append("scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not "
                          "RequestedToCapacityRatio")
        if errors:
            raise ArgsInvalid(errors)
        return self

    @property
    def strategy(self) -> str:
        return self.scoring_strategy.type

    @property
    def resources(self) -> tuple[tuple[str, int], ...]:
        return resource_weights(self.scoring_strategy.resources)

    @property
    def shape(self) -> tuple[tuple[int, int], ...]:
        ratio = self.scoring_strategy.requested_to_capacity_ratio
        return tuple((p.utilization, p.score) for p in ratio.shape) if ratio else ()


def shape_errors(shape: list[UtilizationShapePoint], path: str) -> list[str]:
    """validateFunctionShape: at least one point; utilizations increasing (the first offence only); each
    utilization in [0, 100] and score in [0, MaxCustomPriorityScore]."""
    if not shape:
        return [f"{path}: Required value: at least one point must be specified"]
    errors = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errors.append(f"{path}[{i}].utilization: Invalid value: {shape[i].utilization}: values must be sorted in "
                          f"increasing order")
            break
    for i, p in enumerate(shape):
        if not 0 <= p.utilization <= 100:
            errors.append(f"{path}[{i}].utilization: Invalid value: {p.utilization}: not in valid range [0, 100]")
        if not 0 <= p.score <= kernel.MAX_CUSTOM_PRIORITY_SCORE:
            errors.append(f"{path}[{i}].score: Invalid value: {p.score}: not in valid range "
                          f"[0, {kernel.MAX_CUSTOM_PRIORITY_SCORE}]")
    return errors


def refuse_dra_backed_scoring(plugin: str, resources: list[ResourceSpec], cluster) -> None:
    """InputError when a scored resource is an extended resource a DeviceClass backs (DRAExtendedResource): upstream
    scores it on nodes without it from the class's devices there, which phalanx does not model."""
    backed = cluster.claims.extended
    for r in resources:
        if r.name in backed:
            raise InputError(f"{plugin}: scoring resource {r.name}: an extended resource DeviceClass "
                             f"{backed[r.name].metadata.name} backs (DRAExtendedResource); scoring it is not modelled "
                             f"by phalanx")


def resource_weights(resources) -> tuple[tuple[str, int], ...]:
    """(name, weight) with a weight of 0 meaning 1."""
    return tuple((r.name, r.weight or 1) for r in resources)


@dataclass(frozen=True)
class FilterState:
    request: np.ndarray              # (R,) int64 what the filter checks (ignoredResources zeroed)
    columns: tuple[int, ...]         # the columns `request` asks for (> 0)
    delegated: tuple[int, ...] = ()  # of those, extended resources a DeviceClass backs (DRA where allocatable is 0)


class NodeResourcesFit(Plugin):
    name = "NodeResourcesFit"
    Args = NodeResourcesFitArgs
    score_columns = ("allocatable", "requested", "nonzero_requested")     # copy_scores: node_load's columns
    filter_columns = ("allocatable", "requested", "pod_count", "allowed_pods")
    events = frozenset({POD_DELETED, NOMINATED_POD_DELETED, NODE_ADDED, NODE_UPDATED})

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._resources = self.args.resources     # (name, weight), read per pod

    @classmethod
    def args_from_input(cls, args, cluster):
        if args is not None:
            refuse_dra_backed_scoring(cls.name, args.scoring_strategy.resources, cluster)
        return args

    def _ignored(self, cluster) -> list[int]:
        """The resource columns ignoredResources / ignoredResourceGroups leave out of the Filter."""
        args = self.args
        if not (args.ignored_resources or args.ignored_resource_groups):
            return []
        return [col for col, name in enumerate(cluster.tensors.resources.items)
                if is_extended_resource(name) and (name in args.ignored_resources
                                                   or name.split("/")[0] in args.ignored_resource_groups)]

    def pre_filter(self, pod, cluster):
        request = pod.request
        ignored = [col for col in self._ignored(cluster) if col < len(request)]
        if ignored:
            request = request.copy()
            request[ignored] = 0
        columns = kernel.wanted_columns(request)
        # DRAExtendedResource (on in v1.36): fitsRequest leaves a resource that a DeviceClass backs to DRA on nodes
        # whose allocatable is 0 (shouldDelegateResourceToDRA; DynamicResources allocates it there).
        backed = cluster.claims.extended
        items = cluster.tensors.resources.items
        delegated = tuple(c for c in columns if items[c] in backed) if backed else ()
        return FilterState(request, columns, delegated)

    def request_pattern(self, pod, cluster):
        # The Filter checks the requested columns (ignoredResources zeroed: a function of them); the Score skips
        # the extended resources not requested; everything else is an amount.
        return pod.requested_columns

    def filter(self, xp, state, tensors):
        nodes = tensors.nodes
        if xp is np and len(nodes.pod_count) <= _FEW_ROWS:
            return kernel.fit_filter_few(nodes.allocatable, nodes.requested, nodes.pod_count, nodes.allowed_pods,
                                         state.request, state.columns, state.delegated)
        return kernel.fit_filter(xp, nodes.allocatable, nodes.requested, nodes.pod_count, nodes.allowed_pods,
                                 state.request, state.columns, state.delegated)

    def hint(self, event, pod, objects, cluster) -> bool:
        """isSchedulableAfterPodEvent / isSchedulableAfterNodeChange (v1.36). Every pod event here is a bound or
        nominated pod leaving (pods are never scaled down here): it may help. A node added helps when the pod fits
        it empty; a node updated, when the pod fits it empty and it now offers more pods or more of a resource the
        pod requests (or a DRA-backed one it has none of). Both read the pod's requests as the Filter does, but
        without ignoredResources (upstream's isFit passes none)."""
        if event not in (NODE_ADDED, NODE_UPDATED) or objects is None:
            return True
        old, new = (None, objects) if event == NODE_ADDED else objects
        requests, _ = pod_load(pod)
        backed = cluster.claims.extended
        if not _fits_empty(requests, new.status.allocatable, backed):
            return False
        return old is None or _requested_increased(requests, old.status.allocatable, new.status.allocatable, backed)

    def reasons(self, payload, tensors):
        out = [TOO_MANY_PODS] if payload & (1 << kernel.TOO_MANY_PODS_BIT) else []
        return out + [f"Insufficient {name}" for r, name in enumerate(tensors.resources.items)
                      if payload & (1 << (r + 1))]

    def _inputs(self, pod, cluster) -> ResourceInputs:
        plan = resource_plan(cluster.tensors.resources, self._resources, True)
        return resource_inputs(plan, pod.request, pod.shape.scoring, pod.shape.nonzero)

    def pre_score(self, pod, cluster):
        return self._inputs(pod, cluster)

    def score_state(self, pod, cluster, pre):
        # Upstream computes the pod's requests in Score when PreScore is disabled.
        return self._inputs(pod, cluster) if pre is NOT_RUN else pre

    def score(self, xp, state, tensors, feasible, cache=None):
        return self.copy_scores(xp, state, tensors, None, 1)

    def removal_behaviour(self, state):
        return NODE_LOCAL

    def filter_behaviour(self, state):
        return NODE_LOCAL

    def score_behaviour(self, state):
        return NODE_LOCAL

    def copy_capacity(self, xp, state, tensors):
        nodes = tensors.nodes
        return kernel.fit_capacity(xp, nodes.allocatable, nodes.requested, nodes.pod_count, nodes.allowed_pods,
                                   state.request, state.columns, state.delegated)

    def copy_scores(self, xp, state, tensors, rows, copies):
        nodes = tensors.nodes
        alloc, load = node_load(xp, nodes.allocatable, nodes.requested, nodes.nonzero_requested, state)
        if rows is not None:
            alloc, load = [a[rows][:, None] for a in alloc], [b[rows][:, None] for b in load]
        _, after = copy_loads(load, state, copies)
        return kernel.fit_score(xp, self.args.strategy, after, alloc, state.weights, self.args.shape)

    def pad_filter_state(self, state, pads: Pads):
        return FilterState(pad1(state.request, pads.resources, 0), state.columns, state.delegated)

    def runtime_filter_inputs(self, state):
        return FilterState(None, state.columns, state.delegated), state.request

    def runtime_filter_sources(self, state, cluster):
        sources = np.arange(len(state.request), dtype=np.int64)
        sources[[col for col in self._ignored(cluster) if col < len(sources)]] = ZERO
        return sources

    def with_runtime_filter(self, state, values):
        return FilterState(values, state.columns, state.delegated)

    def runtime_score_inputs(self, state):
        values, rest = amounts(state)
        return rest, np.array(values, np.int64)

    def with_runtime_score(self, state, values):
        return with_amounts(state, [values[i] for i in range(values.shape[0])])

    def runtime_score_sources(self, state, cluster):
        return amount_sources(state)

    # -- PlacementScore (KEP-5732) ---------------------------------------------------------------------
    def score_placement(self, tries, cluster, scheduled: int) -> np.ndarray:
        """MostAllocated of (the placement's nodes' allocated amounts + the pods placed there, cpu/memory
        non-zero defaulted) over the placement's allocatable, per configured resource, weighted integer mean.
        tries: (node ids, placements made there) per feasible placement. (D,) int64."""
        tensors = cluster.tensors
        n_res = len(tensors.resources)
        request = np.zeros((len(tries), n_res), np.int64)         # the group's placed pods, per placement
        scoring = np.zeros((len(tries), 2), np.int64)             # the same, cpu/memory non-zero defaulted
        for d, (_, placed) in enumerate(tries):
            for pl in placed:
                request[d, : len(pl.request)] += len(pl.pods) * pl.request
                scoring[d] += len(pl.pods) * pl.scoring
        # Resources any placement's pods request decide the configured columns; a placement whose pods skip an
        # extended resource scores it with allocatable 0 (left out with its weight), as its own cycle would.
        inputs = resource_inputs(resource_plan(tensors.resources, self._resources, True), request.sum(axis=0),
                                 scoring.sum(axis=0), np.zeros(2, np.int64))
        nodes = tensors.nodes
        alloc, load = node_load(np, nodes.allocatable, nodes.requested, nodes.nonzero_requested, inputs)
        placement_of = np.full(nodes.size, -1, np.int64)
        for d, (node_ids, _) in enumerate(tries):
            placement_of[node_ids] = d
        domain_alloc, domain_load = topology_placement.placement_allocation(np, alloc, load, placement_of, len(tries))
        group = []
        for r, ((name, _), col, which) in enumerate(zip(self.args.resources, inputs.columns, inputs.nonzero)):
            if col < 0:
                group.append(np.zeros(len(tries), np.int64))
                continue
            group.append(scoring[:, which] if which >= 0 else request[:, col])
            if name not in BASE_RESOURCES:
                domain_alloc[r] = np.where(request[:, col] > 0, domain_alloc[r], 0)
        return np.asarray(topology_placement.placement_fit_score(np, group, domain_alloc, domain_load, inputs.weights))


_NATIVE = ("cpu", "memory", "ephemeral-storage")     # Resource's own fields: never left to DRA


def _delegated(name: str, allocatable: dict[str, int], backed) -> bool:
    """shouldDelegateResourceToDRA: an extended resource a DeviceClass backs, on a node that has none of it."""
    return name not in _NATIVE and name in backed and allocatable.get(name, 0) == 0


def _fits_empty(requests: dict[str, int], allocatable: dict[str, int], backed) -> bool:
    """isFit: the pod's requests against the node's allocatable with nothing on it (one pod slot needed)."""
    if allocatable.get("pods", 0) < 1:
        return False
    return all(want <= allocatable.get(name, 0) or _delegated(name, allocatable, backed)
               for name, want in requests.items() if want > 0 and name != "pods")


def _requested_increased(requests: dict[str, int], old: dict[str, int], new: dict[str, int], backed) -> bool:
    """haveAnyRequestedResourcesIncreased: more pods allowed, or more of some resource the pod requests, or (an
    extended one) left to DRA on the updated node."""
    if new.get("pods", 0) > old.get("pods", 0):
        return True
    return any(new.get(name, 0) > old.get(name, 0) or _delegated(name, new, backed)
               for name, want in requests.items() if want > 0 and name != "pods")
