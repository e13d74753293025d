"""Loading manifests: formats, List dumps, directories, warnings, and one exact message per error path."""
import gc
import json
from pathlib import Path

import pytest
import yaml

from phalanx.cluster_models import ClusterObjects, InputError, load_paths, load_text, parse_objects

IMAGE = "registry.k8s.io/pause:3.10"
NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: {name}
status:
  allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}
"""

POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {namespace}}}
spec: {{containers: [{{name: c, image: registry.k8s.io/pause:3.10}}]}}
"""

KUBECTL_GET_NODES_PODS_YAML = """\
apiVersion: v1
items:
- apiVersion: v1
  kind: Node
  metadata:
    creationTimestamp: "2024-05-01T10:00:00Z"
    labels:
      kubernetes.io/hostname: n1
      topology.kubernetes.io/zone: a
    name: n1
    resourceVersion: "4242"
    uid: 0b6c2f4e-1111-2222-3333-444455556666
  spec:
    podCIDR: 10.244.0.0/24
    taints:
    - effect: NoSchedule
      key: node-role.kubernetes.io/control-plane
  status:
    allocatable:
      cpu: 3800m
      ephemeral-storage: "95491281146"
      hugepages-2Mi: "0"
      memory: 15Gi
      pods: "110"
    capacity:
      cpu: "4"
      memory: 16Gi
      pods: "110"
    conditions:
    - type: Ready
      status: "True"
- apiVersion: v1
  kind: Pod
  metadata:
    creationTimestamp: "2024-05-01T10:05:00Z"
    labels: {app: web}
    name: web-0
    namespace: shop
    ownerReferences:
    - apiVersion: apps/v1
      controller: true
      kind: StatefulSet
      name: web
      uid: 9f
  spec:
    containers:
    - image: nginx
      name: web
      ports:
      - containerPort: 80
        protocol: TCP
      resources:
        requests: {cpu: 250m, memory: 64Mi}
    nodeName: n1
    priority: 0
    schedulerName: default-scheduler
    tolerations:
    - effect: NoExecute
      key: node.kubernetes.io/not-ready
      operator: Exists
      tolerationSeconds: 300
  status:
    phase: Running
    podIP: 10.244.0.7
kind: List
metadata:
  resourceVersion: ""
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def load_error(text: str, source: str = "x.yaml") -> str:
    with pytest.raises(InputError) as caught:
        load_text(text, source)
    return str(caught.value)


# -- formats ---------------------------------------------------------------------------------------------------

def test_multi_document_yaml_keeps_order_and_skips_empty_documents():
    text = "---\n" + NODE.format(name="n1") + "---\n# only a comment\n---\n" + NODE.format(name="n2") + """---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: gold}
value: 1000
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  priorityClassName: gold
  containers: [{name: c, image: registry.k8s.io/pause:3.10}]
