"""Workload controllers and the pods they create: apps/v1 Deployment, ReplicaSet, StatefulSet and DaemonSet,
v1 ReplicationController, batch/v1 CronJob; and v1 Service, read for the selectors of default topology spreading
(cluster_models.spreading).

Validation is the API server's create-time validation of the fields read (pkg/apis/apps/validation,
pkg/apis/core/validation, pkg/apis/batch/validation, v1.36): names (DNS subdomain; StatefulSet a DNS label;
Service a DNS-1035 label; CronJob at most 52 characters), a Service's selector and, in manifests, its ports, type
and clusterIPs (service_manifest_problem), replicas and ordinals.start non-negative, a selector that
is required, valid and not empty (apps/v1), template labels the selector matches, StatefulSet
podManagementPolicy, the template's restartPolicy Always (unset is Always), a Deployment's strategy, a
DaemonSet's and a StatefulSet's updateStrategy (with SetDefaults_DaemonSet's and SetDefaults_StatefulSet's defaults;
a StatefulSet's maxUnavailable as the MaxUnavailableStatefulSet gate, on by default since v1.35, has it),
minReadySeconds, revisionHistoryLimit (Deployment, DaemonSet) and progressDeadlineSeconds (Deployment: 600 when
unset, greater than minReadySeconds) non-negative, each where upstream checks it in its kind's spec; a CronJob's
schedule (robfig/cron v3's standard parser, no TZ= in it), concurrencyPolicy and jobTemplate (as a Job's spec,
without a selector). The pod template is validated when the object is, whatever number of pods it makes
(ValidatePodTemplateSpec: jobs.template_problem, the pod rules but those for pods only, such as image whitespace;
errors name spec.template.<field>, a CronJob's spec.jobTemplate.spec.template.<field>), and each pod made from it
as a pod (errors name the maker and spec.template.<field>).

What each controller creates, with the labels and ownerReferences upstream gives (pkg/controller/..., v1.36):
  - ReplicaSet / ReplicationController: spec.replicas pods "<name>-<suffix>", owned by it (controller), minus
    the live pods of the input it already controls.
  - Deployment: one ReplicaSet "<name>-<pod-template-hash>" with the Deployment's replicas, selector and
    template, plus the pod-template-hash label on template and selector (then as above); none when spec.paused,
    or when the input already holds a ReplicaSet the Deployment controls (that one makes the pods).
  - StatefulSet: pods "<name>-<ordinal>" for ordinals start .. start+replicas-1 that the input does not hold,
    with the statefulset.kubernetes.io/pod-name and apps.kubernetes.io/pod-index labels, the
    controller-revision-hash label, and a persistentVolumeClaim volume per volumeClaimTemplate ("<claim>-<pod>").
    The API server takes StatefulSet names up to 63 characters, but the controller-revision-hash label's value is
    "<name>-<hash>": past 52 characters it is no label value, the API server refuses every pod, and the
    StatefulSet runs none (kubernetes/kubernetes#64023); so here, with a warning (Made.warnings).
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
random or hash a Go struct), and the controller-uid labels are left off. At most MAX_EXPANDED_PODS pods are
expanded (jobs.PodBudget): more is one error naming the object and the count's field.
"""
from __future__ import annotations

import hashlib
import json
import re
import zoneinfo
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar

from pydantic import BeforeValidator, Field, StrictBool, StrictInt, ValidationError, field_validator, model_validator

from .durations import parse_duration
from .errors import InputError, render_value, validation_problem
from .jobs import (
    BATCH_V1,
    JOB_RESTART_POLICIES,
    Job,
    JobSpec,
    PodBudget,
    PodTemplateMetadata,
    PodTemplateSpec,
    active_pods,
    backoff_limit_problem,
    go_json,
    made_pod,
    not_supported,
    restart_policy_problem,
    selector_json,
    template_problem,
)
from .objects import (
    INT32_MAX,
    INT32_MIN,
    POD_TEMPLATE,
    Int32,
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
    go_quote,
    labels_problem,
    port_name_problem,
    _is_ip,
    DONE_PHASES,
    controlled_by,
    rfc3339_seconds,
    selector_matches,
    selector_problems,
)
from .storage import PersistentVolumeClaim
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
MAX_LABEL_VALUE = 63
ALWAYS = ("Always",)          # the restartPolicy of every controller's pods but a Job's


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
    problems = selector_problems(selector, "spec.selector")
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


def _int_or_string(value: Any) -> Any:
    """What intstr.IntOrString decodes: a string, or a number that is an int32."""
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)
                                  and INT32_MIN <= value <= INT32_MAX):
        return value
    raise ValueError(f"input should be an int32 or a string (got {render_value(value)})")


IntOrString = Annotated[int | str, BeforeValidator(_int_or_string)]


SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")    # as upstream lists them: sorted
PORT_PROTOCOLS = ("SCTP", "TCP", "UDP")
CLUSTER_IP_NONE = "None"        # a headless Service's clusterIP


class ServicePort(K8sModel):
    """spec.ports[]: read to be validated only (default topology spreading reads a Service's selector alone).
    SetDefaults_Service: protocol "" is TCP, a targetPort of 0 or "" is the port."""
    name: str = ""
    protocol: Annotated[str, BeforeValidator(lambda raw: "TCP" if raw == "" else raw)] = "TCP"
    port: StrictInt = Field(default=0, ge=INT32_MIN, le=INT32_MAX)
    target_port: IntOrString = 0

    @model_validator(mode="after")
    def _target_port_defaults_to_port(self) -> ServicePort:
        if self.target_port in (0, ""):
            self.target_port = self.port
        return self


class ServiceSpec(K8sModel):
    selector: dict[str, str] | None = None      # None: selects nothing (not everything)
    type: Annotated[str, BeforeValidator(lambda raw: "ClusterIP" if raw == "" else raw)] = "ClusterIP"
    ports: list[ServicePort] = Field(default_factory=list)
    cluster_ip: str = Field(default="", alias="clusterIP")
    cluster_ips: list[str] = Field(default_factory=list, alias="clusterIPs")
    external_name: str = ""


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


