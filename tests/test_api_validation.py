"""What the API server rejects when a Pod, Node or PriorityClass is created, phalanx rejects with one line naming
the object and the field (pkg/apis/core/validation ValidatePodCreate, ValidateNode, ValidatePriorityClass;
apimachinery's name and label formats; kubectl's own checks). Each case changes one field of a valid manifest; the
expected text is written out by hand; then fields the API does not have (a warning, or an error when strict). Pods
without containers, containers without an image and node label values are manifest checks: objects built in Python
are not checked for them (docs/semantics.md)."""
from __future__ import annotations

import copy

import pytest
import yaml
from pydantic import ValidationError

from phalanx.cluster_models import InputError, Pod, load_text

# validation.RegexError's examples and regex, which IsValidLabelValue's message ends with
EG = (" (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
      "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
# and IsQualifiedName's name part
EGK = " (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"

IMAGE = "registry.k8s.io/pause:3.10"
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
       "spec": {"containers": [{"name": "c", "image": IMAGE, "resources": {"requests": {"cpu": "1"}}}]}}
NODE_TERMS = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
DEPLOYMENT_WITHOUT_CONTAINERS = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}}, "spec": {}}}}


def changed(obj: dict, path: list, value) -> dict:
    out = copy.deepcopy(obj)
    at = out
    for key in path[:-1]:
        at = at[key]
    at[path[-1]] = value
    return out


