"""The storage state the volume plugins read and VolumeBinding's Reserve changes (VolumeBook): PersistentVolumes,
PersistentVolumeClaims, StorageClasses, CSINodes, CSIDrivers, CSIStorageCapacities and VolumeAttachments of the
input, with the scheduler's own bindings on top, as upstream's volume binder keeps its PV and PVC assume caches over
the informers' objects.

Reserve binds a claim to the volume chosen for it (the PV's claimRef and the claim's volumeName, bind completed:
phalanx's PreBind cannot fail, so the PV controller's work is done at once), or records the node chosen to
provision it on (the claim's volume.kubernetes.io/selected-node). Unreserve undoes one pod's changes exactly, in a
cycle or for a pod rejected at Permit; bindings outlive the pods bound with them, as a bound claim outlives its pod
upstream.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from ..cluster_models.storage import (BETA_STORAGE_CLASS, CSIDriver, CSINode, CSIStorageCapacity, PersistentVolume,
                                      PersistentVolumeClaim, StorageClass, VolumeAttachment, default_class)


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
    csi_drivers: dict[str, CSIDriver] = field(default_factory=dict)            # driver name -> CSIDriver
    capacities: tuple[CSIStorageCapacity, ...] = ()                            # input order
    attachments: tuple[VolumeAttachment, ...] = ()                             # input order
    # Whether the input holds any PV, PVC or StorageClass: without, claim-backed volumes are not evaluated
    # (docs/semantics.md "Volumes": cluster dumps and manifests often leave storage out).
    described: bool = False
    # The scheduler's changes over the input objects (upstream's assumed PVs and PVCs).
    claim_of: dict[str, str] = field(default_factory=dict)        # PV name -> claim key it was bound to here
    volume_of: dict[str, str] = field(default_factory=dict)       # claim key -> PV name it was bound to here
    selected: dict[str, str] = field(default_factory=dict)        # claim key -> node chosen to provision it on
    # Pod key -> what its Reserve changed, kept while the pod may still be rejected at Permit (upstream then runs
    # Unreserve, which reverts it); dropped when the pod leaves.
    assumed: dict[str, VolumeUndo] = field(default_factory=dict)
    _memo: dict = field(default_factory=dict, repr=False)          # name -> (stamp, value): see remembered
    # The binding log's pods with any volume, as (log row, node id, pod), brought up to date by reading only the
    # entries recorded since `_seen` (of the log of `_log_of`, cut back `_cuts` times so far).
    _volume_rows: list = field(default_factory=list, repr=False)
    _log_of: object = field(default=None, repr=False)
    _seen: int = 0
    _cuts: int = 0

    def remembered(self, name: str, tensors, make):
        """make(), kept under `name` while the binding log of `tensors` stays as it was: what a plugin derives from
        the bound pods once per binding-log state rather than once per cycle."""
        stamp = (id(tensors), tensors.log_mark(), tensors.removals(), len(tensors.truncations))
        hit = self._memo.get(name)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        value = make()
        self._memo[name] = (stamp, value)
        return value

    def volume_pods(self, tensors) -> list[tuple[int, object]]:
        """(node id, pod) of the pods bound now that have any volume, in binding order. The log is read once: each
        call reads the entries recorded since the last (the volume plugins' PreFilters would otherwise walk every
        bound pod for each pod with volumes)."""
        pods, nodes, removed = tensors.log()
        if self._log_of is not tensors:
            self._volume_rows, self._log_of, self._seen, self._cuts = [], tensors, 0, 0
        if self._cuts < len(tensors.truncations):          # entries past the lowest new cut are gone
            mark = min(tensors.truncations[self._cuts:])
            self._volume_rows = [entry for entry in self._volume_rows if entry[0] < mark]
            self._seen, self._cuts = min(self._seen, mark), len(tensors.truncations)
        for row in range(self._seen, len(pods)):
            if pods[row].spec.volumes:
                self._volume_rows.append((row, pods[row]))
        self._seen = len(pods)
        return [(int(nodes[row]), pod) for row, pod in self._volume_rows if row not in removed]

    @classmethod
    def from_objects(cls, objects, made: list[PersistentVolumeClaim] = ()) -> "VolumeBook":
        """The input's storage objects and the claims its controllers made (`made`: StatefulSets'); whether storage is
        described is the input's alone."""
        book = cls(classes={c.name: c for c in objects.storage_classes},
                   csi_nodes={c.metadata.name: c for c in objects.csi_nodes},
                   csi_drivers={d.name: d for d in objects.csi_drivers},
                   capacities=tuple(objects.csi_storage_capacities),
                   attachments=tuple(objects.volume_attachments),
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
        return VolumeBook(self.volumes, self.claims, self.classes, self.csi_nodes, self.csi_drivers, self.capacities,
                          self.attachments, self.described, dict(self.claim_of), dict(self.volume_of),
                          dict(self.selected), dict(self.assumed))

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
        record = self.assumed[pod] = VolumeUndo(pod, tuple(bound), tuple(provisioned))
        return record

    def undo(self, record: VolumeUndo) -> None:
        for claim, volume in record.bound:
            del self.claim_of[volume]
            del self.volume_of[claim]
        for claim, _ in record.provisioned:
            del self.selected[claim]
        if self.assumed.get(record.pod) is record:
            del self.assumed[record.pod]

    def revert(self, pods) -> None:
        """Unreserve of pods rejected at Permit: what their Reserve changed, undone."""
        for pod in pods:
            record = self.assumed.get(pod)
            if record is not None:
                self.undo(record)

    def forget(self, pods) -> None:
        """The pods left after their bindings became final (they were bound): the bindings stay, as a bound claim
        outlives its pod."""
        for pod in pods:
            self.assumed.pop(pod, None)

    def replay(self, record: VolumeUndo) -> VolumeUndo:
        return self.assume(record.pod, list(record.bound), list(record.provisioned))

    def bindings(self) -> dict:
        """The scheduler's changes as JSON-ready data (a checkpoint's; claim_of is volume_of inverted)."""
        return {"volume_of": dict(self.volume_of), "selected": dict(self.selected),
                "assumed": {pod: [[list(b) for b in r.bound], [list(p) for p in r.provisioned]]
                            for pod, r in self.assumed.items()}}

    def bind_again(self, bindings: dict) -> str | None:
        """The changes `bindings` records, made again over the same storage objects; what does not fit them (a claim
        or volume this book lacks), else None."""
        for claim, volume in bindings["volume_of"].items():
            if claim not in self.claims or volume not in self.volumes:
                return f"claim {claim} was bound to volume {volume}: not in the input's storage objects"
        for claim in bindings["selected"]:
            if claim not in self.claims:
                return f"claim {claim} was to be provisioned: not in the input's storage objects"
        self.volume_of = dict(bindings["volume_of"])
        self.claim_of = {volume: claim for claim, volume in self.volume_of.items()}
        self.selected = dict(bindings["selected"])
        self.assumed = {pod: VolumeUndo(pod, tuple(map(tuple, bound)), tuple(map(tuple, provisioned)))
                        for pod, (bound, provisioned) in bindings["assumed"].items()}
        return None

    def state(self) -> tuple:
        """The scheduler's changes, as a value (tests compare it before and after a rollback)."""
        return copy.deepcopy((self.claim_of, self.volume_of, self.selected, self.assumed))
