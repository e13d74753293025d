"""Every field of a manifest has the JSON type its Go type decodes from (cluster_models/api_decode.py, against the
table tools/gen_api_types.py made of upstream's OpenAPI, cluster_models/api_types.py): what the API server refuses
when decoding (`json: cannot unmarshal number into Go struct field PodSpec.spec.hostname of type string`), phalanx
refuses, for the fields its models do not read too. Expected messages are written out by hand."""
from __future__ import annotations

import copy
import importlib.util
import json
from decimal import Decimal
from pathlib import Path

import pytest
import yaml
from hypothesis import assume, given, strategies as st

from phalanx.cluster_models import InputError, load_paths, load_text, parse_objects
from phalanx.cluster_models.api_decode import decode_document
from phalanx.cluster_models.api_fields import MODEL_STRUCTS
from phalanx.cluster_models.api_types import ROOTS, STRUCTS
from phalanx.cluster_models.generate import (basic_pods, generate_nodes, gpu_mix_pods, heterogeneous_pods,
                                             kube_mix_pods)
from phalanx.cluster_models.load import READ_KINDS
from phalanx.cluster_models.objects import Container, ObjectMeta, PodSpec
from phalanx.cluster_models.write import write_manifests

ROOT = Path(__file__).resolve().parents[1]
IMAGE = "registry.k8s.io/pause:3.10"
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
       "spec": {"containers": [{"name": "c", "image": IMAGE}]}}
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": IMAGE}]}}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
              "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}}
JOB_TEMPLATE = {"metadata": {}, "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": IMAGE}]}}
JOB = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"template": JOB_TEMPLATE}}
CRONJOB = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj"},
           "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": JOB_TEMPLATE}}}}
STATEFULSET = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
               "spec": {"replicas": 1, "serviceName": "db", "selector": {"matchLabels": {"app": "web"}},
                        "template": TEMPLATE}}
DAEMONSET = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds"},
             "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}}
PDB = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"},
       "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}}
PRIORITY_CLASS = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                  "value": 1000}
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"},
           "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}
SLICE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-gpu"},
         "spec": {"driver": "gpu.example.com", "nodeName": "n1", "pool": {"name": "n1", "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0"}]}}
CLAIM_V1BETA1 = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim", "metadata": {"name": "one-gpu"},
                 "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}}}
