"""Inputs shared by the resource-based scores (NodeResourcesFit strategies, BalancedAllocation).
Upstream: plugins/noderesources/resource_allocation.go.

A score reads, per configured resource, the node's allocatable and its load after placing the pod. cpu and
memory load comes from the non-zero-defaulted sums when the scorer asks for it (NodeResourcesFit), the plain
requested sums otherwise (BalancedAllocation); an extended resource the pod does not request is left out.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..cluster_models.tensors import BASE_RESOURCES, CPU, MEMORY

# Where an amount comes from in a pod's amount vector (pod_amounts): a request column (0.. R-1), or one of these,
# counted from the end so that they hold at any number of request columns.
ZERO, NONZERO_CPU, NONZERO_MEMORY, SCORING_CPU, SCORING_MEMORY = -1, -2, -3, -4, -5


def pod_amounts(request, nonzero, scoring) -> np.ndarray:
    """(..., R + 5) int64: the pods' requests (..., R), then scoring memory, cpu, non-zero memory, cpu (..., 2 each)
    and a zero, so that a plugin's run-time amounts are this vector gathered at its sources (Plugin.runtime_filter_
    sources: ZERO, NONZERO_*, SCORING_* index the end)."""
    request = np.asarray(request, np.int64)
    zero = np.zeros(request.shape[:-1] + (1,), np.int64)
    return np.concatenate([request, np.asarray(scoring, np.int64)[..., ::-1], np.asarray(nonzero, np.int64)[..., ::-1],
                           zero], axis=-1)


@dataclass(frozen=True)
class ResourceInputs:
    columns: tuple[int, ...]       # k resource columns; -1: skipped (absent everywhere, or unrequested extended)
    nonzero: tuple[int, ...]       # k: index into nonzero_requested (0 cpu, 1 memory) or -1 for requested
    weights: tuple[int, ...]       # k
    pod_request: tuple[int, ...]   # k: the incoming pod's request as the score reads it
    pod_load: tuple[int, ...]      # k: what the pod adds to the node's load once bound


@dataclass(frozen=True)
class ResourcePlan:
    """Where a scorer reads each configured resource, for one state of the resource vocabulary."""
    columns: tuple[int, ...]       # k resource columns; -1: absent everywhere
    nonzero: tuple[int, ...]       # k: index into nonzero_requested (0 cpu, 1 memory) or -1 for requested
    weights: tuple[int, ...]       # k
    extended: tuple[bool, ...]     # k: an extended resource (left out when the pod does not request it)


def resource_plan(vocab, resources: tuple[tuple[str, int], ...], use_nonzero: bool) -> ResourcePlan:
    """The plan of a scorer's configured (name, weight) resources over the resource vocabulary; remembered by the
    vocabulary until it grows, so per-pod inputs only read the pod's amounts."""
    def make(vocab) -> ResourcePlan:
        cols = tuple(vocab.get(name) for name, _ in resources)
        nonzero = tuple({CPU: 0, MEMORY: 1}.get(col, -1) if use_nonzero else -1 for col in cols)
        return ResourcePlan(cols, nonzero, tuple(w for _, w in resources),
                            tuple(name not in BASE_RESOURCES for name, _ in resources))
    return vocab.derived(("resource plan", resources, use_nonzero), make)


def resource_inputs(plan: ResourcePlan, request, scoring=None, nonzero=None) -> ResourceInputs:
    """Host side: request (R,) pod requests. With `scoring` and `nonzero` ((2,) cpu/memory, as the score reads
    the incoming pod and as a bound pod adds to NonZeroRequested) cpu and memory use the non-zero sums (the plan
    says where)."""
    cols, nz, pod, load = [], [], [], []
    n = len(request)
    for col, which, is_extended in zip(plan.columns, plan.nonzero, plan.extended):
        req = int(request[col]) if 0 <= col < n else 0
        if col < 0 or (is_extended and req == 0):
            cols.append(-1), nz.append(-1), pod.append(0), load.append(0)
            continue
        cols.append(col)
        nz.append(which)
        pod.append(int(scoring[which]) if which >= 0 else req)
        load.append(int(nonzero[which]) if which >= 0 else req)
    return ResourceInputs(tuple(cols), tuple(nz), plan.weights, tuple(pod), tuple(load))


def node_load(xp, allocatable, requested, nonzero_requested, inputs: ResourceInputs):
    """(alloc, load before the pod): one (N,) array per configured resource; skipped resources have alloc 0,
    so the scorers leave them out."""
    n = allocatable.shape[0]
    alloc, load = [], []
    for col, which in zip(inputs.columns, inputs.nonzero):
        if col < 0:
            alloc.append(xp.zeros((n,), dtype=xp.int64))
            load.append(xp.zeros((n,), dtype=xp.int64))
            continue
        alloc.append(allocatable[:, col])
        load.append(nonzero_requested[:, which] if which >= 0 else requested[:, col])
    return alloc, load


def copy_loads(load_before, inputs: ResourceInputs, copies):
    """(before, after): per resource, the load before and after the `copies`-th further copy of the pod (1 = the
    pod itself) on top of load_before (arrays broadcastable with copies)."""
    if isinstance(copies, int) and copies == 1:     # the per-pod path: the load is already "before"
        before = load_before
    else:
        before = [load + (copies - 1) * added for load, added in zip(load_before, inputs.pod_load)]
    return before, [b + req for b, req in zip(before, inputs.pod_request)]


def amount_sources(inputs: ResourceInputs) -> np.ndarray:
    """Where each of amounts(inputs)'s values comes from in pod_amounts' vector, for any pod whose inputs have
    these columns and non-zero choices: a skipped resource adds 0; cpu and memory read from the non-zero sums take
    the scoring amounts as the pod's request and the non-zero amounts as its load; any other reads its column."""
    request, load = [], []
    for col, which in zip(inputs.columns, inputs.nonzero):
        if col < 0:
            request.append(ZERO), load.append(ZERO)
        elif which >= 0:
            request.append((SCORING_CPU, SCORING_MEMORY)[which]), load.append((NONZERO_CPU, NONZERO_MEMORY)[which])
        else:
            request.append(col), load.append(col)
    return np.array(request + load, np.int64)


def amounts(inputs: ResourceInputs):
    """The run-time part of the inputs (the pod's amounts) as an int64 list, and the inputs without them."""
    k = len(inputs.columns)
    return ([*inputs.pod_request, *inputs.pod_load],
            dataclasses.replace(inputs, pod_request=(0,) * k, pod_load=(0,) * k))


def with_amounts(inputs: ResourceInputs, values) -> ResourceInputs:
    """Inverse of `amounts` (values may be traced scalars)."""
    k = len(inputs.columns)
    return dataclasses.replace(inputs, pod_request=tuple(values[:k]), pod_load=tuple(values[k:2 * k]))
