"""Reason strings and the kube-scheduler FitError message, formatted late from per-node payloads by the plugins
that produced them."""
from __future__ import annotations

import numpy as np

from ..kernels.status import SUCCESS
from ..plugins.framework import fit_error

__all__ = ["disjoint_reason", "first_failures", "fit_error", "node_reasons", "outside_reason", "patched_histogram",
           "reason_histogram"]


def outside_reason(narrowing: tuple[str, ...]) -> str:
    """What nodes left out by PreFilterResults report (upstream: "node(s) didn't satisfy plugin(s) [A B]")."""
    return f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowing))}]"


def disjoint_reason(narrowing: tuple[str, ...]) -> str:
    """RunPreFilterPlugins' rejection when the PreFilterResults so far name no node in common."""
    if len(narrowing) == 1:
        return f"node(s) didn't satisfy plugin {narrowing[0]}"
    return f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowing))}] simultaneously"


def first_failures(filters: tuple[str, ...], codes: dict[str, np.ndarray], n: int) -> np.ndarray:
    """(N,) int index into `filters` of the first plugin that rejects each node, -1 when none does."""
    first = np.full(n, -1, np.int64)
    for i in range(len(filters) - 1, -1, -1):
        first = np.where(np.asarray(codes[filters[i]]) != SUCCESS, i, first)
    return first


def node_reasons(framework, ev, nodes, tensors) -> list[tuple[str, ...]]:
    """Each of `nodes`' reasons as reason_histogram counts them: its first failing Filter's, that of nodes left out
    by a PreFilterResult, () for a node that passes."""
    nodes = np.asarray(nodes, np.int64)
    first = ev.first_failed()[nodes].tolist()
    outside = [False] * len(first) if ev.outside is None else np.asarray(ev.outside)[nodes].tolist()
    payloads = {name: np.asarray(ev.payloads[name])[nodes].tolist() for name in {ev.filters[i] for i in first if i >= 0}}
    texts: dict[tuple[int, int], tuple[str, ...]] = {}
    out: list[tuple[str, ...]] = []
    for j, i in enumerate(first):
        if outside[j]:
            out.append((outside_reason(ev.narrowing),))
            continue
        if i < 0:
            out.append(())
            continue
        name = ev.filters[i]
        key = (i, payloads[name][j])
        if key not in texts:
            texts[key] = tuple(framework.plugin(name).reasons(key[1], tensors))
        out.append(texts[key])
    return out


def patched_histogram(framework, old, ev, rows, tensors) -> dict[str, int]:
    """reason_histogram of `ev` from that of `old`, an evaluation of the same pod that differs from it on the nodes
    `rows` alone (their reasons taken off, theirs in `ev` added); ev.first_failed() must hold on those rows."""
    hist = reason_histogram(framework, old, tensors)
    for reasons in node_reasons(framework, old, rows, tensors):
        for reason in reasons:
            hist[reason] -= 1
    for reasons in node_reasons(framework, ev, rows, tensors):
        for reason in reasons:
            hist[reason] = hist.get(reason, 0) + 1
    return {reason: count for reason, count in hist.items() if count}


def reason_histogram(framework, ev, tensors) -> dict[str, int]:
    """Reason string -> number of nodes reporting it (each node reports its first failing plugin's reasons;
    nodes outside a PreFilterResult report that instead). Computed once per evaluation."""
    if ev._histogram is None:
        ev._histogram = _histogram(framework, ev, tensors)
    return dict(ev._histogram)


def _histogram(framework, ev, tensors) -> dict[str, int]:
    first = ev.first_failed()
    hist: dict[str, int] = {}
    if ev.outside is not None:
        outside = np.asarray(ev.outside)
        if outside.any():
            hist[outside_reason(ev.narrowing)] = int(outside.sum())
        first = np.where(outside, -1, first)
    for i, name in enumerate(ev.filters):
        rows = first == i
        if not rows.any():
            continue
        plugin = framework.plugin(name)
        values, counts = np.unique(np.asarray(ev.payloads[name])[rows], return_counts=True)
        for value, count in zip(values.tolist(), counts.tolist()):
            for reason in plugin.reasons(value, tensors):
                hist[reason] = hist.get(reason, 0) + count
    return hist
