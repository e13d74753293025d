"""Workload-aware scheduling objects: scheduling.k8s.io/v1alpha2 Workload and PodGroup (Kubernetes v1.36), the
older scheduling.k8s.io/v1alpha1 Workload converted to the v1alpha2 form, and the lookup of a pod's group.

Shapes (k8s.io/api/scheduling/v1alpha2/types.go, v1.36):

    Workload.spec
      controllerRef?        {apiGroup?, kind, name}                 TypedLocalObjectReference
      podGroupTemplates[]   1..8 items, unique by name              PodGroupTemplate
        name                DNS label
        schedulingPolicy    exactly one of  basic: {}  |  gang: {minCount >= 1}
        schedulingConstraints?   {topology: [{key: <label key>}]}   at most one topology constraint
        resourceClaims[]    0..4, unique by name; each {name: DNS label, exactly one of
                            resourceClaimName | resourceClaimTemplateName (DNS subdomains)}
        disruptionMode?     "Pod" | "PodGroup"
        priorityClassName?  DNS subdomain
        priority?           int32, at most 1,000,000,000 (HighestUserDefinablePriority)
    PodGroup.spec
      podGroupTemplateRef?  {workload: {workloadName: DNS subdomain, podGroupTemplateName: DNS label}}
      schedulingPolicy, schedulingConstraints?, resourceClaims[], disruptionMode?, priorityClassName?,
      priority?             as on a template (the workload controller copies them from it)
    PodGroup.status.conditions[]   metav1.Condition; known types PodGroupScheduled and DisruptionTarget,
                            known reasons Unschedulable, SchedulerError (PodGroupScheduled) and
                            PreemptionByScheduler (DisruptionTarget); unique by type

Pods join a group through spec.schedulingGroup.podGroupName, the name of a PodGroup in the pod's namespace.

Validation is the create-time validation of the API server (declarative tags in types.go plus
pkg/apis/scheduling/validation): every rule above, each reported as one InputError line naming the field.
Update rules (every spec field of both kinds is immutable) cannot be checked on a single load and are not.
Not checked either: status condition fields beyond type and status (the API validates them only on status
updates), and the rule that all templates of a Workload share one priority (it appears upstream only together
with the v1alpha3 CompositePodGroup templates, not in v1.36).

v1alpha1 (Kubernetes v1.35) had no PodGroup object. Its Workload read

    spec: {controllerRef?, podGroups: [{name, policy: basic {} | gang {minCount}}]}

and a pod joined a group with spec.workloadRef {name (the Workload), podGroup (a name in spec.podGroups),
podGroupReplicaKey? (separate replicas of one group, each gang-scheduled on its own)}. The conversion:

    v1alpha1 Workload  spec.podGroups[i] {name, policy}
        -> v1alpha2 Workload  spec.podGroupTemplates[i] {name, schedulingPolicy: policy}
    pod spec.workloadRef {name: W, podGroup: G, podGroupReplicaKey: K}
        -> one PodGroup per distinct (namespace, W, G, K), named "W-G" or "W-G-K", with
           podGroupTemplateRef.workload = {workloadName: W, podGroupTemplateName: G} and the template's
           policy, constraints, claims, disruption mode and priority copied, as a v1.36 controller would.
           These PodGroups are made by the loader (see `podgroups_for_workload_refs`) and resolve the pod's
           group in `pod_group_of`; pods keep their workloadRef.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, Field, PrivateAttr, StrictInt, field_validator, model_validator

from .objects import (INT32_MAX, INT32_MIN, K8sModel, ObjectMeta, Pod, Timestamp, dns_label_problem,
                      dns_subdomain_problem, go_quote, label_key_problem)

if TYPE_CHECKING:
    from .load import ClusterObjects

__all__ = [
    "DISRUPTION_TARGET",
    "PODGROUP_SCHEDULED",
    "BasicSchedulingPolicy",
    "GangSchedulingPolicy",
    "PodGroup",
    "PodGroupCondition",
    "PodGroupIndex",
    "PodGroupResolution",
    "PodGroupResourceClaim",
    "PodGroupSchedulingConstraints",
    "PodGroupSchedulingPolicy",
    "PodGroupSpec",
    "PodGroupStatus",
    "PodGroupTemplate",
    "PodGroupTemplateReference",
    "TopologyConstraint",
    "TypedLocalObjectReference",
    "Workload",
    "WorkloadPodGroupTemplateReference",
    "WorkloadSpec",
    "WorkloadV1Alpha1",
    "pod_group_of",
    "pod_group_reason",
    "podgroups_for_workload_refs",
    "resolve_pod_group",
]

SCHEDULING_V1ALPHA1 = "scheduling.k8s.io/v1alpha1"
SCHEDULING_V1ALPHA2 = "scheduling.k8s.io/v1alpha2"

WORKLOAD_MAX_POD_GROUP_TEMPLATES = 8
MAX_POD_GROUP_RESOURCE_CLAIMS = 4
MAX_TOPOLOGY_CONSTRAINTS = 1
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000

PODGROUP_SCHEDULED = "PodGroupScheduled"
DISRUPTION_TARGET = "DisruptionTarget"

DisruptionMode = Literal["Pod", "PodGroup"]

# ---- name formats (k8s.io/apimachinery/pkg/util/validation) ----

def path_segment_errors(value: str) -> list[str]:
    """path.IsValidPathSegmentName's messages, upstream's text: "." and ".." are refused alone, '/' and '%' each
    once wherever they appear."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in value]


