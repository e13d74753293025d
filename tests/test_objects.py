"""The models: manifest names, null handling, and the API-server defaulting the scheduler relies on."""
from datetime import datetime, timezone

import pytest
from pydantic import ValidationError

from phalanx.cluster_models import Node, Pod, PriorityClass, ResourceList

Mi = 2**20


def pod(spec=None, **metadata):
    return Pod.model_validate({"metadata": {"name": "p", **metadata}, "spec": spec or {}})


def first_error(model, data):
    with pytest.raises(ValidationError) as caught:
        model.model_validate(data)
    error = caught.value.errors()[0]
    return error["loc"], error["msg"]


def test_manifest_camel_case_names_map_to_snake_case_attributes():
    p = pod({
        "nodeSelector": {"disk": "ssd"},
        "priorityClassName": "gold",
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}},
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                       "minDomains": 2, "matchLabelKeys": ["app"]}],
        "containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080, "hostIP": "10.0.0.1"}]}],
        "schedulingGroup": {"podGroupName": "g"},
        "schedulingGates": [{"name": "wait"}],
    }, ownerReferences=[{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "controller": True}])
    required = p.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
    assert required.node_selector_terms[0].match_expressions[0].values == ["a"]
    assert p.spec.topology_spread_constraints[0].min_domains == 2
    assert p.spec.containers[0].ports[0].host_ip == "10.0.0.1"
    assert p.spec.scheduling_group.pod_group_name == "g"
    assert p.metadata.owner_references[0].api_version == "apps/v1"
    assert p.spec.priority_class_name == "gold" and p.spec.node_selector == {"disk": "ssd"}


def test_snake_case_names_are_accepted_too_and_unknown_fields_ignored():
    p = Pod(metadata={"name": "p"}, spec={"node_name": "n1", "dnsPolicy": "ClusterFirst"}, extra_field=1)
    assert p.spec.node_name == "n1"


def test_null_fields_take_their_defaults():
    p = pod({"tolerations": None, "nodeSelector": None, "schedulerName": None, "containers": [
        {"name": "c", "resources": None, "ports": None}]}, labels=None, creationTimestamp=None)
    assert p.spec.tolerations == [] and p.spec.node_selector == {} and p.metadata.labels == {}
    assert p.spec.scheduler_name == "default-scheduler"
    assert p.spec.containers[0].resources.requests == {}


def test_pod_namespace_and_key():
    assert pod().key == "default/p"
    assert pod(namespace="").metadata.namespace == "default"
    assert pod(namespace="team").key == "team/p"


def test_spec_defaults():
    p = pod({"schedulerName": "", "tolerations": [{"key": "k", "operator": ""}],
             "containers": [{"name": "c", "ports": [{"containerPort": 80, "protocol": ""}]}]})
    assert p.spec.scheduler_name == "default-scheduler"
    assert p.spec.tolerations[0].operator == "Equal"
    assert p.spec.containers[0].ports[0].protocol == "TCP"
    assert p.status.phase == "Pending"


def test_host_network_ports_default_host_port_to_container_port():
    p = pod({"hostNetwork": True, "containers": [{"name": "c", "ports": [{"containerPort": 80},
                                                                          {"containerPort": 81, "hostPort": 9081}]}],
             "initContainers": [{"name": "i", "ports": [{"containerPort": 53, "protocol": "UDP"}]}]})
    assert [port.host_port for port in p.spec.containers[0].ports] == [80, 9081]
    assert p.spec.init_containers[0].ports[0].host_port == 53
    plain = pod({"containers": [{"name": "c", "ports": [{"containerPort": 80}]}]})
    assert plain.spec.containers[0].ports[0].host_port == 0


def test_container_requests_default_to_limits_resource_by_resource():
    p = pod({"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"},
                                                       "limits": {"cpu": "1", "memory": "1Gi"}}}],
             "initContainers": [{"name": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}]})
    assert p.spec.containers[0].resources.requests == {"cpu": 100, "memory": 2**30}
    assert p.spec.init_containers[0].resources.requests == {"nvidia.com/gpu": 1}


