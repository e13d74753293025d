"""DRA: ResourceClaims and ResourceClaimTemplates on pods and PodGroups (KEP-5729), node-local devices.

Toy clusters (worked out by hand in the comments): nodes are 4 cpu / 8Gi; each GPU node has ResourceSlice
devices gpu0, gpu1, ... of driver gpu.example.com with attribute `model`. Between equally good nodes the
first one (input order) wins; with LeastAllocated, an emptier node scores higher.

Then: the DynamicResources Filter (kernel and backtracking search) against the per-node, per-device reference
(tests/reference/dra.py) on random device tables, and random add/delete sequences checking that claims are
allocated once and released exactly.
"""
from __future__ import annotations

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.dra import dra_filter, prioritized_assignment
from strategies import make_node, make_pod

from phalanx.cluster_models import InputError, load_text, parse_objects
from phalanx.cluster_models.dra import DeviceTable, ResourceSlice
from phalanx.kernels import dynamic_resources as dra_kernel
from phalanx.kernels.dynamic_resources import RequestLayout, dynamic_resources_allocate
from phalanx.sched import Cluster, Scheduler, explain_pod
from phalanx.sched.records import BOUND

DRIVER = "gpu.example.com"
CLASSES = f"""
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: gpu}}
spec:
  selectors: [{{cel: {{expression: 'device.driver == "{DRIVER}"'}}}}]
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: gpu-a100}}
spec:
  selectors:
  - cel: {{expression: 'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].model == "A100"'}}
"""



def post_filter(n: int) -> str:
    """What the default profile's PostFilter adds for a pod with claims that no node fits (DynamicResources, then
    DefaultPreemption: every node is UnschedulableAndUnresolvable)."""
    return f" still not schedulable, preemption: 0/{n} nodes are available: {n} Preemption is not helpful for scheduling."

def slice_doc(node: str, models: list[str]) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus"},
            "spec": {"driver": DRIVER, "pool": {"name": node, "resourceSliceCount": 1}, "nodeName": node,
                     "devices": [{"name": f"gpu{i}", "attributes": {"model": {"string": m}}}
                                 for i, m in enumerate(models)]}}


def template_doc(name: str, count: int = 1, cls: str = "gpu") -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": cls,
                                                                                   "count": count}}]}}}}


def claim_doc(name: str, count: int = 1, cls: str = "gpu") -> dict:
    doc = template_doc(name, count, cls)
    return {**doc, "kind": "ResourceClaim", "spec": doc["spec"]["spec"]}


def group_doc(name: str, min_count: int | None, claims: list[dict]) -> dict:
    policy = {"basic": {}} if min_count is None else {"gang": {"minCount": min_count}}
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedulingPolicy": policy, "resourceClaims": claims}}


def with_claims(pod, claims: list[dict]):
    """The pod with spec.resourceClaims (camelCase entries)."""
    doc = pod.model_dump(by_alias=True, exclude_defaults=True)
    doc["spec"]["resourceClaims"] = claims
    return type(pod).model_validate(doc)


def pod(name, claims=(), cpu="1", group=None):
    return with_claims(make_pod(name, cpu=cpu, memory="1Gi", pod_group=group), list(claims))


def cluster(gpu_nodes: dict[str, list[str]], extra=(), nodes=None) -> Cluster:
    docs = list(yaml.safe_load_all(CLASSES)) + [slice_doc(n, m) for n, m in gpu_nodes.items() if m] + list(extra)
    objects = parse_objects(docs)
    objects.nodes = nodes if nodes is not None else [make_node(n) for n in gpu_nodes]
    return Cluster.from_objects(objects)


def bindings(records) -> dict[str, str]:
    return {r.object: r.node for r in records if r.kind == BOUND}


def devices_of(sched: Scheduler, claim: str) -> list[str] | None:
    c = sched.cluster.claims.claims[claim]
    if c.devices is None:
        return None
    table = sched.cluster.claims.devices
    return [f"{table.node_names[d]}/{table.keys[d][2]}" for d in c.devices.tolist()]


def node_state(sched: Scheduler) -> tuple:
    n = sched.cluster.tensors.nodes
    return n.requested.copy(), n.nonzero_requested.copy(), n.pod_count.copy(), n.host_ports.copy()


def same(a, b) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a, b))


GROUP_CLAIM = {"name": "gpus", "resourceClaimTemplateName": "two-gpus"}


# -- group claims -----------------------------------------------------------------------------------------------
def test_group_claim_allocated_once_and_pins_later_members():
    # n0 and n1 each have 2 GPUs; the group claim asks for 2. Member 0 (1 cpu) ties on empty nodes -> n0 and
    # allocates gpu0+gpu1 of n0. Member 1 alone would prefer the emptier n1 (LeastAllocated), but the claim's
    # devices are on n0: n1 fails "resourceclaim not available on the node", so it goes to n0 too.
    c = cluster({"n0": ["A100", "A100"], "n1": ["A100", "A100"]},
                [template_doc("two-gpus", 2), group_doc("g", 2, [GROUP_CLAIM])])
    s = Scheduler(c)
    got = bindings(s.add_pods([pod(f"m{i}", [GROUP_CLAIM], group="g") for i in range(2)]) + s.run_until_idle())
    assert got == {"default/m0": "n0", "default/m1": "n0"}
    assert devices_of(s, "default/g-gpus") == ["n0/gpu0", "n0/gpu1"]
    assert c.claims.devices.allocated.tolist() == [True, True, False, False]     # allocated once: 2 devices
    assert sorted(c.claims.claims["default/g-gpus"].users) == ["default/m0", "default/m1"]
    # Without the claim the second member would have gone to n1 (the check that the claim did the pinning).
    c2 = cluster({"n0": [], "n1": []}, [group_doc("g", 2, [])])
    s2 = Scheduler(c2)
    assert bindings(s2.add_pods([pod(f"m{i}", group="g") for i in range(2)]) + s2.run_until_idle()) == \
        {"default/m0": "n0", "default/m1": "n1"}


def test_group_claim_released_when_the_last_member_leaves():
    c = cluster({"n0": ["A100", "A100"], "n1": ["A100", "A100"]},
                [template_doc("two-gpus", 2), group_doc("g", 2, [GROUP_CLAIM])])
    s = Scheduler(c)
    before = c.claims.snapshot()
    s.add_pods([pod(f"m{i}", [GROUP_CLAIM], group="g") for i in range(2)])
    s.run_until_idle()
    s.delete_pod("default/m0")
    assert devices_of(s, "default/g-gpus") == ["n0/gpu0", "n0/gpu1"]            # m1 still uses it
    assert c.claims.claims["default/g-gpus"].users == {"default/m1"}
    s.delete_pod("default/m1")
    assert devices_of(s, "default/g-gpus") is None                              # released, devices free again
    after = c.claims.snapshot()
    assert np.array_equal(before[0], after[0])
    assert after[1]["default/g-gpus"] == (None, [])                            # the group's claim object stays


def test_failed_gang_cycle_restores_devices_bit_for_bit():
    # Members ask 3 cpu each; the group claim (2 GPUs) lands on n0 with member 0. Member 1 must use n0 but
    # n0 has 1 cpu left: n0 fails NodeResourcesFit, n1 fails DynamicResources. minCount 2 is out of reach,
    # the cycle is undone: node table and device state exactly as before.
    c = cluster({"n0": ["A100", "A100"], "n1": ["A100", "A100"]},
                [template_doc("two-gpus", 2), group_doc("g", 2, [GROUP_CLAIM])])
    s = Scheduler(c)
    devices0, nodes0 = c.claims.snapshot(), node_state(s)
    recs = s.add_pods([pod(f"m{i}", [GROUP_CLAIM], cpu="3", group="g") for i in range(2)]) + s.run_until_idle()
    assert not bindings(recs)
    assert s.pending_message["default/m1"] == \
        "0/2 nodes are available: 1 Insufficient cpu, 1 resourceclaim not available on the node. still not " \
        "schedulable, preemption: not eligible due to workload aware preemption enabled"
    # No pod is bound: workload-aware preemption finds no victim and says so in the group's status.
    assert s.pending_message["default/m0"] == "pod group is unschedulable, waiting for minCount pods from a gang " \
        "to be scheduled, No preemption victims found for incoming preemptor"
    devices1 = c.claims.snapshot()
    assert np.array_equal(devices0[0], devices1[0]) and same(nodes0, node_state(s))
    assert devices1[1]["default/g-gpus"] == (None, [])


def test_failed_gang_with_per_pod_claims_restores_devices():
    # Three gang members, each with its own 1-GPU claim; only 2 GPUs exist: the third fails with
    # "cannot allocate all claims" on both nodes and the two tentative allocations are undone.
    entry = {"name": "gpu", "resourceClaimTemplateName": "one-gpu"}
    c = cluster({"n0": ["A100"], "n1": ["A100"]}, [template_doc("one-gpu", 1), group_doc("g", 3, [])])
    s = Scheduler(c)
    devices0, nodes0 = c.claims.snapshot(), node_state(s)
    recs = s.add_pods([pod(f"m{i}", [entry], group="g") for i in range(3)]) + s.run_until_idle()
    assert not bindings(recs)
    assert s.pending_message["default/m2"] == "0/2 nodes are available: 2 cannot allocate all claims. still not " \
        "schedulable, preemption: not eligible due to workload aware preemption enabled"
    devices1 = c.claims.snapshot()
    assert np.array_equal(devices0[0], devices1[0]) and same(nodes0, node_state(s))
    assert all(v == (None, []) for v in devices1[1].values())
    # the generated claims are per pod
    assert sorted(devices1[1]) == ["default/m0-gpu", "default/m1-gpu", "default/m2-gpu"]


def test_entry_that_differs_from_the_group_entry_is_per_pod():
    # Same entry name, other template: not the group's claim; each member gets its own 1-GPU claim.
    other = {"name": "gpus", "resourceClaimTemplateName": "one-gpu"}
    c = cluster({"n0": ["A100"], "n1": ["A100"]},
                [template_doc("two-gpus", 2), template_doc("one-gpu", 1), group_doc("g", 2, [GROUP_CLAIM])])
    s = Scheduler(c)
    got = bindings(s.add_pods([pod(f"m{i}", [other], group="g") for i in range(2)]) + s.run_until_idle())
    assert got == {"default/m0": "n0", "default/m1": "n1"}
    assert devices_of(s, "default/m0-gpus") == ["n0/gpu0"] and devices_of(s, "default/m1-gpus") == ["n1/gpu0"]
    assert "default/g-gpus" not in c.claims.claims


