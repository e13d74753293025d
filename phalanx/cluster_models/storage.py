"""Storage objects the volume plugins read: v1 PersistentVolume and PersistentVolumeClaim, storage.k8s.io/v1
StorageClass, CSINode, CSIDriver, CSIStorageCapacity and VolumeAttachment. Only the fields the scheduler's volume
plugins read are modelled, validated as the API server validates them (pkg/apis/core/validation
ValidatePersistentVolume / ValidatePersistentVolumeClaim, pkg/apis/storage/validation ValidateCSIDriver,
ValidateCSIStorageCapacity, ValidateVolumeAttachment(V1)), and defaulted as it defaults them (a StorageClass's
volumeBindingMode Immediate, a claim's or volume's volumeMode Filesystem, a CSIDriver's storageCapacity false).

Quantities of storage stay exact (`fractions.Fraction`): upstream compares them with Quantity.Cmp (the smallest
volume that fits, claims sorted by their request).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Literal

from pydantic import Field, StrictBool, model_validator

from .objects import (Int32, Int64, K8sModel, LabelSelector, NodeSelector, ObjectMeta, check_subdomain_name,
                      dns_subdomain_problem, go_quote, selector_problems)
from .quantity import QuantityError, decode_quantity

# Annotations the scheduler reads (component-helpers/storage/volume, k8s.io/api/core/v1).
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"            # a claim whose binding the PV controller finished
SELECTED_NODE = "volume.kubernetes.io/selected-node"            # a claim the scheduler chose a node to provision on
BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"  # read before spec.storageClassName
DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"   # the DefaultStorageClass admission plugin's mark
MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"  # a CSINode's in-tree plugins migrated to CSI
NO_PROVISIONER = "kubernetes.io/no-provisioner"                  # a class that cannot provision dynamically

ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
READ_WRITE_ONCE_POD = "ReadWriteOncePod"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
BINDING_MODES = ("Immediate", WAIT_FOR_FIRST_CONSUMER)
CORE_V1 = "v1"
STORAGE_V1 = "storage.k8s.io/v1"


def _access_mode_problem(modes: list[str], path: str) -> str | None:
    """validatePersistentVolumeAccessModes / the claim's: at least one, each supported, ReadWriteOncePod alone."""
    if not modes:
        return f"{path}: Required value: at least 1 access mode is required"
    for mode in modes:
        if mode not in ACCESS_MODES:
            supported = ", ".join(f'"{m}"' for m in ACCESS_MODES)
            return f"{path}: Unsupported value: {go_quote(mode)}: supported values: {supported}"
    if READ_WRITE_ONCE_POD in modes and len(modes) > 1:
        return f"{path}: Forbidden: may not use ReadWriteOncePod with other access modes"
    return None


def _storage(resources: dict, path: str) -> Fraction:
    """The storage quantity of a capacity or requests map: required, valid, greater than zero."""
    if "storage" not in resources:
        raise ValueError(f"{path}[storage]: Required value")
    raw = resources["storage"]
    try:
        amount = decode_quantity(raw)
    except QuantityError as error:
        raise ValueError(f"{path}[storage]: {error}") from None
    if amount <= 0:
        raise ValueError(f"{path}[storage]: Invalid value: {go_quote(str(raw))}: must be greater than zero")
    return amount


class ObjectReference(K8sModel):
    """A volume's spec.claimRef (the claim it is bound or pre-bound to)."""
    namespace: str = ""
    name: str = ""
    uid: str = ""


class VolumeNodeAffinity(K8sModel):
    required: NodeSelector | None = None


class CSIVolumeSource(K8sModel):
    driver: str
    volume_handle: str = ""


