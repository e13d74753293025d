"""Workload controllers and the pods they create: apps/v1 Deployment, ReplicaSet, StatefulSet and DaemonSet,
v1 ReplicationController, batch/v1 CronJob; and v1 Service, read for the selectors of default topology spreading
(cluster_models.spreading).

Validation is the API server's create-time validation of the fields read (pkg/apis/apps/validation,
pkg/apis/core/validation, v1.36): names (DNS subdomain; StatefulSet a DNS label; Service a DNS-1035 label;
CronJob at most 52 characters), replicas and ordinals.start non-negative, a selector that is required, valid and
not empty (apps/v1), template labels the selector matches, StatefulSet podManagementPolicy. The pod template is
validated as a pod (its errors name spec.template.<field>).

What each controller creates, with the labels and ownerReferences upstream gives (pkg/controller/..., v1.36):
  - ReplicaSet / ReplicationController: spec.replicas pods "<name>-<suffix>", owned by it (controller), minus
    the live pods of the input it already controls.
  - Deployment: one ReplicaSet "<name>-<pod-template-hash>" with the Deployment's replicas, selector and
    template, plus the pod-template-hash label on template and selector (then as above); none when spec.paused,
    or when the input already holds a ReplicaSet the Deployment controls (that one makes the pods).
  - StatefulSet: pods "<name>-<ordinal>" for ordinals start .. start+replicas-1 that the input does not hold,
    with the statefulset.kubernetes.io/pod-name and apps.kubernetes.io/pod-index labels, the
    controller-revision-hash label, and a persistentVolumeClaim volume per volumeClaimTemplate ("<claim>-<pod>").
    podManagementPolicy OrderedReady creates a pod only when the one before it is running: its pods arrive one
    by one, each when its predecessor is bound (sched.Scheduler); Parallel creates them together.
  - DaemonSet: one pod "<name>-<suffix>" for every node it should run on (nodeName, nodeSelector and required
    node affinity match, NoSchedule/NoExecute taints tolerated with the default tolerations below; the test is
    passed in by the caller, sched/cluster.py, as it runs the Filter kernels), minus nodes where a live pod of
    the input it controls already is. The pod's required node affinity becomes the single term
    `matchFields metadata.name In [node]` (other affinity kept), and it tolerates node.kubernetes.io/not-ready
    and unreachable (NoExecute), disk-pressure, memory-pressure, pid-pressure and unschedulable (NoSchedule),
    and network-unavailable (NoSchedule) with hostNetwork.
  - CronJob: its jobTemplate once, as the Job "<name>-<N>" where N is the CronJob's creationTimestamp in Unix
    minutes (0 without one) -- upstream names each run by its scheduled minute; there is no schedule here.
    None when spec.suspend. The Job is then expanded by the Job controller (cluster_models.jobs).

Deliberate differences: names are deterministic (see `NameGenerator`; upstream's suffixes and hashes are
random or hash a Go struct), and the controller-uid labels are left off.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from pydantic import Field, ValidationError, model_validator

from .errors import InputError, validation_problem
from .jobs import BATCH_V1, Job, JobSpec, PodTemplateMetadata, PodTemplateSpec
from .objects import (
    INT32_MAX,
    Affinity,
    K8sModel,
    LabelSelector,
    NodeAffinity,
    NodeSelector,
    ObjectMeta,
    OwnerReference,
    Pod,
    Toleration,
    dns1035_label_problem,
    dns_label_problem,
    dns_subdomain_problem,
    label_key_problem,
    label_value_problem,
    labels_problem,
    DONE_PHASES,
    controlled_by,
    rfc3339_seconds,
    selector_matches,
    selector_problems,
)
from .workloads import _object_name

APPS_V1 = "apps/v1"
CORE_V1 = "v1"
POD_TEMPLATE_HASH = "pod-template-hash"
CONTROLLER_REVISION_HASH = "controller-revision-hash"
STATEFULSET_POD_NAME = "statefulset.kubernetes.io/pod-name"
POD_INDEX = "apps.kubernetes.io/pod-index"
TEMPLATE_GENERATION = "pod-template-generation"
CRONJOB_MAX_NAME = 52
# utilrand's alphabet (no vowels, no 0/1/3): what generateName suffixes are made of.
SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
SUFFIX_LENGTH = 5
MAX_GENERATED_BASE = 63 - SUFFIX_LENGTH       # names.SimpleNameGenerator truncates longer bases


class NameGenerator:
    """metadata.generateName made deterministic: "<base><suffix>", the base cut to 58 characters, the suffix five
    characters of upstream's alphabet: the n-th value, n = 0, 1, ..., of a permutation of the 27^5 suffixes seeded
    by SHA-1 of the base (so suffixes look random but never repeat), the first name not taken yet in its (kind,
    namespace)."""

    SPACE = len(SUFFIX_ALPHABET) ** SUFFIX_LENGTH
    STEP = 7_654_321          # coprime with 27^5: n -> (seed + n * STEP) mod 27^5 visits every suffix once

    def __init__(self, taken: set[tuple[str, str]]):
        self.taken = taken              # (kind, "namespace/name" or "name"), shared with the caller
        self._next: dict[tuple[str, str | None, str], int] = {}
        self._seeds: dict[str, int] = {}

    def generate(self, kind: str, namespace: str | None, base: str, reserve: bool = True) -> str:
        """A name not in `taken`, added to it unless `reserve` is False (the caller adds it itself)."""
        base = base[:MAX_GENERATED_BASE]
        seed = self._seeds.get(base)
        if seed is None:
            seed = self._seeds[base] = int.from_bytes(hashlib.sha1(base.encode()).digest()[:8], "big") % self.SPACE
        n = self._next.get((kind, namespace, base), 0)
        while True:
            name = base + _suffix((seed + n * self.STEP) % self.SPACE, SUFFIX_LENGTH)
            n += 1
            key = (kind, f"{namespace}/{name}" if namespace is not None else name)
            if key not in self.taken:
                self._next[(kind, namespace, base)] = n
                if reserve:
                    self.taken.add(key)
                return name


def _suffix(code: int, length: int) -> str:
    out = []
    for _ in range(length):
        code, digit = divmod(code, len(SUFFIX_ALPHABET))
        out.append(SUFFIX_ALPHABET[digit])
    return "".join(out)


def template_hash(template: PodTemplateSpec) -> str:
    """A stable short hash of a pod template (upstream: FNV-32a of the Go struct, safe-encoded): ten characters
    of the suffix alphabet from SHA-1 of the template's JSON."""
    digest = int.from_bytes(hashlib.sha1(template.model_dump_json(by_alias=True).encode()).digest()[:8], "big")
    return _suffix(digest, 10)


