"""Reading manifests into ClusterObjects: YAML (multi-document), JSON (one value or a stream of them),
`kind: List` and typed lists (PodList, ...) as `kubectl get nodes,pods -o yaml|json` and the API write them,
and directories (recursive, sorted, only .yaml/.yml/.json files).

Loading is all-or-nothing: the first problem raises InputError with one line naming the file or object and
the field, and nothing is returned. Objects of kinds phalanx does not use are skipped with a warning.

Workload-aware scheduling objects (cluster_models.workloads): scheduling.k8s.io/v1alpha2 Workload and PodGroup
are read as they are; a scheduling.k8s.io/v1alpha1 Workload is converted to v1alpha2, and pods whose v1alpha1
spec.workloadRef names an existing Workload and pod group get a PodGroup made for them. Other versions of
these kinds (v1beta1, v1alpha3 of later releases) are skipped with the unsupported-kind warning. Validation is
the API server's create-time validation; update rules (immutability of every Workload and PodGroup spec field)
need the previous version of the object and cannot be checked on a single load, so they are not.

batch/v1 Jobs (cluster_models.jobs) are read and kept as Jobs; `expand_jobs` turns them into the Workloads,
PodGroups and pods their controller would create. Other batch versions are skipped with the warning.
"""
from __future__ import annotations

import gc
import json
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from .api_decode import decode_document
from .controllers import (APPS_V1, CONTROLLER_KINDS, CONTROLLER_TYPES, Controller, CronJob, NameGenerator, Service,
                          service_manifest_problem)
from .dra import (RESOURCE_V1, RESOURCE_V1BETA1, RESOURCE_V1BETA2, DeviceClass, ResourceClaim, ResourceClaimTemplate,
                  ResourceSlice, v1beta1_to_v1)
from .disruption import PodDisruptionBudget
from .errors import InputError, member_path, validation_problem
from .json_stream import STREAM_MIN_CHARS, NotStreamable, Renamed, StreamedItems, decode, streamed_list
from .jobs import BATCH_V1, JOB_RESTART_POLICIES, Job
from .storage import (CSIDriver, CSINode, CSIStorageCapacity, PersistentVolume, PersistentVolumeClaim, StorageClass,
                      VolumeAttachment)
from .objects import (RAISE, UNKNOWN_FIELDS, Namespace, Node, Pod, PriorityClass, UnknownField, dns_label_problem,
                      dns_subdomain_problem, label_value_problem, labels_problem, meta_problem, node_manifest_problem,
                      pod_spec_manifest_problem, priority_class_manifest_problem)
from .requests import effective_priority
from .workloads import (
    SCHEDULING_V1ALPHA1,
    SCHEDULING_V1ALPHA2,
    PodGroup,
    Workload,
    WorkloadV1Alpha1,
    podgroups_for_workload_refs,
)

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")

# kind -> (API group, model). A known kind from another API group is someone else's resource.
_MODELS: dict[str, tuple[str, type[BaseModel]]] = {
    "Pod": ("", Pod),
    "Node": ("", Node),
    "Namespace": ("", Namespace),
    "PriorityClass": ("scheduling.k8s.io", PriorityClass),
    "Workload": ("scheduling.k8s.io", Workload),
    "PodGroup": ("scheduling.k8s.io", PodGroup),
    "Job": ("batch", Job),
    "Service": ("", Service),
    **CONTROLLER_KINDS,                                           # Deployment, ...: cluster_models.controllers
    "PodDisruptionBudget": ("policy", PodDisruptionBudget),
    "DeviceClass": ("resource.k8s.io", DeviceClass),            # DRA kinds: cluster_models.dra
    "ResourceSlice": ("resource.k8s.io", ResourceSlice),
    "ResourceClaim": ("resource.k8s.io", ResourceClaim),
    "ResourceClaimTemplate": ("resource.k8s.io", ResourceClaimTemplate),
    "PersistentVolume": ("", PersistentVolume),                 # storage: cluster_models.storage
    "PersistentVolumeClaim": ("", PersistentVolumeClaim),
    "StorageClass": ("storage.k8s.io", StorageClass),
    "CSINode": ("storage.k8s.io", CSINode),
    "CSIDriver": ("storage.k8s.io", CSIDriver),
    "CSIStorageCapacity": ("storage.k8s.io", CSIStorageCapacity),
    "VolumeAttachment": ("storage.k8s.io", VolumeAttachment),
}
READ_KINDS = frozenset(_MODELS)       # the kinds read (tools/gen_api_types.py tables their fields' Go types)