def path_segment_problem(value: str) -> str | None:
    """Why `value` cannot be a path segment name (".", "..", or containing '/' or '%'), or None."""
    if value in (".", ".."):
        return f'may not be "{value}"'
    errors = path_segment_errors(value)
    return f'{errors[0]} (got "{value}")' if errors else None


def _required(value: str, problem_of) -> str:
    # Declarative validation reports an empty required string as missing, before any format check.
    if value == "":
        raise ValueError("field required")
    problem = problem_of(value)
    if problem is not None:
        raise ValueError(problem)
    return value


def _optional(value: str, problem_of) -> str:
    if value == "":
        return value
    return _required(value, problem_of)


# Required names checked as upstream's validation does, declared once for every field that needs them.
DnsLabel = Annotated[str, AfterValidator(lambda value: _required(value, dns_label_problem))]
DnsSubdomain = Annotated[str, AfterValidator(lambda value: _required(value, dns_subdomain_problem))]


def _duplicate_names(items: list, path: str, key=lambda item: item.name) -> None:
    seen: set[str] = set()
    for index, item in enumerate(items):
        name = key(item)
        if name in seen:
            raise ValueError(f'{path}[{index}].name: duplicate name "{name}"')
        seen.add(name)


def _one_to_eight(raw: Any) -> Any:
    if isinstance(raw, list):
        if not raw:
            raise ValueError("must have at least one item")
        if len(raw) > WORKLOAD_MAX_POD_GROUP_TEMPLATES:
            raise ValueError(f"must have at most {WORKLOAD_MAX_POD_GROUP_TEMPLATES} items (got {len(raw)})")
    return raw


def _object_name(meta: ObjectMeta, problem_of) -> None:
    problem = problem_of(meta.name)
    if problem is not None:
        raise ValueError(f"metadata.name: {problem}")


# ---- shared spec parts ----

class TypedLocalObjectReference(K8sModel):
    api_group: str = ""
    kind: str
    name: str

    @field_validator("api_group")
    @classmethod
    def _api_group(cls, value: str) -> str:
        return _optional(value, dns_subdomain_problem)

    @field_validator("kind", "name")
    @classmethod
    def _segment(cls, value: str) -> str:
        return _required(value, path_segment_problem)


