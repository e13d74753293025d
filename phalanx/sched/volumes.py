"""The storage state the volume plugins read and VolumeBinding's Reserve changes (VolumeBook): PersistentVolumes,
PersistentVolumeClaims, StorageClasses and CSINodes of the input, with the scheduler's own bindings on top, as
upstream's volume binder keeps its PV and PVC assume caches over the informers' objects.

Reserve binds a claim to the volume chosen for it (the PV's claimRef and the claim's volumeName, bind completed:
phalanx's PreBind cannot fail, so the PV controller's work is done at once), or records the node chosen to
provision it on (the claim's volume.kubernetes.io/selected-node). Unreserve undoes one pod's changes exactly;
bindings outlive the pods that made them, as a bound claim outlives its pod upstream.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from ..cluster_models.storage import (BETA_STORAGE_CLASS, CSINode, PersistentVolume, PersistentVolumeClaim,
                                      StorageClass, default_class)


@dataclass(frozen=True)
class VolumeUndo:
    """What one pod's Reserve changed: the claims it bound (claim key, volume name) and those it chose a node to
    provision on (claim key, node name)."""
    pod: str
    bound: tuple[tuple[str, str], ...]
    provisioned: tuple[tuple[str, str], ...]


@dataclass
class VolumeBook:
    volumes: dict[str, PersistentVolume] = field(default_factory=dict)         # name -> PV, input order
    claims: dict[str, PersistentVolumeClaim] = field(default_factory=dict)     # "ns/name" -> PVC
    classes: dict[str, StorageClass] = field(default_factory=dict)
    csi_nodes: dict[str, CSINode] = field(default_factory=dict)                # node name -> CSINode
    # Whether the input holds any PV, PVC or StorageClass: without, claim-backed volumes are not evaluated
    # (docs/semantics.md "Volumes": cluster dumps and manifests often leave storage out).
    described: bool = False
    # The scheduler's changes over the input objects (upstream's assumed PVs and PVCs).
    claim_of: dict[str, str] = field(default_factory=dict)        # PV name -> claim key it was bound to here
    volume_of: dict[str, str] = field(default_factory=dict)       # claim key -> PV name it was bound to here
    selected: dict[str, str] = field(default_factory=dict)        # claim key -> node chosen to provision it on
    _memo: dict = field(default_factory=dict, repr=False)          # name -> (stamp, value): see remembered

    def remembered(self, name: str, stamp, make):
        """make(), kept under `name` while `stamp` (what the value was computed from) stays equal: what a plugin
        derives from the bound pods once per binding-log state rather than once per cycle."""
        hit = self._memo.get(name)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        value = make()
        self._memo[name] = (stamp, value)
        return value

    @classmethod
    def from_objects(cls, objects, made: list[PersistentVolumeClaim] = ()) -> "VolumeBook":
        """The input's storage objects and the claims its controllers made (`made`: StatefulSets'); whether storage is
        described is the input's alone."""
        book = cls(classes={c.name: c for c in objects.storage_classes},
                   csi_nodes={c.metadata.name: c for c in objects.csi_nodes},
                   volumes={pv.name: pv for pv in objects.persistent_volumes},
                   described=bool(objects.persistent_volumes or objects.persistent_volume_claims
                                  or objects.storage_classes))
        book.add_claims([*objects.persistent_volume_claims, *made])
        return book

    def add_claims(self, claims) -> None:
        """Claims created (read from the input, or made by a controller); one that names no class gets the default
        one, as the DefaultStorageClass admission plugin gives it when the claim is created."""
        default = default_class(list(self.classes.values()))
        for claim in claims:
            if default is not None and claim.spec.storage_class_name is None \
                    and BETA_STORAGE_CLASS not in claim.metadata.annotations:
                claim = claim.model_copy(update={"spec": claim.spec.model_copy(
                    update={"storage_class_name": default.name})})
            self.claims[claim.key] = claim

    def restricted(self) -> "VolumeBook":
        """A copy whose bindings change independently (a topology placement's or a dry run's cluster copy); the
        objects are shared."""
        return VolumeBook(self.volumes, self.claims, self.classes, self.csi_nodes, self.described,
                          dict(self.claim_of), dict(self.volume_of), dict(self.selected))

    # -- reads: the input objects with the scheduler's changes ---------------------------------------------
    def claim(self, key: str) -> PersistentVolumeClaim | None:
        return self.claims.get(key)

    def volume_name(self, claim: PersistentVolumeClaim) -> str:
        """spec.volumeName, or the volume bound here."""
        return self.volume_of.get(claim.key, claim.spec.volume_name)

    def fully_bound(self, claim: PersistentVolumeClaim) -> bool:
        return claim.key in self.volume_of or claim.fully_bound

    def selected_node(self, claim: PersistentVolumeClaim) -> str | None:
        """The node a claim is to be provisioned on (its selected-node annotation, or Reserve's), None if none."""
        return self.selected.get(claim.key, claim.metadata.annotations.get(
            "volume.kubernetes.io/selected-node"))

    def claim_ref(self, pv: PersistentVolume) -> tuple[str, str, str] | None:
        """(namespace, name, uid) of the claim a volume is bound or pre-bound to, None if none."""
        key = self.claim_of.get(pv.name)
        if key is not None:
            claim = self.claims[key]
            return claim.metadata.namespace, claim.metadata.name, claim.metadata.uid
        ref = pv.spec.claim_ref
        return None if ref is None else (ref.namespace, ref.name, ref.uid)

    def volumes_of_class(self, name: str) -> list[PersistentVolume]:
        """pvCache.ListPVs: the volumes of a storage class, in input order (upstream: the cache index's order)."""
        return [pv for pv in self.volumes.values() if pv.storage_class == name]

    # -- Reserve / Unreserve ------------------------------------------------------------------------------
    def assume(self, pod: str, bound: list[tuple[str, str]], provisioned: list[tuple[str, str]]) -> VolumeUndo:
        """Bind each (claim, volume) of `bound`, select the node of each (claim, node) of `provisioned` (a claim
        selected for that node already is left as it is: the record undoes only what this pod changed)."""
        provisioned = [(claim, node) for claim, node in provisioned
                       if self.selected_node(self.claims[claim]) != node]
        for claim, volume in bound:
            self.claim_of[volume] = claim
            self.volume_of[claim] = volume
        for claim, node in provisioned:
            self.selected[claim] = node
        return VolumeUndo(pod, tuple(bound), tuple(provisioned))

    def undo(self, record: VolumeUndo) -> None:
        for claim, volume in record.bound:
            del self.claim_of[volume]
            del self.volume_of[claim]
        for claim, _ in record.provisioned:
            del self.selected[claim]

    def replay(self, record: VolumeUndo) -> VolumeUndo:
        return self.assume(record.pod, list(record.bound), list(record.provisioned))

    def state(self) -> tuple:
        """The scheduler's changes, as a value (tests compare it before and after a rollback)."""
        return copy.deepcopy((self.claim_of, self.volume_of, self.selected))