WORKLOAD = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload", "metadata": {"name": "w"},
            "spec": {"podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}}}]}}


def changed(obj: dict, path: str, value) -> dict:
    """A copy of `obj` with the field at the dotted `path` (a number indexes a list) set, the objects on the way
    made when missing."""
    out = copy.deepcopy(obj)
    at, keys = out, [int(k) if k.isdigit() else k for k in path.split(".")]
    for key, following in zip(keys, keys[1:]):
        if isinstance(at, dict) and key not in at:
            at[key] = [{}] if isinstance(following, int) else {}
        at = at[key]
    at[keys[-1]] = value
    return out


def problem(*documents) -> str:
    with pytest.raises(InputError) as error:
        parse_objects(documents)
    return str(error.value)


# (what, the documents, the whole message)
CASES = [
    # a number, a list, an object where a string is
    ("hostname 5", [changed(POD, "spec.hostname", 5)],
     "Pod default/p: spec.hostname: input should be a valid string (got 5)"),
    ("subdomain [a]", [changed(POD, "spec.subdomain", ["a"])],
     "Pod default/p: spec.subdomain: input should be a valid string"),
    ("an env value 3", [changed(POD, "spec.containers.0.env", [{"name": "A", "value": 3}])],
     "Pod default/p: spec.containers[0].env[0].value: input should be a valid string (got 3)"),
    ("a Node's podCIDR 3", [changed(NODE, "spec.podCIDR", 3)],
     "Node n1: spec.podCIDR: input should be a valid string (got 3)"),
    ("a boolean for a string", [changed(SERVICE, "spec.sessionAffinity", True)],
     "Service default/svc: spec.sessionAffinity: input should be a valid string (got true)"),
    ("an object for a string", [changed(PRIORITY_CLASS, "description", {"a": "b"})],
     "PriorityClass high: description: input should be a valid string"),
    # a string, a boolean, a fraction, out of range where an integer is
    ("terminationGracePeriodSeconds x", [changed(POD, "spec.terminationGracePeriodSeconds", "x")],
     'Pod default/p: spec.terminationGracePeriodSeconds: input should be a valid integer (got "x")'),
    ("runAsUser root", [changed(POD, "spec.securityContext", {"runAsUser": "root"})],
     'Pod default/p: spec.securityContext.runAsUser: input should be a valid integer (got "root")'),
    ("periodSeconds a", [changed(POD, "spec.containers.0.livenessProbe", {"periodSeconds": "a"})],
     'Pod default/p: spec.containers[0].livenessProbe.periodSeconds: input should be a valid integer (got "a")'),
    ("a boolean for an integer", [changed(JOB, "spec.ttlSecondsAfterFinished", True)],
     "Job default/j: spec.ttlSecondsAfterFinished: input should be a valid integer (got true)"),
    ("1.5 for an integer", [changed(CRONJOB, "spec.startingDeadlineSeconds", 1.5)],
     "CronJob default/cj: spec.startingDeadlineSeconds: input should be a valid integer (got 1.5)"),
    ("2.0 for an integer", [changed(POD, "metadata.generation", 2.0)],
     "Pod default/p: metadata.generation: input should be a valid integer (got 2.0)"),
    ("an int32 past its top", [changed(DEPLOYMENT, "spec.template.spec.containers.0.readinessProbe.periodSeconds",
                                       2147483648)],
     "Deployment default/web: spec.template.spec.containers[0].readinessProbe.periodSeconds: input should be less "
     "than or equal to 2147483647 (got 2147483648)"),
    ("an int32 under its bottom", [changed(STATEFULSET, "spec.revisionHistoryLimit", -2147483649)],
     "StatefulSet default/db: spec.revisionHistoryLimit: input should be greater than or equal to -2147483648 "
     "(got -2147483649)"),
    ("an int64 past its top", [changed(POD, "spec.terminationGracePeriodSeconds", 9223372036854775808)],
     "Pod default/p: spec.terminationGracePeriodSeconds: input should be less than or equal to 9223372036854775807 "
     "(got 9223372036854775808)"),
    ("int32 items", [changed(JOB, "spec.podFailurePolicy", {"rules": [
        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1, "2"]}}]})],
     'Job default/j: spec.podFailurePolicy.rules[0].onExitCodes.values[1]: input should be a valid integer (got "2")'),
    # a string, a number where a boolean is
    ("enableServiceLinks yes", [changed(POD, "spec.enableServiceLinks", "yes")],
     'Pod default/p: spec.enableServiceLinks: input should be a valid boolean (got "yes")'),
    ("hostPID 1", [changed(DAEMONSET, "spec.template.spec.hostPID", 1)],
     "DaemonSet default/ds: spec.template.spec.hostPID: input should be a valid boolean (got 1)"),
    ("a ResourceSlice device's bindsToNode", [changed(SLICE, "spec.devices.0.bindsToNode", "true")],
     'ResourceSlice n1-gpu: spec.devices[0].bindsToNode: input should be a valid boolean (got "true")'),
    # a scalar, an object where a list is
    ("dnsConfig nameservers 3", [changed(POD, "spec.dnsConfig", {"nameservers": 3})],
     "Pod default/p: spec.dnsConfig.nameservers: input should be a valid list (got 3)"),
    ("a Namespace's finalizers as text", [changed(NAMESPACE, "spec.finalizers", "kubernetes")],
     'Namespace team: spec.finalizers: input should be a valid list (got "kubernetes")'),
    ("an object for a list", [changed(POD, "metadata.finalizers", {"a": "b"})],
     "Pod default/p: metadata.finalizers: input should be a valid list"),
    # a scalar, a list where an object is
    ("a list for a struct", [changed(POD, "spec.securityContext", [])],
     "Pod default/p: spec.securityContext: input should be a valid dictionary or instance of PodSecurityContext"),
    ("text for a struct", [changed(NODE, "status.nodeInfo", "linux")],
     'Node n1: status.nodeInfo: input should be a valid dictionary or instance of NodeSystemInfo (got "linux")'),
    ("a list for a map", [changed(POD, "status.allocatedResources", ["cpu"])],
     "Pod default/p: status.allocatedResources: input should be a valid dictionary"),
    ("a number for a map", [changed(PDB, "status.disruptedPods", 3)],
     "PodDisruptionBudget default/pdb: status.disruptedPods: input should be a valid dictionary (got 3)"),
    # IntOrString: a string or an int32
    ("a boolean for a port", [changed(POD, "spec.containers.0.livenessProbe", {"httpGet": {"port": True}})],
     "Pod default/p: spec.containers[0].livenessProbe.httpGet.port: input should be an int32 or a string (got true)"),
    ("a fraction for a port", [changed(POD, "spec.containers.0.startupProbe", {"tcpSocket": {"port": 8.5}})],
     "Pod default/p: spec.containers[0].startupProbe.tcpSocket.port: input should be an int32 or a string (got 8.5)"),
    ("maxSurge [1] (modelled)", [changed(DEPLOYMENT, "spec.strategy", {"rollingUpdate": {"maxSurge": [1]}})],
     "Deployment default/web: spec.strategy.rollingUpdate.maxSurge: input should be an int32 or a string (got [1])"),
    # Quantity: a string or a number that parses
    ("a boolean for a quantity", [changed(POD, "spec.volumes", [{"name": "v", "emptyDir": {"sizeLimit": True}}])],
     'Pod default/p: spec.volumes[0].emptyDir.sizeLimit: invalid quantity "true"'),
    ("text that is no quantity", [changed(POD, "status.allocatedResources", {"cpu": "1x"})],
     'Pod default/p: status.allocatedResources.cpu: invalid quantity "1x"'),
    # Time: an RFC 3339 string
    ("a condition's time", [changed(NODE, "status.conditions", [{"type": "Ready", "status": "True",
                                                                 "lastHeartbeatTime": "yesterday"}])],
     'Node n1: status.conditions[0].lastHeartbeatTime: invalid RFC 3339 time "yesterday"'),
    ("a number for a time", [changed(PDB, "status.disruptedPods", {"p": 5})],
     "PodDisruptionBudget default/pdb: status.disruptedPods.p: input should be a valid string (got 5)"),
    # kinds at a version the v1.36 API no longer serves: its served version's structs
    ("a v1beta1 claim, as written", [changed(CLAIM_V1BETA1, "metadata.generation", "1")],
     'ResourceClaim default/one-gpu: metadata.generation: input should be a valid integer (got "1")'),
    ("a v1beta1 PriorityClass", [changed({**PRIORITY_CLASS, "apiVersion": "scheduling.k8s.io/v1beta1"},
                                         "description", 5)],
     "PriorityClass high: description: input should be a valid string (got 5)"),
    ("a Workload", [changed(WORKLOAD, "metadata.deletionGracePeriodSeconds", "30")],
     'Workload default/w: metadata.deletionGracePeriodSeconds: input should be a valid integer (got "30")'),
]