def _port_number_problem(path: str, value: int) -> str | None:
    """IsValidPortNum."""
    return None if 1 <= value <= 65535 else f"{path}: Invalid value: {value}: must be between 1 and 65535, inclusive"


def service_manifest_problem(service: Service) -> str | None:
    """validateService (pkg/apis/core/validation, v1.36) over the fields phalanx reads, in its order, after the API
    server's defaults (type ClusterIP, protocol TCP, targetPort = port) and the strategy's clusterIPs = [clusterIP]
    (NormalizeClusterIPs): ports are required but for a headless (clusterIP None) or ExternalName Service; a
    NodePort or LoadBalancer Service is not headless; an ExternalName Service has an externalName (a DNS subdomain,
    a trailing dot allowed) and no clusterIP; port names (required when there are several, DNS labels, unique),
    numbers, protocols and targetPorts (a number or an IANA port name); clusterIP and clusterIPs agree and are
    IPs (ValidateServiceClusterIPsRelatedFields); the type; one port per protocol and number. Checked in manifests
    only (load.manifest_problem): upstream's scheduler unit tests build Services of a selector alone."""
    spec = service.spec
    ips = spec.cluster_ips or ([spec.cluster_ip] if spec.cluster_ip else [])
    headless = ips == [CLUSTER_IP_NONE]
    if not spec.ports and not headless and spec.type != "ExternalName":
        return "spec.ports: Required value"
    if headless and spec.type in ("LoadBalancer", "NodePort"):
        return f'spec.clusterIPs[0]: Invalid value: "None": may not be set to \'None\' for {spec.type} services'
    if spec.type == "ExternalName":
        if ips:
            return "spec.clusterIPs: Forbidden: may not be set for ExternalName services"
        cname = spec.external_name.removesuffix(".")
        if not cname:
            return "spec.externalName: Required value"
        problem = dns_subdomain_problem(cname)
        if problem is not None:
            return f'spec.externalName: Invalid value: "{cname}": {problem}'
    names: set[str] = set()
    for i, port in enumerate(spec.ports):             # validateServicePort
        at = f"spec.ports[{i}]"
        if not port.name:
            if len(spec.ports) > 1:
                return f"{at}.name: Required value"
        elif (problem := dns_label_problem(port.name)) is not None:
            return f'{at}.name: Invalid value: "{port.name}": {problem}'
        elif port.name in names:
            return f'{at}.name: Duplicate value: "{port.name}"'
        names.add(port.name)
        problem = _port_number_problem(f"{at}.port", port.port)
        if problem is None and port.protocol not in PORT_PROTOCOLS:
            problem = not_supported(f"{at}.protocol", port.protocol, PORT_PROTOCOLS)
        if problem is None and isinstance(port.target_port, int):
            problem = _port_number_problem(f"{at}.targetPort", port.target_port)
        elif problem is None and (name_problem := port_name_problem(port.target_port)) is not None:
            problem = f'{at}.targetPort: Invalid value: "{port.target_port}": {name_problem}'
        if problem is not None:
            return problem
    if spec.type != "ExternalName":
        if spec.cluster_ip and spec.cluster_ips and spec.cluster_ips[0] != spec.cluster_ip:
            return f"spec.clusterIPs: Invalid value: {go_json(spec.cluster_ips)}: first value must match `clusterIP`"
        if not spec.cluster_ip and spec.cluster_ips:
            return (f"spec.clusterIPs: Invalid value: {go_json(spec.cluster_ips)}: must be empty when `clusterIP` is "
                    f"not specified")
        for i, ip in enumerate(ips):
            if i == 0 and ip == CLUSTER_IP_NONE:
                if len(ips) > 1:
                    return f"spec.clusterIPs: Invalid value: {go_json(ips)}: 'None' must be the first and only value"
            elif not _is_ip(ip):
                return (f'spec.clusterIPs[{i}]: Invalid value: "{ip}": must be a valid IP address, (e.g. 10.9.8.7 or '
                        f"2001:db8::ffff)")
        if len(ips) > 2:
            return f"spec.clusterIPs: Invalid value: {go_json(ips)}: may only hold up to 2 values"
    if spec.type not in SERVICE_TYPES:
        return not_supported("spec.type", spec.type, SERVICE_TYPES)
    seen: set[tuple[str, int]] = set()
    for i, port in enumerate(spec.ports):
        if (port.protocol, port.port) in seen:     # field.Duplicate of core.ServicePort{Protocol, Port}, as JSON
            return (f'spec.ports[{i}]: Duplicate value: {{"Name":"","Protocol":{go_json(port.protocol)},'
                    f'"AppProtocol":null,"Port":{port.port},"TargetPort":0,"NodePort":0}}')
        seen.add((port.protocol, port.port))
    return None


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
    """An apps/v1 controller: its name rule, a selector that is required, valid, not empty and matches the
    template's labels, and the template's restartPolicy Always (ValidateDeploymentSpec, ValidateReplicaSetSpec,
    ValidateStatefulSetSpec, ValidateDaemonSetSpec)."""

    name_problem: ClassVar[Callable[[str], str | None]] = staticmethod(dns_subdomain_problem)
    selector_word: ClassVar[str]           # upstream's "empty selector is invalid for <word>"

    @model_validator(mode="after")
    def _rules(self) -> _Selected:
        _name(self.metadata, type(self).name_problem)
        problem = self._before_selector_problem()
        if problem is not None:
            raise ValueError(problem)
        _selector_rules(self.spec.selector, self.spec.template, self.selector_word)
        problem = (template_problem(self.spec.template, "spec.template")
                   or restart_policy_problem(self.spec.template, "spec.template", ALWAYS)
                   or self._after_template_problem())
        if problem is not None:
            raise ValueError(problem)
        return self

    def _before_selector_problem(self) -> str | None:
        """The kind's spec rules upstream checks before the selector (replicas and ordinals.start, int32 fields
        whose range the model checks, come first)."""
        return None

    def _after_template_problem(self) -> str | None:
        """The kind's spec rules upstream checks after the template."""
        return None


class ReplicaSetSpec(K8sModel):
    replicas: StrictInt = Field(default=1, ge=INT32_MIN, le=INT32_MAX)    # non-negative: each kind's rules
    min_ready_seconds: Int32 = 0
    selector: LabelSelector
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)


