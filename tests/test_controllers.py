"""Workload controllers (cluster_models.controllers): the pods each creates (counts, names, labels, owner
references), what already exists in the input, OrderedReady arrival, DaemonSet targeting, CronJob, generateName,
and one exact line per validation error."""
import pytest
import yaml

from phalanx.cluster_models import InputError, load_text
from phalanx.cluster_models.controllers import POD_TEMPLATE_HASH, SUFFIX_ALPHABET, NameGenerator
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.records import BOUND

IMAGE = "registry.k8s.io/pause:3.10"

def node(name: str, cpu: str = "4", labels: dict | None = None, taints: list | None = None,
         unschedulable: bool = False) -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": {"taints": taints or [], "unschedulable": unschedulable},
            "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}}


def template(labels: dict, cpu: str = "1", **spec) -> dict:
    return {"metadata": {"labels": labels},
            "spec": {"containers": [{"name": "c", "image": IMAGE, "resources": {"requests": {"cpu": cpu}}}], **spec}}


def controller(kind: str, name: str, api: str = "apps/v1", namespace: str = "default", **spec) -> dict:
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def deployment(name: str = "web", replicas: int = 3, labels: dict | None = None, **spec) -> dict:
    labels = labels or {"app": name}
    return controller("Deployment", name, replicas=replicas, selector={"matchLabels": labels},
                      template=template(labels), **spec)


def stateful_set(name: str = "db", replicas: int = 3, cpu: str = "1", **spec) -> dict:
    return controller("StatefulSet", name, replicas=replicas, selector={"matchLabels": {"app": name}},
                      template=template({"app": name}, cpu), **spec)


def daemon_set(name: str = "agent", **pod_spec) -> dict:
    return controller("DaemonSet", name, selector={"matchLabels": {"app": name}},
                      template=template({"app": name}, "100m", **pod_spec))


def dump(*docs: dict) -> str:
    return yaml.safe_dump_all(docs)


def cluster(*docs: dict) -> Cluster:
    return Cluster.from_objects(load_text(dump(*docs)))


def load_error(*docs: dict) -> str:
    with pytest.raises(InputError) as caught:
        Cluster.from_objects(load_text(dump(*docs), "x.yaml"))
    return str(caught.value)


def refs(pod) -> list[tuple]:
    return [(r.api_version, r.kind, r.name, r.controller) for r in pod.metadata.owner_references]


def suffix_ok(name: str, base: str) -> bool:
    return name.startswith(base) and len(name) == len(base) + 5 and set(name[len(base):]) <= set(SUFFIX_ALPHABET)


# ---- Deployment, ReplicaSet, ReplicationController -------------------------------------------------------------

def test_deployment_makes_a_replica_set_whose_pods_carry_the_template_hash():
    state = cluster(node("n1"), deployment(replicas=3))
    pods = state.pending
    assert len(pods) == 3
    hash_ = pods[0].metadata.labels[POD_TEMPLATE_HASH]
    assert len(hash_) == 10 and set(hash_) <= set(SUFFIX_ALPHABET)
    rs_name = f"web-{hash_}"
    assert all(suffix_ok(p.metadata.name, rs_name + "-") for p in pods)
    assert len({p.metadata.name for p in pods}) == 3
    assert all(p.metadata.labels == {"app": "web", POD_TEMPLATE_HASH: hash_} for p in pods)
    assert all(refs(p) == [("apps/v1", "ReplicaSet", rs_name, True)] for p in pods)
    [rs] = state.default_selectors.owners.values()
    assert rs.metadata.name == rs_name and rs.metadata.owner_references[0].kind == "Deployment"
    assert rs.spec.selector.match_labels == {"app": "web", POD_TEMPLATE_HASH: hash_}
    assert pods[0].spec.containers[0].resources.requests.nanos("cpu") == 10**9


def test_names_are_the_same_on_every_load():
    first = [p.key for p in cluster(node("n1"), deployment(), daemon_set()).pending]
    again = [p.key for p in cluster(node("n1"), deployment(), daemon_set()).pending]
    assert first == again and len(set(first)) == 4