"""
    objects = load_text(text)
    assert isinstance(objects, ClusterObjects)
    assert [n.name for n in objects.nodes] == ["n1", "n2"]
    assert objects.nodes[0].status.allocatable == {"cpu": 4000, "memory": 8 * 2**30, "pods": 110}
    assert [p.key for p in objects.pods] == ["default/p"]
    assert [pc.value for pc in objects.priority_classes] == [1000]
    assert objects.warnings == []


def test_kubectl_get_nodes_pods_yaml_list():
    objects = load_text(KUBECTL_GET_NODES_PODS_YAML)
    node, pod = objects.nodes[0], objects.pods[0]
    assert node.status.allocatable["cpu"] == 3800 and node.status.allocatable["ephemeral-storage"] == 95491281146
    assert node.spec.taints[0].key == "node-role.kubernetes.io/control-plane"
    assert node.metadata.labels["topology.kubernetes.io/zone"] == "a"
    assert pod.key == "shop/web-0" and pod.spec.node_name == "n1" and pod.status.phase == "Running"
    assert pod.spec.containers[0].resources.requests == {"cpu": 250, "memory": 64 * 2**20}
    assert pod.spec.tolerations[0].toleration_seconds == 300
    assert pod.metadata.creation_timestamp == "2024-05-01T10:05:00Z"


def test_kubectl_json_list_equals_the_yaml_one(tmp_path):
    as_json = json.dumps(yaml.safe_load(KUBECTL_GET_NODES_PODS_YAML), default=str, indent=2)
    from_json = load_paths([write(tmp_path / "dump.json", as_json)])
    from_yaml = load_text(KUBECTL_GET_NODES_PODS_YAML)
    assert from_json.nodes == from_yaml.nodes and from_json.pods == from_yaml.pods


def test_api_typed_lists_leave_kind_off_their_items():
    spec = {"containers": [{"name": "c", "image": IMAGE}]}
    pod_list = {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"},
                "items": [{"metadata": {"name": "a"}, "spec": spec},
                          {"metadata": {"name": "b", "namespace": "x"}, "spec": spec}]}
    node_list = {"kind": "NodeList", "apiVersion": "v1", "items": [{"metadata": {"name": "n"}}]}
    objects = load_text(json.dumps(pod_list) + "\n" + json.dumps(node_list))  # a JSON stream
    assert [p.key for p in objects.pods] == ["default/a", "x/b"]
    assert [n.name for n in objects.nodes] == ["n"]


def test_json_numbers_are_read_exactly():
    # As JSON text 0.1000000000000000055 rounds up to 0.100000001 cores, stored as 101m; a float would be 0.1.
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": IMAGE,
                                    "resources": {"requests": {"cpu": 0.1000000000000000055}}}]}}
    objects = load_text(json.dumps(pod).replace("0.1", "0.1000000000000000055"))
    assert objects.pods[0].spec.containers[0].resources.requests == {"cpu": 101}


def test_flow_style_yaml_that_looks_like_json():
    assert [n.name for n in load_text("{apiVersion: v1, kind: Node, metadata: {name: n}}").nodes] == ["n"]


def test_yaml_scalars_stay_as_written():
    objects = load_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  creationTimestamp: 2024-05-01T10:00:00Z\n"
                        "  annotations: {op: =}\nspec: {containers: [{name: c, image: registry.k8s.io/pause:3.10}]}\n")
    assert objects.pods[0].metadata.creation_timestamp == "2024-05-01T10:00:00Z"
    assert objects.pods[0].metadata.annotations == {"op": "="}


def test_parse_objects_takes_decoded_documents():
    objects = parse_objects([{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}, None,
                             {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                              "spec": {"containers": [{"name": "c", "image": IMAGE}]}}])
    assert [n.name for n in objects.nodes] == ["n"] and [p.key for p in objects.pods] == ["default/p"]


def test_unknown_kinds_are_skipped_with_one_warning_per_kind_and_file():
    text = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: a}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b}
---
apiVersion: example.com/v1
kind: Node
metadata: {name: not-a-core-node}
---
apiVersion: v1
kind: Secret
metadata: {name: s}
"""
    objects = load_text(text, "dump.yaml")
    assert objects.nodes == []
    assert objects.warnings == [
        "dump.yaml: skipped 2 objects of unsupported kind v1 ConfigMap",
        "dump.yaml: skipped 1 object of unsupported kind example.com/v1 Node",
        "dump.yaml: skipped 1 object of unsupported kind v1 Secret",
    ]
    # kubectl refuses any object without apiVersion, of a kind phalanx reads or not
    assert load_error("kind: Secret\nmetadata: {name: s}\n") == "Secret s: apiVersion: Required value"


# -- paths -----------------------------------------------------------------------------------------------------

def test_directories_are_read_recursively_in_sorted_order(tmp_path):
    write(tmp_path / "zz.yaml", NODE.format(name="n4"))
    write(tmp_path / "b.json", json.dumps({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}))
    write(tmp_path / "m" / "a.yml", NODE.format(name="n2"))
    write(tmp_path / "m" / "b.YAML", NODE.format(name="n3"))
    write(tmp_path / "m" / "notes.txt", "apiVersion: v1\nkind: Node\nmetadata: {name: ignored}\n")
    objects = load_paths([tmp_path])
    assert [n.name for n in objects.nodes] == ["n1", "n2", "n3", "n4"]


def test_paths_load_in_the_order_given_and_a_single_path_needs_no_list(tmp_path):
    second = write(tmp_path / "a.yaml", NODE.format(name="second"))
    first = write(tmp_path / "b.yaml", NODE.format(name="first"))
    assert [n.name for n in load_paths([first, str(second)]).nodes] == ["first", "second"]
    assert [n.name for n in load_paths(str(first)).nodes] == ["first"]


