"""Upstream's unit-test vectors for Dynamic Resource Allocation (the structured allocator), replayed through phalanx.

Source (kubernetes/kubernetes, v1.36 era, resource.k8s.io/v1):
staging/src/k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/allocator_testing.go, TestAllocator
(the shared cases every allocator channel runs) and its helpers: class(name, driver) is a DeviceClass whose one
selector is `device.driver == "<driver>"`; claimWithRequest(name, req, class) one ExactCount request for one device;
sliceWithOneDevice(name, node, pool, driver) one device "device-1" in a pool of one slice, generation 1;
sliceWithMultipleDevices(..., n) devices device-0 .. device-<n-1>; node(name, region) the node allocated for.

How a case runs here: the cluster holds the case's node only (a slice naming another node is kept, its devices on no
node), its DeviceClasses, ResourceSlices and ResourceClaims (namespace default); upstream's allocatedDevices become a
claim `allocated` whose status holds those devices (an ID of no device in the slices allocates nothing, as upstream's
allocator never meets it). One pod names every claimsToAllocate claim by resourceClaimName, in order, and is
scheduled with a profile of DynamicResources alone. Upstream's expectations map as:

- expectResults with allocations: the pod binds to the node and its claims hold exactly those devices, per claim
  and request (upstream compares each claim's results as a set: gomega.ConsistOf).
- expectResults nil or empty, no error: the allocator found no solution, so upstream's Filter fails the node with
  "cannot allocate all claims" (pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go: fewer
  allocations than claims to allocate): the pod stays pending with that reason.
- expectError: the pod stays pending; where the scheduler reports the same problem before the allocator runs,
  the message is the scheduler's (PreFilter: "request <r>: device class <c> does not exist").

Two cases name two claims claim-0 (upstream's allocator takes them as two objects); here the second is claim-1.
Slices upstream names alike (slice-1 twice) get -2, -3 suffixes: names do not take part in allocation.

Left out (phalanx does not model them; docs/semantics.md "Dynamic Resource Allocation"):
- admin access (all-devices-some-allocated-admin-access, all-devices-some-allocating-admin-access,
  count-devices-some-allocated-admin-access, separate-claims-share-device-admin-access,
  admin-access-claims-device-allocating-for-non-admin-access, admin-access-disabled, admin-access-enabled):
  phalanx ignores adminAccess and allocates such a request exclusively.
- prioritized lists: the device config checks (prioritized-list-device-config and -class-config are replayed for
  their devices only, as config is not modelled), partitionable-devices-prioritized-list and
  -multiple-capacity-pools (shared counters), prioritized-list-disabled (DRAPrioritizedList is on in v1.36).
  Upstream's subrequest names subReq-0 / subReq-1 are not DNS labels, which phalanx's input validation requires: here
  they are subreq-0 / subreq-1 (names only; results read "req-0/subreq-1" where upstream's read "req-0/subReq-1", and
  a constraint naming upstream's req-1/subReq-0 names req-1/subreq-0 here).
- claim constraints: matchAttribute ones are replayed (CONSTRAINT_CASES, with the prioritized-list-subrequests-with-
  constraints-* cases); unknown-constraint (a constraint with neither matchAttribute nor distinctAttribute, which the
  API server rejects) is an input error here; distinctAttribute constraints are refused as not modelled. The
  file version read was searched for constraint cases up to the partitionable-devices ones only.
- network-attached devices (network-attached-device, unsuccessful-allocation-network-attached-device,
  many-network-attached-devices, local-and-network-attached-devices): nodeSelector / allNodes slices are rejected.
- duplicate-slice (two slices of one pool listing the same device: upstream's invalid pool, an error when the
  allocator meets it): phalanx refuses a device listed twice in a pool as an input error.
- requests the API server rejects (empty-class: deviceClassName is required; unknown-selector: a selector needs
  cel; unknown-allocation-mode): phalanx rejects them as input errors too (tested in tests/test_dra_errors.py).
- shared counters (every partitionable-devices-* case): a slice's sharedCounters and a device's consumesCounters
  are rejected as not modelled.
- device taints with the DRADeviceTaints gate off (tainted-disabled and tainted-*-disabled: phalanx reads taints as
  v1.36's default, on; tainted-prioritized-list and tainted-admin-access need unmodelled features), binding
  conditions and bindsToNode (device-binding-conditions,
  binding-conditions-*, node-restriction), consumable capacity and multiple allocations of one device
  (consumable-capacity-*, allowMultipleAllocations): not modelled (consumable capacity, multiple allocations and
  admin access are refused at input; the others are ignored). Extended resources backed by DRA: TestAllocator has
  no case of its own for them (the scheduler builds the claim); TestPlugin's cases are ported below.
- The cases after the binding-conditions ones in the file version read (consumable capacity and later) were not
  reviewed one by one.
"""
from __future__ import annotations

import pytest

from phalanx.cluster_models import InputError, parse_objects
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.config import config_from_doc

try:
    from tests.strategies import make_node, make_pod
except ImportError:  # rootdir not on sys.path: tests/ itself is (pytest prepend import mode)
    from strategies import make_node, make_pod

V1 = "resource.k8s.io/v1"
CLASS_A, CLASS_B, DRIVER_A, DRIVER_B = "class-a", "class-b", "driver-a", "driver-b"
NODE_1, NODE_2 = "node-1", "node-2"
CANNOT_ALLOCATE = "0/1 nodes are available: 1 cannot allocate all claims."


# ------------------------------------------------------------------------------------------------ objects
def cls(name: str, driver: str) -> dict:
    """class(name, driver)."""
    return {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}}


def req(name: str, class_name: str, count: int | None = 1, selectors=(), mode: str = "ExactCount") -> dict:
    """request(name, class, count, selectors...) (mode All: allDeviceRequest, no count)."""
    exactly = {"deviceClassName": class_name, "allocationMode": mode}
    if mode != "All" and count is not None:
        exactly["count"] = count
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    return {"name": name, "exactly": exactly}


def all_req(name: str, class_name: str) -> dict:
    return req(name, class_name, None, mode="All")


def sub(name: str, class_name: str, count: int | None = 1, selectors=(), mode: str = "ExactCount") -> dict:
    """subRequest(name, class, count, selectors...) (withAllocationMode(All): mode All, no count)."""
    return {"name": name, **req(name, class_name, count, selectors, mode)["exactly"]}


def prio(name: str, *subrequests: dict) -> dict:
    """requestWithPrioritizedList(name, subrequests...)."""
    return {"name": name, "firstAvailable": list(subrequests)}


def claim(name: str, *requests: dict, config=None) -> dict:
    devices = {"requests": list(requests)}
    if config:
        devices["config"] = config
    return {"apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": devices}}


def dev(name: str, capacity: dict | None = None, attributes: dict | None = None) -> dict:
    """device(name, capacity, attributes)."""
    out = {"name": name}
    if capacity:
        out["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    if attributes:
        out["attributes"] = attributes
    return out


def slc(name: str, node: str, pool: str, driver: str, *devices: dict, count: int = 1, generation: int = 1) -> dict:
    """sliceWithDevices(name, node, pool, driver, devices...): pool generation 1 of one slice (resourcePool(pool,
    count) and a generation bump where upstream's case makes them)."""
    return {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": driver, "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
                     "nodeName": node, "devices": list(devices)}}


def one(name: str, node: str, pool: str, driver: str) -> dict:
    """sliceWithOneDevice: device-1."""
    return slc(name, node, pool, driver, dev("device-1"))


def many(name: str, node: str, pool: str, driver: str, n: int) -> dict:
    """sliceWithMultipleDevices: device-0 .. device-<n-1>."""
    return slc(name, node, pool, driver, *[dev(f"device-{i}") for i in range(n)])


def mem_at_least(q: str) -> str:
    return f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("{q}")) >= 0'


NO_SCHEDULE, NO_EXECUTE = "NoSchedule", "NoExecute"


def tainted(name: str, *effects: str) -> dict:
    """device(name).withTaints(taint<effect>...): key taint-key, value taint-value."""
    return {**dev(name), "taints": [{"key": "taint-key", "value": "taint-value", "effect": e} for e in effects]}


def tolerating(request: dict, *effects: str) -> dict:
    """The request withTolerations(toleration<effect>...): Equal taint-key=taint-value for that effect."""
    tolerations = [{"key": "taint-key", "operator": "Equal", "value": "taint-value", "effect": e} for e in effects]
    return {**request, "exactly": {**request["exactly"], "tolerations": tolerations}}


def res(request: str, driver: str, pool: str, device: str) -> tuple:
    """deviceAllocationResult(request, driver, pool, device, false)."""
    return (request, driver, pool, device)