# -- per-pod claims -----------------------------------------------------------------------------------------------
def test_per_pod_template_claims_allocate_per_pod_and_go_with_the_pod():
    # n0 has 2 GPUs, n1 none: a and b each allocate one of n0's GPUs (first fit: gpu0, then gpu1); c finds no
    # free GPU: n0 and n1 both "cannot allocate all claims".
    entry = {"name": "gpu", "resourceClaimTemplateName": "one-gpu"}
    c = cluster({"n0": ["A100", "A100"], "n1": []}, [template_doc("one-gpu", 1)])
    s = Scheduler(c)
    pods = [pod(x, [entry]) for x in "abc"]
    c_pod = pods[2]
    recs = s.add_pods(pods) + s.run_until_idle()
    assert bindings(recs) == {"default/a": "n0", "default/b": "n0"}
    assert devices_of(s, "default/a-gpu") == ["n0/gpu0"] and devices_of(s, "default/b-gpu") == ["n0/gpu1"]
    assert s.pending_message["default/c"] == "0/2 nodes are available: 2 cannot allocate all claims." + post_filter(2)
    report = explain_pod(s, c_pod)
    assert [n["filters"]["DynamicResources"]["reasons"] for n in report["nodes"]] == \
        [["cannot allocate all claims"]] * 2
    s.delete_pod("default/a")          # a's claim goes with it; c gets gpu0
    assert "default/a-gpu" not in c.claims.claims
    assert bindings(s.run_until_idle()) == {"default/c": "n0"}
    assert devices_of(s, "default/c-gpu") == ["n0/gpu0"]


def test_claim_by_name_is_shared_by_two_plain_pods():
    # One ResourceClaim `shared` (1 GPU) named by a and b: a allocates n0/gpu0; b must follow it to n0 although
    # n1 is emptier. The claim stays allocated while either uses it.
    entry = {"name": "gpu", "resourceClaimName": "shared"}
    c = cluster({"n0": ["A100"], "n1": ["A100"]}, [claim_doc("shared", 1)])
    s = Scheduler(c)
    assert bindings(s.add_pods([pod("a", [entry]), pod("b", [entry])]) + s.run_until_idle()) == \
        {"default/a": "n0", "default/b": "n0"}
    assert c.claims.devices.allocated.tolist() == [True, False]
    s.delete_pod("default/a")
    assert devices_of(s, "default/shared") == ["n0/gpu0"]
    s.delete_pod("default/b")
    assert devices_of(s, "default/shared") is None and c.claims.devices.allocated.tolist() == [False, False]


def test_device_class_selects_the_model():
    # gpu-a100 matches only n1's A100 (n0 has T4s): n0 cannot allocate, the pod goes to n1 and gets n1/gpu1.
    c = cluster({"n0": ["T4", "T4"], "n1": ["T4", "A100"]}, [template_doc("a100", 1, "gpu-a100")])
    s = Scheduler(c)
    entry = {"name": "gpu", "resourceClaimTemplateName": "a100"}
    assert bindings(s.add_pods([pod("p", [entry])]) + s.run_until_idle()) == {"default/p": "n1"}
    assert devices_of(s, "default/p-gpu") == ["n1/gpu1"]


def test_pod_with_claims_and_no_devices_anywhere():
    c = cluster({"n0": [], "n1": []}, [template_doc("one-gpu", 1)])
    s = Scheduler(c)
    s.add_pods([pod("p", [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])])
    s.run_until_idle()
    assert s.pending_message["default/p"] == "0/2 nodes are available: 2 cannot allocate all claims." + post_filter(2)


@pytest.mark.parametrize("entry,extra,message", [
    ({"name": "gpu", "resourceClaimName": "nope"}, [], 'resourceclaim.resource.k8s.io "nope" not found'),
    ({"name": "gpu", "resourceClaimTemplateName": "nope"}, [], 'pod "default/p": ResourceClaim not created yet'),
    ({"name": "gpu", "resourceClaimTemplateName": "t"}, [template_doc("t", 1, "tpu")],
     "request g: device class tpu does not exist"),
])
def test_prefilter_messages(entry, extra, message):
    c = cluster({"n0": ["A100"]}, extra)
    s = Scheduler(c)
    s.add_pods([pod("p", [entry])])
    s.run_until_idle()
    # Upstream's PreFilter keeps the pod's claims in the cycle state only when it passes: PostFilter finds none.
    assert s.pending_message["default/p"] == (f"0/1 nodes are available: {message}. no new claims to deallocate, "
                                              f"preemption: 0/1 nodes are available: 1 Preemption is not helpful for "
                                              f"scheduling.")


def test_bound_pod_in_the_input_holds_its_claim():
    # a is bound to n0 in the input and names claim `shared`: phalanx allocates it there; b follows.
    entry = {"name": "gpu", "resourceClaimName": "shared"}
    a = with_claims(make_pod("a", cpu="1", memory="1Gi", node_name="n0"), [entry])
    docs = list(yaml.safe_load_all(CLASSES)) + [slice_doc("n0", ["A100"]), slice_doc("n1", ["A100"]),
                                                claim_doc("shared", 1)]
    objects = parse_objects(docs)
    objects.nodes, objects.pods = [make_node("n1"), make_node("n0")], [a]
    c = Cluster.from_objects(objects)
    s = Scheduler(c)
    assert devices_of(s, "default/shared") == ["n0/gpu0"]
    assert bindings(s.add_pods([pod("b", [entry])]) + s.run_until_idle()) == {"default/b": "n0"}


def test_nodes_added_and_removed_keep_device_rows():
    # A slice for a node not yet in the cluster: its devices join when the node does.
    c = cluster({"n0": [], "n1": ["A100"]}, [template_doc("one-gpu", 1)], nodes=[make_node("n0")])
    s = Scheduler(c)
    entry = {"name": "gpu", "resourceClaimTemplateName": "one-gpu"}
    s.add_pods([pod("p", [entry])])
    assert not bindings(s.run_until_idle())
    assert bindings(s.add_nodes([make_node("n1")]) + s.run_until_idle()) == {"default/p": "n1"}
    s.remove_node("n0")                # n1 is now node 0; p's claim keeps pointing at n1's device
    assert devices_of(s, "default/p-gpu") == ["n1/gpu0"] and c.claims.devices.node.tolist() == [0]


def test_permit_mode_rejection_releases_group_claim():
    # gang of 3, only 2 members exist in permit mode... use 2 members of a 3-gang: quorum blocks. Instead: 3
    # members, third cannot fit (needs 5 cpu): the two placed wait at Permit holding the claim, the timeout
    # rejects them and the claim is released.
    c = cluster({"n0": ["A100", "A100"], "n1": ["A100", "A100"]},
                [template_doc("two-gpus", 2), group_doc("g", 3, [GROUP_CLAIM])])
    s = Scheduler(c, gang_mode="permit")
    s.add_pods([pod("m0", [GROUP_CLAIM], group="g"), pod("m1", [GROUP_CLAIM], group="g"),
                pod("m2", [GROUP_CLAIM], cpu="5", group="g")])
    s.step(1.0)
    assert devices_of(s, "default/g-gpus") == ["n0/gpu0", "n0/gpu1"]
    s.step(400.0)
    assert devices_of(s, "default/g-gpus") is None and not c.claims.devices.allocated.any()


# -- input errors -------------------------------------------------------------------------------------------------
def SUB(name: str, **fields) -> dict:
    """A firstAvailable subrequest of class gpu."""
    return {"name": name, "deviceClassName": "gpu", **fields}


@pytest.mark.parametrize("doc,message", [
    ({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "x"},
      "spec": {"selectors": [{"cel": {"expression": 'device.driver == "a" &&'}}]}},
     'DeviceClass x: spec.selectors[0].cel.expression: invalid CEL expression "device.driver == \"a\" &&": '
     "1:24: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', "
     "'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"),
    ({**slice_doc("n0", ["A"]), "spec": {**slice_doc("n0", ["A"])["spec"], "nodeName": None, "allNodes": True}},
     "ResourceSlice n0-gpus: spec.nodeName: phalanx models node-local devices only (nodeSelector, allNodes and "
     "perDeviceNodeSelection are not modelled)"),
    # A slice of shared counters lists no devices (the API server refuses both in one slice).
    ({**slice_doc("n0", ["A"]), "spec": {**{k: v for k, v in slice_doc("n0", ["A"])["spec"].items() if k != "devices"},
                                         "sharedCounters": [{"name": "s", "counters": {"mem": {"value": "8Gi"}}}]}},
     "ResourceSlice n0-gpus: spec.sharedCounters: shared counters (partitionable devices) are not modelled"),
    ({**slice_doc("n0", ["A"]), "spec": {**slice_doc("n0", ["A"])["spec"], "devices": [
        {"name": "gpu0", "consumesCounters": [{"counterSet": "s", "counters": {"mem": {"value": "4Gi"}}}]}]}},
     "ResourceSlice n0-gpus: spec.devices[0].consumesCounters: shared counters (partitionable devices) are not "
     "modelled"),
    # firstAvailable as the API server validates it (resource.k8s.io/v1 validateDeviceRequest, validateDeviceSubRequest).
    ({**claim_doc("c"), "spec": {"devices": {"requests": [{"name": "g", "firstAvailable": [{"name": "a"}]}]}}},
     "ResourceClaim default/c: spec.devices.requests[0].firstAvailable[0].deviceClassName: Required value"),
    ({**claim_doc("c"), "spec": {"devices": {"requests": [{"name": "g"}]}}},
     "ResourceClaim default/c: spec.devices.requests[0]: Required value: exactly one of `exactly` or "
     "`firstAvailable` is required"),
    ({**claim_doc("c"), "spec": {"devices": {"requests": [{"name": "g", "firstAvailable": []}]}}},
     "ResourceClaim default/c: spec.devices.requests[0]: Required value: exactly one of `exactly` or "
     "`firstAvailable` is required"),
    ({**claim_doc("c"), "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu"},
                                                           "firstAvailable": [SUB("a")]}]}}},
     "ResourceClaim default/c: spec.devices.requests[0]: Invalid value: null: exactly one of `exactly` or "
     "`firstAvailable` is required, "
     "but multiple fields are set"),
    ({**claim_doc("c"), "spec": {"devices": {"requests": [{"name": "g", "firstAvailable": [SUB(f"s{i}")
                                                                                          for i in range(9)]}]}}},
     "ResourceClaim default/c: spec.devices.requests[0].firstAvailable: Too many: 9: must have at most 8 items"),
    ({**claim_doc("c"), "spec": {"devices": {"requests": [{"name": "g", "firstAvailable": [SUB("a"), SUB("Big_1")]}]}}},
     'ResourceClaim default/c: spec.devices.requests[0].firstAvailable[1].name: must be a DNS label: lowercase '
     'letters, digits and \'-\', starting and ending with a letter or digit (got "Big_1")'),
    ({**claim_doc("c"), "spec": {"devices": {"requests": [{"name": "g", "firstAvailable": [SUB("a"), SUB("a")]}]}}},
     'ResourceClaim default/c: spec.devices.requests[0].firstAvailable[1]: Duplicate value: "a"'),
    ({**claim_doc("c"), "spec": {"devices": {"requests": [{"name": "g", "firstAvailable": [
        SUB("a", allocationMode="All", count=2)]}]}}},
     "ResourceClaim default/c: spec.devices.requests[0].firstAvailable[0].count: Invalid value: 2: must not be "
     "specified when allocationMode is 'All'"),
    ({**claim_doc("c"), "spec": {"devices": {"requests": [{"name": "g", "firstAvailable": [SUB("a", count=-1)]}]}}},
     "ResourceClaim default/c: spec.devices.requests[0].firstAvailable[0].count: Invalid value: -1: must be greater "
     "than zero"),
    ({**claim_doc("c"), "spec": {"devices": {"requests": [{"name": "g", "firstAvailable": [
        SUB("a", allocationMode="Some")]}]}}},
     'ResourceClaim default/c: spec.devices.requests[0].firstAvailable[0].allocationMode: Unsupported value: "Some": '
     'supported values: "All", "ExactCount"'),
    # validateDeviceToleration: an empty key takes Equal (a pod's toleration would need Exists), Exists no value, an
    # effect of the device taints' three, at most 16
    ({**claim_doc("c"), "spec": {"devices": {"requests": [{"name": "g", "firstAvailable": [
        SUB("a", tolerations=[{"operator": "Equal", "value": "x"}, {"operator": "Exists", "value": "x"}])]}]}}},
     'ResourceClaim default/c: spec.devices.requests[0].firstAvailable[0].tolerations[1].value: Invalid value: "x": '
     'must be empty for operator `Exists`'),
    ({**claim_doc("c"), "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu",
        "tolerations": [{"key": "k", "operator": "Gt", "value": "1"}]}}]}}},
     'ResourceClaim default/c: spec.devices.requests[0].exactly.tolerations[0].operator: Unsupported value: "Gt": '
     'supported values: "Equal", "Exists"'),
    ({**claim_doc("c"), "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu",
        "tolerations": [{"key": "k", "effect": "PreferNoSchedule", "tolerationSeconds": 5}]}}]}}},
     'ResourceClaim default/c: spec.devices.requests[0].exactly.tolerations[0].effect: Unsupported value: '
     '"PreferNoSchedule": supported values: "NoExecute", "NoSchedule", "None"'),
    ({**claim_doc("c"), "spec": {"devices": {"requests": [{"name": "g", "firstAvailable": [
        SUB("a", capacity={"requests": {"memory": "1Gi"}})]}]}}},
     "ResourceClaim default/c: spec.devices.requests[0].firstAvailable[0].capacity: consumable capacity is not "
     "modelled"),
    ({**claim_doc("c"), "spec": {"devices": {"requests": [{"name": "g", "firstAvailable": [
        SUB("a", selectors=[{"cel": {"expression": "device.driver =="}}])]}]}}},
     'ResourceClaim default/c: spec.devices.requests[0].firstAvailable[0].selectors[0].cel.expression: invalid CEL '
     'expression "device.driver ==": 1:17: Syntax error: mismatched input \'<EOF>\' expecting {\'[\', \'{\', \'(\', '
     "'.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"),
    ({**claim_doc("c"), "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu",
                                                                                      "count": -2}}]}}},
     "ResourceClaim default/c: spec.devices.requests[0].exactly.count: Invalid value: -2: must be greater than zero"),
    ({**claim_doc("c"), "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": ""}}]}}},
     "ResourceClaim default/c: spec.devices.requests[0].exactly.deviceClassName: Required value"),
])
def test_input_errors(doc, message):
    with pytest.raises(InputError) as err:
        parse_objects([doc])
    assert str(err.value) == message


