"""Workload-aware scheduling objects (scheduling.k8s.io/v1alpha2 Workload, PodGroup; v1alpha1 Workload converted):
round trips, one exact message per validation error, the v1alpha1 conversion, a pod's group and dangling
references, and List dumps."""
import json

import pytest
import yaml

from phalanx.cluster_models import (
    ClusterObjects,
    InputError,
    PodGroup,
    PodGroupIndex,
    Workload,
    load_text,
    pod_group_of,
    pod_group_reason,
    resolve_pod_group,
)
from phalanx.cluster_models.workloads import SCHEDULING_V1ALPHA1

# validation.RegexError's tail of IsQualifiedName's name-part message
EGK = " (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"

WORKLOAD = """\
apiVersion: scheduling.k8s.io/v1alpha2
kind: Workload
metadata: {name: training, namespace: ml}
spec:
  controllerRef: {apiGroup: batch, kind: Job, name: training}
  podGroupTemplates:
  - name: worker
    schedulingPolicy: {gang: {minCount: 4}}
    schedulingConstraints:
      topology: [{key: topology.kubernetes.io/rack}]
    resourceClaims:
    - {name: gpus, resourceClaimTemplateName: gpu-template}
    disruptionMode: PodGroup
    priorityClassName: high
    priority: 1000
  - name: driver
    schedulingPolicy: {basic: {}}
"""

PODGROUP = """\
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: training-worker-0, namespace: ml}
spec:
  podGroupTemplateRef:
    workload: {workloadName: training, podGroupTemplateName: worker}
  schedulingPolicy: {gang: {minCount: 4}}
  schedulingConstraints:
    topology: [{key: topology.kubernetes.io/rack}]
  resourceClaims:
  - {name: gpus, resourceClaimName: gpus-0}
  disruptionMode: PodGroup
  priorityClassName: high
  priority: 1000
status:
  conditions:
  - type: PodGroupScheduled
    status: "False"
    reason: Unschedulable
    message: 0/3 nodes are available
    lastTransitionTime: "2026-03-01T10:00:00Z"
  - {type: DisruptionTarget, status: "True", reason: PreemptionByScheduler}
"""

V1ALPHA1_WORKLOAD = """\
apiVersion: scheduling.k8s.io/v1alpha1
kind: Workload
metadata: {name: jobset, namespace: ml}
spec:
  controllerRef: {apiGroup: jobset.x-k8s.io, kind: JobSet, name: jobset}
  podGroups:
  - name: job-1
    policy: {gang: {minCount: 2}}
  - name: job-2
    policy: {basic: {}}
"""


def pod(name: str, spec: dict, namespace: str = "ml") -> str:
    spec = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}], **spec}
    return yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
                           "spec": spec})


def load_error(text: str, source: str = "x.yaml") -> str:
    with pytest.raises(InputError) as caught:
        load_text(text, source)
    return str(caught.value)


def dump(obj) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": obj.kind,
            **obj.model_dump(mode="json", by_alias=True, exclude_none=True)}


# ---- valid objects ----

def test_workload_fields():
    [workload] = load_text(WORKLOAD).workloads
    assert workload.key == "ml/training"
    assert workload.converted_from is None
    ref = workload.spec.controller_ref
    assert (ref.api_group, ref.kind, ref.name) == ("batch", "Job", "training")
    worker, driver = workload.spec.pod_group_templates
    assert worker.name == "worker" and worker.scheduling_policy.gang.min_count == 4
    assert worker.scheduling_policy.min_count == 4 and driver.scheduling_policy.min_count == 1
    assert worker.topology_keys == ["topology.kubernetes.io/rack"] and driver.topology_keys == []
    assert worker.resource_claims[0].resource_claim_template_name == "gpu-template"
    assert (worker.disruption_mode, worker.priority_class_name, worker.priority) == ("PodGroup", "high", 1000)
    assert driver.scheduling_policy.basic is not None and driver.scheduling_policy.gang is None
    assert (driver.disruption_mode, driver.priority) == (None, None)