class PersistentVolumeSpec(K8sModel):
    capacity: dict = Field(default_factory=dict)
    access_modes: list[str] = Field(default_factory=list)
    claim_ref: ObjectReference | None = None
    storage_class_name: str = ""
    volume_mode: Literal["Filesystem", "Block"] = "Filesystem"
    node_affinity: VolumeNodeAffinity | None = None
    volume_attributes_class_name: str | None = None
    csi: CSIVolumeSource | None = None


class PersistentVolumeStatus(K8sModel):
    # Absent in a manifest: the PV controller makes a volume Available once it sees it (syncVolume), and phase
    # matters only to volumes bound to no claim, which it leaves Available.
    phase: Literal["Pending", "Available", "Bound", "Released", "Failed"] = "Available"


class PersistentVolume(K8sModel):
    kind: str = "PersistentVolume"
    metadata: ObjectMeta
    spec: PersistentVolumeSpec = Field(default_factory=PersistentVolumeSpec)
    status: PersistentVolumeStatus = Field(default_factory=PersistentVolumeStatus)

    @model_validator(mode="after")
    def _object_rules(self) -> PersistentVolume:
        check_subdomain_name(self.metadata)
        spec = self.spec
        problem = _access_mode_problem(spec.access_modes, "spec.accessModes")
        if problem is not None:
            raise ValueError(problem)
        if not spec.capacity:
            raise ValueError("spec.capacity: Required value")
        self._capacity = _storage(spec.capacity, "spec.capacity")
        required = spec.node_affinity.required if spec.node_affinity is not None else None
        if spec.node_affinity is not None and required is None:
            raise ValueError("spec.nodeAffinity.required: Required value: must specify required node constraints")
        if required is not None and not required.node_selector_terms:
            raise ValueError("spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least one "
                             "node selector term")
        return self

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def capacity(self) -> Fraction:
        """spec.capacity[storage], exact."""
        return self._capacity

    @property
    def storage_class(self) -> str:
        """GetPersistentVolumeClass: the beta annotation first, then spec.storageClassName."""
        return self.metadata.annotations.get(BETA_STORAGE_CLASS, self.spec.storage_class_name)

    _capacity: Fraction = Fraction(0)


class ResourceRequirementsStorage(K8sModel):
    requests: dict = Field(default_factory=dict)
    limits: dict = Field(default_factory=dict)


class PersistentVolumeClaimSpec(K8sModel):
    access_modes: list[str] = Field(default_factory=list)
    resources: ResourceRequirementsStorage = Field(default_factory=ResourceRequirementsStorage)
    selector: LabelSelector | None = None
    storage_class_name: str | None = None       # None (absent) differs from "": admission gives a default class
    volume_name: str = ""
    volume_mode: Literal["Filesystem", "Block"] = "Filesystem"
    volume_attributes_class_name: str | None = None


class PersistentVolumeClaimStatus(K8sModel):
    phase: Literal["Pending", "Bound", "Lost"] = "Pending"


class PersistentVolumeClaim(K8sModel):
    kind: str = "PersistentVolumeClaim"
    metadata: ObjectMeta
    spec: PersistentVolumeClaimSpec = Field(default_factory=PersistentVolumeClaimSpec)
    status: PersistentVolumeClaimStatus = Field(default_factory=PersistentVolumeClaimStatus)

    @model_validator(mode="after")
    def _object_rules(self) -> PersistentVolumeClaim:
        check_subdomain_name(self.metadata)
        if not self.metadata.namespace:
            self.metadata.namespace = "default"
        problem = _access_mode_problem(self.spec.access_modes, "spec.accessModes")
        if problem is not None:
            raise ValueError(problem)
        self._request = _storage(self.spec.resources.requests, "spec.resources")
        return self

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def request(self) -> Fraction:
        """spec.resources.requests[storage], exact."""
        return self._request

    @property
    def storage_class(self) -> str:
        """GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName, else ""."""
        annotations = self.metadata.annotations
        if BETA_STORAGE_CLASS in annotations:
            return annotations[BETA_STORAGE_CLASS]
        return self.spec.storage_class_name or ""

    @property
    def fully_bound(self) -> bool:
        """isPVCFullyBound: a volume named and the PV controller's bind-completed annotation."""
        return bool(self.spec.volume_name) and BIND_COMPLETED in self.metadata.annotations

    _request: Fraction = Fraction(0)