def test_count_zero_and_empty_allocation_mode_are_defaulted():
    """SetDefaults_ExactDeviceRequest / SetDefaults_DeviceSubRequest: an empty allocationMode is ExactCount, whose
    count 0 (absent: the field is omitempty) is 1; with All, a count of 0 is no count."""
    requests = [{"name": "a", "exactly": {"deviceClassName": "gpu", "count": 0}},
                {"name": "b", "exactly": {"deviceClassName": "gpu", "allocationMode": "", "count": 0}},
                {"name": "c", "exactly": {"deviceClassName": "gpu", "allocationMode": "All", "count": 0}},
                {"name": "d", "firstAvailable": [SUB("s", count=0)]}]
    claim = parse_objects([{**claim_doc("c"), "spec": {"devices": {"requests": requests}}}]).resource_claims[0]
    got = [r.exactly.count_needed() if r.exactly is not None else r.first_available[0].count_needed()
           for r in claim.spec.devices.requests]
    assert got == [1, 1, 0, 1]


def test_pod_claim_needs_exactly_one_source():
    with pytest.raises(InputError, match=r"spec.resourceClaims\[0\]: exactly one of"):
        load_text("kind: Pod\napiVersion: v1\nmetadata: {name: p}\nspec: {resourceClaims: [{name: x}]}")


def test_allocation_of_an_unknown_device_is_an_input_error():
    doc = {**claim_doc("c"), "status": {"allocation": {"devices": {"results": [
        {"request": "g", "driver": DRIVER, "pool": "n0", "device": "gpu9"}]}}}}
    objects = parse_objects([slice_doc("n0", ["A"]), doc])
    objects.nodes = [make_node("n0")]
    with pytest.raises(InputError, match=r"^ResourceClaim default/c: status.allocation.devices.results\[0\].device: "
                                         r"no device 'gpu9' in pool 'n0' of driver 'gpu.example.com'$"):
        Cluster.from_objects(objects)


CEL_SLICE = {"metadata": {"name": "s"}, "spec": {
    "driver": DRIVER, "nodeName": "n0", "pool": {"name": "p", "resourceSliceCount": 1}, "devices": [
    {"name": "a", "attributes": {"model": {"string": "A100"}, "cores": {"int": 108}, "mig": {"bool": True},
                                 "example.com/fw": {"version": "1.2.3"}},
     "capacity": {"memory": {"value": "80Gi"}}},
    {"name": "b", "attributes": {"model": {"string": "H100"}, "cores": {"int": 132}, "mig": {"bool": False},
                                 "example.com/fw": {"version": "1.10.0"}},
     "capacity": {"memory": {"value": "94Gi"}}},
    {"name": "c", "attributes": {"model": {"string": "A100"}}}]}}


@pytest.mark.parametrize("expression, expected", [
    (f'device.driver == "{DRIVER}"', [True, True, True]),
    (f'device.attributes["{DRIVER}"].model in ["H100", "B200"]', [False, True, False]),
    (f'device.attributes["{DRIVER}"].model == "A100" && device.attributes["{DRIVER}"].cores > 100',
     [True, False, False]),                                       # c has no cores: no match, not an error
    (f'device.attributes["{DRIVER}"].mig || device.attributes["{DRIVER}"].model == "A100"', [True, False, True]),
    (f'!device.attributes["{DRIVER}"].mig', [False, True, False]),
    (f'device.capacity["{DRIVER}"].memory.compareTo(quantity("90Gi")) >= 0', [False, True, False]),
    (f'device.capacity["{DRIVER}"].memory.isGreaterThan(quantity("80Gi"))', [False, True, False]),
    ('device.attributes["example.com"].fw.isGreaterThan(semver("1.9.0"))', [False, True, False]),
    ('device.attributes["example.com"].fw == "1.2.3"', [True, False, False]),
    (f'has(device.attributes["{DRIVER}"].cores)', [True, True, False]),
])
def test_cel_selectors_evaluate_as_cel_does(expression, expected):
    table = DeviceTable.build([ResourceSlice.model_validate(CEL_SLICE)], {"n0": 0})
    assert table.selected(expression).matched.tolist() == expected
    assert len(table.activations) == 3


def pool_slice(node: str, name: str, models: list[str], count: int, generation: int, pool: str = "") -> dict:
    doc = slice_doc(node, models)
    return {**doc, "metadata": {"name": name}, "spec": {**doc["spec"], "pool": {
        "name": pool or node, "resourceSliceCount": count, "generation": generation}}}


def test_pool_generations_and_incomplete_pools():
    # n0's pool: generation 1 (gpu0, gpu1) is replaced by generation 2, complete in two slices (gpu0 once more, gpu1
    # in the second): the old slice is out of date, so its devices neither clash nor count. n1's pool says three
    # slices and has one: incomplete, none of its devices is allocated (upstream GatherPools), and a request for All
    # devices fails there even though n1's complete pool n1-b has a free A100, gpu9 (and n0's only A100 is taken):
    # upstream's allocator returns an error naming the pool (n1 sorts before n1-b), and the cycle fails with it.
    docs = [pool_slice("n0", "old", ["A100", "A100"], 1, 1),
            pool_slice("n0", "new-a", ["A100"], 2, 2),
            {**pool_slice("n0", "new-b", [], 2, 2)},
            pool_slice("n1", "n1-a", ["A100", "A100"], 3, 1),
            {**pool_slice("n1", "n1-b", [], 1, 1, pool="n1-b")},
            claim_doc("two", 2), claim_doc("again", 2),
            {**claim_doc("all"), "spec": {"devices": {"requests": [
                {"name": "g", "exactly": {"deviceClassName": "gpu-a100", "allocationMode": "All"}}]}}}]
    docs[2]["spec"] = {**docs[2]["spec"], "devices": [{"name": "gpu1", "attributes": {"model": {"string": "B"}}}]}
    docs[4]["spec"] = {**docs[4]["spec"], "devices": [{"name": "gpu9", "attributes": {"model": {"string": "A100"}}}]}
    c = cluster({"n0": [], "n1": []}, docs)
    table = c.claims.devices
    assert [table.keys[d][2] for d in table.slots[0] if d >= 0] == ["gpu0", "gpu1"]      # generation 2 only
    assert [table.keys[d][2] for d in table.slots[1] if d >= 0] == ["gpu9"]
    assert table.incomplete.tolist() == [False, True]
    s = Scheduler(c)
    # p takes n0's two devices; q's two would fit on n1 only with the incomplete pool's devices.
    s.add_pods([pod("p", [{"name": "g", "resourceClaimName": "two"}]),
                pod("q", [{"name": "g", "resourceClaimName": "again"}])])
    s.run_until_idle()
    assert devices_of(s, "default/two") == ["n0/gpu0", "n0/gpu1"] and devices_of(s, "default/again") is None
    s.add_pods([pod("r", [{"name": "g", "resourceClaimName": "all"}])])
    s.run_until_idle()
    assert devices_of(s, "default/all") is None
    assert s.pending_message["default/r"] == ('running "DynamicResources" filter plugin: claim default/all, request g: '
                                              f'asks for all devices, but resource pool {DRIVER}/n1 is currently '
                                              'being updated')


def test_devices_that_look_alike_are_evaluated_once():
    devices = [{"name": f"g{i}", "attributes": {"model": {"string": "A100" if i % 2 else "H100"}}} for i in range(50)]
    doc = {"metadata": {"name": "s"}, "spec": {"driver": DRIVER, "nodeName": "n0",
                                               "pool": {"name": "p", "resourceSliceCount": 1}, "devices": devices}}
    table = DeviceTable.build([ResourceSlice.model_validate(doc)], {"n0": 0})
    assert len(table.activations) == 2
    assert table.selected(f'device.attributes["{DRIVER}"].model == "A100"').matched.tolist() == [i % 2 == 1
                                                                                          for i in range(50)]


