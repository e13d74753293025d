"""Inputs shared by the resource-based scores (NodeResourcesFit strategies, BalancedAllocation).
Upstream: plugins/noderesources/resource_allocation.go.

A score reads, per configured resource, the node's allocatable and its load after placing the pod. cpu and
memory load comes from the non-zero-defaulted sums when the scorer asks for it (NodeResourcesFit), the plain
requested sums otherwise (BalancedAllocation); an extended resource the pod does not request is left out.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cluster_models.tensors import BASE_RESOURCES, CPU, MEMORY


@dataclass(frozen=True)
class ResourceInputs:
    columns: tuple[int, ...]       # k resource columns; -1: skipped (absent everywhere, or unrequested extended)
    nonzero: tuple[int, ...]       # k: index into nonzero_requested (0 cpu, 1 memory) or -1 for requested
    weights: np.ndarray            # (k,) int64
    pod_request: np.ndarray        # (k,) int64 what one pod adds


def resource_inputs(resources: tuple[tuple[str, int], ...], vocab, request: np.ndarray, nonzero: np.ndarray,
                    use_nonzero: bool) -> ResourceInputs:
    """Host side: request (R,) pod requests; nonzero (2,) cpu/memory with the scoring defaults."""
    cols, nz, pod = [], [], []
    for name, _ in resources:
        col = vocab.get(name)
        is_extended = name not in BASE_RESOURCES
        req = int(request[col]) if 0 <= col < len(request) else 0
        if col < 0 or (is_extended and req == 0):
            cols.append(-1), nz.append(-1), pod.append(0)
            continue
        which = {CPU: 0, MEMORY: 1}.get(col, -1) if use_nonzero else -1
        cols.append(col)
        nz.append(which)
        pod.append(int(nonzero[which]) if which >= 0 else req)
    return ResourceInputs(tuple(cols), tuple(nz), np.array([w for _, w in resources], np.int64),
                          np.array(pod, np.int64))


def node_load(xp, allocatable, requested, nonzero_requested, inputs: ResourceInputs):
    """(alloc (N, k), load before the pod (N, k)); skipped resources have alloc 0 so scorers leave them out."""
    n = allocatable.shape[0]
    alloc, load = [], []
    for col, which in zip(inputs.columns, inputs.nonzero):
        if col < 0:
            alloc.append(xp.zeros((n,), dtype=xp.int64))
            load.append(xp.zeros((n,), dtype=xp.int64))
            continue
        alloc.append(allocatable[:, col])
        load.append(nonzero_requested[:, which] if which >= 0 else requested[:, col])
    return xp.stack(alloc, axis=-1), xp.stack(load, axis=-1)