class ReplicaSet(_Selected):
    selector_word: ClassVar[str] = "deployment"          # upstream's wording for ReplicaSets too
    kind: str = "ReplicaSet"
    metadata: ObjectMeta
    spec: ReplicaSetSpec

    def _before_selector_problem(self) -> str | None:
        """ValidateReplicaSetSpec: replicas, then minReadySeconds, before the selector."""
        return (non_negative_problem(self.spec.replicas, "spec.replicas")
                or non_negative_problem(self.spec.min_ready_seconds, "spec.minReadySeconds"))


class RollingUpdateDeployment(K8sModel):
    max_unavailable: IntOrString | None = None      # SetDefaults_Deployment: 25% each
    max_surge: IntOrString | None = None


class DeploymentStrategy(K8sModel):
    type: str = ""                                   # SetDefaults_Deployment: RollingUpdate
    rolling_update: RollingUpdateDeployment | None = None


class DeploymentSpec(ReplicaSetSpec):
    paused: StrictBool = False
    strategy: DeploymentStrategy = Field(default_factory=DeploymentStrategy)
    revision_history_limit: Int32 | None = None      # SetDefaults_Deployment: 10
    progress_deadline_seconds: Int32 | None = None   # SetDefaults_Deployment: 600


class Deployment(_Selected):
    selector_word: ClassVar[str] = "deployment"
    kind: str = "Deployment"
    metadata: ObjectMeta
    spec: DeploymentSpec

    def _before_selector_problem(self) -> str | None:
        """ValidateDeploymentSpec: replicas before the selector."""
        return non_negative_problem(self.spec.replicas, "spec.replicas")

    def _after_template_problem(self) -> str | None:
        """ValidateDeploymentSpec after the template: the strategy, minReadySeconds, revisionHistoryLimit (10 when
        unset), progressDeadlineSeconds (600 when unset) non-negative and greater than minReadySeconds."""
        spec = self.spec
        deadline = 600 if spec.progress_deadline_seconds is None else spec.progress_deadline_seconds
        problem = (_strategy_problem(spec.strategy)
                   or non_negative_problem(spec.min_ready_seconds, "spec.minReadySeconds")
                   or non_negative_problem(spec.revision_history_limit, "spec.revisionHistoryLimit")
                   or non_negative_problem(deadline, "spec.progressDeadlineSeconds"))
        if problem is None and deadline <= spec.min_ready_seconds:
            problem = f"spec.progressDeadlineSeconds: Invalid value: {deadline}: must be greater than minReadySeconds"
        return problem


_PERCENT = re.compile(r"[0-9]+%")       # IsValidPercent
_PERCENT_PROBLEM = ("a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or "
                   "'93%', regex used for validation is '[0-9]+%')")


def _strategy_problem(strategy: DeploymentStrategy) -> str | None:
    """ValidateDeploymentStrategy on the strategy SetDefaults_Deployment leaves: type RollingUpdate when unset, and
    then maxUnavailable and maxSurge 25% each when unset."""
    kind, rolling = strategy.type or "RollingUpdate", strategy.rolling_update
    if kind == "Recreate":
        if rolling is not None:
            return "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"
        return None
    if kind != "RollingUpdate":
        # The bad value is the internal DeploymentStrategy struct (no json tags), unset counts as 0.
        shown = None if rolling is None else {
            "MaxUnavailable": 0 if rolling.max_unavailable is None else rolling.max_unavailable,
            "MaxSurge": 0 if rolling.max_surge is None else rolling.max_surge}
        return not_supported("spec.strategy", {"Type": kind, "RollingUpdate": shown}, ("Recreate", "RollingUpdate"))
    rolling = rolling or RollingUpdateDeployment()
    at = "spec.strategy.rollingUpdate"
    unavailable = "25%" if rolling.max_unavailable is None else rolling.max_unavailable
    surge = "25%" if rolling.max_surge is None else rolling.max_surge
    problem = int_or_percent_problem(unavailable, f"{at}.maxUnavailable") or int_or_percent_problem(
        surge, f"{at}.maxSurge")
    if problem is not None:
        return problem
    if int_or_percent_value(unavailable) == 0 and int_or_percent_value(surge) == 0:
        return f"{at}.maxUnavailable: Invalid value: {go_json(unavailable)}: may not be 0 when `maxSurge` is 0"
    return over_100_percent_problem(unavailable, f"{at}.maxUnavailable")


def non_negative_problem(value: int | None, path: str) -> str | None:
    """ValidateNonnegativeField (pkg/apis/core/validation); None (an unset optional field) passes."""
    if value is not None and value < 0:
        return f"{path}: Invalid value: {value}: must be greater than or equal to 0"
    return None


def int_or_percent_problem(value: int | str, path: str) -> str | None:
    """ValidatePositiveIntOrPercent (pkg/apis/apps/validation): a string is a percentage (IsValidPercent), an int
    is not negative."""
    if isinstance(value, str):
        return None if _PERCENT.fullmatch(value) else f"{path}: Invalid value: {go_json(value)}: {_PERCENT_PROBLEM}"
    return non_negative_problem(value, path)


def over_100_percent_problem(value: int | str, path: str) -> str | None:
    """IsNotMoreThan100Percent: a valid percentage above 100% (an int or a bad string is left to
    int_or_percent_problem)."""
    if isinstance(value, str) and _PERCENT.fullmatch(value) and int_or_percent_value(value) > 100:
        return f"{path}: Invalid value: {go_json(value)}: must not be greater than 100%"
    return None


_GO_MAX_INT = (1 << 63) - 1


def int_or_percent_value(value: int | str) -> int:
    """getIntOrPercentValue on a valid value: an int, or a percentage's number as strconv.Atoi reads it (a number
    past int64 is clamped to its maximum, the value Atoi returns with its range error)."""
    if isinstance(value, int):
        return value
    return min(int(value[:-1]), _GO_MAX_INT)