# Kinds read only at some versions: (kind, apiVersion) -> model. A missing apiVersion means the newest.
_VERSIONED: dict[str, dict[str | None, type[BaseModel]]] = {
    "Workload": {SCHEDULING_V1ALPHA2: Workload, None: Workload, SCHEDULING_V1ALPHA1: WorkloadV1Alpha1},
    "PodGroup": {SCHEDULING_V1ALPHA2: PodGroup, None: PodGroup},
    "Job": {BATCH_V1: Job, None: Job},
    "CronJob": {BATCH_V1: CronJob, None: CronJob},
    **{kind: {APPS_V1: model, None: model} for kind, (group, model) in CONTROLLER_KINDS.items() if group == "apps"},
    **{kind: {RESOURCE_V1: model, RESOURCE_V1BETA2: model, RESOURCE_V1BETA1: model, None: model}
       for kind, model in (
        ("DeviceClass", DeviceClass), ("ResourceSlice", ResourceSlice), ("ResourceClaim", ResourceClaim),
        ("ResourceClaimTemplate", ResourceClaimTemplate))},
}
# Versions the API server serves (or served) for each kind read here. Another version in the kind's own group is an
# error naming it; a real version phalanx does not read (DRA v1alpha3, apps/v1beta2, ...) is skipped with a warning, as are
# kinds of the same name in other groups (Volcano's or scheduler-plugins' PodGroup).
_SERVED: dict[str, tuple[str, ...]] = {
    "Pod": ("v1",), "Node": ("v1",), "Namespace": ("v1",),
    "PriorityClass": ("scheduling.k8s.io/v1", "scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha1"),
    "Workload": (SCHEDULING_V1ALPHA1, SCHEDULING_V1ALPHA2), "PodGroup": (SCHEDULING_V1ALPHA2,),
    "Job": (BATCH_V1,), "PodDisruptionBudget": ("policy/v1", "policy/v1beta1"),
    "Service": ("v1",), "ReplicationController": ("v1",),
    "PersistentVolume": ("v1",), "PersistentVolumeClaim": ("v1",),
    "StorageClass": ("storage.k8s.io/v1",), "CSINode": ("storage.k8s.io/v1",),
    "CSIDriver": ("storage.k8s.io/v1",), "CSIStorageCapacity": ("storage.k8s.io/v1",),
    "VolumeAttachment": ("storage.k8s.io/v1",),
    "CronJob": (BATCH_V1, "batch/v1beta1"),
    **{kind: (APPS_V1, "apps/v1beta2", "apps/v1beta1") for kind, (group, _) in CONTROLLER_KINDS.items()
       if group == "apps"},
    **{kind: tuple(f"resource.k8s.io/{v}" for v in ("v1", "v1beta2", "v1beta1", "v1alpha3"))
       for kind in ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")},
}
_NAMESPACED = ("Pod", "Workload", "PodGroup", "Job", "PodDisruptionBudget", "ResourceClaim", "ResourceClaimTemplate",
               "Service", "PersistentVolumeClaim", "CSIStorageCapacity", *CONTROLLER_KINDS)
_NAMESPACED_TYPES = (Pod, Workload, WorkloadV1Alpha1, PodGroup, Job, PodDisruptionBudget, ResourceClaim,
                     ResourceClaimTemplate, Service, PersistentVolumeClaim, CSIStorageCapacity, *CONTROLLER_TYPES)

# The kinds of the API groups built into the v1.36 API server (custom resources live in groups with a dot in their
# name that are not these): a kind these groups do not have, or a group without a dot that is none of them
# (`core/v1`, `extensions/v1beta1`, removed), is what kubectl reports as "no matches for kind".
_BUILTIN_KINDS: dict[str, frozenset[str]] = {group: frozenset(kinds.split()) for group, kinds in {
    "": "Binding ComponentStatus ConfigMap Endpoints Event LimitRange Namespace Node PersistentVolume "
        "PersistentVolumeClaim Pod PodTemplate ReplicationController ResourceQuota Secret Service ServiceAccount",
    "apps": "ControllerRevision DaemonSet Deployment ReplicaSet StatefulSet",
    "autoscaling": "HorizontalPodAutoscaler",
    "batch": "CronJob Job",
    "policy": "PodDisruptionBudget Eviction",
    "networking.k8s.io": "Ingress IngressClass IPAddress NetworkPolicy ServiceCIDR",
    "storage.k8s.io": "CSIDriver CSINode CSIStorageCapacity StorageClass VolumeAttachment VolumeAttributesClass",
    "rbac.authorization.k8s.io": "ClusterRole ClusterRoleBinding Role RoleBinding",
    "scheduling.k8s.io": "PodGroup PriorityClass Workload",
    "resource.k8s.io": "DeviceClass DeviceTaintRule ResourceClaim ResourceClaimTemplate ResourceSlice",
    "node.k8s.io": "RuntimeClass",
    "coordination.k8s.io": "Lease LeaseCandidate",
    "discovery.k8s.io": "EndpointSlice",
    "events.k8s.io": "Event",
    "flowcontrol.apiserver.k8s.io": "FlowSchema PriorityLevelConfiguration",
    "admissionregistration.k8s.io": "MutatingAdmissionPolicy MutatingAdmissionPolicyBinding "
                                    "MutatingWebhookConfiguration ValidatingAdmissionPolicy "
                                    "ValidatingAdmissionPolicyBinding ValidatingWebhookConfiguration",
    "apiextensions.k8s.io": "CustomResourceDefinition",
    "apiregistration.k8s.io": "APIService",
    "certificates.k8s.io": "CertificateSigningRequest ClusterTrustBundle PodCertificateRequest",
    "authentication.k8s.io": "SelfSubjectReview TokenRequest TokenReview",
    "authorization.k8s.io": "LocalSubjectAccessReview SelfSubjectAccessReview SelfSubjectRulesReview "
                            "SubjectAccessReview",
    "storagemigration.k8s.io": "StorageVersionMigration",
    "internal.apiserver.k8s.io": "StorageVersion",
}.items()}


def _unserved_kind(kind: str, api_version: str) -> str | None:
    """kubectl's "no matches for kind" for a kind no API server serves at `api_version`, or None."""
    group, slash, version = api_version.rpartition("/")
    if not version or (slash and not group):
        return f'apiVersion: invalid value "{api_version}"'
    kinds = _BUILTIN_KINDS.get(group)
    if kinds is None and "." in group:
        return None                                     # a custom resource's group: skipped with a warning
    if kinds is None or kind not in kinds:
        return f'kind: no matches for kind "{kind}" in version "{api_version}"'
    return None


@lru_cache(maxsize=256)
def _model_of(kind: str, api_version: str) -> type[BaseModel] | str | None:
    """The model that reads `kind` at `api_version`; None for an object skipped with a warning (another group's
    kind of that name, a version phalanx does not read); or the problem that rejects it, as text."""
    problem = _unserved_kind(kind, api_version)
    if problem is not None:
        return problem
    group, model = _MODELS.get(kind, (None, None))
    if kind in _VERSIONED:
        model = _VERSIONED[kind].get(api_version)
    if group is not None and api_version.rpartition("/")[0] == group \
            and api_version not in _SERVED.get(kind, (api_version,)):
        return f'apiVersion: unknown version "{api_version}" of {kind} (served: {", ".join(_SERVED[kind])})'
    if model is None or api_version.rpartition("/")[0] != group:
        return None
    return model


@dataclass
class ClusterObjects:
    """Everything a load produced, in input order; warnings name what was skipped."""

    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    priority_classes: list[PriorityClass] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    workloads: list[Workload] = field(default_factory=list)  # v1alpha1 ones converted to v1alpha2
    pod_groups: list[PodGroup] = field(default_factory=list)  # read, then those made for v1alpha1 workloadRefs
    jobs: list[Job] = field(default_factory=list)  # as read, not expanded (see cluster_models.jobs.expand_jobs)
    device_classes: list[DeviceClass] = field(default_factory=list)              # DRA (cluster_models.dra)
    resource_slices: list[ResourceSlice] = field(default_factory=list)
    resource_claims: list[ResourceClaim] = field(default_factory=list)
    resource_claim_templates: list[ResourceClaimTemplate] = field(default_factory=list)
    namespaces: list[Namespace] = field(default_factory=list)   # their labels feed pod affinity namespaceSelectors
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)  # policy/v1 (preemption reads them)
    services: list[Service] = field(default_factory=list)          # their selectors feed default spreading
    controllers: list[Controller] = field(default_factory=list)    # Deployments, ...: in input order, not expanded
    persistent_volumes: list[PersistentVolume] = field(default_factory=list)     # storage (cluster_models.storage)
    persistent_volume_claims: list[PersistentVolumeClaim] = field(default_factory=list)
    storage_classes: list[StorageClass] = field(default_factory=list)
    csi_nodes: list[CSINode] = field(default_factory=list)
    csi_drivers: list[CSIDriver] = field(default_factory=list)
    csi_storage_capacities: list[CSIStorageCapacity] = field(default_factory=list)
    volume_attachments: list[VolumeAttachment] = field(default_factory=list)