class BasicSchedulingPolicy(K8sModel):
    """Empty: its presence selects pod-by-pod scheduling."""


class GangSchedulingPolicy(K8sModel):
    min_count: StrictInt = Field(le=INT32_MAX)

    @field_validator("min_count")
    @classmethod
    def _positive(cls, value: int) -> int:
        if value < 1:
            raise ValueError(f"must be greater than or equal to 1 (got {value})")
        return value


class PodGroupSchedulingPolicy(K8sModel):
    """A union: exactly one of basic and gang."""

    basic: BasicSchedulingPolicy | None = None
    gang: GangSchedulingPolicy | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> PodGroupSchedulingPolicy:
        if self.basic is None and self.gang is None:
            raise ValueError("must specify one of: `basic`, `gang`")
        if self.basic is not None and self.gang is not None:
            raise ValueError("exactly one of `basic`, `gang` is required, but multiple fields are set")
        return self

    @property
    def min_count(self) -> int:
        """The pods that must fit together: gang.minCount, or 1 for basic scheduling."""
        return self.gang.min_count if self.gang is not None else 1


class TopologyConstraint(K8sModel):
    key: str

    @field_validator("key")
    @classmethod
    def _label_key(cls, value: str) -> str:
        return _required(value, label_key_problem)


class PodGroupSchedulingConstraints(K8sModel):
    topology: list[TopologyConstraint] = Field(default_factory=list)

    @field_validator("topology", mode="before")
    @classmethod
    def _at_most_one(cls, raw: Any) -> Any:
        if isinstance(raw, list) and len(raw) > MAX_TOPOLOGY_CONSTRAINTS:
            raise ValueError(f"must have at most {MAX_TOPOLOGY_CONSTRAINTS} item (got {len(raw)})")
        return raw


class PodGroupResourceClaim(K8sModel):
    name: DnsLabel
    resource_claim_name: DnsSubdomain | None = None
    resource_claim_template_name: DnsSubdomain | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> PodGroupResourceClaim:
        if self.resource_claim_name is None and self.resource_claim_template_name is None:
            raise ValueError("must specify one of: `resourceClaimName`, `resourceClaimTemplateName`")
        if self.resource_claim_name is not None and self.resource_claim_template_name is not None:
            raise ValueError("exactly one of `resourceClaimName`, `resourceClaimTemplateName` is required, "
                             "but multiple fields are set")
        return self


class _GroupSettings(K8sModel):
    """The fields a PodGroupTemplate and a PodGroup share."""

    scheduling_policy: PodGroupSchedulingPolicy
    scheduling_constraints: PodGroupSchedulingConstraints | None = None
    resource_claims: list[PodGroupResourceClaim] = Field(default_factory=list)
    disruption_mode: DisruptionMode | None = None
    priority_class_name: str = ""
    priority: StrictInt | None = Field(default=None, ge=INT32_MIN, le=INT32_MAX)

    @field_validator("resource_claims", mode="before")
    @classmethod
    def _at_most_four(cls, raw: Any) -> Any:
        if isinstance(raw, list) and len(raw) > MAX_POD_GROUP_RESOURCE_CLAIMS:
            raise ValueError(f"must have at most {MAX_POD_GROUP_RESOURCE_CLAIMS} items (got {len(raw)})")
        return raw

    @field_validator("priority_class_name")
    @classmethod
    def _class_name(cls, value: str) -> str:
        return _optional(value, dns_subdomain_problem)

    @field_validator("priority")
    @classmethod
    def _user_definable(cls, value: int | None) -> int | None:
        if value is not None and value > HIGHEST_USER_DEFINABLE_PRIORITY:
            raise ValueError(f"must be less than or equal to {HIGHEST_USER_DEFINABLE_PRIORITY} (got {value})")
        return value

    def _check_claims(self, path: str) -> None:
        _duplicate_names(self.resource_claims, f"{path}resourceClaims")

    @property
    def topology_keys(self) -> list[str]:
        return [c.key for c in self.scheduling_constraints.topology] if self.scheduling_constraints else []