class ReplicationControllerSpec(K8sModel):
    replicas: StrictInt = Field(default=1, ge=INT32_MIN, le=INT32_MAX)    # non-negative: _rules
    min_ready_seconds: Int32 = 0
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
        if not spec.selector and spec.template is not None:      # SetDefaults_ReplicationController
            spec.selector = dict(spec.template.metadata.labels)
        # ValidateReplicationControllerSpec: minReadySeconds, the selector, replicas, then the template
        problem = non_negative_problem(spec.min_ready_seconds, "spec.minReadySeconds")
        if problem is None and not spec.selector:
            problem = "spec.selector: Required value"
        problem = problem or non_negative_problem(spec.replicas, "spec.replicas")
        if problem is None and spec.template is None:
            problem = "spec.template: Required value"
        if problem is not None:
            raise ValueError(problem)
        for path, labels in (("spec.selector", spec.selector),
                             ("spec.template.metadata.labels", spec.template.metadata.labels)):
            problem = labels_problem(labels, path)
            if problem is not None:
                raise ValueError(problem)
        if any(spec.template.metadata.labels.get(k) != v for k, v in spec.selector.items()):
            raise _not_matched(spec.template)
        problem = (template_problem(spec.template, "spec.template")
                   or restart_policy_problem(spec.template, "spec.template", ALWAYS))
        if problem is not None:
            raise ValueError(problem)
        return self


class StatefulSetOrdinals(K8sModel):
    start: StrictInt = Field(default=0, ge=INT32_MIN, le=INT32_MAX)       # non-negative: StatefulSet's rules


class ClaimTemplateMetadata(K8sModel):
    name: str = ""
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)


class PersistentVolumeClaimTemplate(K8sModel):
    """A volumeClaimTemplates entry: each pod's claim <name>-<statefulset>-<ordinal> is made from it (its spec read
    as a claim's when the claim is made: cluster_models/storage.py)."""
    metadata: ClaimTemplateMetadata = Field(default_factory=ClaimTemplateMetadata)
    spec: dict = Field(default_factory=dict)


RETENTION_POLICIES = ("Retain", "Delete")


class ClaimRetentionPolicy(K8sModel):
    """persistentVolumeClaimRetentionPolicy (SetDefaults_StatefulSet: Retain, Retain)."""
    when_deleted: str = "Retain"
    when_scaled: str = "Retain"


class RollingUpdateStatefulSetStrategy(K8sModel):
    partition: Int32 | None = None                   # SetDefaults_StatefulSet: 0
    max_unavailable: IntOrString | None = None       # SetDefaults_StatefulSet: 1 (MaxUnavailableStatefulSet)


class StatefulSetUpdateStrategy(K8sModel):
    type: str = ""                                   # SetDefaults_StatefulSet: RollingUpdate
    rolling_update: RollingUpdateStatefulSetStrategy | None = None


class StatefulSetSpec(ReplicaSetSpec):
    service_name: str = ""
    pod_management_policy: str = "OrderedReady"       # others refused by StatefulSet's rules
    update_strategy: StatefulSetUpdateStrategy = Field(default_factory=StatefulSetUpdateStrategy)
    ordinals: StatefulSetOrdinals = Field(default_factory=StatefulSetOrdinals)
    volume_claim_templates: list[PersistentVolumeClaimTemplate] = Field(default_factory=list)
    persistent_volume_claim_retention_policy: ClaimRetentionPolicy = Field(default_factory=ClaimRetentionPolicy)

    @field_validator("pod_management_policy", mode="before")
    @classmethod
    def _empty_policy_is_ordered(cls, raw: Any) -> Any:
        return "OrderedReady" if raw == "" else raw        # SetDefaults_StatefulSet


class StatefulSet(_Selected):
    name_problem: ClassVar[Callable[[str], str | None]] = staticmethod(dns_label_problem)
    selector_word: ClassVar[str] = "statefulset"
    kind: str = "StatefulSet"
    metadata: ObjectMeta
    spec: StatefulSetSpec

    def _before_selector_problem(self) -> str | None:
        """ValidateStatefulSetSpec before the selector: podManagementPolicy, the updateStrategy, the
        persistentVolumeClaimRetentionPolicy, ordinals.start, replicas, minReadySeconds."""
        spec = self.spec
        if spec.pod_management_policy not in ("OrderedReady", "Parallel"):
            return (f"spec.podManagementPolicy: Invalid value: {go_quote(spec.pod_management_policy)}: must be "
                    "'OrderedReady' or 'Parallel'")
        return (_stateful_strategy_problem(spec.update_strategy)
                or _retention_problem(spec.persistent_volume_claim_retention_policy)
                or non_negative_problem(spec.ordinals.start, "spec.ordinals.start")
                or non_negative_problem(spec.replicas, "spec.replicas")
                or non_negative_problem(spec.min_ready_seconds, "spec.minReadySeconds"))


def _retention_problem(policy: ClaimRetentionPolicy) -> str | None:
    """ValidatePersistentVolumeClaimRetentionPolicy: each of whenDeleted and whenScaled Retain or Delete."""
    for name, value in (("whenDeleted", policy.when_deleted), ("whenScaled", policy.when_scaled)):
        if value not in RETENTION_POLICIES:
            return (f"spec.persistentVolumeClaimRetentionPolicy.{name}: Unsupported value: {json.dumps(value)}: "
                    f'supported values: "Retain", "Delete"')
    return None


