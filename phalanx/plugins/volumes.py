"""What the volume plugins (VolumeRestrictions, VolumeBinding, VolumeZone) share: the pod's volumes as they read
them, the API server's not-found wording, and their signature. Upstream: each plugin reads pod.Spec.Volumes itself
(component-helpers/storage/ephemeral for generic ephemeral volumes)."""
from __future__ import annotations

from dataclasses import dataclass

from ..cluster_models.objects import controlled_by
from .framework import PER_POD, Plugin

# In-tree sources VolumeRestrictions compares between pods on one node (needsRestrictionsCheck).
DISK_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")
# Volume sources backed by a PersistentVolumeClaim.
CLAIM_SOURCES = ("persistentVolumeClaim", "ephemeral")
# Every volume source a volume plugin reads.
READ_SOURCES = (*CLAIM_SOURCES, *DISK_SOURCES)
UNDESCRIBED = "the input describes no storage: no PersistentVolume, PersistentVolumeClaim or StorageClass; ignored"


@dataclass(frozen=True)
class ClaimVolume:
    """A pod volume backed by a PersistentVolumeClaim: a persistentVolumeClaim source, or a generic ephemeral one
    (its claim is named `<pod>-<volume>`, made by the ephemeral volume controller and owned by the pod)."""
    claim: str
    ephemeral: bool


def claim_volumes(pod, ephemeral: bool = True) -> list[ClaimVolume]:
    """The pod's claim-backed volumes in spec order; `ephemeral` False: persistentVolumeClaim sources only (what
    VolumeRestrictions and VolumeZone read)."""
    out = []
    for volume in pod.spec.volumes:
        source = volume.get("persistentVolumeClaim")
        if isinstance(source, dict):
            out.append(ClaimVolume(str(source.get("claimName", "")), False))
        elif ephemeral and isinstance(volume.get("ephemeral"), dict):
            out.append(ClaimVolume(f"{pod.metadata.name}-{volume.get('name', '')}", True))
    return out


def not_found(resource: str, name: str) -> str:
    """apierrors.NewNotFound(...).Error() for a lister's miss: `persistentvolumeclaim "x" not found`."""
    return f'{resource} "{name}" not found'


def not_for_pod(claim, pod) -> str | None:
    """ephemeral.VolumeIsForPod: a generic ephemeral volume's claim must be controlled by the pod."""
    if controlled_by(claim, "Pod", "", pod.metadata):
        return None
    return (f"PVC {claim.metadata.namespace}/{claim.metadata.name} was not created for pod "
            f"{pod.metadata.namespace}/{pod.metadata.name} (pod is not owner)")


def reads_volumes(spec, sources: tuple[str, ...] = READ_SOURCES) -> bool:
    """Whether the spec has a volume of one of `sources` (default: one a volume plugin reads)."""
    volumes = spec.volumes          # (most pods have none: asked of every pod by each volume plugin at intake)
    return bool(volumes) and any(source in volume for volume in volumes for source in sources)


def volume_signature(pod):
    """A pod with volumes the plugins read is a shape of its own: which claims it names depends on its namespace (and
    an ephemeral one's on its name), and every copy changes what the next one finds (claims bound, volumes taken,
    disks in use), so such pods are never batched (upstream's VolumeZone signs pods by their volumes alone, and
    VolumeBinding and VolumeRestrictions make them unsignable)."""
    return pod.key if reads_volumes(pod.spec) else None


class VolumePlugin(Plugin):
    """What the three volume plugins declare alike: they read no requests, sign pods with volumes as shapes of their
    own, and move pod by pod (claims bound, volumes taken and disks used change with every copy placed; their state
    is the host's VolumeBook)."""
    reads_requests = False

    def signs(self, spec) -> bool:
        return reads_volumes(spec)

    def signature(self, pod):
        return volume_signature(pod)

    def filter_behaviour(self, state):
        return PER_POD

    def host_only(self) -> bool:
        return True

    def warnings(self, pod, cluster) -> list[str]:
        """Claim-backed volumes are not evaluated when the input describes no storage (docs/semantics.md "Volumes");
        the three plugins say it in the same words, reported once."""
        volumes = pod.spec.volumes
        if not volumes or cluster.volumes.described:
            return []
        sources = sorted({source for volume in volumes for source in CLAIM_SOURCES if source in volume})
        return [f"volumes {', '.join(sources)} ({UNDESCRIBED})"] if sources else []
