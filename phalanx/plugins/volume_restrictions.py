"""VolumeRestrictions: a pod may not use an in-tree disk (GCE PD, AWS EBS, RBD, iSCSI) that a pod on the node uses
(unless both mount it read-only, where the source allows that), nor a ReadWriteOncePod claim that any scheduled pod
uses. Upstream: pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go (v1.36.0).

PreFilter reads the pod's persistentVolumeClaim sources (a missing claim rejects the pod) and counts its
ReadWriteOncePod claims used by pods on nodes (the snapshot's IsPVCUsedByPods); without disks and without such a
conflict the plugin is skipped. Filter fails a node with a disk conflict, then every node while a claim conflicts
(Unschedulable both: preemption can help).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cluster_models.storage import READ_WRITE_ONCE_POD
from ..kernels.volume_restrictions import DISK_CONFLICT, volume_restrictions_filter
from .framework import NODE_ADDED, POD_DELETED, SKIP, Rejection
from .volumes import DISK_SOURCES, VolumePlugin, claim_volumes, not_found

DISK_REASON = "node(s) had no available disk"
READ_WRITE_ONCE_POD_REASON = ("node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod "
                              "access mode")


def _disks(pod) -> list[dict]:
    return [v for v in pod.spec.volumes if any(source in v for source in DISK_SOURCES)]


def _read_only(source: dict) -> bool:
    return source.get("readOnly") is True


def disk_conflict(volume: dict, other: dict) -> bool:
    """isVolumeConflict for one volume of each pod: the same GCE PD (unless both read-only), the same EBS volume,
    the same iSCSI IQN (unless both read-only), an RBD image of the same pool with a monitor in common (unless both
    read-only)."""
    for source in DISK_SOURCES:
        a, b = volume.get(source), other.get(source)
        if not isinstance(a, dict) or not isinstance(b, dict):
            continue
        both_read_only = _read_only(a) and _read_only(b)
        if source == "gcePersistentDisk" and a.get("pdName") == b.get("pdName") and not both_read_only:
            return True
        if source == "awsElasticBlockStore" and a.get("volumeID") == b.get("volumeID"):
            return True
        if source == "iscsi" and a.get("iqn") == b.get("iqn") and not both_read_only:
            return True
        if source == "rbd" and set(a.get("monitors") or ()) & set(b.get("monitors") or ()) \
                and a.get("pool", "rbd") == b.get("pool", "rbd") and a.get("image") == b.get("image") \
                and not both_read_only:
            return True
    return False


@dataclass(frozen=True)
class PodVolumeUse:
    """What the pods on nodes use (a snapshot's PVCRefCounts and its pods' disks): claim keys with their users'
    count, and (node id, disk volumes) of every pod with a disk."""
    claims: dict[str, int]
    disks: list[tuple[int, list[dict]]]


def pod_volume_use(book, tensors) -> PodVolumeUse:
    claims: dict[str, int] = {}
    disks = []
    for node, pod in book.volume_pods(tensors):
        for volume in claim_volumes(pod, ephemeral=False):
            key = f"{pod.metadata.namespace}/{volume.claim}"
            claims[key] = claims.get(key, 0) + 1
        found = _disks(pod)
        if found:
            disks.append((node, found))
    return PodVolumeUse(claims, disks)


@dataclass(frozen=True)
class RestrictionsState:
    disk_conflict: np.ndarray      # (N,) bool over node ids
    claim_in_use: bool             # conflictingPVCRefCount > 0


class VolumeRestrictions(VolumePlugin):
    name = "VolumeRestrictions"
    events = frozenset({POD_DELETED, NODE_ADDED})

    def pre_filter(self, pod, cluster):
        pod = pod.pod
        book = cluster.volumes
        namespace = pod.metadata.namespace
        exclusive = []
        for volume in claim_volumes(pod, ephemeral=False) if book.described else ():
            claim = book.claim(f"{namespace}/{volume.claim}")
            if claim is None:
                return Rejection(not_found("persistentvolumeclaim", volume.claim))
            if READ_WRITE_ONCE_POD in claim.spec.access_modes:
                exclusive.append(claim.key)
        disks = _disks(pod)
        if not disks and not exclusive:
            return SKIP
        tensors = cluster.tensors
        use = book.remembered(self.name, tensors, lambda: pod_volume_use(book, tensors))
        claim_in_use = any(use.claims.get(key, 0) for key in dict.fromkeys(exclusive))
        if not disks and not claim_in_use:
            return SKIP
        conflict = np.zeros(tensors.nodes.size, bool)
        for node, others in use.disks:
            if not conflict[node] and any(disk_conflict(v, o) for v in disks for o in others):
                conflict[node] = True
        return RestrictionsState(conflict, claim_in_use)

    def hint(self, event, pod, objects, cluster) -> bool:
        """isSchedulableAfterPodDeleted (v1.36): a pod of the same namespace left that used a disk clashing with one
        of the pod's, or a claim the pod names (whose ReadWriteOncePod use it may have held; upstream does not read
        the claim's access modes here). A node added may always help (registered without a hint)."""
        if event != POD_DELETED or objects is None:
            return True
        disks = _disks(pod)
        claims = {volume.claim for volume in claim_volumes(pod, ephemeral=False)}
        for other in objects:
            if other.metadata.namespace != pod.metadata.namespace:
                continue
            if any(disk_conflict(mine, theirs) for mine in disks for theirs in _disks(other)):
                return True
            if claims & {volume.claim for volume in claim_volumes(other, ephemeral=False)}:
                return True
        return False

    def filter(self, xp, state, tensors):
        rows = tensors.node_rows
        conflict = state.disk_conflict if rows is None else state.disk_conflict[rows]
        return volume_restrictions_filter(xp, xp.asarray(conflict), state.claim_in_use)

    def reasons(self, payload, tensors):
        return [DISK_REASON if payload == DISK_CONFLICT else READ_WRITE_ONCE_POD_REASON]