@pytest.mark.parametrize("docs,expected", [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_a_value_of_the_wrong_json_type_is_refused(docs, expected):
    assert problem(*docs) == expected


def test_json_numbers_keep_their_text():
    # A JSON 1.0 or 1e3 is not an integer to encoding/json; both reach phalanx as exact decimals.
    pod = json.dumps(changed(POD, "spec.terminationGracePeriodSeconds", 0)).replace(
        '"terminationGracePeriodSeconds": 0', '"terminationGracePeriodSeconds": 30.0')
    with pytest.raises(InputError, match=r"^Pod default/p: spec\.terminationGracePeriodSeconds: input should be a "
                                         r"valid integer \(got 30\.0\)$"):
        load_text(pod, "p.json")
    pod = pod.replace("30.0", "3e1")
    with pytest.raises(InputError, match=r"spec\.terminationGracePeriodSeconds: input should be a valid integer "
                                         r"\(got 3E\+1\)$"):
        load_text(pod, "p.json")


def test_null_fits_every_field():
    # encoding/json leaves the zero value for a null, whatever the field's type.
    pod = POD
    for path in ("spec.hostname", "spec.dnsConfig", "spec.securityContext", "spec.terminationGracePeriodSeconds",
                 "spec.enableServiceLinks", "spec.containers.0.env", "spec.containers.0.livenessProbe",
                 "metadata.finalizers", "status.allocatedResources", "status.startTime"):
        pod = changed(pod, path, None)
    pod = changed(pod, "spec.volumes", [{"name": "v", "emptyDir": {"sizeLimit": None, "medium": None}}])
    pod = changed(pod, "spec.containers.0.args", ["a", None])
    assert parse_objects([pod]).pods[0].spec.containers[0].name == "c"


def test_what_decodes_loads():
    pod = changed(POD, "spec.containers.0.livenessProbe", {"httpGet": {"port": "http", "path": "/"},
                                                           "periodSeconds": 10})
    pod = changed(pod, "spec.containers.0.readinessProbe", {"tcpSocket": {"port": 8080}})
    pod = changed(pod, "spec.volumes", [{"name": "v", "emptyDir": {"sizeLimit": 1073741824}}])
    pod = changed(pod, "status.allocatedResources", {"cpu": Decimal("0.5"), "memory": "1Gi"})
    pod = changed(pod, "status.conditions", [{"type": "Ready", "status": "True",
                                              "lastTransitionTime": "2024-05-01T10:00:00Z"}])
    pod = changed(pod, "metadata.managedFields", [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}])
    assert parse_objects([pod]).pods[0].metadata.name == "p"


def test_the_models_own_fields_keep_their_rules():
    # A modelled field is validated by its model only (an unquoted YAML `status: True` of a PodGroup condition is
    # read as the API's string there), with its model's words.
    objects = load_text("""apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: pg}
spec: {schedulingPolicy: {gang: {minCount: 2}}}
status: {conditions: [{type: PodGroupScheduled, status: True, reason: Scheduled}]}
""")
    assert objects.pod_groups[0].status.conditions[0].status == "True"
    assert problem(changed(POD, "spec.nodeName", 5)) == \
        "Pod default/p: spec.nodeName: input should be a valid string (got 5)"


def test_unknown_fields_are_not_type_checked():
    objects = parse_objects([changed(POD, "spec.hostnam", 5)])
    assert objects.warnings == ['Pod default/p: unknown field "spec.hostnam" (ignored; --strict makes it an error)']


def test_the_first_wrong_field_in_document_order_is_named():
    pod = changed(changed(POD, "spec.hostname", 5), "spec.subdomain", 6)
    assert problem(pod) == "Pod default/p: spec.hostname: input should be a valid string (got 5)"


def test_nothing_is_half_loaded():
    with pytest.raises(InputError):
        parse_objects([NODE, POD, changed(POD, "metadata.name", "q") | {"spec": {**POD["spec"], "hostname": 5}}])


def test_replicas_of_a_checked_document_are_not_walked_again(monkeypatch):
    from phalanx.cluster_models import load
    walked = []
    decode = load.decode_document
    monkeypatch.setattr(load, "decode_document", lambda *args: walked.append(args[1]) or decode(*args))
    pods = [changed(POD, "metadata.name", f"p{i}") for i in range(50)]
    assert len(parse_objects(pods).pods) == 50
    assert walked == ["Pod"]


# ---- the table ----

def test_the_table_has_upstreams_types():
    # k8s.io/api v0.36.0 types.go, read by hand
    expected = {
        ("core/v1.PodSpec", "terminationGracePeriodSeconds"): "int64",      # *int64
        ("core/v1.PodSpec", "priority"): "int32",                           # *int32
        ("core/v1.PodSpec", "hostNetwork"): "bool",
        ("core/v1.PodSpec", "nodeSelector"): "map[string]string",
        ("core/v1.PodSpec", "overhead"): "map[string]Quantity",             # ResourceList
        ("core/v1.Container", "ports"): "[]core/v1.ContainerPort",
        ("core/v1.Container", "args"): "[]string",
        ("core/v1.HTTPGetAction", "port"): "IntOrString",
        ("core/v1.NodeSpec", "podCIDR"): "string",
        ("core/v1.NodeSpec", "taints"): "[]core/v1.Taint",
        ("apps/v1.DeploymentStrategy", "rollingUpdate"): "apps/v1.RollingUpdateDeployment",
        ("apps/v1.RollingUpdateDeployment", "maxSurge"): "IntOrString",
        ("meta/v1.ObjectMeta", "creationTimestamp"): "Time",
        ("meta/v1.ObjectMeta", "generation"): "int64",
        ("meta/v1.ManagedFieldsEntry", "fieldsV1"): "any",                  # *FieldsV1
        ("resource/v1.OpaqueDeviceConfiguration", "parameters"): "any",     # runtime.RawExtension
        ("resource/v1.DeviceAttribute", "int"): "int64",
        ("policy/v1.PodDisruptionBudgetStatus", "disruptedPods"): "map[string]Time",
        ("batch/v1.PodFailurePolicyOnExitCodesRequirement", "values"): "[]int32",
    }
    assert {(struct, field): _fields(struct).get(field) for struct, field in expected} == expected
    assert ROOTS["v1 Pod"] == "core/v1.Pod"
    assert ROOTS["resource.k8s.io/v1beta1 ResourceClaim"] == "resource/v1beta1.ResourceClaim"
    assert {key.partition(" ")[2] for key in ROOTS} == READ_KINDS


def test_every_struct_the_table_names_is_in_it():
    named = {text.split("]")[-1] for struct in STRUCTS for text in _fields(struct).values()}
    leaves = {"string", "bool", "int32", "int64", "Quantity", "IntOrString", "Time", "any"}
    assert named - leaves <= STRUCTS.keys()
    assert set(ROOTS.values()) <= STRUCTS.keys()
    assert set(MODEL_STRUCTS.values()) <= STRUCTS.keys()


def test_each_model_reads_the_struct_api_fields_names():
    # Walking a kind's structs beside its models (a model's field typed with a nested model reads that field's
    # struct), every model class met is at the struct api_fields.py says it reads (so its unknown fields are told)
    from typing import get_args

    from pydantic import BaseModel

    from phalanx.cluster_models.load import _model_of

    def nested(annotation):
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return [annotation]
        return [model for arg in get_args(annotation) for model in nested(arg)]

    met, pending = set(), []
    for key, struct in ROOTS.items():
        api_version, kind = key.split(" ")
        if not api_version.startswith("resource.k8s.io/v1beta"):     # read converted to v1
            pending.append((struct, _model_of(kind, api_version)))
    while pending:
        struct, model = pending.pop()
        if (struct, model) in met:
            continue
        met.add((struct, model))
        # (or one of its shape: the PodAffinity model reads PodAntiAffinity too)
        assert _fields(MODEL_STRUCTS[model.__name__]) == _fields(struct), (model, struct)
        fields = _fields(struct)
        for name, field in model.model_fields.items():
            text = fields.get(field.alias or name)
            for inner in nested(field.annotation) if text is not None else ():   # not the API's (workloadRef)
                pending.append((text.replace("[]", "").replace("map[string]", ""), inner))
    assert len(met) > 80


def _generator():
    spec = importlib.util.spec_from_file_location("gen_api_types", ROOT / "tools" / "gen_api_types.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _swagger(extra_property: dict | None = None) -> dict:
    props = {"name": {"type": "string"}, "count": {"type": "integer", "format": "int32"},
             "size": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"},
             "parts": {"type": "array", "items": {"$ref": "#/definitions/io.k8s.api.toy.v1.Part"}},
             "labels": {"type": "object", "additionalProperties": {"type": "string"}}}
    if extra_property is not None:
        props["extra"] = extra_property
    return {"definitions": {
        "io.k8s.api.toy.v1.Thing": {"type": "object", "properties": props,
                                    "x-kubernetes-group-version-kind": [{"group": "toy.io", "version": "v1",
                                                                         "kind": "Thing"}]},
        "io.k8s.api.toy.v1.Part": {"type": "object", "properties": {"at": {
            "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Time"}, "on": {"type": "boolean"}}},
        "io.k8s.api.toy.v1.Unused": {"type": "object", "properties": {"x": {"type": "string"}}},
        "io.k8s.apimachinery.pkg.api.resource.Quantity": {"type": "string"},
        "io.k8s.apimachinery.pkg.apis.meta.v1.Time": {"type": "string", "format": "date-time"},
    }}


def test_the_generator_tables_what_the_kinds_reach():
    text = _generator().generate(_swagger(), "a toy", "0" * 64, frozenset({"Thing"}))
    table: dict = {}
    exec(text, table)
    assert table["ROOTS"] == {"toy.io/v1 Thing": "toy/v1.Thing"}
    assert table["STRUCTS"] == {
        "toy/v1.Part": "at:Time on:bool",
        "toy/v1.Thing": "count:int32 labels:map[string]string name:string parts:[]toy/v1.Part size:Quantity",
    }


def test_the_generator_refuses_a_type_it_cannot_table():
    with pytest.raises(SystemExit, match="no table type for"):
        _generator().generate(_swagger({"type": "number", "format": "double"}), "a toy", "0" * 64,
                              frozenset({"Thing"}))


# ---- the repo's own manifests decode with every field checked, modelled or not ----

def _every_field_decodes(documents) -> None:
    for document in documents:
        for item in document.get("items", [document]):
            assert decode_document(item["apiVersion"], item["kind"], item, None) == (None, []), item["metadata"]


@pytest.mark.parametrize("path", sorted((ROOT / "tests" / "data").rglob("*.yaml")), ids=lambda p: p.name)
def test_the_repos_manifests_load_and_decode(path):
    load_paths([path])
    _every_field_decodes(d for d in yaml.safe_load_all(path.read_text()) if d is not None)


def test_generated_manifests_load_and_decode(tmp_path):
    pods = {"basic": basic_pods(20), "heterogeneous": heterogeneous_pods(20, 1), "gpu": gpu_mix_pods(20, 1),
            "kube": kube_mix_pods(20)}
    write_manifests(tmp_path / "nodes.yaml", generate_nodes(20, 1, gpu_fraction=0.25, taint_fraction=0.1,
                                                            unschedulable_fraction=0.1))
    for mix, made in pods.items():
        write_manifests(tmp_path / f"{mix}.yaml", made)
    for mix in pods:                        # each mix's pods are named pod-0, ...: one load each
        assert len(load_paths([tmp_path / "nodes.yaml", tmp_path / f"{mix}.yaml"]).pods) == 20
    for path in tmp_path.iterdir():
        _every_field_decodes(d for d in yaml.safe_load_all(path.read_text()) if d is not None)


# ---- a wrong JSON type anywhere the models do not read is refused, naming its path ----

# Where in a valid Pod the walk starts: the object the base document has there, and the model that reads it.
ANCHORS = [(("metadata",), "meta/v1.ObjectMeta", ObjectMeta), (("spec",), "core/v1.PodSpec", PodSpec),
           (("spec", "containers", 0), "core/v1.Container", Container)]
WRONG = {   # values of each JSON type a table type cannot decode
    "string": [5, True, ["a"], {"a": "b"}], "bool": ["true", 1, [True], {}],
    "int32": ["1", True, 1.5, 2**31, -2**31 - 1, [1], {}], "int64": ["1", False, 2.0, 2**63, [1]],
    "Quantity": [True, "1x", [1], {"a": 1}], "IntOrString": [True, 1.5, 2**31, ["a"], {}],
    "Time": [5, "yesterday", ["2024-05-01T10:00:00Z"], {}],
}
WRONG_CONTAINER = {"[]": ["x", 3, {"a": 1}], "map": ["x", 3, ["a"]], "struct": ["x", 3, True, ["a"]]}


def _fields(struct: str) -> dict[str, str]:
    return dict(field.split(":") for field in STRUCTS[struct].split())


@st.composite
def wrong_field(draw):
    """(path, value): a path from an anchor through a field its model does not read, down the table's types to a
    field, an item or a map value, and a value of a JSON type that field's type does not decode from."""
    anchor, struct, model = draw(st.sampled_from(ANCHORS))
    read = {field.alias or name for name, field in model.model_fields.items()}
    unread = sorted(set(_fields(struct)) - read)
    path = [*anchor, draw(st.sampled_from(unread))]
    text = _fields(struct)[path[-1]]
    while True:
        if text.startswith("[]"):
            container, inner = "[]", text[2:]
        elif text.startswith("map[string]"):
            container, inner = "map", text[11:]
        elif text in STRUCTS:
            inner_fields = _fields(text)
            container, inner = "struct", None
        else:
            assume(text in WRONG)           # "any" takes every value
            return path, draw(st.sampled_from(WRONG[text]))
        if draw(st.booleans()) or (container == "struct" and not inner_fields):
            return path, draw(st.sampled_from(WRONG_CONTAINER[container]))
        if container == "[]":
            path.append(0)
        elif container == "map":
            path.append("k")
        else:
            inner = draw(st.sampled_from(sorted(inner_fields)))
            path.append(inner)
            inner = inner_fields[inner]
        text = inner


def _shown(path) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path).lstrip(".")


@given(wrong_field())
def test_a_wrong_json_type_anywhere_unmodelled_is_refused_naming_its_path(case):
    path, value = case
    pod = copy.deepcopy(POD)
    at = pod
    for part, following in zip(path, path[1:]):
        if isinstance(at, dict) and part not in at:
            at[part] = [] if isinstance(following, int) else {}
        if isinstance(at, list) and not at:
            at.append({} if isinstance(following, str) else [])
        at = at[part]
    if isinstance(at, list):
        at.append(value)
    else:
        at[path[-1]] = value
    message = problem(pod)
    assert message.startswith(f"Pod default/p: {_shown(path)}: "), message


# ---- unknown fields: in the structs no model reads too, warned about as in the modelled ones ----

IGNORED = " (ignored; --strict makes it an error)"


def warnings_and_strict_error(*documents) -> tuple[list[str], str]:
    """The warnings of a load, and the error of the same load with --strict."""
    with pytest.raises(InputError) as error:
        parse_objects(documents, strict=True)
    return parse_objects(documents).warnings, str(error.value)


def test_an_unknown_field_deep_in_an_unmodelled_struct_is_a_warning_and_an_error_with_strict():
    pod = changed(changed(POD, "spec.dnsConfig", {"nameservers": ["1.1.1.1"], "nameserverz": ["8.8.8.8"]}),
                  "spec.securityContext", {"runAsUserr": 0, "seLinuxOptions": {"levle": "s0"}})
    assert warnings_and_strict_error(pod) == ([
        'Pod default/p: unknown field "spec.dnsConfig.nameserverz" (ignored; --strict makes it an error)',
        'Pod default/p: unknown field "spec.securityContext.runAsUserr" (ignored; --strict makes it an error)',
        'Pod default/p: unknown field "spec.securityContext.seLinuxOptions.levle" (ignored; --strict makes it an '
        'error)'], 'Pod default/p: unknown field "spec.dnsConfig.nameserverz"')


def test_a_list_items_unknown_field_is_named_by_its_index():
    pod = changed(POD, "spec.containers.0.livenessProbe", {"xyz": 1, "httpGet": {
        "port": 80, "httpHeaders": [{"name": "a", "value": "b"}, {"name": "c", "valeu": "d"}]}})
    assert warnings_and_strict_error(pod) == ([
        'Pod default/p: unknown field "spec.containers[0].livenessProbe.xyz" (ignored; --strict makes it an error)',
        'Pod default/p: unknown field "spec.containers[0].livenessProbe.httpGet.httpHeaders[1].valeu" (ignored; '
        '--strict makes it an error)'], 'Pod default/p: unknown field "spec.containers[0].livenessProbe.xyz"')


def test_a_maps_keys_are_not_fields_its_struct_values_fields_are():
    # map[string]Quantity: any key; map[string]NodeAllocatableResourceMapping: any key, each value a struct
    pod = changed(POD, "status.allocatedResources", {"cpuu": "1", "example.com/foo": "2"})
    assert parse_objects([pod], strict=True).warnings == []
    mappings = {"memory": {"capacityKey": "mem"}, "example.com/hugepages": {"capacityKey": "hp", "capacityKeyy": "x"}}
    slice_ = changed(SLICE, "spec.devices.0.nodeAllocatableResourceMappings", mappings)
    assert warnings_and_strict_error(slice_) == ([
        'ResourceSlice n1-gpu: unknown field "spec.devices[0].nodeAllocatableResourceMappings[example.com/hugepages].'
        'capacityKeyy" (ignored; --strict makes it an error)',
        "ResourceSlice n1-gpu: spec.devices[0].nodeAllocatableResourceMappings: dropped, as the API server drops it "
        "(DRANodeAllocatableResources is alpha and off in v1.36)"],
        'ResourceSlice n1-gpu: unknown field "spec.devices[0].nodeAllocatableResourceMappings[example.com/hugepages].'
        'capacityKeyy"')


def test_null_is_a_value_not_an_unknown_field():
    pod = changed(changed(changed(POD, "spec.dnsConfig", {"nameservers": None, "options": [{"name": "ndots",
                                                                                          "value": None}]}),
                          "spec.securityContext", None), "spec.containers.0.livenessProbe", {"exec": None})
    assert parse_objects([pod], strict=True).warnings == []
    # a field the struct lacks is unknown, whatever it holds
    assert warnings_and_strict_error(changed(POD, "spec.dnsConfig.nameserverz", None)) == (
        ['Pod default/p: unknown field "spec.dnsConfig.nameserverz" (ignored; --strict makes it an error)'],
        'Pod default/p: unknown field "spec.dnsConfig.nameserverz"')


def test_a_wrong_json_type_comes_before_an_unknown_field_in_strict_decoding():
    pod = changed(changed(POD, "spec.dnsConfig.nameserverz", ["a"]), "spec.subdomain", 6)
    assert problem(pod) == "Pod default/p: spec.subdomain: input should be a valid string (got 6)"
    with pytest.raises(InputError, match=r"^Pod default/p: spec.subdomain: input should be a valid string \(got 6\)$"):
        parse_objects([pod], strict=True)


def test_the_replicas_of_a_template_are_named_in_its_one_warning_and_walked_once(monkeypatch):
    from phalanx.cluster_models import load
    walked = []
    decode = load.decode_document
    monkeypatch.setattr(load, "decode_document", lambda *args: walked.append(args[1]) or decode(*args))
    pod = changed(POD, "spec.containers.0.livenessProbe", {"periodSecondz": 10})
    pods = [changed(pod, "metadata.name", f"p{i}") for i in range(5)]
    assert parse_objects(pods).warnings == [
        '5 Pods (default/p0, default/p1, default/p2, ...): unknown field "spec.containers[0].livenessProbe.'
        'periodSecondz" (ignored; --strict makes it an error)']
    assert walked == ["Pod"]
    # A controller's template: the controller is warned about (its pods are made from the template, not read).
    deployment = changed(changed(DEPLOYMENT, "spec.replicas", 3),
                         "spec.template.spec.containers.0.livenessProbe", {"periodSecondz": 10})
    assert parse_objects([deployment]).warnings == [
        'Deployment default/web: unknown field "spec.template.spec.containers[0].livenessProbe.periodSecondz" '
        "(ignored; --strict makes it an error)"]


@pytest.mark.parametrize("document, path", [
    (changed(SERVICE, "spec.ports.0.targtPort", 8080), "spec.ports[0].targtPort"),
    (changed(changed(POD, "spec.containers.0.resources.claims", [{"name": "gpu", "requst": "a"}]),
             "spec.resourceClaims", [{"name": "gpu", "resourceClaimName": "one-gpu"}]),
     "spec.containers[0].resources.claims[0].requst"),
    (changed(POD, "spec.workloadRef", {"name": "w", "podGroup": "g", "podGrup": "h"}), "spec.workloadRef.podGrup"),
    (changed(STATEFULSET, "spec.volumeClaimTemplates", [{"metadata": {"name": "data", "nam": "x"}}]),
     "spec.volumeClaimTemplates[0].metadata.nam"),
    (changed(STATEFULSET, "spec.volumeClaimTemplates", [{"metadata": {"name": "data"},
                                                          "spec": {"storageClassNam": "fast"}}]),
     "spec.volumeClaimTemplates[0].spec.storageClassNam"),
    (changed(SLICE, "spec.devices.0.taints", [{"key": "a", "effect": "NoSchedule", "efect": "x"}]),
     "spec.devices[0].taints[0].efect"),
    (changed(changed(CLAIM_V1BETA1, "spec.devices.constraints", [{"requests": ["gpu"], "matchAttribute": "a.io/b",
                                                                  "distinct": "c"}]), "apiVersion",
             "resource.k8s.io/v1"), "spec.devices.constraints[0].distinct"),
], ids=["ServicePort", "ResourceClaimRef", "WorkloadReference", "volumeClaimTemplates metadata",
        "volumeClaimTemplates spec", "DeviceTaint", "DeviceConstraint"])
def test_the_models_of_structs_named_late_tell_their_unknown_fields(document, path):
    if document["kind"] == "ResourceClaim":      # the v1 shape: exactly
        document = changed(document, "spec.devices.requests", [{"name": "gpu", "exactly": {
            "deviceClassName": "gpu.example.com"}}])
    kind_name = {"Service": "Service default/svc", "Pod": "Pod default/p", "StatefulSet": "StatefulSet default/db",
                 "ResourceSlice": "ResourceSlice n1-gpu", "ResourceClaim": "ResourceClaim default/one-gpu"}
    who = kind_name[document["kind"]]
    assert warnings_and_strict_error(document) == ([f'{who}: unknown field "{path}"{IGNORED}'],
                                                   f'{who}: unknown field "{path}"')


def test_a_v1beta1_objects_unknown_fields_are_those_of_its_own_structs():
    # read converted to v1 (deviceClassName and tolerations under `exactly`), told by v1beta1's shape
    claim = changed(CLAIM_V1BETA1, "spec.devices.requests.0.tolerations", [{"operator": "Exists", "efect": "x"}])
    claim = changed(claim, "spec.devices.requests.0.exactly", {"deviceClassName": "gpu.example.com"})
    assert warnings_and_strict_error(claim) == ([
        'ResourceClaim default/one-gpu: unknown field "spec.devices.requests[0].tolerations[0].efect" (ignored; '
        '--strict makes it an error)',
        'ResourceClaim default/one-gpu: unknown field "spec.devices.requests[0].exactly" (ignored; --strict makes '
        'it an error)'], 'ResourceClaim default/one-gpu: unknown field "spec.devices.requests[0].tolerations[0].efect"')


# A valid Pod with a value in many of its structs, read by models (affinity, tolerations, ...) or not (probes, volumes,
# status, ...): a field added to any of them is unknown there.
RICH_SELECTOR = {"matchLabels": {"app": "web"},
                 "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]}]}
RICH_NODE_TERM = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}],
             "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