# ------------------------------------------------------------------------------------------------ harness
PROFILE = {"kind": "KubeSchedulerConfiguration", "profiles": [{
    "plugins": {"multiPoint": {"disabled": [{"name": "*"}],
                               "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"},
                                           {"name": "DynamicResources"}]}}}]}


def allocated_claim(devices) -> dict:
    """upstream's allocatedDevices: a claim holding them (an existing allocation)."""
    results = [{"request": "r", "driver": d, "pool": p, "device": n} for d, p, n in devices]
    doc = claim("allocated", req("r", CLASS_A, len(results) or 1))
    doc["status"] = {"allocation": {"devices": {"results": results}}}
    return doc


def run(case: dict):
    """(bound node or None, {claim: sorted results}, pending message or None)."""
    slices = case.get("slices", [])
    known = {(s["spec"]["driver"], s["spec"]["pool"]["name"], d["name"]) for s in slices for d in s["spec"]["devices"]}
    allocated = [d for d in case.get("allocated", []) if d in known]
    named: dict[str, int] = {}
    for i, s in enumerate(slices):        # upstream reuses slice names (its allocator never reads them)
        n = named[s["metadata"]["name"]] = named.get(s["metadata"]["name"], 0) + 1
        if n > 1:
            slices = [*slices[:i], {**s, "metadata": {"name": f'{s["metadata"]["name"]}-{n}'}}, *slices[i + 1:]]
    docs = list(case.get("classes", [])) + list(slices) + list(case.get("claims", []))
    if allocated:
        docs.append(allocated_claim(allocated))
    objects = parse_objects(docs)
    objects.nodes = [make_node(case.get("node", NODE_1), labels={"region": case.get("region", "region-1")})]
    pod = make_pod("p", cpu="0", memory="0")
    doc = pod.model_dump(by_alias=True, exclude_defaults=True)
    doc["spec"]["resourceClaims"] = [{"name": f"c{i}", "resourceClaimName": c["metadata"]["name"]}
                                     for i, c in enumerate(case.get("claims", []))]
    objects.pods = [type(pod).model_validate(doc)]
    result = Scheduler(Cluster.from_objects(objects), config_from_doc(PROFILE)).schedule()
    got: dict[str, list] = {}
    for a in result.allocations.get("default/p", []):
        got.setdefault(a["claim"].split("/", 1)[1], []).append((a["request"], a["driver"], a["pool"], a["device"]))
    return result.bindings.get("default/p"), {k: sorted(v) for k, v in got.items()}, \
        result.unschedulable.get("default/p")


# ------------------------------------------------------------------------------------------------ TestAllocator
SMALL_LARGE = claim("claim-0", req("req-0", CLASS_A, 1, [mem_at_least("1Gi")]),
                    req("req-1", CLASS_A, 1, [mem_at_least("2Gi")]))
ALL_A = claim("claim-0", all_req("req-0", CLASS_A))
ONE_B = claim("claim-1", req("req-0", CLASS_B, 1))
ONE_A_CLAIM1 = claim("claim-1", req("req-0", CLASS_A, 1))
BOTH = [cls(CLASS_A, DRIVER_A), cls(CLASS_B, DRIVER_B)]
CONFIG = {"opaque": {"driver": DRIVER_A, "parameters": {"deviceAttribute": "deviceAttributeValue"}}}