# ---- objects --------------------------------------------------------------------------------------------------

def _name(meta: ObjectMeta, problem_of) -> None:
    if not meta.namespace:
        meta.namespace = "default"
    _object_name(meta, problem_of)
    problem = labels_problem(meta.labels, "metadata.labels")
    if problem is not None:
        raise ValueError(problem)


def _selector_rules(selector: LabelSelector, template: PodTemplateSpec, kind: str) -> None:
    # Validated strictly (AllowInvalidLabelValueInSelector false): keys and values as labels.
    problems = [p for p in [labels_problem(selector.match_labels, "spec.selector.matchLabels")] if p is not None]
    problems += selector_problems(selector, "spec.selector")
    for i, r in enumerate(selector.match_expressions):
        at = f"spec.selector.matchExpressions[{i}]"
        problems += [f"{at}.key: {p}" for p in [label_key_problem(r.key)] if p is not None]
        problems += [f"{at}.values[{j}]: {p}" for j, v in enumerate(r.values)
                     for p in [label_value_problem(v)] if p is not None]
    if problems:
        raise ValueError(problems[0])
    if not selector.match_labels and not selector.match_expressions:
        raise ValueError(f"spec.selector: Invalid value: {{}}: empty selector is invalid for {kind}")
    problem = labels_problem(template.metadata.labels, "spec.template.metadata.labels")
    if problem is not None:
        raise ValueError(problem)
    if not selector_matches(selector, template.metadata.labels):
        raise _not_matched(template)