def test_replicas_share_one_validated_spec():
    pods = cluster(deployment(replicas=1000)).pending
    assert len(pods) == 1000 and len({id(p.spec) for p in pods}) == 1


def test_a_template_whose_affinity_reads_pod_labels_is_validated_per_pod():
    term = {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname",
            "matchLabelKeys": ["statefulset.kubernetes.io/pod-name"]}
    sts = stateful_set(replicas=2, podManagementPolicy="Parallel")
    sts["spec"]["template"]["spec"]["affinity"] = {"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    pods = cluster(sts).pending
    merged = [p.spec.affinity.pod_anti_affinity.required_during_scheduling_ignored_during_execution[0]
              .label_selector.match_expressions for p in pods]
    assert [[(r.key, r.values) for r in m] for m in merged] == [
        [("statefulset.kubernetes.io/pod-name", ["db-0"])], [("statefulset.kubernetes.io/pod-name", ["db-1"])]]


def test_paused_deployment_creates_nothing():
    assert cluster(deployment(paused=True)).pending == []


def test_a_deployment_whose_replica_set_is_in_the_input_leaves_the_pods_to_it():
    rs = controller("ReplicaSet", "web-abc", replicas=2, selector={"matchLabels": {"app": "web"}},
                    template=template({"app": "web"}))
    rs["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                                          "controller": True}]
    pods = cluster(deployment(replicas=5), rs).pending
    assert len(pods) == 2 and all(suffix_ok(p.metadata.name, "web-abc-") for p in pods)


def test_replica_set_counts_the_live_pods_it_already_controls():
    rs = controller("ReplicaSet", "rs", replicas=4, selector={"matchLabels": {"app": "x"}},
                    template=template({"app": "x"}))
    owned = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "controller": True}
    running = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "rs-aaaaa", "labels": {"app": "x"},
                                                               "ownerReferences": [owned]},
               "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": IMAGE}]}}
    done = {**running, "metadata": {**running["metadata"], "name": "rs-bbbbb"}, "status": {"phase": "Succeeded"}}
    state = cluster(node("n1"), rs, running, done)
    made = [p.metadata.name for p in state.pending]
    assert len(made) == 3 and "rs-aaaaa" not in made      # 4 replicas - 1 live (the Succeeded one does not count)


def test_replication_controller_selector_defaults_to_the_template_labels():
    rc = controller("ReplicationController", "rc", api="v1", replicas=2, template=template({"app": "old"}))
    pods = cluster(rc).pending
    assert len(pods) == 2 and all(refs(p) == [("v1", "ReplicationController", "rc", True)] for p in pods)
    assert cluster(rc).default_selectors.owners[("ReplicationController", "default", "rc")].spec.selector == {
        "app": "old"}


# ---- StatefulSet ----------------------------------------------------------------------------------------------

def test_stateful_set_pods_have_ordinal_names_and_labels():
    pods = cluster(stateful_set(replicas=3, podManagementPolicy="Parallel", ordinals={"start": 5})).pending
    assert [p.metadata.name for p in pods] == ["db-5", "db-6", "db-7"]
    assert [p.metadata.labels["statefulset.kubernetes.io/pod-name"] for p in pods] == ["db-5", "db-6", "db-7"]
    assert [p.metadata.labels["apps.kubernetes.io/pod-index"] for p in pods] == ["5", "6", "7"]
    assert all(refs(p) == [("apps/v1", "StatefulSet", "db", True)] for p in pods)
    assert len({p.metadata.labels["controller-revision-hash"] for p in pods}) == 1