def test_cel_errors_name_the_selector():
    bad_syntax = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "x"},
                  "spec": {"selectors": [{"cel": {"expression": "device.driver =="}}]}}
    with pytest.raises(InputError, match=r'^DeviceClass x: spec.selectors\[0\].cel.expression: invalid CEL '
                                         r'expression "device.driver ==": .*Syntax error'):
        load_text(yaml.safe_dump(bad_syntax))
    not_bool = {**bad_syntax, "spec": {"selectors": [{"cel": {"expression": "device.driver"}}]}}
    objects = parse_objects([not_bool, CEL_SLICE | {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice"}])
    objects.nodes = [make_node("n0")]
    with pytest.raises(InputError, match=r'^DeviceClass x: spec.selectors\[0\].cel.expression: CEL expression '
                                         r'"device.driver": must evaluate to a bool'):
        Cluster.from_objects(objects)


# -- the kernel against the reference -----------------------------------------------------------------------------
DRIVERS, MODELS = ("d1.io", "d2.io"), ("A", "B", "C")


@st.composite
def device_cases(draw):
    n = draw(st.integers(1, 5))
    nodes = [f"n{i}" for i in range(n)] + (["gone"] if draw(st.booleans()) else [])
    slices = []
    for node in nodes:
        for driver in DRIVERS:
            k = draw(st.integers(0, 3))
            if k:
                devices = []
                for j in range(k):
                    attrs = {}
                    model = draw(st.sampled_from(MODELS + (None,)))
                    if model is not None:
                        attrs["model"] = {"string": model}
                    devices.append({"name": f"dev{j}", "attributes": attrs})
                slices.append({"metadata": {"name": f"{node}-{driver}"}, "spec": {
                    "driver": driver, "pool": {"name": node, "resourceSliceCount": 1}, "nodeName": node,
                    "devices": devices}})
    requests = []
    for _ in range(draw(st.integers(0, 3))):
        driver = draw(st.sampled_from(DRIVERS + (None,)))
        model = draw(st.sampled_from(MODELS + ("Z", None)))
        requests.append((driver, model, draw(st.integers(1, 3)), draw(st.integers(0, 4)) == 0))
    return n, slices, requests, draw(st.data())


@settings(max_examples=150)
@given(device_cases())
def test_filter_matches_reference(case):
    n, slice_docs, requests, data = case
    slices = [ResourceSlice.model_validate(s) for s in slice_docs]
    table = DeviceTable.build(slices, {f"n{i}": i for i in range(n)})
    d = table.size
    allocated = np.array(data.draw(st.lists(st.booleans(), min_size=d, max_size=d)), bool).reshape(d)
    pinned = data.draw(st.lists(st.integers(-1, n - 1), max_size=2))
    matches, ref_requests = [], []
    # the table's rows are in the allocator's order (pools by driver and name), not the input's
    by_key = {(s.spec.driver, s.spec.pool.name, dev.name): (s.spec.driver, dev.attributes.get("model"))
              for s in slices for dev in s.spec.devices}
    raw = [by_key[key] for key in table.keys]
    for driver, model, count, all_mode in requests:
        expr = " && ".join(([f'device.driver == "{driver}"'] if driver else [])
                           + ([f'device.attributes["{driver or DRIVERS[0]}"].model == "{model}"'] if model else []))
        matches.append(table.selected(expr).matched if expr else np.ones(d, bool))
        ref_matches = {i for i, (drv, attr) in enumerate(raw)
                       if (driver is None or drv == driver)
                       and (model is None or (drv == (driver or DRIVERS[0]) and attr is not None
                                              and attr.string == model))}
        ref_requests.append({"matches": ref_matches, "count": count, "all": all_mode})
    q = len(requests)
    padded = np.zeros((q, d + 1), bool)
    if q:
        padded[:, :d] = np.stack(matches)
    code, payload, assign = dynamic_resources_allocate(
        np, table.slots, np.append(allocated, True), padded,
        np.array([r[2] for r in requests], np.int64).reshape(q), np.array([r[3] for r in requests], bool).reshape(q),
        np.array(pinned, np.int64).reshape(len(pinned)))
    node_devices = [[dv for dv in table.slots[i].tolist() if dv >= 0] for i in range(n)]
    expected = dra_filter(node_devices, allocated.tolist(), ref_requests, pinned)
    for i, (ref_code, ref_payload, taken) in enumerate(expected):
        assert (int(code[i]), int(payload[i])) == (ref_code, ref_payload)
        got = {int(table.slots[i, s]): int(assign[i, s]) for s in range(table.slots.shape[1]) if assign[i, s] >= 0}
        assert got == (taken if ref_code == 0 else got)


# -- prioritized lists (firstAvailable) ----------------------------------------------------------------------------
def prio_claim_doc(name: str, *requests: dict) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name,
                                                                                      "namespace": "default"},
            "spec": {"devices": {"requests": list(requests)}}}


def first_available(name: str, *subs: tuple[str, str, int]) -> dict:
    """A request with a prioritized list of (name, class, count) subrequests."""
    return {"name": name, "firstAvailable": [{"name": n, "deviceClassName": c, "count": k} for n, c, k in subs]}


def exactly(name: str, cls: str, count: int = 1) -> dict:
    return {"name": name, "exactly": {"deviceClassName": cls, "count": count}}


def allocated_requests(result, pod_key: str = "default/p") -> list[tuple[str, str, str]]:
    """(claim, request, node-less device name) of the pod's allocations, in claim order then device order."""
    return [(a["claim"].split("/", 1)[1], a["request"], a["device"]) for a in result.allocations.get(pod_key, [])]


def schedule_prio(gpus: dict[str, list[str]], *claims: dict, extra=()):
    c = cluster(gpus, [*claims, *extra])
    entries = [{"name": f"c{i}", "resourceClaimName": doc["metadata"]["name"]} for i, doc in enumerate(claims)]
    c.pending = [pod("p", entries)]
    return Scheduler(c).schedule()


def test_first_subrequest_wins_when_it_fits():
    # n0: gpu0 A100, gpu1 T4. g's first subrequest asks for an A100: it fits, so it is taken (gpu0), named "g/a100".
    result = schedule_prio({"n0": ["A100", "T4"]},
                           prio_claim_doc("c", first_available("g", ("a100", "gpu-a100", 1), ("any", "gpu", 1))))
    assert result.bindings == {"default/p": "n0"}
    assert allocated_requests(result) == [("c", "g/a100", "gpu0")]


def test_second_subrequest_when_the_first_does_not_fit_on_the_node():
    # n0 has T4s only: no A100, so the first subrequest cannot be satisfied; the second takes the first GPU, gpu0.
    result = schedule_prio({"n0": ["T4", "T4"]},
                           prio_claim_doc("c", first_available("g", ("a100", "gpu-a100", 1), ("any", "gpu", 1))))
    assert result.bindings == {"default/p": "n0"}
    assert allocated_requests(result) == [("c", "g/any", "gpu0")]
    # Two A100s asked first: n0 has one, so the list falls to its second subrequest (2 of any kind).
    result = schedule_prio({"n0": ["A100", "T4"]},
                           prio_claim_doc("c", first_available("g", ("a100", "gpu-a100", 2), ("any", "gpu", 2))))
    assert allocated_requests(result) == [("c", "g/any", "gpu0"), ("c", "g/any", "gpu1")]


def test_backtracking_across_two_requests():
    # n0: gpu0 A100, gpu1 T4. Request "first" prefers an A100 (big), else any GPU (small); request "second" needs the
    # A100. first/big takes gpu0 and leaves second nothing: the allocator backtracks into first/small, whose first
    # device gpu0 again leaves second nothing, then gpu1: second takes gpu0.
    first = first_available("first", ("big", "gpu-a100", 1), ("small", "gpu", 1))
    result = schedule_prio({"n0": ["A100", "T4"]}, prio_claim_doc("c", first, exactly("second", "gpu-a100")))
    assert result.bindings == {"default/p": "n0"}
    assert allocated_requests(result) == [("c", "first/small", "gpu1"), ("c", "second", "gpu0")]
    # The same across two claims of the pod (claims in pod order): c1's list backtracks for c2.
    result = schedule_prio({"n0": ["A100", "T4"]}, prio_claim_doc("c1", first),
                           prio_claim_doc("c2", exactly("second", "gpu-a100")))
    assert allocated_requests(result) == [("c1", "first/small", "gpu1"), ("c2", "second", "gpu0")]
    # No A100 left for a third request: every choice fails, the node too.
    result = schedule_prio({"n0": ["A100", "T4"]},
                           prio_claim_doc("c", first, exactly("second", "gpu-a100"), exactly("third", "gpu-a100")))
    assert result.bindings == {} and result.unschedulable["default/p"].startswith(
        "0/1 nodes are available: 1 cannot allocate all claims.")


def test_a_subrequest_past_the_claim_limit_is_passed_over():
    # 25 GPUs on n0. r0 takes 20 (gpu0..gpu19); r1's first subrequest would make the claim 40 devices (> 32,
    # AllocationResultsMaxSize): passed over, its second takes gpu20. The least count, 20 + 1, is within the limit.
    result = schedule_prio({"n0": ["T4"] * 25},
                           prio_claim_doc("c", exactly("r0", "gpu", 20), first_available("r1", ("many", "gpu", 20),
                                                                                         ("one", "gpu", 1))))
    assert allocated_requests(result) == [*(("c", "r0", f"gpu{i}") for i in range(20)), ("c", "r1/one", "gpu20")]


def test_claim_limit_counts_the_least_subrequest():
    # 32 + min(1, 2) = 33 > 32: upstream's allocator error before any device is looked at, which fails the cycle.
    result = schedule_prio({"n0": ["T4"] * 2},
                           prio_claim_doc("c", exactly("r0", "gpu", 32), first_available("r1", ("a", "gpu", 1),
                                                                                         ("b", "gpu", 2))))
    assert result.bindings == {} and result.unschedulable["default/p"] == (
        'running "DynamicResources" filter plugin: claim default/c: number of requested devices 33 exceeds the claim '
        'limit of 32')


def test_missing_class_of_a_subrequest_is_named_with_its_request():
    # Upstream's PreFilter checks every subrequest's class, naming it "<request>/<subrequest>".
    result = schedule_prio({"n0": ["T4"]}, prio_claim_doc("c", first_available("g", ("a", "gpu", 1),
                                                                              ("b", "nope", 1))))
    assert result.unschedulable["default/p"].startswith("0/1 nodes are available: request g/b: device class nope does "
                                                        "not exist. no new claims to deallocate")


def test_every_all_subrequest_meets_a_pool_being_updated_before_the_walk():
    # Upstream validates every subrequest before allocating: the second, for All devices, meets n0's pool being
    # updated (2 slices announced, 1 there) although the first could be satisfied. The error names the subrequest.
    doc = slice_doc("n0", ["T4"])
    doc["spec"]["pool"]["resourceSliceCount"] = 2
    c = cluster({}, [doc, prio_claim_doc("c", {"name": "g", "firstAvailable": [
        {"name": "one", "deviceClassName": "gpu"}, {"name": "all", "deviceClassName": "gpu", "allocationMode": "All"}]})],
        nodes=[make_node("n0")])
    c.pending = [pod("p", [{"name": "c0", "resourceClaimName": "c"}])]
    result = Scheduler(c).schedule()
    assert result.unschedulable["default/p"] == (
        'running "DynamicResources" filter plugin: claim default/c, request all: asks for all devices, but resource '
        'pool gpu.example.com/n0 is currently being updated')


def test_allocation_of_a_subrequest_in_the_input():
    # A claim allocated in the input names its subrequest "<request>/<subrequest>"; the pod using it goes there.
    doc = prio_claim_doc("c", first_available("g", ("a100", "gpu-a100", 1), ("any", "gpu", 1)))
    doc["status"] = {"allocation": {"devices": {"results": [
        {"request": "g/any", "driver": DRIVER, "pool": "n1", "device": "gpu0"}]}}}
    result = schedule_prio({"n0": ["A100"], "n1": ["T4"]}, doc)
    assert result.bindings == {"default/p": "n1"} and allocated_requests(result) == [("c", "g/any", "gpu0")]


def test_a_subrequest_selector_fails_only_where_the_walk_evaluates_it():
    # gpu0 has no attribute "mem": the subrequest "bad" reading it fails there (no such key). Tried second, after
    # "ok" is satisfied, it is never evaluated; tried first, the walk evaluates it on gpu0 and the cycle fails with
    # upstream's allocator error (the claim's selector #0, after the class's one).
    ok = {"name": "ok", "deviceClassName": "gpu"}
    bad = {"name": "bad", "deviceClassName": "gpu",
           "selectors": [{"cel": {"expression": f'device.attributes["{DRIVER}"].mem > 1'}}]}
    result = schedule_prio({"n0": ["A100"]}, prio_claim_doc("c", {"name": "g", "firstAvailable": [ok, bad]}))
    assert allocated_requests(result) == [("c", "g/ok", "gpu0")]
    result = schedule_prio({"n0": ["A100"]}, prio_claim_doc("c", {"name": "g", "firstAvailable": [bad, ok]}))
    assert result.unschedulable["default/p"] == ('running "DynamicResources" filter plugin: claim default/c: '
                                                 'selector #0: CEL runtime error: no such key: mem')


@settings(max_examples=200)
@given(st.data())
def test_prioritized_search_matches_reference(data):
    """Kernel first fit plus the host search against the rule written out (tests/reference/dra.py): random devices
    of one node, 1-3 requests of 1-3 alternatives (ExactCount or All) in 1-2 claims, a small claim limit."""
    d = data.draw(st.integers(1, 5))
    devices = list(range(d))
    allocated = [data.draw(st.booleans()) and data.draw(st.booleans()) for _ in devices]
    rows, requests = [], []
    for g in range(data.draw(st.integers(1, 3))):
        ids = []
        for _ in range(data.draw(st.integers(1, 3))):
            ids.append(len(rows))
            rows.append({"matches": set(data.draw(st.lists(st.sampled_from(devices), unique=True))),
                         "count": data.draw(st.integers(1, 3)), "all": data.draw(st.integers(0, 4)) == 0})
        requests.append({"rows": ids, "claim": data.draw(st.integers(0, 1)) if g else 0})
    for g in range(1, len(requests)):            # claims in order: a request's claim never goes back
        requests[g]["claim"] = max(requests[g]["claim"], requests[g - 1]["claim"])
    limit = data.draw(st.sampled_from([2, 3, 32]))
    expected = prioritized_assignment(devices, allocated, rows, requests, limit)
    q = len(rows)
    matches = np.zeros((q, d + 1), bool)
    for i, row in enumerate(rows):
        matches[i, sorted(row["matches"])] = True
    layout = RequestLayout(tuple(tuple(r["rows"]) for r in requests), tuple(r["claim"] for r in requests))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dra_kernel, "ALLOCATION_RESULTS_MAX_SIZE", limit)
        code, payload, assign = dynamic_resources_allocate(
            np, np.array([devices], np.int64), np.array(allocated + [True]), matches,
            np.array([r["count"] for r in rows], np.int64), np.array([r["all"] for r in rows]),
            np.zeros(0, np.int64), layout)
    # The assignment is read on a node that passes only (Reserve's node).
    got = {dv: int(assign[0, dv]) for dv in devices if assign[0, dv] >= 0} if code[0] == 0 else None
    assert (int(code[0]), got) == ((0, expected) if expected is not None else (2, None))