def _construct_mapping_once_per_key(loader: yaml.constructor.SafeConstructor, node: yaml.MappingNode,
                                    deep: bool = False) -> dict:
    # PyYAML lets a repeated key silently win; kubectl refuses it ('key "x" already set in map'), and a second
    # `resources:` quietly replacing the first is exactly the mistake a user needs to hear about.
    seen = set()
    for key_node, _ in node.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
            if key_node.value in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f'key "{key_node.value}" already set in map', key_node.start_mark)
            seen.add(key_node.value)
    return yaml.constructor.SafeConstructor.construct_mapping(loader, node, deep)


def _construct_int_in_range(loader: yaml.constructor.SafeConstructor, node: yaml.ScalarNode) -> int:
    # int() refuses a text longer than sys.get_int_max_str_digits(): a YAML error at the number, not a ValueError.
    try:
        return yaml.constructor.SafeConstructor.construct_yaml_int(loader, node)
    except ValueError:
        raise yaml.constructor.ConstructorError(None, None, "number out of range", node.start_mark) from None


def _manifest_loader(base: type) -> type:
    # Timestamps stay strings (creationTimestamp is text in the models), and a bare "=" is the string "="
    # rather than PyYAML's unconstructible !!value.
    dropped = {"tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:value"}
    resolvers = {first: [(tag, regexp) for tag, regexp in entries if tag not in dropped]
                 for first, entries in base.yaml_implicit_resolvers.items()}
    loader = type(f"Manifest{base.__name__}", (base,), {"yaml_implicit_resolvers": resolvers,
                                                        "construct_mapping": _construct_mapping_once_per_key})
    loader.add_constructor("tag:yaml.org,2002:int", _construct_int_in_range)
    return loader


_FAST_LOADER = _manifest_loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader))
_WORDING_LOADER = _manifest_loader(yaml.SafeLoader)


def _yaml_error(source: str, error: yaml.YAMLError, text: str = "") -> InputError:
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    if mark is not None:
        where = f"{source}: line {mark.line + 1}"
    elif isinstance(error, yaml.reader.ReaderError):            # a character YAML does not allow, by position
        where = f"{source}: line {text.count(chr(10), 0, error.position) + 1}"
        problem = f"unacceptable character #x{error.character:04x}: {error.reason}" if isinstance(
            error.character, int) else problem
    else:
        where = source
    return InputError(f"{where}: invalid YAML: {problem}")


def yaml_documents(text: str, source: str) -> list[Any]:
    """The YAML documents of `text` as kubectl reads them (a key repeated in a map is an error, timestamps stay
    text); a syntax error is one InputError naming `source` and the line."""
    try:
        return list(yaml.load_all(text, Loader=_FAST_LOADER))
    except RecursionError:
        raise InputError(f"{source}: invalid YAML: nested deeper than phalanx reads") from None
    except yaml.YAMLError as fast_error:
        # libyaml words errors differently from PyYAML; take the message from the pure-Python parser so it
        # does not depend on whether libyaml is installed.
        try:
            list(yaml.load_all(text, Loader=_WORDING_LOADER))
        except RecursionError:
            raise InputError(f"{source}: invalid YAML: nested deeper than phalanx reads") from None
        except yaml.YAMLError as error:
            raise _yaml_error(source, error, text) from None
        raise _yaml_error(source, fast_error, text) from None


def _documents(text: str, source: str, json_only: bool = False) -> list[Any]:
    """The documents of one file or string: JSON, or YAML (a JSON-looking text that is not JSON may be flow-style
    YAML)."""
    if json_only:
        return _json_documents(text, source)
    if text.lstrip()[:1] in ("{", "["):
        try:
            return _json_documents(text, source)
        except InputError as json_error:
            try:
                return yaml_documents(text, source)  # flow-style YAML also starts with { or [
            except InputError:
                raise json_error from None
    return yaml_documents(text, source)


