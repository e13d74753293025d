"""batch/v1 Job and what the v1.36 Job controller makes of it, with the WorkloadWithJob feature gate on
(KEP-5547, first alpha).

Shape (the fields read; k8s.io/api/batch/v1/types.go):

    Job.spec
      parallelism?      int32 >= 0
      completions?      int32 >= 0
      completionMode?   "NonIndexed" | "Indexed"
      suspend?          bool
      template          {metadata: {labels, annotations}, spec: PodSpec}

Defaulting (SetDefaults_Job): with neither parallelism nor completions set both are 1, otherwise parallelism
defaults to 1 and completions stays unset; completionMode defaults to NonIndexed, suspend to false.

Validation (pkg/apis/batch/validation, create time, the rules on the fields above): metadata.name is a DNS
subdomain, and at most 63 characters because the API server copies it into the job-name label of the pod
template; parallelism and completions are non-negative; an Indexed Job needs completions, at most 100,000
parallelism (maxParallelismForIndexedJob; completions have no such limit unless backoffLimitPerIndex is set,
which is not read), and "<name>-<completions-1>", the hostname of its last pod, must be a DNS label;
backoffLimit is non-negative; template.spec.restartPolicy is OnFailure or Never (an unset one defaults to Always,
which a Job refuses; a manifest check); the pod template's own rules, whatever number of pods the Job makes
(ValidatePodTemplateSpec: template_problem); a selector without manualSelector must select the labels the API server
generates (job-name, controller-uid), and with manualSelector it is required and must match the template's labels. Not checked: the update rule that freezes parallelism of a gang-scheduled Job.

The controller, per Job (pkg/controller/job, v1.36):
  - A Job is gang-scheduled when parallelism > 1, completionMode is Indexed, completions == parallelism and
    the pod template has no schedulingGroup (a higher-level controller that sets it manages the groups).
    Such a Job gets a scheduling.k8s.io/v1alpha2 Workload (controllerRef: the Job) with one PodGroupTemplate
    whose policy is gang {minCount: parallelism}, a PodGroup made from that template, and pods whose
    spec.schedulingGroup.podGroupName names the PodGroup. Nothing else of the template is copied into the
    PodGroup: upstream copies only the scheduling policy.
  - Every other Job gets plain pods. Indexed pods carry their completion index as a label and annotation.
  - The active pods are min(parallelism, completions) (parallelism alone when completions is unset); a
    suspended Job has none, but keeps its Workload and PodGroup.
  - Workload, PodGroup and pods have a controller ownerReference to the Job; the PodGroup also references
    its Workload (not as controller).

Deliberate deviation: names are deterministic, so that a simulation is reproducible. Upstream the Workload is
"<job>-<hash of the Job's UID>", the template "<job>-pgt-0", the PodGroup "<workload>-<template>-<hash>", and
pods get a generateName suffix. Here they are "<job>", "workers", "<job>-workers" and "<job>-<index>" (the
index of the pod for NonIndexed Jobs as well). The controller-uid labels of the pods are left off, as an input
Job usually has no UID to fill them with.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from decimal import Decimal
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, StrictBool, StrictInt, ValidationError, field_validator, model_validator

from .errors import InputError, validation_problem
from .objects import (
    INT32_MAX,
    INT32_MIN,
    K8sModel,
    LabelSelector,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodSchedulingGroup,
    PodSpec,
    controlled_by,
    made_pod_spread_problem,
    pod_template_problem,
    selector_matches,
    selector_problems,
)
from .workloads import (
    SCHEDULING_V1ALPHA2,
    PodGroup,
    Workload,
    _object_name,
    dns_label_problem,
    dns_subdomain_problem,
)

if TYPE_CHECKING:
    from .load import ClusterObjects

__all__ = [
    "MAX_EXPANDED_PODS",
    "Job",
    "JobObjects",
    "JobSpec",
    "PodBudget",
    "PodTemplateMetadata",
    "PodTemplateSpec",
    "active_pods",
    "backoff_limit_problem",
    "expand_jobs",
    "go_json",
    "job_eligible_for_gang",
    "job_objects",
    "not_supported",
    "owned_by",
    "restart_policy_problem",
    "selector_json",
    "template_problem",
]

BATCH_V1 = "batch/v1"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_JOB_NAME_LABEL = "job-name"
JOB_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"  # both a label and an annotation
MAX_PARALLELISM_FOR_INDEXED_JOB = 100_000
MAX_LABEL_VALUE_LENGTH = 63
GANG_TEMPLATE_NAME = "workers"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
JOB_RESTART_POLICIES = ("OnFailure", "Never")               # validateJobSpec: what a Job's pods may have
MAX_EXPANDED_PODS = 10_000_000     # pods one expansion holds at most (PodBudget)

CompletionMode = Literal["NonIndexed", "Indexed"]

# Go's json.Marshal escapes these in strings, Python's json.dumps does not.
_GO_JSON_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def go_json(value: Any, sort_keys: bool = False) -> str:
    """`value` as Go's json.Marshal writes it: how a field error shows a bad value that is not a plain string or
    number (an enum's named type, a struct, a map: apimachinery field.Error.ErrorBody). Maps must come with their
    keys sorted, as Go sorts them (sort_keys: sorted here, for values that are all maps and lists); a struct's
    fields in declaration order. A non-integer number read from a manifest (kept exact as a Decimal by the loader)
    is written as its float."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys, default=_json_number)
    for char, escaped in _GO_JSON_ESCAPES:
        text = text.replace(char, escaped)
    return text


def _json_number(value: Any) -> int | float:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def not_supported(path: str, value: Any, supported: Iterable[str]) -> str:
    """field.NotSupported's message."""
    return f"{path}: Unsupported value: {go_json(value)}: supported values: {_quoted(supported)}"


def _quoted(values: Iterable[str]) -> str:
    return ", ".join(f'"{v}"' for v in values)


class PodTemplateMetadata(K8sModel):
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)


