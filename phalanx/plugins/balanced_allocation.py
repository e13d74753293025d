"""NodeResourcesBalancedAllocation: favours nodes whose resource fractions stay close to each other; v1.36
scores the change of balance the pod causes, v1.35 (compat) the balance with the pod.
Upstream: pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go."""
from __future__ import annotations

import numpy as np
from pydantic import Field, field_validator, model_validator

from ..kernels.backend import set_at
from ..kernels.balanced_allocation import balanced_allocation_score, node_balance
from ..kernels.resource_allocation import (ResourceInputs, amount_sources, amounts, copy_loads, node_load,
                                           resource_inputs, resource_plan, with_amounts)
from .framework import (NODE_ADDED, NODE_LOCAL, NODE_UPDATED, NOT_RUN, POD_DELETED, SKIP, ArgsInvalid, Plugin,
                        PluginArgs)
from .node_resources_fit import (ResourceSpec, default_resources, defaulted_resources, refuse_dra_backed_scoring,
                                 resource_weights)


class NodeResourcesBalancedAllocationArgs(PluginArgs):
    resources: list[ResourceSpec] = Field(default_factory=default_resources)

    @field_validator("resources")
    @classmethod
    def _defaults(cls, resources: list[ResourceSpec]) -> list[ResourceSpec]:
        return defaulted_resources(resources)

    @model_validator(mode="after")
    def _validate(self):
        """ValidateNodeResourcesBalancedAllocationArgs: no resource twice, every weight 1 (after defaulting)."""
        errors, seen = [], set()
        for i, r in enumerate(self.resources):
            if r.name in seen:
                errors.append(f'resources[{i}].name: Duplicate value: "{r.name}"')
            seen.add(r.name)
            if r.weight != 1:
                errors.append(f"resources[{i}].weight: Invalid value: {r.weight}: must be 1")
        if errors:
            raise ArgsInvalid(errors)
        return self


class NodeResourcesBalancedAllocation(Plugin):
    name = "NodeResourcesBalancedAllocation"
    Args = NodeResourcesBalancedAllocationArgs
    score_columns = ("allocatable", "requested", "nonzero_requested")     # copy_scores: node_load's columns
    events = frozenset({POD_DELETED, NODE_ADDED, NODE_UPDATED})

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._resources = resource_weights(self.args.resources)     # (name, weight), read per pod

    @classmethod
    def args_from_input(cls, args, cluster):
        if args is not None:
            refuse_dra_backed_scoring(cls.name, args.resources, cluster)
        return args

    def _inputs(self, pod, cluster) -> ResourceInputs:
        return resource_inputs(resource_plan(cluster.tensors.resources, self._resources, False), pod.request)

    def request_pattern(self, pod, cluster):
        # Its resources not requested (extended) are left out, and a pod requesting none of them skipped.
        return pod.requested_columns

    def pre_score(self, pod, cluster):
        inputs = self._inputs(pod, cluster)
        # A pod requesting none of the balanced resources is skipped (kubernetes PR 129138).
        return inputs if any(inputs.pod_request) else SKIP

    def score_state(self, pod, cluster, pre):
        if pre is not NOT_RUN:
            return pre
        # Without PreScore, upstream's Score computes the requests itself and scores a pod requesting none of the
        # balanced resources 0 on every node (the best-effort check of PreScore, made at Score).
        inputs = self._inputs(pod, cluster)
        return inputs if any(inputs.pod_request) else SKIP

    def score(self, xp, state, tensors, feasible, cache=None):
        nodes = tensors.nodes
        alloc, load = node_load(xp, nodes.allocatable, nodes.requested, nodes.nonzero_requested, state)
        before = None
        if cache is not None and self.context.compat != "1.35":
            before = _cached_balance(xp, cache, tensors, state, alloc, load)
        _, after = copy_loads(load, state, 1)
        return balanced_allocation_score(xp, after, alloc, load, self.context.compat, before)

    def score_behaviour(self, state):
        return NODE_LOCAL

    def copy_scores(self, xp, state, tensors, rows, copies):
        nodes = tensors.nodes
        alloc, load = node_load(xp, nodes.allocatable, nodes.requested, nodes.nonzero_requested, state)
        alloc, load = [a[rows][:, None] for a in alloc], [b[rows][:, None] for b in load]
        before, after = copy_loads(load, state, copies)
        return balanced_allocation_score(xp, after, alloc, before, self.context.compat)

    def runtime_score_inputs(self, state):
        values, rest = amounts(state)
        return rest, np.array(values, np.int64)

    def with_runtime_score(self, state, values):
        return with_amounts(state, [values[i] for i in range(values.shape[0])])

    def runtime_score_sources(self, state, cluster):
        return amount_sources(state)


def _cached_balance(xp, cache: dict, tensors, inputs: ResourceInputs, alloc, load):
    """The v1.36 "without the pod" balance per node. It depends on the node alone, so it is kept across pods and
    recomputed only for nodes whose load changed since it was last read (tensors.changes)."""
    key = (inputs.columns, inputs.nonzero)
    chunks = tensors.changes
    hit = cache.get(key)
    if hit is None:
        values = node_balance(xp, load, alloc)
    else:
        values, seen = hit
        if seen < len(chunks):
            # One chunk (the per-pod path) is used as it is: a node listed twice gets the same value twice.
            rows = chunks[seen] if len(chunks) == seen + 1 else tensors.changed_since(seen)
            values = set_at(xp, values, rows, node_balance(xp, [x[rows] for x in load], [a[rows] for a in alloc]))
    cache[key] = (values, len(chunks))
    return values
