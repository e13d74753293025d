"""Toleration matching against the taint vocabulary (v1.Toleration.ToleratesTaint), host side.

Used by TaintToleration, NodeUnschedulable and PodTopologySpread's nodeTaintsPolicy; evaluated once per pod shape
over the distinct taints, never per node. `comparison` is the TaintTolerationComparisonOperators gate: without it a
Gt/Lt toleration tolerates nothing.
"""
from __future__ import annotations

import numpy as np

from ..cluster_models.objects import CANONICAL_DECIMAL
from ..cluster_models.tensors import parse_int64_label


def _int64(value: str) -> int | None:
    """compareNumericValues' parse: content.IsDecimalInteger, then strconv.ParseInt(value, 10, 64); None when
    either fails (upstream logs the error and does not tolerate)."""
    return parse_int64_label(value) if CANONICAL_DECIMAL.fullmatch(value) else None


def tolerates(toleration, key: str, value: str, effect: str, comparison: bool = False) -> bool:
    if toleration.effect and toleration.effect != effect:
        return False
    if toleration.key and toleration.key != key:
        return False
    op = toleration.operator
    if op == "Exists":
        return True
    if op == "Equal":
        return toleration.value == value
    if not comparison:
        return False
    threshold, taint = _int64(toleration.value), _int64(value)
    if threshold is None or taint is None:
        return False
    return taint > threshold if op == "Gt" else taint < threshold


def tolerated_mask(tolerations, taints, comparison: bool = False) -> np.ndarray:
    """(T,) bool: taint vocabulary entry t = (key, value, effect) is tolerated by some toleration."""
    if not tolerations:
        return np.zeros(len(taints.items), bool)
    return np.array([any(tolerates(tol, *taint, comparison) for tol in tolerations) for taint in taints.items],
                    bool)