def _json_documents(text: str, source: str) -> list[Any]:
    """Every JSON value in the text (kubectl accepts a stream); floats kept exact as Decimal, a key twice in an
    object refused. One value, the usual file, is parsed by jiter (pydantic's Rust JSON parser: exact decimals and
    duplicate keys are options of its own, at about twice the speed of the stdlib decoder with the hook that
    duplicate keys need); a stream, NaN/Infinity (which the stdlib reads), a lone surrogate escape, and any error
    go through the stdlib decoder, whose results and messages these are."""
    try:
        return [decode(text)]
    except ValueError:
        pass
    decoder = json.JSONDecoder(parse_float=Decimal, parse_constant=Decimal, object_pairs_hook=_object_once)
    documents, pos = [], 0
    while True:
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        if pos == len(text):
            return documents
        try:
            document, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as error:
            raise InputError(f"{source}: line {error.lineno}: invalid JSON: {error.msg}") from None
        except _DuplicateKey as error:
            line = text.count("\n", 0, pos) + 1
            raise InputError(f'{source}: document starting at line {line}: invalid JSON: key "{error}" already set '
                             f"in map") from None
        except RecursionError:
            raise InputError(f"{source}: invalid JSON: nested deeper than phalanx reads") from None
        except ValueError:       # int(): an integer longer than Python converts (sys.get_int_max_str_digits)
            line = text.count("\n", 0, pos) + 1
            raise InputError(f"{source}: document starting at line {line}: invalid JSON: number out of range") \
                from None
        documents.append(document)


class _DuplicateKey(ValueError):
    """A JSON object names a key twice (kubectl's strict decoding refuses it, as the YAML reader here does)."""


def _object_once(pairs: list) -> dict:
    out = dict(pairs)
    if len(out) < len(pairs):
        seen = set()
        raise _DuplicateKey(next(k for k, _ in pairs if k in seen or seen.add(k)))
    return out


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float, Decimal)):
        return "a number"
    return {str: "a string", list: "a list", dict: "an object"}.get(type(value), type(value).__name__)


def _unknown_field(error: ValidationError) -> str | None:
    """'unknown field "spec.containers[0].resources.requets"' when the first error is an UnknownField."""
    first = error.errors(include_url=False)[0]
    cause = first.get("ctx", {}).get("error")
    if not isinstance(cause, UnknownField):
        return None
    return f'unknown field "{member_path(first["loc"], cause.name)}"'


def _without(document: Any, loc: list, name: str) -> Any:
    """A copy of `document` without the key `name` of the mapping at `loc` (the containers on the way copied)."""
    if not loc:
        return {k: v for k, v in document.items() if k != name}
    copy = list(document) if isinstance(document, list) else dict(document)
    head = loc[0]
    if isinstance(copy, dict) and head not in copy:       # the location names a field by alias or by name
        head = next((k for k in copy if isinstance(k, str) and k.replace("_", "").lower() == str(head).replace(
            "_", "").lower()), head)
    copy[head] = _without(copy[head], loc[1:], name)
    return copy


def manifest_problem(obj) -> str | None:
    """What the API server rejects in a manifest that phalanx's models accept from Python, where upstream's scheduler
    unit tests build such objects (and phalanx's tests replay them): pods without containers (also a controller's
    or a Job's pod template), containers without an image, extended resources without limits, empty node selector
    terms, node label values, Services without ports, ... (objects.pod_spec_manifest_problem, node_manifest_problem,
    priority_class_manifest_problem, controllers.service_manifest_problem)."""
    if isinstance(obj, Node):
        return node_manifest_problem(obj)
    if not isinstance(obj, Pod):         # a Pod's are checked by its model and below (meta_problem)
        problem = _object_meta_problem(obj)
        if problem is not None:
            return problem
    if isinstance(obj, PriorityClass):
        return priority_class_manifest_problem(obj)
    if isinstance(obj, Namespace):
        problem = dns_label_problem(obj.metadata.name)
        return None if problem is None else f"metadata.name: {problem}"
    if isinstance(obj, Service):
        return service_manifest_problem(obj)
    if isinstance(obj, Pod):
        spec, path = obj.spec, "spec"
    elif isinstance(obj, CronJob):
        spec, path = obj.spec.job_template.spec.template.spec, "spec.jobTemplate.spec.template.spec"
    elif isinstance(obj, (Job, *CONTROLLER_TYPES)) and getattr(obj.spec, "template", None) is not None:
        spec, path = obj.spec.template.spec, "spec.template.spec"
    else:
        return None
    if not spec.containers:
        return f"{path}.containers: Required value"
    if isinstance(obj, (Job, CronJob)) and spec.restart_policy is None:      # defaulted to Always, which Jobs refuse
        return f'{path}.restartPolicy: Required value: valid values: "{JOB_RESTART_POLICIES[0]}", ' \
               f'"{JOB_RESTART_POLICIES[1]}"'
    if isinstance(obj, Pod):
        return meta_problem(obj.metadata) or pod_spec_manifest_problem(spec, path, obj.metadata.labels)
    return pod_spec_manifest_problem(spec, path)


def _object_meta_problem(obj) -> str | None:
    """ValidateObjectMeta's rules for every kind beyond its name (which the models check): a namespaced object's
    namespace is a DNS label, label keys and values, annotations, ownerReferences (meta_problem)."""
    meta = obj.metadata
    if isinstance(obj, _NAMESPACED_TYPES):
        problem = dns_label_problem(meta.namespace or "default")
        if problem is not None:
            return f"metadata.namespace: {problem}"
    return labels_problem(meta.labels, "metadata.labels") or meta_problem(meta)


def _describe(kind: str, document: dict, where: str) -> str:
    """"Pod default/w-3", "Node n-1", or "Pod <unnamed> (document 2 of pods.yaml)" when there is no name."""
    meta = document.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    if not isinstance(name, str) or not name:
        return f"{kind} <unnamed> ({where})"
    if kind in _NAMESPACED:
        namespace = meta.get("namespace")
        return f"{kind} {namespace if isinstance(namespace, str) and namespace else 'default'}/{name}"
    return f"{kind} {name}"


_POD_TEMPLATES = 4096      # distinct pod templates one load remembers (all-distinct pods would only fill memory)
_PROGRESS_EVERY = 512      # documents read between two progress reports


def _pod_template_key(document: dict) -> tuple[str, str] | None:
    """What a Pod document is besides its metadata.name and uid, as text (dict order included: a template written
    by one tool repeats it), or None for a document without a metadata object."""
    meta = document.get("metadata")
    if not isinstance(meta, dict):
        return None
    return (repr({k: v for k, v in document.items() if k != "metadata"}),
            repr({k: v for k, v in meta.items() if k != "name" and k != "uid"}))