# -- random sequences: allocated once, released exactly ----------------------------------------------------------
@settings(max_examples=100)
@given(st.data())
def test_claims_allocated_once_and_released_exactly(data):
    gpus = {f"n{i}": ["A100"] * data.draw(st.integers(0, 3)) for i in range(data.draw(st.integers(1, 4)))}
    groups = [group_doc(f"g{i}", data.draw(st.sampled_from([None, 1, 2, 3])),
                        [{"name": "gpus", "resourceClaimTemplateName": "two-gpus"}]) for i in range(2)]
    c = cluster(gpus, [template_doc("one-gpu", 1), template_doc("two-gpus", 2), claim_doc("shared", 1), *groups])
    s = Scheduler(c, gang_mode=data.draw(st.sampled_from(["podgroup", "permit"])))
    initial = c.claims.devices.allocated.copy()
    entries = [{"name": "gpus", "resourceClaimTemplateName": "two-gpus"},      # group claim for members
               {"name": "gpu", "resourceClaimTemplateName": "one-gpu"},        # per pod
               {"name": "s", "resourceClaimName": "shared"}]                   # shared by name
    live: list[str] = []
    for step in range(data.draw(st.integers(1, 12))):
        if live and data.draw(st.integers(0, 3)) == 0:
            s.delete_pod(live.pop(data.draw(st.integers(0, len(live) - 1))))
        else:
            group = data.draw(st.sampled_from([None, "g0", "g1"]))
            new = []
            for j in range(data.draw(st.integers(1, 3))):
                mine = data.draw(st.lists(st.sampled_from(entries), max_size=2, unique_by=lambda e: e["name"]))
                new.append(pod(f"p{step}-{j}", mine, cpu=data.draw(st.sampled_from(["1", "3"])), group=group))
            s.add_pods(new)
            live.extend(p.key for p in new)
        s.step(s.now + data.draw(st.sampled_from([0.0, 5.0, 400.0])))
        check_claims(s)
    for key in live:
        s.delete_pod(key)
    check_claims(s)
    assert np.array_equal(c.claims.devices.allocated, initial)
    assert all(cl.devices is None and not cl.users for cl in c.claims.claims.values())


def check_claims(s: Scheduler) -> None:
    book, tensors = s.cluster.claims, s.cluster.tensors
    owned = np.zeros(book.devices.size, bool)
    for claim in book.claims.values():
        if claim.devices is None:
            assert not claim.users, claim.key
            continue
        assert not owned[claim.devices].any(), f"{claim.key}: a device allocated twice"
        owned[claim.devices] = True
        nodes = set(book.devices.node[claim.devices].tolist())
        assert len(nodes) <= 1
        for user in claim.users:            # every user sits on the claim's node
            assert tensors.node_of(user) in nodes, (claim.key, user)
        assert claim.users, f"{claim.key}: allocated without users"
    assert np.array_equal(owned, book.devices.allocated)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_backends_place_claims_alike(backend):
    # The JAX placer hands pods with claims to the per-pod path (eager kernels): same decisions as numpy.
    if backend == "jax":
        pytest.importorskip("jax")
    entry = {"name": "gpu", "resourceClaimTemplateName": "one-gpu"}
    c = cluster({"n0": ["A100", "A100"], "n1": ["A100", "A100"]},
                [template_doc("one-gpu", 1), template_doc("two-gpus", 2), group_doc("g", 2, [GROUP_CLAIM])])
    s = Scheduler(c, backend=backend)
    recs = s.add_pods([pod("m0", [GROUP_CLAIM], group="g"), pod("m1", [GROUP_CLAIM], group="g"),
                       pod("a", [entry]), pod("b", [entry]), pod("c", [entry])]) + s.run_until_idle()
    # a, b, c arrive after the group's members (queue order by arrival): m0, m1 take n0 and both its GPUs;
    # a -> n1 (n0 has no free GPU), b -> n1, c: no free GPU anywhere.
    assert bindings(recs) == {"default/m0": "n0", "default/m1": "n0", "default/a": "n1", "default/b": "n1"}
    assert s.pending_message["default/c"] == "0/2 nodes are available: 2 cannot allocate all claims." + post_filter(2)


def test_topology_group_claim_tries_each_placement_on_its_own_copy():
    # Racks a (n0, n1) and b (n2, n3); only n2 has GPUs. The gang's claim (2 GPUs) cannot be allocated in rack
    # a; in rack b member 0 allocates n2's GPUs and member 1 must follow it to n2. The try on rack a leaves no
    # trace; the chosen placement's allocation is replayed on the real claim state.
    group = group_doc("g", 2, [GROUP_CLAIM])
    group["spec"]["schedulingConstraints"] = {"topology": [{"key": "rack"}]}
    nodes = [make_node(n, labels={"rack": r}) for n, r in (("n0", "a"), ("n1", "a"), ("n2", "b"), ("n3", "b"))]
    c = cluster({"n0": [], "n1": [], "n2": ["A100", "A100"], "n3": []}, [template_doc("two-gpus", 2), group],
                nodes=nodes)
    s = Scheduler(c)
    got = bindings(s.add_pods([pod(f"m{i}", [GROUP_CLAIM], group="g") for i in range(2)]) + s.run_until_idle())
    assert got == {"default/m0": "n2", "default/m1": "n2"}
    assert devices_of(s, "default/g-gpus") == ["n2/gpu0", "n2/gpu1"]
    assert c.claims.devices.allocated.tolist() == [True, True]
    check_claims(s)
    s.delete_pod("default/m0")
    s.delete_pod("default/m1")
    assert not c.claims.devices.allocated.any()


# ---- older API versions, and what the output says was allocated ----

V1BETA1 = f"""---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {{name: s}}
spec:
  driver: {DRIVER}
  nodeName: n1
  pool: {{name: p1, resourceSliceCount: 1}}
  devices:
  - {{name: gpu0, basic: {{attributes: {{model: {{string: A100}}}}, capacity: {{memory: {{value: 80Gi}}}}}}}}
  - {{name: gpu1, basic: {{attributes: {{model: {{string: H100}}}}}}}}
  - {{name: gpu2, basic: {{attributes: {{model: {{string: A100}}}}}}}}
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {{name: c}}
spec:
  devices:
    requests:
    - {{name: a100s, deviceClassName: gpu-a100, count: 2}}
    - {{name: any, deviceClassName: gpu}}
"""
V1 = f"""---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: s}}
spec:
  driver: {DRIVER}
  nodeName: n1
  pool: {{name: p1, resourceSliceCount: 1}}
  devices:
  - {{name: gpu0, attributes: {{model: {{string: A100}}}}, capacity: {{memory: {{value: 80Gi}}}}}}
  - {{name: gpu1, attributes: {{model: {{string: H100}}}}}}
  - {{name: gpu2, attributes: {{model: {{string: A100}}}}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: c}}
spec:
  devices:
    requests:
    - {{name: a100s, exactly: {{deviceClassName: gpu-a100, count: 2}}}}
    - {{name: any, exactly: {{deviceClassName: gpu}}}}
"""
CLAIM_USER = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: registry.k8s.io/pause:3.10}]
  resourceClaims: [{name: g, resourceClaimName: c}]
