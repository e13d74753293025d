"""VolumeZone: a bound volume's zone and region labels against the node's. Upstream:
plugins/volumezone/volume_zone.go (Filter)."""
from __future__ import annotations

from .node_affinity import LabelTest, term_matches
from .status import SUCCESS, UNSCHEDULABLE_AND_UNRESOLVABLE


def volume_zone_filter(xp, labels, constrained: tuple[LabelTest, ...], topologies):
    """labels: (N, K) value ids. constrained: one Exists test per topology label key (a node with none of them is
    not constrained). topologies: per volume label, (present, allowed, fallback_allowed): the node's label of the
    volume's key exists / has an allowed value, and the GA key's value is allowed (read where the node lacks the
    beta key). Payload 1 on a node that fails."""
    n = labels.shape[0]
    has_any = xp.zeros((n,), dtype=bool)
    for test in constrained:
        has_any = has_any | term_matches(xp, labels, (test,))
    ok = xp.ones((n,), dtype=bool)
    for present, allowed, fallback in topologies:
        ok = ok & xp.where(term_matches(xp, labels, (present,)), term_matches(xp, labels, (allowed,)),
                           term_matches(xp, labels, (fallback,)))
    fail = has_any & ~ok
    return xp.where(fail, UNSCHEDULABLE_AND_UNRESOLVABLE, SUCCESS).astype(xp.int8), fail.astype(xp.int64)