def _not_matched(template: PodTemplateSpec) -> ValueError:
    labels = json.dumps(template.metadata.labels, separators=(",", ":"), ensure_ascii=False)
    return ValueError(f"spec.template.metadata.labels: Invalid value: {labels}: `selector` does not match template "
                      "`labels`")


class ServiceSpec(K8sModel):
    selector: dict[str, str] | None = None      # None: selects nothing (not everything)
    type: str = "ClusterIP"


class Service(K8sModel):
    kind: str = "Service"
    metadata: ObjectMeta
    spec: ServiceSpec = Field(default_factory=ServiceSpec)

    @model_validator(mode="after")
    def _rules(self) -> Service:
        _name(self.metadata, dns1035_label_problem)
        problem = labels_problem(self.spec.selector or {}, "spec.selector")
        if problem is not None:
            raise ValueError(problem)
        return self

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"


class _Owner(K8sModel):
    api_version: ClassVar[str] = APPS_V1

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"

    def reference(self) -> OwnerReference:
        return OwnerReference(api_version=self.api_version, kind=self.kind, name=self.metadata.name,
                              uid=self.metadata.uid, controller=True)

    def controlled(self, by_controller: dict[tuple[str, str, str], list]) -> list:
        """The objects of `by_controller` (_by_controller) this object controls (objects.controlled_by)."""
        candidates = by_controller.get((self.metadata.namespace, self.kind, self.metadata.name), ())
        return [obj for obj in candidates
                if controlled_by(obj, self.kind, self.api_version.rpartition("/")[0], self.metadata)]


class _Selected(_Owner):
    """An apps/v1 controller: its name rule, and a selector that is required, valid, not empty and matches the
    template's labels (ValidateDeploymentSpec, ValidateReplicaSetSpec, ValidateStatefulSetSpec,
    ValidateDaemonSetSpec)."""

    name_problem: ClassVar[Callable[[str], str | None]] = staticmethod(dns_subdomain_problem)
    selector_word: ClassVar[str]           # upstream's "empty selector is invalid for <word>"

    @model_validator(mode="after")
    def _rules(self) -> _Selected:
        _name(self.metadata, type(self).name_problem)
        _selector_rules(self.spec.selector, self.spec.template, self.selector_word)
        return self


class ReplicaSetSpec(K8sModel):
    replicas: int = Field(default=1, ge=0, le=INT32_MAX)
    selector: LabelSelector
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)


class ReplicaSet(_Selected):
    selector_word: ClassVar[str] = "deployment"          # upstream's wording for ReplicaSets too
    kind: str = "ReplicaSet"
    metadata: ObjectMeta
    spec: ReplicaSetSpec


class DeploymentSpec(ReplicaSetSpec):
    paused: bool = False


class Deployment(_Selected):
    selector_word: ClassVar[str] = "deployment"
    kind: str = "Deployment"
    metadata: ObjectMeta
    spec: DeploymentSpec


class ReplicationControllerSpec(K8sModel):
    replicas: int = Field(default=1, ge=0, le=INT32_MAX)
    selector: dict[str, str] = Field(default_factory=dict)    # defaults to the template's labels
    template: PodTemplateSpec | None = None