def test_volume_claim_templates_become_claims_per_pod():
    sts = stateful_set(replicas=2, podManagementPolicy="Parallel",
                       volumeClaimTemplates=[{"metadata": {"name": "data"}, "spec": {
                           "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}])
    pods = cluster(sts).pending
    assert [p.spec.volumes for p in pods] == [
        [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}],
        [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-1"}}]]


def test_a_claim_template_that_is_no_object_is_a_one_line_error():
    # (found by fuzzing manifests: it used to raise AttributeError while stamping the pods)
    sts = stateful_set(replicas=1, volumeClaimTemplates=[{"metadata": "data"}])
    with pytest.raises(InputError) as err:
        cluster(sts)
    assert str(err.value).startswith("StatefulSet default/db: spec.volumeClaimTemplates[0].metadata: input should be "
                                     "a valid dictionary")


def binding_order(state: Cluster) -> list[str]:
    scheduler = Scheduler(state)
    scheduler.schedule()
    return [record.object.split("/")[1] for record in scheduler.records if record.kind == BOUND]


def test_ordered_ready_creates_each_pod_once_the_one_before_it_is_bound():
    # Two StatefulSets: OrderedReady's later pods arrive behind the other set's pods already waiting.
    ordered = binding_order(cluster(node("n1", "16"), stateful_set("a", 2), stateful_set("b", 2)))
    assert ordered == ["a-0", "b-0", "a-1", "b-1"]
    parallel = binding_order(cluster(node("n1", "16"), stateful_set("a", 2, podManagementPolicy="Parallel"),
                                     stateful_set("b", 2, podManagementPolicy="Parallel")))
    assert parallel == ["a-0", "a-1", "b-0", "b-1"]


def test_ordered_ready_stops_at_a_pod_that_cannot_run_and_says_so():
    state = cluster(node("n1", "2"), stateful_set("db", 3, cpu="3"))
    assert [p.metadata.name for p in state.pending] == ["db-0"]
    result = Scheduler(state).schedule()
    assert list(result.unschedulable) == ["default/db-0"]
    assert ("StatefulSet default/db: 2 pods not created (default/db-1, ...): podManagementPolicy OrderedReady "
            "creates each pod once the one before it runs, and default/db-0 is not bound") in result.warnings


def test_stateful_set_creates_only_missing_ordinals():
    owned = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "controller": True}
    existing = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "db-0", "labels": {"app": "db"},
                                                                "ownerReferences": [owned]},
                "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": IMAGE}]}}
    state = cluster(node("n1", "16"), existing, stateful_set("db", 3))
    assert [p.metadata.name for p in state.pending] == ["db-1"]      # db-2 waits for db-1 (OrderedReady)
    assert binding_order(state) == ["db-1", "db-2"]


# ---- DaemonSet ------------------------------------------------------------------------------------------------

def test_daemon_set_runs_on_every_eligible_node_pinned_by_match_fields():
    nodes = [node("n1"), node("n2", unschedulable=True,
                              taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]),
             node("n3", taints=[{"key": "gpu", "effect": "NoSchedule"}]),
             node("n4", taints=[{"key": "gpu", "effect": "PreferNoSchedule"}]),
             node("n5", labels={"pool": "edge"})]
    state = cluster(*nodes, daemon_set())
    pods = state.pending
    pinned = [p.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
              .node_selector_terms[0].match_fields[0].values for p in pods]
    assert pinned == [["n1"], ["n2"], ["n4"], ["n5"]]
    assert all(suffix_ok(p.metadata.name, "agent-") for p in pods)
    assert all(refs(p) == [("apps/v1", "DaemonSet", "agent", True)] for p in pods)
    keys = [(t.key, t.effect) for t in pods[0].spec.tolerations]
    assert keys == [("node.kubernetes.io/not-ready", "NoExecute"), ("node.kubernetes.io/unreachable", "NoExecute"),
                    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
                    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
                    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
                    ("node.kubernetes.io/unschedulable", "NoSchedule")]
    result = Scheduler(state).schedule()
    assert sorted(result.bindings.values()) == ["n1", "n2", "n4", "n5"]
    assert {p.key: n for p, n in zip(pods, ["n1", "n2", "n4", "n5"])} == result.bindings