def node_affinity(expression: dict, fields: bool = False) -> dict:
    term = {"matchFields" if fields else "matchExpressions": [expression]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


def load(*docs) -> None:
    load_text("---\n".join(yaml.safe_dump(d) for d in docs), "c.yaml")


CASES = [
    ("pod name with capitals", [changed(POD, ["metadata", "name"], "Web-0")],
     "Pod default/Web-0: metadata.name: must be a DNS subdomain: lowercase letters, digits, '-' and '.', each "
     "'.'-separated part starting and ending with a letter or digit (got \"Web-0\")"),
    ("namespace with an underscore", [changed(POD, ["metadata", "namespace"], "team_a")],
     "Pod team_a/p: metadata.namespace: must be a DNS label: lowercase letters, digits and '-', starting and ending "
     "with a letter or digit (got \"team_a\")"),
    ("label value with a space", [changed(POD, ["metadata", "labels"], {"app": "a b"})],
     "Pod default/p: metadata.labels: a valid label must be an empty string or consist of alphanumeric characters, "
     "'-', '_' or '.', and must start and end with an alphanumeric character" + EG + " (got \"a b\")"),
    ("label key with a space", [changed(POD, ["metadata", "labels"], {"my key": "v"})],
     "Pod default/p: metadata.labels: name part must consist of alphanumeric characters, '-', '_' or '.', and must "
     "start and end with an alphanumeric character" + EGK + " (got \"my key\")"),
    ("two containers of one name", [changed(POD, ["spec", "containers"], [{"name": "c", "image": IMAGE}] * 2)],
     'Pod default/p: spec.containers[1].name: Duplicate value: "c"'),
    ("requests above limits", [changed(POD, ["spec", "containers", 0, "resources"],
                                       {"requests": {"cpu": "2"}, "limits": {"cpu": "1500m"}})],
     'Pod default/p: spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu '
     "limit of 1500m"),
    ("In without values", [changed(POD, ["spec", "affinity"],
                                   node_affinity({"key": "zone", "operator": "In", "values": []}))],
     f"Pod default/p: {NODE_TERMS}.matchExpressions[0].values: Required value: must be specified when `operator` is "
     "'In' or 'NotIn'"),
    ("Gt with two values", [changed(POD, ["spec", "affinity"],
                                    node_affinity({"key": "gen", "operator": "Gt", "values": ["1", "2"]}))],
     f"Pod default/p: {NODE_TERMS}.matchExpressions[0].values: Required value: must be specified single value when "
     "`operator` is 'Lt' or 'Gt'"),
    ("Exists with values", [changed(POD, ["spec", "affinity"],
                                    node_affinity({"key": "gpu", "operator": "Exists", "values": ["x"]}))],
     f"Pod default/p: {NODE_TERMS}.matchExpressions[0].values: Forbidden: may not be specified when `operator` is "
     "'Exists' or 'DoesNotExist'"),
    ("matchFields on a label", [changed(POD, ["spec", "affinity"], node_affinity(
        {"key": "metadata.labels", "operator": "In", "values": ["x"]}, fields=True))],
     f'Pod default/p: {NODE_TERMS}.matchFields[0].key: Invalid value: "metadata.labels": not a valid field selector '
     "key"),
    ("matchFields with two names", [changed(POD, ["spec", "affinity"], node_affinity(
        {"key": "metadata.name", "operator": "In", "values": ["a", "b"]}, fields=True))],
     f"Pod default/p: {NODE_TERMS}.matchFields[0].values: Required value: must be only one value when `operator` is "
     "'In' or 'NotIn' for node field selector"),
    # Found by fuzzing manifests (below too): matchFields values are node names (nodeFieldSelectorValidators), in
    # preferred terms as in required ones.
    ("matchFields with a name no node can have", [changed(POD, ["spec", "affinity"], node_affinity(
        {"key": "metadata.name", "operator": "In", "values": ["Node_1"]}, fields=True))],
     f'Pod default/p: {NODE_TERMS}.matchFields[0].values[0]: Invalid value: "Node_1": must be a DNS subdomain: '
     "lowercase letters, digits, '-' and '.', each '.'-separated part starting and ending with a letter or digit "
     '(got "Node_1")'),
    ("preferred matchFields with an empty name", [changed(POD, ["spec", "affinity"], {"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {"matchFields": [
            {"key": "metadata.name", "operator": "NotIn", "values": [""]}]}}]}})],
     "Pod default/p: spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference."
     'matchFields[0].values[0]: Invalid value: "": must be a DNS subdomain: lowercase letters, digits, \'-\' and '
     "'.', each '.'-separated part starting and ending with a letter or digit (got \"\")"),
    ("Exists toleration with a value", [changed(POD, ["spec", "tolerations"],
                                                [{"key": "k", "operator": "Exists", "value": "v"}])],
     "Pod default/p: spec.tolerations[0].operator: Invalid value: \"v\": value must be empty when `operator` is "
     "'Exists'"),
    ("Equal toleration without a key", [changed(POD, ["spec", "tolerations"], [{"operator": "Equal", "value": "v"}])],
     'Pod default/p: spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is '
     'empty, which means "match all values and all keys"'),
    ("tolerationSeconds on NoSchedule", [changed(POD, ["spec", "tolerations"], [
        {"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}])],
     "Pod default/p: spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when "
     "`tolerationSeconds` is set"),
    ("one host port twice", [changed(POD, ["spec", "containers", 0, "ports"], [
        {"containerPort": 80, "hostPort": 8080}, {"containerPort": 81, "hostPort": 8080}])],
     'Pod default/p: spec.containers[0].ports[1].hostPort: Duplicate value: "TCP//8080"'),
    ("init container restartPolicy", [changed(POD, ["spec", "initContainers"],
                                              [{"name": "i", "image": IMAGE, "restartPolicy": "OnFailure"}])],
     'Pod default/p: spec.initContainers[0].restartPolicy: Unsupported value: "OnFailure": supported values: '
     '"Always"'),
    ("schedulingGroup without podGroupName", [changed(POD, ["spec", "schedulingGroup"], {})],
     "Pod default/p: spec.schedulingGroup.podGroupName: Invalid value: null: must specify one of: `podGroupName`"),
    ("empty podGroupName", [changed(POD, ["spec", "schedulingGroup"], {"podGroupName": ""})],
     'Pod default/p: spec.schedulingGroup.podGroupName: Invalid value: "": must not be empty'),
    ("podGroupName not a DNS subdomain", [changed(POD, ["spec", "schedulingGroup"], {"podGroupName": "Train_0"})],
     "Pod default/p: spec.schedulingGroup.podGroupName: Invalid value: \"Train_0\": must be a DNS subdomain: "
     "lowercase letters, digits, '-' and '.', each '.'-separated part starting and ending with a letter or digit "
     '(got "Train_0")'),
    ("node name with an underscore", [changed(NODE, ["metadata", "name"], "node_1")],
     "Node node_1: metadata.name: must be a DNS subdomain: lowercase letters, digits, '-' and '.', each "
     "'.'-separated part starting and ending with a letter or digit (got \"node_1\")"),
    ("user priority above 1e9", [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                  "metadata": {"name": "urgent"}, "value": 2_000_000_000}],
     "PriorityClass urgent: value: Forbidden: maximum allowed value of a user defined priority is 1000000000"),
    ("unknown Pod version", [changed(POD, ["apiVersion"], "v2")],
     'Pod default/p: apiVersion: unknown version "v2" of Pod (served: v1)'),
    ("a pod without containers", [changed(POD, ["spec", "containers"], [])],
     "Pod default/p: spec.containers: Required value"),
    ("a pod without a spec", [{k: v for k, v in POD.items() if k != "spec"}],
     "Pod default/p: spec.containers: Required value"),
    ("a Deployment's template without containers", [DEPLOYMENT_WITHOUT_CONTAINERS],
     "Deployment default/web: spec.template.spec.containers: Required value"),
    ("a Job's template without containers", [{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
                                             "spec": {"template": {"spec": {"restartPolicy": "Never"}}}}],
     "Job default/j: spec.template.spec.containers: Required value"),
    ("a CronJob's template without containers", [{
        "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"},
        "spec": {"schedule": "0 3 * * *",
                 "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "Never"}}}}}}],
     "CronJob default/nightly: spec.jobTemplate.spec.template.spec.containers: Required value"),
    ("node label value starting with '-'", [changed(NODE, ["metadata", "labels"], {"gen": "-3"})],
     "Node n1: metadata.labels: a valid label must be an empty string or consist of alphanumeric characters, '-', "
     "'_' or '.', and must start and end with an alphanumeric character" + EG + " (got \"-3\")"),
    ("node label key with a space", [changed(NODE, ["metadata", "labels"], {"my key": "v"})],
     "Node n1: metadata.labels: name part must consist of alphanumeric characters, '-', '_' or '.', and must "
     "start and end with an alphanumeric character" + EGK + " (got \"my key\")"),
    ("a document without apiVersion", [{k: v for k, v in POD.items() if k != "apiVersion"}],
     "Pod default/p: apiVersion: Required value"),
    ("a list item without apiVersion", [{"apiVersion": "v1", "kind": "List", "items": [
        {k: v for k, v in NODE.items() if k != "apiVersion"}]}],
     "Node n1: apiVersion: Required value"),
    # ValidateObjectMeta of every kind, not only of Pods and Nodes: a namespace is a DNS label, labels and annotations
    # have their formats, ownerReferences name their owner.
    ("a PodGroup in a namespace that cannot exist", [{
        "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "g", "namespace": "ML"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}}],
     "PodGroup ML/g: metadata.namespace: must be a DNS label: lowercase letters, digits and '-', starting and ending "
     'with a letter or digit (got "ML")'),
    ("a Workload label value with a space", [{
        "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload",
        "metadata": {"name": "w", "labels": {"team": "a b"}},
        "spec": {"podGroupTemplates": [{"name": "g", "schedulingPolicy": {"basic": {}}}]}}],
     "Workload default/w: metadata.labels: a valid label must be an empty string or consist of alphanumeric "
     "characters, '-', '_' or '.', and must start and end with an alphanumeric character" + EG + ' (got "a b")'),
    ("a Namespace label value with a space", [{"apiVersion": "v1", "kind": "Namespace",
                                               "metadata": {"name": "ml", "labels": {"team": "a b"}}}],
     "Namespace ml: metadata.labels: a valid label must be an empty string or consist of alphanumeric characters, "
     "'-', '_' or '.', and must start and end with an alphanumeric character" + EG + ' (got "a b")'),
    ("a PodDisruptionBudget annotation key with a space", [{
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "pdb", "annotations": {"my note": "x"}},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}}],
     'PodDisruptionBudget default/pdb: metadata.annotations: Invalid value: "my note": name part must consist of '
     "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character" + EGK
     + ' (got "my note")'),
    ("an ownerReference without a kind", [changed(POD, ["metadata", "ownerReferences"], [
        {"apiVersion": "apps/v1", "name": "rs", "uid": "u1", "controller": True}])],
     'Pod default/p: metadata.ownerReferences.kind: Invalid value: "": kind must not be empty'),
    ("an ownerReference with an apiVersion of three parts", [changed(POD, ["metadata", "ownerReferences"], [
        {"apiVersion": "apps/v1/x", "kind": "ReplicaSet", "name": "rs", "uid": "u1"}])],
     'Pod default/p: metadata.ownerReferences.apiVersion: Invalid value: "apps/v1/x": version must not be empty'),
    ("two controller ownerReferences", [changed(POD, ["metadata", "ownerReferences"], [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "a", "uid": "u1", "controller": True},
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "b", "uid": "u2", "controller": True}])],
     'Pod default/p: metadata.ownerReferences: Only one reference can have Controller set to true. Found "true" in '
     "references for ReplicaSet/a and ReplicaSet/b"),
    ("unknown PodGroup version", [{"apiVersion": "scheduling.k8s.io/v1alpha9", "kind": "PodGroup",
                                   "metadata": {"name": "g"}, "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}}],
     'PodGroup default/g: apiVersion: unknown version "scheduling.k8s.io/v1alpha9" of PodGroup (served: '
     "scheduling.k8s.io/v1alpha2)"),
]


def test_what_the_api_server_accepts_still_loads():
    # A system PriorityClass above 1e9, a label value of 63 characters, an empty label value, a Gt with one value,
    # a matchFields on metadata.name, an Exists toleration without a key, a sidecar init container, a dotted
    # podGroupName (a DNS subdomain), a PodGroup of another API group (Volcano's: skipped with a warning, not an
    # error).
    pod = changed(POD, ["metadata", "labels"], {"a": "x" * 63, "b": ""})
    pod = changed(pod, ["spec", "affinity"], node_affinity({"key": "gen", "operator": "Gt", "values": ["3"]}))
    pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] \
        .append({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]})
    pod["spec"]["tolerations"] = [{"operator": "Exists"}]
    pod["spec"]["initContainers"] = [{"name": "sidecar", "image": IMAGE, "restartPolicy": "Always"}]
    pod["spec"]["schedulingGroup"] = {"podGroupName": "team-a.train-0"}
    objects = load_text("---\n".join(yaml.safe_dump(d) for d in [
        NODE, pod, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                    "metadata": {"name": "system-node-critical"}, "value": 2_000_001_000},
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "v"}}]), "c.yaml")
    assert [p.key for p in objects.pods] == ["default/p"]
    assert objects.priority_classes[0].value == 2_000_001_000
    assert objects.warnings == ["c.yaml: skipped 1 object of unsupported kind scheduling.volcano.sh/v1beta1 PodGroup"]