def test_pod_level_requests_default_from_containers_then_pod_limits():
    # defaultPodRequests: cpu from the containers' aggregate (250m + 250m), memory from the pod-level limit.
    p = pod({"containers": [{"name": "a", "resources": {"requests": {"cpu": "250m"}}},
                            {"name": "b", "resources": {"requests": {"cpu": "250m"}}}],
             "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}})
    assert p.spec.resources.requests == {"cpu": 500, "memory": 2**30}


def test_pod_level_requests_are_not_defaulted_without_pod_level_limits():
    p = pod({"containers": [{"name": "a", "resources": {"requests": {"cpu": "250m"}}}],
             "resources": {"requests": {"memory": "1Gi"}}})
    assert p.spec.resources.requests == {"memory": 2**30}


def test_pod_level_hugepage_limits_and_requests_default_from_containers():
    # defaultHugePagePodLimits sums the containers' hugepage limits into the pod-level limit (4Mi + 2Mi),
    # then defaultPodRequests turns that limit into the pod-level request.
    p = pod({"containers": [{"name": "a", "resources": {"limits": {"hugepages-2Mi": "4Mi"}}},
                            {"name": "b", "resources": {"limits": {"hugepages-2Mi": "2Mi"}}}],
             "resources": {"limits": {"cpu": "1"}}})
    assert p.spec.resources.limits == {"cpu": 1000, "hugepages-2Mi": 6 * Mi}
    assert p.spec.resources.requests == {"cpu": 1000, "hugepages-2Mi": 6 * Mi}


def test_pod_resource_lists_are_rounded_up_to_milli_after_defaulting():
    # Pod-level requests default from the exact container sum 0.4m + 0.4m = 0.8m, then everything is rounded
    # up to whole millis: containers 1m each, pod level 1m.
    p = pod({"containers": [{"name": "a", "resources": {"requests": {"cpu": "0.0004"}}},
                            {"name": "b", "resources": {"requests": {"cpu": "0.0004"}}}],
             "overhead": {"memory": "0.0001"}, "resources": {"limits": {"cpu": "1"}}})
    assert p.spec.containers[0].resources.requests.nanos("cpu") == 10**6
    assert p.spec.resources.requests.nanos("cpu") == 10**6
    assert p.spec.overhead.nanos("memory") == 10**6       # 0.0001 bytes -> 1m bytes


def test_node_allocatable_defaults_to_capacity_only_when_absent():
    capacity = {"cpu": "4", "memory": "8Gi", "pods": 110}
    absent = Node.model_validate({"metadata": {"name": "n"}, "status": {"capacity": capacity}})
    null = Node.model_validate({"metadata": {"name": "n"}, "status": {"capacity": capacity, "allocatable": None}})
    partial = Node.model_validate({"metadata": {"name": "n"},
                                   "status": {"capacity": capacity, "allocatable": {"cpu": "3500m"}}})
    empty = Node.model_validate({"metadata": {"name": "n"}, "status": {"capacity": capacity, "allocatable": {}}})
    assert absent.status.allocatable == {"cpu": 4000, "memory": 8 * 2**30, "pods": 110}
    assert null.status.allocatable == absent.status.allocatable
    assert partial.status.allocatable == {"cpu": 3500}    # SetDefaults_NodeStatus copies the whole map or nothing
    assert empty.status.allocatable == {}
    assert absent.name == "n"
    absent.status.allocatable["cpu"] = 1
    assert absent.status.capacity["cpu"] == 4000          # a copy, not the same map


def test_node_quantities_are_rounded_up_to_milli():
    n = Node.model_validate({"metadata": {"name": "n"}, "status": {"allocatable": {"memory": "1.0000001"}}})
    assert n.status.allocatable == {"memory": 2}
    assert n.status.allocatable.nanos("memory") == 1_001_000_000


def test_timestamps_stay_text_and_datetimes_become_rfc3339():
    p = pod(creationTimestamp="2024-05-01T10:00:00Z",
            deletionTimestamp=datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc))
    assert p.metadata.creation_timestamp == "2024-05-01T10:00:00Z"
    assert p.metadata.deletion_timestamp == "2024-05-01T12:00:00Z"
    assert pod(creationTimestamp=datetime(2024, 5, 1)).metadata.creation_timestamp == "2024-05-01T00:00:00Z"


def test_priority_class():
    pc = PriorityClass.model_validate({"metadata": {"name": "gold"}, "value": 1000, "globalDefault": True,
                                       "preemptionPolicy": "Never"})
    assert (pc.kind, pc.value, pc.global_default, pc.preemption_policy) == ("PriorityClass", 1000, True, "Never")


def test_resource_fields_are_resource_lists():
    p = pod({"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]})
    assert isinstance(p.spec.containers[0].resources.requests, ResourceList)
    assert isinstance(p.spec.overhead, ResourceList)


def test_dump_validates_back_to_an_equal_object():
    p = pod({"containers": [{"name": "c", "resources": {"requests": {"cpu": "0.25", "memory": "1.5"}}}],
             "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}], "priority": 3})
    for dumped in (p.model_dump(), p.model_dump(by_alias=True), p.model_dump(mode="json", by_alias=True)):
        again = Pod.model_validate(dumped)
        assert again == p
        assert again.spec.containers[0].resources.requests.nanos("memory") == 1_500_000_000


@pytest.mark.parametrize("spec,loc,msg", [
    ({"containers": [{"name": "c", "resources": {"requests": {"cpu": "12x"}}}]},
     ("spec", "containers", 0, "resources", "requests", "cpu"), 'invalid quantity "12x"'),
    ({"containers": [{"image": "x"}]}, ("spec", "containers", 0, "name"), "Field required"),
    ({"tolerations": [{"operator": "In"}]}, ("spec", "tolerations", 0, "operator"),
     "Input should be 'Equal', 'Exists', 'Gt' or 'Lt'"),
    ({"priority": 2**31}, ("spec", "priority"), "Input should be less than or equal to 2147483647"),
    ({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "ScheduleAnyway",
                                     "minDomains": 2}]},
     ("spec", "topologySpreadConstraints", 0, "minDomains"),
     "Value error, can only be set when whenUnsatisfiable is DoNotSchedule"),
    ({"topologySpreadConstraints": [{"maxSkew": 0, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule"}]},
     ("spec", "topologySpreadConstraints", 0, "maxSkew"), "Input should be greater than or equal to 1"),
    ({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 101, "preference": {}}]}}},
     ("spec", "affinity", "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution", 0, "weight"),
     "Input should be less than or equal to 100"),
    ({"containers": [{"name": "c", "ports": [{"containerPort": 0}]}]},
     ("spec", "containers", 0, "ports", 0, "containerPort"), "Input should be greater than or equal to 1"),
])
def test_validation_errors_carry_manifest_paths(spec, loc, msg):
    assert first_error(Pod, {"metadata": {"name": "p"}, "spec": spec}) == (loc, msg)


def test_object_names_are_required_and_non_empty():
    assert first_error(Node, {"metadata": {}}) == (("metadata", "name"), "Field required")
    assert first_error(Node, {"metadata": {"name": ""}})[0] == ("metadata", "name")
    assert first_error(PriorityClass, {"metadata": {"name": "x"}}) == (("value",), "Field required")
    assert first_error(Node, {"metadata": {"name": "n"}, "spec": {"taints": [{"key": "k"}]}}) == \
        (("spec", "taints", 0, "effect"), "Field required")


def test_replaced_is_a_shallow_copy_with_fields_set_as_model_copy_sets_them():
    pod = Pod.model_validate({"metadata": {"name": "a", "namespace": "ns", "labels": {"x": "y"}},
                              "spec": {"containers": [{"name": "c", "image": "i"}]}})
    twin = pod.replaced(metadata=pod.metadata.replaced(name="b"))
    want = pod.model_copy(update={"metadata": pod.metadata.model_copy(update={"name": "b"})})
    assert twin.model_dump() == want.model_dump() and twin.key == "ns/b" and pod.key == "ns/a"
    assert twin.spec is pod.spec and twin.metadata.labels is pod.metadata.labels
    assert twin.model_fields_set == want.model_fields_set
    assert twin.metadata.model_fields_set == want.metadata.model_fields_set
    uid = pod.metadata.replaced(uid="u")         # a field not set before joins the copy's set, not the original's
    assert "uid" in uid.model_fields_set and "uid" not in pod.metadata.model_fields_set