def test_podgroup_fields():
    [group] = load_text(PODGROUP).pod_groups
    assert group.key == "ml/training-worker-0" and not group.made_for_workload_ref
    ref = group.spec.pod_group_template_ref.workload
    assert (ref.workload_name, ref.pod_group_template_name) == ("training", "worker")
    scheduled = group.status.condition("PodGroupScheduled")
    assert (scheduled.status, scheduled.reason, scheduled.last_transition_time) == \
        ("False", "Unschedulable", "2026-03-01T10:00:00Z")
    assert group.status.condition("DisruptionTarget").reason == "PreemptionByScheduler"


@pytest.mark.parametrize("text", [WORKLOAD, PODGROUP])
def test_valid_objects_round_trip(text):
    objects = load_text(text)
    [obj] = objects.workloads + objects.pod_groups
    again = load_text(yaml.safe_dump(dump(obj)))
    assert (again.workloads + again.pod_groups) == [obj]
    # and through JSON
    from_json = load_text(json.dumps(dump(obj)))
    assert from_json.workloads + from_json.pod_groups == [obj]


def test_namespace_defaults_and_minimal_objects():
    objects = load_text("apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: g}\n"
                        "spec: {schedulingPolicy: {basic: {}}}\n")
    assert objects.pod_groups[0].key == "default/g" and objects.pod_groups[0].status.conditions == []


def test_cluster_objects_keyword_construction_still_works():
    objects = ClusterObjects(nodes=[], pods=[], priority_classes=[], warnings=[])
    assert objects.workloads == [] and objects.pod_groups == []


# ---- validation: one exact message per path ----

def workload_with(template: str) -> str:
    return ("apiVersion: scheduling.k8s.io/v1alpha2\nkind: Workload\nmetadata: {name: w, namespace: ns}\n"
            f"spec:\n  podGroupTemplates:\n{template}")


def podgroup_with(spec: str, name: str = "g") -> str:
    return ("apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\n"
            f"metadata: {{name: {name}, namespace: ns}}\nspec:\n{spec}")


T = "  - name: t\n    schedulingPolicy: {basic: {}}\n"