RICH_PROBE = {"httpGet": {"port": 80, "path": "/", "httpHeaders": [{"name": "a", "value": "b"}]}, "periodSeconds": 10}
RICH_POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "labels": {"app": "web"}, "annotations": {"a": "b"},
                 "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u"}],
                 "managedFields": [{"manager": "kubectl", "operation": "Apply"}]},
    "spec": {
        "containers": [{
            "name": "c", "image": IMAGE, "command": ["sh"],
            "ports": [{"containerPort": 80, "protocol": "TCP"}],
            "env": [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                    {"name": "B", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}}],
            "envFrom": [{"configMapRef": {"name": "cm"}}],
            "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "1"}},
            "livenessProbe": RICH_PROBE, "readinessProbe": {"tcpSocket": {"port": 80}},
            "startupProbe": {"exec": {"command": ["true"]}},
            "lifecycle": {"preStop": {"sleep": {"seconds": 1}}},
            "securityContext": {"capabilities": {"add": ["NET_ADMIN"]}, "seccompProfile": {"type": "RuntimeDefault"}},
            "volumeMounts": [{"name": "v", "mountPath": "/v"}]}],
        "initContainers": [{"name": "init", "image": IMAGE, "restartPolicy": "Always",
                            "resources": {"requests": {"memory": "64Mi"}}}],
        "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "1Gi"}},
                    {"name": "s", "secret": {"secretName": "s", "items": [{"key": "k", "path": "p"}]}},
                    {"name": "pj", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}}],
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [RICH_NODE_TERM]},
                             "preferredDuringSchedulingIgnoredDuringExecution": [
                                 {"weight": 1, "preference": {"matchExpressions": [
                                     {"key": "zone", "operator": "Exists"}]}}]},
            "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": RICH_SELECTOR, "topologyKey": "zone"}]},
            "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 5, "podAffinityTerm": {"labelSelector": RICH_SELECTOR, "namespaceSelector": {},
                                                  "topologyKey": "kubernetes.io/hostname"}}]}},
        "tolerations": [{"key": "a", "operator": "Exists", "effect": "NoSchedule"}],
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                       "labelSelector": RICH_SELECTOR}],
        "securityContext": {"runAsUser": 1000, "seLinuxOptions": {"level": "s0"},
                            "sysctls": [{"name": "a", "value": "1"}]},
        "dnsConfig": {"nameservers": ["1.1.1.1"], "options": [{"name": "ndots", "value": "2"}]},
        "hostAliases": [{"ip": "10.0.0.1", "hostnames": ["a"]}],
        "imagePullSecrets": [{"name": "reg"}],
        "readinessGates": [{"conditionType": "x"}],
        "schedulingGates": [{"name": "example.com/gate"}],
        "overhead": {"cpu": "10m"},
    },
    "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False"}],
               "containerStatuses": [{"name": "c", "ready": False, "restartCount": 0, "image": IMAGE, "imageID": "",
                                      "state": {"waiting": {"reason": "x"}}}]},
}