def _stateful_strategy_problem(strategy: StatefulSetUpdateStrategy) -> str | None:
    """ValidateStatefulSetSpec's updateStrategy rules on the strategy SetDefaults_StatefulSet leaves: an unset type
    is RollingUpdate with a rollingUpdate made for it; a RollingUpdate rollingUpdate then gets partition 0 and
    (MaxUnavailableStatefulSet, beta and on by default since v1.35, so kept by the registry strategy) maxUnavailable
    1 where unset; an explicit RollingUpdate without a rollingUpdate is left without one and checks nothing.
    OnDelete takes no rollingUpdate; RollingUpdate: partition non-negative, and maxUnavailable (when set) a
    non-negative int or a percentage (ValidatePositiveIntOrPercent), not 0, at most 100%
    (validateRollingUpdateStatefulSet). The bad values are the internal structs as JSON (Go field names; an unset
    Partition, an int32 there, is 0)."""
    kind, rolling = strategy.type or "RollingUpdate", strategy.rolling_update
    if not strategy.type and rolling is None:
        rolling = RollingUpdateStatefulSetStrategy()
    shown = None if rolling is None else {"Partition": rolling.partition or 0,
                                          "MaxUnavailable": rolling.max_unavailable}
    at = "spec.updateStrategy"
    if kind == "OnDelete":
        if rolling is not None:
            return (f"{at}.rollingUpdate: Invalid value: {go_json(shown)}: only allowed for updateStrategy "
                    "'RollingUpdate'")
        return None
    if kind != "RollingUpdate":
        return (f"{at}: Invalid value: {go_json({'Type': kind, 'RollingUpdate': shown})}: must be 'RollingUpdate' or "
                "'OnDelete'")
    if rolling is None:
        return None
    at = f"{at}.rollingUpdate"
    unavailable = 1 if rolling.max_unavailable is None else rolling.max_unavailable
    problem = (non_negative_problem(rolling.partition, f"{at}.partition")
               or int_or_percent_problem(unavailable, f"{at}.maxUnavailable"))
    if problem is None and int_or_percent_value(unavailable) == 0:
        problem = f"{at}.maxUnavailable: Invalid value: {go_json(unavailable)}: cannot be 0"
    return problem or over_100_percent_problem(unavailable, f"{at}.maxUnavailable")


class RollingUpdateDaemonSet(K8sModel):
    max_unavailable: IntOrString | None = None      # SetDefaults_DaemonSet: 1
    max_surge: IntOrString | None = None            # SetDefaults_DaemonSet: 0


class DaemonSetUpdateStrategy(K8sModel):
    type: str = ""                                   # SetDefaults_DaemonSet: RollingUpdate
    rolling_update: RollingUpdateDaemonSet | None = None


class DaemonSetSpec(K8sModel):
    selector: LabelSelector
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)
    update_strategy: DaemonSetUpdateStrategy = Field(default_factory=DaemonSetUpdateStrategy)
    min_ready_seconds: Int32 = 0
    revision_history_limit: Int32 | None = None      # SetDefaults_DaemonSet: 10


class DaemonSet(_Selected):
    selector_word: ClassVar[str] = "daemonset"
    kind: str = "DaemonSet"
    metadata: ObjectMeta
    spec: DaemonSetSpec

    def _after_template_problem(self) -> str | None:
        """ValidateDaemonSetSpec after the template: minReadySeconds, the updateStrategy, revisionHistoryLimit."""
        spec = self.spec
        return (non_negative_problem(spec.min_ready_seconds, "spec.minReadySeconds")
                or _daemon_strategy_problem(spec.update_strategy)
                or non_negative_problem(spec.revision_history_limit, "spec.revisionHistoryLimit"))


def _daemon_strategy_problem(strategy: DaemonSetUpdateStrategy) -> str | None:
    """ValidateDaemonSetUpdateStrategy on the strategy SetDefaults_DaemonSet leaves: type RollingUpdate when unset,
    and then a rollingUpdate of maxUnavailable 1 and maxSurge 0 where unset. OnDelete takes anything (a rollingUpdate
    too); RollingUpdate: each a non-negative int or a percentage (ValidatePositiveIntOrPercent) of at most 100%,
    and exactly one of the two not 0 (ValidateRollingUpdateDaemonSet)."""
    kind, rolling = strategy.type or "RollingUpdate", strategy.rolling_update
    if kind == "OnDelete":
        return None
    if kind != "RollingUpdate":
        # The bad value is the internal DaemonSetUpdateStrategy struct (no json tags); an unset field of its
        # RollingUpdateDaemonSet (IntOrString, not a pointer) is 0.
        shown = None if rolling is None else {
            "MaxUnavailable": 0 if rolling.max_unavailable is None else rolling.max_unavailable,
            "MaxSurge": 0 if rolling.max_surge is None else rolling.max_surge}
        return not_supported("spec.updateStrategy", {"Type": kind, "RollingUpdate": shown},
                             ("RollingUpdate", "OnDelete"))
    rolling = rolling or RollingUpdateDaemonSet()
    at = "spec.updateStrategy.rollingUpdate"
    unavailable = 1 if rolling.max_unavailable is None else rolling.max_unavailable
    surge = 0 if rolling.max_surge is None else rolling.max_surge
    problem = (int_or_percent_problem(unavailable, f"{at}.maxUnavailable")
               or int_or_percent_problem(surge, f"{at}.maxSurge")
               or over_100_percent_problem(unavailable, f"{at}.maxUnavailable")
               or over_100_percent_problem(surge, f"{at}.maxSurge"))
    if problem is not None:
        return problem
    has_unavailable, has_surge = int_or_percent_value(unavailable) != 0, int_or_percent_value(surge) != 0
    if has_unavailable and has_surge:
        return f"{at}.maxSurge: Invalid value: {go_json(surge)}: may not be set when maxUnavailable is non-zero"
    if not has_unavailable and not has_surge:
        return f"{at}.maxUnavailable: Required value: cannot be 0 when maxSurge is 0"
    return None


class JobTemplateSpec(K8sModel):
    metadata: PodTemplateMetadata = Field(default_factory=PodTemplateMetadata)
    spec: JobSpec


class CronJobSpec(K8sModel):
    schedule: str
    suspend: StrictBool = False
    concurrency_policy: str = ""          # SetDefaults_CronJob: Allow
    job_template: JobTemplateSpec


class CronJob(_Owner):
    api_version: ClassVar[str] = BATCH_V1
    kind: str = "CronJob"
    metadata: ObjectMeta
    spec: CronJobSpec

    @model_validator(mode="after")
    def _rules(self) -> CronJob:
        _name(self.metadata, dns_subdomain_problem)
        spec = self.spec
        problem = (_schedule_problem(spec.schedule) or _concurrency_problem(spec.concurrency_policy)
                   or _job_template_problem(spec.job_template.spec))
        if problem is not None:
            raise ValueError(problem)
        if len(self.metadata.name) > CRONJOB_MAX_NAME:
            raise ValueError(f"metadata.name: Invalid value: \"{self.metadata.name}\": must be no more than "
                             f"{CRONJOB_MAX_NAME} characters")
        return self