# ---- Workload ----

class PodGroupTemplate(_GroupSettings):
    name: DnsLabel


class WorkloadSpec(K8sModel):
    controller_ref: TypedLocalObjectReference | None = None
    pod_group_templates: list[PodGroupTemplate]

    @field_validator("pod_group_templates", mode="before")
    @classmethod
    def _count(cls, raw: Any) -> Any:
        return _one_to_eight(raw)

    def template(self, name: str) -> PodGroupTemplate | None:
        return next((t for t in self.pod_group_templates if t.name == name), None)


class Workload(K8sModel):
    """scheduling.k8s.io/v1alpha2 Workload: the policy templates of a workload's pod groups."""

    kind: str = "Workload"
    metadata: ObjectMeta
    spec: WorkloadSpec
    _converted_from: str | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _object_rules(self) -> Workload:
        if not self.metadata.namespace:
            self.metadata.namespace = "default"
        _object_name(self.metadata, dns_subdomain_problem)
        _duplicate_names(self.spec.pod_group_templates, "spec.podGroupTemplates")
        for index, template in enumerate(self.spec.pod_group_templates):
            template._check_claims(f"spec.podGroupTemplates[{index}].")
        return self

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"

    @property
    def converted_from(self) -> str | None:
        """The apiVersion this object was read as when it was converted (scheduling.k8s.io/v1alpha1), or None."""
        return self._converted_from


# ---- PodGroup ----

class WorkloadPodGroupTemplateReference(K8sModel):
    workload_name: DnsSubdomain
    pod_group_template_name: DnsLabel


class PodGroupTemplateReference(K8sModel):
    """A union with a single member today: `workload` must be set."""

    workload: WorkloadPodGroupTemplateReference | None = None

    @model_validator(mode="after")
    def _one(self) -> PodGroupTemplateReference:
        if self.workload is None:
            raise ValueError("must specify one of: `workload`")
        return self


class PodGroupSpec(_GroupSettings):
    pod_group_template_ref: PodGroupTemplateReference | None = None


class PodGroupCondition(K8sModel):
    type: str = Field(min_length=1)
    status: Literal["True", "False", "Unknown"]
    reason: str = ""
    message: str = ""
    last_transition_time: Timestamp | None = None
    observed_generation: StrictInt | None = None

    @field_validator("status", mode="before")
    @classmethod
    def _yaml_boolean(cls, raw: Any) -> Any:
        """An unquoted YAML `status: True` arrives as a boolean; the API value is the string."""
        return str(raw) if isinstance(raw, bool) else raw


class PodGroupStatus(K8sModel):
    conditions: list[PodGroupCondition] = Field(default_factory=list)

    def condition(self, type_: str) -> PodGroupCondition | None:
        return next((c for c in self.conditions if c.type == type_), None)


class PodGroup(K8sModel):
    """scheduling.k8s.io/v1alpha2 PodGroup: one runtime group of pods, scheduled as a unit."""

    kind: str = "PodGroup"
    metadata: ObjectMeta
    spec: PodGroupSpec
    status: PodGroupStatus = Field(default_factory=PodGroupStatus)
    # (namespace, workload, podGroup, replicaKey) of the v1alpha1 pod workloadRef it was made for, if any.
    _workload_ref: tuple[str, str, str, str] | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _object_rules(self) -> PodGroup:
        if not self.metadata.namespace:
            self.metadata.namespace = "default"
        _object_name(self.metadata, dns_subdomain_problem)
        self.spec._check_claims("spec.")
        seen: set[str] = set()
        for index, condition in enumerate(self.status.conditions):
            if condition.type in seen:
                raise ValueError(f'status.conditions[{index}].type: duplicate type "{condition.type}"')
            seen.add(condition.type)
        return self

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"

    @property
    def made_for_workload_ref(self) -> bool:
        """True for a PodGroup the loader made from v1alpha1 pod workloadRefs (not read from the input)."""
        return self._workload_ref is not None


