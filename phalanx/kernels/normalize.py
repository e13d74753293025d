"""NormalizeScore: upstream helper.DefaultNormalizeScore over the feasible nodes only."""
from __future__ import annotations

import numpy as np

from .backend import score_div
from .status import MAX_NODE_SCORE


def default_normalize(xp, raw, feasible, reverse: bool):
    """raw: (N,) int64; feasible: (N,) bool. Infeasible nodes get 0 (they are never chosen).

    max over feasible raw scores m; m == 0: all MAX (reverse) or unchanged; else MAX*raw//m, reversed as MAX - that.
    """
    m = xp.max(xp.where(feasible, raw, 0))
    if xp is np and m == 0:       # every feasible raw score 0 (no PreferNoSchedule taint, no preferred term): no
        return xp.where(feasible, MAX_NODE_SCORE if reverse else raw, 0)    # division (an int64 array's is slow)
    scaled = score_div(xp, MAX_NODE_SCORE * raw, xp.maximum(m, 1))
    if reverse:
        out = xp.where(m == 0, MAX_NODE_SCORE, MAX_NODE_SCORE - scaled)
    else:
        out = xp.where(m == 0, raw, scaled)
    return xp.where(feasible, out, 0)


def max_holders(xp, raw, feasible):
    """(N,) bool feasible nodes holding the feasible maximum of raw (>= 0), none when that maximum is 0: the nodes
    whose leaving the feasible set could change default_normalize's result."""
    top = xp.max(xp.where(feasible, raw, 0))
    return feasible & (raw == top) & (top > 0)
