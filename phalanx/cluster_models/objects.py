"""Pydantic models of the Kubernetes objects phalanx reads: core/v1 Pod and Node (the fields kube-scheduler
uses) and scheduling.k8s.io/v1 PriorityClass.

Attribute names are snake_case; manifests use the upstream camelCase names (aliases), so validation errors
carry manifest paths. Unknown fields are ignored, and a null field takes its default, as Go's JSON decoding
leaves a field at its zero value.

kube-scheduler only ever sees objects the API server has defaulted, so validation applies the defaulting
that changes scheduling (pkg/apis/core/v1/defaults.go, v1.36):
  - Pod: container requests default to limits (SetDefaults_Pod); pod-level hugepage limits and pod-level
    requests default from the containers and pod-level limits (PodLevelResources); with hostNetwork a
    container port's hostPort defaults to its containerPort; schedulerName defaults to default-scheduler
    (SetDefaults_PodSpec); a port's protocol defaults to TCP; metadata.namespace defaults to "default".
  - Node: a missing status.allocatable becomes a copy of status.capacity (SetDefaults_NodeStatus; the whole
    map, and only when absent or null, not resource by resource).
  - Every ResourceList quantity is rounded up to a whole milli-unit (SetDefaults_ResourceList), after the
    defaults above, in that order.
Toleration operator "" is stored as "Equal", which is what upstream matching treats it as.
"""
from __future__ import annotations

import ipaddress
import json
import operator
import re
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from datetime import datetime, timezone
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import (AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictInt,
                      ValidationError, ValidationInfo, field_validator, model_validator)
from pydantic.alias_generators import to_camel

from .errors import validation_problem
from .quantity import ResourceList, nanos_to_text
from .requests import SYSTEM_PRIORITY_CLASSES, default_pod_resources

__all__ = [
    "Affinity", "Container", "ContainerPort", "LabelSelector", "LabelSelectorRequirement", "Node",
    "NodeAffinity", "NodeSelector", "NodeSelectorRequirement", "NodeSelectorTerm", "NodeSpec", "NodeStatus",
    "Namespace", "ObjectMeta", "OwnerReference", "Pod", "PodAffinity", "PodAffinityTerm", "PodResourceClaim", "PodSchedulingGate", "PodSchedulingGroup", "PodSpec",
    "PodStatus",
    "PreferredSchedulingTerm", "PriorityClass", "ResourceList", "ResourceRequirements", "Taint", "Toleration",
    "TopologySpreadConstraint", "WeightedPodAffinityTerm", "WorkloadReference", "merge_label_keys",
]

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
DEFAULT_SCHEDULER_NAME = "default-scheduler"
# What Go's strings.TrimSpace trims (unicode.IsSpace); Python's str.strip() would also trim \x1c-\x1f.
_GO_SPACE = ("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
             "\u2028\u2029\u202f\u205f\u3000")

TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
PreemptionPolicy = Literal["PreemptLowerPriority", "Never"]
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
# Integers as the API decodes them: JSON numbers only (a string "80" is a decode error, not a coercion), in Go's range.
Int32 = Annotated[StrictInt, Field(ge=INT32_MIN, le=INT32_MAX)]
Int64 = Annotated[StrictInt, Field(ge=INT64_MIN, le=INT64_MAX)]


def _rfc3339(raw: Any) -> Any:
    """Timestamps stay text; a YAML reader that already made a datetime gets it back as RFC 3339."""
    if isinstance(raw, datetime):
        if raw.tzinfo is not None:
            raw = raw.astimezone(timezone.utc).replace(tzinfo=None)
        return raw.isoformat() + "Z"
    return raw


def _yaml_key(key: Any) -> Any:
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key) if isinstance(key, (int, float)) else key


def _string_map(raw: Any) -> Any:
    """A map of strings as the API reads it: sigs.k8s.io/yaml makes every key a string (1 -> "1", true -> "true"),
    and a null value decodes to ""."""
    if not isinstance(raw, dict) or all(isinstance(k, str) and isinstance(v, str) for k, v in raw.items()):
        return raw
    return {_yaml_key(k): "" if v is None else v for k, v in raw.items()}


StringMap = Annotated[dict[str, str], BeforeValidator(_string_map)]


def _unset_if_empty(raw: Any) -> Any:
    """An enum the API defaults when it is empty: "" is the default (None here)."""
    return None if raw == "" else raw


def _parses(value: str) -> str:
    rfc3339_seconds(value)           # ValueError naming the text (the API's metav1.Time would not decode it)
    return value


Timestamp = Annotated[str, BeforeValidator(_rfc3339), AfterValidator(_parses)]


class UnknownField(ValueError):
    """A field the Kubernetes API does not have (raised only while unknown fields are errors)."""

    def __init__(self, name: str):
        super().__init__(f'unknown field "{name}"')
        self.name = name


# What validation does with a field the API does not know (api_fields.py): None ignores it, a list collects the
# (model, field) pairs met, RAISE raises UnknownField (so the error's location names it). The loader sets it.
RAISE = "raise"
UNKNOWN_FIELDS: ContextVar[list | str | None] = ContextVar("phalanx_unknown_fields", default=None)
_KNOWN: dict[type, frozenset[str] | None] = {}


def _known_fields(cls: type[BaseModel]) -> frozenset[str] | None:
    """The upstream json names of the class's struct plus its own fields (by alias and name); None: unchecked."""
    if cls not in _KNOWN:
        from .api_decode import struct_fields
        from .api_fields import MODEL_STRUCTS, OWN_STRUCTS
        struct = MODEL_STRUCTS.get(cls.__name__)
        own = [*cls.model_fields, *(f.alias for f in cls.model_fields.values() if f.alias)]
        if struct is not None:
            _KNOWN[cls] = frozenset([*struct_fields(struct), *own])
        else:
            _KNOWN[cls] = frozenset(own) if cls.__name__ in OWN_STRUCTS else None
    return _KNOWN[cls]


_new, _set = object.__new__, object.__setattr__


def _twin(cls: type, values: dict, fields_set: set, private: dict | None) -> Any:
    """A model object of these field values, not validated (K8sModel.replaced: once per replica)."""
    twin = _new(cls)
    _set(twin, "__dict__", values)
    _set(twin, "__pydantic_fields_set__", fields_set)
    _set(twin, "__pydantic_extra__", None)         # extra="ignore": never any
    _set(twin, "__pydantic_private__", None if private is None else dict(private))
    return twin