# name -> case: claims, classes, slices, node, allocated; expect: {claim: [results]} (bound), None (cannot allocate),
# or a string (pending, the message contains it).
CASES = {
    "empty": dict(expect={}),
    "simple": dict(claims=[claim("claim-0", req("req-0", CLASS_A))], classes=[cls(CLASS_A, DRIVER_A)],
                   slices=[one("slice-1", NODE_1, "pool-1", DRIVER_A)],
                   expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-1")]}),
    "other-node": dict(claims=[claim("claim-0", req("req-0", CLASS_A))], classes=[cls(CLASS_A, DRIVER_A)],
                       slices=[one("slice-1", NODE_1, "pool-1", DRIVER_B), one("slice-2", NODE_2, "pool-2", DRIVER_A)],
                       node=NODE_2, region="region-2",
                       expect={"claim-0": [res("req-0", DRIVER_A, "pool-2", "device-1")]}),
    "small-and-large": dict(
        claims=[SMALL_LARGE], classes=[cls(CLASS_A, DRIVER_A)],
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", {"memory": "1Gi"}),
                    dev("device-2", {"memory": "2Gi"}))],
        expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-1"), res("req-1", DRIVER_A, "pool-1", "device-2")]}),
    "small-and-large-backtrack-requests": dict(
        claims=[SMALL_LARGE], classes=[cls(CLASS_A, DRIVER_A)],
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-2", {"memory": "2Gi"}),
                    dev("device-1", {"memory": "1Gi"}))],
        expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-1"), res("req-1", DRIVER_A, "pool-1", "device-2")]}),
    "small-and-large-backtrack-claims": dict(
        claims=[claim("claim-0", req("req-0", CLASS_A, 1, [mem_at_least("1Gi")])),
                claim("claim-1", req("req-1", CLASS_A, 1, [mem_at_least("2Gi")]))],
        classes=[cls(CLASS_A, DRIVER_A)],
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-2", {"memory": "2Gi"}),
                    dev("device-1", {"memory": "1Gi"}))],
        expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-1")],
                "claim-1": [res("req-1", DRIVER_A, "pool-1", "device-2")]}),
    "devices-split-across-different-slices": dict(
        claims=[claim("claim-0", req("req-0", CLASS_A, 2))], classes=[cls(CLASS_A, DRIVER_A)],
        slices=[one("slice-1", NODE_1, "pool-1", DRIVER_A), one("slice-2", NODE_1, "pool-2", DRIVER_A)],
        expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-1"), res("req-0", DRIVER_A, "pool-2", "device-1")]}),
    # The newer generation replaces the older slice; the pool then has one of its two slices: incomplete, so none of
    # its devices is allocated (upstream expects an empty result).
    "obsolete-slice": dict(
        claims=[claim("claim-0", req("req-0", CLASS_A))], classes=[cls(CLASS_A, DRIVER_A)],
        slices=[slc("slice-1-obsolete", NODE_1, "pool-1", DRIVER_A, dev("device-1"), count=2),
                slc("slice-1-obsolete", NODE_1, "pool-1", DRIVER_A, dev("device-2"), count=2, generation=2)],
        expect=None),
    "no-slices": dict(claims=[claim("claim-0", req("req-0", CLASS_A))], classes=[cls(CLASS_A, DRIVER_A)], expect=None),
    # Upstream lists claim-0 twice (requests req-0 and req-1); the second is claim-1 here.
    "not-enough-suitable-devices": dict(
        claims=[claim("claim-0", req("req-0", CLASS_A)), claim("claim-1", req("req-1", CLASS_A))],
        classes=[cls(CLASS_A, DRIVER_A)], slices=[one("slice-1", NODE_1, "pool-1", DRIVER_A)], expect=None),
    # Upstream's allocator: "could not retrieve device class class-a"; the scheduler's PreFilter meets it first.
    "no-classes": dict(claims=[claim("claim-0", req("req-0", CLASS_A))],
                       slices=[one("slice-1", NODE_1, "pool-1", DRIVER_A)],
                       expect="request req-0: device class class-a does not exist"),
    "unknown-class": dict(claims=[claim("claim-0", req("req-0", "unknown-class"))], classes=[cls(CLASS_A, DRIVER_A)],
                          slices=[one("slice-1", NODE_1, "pool-1", DRIVER_A)],
                          expect="request req-0: device class unknown-class does not exist"),
    "no-claims-to-allocate": dict(classes=[cls(CLASS_A, DRIVER_A)], slices=[one("slice-1", NODE_1, "pool-1", DRIVER_A)],
                                  expect={}),
    "all-devices-single": dict(claims=[ALL_A], classes=[cls(CLASS_A, DRIVER_A)],
                               slices=[one("slice-1", NODE_1, "pool-1", DRIVER_A)],
                               expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-1")]}),
    "all-devices-many": dict(claims=[ALL_A], classes=[cls(CLASS_A, DRIVER_A)],
                             slices=[one("slice-1", NODE_1, "pool-1", DRIVER_A), one("slice-1", NODE_1, "pool-2", DRIVER_A)],
                             expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-1"),
                                                 res("req-0", DRIVER_A, "pool-2", "device-1")]}),
    "all-devices-plus-another": dict(
        claims=[ALL_A, ONE_B], classes=BOTH,
        slices=[one("slice-1", NODE_1, "pool-1", DRIVER_A), one("slice-1", NODE_1, "pool-1", DRIVER_B)],
        expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-1")],
                "claim-1": [res("req-0", DRIVER_B, "pool-1", "device-1")]}),
    "all-devices-plus-another-reversed": dict(
        claims=[ONE_B, ALL_A], classes=BOTH,
        slices=[one("slice-1", NODE_1, "pool-1", DRIVER_A), one("slice-1", NODE_1, "pool-1", DRIVER_B)],
        expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-1")],
                "claim-1": [res("req-0", DRIVER_B, "pool-1", "device-1")]}),
    "all-devices-many-plus-another": dict(
        claims=[ALL_A, ONE_B], classes=BOTH,
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1"), dev("device-2")),
                one("slice-1", NODE_1, "pool-1", DRIVER_B)],
        expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-1"), res("req-0", DRIVER_A, "pool-1", "device-2")],
                "claim-1": [res("req-0", DRIVER_B, "pool-1", "device-1")]}),
    "all-devices-many-plus-another-reversed": dict(
        claims=[ONE_B, ALL_A], classes=BOTH,
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1"), dev("device-2")),
                one("slice-1", NODE_1, "pool-1", DRIVER_B)],
        expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-1"), res("req-0", DRIVER_A, "pool-1", "device-2")],
                "claim-1": [res("req-0", DRIVER_B, "pool-1", "device-1")]}),
    # One device, two claims both trying to allocate it (upstream expects no results).
    "all-devices-no-solution": dict(claims=[ONE_A_CLAIM1, ALL_A], classes=[cls(CLASS_A, DRIVER_A)],
                                    slices=[one("slice-1", NODE_1, "pool-1", DRIVER_A)], expect=None),
    "all-devices-no-solution-reversed": dict(claims=[ALL_A, ONE_A_CLAIM1], classes=[cls(CLASS_A, DRIVER_A)],
                                             slices=[one("slice-1", NODE_1, "pool-1", DRIVER_A)], expect=None),
    "all-devices-slice-without-devices": dict(claims=[ALL_A], classes=[cls(CLASS_A, DRIVER_A)],
                                              slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A)], expect=None),
    "all-devices-no-slices": dict(claims=[ALL_A], classes=[cls(CLASS_A, DRIVER_A)], expect=None),
    "all-devices-some-allocated": dict(
        claims=[ALL_A], classes=[cls(CLASS_A, DRIVER_A)], allocated=[(DRIVER_A, "pool-1", "device-1")],
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1"), dev("device-2"))], expect=None),
    # Upstream lists claim-0 twice (classes a and b); the second is claim-1 here.
    "several-different-drivers": dict(
        claims=[claim("claim-0", req("req-0", CLASS_A)), claim("claim-1", req("req-0", CLASS_B))], classes=BOTH,
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1"), dev("device-2")),
                one("slice-1", NODE_1, "pool-1", DRIVER_B)],
        expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-1")],
                "claim-1": [res("req-0", DRIVER_B, "pool-1", "device-1")]}),
    # device-2 is in no slice: only device-1's allocation counts.
    "already-allocated-devices": dict(
        claims=[claim("claim-0", req("req-0", CLASS_A))], classes=[cls(CLASS_A, DRIVER_A)],
        allocated=[(DRIVER_A, "pool-1", "device-1"), (DRIVER_A, "pool-1", "device-2")],
        slices=[one("slice-1", NODE_1, "pool-1", DRIVER_A)], expect=None),
    # Device configuration (class or claim) is not modelled; the devices allocated are upstream's.
    "with-class-device-config": dict(
        claims=[claim("claim-0", req("req-0", CLASS_A))],
        classes=[{**cls(CLASS_A, DRIVER_A), "spec": {**cls(CLASS_A, DRIVER_A)["spec"], "config": [CONFIG]}}],
        slices=[one("slice-1", NODE_1, "pool-1", DRIVER_A)],
        expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-1")]}),
    "with-class-device-config-with-multiple-request-and-configs": dict(
        claims=[claim("claim-0", req("req-0", CLASS_A), req("req-1", CLASS_A), req("req-2", CLASS_B))],
        classes=[{**c, "spec": {**c["spec"], "config": [CONFIG]}} for c in BOTH],
        slices=[many("slice-1", NODE_1, "pool-1", DRIVER_A, 2), one("slice-2", NODE_1, "pool-1", DRIVER_B)],
        expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-0"), res("req-1", DRIVER_A, "pool-1", "device-1"),
                            res("req-2", DRIVER_B, "pool-1", "device-1")]}),
    "claim-with-device-config": dict(
        claims=[claim("claim-0", req("req-0", CLASS_A), config=[CONFIG])], classes=[cls(CLASS_A, DRIVER_A)],
        slices=[one("slice-1", NODE_1, "pool-1", DRIVER_A)],
        expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-1")]}),
    "max-number-devices": dict(
        claims=[claim("claim-0", req("req-0", CLASS_A, 32))], classes=[cls(CLASS_A, DRIVER_A)],
        slices=[many("slice-1", NODE_1, "pool-1", DRIVER_A, 32)],
        expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", f"device-{i}") for i in range(32)]}),
    # A taint with effect None keeps nothing off the device (upstream, whether or not DRADeviceTaints is on).
    "tainted-no-effect": dict(
        claims=[claim("claim-0", req("req-0", CLASS_A))], classes=[cls(CLASS_A, DRIVER_A)],
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A,
                    {**dev("device-1"), "taints": [{"key": "taint-key", "value": "taint-value", "effect": "None"}]})],
        expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-1")]}),
    # DRADeviceTaints (beta, on in v1.36): a NoSchedule or NoExecute taint keeps the device from a request that does
    # not tolerate it. Upstream's fixtures: taintNoSchedule / taintNoExecute are key taint-key, value taint-value
    # with that effect; tolerationNoSchedule / tolerationNoExecute tolerate them with operator Equal.
    "tainted-two-devices": dict(
        claims=[claim("claim-0", req("req-0", CLASS_A))], classes=[cls(CLASS_A, DRIVER_A)],
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, tainted("device-1", NO_SCHEDULE),
                    tainted("device-2", NO_EXECUTE))],
        expect=None),
    "tainted-one-device-two-taints": dict(
        claims=[claim("claim-0", req("req-0", CLASS_A))], classes=[cls(CLASS_A, DRIVER_A)],
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, tainted("device-1", NO_SCHEDULE, NO_EXECUTE))],
        expect=None),
    "tainted-two-devices-tolerated": dict(
        claims=[claim("claim-0", tolerating(req("req-0", CLASS_A), NO_EXECUTE))], classes=[cls(CLASS_A, DRIVER_A)],
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, tainted("device-1", NO_SCHEDULE),
                    tainted("device-2", NO_EXECUTE))],
        expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-2")]}),     # only device-2's taint tolerated
    "tainted-one-device-two-taints-both-tolerated": dict(
        claims=[claim("claim-0", tolerating(req("req-0", CLASS_A), NO_SCHEDULE, NO_EXECUTE))],
        classes=[cls(CLASS_A, DRIVER_A)],
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, tainted("device-1", NO_SCHEDULE, NO_EXECUTE))],
        expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-1")]}),
    "tainted-all-devices-single": dict(
        claims=[ALL_A], classes=[cls(CLASS_A, DRIVER_A)],
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, tainted("device-1", NO_SCHEDULE))],
        expect=None),
    # A claim may hold at most AllocationResultsMaxSize (32) devices; upstream's allocator checks each claim's
    # ExactCount total before allocating (upstream's test asserts "exceeds the claim limit"; the full text is the
    # allocator's, "claim <ns/name>: number of requested devices N exceeds the claim limit of 32"). Its Filter returns
    # that as an error, which the framework wraps ('running "DynamicResources" filter plugin: ...') and the cycle
    # fails with. many-devices-okay: 32 devices asked, no slices: no error, no results.
    "too-many-devices-single-request": dict(
        claims=[claim("claim-0", req("req-0", CLASS_A, 500))], classes=[cls(CLASS_A, DRIVER_A)],
        expect='running "DynamicResources" filter plugin: claim default/claim-0: number of requested devices 500 '
               'exceeds the claim limit of 32'),
    "many-devices-okay": dict(claims=[claim("claim-0", req("req-0", CLASS_A, 32))], classes=[cls(CLASS_A, DRIVER_A)],
                              expect=None),
    "too-many-devices-total": dict(
        claims=[claim("claim-0", req("req-0", CLASS_A, 32), req("req-1", CLASS_A, 1))], classes=[cls(CLASS_A, DRIVER_A)],
        slices=[many("slice-1", NODE_1, "pool-1", DRIVER_A, 33)],
        expect='running "DynamicResources" filter plugin: claim default/claim-0: number of requested devices 33 '
               'exceeds the claim limit of 32'),
}