def test_a_pod_built_in_python_needs_no_image():
    # Upstream's scheduler unit tests make pods without an image (st.MakePod) and phalanx replays them through its
    # Python API: a missing image is a manifest check (load.manifest_problem). Surrounding whitespace is refused in
    # every pod, as an image left out has none.
    pod = Pod.model_validate({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}})
    assert pod.spec.containers[0].image == ""
    with pytest.raises(ValidationError, match=r'spec.containers\[0\].image: Invalid value: " c": must not have'):
        Pod.model_validate({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": " c"}]}})


# ---- fields the API does not have: a warning naming each (kubectl's default), an error with strict ----

def test_fields_the_api_has_but_phalanx_ignores_are_silent():
    pod = changed(changed(POD, ["spec", "containers", 0, "image"], "nginx"), ["spec", "dnsPolicy"], "ClusterFirst")
    pod["metadata"].update(resourceVersion="7", finalizers=["x"], generateName="p-")
    pod["status"] = {"phase": "Running", "qosClass": "Burstable", "podIP": "10.0.0.1"}
    node = changed(NODE, ["status", "nodeInfo"], {"kubeletVersion": "v1.36.0"})
    assert load_text("---\n".join(yaml.safe_dump(d) for d in (node, pod)), strict=True).warnings == []


def test_every_unknown_field_is_named_with_its_path_and_the_objects_counted():
    docs = []
    for i in range(5):
        pod = changed(POD, ["metadata", "name"], f"p{i}")
        pod["spec"]["containers"][0]["resources"]["requets"] = {"cpu": "64"}
        pod["spec"]["tolerations"] = [{"key": "a", "operator": "Exists", "efect": "NoSchedule"}]
        docs.append(pod)
    objects = load_text("---\n".join(yaml.safe_dump(d) for d in docs))
    assert objects.warnings == [
        '5 Pods (default/p0, default/p1, default/p2, ...): unknown field "spec.containers[0].resources.requets" '
        "(ignored; --strict makes it an error)",
        '5 Pods (default/p0, default/p1, default/p2, ...): unknown field "spec.tolerations[0].efect" '
        "(ignored; --strict makes it an error)"]
    assert dict(objects.pods[0].spec.containers[0].resources.requests) == {"cpu": 1000}    # the typo is dropped
    with pytest.raises(InputError, match=r'^Pod default/p0: unknown field "spec.containers\[0\].resources.requets"$'):
        load_text(yaml.safe_dump(docs[0]), strict=True)


# ---- what the API server rejects in manifests (load.manifest_problem), kubectl's decoding, and kinds ----

def container(**fields) -> list:
    return [{"name": "c", "image": IMAGE, **fields}]


def pod_spec(**fields) -> dict:
    out = copy.deepcopy(POD)
    out["spec"].update(fields)
    return out


QUALIFIED = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
             "alphanumeric character" + EGK)
LABEL_VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
               "must start and end with an alphanumeric character" + EG)
SUBDOMAIN = ("must be a DNS subdomain: lowercase letters, digits, '-' and '.', each '.'-separated part starting and "
             "ending with a letter or digit")
PC = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "value": 10}
SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
           "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}


def service(**spec) -> dict:
    return {**SERVICE, "spec": {**SERVICE["spec"], **spec}}


PORT_RANGE = "must be between 1 and 65535, inclusive"


