"""TaintToleration: Filter on NoSchedule/NoExecute taints, Score on PreferNoSchedule taints.
Upstream: plugins/tainttoleration/taint_toleration.go."""
from __future__ import annotations

import numpy as np

from .status import SUCCESS, UNSCHEDULABLE_AND_UNRESOLVABLE

NO_TAINT = -1


def taint_toleration_filter(xp, taints, untolerated_hard):
    """taints: (N, T) int16 position in the node's taint list (-1 absent); untolerated_hard: (T,) bool mask, on the
    host (static per pod shape, so only its columns are read) or on the device (CuPy's placement loop: one pass
    over all columns). Reason payload: vocabulary id of the node's first untolerated taint in spec order (the one
    upstream names in its log), NO_TAINT when none."""
    n = taints.shape[0]
    first = xp.full((n,), NO_TAINT, dtype=xp.int64)
    if type(untolerated_hard) is not np.ndarray:
        if taints.shape[1]:
            # A node's taints have distinct positions, so the smallest is its first untolerated one.
            pos = xp.where(untolerated_hard[None, :] & (taints >= 0), taints.astype(xp.int32), 1 << 20)
            first = xp.where(xp.min(pos, axis=1) < 1 << 20, xp.argmin(pos, axis=1), first)
    else:
        best = xp.full((n,), 1 << 20, dtype=xp.int32)
        for t in np.flatnonzero(untolerated_hard).tolist():
            pos = taints[:, t].astype(xp.int32)
            earlier = (pos >= 0) & (pos < best)
            first = xp.where(earlier, t, first)
            best = xp.where(earlier, pos, best)
    code = xp.where(first != NO_TAINT, UNSCHEDULABLE_AND_UNRESOLVABLE, SUCCESS).astype(xp.int8)
    return code, first


def taint_toleration_score(xp, taints, untolerated_prefer):
    """Raw score: number of PreferNoSchedule taints the pod does not tolerate (normalized reversed). The mask on
    the host or the device, as for the filter."""
    if type(untolerated_prefer) is not np.ndarray:
        return xp.sum((taints >= 0) & untolerated_prefer[None, :], axis=1).astype(xp.int64)
    score = xp.zeros((taints.shape[0],), dtype=xp.int64)
    for t in np.flatnonzero(untolerated_prefer).tolist():
        score = score + (taints[:, t] >= 0)
    return score