# Prioritized lists (DRAPrioritizedList, beta and on in v1.36): the allocator takes a request's first subrequest that
# can be satisfied, backtracking into the next when the later requests cannot be; results name "<request>/<subrequest>".
SUB0, SUB1 = "subreq-0", "subreq-1"


def mem_dev(name: str, memory: str) -> dict:
    return dev(name, {"memory": memory})


PRIORITIZED_CASES = {
    "prioritized-list-first-unavailable": dict(
        claims=[claim("claim-0", prio("req-0", sub(SUB0, CLASS_B), sub(SUB1, CLASS_A)))], classes=BOTH,
        slices=[one("slice-1", NODE_1, "pool-1", DRIVER_A)],
        expect={"claim-0": [res(f"req-0/{SUB1}", DRIVER_A, "pool-1", "device-1")]}),
    "prioritized-list-non-available": dict(
        claims=[claim("claim-0", prio("req-0", sub(SUB0, CLASS_B, 2), sub(SUB1, CLASS_A, 2)))], classes=BOTH,
        slices=[one("slice-1", NODE_1, "pool-1", DRIVER_A), one("slice-2", NODE_1, "pool-2", DRIVER_B)],
        expect=None),
    # Its config checks are left out (not modelled); the devices are upstream's.
    "prioritized-list-device-config": dict(
        claims=[claim("claim-0", prio("req-0", sub(SUB0, CLASS_A, 1), sub(SUB1, CLASS_B, 2)))], classes=BOTH,
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_B, dev("device-1"), dev("device-2"))],
        expect={"claim-0": [res(f"req-0/{SUB1}", DRIVER_B, "pool-1", "device-1"),
                            res(f"req-0/{SUB1}", DRIVER_B, "pool-1", "device-2")]}),
    "prioritized-list-class-config": dict(
        claims=[claim("claim-0", prio("req-0", sub(SUB0, CLASS_A, 2), sub(SUB1, CLASS_B, 2)))], classes=BOTH,
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_B, dev("device-1"), dev("device-2")),
                slc("slice-2", NODE_1, "pool-2", DRIVER_A, dev("device-3"))],
        expect={"claim-0": [res(f"req-0/{SUB1}", DRIVER_B, "pool-1", "device-1"),
                            res(f"req-0/{SUB1}", DRIVER_B, "pool-1", "device-2")]}),
    "prioritized-list-subrequests-with-expressions": dict(
        claims=[claim("claim-0", req("req-0", CLASS_A, 1, [mem_at_least("1Gi")]),
                      prio("req-1", sub(SUB0, CLASS_A, 1, [mem_at_least("4Gi")]),
                           sub(SUB1, CLASS_A, 2, [mem_at_least("2Gi")])))],
        classes=[cls(CLASS_A, DRIVER_A)],
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, mem_dev("device-1", "2Gi"), mem_dev("device-2", "2Gi"),
                    mem_dev("device-3", "1Gi"))],
        expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-3"),
                            res(f"req-1/{SUB1}", DRIVER_A, "pool-1", "device-1"),
                            res(f"req-1/{SUB1}", DRIVER_A, "pool-1", "device-2")]}),
    "prioritized-list-subrequests-with-allocation-mode-all": dict(
        claims=[claim("claim-0", prio("req-0", sub(SUB0, CLASS_A, None, mode="All"), sub(SUB1, CLASS_A)))],
        classes=[cls(CLASS_A, DRIVER_A)], allocated=[(DRIVER_A, "pool-1", "device-1")],
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1"), dev("device-2"))],
        expect={"claim-0": [res(f"req-0/{SUB1}", DRIVER_A, "pool-1", "device-2")]}),
    "prioritized-list-allocation-mode-all-multiple-requests": dict(
        claims=[claim("claim-0", req("req-0", CLASS_A),
                      prio("req-1", sub(SUB0, CLASS_A, None, mode="All"), sub(SUB1, CLASS_A)))],
        classes=[cls(CLASS_A, DRIVER_A)],
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1"), dev("device-2"))],
        expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-1"),
                            res(f"req-1/{SUB1}", DRIVER_A, "pool-1", "device-2")]}),
    "prioritized-list-multi-request": dict(
        claims=[claim("claim-0", req("req-1", CLASS_A, 1, [mem_at_least("8Gi")]),
                      prio("req-0", sub(SUB0, CLASS_A, 1, [mem_at_least("8Gi")]),
                           sub(SUB1, CLASS_A, 1, [mem_at_least("4Gi")])))],
        classes=[cls(CLASS_A, DRIVER_A)],
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, mem_dev("device-1", "8Gi")),
                slc("slice-2", NODE_1, "pool-2", DRIVER_A, mem_dev("device-2", "4Gi"))],
        expect={"claim-0": [res("req-1", DRIVER_A, "pool-1", "device-1"),
                            res(f"req-0/{SUB1}", DRIVER_A, "pool-2", "device-2")]}),
    # req-0's first subrequest takes device-1 (8Gi), which req-1 needs: the allocator backtracks into req-0's second.
    "prioritized-list-with-backtracking": dict(
        claims=[claim("claim-0", prio("req-0", sub(SUB0, CLASS_A, 1, [mem_at_least("8Gi")]),
                                      sub(SUB1, CLASS_A, 1, [mem_at_least("4Gi")])),
                      req("req-1", CLASS_A, 1, [mem_at_least("8Gi")]))],
        classes=[cls(CLASS_A, DRIVER_A)],
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, mem_dev("device-1", "8Gi")),
                slc("slice-2", NODE_1, "pool-2", DRIVER_A, mem_dev("device-2", "4Gi"))],
        expect={"claim-0": [res(f"req-0/{SUB1}", DRIVER_A, "pool-2", "device-2"),
                            res("req-1", DRIVER_A, "pool-1", "device-1")]}),
    # 500 devices would pass the claim limit (32): the allocator passes over that subrequest (no error, as the claim's
    # least count is 1).
    "prioritized-list-too-many-in-first-subrequest": dict(
        claims=[claim("claim-0", prio("req-0", sub(SUB0, CLASS_B, 500), sub(SUB1, CLASS_A, 1)))], classes=BOTH,
        slices=[one("slice-1", NODE_1, "pool-1", DRIVER_A)],
        expect={"claim-0": [res(f"req-0/{SUB1}", DRIVER_A, "pool-1", "device-1")]}),
    "all-devices-slice-without-devices-prioritized-list": dict(
        claims=[claim("claim-0", prio("req-0", sub(SUB0, CLASS_A, None, mode="All"), sub(SUB1, CLASS_B)))],
        classes=BOTH, slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A), one("slice-2", NODE_1, "pool-2", DRIVER_B)],
        expect={"claim-0": [res(f"req-0/{SUB1}", DRIVER_B, "pool-2", "device-1")]}),
}


@pytest.mark.parametrize("name", list(PRIORITIZED_CASES), ids=[f"TestAllocator/{n}" for n in PRIORITIZED_CASES])
def test_allocator_prioritized_list(name):
    _check(PRIORITIZED_CASES[name])


# Claim constraints (matchAttribute): the devices of the requests a constraint names (all the claim's, when it names
# none) must share the attribute's value; a device lacking the attribute never satisfies it. Upstream's attributes
# (TestAllocator's locals): intAttribute driver-a/numa, versionAttribute driver-a/driverVersion, stringAttribute
# driver-a/stringAttribute, boolAttribute driver-a/boolAttribute, nonExistentAttribute driver-a/NonExistentAttribute;
# the devices list them unqualified (the slice's driver, driver-a, is their domain).
INT_ATTR, VERSION_ATTR = f"{DRIVER_A}/numa", f"{DRIVER_A}/driverVersion"
STRING_ATTR, BOOL_ATTR = f"{DRIVER_A}/stringAttribute", f"{DRIVER_A}/boolAttribute"


def numa(v: int) -> dict:
    return {"numa": {"int": v}}


def version(v: str) -> dict:
    return {"driverVersion": {"version": v}}


def string_attr(v: str) -> dict:
    return {"stringAttribute": {"string": v}}


def bool_attr(v: bool) -> dict:
    return {"boolAttribute": {"bool": v}}


def match(attribute: str, *requests: str) -> dict:
    """DeviceConstraint{Requests: requests, MatchAttribute: &attribute}."""
    return {"matchAttribute": attribute, **({"requests": list(requests)} if requests else {})}


def constrained(name: str, constraints: list[dict], *requests: dict) -> dict:
    """claimWithRequests(name, constraints, requests...)."""
    doc = claim(name, *requests)
    doc["spec"]["devices"]["constraints"] = constraints
    return doc


def mem_attr_dev(name: str, memory: str, attributes: dict) -> dict:
    return dev(name, {"memory": memory}, attributes)


