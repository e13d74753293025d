"""Toleration matching against the taint vocabulary (v1.Toleration.ToleratesTaint), host side.

Used by TaintToleration and NodeUnschedulable; evaluated once per pod shape over the distinct taints,
never per node.
"""
from __future__ import annotations

import numpy as np


def tolerates(toleration, key: str, value: str, effect: str) -> bool:
    if toleration.effect and toleration.effect != effect:
        return False
    if toleration.key and toleration.key != key:
        return False
    if toleration.operator == "Exists":
        return True
    return toleration.value == value


def tolerated_mask(tolerations, taints) -> np.ndarray:
    """(T,) bool: taint vocabulary entry t = (key, value, effect) is tolerated by some toleration."""
    if not tolerations:
        return np.zeros(len(taints.items), bool)
    return np.array([any(tolerates(tol, *taint) for tol in tolerations) for taint in taints.items], bool)