# ---- v1alpha1 ----

class _PodGroupV1Alpha1(K8sModel):
    name: DnsLabel
    policy: PodGroupSchedulingPolicy


class _WorkloadSpecV1Alpha1(K8sModel):
    controller_ref: TypedLocalObjectReference | None = None
    pod_groups: list[_PodGroupV1Alpha1]

    @field_validator("pod_groups", mode="before")
    @classmethod
    def _count(cls, raw: Any) -> Any:
        return _one_to_eight(raw)


class WorkloadV1Alpha1(K8sModel):
    """scheduling.k8s.io/v1alpha1 Workload (Kubernetes v1.35), read only to be converted by `to_v1alpha2`.

    Verified shape (k8s.io/api/scheduling/v1alpha1/types.go as of v1.35): spec.controllerRef and
    spec.podGroups[] {name (DNS label), policy: basic {} | gang {minCount}}, at most 8 groups, unique names.
    Drafts of KEP-4671 showed other shapes (podSets, replicas, desiredCount); none of them is read.
    """

    kind: str = "Workload"
    metadata: ObjectMeta
    spec: _WorkloadSpecV1Alpha1

    @model_validator(mode="after")
    def _object_rules(self) -> WorkloadV1Alpha1:
        _object_name(self.metadata, dns_subdomain_problem)
        _duplicate_names(self.spec.pod_groups, "spec.podGroups")
        return self

    def to_v1alpha2(self) -> Workload:
        """podGroups[i] {name, policy} -> podGroupTemplates[i] {name, schedulingPolicy: policy}."""
        workload = Workload(
            metadata=self.metadata.model_copy(deep=True),
            spec=WorkloadSpec(
                controller_ref=self.spec.controller_ref,
                pod_group_templates=[
                    PodGroupTemplate(name=group.name, scheduling_policy=group.policy.model_copy(deep=True))
                    for group in self.spec.pod_groups]))
        workload._converted_from = SCHEDULING_V1ALPHA1
        return workload


# ---- a pod's group ----

def workload_ref_group_name(workload: str, pod_group: str, replica_key: str) -> str:
    """The name of the PodGroup made for a v1alpha1 workloadRef: "W-G", or "W-G-K" with a replica key."""
    return f"{workload}-{pod_group}-{replica_key}" if replica_key else f"{workload}-{pod_group}"


def _workload_ref_key(pod: Pod) -> tuple[str, str, str, str] | None:
    ref = pod.spec.workload_ref
    if ref is None:
        return None
    return pod.metadata.namespace, ref.name, ref.pod_group, ref.pod_group_replica_key


def podgroups_for_workload_refs(pods: list[Pod], workloads: list[Workload], taken: set[str]) -> list[PodGroup]:
    """One PodGroup per distinct v1alpha1 workloadRef whose Workload and pod group exist (the conversion in the
    module docstring). `taken` holds "namespace/name" of the PodGroups already loaded; a made name that
    collides with one of them, or two references that map to one name, raise ValueError."""
    by_key = {w.key: w for w in workloads}
    made: dict[tuple[str, str, str, str], PodGroup] = {}
    names: dict[str, tuple[str, str, str, str]] = {}
    for pod in pods:
        ref_key = _workload_ref_key(pod)
        if ref_key is None or ref_key in made:
            continue
        namespace, workload_name, group_name, replica_key = ref_key
        workload = by_key.get(f"{namespace}/{workload_name}")
        template = workload.spec.template(group_name) if workload is not None else None
        if template is None:
            continue  # dangling: the pod waits (pod_group_reason says why)
        name = workload_ref_group_name(workload_name, group_name, replica_key)
        shown = f"{namespace}/{name}"
        if shown in taken or shown in names:
            raise ValueError(f'Pod {pod.key}: spec.workloadRef: the PodGroup it converts to, {shown}, '
                             f'is already taken by another PodGroup')
        settings = template.model_dump(exclude={"name"})
        group = PodGroup(
            metadata=ObjectMeta(name=name, namespace=namespace),
            spec=PodGroupSpec.model_validate({
                **settings,
                "pod_group_template_ref": {"workload": {"workload_name": workload_name,
                                                        "pod_group_template_name": group_name}}}))
        group._workload_ref = ref_key
        made[ref_key] = group
        names[shown] = ref_key
    return list(made.values())