ALL_FOUR = {**version("1.0.0"), **numa(1), **string_attr("stringAttributeValue"), **bool_attr(True)}
TWO_OF_CLASS_A = (req("req-0", CLASS_A, 2),)
CONSTRAINT_CASES = {
    "with-constraint": dict(
        claims=[constrained("claim-0", [match(INT_ATTR), match(VERSION_ATTR), match(STRING_ATTR), match(BOOL_ATTR)],
                            req("req-0", CLASS_A), req("req-1", CLASS_A))],
        classes=[cls(CLASS_A, DRIVER_A)],
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", None, ALL_FOUR),
                    dev("device-2", None, ALL_FOUR))],
        expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-1"), res("req-1", DRIVER_A, "pool-1", "device-2")]}),
    "with-constraint-non-existent-attribute": dict(
        claims=[constrained("claim-0", [match(f"{DRIVER_A}/NonExistentAttribute")], req("req-0", CLASS_A))],
        classes=[cls(CLASS_A, DRIVER_A)], slices=[one("slice-1", NODE_1, "pool-1", DRIVER_A)], expect=None),
    "with-constraint-not-matching-int-attribute": dict(
        claims=[constrained("claim-0", [match(INT_ATTR)], *TWO_OF_CLASS_A)], classes=BOTH,
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", None, numa(1)),
                    dev("device-2", None, numa(2)))],
        expect=None),
    # A request for All devices must take every matching device: one the constraint refuses is an allocator error.
    # Upstream's test asserts "claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim
    # constraint would not be satisfied" (its claims have no namespace); here the claim is default/claim-0, and the
    # Filter's error is wrapped by the framework as in too-many-devices-single-request.
    "with-constraint-not-matching-int-attribute-all-devices": dict(
        claims=[constrained("claim-0", [match(INT_ATTR)], all_req("req-0", CLASS_A))], classes=BOTH,
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", None, numa(1)),
                    dev("device-2", None, numa(2)))],
        expect='running "DynamicResources" filter plugin: claim default/claim-0, request req-0: cannot add device '
               'driver-a/pool-1/device-2 because a claim constraint would not be satisfied'),
    "with-constraint-not-matching-string-attribute": dict(
        claims=[constrained("claim-0", [match(STRING_ATTR)], *TWO_OF_CLASS_A)], classes=BOTH,
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", None, string_attr("stringAttributeValue")),
                    dev("device-2", None, string_attr("stringAttributeValue2")))],
        expect=None),
    "with-constraint-not-matching-bool-attribute": dict(
        claims=[constrained("claim-0", [match(BOOL_ATTR)], *TWO_OF_CLASS_A)], classes=BOTH,
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", None, bool_attr(True)),
                    dev("device-2", None, bool_attr(False)))],
        expect=None),
    "with-constraint-not-matching-version-attribute": dict(
        claims=[constrained("claim-0", [match(VERSION_ATTR)], *TWO_OF_CLASS_A)], classes=BOTH,
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", None, version("1.0.0")),
                    dev("device-2", None, version("2.0.0")))],
        expect=None),
    # The constraint names req-0 alone: req-1's device may differ.
    "with-constraint-for-request": dict(
        claims=[constrained("claim-0", [match(VERSION_ATTR, "req-0")], req("req-0", CLASS_A), req("req-1", CLASS_A))],
        classes=BOTH,
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", None, version("1.0.0")),
                    dev("device-2", None, version("2.0.0")))],
        expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-1"), res("req-1", DRIVER_A, "pool-1", "device-2")]}),
    # device-1's string attribute matches no other device: the allocator backtracks past it.
    "with-constraint-for-request-retry": dict(
        claims=[constrained("claim-0", [match(VERSION_ATTR, "req-0"), match(STRING_ATTR)],
                            req("req-0", CLASS_A), req("req-1", CLASS_A))],
        classes=BOTH,
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A,
                    dev("device-1", None, {**version("1.0.0"), **string_attr("a")}),
                    dev("device-2", None, {**version("2.0.0"), **string_attr("b")}),
                    dev("device-3", None, {**version("3.0.0"), **string_attr("b")}))],
        expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-2"), res("req-1", DRIVER_A, "pool-1", "device-3")]}),
    # A constraint naming a request with subrequests covers whichever subrequest is taken: req-1/subreq-0 (2Gi,
    # device-2) has driverVersion 2.0.0 where req-0's device-1 has 1.0.0, so the allocator takes subreq-1 (device-3,
    # 1.0.0).
    "prioritized-list-subrequests-with-constraints-ref-parent-request": dict(
        claims=[constrained("claim-0", [match(VERSION_ATTR, "req-0", "req-1")],
                            req("req-0", CLASS_A, 1, [mem_at_least("8Gi")]),
                            prio("req-1", sub(SUB0, CLASS_A, 1, [mem_at_least("2Gi")]),
                                 sub(SUB1, CLASS_A, 1, [mem_at_least("1Gi")])))],
        classes=[cls(CLASS_A, DRIVER_A)],
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, mem_attr_dev("device-1", "8Gi", version("1.0.0"))),
                slc("slice-2", NODE_1, "pool-2", DRIVER_A, mem_attr_dev("device-2", "2Gi", version("2.0.0")),
                    mem_attr_dev("device-3", "1Gi", version("1.0.0")))],
        expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-1"),
                            res(f"req-1/{SUB1}", DRIVER_A, "pool-2", "device-3")]}),
    # The constraint names req-1/subreq-0 only: with subreq-0 device-2's version differs from device-1's, so the
    # allocator takes subreq-1, which the constraint does not cover, and device-2 again.
    "prioritized-list-subrequests-with-constraints-ref-sub-request": dict(
        claims=[constrained("claim-0", [match(VERSION_ATTR, "req-0", f"req-1/{SUB0}")],
                            req("req-0", CLASS_A, 1, [mem_at_least("8Gi")]),
                            prio("req-1", sub(SUB0, CLASS_A, 1, [mem_at_least("2Gi")]),
                                 sub(SUB1, CLASS_A, 1, [mem_at_least("1Gi")])))],
        classes=[cls(CLASS_A, DRIVER_A)],
        slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, mem_attr_dev("device-1", "8Gi", version("1.0.0"))),
                slc("slice-2", NODE_1, "pool-2", DRIVER_A, mem_attr_dev("device-2", "2Gi", version("2.0.0")))],
        expect={"claim-0": [res("req-0", DRIVER_A, "pool-1", "device-1"),
                            res(f"req-1/{SUB1}", DRIVER_A, "pool-2", "device-2")]}),
}


@pytest.mark.parametrize("name", list(CONSTRAINT_CASES), ids=[f"TestAllocator/{n}" for n in CONSTRAINT_CASES])
def test_allocator_constraints(name):
    _check(CONSTRAINT_CASES[name])


def test_allocator_all_devices_of_the_incomplete_pool():
    # TestAllocator/all-devices-of-the-incomplete-pool: the pool says 2 slices, one is there.
    _check(dict(claims=[ALL_A], classes=[cls(CLASS_A, DRIVER_A)],
                slices=[slc("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1"), count=2)],
                expect="claim default/claim-0, request req-0: asks for all devices, but resource pool "
                       "driver-a/pool-1 is currently being updated"))


def test_claim_limit_is_checked_after_every_prefilter_check():
    # Not an upstream vector; the rule is upstream's source order: PreFilter checks every claim's device classes, the
    # allocator counts a claim's devices at Filter. So a missing class in a later claim is what the pod reads.
    _check(dict(claims=[claim("claim-0", req("req-0", CLASS_A, 33)), claim("claim-1", req("req-1", "unknown-class"))],
                classes=[cls(CLASS_A, DRIVER_A)], expect="request req-1: device class unknown-class does not exist"))