def test_daemon_set_node_selector_and_affinity_choose_nodes_and_the_affinity_is_replaced():
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 5, "preference": {"matchExpressions": [{"key": "ssd", "operator": "Exists"}]}}]}}
    nodes = [node("n1", labels={"zone": "a", "pool": "x"}), node("n2", labels={"zone": "b", "pool": "x"}),
             node("n3", labels={"zone": "a"})]
    pods = cluster(*nodes, daemon_set(nodeSelector={"pool": "x"}, affinity=affinity, hostNetwork=True)).pending
    assert len(pods) == 1
    na = pods[0].spec.affinity.node_affinity
    [term] = na.required_during_scheduling_ignored_during_execution.node_selector_terms
    assert term.match_expressions == [] and term.match_fields[0].values == ["n1"]
    assert len(na.preferred_during_scheduling_ignored_during_execution) == 1
    assert pods[0].spec.node_selector == {"pool": "x"}
    assert pods[0].spec.tolerations[-1].key == "node.kubernetes.io/network-unavailable"


def test_daemon_set_skips_nodes_that_already_run_its_pod():
    owned = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "controller": True}
    there = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "agent-x", "labels": {"app": "agent"},
                                                             "ownerReferences": [owned]},
             "spec": {"nodeName": "n2", "containers": [{"name": "c", "image": IMAGE}]}}
    pods = cluster(node("n1"), node("n2"), there, daemon_set()).pending
    assert [p.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
            .node_selector_terms[0].match_fields[0].values for p in pods] == [["n1"]]


# ---- CronJob --------------------------------------------------------------------------------------------------

def cron_job(name: str = "nightly", **spec) -> dict:
    job_template = template({"app": "n"}, restartPolicy="OnFailure")
    return controller("CronJob", name, api="batch/v1", schedule="0 3 * * *",
                      jobTemplate={"metadata": {"labels": {"team": "x"}},
                                   "spec": {"parallelism": 2, "template": job_template}}, **spec)


def test_cron_job_runs_its_job_template_once():
    cj = cron_job()
    cj["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    state = cluster(cj)
    [job] = state.jobs
    assert job.metadata.name == f"nightly-{1767225600 // 60}"
    assert job.metadata.owner_references[0].kind == "CronJob" and job.metadata.labels == {"team": "x"}
    assert [p.metadata.name for p in state.pending] == [f"nightly-{1767225600 // 60}-0",
                                                         f"nightly-{1767225600 // 60}-1"]
    assert cluster(cron_job(suspend=True)).pending == []


# ---- generateName ---------------------------------------------------------------------------------------------

def test_generate_name_is_deterministic_and_never_reuses_a_name():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "w-"}, "spec": {"containers": [
        {"name": "c", "image": IMAGE}]}}
    names = [p.metadata.name for p in load_text(dump(*[pod] * 50)).pods]
    assert names == [p.metadata.name for p in load_text(dump(*[pod] * 50)).pods]
    assert len(set(names)) == 50 and all(suffix_ok(n, "w-") for n in names)
    other_ns = {**pod, "metadata": {"generateName": "w-", "namespace": "b"}}
    assert load_text(dump(pod, other_ns)).pods[1].metadata.name == names[0]   # names are per namespace


def test_generator_skips_taken_names_and_cuts_long_bases():
    taken = set()
    first = NameGenerator(taken).generate("Pod", "default", "a-")
    again = NameGenerator({("Pod", f"default/{first}")}).generate("Pod", "default", "a-")
    assert again != first and ("Pod", f"default/{first}") in taken
    assert len(NameGenerator(set()).generate("Pod", "default", "x" * 80)) == 63


def test_a_generated_name_taken_again_by_a_later_object_is_an_error():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "w-"}, "spec": {"containers": [
        {"name": "c", "image": IMAGE}]}}
    [made] = load_text(dump(pod)).pods
    clash = {**pod, "metadata": {"name": made.metadata.name}}
    assert load_error(pod, clash) == (f"duplicate Pod {made.key}: an earlier object's generateName produced this "
                                      "name; name one of them differently")


# ---- validation: one line, object and field named -------------------------------------------------------------