class ReplicationController(_Owner):
    api_version: ClassVar[str] = CORE_V1
    kind: str = "ReplicationController"
    metadata: ObjectMeta
    spec: ReplicationControllerSpec

    @model_validator(mode="after")
    def _rules(self) -> ReplicationController:
        _name(self.metadata, dns_subdomain_problem)
        spec = self.spec
        if spec.template is None:
            raise ValueError("spec.template: Required value")
        if not spec.selector:                      # SetDefaults_ReplicationController
            spec.selector = dict(spec.template.metadata.labels)
        if not spec.selector:
            raise ValueError("spec.selector: Required value")
        for path, labels in (("spec.selector", spec.selector),
                             ("spec.template.metadata.labels", spec.template.metadata.labels)):
            problem = labels_problem(labels, path)
            if problem is not None:
                raise ValueError(problem)
        if any(spec.template.metadata.labels.get(k) != v for k, v in spec.selector.items()):
            raise _not_matched(spec.template)
        return self


class StatefulSetOrdinals(K8sModel):
    start: int = Field(default=0, ge=0, le=INT32_MAX)


class StatefulSetSpec(ReplicaSetSpec):
    service_name: str = ""
    pod_management_policy: Literal["OrderedReady", "Parallel"] = "OrderedReady"
    ordinals: StatefulSetOrdinals = Field(default_factory=StatefulSetOrdinals)
    volume_claim_templates: list[dict] = Field(default_factory=list)


class StatefulSet(_Selected):
    name_problem: ClassVar[Callable[[str], str | None]] = staticmethod(dns_label_problem)
    selector_word: ClassVar[str] = "statefulset"
    kind: str = "StatefulSet"
    metadata: ObjectMeta
    spec: StatefulSetSpec


class DaemonSetSpec(K8sModel):
    selector: LabelSelector
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)


class DaemonSet(_Selected):
    selector_word: ClassVar[str] = "daemonset"
    kind: str = "DaemonSet"
    metadata: ObjectMeta
    spec: DaemonSetSpec


class JobTemplateSpec(K8sModel):
    metadata: PodTemplateMetadata = Field(default_factory=PodTemplateMetadata)
    spec: JobSpec


class CronJobSpec(K8sModel):
    schedule: str = Field(min_length=1)
    suspend: bool = False
    job_template: JobTemplateSpec


class CronJob(_Owner):
    api_version: ClassVar[str] = BATCH_V1
    kind: str = "CronJob"
    metadata: ObjectMeta
    spec: CronJobSpec

    @model_validator(mode="after")
    def _rules(self) -> CronJob:
        _name(self.metadata, dns_subdomain_problem)
        if len(self.metadata.name) > CRONJOB_MAX_NAME:
            raise ValueError(f"metadata.name: Invalid value: \"{self.metadata.name}\": must be no more than "
                             f"{CRONJOB_MAX_NAME} characters")
        return self


Controller = Deployment | ReplicaSet | ReplicationController | StatefulSet | DaemonSet | CronJob
CONTROLLER_KINDS: dict[str, tuple[str, type]] = {
    "Deployment": ("apps", Deployment), "ReplicaSet": ("apps", ReplicaSet), "StatefulSet": ("apps", StatefulSet),
    "DaemonSet": ("apps", DaemonSet), "ReplicationController": ("", ReplicationController),
    "CronJob": ("batch", CronJob),
}
CONTROLLER_TYPES = tuple(model for _, model in CONTROLLER_KINDS.values())


# ---- what the controllers create ----------------------------------------------------------------------------

@dataclass
class Made:
    """What expanding the controllers produced, in controller input order."""

    pods: list[Pod] = field(default_factory=list)
    replica_sets: list[ReplicaSet] = field(default_factory=list)    # made by Deployments
    jobs: list[Job] = field(default_factory=list)                   # made by CronJobs
    successors: dict[str, Pod] = field(default_factory=dict)        # OrderedReady: pod key -> the pod made after it
                                                                    # (those pods are not created yet)


def _template_error(owner: _Owner, problem: str) -> InputError:
    return InputError(f"{owner.kind} {owner.key}: spec.template.{problem}")