def spread(**fields) -> dict:
    return {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", **fields}


def labelled(pod: dict, **labels) -> dict:
    return changed(pod, ["metadata", "labels"], labels)
DNS_LABEL_TEXT = "must be a DNS label: lowercase letters, digits and '-', starting and ending with a letter or digit"
MANIFEST_CASES = [
    # ValidateVolumes, per volume: its source (validateVolumeSource: exactly one, in its order; a persistentVolumeClaim's
    # claimName), then its name, then no name twice
    ("a volume without a source", [pod_spec(volumes=[{"name": "data"}])],
     "Pod default/p: spec.volumes[0]: Required value: must specify a volume type"),
    ("a volume with two sources", [pod_spec(volumes=[{"name": "data", "emptyDir": {}, "cephfs": {"monitors": ["m"]}}])],
     "Pod default/p: spec.volumes[0].cephFS: Forbidden: may not specify more than 1 volume type"),
    ("a claim volume without its claim", [pod_spec(volumes=[{"name": "data", "persistentVolumeClaim": {}}])],
     "Pod default/p: spec.volumes[0].persistentVolumeClaim.claimName: Required value"),
    ("an ephemeral volume without its template", [pod_spec(volumes=[{"name": "scratch", "ephemeral": {}}])],
     "Pod default/p: spec.volumes[0].ephemeral.volumeClaimTemplate: Required value"),
    ("a volume without a name", [pod_spec(volumes=[{"emptyDir": {}}])],
     "Pod default/p: spec.volumes[0].name: Required value"),
    ("a volume named as no DNS label", [pod_spec(volumes=[{"name": "Data", "emptyDir": {}}])],
     f'Pod default/p: spec.volumes[0].name: {DNS_LABEL_TEXT} (got "Data")'),
    ("a volume name twice", [pod_spec(volumes=[{"name": "a", "emptyDir": {}}, {"name": "a", "configMap": {}}])],
     'Pod default/p: spec.volumes[1].name: Duplicate value: "a"'),
    ("a Deployment's template volume without a source", [changed(
        DEPLOYMENT_WITHOUT_CONTAINERS, ["spec", "template", "spec"],
        {"containers": [{"name": "c", "image": IMAGE}], "volumes": [{"name": "v"}]})],
     "Deployment default/web: spec.template.spec.volumes[0]: Required value: must specify a volume type"),
    ("a container without an image", [pod_spec(containers=[{"name": "c"}])],
     "Pod default/p: spec.containers[0].image: Required value"),
    ("an init container without an image", [pod_spec(initContainers=[{"name": "i", "restartPolicy": "Always"}])],
     "Pod default/p: spec.initContainers[0].image: Required value"),
    ("a Deployment's template container without an image", [changed(
        DEPLOYMENT_WITHOUT_CONTAINERS, ["spec", "template", "spec"], {"containers": [{"name": "c"}]})],
     "Deployment default/web: spec.template.spec.containers[0].image: Required value"),
    ("a Job's template init container without an image", [{
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": IMAGE}],
                                       "initContainers": [{"name": "i"}]}}}}],
     "Job default/j: spec.template.spec.initContainers[0].image: Required value"),
    ("a CronJob's template container without an image", [{
        "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"},
        "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c"}]}}}}}}],
     "CronJob default/nightly: spec.jobTemplate.spec.template.spec.containers[0].image: Required value"),
    ("an image with trailing whitespace", [pod_spec(containers=container(image="nginx "))],
     'Pod default/p: spec.containers[0].image: Invalid value: "nginx ": must not have leading or trailing '
     "whitespace"),
    ("an init container image with a leading tab", [pod_spec(initContainers=[{"name": "i", "image": "\tnginx"}])],
     'Pod default/p: spec.initContainers[0].image: Invalid value: "\\tnginx": must not have leading or trailing '
     "whitespace"),
    ("bad creationTimestamp", [changed(POD, ["metadata", "creationTimestamp"], "yesterday")],
     'Pod default/p: metadata.creationTimestamp: invalid RFC 3339 time "yesterday"'),
    ("restartPolicy", [pod_spec(restartPolicy="Sometimes")],
     "Pod default/p: spec.restartPolicy: input should be 'Always', 'OnFailure' or 'Never' (got \"Sometimes\")"),
    ("dnsPolicy", [pod_spec(dnsPolicy="Google")],
     "Pod default/p: spec.dnsPolicy: input should be 'ClusterFirstWithHostNet', 'ClusterFirst', 'Default' or 'None' "
     '(got "Google")'),
    ("port protocol", [pod_spec(containers=container(ports=[{"containerPort": 80, "protocol": "tcp"}]))],
     "Pod default/p: spec.containers[0].ports[0].protocol: input should be 'TCP', 'UDP' or 'SCTP' (got \"tcp\")"),
    ("port name", [pod_spec(containers=container(ports=[{"containerPort": 80, "name": "HTTP_port"}]))],
     'Pod default/p: spec.containers[0].ports[0].name: Invalid value: "HTTP_port": must contain only alpha-numeric '
     "characters (a-z, 0-9), and hyphens (-)"),
    ("port name too long", [pod_spec(containers=container(ports=[{"containerPort": 80, "name": "a" * 16}]))],
     'Pod default/p: spec.containers[0].ports[0].name: Invalid value: "aaaaaaaaaaaaaaaa": must be no more than 15 '
     "characters"),
    ("port names twice", [pod_spec(containers=container(ports=[{"containerPort": 80, "name": "web"},
                                                               {"containerPort": 81, "name": "web"}]))],
     'Pod default/p: spec.containers[0].ports[1].name: Duplicate value: "web"'),
    ("host IP", [pod_spec(containers=container(ports=[{"containerPort": 80, "hostPort": 80, "hostIP": "not-an-ip"}]))],
     'Pod default/p: spec.containers[0].ports[0].hostIP: Invalid value: "not-an-ip": must be a valid IP address, '
     "(e.g. 10.9.8.7 or 2001:db8::ffff)"),
    ("container claim the pod does not have",
     [pod_spec(containers=container(resources={"claims": [{"name": "gpu"}]}))],
     'Pod default/p: spec.containers[0].resources.claims[0]: Not found: "gpu": must be one of the names in '
     "pod.spec.resourceClaims which is empty"),
    ("container claim not among the pod's", [pod_spec(
        resourceClaims=[{"name": "b", "resourceClaimName": "cb"}, {"name": "a", "resourceClaimName": "ca"}],
        containers=container(resources={"claims": [{"name": "c"}]}))],
     'Pod default/p: spec.containers[0].resources.claims[0]: Not found: "c": must be one of the names in '
     "pod.spec.resourceClaims: a, b"),
    ("container claim named twice", [pod_spec(
        resourceClaims=[{"name": "a", "resourceClaimName": "ca"}],
        initContainers=[{"name": "init", "image": IMAGE, "resources": {"claims": [{"name": "a", "request": "r"},
                                                                                   {"name": "a", "request": "r"}]}}])],
     'Pod default/p: spec.initContainers[0].resources.claims[1]: Duplicate value: "a/r"'),
    ("container claim without a name", [pod_spec(containers=container(resources={"claims": [{"request": "r"}]}))],
     "Pod default/p: spec.containers[0].resources.claims[0]: Required value"),
    ("container claim request", [pod_spec(
        resourceClaims=[{"name": "a", "resourceClaimName": "ca"}],
        containers=container(resources={"claims": [{"name": "a", "request": "Big_GPU"}]}))],
     'Pod default/p: spec.containers[0].resources.claims[0].request: Invalid value: "Big_GPU": must be a DNS label: '
     "lowercase letters, digits and '-', starting and ending with a letter or digit (got \"Big_GPU\")"),
    # Pod-level claims (validatePodResources, v1.36): refused whatever they name, even an empty list
    ("pod-level resources claims", [pod_spec(resourceClaims=[{"name": "gpu", "resourceClaimName": "gpu-0"}],
                                             resources={"claims": [{"name": "gpu"}]})],
     "Pod default/p: spec.resources.claims: Forbidden: claims may not be set for Resources at pod-level"),
    ("empty pod-level resources claims", [pod_spec(resources={"requests": {"cpu": "1"}, "claims": []})],
     "Pod default/p: spec.resources.claims: Forbidden: claims may not be set for Resources at pod-level"),
    ("a Deployment's template pod-level claims", [changed(
        DEPLOYMENT_WITHOUT_CONTAINERS, ["spec", "template", "spec"], {"containers": [{"name": "c", "image": IMAGE}],
                                                                     "resources": {"claims": [{"name": "x"}]}})],
     "Deployment default/web: spec.template.spec.resources.claims: Forbidden: claims may not be set for Resources at "
     "pod-level"),
    ("hostNetwork hostPort", [pod_spec(hostNetwork=True, containers=container(ports=[{"containerPort": 80,
                                                                                      "hostPort": 8080}]))],
     "Pod default/p: spec.containers[0].ports[0].hostPort: Invalid value: 8080: must match `containerPort` when "
     "`hostNetwork` is true"),
    ("activeDeadlineSeconds 0", [pod_spec(activeDeadlineSeconds=0)],
     "Pod default/p: spec.activeDeadlineSeconds: input should be greater than or equal to 1 (got 0)"),
    ("nodeName", [pod_spec(nodeName="Bad_Node")],
     f'Pod default/p: spec.nodeName: Invalid value: "Bad_Node": {SUBDOMAIN} (got "Bad_Node")'),
    ("resource without a domain", [pod_spec(containers=container(resources={"requests": {"foo": "1"}}))],
     'Pod default/p: spec.containers[0].resources.requests[foo]: Invalid value: "foo": must be a standard resource '
     "for containers"),
    ("pods in a container", [pod_spec(containers=container(resources={"requests": {"pods": "1"}}))],
     'Pod default/p: spec.containers[0].resources.requests[pods]: Invalid value: "pods": must be a standard resource '
     "for containers"),
    ("fractional extended resource", [pod_spec(containers=container(resources={
        "requests": {"example.com/foo": "500m"}, "limits": {"example.com/foo": "500m"}}))],
     'Pod default/p: spec.containers[0].resources.limits[example.com/foo]: Invalid value: "500m": must be an integer'),
    ("extended request below its limit", [pod_spec(containers=container(resources={
        "requests": {"example.com/foo": "1"}, "limits": {"example.com/foo": "2"}}))],
     'Pod default/p: spec.containers[0].resources.requests: Invalid value: "1": must be equal to example.com/foo limit '
     "of 2"),
    ("GPU request without a limit", [pod_spec(containers=container(resources={"requests": {"nvidia.com/gpu": "1"}}))],
     "Pod default/p: spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable "
     "resources"),
    ("hugepages alone", [pod_spec(containers=container(resources={"requests": {"hugepages-2Mi": "2Mi"},
                                                                  "limits": {"hugepages-2Mi": "2Mi"}}))],
     "Pod default/p: spec.containers[0].resources: Forbidden: HugePages require cpu or memory"),
    ("fractional overhead", [pod_spec(overhead={"example.com/foo": "0.5"})],
     'Pod default/p: spec.overhead[example.com/foo]: Invalid value: "500m": must be an integer'),
    ("pod-level requests above limits", [pod_spec(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}})],
     'Pod default/p: spec.resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1'),
    ("annotation key", [changed(POD, ["metadata", "annotations"], {"bad key": "v"})],
     f'Pod default/p: metadata.annotations: Invalid value: "bad key": {QUALIFIED} (got "bad key")'),
    ("annotations over 256 KiB", [changed(POD, ["metadata", "annotations"], {"big": "x" * 262145})],
     "Pod default/p: metadata.annotations: Too long: may not be more than 262144 bytes"),
    ("no node selector term", [pod_spec(affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}})],
     "Pod default/p: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: "
     "Required value: must have at least one node selector term"),
    # A required term's values must be label values in a new pod (v1.28+); a preferred term's need not be.
    ("required node affinity value that is no label value", [changed(POD, ["spec", "affinity"], node_affinity(
        {"key": "gen", "operator": "Gt", "values": ["-1"]}))],
     f"Pod default/p: {NODE_TERMS}.matchExpressions[0].values[0]: a valid label must be an empty string or consist "
     "of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character" + EG +
     " (got \"-1\")"),
    ("pod anti-affinity topologyKey", [pod_spec(affinity={"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {}, "topologyKey": "bad key!"}]}})],
     "Pod default/p: spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: "
     f'Invalid value: "bad key!": {QUALIFIED} (got "bad key!")'),
    # validateMatchLabelKeysAndMismatchLabelKeys: the keys are label keys, checked before the topologyKey; a key in
    # the labelSelector already is reported at its last index in matchLabelKeys
    ("pod anti-affinity mismatchLabelKeys key that is no label key", [pod_spec(affinity={"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {}, "topologyKey": "zone",
                                                            "mismatchLabelKeys": ["/simple"]}]}})],
     "Pod default/p: spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
     'mismatchLabelKeys[0]: Invalid value: "/simple": prefix part must be non-empty (got "/simple")'),
    ("pod affinity matchLabelKeys key before an empty topologyKey", [labelled(pod_spec(affinity={"podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "podAffinityTerm": {
            "labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "", "matchLabelKeys": ["app"]}}]}}),
        app="web")],
     "Pod default/p: spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm[0]: "
     'Invalid value: "app": exists in both matchLabelKeys and labelSelector'),
    ("pod affinity matchLabelKeys key twice: its last index", [labelled(pod_spec(affinity={"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchLabels": {"app": "web"}},
                                                            "topologyKey": "zone",
                                                            "matchLabelKeys": ["app", "tier", "app"]}]}}),
        app="web", tier="db")],
     "Pod default/p: spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0][2]: "
     'Invalid value: "app": exists in both matchLabelKeys and labelSelector'),
    ("pod affinity selector value", [pod_spec(affinity={"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchLabels": {"app": "a b"}},
                                                            "topologyKey": "zone"}]}})],
     "Pod default/p: spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector."
     f'matchLabels: {LABEL_VALUE} (got "a b")'),
    ("toleration value", [pod_spec(tolerations=[{"key": "k", "value": "bad value!", "effect": "NoSchedule"}])],
     f'Pod default/p: spec.tolerations[0].value: Invalid value: "bad value!": {LABEL_VALUE} (got "bad value!")'),
    ("a spread constraint twice", [pod_spec(topologySpreadConstraints=[
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}] * 2)],
     "Pod default/p: spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: Duplicate value: "
     '"{zone, DoNotSchedule}"'),
    ("spread topologyKey left empty", [pod_spec(topologySpreadConstraints=[spread(topologyKey="")])],
     "Pod default/p: spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty"),
    # matchLabelKeys (v1.36, MatchLabelKeysInPodTopologySpread and its SelectorMerge on): the API server merges
    # `key In (the pod's value)` into the labelSelector, then validates the merged selector
    ("spread matchLabelKeys without a labelSelector", [pod_spec(topologySpreadConstraints=[
        spread(matchLabelKeys=["app"])])],
     "Pod default/p: spec.topologySpreadConstraints[0].matchLabelKeys: Forbidden: must not be specified when "
     "labelSelector is not set"),
    ("a spread matchLabelKeys key also in matchLabels", [labelled(pod_spec(topologySpreadConstraints=[
        spread(labelSelector={"matchLabels": {"app": "web"}}, matchLabelKeys=["app"])]), app="web")],
     'Pod default/p: spec.topologySpreadConstraints[0][0]: Invalid value: "app": exists in both matchLabelKeys and '
     "labelSelector"),
    ("a spread matchLabelKeys key also in matchExpressions", [labelled(pod_spec(topologySpreadConstraints=[
        spread(labelSelector={"matchExpressions": [{"key": "app", "operator": "Exists"}]},
               matchLabelKeys=["tier", "app"])]), app="web", tier="db")],
     'Pod default/p: spec.topologySpreadConstraints[0][1]: Invalid value: "app": exists in both matchLabelKeys and '
     "labelSelector"),
    ("a spread matchLabelKeys key twice", [labelled(pod_spec(topologySpreadConstraints=[
        spread(labelSelector={}, matchLabelKeys=["app", "app"])]), app="web")],
     'Pod default/p: spec.topologySpreadConstraints[0][1]: Invalid value: "app": exists in both matchLabelKeys and '
     "labelSelector"),
    ("a spread matchLabelKeys key that is no label key", [pod_spec(topologySpreadConstraints=[
        spread(labelSelector={}, matchLabelKeys=["bad key!"])])],
     f'Pod default/p: spec.topologySpreadConstraints[0].matchLabelKeys[0]: Invalid value: "bad key!": {QUALIFIED} '
     '(got "bad key!")'),
    ("a spread labelSelector value", [pod_spec(topologySpreadConstraints=[
        spread(labelSelector={"matchLabels": {"app": "a b"}})])],
     f'Pod default/p: spec.topologySpreadConstraints[0].labelSelector.matchLabels: {LABEL_VALUE} (got "a b")'),
    ("a spread labelSelector In without values", [pod_spec(topologySpreadConstraints=[
        spread(labelSelector={"matchExpressions": [{"key": "app", "operator": "In", "values": []}]})])],
     "Pod default/p: spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].values: Required value: "
     "must be specified when `operator` is 'In' or 'NotIn'"),
    ("a template's matchLabelKeys key also in matchLabels, as written", [changed(
        DEPLOYMENT_WITHOUT_CONTAINERS, ["spec", "template", "spec"], {
            "containers": [{"name": "c", "image": IMAGE}],
            "topologySpreadConstraints": [spread(labelSelector={"matchLabels": {"app": "web"},
                                                                "matchExpressions": [{"key": "app", "operator": "In",
                                                                                      "values": ["web"]}]},
                                                 matchLabelKeys=["app"])]})],
     'Deployment default/web: spec.template.spec.topologySpreadConstraints[0][0]: Invalid value: "app": exists in '
     "both matchLabelKeys and labelSelector"),
    ("scheduling gate name", [pod_spec(schedulingGates=[{"name": "bad gate!"}])],
     f'Pod default/p: spec.schedulingGates[0]: Invalid value: "bad gate!": {QUALIFIED} (got "bad gate!")'),
    ("scheduling gate twice", [pod_spec(schedulingGates=[{"name": "example.com/wait"}] * 2)],
     'Pod default/p: spec.schedulingGates[1]: Duplicate value: "example.com/wait"'),
    ("gated pod with a nodeName", [pod_spec(schedulingGates=[{"name": "example.com/wait"}], nodeName="n1")],
     "Pod default/p: spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"),
    ("taint value", [changed(NODE, ["spec"], {"taints": [{"key": "k", "value": "bad value!",
                                                          "effect": "NoSchedule"}]})],
     f'Node n1: spec.taints[0].value: Invalid value: "bad value!": {LABEL_VALUE} (got "bad value!")'),
    ("taint key", [changed(NODE, ["spec"], {"taints": [{"key": "bad key!", "effect": "NoSchedule"}]})],
     f'Node n1: spec.taints[0].key: Invalid value: "bad key!": {QUALIFIED} (got "bad key!")'),
    ("fractional pod capacity", [changed(NODE, ["status", "allocatable", "pods"], "110.5")],
     'Node n1: status.allocatable[pods]: Invalid value: "110500m": must be an integer'),
    ("fractional GPUs", [changed(NODE, ["status", "allocatable", "nvidia.com/gpu"], "0.5")],
     'Node n1: status.allocatable[nvidia.com/gpu]: Invalid value: "500m": must be an integer'),
    ("PriorityClass name", [{**PC, "metadata": {"name": "Gold_Class"}}],
     f'PriorityClass Gold_Class: metadata.name: {SUBDOMAIN} (got "Gold_Class")'),
    ("unknown system PriorityClass", [{**PC, "metadata": {"name": "system-foo"}}],
     "PriorityClass system-foo: metadata.name: Forbidden: priority class names with 'system-' prefix are reserved "
     "for system use only. error: system-foo is not a known system priority class"),
    ("system PriorityClass of another value", [{**PC, "metadata": {"name": "system-node-critical"}}],
     "PriorityClass system-node-critical: metadata.name: Forbidden: priority class names with 'system-' prefix are "
     "reserved for system use only. error: value of system-node-critical PriorityClass must be 2000001000"),
    ("two default PriorityClasses", [{**PC, "metadata": {"name": n}, "globalDefault": True} for n in "ab"],
     "PriorityClass b: globalDefault: PriorityClass a is already marked as default. Only one default can exist"),
    ("Namespace name", [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "Team_A"}}],
     "Namespace Team_A: metadata.name: must be a DNS label: lowercase letters, digits and '-', starting and ending "
     'with a letter or digit (got "Team_A")'),
    # Services (validateService, v1.36), after the API server's defaults: type ClusterIP, protocol TCP, targetPort the
    # port, clusterIPs [clusterIP]
    ("a Service without ports", [{**SERVICE, "spec": {"selector": {"app": "web"}}}],
     "Service default/web: spec.ports: Required value"),
    ("a Service of empty ports", [service(ports=[])], "Service default/web: spec.ports: Required value"),
    ("a headless NodePort Service", [service(type="NodePort", clusterIP="None")],
     "Service default/web: spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for NodePort "
     "services"),
    ("an ExternalName Service without its name", [{**SERVICE, "spec": {"type": "ExternalName"}}],
     "Service default/web: spec.externalName: Required value"),
    ("an ExternalName Service with a clusterIP", [service(type="ExternalName", externalName="db.example.com",
                                                          clusterIP="10.0.0.1")],
     "Service default/web: spec.clusterIPs: Forbidden: may not be set for ExternalName services"),
    ("an ExternalName not a DNS subdomain", [service(type="ExternalName", externalName="DB_host")],
     f'Service default/web: spec.externalName: Invalid value: "DB_host": {SUBDOMAIN} (got "DB_host")'),
    ("two ports, one unnamed", [service(ports=[{"name": "http", "port": 80}, {"port": 443}])],
     "Service default/web: spec.ports[1].name: Required value"),
    ("a port name with capitals", [service(ports=[{"name": "Web", "port": 80}])],
     'Service default/web: spec.ports[0].name: Invalid value: "Web": must be a DNS label: lowercase letters, digits '
     "and '-', starting and ending with a letter or digit (got \"Web\")"),
    ("a port name twice", [service(ports=[{"name": "web", "port": 80}, {"name": "web", "port": 81}])],
     'Service default/web: spec.ports[1].name: Duplicate value: "web"'),
    ("a Service port past 65535", [service(ports=[{"port": 70000}])],
     f"Service default/web: spec.ports[0].port: Invalid value: 70000: {PORT_RANGE}"),
    ("a Service port left out", [service(ports=[{"targetPort": 8080}])],
     f"Service default/web: spec.ports[0].port: Invalid value: 0: {PORT_RANGE}"),
    ("a lower-case protocol", [service(ports=[{"port": 53, "protocol": "udp"}])],
     'Service default/web: spec.ports[0].protocol: Unsupported value: "udp": supported values: "SCTP", "TCP", '
     '"UDP"'),
    ("a targetPort name with capitals", [service(ports=[{"port": 80, "targetPort": "HTTP"}])],
     'Service default/web: spec.ports[0].targetPort: Invalid value: "HTTP": must contain only alpha-numeric '
     "characters (a-z, 0-9), and hyphens (-)"),
    ("a targetPort number as a string", [service(ports=[{"port": 80, "targetPort": "8080"}])],
     'Service default/web: spec.ports[0].targetPort: Invalid value: "8080": must contain at least one letter (a-z)'),
    ("a targetPort past 65535", [service(ports=[{"port": 80, "targetPort": 65536}])],
     f"Service default/web: spec.ports[0].targetPort: Invalid value: 65536: {PORT_RANGE}"),
    ("a clusterIP that is no IP", [service(clusterIP="10.0.0.300")],
     'Service default/web: spec.clusterIPs[0]: Invalid value: "10.0.0.300": must be a valid IP address, (e.g. '
     "10.9.8.7 or 2001:db8::ffff)"),
    ("clusterIPs without clusterIP", [service(clusterIPs=["10.0.0.1"])],
     'Service default/web: spec.clusterIPs: Invalid value: ["10.0.0.1"]: must be empty when `clusterIP` is not '
     "specified"),
    ("None beside an IP", [service(clusterIP="None", clusterIPs=["None", "10.0.0.1"])],
     "Service default/web: spec.clusterIPs: Invalid value: [\"None\",\"10.0.0.1\"]: 'None' must be the first and "
     "only value"),
    ("an unknown Service type", [service(type="Internal")],
     'Service default/web: spec.type: Unsupported value: "Internal": supported values: "ClusterIP", "ExternalName", '
     '"LoadBalancer", "NodePort"'),
    ("one port number twice", [service(ports=[{"name": "a", "port": 80}, {"name": "b", "port": 80,
                                                                          "targetPort": 8080}])],
     'Service default/web: spec.ports[1]: Duplicate value: {"Name":"","Protocol":"TCP","AppProtocol":null,"Port":80,'
     '"TargetPort":0,"NodePort":0}'),
    ("a selector label value", [service(selector={"app": "a b"})],
     f'Service default/web: spec.selector: {LABEL_VALUE} (got "a b")'),
    ("apiVersion not a string", [changed(POD, ["apiVersion"], 1)],
     "Pod default/p: apiVersion: expected a string, got a number"),
    ("lower-case kind", [changed(POD, ["kind"], "pod")], 'pod p: kind: no matches for kind "pod" in version "v1"'),
    ("misspelt kind", [{"apiVersion": "apps/v1", "kind": "Deploymnet", "metadata": {"name": "web"}}],
     'Deploymnet web: kind: no matches for kind "Deploymnet" in version "apps/v1"'),
    ("the core group named", [changed(POD, ["apiVersion"], "core/v1")],
     'Pod default/p: kind: no matches for kind "Pod" in version "core/v1"'),
    ("a removed group", [{"apiVersion": "extensions/v1beta1", "kind": "Deployment", "metadata": {"name": "web"}}],
     'Deployment default/web: kind: no matches for kind "Deployment" in version "extensions/v1beta1"'),
    ("a number as a string", [pod_spec(containers=container(ports=[{"containerPort": "80"}]))],
     'Pod default/p: spec.containers[0].ports[0].containerPort: input should be a valid integer (got "80")'),
    ("a boolean as a string", [pod_spec(hostNetwork="yes")],
     'Pod default/p: spec.hostNetwork: input should be a valid boolean (got "yes")'),
    ("int32 overflow", [pod_spec(topologySpreadConstraints=[
        {"maxSkew": 2**31, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}])],
     "Pod default/p: spec.topologySpreadConstraints[0].maxSkew: input should be less than or equal to 2147483647 "
     "(got 2147483648)"),
]


