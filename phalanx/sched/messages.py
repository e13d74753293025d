"""Reason strings and the kube-scheduler FitError message, formatted late from per-node payloads."""
from __future__ import annotations

import numpy as np

from ..cluster_models.tensors import ClusterTensors
from ..kernels import (dynamic_resources, gpu_share, node_affinity, node_ports, node_resources_fit,
                       node_unschedulable, pod_topology_spread)
from ..kernels.status import SUCCESS

TAINT_REASON = "node(s) had untolerated taint(s)"
TOO_MANY_PODS = "Too many pods"


def reasons(plugin: str, payload: int, tensors: ClusterTensors) -> list[str]:
    """Upstream reason strings of one failing node, from its plugin's payload."""
    if plugin == "NodeResourcesFit":
        out = [TOO_MANY_PODS] if payload & (1 << node_resources_fit.TOO_MANY_PODS_BIT) else []
        out += [f"Insufficient {name}" for r, name in enumerate(tensors.resources.items) if payload & (1 << (r + 1))]
        return out
    if plugin == "TaintToleration":
        return [TAINT_REASON]
    if plugin == "DynamicResources":
        return [dynamic_resources.REASONS[payload]]
    if plugin == "GpuShare":      # sched/gpushare.py
        return [gpu_share.REASONS[payload]]
    if plugin == "PodTopologySpread":
        bit = pod_topology_spread.MISSING_LABEL_BIT
        return [pod_topology_spread.REASONS[0] if payload == bit else pod_topology_spread.REASONS[1]]
    return list({"NodeUnschedulable": node_unschedulable.REASONS, "NodeAffinity": node_affinity.REASONS,
                 "NodePorts": node_ports.REASONS}[plugin])


def first_failures(filters: tuple[str, ...], codes: dict[str, np.ndarray], n: int) -> np.ndarray:
    """(N,) int index into `filters` of the first plugin that rejects each node, -1 when none does."""
    first = np.full(n, -1, np.int64)
    for i in range(len(filters) - 1, -1, -1):
        first = np.where(np.asarray(codes[filters[i]]) != SUCCESS, i, first)
    return first


def reason_histogram(filters, codes, payloads, tensors: ClusterTensors, outside=None) -> dict[str, int]:
    """Reason string -> number of nodes reporting it (each node reports its first failing plugin's reasons;
    nodes outside a PreFilterResult report that instead)."""
    first = first_failures(filters, codes, tensors.nodes.size)
    hist: dict[str, int] = {}
    if outside is not None:
        outside = np.asarray(outside)
        if outside.any():
            hist[node_affinity.NOT_IN_PREFILTER_RESULT] = int(outside.sum())
        first = np.where(outside, -1, first)
    for i, plugin in enumerate(filters):
        rows = first == i
        if not rows.any():
            continue
        values, counts = np.unique(np.asarray(payloads[plugin])[rows], return_counts=True)
        for value, count in zip(values.tolist(), counts.tolist()):
            for reason in reasons(plugin, value, tensors):
                hist[reason] = hist.get(reason, 0) + count
    return hist


def fit_error(n_nodes: int, hist: dict[str, int], prefilter_message: str | None = None) -> str:
    """FitError.Error(): counts and reasons joined after a lexicographic sort of the "count reason" strings;
    a PreFilter rejection replaces the histogram."""
    msg = f"0/{n_nodes} nodes are available:"
    if prefilter_message:
        return f"{msg} {prefilter_message}."
    parts = sorted(f"{count} {reason}" for reason, count in hist.items())
    if parts:
        msg += " " + ", ".join(parts) + "."
    return msg