def _concurrency_problem(policy: str) -> str | None:
    """validateConcurrencyPolicy ("" is defaulted to Allow)."""
    if policy in ("", "Allow", "Forbid", "Replace"):
        return None
    return not_supported("spec.concurrencyPolicy", policy, ("Allow", "Forbid", "Replace"))


def _job_template_problem(spec: JobSpec) -> str | None:
    """ValidateJobTemplateSpec: the Job spec's rules (those Job validates in its own model, cluster_models.jobs,
    are checked when the CronJob's Job is made; the pod template's are checked here, named
    spec.jobTemplate.spec.template.<field> as upstream's validateJobSpec names them for a CronJob), and no
    selector: the Job controller generates it."""
    at = "spec.jobTemplate.spec"
    problem = (backoff_limit_problem(spec, at) or template_problem(spec.template, f"{at}.template")
               or restart_policy_problem(spec.template, f"{at}.template", JOB_RESTART_POLICIES))
    if problem is not None:
        return problem
    if spec.selector is not None:
        return f"{at}.selector: Invalid value: {selector_json(spec.selector)}: `selector` will be auto-generated"
    if spec.manual_selector:
        return not_supported(f"{at}.manualSelector", True, ("nil", "false"))
    return None


# ---- a CronJob's schedule: robfig/cron v3.0.1's ParseStandard, as validateScheduleFormat calls it ------------

def _schedule_problem(schedule: str) -> str | None:
    """validateScheduleFormat on create: the standard parser takes the schedule, and no TZ in it (spec.timeZone
    says that)."""
    if not schedule:
        return "spec.schedule: Required value"
    problem = cron_problem(schedule)
    if problem is None and "TZ" in schedule:
        problem = "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
    return None if problem is None else f"spec.schedule: Invalid value: {go_quote(schedule)}: {problem}"


# (min, max, names) of minute, hour, day of month, month, day of week
_CRON_FIELDS = ((0, 59, {}), (0, 23, {}), (1, 31, {}),
                (1, 12, {m: i for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), 1)}),
                (0, 6, {d: i for i, d in enumerate("sun mon tue wed thu fri sat".split())}))
_CRON_DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_GO_SPACE = ("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
             "\u2028\u2029\u202f\u205f\u3000")      # unicode.IsSpace: what strings.Fields splits on
_GO_INT = re.compile(r"[+-]?[0-9]+")             # what strconv.Atoi takes


def cron_problem(spec: str) -> str | None:
    """robfig/cron v3's error for a schedule its standard parser refuses (5 fields: minute, hour, day of month,
    month, day of week; each a comma-separated list of *, ?, n or n-m, optionally /step, months and weekdays also
    by name; or a descriptor: @yearly ... @hourly, "@every <Go duration>"), None when it takes it."""
    if spec.startswith(("TZ=", "CRON_TZ=")):
        space = spec.find(" ")
        if space < 0:
            return None        # upstream's parser slices past the string here (a panic); the TZ rule reports it
        name = spec[spec.index("=") + 1:space]
        problem = _location_problem(name)
        if problem is not None:
            return f"provided bad location {name}: {problem}"
        spec = spec[space:].strip(_GO_SPACE)
    if spec.startswith("@"):
        return _descriptor_problem(spec)
    fields = re.findall(f"[^{_GO_SPACE}]+", spec)
    if len(fields) != len(_CRON_FIELDS):
        return f"expected exactly {len(_CRON_FIELDS)} fields, found {len(fields)}: [{' '.join(fields)}]"
    for text, bounds in zip(fields, _CRON_FIELDS):
        for expr in filter(None, text.split(",")):          # strings.FieldsFunc: empty items drop out
            problem = _cron_range_problem(expr, *bounds)
            if problem is not None:
                return problem
    return None


def _cron_range_problem(expr: str, low: int, high: int, names: dict[str, int]) -> str | None:
    """getRange: number | number "-" number [ "/" number ], * and ? for the whole range."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    if low_and_high[0] in ("*", "?"):
        start, end = low, high
    else:
        if len(low_and_high) > 2:
            problem = _cron_int(low_and_high[0], names)[1]
            return problem if problem is not None else f"too many hyphens: {expr}"
        (start, problem), (end, end_problem) = _cron_int(low_and_high[0], names), _cron_int(low_and_high[-1], names)
        if problem is not None or end_problem is not None:
            return problem or end_problem
    step = 1
    if len(range_and_step) > 2:
        return f"too many slashes: {expr}"
    if len(range_and_step) == 2:
        step, problem = _cron_int(range_and_step[1], {})
        if problem is not None:
            return problem
        if len(low_and_high) == 1:          # "n/step" is "n-max/step"
            end = high
    if start < low:
        return f"beginning of range ({start}) below minimum ({low}): {expr}"
    if end > high:
        return f"end of range ({end}) above maximum ({high}): {expr}"
    if start > end:
        return f"beginning of range ({start}) beyond end of range ({end}): {expr}"
    if step == 0:
        return f"step of range should be a positive number: {expr}"
    return None


def _cron_int(text: str, names: dict[str, int]) -> tuple[int, str | None]:
    """parseIntOrName: a name (any case) or a non-negative int, with mustParseInt's errors."""
    if text.lower() in names:
        return names[text.lower()], None
    if not _GO_INT.fullmatch(text):
        return 0, f"failed to parse int from {text}: strconv.Atoi: parsing {go_quote(text)}: invalid syntax"
    number = int(text)
    if not -(1 << 63) <= number < 1 << 63:
        return 0, f"failed to parse int from {text}: strconv.Atoi: parsing {go_quote(text)}: value out of range"
    if number < 0:
        return 0, f"negative number ({number}) not allowed: {text}"
    return number, None


def _descriptor_problem(spec: str) -> str | None:
    if spec in _CRON_DESCRIPTORS:
        return None
    if spec.startswith("@every "):
        problem = _duration_problem(spec[len("@every "):])
        return None if problem is None else f"failed to parse duration {spec}: {problem}"
    return f"unrecognized descriptor: {spec}"


def _duration_problem(text: str) -> str | None:
    """Go's time.ParseDuration error for `text`, or None."""
    try:
        parse_duration(text)
    except ValueError as exc:
        return str(exc)
    return None