class TopologySelectorRequirement(K8sModel):
    key: str
    values: list[str]


class TopologySelectorTerm(K8sModel):
    match_label_expressions: list[TopologySelectorRequirement] = Field(default_factory=list)


class StorageClass(K8sModel):
    kind: str = "StorageClass"
    metadata: ObjectMeta
    provisioner: str = ""
    volume_binding_mode: str = "Immediate"
    allowed_topologies: list[TopologySelectorTerm] = Field(default_factory=list)

    @model_validator(mode="after")
    def _object_rules(self) -> StorageClass:
        check_subdomain_name(self.metadata)
        if not self.provisioner:
            raise ValueError("provisioner: Required value")
        if self.volume_binding_mode not in BINDING_MODES:
            raise ValueError(f"volumeBindingMode: Unsupported value: {go_quote(self.volume_binding_mode)}: supported "
                             f'values: "Immediate", "WaitForFirstConsumer"')
        return self

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def is_default(self) -> bool:
        return self.metadata.annotations.get(DEFAULT_CLASS) == "true"


class CSINodeDriverAllocatable(K8sModel):
    count: Int32 | None = None          # *int32


class CSINodeDriver(K8sModel):
    name: str
    node_id: str = Field(default="", alias="nodeID")
    topology_keys: list[str] = Field(default_factory=list)
    allocatable: CSINodeDriverAllocatable | None = None


class CSINodeSpec(K8sModel):
    drivers: list[CSINodeDriver] = Field(default_factory=list)


class CSINode(K8sModel):
    """storage.k8s.io/v1 CSINode: named after its node; which CSI drivers run there. Read as the volume plugins read
    it: the migrated in-tree plugins annotation and the drivers' allocatable volume counts."""
    kind: str = "CSINode"
    metadata: ObjectMeta
    spec: CSINodeSpec = Field(default_factory=CSINodeSpec)

    @model_validator(mode="after")
    def _object_rules(self) -> CSINode:
        check_subdomain_name(self.metadata)
        for i, driver in enumerate(self.spec.drivers):
            if driver.allocatable is not None and driver.allocatable.count is not None \
                    and driver.allocatable.count < 0:
                raise ValueError(f"spec.drivers[{i}].allocatable.count: Invalid value: {driver.allocatable.count}: "
                                 f"must be greater than or equal to 0")
        return self


class TokenRequest(K8sModel):
    audience: str = ""
    expiration_seconds: Int64 | None = None


class CSIDriverSpec(K8sModel):
    storage_capacity: StrictBool = False      # SetDefaults_CSIDriver: absent is false
    fs_group_policy: str | None = None
    volume_lifecycle_modes: list[str] = Field(default_factory=list)
    token_requests: list[TokenRequest] = Field(default_factory=list)
    node_allocatable_update_period_seconds: Int64 | None = None
    service_account_token_in_secrets: StrictBool | None = None


FS_GROUP_POLICIES = ("File", "None", "ReadWriteOnceWithFSType")      # sorted, as NotSupported lists them
LIFECYCLE_MODES = ("Persistent", "Ephemeral")