@dataclass(frozen=True)
class PodGroupResolution:
    """The group of one pod: `group` when it resolves; `reason` (why the pod waits) when the reference dangles;
    both None for a pod that belongs to no group."""

    group: PodGroup | None = None
    reason: str | None = None


class PodGroupIndex:
    """PodGroups by namespace and name, and the PodGroups made for v1alpha1 workloadRefs by their reference;
    build once to resolve many pods."""

    def __init__(self, objects: ClusterObjects) -> None:
        self.by_name: dict[tuple[str, str], PodGroup] = {}
        self.by_workload_ref: dict[tuple[str, str, str, str], PodGroup] = {}
        for group in objects.pod_groups:
            self.add(group)
        self.workloads = {(w.metadata.namespace, w.metadata.name): w for w in objects.workloads}

    def add(self, group: PodGroup) -> None:
        if group._workload_ref is not None:
            self.by_workload_ref[group._workload_ref] = group
        else:
            self.by_name[(group.metadata.namespace, group.metadata.name)] = group

    def resolve(self, pod: Pod) -> PodGroupResolution:
        sg = pod.spec.scheduling_group
        if sg is not None and sg.pod_group_name:
            group = self.by_name.get((pod.metadata.namespace, sg.pod_group_name))
            if group is None:
                # The wording of kube-scheduler's GangScheduling PreEnqueue rejection
                # (UnschedulableAndUnresolvable) for a PodGroup it has not seen.
                return PodGroupResolution(
                    reason=f"waiting for pods's pod group {go_quote(sg.pod_group_name)} to appear in scheduling queue")
            return PodGroupResolution(group=group)
        ref_key = _workload_ref_key(pod)
        if ref_key is None:
            return PodGroupResolution()
        group = self.by_workload_ref.get(ref_key)
        if group is not None:
            return PodGroupResolution(group=group)
        namespace, workload_name, group_name, _ = ref_key
        workload = self.workloads.get((namespace, workload_name))
        if workload is None:
            return PodGroupResolution(
                reason=f"waiting for pod's workload {go_quote(workload_name)} (spec.workloadRef) to appear")
        return PodGroupResolution(
            reason=f"waiting for pod group {go_quote(group_name)} to appear in workload "
                   f"{go_quote(workload_name)} (spec.workloadRef)")


def resolve_pod_group(pod: Pod, objects: ClusterObjects) -> PodGroupResolution:
    """The pod's PodGroup, or why it has to wait. Builds an index per call; use PodGroupIndex for many pods."""
    return PodGroupIndex(objects).resolve(pod)


def pod_group_of(pod: Pod, objects: ClusterObjects) -> PodGroup | None:
    """The PodGroup a pod belongs to: spec.schedulingGroup.podGroupName looked up in the pod's namespace, or
    the PodGroup made for its v1alpha1 spec.workloadRef. None for a pod in no group and for a dangling
    reference; `pod_group_reason` tells the two apart."""
    return resolve_pod_group(pod, objects).group


def pod_group_reason(pod: Pod, objects: ClusterObjects) -> str | None:
    """Why a pod that names a group that does not exist must wait (the scheduler marks it
    UnschedulableAndUnresolvable and retries when the PodGroup appears), or None when nothing dangles."""
    return resolve_pod_group(pod, objects).reason
