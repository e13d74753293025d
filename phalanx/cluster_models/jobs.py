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
which is not read), and "<name>-<completions-1>", the hostname of its last pod, must be a DNS label. Not
checked: template.spec.restartPolicy (Never or OnFailure upstream), which PodSpec does not model, and the
update rule that freezes parallelism of a gang-scheduled Job.

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

from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator, model_validator

from .errors import InputError
from .objects import (
    INT32_MAX,
    K8sModel,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodSchedulingGroup,
    PodSpec,
    controlled_by,
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
    "Job",
    "JobObjects",
    "JobSpec",
    "PodTemplateMetadata",
    "PodTemplateSpec",
    "expand_jobs",
    "job_eligible_for_gang",
    "job_objects",
    "owned_by",
]

BATCH_V1 = "batch/v1"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_JOB_NAME_LABEL = "job-name"
JOB_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"  # both a label and an annotation
MAX_PARALLELISM_FOR_INDEXED_JOB = 100_000
MAX_LABEL_VALUE_LENGTH = 63
GANG_TEMPLATE_NAME = "workers"

CompletionMode = Literal["NonIndexed", "Indexed"]


class PodTemplateMetadata(K8sModel):
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)


class PodTemplateSpec(K8sModel):
    metadata: PodTemplateMetadata = Field(default_factory=PodTemplateMetadata)
    spec: PodSpec = Field(default_factory=PodSpec)


class JobSpec(K8sModel):
    parallelism: int = Field(default=1, le=INT32_MAX)
    completions: int | None = Field(default=None, le=INT32_MAX)
    completion_mode: CompletionMode = "NonIndexed"
    suspend: bool = False
    template: PodTemplateSpec

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
        return self

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"


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
    return Pod.model_validate({"metadata": metadata, "spec": spec})


def job_objects(job: Job) -> JobObjects:
    """The Workload, PodGroup and pods the Job controller creates for `job` (see the module docstring)."""
    spec = job.spec
    workload = group = None
    if job_eligible_for_gang(job):
        workload, group = _gang_objects(job)
    count = spec.parallelism if spec.completions is None else min(spec.parallelism, spec.completions)
    if spec.suspend:
        count = 0
    group_name = group.metadata.name if group is not None else None
    return JobObjects(workload=workload, pod_group=group, pods=[_pod(job, i, group_name) for i in range(count)])


def owned_by(obj: Any, job: Job) -> bool:
    """Whether `obj` (a Pod, Workload or PodGroup) is controlled by `job` (objects.controlled_by)."""
    return controlled_by(obj, "Job", "batch", job.metadata)


def expand_jobs(objects: ClusterObjects) -> ClusterObjects:
    """A copy of `objects` with every Job's Workload, PodGroup and pods appended (in Job order) after the
    objects already there; the Jobs stay. InputError when a made object's name is already taken by an object
    of its kind in its namespace, which is also what expanding the same objects twice runs into."""
    made = {"workloads": list(objects.workloads), "pod_groups": list(objects.pod_groups), "pods": list(objects.pods)}
    taken = {(obj.kind, obj.key) for bucket in made.values() for obj in bucket}
    for job in objects.jobs:
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