class CSIDriver(K8sModel):
    """storage.k8s.io/v1 CSIDriver, named after its driver. VolumeBinding reads spec.storageCapacity: whether the
    driver's CSIStorageCapacity objects bound what it can provision (hasEnoughCapacity)."""
    kind: str = "CSIDriver"
    metadata: ObjectMeta
    spec: CSIDriverSpec = Field(default_factory=CSIDriverSpec)

    @model_validator(mode="after")
    def _object_rules(self) -> CSIDriver:
        """validateCSIDriverSpec after defaulting (attachRequired, podInfoOnMount, storageCapacity and seLinuxMount
        are then set, so never missing)."""
        check_subdomain_name(self.metadata)
        spec = self.spec
        if spec.fs_group_policy is not None and spec.fs_group_policy not in FS_GROUP_POLICIES:
            raise ValueError(f"spec.fsGroupPolicy: Unsupported value: {go_quote(spec.fs_group_policy)}: supported "
                             f"values: {', '.join(go_quote(p) for p in FS_GROUP_POLICIES)}")
        audiences = set()
        for i, request in enumerate(spec.token_requests):
            if request.audience in audiences:
                raise ValueError(f"spec.tokenRequests[{i}].audience: Duplicate value: {go_quote(request.audience)}")
            audiences.add(request.audience)
            seconds = request.expiration_seconds
            if seconds is not None and seconds < 600:
                raise ValueError(f"spec.tokenRequests[{i}].expirationSeconds: Invalid value: {seconds}: may not "
                                 f"specify a duration less than 10 minutes")
            if seconds is not None and seconds > 1 << 32:
                raise ValueError(f"spec.tokenRequests[{i}].expirationSeconds: Invalid value: {seconds}: may not "
                                 f"specify a duration larger than 2^32 seconds")
        for mode in spec.volume_lifecycle_modes:
            if mode not in LIFECYCLE_MODES:
                raise ValueError(f"spec.volumeLifecycleModes: Unsupported value: {go_quote(mode)}: supported values: "
                                 f"{', '.join(go_quote(m) for m in LIFECYCLE_MODES)}")
        period = spec.node_allocatable_update_period_seconds
        if period is not None and period < 10:
            raise ValueError(f"spec.nodeAllocatableUpdatePeriodSeconds: Invalid value: {period}: must be greater "
                             f"than or equal to 10 seconds")
        if spec.service_account_token_in_secrets is not None and not spec.token_requests:
            raise ValueError(f"spec.serviceAccountTokenInSecrets: Invalid value: "
                             f"{str(spec.service_account_token_in_secrets).lower()}: serviceAccountTokenInSecrets is "
                             f"set but no tokenRequests are specified")
        return self

    @property
    def name(self) -> str:
        return self.metadata.name


def _optional_quantity(raw, path: str) -> Fraction | None:
    """A Quantity field that may be absent (None), exact."""
    if raw is None:
        return None
    try:
        return decode_quantity(raw)
    except QuantityError as error:
        raise ValueError(f"{path}: {error}") from None


class CSIStorageCapacity(K8sModel):
    """storage.k8s.io/v1 CSIStorageCapacity (namespaced): what a driver can provision for a StorageClass on the nodes
    its nodeTopology selects; maximumVolumeSize, when set, bounds one volume more precisely than capacity."""
    kind: str = "CSIStorageCapacity"
    metadata: ObjectMeta
    storage_class_name: str = ""
    node_topology: LabelSelector | None = None      # nil: no node has access
    capacity: object = None
    maximum_volume_size: object = None

    @model_validator(mode="after")
    def _object_rules(self) -> CSIStorageCapacity:
        check_subdomain_name(self.metadata)
        if not self.metadata.namespace:
            self.metadata.namespace = "default"
        problems = selector_problems(self.node_topology, "nodeTopology")
        if problems:
            raise ValueError(problems[0])
        problem = dns_subdomain_problem(self.storage_class_name)      # ValidateClassName
        if problem is not None:
            raise ValueError(f"storageClassName: Invalid value: {go_quote(self.storage_class_name)}: {problem}")
        self._capacity = _optional_quantity(self.capacity, "capacity")
        if self._capacity is not None and self._capacity < 0:
            raise ValueError(f"capacity: Invalid value: {go_quote(str(self.capacity))}: must be greater than or "
                             f"equal to 0")
        self._maximum = _optional_quantity(self.maximum_volume_size, "maximumVolumeSize")
        return self

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"

    @property
    def volume_limit(self) -> Fraction | None:
        """volumeLimit: maximumVolumeSize when set (the more precise bound), else capacity; None when neither."""
        return self._maximum if self._maximum is not None else self._capacity

    _capacity: Fraction | None = None
    _maximum: Fraction | None = None