class K8sModel(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="ignore", frozen=False, alias_generator=to_camel)

    def replaced(self, **fields: Any) -> Any:
        """A shallow copy with `fields` set as given, not validated: for values already valid (a replica's name,
        its labels). What __copy__ and setting each attribute do, at a quarter of their cost per replica. The
        record of fields set (model_fields_set) is shared with `self` when `fields` adds nothing to it: a set per
        object is ~200 bytes, as much as the rest of a replica's metadata. So assigning a field on one copy later
        marks it set on the others too (nothing reads the fields set of pods and their metadata)."""
        values = self.__dict__.copy()
        values.update(fields)
        fields_set = self.__pydantic_fields_set__
        return _twin(type(self), values, fields_set if fields_set.issuperset(fields) else fields_set | fields.keys(),
                     self.__pydantic_private__)

    def replacer(self, name: str) -> Callable[[Any], Any]:
        """value -> self.replaced(**{name: value}), with what does not change prepared once: for a loop of replicas
        (the object must not change while the function is used)."""
        cls, base, private = type(self), self.__dict__, self.__pydantic_private__
        fields_set = self.__pydantic_fields_set__
        if name not in fields_set:
            fields_set = fields_set | {name}

        def replace(value: Any) -> Any:
            values = base.copy()
            values[name] = value
            return _twin(cls, values, fields_set, private)
        return replace

    @model_validator(mode="before")
    @classmethod
    def _api_input(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        mode = UNKNOWN_FIELDS.get()
        if mode is not None:
            known = _known_fields(cls)
            if known is not None and not known.issuperset(data):
                unknown = sorted(str(k) for k in data if k not in known)
                if mode == RAISE:
                    raise UnknownField(unknown[0])
                mode.extend((cls.__name__, name) for name in unknown)
        if None in data.values():
            return {key: value for key, value in data.items() if value is not None}
        return data


class OwnerReference(K8sModel):
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: StrictBool | None = None


DONE_PHASES = ("Succeeded", "Failed")      # a pod in either holds no resources and counts for no controller


class ObjectMeta(K8sModel):
    name: str = Field(min_length=1)
    namespace: str | None = None
    labels: StringMap = Field(default_factory=dict)
    annotations: StringMap = Field(default_factory=dict)
    uid: str = ""
    owner_references: list[OwnerReference] = Field(default_factory=list)
    creation_timestamp: Timestamp | None = None
    deletion_timestamp: Timestamp | None = None


def controlled_by(obj: Any, kind: str, group: str, owner: ObjectMeta) -> bool:
    """metav1.IsControlledBy: `obj` has a controller ownerReference to `owner`, an object of `kind` in API group
    `group` ("" for core) and of `obj`'s namespace. Upstream compares UIDs; hand-written input has none, so the UIDs
    are compared only when both are known."""
    if obj.metadata.namespace != owner.namespace:
        return False
    uid = owner.uid
    return any(ref.controller and ref.kind == kind and ref.api_version.rpartition("/")[0] == group
               and ref.name == owner.name and (not ref.uid or not uid or ref.uid == uid)
               for ref in obj.metadata.owner_references)


class Taint(K8sModel):
    key: str
    value: str = ""
    effect: TaintEffect


class Toleration(K8sModel):
    key: str = ""
    # Gt/Lt: KEP-5471 (TaintTolerationComparisonOperators), matched only with that gate on (kernels/tolerations.py)
    operator: Literal["Equal", "Exists", "Gt", "Lt"] = "Equal"
    value: str = ""
    effect: Literal["", "NoSchedule", "PreferNoSchedule", "NoExecute"] = ""
    toleration_seconds: Int64 | None = None

    @field_validator("operator", mode="before")
    @classmethod
    def _empty_operator_is_equal(cls, raw: Any) -> Any:
        return "Equal" if raw == "" else raw


class NodeSelectorRequirement(K8sModel):
    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
    values: list[str] = Field(default_factory=list)


class NodeSelectorTerm(K8sModel):
    match_expressions: list[NodeSelectorRequirement] = Field(default_factory=list)
    match_fields: list[NodeSelectorRequirement] = Field(default_factory=list)


class NodeSelector(K8sModel):
    # Absent is an empty list, which validation refuses with upstream's "must have at least one node selector term".
    node_selector_terms: list[NodeSelectorTerm] = Field(default_factory=list)


class PreferredSchedulingTerm(K8sModel):
    weight: StrictInt = Field(ge=1, le=100)
    preference: NodeSelectorTerm


class NodeAffinity(K8sModel):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] = Field(default_factory=list)


class LabelSelectorRequirement(K8sModel):
    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: list[str] = Field(default_factory=list)


class LabelSelector(K8sModel):
    match_labels: StringMap = Field(default_factory=dict)
    match_expressions: list[LabelSelectorRequirement] = Field(default_factory=list)


def selector_matches(selector, labels: dict[str, str]) -> bool:
    """A metav1.LabelSelector against one labels set (labels.Selector.Matches); nil matches nothing, {} matches
    everything. Selectors are validated at intake, so every operator is one a LabelSelector allows."""
    if selector is None:
        return False
    if any(labels.get(k) != v for k, v in selector.match_labels.items()):
        return False
    for r in selector.match_expressions:
        present = r.key in labels
        if r.operator == "In" and not (present and labels[r.key] in r.values):
            return False
        if r.operator == "NotIn" and present and labels[r.key] in r.values:
            return False
        if r.operator == "Exists" and not present:
            return False
        if r.operator == "DoesNotExist" and present:
            return False
    return True


class PodAffinityTerm(K8sModel):
    """labelSelector / namespaces / namespaceSelector pick pods; topologyKey names the node label whose values
    are the domains. matchLabelKeys / mismatchLabelKeys are merged into labelSelector when the pod is validated
    (Pod._apply_api_defaults), as the API server does when it creates the pod."""
    label_selector: LabelSelector | None = None
    namespaces: list[str] = Field(default_factory=list)
    topology_key: str = ""
    namespace_selector: LabelSelector | None = None
    match_label_keys: list[str] = Field(default_factory=list)
    mismatch_label_keys: list[str] = Field(default_factory=list)


class WeightedPodAffinityTerm(K8sModel):
    weight: Int32
    pod_affinity_term: PodAffinityTerm

    @field_validator("weight")
    @classmethod
    def _weight_range(cls, weight: int) -> int:
        if not 1 <= weight <= 100:
            raise ValueError(f"Invalid value: {weight}: must be in the range 1-100")
        return weight


class PodAffinity(K8sModel):
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] = Field(default_factory=list)
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] = Field(default_factory=list)


class Affinity(K8sModel):
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None      # same shape as podAffinity (PodAntiAffinity upstream)

    def pod_terms(self) -> list[tuple[str, PodAffinityTerm]]:
        """(field path, term) of every pod (anti-)affinity term, required and preferred."""
        out = []
        for name, part in (("podAffinity", self.pod_affinity), ("podAntiAffinity", self.pod_anti_affinity)):
            if part is None:
                continue
            required = "requiredDuringSchedulingIgnoredDuringExecution"
            preferred = "preferredDuringSchedulingIgnoredDuringExecution"
            out += [(f"{name}.{required}[{i}]", t)
                    for i, t in enumerate(part.required_during_scheduling_ignored_during_execution)]
            out += [(f"{name}.{preferred}[{i}].podAffinityTerm", w.pod_affinity_term)
                    for i, w in enumerate(part.preferred_during_scheduling_ignored_during_execution)]
        return out


class TopologySpreadConstraint(K8sModel):
    max_skew: StrictInt = Field(ge=1, le=INT32_MAX)
    topology_key: str
    when_unsatisfiable: Literal["DoNotSchedule", "ScheduleAnyway"]
    label_selector: LabelSelector | None = None
    min_domains: StrictInt | None = Field(default=None, ge=1, le=INT32_MAX)
    node_affinity_policy: Literal["Honor", "Ignore"] | None = None
    node_taints_policy: Literal["Honor", "Ignore"] | None = None
    match_label_keys: list[str] = Field(default_factory=list)

    @field_validator("min_domains")
    @classmethod
    def _min_domains_needs_do_not_schedule(cls, min_domains: int | None, info: ValidationInfo) -> int | None:
        # Same rule as ValidateTopologySpreadConstraints (when_unsatisfiable is validated first).
        if min_domains is not None and info.data.get("when_unsatisfiable") != "DoNotSchedule":
            raise ValueError("can only be set when whenUnsatisfiable is DoNotSchedule")
        return min_domains


class ResourceClaimRef(K8sModel):
    """resources.claims[]: one of the pod's spec.resourceClaims (and a request of it) that the container uses.
    Placement reads the pod's claims alone; these are only validated."""
    name: str = ""
    request: str = ""


class ResourceRequirements(K8sModel):
    requests: ResourceList = Field(default_factory=ResourceList)
    limits: ResourceList = Field(default_factory=ResourceList)
    claims: list[ResourceClaimRef] = Field(default_factory=list)    # a container's only: refused at pod level


class ContainerPort(K8sModel):
    container_port: StrictInt = Field(ge=1, le=65535)
    host_port: StrictInt = Field(default=0, ge=0, le=65535)
    protocol: Literal["TCP", "UDP", "SCTP"] = "TCP"
    host_ip: str = Field(default="", alias="hostIP")
    name: str = ""

    @field_validator("protocol", mode="before")
    @classmethod
    def _protocol_defaults_to_tcp(cls, raw: Any) -> Any:
        return "TCP" if raw == "" else raw


class Container(K8sModel):
    name: str
    image: str = ""
    resources: ResourceRequirements = Field(default_factory=ResourceRequirements)
    ports: list[ContainerPort] = Field(default_factory=list)
    restart_policy: str | None = None  # "Always" on an init container makes it a restartable sidecar


class PodSchedulingGroup(K8sModel):
    pod_group_name: str | None = None


class WorkloadReference(K8sModel):
    """v1.35 (scheduling.k8s.io/v1alpha1) pod spec.workloadRef, replaced by spec.schedulingGroup in v1.36; read so
    that v1alpha1 dumps keep their groups (see cluster_models.workloads)."""
    name: str = Field(min_length=1)
    pod_group: str = Field(min_length=1)
    pod_group_replica_key: str = ""


class PodSchedulingGate(K8sModel):
    name: str


class PodResourceClaim(K8sModel):
    """spec.resourceClaims[]: a DRA claim by name, or one made from a ResourceClaimTemplate (cluster_models.dra)."""
    name: str = Field(min_length=1)
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> PodResourceClaim:
        if (self.resource_claim_name is None) == (self.resource_claim_template_name is None):
            raise ValueError("exactly one of `resourceClaimName`, `resourceClaimTemplateName` is required")
        return self