@pytest.mark.parametrize("docs, message", [(d, m) for _, d, m in CASES + MANIFEST_CASES],
                         ids=[c[0] for c in CASES + MANIFEST_CASES])
def test_rejected_as_kubectl_and_the_api_server_reject_it(docs, message):
    with pytest.raises(InputError) as caught:
        load(NODE if docs[0]["kind"] != "Node" else POD, *docs)
    assert str(caught.value) == message


@pytest.mark.parametrize("text, source, message", [
    ('{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a", "name": "b"}}', "c.json",
     'c.json: document starting at line 1: invalid JSON: key "name" already set in map'),
    ('{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}, "x": ' + "[" * 5000 + "]" * 5000 + "}",
     "c.json", "c.json: invalid JSON: nested deeper than phalanx reads"),
    ("apiVersion: v1\nkind: Node\nmetadata: {name: a}\nx: " + "[" * 5000 + "]" * 5000 + "\n", "c.yaml",
     "c.yaml: invalid YAML: nested deeper than phalanx reads"),
    ("apiVersion: v1\nkind: Node\nmetadata: {name: a\x00}\n", "c.yaml",
     "c.yaml: line 3: invalid YAML: unacceptable character #x0000: special characters are not allowed"),
    ("apiVersion: v1\nkind: ''\nmetadata: {name: a}\n", "c.yaml", "document 1 of c.yaml: kind: field required"),
])
def test_documents_kubectl_cannot_decode(text, source, message):
    with pytest.raises(InputError) as caught:
        load_text(text, source)
    assert str(caught.value) == message