def _is_list_kind(kind: str) -> bool:
    """kubectl's List, or a typed list of a kind read here (PodList, ...)."""
    return kind == "List" or (kind.endswith("List") and kind[:-4] in _MODELS)


def _text_only(value: Any) -> bool:
    """Whether every leaf of a decoded document is a string or null: `==` against such a document is as strict as
    comparing text (1 == True == Decimal("1.0") cannot make a different document pass for it)."""
    if type(value) is str or value is None:
        return True
    if type(value) is dict:
        return all(type(k) is str and _text_only(v) for k, v in value.items())
    if type(value) is list:
        return all(_text_only(v) for v in value)
    return False


_RENAMED = {"name", "uid"}      # what a replica's document may change of its template's


def _renamed(seen: Pod | Node, name: Any, uid: Any, labels: dict | None = None) -> Pod | Node | None:
    """`seen` (an object validated before from a template a document repeats) with the document's name and uid (and
    labels, already checked); None when the name or uid would not pass as they are (the full validation then says
    why)."""
    if not isinstance(name, str) or not isinstance(uid, str) or dns_subdomain_problem(name):
        return None
    # Shallow copies with the fields set, as controllers.py stamps replicas.
    meta = seen.metadata
    fields: dict[str, Any] = {"name": name}
    if uid or meta.uid:
        fields["uid"] = uid
    if labels is not None:
        fields["labels"] = labels
    return seen.replaced(metadata=meta.replaced(**fields))


@dataclass(eq=False)
class _TextTemplate:
    """A text-only Pod or Node document validated before, with its object, and the probes a replica's document is
    compared with: one `==` (a C-speed walk) for the document, its metadata standing in for the template's, and one
    for the metadata, the replica's name and uid standing in for the template's (and for a Node, its label values:
    a node pool's nodes differ in their hostname label, and a Node's labels feed no other rule)."""
    obj: Pod | Node
    context: tuple[str | None, str | None]   # the kind and apiVersion its List implied (None, None: its own)
    source: dict                             # the template's document
    document: dict                           # a copy, its "metadata" replaced by each replica's
    meta: dict                               # its metadata but uid ("name" set to each replica's)
    meta_uid: dict                           # the same with a "uid" key (set to each replica's)
    labels: dict | None                      # a Node's labels (values may differ); None for a Pod's (they may not)
    notes: tuple[tuple[str, str], ...]       # the collector's notes (warnings) its document left
    stamps: tuple | None = None              # (obj.replacer("metadata"), obj.metadata.replacer("name")), once needed

    @classmethod
    def of(cls, document: dict, obj: Pod | Node, context: tuple[str | None, str | None],
           notes: tuple[tuple[str, str], ...]) -> "_TextTemplate":
        meta = {k: v for k, v in document["metadata"].items() if k != "uid"}
        labels = meta.get("labels") if isinstance(obj, Node) else None
        return cls(obj, context, document, dict(document), meta, {**meta, "uid": ""}, labels, notes)

    def renamed(self, name: str) -> Pod | Node | None:
        """The template's object with this name (its document's but for metadata.name), None if the name does not
        pass validation."""
        if dns_subdomain_problem(name):
            return None
        if self.stamps is None:
            # The object may be of a document that differs in uid (found by its template key): the source's uid.
            meta, uid = self.obj.metadata, self.source["metadata"].get("uid", "")
            if uid != meta.uid:
                meta = meta.replaced(uid=uid)
            self.stamps = (self.obj.replacer("metadata"), meta.replacer("name"))
        with_meta, with_name = self.stamps
        return with_meta(with_name(name))

    def named(self, name: str) -> dict:
        """The template's document with this metadata.name."""
        return {**self.source, "metadata": {**self.source["metadata"], "name": name}}

    def replica(self, document: Any, context: tuple[str | None, str | None]) -> Pod | Node | None:
        """The template's object renamed when `document` is the template's but for metadata.name and uid (and a
        Node's label values), and those would pass validation; else None."""
        if type(document) is not dict or context != self.context:
            return None
        meta = document.get("metadata")
        if type(meta) is not dict:
            return None
        name, uid = meta.get("name"), meta.get("uid")
        if type(name) is not str:
            return None
        probe = self.document
        probe["metadata"] = meta
        if document != probe:
            return None
        if uid is None:
            probe = self.meta
        elif type(uid) is str:
            probe = self.meta_uid
            probe["uid"] = uid
        else:
            return None
        probe["name"] = name
        own = labels = self.labels
        if own is not None:
            labels = meta.get("labels")
            if type(labels) is not dict or labels.keys() != own.keys():
                return None
            for key, value in labels.items():     # strings only: a null value is validated as "" (StringMap)
                if type(value) is not str or (value != own[key] and label_value_problem(value)):
                    return None
            probe["labels"] = labels
        if meta != probe:
            return None
        return _renamed(self.obj, name, uid or "", None if labels == own else labels)