class _Stamper:
    """Pods from one template: the spec validated (and API-defaulted) once and shared by every pod; a pod's own
    fields (`spec_update`: a DaemonSet pod's node affinity, a StatefulSet pod's claim volumes, valid by
    construction) replace those of a shallow copy. A spec whose affinity merges match/mismatchLabelKeys from
    per-pod labels is validated per pod."""

    def __init__(self, owner: _Owner, template: PodTemplateSpec, labels: dict[str, str]):
        self.owner, self.template = owner, template
        affinity = template.spec.affinity
        self.per_pod = affinity is not None and any(
            term.match_label_keys or term.mismatch_label_keys
            for kind in (affinity.pod_affinity, affinity.pod_anti_affinity) if kind is not None
            for term in [*kind.required_during_scheduling_ignored_during_execution,
                         *(w.pod_affinity_term for w in kind.preferred_during_scheduling_ignored_during_execution)])
        # Replicas share their labels, annotations and ownerReferences objects too, so that intake recognises them
        # as one template (sched/shapes.py ShapeTable.by_template) without signing each.
        self.labels = labels
        self.annotations = dict(template.metadata.annotations)
        self.owner_references = [owner.reference()]
        self._shared: Pod | None = None

    def pod(self, name: str, extra_labels: dict[str, str] | None = None, spec_update: dict | None = None) -> Pod:
        labels = {**self.labels, **extra_labels} if extra_labels else self.labels
        if self._shared is not None and not self.per_pod:
            # The validated pod's copy with its own name and labels (both already valid): no validation per replica.
            meta = self._shared.metadata.__copy__()
            meta.name, meta.labels = name, labels
            pod = self._shared.__copy__()
            pod.metadata = meta
            if spec_update:
                pod.spec = self._shared.spec.model_copy(update=spec_update)
            return pod
        meta = ObjectMeta(name=name, namespace=self.owner.metadata.namespace, labels=labels,
                          annotations=self.annotations, owner_references=self.owner_references)
        pod = self._validate(meta, self.template.spec.model_copy(deep=True, update=spec_update or {}))
        if not self.per_pod:
            self._shared = pod
        return pod

    def _validate(self, meta: ObjectMeta, spec) -> Pod:
        try:
            return Pod.model_validate({"metadata": meta, "spec": spec})
        except ValidationError as error:
            raise _template_error(self.owner, validation_problem(error)) from None


def _by_controller(objects: Iterable) -> dict[tuple[str, str, str], list]:
    """Objects by (namespace, kind, name) of their controller ownerReference, read once for every controller."""
    out: dict[tuple[str, str, str], list] = {}
    for obj in objects:
        ref = next((r for r in obj.metadata.owner_references if r.controller), None)
        if ref is not None:
            out.setdefault((obj.metadata.namespace, ref.kind, ref.name), []).append(obj)
    return out


def _replica_pods(owner: ReplicaSet | ReplicationController, live: dict, names: NameGenerator, made: Made) -> None:
    template = owner.spec.template
    stamper = _Stamper(owner, template, dict(template.metadata.labels))
    for _ in range(max(0, owner.spec.replicas - len(owner.controlled(live)))):
        made.pods.append(stamper.pod(names.generate("Pod", owner.metadata.namespace, f"{owner.metadata.name}-")))


def _deployment(deployment: Deployment, replica_sets: dict) -> ReplicaSet | None:
    if deployment.spec.paused or deployment.controlled(replica_sets):
        return None
    spec = deployment.spec
    hash_ = template_hash(spec.template)
    template = spec.template.model_copy(deep=True)
    template.metadata.labels[POD_TEMPLATE_HASH] = hash_
    selector = spec.selector.model_copy(deep=True)
    selector.match_labels[POD_TEMPLATE_HASH] = hash_
    name = f"{deployment.metadata.name}-{hash_}"
    meta = ObjectMeta(name=name, namespace=deployment.metadata.namespace, labels=dict(template.metadata.labels),
                      owner_references=[deployment.reference()])
    try:
        return ReplicaSet(metadata=meta, spec=ReplicaSetSpec(replicas=spec.replicas, selector=selector,
                                                             template=template))
    except ValidationError as error:
        raise InputError(f"Deployment {deployment.key}: ReplicaSet {name}: {validation_problem(error)}") from None