# Selectors upstream's CEL compiler refuses ("undeclared reference"; upstream's test asserts that substring). The API
# server compiles selectors when the object is created, so phalanx's counterpart is an input error naming the field.
NO_SUCH_VAR = "noSuchVar"
INPUT_ERRORS = {
    "invalid-CEL-one-device": dict(
        claims=[claim("claim-0", req("req-0", CLASS_A, 1, [NO_SUCH_VAR]))], classes=[cls(CLASS_A, DRIVER_A)],
        slices=[one("slice-1", NODE_1, "pool-1", DRIVER_A)],
        expect="ResourceClaim default/claim-0: spec.devices.requests[0].exactly.selectors[0].cel.expression: "
               "CEL expression \"noSuchVar\": compilation failed: undeclared reference to 'noSuchVar' (in container '')"),
    "invalid-CEL-one-device-class": dict(
        claims=[claim("claim-0", req("req-0", CLASS_A))],
        classes=[{**cls(CLASS_A, DRIVER_A), "spec": {"selectors": [{"cel": {"expression": NO_SUCH_VAR}}]}}],
        slices=[one("slice-1", NODE_1, "pool-1", DRIVER_A)],
        expect="DeviceClass class-a: spec.selectors[0].cel.expression: CEL expression \"noSuchVar\": compilation "
               "failed: undeclared reference to 'noSuchVar' (in container '')"),
    "invalid-CEL-all-devices": dict(
        claims=[claim("claim-0", req("req-0", CLASS_A, None, [NO_SUCH_VAR], mode="All"))],
        classes=[cls(CLASS_A, DRIVER_A)], slices=[one("slice-1", NODE_1, "pool-1", DRIVER_A)],
        expect="ResourceClaim default/claim-0: spec.devices.requests[0].exactly.selectors[0].cel.expression: "
               "CEL expression \"noSuchVar\": compilation failed: undeclared reference to 'noSuchVar' (in container '')"),
}


@pytest.mark.parametrize("name", list(INPUT_ERRORS), ids=[f"TestAllocator/{n}" for n in INPUT_ERRORS])
def test_allocator_input_errors(name):
    with pytest.raises(InputError) as error:
        run(INPUT_ERRORS[name])
    assert str(error.value) == INPUT_ERRORS[name]["expect"] and "undeclared reference" in str(error.value)


def _check(case: dict) -> None:
    node, got, message = run(case)
    expect = case["expect"]
    if isinstance(expect, dict):
        assert (node, got, message) == (case.get("node", NODE_1), {k: sorted(v) for k, v in expect.items()}, None)
    elif expect is None:
        assert node is None and got == {} and message is not None and message.startswith(CANNOT_ALLOCATE), message
    else:
        assert node is None and got == {} and message is not None and expect in message, message


@pytest.mark.parametrize("name", list(CASES), ids=[f"TestAllocator/{n}" for n in CASES])
def test_allocator(name):
    _check(CASES[name])