def test_progress_is_told_every_document_read(tmp_path):
    # 1,030 documents in two files: reports every 512 documents of a file and at its end; empty documents count.
    write(tmp_path / "a.yaml", "---\n".join(NODE.format(name=f"a{i}") for i in range(1000)))
    write(tmp_path / "b.yaml", "---\n".join([NODE.format(name=f"b{i}") for i in range(29)] + [""]))
    told = []
    objects = load_paths([tmp_path], progress=told.append)
    assert len(objects.nodes) == 1029 and told == [512, 488, 30]


def test_explicit_file_with_another_extension_is_read_as_yaml(tmp_path):
    assert [n.name for n in load_paths([write(tmp_path / "nodes.txt", NODE.format(name="n"))]).nodes] == ["n"]


def test_empty_directory_is_an_error(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("not a manifest")
    with pytest.raises(InputError, match=r"empty: no \.yaml, \.yml or \.json files$"):
        load_paths([tmp_path / "empty"])


# -- every error path, with its exact message -------------------------------------------------------------------

def test_yaml_syntax_error_names_file_and_line():
    assert load_error("kind: Node\nmetadata:\n  name: n1\n bad: x\n", "nodes.yaml") == \
        "nodes.yaml: line 4: invalid YAML: expected <block end>, but found '<block mapping start>'"


def test_yaml_duplicate_key():
    assert load_error("kind: Node\nmetadata: {name: n}\nmetadata: {name: m}\n") == \
        'x.yaml: line 3: invalid YAML: key "metadata" already set in map'


def test_json_syntax_error_names_file_and_line(tmp_path):
    path = write(tmp_path / "nodes.json", '{"kind": "Node",\n "metadata": {"name": "n"}\n "x": 1}')
    with pytest.raises(InputError) as caught:
        load_paths([path])
    assert str(caught.value) == f"{path}: line 3: invalid JSON: Expecting ',' delimiter"


def test_text_that_looks_like_json_but_is_neither_reports_the_json_error():
    assert load_error('{"kind": "Node", "metadata": {"name": "n"}', "x.json") == \
        "x.json: line 1: invalid JSON: Expecting ',' delimiter"


def test_an_integer_too_long_for_python_is_one_line_naming_the_document(tmp_path):
    # 5,000 digits: more than Python's int() converts (4,300); was a ValueError traceback from json and yaml.
    digits = "1" * 5000
    pod = '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"priority": %s}}' % digits
    path = write(tmp_path / "pods.json", '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}\n' + pod)
    with pytest.raises(InputError) as caught:
        load_paths([path])
    assert str(caught.value) == f"{path}: document starting at line 2: invalid JSON: number out of range"
    assert load_error(pod, "p.json") == "p.json: document starting at line 1: invalid JSON: number out of range"
    assert load_error(f"kind: Pod\nmetadata: {{name: p}}\nspec:\n  priority: {digits}\n") == \
        "x.yaml: line 4: invalid YAML: number out of range"


def test_document_that_is_not_an_object():
    assert load_error(NODE.format(name="n") + "---\n- a\n- b\n") == \
        "document 2 of x.yaml: expected an object, got a list"


def test_missing_kind():
    assert load_error("metadata: {name: n}\n") == "document 1 of x.yaml: kind: field required"


def test_kind_that_is_not_a_string():
    assert load_error("kind: 3\n") == "document 1 of x.yaml: kind: expected a string, got a number"


def test_list_items_that_are_not_a_list():
    assert load_error("kind: List\nitems: {a: 1}\n") == "document 1 of x.yaml: items: expected a list, got an object"


def test_list_item_without_kind():
    assert load_error("apiVersion: v1\nkind: List\nitems:\n- metadata: {name: n}\n") == \
        "items[0] of document 1 of x.yaml: kind: field required"


def test_invalid_quantity_names_pod_and_field():
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: w-3}\nspec:\n  containers:\n  - name: c\n"
            "    image: registry.k8s.io/pause:3.10\n    resources:\n      requests: {cpu: 12x}\n")
    assert load_error(text) == 'Pod default/w-3: spec.containers[0].resources.requests.cpu: invalid quantity "12x"'