def _stateful_set(sts: StatefulSet, live: dict, made: Made) -> None:
    spec, name = sts.spec, sts.metadata.name
    template = spec.template
    labels = {**template.metadata.labels, CONTROLLER_REVISION_HASH: f"{name}-{template_hash(template)}"}
    stamper = _Stamper(sts, template, labels)
    have = {p.metadata.name: p for p in sts.controlled(live)}
    claim_names = [t.get("metadata", {}).get("name", "") for t in spec.volume_claim_templates]
    previous = None      # the pod before this ordinal, while it is pending (OrderedReady waits for it)
    for ordinal in range(spec.ordinals.start, spec.ordinals.start + spec.replicas):
        pod_name = f"{name}-{ordinal}"
        if pod_name in have:
            previous = None if have[pod_name].spec.node_name else have[pod_name]
            continue
        update = None
        if claim_names:
            update = {"volumes": [*template.spec.volumes, *({"name": claim, "persistentVolumeClaim": {
                "claimName": f"{claim}-{pod_name}"}} for claim in claim_names)]}
        pod = stamper.pod(pod_name, {STATEFULSET_POD_NAME: pod_name, POD_INDEX: str(ordinal)}, update)
        made.pods.append(pod)
        if spec.pod_management_policy == "OrderedReady" and previous is not None:
            made.successors[previous.key] = pod
        previous = pod


DAEMON_TOLERATIONS = (
    Toleration(key="node.kubernetes.io/not-ready", operator="Exists", effect="NoExecute"),
    Toleration(key="node.kubernetes.io/unreachable", operator="Exists", effect="NoExecute"),
    Toleration(key="node.kubernetes.io/disk-pressure", operator="Exists", effect="NoSchedule"),
    Toleration(key="node.kubernetes.io/memory-pressure", operator="Exists", effect="NoSchedule"),
    Toleration(key="node.kubernetes.io/pid-pressure", operator="Exists", effect="NoSchedule"),
    Toleration(key="node.kubernetes.io/unschedulable", operator="Exists", effect="NoSchedule"),
)
NETWORK_UNAVAILABLE = Toleration(key="node.kubernetes.io/network-unavailable", operator="Exists", effect="NoSchedule")


def daemon_tolerations(spec) -> list[Toleration]:
    """AddOrUpdateDaemonPodTolerations: each default toleration replaces one of the pod's with the same key,
    operator, value and effect, or is appended."""
    out = list(spec.tolerations)
    for default in (*DAEMON_TOLERATIONS, *((NETWORK_UNAVAILABLE,) if spec.host_network else ())):
        same = [i for i, t in enumerate(out) if (t.key, t.operator, t.value, t.effect) ==
                (default.key, default.operator, default.value, default.effect)]
        if same:
            out = [default if i in same else t for i, t in enumerate(out)]
        else:
            out.append(default)
    return out


def daemon_probe(ds: DaemonSet) -> Pod:
    """The pod NodeShouldRunDaemonPod tests nodes with: the template with the default tolerations."""
    spec = ds.spec.template.spec.model_copy(deep=True)
    spec.tolerations = daemon_tolerations(spec)
    meta = ObjectMeta(name=ds.metadata.name, namespace=ds.metadata.namespace,
                      labels=dict(ds.spec.template.metadata.labels))
    try:
        return Pod.model_validate({"metadata": meta, "spec": spec})
    except ValidationError as error:
        raise _template_error(ds, validation_problem(error)) from None