class PodSpec(K8sModel):
    containers: list[Container] = Field(default_factory=list)
    init_containers: list[Container] = Field(default_factory=list)
    overhead: ResourceList = Field(default_factory=ResourceList)
    resources: ResourceRequirements | None = None  # pod-level resources
    node_selector: StringMap = Field(default_factory=dict)
    affinity: Affinity | None = None
    tolerations: list[Toleration] = Field(default_factory=list)
    topology_spread_constraints: list[TopologySpreadConstraint] = Field(default_factory=list)
    priority: Int32 | None = None
    priority_class_name: str = ""
    preemption_policy: PreemptionPolicy | None = None
    scheduling_group: PodSchedulingGroup | None = None
    workload_ref: WorkloadReference | None = None  # v1alpha1 form of scheduling_group
    node_name: str = ""
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    volumes: list[dict] = Field(default_factory=list)
    resource_claims: list[PodResourceClaim] = Field(default_factory=list)   # DRA (cluster_models.dra)
    scheduling_gates: list[PodSchedulingGate] = Field(default_factory=list)
    host_network: StrictBool = False
    restart_policy: Annotated[Literal["Always", "OnFailure", "Never"] | None,     # None: Always (the API's default)
                              BeforeValidator(_unset_if_empty)] = None
    dns_policy: Annotated[Literal["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"] | None,
                          BeforeValidator(_unset_if_empty)] = None
    active_deadline_seconds: StrictInt | None = Field(default=None, ge=1, le=INT32_MAX)

    @field_validator("scheduler_name", mode="before")
    @classmethod
    def _scheduler_name_defaults(cls, raw: Any) -> Any:
        return DEFAULT_SCHEDULER_NAME if raw == "" else raw

    def resource_lists(self) -> list[ResourceList]:
        """Every ResourceList in the spec: per container requests and limits, overhead, pod-level resources."""
        lists = [self.overhead]
        for container in [*self.containers, *self.init_containers]:
            lists += [container.resources.requests, container.resources.limits]
        if self.resources is not None:
            lists += [self.resources.requests, self.resources.limits]
        return lists


def rfc3339_seconds(value: str) -> float:
    """Seconds since the Unix epoch of an RFC 3339 time (metav1.Time); ValueError when it is not one."""
    try:
        parsed = datetime.fromisoformat(value.replace("z", "Z"))
    except (TypeError, ValueError):
        raise ValueError(f'invalid RFC 3339 time "{value}"') from None
    if parsed.tzinfo is None:
        raise ValueError(f'invalid RFC 3339 time "{value}": no time zone')
    return parsed.timestamp()


class PodStatus(K8sModel):
    phase: str = "Pending"
    start_time: Timestamp | None = None         # set by the kubelet when it starts the pod (preemption reads it)
    nominated_node_name: str = ""               # set by preemption: the node the pod waits for


# Validation context key (Pod.model_validate(..., context={POD_TEMPLATE: True})): the pod is a pod template's spec
# and labels (pod_template_problem), so the rules upstream applies to pods only are left out.
POD_TEMPLATE = "pod_template"


class Pod(K8sModel):
    kind: str = "Pod"
    metadata: ObjectMeta
    spec: PodSpec = Field(default_factory=PodSpec)
    status: PodStatus = Field(default_factory=PodStatus)

    @model_validator(mode="after")
    def _apply_api_defaults(self, info: ValidationInfo) -> Pod:
        template = bool(info.context and info.context.get(POD_TEMPLATE))
        if not self.metadata.namespace:
            self.metadata.namespace = "default"
        default_pod_resources(self)
        if self.spec.affinity is not None:
            if not template:            # a pod template's terms are validated as written
                merge_label_keys(self.spec.affinity, self.metadata.labels)
            problems = pod_affinity_problems(self.spec.affinity)
            if problems:
                raise ValueError(problems[0])
        if self.spec.host_network:
            for container in [*self.spec.containers, *self.spec.init_containers]:
                for port in container.ports:
                    if port.host_port == 0:
                        port.host_port = port.container_port
        problems = pod_problems(self, template)
        if problems:
            raise ValueError(problems[0])
        for resources in self.spec.resource_lists():
            resources.round_up_to_milli()
        return self

    @property
    def key(self) -> str:
        """"namespace/name", the pod's identity in messages and lookups."""
        meta = self.metadata
        return f"{meta.namespace}/{meta.name}"


_METADATA, _NAMESPACE_AND_NAME = operator.attrgetter("metadata"), operator.attrgetter("namespace", "name")


def pod_keys(pods: list[Pod]) -> list[str]:
    """Each pod's key, in C loops (intake takes a million pods at once)."""
    return list(map("/".join, map(_NAMESPACE_AND_NAME, map(_METADATA, pods))))


def _replica_maker(template: Pod) -> Callable[[str], Pod]:
    """name -> the template with that name and no uid (what does not change prepared once)."""
    meta = template.metadata
    with_meta, with_name = template.replacer("metadata"), (meta.replaced(uid="") if meta.uid else meta).replacer("name")

    def make(name: str) -> Pod:
        return with_meta(with_name(name))
    return make


class Replicas(Sequence):
    """`count` pods of one template, the i-th named prefix + str(start + i), each Pod made only when it is read (a
    few microseconds, by K8sModel.replacer): a pending replica costs no object (Scheduler.add_replicas). A replica
    is the template with that name and no uid. Slices are Replicas; reading one pod twice makes two equal objects."""

    __slots__ = ("template", "prefix", "start", "count", "_make")

    def __init__(self, template: Pod, prefix: str, start: int, count: int, _make: Callable | None = None):
        self.template, self.prefix, self.start, self.count = template, prefix, start, count
        self._make = _replica_maker(template) if _make is None else _make     # shared by the slices

    def names(self) -> list[str]:
        prefix = self.prefix
        return [f"{prefix}{i}" for i in range(self.start, self.start + self.count)]

    def keys(self) -> list[str]:
        """pod_keys of the replicas, without making them."""
        head = f"{self.template.metadata.namespace}/{self.prefix}"
        return [f"{head}{i}" for i in range(self.start, self.start + self.count)]

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, i):
        if isinstance(i, slice):
            a, b, step = i.indices(self.count)
            if step != 1:
                return [self[j] for j in range(a, b, step)]
            return Replicas(self.template, self.prefix, self.start + a, max(b - a, 0), self._make)
        if i < 0:
            i += self.count
        if not 0 <= i < self.count:
            raise IndexError("replica index out of range")
        return self._make(f"{self.prefix}{self.start + i}")

    def __iter__(self):
        return map(self._make, self.names())

    def __repr__(self) -> str:
        return f"Replicas({self.template.key!r}, prefix={self.prefix!r}, start={self.start}, count={self.count})"


class NodeSpec(K8sModel):
    unschedulable: StrictBool = False
    taints: list[Taint] = Field(default_factory=list)

    @field_validator("taints")
    @classmethod
    def _unique_key_effect(cls, taints: list[Taint]) -> list[Taint]:
        seen = set()
        for taint in taints:
            pair = (taint.key, taint.effect)
            if pair in seen:
                raise ValueError(f"taints must be unique by key and effect pair: {taint.key}:{taint.effect} repeats")
            seen.add(pair)
        return taints


class ContainerImage(K8sModel):
    """core/v1 ContainerImage: an image a node holds, under each of its names (ImageLocality reads them)."""
    names: list[str] = Field(default_factory=list)
    size_bytes: Int64 = 0


class NodeStatus(K8sModel):
    allocatable: ResourceList = Field(default_factory=ResourceList)
    capacity: ResourceList = Field(default_factory=ResourceList)
    images: list[ContainerImage] = Field(default_factory=list)

    @model_validator(mode="after")
    def _apply_api_defaults(self) -> NodeStatus:
        if "allocatable" not in self.model_fields_set:
            self.allocatable = self.capacity.copy()
        self.capacity.round_up_to_milli()
        self.allocatable.round_up_to_milli()
        return self


class Node(K8sModel):
    kind: str = "Node"
    metadata: ObjectMeta
    spec: NodeSpec = Field(default_factory=NodeSpec)
    status: NodeStatus = Field(default_factory=NodeStatus)

    @property
    def name(self) -> str:
        return self.metadata.name

    @model_validator(mode="after")
    def _api_validation(self) -> Node:
        problem = dns_subdomain_problem(self.metadata.name) if self.metadata.name else None
        if problem is not None:
            raise ValueError(f"metadata.name: {problem}")
        return self


NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


class Namespace(K8sModel):
    """core/v1 Namespace: its labels feed pod (anti-)affinity namespaceSelectors. The API server labels every
    namespace with kubernetes.io/metadata.name=<name> (NamespaceDefaultLabelName); validation does the same."""
    kind: str = "Namespace"
    metadata: ObjectMeta

    @model_validator(mode="after")
    def _apply_api_defaults(self) -> Namespace:
        self.metadata.labels[NAMESPACE_NAME_LABEL] = self.metadata.name
        return self

    @classmethod
    def implicit(cls, name: str) -> Namespace:
        """A namespace pods live in but the input does not list: it exists (the API server creates no pod in a
        missing namespace) and carries only the default label."""
        return cls(metadata=ObjectMeta(name=name))


_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")


def _label_problem(value: str, pattern: re.Pattern, name: str, ends: str) -> str | None:
    if len(value) > 63:
        return f'must be a {name} of at most 63 characters (got {len(value)}: "{value}")'
    if not pattern.fullmatch(value):
        return f"must be a {name}: lowercase letters, digits and '-', {ends} (got \"{value}\")"
    return None


def dns_label_problem(value: str) -> str | None:
    """Why `value` is not an RFC 1123 label (at most 63 of a-z, 0-9, '-', alphanumeric at both ends), or None."""
    return _label_problem(value, _DNS_LABEL, "DNS label", "starting and ending with a letter or digit")


def dns1035_label_problem(value: str) -> str | None:
    """Why `value` is not an RFC 1035 label (a DNS label that starts with a letter: Service names), or None."""
    return _label_problem(value, _DNS_1035_LABEL, "DNS-1035 label",
                          "starting with a letter and ending with a letter or digit")


DNS1123_SUBDOMAIN_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_DNS_SUBDOMAIN = re.compile(DNS1123_SUBDOMAIN_FMT)


def dns_subdomain_problem(value: str) -> str | None:
    """Why `value` is not an RFC 1123 subdomain (DNS labels joined by '.', at most 253 characters), or None."""
    if len(value) > 253:
        return f'must be a DNS subdomain of at most 253 characters (got {len(value)})'
    if not _DNS_SUBDOMAIN.fullmatch(value):
        return (f"must be a DNS subdomain: lowercase letters, digits, '-' and '.', each '.'-separated part "
                f'starting and ending with a letter or digit (got "{value}")')
    return None


def check_subdomain_name(meta) -> None:
    """metadata.name, when given, a DNS subdomain (NameIsDNSSubdomain: DeviceClass, ResourceSlice, ResourceClaim,
    PersistentVolume, StorageClass, ...); a missing name is reported where names are read."""
    problem = dns_subdomain_problem(meta.name) if meta.name else None
    if problem is not None:
        raise ValueError(f"metadata.name: {problem}")


QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_NAME = re.compile(QUALIFIED_NAME_FMT)


_QUALIFIED_NAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                       "alphanumeric character")


def qualified_name_errors(value: str) -> list[str]:
    """validation.IsQualifiedName: upstream's messages (empty: an optional DNS subdomain prefix and '/', then a name
    of at most 63 alphanumerics, '-', '_', '.' starting and ending alphanumeric)."""
    parts = value.split("/")
    name_rule = regex_error(_QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
    if len(parts) > 2:
        return [f"a qualified name {name_rule} with an optional DNS subdomain prefix and '/' (e.g. "
                f"'example.com/MyName')"]
    out = []
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            out.append("prefix part must be non-empty")
        else:
            if len(prefix) > 253:
                out.append("prefix part must be no more than 253 characters")
            if not _DNS_SUBDOMAIN.fullmatch(prefix):
                out.append("prefix part " + regex_error(
                    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                    "and must start and end with an alphanumeric character", DNS1123_SUBDOMAIN_FMT, "example.com"))
    name = parts[-1]
    if not name:
        out.append("name part must be non-empty")
    elif len(name) > 63:
        out.append("name part must be no more than 63 characters")
    if not _QUALIFIED_NAME.fullmatch(name):
        out.append(f"name part {name_rule}")
    return out


@lru_cache(maxsize=4096)        # a few keys repeat on every node and pod; a miss costs two regex matches
def label_key_problem(value: str) -> str | None:
    """Why `value` is not a label key (qualified_name_errors, joined), or None."""
    errors = qualified_name_errors(value)
    return f'{"; ".join(errors)} (got "{value}")' if errors else None


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
               "\\": "\\\\", '"': '\\"'}


def go_quote(text: str) -> str:
    """Go's strconv.Quote (fmt's %q): how a field error shows a bad string value."""
    out = []
    for char in text:
        if char in _GO_ESCAPES:
            out.append(_GO_ESCAPES[char])
        elif char.isprintable():
            out.append(char)
        elif ord(char) < 0x80:
            out.append(f"\\x{ord(char):02x}")
        else:
            out.append(f"\\u{ord(char):04x}" if ord(char) < 0x10000 else f"\\U{ord(char):08x}")
    return '"' + "".join(out) + '"'


LABEL_VALUE_FMT = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"


def regex_error(message: str, fmt: str, *examples: str) -> str:
    """validation.RegexError: the message, its examples and the regex, in upstream's words."""
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{message} ({'e.g. ' + shown if examples else ''}regex used for validation is '{fmt}')"


def label_value_errors(value: str) -> list[str]:
    """validation.IsValidLabelValue: upstream's messages (empty: a label value, i.e. empty, or at most 63
    alphanumerics, '-', '_', '.' starting and ending alphanumeric)."""
    out = ["must be no more than 63 characters"] if len(value) > 63 else []
    if value and not _QUALIFIED_NAME.fullmatch(value):
        out.append(regex_error("a valid label must be an empty string or consist of alphanumeric characters, '-', "
                               "'_' or '.', and must start and end with an alphanumeric character", LABEL_VALUE_FMT,
                               "MyValue", "my_value", "12345"))
    return out


def label_value_problem(value: str) -> str | None:
    """Why `value` is not a label value (label_value_errors, joined), or None."""
    errors = label_value_errors(value)
    return f'{"; ".join(errors)} (got "{value}")' if errors else None


def labels_problem(labels: dict[str, str], path: str) -> str | None:
    """ValidateLabels: the first bad key or value of `labels` at `path`."""
    for key, value in labels.items():
        problem = label_key_problem(key) or label_value_problem(value)
        if problem is not None:
            return f"{path}: {problem}"
    return None