def test_quantity_out_of_range_names_node_and_field():
    assert load_error("apiVersion: v1\nkind: Node\nmetadata: {name: n-1}\n"
                      "status:\n  allocatable: {memory: 1e400}\n") == \
        'Node n-1: status.allocatable.memory: quantity "1e400" out of range'


def test_map_keys_with_dots_are_bracketed():
    assert load_error("apiVersion: v1\nkind: Node\nmetadata: {name: n-1}\n"
                      "status:\n  capacity: {nvidia.com/gpu: lots}\n") == \
        'Node n-1: status.capacity[nvidia.com/gpu]: invalid quantity "lots"'


def test_unnamed_object_is_located_by_document():
    text = NODE.format(name="n") + "---\napiVersion: v1\nkind: Pod\nmetadata: {namespace: x}\n"
    assert load_error(text, "pods.yaml") == "Pod <unnamed> (document 2 of pods.yaml): metadata.name: field required"


def test_unnamed_list_item_is_located_by_item():
    pod = {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [{"name": "c", "image": IMAGE}]}}
    dump = {"apiVersion": "v1", "kind": "List", "items": [{**pod, "metadata": {"name": "a"}}, {**pod, "metadata": {}}]}
    assert load_error(json.dumps(dump), "dump.json") == \
        "Pod <unnamed> (items[1] of document 1 of dump.json): metadata.name: field required"


def test_wrong_enum_value_shows_what_was_given():
    text = "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nspec:\n  taints: [{key: k, effect: Sometimes}]\n"
    assert load_error(text) == \
        "Node n: spec.taints[0].effect: input should be 'NoSchedule', 'PreferNoSchedule' or 'NoExecute' " \
        '(got "Sometimes")'


def test_wrong_type_shows_what_was_given():
    assert load_error("apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  labels: {zone: 1}\n") == \
        "Node n: metadata.labels.zone: input should be a valid string (got 1)"


def test_cross_field_rule():
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec:\n  topologySpreadConstraints:\n" \
           "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, minDomains: 2}\n"
    assert load_error(text) == \
        "Pod ns/p: spec.topologySpreadConstraints[0].minDomains: " \
        "can only be set when whenUnsatisfiable is DoNotSchedule"


def test_unknown_priority_class():
    assert load_error("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n"
                      f"spec: {{priorityClassName: gold, containers: [{{name: c, image: {IMAGE}}}]}}\n") == \
        'Pod default/x: spec.priorityClassName: PriorityClass "gold" not found'


@pytest.mark.parametrize("documents,message", [
    ([NODE.format(name="n-1"), NODE.format(name="n-1")], 'duplicate Node "n-1"'),
    ([POD.format(name="a", namespace="default"), POD.format(name="a", namespace="default")],
     "duplicate Pod default/a"),
    (["apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: g}\nvalue: 1\n"] * 2,
     'duplicate PriorityClass "g"'),
])
def test_duplicates(documents, message):
    assert load_error("---\n".join(documents)) == message


def test_pods_of_the_same_name_in_different_namespaces_are_not_duplicates():
    objects = load_text(POD.format(name="a", namespace="default") + "---\n" + POD.format(name="a", namespace="b"))
    assert [p.key for p in objects.pods] == ["default/a", "b/a"]


def test_missing_path(tmp_path):
    with pytest.raises(InputError) as caught:
        load_paths([tmp_path / "nope.yaml"])
    assert str(caught.value) == f"{tmp_path / 'nope.yaml'}: no such file or directory"


def test_file_that_is_not_utf8(tmp_path):
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"kind: Node\n\xff\xfe")
    with pytest.raises(InputError) as caught:
        load_paths([path])
    assert str(caught.value) == f"{path}: not UTF-8 text (byte 11)"


def test_unreadable_file(tmp_path, monkeypatch):
    path = write(tmp_path / "locked.yaml", NODE.format(name="n"))

    def refuse(self):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(Path, "read_bytes", refuse)
    with pytest.raises(InputError) as caught:
        load_paths([path])
    assert str(caught.value) == f"{path}: cannot read: Permission denied"


