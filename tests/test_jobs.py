"""batch/v1 Job and the v1.36 Job controller (WorkloadWithJob): the gang-scheduled Job's Workload, PodGroup and
pods, plain pods for every other Job, suspension, one exact message per validation error, loading, expand_jobs
and owned_by."""
from dataclasses import fields

import pytest
import yaml

from phalanx.cluster_models import (
    ClusterObjects,
    InputError,
    Job,
    expand_jobs,
    job_eligible_for_gang,
    job_objects,
    load_text,
    owned_by,
    pod_group_of,
)


IMAGE = "registry.k8s.io/pause:3.10"
IMAGE_YAML = f"image: {IMAGE}"       # the same in a YAML flow mapping
# The least Job template the API takes.
MINIMAL = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": IMAGE}]}}


def job_yaml(name: str = "train", namespace: str = "ml", uid: str | None = None, **spec) -> str:
    metadata = {"name": name, "namespace": namespace, **({"uid": uid} if uid else {})}
    spec.setdefault("template", {
        "metadata": {"labels": {"app": "trainer"}, "annotations": {"note": "x"}},
        "spec": {"restartPolicy": "Never", "priorityClassName": "high",
                 "containers": [{"name": "c", "image": IMAGE,
                                 "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}}}]}})
    return yaml.safe_dump({"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata, "spec": spec})


def load_job(**kwargs) -> Job:
    [job] = load_text(job_yaml(**kwargs)).jobs
    return job


def load_error(text: str) -> str:
    with pytest.raises(InputError) as caught:
        load_text(text, "x.yaml")
    return str(caught.value)


def refs(obj) -> list[tuple]:
    return [(r.api_version, r.kind, r.name, r.uid, r.controller) for r in obj.metadata.owner_references]


JOB_REF = ("batch/v1", "Job", "train", "", True)

# ---- a gang-scheduled Job ----


def test_indexed_fully_parallel_job_gets_workload_podgroup_and_grouped_pods():
    job = load_job(parallelism=64, completions=64, completionMode="Indexed")
    assert job_eligible_for_gang(job)
    made = job_objects(job)

    workload = made.workload
    assert workload.key == "ml/train" and refs(workload) == [JOB_REF]
    ref = workload.spec.controller_ref
    assert (ref.api_group, ref.kind, ref.name) == ("batch", "Job", "train")
    [template] = workload.spec.pod_group_templates
    assert template.name == "workers" and template.scheduling_policy.gang.min_count == 64
    assert template.scheduling_policy.basic is None

    group = made.pod_group
    assert group.key == "ml/train-workers"
    assert refs(group) == [JOB_REF, ("scheduling.k8s.io/v1alpha2", "Workload", "train", "", None)]
    template_ref = group.spec.pod_group_template_ref.workload
    assert (template_ref.workload_name, template_ref.pod_group_template_name) == ("train", "workers")
    assert group.spec.scheduling_policy.gang.min_count == 64 and group.spec.scheduling_policy.basic is None
    # upstream copies only the scheduling policy into the PodGroup
    assert group.spec.priority_class_name == "" and group.status.conditions == []

    assert len(made.pods) == 64
    assert [p.key for p in made.pods[:3]] + [made.pods[-1].key] == ["ml/train-0", "ml/train-1", "ml/train-2",
                                                                    "ml/train-63"]
    last = made.pods[63]
    assert last.metadata.labels == {"app": "trainer", "batch.kubernetes.io/job-name": "train", "job-name": "train",
                                    "batch.kubernetes.io/job-completion-index": "63"}
    assert last.metadata.annotations == {"note": "x", "batch.kubernetes.io/job-completion-index": "63"}
    assert refs(last) == [JOB_REF]
    assert all(p.spec.scheduling_group.pod_group_name == "train-workers" for p in made.pods)


def test_pods_are_defaulted_like_loaded_pods_and_do_not_share_the_template():
    job = load_job(parallelism=2, completions=2, completionMode="Indexed")
    first, second = job_objects(job).pods
    # SetDefaults_Pod: requests from limits (cpu in millicores, memory in bytes); schedulerName; Pending
    assert dict(first.spec.containers[0].resources.requests) == {"cpu": 500, "memory": 1073741824}
    assert first.spec.scheduler_name == "default-scheduler" and first.status.phase == "Pending"
    assert first.spec.priority_class_name == "high"
    assert dict(job.spec.template.spec.containers[0].resources.requests) == {}
    assert job.spec.template.spec.scheduling_group is None
    first.spec.containers[0].resources.requests["cpu"] = 7
    assert second.spec.containers[0].resources.requests["cpu"] == 500


# ---- every other Job: plain pods ----

@pytest.mark.parametrize("spec,names,indexes,group", [
    ({"parallelism": 1, "completions": 1, "completionMode": "Indexed"}, ["train-0"], ["0"], None),
    ({"parallelism": 4, "completions": 4}, ["train-0", "train-1", "train-2", "train-3"], None, None),
    ({"parallelism": 4, "completions": 4, "completionMode": "NonIndexed"},
     ["train-0", "train-1", "train-2", "train-3"], None, None),
    ({"parallelism": 3, "completions": 10, "completionMode": "Indexed"},
     ["train-0", "train-1", "train-2"], ["0", "1", "2"], None),
    ({"parallelism": 4, "completions": 2, "completionMode": "Indexed"}, ["train-0", "train-1"], ["0", "1"], None),
    ({"parallelism": 3}, ["train-0", "train-1", "train-2"], None, None),  # work queue: completions unset
    ({"parallelism": 0, "completions": 5}, [], None, None),
    ({"parallelism": 2, "completions": 0, "completionMode": "Indexed"}, [], None, None),
    ({}, ["train-0"], None, None),
    ({"parallelism": 2, "completions": 2, "completionMode": "Indexed",
      "template": {"spec": {"schedulingGroup": {"podGroupName": "from-jobset"}, "restartPolicy": "Never",
                            "containers": [{"name": "c", "image": IMAGE}]}}},
     ["train-0", "train-1"], ["0", "1"], "from-jobset"),
])
def test_jobs_that_are_not_gang_scheduled_get_plain_pods(spec, names, indexes, group):
    job = load_job(**spec)
    assert not job_eligible_for_gang(job)
    made = job_objects(job)
    assert made.workload is None and made.pod_group is None
    assert [p.metadata.name for p in made.pods] == names
    labels = [p.metadata.labels.get("batch.kubernetes.io/job-completion-index") for p in made.pods]
    annotations = [p.metadata.annotations.get("batch.kubernetes.io/job-completion-index") for p in made.pods]
    assert labels == annotations == (indexes or [None] * len(names))
    assert all(p.metadata.labels["job-name"] == "train" and refs(p) == [JOB_REF] for p in made.pods)
    assert [p.spec.scheduling_group.pod_group_name if p.spec.scheduling_group else None for p in made.pods] == \
        [group] * len(names)


def test_counts_left_out_default_to_one_pod_run_once():
    spec = load_job(template=MINIMAL).spec
    assert (spec.parallelism, spec.completions, spec.completion_mode, spec.suspend) == (1, 1, "NonIndexed", False)
    # parallelism alone leaves completions unset (a work queue)
    assert load_job(parallelism=5, template=MINIMAL).spec.completions is None
    # an Indexed Job with neither count is valid: completions defaults to 1 before validation
    assert load_job(completionMode="Indexed", template=MINIMAL).spec.completions == 1


# ---- suspension ----

def test_suspended_gang_job_keeps_workload_and_podgroup_but_has_no_pods():
    made = job_objects(load_job(parallelism=8, completions=8, completionMode="Indexed", suspend=True))
    assert made.workload.key == "ml/train" and made.pod_group.key == "ml/train-workers"
    assert made.pod_group.spec.scheduling_policy.gang.min_count == 8
    assert made.pods == []


def test_suspended_plain_job_makes_nothing():
    made = job_objects(load_job(parallelism=8, completions=8, suspend=True))
    assert (made.workload, made.pod_group, made.pods) == (None, None, [])


# ---- validation: one exact message per rule ----

def job_with(spec: str, name: str = "j") -> str:
    return f"apiVersion: batch/v1\nkind: Job\nmetadata: {{name: {name}, namespace: ns}}\n{spec}"


T = "  template: {spec: {restartPolicy: Never, containers: [{name: c, image: registry.k8s.io/pause:3.10}]}}\n"


@pytest.mark.parametrize("text,message", [
    (job_with(f"spec:\n  parallelism: -1\n{T}"),
     "Job ns/j: spec.parallelism: must be greater than or equal to 0 (got -1)"),
    (job_with(f"spec:\n  completions: -2\n{T}"),
     "Job ns/j: spec.completions: must be greater than or equal to 0 (got -2)"),
    (job_with(f"spec:\n  parallelism: 2147483648\n{T}"),
     "Job ns/j: spec.parallelism: input should be less than or equal to 2147483647 (got 2147483648)"),
    (job_with(f"spec:\n  completions: 2147483648\n{T}"),
     "Job ns/j: spec.completions: input should be less than or equal to 2147483647 (got 2147483648)"),
    (job_with(f"spec:\n  parallelism: 2.5\n{T}"),
     "Job ns/j: spec.parallelism: input should be a valid integer (got 2.5)"),
    (job_with(f"spec:\n  completionMode: Sequential\n{T}"),
     "Job ns/j: spec.completionMode: input should be 'NonIndexed' or 'Indexed' (got \"Sequential\")"),
    (job_with(f"spec:\n  suspend: maybe\n{T}"),
     "Job ns/j: spec.suspend: input should be a valid boolean (got \"maybe\")"),
    (job_with(f"spec:\n  completionMode: Indexed\n  parallelism: 4\n{T}"),
     "Job ns/j: spec.completions: field required when completionMode is Indexed"),
    (job_with(f"spec:\n  completionMode: Indexed\n  parallelism: 100001\n  completions: 100001\n{T}"),
     "Job ns/j: spec.parallelism: must be less than or equal to 100000 when completionMode is Indexed (got 100001)"),
    (job_with("spec: {}\n"), "Job ns/j: spec.template: field required"),
    (job_with(""), "Job ns/j: spec: field required"),
    (job_with(f"spec:\n{T}", name="Train"),
     ("Job ns/Train: metadata.name: must be a DNS subdomain: lowercase letters, digits, '-' and '.', each "
      "'.'-separated part starting and ending with a letter or digit (got \"Train\")")),
    (job_with(f"spec:\n{T}", name="a" * 64),
     (f"Job ns/{'a' * 64}: metadata.name: must be no more than 63 characters, as it is the value of the pods' "
      "batch.kubernetes.io/job-name label (got 64)")),
    (job_with(f"spec:\n  completionMode: Indexed\n  completions: 1000\n{T}", name="a" * 60),
     (f"Job ns/{'a' * 60}: metadata.name: will not be able to create pods: the hostname of index 999 must be a "
      f"DNS label of at most 63 characters (got 64: \"{'a' * 60}-999\")")),
    (job_with(f"spec:\n  completionMode: Indexed\n  completions: 2\n{T}", name="a.b"),
     ("Job ns/a.b: metadata.name: will not be able to create pods: the hostname of index 1 must be a DNS label: "
      "lowercase letters, digits and '-', starting and ending with a letter or digit (got \"a.b-1\")")),
    ("apiVersion: batch/v1\nkind: Job\nmetadata: {}\nspec: {template: {}}\n",
     "Job <unnamed> (document 1 of x.yaml): metadata.name: field required"),
    (job_with(f"spec:\n{T}") + "---\n" + job_with(f"spec:\n{T}"), "duplicate Job ns/j"),
])
def test_validation_messages(text, message):
    assert load_error(text) == message


def test_hostname_rule_needs_an_indexed_job_with_completions():
    # 63 characters plus "-0" would not be a DNS label, but these Jobs create no indexed hostnames
    assert load_job(name="a" * 63, completionMode="Indexed", completions=0, template=MINIMAL).spec.completions == 0
    assert load_job(name="a" * 63, parallelism=3, completions=3, template=MINIMAL).metadata.name == "a" * 63
    assert load_job(name="a.b", parallelism=3, template=MINIMAL).key == "ml/a.b"


# ---- loading ----

def test_load_text_keeps_jobs_unexpanded():
    text = "---\n".join([
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n",
        job_yaml(parallelism=2, completions=2, completionMode="Indexed"),
        job_yaml(name="other", namespace="default", template=MINIMAL),
    ])
    objects = load_text(text)
    assert [j.key for j in objects.jobs] == ["ml/train", "default/other"]
    assert objects.pods == [] and objects.workloads == [] and objects.pod_groups == []
    job = objects.jobs[0]
    assert (job.spec.parallelism, job.spec.completions, job.spec.completion_mode) == (2, 2, "Indexed")
    assert job.spec.template.metadata.labels == {"app": "trainer"}
    assert job.spec.template.spec.containers[0].name == "c"


def test_job_list_items_leave_kind_off_and_namespace_defaults():
    text = ("apiVersion: batch/v1\nkind: JobList\nitems:\n"
            "- metadata: {name: a}\n  spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, %s}]}}}\n"
            "- metadata: {name: b, namespace: x}\n"
            "  spec: {parallelism: 2, template: {spec: {restartPolicy: Never, containers: [{name: c, %s}]}}}\n"
            % (IMAGE_YAML, IMAGE_YAML))
    assert [j.key for j in load_text(text).jobs] == ["default/a", "x/b"]


def test_other_groups_are_skipped_and_unknown_batch_versions_are_errors():
    objects = load_text(job_yaml().replace("batch/v1", "example.com/v1"), "jobs.yaml")
    assert objects.jobs == []
    assert objects.warnings == ["jobs.yaml: skipped 1 object of unsupported kind example.com/v1 Job"]
    with pytest.raises(InputError, match=r'^Job ml/train: apiVersion: unknown version "batch/v1beta1" of Job '
                                         r'\(served: batch/v1\)$'):
        load_text(job_yaml().replace("batch/v1", "batch/v1beta1"), "jobs.yaml")


def test_jobs_is_the_last_cluster_objects_field():
    names = [f.name for f in fields(ClusterObjects)]
    # Only the DRA kinds (cluster_models.dra), Namespaces, PodDisruptionBudgets, Services, controllers and the
    # storage kinds (cluster_models.storage) were appended after it, so positional constructions keep working.
    assert names[names.index("jobs"):] == ["jobs", "device_classes", "resource_slices", "resource_claims",
                                           "resource_claim_templates", "namespaces", "pdbs", "services",
                                           "controllers", "persistent_volumes", "persistent_volume_claims",
                                           "storage_classes", "csi_nodes", "csi_drivers", "csi_storage_capacities",
                                           "volume_attachments"]
    assert ClusterObjects(nodes=[], pods=[], priority_classes=[], warnings=[]).jobs == []


# ---- expand_jobs ----

EXISTING = """\
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: ml}
spec: {containers: [{name: c, image: registry.k8s.io/pause:3.10}]}
---
apiVersion: scheduling.k8s.io/v1alpha2
kind: Workload
metadata: {name: w, namespace: ml}
spec:
  podGroupTemplates: [{name: t, schedulingPolicy: {basic: {}}}]
---
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: g, namespace: ml}
spec: {schedulingPolicy: {basic: {}}}
"""


def test_expand_jobs_appends_every_jobs_objects_after_the_existing_ones():
    objects = load_text("---\n".join([EXISTING, job_yaml(parallelism=3, completions=3, completionMode="Indexed"),
                                      job_yaml(name="plain", parallelism=2, template=MINIMAL)]))
    expanded = expand_jobs(objects)
    assert [p.key for p in expanded.pods] == ["ml/web", "ml/train-0", "ml/train-1", "ml/train-2", "ml/plain-0",
                                              "ml/plain-1"]
    assert [w.key for w in expanded.workloads] == ["ml/w", "ml/train"]
    assert [g.key for g in expanded.pod_groups] == ["ml/g", "ml/train-workers"]
    assert [j.key for j in expanded.jobs] == ["ml/train", "ml/plain"]
    assert pod_group_of(expanded.pods[1], expanded) is expanded.pod_groups[1]
    assert pod_group_of(expanded.pods[4], expanded) is None
    # the input is left as it was
    assert [p.key for p in objects.pods] == ["ml/web"] and len(objects.workloads) == len(objects.pod_groups) == 1
    assert expanded.pods is not objects.pods and expanded.nodes is not objects.nodes


@pytest.mark.parametrize("existing,message", [
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: train-1, namespace: ml}\n"
     f"spec: {{containers: [{{name: c, {IMAGE_YAML}}}]}}\n",
     "Job ml/train: the Pod it creates, ml/train-1, is already taken by another Pod"),
    (("apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: train-workers, namespace: ml}\n"
      "spec: {schedulingPolicy: {basic: {}}}\n"),
     "Job ml/train: the PodGroup it creates, ml/train-workers, is already taken by another PodGroup"),
    (("apiVersion: scheduling.k8s.io/v1alpha2\nkind: Workload\nmetadata: {name: train, namespace: ml}\n"
      "spec: {podGroupTemplates: [{name: t, schedulingPolicy: {basic: {}}}]}\n"),
     "Job ml/train: the Workload it creates, ml/train, is already taken by another Workload"),
])
def test_expand_jobs_name_clash(existing, message):
    objects = load_text("---\n".join([existing, job_yaml(parallelism=2, completions=2, completionMode="Indexed")]))
    with pytest.raises(InputError) as caught:
        expand_jobs(objects)
    assert str(caught.value) == message


def test_same_names_in_another_namespace_do_not_clash_and_expanding_twice_does():
    objects = load_text("---\n".join([
        "apiVersion: v1\nkind: Pod\nmetadata: {name: train-0, namespace: other}\n"
        f"spec: {{containers: [{{name: c, {IMAGE_YAML}}}]}}\n",
        job_yaml(parallelism=1)]))
    once = expand_jobs(objects)
    assert [p.key for p in once.pods] == ["other/train-0", "ml/train-0"]
    with pytest.raises(InputError, match="^Job ml/train: the Pod it creates, ml/train-0, is already taken"):
        expand_jobs(once)


# ---- owned_by ----

def test_owned_by_matches_the_controller_reference_of_the_job():
    job = load_job(uid="u-1", parallelism=2, completions=2, completionMode="Indexed")
    made = job_objects(job)
    assert all(owned_by(obj, job) for obj in [made.workload, made.pod_group, *made.pods])
    assert made.pods[0].metadata.owner_references[0].uid == "u-1"

    other_name = load_job(name="train2", uid="u-1", parallelism=2)
    other_namespace = load_job(namespace="ml2", uid="u-1", parallelism=2)
    recreated = load_job(uid="u-2", parallelism=2)
    no_uid = load_job(parallelism=2)
    assert not owned_by(made.pods[0], other_name)
    assert not owned_by(made.pods[0], other_namespace)
    assert not owned_by(made.pods[0], recreated)
    assert owned_by(made.pods[0], no_uid)


@pytest.mark.parametrize("ref,owned", [
    ({"apiVersion": "batch/v1", "kind": "Job", "name": "train", "controller": True}, True),
    ({"apiVersion": "batch/v1", "kind": "Job", "name": "train"}, False),  # not the controller
    ({"apiVersion": "batch/v1", "kind": "Job", "name": "train", "controller": False}, False),
    ({"apiVersion": "example.com/v1", "kind": "Job", "name": "train", "controller": True}, False),
    ({"apiVersion": "batch/v1", "kind": "CronJob", "name": "train", "controller": True}, False),
])
def test_owned_by_reads_loaded_owner_references(ref, owned):
    pod_text = yaml.safe_dump({"apiVersion": "v1", "kind": "Pod",
                               "spec": {"containers": [{"name": "c", "image": IMAGE}]},
                               "metadata": {"name": "p", "namespace": "ml", "ownerReferences": [ref]}})
    [pod] = load_text(pod_text).pods
    assert owned_by(pod, load_job()) is owned