def _struct_positions(value, text: str, path: tuple = ()):
    """(path, struct) of each object in `value` (of table type `text`) that is a struct's value."""
    if text.startswith("[]"):
        for index, item in enumerate(value):
            yield from _struct_positions(item, text[2:], (*path, index))
    elif text.startswith("map[string]"):
        for key, item in value.items():
            yield from _struct_positions(item, text[11:], (*path, key))
    elif text in STRUCTS and isinstance(value, dict):
        yield path, text
        fields = _fields(text)
        for key, item in value.items():
            yield from _struct_positions(item, fields[key], (*path, key))


RICH_POSITIONS = list(_struct_positions(RICH_POD, ROOTS["v1 Pod"]))


@given(st.sampled_from(RICH_POSITIONS), st.from_regex(r"[a-z][a-zA-Z0-9]{0,11}", fullmatch=True))
def test_an_unknown_field_anywhere_in_a_pod_is_reported_with_its_path(position, name):
    path, struct = position
    assume(name not in _fields(struct) and not (struct == "core/v1.PodSpec" and name == "workloadRef"))  # v1.35's
    pod = json.loads(json.dumps(RICH_POD))        # a copy whose objects are not shared, as deepcopy's would be
    at = pod
    for part in path:
        at = at[part]
    at[name] = "x"
    field = f"{_shown(path)}.{name}".lstrip(".")
    assert warnings_and_strict_error(pod) == ([f'Pod default/p: unknown field "{field}"{IGNORED}'],
                                              f'Pod default/p: unknown field "{field}"')


def test_the_rich_pod_reaches_modelled_and_unmodelled_structs():
    structs = {struct for _, struct in RICH_POSITIONS}
    assert {"core/v1.Toleration", "core/v1.PodAffinityTerm", "meta/v1.LabelSelectorRequirement",
            "core/v1.HTTPHeader", "core/v1.ContainerStateWaiting", "meta/v1.ManagedFieldsEntry"} <= structs
    assert len(RICH_POSITIONS) > 50
    assert parse_objects([RICH_POD], strict=True).warnings == []