def test_messages_stay_on_one_line():
    assert load_error('apiVersion: v1\nkind: Pod\nmetadata: {name: "a\\nb"}\nspec: {priority: x}\n') == \
        'Pod default/a\\nb: spec.priority: input should be a valid integer (got "x")'


def test_a_bad_file_fails_the_whole_load(tmp_path):
    good = write(tmp_path / "a.yaml", NODE.format(name="n1"))
    bad = write(tmp_path / "b.yaml", NODE.format(name="n2") + "---\napiVersion: v1\nkind: Pod\nmetadata: {}\n")
    with pytest.raises(InputError):
        load_paths([good, bad])
    assert [n.name for n in load_paths([good]).nodes] == ["n1"]  # nothing leaked between loads


def test_loading_leaves_the_garbage_collector_as_it_was():
    assert gc.isenabled()
    load_text(NODE.format(name="n"))
    with pytest.raises(InputError):
        load_text("kind: 3\n")
    assert gc.isenabled()


# -- pods sharing a template ----------------------------------------------------------------------------------------

def _replicas(names, **meta):
    template = {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "web", "labels": {"app": "web"}, **meta},
                "spec": {"containers": [{"name": "c", "image": IMAGE,
                                         "resources": {"requests": {"cpu": "250m", "memory": "1Gi"}}}],
                         "tolerations": [{"key": "k", "operator": "Exists"}]}}
    return [{**template, "metadata": {**template["metadata"], "name": name}} for name in names]


def test_pods_differing_only_in_name_are_validated_once_and_equal_to_validated_ones():
    docs = _replicas(["w-0", "w-1", "w-2"])
    loaded = load_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}), "pods.json").pods
    alone = [load_text(json.dumps(d), f"{i}.json").pods[0] for i, d in enumerate(docs)]
    assert [p.model_dump() for p in loaded] == [p.model_dump() for p in alone]
    assert [p.key for p in loaded] == ["web/w-0", "web/w-1", "web/w-2"]
    assert loaded[1].spec is loaded[0].spec and loaded[2].metadata.labels is loaded[0].metadata.labels


def test_replicas_with_and_without_uids_are_the_pods_validated_alone():
    docs = _replicas(["w-0", "w-1", "w-2", "w-3"])
    docs[1]["metadata"]["uid"], docs[3]["metadata"]["uid"] = "u-1", "u-3"
    loaded = load_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}), "pods.json").pods
    alone = [load_text(json.dumps(d), f"{i}.json").pods[0] for i, d in enumerate(docs)]
    assert [p.metadata.uid for p in loaded] == ["", "u-1", "", "u-3"]
    assert [p.model_dump() for p in loaded] == [p.model_dump() for p in alone]
    assert [p.metadata.model_fields_set for p in loaded] == [p.metadata.model_fields_set for p in alone]


def _text_replicas(names):
    """Replicas whose documents hold only strings (compared to their template with ==, see load._text_only)."""
    return [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "web", "labels": {"app": "a"}},
             "spec": {"schedulerName": "default-scheduler", "containers": [
                 {"name": "c", "image": IMAGE, "resources": {"requests": {"cpu": "250m", "memory": "1Gi"}}}]}}
            for name in names]


def test_text_only_replicas_share_the_template_and_a_changed_value_of_another_type_is_validated():
    docs = _text_replicas(["w-0", "w-1", "w-2", "w-3"])
    docs[2]["metadata"]["labels"] = {"app": "b"}
    docs[3]["spec"] = {**docs[3]["spec"], "containers": [{**docs[3]["spec"]["containers"][0],
                                                           "resources": {"requests": {"cpu": 0.25, "memory": "1Gi"}}}]}
    pods = load_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}), "pods.json").pods
    assert pods[1].spec is pods[0].spec and pods[1].key == "web/w-1" and pods[1].metadata.labels == {"app": "a"}
    assert pods[2].metadata.labels == {"app": "b"} and pods[2].spec is not pods[0].spec
    assert pods[3].spec is not pods[0].spec and pods[3].spec.containers[0].resources.requests["cpu"] == 250
    docs = _text_replicas(["w-0", "w-1"])
    docs[1]["spec"] = {**docs[1]["spec"], "schedulerName": True}     # equal to no string: validated, and refused
    assert load_error(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}), "pods.json").startswith(
        "Pod web/w-1: spec.schedulerName:")