def _node_affinity_for(affinity: Affinity | None, node: str) -> Affinity:
    """ReplaceDaemonSetPodNodeNameNodeAffinity."""
    required = NodeSelector.model_validate({"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [node]}]}]})
    affinity = affinity.model_copy(deep=True) if affinity is not None else Affinity()
    if affinity.node_affinity is None:
        affinity.node_affinity = NodeAffinity()
    affinity.node_affinity.required_during_scheduling_ignored_during_execution = required
    return affinity


def _daemon_set(ds: DaemonSet, nodes: list[str], live: dict, names: NameGenerator, made: Made) -> None:
    template = ds.spec.template
    labels = {**template.metadata.labels, CONTROLLER_REVISION_HASH: template_hash(template), TEMPLATE_GENERATION: "1"}
    stamper = _Stamper(ds, template, labels)
    served = {pod.spec.node_name or _affinity_node(pod) for pod in ds.controlled(live)}
    tolerations = daemon_tolerations(template.spec)
    for node in nodes:
        if node in served:
            continue
        update = {"tolerations": tolerations, "affinity": _node_affinity_for(template.spec.affinity, node)}
        made.pods.append(stamper.pod(names.generate("Pod", ds.metadata.namespace, f"{ds.metadata.name}-"), None,
                                     update))


def _affinity_node(pod: Pod) -> str | None:
    """The node a pending daemon pod is pinned to (its matchFields metadata.name term), if any."""
    na = pod.spec.affinity.node_affinity if pod.spec.affinity is not None else None
    required = na.required_during_scheduling_ignored_during_execution if na is not None else None
    for term in required.node_selector_terms if required is not None else ():
        for r in term.match_fields:
            if r.key == "metadata.name" and r.operator == "In" and len(r.values) == 1:
                return r.values[0]
    return None


def _cron_job(cj: CronJob) -> Job | None:
    if cj.spec.suspend:
        return None
    created = cj.metadata.creation_timestamp
    minutes = int(rfc3339_seconds(created) // 60) if created is not None else 0
    template = cj.spec.job_template
    meta = ObjectMeta(name=f"{cj.metadata.name}-{minutes}", namespace=cj.metadata.namespace,
                      labels=dict(template.metadata.labels), annotations=dict(template.metadata.annotations),
                      owner_references=[cj.reference()])
    try:
        return Job(metadata=meta, spec=template.spec.model_copy(deep=True))
    except ValidationError as error:
        raise InputError(f"CronJob {cj.key}: spec.jobTemplate: {validation_problem(error)}") from None


def expand_controllers(controllers: list, pods: list[Pod], daemon_nodes: Callable[[DaemonSet], list[str]]) -> Made:
    """Run each controller over the input (in input order) and return what it creates. `pods` are the input's
    pods (their names are taken; the live ones a controller controls count as its replicas); `daemon_nodes(ds)`
    names, in node order, the nodes a DaemonSet should run on."""
    made = Made()
    names = NameGenerator({("Pod", p.key) for p in pods})
    live = _by_controller(p for p in pods if p.status.phase not in DONE_PHASES and p.metadata.deletion_timestamp is None)
    replica_sets = _by_controller(c for c in controllers if isinstance(c, ReplicaSet))
    for controller in controllers:
        if isinstance(controller, Deployment):
            rs = _deployment(controller, replica_sets)
            if rs is not None:
                made.replica_sets.append(rs)
                _replica_pods(rs, live, names, made)
        elif isinstance(controller, (ReplicaSet, ReplicationController)):
            _replica_pods(controller, live, names, made)
        elif isinstance(controller, StatefulSet):
            _stateful_set(controller, live, made)
        elif isinstance(controller, DaemonSet):
            _daemon_set(controller, daemon_nodes(controller), live, names, made)
        elif isinstance(controller, CronJob):
            job = _cron_job(controller)
            if job is not None:
                made.jobs.append(job)
    return made
