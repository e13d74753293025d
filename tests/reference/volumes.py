"""Plain reference versions of the volume plugins: VolumeRestrictions, VolumeBinding and VolumeZone (v1.36.0), one
pod and one node at a time, over a `Storage` (the input's PersistentVolumes, PersistentVolumeClaims and
StorageClasses, and what the scheduler bound since).

Upstream sources:
  pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go
  pkg/scheduler/framework/plugins/volumebinding/{volume_binding.go,binder.go} (GetPodVolumeClaims,
      GetEligibleNodes, FindPodVolumes, checkBoundClaims, findMatchingVolumes, checkVolumeProvisions,
      hasEnoughCapacity, capacitySufficient, volumeLimit, nodeHasAccess)
  pkg/scheduler/framework/plugins/nodevolumelimits/csi.go (Filter, filterAttachableVolumes,
      getNodeVolumeAttachmentInfo)
  pkg/scheduler/framework/plugins/volumezone/volume_zone.go
  staging/src/k8s.io/component-helpers/storage/volume/{helpers.go,pv_helpers.go} (FindMatchingVolume,
      CheckNodeAffinity, IsVolumeBoundToClaim, GetPersistentVolume(Claim)Class, IsDelayBindingMode)
  staging/src/k8s.io/component-helpers/storage/ephemeral/ephemeral.go
  pkg/scheduler/util/utils.go (GetLocalPersistentVolumeNodeNames)
  plugin/pkg/admission/storage/storageclass/setdefault (the default class a claim without one gets)

What the scheduler changes is kept as the state after PreBind and the PV controller: a claim a pod was bound with is
fully bound to the chosen volume, and one to provision carries the selected node (phalanx models the same).
`None` for the storage: the input describes none (no PV, PVC or StorageClass), and claim-backed volumes are not
evaluated (phalanx's documented rule, docs/semantics.md "Volumes"); in-tree disks still are.

Like the rest of the reference this never imports phalanx.kernels, phalanx.plugins or phalanx.sched.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from types import SimpleNamespace

from . import plugins as P

BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
BETA_CLASS = "volume.beta.kubernetes.io/storage-class"
DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
WAIT = "WaitForFirstConsumer"

REASON_DISK = "node(s) had no available disk"
REASON_RWOP = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
REASON_NODE_CONFLICT = "node(s) had volume node affinity conflict"
REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
REASON_ZONE = "node(s) had no available volume zone"
ZONE_LABELS = ("failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
               "topology.kubernetes.io/zone", "topology.kubernetes.io/region")
GA_LABEL = {"failure-domain.beta.kubernetes.io/zone": "topology.kubernetes.io/zone",
            "failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region"}


def _quantity(text) -> Fraction:
    """A storage quantity, exact (the reference's own decoder: binary and decimal suffixes, plain numbers)."""
    text = str(text)
    suffixes = {"Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "k": 10 ** 3, "M": 10 ** 6,
                "G": 10 ** 9, "T": 10 ** 12, "m": Fraction(1, 1000)}
    for suffix, factor in suffixes.items():
        if text.endswith(suffix):
            return Fraction(text[: -len(suffix)]) * factor
    return Fraction(text)


@dataclass
class Storage:
    volumes: dict                                      # PV name -> PV, input order
    claims: dict                                       # "ns/name" -> PVC (admission's default class given)
    classes: dict                                      # name -> StorageClass
    bound: dict = field(default_factory=dict)          # claim key -> PV name: bound by the scheduler
    selected: dict = field(default_factory=dict)       # claim key -> node name: to provision there
    limits: dict = field(default_factory=dict)         # node name -> {CSI driver: its attach limit} (CSINodes)
    tracking: set = field(default_factory=set)         # CSI drivers whose CSIDriver sets storageCapacity
    capacities: list = field(default_factory=list)     # CSIStorageCapacity objects
    attached: dict = field(default_factory=dict)       # node name -> {(attacher, volume handle)} (VolumeAttachments)

    @classmethod
    def from_objects(cls, pvs, pvcs, classes, csi_nodes=(), csi_drivers=(), capacities=(),
                     attachments=()) -> "Storage | None":
        if not pvs and not pvcs and not classes:
            return None
        marked = [c for c in classes if c.metadata.annotations.get(DEFAULT_CLASS) == "true"]
        default = None
        if marked:      # the newest marked class, then the lowest name
            marked.sort(key=lambda c: (c.metadata.creation_timestamp or "", _neg(c.metadata.name)), reverse=True)
            default = marked[0].metadata.name
        claims = {}
        for pvc in pvcs:
            if default is not None and pvc.spec.storage_class_name is None \
                    and BETA_CLASS not in pvc.metadata.annotations:
                pvc = pvc.model_copy(update={"spec": pvc.spec.model_copy(update={"storage_class_name": default})})
            claims[f"{P.pod_namespace(pvc)}/{pvc.metadata.name}"] = pvc
        limits = {n.metadata.name: {d.name: d.allocatable.count for d in n.spec.drivers
                                    if d.allocatable is not None and d.allocatable.count is not None}
                  for n in csi_nodes}
        volumes = {pv.metadata.name: pv for pv in pvs}
        attached = {}
        for va in attachments:      # getNodeVolumeAttachmentInfo: an attacher and a CSI volume that exists
            pv = volumes.get(va.spec.source.persistent_volume_name or "")
            if va.spec.attacher and pv is not None and pv.spec.csi is not None:
                attached.setdefault(va.spec.node_name, set()).add((va.spec.attacher, pv.spec.csi.volume_handle))
        return cls(volumes, claims, {c.metadata.name: c for c in classes}, limits=limits,
                   tracking={d.metadata.name for d in csi_drivers if d.spec.storage_capacity},
                   capacities=list(capacities), attached=attached)

    # reads over the input and the scheduler's changes
    def claim_class(self, pvc) -> str:
        if BETA_CLASS in pvc.metadata.annotations:
            return pvc.metadata.annotations[BETA_CLASS]
        return pvc.spec.storage_class_name or ""

    @staticmethod
    def volume_class(pv) -> str:
        return pv.metadata.annotations.get(BETA_CLASS, pv.spec.storage_class_name)

    @staticmethod
    def key(pvc) -> str:
        return f"{P.pod_namespace(pvc)}/{pvc.metadata.name}"

    def volume_name(self, pvc) -> str:
        return self.bound.get(self.key(pvc), pvc.spec.volume_name)

    def fully_bound(self, pvc) -> bool:
        return self.key(pvc) in self.bound or (bool(pvc.spec.volume_name)
                                               and BIND_COMPLETED in pvc.metadata.annotations)

    def selected_node(self, pvc):
        return self.selected.get(self.key(pvc), pvc.metadata.annotations.get(SELECTED_NODE))

    def claim_ref(self, pv):
        """(namespace, name, uid) of the claim the volume is bound or pre-bound to, else None."""
        for key, name in self.bound.items():
            if name == pv.metadata.name:
                claim = self.claims[key]
                return P.pod_namespace(claim), claim.metadata.name, claim.metadata.uid
        ref = pv.spec.claim_ref
        return None if ref is None else (ref.namespace, ref.name, ref.uid)

    def enough_capacity(self, pvc, sc, node) -> bool:
        """hasEnoughCapacity: a provisioner without a capacity-tracking CSIDriver always has room; otherwise some
        CSIStorageCapacity of the class, whose maximumVolumeSize (else capacity), in whole bytes rounded up, holds
        the request's, and whose nodeTopology (none: no node) selects the node."""
        if sc.provisioner not in self.tracking:
            return True
        size = math.ceil(_quantity(pvc.spec.resources.requests["storage"]))
        for cap in self.capacities:
            raw = cap.maximum_volume_size if cap.maximum_volume_size is not None else cap.capacity
            if cap.storage_class_name != sc.metadata.name or raw is None or math.ceil(_quantity(raw)) < size:
                continue
            if cap.node_topology is not None and \
                    P.label_selector_as_selector(cap.node_topology).matches(P.node_labels(node)):
                return True
        return False

    def delayed(self, pvc) -> bool:
        """IsDelayBindingMode: a class of the claim's name that binds WaitForFirstConsumer (no class, or one not
        found: immediate)."""
        name = self.claim_class(pvc)
        sc = self.classes.get(name) if name else None
        return sc is not None and sc.volume_binding_mode == WAIT


def _neg(name: str):
    """A sort key that orders names descending (the default class: the newest, then the lowest name)."""
    return tuple(-ord(c) for c in name) + (0,)


# --------------------------------------------------------------------------------------------------------------
# the pod's volumes
# --------------------------------------------------------------------------------------------------------------
DISKS = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


def _claim_names(pod, ephemeral: bool):
    """(claim name, is ephemeral) per claim-backed volume, in spec order."""
    out = []
    for v in pod.spec.volumes:
        if isinstance(v.get("persistentVolumeClaim"), dict):
            out.append((str(v["persistentVolumeClaim"].get("claimName", "")), False))
        elif ephemeral and isinstance(v.get("ephemeral"), dict):
            out.append((f"{pod.metadata.name}-{v.get('name', '')}", True))
    return out


def _conflict(v: dict, existing: dict) -> bool:
    """isVolumeConflict for one volume of the pod against one of an existing pod."""
    def ro(src):
        return src.get("readOnly") is True
    a, b = v.get("gcePersistentDisk"), existing.get("gcePersistentDisk")
    if isinstance(a, dict) and isinstance(b, dict) and a.get("pdName") == b.get("pdName") and not (ro(a) and ro(b)):
        return True
    a, b = v.get("awsElasticBlockStore"), existing.get("awsElasticBlockStore")
    if isinstance(a, dict) and isinstance(b, dict) and a.get("volumeID") == b.get("volumeID"):
        return True
    a, b = v.get("iscsi"), existing.get("iscsi")
    if isinstance(a, dict) and isinstance(b, dict) and a.get("iqn") == b.get("iqn") and not (ro(a) and ro(b)):
        return True
    a, b = v.get("rbd"), existing.get("rbd")
    if isinstance(a, dict) and isinstance(b, dict):
        monitors = set(a.get("monitors") or ()) & set(b.get("monitors") or ())
        if monitors and a.get("pool", "rbd") == b.get("pool", "rbd") and a.get("image") == b.get("image") \
                and not (ro(a) and ro(b)):
            return True
    return False


# --------------------------------------------------------------------------------------------------------------
# VolumeRestrictions
# --------------------------------------------------------------------------------------------------------------
@dataclass
class RestrictionsPre:
    rejection: str | None = None     # PreFilter: UnschedulableAndUnresolvable with this message
    skip: bool = False
    conflicting: int = 0             # conflictingPVCRefCount


def prefilter_volume_restrictions(pod, storage, pods_by_node) -> RestrictionsPre:
    needs_check = any(any(d in v for d in DISKS) for v in pod.spec.volumes)
    rwop = []
    if storage is not None:
        for name, _ in _claim_names(pod, ephemeral=False):
            pvc = storage.claims.get(f"{P.pod_namespace(pod)}/{name}")
            if pvc is None:
                return RestrictionsPre(rejection=f'persistentvolumeclaim "{name}" not found')
            if "ReadWriteOncePod" in pvc.spec.access_modes and pvc.metadata.name not in rwop:
                rwop.append(pvc.metadata.name)
    used = set()        # the snapshot's PVC keys used by scheduled pods
    for pods in pods_by_node.values():
        for other in pods:
            for name, _ in _claim_names(other, ephemeral=False):
                used.add(f"{P.pod_namespace(other)}/{name}")
    conflicting = sum(1 for name in rwop if f"{P.pod_namespace(pod)}/{name}" in used)
    if not needs_check and conflicting == 0:
        return RestrictionsPre(skip=True)
    return RestrictionsPre(conflicting=conflicting)


def filter_volume_restrictions(pod, node_pods, pre: RestrictionsPre):
    for v in pod.spec.volumes:
        if not any(d in v for d in DISKS):
            continue
        for other in node_pods:
            if any(_conflict(v, ev) for ev in other.spec.volumes):
                return P.UNSCHEDULABLE, [REASON_DISK]
    if pre.conflicting > 0:
        return P.UNSCHEDULABLE, [REASON_RWOP]
    return P.SUCCESS, []


# --------------------------------------------------------------------------------------------------------------
# VolumeBinding
# --------------------------------------------------------------------------------------------------------------
@dataclass
class BindingPre:
    rejection: str | None = None
    skip: bool = False
    bound: list = field(default_factory=list)          # fully bound claims
    delayed: list = field(default_factory=list)        # unbound WaitForFirstConsumer claims, volume order
    eligible: set | None = None                        # PreFilterResult node names (None: all nodes)


def _owned_by_pod(pvc, pod) -> bool:
    """ephemeral.VolumeIsForPod: a controller ownerReference to the pod (UIDs compared when both are known)."""
    if P.pod_namespace(pvc) != P.pod_namespace(pod):
        return False
    for ref in pvc.metadata.owner_references:
        if ref.controller and ref.kind == "Pod" and ref.api_version == "v1" and ref.name == pod.metadata.name \
                and (not ref.uid or not pod.metadata.uid or ref.uid == pod.metadata.uid):
            return True
    return False


def _local_node_names(pv):
    """GetLocalPersistentVolumeNodeNames: per term the intersection of its hostname In values, the union over
    terms (terms without one add nothing)."""
    affinity = pv.spec.node_affinity
    if affinity is None or affinity.required is None:
        return set()
    out = set()
    for term in affinity.required.node_selector_terms:
        names = None
        for r in term.match_expressions or []:
            if r.key == P.HOSTNAME_LABEL and r.operator == "In":
                names = set(r.values or ()) if names is None else names & set(r.values or ())
        out |= names or set()
    return out


def prefilter_volume_binding(pod, storage) -> BindingPre:
    claims = _claim_names(pod, ephemeral=True)
    if storage is None or not claims:
        return BindingPre(skip=True)
    ns = P.pod_namespace(pod)
    found = []
    for name, ephemeral in claims:
        pvc = storage.claims.get(f"{ns}/{name}")
        if pvc is None:
            if ephemeral:
                return BindingPre(rejection=f'waiting for ephemeral volume controller to create the '
                                            f'persistentvolumeclaim "{name}"')
            return BindingPre(rejection=f'persistentvolumeclaim "{name}" not found')
        if pvc.status.phase == "Lost":
            return BindingPre(rejection=f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume '
                                        f'"{pvc.spec.volume_name}"')
        if pvc.metadata.deletion_timestamp is not None:
            return BindingPre(rejection=f'persistentvolumeclaim "{name}" is being deleted')
        if ephemeral and not _owned_by_pod(pvc, pod):
            return BindingPre(rejection=f"PVC {ns}/{name} was not created for pod {ns}/{pod.metadata.name} "
                                        f"(pod is not owner)")
        found.append(pvc)
    out = BindingPre()
    immediate = False
    for pvc in found:
        if storage.fully_bound(pvc):
            out.bound.append(pvc)
        elif storage.delayed(pvc) and not storage.volume_name(pvc):
            out.delayed.append(pvc)
        else:
            immediate = True
    if immediate:
        return BindingPre(rejection="pod has unbound immediate PersistentVolumeClaims")
    missing = False
    for pvc in out.bound:
        pv = storage.volumes.get(storage.volume_name(pvc))
        if pv is None:
            missing = True
            continue
        names = _local_node_names(pv)
        if names:
            out.eligible = set(names) if out.eligible is None else out.eligible & names
    if missing:
        out.eligible = None
    return out


def _nameless(node):
    """The Node CheckNodeAffinity builds: the labels alone (matchFields are then not read)."""
    return SimpleNamespace(metadata=SimpleNamespace(name="", labels=P.node_labels(node)))


def _node_affinity_ok(pv, node) -> bool:
    affinity = pv.spec.node_affinity
    if affinity is None or affinity.required is None:
        return True
    return P.required_node_selector_matches(affinity.required, _nameless(node))


def _bound_to(ref, pvc) -> bool:
    if ref is None:
        return False
    namespace, name, uid = ref
    return name == pvc.metadata.name and namespace == P.pod_namespace(pvc) and (not uid or uid == pvc.metadata.uid)


def find_matching_volume(storage, pvc, node, excluded: set):
    """FindMatchingVolume over the claim's class volumes on `node`: a volume pre-bound to the claim when its node
    affinity holds (none when it does not), else the smallest available fitting volume (the first of equal ones)."""
    request = _quantity(pvc.spec.resources.requests["storage"])
    selector = P.label_selector_as_selector(pvc.spec.selector) if pvc.spec.selector is not None else None
    best, best_size = None, None
    cls = storage.claim_class(pvc)
    for pv in storage.volumes.values():
        if storage.volume_class(pv) != cls:         # pvCache.ListPVs(class)
            continue
        if pv.metadata.name in excluded:
            continue
        ref = storage.claim_ref(pv)
        if ref is not None and not _bound_to(ref, pvc):
            continue
        size = _quantity(pv.spec.capacity["storage"])
        if size < request or pv.spec.volume_mode != pvc.spec.volume_mode:
            continue
        if (pvc.spec.volume_attributes_class_name or "") != (pv.spec.volume_attributes_class_name or ""):
            continue
        if pv.metadata.deletion_timestamp is not None:
            continue
        affinity_ok = _node_affinity_ok(pv, node)
        if _bound_to(ref, pvc):
            return pv if affinity_ok else None
        if pv.status.phase != "Available":
            continue
        if selector is not None and not selector.matches(pv.metadata.labels or {}):
            continue
        if not affinity_ok:
            continue
        if not set(pvc.spec.access_modes) <= set(pv.spec.access_modes):
            continue
        if best is None or best_size > size:
            best, best_size = pv, size
    return best


def _topology_allows(sc, node) -> bool:
    """MatchTopologySelectorTerms: no terms allow every node; otherwise a term whose expressions all hold."""
    if not sc.allowed_topologies:
        return True
    labels = P.node_labels(node)
    for term in sc.allowed_topologies:
        if not term.match_label_expressions:
            continue
        if all(labels.get(r.key) in r.values for r in term.match_label_expressions):
            return True
    return False


def find_pod_volumes(storage, pre: BindingPre, node):
    """FindPodVolumes on one node: (reasons, static bindings [(claim key, PV name)], claims to provision)."""
    bound_ok, pvs_found, unbound_ok, sufficient = True, True, True, True
    statics, provision = [], []

    def reasons():
        out = []
        if not bound_ok:
            out.append(REASON_NODE_CONFLICT)
        if not unbound_ok:
            out.append(REASON_BIND_CONFLICT)
        if not sufficient:
            out.append(REASON_NOT_ENOUGH_SPACE)
        if not pvs_found:
            out.append(REASON_PV_NOT_EXIST)
        return out

    for pvc in pre.bound:
        pv = storage.volumes.get(storage.volume_name(pvc))
        if pv is None:
            pvs_found = False
            break
        if not _node_affinity_ok(pv, node):
            bound_ok = False
            break
    if pre.delayed:
        to_match = []
        for pvc in pre.delayed:
            selected = storage.selected_node(pvc)
            if selected is not None:
                if selected != P.node_name(node):
                    unbound_ok = False
                    return reasons(), [], []
                provision.append(pvc)
            else:
                to_match.append(pvc)
        if to_match:
            chosen = set()
            for pvc in sorted(to_match, key=lambda c: _quantity(c.spec.resources.requests["storage"])):
                pv = find_matching_volume(storage, pvc, node, chosen)
                if pv is None:
                    provision.append(pvc)
                    unbound_ok = False
                    continue
                chosen.add(pv.metadata.name)
                statics.append((storage.key(pvc), pv.metadata.name))
        if provision:
            unbound_ok = True
            for pvc in provision:
                sc = storage.classes.get(storage.claim_class(pvc))
                if sc.provisioner in ("", NOT_SUPPORTED_PROVISIONER) or not _topology_allows(sc, node):
                    unbound_ok = False
                    break
                if not storage.enough_capacity(pvc, sc, node):
                    sufficient = False
                    break
    return reasons(), statics, [storage.key(c) for c in provision]


def filter_volume_binding(storage, pre: BindingPre, node):
    found = find_pod_volumes(storage, pre, node)[0]
    return (P.UNSCHEDULABLE_AND_UNRESOLVABLE, found) if found else (P.SUCCESS, [])


def reserve_volume_binding(storage, pre: BindingPre, node) -> None:
    """AssumePodVolumes, then the PV controller's work: the static bindings complete, the claims to provision carry
    the node."""
    if pre.skip or not pre.delayed:
        return
    _, statics, provision = find_pod_volumes(storage, pre, node)
    for key, pv in statics:
        storage.bound[key] = pv
    for key in provision:       # a claim annotated for this node already keeps its annotation
        if storage.selected_node(storage.claims[key]) != P.node_name(node):
            storage.selected[key] = P.node_name(node)


# --------------------------------------------------------------------------------------------------------------
# VolumeZone
# --------------------------------------------------------------------------------------------------------------
@dataclass
class ZonePre:
    rejection: str | None = None
    skip: bool = False
    topologies: list = field(default_factory=list)     # (key, set of values)


def prefilter_volume_zone(pod, storage) -> ZonePre:
    if storage is None:
        return ZonePre(skip=True)
    out = []
    for name, _ in _claim_names(pod, ephemeral=False):
        if name == "":
            return ZonePre(rejection="PersistentVolumeClaim had no name")
        pvc = storage.claims.get(f"{P.pod_namespace(pod)}/{name}")
        if pvc is None:
            return ZonePre(rejection=f'persistentvolumeclaim "{name}" not found')
        pv_name = storage.volume_name(pvc)
        if not pv_name:
            cls = storage.claim_class(pvc)
            if not cls:
                return ZonePre(rejection="PersistentVolumeClaim had no pv name and storageClass name")
            sc = storage.classes.get(cls)
            if sc is None:
                return ZonePre(rejection=f'storageclass.storage.k8s.io "{cls}" not found')
            if sc.volume_binding_mode == WAIT:
                continue
            return ZonePre(rejection="PersistentVolume had no name")
        pv = storage.volumes.get(pv_name)
        if pv is None:
            return ZonePre(rejection=f'persistentvolume "{pv_name}" not found')
        for key in ZONE_LABELS:
            if key in (pv.metadata.labels or {}):
                values = {z.strip() for z in pv.metadata.labels[key].split("__")}
                if "" not in values:
                    out.append((key, values))
    return ZonePre(topologies=out) if out else ZonePre(skip=True)


def filter_volume_zone(pod, node, pre: ZonePre):
    if not pod.spec.volumes:
        return P.SUCCESS, []
    labels = P.node_labels(node)
    if not any(key in labels for key in ZONE_LABELS):
        return P.SUCCESS, []
    for key, values in pre.topologies:
        value = labels.get(key)
        if value is None:
            value = labels.get(GA_LABEL.get(key, key))
        if value is None or value not in values:
            return P.UNSCHEDULABLE_AND_UNRESOLVABLE, [REASON_ZONE]
    return P.SUCCESS, []


# --------------------------------------------------------------------------------------------------------------
# NodeVolumeLimits (csi.go)
# --------------------------------------------------------------------------------------------------------------
REASON_MAX_VOLUMES = "node(s) exceed max volume count"


def _attachable(pod, storage, new_pod: bool):
    """filterAttachableVolumes: the pod's CSI volumes as (driver, unique id), or (code, reason) for the pod being
    scheduled when one of its claims cannot be read (a missing claim; an ephemeral claim it does not own; a claim
    volume with no name). Existing pods' unreadable claims are passed over."""
    out = set()
    for name, ephemeral in _claim_names(pod, ephemeral=True):
        if not name:
            if new_pod:
                return P.ERROR, ["PersistentVolumeClaim had no name"]
            continue
        pvc = storage.claims.get(f"{P.pod_namespace(pod)}/{name}")
        if pvc is None:
            if new_pod:
                return (P.UNSCHEDULABLE_AND_UNRESOLVABLE,
                        [f'looking up PVC {P.pod_namespace(pod)}/{name}: persistentvolumeclaim "{name}" not found'])
            continue
        if ephemeral and not _owned_by_pod(pvc, pod):
            if new_pod:
                return P.ERROR, [f"PVC {P.pod_namespace(pvc)}/{pvc.metadata.name} was not created for pod "
                                 f"{P.pod_namespace(pod)}/{pod.metadata.name} (pod is not owner)"]
            continue
        pv = storage.volumes.get(storage.volume_name(pvc) or "")
        if pv is not None:
            if pv.spec.csi is not None and pv.spec.csi.driver and pv.spec.csi.volume_handle:
                out.add((pv.spec.csi.driver, pv.spec.csi.volume_handle))
            continue
        sc = storage.classes.get(storage.claim_class(pvc)) if storage.claim_class(pvc) else None
        if sc is not None and sc.provisioner:      # not bound yet: counted against its class's driver
            out.add((sc.provisioner, "claim " + Storage.key(pvc)))
    return out


def filter_node_volume_limits(pod, node, node_pods, storage):
    """CSILimits.Filter: the pod's new volumes per driver, added to the node's pods', within the CSINode's count;
    None (not run) when there is no storage, no claim-backed volume, or no new volume."""
    if storage is None or not _claim_names(pod, ephemeral=True):
        return None
    new = _attachable(pod, storage, new_pod=True)
    if isinstance(new, tuple):
        return new
    used = set()
    for other in node_pods:
        got = _attachable(other, storage, new_pod=False)
        used |= got
    limits = storage.limits.get(P.node_name(node), {})
    # the attachments' volumes no pod there uses are in use too; the pod's own volumes stay new even if attached
    attached = storage.attached.get(P.node_name(node), set()) - used
    for driver in {d for d, _ in new - used}:
        if driver in limits:
            in_use = sum(1 for d, _ in used | attached if d == driver)
            adding = sum(1 for d, _ in new - used if d == driver)
            if in_use + adding > limits[driver]:
                return P.UNSCHEDULABLE, [REASON_MAX_VOLUMES]
    return P.SUCCESS, []