def test_a_replica_whose_number_equals_the_templates_in_another_type_is_validated():
    # 80 == 80.0 == True in Python; the API server refuses a float or a boolean port. Such a template is not
    # text only, so its replicas are compared by their text.
    docs = _text_replicas(["w-0", "w-1"])
    for doc in docs:
        doc["spec"] = {**doc["spec"], "containers": [{**doc["spec"]["containers"][0], "ports": [{"containerPort": 0}]}]}
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": docs})
    text = text.replace('"containerPort": 0', '"containerPort": 80', 1)
    text = text.replace('"containerPort": 0', '"containerPort": 80.0')
    assert "Pod web/w-1: spec.containers[0].ports[0].containerPort" in load_error(text, "pods.json")


def test_nested_lists_sharing_their_items_by_a_yaml_alias_each_read_them():
    text = """
kind: List
apiVersion: v1
items:
- kind: List
  apiVersion: v1
  items: &x
  - {apiVersion: v1, kind: Pod, metadata: {generateName: p-}, spec: {containers: [{name: c, image: i}]}}
- kind: List
  apiVersion: v1
  items: *x
"""
    assert len(load_text(text).pods) == 2


def test_parse_objects_leaves_the_callers_documents_as_they_were():
    docs = [{"apiVersion": "v1", "kind": "List", "items": _replicas(["w-0", "w-1"])}]
    before = json.dumps(docs)
    assert len(parse_objects(docs).pods) == 2
    assert json.dumps(docs) == before


def test_a_replica_with_a_bad_name_is_refused_as_alone():
    docs = _replicas(["w-0", "W-1"])
    assert load_error(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}), "pods.json") == (
        "Pod web/W-1: metadata.name: must be a DNS subdomain: lowercase "
        "letters, digits, '-' and '.', each '.'-separated part starting and ending with a letter or digit "
        "(got \"W-1\")")


def test_replicas_with_unknown_fields_are_each_reported():
    docs = _replicas(["w-0", "w-1"])
    docs = [{**d, "spec": {**d["spec"], "nodeNmae": "n1"}} for d in docs]
    objects = load_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}), "pods.json")
    assert len(objects.pods) == 2
    assert objects.warnings == ['2 Pods (web/w-0, web/w-1): unknown field "spec.nodeNmae" (ignored; --strict makes it '
                                'an error)']


@pytest.mark.parametrize("text", ['{"a": [1, 2.50, -0.0, 1e3, 1.0E-2, 12345678901234567890123, null, true, "\\u00e9\\/"]}',
                                  '{"x": NaN, "y": -Infinity}', '"\\ud800"', '{"a": 1} {"b": 0.1}', '  7  ', ''])
def test_json_documents_are_the_stdlib_decoders(text):
    """One JSON value goes through jiter, anything jiter refuses (NaN, a lone surrogate, a stream) through the
    stdlib decoder: either way the values, and their types, are what the stdlib reads with exact decimals."""
    from decimal import Decimal

    from phalanx.cluster_models.load import _json_documents
    want, pos, decoder = [], 0, json.JSONDecoder(parse_float=Decimal, parse_constant=Decimal)
    while text[pos:].strip():
        pos += len(text[pos:]) - len(text[pos:].lstrip())
        value, pos = decoder.raw_decode(text, pos)
        want.append(value)
    got = _json_documents(text, "t.json")
    assert repr(got) == repr(want)


def test_a_file_with_no_objects_is_reported(tmp_path):
    """An empty file (or one of empty documents) is read as no objects, with a warning naming it: kubectl refuses
    such input ("no objects passed to apply"), and a wrong file name should not pass unnoticed."""
    (tmp_path / "empty.yaml").write_text("---\n---\n")
    (tmp_path / "empty.json").write_text("\n")
    objects = load_paths([tmp_path / "empty.yaml", tmp_path / "empty.json"])
    assert (objects.nodes, objects.pods) == ([], [])
    assert objects.warnings == [f"{tmp_path / 'empty.yaml'}: no objects in it (an empty file)",
                                f"{tmp_path / 'empty.json'}: no objects in it (an empty file)"]