@pytest.mark.parametrize("doc, message", [
    (deployment(labels={"app": "web"}) | {"spec": {**deployment()["spec"], "selector": {"matchLabels": {"app": "x"}}}},
     'Deployment default/web: spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not '
     'match template `labels`'),
    (deployment() | {"spec": {**deployment()["spec"], "selector": {}}},
     "Deployment default/web: spec.selector: Invalid value: {}: empty selector is invalid for deployment"),
    (deployment() | {"spec": {**deployment()["spec"], "replicas": -1}},
     "Deployment default/web: spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
    (deployment() | {"spec": {k: v for k, v in deployment()["spec"].items() if k != "selector"}},
     "Deployment default/web: spec.selector: field required"),
    (deployment() | {"spec": {**deployment()["spec"], "template": template({"app": "web"}, "12x")}},
     'Deployment default/web: spec.template.spec.containers[0].resources.requests.cpu: invalid quantity "12x"'),
    (stateful_set("a.b"), "StatefulSet default/a.b: metadata.name: must be a DNS label: lowercase letters, digits and "
                          "'-', starting and ending with a letter or digit (got \"a.b\")"),
    (stateful_set(podManagementPolicy="Sometimes", replicas=-1),
     "StatefulSet default/db: spec.podManagementPolicy: Invalid value: \"Sometimes\": must be 'OrderedReady' or "
     "'Parallel'"),
    (stateful_set(replicas=-1, ordinals={"start": -3}),
     "StatefulSet default/db: spec.ordinals.start: Invalid value: -3: must be greater than or equal to 0"),
    (stateful_set(replicas=-1, minReadySeconds=-2),
     "StatefulSet default/db: spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
    (stateful_set() | {"spec": {**stateful_set()["spec"], "selector": {}}},
     "StatefulSet default/db: spec.selector: Invalid value: {}: empty selector is invalid for statefulset"),
    (daemon_set() | {"spec": {**daemon_set()["spec"], "selector": {"matchLabels": {"app": "B@d"}}}},
     "DaemonSet default/agent: spec.selector.matchLabels: a valid label must be an empty string or consist of "
     "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
     "'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?') "
     "(got \"B@d\")"),
    # ValidateReplicationControllerSpec: the selector (defaulted from the template's labels) before the template
    (controller("ReplicationController", "rc", api="v1"), "ReplicationController default/rc: spec.selector: "
                                                          "Required value"),
    (cron_job("c" * 53), f'CronJob default/{"c" * 53}: metadata.name: Invalid value: "{"c" * 53}": must be no more '
                         "than 52 characters"),
    (daemon_set() | {"spec": {**daemon_set()["spec"], "selector": {"matchExpressions": [
        {"key": "app", "operator": "In", "values": ["ok", "-no"]}]}}},
     "DaemonSet default/agent: spec.selector.matchExpressions[0].values[1]: a valid label must be an empty string or "
     "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
     "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
     "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?') "
     '(got "-no")'),
    ({"apiVersion": "apps/v1beta9", "kind": "Deployment", "metadata": {"name": "x"}, "spec": {}},
     'Deployment default/x: apiVersion: unknown version "apps/v1beta9" of Deployment (served: apps/v1, apps/v1beta2, '
     "apps/v1beta1)"),
    ({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "1web"}},
     "Service default/1web: metadata.name: must be a DNS-1035 label: lowercase letters, digits and '-', starting "
     'with a letter and ending with a letter or digit (got "1web")'),
])
def test_invalid_controllers_are_one_line_errors(doc, message):
    assert load_error(doc) == message


def test_a_template_pod_the_api_server_rejects_names_the_controller_and_the_template_field():
    sts = stateful_set()
    sts["spec"]["template"]["spec"]["containers"].append({"name": "c", "image": IMAGE})
    assert load_error(sts) == 'StatefulSet default/db: spec.template.spec.containers[1].name: Duplicate value: "c"'


def test_generate_name_problems_name_the_field():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "Bad_"}, "spec": {}}
    assert load_error(pod).endswith("metadata.generateName: must be a DNS subdomain: lowercase letters, digits, "
                                    "'-' and '.', each '.'-separated part starting and ending with a letter or "
                                    f'digit (got "{load_error(pod).split(chr(34))[-2]}")')
    assert load_error(pod).split(chr(34))[-2].startswith("Bad_")