@pytest.mark.parametrize("text,message", [
    # schedulingPolicy: a union of basic and gang
    (workload_with("  - name: t\n    schedulingPolicy: {}\n"),
     "Workload ns/w: spec.podGroupTemplates[0].schedulingPolicy: must specify one of: `basic`, `gang`"),
    (workload_with("  - name: t\n    schedulingPolicy: {basic: null}\n"),
     "Workload ns/w: spec.podGroupTemplates[0].schedulingPolicy: must specify one of: `basic`, `gang`"),
    (workload_with("  - name: t\n    schedulingPolicy: {basic: {}, gang: {minCount: 2}}\n"),
     ("Workload ns/w: spec.podGroupTemplates[0].schedulingPolicy: "
     "exactly one of `basic`, `gang` is required, but multiple fields are set")),
    (workload_with("  - name: t\n"),
     "Workload ns/w: spec.podGroupTemplates[0].schedulingPolicy: field required"),
    (workload_with("  - name: t\n    schedulingPolicy: {gang: {}}\n"),
     "Workload ns/w: spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: field required"),
    (workload_with("  - name: t\n    schedulingPolicy: {gang: {minCount: 0}}\n"),
     ("Workload ns/w: spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: "
     "must be greater than or equal to 1 (got 0)")),
    (workload_with("  - name: t\n    schedulingPolicy: {gang: {minCount: -3}}\n"),
     ("Workload ns/w: spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: "
     "must be greater than or equal to 1 (got -3)")),
    (workload_with("  - name: t\n    schedulingPolicy: {gang: {minCount: 2147483648}}\n"),
     ("Workload ns/w: spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: "
     "input should be less than or equal to 2147483647 (got 2147483648)")),
    # the template list
    ("apiVersion: scheduling.k8s.io/v1alpha2\nkind: Workload\nmetadata: {name: w, namespace: ns}\nspec: {}\n",
     "Workload ns/w: spec.podGroupTemplates: field required"),
    ("apiVersion: scheduling.k8s.io/v1alpha2\nkind: Workload\nmetadata: {name: w, namespace: ns}\n",
     "Workload ns/w: spec: field required"),
    (workload_with("").replace("podGroupTemplates:\n", "podGroupTemplates: []\n"),
     "Workload ns/w: spec.podGroupTemplates: must have at least one item"),
    (workload_with("".join(f"  - name: t{i}\n    schedulingPolicy: {{basic: {{}}}}\n" for i in range(9))),
     "Workload ns/w: spec.podGroupTemplates: must have at most 8 items (got 9)"),
    (workload_with(T + "  - name: u\n    schedulingPolicy: {basic: {}}\n" + T),
     'Workload ns/w: spec.podGroupTemplates[2].name: duplicate name "t"'),
    # names
    (workload_with("  - name: Worker\n    schedulingPolicy: {basic: {}}\n"),
     ("Workload ns/w: spec.podGroupTemplates[0].name: must be a DNS label: lowercase letters, digits and '-', "
     'starting and ending with a letter or digit (got "Worker")')),
    (workload_with("  - name: a.b\n    schedulingPolicy: {basic: {}}\n"),
     ("Workload ns/w: spec.podGroupTemplates[0].name: must be a DNS label: lowercase letters, digits and '-', "
     'starting and ending with a letter or digit (got "a.b")')),
    (workload_with(f"  - name: {'a' * 64}\n    schedulingPolicy: {{basic: {{}}}}\n"),
     ("Workload ns/w: spec.podGroupTemplates[0].name: must be a DNS label of at most 63 characters "
     f'(got 64: "{"a" * 64}")')),
    (workload_with("  - name: ''\n    schedulingPolicy: {basic: {}}\n"),
     "Workload ns/w: spec.podGroupTemplates[0].name: field required"),
    (workload_with("  - schedulingPolicy: {basic: {}}\n"),
     "Workload ns/w: spec.podGroupTemplates[0].name: field required"),
    (workload_with(T).replace("name: w,", "name: W_1,"),
     ("Workload ns/W_1: metadata.name: must be a DNS subdomain: lowercase letters, digits, '-' and '.', "
     "each '.'-separated part starting and ending with a letter or digit (got \"W_1\")")),
    (workload_with(T).replace("name: w,", f"name: {'a' * 254},"),
     f"Workload ns/{'a' * 254}: metadata.name: must be a DNS subdomain of at most 253 characters (got 254)"),
    # controllerRef
    (workload_with(T).replace("spec:\n", "spec:\n  controllerRef: {name: j}\n"),
     "Workload ns/w: spec.controllerRef.kind: field required"),
    (workload_with(T).replace("spec:\n", "spec:\n  controllerRef: {kind: Job, name: ''}\n"),
     "Workload ns/w: spec.controllerRef.name: field required"),
    (workload_with(T).replace("spec:\n", "spec:\n  controllerRef: {kind: Job, name: a/b}\n"),
     "Workload ns/w: spec.controllerRef.name: may not contain '/' (got \"a/b\")"),
    (workload_with(T).replace("spec:\n", "spec:\n  controllerRef: {kind: '..', name: j}\n"),
     'Workload ns/w: spec.controllerRef.kind: may not be ".."'),
    (workload_with(T).replace("spec:\n", "spec:\n  controllerRef: {apiGroup: Batch, kind: Job, name: j}\n"),
     ("Workload ns/w: spec.controllerRef.apiGroup: must be a DNS subdomain: lowercase letters, digits, '-' and "
     "'.', each '.'-separated part starting and ending with a letter or digit (got \"Batch\")")),
    # schedulingConstraints
    (workload_with(T + "    schedulingConstraints: {topology: [{key: a}, {key: b}]}\n"),
     "Workload ns/w: spec.podGroupTemplates[0].schedulingConstraints.topology: must have at most 1 item (got 2)"),
    (workload_with(T + "    schedulingConstraints: {topology: [{}]}\n"),
     "Workload ns/w: spec.podGroupTemplates[0].schedulingConstraints.topology[0].key: field required"),
    (workload_with(T + "    schedulingConstraints: {topology: [{key: 'rack!'}]}\n"),
     ("Workload ns/w: spec.podGroupTemplates[0].schedulingConstraints.topology[0].key: name part must consist "
     "of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
     + EGK + ' (got "rack!")')),
    (workload_with(T + "    schedulingConstraints: {topology: [{key: Example.com/rack}]}\n"),
     ("Workload ns/w: spec.podGroupTemplates[0].schedulingConstraints.topology[0].key: prefix part a lowercase RFC "
     "1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an "
     "alphanumeric character (e.g. 'example.com', regex used for validation is "
     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*') (got \"Example.com/rack\")")),
    (workload_with(T + "    schedulingConstraints: {topology: [{key: example.com/}]}\n"),
     ("Workload ns/w: spec.podGroupTemplates[0].schedulingConstraints.topology[0].key: "
     "name part must be non-empty; name part must consist of alphanumeric characters, '-', '_' or '.', and must "
     "start and end with an alphanumeric character" + EGK + ' (got "example.com/")')),
    (workload_with(T + "    schedulingConstraints: {topology: [{key: /rack}]}\n"),
     ("Workload ns/w: spec.podGroupTemplates[0].schedulingConstraints.topology[0].key: "
     'prefix part must be non-empty (got "/rack")')),
    (workload_with(T + f"    schedulingConstraints: {{topology: [{{key: {'r' * 64}}}]}}\n"),
     ("Workload ns/w: spec.podGroupTemplates[0].schedulingConstraints.topology[0].key: "
     f'name part must be no more than 63 characters (got "{"r" * 64}")')),
    # resourceClaims
    (workload_with(T + "    resourceClaims: [{name: c}]\n"),
     ("Workload ns/w: spec.podGroupTemplates[0].resourceClaims[0]: "
     "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`")),
    (workload_with(T + "    resourceClaims: [{name: c, resourceClaimName: a, resourceClaimTemplateName: b}]\n"),
     ("Workload ns/w: spec.podGroupTemplates[0].resourceClaims[0]: exactly one of `resourceClaimName`, "
     "`resourceClaimTemplateName` is required, but multiple fields are set")),
    (workload_with(T + "    resourceClaims: [{name: c, resourceClaimName: a}, {name: c, resourceClaimName: b}]\n"),
     'Workload ns/w: spec.podGroupTemplates[0].resourceClaims[1].name: duplicate name "c"'),
    (workload_with(T + "    resourceClaims: [" + ", ".join(f"{{name: c{i}, resourceClaimName: a}}" for i in range(5))
                   + "]\n"),
     "Workload ns/w: spec.podGroupTemplates[0].resourceClaims: must have at most 4 items (got 5)"),
    (workload_with(T + "    resourceClaims: [{name: C, resourceClaimName: a}]\n"),
     ("Workload ns/w: spec.podGroupTemplates[0].resourceClaims[0].name: must be a DNS label: lowercase letters, "
     "digits and '-', starting and ending with a letter or digit (got \"C\")")),
    (workload_with(T + "    resourceClaims: [{name: c, resourceClaimName: A}]\n"),
     ("Workload ns/w: spec.podGroupTemplates[0].resourceClaims[0].resourceClaimName: must be a DNS subdomain: "
     "lowercase letters, digits, '-' and '.', each '.'-separated part starting and ending with a letter or digit "
     '(got "A")')),
    # disruptionMode, priority
    (workload_with(T + "    disruptionMode: All\n"),
     ("Workload ns/w: spec.podGroupTemplates[0].disruptionMode: input should be 'Pod' or 'PodGroup' "
     '(got "All")')),
    (workload_with(T + "    priority: 1000000001\n"),
     ("Workload ns/w: spec.podGroupTemplates[0].priority: must be less than or equal to 1000000000 "
     "(got 1000000001)")),
    (workload_with(T + "    priorityClassName: High\n"),
     ("Workload ns/w: spec.podGroupTemplates[0].priorityClassName: must be a DNS subdomain: lowercase letters, "
     "digits, '-' and '.', each '.'-separated part starting and ending with a letter or digit (got \"High\")")),
])
def test_workload_validation_messages(text, message):
    assert load_error(text) == message


@pytest.mark.parametrize("text,message", [
    (podgroup_with("  schedulingPolicy: {}\n"),
     "PodGroup ns/g: spec.schedulingPolicy: must specify one of: `basic`, `gang`"),
    (podgroup_with("  schedulingPolicy: {basic: {}, gang: {minCount: 1}}\n"),
     ("PodGroup ns/g: spec.schedulingPolicy: exactly one of `basic`, `gang` is required, "
     "but multiple fields are set")),
    (podgroup_with("  schedulingPolicy: {gang: {minCount: 0}}\n"),
     "PodGroup ns/g: spec.schedulingPolicy.gang.minCount: must be greater than or equal to 1 (got 0)"),
    (podgroup_with("  podGroupTemplateRef: {}\n"), "PodGroup ns/g: spec.schedulingPolicy: field required"),
    ("apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: g, namespace: ns}\n",
     "PodGroup ns/g: spec: field required"),
    (podgroup_with("  schedulingPolicy: {basic: {}}\n  podGroupTemplateRef: {}\n"),
     "PodGroup ns/g: spec.podGroupTemplateRef: must specify one of: `workload`"),
    (podgroup_with("  schedulingPolicy: {basic: {}}\n  podGroupTemplateRef: {workload: {podGroupTemplateName: t}}\n"),
     "PodGroup ns/g: spec.podGroupTemplateRef.workload.workloadName: field required"),
    (podgroup_with("  schedulingPolicy: {basic: {}}\n  podGroupTemplateRef: {workload: {workloadName: w}}\n"),
     "PodGroup ns/g: spec.podGroupTemplateRef.workload.podGroupTemplateName: field required"),
    (podgroup_with("  schedulingPolicy: {basic: {}}\n"
                   "  podGroupTemplateRef: {workload: {workloadName: W, podGroupTemplateName: t}}\n"),
     ("PodGroup ns/g: spec.podGroupTemplateRef.workload.workloadName: must be a DNS subdomain: lowercase letters, "
     "digits, '-' and '.', each '.'-separated part starting and ending with a letter or digit (got \"W\")")),
    (podgroup_with("  schedulingPolicy: {basic: {}}\n"
                   "  podGroupTemplateRef: {workload: {workloadName: w, podGroupTemplateName: t.1}}\n"),
     ("PodGroup ns/g: spec.podGroupTemplateRef.workload.podGroupTemplateName: must be a DNS label: lowercase "
     "letters, digits and '-', starting and ending with a letter or digit (got \"t.1\")")),
    (podgroup_with("  schedulingPolicy: {basic: {}}\n  schedulingConstraints: {topology: [{key: a}, {key: b}]}\n"),
     "PodGroup ns/g: spec.schedulingConstraints.topology: must have at most 1 item (got 2)"),
    (podgroup_with("  schedulingPolicy: {basic: {}}\n"
                   "  resourceClaims: [{name: c, resourceClaimName: a}, {name: c, resourceClaimName: a}]\n"),
     'PodGroup ns/g: spec.resourceClaims[1].name: duplicate name "c"'),
    (podgroup_with("  schedulingPolicy: {basic: {}}\n  disruptionMode: Single\n"),
     "PodGroup ns/g: spec.disruptionMode: input should be 'Pod' or 'PodGroup' (got \"Single\")"),
    (podgroup_with("  schedulingPolicy: {basic: {}}\n", name="G"),
     ("PodGroup ns/G: metadata.name: must be a DNS subdomain: lowercase letters, digits, '-' and '.', each "
     "'.'-separated part starting and ending with a letter or digit (got \"G\")")),
    (podgroup_with("  schedulingPolicy: {basic: {}}\nstatus:\n  conditions: [{type: PodGroupScheduled, status: Maybe}]\n"),
     "PodGroup ns/g: status.conditions[0].status: input should be 'True', 'False' or 'Unknown' (got \"Maybe\")"),
    (podgroup_with("  schedulingPolicy: {basic: {}}\nstatus:\n  conditions: [{status: 'True'}]\n"),
     "PodGroup ns/g: status.conditions[0].type: field required"),
    (podgroup_with("  schedulingPolicy: {basic: {}}\nstatus:\n  conditions:\n"
                   "  - {type: PodGroupScheduled, status: 'True'}\n  - {type: PodGroupScheduled, status: 'False'}\n"),
     'PodGroup ns/g: status.conditions[1].type: duplicate type "PodGroupScheduled"'),
    ("apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {}\nspec: {schedulingPolicy: {basic: {}}}\n",
     "PodGroup <unnamed> (document 1 of x.yaml): metadata.name: field required"),
])
def test_podgroup_validation_messages(text, message):
    assert load_error(text) == message


@pytest.mark.parametrize("documents,message", [
    ([WORKLOAD, WORKLOAD], "duplicate Workload ml/training"),
    ([PODGROUP, PODGROUP], "duplicate PodGroup ml/training-worker-0"),
    ([WORKLOAD, V1ALPHA1_WORKLOAD.replace("jobset, namespace", "training, namespace")],
     "duplicate Workload ml/training"),
])
def test_duplicates(documents, message):
    assert load_error("---\n".join(documents)) == message


def test_same_names_in_other_namespaces_and_across_kinds_are_fine():
    objects = load_text("---\n".join([WORKLOAD, WORKLOAD.replace("namespace: ml", "namespace: other"),
                                      PODGROUP.replace("training-worker-0", "training")]))
    assert [w.key for w in objects.workloads] == ["ml/training", "other/training"]
    assert [g.key for g in objects.pod_groups] == ["ml/training"]


def test_other_groups_are_skipped_with_a_warning_and_unknown_versions_are_errors():
    # A PodGroup of another API group (scheduler-plugins') is another kind: skipped, with a warning. A version the
    # API server never served for these kinds is an error naming it (it used to be dropped without a word).
    objects = load_text(PODGROUP.replace("scheduling.k8s.io/v1alpha2", "scheduling.x-k8s.io/v1alpha1"), "w.yaml")
    assert objects.pod_groups == []
    assert objects.warnings == ["w.yaml: skipped 1 object of unsupported kind scheduling.x-k8s.io/v1alpha1 PodGroup"]
    with pytest.raises(InputError, match=r'^Workload ml/training: apiVersion: unknown version '
                                         r'"scheduling.k8s.io/v1beta1" of Workload \(served: scheduling.k8s.io/v1alpha1, '
                                         r'scheduling.k8s.io/v1alpha2\)$'):
        load_text(WORKLOAD.replace("v1alpha2", "v1beta1"), "w.yaml")
    with pytest.raises(InputError, match=r'apiVersion: unknown version "scheduling.k8s.io/v1alpha1" of PodGroup'):
        load_text(PODGROUP.replace("v1alpha2", "v1alpha1"), "w.yaml")


def test_messages_stay_on_one_line():
    message = load_error(workload_with("  - name: \"a\\nb\"\n    schedulingPolicy: {basic: {}}\n"))
    assert "\n" not in message and message.startswith("Workload ns/w: spec.podGroupTemplates[0].name: ")


# ---- v1alpha1 ----

def test_v1alpha1_workload_is_converted_to_v1alpha2():
    [workload] = load_text(V1ALPHA1_WORKLOAD).workloads
    assert isinstance(workload, Workload) and workload.converted_from == SCHEDULING_V1ALPHA1
    assert workload.key == "ml/jobset" and workload.spec.controller_ref.kind == "JobSet"
    job1, job2 = workload.spec.pod_group_templates
    assert (job1.name, job1.scheduling_policy.gang.min_count) == ("job-1", 2)
    assert job2.name == "job-2" and job2.scheduling_policy.basic is not None
    assert job1.scheduling_constraints is None and job1.resource_claims == [] and job1.disruption_mode is None
    # The converted object reads back as v1alpha2 unchanged.
    [again] = load_text(yaml.safe_dump(dump(workload))).workloads
    assert again.model_dump() == workload.model_dump() and again.converted_from is None


@pytest.mark.parametrize("text,message", [
    (V1ALPHA1_WORKLOAD.replace("policy: {basic: {}}", "policy: {}"),
     "Workload ml/jobset: spec.podGroups[1].policy: must specify one of: `basic`, `gang`"),
    (V1ALPHA1_WORKLOAD.replace("minCount: 2", "minCount: 0"),
     "Workload ml/jobset: spec.podGroups[0].policy.gang.minCount: must be greater than or equal to 1 (got 0)"),
    (V1ALPHA1_WORKLOAD.replace("job-2", "job-1"), 'Workload ml/jobset: spec.podGroups[1].name: duplicate name "job-1"'),
    (V1ALPHA1_WORKLOAD.replace("job-2", "Job2"),
     ("Workload ml/jobset: spec.podGroups[1].name: must be a DNS label: lowercase letters, digits and '-', "
     "starting and ending with a letter or digit (got \"Job2\")")),
    (V1ALPHA1_WORKLOAD.split("  podGroups:")[0] + "  podGroups: []\n",
     "Workload ml/jobset: spec.podGroups: must have at least one item"),
    (V1ALPHA1_WORKLOAD.replace("podGroups", "podGroupTemplates"), "Workload ml/jobset: spec.podGroups: field required"),
])
def test_v1alpha1_validation_messages(text, message):
    assert load_error(text) == message


def test_v1alpha1_workload_refs_get_one_podgroup_per_replica():
    text = "---\n".join([
        V1ALPHA1_WORKLOAD,
        pod("a", {"workloadRef": {"name": "jobset", "podGroup": "job-1", "podGroupReplicaKey": "0"}}),
        pod("b", {"workloadRef": {"name": "jobset", "podGroup": "job-1", "podGroupReplicaKey": "0"}}),
        pod("c", {"workloadRef": {"name": "jobset", "podGroup": "job-1", "podGroupReplicaKey": "1"}}),
        pod("d", {"workloadRef": {"name": "jobset", "podGroup": "job-2"}}),
    ])
    objects = load_text(text)
    assert [g.key for g in objects.pod_groups] == ["ml/jobset-job-1-0", "ml/jobset-job-1-1", "ml/jobset-job-2"]
    assert all(g.made_for_workload_ref for g in objects.pod_groups)
    first = objects.pod_groups[0]
    assert first.spec.scheduling_policy.gang.min_count == 2
    assert first.spec.pod_group_template_ref.workload.workload_name == "jobset"
    assert first.spec.pod_group_template_ref.workload.pod_group_template_name == "job-1"
    a, b, c, d = objects.pods
    assert a.spec.workload_ref.pod_group_replica_key == "0" and d.spec.workload_ref.pod_group_replica_key == ""
    assert pod_group_of(a, objects) is pod_group_of(b, objects) is first
    assert pod_group_of(c, objects).key == "ml/jobset-job-1-1"
    assert pod_group_of(d, objects).spec.scheduling_policy.basic is not None


def test_v1alpha2_templates_copy_every_setting_into_the_made_podgroup():
    objects = load_text(WORKLOAD + "---\n" + pod("a", {"workloadRef": {"name": "training", "podGroup": "worker"}}))
    [group] = objects.pod_groups
    assert group.key == "ml/training-worker"
    assert group.spec.topology_keys == ["topology.kubernetes.io/rack"]
    assert (group.spec.disruption_mode, group.spec.priority_class_name, group.spec.priority) == \
        ("PodGroup", "high", 1000)
    assert group.spec.resource_claims[0].name == "gpus"


def test_made_podgroup_name_taken_by_a_loaded_podgroup():
    text = "---\n".join([
        V1ALPHA1_WORKLOAD,
        PODGROUP.replace("training-worker-0", "jobset-job-1"),
        pod("a", {"workloadRef": {"name": "jobset", "podGroup": "job-1"}}),
    ])
    assert load_error(text) == \
        "Pod ml/a: spec.workloadRef: the PodGroup it converts to, ml/jobset-job-1, is already taken by another PodGroup"


def test_workload_ref_fields_are_required():
    assert load_error(pod("a", {"workloadRef": {"name": "jobset"}})) == \
        "Pod ml/a: spec.workloadRef.podGroup: field required"


# ---- a pod's group ----

def test_pod_group_of_resolves_scheduling_group_in_the_pods_namespace():
    text = "---\n".join([
        PODGROUP,
        pod("in-group", {"schedulingGroup": {"podGroupName": "training-worker-0"}}),
        pod("other-namespace", {"schedulingGroup": {"podGroupName": "training-worker-0"}}, namespace="dev"),
        pod("no-group", {}),
    ])
    objects = load_text(text)
    in_group, other, none = objects.pods
    assert pod_group_of(in_group, objects) is objects.pod_groups[0]
    assert pod_group_reason(in_group, objects) is None
    assert pod_group_of(other, objects) is None
    assert pod_group_reason(other, objects) == \
        'waiting for pods\'s pod group "training-worker-0" to appear in scheduling queue'
    assert resolve_pod_group(none, objects).group is None and resolve_pod_group(none, objects).reason is None


def test_dangling_workload_refs_wait_with_a_reason():
    text = "---\n".join([
        V1ALPHA1_WORKLOAD,
        pod("no-workload", {"workloadRef": {"name": "missing", "podGroup": "job-1"}}),
        pod("no-group", {"workloadRef": {"name": "jobset", "podGroup": "job-9"}}),
    ])
    objects = load_text(text)
    assert objects.pod_groups == []
    index = PodGroupIndex(objects)
    no_workload, no_group = objects.pods
    assert index.resolve(no_workload).group is None
    assert index.resolve(no_workload).reason == 'waiting for pod\'s workload "missing" (spec.workloadRef) to appear'
    assert index.resolve(no_group).reason == \
        'waiting for pod group "job-9" to appear in workload "jobset" (spec.workloadRef)'


def test_scheduling_group_wins_over_workload_ref():
    text = "---\n".join([PODGROUP, V1ALPHA1_WORKLOAD, pod("a", {
        "schedulingGroup": {"podGroupName": "training-worker-0"},
        "workloadRef": {"name": "jobset", "podGroup": "job-1"}})])
    objects = load_text(text)
    assert pod_group_of(objects.pods[0], objects).key == "ml/training-worker-0"
    # As a v1.36 API server, which no longer has workloadRef: dropped, with a warning.
    assert objects.warnings == ["Pod ml/a: spec.workloadRef: ignored, spec.schedulingGroup is set (v1.36 replaced "
                                "workloadRef with schedulingGroup)"]


# ---- List dumps ----

def test_kubectl_list_with_workloads_podgroups_and_pods():
    items = [yaml.safe_load(WORKLOAD), yaml.safe_load(PODGROUP), yaml.safe_load(V1ALPHA1_WORKLOAD),
             yaml.safe_load(pod("p", {"schedulingGroup": {"podGroupName": "training-worker-0"}}))]
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
    objects = load_text(text, "dump.json")
    assert [w.key for w in objects.workloads] == ["ml/training", "ml/jobset"]
    assert [g.key for g in objects.pod_groups] == ["ml/training-worker-0"]
    assert pod_group_of(objects.pods[0], objects) is objects.pod_groups[0]
    assert objects.warnings == []


def test_typed_lists_leave_kind_and_apiversion_off_their_items():
    def strip(text):
        item = yaml.safe_load(text)
        del item["kind"], item["apiVersion"]
        return item
    workloads = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "WorkloadList", "items": [strip(WORKLOAD)]}
    groups = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroupList", "items": [strip(PODGROUP)]}
    old = {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "WorkloadList", "items": [strip(V1ALPHA1_WORKLOAD)]}
    objects = load_text(yaml.safe_dump_all([workloads, groups, old]))
    assert [w.key for w in objects.workloads] == ["ml/training", "ml/jobset"]
    assert objects.workloads[1].converted_from == SCHEDULING_V1ALPHA1
    assert [g.key for g in objects.pod_groups] == ["ml/training-worker-0"]


def test_error_in_a_list_item_names_the_object():
    item = yaml.safe_load(PODGROUP)
    item["spec"]["schedulingPolicy"] = {}
    text = json.dumps({"kind": "PodGroupList", "apiVersion": "scheduling.k8s.io/v1alpha2", "items": [item]})
    assert load_error(text) == \
        "PodGroup ml/training-worker-0: spec.schedulingPolicy: must specify one of: `basic`, `gang`"


def test_podgroup_model_validates_directly():
    group = PodGroup.model_validate(yaml.safe_load(PODGROUP))
    assert group.spec.scheduling_policy.min_count == 4


def test_unquoted_yaml_condition_status_reads_as_the_api_string():
    objects = load_text("""apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: pg, namespace: ml}
spec: {schedulingPolicy: {gang: {minCount: 2}}}
status: {conditions: [{type: PodGroupScheduled, status: True, reason: Scheduled}]}
""")
    assert objects.pod_groups[0].status.conditions[0].status == "True"