def _location_problem(name: str) -> str | None:
    """Go's time.LoadLocation error for a TZ= prefix's name, or None."""
    if name in ("", "UTC", "Local"):
        return None
    if ".." in name or name[0] in "/\\":
        return "time: invalid location name"
    try:
        zoneinfo.ZoneInfo(name)
    except Exception:           # not found, or not a zone file
        return f"unknown time zone {name}"
    return None


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
    warnings: list[str] = field(default_factory=list)               # controllers whose pods upstream cannot create
    claims: list[PersistentVolumeClaim] = field(default_factory=list)   # made by StatefulSets for their pods


def _template_error(owner: _Owner, problem: str) -> InputError:
    return InputError(f"{owner.kind} {owner.key}: spec.template.{problem}")


class _Stamper:
    """Pods from one template: the spec validated (and API-defaulted) once and shared by every pod; a pod's own
    fields (`spec_update`: a DaemonSet pod's node affinity, a StatefulSet pod's claim volumes, valid by
    construction) replace those of a shallow copy. A spec whose affinity merges match/mismatchLabelKeys, or whose
    spread constraints have matchLabelKeys, is validated again for each pod its controller gives labels of its own."""

    def __init__(self, owner: _Owner, template: PodTemplateSpec, labels: dict[str, str]):
        self.owner, self.template = owner, template
        affinity = template.spec.affinity
        self.per_pod = affinity is not None and any(
            term.match_label_keys or term.mismatch_label_keys
            for kind in (affinity.pod_affinity, affinity.pod_anti_affinity) if kind is not None
            for term in [*kind.required_during_scheduling_ignored_during_execution,
                         *(w.pod_affinity_term for w in kind.preferred_during_scheduling_ignored_during_execution)]
        ) or any(c.match_label_keys for c in template.spec.topology_spread_constraints)
        # Replicas share their labels, annotations and ownerReferences objects too, so that intake recognises them
        # as one template (sched/shapes.py ShapeTable.by_template) without signing each.
        self.labels = labels
        self.annotations = dict(template.metadata.annotations)
        self.owner_references = [owner.reference()]
        self._shared: Pod | None = None

    def pod(self, name: str, extra_labels: dict[str, str] | None = None, spec_update: dict | None = None) -> Pod:
        labels = {**self.labels, **extra_labels} if extra_labels else self.labels
        # A spec that merges label values into itself is the same for pods of the same labels: a ReplicaSet's
        # replicas share the first one's; pods a controller labels one by one (a StatefulSet's, an Indexed Job's)
        # are validated each.
        shared = not (self.per_pod and extra_labels)
        if self._shared is not None and shared:
            # The validated pod's copy with its own name and labels (both already valid): no validation per replica.
            first = self._shared
            spec = first.spec.model_copy(update=spec_update) if spec_update else first.spec
            return first.replaced(metadata=first.metadata.replaced(name=name, labels=labels), spec=spec)
        meta = ObjectMeta(name=name, namespace=self.owner.metadata.namespace, labels=labels,
                          annotations=self.annotations, owner_references=self.owner_references)
        pod = self._validate(meta, self.template.spec.model_copy(deep=True, update=spec_update or {}))
        if shared and self._shared is None:
            self._shared = pod
        return pod

    def _validate(self, meta: ObjectMeta, spec) -> Pod:
        return made_pod(f"{self.owner.kind} {self.owner.key}", meta, spec)


def _by_controller(objects: Iterable) -> dict[tuple[str, str, str], list]:
    """Objects by (namespace, kind, name) of their controller ownerReference, read once for every controller."""
    out: dict[tuple[str, str, str], list] = {}
    for obj in objects:
        ref = next((r for r in obj.metadata.owner_references if r.controller), None)
        if ref is not None:
            out.setdefault((obj.metadata.namespace, ref.kind, ref.name), []).append(obj)
    return out


def _replica_pods(owner: ReplicaSet | ReplicationController, live: dict, names: NameGenerator, made: Made,
                  budget: PodBudget, blamed: _Owner | None = None) -> None:
    """`blamed`: the object whose spec.replicas a count past the budget is reported on (a Deployment for its
    ReplicaSet), the owner by default."""
    template = owner.spec.template
    count = max(0, owner.spec.replicas - len(owner.controlled(live)))
    blamed = blamed or owner
    budget.take(count, f"{blamed.kind} {blamed.key}", "spec.replicas")
    stamper = _Stamper(owner, template, dict(template.metadata.labels))
    for _ in range(count):
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


class _ClaimMaker:
    """A StatefulSet's claims for one pod, as its controller makes them (getPersistentVolumeClaims,
    createPersistentVolumeClaims): per volumeClaimTemplate `<template>-<statefulset>-<ordinal>` in the StatefulSet's
    namespace, the template's labels with the selector's matchLabels over them, its annotations and spec; a controller
    reference to the StatefulSet when its retention policy deletes claims with it (updateClaimOwnerRefForSetAndPod:
    the pods made are never scaled down). A claim the input (or an earlier pod) holds is not made again."""

    def __init__(self, sts: StatefulSet, existing: set[str]):
        self.sts, self.existing = sts, existing
        spec = sts.spec
        self.owners = [sts.reference()] if spec.persistent_volume_claim_retention_policy.when_deleted == "Delete" \
            else []

    def names(self, ordinal: int) -> list[str]:
        return [f"{t.metadata.name}-{self.sts.metadata.name}-{ordinal}" for t in self.sts.spec.volume_claim_templates]

    def claim(self, template: PersistentVolumeClaimTemplate, name: str) -> PersistentVolumeClaim:
        """Raises ValidationError where the API server refuses the claim."""
        labels = {**template.metadata.labels, **self.sts.spec.selector.match_labels}
        return PersistentVolumeClaim.model_validate({
            "metadata": {"name": name, "namespace": self.sts.metadata.namespace, "labels": labels,
                         "annotations": dict(template.metadata.annotations),
                         "ownerReferences": [r.model_dump(by_alias=True) for r in self.owners]},
            "spec": template.spec})

    def refused(self, ordinal: int) -> str | None:
        """Why the API server refuses a claim of the pod of `ordinal` (the same for every ordinal), None if it
        does not."""
        for template, name in zip(self.sts.spec.volume_claim_templates, self.names(ordinal)):
            try:
                self.claim(template, name)
            except ValidationError as error:
                return f"PersistentVolumeClaim {name}: {validation_problem(error)}"
        return None

    def make(self, ordinal: int) -> list[PersistentVolumeClaim]:
        out = []
        for template, name in zip(self.sts.spec.volume_claim_templates, self.names(ordinal)):
            key = f"{self.sts.metadata.namespace}/{name}"
            if key not in self.existing:
                self.existing.add(key)
                out.append(self.claim(template, name))
        return out