"""


def test_v1beta1_and_v1beta2_read_as_v1():
    v1 = load_text(CLASSES + V1)
    v1beta1 = load_text(CLASSES + V1BETA1)
    v1beta2 = load_text((CLASSES + V1).replace("resource.k8s.io/v1\n", "resource.k8s.io/v1beta2\n"))
    assert v1beta1.resource_slices == v1.resource_slices == v1beta2.resource_slices
    assert v1beta1.resource_claims == v1.resource_claims == v1beta2.resource_claims
    assert v1beta1.device_classes == v1.device_classes and not v1beta1.warnings


def test_allocated_devices_are_reported_per_request():
    result = Scheduler(Cluster.from_objects(load_text(CLASSES + V1BETA1 + "---" + CLAIM_USER))).schedule()
    assert result.bindings == {"default/p": "n1"}
    # Requests in order: two A100s (gpu0, gpu2), then any device left (gpu1).
    assert result.allocations == {"default/p": [
        {"claim": "default/c", "request": "a100s", "driver": DRIVER, "pool": "p1", "device": "gpu0"},
        {"claim": "default/c", "request": "a100s", "driver": DRIVER, "pool": "p1", "device": "gpu2"},
        {"claim": "default/c", "request": "any", "driver": DRIVER, "pool": "p1", "device": "gpu1"}]}


def test_without_the_cel_package_a_selector_is_an_error_saying_what_to_install(monkeypatch):
    import sys

    from phalanx.cluster_models.dra import cel_program
    monkeypatch.setitem(sys.modules, "cel", None)          # import cel raises ImportError
    cel_program.cache_clear()
    try:
        with pytest.raises(InputError, match=r"^DeviceClass gpu: spec.selectors\[0\].cel.expression: device "
                                             r"selectors need a CEL implementation: pip install 'phalanx\[dra\]'"):
            load_text(CLASSES)
    finally:
        cel_program.cache_clear()


def test_slices_are_tried_in_name_order():
    # v1.36 (#136641): GatherPools sorts a pool's slices by name (and pools by driver and name), so the first-fit
    # allocator tries n0-a's device before n0-b's although the input lists n0-b first.
    slices = [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
               "spec": {"driver": DRIVER, "pool": {"name": "n0", "resourceSliceCount": 2}, "nodeName": "n0",
                        "devices": [{"name": device, "attributes": {"model": {"string": "A100"}}}]}}
              for name, device in (("n0-b", "first-listed"), ("n0-a", "first-named"))]
    c = cluster({"n0": []}, [*slices, template_doc("one", 1)])
    s = Scheduler(c)
    entry = {"name": "gpu", "resourceClaimTemplateName": "one"}
    assert bindings(s.add_pods([pod("p", [entry])]) + s.run_until_idle()) == {"default/p": "n0"}
    assert devices_of(s, "default/p-gpu") == ["n0/first-named"]


# ------------------------------------------------------------------------ extended resources backed by DRA (KEP-5004)
EXT_GPU = "example.com/gpu"


def _gpu_slice(node: str, n: int) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus"},
            "spec": {"driver": "gpu.example.com", "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "nodeName": node, "devices": [{"name": f"gpu-{i}"} for i in range(n)]}}


GPU_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
             "spec": {"extendedResourceName": EXT_GPU,
                      "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}


def test_extended_resource_backed_by_dra_toy():
    # Hand-checked: nodes a and b advertise no example.com/gpu but hold 2 and 1 DRA devices of the class that names
    # it; c advertises 1 (device plugin). Five one-GPU pods: four fit (2 + 1 + 1), each DRA-served pod holding one
    # device of its node in a claim of its own, the one on c none. The two-GPU pod fits nowhere: c has too few
    # (NodeResourcesFit), a and b no free device (DynamicResources).
    objects = parse_objects([GPU_CLASS, _gpu_slice("a", 2), _gpu_slice("b", 1)])
    objects.nodes = [make_node("a"), make_node("b"), make_node("c", extra={EXT_GPU: "1"})]
    objects.pods = ([make_pod(f"p{i}", containers=[{"cpu": "100m", EXT_GPU: "1"}]) for i in range(5)]
                    + [make_pod("q", containers=[{"cpu": "100m", EXT_GPU: "2"}])])
    result = Scheduler(Cluster.from_objects(objects)).schedule()
    bound = {k: v for k, v in result.bindings.items()}
    assert sorted(bound) == ["default/p0", "default/p1", "default/p2", "default/p3"]
    assert sorted(bound.values()) == ["a", "a", "b", "c"]
    for key, node in bound.items():
        held = result.allocations.get(key, [])
        if node == "c":
            assert held == []
        else:
            assert [(a["claim"], a["request"], a["pool"]) for a in held] == [
                (f"{key}-extended-resources", "container-0-request-1", node)]     # requests: cpu, example.com/gpu
    devices = [a["device"] for held in result.allocations.values() for a in held]
    assert len(devices) == 3
    assert result.unschedulable["default/q"].startswith(
        f"0/3 nodes are available: 1 Insufficient {EXT_GPU}, 2 cannot allocate all claims.")


def test_extended_resource_name_is_validated():
    bad = {**GPU_CLASS, "spec": {"extendedResourceName": "cpu"}}
    with pytest.raises(InputError) as error:
        parse_objects([bad])
    assert str(error.value) == ('DeviceClass gpu: spec.extendedResourceName: Invalid value: "cpu": must be a valid '
                                'extended resource name')


def test_extended_resource_class_resolution():
    # v1.36.0's ExtendedResourceCache after the informer's initial list (by name): an explicit name claimed by several
    # classes goes to the newer, the lower name on equal timestamps; a class that meets the name already held by a
    # class at least as good maps nothing, not even deviceclass.resource.kubernetes.io/<class>. Hand-checked: alpha
    # (January) takes example.com/gpu, beta (February) takes it over, gamma (February, a higher name than beta) maps
    # nothing; alpha keeps its implicit name; zeta names no resource and maps its implicit one.
    from phalanx.sched.claims import extended_resource_classes
    objects = parse_objects([
        {**GPU_CLASS, "metadata": {"name": "gamma", "creationTimestamp": "2026-02-01T00:00:00Z"}},
        {**GPU_CLASS, "metadata": {"name": "alpha", "creationTimestamp": "2026-01-01T00:00:00Z"}},
        {**GPU_CLASS, "metadata": {"name": "zeta"}, "spec": {}},
        {**GPU_CLASS, "metadata": {"name": "beta", "creationTimestamp": "2026-02-01T00:00:00Z"}}])
    resolved = {k: v.metadata.name for k, v in extended_resource_classes(objects.device_classes).items()}
    assert resolved == {EXT_GPU: "beta", "deviceclass.resource.kubernetes.io/alpha": "alpha",
                        "deviceclass.resource.kubernetes.io/beta": "beta",
                        "deviceclass.resource.kubernetes.io/zeta": "zeta"}


def test_extended_resource_of_a_class_that_lost_its_name_is_not_backed():
    # Hand-checked: gamma lost example.com/gpu to beta (above), so a pod asking for its implicit name is not served by
    # DRA: PreFilter skips (no class backs the resource) and nothing else in a DynamicResources-only profile stops it.
    from phalanx.sched.config import config_from_doc
    classes = [{**GPU_CLASS, "metadata": {"name": n, "creationTimestamp": "2026-02-01T00:00:00Z"}}
               for n in ("beta", "gamma")]
    objects = parse_objects([*classes, _gpu_slice("a", 1)])
    objects.nodes = [make_node("a")]
    objects.pods = [make_pod(f"p-{n}", containers=[{f"deviceclass.resource.kubernetes.io/{n}": "1"}])
                    for n in ("beta", "gamma")]
    config = config_from_doc({"kind": "KubeSchedulerConfiguration", "profiles": [{"plugins": {"multiPoint": {
        "disabled": [{"name": "*"}], "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"},
                                                 {"name": "DynamicResources"}]}}}]})
    result = Scheduler(Cluster.from_objects(objects), config).schedule()
    assert result.bindings == {"default/p-beta": "a", "default/p-gamma": "a"}
    assert [a["claim"] for a in result.allocations.get("default/p-beta", [])] == ["default/p-beta-extended-resources"]
    assert "default/p-gamma" not in result.allocations


def test_extended_request_of_a_fraction_asks_for_nothing():
    # createResourceRequestAndMappings: Quantity.AsInt64 fails on 1500m, so that container gets no request (not 1);
    # 2000m is the whole 2.
    from phalanx.sched.claims import extended_device_requests
    implicit = "deviceclass.resource.kubernetes.io/gpu"
    pod = make_pod("p", containers=[{implicit: "1500m"}, {implicit: "2000m"}])
    gpu = parse_objects([GPU_CLASS]).device_classes[0]
    requests, resources = extended_device_requests(pod, {implicit: 4}, {implicit: gpu})
    assert [(r.name, r.exactly.count) for r in requests] == [("container-1-request-0", 2)]
    assert resources == (implicit,)


def test_bound_pod_uses_its_claim_for_extended_resources():
    # Hand-checked: node a has 4 DRA GPUs; bound pod b asks for 1 and the input holds the claim the scheduler made for
    # it (annotated, b its controller), allocated gpu-0. b uses that claim rather than get a second device, so pending
    # pod p, asking for 3, gets the other three.
    made = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "b-extended-resources-x7k2q", "namespace": "default",
                         "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "b", "controller": True}]},
            "spec": {"devices": {"requests": [{"name": "container-0-request-0", "exactly": {
                "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}},
            "status": {"allocation": {"devices": {"results": [
                {"request": "container-0-request-0", "driver": "gpu.example.com", "pool": "a", "device": "gpu-0"}]}}}}
    objects = parse_objects([GPU_CLASS, _gpu_slice("a", 4), made])
    objects.nodes = [make_node("a")]
    objects.pods = [make_pod("b", containers=[{EXT_GPU: "1"}], node_name="a"),
                    make_pod("p", containers=[{EXT_GPU: "3"}])]
    result = Scheduler(Cluster.from_objects(objects)).schedule()
    assert result.bindings == {"default/p": "a"}
    assert sorted(a["device"] for a in result.allocations["default/p"]) == ["gpu-1", "gpu-2", "gpu-3"]


def test_stale_claim_for_extended_resources_is_deleted_then_replaced():
    # Hand-checked (upstream's filterExtendedResources and PostFilter): pending pod p's claim for extended resources
    # from an earlier cycle (annotated, p its controller) holds a's only GPU. Filter refuses a with "cannot schedule
    # extended resource claim", PostFilter deletes the claim; the GPU is free again. The next attempt (a node added
    # wakes the pod) gives p a claim of its own holding gpu-0.
    stale = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "p-extended-resources-x7k2q", "namespace": "default",
                          "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
                          "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "controller": True}]},
             "spec": {"devices": {"requests": [{"name": "container-0-request-0", "exactly": {
                 "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}},
             "status": {"allocation": {"devices": {"results": [
                 {"request": "container-0-request-0", "driver": "gpu.example.com", "pool": "a", "device": "gpu-0"}]}}}}
    objects = parse_objects([GPU_CLASS, _gpu_slice("a", 1), stale])
    objects.nodes = [make_node("a")]
    s = Scheduler(Cluster.from_objects(objects))
    s.add_pods([make_pod("p", containers=[{EXT_GPU: "1"}])])
    s.run_until_idle()
    assert s.pending_message["default/p"].startswith(
        "0/1 nodes are available: 1 cannot schedule extended resource claim. deletion of ResourceClaim completed")
    claims = s.cluster.claims
    assert "default/p-extended-resources-x7k2q" not in claims.claims and not claims.devices.allocated.any()
    s.add_nodes([make_node("b")])
    assert bindings(s.run_until_idle()) == {"default/p": "a"}
    assert devices_of(s, "default/p-extended-resources") == ["a/gpu-0"]


@pytest.mark.parametrize("plugin, args", [
    ("NodeResourcesFit", {"scoringStrategy": {"type": "LeastAllocated", "resources": [
        {"name": "cpu", "weight": 1}, {"name": EXT_GPU, "weight": 2}]}}),
    ("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "weight": 1}, {"name": EXT_GPU, "weight": 1}]}),
])
def test_scoring_a_dra_backed_extended_resource_is_refused(plugin, args):
    # Upstream scores such a resource on nodes without it from the class's devices there; phalanx refuses the
    # configuration rather than score it from the node's allocatable alone.
    from phalanx.sched.config import config_from_doc
    objects = parse_objects([GPU_CLASS, _gpu_slice("a", 2)])
    objects.nodes = [make_node("a")]
    config = config_from_doc({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                              "profiles": [{"pluginConfig": [{"name": plugin, "args": args}]}]})
    with pytest.raises(InputError) as error:
        Scheduler(Cluster.from_objects(objects), config)
    assert str(error.value) == (f"{plugin}: scoring resource {EXT_GPU}: an extended resource DeviceClass gpu backs "
                                f"(DRAExtendedResource); scoring it is not modelled by phalanx")


@settings(max_examples=30)
@given(data=st.data())
def test_extended_resource_claims_hold_each_device_once_and_free_them_all(data):
    """Random nodes (DRA devices of the class naming example.com/gpu, the resource advertised, or neither), pods
    asking for it (through the class's name or the implicit deviceclass.resource.kubernetes.io/gpu, init containers
    included), then pods deleted and added: no device is held by two claims, the device table's allocated bits are
    exactly the held devices, and deleting every pod frees every device."""
    docs, nodes = [GPU_CLASS], []
    for i in range(data.draw(st.integers(1, 4))):
        kind = data.draw(st.sampled_from(["dra", "plugin", "none"]))
        if kind == "dra":
            docs.append(_gpu_slice(f"n{i}", data.draw(st.integers(0, 3))))
        nodes.append(make_node(f"n{i}", cpu="8", extra={EXT_GPU: str(data.draw(st.integers(0, 2)))}
                               if kind == "plugin" else None))
    names = st.sampled_from([EXT_GPU, "deviceclass.resource.kubernetes.io/gpu"])

    def new_pod(name):
        init = [({"cpu": "100m", data.draw(names): str(data.draw(st.integers(1, 2)))}, data.draw(st.booleans()))
                for _ in range(data.draw(st.integers(0, 1)))]
        return make_pod(name, containers=[{"cpu": "100m", data.draw(names): str(data.draw(st.integers(0, 3)))}],
                        init_containers=init)

    objects = parse_objects(docs)
    objects.nodes = nodes
    objects.pods = [new_pod(f"p{j}") for j in range(data.draw(st.integers(0, 6)))]
    s = Scheduler(Cluster.from_objects(objects))
    book = s.cluster.claims

    def check():
        held = [d for c in book.claims.values() if c.devices is not None for d in c.devices.tolist()]
        assert len(held) == len(set(held))
        assert sorted(np.flatnonzero(book.devices.allocated).tolist()) == sorted(held)

    s.run_until_idle()
    check()
    for step in range(data.draw(st.integers(0, 5))):
        if data.draw(st.booleans()) and s.arrival:
            s.delete_pod(data.draw(st.sampled_from(sorted(s.arrival))))
        else:
            s.add_pods([new_pod(f"q{step}")])
        s.run_until_idle()
        check()
    for key in sorted(s.arrival):
        s.delete_pod(key)
    s.run_until_idle()
    assert not book.devices.allocated.any()


# -- Score (v1.35+): better-ranked subrequests of prioritized lists ---------------------------------------------------
LIST = first_available("g", ("a100", "gpu-a100", 1), ("any", "gpu", 1))


def dra_scores(report) -> dict[str, tuple[int, int]]:
    """Per feasible node: the DynamicResources Score's (raw, normalized)."""
    return {n["name"]: (n["scores"]["DynamicResources"]["raw"], n["scores"]["DynamicResources"]["normalized"])
            for n in report["nodes"] if n["total"] is not None}