def test_what_the_api_server_accepts_of_the_manifest_rules_still_loads():
    # Keys that YAML reads as numbers or booleans are strings to the API, null label values are "", a GPU request
    # with its limit, hugepages beside memory, hostNetwork ports that match, a system class of its own value, a
    # ConfigMap (core, skipped) and a custom resource (its own group, skipped), a preferred node affinity term
    # whose value is no label value (only required terms' are checked), volumes.
    pod = changed(POD, ["metadata", "labels"], {1: "a", "app": None})
    pod["spec"]["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": {"matchExpressions": [{"key": "gen", "operator": "Gt", "values": ["-1"]}]}}]}}
    pod = changed(pod, ["spec", "containers"], container(
        resources={"requests": {"nvidia.com/gpu": "1", "hugepages-2Mi": "2Mi", "memory": "1Gi"},
                   "limits": {"nvidia.com/gpu": "1", "hugepages-2Mi": "2Mi"}},
        ports=[{"containerPort": 80, "hostPort": 80, "name": "web"}]))
    pod["spec"]["hostNetwork"] = True
    # Volumes of one source each, a null source counting as none (a nil pointer), names distinct DNS labels.
    pod["spec"]["volumes"] = [{"name": "cache", "emptyDir": None, "secret": {"secretName": "s"}},
                              {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    objects = load_text("---\n".join(yaml.safe_dump(d) for d in [
        NODE, pod, {**PC, "metadata": {"name": "system-node-critical"}, "value": 2_000_001_000},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}},
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue", "metadata": {"name": "q"}}]), "c.yaml")
    assert objects.pods[0].metadata.labels == {"1": "a", "app": ""}
    assert [pc.metadata.name for pc in objects.priority_classes] == ["system-node-critical"]
    assert objects.warnings == ["c.yaml: skipped 1 object of unsupported kind v1 ConfigMap",
                                "c.yaml: skipped 1 object of unsupported kind kueue.x-k8s.io/v1beta1 LocalQueue"]


def test_pod_level_resources_with_claims_null_load():
    # `claims: null` is no claims (Go's nil slice); a container's claims stay allowed.
    pod = pod_spec(resources={"requests": {"cpu": "1"}, "claims": None},
                   resourceClaims=[{"name": "gpu", "resourceClaimName": "gpu-0"}],
                   containers=container(resources={"claims": [{"name": "gpu"}]}))
    [loaded] = load_text(yaml.safe_dump(pod)).pods
    assert loaded.spec.resources.claims == [] and loaded.spec.containers[0].resources.claims[0].name == "gpu"


def test_spread_constraints_the_api_server_accepts():
    # A matchLabelKeys key also in matchLabels of a pod without that label (nothing is merged), a pod as the API
    # server stores it (the merged requirement beside its key: not merged twice, docs/semantics.md), a topologyKey
    # that is no label key (ValidateTopologyKey only wants one), keys merged beside other keys' requirements.
    absent = spread(labelSelector={"matchLabels": {"tier": "db"}}, matchLabelKeys=["tier"])
    stored = spread(topologyKey="rack", labelSelector={"matchExpressions": [
        {"key": "app", "operator": "In", "values": ["web"]}]}, matchLabelKeys=["app"])
    odd_key = spread(topologyKey="bad key!", whenUnsatisfiable="ScheduleAnyway")
    beside = spread(topologyKey="zone", whenUnsatisfiable="ScheduleAnyway", labelSelector={
        "matchLabels": {"tier": "db"}, "matchExpressions": [{"key": "team", "operator": "Exists"}]},
                    matchLabelKeys=["app", "pod-template-hash"])
    pod = labelled(pod_spec(topologySpreadConstraints=[absent, stored, odd_key, beside]), app="web")
    [loaded] = load_text(yaml.safe_dump(pod)).pods
    assert [c.topology_key for c in loaded.spec.topology_spread_constraints] == ["zone", "rack", "bad key!", "zone"]


@pytest.mark.parametrize("spec", [
    {"clusterIP": "None", "selector": {"app": "web"}},            # headless: no ports needed
    {"clusterIP": "None", "clusterIPs": ["None"]},
    {"type": "ExternalName", "externalName": "db.example.com."},  # a trailing dot: fully qualified
    {"type": "", "ports": [{"name": "http", "port": 80, "targetPort": "http-alt", "protocol": ""},
                           {"name": "dns", "port": 80, "protocol": "UDP", "targetPort": 0}]},
    {"type": "LoadBalancer", "clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1", "fd00::1"], "ports": [{"port": 443}]},
])
def test_services_the_api_server_accepts(spec):
    [svc] = load_text(yaml.safe_dump({**SERVICE, "spec": spec})).services
    assert svc.spec.type == (spec.get("type") or "ClusterIP")
    assert [p.target_port for p in svc.spec.ports] == [p.get("targetPort") or p["port"] for p in spec.get("ports", [])]


def test_every_volume_source_of_the_api_counts_as_one():
    """ValidateVolumes counts a volume's sources: the list phalanx reads them from is every field of v1.36's Volume
    but its name (the generated API types), so no valid volume reads as one without a source."""
    from phalanx.cluster_models import api_types
    from phalanx.cluster_models.objects import _VOLUME_SOURCES
    assert {key for key, _ in _VOLUME_SOURCES} == {f.split(":")[0] for f in api_types.STRUCTS["core/v1.Volume"].split()
                                                   if not f.startswith("name:")}