class _Collector:
    """Accumulates objects from any number of sources; result() checks cross-object references."""

    def __init__(self, strict: bool = False, progress: Callable[[int], object] | None = None,
                 priority_classes: Iterable[PriorityClass] = ()) -> None:
        self.objects = ClusterObjects()
        self.known_classes = {pc.metadata.name: pc for pc in priority_classes}   # defined outside these files
        self.strict = strict             # a field the API does not know is an error (else a warning)
        self.progress = progress         # told how many more documents were read (a progress bar), or None
        self._notes: dict[tuple[str, str], list[str]] = {}       # (kind, warning) -> objects it is about
        self._names: set[tuple[str, str]] = set()
        self._generated: set[tuple[str, str]] = set()      # names made from metadata.generateName
        self._name_generator = NameGenerator(self._names)
        self._skipped: dict[tuple[str, str], int] = {}  # (source, "apiVersion Kind") -> count
        # A Pod document that differs from one validated before only in metadata.name and uid (a controller's
        # replicas, a generated workload) is that pod renamed: its template key -> the validated pod and the notes
        # its document left (each replica is named in them too).
        self._pod_templates: dict[tuple[str, str], tuple[Pod, tuple[tuple[str, str], ...]]] = {}
        # The last template met whose document is text only: the next replica is compared to it with `==` before
        # its template key (two reprs) is made.
        self._text_template: _TextTemplate | None = None
        self._release = False            # add_documents: drop each document (and list item) once read

    def add_documents(self, documents: Iterable[Any], source: str, release: bool = False) -> None:
        """release: the documents are this load's own list (parsed from text here), and each document, and each item
        of a document's List, is dropped once read: the peak holds the parsed dicts or the objects made of them,
        not both."""
        self._release = release
        number = 0
        for number, document in enumerate(documents, 1):
            if release:
                documents[number - 1] = None
            if document is not None:  # an empty YAML document
                self._add(document, f"document {number} of {source}", source)
            if self.progress is not None and number % _PROGRESS_EVERY == 0:
                self.progress(_PROGRESS_EVERY)
        if self.progress is not None:
            self.progress(number % _PROGRESS_EVERY)

    def _add(self, document: Any, where: str, source: str, implied_kind: str | None = None,
             implied_api_version: str | None = None, tried: bool = False) -> None:
        """tried: the document was compared with the last text-only template already (_add_items)."""
        if not isinstance(document, dict):
            raise InputError(f"{where}: expected an object, got {_type_name(document)}")
        kind = document.get("kind", implied_kind)
        if kind is None:
            raise InputError(f"{where}: kind: field required")
        if not isinstance(kind, str):
            raise InputError(f"{where}: kind: expected a string, got {_type_name(kind)}")
        if _is_list_kind(kind):
            self._add_list(document, kind, where, source)
            return
        if not kind:
            raise InputError(f"{where}: kind: field required")
        api_version = document.get("apiVersion", implied_api_version)
        if api_version is None:                  # kubectl: "error validating data: apiVersion not set"
            raise InputError(f"{_describe(kind, document, where)}: apiVersion: Required value")
        if not isinstance(api_version, str):
            raise InputError(f"{_describe(kind, document, where)}: apiVersion: expected a string, got "
                             f"{_type_name(api_version)}")
        model = _model_of(kind, api_version)
        if isinstance(model, str):
            raise InputError(f"{_describe(kind, document, where)}: {model}")
        if model is None:
            label = f"{api_version} {kind}"
            self._skipped[(source, label)] = self._skipped.get((source, label), 0) + 1
            return
        as_written = document          # its fields' JSON types are checked against its own version's structs,
        read_by = model                # but for those the model has checked (the v1 model of a v1beta1 object: none)
        if api_version == RESOURCE_V1BETA1:
            read_by = None
            document = v1beta1_to_v1(kind, document)
        generated = self._generate_name(kind, document, where)
        if generated is not None:
            document = {**document, "metadata": {**document["metadata"], "name": generated}}
        template = None
        context = (implied_kind, implied_api_version)
        if model is Pod or model is Node:
            obj, notes = None, ()
            if self._text_template is not None and (generated is not None or not tried):
                obj, notes = self._text_template.replica(document, context), self._text_template.notes
            if obj is None and model is Pod:
                template = _pod_template_key(document)
                seen, notes = self._pod_templates.get(template, (None, ())) if template is not None else (None, ())
                if seen is not None:
                    meta = document["metadata"]
                    obj = _renamed(seen, meta.get("name"), meta.get("uid", ""))
                    if _text_only(document):
                        self._text_template = _TextTemplate.of(document, seen, context, notes)
            if obj is not None:
                self._keep_replica(obj, notes)
                return
        # Unknown fields are met by the models' validators (in the structs the models read) and by decoding (in the
        # others); a v1beta1 object's, read converted to v1, by decoding alone, in its own version's structs.
        unknown: list = []                     # (model, field) pairs met, when they are not errors
        token = UNKNOWN_FIELDS.set(None if read_by is None else RAISE if self.strict else unknown)
        try:
            obj = model.model_validate(document)
        except ValidationError as error:
            problem = _unknown_field(error) or validation_problem(error)
            if generated is not None and problem.startswith("metadata.name:"):
                problem = "metadata.generateName:" + problem[len("metadata.name:"):]
            raise InputError(f"{_describe(kind, document, where)}: {problem}") from None
        finally:
            UNKNOWN_FIELDS.reset(token)
        # Decoding (every field's JSON type, modelled or not; with --strict, no unknown field) comes before
        # validation, as at the API server.
        decoding = decode_document(api_version, kind, as_written, read_by)
        problem = decoding.problem
        if problem is None and self.strict and decoding.unknown_fields:
            problem = f'unknown field "{decoding.unknown_fields[0]}"'     # upstream's error lists them all
        problem = problem or manifest_problem(obj)
        if problem is not None:
            raise InputError(f"{_describe(kind, document, where)}: {problem}")
        notes: list[tuple[str, str]] = []       # the notes this document left, for its replicas to be named in too
        if unknown or decoding.unknown_fields:
            shown = _describe(kind, document, where).partition(" ")[2]
            problems = [*self._model_unknown_fields(model, document, len(unknown)),
                        *(f'unknown field "{path}"' for path in decoding.unknown_fields)]
            notes += [self._note(kind, f"{problem} (ignored; --strict makes it an error)", shown)
                      for problem in problems]
        if isinstance(obj, ResourceSlice):
            # Fields of gates off in v1.36: the API server drops them (dropDisabledFields) and accepts the rest.
            notes += [self._note(kind, f"{path}: dropped, as the API server drops it ({why})", obj.metadata.name)
                      for path, why in obj.dropped()]
        if isinstance(obj, WorkloadV1Alpha1):
            obj = obj.to_v1alpha2()
        if isinstance(obj, Pod) and obj.spec.workload_ref is not None and obj.spec.scheduling_group is not None:
            # No API server has both: v1.36 replaced workloadRef by schedulingGroup and drops it as unknown.
            notes.append(self._note("Pod", "spec.workloadRef: ignored, spec.schedulingGroup is set (v1.36 replaced "
                                           "workloadRef with schedulingGroup)", obj.key))
        left = tuple(notes)
        if template is not None and len(self._pod_templates) < _POD_TEMPLATES:
            self._pod_templates[template] = (obj, left)
            if _text_only(document):
                self._text_template = _TextTemplate.of(document, obj, context, left)
        elif model is Node and _text_only(document):
            self._text_template = _TextTemplate.of(document, obj, context, left)
        self._keep(obj)

    def _note(self, kind: str, note: str, shown: str) -> tuple[str, str]:
        """`note` (a warning) said of the `kind` object `shown` too; the note's key."""
        key = (kind, note)
        self._notes.setdefault(key, []).append(shown)
        return key

    def _keep_replica(self, obj: Pod | Node, notes: tuple[tuple[str, str], ...]) -> None:
        """A replica of a template validated before, kept and named in the notes the template left."""
        if notes:
            shown = obj.key if isinstance(obj, Pod) else obj.metadata.name
            for key in notes:
                self._notes[key].append(shown)
        self._keep(obj)

    @staticmethod
    def _model_unknown_fields(model: type[BaseModel], document: dict, count: int) -> list[str]:
        """The unknown fields the model's validators met, `count` at most ('unknown field "spec.nodeNmae"'): validated
        again with unknown fields as errors, each error's location is one unknown field's path; that field is dropped
        from a copy of the document before the next try."""
        found = []
        for _ in range(count):
            token = UNKNOWN_FIELDS.set(RAISE)
            try:
                model.model_validate(document)
                break
            except ValidationError as error:
                first = error.errors(include_url=False)[0]
                problem = _unknown_field(error)
            finally:
                UNKNOWN_FIELDS.reset(token)
            if problem is None:
                break
            found.append(problem)
            document = _without(document, list(first["loc"]), first["ctx"]["error"].name)
        return found

    def _generate_name(self, kind: str, document: dict, where: str) -> str | None:
        """The name for an object given metadata.generateName and no name (cluster_models.controllers
        NameGenerator: deterministic), or None when it has a name."""
        meta = document.get("metadata")
        if not isinstance(meta, dict) or "generateName" not in meta or meta.get("name"):
            return None
        base = meta["generateName"]
        if not isinstance(base, str):
            raise InputError(f"{kind} <unnamed> ({where}): metadata.generateName: expected a string, got "
                             f"{_type_name(base)}")
        if not base:
            raise InputError(f"{kind} <unnamed> ({where}): metadata.name: field required (generateName is empty)")
        ns = meta.get("namespace")
        namespace = (ns if isinstance(ns, str) and ns else "default") if kind in _NAMESPACED else None
        name = self._name_generator.generate(kind, namespace, base, reserve=False)
        self._generated.add((kind, f"{namespace}/{name}" if namespace is not None else name))
        return name

    def _add_list(self, document: dict, kind: str, where: str, source: str) -> None:
        items = document.get("items")
        if items is None:
            return
        if not isinstance(items, list):
            raise InputError(f"{where}: items: expected a list, got {_type_name(items)}")
        # Only a document's own items are dropped: a nested List's items may be a YAML alias of another's.
        release, self._release = self._release, False
        try:
            self._add_items(items, kind, document.get("apiVersion"), where, source, release)
        finally:
            self._release = release

    def add_streamed(self, head: dict, items: Iterator[Any], source: str) -> None:
        """A file's one document, a List read item by item (json_stream.streamed_list): `head` its other fields.
        Raises NotStreamable when it is not a List, for the whole-file reading to say why."""
        kind = head.get("kind")
        if not isinstance(kind, str) or not _is_list_kind(kind):
            raise NotStreamable
        self._add_items(items, kind, head.get("apiVersion"), f"document 1 of {source}", source, False)
        if self.progress is not None:
            self.progress(1)

    def _add_items(self, items: Iterable[Any], kind: str, api_version: Any, where: str, source: str,
                   release: bool) -> None:
        # API list responses (PodList, ...) leave kind off their items; kubectl's List keeps it on each.
        item_kind = None if kind == "List" else kind[:-4]
        context = (item_kind, api_version if item_kind is not None else None)
        streamed = items if isinstance(items, StreamedItems) else None
        for index, item in enumerate(items):
            if release:
                items[index] = None
            template = self._text_template
            if type(item) is Renamed:          # the streamed text of the template's item, but for the name
                replica = template.renamed(item)
                if replica is not None:
                    self._keep_replica(replica, template.notes)
                    continue
                item = template.named(item)    # a name that does not pass: validated, to say why
            # A replica of the last text-only template (a controller's, a generated workload's) goes the short way.
            replica = template.replica(item, context) if template is not None else None
            if replica is not None:
                self._keep_replica(replica, template.notes)
                continue
            self._add(item, f"items[{index}] of {where}", source, *context, tried=True)
            if streamed is not None and self._text_template is not template:
                made = self._text_template      # of this item's own document, or of another (a nested List's item)
                streamed.adopt(made.source if made.source is item else None)

    def _keep(self, obj: BaseModel) -> None:
        if isinstance(obj, Pod):
            identity = shown = obj.key
            bucket = self.objects.pods
        elif isinstance(obj, (Workload, PodGroup, Job, ResourceClaim, ResourceClaimTemplate, PodDisruptionBudget,
                              PersistentVolumeClaim, CSIStorageCapacity)):
            identity, shown = obj.key, obj.key
            bucket = {Workload: self.objects.workloads, PodGroup: self.objects.pod_groups,
                      Job: self.objects.jobs, PodDisruptionBudget: self.objects.pdbs, ResourceClaim: self.objects.resource_claims,
                      ResourceClaimTemplate: self.objects.resource_claim_templates,
                      PersistentVolumeClaim: self.objects.persistent_volume_claims,
                      CSIStorageCapacity: self.objects.csi_storage_capacities}[type(obj)]
        elif isinstance(obj, (Service, *CONTROLLER_TYPES)):
            identity, shown = obj.key, obj.key
            bucket = self.objects.services if isinstance(obj, Service) else self.objects.controllers
        elif isinstance(obj, (DeviceClass, ResourceSlice)):
            identity, shown = obj.metadata.name, f'"{obj.metadata.name}"'
            bucket = self.objects.device_classes if isinstance(obj, DeviceClass) else self.objects.resource_slices
        else:
            identity, shown = obj.metadata.name, f'"{obj.metadata.name}"'
            bucket = {Node: self.objects.nodes, Namespace: self.objects.namespaces,
                      PriorityClass: self.objects.priority_classes, PersistentVolume: self.objects.persistent_volumes,
                      StorageClass: self.objects.storage_classes, CSINode: self.objects.csi_nodes,
                      CSIDriver: self.objects.csi_drivers,
                      VolumeAttachment: self.objects.volume_attachments}[type(obj)]
        kind = type(obj).__name__
        if (kind, identity) in self._names:
            if (kind, identity) in self._generated:
                raise InputError(f"duplicate {kind} {shown}: an earlier object's generateName produced this name; "
                                 f"name one of them differently")
            raise InputError(f"duplicate {kind} {shown}")
        self._names.add((kind, identity))
        bucket.append(obj)

    def result(self) -> ClusterObjects:
        defaults = [pc.metadata.name for pc in self.objects.priority_classes if pc.global_default]
        if len(defaults) > 1:         # the Priority admission plugin refuses the second
            raise InputError(f"PriorityClass {defaults[1]}: globalDefault: PriorityClass {defaults[0]} is already "
                             f"marked as default. Only one default can exist")
        classes = {**self.known_classes, **{pc.metadata.name: pc for pc in self.objects.priority_classes}}
        last_spec = None                      # replicas share their spec: checked once
        for pod in self.objects.pods:
            if pod.spec is not last_spec:
                effective_priority(pod, classes)  # raises for a priorityClassName that names no class
                last_spec = pod.spec
        if any(pod.spec.workload_ref is not None for pod in self.objects.pods):
            taken = {group.key for group in self.objects.pod_groups}
            try:
                made = podgroups_for_workload_refs(self.objects.pods, self.objects.workloads, taken)
            except ValueError as error:
                raise InputError(str(error)) from None
            self.objects.pod_groups.extend(made)
        for (kind, note), objects in self._notes.items():
            who = f"{kind} {objects[0]}" if len(objects) == 1 else (
                f"{len(objects)} {kind}s ({', '.join(objects[:3])}{', ...' if len(objects) > 3 else ''})")
            self.objects.warnings.append(f"{who}: {note}")
        for (source, label), count in self._skipped.items():
            self.objects.warnings.append(
                f"{source}: skipped {count} object{'s' if count > 1 else ''} of unsupported kind {label}")
        return self.objects


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    # Loading builds millions of long-lived objects and no garbage cycles; the cyclic collector would rescan
    # them over and over (about 40% of the load time of 20k pods).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputError(f"{path}: cannot read: {error.strerror or error}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(f"{path}: not UTF-8 text (byte {error.start})") from None