class VolumeAttachmentSource(K8sModel):
    persistent_volume_name: str | None = None
    inline_volume_spec: dict | None = None          # a migrated in-tree volume's: not read (no CSI migration)


class VolumeAttachmentSpec(K8sModel):
    attacher: str = ""
    source: VolumeAttachmentSource = Field(default_factory=VolumeAttachmentSource)
    node_name: str = ""


class VolumeAttachment(K8sModel):
    """storage.k8s.io/v1 VolumeAttachment: a volume the attach/detach controller attaches (or attached) to a node
    through a CSI driver (spec.attacher). NodeVolumeLimits counts those of a PersistentVolume against the node's
    limit, whatever their status."""
    kind: str = "VolumeAttachment"
    metadata: ObjectMeta
    spec: VolumeAttachmentSpec = Field(default_factory=VolumeAttachmentSpec)

    @model_validator(mode="after")
    def _object_rules(self) -> VolumeAttachment:
        """ValidateVolumeAttachment then ValidateVolumeAttachmentV1 (the attacher a CSI driver name, the volume's
        name a PersistentVolume's); an inline volume spec's own fields are not validated."""
        check_subdomain_name(self.metadata)
        spec, source = self.spec, self.spec.source
        if not spec.attacher:
            raise ValueError("spec.attacher: Required value")
        if source.inline_volume_spec is None and source.persistent_volume_name is None:
            raise ValueError("spec.source: Required value: must specify exactly one of inlineVolumeSpec and "
                             "persistentVolumeName")
        if source.inline_volume_spec is not None and source.persistent_volume_name is not None:
            raise ValueError("spec.source: Forbidden: must specify exactly one of inlineVolumeSpec and "
                             "persistentVolumeName")
        if source.persistent_volume_name == "":
            raise ValueError("spec.source.persistentVolumeName: Required value: must specify non empty "
                             "persistentVolumeName")
        problem = dns_subdomain_problem(spec.node_name)                # ValidateNodeName
        if problem is not None:
            raise ValueError(f"spec.nodeName: Invalid value: {go_quote(spec.node_name)}: {problem}")
        problem = csi_driver_name_problem(spec.attacher)
        if problem is not None:
            raise ValueError(f"spec.attacher: {problem}")
        if source.persistent_volume_name is not None:
            problem = dns_subdomain_problem(source.persistent_volume_name)
            if problem is not None:
                raise ValueError(f"spec.source.persistentVolumeName: Invalid value: "
                                 f"{go_quote(source.persistent_volume_name)}: {problem}")
        return self

    @property
    def name(self) -> str:
        return self.metadata.name


def csi_driver_name_problem(name: str) -> str | None:
    """ValidateCSIDriverName (core validation): at most 63 characters, a DNS subdomain once lowercased."""
    if len(name) > 63:
        return "Too long: may not be more than 63 bytes"
    problem = dns_subdomain_problem(name.lower())
    return None if problem is None else f"Invalid value: {go_quote(name)}: {problem}"


def default_class(classes: list[StorageClass]) -> StorageClass | None:
    """The DefaultStorageClass admission plugin's class for a claim that names none (GetDefaultClass): of the classes
    marked default, the newest by creationTimestamp, then the lowest name."""
    marked = [c for c in classes if c.is_default]
    if not marked:
        return None
    newest = max(c.metadata.creation_timestamp or "" for c in marked)
    return min((c for c in marked if (c.metadata.creation_timestamp or "") == newest), key=lambda c: c.name)