class PodTemplateSpec(K8sModel):
    metadata: PodTemplateMetadata = Field(default_factory=PodTemplateMetadata)
    spec: PodSpec = Field(default_factory=PodSpec)


def template_problem(template: PodTemplateSpec, at: str) -> str | None:
    """ValidatePodTemplateSpec on a Job's or controller's pod template (`at`: its path), whatever number of pods
    it makes: the pod rules that apply to templates (objects.pod_template_problem)."""
    return pod_template_problem(template.spec, template.metadata.labels, at)


def restart_policy_problem(template: PodTemplateSpec, at: str, supported: tuple[str, ...]) -> str | None:
    """The template's spec.restartPolicy (`at`: the template's path; PodSpec took it as a pod's: Always, OnFailure
    or Never) against what its owner runs, `supported`: Always for ReplicaSets, Deployments, StatefulSets, DaemonSets
    and ReplicationControllers (field.NotSupported); OnFailure or Never for a Job, which calls Always a missing value
    (field.Required). An unset one (Always once defaulted) is checked in manifests only (load.manifest_problem):
    objects built in Python (the demos, upstream's unit tests) leave it out, as they leave out containers."""
    policy = template.spec.restart_policy
    if policy is None or policy in supported:
        return None
    path = f"{at}.spec.restartPolicy"
    if policy == "Always":
        return f"{path}: Required value: valid values: {_quoted(supported)}"
    return not_supported(path, policy, supported)


class JobSpec(K8sModel):
    parallelism: StrictInt = Field(default=1, le=INT32_MAX)
    completions: StrictInt | None = Field(default=None, le=INT32_MAX)
    completion_mode: CompletionMode = "NonIndexed"
    suspend: StrictBool = False
    template: PodTemplateSpec
    backoff_limit: StrictInt | None = Field(default=None, ge=INT32_MIN, le=INT32_MAX)
    selector: LabelSelector | None = None
    manual_selector: StrictBool | None = None

    @field_validator("parallelism", "completions")
    @classmethod
    def _non_negative(cls, value: int | None) -> int | None:
        if value is not None and value < 0:
            raise ValueError(f"must be greater than or equal to 0 (got {value})")
        return value

    @model_validator(mode="after")
    def _single_pod_default(self) -> JobSpec:
        # SetDefaults_Job: leaving both counts out asks for one pod run to completion once.
        if not {"parallelism", "completions"} & self.model_fields_set:
            self.completions = 1
        return self


