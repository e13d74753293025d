"""NodeVolumeLimits: a node takes no more volumes of a CSI driver than its CSINode allows
(spec.drivers[].allocatable.count). Upstream: pkg/scheduler/framework/plugins/nodevolumelimits/csi.go (the
k8s.io/kube-scheduler/framework era of v1.36: CSILimits with its VolumeAttachment indexer).

PreFilter skips a pod without claim-backed volumes (persistentVolumeClaim or generic ephemeral). Filter, per node:
the pod's volumes are keyed by driver and volume handle (a bound claim's CSI PersistentVolume), or, for a claim not
bound yet (or bound to a volume that does not exist), by the provisioner of its class and the claim itself; volumes
the node's pods already use are not new; for each driver with a limit on the node, the volumes in use plus the new
ones must not exceed it (Unschedulable: removing pods can help). In use are the node's pods' volumes and the
volumes VolumeAttachments attach to the node (getNodeVolumeAttachmentInfo: those with an attacher and a CSI
PersistentVolume that exists, keyed by attacher and the volume's handle, whatever their status), an attachment
of a volume a pod there uses counted once; a volume of the pod that only an attachment holds stays new, so it
counts twice, as upstream counts it. A node without a CSINode, or whose CSINode gives no count for a driver, has no
limit for it. A claim of the pod that does not exist fails every node (UnschedulableAndUnresolvable: `looking up
PVC ns/name: persistentvolumeclaim "name" not found`; in the default profile VolumeRestrictions' and
VolumeBinding's PreFilters reject such a pod first), one of a pod on the node is not counted; a claim with no name,
or an ephemeral volume's claim the pod does not own, is the Filter's Error.

Not modelled (docs/semantics.md "Volumes"): in-tree volumes and in-tree provisioners translated to their CSI
drivers (CSI migration: such volumes are not counted, nor is a class whose provisioner is an in-tree plugin name, as
no CSINode limits a driver of that name; nor are VolumeAttachments of inline volumes, which upstream passes over
too), the VolumeLimitScaling gate's CSIDriver check (alpha, off), and deferred resizes
(InPlacePodVerticalScalingSchedulerPreemption, alpha, off).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels.status import ERROR, SUCCESS, UNSCHEDULABLE, UNSCHEDULABLE_AND_UNRESOLVABLE
from .framework import NOMINATED_POD_DELETED, POD_DELETED, SKIP
from .volumes import CLAIM_SOURCES, VolumePlugin, claim_volumes, not_for_pod, not_found, reads_volumes

REASON = "node(s) exceed max volume count"      # ErrReasonMaxVolumeCountExceeded
NO_NAME = "PersistentVolumeClaim had no name"
# The reasons of a pod whose claim does not exist (`looking up PVC ...`), by payload: reason texts are looked up by
# payload alone (Plugin.reasons), so each text gets one payload for good; payload 0 is REASON.
_MISSING_CLAIM_REASONS: dict[str, int] = {}


@dataclass(frozen=True)
class AttachableVolume:
    """One volume as the plugin counts it (upstream's "driver/handle" unique name): a bound claim's CSI volume by its
    handle, a claim not bound yet by the claim itself (upstream: a random prefix with the claim's key, which no
    real handle can equal)."""
    driver: str
    handle: str
    unbound_claim: str = ""


@dataclass(frozen=True)
class VolumeError:
    """What stops the count of a pod's volumes: the pod being scheduled names a claim that does not exist
    (`missing`: the reason, UnschedulableAndUnresolvable on every node), or an Error message."""
    missing: str = ""
    error: str = ""


def csi_volume(claim, book) -> AttachableVolume | None:
    """getCSIDriverInfo / getCSIDriverInfoFromSC: the CSI volume a claim uses, None when it counts for no driver
    (a volume that is not CSI, a claim of no class or of a class that does not exist, an empty driver or handle)."""
    pv = book.volumes.get(book.volume_name(claim))
    if pv is not None:
        source = pv.spec.csi
        if source is None or not source.driver or not source.volume_handle:
            return None
        return AttachableVolume(source.driver, source.volume_handle)
    storage_class = book.classes.get(claim.storage_class) if claim.storage_class else None
    if storage_class is None:
        return None                     # upstream: an Immediate claim, bound before scheduling
    return AttachableVolume(storage_class.provisioner, "", claim.key)


def attachable_volumes(pod, book, new_pod: bool) -> dict[AttachableVolume, None] | VolumeError:
    """filterAttachableVolumes: the pod's CSI volumes, in volume order. For the pod being scheduled a missing claim
    rejects it; for a pod on the node it is not counted."""
    out: dict[AttachableVolume, None] = {}
    namespace = pod.metadata.namespace
    for volume in claim_volumes(pod):
        if not volume.claim:
            return VolumeError(error=NO_NAME)
        claim = book.claim(f"{namespace}/{volume.claim}")
        if claim is None:
            if new_pod:
                return VolumeError(missing=f"looking up PVC {namespace}/{volume.claim}: "
                                           f"{not_found('persistentvolumeclaim', volume.claim)}")
            continue
        if volume.ephemeral:
            problem = not_for_pod(claim, pod)
            if problem is not None:
                return VolumeError(error=problem)
        found = csi_volume(claim, book)
        if found is not None:
            out[found] = None
    return out


def driver_limits(book, tensors) -> dict[str, np.ndarray]:
    """getVolumeLimits of every node: CSI driver -> (N,) int64 its count on each node id (-1: no limit there)."""
    n = tensors.nodes.size
    out: dict[str, np.ndarray] = {}
    for name, csi_node in book.csi_nodes.items():
        node = tensors.node_index.get(name)
        if node is None:
            continue
        for driver in csi_node.spec.drivers:
            if driver.allocatable is not None and driver.allocatable.count is not None:
                out.setdefault(driver.name, np.full(n, -1, np.int64))[node] = driver.allocatable.count
    return out


def attached_volumes(book, tensors) -> dict[int, dict[AttachableVolume, None]]:
    """getNodeVolumeAttachmentInfo of every node: node id -> the volumes its VolumeAttachments attach, keyed as
    the pods' volumes are (an attachment without a PersistentVolume name, or whose volume does not exist or is not
    CSI, is passed over; the attacher names the driver)."""
    out: dict[int, dict[AttachableVolume, None]] = {}
    for attachment in book.attachments:
        node = tensors.node_index.get(attachment.spec.node_name)
        pv = book.volumes.get(attachment.spec.source.persistent_volume_name or "")
        if node is None or pv is None or pv.spec.csi is None:
            continue
        out.setdefault(node, {})[AttachableVolume(attachment.spec.attacher, pv.spec.csi.volume_handle)] = None
    return out


def uses_claims(pod) -> bool:
    """Whether the pod has a claim-backed volume (the only kind whose volumes this plugin counts)."""
    return reads_volumes(pod.spec, CLAIM_SOURCES)


def pods_with_claims(book, tensors) -> dict[int, list]:
    """Node id -> the pods on it with claim-backed volumes (nodeInfo.GetPods)."""
    out: dict[int, list] = {}
    for node, pod in book.volume_pods(tensors):
        if uses_claims(pod):
            out.setdefault(node, []).append(pod)
    return out


@dataclass(frozen=True)
class LimitsVerdict:
    """Filter's answer on every node, worked out at PreFilter: status codes, payloads (an index into `errors` where
    the code is ERROR) and the Error messages."""
    code: np.ndarray               # (N,) int8 over node ids
    payload: np.ndarray            # (N,) int64
    errors: tuple[str, ...]


class NodeVolumeLimits(VolumePlugin):
    name = "NodeVolumeLimits"
    # AssignedPod Delete (isSchedulableAfterAssignedPodDeleted). CSINode, PersistentVolumeClaim and VolumeAttachment
    # events do not happen in phalanx: storage objects come from the input (VolumeAttachments are not deleted).
    events = frozenset({POD_DELETED, NOMINATED_POD_DELETED})
    # (the CSINodes and VolumeAttachments, the tensors, their node count, driver_limits and attached_volumes of them)
    _limits_of: tuple | None = None

    def pre_filter(self, pod, cluster):
        book = cluster.volumes
        if not book.described or not claim_volumes(pod.pod):
            return SKIP
        tensors = cluster.tensors
        n = tensors.nodes.size
        code, payload, errors = np.full(n, SUCCESS, np.int8), np.zeros(n, np.int64), []
        new = attachable_volumes(pod.pod, book, new_pod=True)
        if isinstance(new, VolumeError) and new.missing:
            missing = _MISSING_CLAIM_REASONS.setdefault(new.missing, len(_MISSING_CLAIM_REASONS) + 1)
            return LimitsVerdict(np.full(n, UNSCHEDULABLE_AND_UNRESOLVABLE, np.int8), np.full(n, missing, np.int64), ())
        if isinstance(new, VolumeError):
            return LimitsVerdict(np.full(n, ERROR, np.int8), payload, (new.error,))
        if not new:
            return LimitsVerdict(code, payload, ())
        limits, attached = self._limits(book, tensors)
        # A node with no pod using a claim and no attachment has nothing in use: every one of the pod's volumes is
        # new there.
        wanted: dict[str, int] = {}
        for volume in new:
            wanted[volume.driver] = wanted.get(volume.driver, 0) + 1
        over = np.zeros(n, bool)
        for driver, count in wanted.items():
            if driver in limits:
                over |= (limits[driver] >= 0) & (limits[driver] < count)
        code[over] = UNSCHEDULABLE
        on_node = book.remembered(self.name, tensors, lambda: pods_with_claims(book, tensors))
        for node in on_node.keys() | attached.keys():
            node_limits = {driver: int(count[node]) for driver, count in limits.items() if count[node] >= 0}
            if not node_limits:
                continue
            in_use: dict[AttachableVolume, None] = {}
            for other in on_node.get(node, ()):
                found = attachable_volumes(other, book, new_pod=False)
                if isinstance(found, VolumeError):
                    code[node], payload[node] = ERROR, len(errors)
                    errors.append(found.error)
                    break
                in_use.update(found)
            else:
                code[node] = UNSCHEDULABLE if exceeds(new, in_use, attached.get(node, {}), node_limits) else SUCCESS
        return LimitsVerdict(code, payload, tuple(errors))

    def _limits(self, book, tensors) -> tuple[dict[str, np.ndarray], dict[int, dict[AttachableVolume, None]]]:
        """driver_limits and attached_volumes, made once per node table (CSINodes and VolumeAttachments come from
        the input)."""
        made = self._limits_of
        if made is None or made[0] is not book.csi_nodes or made[1] is not book.attachments \
                or made[2] is not tensors or made[3] != tensors.nodes.size:
            self._limits_of = made = (book.csi_nodes, book.attachments, tensors, tensors.nodes.size,
                                      driver_limits(book, tensors), attached_volumes(book, tensors))
        return made[4], made[5]

    def filter(self, xp, state, tensors):
        rows = tensors.node_rows
        code, payload = (state.code, state.payload) if rows is None else (state.code[rows], state.payload[rows])
        return xp.asarray(code), xp.asarray(payload)

    def filter_errors(self, state):
        return state.errors

    def reasons(self, payload, tensors):
        if payload:
            return [next(text for text, index in _MISSING_CLAIM_REASONS.items() if index == payload)]
        return [REASON]

    def hint(self, event, pod, objects, cluster) -> bool:
        """isSchedulableAfterAssignedPodDeleted (v1.36): the pod that left used a claim-backed volume."""
        if objects is None:
            return True
        return any(uses_claims(other) for other in objects)


def exceeds(new: dict[AttachableVolume, None], in_use: dict[AttachableVolume, None],
            attached: dict[AttachableVolume, None], limits: dict[str, int]) -> bool:
    """Whether, for some driver with a limit, the volumes in use (the pods', then the attachments' the pods do not
    use) plus the pod's volumes the pods do not use yet pass it."""
    in_use_count: dict[str, int] = {}
    for volume in [*in_use, *(v for v in attached if v not in in_use)]:
        in_use_count[volume.driver] = in_use_count.get(volume.driver, 0) + 1
    new_count: dict[str, int] = {}
    for volume in new:
        if volume not in in_use:
            new_count[volume.driver] = new_count.get(volume.driver, 0) + 1
    return any(driver in limits and in_use_count.get(driver, 0) + count > limits[driver]
               for driver, count in new_count.items())