def _stateful_set(sts: StatefulSet, live: dict, made: Made, budget: PodBudget, claims: set[str]) -> None:
    spec, name = sts.spec, sts.metadata.name
    template = spec.template
    revision = f"{name}-{template_hash(template)}"
    if len(revision) > MAX_LABEL_VALUE:
        made.warnings.append(f"StatefulSet {sts.key}: creates no pods: the API server refuses each, as its "
                             f'{CONTROLLER_REVISION_HASH} label value "{revision}" (the name and a hash) is longer '
                             f"than {MAX_LABEL_VALUE} characters (kubernetes/kubernetes#64023)")
        return
    labels = {**template.metadata.labels, CONTROLLER_REVISION_HASH: revision}
    stamper = _Stamper(sts, template, labels)
    have = {p.metadata.name: p for p in sts.controlled(live)}
    budget.take(max(0, spec.replicas - len(have)), f"StatefulSet {sts.key}", "spec.replicas")
    templates = [t.metadata.name for t in spec.volume_claim_templates]
    maker = _ClaimMaker(sts, claims)
    refused = maker.refused(spec.ordinals.start) if templates else None
    if refused is not None:      # CreateStatefulPod creates the pod's claims first, and fails with them
        made.warnings.append(f"StatefulSet {sts.key}: creates no pods: the API server refuses its claims "
                             f"(spec.volumeClaimTemplates): {refused}")
        return
    previous = None      # the pod before this ordinal, while it is pending (OrderedReady waits for it)
    for ordinal in range(spec.ordinals.start, spec.ordinals.start + spec.replicas):
        pod_name = f"{name}-{ordinal}"
        if pod_name in have:
            previous = None if have[pod_name].spec.node_name else have[pod_name]
            continue
        update = None
        if templates:       # updateStorage: the claims' volumes first, then the template's others
            update = {"volumes": [*({"name": t, "persistentVolumeClaim": {"claimName": claim}}
                                    for t, claim in zip(templates, maker.names(ordinal))),
                                  *(v for v in template.spec.volumes if v.get("name") not in templates)]}
        pod = stamper.pod(pod_name, {STATEFULSET_POD_NAME: pod_name, POD_INDEX: str(ordinal)}, update)
        made.claims += maker.make(ordinal)
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
    """The pod NodeShouldRunDaemonPod tests nodes with: the template with the default tolerations, validated as a
    template (no pod is made yet: a rule for pods only, such as image whitespace, fails the pods when they are)."""
    spec = ds.spec.template.spec.model_copy(deep=True)
    spec.tolerations = daemon_tolerations(spec)
    meta = ObjectMeta(name=ds.metadata.name, namespace=ds.metadata.namespace,
                      labels=dict(ds.spec.template.metadata.labels))
    try:
        return Pod.model_validate({"metadata": meta, "spec": spec}, context={POD_TEMPLATE: True})
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


def _daemon_set(ds: DaemonSet, nodes: list[str], live: dict, names: NameGenerator, made: Made,
                budget: PodBudget) -> None:
    template = ds.spec.template
    labels = {**template.metadata.labels, CONTROLLER_REVISION_HASH: template_hash(template), TEMPLATE_GENERATION: "1"}
    stamper = _Stamper(ds, template, labels)
    served = {pod.spec.node_name or _affinity_node(pod) for pod in ds.controlled(live)}
    budget.take(sum(node not in served for node in nodes), f"DaemonSet {ds.key}", "spec.template")
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


def expand_controllers(controllers: list, pods: list[Pod], daemon_nodes: Callable[[DaemonSet], list[str]],
                       claims: Iterable[str] = ()) -> Made:
    """Run each controller over the input (in input order) and return what it creates. `pods` are the input's
    pods (their names are taken; the live ones a controller controls count as its replicas); `daemon_nodes(ds)`
    names, in node order, the nodes a DaemonSet should run on; `claims`: the keys of the PersistentVolumeClaims
    that exist (a StatefulSet makes the others its pods name). InputError when the pods, the input's and its
    CronJobs' Jobs' counted in, would be more than MAX_EXPANDED_PODS (jobs.PodBudget)."""
    made = Made()
    if not controllers:             # the index of every input pod's name would be the whole cost
        return made
    budget = PodBudget(len(pods))
    names = NameGenerator({("Pod", p.key) for p in pods})
    live = _by_controller(p for p in pods if p.status.phase not in DONE_PHASES and p.metadata.deletion_timestamp is None)
    replica_sets = _by_controller(c for c in controllers if isinstance(c, ReplicaSet))
    claims = set(claims)
    for controller in controllers:
        if isinstance(controller, Deployment):
            rs = _deployment(controller, replica_sets)
            if rs is not None:
                made.replica_sets.append(rs)
                _replica_pods(rs, live, names, made, budget, controller)
        elif isinstance(controller, (ReplicaSet, ReplicationController)):
            _replica_pods(controller, live, names, made, budget)
        elif isinstance(controller, StatefulSet):
            _stateful_set(controller, live, made, budget, claims)
        elif isinstance(controller, DaemonSet):
            _daemon_set(controller, daemon_nodes(controller), live, names, made, budget)
        elif isinstance(controller, CronJob):
            job = _cron_job(controller)
            if job is not None:
                count, path = active_pods(job.spec)         # made by expand_jobs, counted here to name the CronJob
                budget.take(count, f"CronJob {controller.key}", f"spec.jobTemplate.spec.{path}")
                made.jobs.append(job)
    return made