def test_apps_kinds_of_other_groups_are_skipped_with_a_warning():
    # A custom resource's group has a dot; extensions/v1beta1 no API server serves since v1.16 (kubectl: no matches).
    objects = load_text(dump({"apiVersion": "apps.example.com/v1", "kind": "Deployment", "metadata": {"name": "x"}}),
                        "crd.yaml")
    assert objects.controllers == [] and objects.warnings == [
        "crd.yaml: skipped 1 object of unsupported kind apps.example.com/v1 Deployment"]
    with pytest.raises(InputError, match='no matches for kind "Deployment" in version "extensions/v1beta1"'):
        load_text(dump({"apiVersion": "extensions/v1beta1", "kind": "Deployment", "metadata": {"name": "x"}}))


def test_the_cli_reports_a_bad_controller_in_one_line_and_schedules_nothing(tmp_path):
    from typer.testing import CliRunner

    from phalanx.cli import app
    bad = deployment()
    bad["spec"]["template"] = template({"app": "web"}, "12x")
    (tmp_path / "c.yaml").write_text(dump(node("n1"), bad))
    out = CliRunner().invoke(app, ["schedule", "--cluster", str(tmp_path / "c.yaml")])
    assert out.exit_code == 2 and "Traceback" not in out.output
    assert out.stderr.strip() == ('error: Deployment default/web: spec.template.spec.containers[0].resources.requests'
                                  '.cpu: invalid quantity "12x"')
    assert out.stdout == ""


def test_explain_reads_the_pod_itself_not_the_first_pod_of_its_shape():
    from phalanx.sched import explain_pod
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
               "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}
    pod = lambda name, app: {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": app}},  # noqa: E731
                             "spec": {"containers": [{"name": "c", "image": IMAGE,
                                                      "resources": {"requests": {"cpu": "1"}}}]}}
    state = cluster(node("n1"), node("n2"), service, pod("w", "web"), pod("o", "other"))
    scheduler = Scheduler(state)
    web, other = state.pending
    assert scheduler.shape_of(web) is scheduler.shape_of(other)          # one spec: one shape, web its first pod
    spread = lambda report: report["nodes"][0]["scores"]["PodTopologySpread"]  # noqa: E731
    assert "skipped" not in spread(explain_pod(scheduler, web))          # the Service selects web: spread
    assert spread(explain_pod(scheduler, other)).get("skipped")          # nothing selects other: no default spreading


def test_a_generate_name_that_is_not_a_string():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": 5},
           "spec": {"containers": [{"name": "c", "image": IMAGE}]}}
    assert load_error(pod) == ("Pod <unnamed> (document 1 of x.yaml): metadata.generateName: expected a string, got a "
                               "number")


def test_controllers_added_while_scheduling_make_their_pods_and_feed_default_spreading():
    """Scheduler.add_controllers: a Deployment's ReplicaSet and pods arrive as at load, the ReplicaSet selects them
    for the system default spreading (one per node on three equal nodes); what the API server would refuse
    changes nothing."""
    from phalanx.cluster_models.controllers import Deployment
    sched = Scheduler(cluster(*[node(f"n{i}", cpu="8") for i in range(3)]))
    pods = sched.add_controllers([Deployment.model_validate(deployment("web"))])
    assert len({p.key for p in pods}) == 3
    assert {(r.kind, r.name.startswith("web-")) for p in pods for r in p.metadata.owner_references} == \
        {("ReplicaSet", True)}
    assert sched.cluster.default_selectors.selector(pods[0]) is not None
    sched.run_until_idle()
    assert sorted(sched.cluster.tensors.node_of(p.key) for p in pods) == [0, 1, 2]
    before = dict(sched.cluster.default_selectors.owners)
    bad = deployment("bad")
    bad["spec"]["template"]["spec"]["priorityClassName"] = "missing"
    with pytest.raises(InputError, match="missing"):
        sched.add_controllers([Deployment.model_validate(bad)])
    assert sched.cluster.default_selectors.owners == before and len(sched.arrival) == 3