def _manifest_files(path: Path) -> list[Path]:
    if path.is_dir():
        found = [Path(root, name) for root, _, names in os.walk(path) for name in names
                 if name.lower().endswith(MANIFEST_SUFFIXES)]
        if not found:       # an empty cluster is a mistake (a wrong path), not a cluster
            raise InputError(f"{path}: no .yaml, .yml or .json files")
        return sorted(found)
    if path.is_file():
        return [path]
    raise InputError(f"{path}: no such file or directory")


def load_paths(paths: Iterable[str | Path], strict: bool = False,
               progress: Callable[[int], object] | None = None,
               priority_classes: Iterable[PriorityClass] = ()) -> ClusterObjects:
    """Load manifest files and directories, in the order given (a directory's files in sorted path order).

    A file named explicitly is read whatever its extension (.json strictly as JSON, anything else as YAML);
    a single path may be passed without wrapping it in a list. `strict`: a field the Kubernetes API does not have
    is an error (kubectl --validate=strict); otherwise a warning naming it. `progress(n)`: told as documents are
    read (n more each time), e.g. a progress bar's update. `priority_classes`: classes defined elsewhere (the cluster
    a pod's manifest is read beside) that a pod's spec.priorityClassName may name.
    """
    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    try:
        return _load_files(paths, strict, progress, stream=True, priority_classes=priority_classes)
    except NotStreamable:        # a large file that looked like a List and was not one read here: all again, whole
        return _load_files(paths, strict, progress, stream=False, priority_classes=priority_classes)