def score_toy(profile=None):
    # n0 holds an A100 (the list's first subrequest fits), n1 a T4 (only the second does); n0 is busier (a bound pod
    # asking for 1 CPU and 1Gi), so the resource scores prefer n1.
    busy = make_pod("busy", cpu="1", memory="1Gi", node_name="n0")
    docs = list(yaml.safe_load_all(CLASSES)) + [slice_doc("n0", ["A100"]), slice_doc("n1", ["T4"]),
                                                prio_claim_doc("c", LIST)]
    objects = parse_objects(docs)
    objects.nodes, objects.pods = [make_node("n0"), make_node("n1")], [busy]
    c = Cluster.from_objects(objects)
    p = pod("p", [{"name": "c0", "resourceClaimName": "c"}])
    return (Scheduler(c) if profile is None else Scheduler(c, profile)), p


def test_score_prefers_the_node_where_the_first_subrequest_fits():
    # By hand, default weights (4 CPU / 8Gi nodes, the pod asks for 1 CPU and 1Gi; n0 already has 1 and 1Gi):
    #   TaintToleration (3): no taints, 100 on both: 300.
    #   NodeResourcesFit (1), LeastAllocated: n0 cpu (4-2)*100/4 = 50, memory (8-2)*100/8 = 75 -> (50+75)/2 = 62;
    #     n1 cpu (4-1)*100/4 = 75, memory (8-1)*100/8 = 87 -> (75+87)/2 = 81.
    #   BalancedAllocation (1), v1.36 scoring the change of balance, 50 + (50 + with - without) / 2 with
    #     balance int((1 - |f_cpu - f_mem| / 2) * 100): n0 with the pod |2/4 - 2/8| / 2 = 0.125 -> 87, without
    #     |1/4 - 1/8| / 2 = 0.0625 -> 93: 50 + 44 / 2 = 72; n1 with 93, without 100: 50 + 43 / 2 = 71.
    #   DynamicResources (2): n0 took g/a100 (rank 0): 8 - 0 = 8; n1 g/any (rank 1): 7. Normalized: 100 and
    #     7*100/8 = 87; weighted 200 and 174.
    #   NodeAffinity, PodTopologySpread, InterPodAffinity, ImageLocality: 0.
    #   Totals: n0 300 + 62 + 72 + 200 = 634, n1 300 + 81 + 71 + 174 = 626: n0 (n1 without the DRA Score: 452
    #   against 434).
    sched, p = score_toy()
    report = explain_pod(sched, p)
    assert dra_scores(report) == {"n0": (8, 100), "n1": (7, 87)}
    assert report["weights"]["DynamicResources"] == 2
    assert {n["name"]: n["total"] for n in report["nodes"]} == {"n0": 634, "n1": 626}
    assert report["selected"] == "n0" and report["warnings"] == []
    assert bindings(sched.add_pods([p]) + sched.run_until_idle()) == {"default/p": "n0"}


def test_score_disabled_in_the_profile_leaves_the_resource_scores():
    # Score disabled for DynamicResources (its Filter stays): n1 wins 452 to 434, as computed above.
    from phalanx.sched.config import config_from_doc
    config = config_from_doc({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                              "profiles": [{"plugins": {"score": {"disabled": [{"name": "DynamicResources"}]}}}]})
    assert config.warnings == ()
    sched, p = score_toy(config)
    report = explain_pod(sched, p)
    assert "DynamicResources" not in report["weights"]
    assert {n["name"]: n["total"] for n in report["nodes"]} == {"n0": 434, "n1": 452}
    assert bindings(sched.add_pods([p]) + sched.run_until_idle()) == {"default/p": "n1"}


def test_score_sums_ranks_over_requests_and_claims_and_normalizes():
    # Three subrequests, n0 fits only the third (8 - 2 = 6), n1 the second (7), n2 the first (8): normalized
    # 6*100/8 = 75, 7*100/8 = 87, 100. A second claim with a list whose first subrequest (3 A100s) fits nowhere
    # adds 7 (its second) on every node; a plain request adds nothing. Four GPUs a node: room for all three claims'
    # requests whatever c took.
    third = first_available("g", ("two-a100", "gpu-a100", 2), ("a100", "gpu-a100", 1), ("any", "gpu", 1))
    c = cluster({"n0": ["T4"] * 4, "n1": ["A100", "T4", "T4", "T4"], "n2": ["A100", "A100", "T4", "T4"]},
                [prio_claim_doc("c", third), prio_claim_doc("d", first_available("h", ("three", "gpu-a100", 3),
                                                                                 ("one", "gpu", 1)),
                                                        exactly("plain", "gpu"))])
    p = pod("p", [{"name": "c0", "resourceClaimName": "c"}, {"name": "c1", "resourceClaimName": "d"}])
    # n0: g/any + h/one = 6 + 7 = 13; n1: g/a100 + h/one = 7 + 7 = 14; n2: g/two-a100 + h/one = 8 + 7 = 15.
    # Normalized over the maximum 15: 13*100/15 = 86, 14*100/15 = 93, 100.
    assert dra_scores(explain_pod(Scheduler(c), p)) == {"n0": (13, 86), "n1": (14, 93), "n2": (15, 100)}


def test_score_counts_a_subrequest_once_whatever_its_devices():
    # g/pair takes two devices on n0 and still adds 8 once; n1 has one GPU, so g/one (7).
    c = cluster({"n0": ["T4", "T4"], "n1": ["T4"]},
                [prio_claim_doc("c", first_available("g", ("pair", "gpu", 2), ("one", "gpu", 1)))])
    p = pod("p", [{"name": "c0", "resourceClaimName": "c"}])
    assert dra_scores(explain_pod(Scheduler(c), p)) == {"n0": (8, 100), "n1": (7, 87)}