class Job(K8sModel):
    """batch/v1 Job: the fields that decide which pods (and scheduling objects) its controller creates."""

    kind: str = "Job"
    metadata: ObjectMeta
    spec: JobSpec

    @model_validator(mode="after")
    def _object_rules(self) -> Job:
        if not self.metadata.namespace:
            self.metadata.namespace = "default"
        _object_name(self.metadata, dns_subdomain_problem)
        name, spec = self.metadata.name, self.spec
        if len(name) > MAX_LABEL_VALUE_LENGTH:
            raise ValueError(f"metadata.name: must be no more than {MAX_LABEL_VALUE_LENGTH} characters, as it is the "
                             f"value of the pods' {JOB_NAME_LABEL} label (got {len(name)})")
        problem = _generated_selector_problem(self) or backoff_limit_problem(spec, "spec")
        if problem is not None:
            raise ValueError(problem)
        if spec.completion_mode == "Indexed":
            if spec.completions is None:
                raise ValueError("spec.completions: field required when completionMode is Indexed")
            if spec.parallelism > MAX_PARALLELISM_FOR_INDEXED_JOB:
                raise ValueError(f"spec.parallelism: must be less than or equal to {MAX_PARALLELISM_FOR_INDEXED_JOB} "
                                 f"when completionMode is Indexed (got {spec.parallelism})")
            if spec.completions > 0:
                last = spec.completions - 1
                problem = dns_label_problem(f"{name}-{last}")
                if problem is not None:
                    raise ValueError(f"metadata.name: will not be able to create pods: the hostname of index {last} "
                                     f"{problem}")
        problem = (template_problem(spec.template, "spec.template")
                   or restart_policy_problem(spec.template, "spec.template", JOB_RESTART_POLICIES)
                   or _selector_problem(spec))
        if problem is not None:
            raise ValueError(problem)
        return self

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"


def backoff_limit_problem(spec: JobSpec, at: str) -> str | None:
    """validateJobSpec: backoffLimit is non-negative (`at`: the spec's path)."""
    if spec.backoff_limit is not None and spec.backoff_limit < 0:
        return f"{at}.backoffLimit: Invalid value: {spec.backoff_limit}: must be greater than or equal to 0"
    return None


def _generated_selector_problem(job: Job) -> str | None:
    """validateGeneratedSelector: without manualSelector the API server generates the selector -- the one given
    plus controller-uid -- and it must select the labels it puts on the template (job-name and controller-uid, both
    forms). The UID is new and random: a selector requiring a value of a controller-uid label, or a label other than
    those, does not select them. Upstream shows the selector with its generated controller-uid entry; here it is
    shown as given. An invalid selector is left to _selector_problem, as upstream skips this check for it."""
    spec = job.spec
    if spec.manual_selector or spec.selector is None or selector_problems(spec.selector, "spec.selector"):
        return None
    name, uid = job.metadata.name, "\0"      # no label value equals the UID-to-be
    generated = {LEGACY_CONTROLLER_UID_LABEL: uid, LEGACY_JOB_NAME_LABEL: name, CONTROLLER_UID_LABEL: uid,
                 JOB_NAME_LABEL: name}
    if selector_matches(spec.selector, generated):
        return None
    return f"spec.selector: Invalid value: {selector_json(spec.selector)}: `selector` not auto-generated"