# ------------------------------------------------------------------------------------------------ TestPlugin
# pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go, TestPlugin (the resource.k8s.io/v1,
# `fwk` era of the file). Its objects: node "worker" (label kubernetes.io/hostname); workerNodeSlice =
# st.MakeResourceSlice("worker", "some-driver").Device("instance-1") (pool "worker"); workerNode2Slice /
# workerNode3Slice the same on worker-2 / worker-3 with the bool attribute "healthy" = true; deviceClass
# "my-resource-class" without selectors; claim "my-pod-my-resource" with one request req-1 (ExactCount, one device)
# of that class; allocatedClaim that claim allocated instance-1 of worker; otherAllocatedClaim "not-my-claim" with the
# same allocation. The pod my-pod names the claim by resourceClaimName (podWithClaimName) or by template
# (podWithClaimTemplate). Each case runs in a cluster of its nodes and objects through a profile of DynamicResources
# alone; the outcome is read from the pod's binding (every plugin point succeeded: upstream's want has no status) or
# its pending message, which is upstream's FitError text: "0/N nodes are available: " + the PreFilter status or the
# Filter reasons by count + "." + " " + the PostFilter status (pkg/scheduler/framework/types.go FitError.Error).
# An allocated claim's devices must be in a slice here (phalanx places an allocation by its devices; upstream reads
# status.allocation.nodeSelector), so the cases with allocatedClaim also hold workerNodeSlice; nothing else uses it.
#
# Left out: claim-template (phalanx does not read pod status.resourceClaimStatuses), deleted-claim and wrong-claim
# (deletionTimestamp, owner references), the finalizer races (with-resources-finalizer-gets-removed / -added),
# skip-bind, bind-failure and the binding-conditions cases (PreBind, Unreserve after a failed bind), admin access
# (request-admin-access-*, structured-ignore-allocated-admin-access), device taints with the DRADeviceTaints gate off
# (tainted-*-disabled), DRA-disabled, prioritized lists (claim-with-prioritized-list*), the extended-resource-* cases of
# PreBind's API calls (listed with EXTENDED_CASES below; the others are ported there), filter timeouts and
# cancellation (canceled, timeout*),
# wrong-topology (an allocation whose nodeSelector names no device: phalanx does not read the selector), and "empty"'s
# PostFilter status (PostFilter does not run for a pod that fits).
DRIVER, WORKER, CLASS, CLAIM = "some-driver", "worker", "my-resource-class", "my-pod-my-resource"
DEVICE_CLASS = {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": CLASS}, "spec": {}}
HEALTHY = f'device.attributes["{DRIVER}"].healthy'             # brokenSelector


def worker_slice(node: str = WORKER, healthy: bool = False) -> dict:
    device = {"name": "instance-1"}
    if healthy:
        device["attributes"] = {"healthy": {"bool": True}}
    return {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": f"{node}-{DRIVER}"},
            "spec": {"driver": DRIVER, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "nodeName": node, "devices": [device]}}


def pending_claim(name: str = CLAIM, class_name: str = CLASS, selectors=()) -> dict:
    return claim(name, req("req-1", class_name, 1, list(selectors)))


def allocated(doc: dict, results=(("req-1", DRIVER, WORKER, "instance-1"),)) -> dict:
    return {**doc, "status": {"allocation": {"devices": {"results": [
        {"request": r, "driver": d, "pool": p, "device": n} for r, d, p, n in results]}}}}


def plugin_run(case: dict):
    """case: classes, slices, claims, nodes (names, or (name, {resource: allocatable})), entries (the pod's
    spec.resourceClaims), containers (the pod's containers' requests; default: none beyond cpu and memory 0)."""
    objects = parse_objects(list(case.get("classes", [])) + list(case.get("slices", [])) + list(case.get("claims", [])))
    nodes = [(n, {}) if isinstance(n, str) else n for n in case.get("nodes", [WORKER])]
    objects.nodes = [make_node(n, labels={"kubernetes.io/hostname": n}, extra=extra) for n, extra in nodes]
    pod = make_pod("my-pod", cpu="0", memory="0", containers=case.get("containers"))
    doc = pod.model_dump(by_alias=True, exclude_defaults=True)
    doc["spec"]["resourceClaims"] = case.get("entries", [{"name": "my-resource", "resourceClaimName": CLAIM}])
    objects.pods = [type(pod).model_validate(doc)]
    result = Scheduler(Cluster.from_objects(objects), config_from_doc(PROFILE)).schedule()
    got = sorted((a["claim"].split("/", 1)[1], a["request"], a["driver"], a["pool"], a["device"])
                 for a in result.allocations.get("default/my-pod", []))
    return result.bindings.get("default/my-pod"), got, result.unschedulable.get("default/my-pod")


HELD = [(CLAIM, "req-1", DRIVER, WORKER, "instance-1")]
NO_CLAIMS = "no new claims to deallocate"
PLUGIN_CASES = {
    # expect: (node, allocations, None) when the pod binds, else (None, [], message)
    "empty": dict(entries=[], expect=(WORKER, [], None)),
    "claim-reference": dict(claims=[allocated(pending_claim()), pending_claim("not-my-claim")],
                            slices=[worker_slice()], expect=(WORKER, HELD, None)),
    # Upstream rejects it at PreEnqueue with this status; phalanx at PreFilter (PreEnqueue is not modelled), so its
    # message adds the FitError frame and PostFilter's "no new claims to deallocate".
    "missing-claim": dict(entries=[{"name": "my-resource", "resourceClaimTemplateName": CLAIM}],
                          claims=[allocated(pending_claim()), pending_claim("not-my-claim")], slices=[worker_slice()],
                          expect=(None, [], f'0/1 nodes are available: pod "default/my-pod": ResourceClaim not created '
                                           f'yet. {NO_CLAIMS}')),
    "no-resources": dict(claims=[pending_claim()], classes=[DEVICE_CLASS],
                         expect=(None, [], "0/1 nodes are available: 1 cannot allocate all claims. still not "
                                           "schedulable")),
    "with-resources": dict(claims=[pending_claim()], classes=[DEVICE_CLASS], slices=[worker_slice()],
                           expect=(WORKER, HELD, None)),
    "with-resources-has-finalizer": dict(
        claims=[{**pending_claim(), "metadata": {**pending_claim()["metadata"],
                                                 "finalizers": ["resource.kubernetes.io/delete-protection"]}}],
        classes=[DEVICE_CLASS], slices=[worker_slice()], expect=(WORKER, HELD, None)),
    "exhausted-resources": dict(claims=[pending_claim(), allocated(pending_claim("not-my-claim"))],
                                classes=[DEVICE_CLASS], slices=[worker_slice()],
                                expect=(None, [], "0/1 nodes are available: 1 cannot allocate all claims. still not "
                                                  "schedulable")),
    "missing-class": dict(claims=[pending_claim()],
                          expect=(None, [], f"0/1 nodes are available: request req-1: device class {CLASS} does not "
                                            f"exist. {NO_CLAIMS}")),
    # allocatedClaimWithGoodTopology: allocated, its nodeSelector picks worker (here: its device, on worker).
    "good-topology": dict(claims=[allocated(pending_claim())], slices=[worker_slice()], expect=(WORKER, HELD, None)),
    # inUseClaim: allocated and reserved for this pod (reservedFor is not read).
    "reserved-okay": dict(claims=[{**allocated(pending_claim()), "status": {
        **allocated(pending_claim())["status"], "reservedFor": [{"resource": "pods", "name": "my-pod", "uid": "1234"}]}}],
        slices=[worker_slice()], expect=(WORKER, HELD, None)),
    "claim-with-request-with-unknown-device-class": dict(
        claims=[pending_claim(class_name="does-not-exist")],
        expect=(None, [], f"0/1 nodes are available: request req-1: device class does-not-exist does not exist. "
                          f"{NO_CLAIMS}")),
}

# A selector reading an attribute the device lacks: upstream's CEL evaluation fails ("no such key"), the Filter
# returns an error on worker and the scheduling attempt fails with it, even where another node has the attribute
# (upstream's test reads it at PreScore then).
CEL_ERROR = "CEL runtime error: no such key: healthy"
CEL_CASES = {
    "claim-parameters-CEL-runtime-error": dict(claims=[pending_claim(selectors=[HEALTHY])], classes=[DEVICE_CLASS],
                                               slices=[worker_slice()]),
    "class-parameters-CEL-runtime-error": dict(
        claims=[pending_claim()], slices=[worker_slice()],
        classes=[{**DEVICE_CLASS, "spec": {"selectors": [{"cel": {"expression": HEALTHY}}]}}]),
    "CEL-runtime-error-for-one-of-two-nodes": dict(
        nodes=[WORKER, "worker-2"], claims=[pending_claim(selectors=[HEALTHY])], classes=[DEVICE_CLASS],
        slices=[worker_slice(), worker_slice("worker-2", healthy=True)]),
    "CEL-runtime-error-for-one-of-three-nodes": dict(
        nodes=[WORKER, "worker-2", "worker-3"], claims=[pending_claim(selectors=[HEALTHY])], classes=[DEVICE_CLASS],
        slices=[worker_slice(), worker_slice("worker-2", healthy=True), worker_slice("worker-3", healthy=True)]),
}


@pytest.mark.parametrize("name", list(PLUGIN_CASES), ids=[f"TestPlugin/{n}" for n in PLUGIN_CASES])
def test_plugin(name):
    assert plugin_run(PLUGIN_CASES[name]) == PLUGIN_CASES[name]["expect"]


@pytest.mark.parametrize("name", list(CEL_CASES), ids=[f"TestPlugin/{n}" for n in CEL_CASES])
def test_plugin_cel_runtime_errors(name):
    node, got, message = plugin_run(CEL_CASES[name])
    assert node is None and got == [] and message is not None and CEL_ERROR in message, message


# Extended resources backed by DRA (DRAExtendedResource, beta and on in v1.36): TestPlugin's extended-resource-* and
# implicit-extended-resource-* cases. Their objects: deviceClassWithExtendResourceName (my-resource-class naming
# example.com/gpu), deviceClassWithExtendResourceName2 (my-resource-class2 naming example.com/gpu2);
# podWithExtendedResourceName (one container requesting example.com/gpu: 1), podWithExtendedResourceName2 (one
# container: example.com/gpu 1, example.com/gpu2 1), podWithImplicitExtendedResourceName (one container:
# deviceclass.resource.kubernetes.io/my-resource-class 1, example.com/gpu 2), ...TwoContainers (the two requests in
# two containers); workerNodeWithExtendedResource / ...ZeroAllocatable (allocatable example.com/gpu 1 / 0);
# largeWorkerNodeSlice (instance-1 .. instance-4 on worker). Upstream's want is read as above: a pod whose every
# plugin point succeeds binds and its claim for extended resources holds the devices of upstream's allocation result
# (request names included); upstream names the claim by generateName, `my-pod-extended-resources-` and a suffix
# (the fake client's "0"), phalanx `my-pod-extended-resources`.
#
# Left out: extended-resource-name-with-resources-fail-patch, -bind-failure, -skip-bind and -claim-creation-failure
# (PreBind's API calls and Unreserve after them: not modelled); the metrics each case checks.
EXT_GPU, EXT_GPU2 = "example.com/gpu", "example.com/gpu2"
IMPLICIT = f"deviceclass.resource.kubernetes.io/{CLASS}"
EXT_CLAIM = "my-pod-extended-resources"
EXT_CLASS = {**DEVICE_CLASS, "spec": {"extendedResourceName": EXT_GPU}}
EXT_CLASS2 = {**DEVICE_CLASS, "metadata": {"name": f"{CLASS}2"}, "spec": {"extendedResourceName": EXT_GPU2}}


def large_worker_slice() -> dict:
    doc = worker_slice()
    doc["spec"]["devices"] = [{"name": f"instance-{i}"} for i in range(1, 5)]
    return doc


def ext_held(*results: tuple[str, str]) -> list:
    return sorted((EXT_CLAIM, r, DRIVER, WORKER, d) for r, d in results)


EXTENDED_CASES = {
    # The node's device plugin serves example.com/gpu: no claim, nothing allocated.
    "extended-resource-name-with-node-resource": dict(
        nodes=[(WORKER, {EXT_GPU: "1"})], entries=[], containers=[{EXT_GPU: "1"}], classes=[EXT_CLASS],
        expect=(WORKER, [], None)),
    # example.com/gpu from the device plugin, example.com/gpu2 from DRA: extendedResourceClaim2, whose one request is
    # container-0-request-1 (class my-resource-class2) holding instance-1.
    "extended-resource-one-device-plugin-one-dra": dict(
        nodes=[(WORKER, {EXT_GPU: "1"})], entries=[], containers=[{EXT_GPU: "1", EXT_GPU2: "1"}],
        classes=[EXT_CLASS, EXT_CLASS2], slices=[worker_slice()],
        expect=(WORKER, ext_held(("container-0-request-1", "instance-1")), None)),
    "extended-resource-name-with-zero-allocatable": dict(
        nodes=[(WORKER, {EXT_GPU: "0"})], entries=[], containers=[{EXT_GPU: "1"}], classes=[EXT_CLASS],
        slices=[worker_slice()], expect=(WORKER, ext_held(("container-0-request-0", "instance-1")), None)),
    # No class backs example.com/gpu: PreFilter skips, nothing stops the pod (NodeResourcesFit is not in the profile).
    "non-DRA-extended-resource-name-with-zero-allocatable": dict(
        nodes=[(WORKER, {EXT_GPU: "0"})], entries=[], containers=[{EXT_GPU: "1"}], classes=[DEVICE_CLASS],
        slices=[worker_slice()], expect=(WORKER, [], None)),
    "extended-resource-name-no-resource": dict(
        entries=[], containers=[{EXT_GPU: "1"}], classes=[EXT_CLASS],
        expect=(None, [], "0/1 nodes are available: 1 cannot allocate all claims. still not schedulable")),
    "extended-resource-name-with-resources": dict(
        entries=[], containers=[{EXT_GPU: "1"}], classes=[EXT_CLASS], slices=[worker_slice()],
        expect=(WORKER, ext_held(("container-0-request-0", "instance-1")), None)),
    # implicitExtendedResourceAllocationResult: request names follow the container's sorted resource names
    # (deviceclass.resource.kubernetes.io/... before example.com/gpu).
    "implicit-extended-resource-name-with-resources": dict(
        entries=[], containers=[{IMPLICIT: "1", EXT_GPU: "2"}], classes=[EXT_CLASS], slices=[large_worker_slice()],
        expect=(WORKER, ext_held(("container-0-request-0", "instance-1"), ("container-0-request-1", "instance-2"),
                                 ("container-0-request-1", "instance-3")), None)),
    "implicit-extended-resource-name-two-containers-with-resources": dict(
        entries=[], containers=[{IMPLICIT: "1"}, {EXT_GPU: "2"}], classes=[EXT_CLASS], slices=[large_worker_slice()],
        expect=(WORKER, ext_held(("container-0-request-0", "instance-1"), ("container-1-request-0", "instance-2"),
                                 ("container-1-request-0", "instance-3")), None)),
}


@pytest.mark.parametrize("name", list(EXTENDED_CASES), ids=[f"TestPlugin/{n}" for n in EXTENDED_CASES])
def test_plugin_extended_resources(name):
    assert plugin_run(EXTENDED_CASES[name]) == EXTENDED_CASES[name]["expect"]


def stale_extended_claim(devices_node: str = WORKER) -> dict:
    """extendedResourceClaim / extendedResourceClaimNode2: the pod's claim for extended resources from an earlier
    cycle (annotation resource.kubernetes.io/extended-resource-claim, the pod its controller), one request
    container-0-request-0 of my-resource-class, allocated instance-1 of pool worker (Node2: its nodeSelector names
    worker-2; phalanx places an allocation by its devices, so both are on worker here)."""
    doc = claim(f"{EXT_CLAIM}-0", req("container-0-request-0", CLASS, 1))
    doc["metadata"].update({"generateName": f"{EXT_CLAIM}-",
                            "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
                            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "my-pod", "uid": "1234",
                                                 "controller": True}]})
    return allocated(doc, (("container-0-request-0", DRIVER, devices_node, "instance-1"),))