def node_selector_term_problems(term: NodeSelectorTerm, path: str, label_values: bool = False) -> list[str]:
    """validateNodeSelectorRequirement / validateNodeFieldSelectorRequirement (the API server, pod create; a
    metadata.name value is a node name, in required and preferred terms alike). label_values: each matchExpressions
    value must be a label value (allowInvalidLabelValueInRequiredNodeAffinity false), checked after its key."""
    out = []
    for i, r in enumerate(term.match_expressions):
        at = f"{path}.matchExpressions[{i}]"
        if r.operator in ("In", "NotIn") and not r.values:
            out.append(f"{at}.values: Required value: must be specified when `operator` is 'In' or 'NotIn'")
        elif r.operator in ("Exists", "DoesNotExist") and r.values:
            out.append(f"{at}.values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
        elif r.operator in ("Gt", "Lt") and len(r.values) != 1:
            out.append(f"{at}.values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt'")
        problem = label_key_problem(r.key)
        if problem is not None:
            out.append(f"{at}.key: {problem}")
        for k, value in enumerate(r.values if label_values else ()):
            problem = label_value_problem(value)
            if problem is not None:
                out.append(f"{at}.values[{k}]: {problem}")
    for i, r in enumerate(term.match_fields):
        at = f"{path}.matchFields[{i}]"
        if r.operator not in ("In", "NotIn"):
            out.append(f'{at}.operator: Invalid value: "{r.operator}": not a valid selector operator')
        elif len(r.values) != 1:
            out.append(f"{at}.values: Required value: must be only one value when `operator` is 'In' or 'NotIn' for "
                       f"node field selector")
        if r.key != "metadata.name":
            out.append(f'{at}.key: Invalid value: "{r.key}": not a valid field selector key')
            continue
        for j, value in enumerate(r.values):             # nodeFieldSelectorValidators: ValidateNodeName
            problem = dns_subdomain_problem(value)
            if problem is not None:
                out.append(f'{at}.values[{j}]: Invalid value: "{value}": {problem}')
    return out


def node_selector_problem(selector: NodeSelector, path: str) -> str | None:
    """ValidateNodeSelector for a selector outside a pod (a ResourceSlice's): at least one term, each term's
    requirements with label values (allowInvalidLabelValueInRequiredNodeAffinity false); the first error."""
    if not selector.node_selector_terms:
        return f"{path}.nodeSelectorTerms: Required value: must have at least one node selector term"
    for i, term in enumerate(selector.node_selector_terms):
        problems = node_selector_term_problems(term, f"{path}.nodeSelectorTerms[{i}]", label_values=True)
        if problems:
            return problems[0]
    return None


# A pod volume's sources in the order validateVolumeSource reads them, each with the name its "more than 1 volume
# type" error gives it (the Go field's, as written there: cephFS, and downwarAPI).
_VOLUME_SOURCES = (("emptyDir", "emptyDir"), ("hostPath", "hostPath"), ("gitRepo", "gitRepo"),
                   ("gcePersistentDisk", "gcePersistentDisk"), ("awsElasticBlockStore", "awsElasticBlockStore"),
                   ("secret", "secret"), ("nfs", "nfs"), ("iscsi", "iscsi"), ("glusterfs", "glusterfs"),
                   ("flocker", "flocker"), ("persistentVolumeClaim", "persistentVolumeClaim"), ("rbd", "rbd"),
                   ("cinder", "cinder"), ("cephfs", "cephFS"), ("quobyte", "quobyte"),
                   ("downwardAPI", "downwarAPI"), ("fc", "fc"), ("flexVolume", "flexVolume"),
                   ("configMap", "configMap"), ("azureFile", "azureFile"), ("vsphereVolume", "vsphereVolume"),
                   ("photonPersistentDisk", "photonPersistentDisk"), ("portworxVolume", "portworxVolume"),
                   ("azureDisk", "azureDisk"), ("storageos", "storageos"), ("projected", "projected"),
                   ("scaleIO", "scaleIO"), ("csi", "csi"), ("ephemeral", "ephemeral"), ("image", "image"))


def volume_problems(volumes: list[dict], path: str) -> list[str]:
    """ValidateVolumes, per volume in order: its source (exactly one; a persistentVolumeClaim's claimName and an
    ephemeral volume's volumeClaimTemplate required: the other sources' own fields are not checked), then its name
    (required, a DNS label), then no name twice. A null source counts as absent, as a nil pointer does."""
    out, names = [], set()
    for i, volume in enumerate(volumes):
        at = f"{path}[{i}]"
        problems = []
        given = [(key, named) for key, named in _VOLUME_SOURCES if volume.get(key) is not None]
        if not given:
            problems.append(f"{at}: Required value: must specify a volume type")
        problems += [f"{at}.{named}: Forbidden: may not specify more than 1 volume type" for _, named in given[1:]]
        if given:
            source = volume[given[0][0]]
            if given[0][0] == "persistentVolumeClaim" and not source.get("claimName"):
                problems.insert(0, f"{at}.persistentVolumeClaim.claimName: Required value")
            elif given[0][0] == "ephemeral" and source.get("volumeClaimTemplate") is None:
                problems.insert(0, f"{at}.ephemeral.volumeClaimTemplate: Required value")
        name = volume.get("name") or ""
        problem = dns_label_problem(name) if name else "Required value"
        if problem is not None:
            problems.append(f"{at}.name: {problem}")
        if name in names:
            problems.append(f'{at}.name: Duplicate value: "{name}"')
        if not problems:
            names.add(name)
        out += problems
    return out


def toleration_problems(tolerations: list[Toleration], path: str) -> list[str]:
    """validateTolerations."""
    out = []
    for i, t in enumerate(tolerations):
        at = f"{path}[{i}]"
        if t.key:
            problem = label_key_problem(t.key)
            if problem is not None:
                out.append(f"{at}.key: {problem}")
        elif t.operator != "Exists":
            out.append(f'{at}.operator: Invalid value: "{t.operator}": operator must be Exists when `key` is empty, '
                       f'which means "match all values and all keys"')
        if t.toleration_seconds is not None and t.effect != "NoExecute":
            out.append(f'{at}.effect: Invalid value: "{t.effect}": effect must be \'NoExecute\' when '
                       f"`tolerationSeconds` is set")
        if t.operator == "Exists" and t.value:
            out.append(f'{at}.operator: Invalid value: "{t.value}": value must be empty when `operator` is \'Exists\'')
        if t.operator in ("Gt", "Lt") and not CANONICAL_DECIMAL.fullmatch(t.value):
            # content.IsDecimalInteger: EmptyError for "", its canonical-form message otherwise
            problem = "must be non-empty" if not t.value else DECIMAL_INTEGER_MESSAGE
            out.append(f'{at}.value: Invalid value: "{t.value}": {problem}')
    return out


DECIMAL_INTEGER_MESSAGE = "must be a valid decimal integer in canonical form"
CANONICAL_DECIMAL = re.compile(r"0|-?[1-9][0-9]*")      # content.IsDecimalInteger


def pod_problems(pod: "Pod", template: bool = False) -> list[str]:
    """What the API server's ValidatePodCreate rejects that the models alone do not (names, labels, container
    names, host ports, requests above limits, node selectors, tolerations, the PodGroup a schedulingGroup names,
    images with leading or trailing whitespace). A pod without containers, and a container without an image, are
    checked in manifests only (load.manifest_problem: upstream's scheduler unit tests build such pods;
    docs/semantics.md).
    `template`: `pod` is a pod template's spec and labels (ValidatePodTemplateSpec, pod_template_problem): it has
    no name or namespace of its own, and the rules of validateContainersOnlyForPod are left out."""
    meta, spec = pod.metadata, pod.spec
    out = []
    problem = None if template else dns_subdomain_problem(meta.name)
    if problem is not None:
        out.append(f"metadata.name: {problem}")
    problem = None if template else dns_label_problem(meta.namespace or "default")
    if problem is not None:
        out.append(f"metadata.namespace: {problem}")
    problem = labels_problem(meta.labels, "metadata.labels")
    if problem is not None:
        out.append(problem)
    seen, host_ports = set(), set()
    for group, containers in (("containers", spec.containers), ("initContainers", spec.init_containers)):
        for i, c in enumerate(containers):
            at = f"spec.{group}[{i}]"
            problem = dns_label_problem(c.name)
            if problem is not None:
                out.append(f"{at}.name: {problem}")
            elif c.name in seen:
                out.append(f'{at}.name: Duplicate value: "{c.name}"')
            seen.add(c.name)
            if group == "initContainers" and c.restart_policy is not None and c.restart_policy != "Always":
                out.append(f'{at}.restartPolicy: Unsupported value: "{c.restart_policy}": supported values: '
                           f'"Always"')
            for j, port in enumerate(c.ports):           # AccumulateUniqueHostPorts
                if port.host_port:
                    key = f"{port.protocol}/{port.host_ip}/{port.host_port}"
                    if key in host_ports:
                        out.append(f'{at}.ports[{j}].hostPort: Duplicate value: "{key}"')
                    host_ports.add(key)
            requests, limits = c.resources.requests, c.resources.limits
            for name in limits:
                if name in requests and requests.nanos(name) > limits.nanos(name):
                    out.append(f'{at}.resources.requests: Invalid value: "{nanos_to_text(requests.nanos(name))}": '
                               f"must be less than or equal to {name} limit of {nanos_to_text(limits.nanos(name))}")
    problem = labels_problem(spec.node_selector, "spec.nodeSelector")
    if problem is not None:
        out.append(problem)
    node_affinity = spec.affinity.node_affinity if spec.affinity is not None else None
    if node_affinity is not None:
        base = "spec.affinity.nodeAffinity"
        required = node_affinity.required_during_scheduling_ignored_during_execution
        for i, term in enumerate(required.node_selector_terms if required is not None else []):
            out += node_selector_term_problems(
                term, f"{base}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{i}]")
        for i, pref in enumerate(node_affinity.preferred_during_scheduling_ignored_during_execution):
            out += node_selector_term_problems(
                pref.preference, f"{base}.preferredDuringSchedulingIgnoredDuringExecution[{i}].preference")
    out += toleration_problems(spec.tolerations, "spec.tolerations")
    for i, volume in enumerate(spec.volumes):
        image = volume.get("image")          # ImageVolume: ImageLocality reads its reference
        if image is None:
            continue
        reference = image.get("reference") if isinstance(image, dict) else None
        if reference is not None and not isinstance(reference, str):
            out.append(f"spec.volumes[{i}].image.reference: Invalid value: {json.dumps(reference)}: must be a string")
        elif not reference:
            out.append(f"spec.volumes[{i}].image.reference: Required value")     # validateImageVolumeSource
    if spec.scheduling_group is not None:       # validateSchedulingGroup: a PodGroup name, as ValidatePodGroupName
        name, at = spec.scheduling_group.pod_group_name, "spec.schedulingGroup.podGroupName"
        if name is None:
            out.append(f"{at}: Invalid value: null: must specify one of: `podGroupName`")
        elif not name:
            out.append(f'{at}: Invalid value: "": must not be empty')
        elif (problem := dns_subdomain_problem(name)) is not None:
            out.append(f'{at}: Invalid value: "{name}": {problem}')
    if template:             # validateContainersOnlyForPod: pods, not templates
        return out
    for group, containers in (("containers", spec.containers), ("initContainers", spec.init_containers)):
        for i, c in enumerate(containers):
            if c.image != c.image.strip(_GO_SPACE):
                out.append(f"spec.{group}[{i}].image: Invalid value: {json.dumps(c.image, ensure_ascii=False)}: "
                           f"must not have leading or trailing whitespace")
    return out


def merge_label_keys(affinity: Affinity, labels: dict[str, str]) -> None:
    """matchLabelKeys / mismatchLabelKeys of every pod (anti-)affinity term become `key In (value)` /
    `key NotIn (value)` requirements of its labelSelector for each key the pod has a label for (the API server
    does this when the pod is created; a term without a labelSelector is left alone, it matches nothing).
    A requirement already there is not added again, so a pod read back from its stored form (which carries both
    the keys and the merged requirements) is unchanged."""
    for _, term in affinity.pod_terms():
        if term.label_selector is None:
            continue
        for keys, op in ((term.match_label_keys, "In"), (term.mismatch_label_keys, "NotIn")):
            for k in keys:
                if k not in labels:
                    continue
                req = LabelSelectorRequirement(key=k, operator=op, values=[labels[k]])
                if req not in term.label_selector.match_expressions:
                    term.label_selector.match_expressions.append(req)


def selector_problems(selector: LabelSelector | None, path: str) -> list[str]:
    """ValidateLabelSelector, strictly (AllowInvalidLabelValueInSelector false, as for objects being created):
    matchLabels as labels, each requirement's arity, key and values."""
    if selector is None:
        return []
    out = [p for p in [labels_problem(selector.match_labels, f"{path}.matchLabels")] if p is not None]
    for i, r in enumerate(selector.match_expressions):
        at = f"{path}.matchExpressions[{i}]"
        if r.operator in ("In", "NotIn") and not r.values:
            out.append(f"{at}.values: Required value: must be specified when `operator` is 'In' or 'NotIn'")
        if r.operator in ("Exists", "DoesNotExist") and r.values:
            out.append(f"{at}.values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
        out += [f"{at}.key: {p}" for p in [label_key_problem(r.key)] if p is not None]
        out += [f"{at}.values[{j}]: {p}" for j, v in enumerate(r.values) for p in [label_value_problem(v)]
                if p is not None]
    return out


def pod_affinity_problems(affinity: Affinity) -> list[str]:
    """What the API server's validatePodAffinityTerm rejects in the (merged) pod (anti-)affinity terms."""
    out = []
    for path, term in affinity.pod_terms():
        at = f"spec.affinity.{path}"
        out += selector_problems(term.label_selector, f"{at}.labelSelector")
        out += selector_problems(term.namespace_selector, f"{at}.namespaceSelector")
        for name in term.namespaces:
            problem = dns_label_problem(name)
            if problem:
                out.append(f'{at}.namespace: Invalid value: "{name}": {problem}')
        # validateMatchLabelKeysAndMismatchLabelKeys, before the topology key as upstream orders them.
        out += label_keys_problems(f"{at}.matchLabelKeys", term.match_label_keys, term.label_selector)
        out += label_keys_problems(f"{at}.mismatchLabelKeys", term.mismatch_label_keys, term.label_selector)
        out += keys_in_selector_problems(at, term.match_label_keys, term.label_selector)
        for i, k in enumerate(term.match_label_keys):
            if k in term.mismatch_label_keys:
                out.append(f'{at}.matchLabelKeys[{i}]: Invalid value: "{k}": exists in both matchLabelKeys and '
                           f"mismatchLabelKeys")
        if not term.topology_key:
            out.append(f"{at}.topologyKey: Required value: can not be empty")
        elif (problem := label_key_problem(term.topology_key)) is not None:
            out.append(f'{at}.topologyKey: Invalid value: "{term.topology_key}": {problem}')
    return out


def label_keys_problems(at: str, keys: list[str], selector: LabelSelector | None) -> list[str]:
    """validateLabelKeys: matchLabelKeys / mismatchLabelKeys (at `at`) need a labelSelector, and are label keys."""
    if not keys:
        return []
    if selector is None:
        return [f"{at}: Forbidden: must not be specified when labelSelector is not set"]
    return [f'{at}[{j}]: Invalid value: "{k}": {p}' for j, k in enumerate(keys)
            for p in [label_key_problem(k)] if p is not None]


def keys_in_selector_problems(at: str, keys: list[str], selector: LabelSelector | None) -> list[str]:
    """A matchLabelKeys key met twice in the merged labelSelector (in matchLabels, or in a requirement of its own
    beside the one the merge added): it was in the selector already. Reported at `at`[i], i the key's last index in
    `keys` (upstream indexes them by a map, the last index winning)."""
    if selector is None or not keys:
        return []
    out, last, seen = [], {k: j for j, k in enumerate(keys)}, set(selector.match_labels)
    for r in selector.match_expressions:
        if r.key in last and r.key in seen:
            out.append(f'{at}[{last[r.key]}]: Invalid value: "{r.key}": exists in both matchLabelKeys and '
                       f"labelSelector")
        seen.add(r.key)
    return out


# -- rules the API server applies that phalanx checks in manifests only (load.manifest_problem): upstream's own
# scheduler unit tests build objects that break them (GPU requests without limits, empty node selector terms, ...),
# and phalanx replays those through its Python API --------------------------------------------------------------
_STANDARD_CONTAINER_RESOURCES = {"cpu", "memory", "ephemeral-storage"}
ANNOTATIONS_SIZE_LIMIT = 256 * 1024         # TotalAnnotationSizeLimitB
_PORT_NAME_CHARS = re.compile(r"[-a-z0-9]+")


def port_name_problem(name: str) -> str | None:
    """IsValidPortName (an IANA_SVC_NAME): its first complaint, or None."""
    if len(name) > 15:
        return "must be no more than 15 characters"
    if not _PORT_NAME_CHARS.fullmatch(name):
        return "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"
    if not re.search(r"[a-z]", name):
        return "must contain at least one letter (a-z)"
    if "--" in name:
        return "must not contain consecutive hyphens"
    if name[0] == "-" or name[-1] == "-":
        return "must not begin or end with a hyphen"
    return None


def _native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource_name(name: str) -> bool:
    """IsExtendedResourceName: outside the kubernetes.io namespace, qualified, not a quota "requests." name."""
    return not _native(name) and not name.startswith("requests.") and label_key_problem(name) is None


def _overcommit_allowed(name: str) -> bool:
    return _native(name) and not name.startswith("hugepages-")


def resource_name_problem(name: str, container: bool) -> str | None:
    """validateContainerResourceName (container) / validateResourceName: why `name` is not a resource one may
    ask for, or None."""
    problem = label_key_problem(name)
    if problem is not None:
        return problem
    if "/" not in name:
        if container and name not in _STANDARD_CONTAINER_RESOURCES and not name.startswith("hugepages-"):
            return "must be a standard resource for containers"
    elif not _native(name) and not is_extended_resource_name(name):
        return "doesn't follow extended resource name standard"
    return None


def _integer_resource(name: str, container: bool) -> bool:
    return is_extended_resource_name(name) or (not container and name == "pods")


def resource_list_problem(resources: "ResourceList", path: str, container: bool = True) -> str | None:
    """Names and integer amounts of one ResourceList (requests, limits, overhead, node capacity)."""
    for name in resources:
        at = f"{path}[{name}]"
        problem = resource_name_problem(name, container)
        if problem is not None:
            return f'{at}: Invalid value: "{name}": {problem}'
        if _integer_resource(name, container) and resources.nanos(name) % 10**9:
            return f'{at}: Invalid value: "{nanos_to_text(resources.nanos(name))}": must be an integer'
    return None


def requirements_problem(req: ResourceRequirements, path: str) -> str | None:
    """ValidateResourceRequirements beyond requests <= limits (pod_problems): the names, integer amounts, requests
    equal to limits for resources that cannot be overcommitted (extended resources, hugepages), which need a limit,
    and hugepages only beside cpu or memory."""
    for part, resources in (("limits", req.limits), ("requests", req.requests)):
        problem = resource_list_problem(resources, f"{path}.{part}")
        if problem is not None:
            return problem
    for name in req.requests:
        if _overcommit_allowed(name):
            continue
        if name not in req.limits:
            return f"{path}.limits: Required value: Limit must be set for non overcommitable resources"
        if req.requests.nanos(name) != req.limits.nanos(name):
            return (f'{path}.requests: Invalid value: "{nanos_to_text(req.requests.nanos(name))}": must be equal to '
                    f"{name} limit of {nanos_to_text(req.limits.nanos(name))}")
    names = {*req.requests, *req.limits}
    if any(n.startswith("hugepages-") for n in names) and not names & {"cpu", "memory"}:
        return f"{path}: Forbidden: HugePages require cpu or memory"
    return None


def claim_refs_problem(claims: list[ResourceClaimRef], pod_claims: set[str], path: str) -> str | None:
    """validateResourceClaimNames: each entry names one of the pod's spec.resourceClaims, once per request."""
    seen = set()
    for i, claim in enumerate(claims):
        at = f"{path}[{i}]"
        if not claim.name:
            return f"{at}: Required value"
        key = claim.name
        if claim.request:
            problem = dns_label_problem(claim.request)
            if problem is not None:
                return f'{at}.request: Invalid value: "{claim.request}": {problem}'
            key += "/" + claim.request
        if key in seen:
            return f'{at}: Duplicate value: "{key}"'
        seen.add(key)
        if claim.name not in pod_claims:
            names = ": " + ", ".join(sorted(pod_claims)) if pod_claims else " which is empty"
            return f'{at}: Not found: "{claim.name}": must be one of the names in pod.spec.resourceClaims{names}'
    return None


def annotations_problem(annotations: dict[str, str], path: str) -> str | None:
    """ValidateAnnotations at `path`: keys are qualified names (compared lower-cased), and they all fit in 256 KiB."""
    for key in annotations:
        problem = label_key_problem(key.lower())
        if problem is not None:
            return f'{path}: Invalid value: "{key}": {problem}'
    if sum(len(k) + len(v) for k, v in annotations.items()) > ANNOTATIONS_SIZE_LIMIT:
        return f"{path}: Too long: may not be more than {ANNOTATIONS_SIZE_LIMIT} bytes"
    return None


def meta_problem(meta: ObjectMeta) -> str | None:
    """ValidateAnnotations (annotations_problem), then ValidateOwnerReferences (owner_references_problem)."""
    return annotations_problem(meta.annotations, "metadata.annotations") or owner_references_problem(
        meta.owner_references)


def owner_references_problem(refs: list[OwnerReference]) -> str | None:
    """apimachinery's ValidateOwnerReferences (its paths unindexed, as upstream's): an apiVersion with a version
    (schema.ParseGroupVersion: at most one '/'), a kind and a name, and at most one controller. Deliberately
    lenient: an empty uid, which the API server refuses, is accepted (hand-written manifests leave it out; owners
    are matched by uid only when both sides have one, objects.controlled_by)."""
    controller = ""
    for ref in refs:
        version = "" if ref.api_version.count("/") > 1 else ref.api_version.rpartition("/")[2]
        if not version:
            return (f'metadata.ownerReferences.apiVersion: Invalid value: "{ref.api_version}": version must not be '
                    f"empty")
        if not ref.kind:
            return 'metadata.ownerReferences.kind: Invalid value: "": kind must not be empty'
        if not ref.name:
            return 'metadata.ownerReferences.name: Invalid value: "": name must not be empty'
        if ref.controller:
            if controller:
                return (f'metadata.ownerReferences: Only one reference can have Controller set to true. Found "true" '
                        f"in references for {controller} and {ref.kind}/{ref.name}")
            controller = f"{ref.kind}/{ref.name}"
    return None


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _names_problem(names: list[tuple[int, str]], path_of, problem_of) -> str | None:
    """The first of the (index, name) pairs `problem_of` refuses (field.Invalid), or the first repeated one
    (field.Duplicate); `path_of(index)` is its field path."""
    seen = set()
    for i, name in names:
        problem = problem_of(name)
        if problem is not None:
            return f'{path_of(i)}: Invalid value: "{name}": {problem}'
        if name in seen:
            return f'{path_of(i)}: Duplicate value: "{name}"'
        seen.add(name)
    return None


def pod_claims_problem(claims: list[PodResourceClaim], path: str) -> str | None:
    """validatePodResourceClaims: each name a DNS label, none twice; the ResourceClaim or ResourceClaimTemplate named
    a DNS subdomain (ValidateResourceClaimName, ValidateResourceClaimTemplateName). Not checked: the name a
    template's claim would get (`<pod>-<name>`: upstream's generated names differ; see controllers.py)."""
    seen = set()
    for i, claim in enumerate(claims):
        at = f"{path}[{i}]"
        if claim.name in seen:
            return f"{at}.name: Duplicate value: {go_quote(claim.name)}"
        problem = dns_label_problem(claim.name)
        if problem is not None:
            return f"{at}.name: {problem}"
        seen.add(claim.name)
        for field, value in (("resourceClaimName", claim.resource_claim_name),
                             ("resourceClaimTemplateName", claim.resource_claim_template_name)):
            problem = None if value is None else dns_subdomain_problem(value)
            if problem is not None:
                return f"{at}.{field}: {problem}"
    return None


def pod_template_problem(spec: PodSpec, labels: dict[str, str], at: str) -> str | None:
    """What ValidatePodTemplateSpec rejects in a pod template (`at`: its path, e.g. spec.template) that the models
    alone do not: the pod's rules (Pod validation, on an API-defaulted copy of the spec) but for the template's
    missing name and namespace, the rules upstream applies to pods only (validateContainersOnlyForPod: image
    whitespace) and the merge of matchLabelKeys with the pod's labels (a template is validated as written; its
    pods are merged and validated again when they are made). A controller's template is checked whatever number
    of pods it makes, as the API server checks it when the controller is created."""
    meta = ObjectMeta(name="template", labels=labels)
    try:
        Pod.model_validate({"metadata": meta, "spec": spec.model_copy(deep=True)}, context={POD_TEMPLATE: True})
    except ValidationError as error:
        return f"{at}.{validation_problem(error)}"
    return None


def made_pod_spread_problem(pod: Pod) -> str | None:
    """A pod a controller or the Job controller makes from a template (validated as written when it was loaded):
    its spread constraints' matchLabelKeys merged with its own labels (spread_selector_problems), which the API
    server checks when the controller creates it. None when no constraint has matchLabelKeys."""
    for i, c in enumerate(pod.spec.topology_spread_constraints):
        if c.match_label_keys:
            problems = spread_selector_problems(c, pod.metadata.labels, f"spec.topologySpreadConstraints[{i}]")
            if problems:
                return problems[0]
    return None


def pod_spec_manifest_problem(spec: PodSpec, path: str = "spec", labels: dict[str, str] | None = None) -> str | None:
    """What ValidatePodSpec rejects in a manifest that pod_problems leaves to it (see above): container images
    (required, also in pod templates), resource names and amounts, port names, hostNetwork ports, node names,
    scheduling gates, empty node selector terms and required terms' values, toleration values, spread constraints (a topologyKey, not
    repeated; matchLabelKeys and labelSelector: spread_selector_problems, over the selector merged with `labels`,
    the pod's, or as written for a pod template: None); first of all its volumes (volume_problems: upstream's
    scheduler unit tests name volumes as the API server would not)."""
    volumes = volume_problems(spec.volumes, f"{path}.volumes")
    if volumes:
        return volumes[0]
    problem = pod_claims_problem(spec.resource_claims, f"{path}.resourceClaims")
    if problem is not None:
        return problem
    pod_claims = {c.name for c in spec.resource_claims}
    for group, containers in (("containers", spec.containers), ("initContainers", spec.init_containers)):
        for i, c in enumerate(containers):
            at = f"{path}.{group}[{i}]"
            if not c.image:             # validateContainerCommon, for pods and pod templates alike
                return f"{at}.image: Required value"
            problem = (requirements_problem(c.resources, f"{at}.resources")
                       or claim_refs_problem(c.resources.claims, pod_claims, f"{at}.resources.claims"))
            if problem is not None:
                return problem
            problem = _names_problem([(j, port.name) for j, port in enumerate(c.ports) if port.name],
                                     lambda j, at=at: f"{at}.ports[{j}].name", port_name_problem)
            if problem is not None:
                return problem
            for j, port in enumerate(c.ports):
                if port.host_ip and not _is_ip(port.host_ip):
                    return (f'{at}.ports[{j}].hostIP: Invalid value: "{port.host_ip}": must be a valid IP address, '
                            f"(e.g. 10.9.8.7 or 2001:db8::ffff)")
                if spec.host_network and port.host_port != port.container_port:
                    return (f"{at}.ports[{j}].hostPort: Invalid value: {port.host_port}: must match `containerPort` "
                            f"when `hostNetwork` is true")
    problem = resource_list_problem(spec.overhead, f"{path}.overhead")
    if problem is not None:
        return problem
    if spec.resources is not None:
        if "claims" in spec.resources.model_fields_set:     # validatePodResources: `Claims != nil`, so [] too
            return f"{path}.resources.claims: Forbidden: claims may not be set for Resources at pod-level"
        problem = requirements_problem(spec.resources, f"{path}.resources")
        if problem is not None:
            return problem
        for name in spec.resources.limits:
            if name in spec.resources.requests and spec.resources.requests.nanos(name) > spec.resources.limits.nanos(
                    name):
                return (f'{path}.resources.requests: Invalid value: '
                        f'"{nanos_to_text(spec.resources.requests.nanos(name))}": must be less than or equal to '
                        f"{name} limit of {nanos_to_text(spec.resources.limits.nanos(name))}")
    if spec.node_name:
        problem = dns_subdomain_problem(spec.node_name)
        if problem is not None:
            return f'{path}.nodeName: Invalid value: "{spec.node_name}": {problem}'
    problem = _names_problem(list(enumerate(g.name for g in spec.scheduling_gates)),
                             lambda i: f"{path}.schedulingGates[{i}]", label_key_problem)
    if problem is not None:
        return problem
    if spec.scheduling_gates and spec.node_name:
        return f"{path}.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"
    node_affinity = spec.affinity.node_affinity if spec.affinity is not None else None
    required = node_affinity.required_during_scheduling_ignored_during_execution if node_affinity else None
    if required is not None and not required.node_selector_terms:
        return (f"{path}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: "
                f"Required value: must have at least one node selector term")
    for i, term in enumerate(required.node_selector_terms if required is not None else []):
        # ValidateNodeSelectorRequirement with AllowInvalidLabelValueInRequiredNodeAffinity false (a new pod): the
        # values of required terms are label values (preferred terms' are not checked)
        for j, r in enumerate(term.match_expressions):
            for k, v in enumerate(r.values):
                problem = label_value_problem(v)
                if problem is not None:
                    return (f"{path}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                            f"nodeSelectorTerms[{i}].matchExpressions[{j}].values[{k}]: {problem}")
    for i, t in enumerate(spec.tolerations):
        problem = label_value_problem(t.value) if t.operator == "Equal" else None   # Gt/Lt: toleration_problems
        if problem is not None:
            return f'{path}.tolerations[{i}].value: Invalid value: "{t.value}": {problem}'
    seen = {}
    for i, c in enumerate(spec.topology_spread_constraints):
        at = f"{path}.topologySpreadConstraints[{i}]"
        if not c.topology_key:              # ValidateTopologyKey: only that it is there, not its format
            return f"{at}.topologyKey: Required value: can not be empty"
        pair = (c.topology_key, c.when_unsatisfiable)
        if pair in seen:        # reported at the first of the two, as ValidateSpreadConstraintNotRepeat does
            return (f"{path}.topologySpreadConstraints[{seen[pair]}].{{topologyKey, whenUnsatisfiable}}: Duplicate "
                    f'value: "{{{pair[0]}, {pair[1]}}}"')
        seen[pair] = i
        problems = spread_selector_problems(c, labels, at)
        if problems:
            return problems[0]
    return None


def merged_spread_selector(constraint: TopologySpreadConstraint, labels: dict[str, str]) -> LabelSelector | None:
    """The constraint's labelSelector as the API server stores it when it creates a pod of these labels (v1.36,
    MatchLabelKeysInPodTopologySpreadSelectorMerge: pod strategy mutateTopologySpreadConstraints): `key In
    (value)` appended for each matchLabelKeys key the pod has a label for; none without a labelSelector. As for
    pod affinity (merge_label_keys), a requirement already there is not appended again, so a pod read back from
    its stored form is unchanged. The pod's own selector is left as written: PodTopologySpread merges the keys
    itself when it reads the constraint (plugins/pod_topology_spread.py), which selects the same pods."""
    selector = constraint.label_selector
    if selector is None or not constraint.match_label_keys:
        return selector
    extra = [LabelSelectorRequirement(key=k, operator="In", values=[labels[k]])
             for k in constraint.match_label_keys if k in labels]
    extra = [r for r in extra if r not in selector.match_expressions]
    return selector.model_copy(update={"match_expressions": [*selector.match_expressions, *extra]}) if extra \
        else selector


def spread_selector_problems(constraint: TopologySpreadConstraint, labels: dict[str, str] | None,
                             at: str) -> list[str]:
    """What v1.36's validateTopologySpreadConstraints says of a constraint's matchLabelKeys and labelSelector, with
    MatchLabelKeysInPodTopologySpread and its SelectorMerge on (ValidateMatchLabelKeysAndMismatchLabelKeys, then
    ValidateLabelSelector, strictly): matchLabelKeys need a labelSelector; each is a label key; a matchLabelKeys key
    may not be in the merged labelSelector twice (in matchLabels, or in a requirement of its own, beside the one
    the merge adds: reported at the constraint's `[i]`, i the key's last index in matchLabelKeys, as upstream
    does). `labels`: the pod's, whose values the merge reads; None for a pod template, which the API server
    validates as written (its pods are merged and validated when they are created)."""
    keys = constraint.match_label_keys
    selector = constraint.label_selector if labels is None else merged_spread_selector(constraint, labels)
    return (label_keys_problems(f"{at}.matchLabelKeys", keys, selector) + keys_in_selector_problems(at, keys, selector)
            + selector_problems(selector, f"{at}.labelSelector"))


def node_manifest_problem(node: "Node") -> str | None:
    """ValidateNode beyond names: label keys and values, annotations, taints, integer capacities."""
    problem = labels_problem(node.metadata.labels, "metadata.labels") or meta_problem(node.metadata)
    if problem is not None:
        return problem
    for i, taint in enumerate(node.spec.taints):
        problem = label_key_problem(taint.key)
        if problem is not None:
            return f'spec.taints[{i}].key: Invalid value: "{taint.key}": {problem}'
        problem = label_value_problem(taint.value)
        if problem is not None:
            return f'spec.taints[{i}].value: Invalid value: "{taint.value}": {problem}'
    for part, resources in (("capacity", node.status.capacity), ("allocatable", node.status.allocatable)):
        problem = resource_list_problem(resources, f"status.{part}", container=False)
        if problem is not None:
            return problem
    return None


HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000


class PriorityClass(K8sModel):
    kind: str = "PriorityClass"
    metadata: ObjectMeta
    value: Int32
    global_default: StrictBool = False
    preemption_policy: PreemptionPolicy | None = None

    @model_validator(mode="after")
    def _api_validation(self) -> PriorityClass:
        # ValidatePriorityClass: only the system classes (named "system-...") may go above 1e9.
        if self.value > HIGHEST_USER_DEFINABLE_PRIORITY and not self.metadata.name.startswith("system-"):
            raise ValueError(f"value: Forbidden: maximum allowed value of a user defined priority is "
                             f"{HIGHEST_USER_DEFINABLE_PRIORITY}")
        return self


def priority_class_manifest_problem(pc: PriorityClass) -> str | None:
    """ValidatePriorityClass's names: DNS subdomains, and the "system-" prefix reserved for the system classes
    (IsKnownSystemPriorityClass: the known name, its value, never the global default)."""
    name = pc.metadata.name
    problem = dns_subdomain_problem(name)
    if problem is not None:
        return f"metadata.name: {problem}"
    if name.startswith("system-"):
        known = SYSTEM_PRIORITY_CLASSES.get(name)
        if known is None:
            error = f"{name} is not a known system priority class"
        elif pc.value != known:
            error = f"value of {name} PriorityClass must be {known}"
        elif pc.global_default:
            error = f"globalDefault of {name} PriorityClass must be false"
        else:
            return None
        return (f"metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use "
                f"only. error: {error}")
    return None