def _selector_problem(spec: JobSpec) -> str | None:
    """ValidateJobSpec: the selector is valid, and with manualSelector (no selector generated) required and
    matching the template's labels."""
    problems = selector_problems(spec.selector, "spec.selector")
    if problems:
        return problems[0]
    if not spec.manual_selector:
        return None
    if spec.selector is None:
        return "spec.selector: Required value"
    labels = spec.template.metadata.labels
    if not selector_matches(spec.selector, labels):
        return (f"spec.template.metadata.labels: Invalid value: {go_json(dict(sorted(labels.items())))}: `selector` "
                "does not match template `labels`")
    return None


def selector_json(selector: LabelSelector) -> str:
    """A metav1.LabelSelector as json.Marshal writes it (empty parts left out)."""
    out: dict[str, Any] = {}
    if selector.match_labels:
        out["matchLabels"] = dict(sorted(selector.match_labels.items()))
    if selector.match_expressions:
        out["matchExpressions"] = [{"key": r.key, "operator": r.operator, **({"values": r.values} if r.values else {})}
                                   for r in selector.match_expressions]
    return go_json(out)


def job_eligible_for_gang(job: Job) -> bool:
    """Whether the v1.36 Job controller gang-schedules the Job (isGangSchedulingEligible): parallelism > 1,
    Indexed, completions == parallelism, and no schedulingGroup already set on the pod template."""
    spec = job.spec
    return (spec.parallelism > 1 and spec.completion_mode == "Indexed" and spec.completions == spec.parallelism
            and spec.template.spec.scheduling_group is None)


@dataclass(frozen=True)
class JobObjects:
    """What the Job controller creates for one Job: Workload and PodGroup for a gang-scheduled Job (else None),
    and the pods, in index order."""

    workload: Workload | None
    pod_group: PodGroup | None
    pods: list[Pod]


def _controller_ref(job: Job) -> OwnerReference:
    return OwnerReference(api_version=BATCH_V1, kind="Job", name=job.metadata.name, uid=job.metadata.uid,
                          controller=True)


def _gang_objects(job: Job) -> tuple[Workload, PodGroup]:
    name, namespace = job.metadata.name, job.metadata.namespace
    policy = {"gang": {"minCount": job.spec.parallelism}}
    workload = Workload.model_validate({
        "metadata": {"name": name, "namespace": namespace, "ownerReferences": [_controller_ref(job)]},
        "spec": {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": name},
                 "podGroupTemplates": [{"name": GANG_TEMPLATE_NAME, "schedulingPolicy": policy}]}})
    workload_ref = OwnerReference(api_version=SCHEDULING_V1ALPHA2, kind="Workload", name=name)
    group = PodGroup.model_validate({
        "metadata": {"name": f"{name}-{GANG_TEMPLATE_NAME}", "namespace": namespace,
                     "ownerReferences": [_controller_ref(job), workload_ref]},
        "spec": {"podGroupTemplateRef": {"workload": {"workloadName": name,
                                                      "podGroupTemplateName": GANG_TEMPLATE_NAME}},
                 "schedulingPolicy": policy}})
    return workload, group


def _pod(job: Job, index: int, pod_group: str | None) -> Pod:
    name, template = job.metadata.name, job.spec.template
    labels = {**template.metadata.labels, JOB_NAME_LABEL: name, LEGACY_JOB_NAME_LABEL: name}
    annotations = dict(template.metadata.annotations)
    if job.spec.completion_mode == "Indexed":
        labels[JOB_COMPLETION_INDEX] = annotations[JOB_COMPLETION_INDEX] = str(index)
    # Each pod gets its own copy of the template spec, which Pod validation then defaults (resource requests
    # from limits, milli rounding, ...) exactly as it does a pod read from a manifest.
    spec = template.spec.model_copy(deep=True)
    if pod_group is not None:
        spec.scheduling_group = PodSchedulingGroup(pod_group_name=pod_group)
    metadata = ObjectMeta(name=f"{name}-{index}", namespace=job.metadata.namespace, labels=labels,
                          annotations=annotations, owner_references=[_controller_ref(job)])
    return made_pod(f"Job {job.key}", metadata, spec)