def _load_files(paths: list[str | Path], strict: bool, progress: Callable[[int], object] | None,
                stream: bool, priority_classes: Iterable[PriorityClass] = ()) -> ClusterObjects:
    collector = _Collector(strict, progress, priority_classes)
    with cyclic_gc_paused():
        for path in map(Path, paths):
            for file in _manifest_files(path):
                text = _read_text(file)
                json_only = file.suffix.lower() == ".json"
                streamed = None
                if stream and len(text) >= STREAM_MIN_CHARS and (json_only or text.lstrip()[:1] == "{"):
                    streamed = streamed_list(text)      # a large List: its items decoded one at a time
                if streamed is not None:
                    collector.add_streamed(*streamed, str(file))
                    continue
                documents = _documents(text, str(file), json_only=json_only)
                del text             # gone before the objects are made of its documents
                if all(document is None for document in documents):     # kubectl: "no objects passed to apply"
                    collector.objects.warnings.append(f"{file}: no objects in it (an empty file)")
                collector.add_documents(documents, str(file), release=True)
        return collector.result()


def load_text(text: str, source: str = "<string>", strict: bool = False) -> ClusterObjects:
    """Load manifests from a string: YAML, or JSON when it starts with { or [. `source` names it in messages."""
    collector = _Collector(strict)
    with cyclic_gc_paused():
        collector.add_documents(_documents(text, source), source, release=True)
        return collector.result()


def parse_objects(docs: Iterable[dict], source: str = "<objects>", strict: bool = False) -> ClusterObjects:
    """Load already-decoded manifests (dicts, e.g. from yaml.safe_load_all); None entries are skipped."""
    collector = _Collector(strict)
    with cyclic_gc_paused():
        collector.add_documents(docs, source)
        return collector.result()
