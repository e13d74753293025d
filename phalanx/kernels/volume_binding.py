"""VolumeBinding's Filter: the reasons the host found per node (the matching itself is per claim and per volume,
plugins/volume_binding.py). Upstream: plugins/volumebinding/binder.go (FindPodVolumes' reasons)."""
from __future__ import annotations

from .status import SUCCESS, UNSCHEDULABLE_AND_UNRESOLVABLE

NODE_CONFLICT = 1       # a bound claim's volume does not allow the node
BIND_CONFLICT = 2       # an unbound claim finds no volume and cannot be provisioned there
PV_NOT_EXIST = 4        # a bound claim's volume does not exist
NOT_ENOUGH_SPACE = 8    # a claim to provision finds no CSIStorageCapacity that holds it on the node
# In the order FindPodVolumes appends them.
REASONS = ((NODE_CONFLICT, "node(s) had volume node affinity conflict"),
           (BIND_CONFLICT, "node(s) didn't find available persistent volumes to bind"),
           (NOT_ENOUGH_SPACE, "node(s) did not have enough free storage"),
           (PV_NOT_EXIST, "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"))


def volume_binding_filter(xp, payload):
    """payload: (N,) int64 reason bits per node; any fails the node UnschedulableAndUnresolvable."""
    return xp.where(payload > 0, UNSCHEDULABLE_AND_UNRESOLVABLE, SUCCESS).astype(xp.int8), payload