def made_pod(owner: str, metadata: ObjectMeta, spec) -> Pod:
    """The Pod a controller (`owner`: "<Kind> <namespace>/<name>") makes from its template, validated as the API
    server validates a pod it is asked to create; a pod it would refuse names the template's field."""
    try:
        pod = Pod.model_validate({"metadata": metadata, "spec": spec})
    except ValidationError as error:
        raise InputError(f"{owner}: spec.template.{validation_problem(error)}") from None
    problem = made_pod_spread_problem(pod)
    if problem is not None:
        raise InputError(f"{owner}: spec.template.{problem}")
    return pod


def active_pods(spec: JobSpec) -> tuple[int, str]:
    """How many pods the Job controller runs at once for `spec` -- min(parallelism, completions), parallelism
    alone when completions is unset, none when suspended -- and the field (under the spec) that says so."""
    if spec.suspend:
        return 0, "suspend"
    if spec.completions is not None and spec.completions < spec.parallelism:
        return spec.completions, "completions"
    return spec.parallelism, "parallelism"


class PodBudget:
    """The pods one expansion may hold, MAX_EXPANDED_PODS: those it starts with (the input's, and the controllers'
    when Jobs are expanded after them) and each controller's or Job's, counted before they are made. An int32
    count is valid to the API server (replicas: 2147483647); expanding it would run for hours and fill memory."""

    def __init__(self, held: int = 0):
        self.held = held

    def take(self, count: int, owner: str, path: str) -> None:
        """Count `count` more pods, made by `owner` ("Kind namespace/name") because of the field `path`."""
        self.held += count
        if self.held > MAX_EXPANDED_PODS:
            in_all = "" if count > MAX_EXPANDED_PODS else f", {self.held} in all"
            raise InputError(f"{owner}: {path}: {count} pods{in_all}: more than phalanx expands "
                             f"({MAX_EXPANDED_PODS})")


def job_objects(job: Job) -> JobObjects:
    """The Workload, PodGroup and pods the Job controller creates for `job` (see the module docstring)."""
    workload = group = None
    if job_eligible_for_gang(job):
        workload, group = _gang_objects(job)
    count, field = active_pods(job.spec)
    PodBudget().take(count, f"Job {job.key}", f"spec.{field}")
    group_name = group.metadata.name if group is not None else None
    return JobObjects(workload=workload, pod_group=group, pods=[_pod(job, i, group_name) for i in range(count)])


def owned_by(obj: Any, job: Job) -> bool:
    """Whether `obj` (a Pod, Workload or PodGroup) is controlled by `job` (objects.controlled_by)."""
    return controlled_by(obj, "Job", "batch", job.metadata)


def expand_jobs(objects: ClusterObjects) -> ClusterObjects:
    """A copy of `objects` with every Job's Workload, PodGroup and pods appended (in Job order) after the
    objects already there; the Jobs stay. InputError when a made object's name is already taken by an object
    of its kind in its namespace, which is also what expanding the same objects twice runs into, and when the
    pods would be more than MAX_EXPANDED_PODS, those already there included (PodBudget)."""
    made = {"workloads": list(objects.workloads), "pod_groups": list(objects.pod_groups), "pods": list(objects.pods)}
    taken = {(obj.kind, obj.key) for bucket in made.values() for obj in bucket} if objects.jobs else set()
    budget = PodBudget(len(objects.pods))
    for job in objects.jobs:
        count, field = active_pods(job.spec)
        budget.take(count, f"Job {job.key}", f"spec.{field}")
        result = job_objects(job)
        for bucket, new in (("workloads", [result.workload]), ("pod_groups", [result.pod_group]),
                            ("pods", result.pods)):
            for obj in new:
                if obj is None:
                    continue
                if (obj.kind, obj.key) in taken:
                    raise InputError(f"Job {job.key}: the {obj.kind} it creates, {obj.key}, is already taken by "
                                     f"another {obj.kind}")
                taken.add((obj.kind, obj.key))
                made[bucket].append(obj)
    copies = {f.name: list(getattr(objects, f.name)) for f in fields(objects)}
    return replace(objects, **{**copies, **made})
