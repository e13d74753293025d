"""VolumeRestrictions: in-tree disks in use on the node, and ReadWriteOncePod claims in use anywhere.
Upstream: plugins/volumerestrictions/volume_restrictions.go (Filter)."""
from __future__ import annotations

from .status import SUCCESS, UNSCHEDULABLE

DISK_CONFLICT = 1            # payload: a pod on the node uses one of the pod's disks
READ_WRITE_ONCE_POD = 2      # payload: a ReadWriteOncePod claim of the pod is in use


def volume_restrictions_filter(xp, disk_conflict, claim_in_use: bool):
    """disk_conflict: (N,) bool nodes where a pod uses a disk of the pod's; claim_in_use: a ReadWriteOncePod claim
    of the pod is used by a pod on some node (checked after the disks, on every node)."""
    payload = xp.where(disk_conflict, DISK_CONFLICT, READ_WRITE_ONCE_POD if claim_in_use else 0).astype(xp.int64)
    return xp.where(payload > 0, UNSCHEDULABLE, SUCCESS).astype(xp.int8), payload