def test_score_is_zero_without_prioritized_lists():
    # Plain requests and pods without claims: upstream's Score returns 0 on every node (nothing normalizes).
    c = cluster({"n0": ["T4"], "n1": ["A100"]}, [claim_doc("c")])
    sched = Scheduler(c)
    for p in (pod("p", [{"name": "c0", "resourceClaimName": "c"}]), pod("q")):
        assert dra_scores(explain_pod(sched, p)) == {"n0": (0, 0), "n1": (0, 0)}


def test_score_fails_beside_an_allocated_claim_as_v1_36_0():
    # kubernetes#139017: v1.36.0's Score pairs the pod's claims with the allocations made in the cycle, one per claim
    # to allocate, and fails on the pod's second claim. Claim `empty` (no requests) is allocated by a with no devices,
    # so it pins no node: p (empty + a template GPU claim) has two feasible nodes and its cycle fails, whether its
    # requests have lists or not (the event text of the upstream issue).
    empty = prio_claim_doc("empty")
    c = cluster({"n0": ["T4"], "n1": ["T4"]}, [empty, template_doc("one-gpu")])
    sched = Scheduler(c)
    uses_empty = {"name": "e", "resourceClaimName": "empty"}
    assert bindings(sched.add_pods([pod("a", [uses_empty])]) + sched.run_until_idle()) == {"default/a": "n0"}
    assert devices_of(sched, "default/empty") == []
    p = pod("p", [uses_empty, {"name": "g", "resourceClaimTemplateName": "one-gpu"}])
    assert bindings(sched.add_pods([p]) + sched.run_until_idle()) == {}
    assert sched.pending_message["default/p"] == (
        'running Score plugins: plugin "DynamicResources" failed with: number of allocations 1 is smaller than '
        'number of claims')
    # With one feasible node Score does not run: the same pod binds where the only GPU is.
    c = cluster({"n0": ["T4"], "n1": []}, [empty, template_doc("one-gpu")])
    sched = Scheduler(c)
    assert bindings(sched.add_pods([pod("a", [uses_empty])]) + sched.run_until_idle()) == {"default/a": "n0"}
    assert bindings(sched.add_pods([p]) + sched.run_until_idle()) == {"default/p": "n0"}


def test_score_without_its_prefilter_fails_reading_the_cycle_state():
    # Upstream's Score reads the PreFilter's cycle state first (getStateData, an unwrapped ErrNotFound): with
    # DynamicResources' PreFilter and Filter disabled and its Score on, every cycle with two feasible nodes fails,
    # claims or not. With one feasible node Score does not run.
    from phalanx.sched.config import config_from_doc
    off = [{"name": "DynamicResources"}]
    config = config_from_doc({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                              "profiles": [{"plugins": {"preFilter": {"disabled": off},
                                                        "filter": {"disabled": off}}}]})
    sched = Scheduler(cluster({"n0": [], "n1": []}), config)
    assert bindings(sched.add_pods([pod("q")]) + sched.run_until_idle()) == {}
    assert sched.pending_message["default/q"] == ('running Score plugins: plugin "DynamicResources" failed with: '
                                                  'not found')
    sched = Scheduler(cluster({"n0": []}), config)
    assert bindings(sched.add_pods([pod("q")]) + sched.run_until_idle()) == {"default/q": "n0"}


# -- matchAttribute constraints ------------------------------------------------------------------------------------
def numa_slice(node: str, numas: list[int | None]) -> dict:
    """A node's GPUs gpu0, gpu1, ... with attribute numa (None: the device lacks it)."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus"},
            "spec": {"driver": DRIVER, "pool": {"name": node, "resourceSliceCount": 1}, "nodeName": node,
                     "devices": [{"name": f"gpu{i}", "attributes": {} if v is None else {"numa": {"int": v}}}
                                 for i, v in enumerate(numas)]}}


def constrained_claim(requests: list[tuple[str, int]], constraints: list[dict]) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "c", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": n, "exactly": {"deviceClassName": "gpu", "count": k}}
                                              for n, k in requests], "constraints": constraints}}}


NUMA = {"matchAttribute": f"{DRIVER}/numa"}


def place_constrained(nodes: dict[str, list[int | None]], claim: dict):
    docs = list(yaml.safe_load_all(CLASSES)) + [numa_slice(n, v) for n, v in nodes.items()] + [claim]
    objects = parse_objects(docs)
    objects.nodes = [make_node(n) for n in nodes]
    s = Scheduler(Cluster.from_objects(objects))
    return s, bindings(s.add_pods([pod("p", [{"name": "gpu", "resourceClaimName": "c"}])]) + s.run_until_idle())


def test_constraint_refuses_a_node_whose_devices_differ():
    # n0's two GPUs are on numa 0 and 1: no pair matches; n1's are both on numa 1.
    s, bound = place_constrained({"n0": [0, 1], "n1": [1, 1]}, constrained_claim([("g", 2)], [NUMA]))
    assert bound == {"default/p": "n1"}
    assert devices_of(s, "default/c") == ["n1/gpu0", "n1/gpu1"]


def test_constraint_nowhere_satisfied_leaves_the_pod_pending():
    s, bound = place_constrained({"n0": [0, 1]}, constrained_claim([("g", 2)], [NUMA]))
    assert bound == {}
    assert s.pending_message["default/p"] == "0/1 nodes are available: 1 cannot allocate all claims." + post_filter(1)


def test_constraint_backtracks_past_first_fit():
    # First fit takes gpu0 (numa 0) and gpu1 (numa 1); the allocator backtracks: gpu0 with gpu2 (numa 0).
    s, bound = place_constrained({"n0": [0, 1, 0]}, constrained_claim([("g", 2)], [NUMA]))
    assert bound == {"default/p": "n0"}
    assert devices_of(s, "default/c") == ["n0/gpu0", "n0/gpu2"]


def test_constraint_on_a_subset_of_requests():
    # a (1) and b (1) must match; c (1) is free of the constraint. Walk: a=gpu0 (numa 0), b: gpu1 (numa 1) refused,
    # gpu2 (numa 0) taken; c: gpu1.
    s, bound = place_constrained({"n0": [0, 1, 0]}, constrained_claim(
        [("a", 1), ("b", 1), ("c", 1)], [{**NUMA, "requests": ["a", "b"]}]))
    assert bound == {"default/p": "n0"}
    assert s.cluster.claims.allocations({"default/p"})["default/p"] == [
        {"claim": "default/c", "request": r, "driver": DRIVER, "pool": "n0", "device": d}
        for r, d in (("a", "gpu0"), ("b", "gpu2"), ("c", "gpu1"))]


def test_device_lacking_the_attribute_is_never_taken():
    # gpu0 lacks numa: the constrained request takes gpu1 and gpu2; on n1 only one device has it.
    s, bound = place_constrained({"n1": [None, 3], "n0": [None, 2, 2]}, constrained_claim([("g", 2)], [NUMA]))
    assert bound == {"default/p": "n0"}
    assert devices_of(s, "default/c") == ["n0/gpu1", "n0/gpu2"]


def test_constraint_values_compare_by_kind():
    # An int 1 and a string "1" differ (upstream compares IntValue with IntValue).
    docs = list(yaml.safe_load_all(CLASSES)) + [{
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
        "spec": {"driver": DRIVER, "pool": {"name": "n0", "resourceSliceCount": 1}, "nodeName": "n0",
                 "devices": [{"name": "gpu0", "attributes": {"numa": {"int": 1}}},
                             {"name": "gpu1", "attributes": {"numa": {"string": "1"}}}]}},
        constrained_claim([("g", 2)], [NUMA])]
    objects = parse_objects(docs)
    objects.nodes = [make_node("n0")]
    s = Scheduler(Cluster.from_objects(objects))
    assert bindings(s.add_pods([pod("p", [{"name": "gpu", "resourceClaimName": "c"}])]) + s.run_until_idle()) == {}


@pytest.mark.parametrize("constraint,message", [
    ({}, 'spec.devices.constraints[0]: Required value: exactly one of "matchAttribute" or "distinctAttribute" is '
         'required, but multiple fields are set'),
    ({"distinctAttribute": f"{DRIVER}/numa"},
     "spec.devices.constraints[0].distinctAttribute: distinctAttribute constraints are not modelled"),
    ({"matchAttribute": "numa"}, 'spec.devices.constraints[0].matchAttribute: Invalid value: "numa": a fully '
                                 'qualified name must be a domain and a name separated by a slash'),
    ({"matchAttribute": "/numa"}, 'spec.devices.constraints[0].matchAttribute: Invalid value: "": the domain must '
                                  'not be empty'),
    ({"matchAttribute": f"{DRIVER}/"}, 'spec.devices.constraints[0].matchAttribute: Invalid value: "": the name must '
                                       'not be empty'),
    ({"matchAttribute": f"{DRIVER}/numa-node"},
     'spec.devices.constraints[0].matchAttribute: Invalid value: "numa-node": a valid C identifier must start with '
     "alphabetic character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or "
     "'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')"),
    ({**NUMA, "requests": ["x"]}, 'spec.devices.constraints[0].requests[0]: Invalid value: "x": must be the name of '
                                  "a request in the claim or the name of a request and a subrequest separated by '/'"),
    ({**NUMA, "requests": ["g", "g"]}, 'spec.devices.constraints[0].requests[1]: Duplicate value: "g"'),
    ({**NUMA, "requests": ["g/a/b"]}, 'spec.devices.constraints[0].requests[0]: Invalid value: "g/a/b": must be the '
                                      "name of a request in the claim or the name of a request and a subrequest "
                                      "separated by '/'"),
])
def test_constraint_input_errors(constraint, message):
    with pytest.raises(InputError) as err:
        parse_objects([constrained_claim([("g", 1)], [constraint])])
    assert str(err.value) == f"ResourceClaim default/c: {message}"


def test_too_many_constraints():
    with pytest.raises(InputError) as err:
        parse_objects([constrained_claim([("g", 1)], [NUMA] * 33)])
    assert str(err.value) == "ResourceClaim default/c: spec.devices.constraints: Too many: 33: must have at most 32 items"


def test_constraint_refusing_a_device_of_an_all_request_is_an_allocator_error():
    # a (1) takes gpu0 (numa 0) first; b asks for All devices its selector matches (gpu1, numa 1): upstream's
    # allocateDevice(must) refuses gpu1 for the constraint and Allocate returns that error (the cycle fails).
    claim = constrained_claim([("a", 1)], [NUMA])
    claim["spec"]["devices"]["requests"].append({"name": "b", "exactly": {
        "deviceClassName": "gpu", "allocationMode": "All",
        "selectors": [{"cel": {"expression": 'device.attributes["gpu.example.com"].numa == 1'}}]}})
    s, bound = place_constrained({"n0": [0, 1]}, claim)
    assert bound == {}
    assert "claim default/c, request b: cannot add device gpu.example.com/n0/gpu1 because a claim constraint " \
           "would not be satisfied" in s.pending_message["default/p"]