# filterExtendedResources fails every node while the pod's claim from an earlier cycle exists (its spec has requests);
# PostFilter deletes it (the pod's next attempt makes a claim of its own).
STALE_CASES = {
    "extended-resource-name-with-resources-has-claim": dict(
        entries=[], containers=[{EXT_GPU: "1"}], classes=[EXT_CLASS], slices=[worker_slice()],
        claims=[stale_extended_claim()]),
    "extended-resource-name-with-resources-delete-claim": dict(
        entries=[], containers=[{EXT_GPU: "1"}], classes=[EXT_CLASS], slices=[worker_slice()],
        claims=[stale_extended_claim()]),
}


@pytest.mark.parametrize("name", list(STALE_CASES), ids=[f"TestPlugin/{n}" for n in STALE_CASES])
def test_plugin_stale_extended_resource_claim(name):
    assert plugin_run(STALE_CASES[name]) == (
        None, [], "0/1 nodes are available: 1 cannot schedule extended resource claim. deletion of ResourceClaim "
                  "completed")


# ------------------------------------------------------------------------------------------- createRequestsAndMappings
# pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources_test.go,
# Test_createRequestsAndMappings_requests: the requests of the claim for extended resources, given the pod, the
# resources to allocate through DRA and a resolver mapping resource names to classes (mockDeviceClassResolver).
# st.MakePod().Res(r) adds a container requesting r, InitReq(r) an init container, SidecarReq(r) an init container
# with restartPolicy Always; containers are indexed init containers first. Upstream's class "classInit" is not a
# valid object name, which phalanx's models check: here it is "class-init" (a name only, copied into the requests).
# Left out: Test_createRequestsAndMappings_mappings (pod status.extendedResourceClaimStatus is not modelled).
GPU1, GPU_INIT = EXT_GPU + "1", EXT_GPU + "init"


def _classes(resolver: dict[str, str]) -> dict:
    """mockDeviceClassResolver: resource name -> a DeviceClass of that name."""
    from phalanx.cluster_models.dra import DeviceClass
    return {resource: DeviceClass.model_validate({"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": name}})
            for resource, name in resolver.items()}


def _req_pod(containers, init_containers=()):
    return make_pod("my-pod", containers=containers, init_containers=init_containers)


POD1 = _req_pod([{EXT_GPU: "1", GPU1: "2"}])
POD2 = _req_pod([{EXT_GPU: "1"}, {GPU1: "2"}])
POD_INIT = _req_pod([{EXT_GPU: "1"}], [({GPU_INIT: "2"}, False)])
POD_INIT2 = _req_pod([{EXT_GPU: "1"}], [({GPU_INIT: "1"}, False), ({GPU_INIT: "2"}, False)])
POD_INIT3 = _req_pod([{EXT_GPU: "1"}], [({GPU_INIT: "1"}, False), ({GPU_INIT: "1"}, True), ({GPU_INIT: "2"}, False)])
RES, RES2, RES_INIT = {EXT_GPU: 1}, {EXT_GPU: 1, GPU1: 2}, {EXT_GPU: 1, GPU_INIT: 2}
DEV_MAP = {EXT_GPU: "class"}
DEV_MAP2 = {EXT_GPU: "class", GPU1: "class1"}
DEV_MAP_INIT = {EXT_GPU: "class", GPU_INIT: "class-init"}

# name -> (pod, extendedResources, resolver {resource: class}, [(request, class, count)]); all ExactCount.
REQUEST_CASES = {
    "nil": (POD1, {}, {}, []),
    "one resource match": (POD1, RES, DEV_MAP, [("container-0-request-0", "class", 1)]),
    "one resource match, one resource not match": (POD1, RES2, DEV_MAP, [("container-0-request-0", "class", 1)]),
    "two resources match": (POD1, RES2, DEV_MAP2, [("container-0-request-0", "class", 1),
                                                   ("container-0-request-1", "class1", 2)]),
    "two containers match": (POD2, RES2, DEV_MAP2, [("container-0-request-0", "class", 1),
                                                    ("container-1-request-0", "class1", 2)]),
    "one init container, one regular container": (POD_INIT, RES_INIT, DEV_MAP_INIT, [
        ("container-0-request-0", "class-init", 2), ("container-1-request-0", "class", 1)]),
    "two init containers, one regular container": (POD_INIT2, RES_INIT, DEV_MAP_INIT, [
        ("container-1-request-0", "class-init", 2), ("container-2-request-0", "class", 1)]),
    "three init containers, one sidecar, one regular container": (POD_INIT3, RES_INIT, DEV_MAP_INIT, [
        ("container-1-request-0", "class-init", 1), ("container-2-request-0", "class-init", 2),
        ("container-3-request-0", "class", 1)]),
}


@pytest.mark.parametrize("name", list(REQUEST_CASES), ids=[f"Test_createRequestsAndMappings_requests/{n}"
                                                           for n in REQUEST_CASES])
def test_create_requests(name):
    from phalanx.sched.claims import extended_device_requests
    pod, extended, resolver, want = REQUEST_CASES[name]
    requests, _ = extended_device_requests(pod, extended, _classes(resolver))
    assert [(r.name, r.exactly.device_class_name, r.exactly.allocation_mode, r.exactly.count)
            for r in requests] == [(n, c, "ExactCount", k) for n, c, k in want]


# ------------------------------------------------------------------------------------------------ ExtendedResourceCache
# staging/src/k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache/extendedresourcecache_test.go
# (v1.36.0's, before kubernetes#141110), TestExtendedResourceCache: classes are created one by one and the cache read
# after each. phalanx reads a fixed set of classes (the informer's initial list), so each step here is the set of
# classes created so far; the winners of an explicit name do not depend on the order the classes come in. Its last
# two steps (gpu-class-0 renamed to test.com/gpu, which leaves example.com/gpu unmapped, then deleted) depend on the
# event history and are left out, as are TestHandlers, TestNil and TestDeviceClassMapping (GetExtendedResource).
NOW = "2026-03-01T12:00:00Z"


def _ext_class(name: str, created: str | None, extended: str | None = EXT_GPU) -> dict:
    meta = {"name": name} if created is None else {"name": name, "creationTimestamp": created}
    return {"apiVersion": V1, "kind": "DeviceClass", "metadata": meta,
            "spec": {} if extended is None else {"extendedResourceName": extended}}


CACHE_STEPS = [   # (classes created so far, {resource: class the cache returns})
    ([_ext_class("gpu-class", NOW), _ext_class("fpga-class", None, None)],
     {EXT_GPU: "gpu-class", "deviceclass.resource.kubernetes.io/fpga-class": "fpga-class",
      "deviceclass.resource.kubernetes.io/gpu-class": "gpu-class"}),
    ([_ext_class("gpu-class-3", "2026-02-28T12:00:00Z")], {EXT_GPU: "gpu-class"}),      # now - 24h: older
    ([_ext_class("gpu-class-4", "2026-03-01T13:00:00Z")], {EXT_GPU: "gpu-class-4"}),    # now + 1h: newer
    ([_ext_class("gpu-class-0", "2026-03-01T13:00:00Z")], {EXT_GPU: "gpu-class-0"}),    # as new, lower name
]


@pytest.mark.parametrize("step", range(len(CACHE_STEPS)), ids=[f"TestExtendedResourceCache/step-{i}"
                                                               for i in range(len(CACHE_STEPS))])
def test_extended_resource_cache(step):
    from phalanx.sched.claims import extended_resource_classes
    created = [c for classes, _ in CACHE_STEPS[:step + 1] for c in classes]
    resolved = extended_resource_classes(parse_objects(created).device_classes)
    want = CACHE_STEPS[step][1]
    assert {name: resolved[name].metadata.name if name in resolved else None for name in want} == want
