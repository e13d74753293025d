"""Upstream kube-scheduler's own unit-test vectors for VolumeZone, VolumeRestrictions, VolumeBinding and
NodeVolumeLimits, replayed through phalanx.

Sources (kubernetes/kubernetes, the newest versions the code index holds):
- pkg/scheduler/framework/plugins/volumezone/volume_zone_test.go, fwk era (`fwk "k8s.io/kube-scheduler/framework"`,
  commit 030880a5): TestSingleZone, TestMultiZone, TestWithBinding.
- pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions_test.go, the backend/cache era just before
  fwk (framework.NewStatus, st.MakePod().Volume): TestGCEDiskConflicts, TestAWSDiskConflicts, TestRBDDiskConflicts,
  TestISCSIDiskConflicts, TestAccessModeConflicts. No fwk-era copy of this file is indexed; the plugin's statuses
  and reasons are unchanged since.
- pkg/scheduler/framework/plugins/volumebinding/volume_binding_test.go with test_utils.go (makePV, makePVC,
  makePod, makeNode), the version with wantPreFilterResult (framework.NewStatus; no fwk-era copy indexed):
  TestVolumeBinding's PreFilter and Filter statuses; binder_test.go (same era) TestFindPodVolumesWithoutProvisioning
  and TestFindPodVolumesWithProvisioning's reasons (each run with no CSIDriver, and with the provisioner's CSIDriver
  with and without capacity tracking) and TestCapacity's (CSIStorageCapacity objects).
- pkg/scheduler/framework/plugins/nodevolumelimits/csi_test.go, fwk era (`fwk "k8s.io/kube-scheduler/framework"`,
  commit 00d37505; its TestCSILimits cases still build framework.NewStatus): TestCSILimits's PreFilter and Filter
  statuses, the VolumeAttachments of buildFakeClientWithVALister counted too. Skipped with the reason: the cases of
  CSI migration (in-tree volumes and provisioners translated to CSI drivers), which phalanx does not model
  (docs/semantics.md "Volumes").
  Upstream's pods have no names (each here is named after its variable) and their non-claim volumes none (named
  after their source); "/" in the fixture's names of in-tree plugins is written "-"; a missing claim's reason is
  compared with the scheduler's informer lister's text (`persistentvolumeclaim "x" not found`), where upstream's
  fake lister says "persistentvolumeclaims"; an Error status is compared as the message the cycle fails with.

Each case is upstream's data (nodes, PVs, PVCs, StorageClasses, pods already on the node, the incoming pod) and
upstream's expected PreFilter and Filter statuses, copied from the test file; the case id names the upstream test
function and case. Nothing expected here was computed by phalanx. Each runs through the Scheduler with a profile of
the plugin alone at PreFilter and Filter (upstream's tests call both) and reads the explain report. A PreFilter
rejection stops the cycle (upstream's framework runs no Filter after it), so a case that expects one compares the
PreFilter status alone.

Upstream's objects skip what the API server requires; the cases fill it in without changing what the plugins read:
- names: the API server takes DNS subdomain names, so upstream's "Vol_1", "PVC_1", "Class_0", "pod_1" are written
  lowercase with "-" for "_" (`dns`); a reason that quotes a name quotes it so written.
- a volume's capacity and a claim's storage request (required, greater than zero): "1" each where upstream sets
  neither (upstream compares 0 with 0, here 1 with 1: the same order); where upstream sets them, upstream's.
- access modes (at least one required): ReadWriteOnce on both sides where upstream sets none (upstream's empty set
  is a subset of the volume's empty set, here {RWO} of {RWO}).
- a StorageClass's provisioner (required): kubernetes.io/no-provisioner, which VolumeBinding reads as upstream reads
  an empty provisioner (the claim cannot be provisioned).
- an input with no PV, PVC or StorageClass describes no storage to phalanx, which then leaves claim volumes alone
  (docs/semantics.md "Volumes"); a case whose upstream informers hold none of them but whose pod names a claim
  carries one StorageClass that nothing names (`UNNAMED_CLASS`).

Left out: the queueing-hint tests of the four files (isSchedulableAfter*: PV, PVC, StorageClass, CSINode and
VolumeAttachment events are not cluster events here), VolumeZone's BenchmarkVolumeZone, TestVolumeBinding's scores
(they need the StorageCapacityScoring gate, alpha and off in v1.36, which phalanx does not model; the Filter statuses
of its capacity cases are kept) and binder_test.go's other tests (AssumePodVolumes, BindPodVolumes, CSI migration:
API writes and objects phalanx does not model).
"""
from __future__ import annotations

import pytest

from phalanx.cluster_models import parse_objects
from phalanx.cluster_models import objects as _m
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.config import config_from_doc
from phalanx.sched.explain import explain_pod

try:
    from tests.strategies import make_node
except ImportError:  # rootdir not on sys.path: tests/ itself is (pytest prepend import mode)
    from strategies import make_node

S, U, UU, ERROR = "Success", "Unschedulable", "UnschedulableAndUnresolvable", "Error"
SKIP = "Skip"       # a PreFilter that returned Skip: the plugin's Filter does not run

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"        # v1.LabelFailureDomainBetaZone
BETA_REGION = "failure-domain.beta.kubernetes.io/region"    # v1.LabelFailureDomainBetaRegion
ZONE = "topology.kubernetes.io/zone"                        # v1.LabelTopologyZone
REGION = "topology.kubernetes.io/region"                    # v1.LabelTopologyRegion
HOSTNAME = "kubernetes.io/hostname"                         # v1.LabelHostname
NO_PROVISIONER = "kubernetes.io/no-provisioner"
UNNAMED_CLASS = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "unnamed"},
                 "provisioner": NO_PROVISIONER}


# ------------------------------------------------------------------------------------------------ harness
def dns(name: str) -> str:
    """An upstream test's object name as the API server would take it."""
    return name.lower().replace("_", "-")


def pv(name: str, labels: dict | None = None, storage_class: str = "", capacity: str = "1", phase: str | None = None,
       affinity: dict | None = None) -> dict:
    """A PersistentVolume manifest; `affinity`: test_utils.go withNodeAffinity (one term, key In values)."""
    spec: dict = {"capacity": {"storage": capacity}, "accessModes": ["ReadWriteOnce"],
                  "storageClassName": storage_class}
    if affinity is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": key, "operator": "In", "values": values} for key, values in affinity.items()]}]}}
    doc = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": dns(name), "labels": labels or {}},
           "spec": spec}
    if phase is not None:
        doc["status"] = {"phase": phase}
    return doc


def pvc(name: str, storage_class: str | None = None, volume: str = "", bound: bool = False,
        modes: tuple[str, ...] = ("ReadWriteOnce",), request: str = "1", phase: str | None = None) -> dict:
    """A PersistentVolumeClaim manifest in "default"; `bound`: test_utils.go withBoundPV (volumeName and the
    bind-completed annotation)."""
    spec: dict = {"accessModes": list(modes), "resources": {"requests": {"storage": request}}}
    if storage_class is not None:
        spec["storageClassName"] = dns(storage_class)
    if volume:
        spec["volumeName"] = dns(volume)
    metadata: dict = {"name": dns(name), "namespace": "default"}
    if bound:
        metadata["annotations"] = {"pv.kubernetes.io/bind-completed": "true"}
    doc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": metadata, "spec": spec}
    if phase is not None:
        doc["status"] = {"phase": phase}
    return doc


def storage_class(name: str, mode: str) -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": dns(name)},
            "provisioner": NO_PROVISIONER, "volumeBindingMode": mode}


def claim(name: str) -> dict:
    """A pod volume backed by a claim (st.MakePod().PVC, test_utils.go withPVCVolume)."""
    return {"name": dns(name), "persistentVolumeClaim": {"claimName": dns(name)}}


def pod(name: str, *volumes: dict, node_name: str = "") -> _m.Pod:
    return _m.Pod.model_validate({"metadata": {"name": dns(name), "namespace": "default"},
                                  "spec": {"containers": [], "volumes": list(volumes), "node_name": node_name}})


def node(name: str, labels: dict | None = None, hostname: bool = False):
    """A node with exactly `labels` (upstream's v1.Node literals), plus kubernetes.io/hostname with `hostname`
    (test_utils.go makeNode)."""
    return make_node(name, labels=labels, hostname_label=hostname)


def plugin_report(plugin: str, nodes, storage: list[dict], incoming, bound=()) -> dict:
    """The explain report of the incoming pod under a profile of the plugin alone."""
    doc = {"kind": "KubeSchedulerConfiguration", "profiles": [{"plugins": {
        "multiPoint": {"disabled": [{"name": "*"}], "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}]},
        "preFilter": {"enabled": [{"name": plugin}]}, "filter": {"enabled": [{"name": plugin}]}}}]}
    objects = parse_objects(storage)
    objects.nodes, objects.pods = list(nodes), list(bound)
    return explain_pod(Scheduler(Cluster.from_objects(objects), config_from_doc(doc)), incoming)


def statuses(plugin: str, nodes, storage: list[dict], incoming, bound=()) -> tuple:
    """(PreFilter status, Filter status per node) of the plugin alone: PreFilter SKIP, None (Success) or (code,
    [reason]) for a rejection, with no Filter statuses then; each Filter status (code, reasons)."""
    return statuses_in(plugin_report(plugin, nodes, storage, incoming, bound), plugin)


def statuses_in(report: dict, plugin: str) -> tuple:
    """`statuses` read from a report."""
    found = [r["filters"].get(plugin) for r in report["nodes"]]
    if any(status is None for status in found):
        return SKIP, []
    first = found[0]
    # upstream's FitError for a PreFilter rejection: "0/N nodes are available: <status message>." (no per-node
    # counts, which a Filter failure has)
    if report["message"] == f"0/{len(found)} nodes are available: {' '.join(first['reasons'])}.":
        return (first["status"], first["reasons"]), []
    return None, [(status["status"], status["reasons"]) for status in found]


# ------------------------------------------------------------------------------------------------ volume_zone_test.go
ZONE_REASON = "node(s) had no available volume zone"       # volumezone.ErrReasonConflict
ZONE_CONFLICT = [(UU, [ZONE_REASON])]
FITS = [(S, [])]


def _bound_claims(volumes: dict[str, str]) -> list[dict]:
    """TestSingleZone / TestMultiZone's claims: each names its volume (spec.volumeName only)."""
    return [pvc(name, volume=volume) for name, volume in volumes.items()]


SINGLE_ZONE_STORAGE = [
    pv("Vol_1", {BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", {BETA_REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_3", {BETA_REGION: "us-west1"}),
    pv("Vol_Stable_1", {ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", {REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_Stable_3", {ZONE: "us-west1-a", REGION: "us-west1-a"}),
    *_bound_claims({"PVC_1": "Vol_1", "PVC_2": "Vol_2", "PVC_3": "Vol_3", "PVC_4": "Vol_not_exist",
                    "PVC_Stable_1": "Vol_Stable_1", "PVC_Stable_2": "Vol_Stable_2", "PVC_Stable_3": "Vol_Stable_3"}),
]


def _zone(test: str, name: str, claim_name: str | None, labels: dict | None, pre, filters):
    volumes = (claim(claim_name),) if claim_name else ()
    return pytest.param(pod("pod_1", *volumes), labels, pre, filters, id=f"{test}/{name}")


USELESS = {"uselessLabel": "none"}

SINGLE_ZONE_CASES = [
    _zone("TestSingleZone", "pod without volume", None, {BETA_ZONE: "us-west1-a"}, SKIP, []),
    _zone("TestSingleZone", "node without labels", "PVC_1", None, None, FITS),
    _zone("TestSingleZone", "beta zone label matched", "PVC_1", {BETA_ZONE: "us-west1-a", **USELESS}, None, FITS),
    _zone("TestSingleZone", "beta region label matched", "PVC_2", {BETA_REGION: "us-west1", **USELESS}, None, FITS),
    _zone("TestSingleZone", "beta region label doesn't match", "PVC_2", {BETA_REGION: "no_us-west1", **USELESS},
          None, ZONE_CONFLICT),
    _zone("TestSingleZone", "beta zone label doesn't match", "PVC_1", {BETA_ZONE: "no_us-west1-a", **USELESS},
          None, ZONE_CONFLICT),
    _zone("TestSingleZone", "zone label matched", "PVC_Stable_1", {ZONE: "us-west1-a", **USELESS}, None, FITS),
    _zone("TestSingleZone", "region label matched", "PVC_Stable_2", {REGION: "us-west1", **USELESS}, None, FITS),
    _zone("TestSingleZone", "region label doesn't match", "PVC_Stable_2", {REGION: "no_us-west1", **USELESS},
          None, ZONE_CONFLICT),
    _zone("TestSingleZone", "zone label doesn't match", "PVC_Stable_1", {ZONE: "no_us-west1-a", **USELESS},
          None, ZONE_CONFLICT),
    _zone("TestSingleZone", "pv with zone and region, node with only zone", "PVC_Stable_3", {ZONE: "us-west1-a"},
          None, ZONE_CONFLICT),
    _zone("TestSingleZone", "pv with zone,node with beta zone", "PVC_Stable_1", {BETA_ZONE: "us-west1-a"},
          None, ZONE_CONFLICT),
    _zone("TestSingleZone", "pv with beta label,node with ga label, matched", "PVC_1", {ZONE: "us-west1-a"},
          None, FITS),
    _zone("TestSingleZone", "pv with beta label,node with ga label, don't match", "PVC_1", {ZONE: "us-west1-b"},
          None, ZONE_CONFLICT),
]


@pytest.mark.parametrize("incoming, labels, pre, filters", SINGLE_ZONE_CASES)
def test_single_zone(incoming, labels, pre, filters):
    assert statuses("VolumeZone", [node("host1", labels)], SINGLE_ZONE_STORAGE, incoming) == (pre, filters)


MULTI_ZONE_STORAGE = [
    pv("Vol_1", {BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", {BETA_ZONE: "us-west1-b", "uselessLabel": "none"}),
    pv("Vol_3", {BETA_ZONE: "us-west1-c__us-west1-a"}),
    pv("Vol_Stable_1", {ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", {ZONE: "us-west1-c__us-west1-a"}),
    *_bound_claims({"PVC_1": "Vol_1", "PVC_2": "Vol_2", "PVC_3": "Vol_3", "PVC_4": "Vol_not_exist",
                    "PVC_Stable_1": "Vol_Stable_1", "PVC_Stable_2": "Vol_Stable_2"}),
]

MULTI_ZONE_CASES = [
    _zone("TestMultiZone", "node without labels", "PVC_3", None, None, FITS),
    _zone("TestMultiZone", "beta zone label matched", "PVC_3", {BETA_ZONE: "us-west1-a", **USELESS}, None, FITS),
    _zone("TestMultiZone", "beta zone label doesn't match", "PVC_1", {BETA_ZONE: "us-west1-b", **USELESS},
          None, ZONE_CONFLICT),
    _zone("TestMultiZone", "zone label matched", "PVC_Stable_2", {ZONE: "us-west1-a", **USELESS}, None, FITS),
    _zone("TestMultiZone", "zone label doesn't match", "PVC_Stable_1", {ZONE: "us-west1-b", **USELESS},
          None, ZONE_CONFLICT),
]


@pytest.mark.parametrize("incoming, labels, pre, filters", MULTI_ZONE_CASES)
def test_multi_zone(incoming, labels, pre, filters):
    assert statuses("VolumeZone", [node("host1", labels)], MULTI_ZONE_STORAGE, incoming) == (pre, filters)


# TestWithBinding: Class_Immediate has no volumeBindingMode upstream; the API server defaults it to Immediate.
WITH_BINDING_STORAGE = [
    storage_class("Class_Immediate", "Immediate"),
    storage_class("Class_Wait", "WaitForFirstConsumer"),
    pv("Vol_1", {BETA_ZONE: "us-west1-a"}),
    pvc("PVC_1", volume="Vol_1"),
    pvc("PVC_NoSC", storage_class="Class_0"),
    pvc("PVC_EmptySC"),
    pvc("PVC_WaitSC", storage_class="Class_Wait"),
    pvc("PVC_ImmediateSC", storage_class="Class_Immediate"),
]
IMMEDIATE_MODE_UNSET = ("upstream's class has no volumeBindingMode (\"VolumeBindingMode not set for StorageClass\"); "
                        "the API server defaults it to Immediate, so no stored class lacks it")

WITH_BINDING_CASES = [
    _zone("TestWithBinding", "label zone failure domain matched", "PVC_1", None, None, FITS),
    _zone("TestWithBinding", "unbound volume empty storage class", "PVC_EmptySC", None,
          (UU, ["PersistentVolumeClaim had no pv name and storageClass name"]), []),
    # upstream's fake StorageClassLister names the resource "storageclasses"; the scheduler's informer lister
    # (client-go listers/storage/v1) names it "storageclass", as the NotFound a real cluster gives reads.
    _zone("TestWithBinding", "unbound volume no storage class", "PVC_NoSC", None,
          (UU, [f'storageclass.storage.k8s.io "{dns("Class_0")}" not found']), []),
    pytest.param(pod("pod_1", claim("PVC_ImmediateSC")), None, None, [],
                 id="TestWithBinding/unbound volume immediate binding mode",
                 marks=pytest.mark.skip(reason=IMMEDIATE_MODE_UNSET)),
    _zone("TestWithBinding", "unbound volume wait binding mode", "PVC_WaitSC", None, SKIP, []),
]


@pytest.mark.parametrize("incoming, labels, pre, filters", WITH_BINDING_CASES)
def test_with_binding(incoming, labels, pre, filters):
    host = node("host1", {BETA_ZONE: "us-west1-a", **USELESS})
    assert statuses("VolumeZone", [host], WITH_BINDING_STORAGE, incoming) == (pre, filters)


# ------------------------------------------------------------------------------------------------ volume_restrictions
DISK_REASON = "node(s) had no available disk"              # volumerestrictions.ErrReasonDiskConflict
RWOP_REASON = ("node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode")
DISKS = {   # each test's volState, volState2 (upstream's volumes have no name)
    "TestGCEDiskConflicts": ({"gcePersistentDisk": {"pdName": "foo"}}, {"gcePersistentDisk": {"pdName": "bar"}}),
    "TestAWSDiskConflicts": ({"awsElasticBlockStore": {"volumeID": "foo"}},
                             {"awsElasticBlockStore": {"volumeID": "bar"}}),
    "TestRBDDiskConflicts": ({"rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}},
                             {"rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}}),
    "TestISCSIDiskConflicts": (
        {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01", "fsType": "ext4",
                   "lun": 0}},
        {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2017-12.server:storage.target01", "fsType": "ext4",
                   "lun": 0}}),
}


def _disk_cases():
    for test, (state, state2) in DISKS.items():
        # (case, the incoming pod's volumes, the node's pod's volumes or None for an empty node, want)
        yield test, "nothing", [], None, (SKIP, [])
        yield test, "one state", [], [state], (SKIP, [])
        yield test, "same state", [state], [state], (None, [(U, [DISK_REASON])])
        yield test, "different state", [state2], [state], (None, FITS)
    yield ("TestGCEDiskConflicts", "pod with a volume that doesn't have restrictions",
           [{"name": "volume with no restriction"}], None, (SKIP, []))


@pytest.mark.parametrize("incoming_volumes, existing_volumes, want", [
    pytest.param(incoming, existing, want, id=f"{test}/{name}") for test, name, incoming, existing, want in _disk_cases()])
def test_disk_conflicts(incoming_volumes, existing_volumes, want):
    # Upstream's pods are bare (&v1.Pod{}, st.MakePod()); the one on the node is bound to it here.
    bound = [] if existing_volumes is None else [pod("existing", *existing_volumes, node_name="node")]
    incoming = pod("incoming", *incoming_volumes)
    assert statuses("VolumeRestrictions", [node("node")], [], incoming, bound) == want


# TestAccessModeConflicts: upstream's incoming pods carry Node("node-1") as the pods already there do; an incoming
# pod here is pending (a pod with a node is bound), and VolumeRestrictions reads only its volumes.
RWOP_CLAIMS = {
    "claim-with-rwop-1": pvc("claim-with-rwop-1", modes=("ReadWriteOncePod",)),
    "claim-with-rwop-2": pvc("claim-with-rwop-2", modes=("ReadWriteOncePod",)),
    "claim-with-rwx": pvc("claim-with-rwx", modes=("ReadWriteMany",)),
}


def _on_node_1(name: str, *claims: str):
    return pod(name, *(claim(c) for c in claims), node_name="node-1")


POD_WITH_ONE_PVC = ("pod-with-one-pvc", "claim-with-rwop-1")
POD_WITH_TWO_PVCS = ("pod-with-two-pvcs", "claim-with-rwop-1", "claim-with-rwop-2")
POD_WITH_RWX = ("pod-with-rwx", "claim-with-rwx")


@pytest.mark.parametrize("incoming, existing, claims, want", [
    pytest.param(pod("incoming"), [], [UNNAMED_CLASS], (SKIP, []), id="TestAccessModeConflicts/nothing"),
    pytest.param(pod("pod-with-one-pvc", claim("claim-with-rwop-1")), [], [UNNAMED_CLASS],
                 ((UU, ['persistentvolumeclaim "claim-with-rwop-1" not found']), []),
                 id="TestAccessModeConflicts/failed to get PVC"),
    pytest.param(pod("pod-with-one-pvc", claim("claim-with-rwop-1")), [POD_WITH_RWX],
                 [RWOP_CLAIMS["claim-with-rwop-1"], RWOP_CLAIMS["claim-with-rwx"]], (SKIP, []),
                 id="TestAccessModeConflicts/no access mode conflict"),
    pytest.param(pod("pod-with-one-conflict", claim("claim-with-rwop-1")), [POD_WITH_ONE_PVC, POD_WITH_RWX],
                 [RWOP_CLAIMS["claim-with-rwop-1"], RWOP_CLAIMS["claim-with-rwx"]], (None, [(U, [RWOP_REASON])]),
                 id="TestAccessModeConflicts/access mode conflict, unschedulable"),
    pytest.param(pod("pod-with-two-conflicts", claim("claim-with-rwop-1"), claim("claim-with-rwop-2")),
                 [POD_WITH_TWO_PVCS, POD_WITH_RWX], list(RWOP_CLAIMS.values()), (None, [(U, [RWOP_REASON])]),
                 id="TestAccessModeConflicts/two conflicts, unschedulable"),
])
def test_access_mode_conflicts(incoming, existing, claims, want):
    bound = [_on_node_1(*spec) for spec in existing]
    assert statuses("VolumeRestrictions", [node("node-1")], claims, incoming, bound) == want


# ------------------------------------------------------------------------------------------------ volume_binding_test.go
BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"      # ErrReasonBindConflict
NODE_CONFLICT = "node(s) had volume node affinity conflict"                      # ErrReasonNodeConflict
PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"   # ErrReasonPVNotExist
NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"                    # ErrReasonNotEnoughSpace
NODE_KEY = "nodeKey"                                                             # nodeLabelKey (binder_test.go)
CAPACITY_DRIVER = "driver-with-storage-capacity"


def csi_driver(name: str, storage_capacity: bool) -> dict:
    """makeCSIDriver / driverWithStorageCapacity: a CSIDriver with spec.storageCapacity."""
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": name},
            "spec": {"storageCapacity": storage_capacity}}


def csi_capacity(name: str, class_name: str, node_value: str | None, capacity: str = "",
                 maximum: str = "") -> dict:
    """makeCapacity: nodeTopology {} (every node), or matchLabels nodeKey: the node's; capacity and
    maximumVolumeSize when given."""
    doc = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
           "metadata": {"name": name, "namespace": "default"}, "storageClassName": dns(class_name),
           "nodeTopology": {"matchLabels": {NODE_KEY: node_value}} if node_value is not None else {}}
    if capacity:
        doc["capacity"] = capacity
    if maximum:
        doc["maximumVolumeSize"] = maximum
    return doc


# Created in every TestVolumeBinding case (immediateSC, waitSC, waitHDDSC, waitSCWithStorageCapacity and
# driverWithStorageCapacity).
BINDING_CLASSES = [storage_class("immediate-sc", "Immediate"), storage_class("wait-sc", "WaitForFirstConsumer"),
                   storage_class("wait-hdd-sc", "WaitForFirstConsumer"),
                   {**storage_class("wait-sc-with-storage-capacity", "WaitForFirstConsumer"),
                    "provisioner": CAPACITY_DRIVER},
                   csi_driver(CAPACITY_DRIVER, True)]


def binding_node(name: str, labels: dict | None = None):
    """test_utils.go makeNode: the hostname label is the node's name."""
    return node(name, labels, hostname=True)


def binding_pod(*claims: str):
    """makePod("pod-a").withPVCVolume(claim, "")... (upstream's volume names are empty; here each is its claim's)."""
    return pod("pod-a", *(claim(c) for c in claims))


def local_pv(name: str, storage_class_name: str, capacity: str, host: str) -> dict:
    return pv(name, storage_class=storage_class_name, capacity=capacity, phase="Available", affinity={HOSTNAME: [host]})


def zonal_pv(name: str, capacity: str, zone: str) -> dict:
    return pv(name, storage_class="wait-sc", capacity=capacity, phase="Available",
              affinity={REGION: [f"region-{zone}"], ZONE: [f"zone-{zone}"]})


ZONAL_NODES = [binding_node(f"zone-{zone}-node-{n}", {REGION: f"region-{zone}", ZONE: f"zone-{zone}"})
               for zone in "abc" for n in "ab"]


def _binding(name: str, nodes, storage, incoming, pre, filters):
    return pytest.param(nodes, storage, incoming, pre, filters, id=f"TestVolumeBinding/{name}")


NODE_A = [binding_node("node-a")]
THREE_NODES = [binding_node(f"node-{n}") for n in "abc"]
CAPACITY_NODES = [binding_node(f"node-{n}", {NODE_KEY: f"node-{n}"}) for n in "abc"]
BINDING_CASES = [
    _binding("pod has not pvcs", NODE_A, [], binding_pod(), SKIP, []),
    _binding("all bound", NODE_A,
             [pvc("pvc-a", "wait-sc", volume="pv-a", bound=True), pv("pv-a", storage_class="wait-sc", phase="Available")],
             binding_pod("pvc-a"), None, FITS),
    # wantPreFilterResult {node-a}: the only node, where both volumes are.
    _binding("all bound with local volumes", NODE_A,
             [pvc("pvc-a", "wait-sc", volume="pv-a", bound=True), pvc("pvc-b", "wait-sc", volume="pv-b", bound=True),
              pv("pv-a", storage_class="wait-sc", phase="Bound", affinity={HOSTNAME: ["node-a"]}),
              pv("pv-b", storage_class="wait-sc", phase="Bound", affinity={HOSTNAME: ["node-a"]})],
             binding_pod("pvc-a", "pvc-b"), None, FITS),
    _binding("PVC does not exist", NODE_A, [], binding_pod("pvc-a"),
             (UU, ['persistentvolumeclaim "pvc-a" not found']), []),
    _binding("Part of PVCs do not exist", NODE_A, [pvc("pvc-a", "wait-sc", volume="pv-a", bound=True)],
             binding_pod("pvc-a", "pvc-b"), (UU, ['persistentvolumeclaim "pvc-b" not found']), []),
    _binding("immediate claims not bound", NODE_A, [pvc("pvc-a", "immediate-sc")], binding_pod("pvc-a"),
             (UU, ["pod has unbound immediate PersistentVolumeClaims"]), []),
    _binding("unbound claims no matches", NODE_A, [pvc("pvc-a", "wait-sc")], binding_pod("pvc-a"),
             None, [(UU, [BIND_CONFLICT])]),
    _binding("bound and unbound unsatisfied", [binding_node("node-a", {"foo": "barbar"})],
             [pvc("pvc-a", "wait-sc", volume="pv-a", bound=True), pvc("pvc-b", "wait-sc"),
              pv("pv-a", storage_class="wait-sc", phase="Available", affinity={"foo": ["bar"]})],
             binding_pod("pvc-a", "pvc-b"), None, [(UU, [NODE_CONFLICT, BIND_CONFLICT])]),
    _binding("pvc not found", NODE_A, [], binding_pod("pvc-a"), (UU, ['persistentvolumeclaim "pvc-a" not found']), []),
    _binding("pv not found", NODE_A, [pvc("pvc-a", "wait-sc", volume="pv-a", bound=True)], binding_pod("pvc-a"),
             None, [(UU, [PV_NOT_EXIST])]),
    _binding("pv not found claim lost", NODE_A, [pvc("pvc-a", "wait-sc", volume="pv-a", bound=True, phase="Lost")],
             binding_pod("pvc-a"),
             (UU, ['persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"']), []),
    _binding("local volumes with close capacity are preferred", THREE_NODES,
             [pvc("pvc-a", "wait-sc", request="50Gi"),
              local_pv("pv-a-0", "wait-sc", "200Gi", "node-a"), local_pv("pv-a-1", "wait-sc", "200Gi", "node-a"),
              local_pv("pv-b-0", "wait-sc", "100Gi", "node-b"), local_pv("pv-b-1", "wait-sc", "100Gi", "node-b")],
             binding_pod("pvc-a"), None, [(S, []), (S, []), (UU, [BIND_CONFLICT])]),
    _binding("local volumes with close capacity are preferred (multiple pvcs)", THREE_NODES,
             [pvc("pvc-0", "wait-sc", request="50Gi"), pvc("pvc-1", "wait-hdd-sc", request="100Gi"),
              local_pv("pv-a-0", "wait-sc", "200Gi", "node-a"), local_pv("pv-a-1", "wait-sc", "200Gi", "node-a"),
              local_pv("pv-a-2", "wait-hdd-sc", "200Gi", "node-a"), local_pv("pv-a-3", "wait-hdd-sc", "200Gi", "node-a"),
              local_pv("pv-b-0", "wait-sc", "100Gi", "node-b"), local_pv("pv-b-1", "wait-sc", "100Gi", "node-b"),
              local_pv("pv-b-2", "wait-hdd-sc", "100Gi", "node-b"), local_pv("pv-b-3", "wait-hdd-sc", "100Gi", "node-b")],
             binding_pod("pvc-0", "pvc-1"), None, [(S, []), (S, []), (UU, [BIND_CONFLICT])]),
    # "zonal volumes with close capacity are preferred (custom shape)" differs from this case only in its scores.
    _binding("zonal volumes with close capacity are preferred", ZONAL_NODES,
             [pvc("pvc-a", "wait-sc", request="50Gi"),
              zonal_pv("pv-a-0", "200Gi", "a"), zonal_pv("pv-a-1", "200Gi", "a"),
              zonal_pv("pv-b-0", "100Gi", "b"), zonal_pv("pv-b-1", "100Gi", "b")],
             binding_pod("pvc-a"), None, [(S, [])] * 4 + [(UU, [BIND_CONFLICT])] * 2),
    # The StorageCapacityScoring cases: their Filter statuses (capacity checked per claim, not summed).
    _binding("storage capacity score with static binds", CAPACITY_NODES,
             [pvc("pvc-dynamic", "wait-sc-with-storage-capacity", request="10Gi"),
              pvc("pvc-static", "wait-sc", request="50Gi"),
              *(local_pv(f"pv-static-{n}", "wait-sc", "100Gi", f"node-{n}") for n in "abc"),
              csi_capacity("node-a", "wait-sc-with-storage-capacity", "node-a", "100Gi"),
              csi_capacity("node-b", "wait-sc-with-storage-capacity", "node-b", "50Gi"),
              csi_capacity("node-c", "wait-sc-with-storage-capacity", "node-c", "10Gi")],
             binding_pod("pvc-dynamic", "pvc-static"), None, FITS * 3),
    _binding("dynamic provisioning with multiple PVCs of the same StorageClass", CAPACITY_NODES[:1],
             [pvc("pvc-dynamic-0", "wait-sc-with-storage-capacity", request="50Gi"),
              pvc("pvc-dynamic-1", "wait-sc-with-storage-capacity", request="50Gi"),
              csi_capacity("node-a", "wait-sc-with-storage-capacity", "node-a", "100Gi")],
             binding_pod("pvc-dynamic-0", "pvc-dynamic-1"), None, FITS),
    # "prefer node with maximum allocatable" differs from this case only in its shape and scores.
    _binding("prefer node with least allocatable", CAPACITY_NODES,
             [pvc("pvc-dynamic", "wait-sc-with-storage-capacity", request="10Gi"),
              csi_capacity("node-a", "wait-sc-with-storage-capacity", "node-a", "100Gi"),
              csi_capacity("node-b", "wait-sc-with-storage-capacity", "node-b", "20Gi"),
              csi_capacity("node-c", "wait-sc-with-storage-capacity", "node-c", "10Gi")],
             binding_pod("pvc-dynamic"), None, FITS * 3),
]


@pytest.mark.parametrize("nodes, storage, incoming, pre, filters", BINDING_CASES)
def test_volume_binding(nodes, storage, incoming, pre, filters):
    assert statuses("VolumeBinding", nodes, BINDING_CLASSES + storage, incoming) == (pre, filters)


# ------------------------------------------------------------------------------------------------ binder_test.go
# TestFindPodVolumesWithoutProvisioning / TestFindPodVolumesWithProvisioning (each scenario run with no CSIDriver, and
# with the provisioner's CSIDriver with and without capacity tracking: with it, a `needsCapacity` scenario fails on
# ErrReasonNotEnoughSpace as well, there being no CSIStorageCapacity) and TestCapacity, through PreFilter and Filter
# on node1: upstream's reasons are the Filter's (checkReasons sorts them: order is not compared); `shouldFail` (an
# error from GetPodVolumeClaims, or unbound immediate claims) is a PreFilter rejection, whose message upstream's test
# does not check. The expected bindings (PodVolumes) are left out. binder_test.go's objects: claims in "testns" with
# uid "pvc-uid"; volumes Available, node-local by nodeKey.
PROVISIONER = "test-provisioner"
BINDER_CLASSES = [
    {**storage_class("waitClassWithProvisioner", "WaitForFirstConsumer"), "provisioner": PROVISIONER,
     "allowedTopologies": [{"matchLabelExpressions": [{"key": NODE_KEY, "values": ["node1", "reference-value"]}]}]},
    storage_class("immediateClass", "Immediate"),
    storage_class("waitClass", "WaitForFirstConsumer"),
    {**storage_class("topoMismatchClass", "WaitForFirstConsumer"), "provisioner": PROVISIONER,
     "allowedTopologies": [{"matchLabelExpressions": [{"key": NODE_KEY, "values": ["reference-value"]}]}]},
]


def binder_claim(name: str, size: str, class_name: str, volume: str = "", bound: bool = False,
               selected_node: str = "") -> dict:
    """makeTestPVC: pvcBound sets bind-completed and the volume, pvcPrebound the volume only, pvcSelectedNode the
    selected-node annotation."""
    doc = pvc(name, class_name, volume=volume, bound=bound, request=size)
    doc["metadata"].update(namespace="testns", uid="pvc-uid")
    if selected_node:
        doc["metadata"]["annotations"] = {"volume.kubernetes.io/selected-node": selected_node}
    return doc


def binder_volume(name: str, node_name: str, capacity: str, claim_doc: dict | None, class_name: str) -> dict:
    """makeTestPV: node affinity nodeKey In [node] and the claimRef of `claim_doc`."""
    doc = pv(name, storage_class=dns(class_name), capacity=capacity, phase="Available",
             affinity={NODE_KEY: [node_name]})
    if claim_doc is not None:
        doc["spec"]["claimRef"] = {"namespace": "testns", "name": claim_doc["metadata"]["name"], "uid": "pvc-uid"}
    return doc


UNBOUND_PVC = binder_claim("unbound-pvc", "1G", "waitClass")
UNBOUND_PVC2 = binder_claim("unbound-pvc2", "5G", "waitClass")
PREBOUND_PVC = binder_claim("prebound-pvc", "1G", "waitClass", volume="pv-node1a")
BOUND_PVC = binder_claim("bound-pvc", "1G", "waitClass", volume="pv-bound", bound=True)
IMMEDIATE_UNBOUND_PVC = binder_claim("immediate-unbound-pvc", "1G", "immediateClass")
IMMEDIATE_BOUND_PVC = binder_claim("immediate-bound-pvc", "1G", "immediateClass", volume="pv-bound-immediate",
                                 bound=True)
PROVISIONED_PVC = binder_claim("provisioned-pvc", "1Gi", "waitClassWithProvisioner")
NO_PROVISIONER_PVC = binder_claim("no-provisioner-pvc", "1Gi", "waitClass")
TOPO_MISMATCH_PVC = binder_claim("topo-mismatch-pvc", "1Gi", "topoMismatchClass")
SELECTED_NODE_PVC = binder_claim("provisioned-pvc", "1Gi", "waitClassWithProvisioner", selected_node="node1")
PV_NODE1A = binder_volume("pv-node1a", "node1", "5G", None, "waitClass")
PV_NODE1B = binder_volume("pv-node1b", "node1", "10G", None, "waitClass")
PV_NODE2 = binder_volume("pv-node2", "node2", "1G", None, "waitClass")
PV_BOUND = binder_volume("pv-bound", "node1", "1G", BOUND_PVC, "waitClass")
PV_NODE1A_BOUND = binder_volume("pv-node1a", "node1", "5G", UNBOUND_PVC, "waitClass")
PV_BOUND_IMMEDIATE = binder_volume("pv-bound-immediate", "node1", "1G", IMMEDIATE_BOUND_PVC, "immediateClass")
PV_BOUND_IMMEDIATE_NODE2 = binder_volume("pv-bound-immediate", "node2", "1G", IMMEDIATE_BOUND_PVC, "immediateClass")
# makeGenericEphemeralPVC("test-volume", owned): the claim "test-pod-test-volume", bound to pv-bound, controlled (or
# not) by the pod; upstream's ownerReference carries only name and controller, the API server also requires kind and
# apiVersion.
GENERIC_PVC = binder_claim("test-pod-test-volume", "1G", "immediateClass", volume="pv-bound", bound=True)
OWNED_GENERIC_PVC = {**GENERIC_PVC, "metadata": {**GENERIC_PVC["metadata"], "ownerReferences": [
    {"apiVersion": "v1", "kind": "Pod", "name": "test-pod", "uid": "", "controller": True}]}}
PV_BOUND_GENERIC = binder_volume("pv-bound", "node1", "1G", GENERIC_PVC, "waitClass")
FAILS = "shouldFail"


def binder_pod(*claim_docs: dict, ephemeral: str = "") -> _m.Pod:
    """makePod("test-pod").withNamespace("testns").withPVCSVolume(claims) (withNodeName("node1") dropped: a pod
    with a node is bound here), or withGenericEphemeralVolume(ephemeral)."""
    volumes = [{"name": f"vol{i}", "persistentVolumeClaim": {"claimName": doc["metadata"]["name"]}}
               for i, doc in enumerate(claim_docs)]
    if ephemeral:
        volumes.append({"name": ephemeral, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}})
    return _m.Pod.model_validate({"metadata": {"name": "test-pod", "namespace": "testns"},
                                  "spec": {"containers": [], "volumes": volumes}})


def _binder(test: str, name: str, claims: list[dict], volumes: list[dict], reasons, incoming=None, cached=None,
            needs_capacity: bool = False):
    """A scenario: the pod's claims (also the cached ones unless `cached`), the volumes, and upstream's reasons
    (FAILS: shouldFail); `needs_capacity`: TestFindPodVolumesWithProvisioning's needsCapacity."""
    incoming = binder_pod(*claims) if incoming is None else incoming
    storage = (claims if cached is None else cached) + volumes
    return test, name, storage, incoming, reasons, needs_capacity


WITHOUT = "TestFindPodVolumesWithoutProvisioning"
WITH = "TestFindPodVolumesWithProvisioning"
BINDER_SCENARIOS = [
    _binder(WITHOUT, "no-volumes", [], [], []),
    _binder(WITHOUT, "pvc-not-found", [BOUND_PVC], [], FAILS, cached=[]),
    _binder(WITHOUT, "bound-pvc", [BOUND_PVC], [PV_BOUND], []),
    _binder(WITHOUT, "bound-pvc,pv-not-exists", [BOUND_PVC], [], [PV_NOT_EXIST]),
    _binder(WITHOUT, "prebound-pvc", [PREBOUND_PVC], [PV_NODE1A_BOUND], FAILS),
    _binder(WITHOUT, "unbound-pvc,pv-same-node", [UNBOUND_PVC], [PV_NODE2, PV_NODE1A, PV_NODE1B], []),
    _binder(WITHOUT, "unbound-pvc,pv-different-node", [UNBOUND_PVC], [PV_NODE2], [BIND_CONFLICT]),
    _binder(WITHOUT, "two-unbound-pvcs", [UNBOUND_PVC, UNBOUND_PVC2], [PV_NODE1A, PV_NODE1B], []),
    _binder(WITHOUT, "two-unbound-pvcs,order-by-size", [UNBOUND_PVC2, UNBOUND_PVC], [PV_NODE1A, PV_NODE1B], []),
    _binder(WITHOUT, "two-unbound-pvcs,partial-match", [UNBOUND_PVC, UNBOUND_PVC2], [PV_NODE1A], [BIND_CONFLICT]),
    _binder(WITHOUT, "one-bound,one-unbound", [UNBOUND_PVC, BOUND_PVC], [PV_BOUND, PV_NODE1A], []),
    _binder(WITHOUT, "one-bound,one-unbound,no-match", [UNBOUND_PVC, BOUND_PVC], [PV_BOUND, PV_NODE2],
            [BIND_CONFLICT]),
    _binder(WITHOUT, "one-prebound,one-unbound", [UNBOUND_PVC, PREBOUND_PVC], [PV_NODE1A, PV_NODE1B], FAILS),
    _binder(WITHOUT, "immediate-bound-pvc", [IMMEDIATE_BOUND_PVC], [PV_BOUND_IMMEDIATE], []),
    _binder(WITHOUT, "immediate-bound-pvc-wrong-node", [IMMEDIATE_BOUND_PVC], [PV_BOUND_IMMEDIATE_NODE2],
            [NODE_CONFLICT]),
    _binder(WITHOUT, "immediate-unbound-pvc", [IMMEDIATE_UNBOUND_PVC], [], FAILS),
    _binder(WITHOUT, "immediate-unbound-pvc,delayed-mode-bound", [IMMEDIATE_UNBOUND_PVC, BOUND_PVC], [PV_BOUND],
            FAILS),
    _binder(WITHOUT, "immediate-unbound-pvc,delayed-mode-unbound", [IMMEDIATE_UNBOUND_PVC, UNBOUND_PVC], [], FAILS),
    _binder(WITHOUT, "generic-ephemeral,no-pvc", [], [], FAILS, incoming=binder_pod(ephemeral="no-such-pvc")),
    _binder(WITHOUT, "generic-ephemeral,with-pvc", [], [PV_BOUND_GENERIC], [],
            incoming=binder_pod(ephemeral="test-volume"), cached=[OWNED_GENERIC_PVC]),
    _binder(WITHOUT, "generic-ephemeral,wrong-pvc", [], [PV_BOUND_GENERIC], FAILS,
            incoming=binder_pod(ephemeral="test-volume"), cached=[GENERIC_PVC]),
    _binder(WITH, "one-provisioned", [PROVISIONED_PVC], [], [], needs_capacity=True),
    _binder(WITH, "two-unbound-pvcs,one-matched,one-provisioned", [UNBOUND_PVC, PROVISIONED_PVC], [PV_NODE1A], [],
            needs_capacity=True),
    _binder(WITH, "one-bound,one-provisioned", [BOUND_PVC, PROVISIONED_PVC], [PV_BOUND], [], needs_capacity=True),
    _binder(WITH, "one-binding,one-selected-node", [BOUND_PVC, SELECTED_NODE_PVC], [PV_BOUND], [],
            needs_capacity=True),
    _binder(WITH, "immediate-unbound-pvc", [IMMEDIATE_UNBOUND_PVC], [], FAILS),
    _binder(WITH, "one-immediate-bound,one-provisioned", [IMMEDIATE_BOUND_PVC, PROVISIONED_PVC],
            [PV_BOUND_IMMEDIATE], [], needs_capacity=True),
    _binder(WITH, "invalid-provisioner", [NO_PROVISIONER_PVC], [], [BIND_CONFLICT]),
    _binder(WITH, "volume-topology-unsatisfied", [TOPO_MISMATCH_PVC], [], [BIND_CONFLICT]),
]
# The CSIDriver runs: "no CSIDriver", "CSIDriver with capacity tracking", "CSIDriver without capacity tracking".
DRIVER_RUNS = {"no CSIDriver": None, "CSIDriver with capacity tracking": True,
               "CSIDriver without capacity tracking": False}
BINDER_CASES = [
    pytest.param(storage + ([] if tracking is None else [csi_driver(PROVISIONER, tracking)]), incoming,
                 FAILS if reasons == FAILS else reasons + ([NOT_ENOUGH_SPACE] if needs and tracking else []),
                 id=f"{test}/{run}/{name}")
    for run, tracking in DRIVER_RUNS.items() for test, name, storage, incoming, reasons, needs in BINDER_SCENARIOS]

# TestCapacity: provisionedPVC with the provisioner's CSIDriver (StorageCapacity true, then false: without it no
# scenario fails) and the scenario's CSIStorageCapacity objects. makeCapacity names them all "net"; the API server
# takes one object of a name, so "multiple"'s three are named apart here (upstream's fake informer keeps the last
# of the same key, node1Capacity, on which the scenario succeeds either way).
NETWORK_ATTACHED = csi_capacity("net", "waitClassWithProvisioner", None, "1Gi")
NODE1_CAPACITY = csi_capacity("net", "waitClassWithProvisioner", "node1", "1Gi")
NODE2_CAPACITY = csi_capacity("net", "waitClassWithProvisioner", "node2", "1Gi")
CAPACITY_SCENARIOS = {
    "network-attached": ([NETWORK_ATTACHED], []),
    "local-storage": ([NODE1_CAPACITY], []),
    "multiple": ([{**NETWORK_ATTACHED, "metadata": {"name": "net-0", "namespace": "default"}},
                  {**NODE2_CAPACITY, "metadata": {"name": "net-1", "namespace": "default"}}, NODE1_CAPACITY], []),
    "no-storage": ([], [NOT_ENOUGH_SPACE]),
    "wrong-node": ([csi_capacity("net", "waitClassWithProvisioner", "node2", "1Gi")], [NOT_ENOUGH_SPACE]),
    "wrong-storage-class": ([csi_capacity("net", "waitClass", "node1", "1Gi")], [NOT_ENOUGH_SPACE]),
    "insufficient-storage": ([csi_capacity("net", "waitClassWithProvisioner", "node1", "1Mi")], [NOT_ENOUGH_SPACE]),
    "insufficient-volume-size": ([csi_capacity("net", "waitClassWithProvisioner", "node1", "1Gi", "1Mi")],
                                 [NOT_ENOUGH_SPACE]),
    "zero-storage": ([csi_capacity("net", "waitClassWithProvisioner", "node1", "0Mi")], [NOT_ENOUGH_SPACE]),
    "zero-volume-size": ([csi_capacity("net", "waitClassWithProvisioner", "node1", "", "0Mi")], [NOT_ENOUGH_SPACE]),
    "nil-storage": ([csi_capacity("net", "waitClassWithProvisioner", "node1")], [NOT_ENOUGH_SPACE]),
}
BINDER_CASES += [
    pytest.param([PROVISIONED_PVC, csi_driver(PROVISIONER, opt_in), *capacities], binder_pod(PROVISIONED_PVC),
                 reasons if opt_in else [], id=f"TestCapacity/CSIDriver.StorageCapacity={str(opt_in).lower()}/{name}")
    for opt_in in (True, False) for name, (capacities, reasons) in CAPACITY_SCENARIOS.items()]


@pytest.mark.parametrize("storage, incoming, reasons", BINDER_CASES)
def test_find_pod_volumes(storage, incoming, reasons):
    node1 = node("node1", {NODE_KEY: "node1"})
    pre, filters = statuses("VolumeBinding", [node1], BINDER_CLASSES + storage, incoming)
    if reasons == FAILS:
        assert pre not in (None, SKIP) and pre[0] == UU
    elif not incoming.spec.volumes:
        assert (pre, filters) == (SKIP, [])
    else:
        assert pre is None and [(code, sorted(got)) for code, got in filters] == [
            (UU, sorted(reasons)) if reasons else (S, [])]


# ------------------------------------------------------------------------------------------------ csi_test.go
# TestCSILimits's fixture (getFakeCSIPVLister, getFakeCSIPVCLister, getFakeCSIStorageClassLister,
# getNodeWithPodAndVolumeLimits): for each driver of the case, volumes and claims "csi-<driver>-<j>", j < 4, each claim
# naming its volume (spec.volumeName only), each volume a CSI volume of the driver with the volume's name as handle;
# claims csi-4 (class csi-sc, not bound), csi-5 (no class) and csi-6 (class csi-sc, volumeName missing-in-action);
# the class csi-sc, whose provisioner is the case's first driver; the node node-for-max-pd-test-1 and its CSINode.
EBS_CSI = "ebs.csi.aws.com"             # csilibplugins.AWSEBSDriverName
GCE_CSI = "pd.csi.storage.gke.io"       # csilibplugins.GCEPDDriverName
HOSTPATH = "kubernetes.io/hostpath"     # hostpathInTreePluginName
CSI_NODE = "node-for-max-pd-test-1"
CSI_SC = "csi-sc"
LIMIT_REASON = "node(s) exceed max volume count"           # nodevolumelimits.ErrReasonMaxVolumeCountExceeded
EXCEEDED = [(U, [LIMIT_REASON])]


def csi_name(driver: str, j: int) -> str:
    """The fixture's volume and claim name "csi-<driver>-<j>"; "/" (in-tree plugin names) written "-" (`dns`)."""
    return dns(f"csi-{driver}-{j}".replace("/", "-"))


def csi_storage(drivers: tuple[str, ...]) -> list[dict]:
    docs = [{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": CSI_SC},
             "provisioner": drivers[0]}]
    for driver in drivers:
        for j in range(4):
            name = csi_name(driver, j)
            volume = pv(name)
            volume["spec"]["hostPath" if driver == HOSTPATH else "csi"] = (
                {"path": "/tmp"} if driver == HOSTPATH else {"driver": driver, "volumeHandle": name})
            docs += [volume, pvc(name, volume=name)]
    return docs + [pvc("csi-4", CSI_SC), pvc("csi-5"), pvc("csi-6", CSI_SC, volume="missing-in-action")]


def csi_node(drivers: tuple[str, ...], limit: int | None) -> dict:
    """limitSource "csinode" (every driver's allocatable count `limit`), "csinode-with-no-limit" (None)."""
    counts = {} if limit is None else {"allocatable": {"count": limit}}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": CSI_NODE},
            "spec": {"drivers": [{"name": d, "nodeID": CSI_NODE, **counts} for d in drivers]}}


def csi_pod(name: str, *claims: str, namespace: str = "default", uid: str = "", volumes=()) -> _m.Pod:
    """st.MakePod().PVC(...) (upstream's pods have no name: each gets the name of its variable) or a pod literal;
    `volumes`: other volume sources, named (upstream's are not; the API server requires names)."""
    doc = {"metadata": {"name": name, "namespace": namespace, "uid": uid},
           "spec": {"containers": [], "volumes": [*volumes, *(claim(c) for c in claims)]}}
    return _m.Pod.model_validate(doc)


def owned_claim(pod_doc: _m.Pod, volume: str, owned: bool = True) -> dict:
    """ephemeralClaim / ephemeralClaimX / ephemeralClaimY (conflictingClaim: `owned` False), class csi-sc."""
    doc = pvc(f"{pod_doc.metadata.name}-{volume}", CSI_SC)
    doc["metadata"]["namespace"] = pod_doc.metadata.namespace
    if owned:
        doc["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": pod_doc.metadata.name,
                                               "uid": pod_doc.metadata.uid, "controller": True}]
    return doc


EPHEMERAL = {"ephemeral": {"volumeClaimTemplate": {"spec": {}}}}
CONFIGMAP_AND_SECRET = ({"name": "configmap", "configMap": {"name": "cm"}}, {"name": "secret", "secret": {}})
RUNNING = csi_pod("running-pod", csi_name(EBS_CSI, 3))
PENDING = csi_pod("pending-volume-pod", "csi-4")
UNBOUND_PVC_POD2 = csi_pod("unbound-pvc-pod2", "csi-4")
MISSING_PV = csi_pod("missing-pv-pod", "csi-6")
NO_SC_PVC = csi_pod("no-sc-pvc-pod", "csi-5")
GCE_TWO = csi_pod("gce-two-vol-pod", csi_name(GCE_CSI, 1), csi_name(GCE_CSI, 2))
EBS_ONE = csi_pod("csi-ebs-one-vol-pod", csi_name(EBS_CSI, 0))
EBS_TWO = csi_pod("csi-ebs-two-vol-pod", csi_name(EBS_CSI, 1), csi_name(EBS_CSI, 2))
NON_MIGRATABLE = csi_pod("in-tree-non-migratable-one-vol-pod", csi_name(HOSTPATH, 0))
EPHEMERAL_POD = csi_pod("abc", namespace="test", uid="12345", volumes=[{"name": "xyz", **EPHEMERAL}])
EPHEMERAL_TWO = csi_pod("abc", namespace="test", uid="12345II",
                        volumes=[{"name": "x", **EPHEMERAL}, {"name": "y", **EPHEMERAL}])
ONLY_CONFIGMAP_AND_SECRET = csi_pod("only-configmap-and-secret-vol-pod", volumes=CONFIGMAP_AND_SECRET)
PVC_WITH_CONFIGMAP_AND_SECRET = csi_pod("pvc-pod-with-configmap-and-secret", csi_name(EBS_CSI, 0),
                                        volumes=CONFIGMAP_AND_SECRET)
EPHEMERAL_WITH_CONFIGMAP_AND_SECRET = csi_pod("abc", namespace="test",
                                              volumes=[*CONFIGMAP_AND_SECRET, {"name": "xyz", **EPHEMERAL}])
# upstream's fake claim lister names the resource "persistentvolumeclaims"; the scheduler's informer lister (client-go
# listers, v1.Resource("persistentvolumeclaim")) the singular phalanx reports
MISSING_ABC_XYZ = [(UU, ['looking up PVC test/abc-xyz: persistentvolumeclaims "abc-xyz" not found'
                         .replace("persistentvolumeclaims", "persistentvolumeclaim")])]
MIGRATION = "CSI migration (in-tree volumes and provisioners translated to CSI drivers) is not modelled"


def csi_attachments(count: int, drivers: tuple[str, ...]) -> list[dict]:
    """buildFakeClientWithVALister: per driver, `count` VolumeAttachments "va-<driver>-<j>" on the node, attacher the
    driver, of the fixture's volume "csi-<driver>-<j>"."""
    return [{"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
             "metadata": {"name": dns(f"va-{driver}-{j}".replace("/", "-"))},
             "spec": {"nodeName": CSI_NODE, "attacher": driver, "source": {"persistentVolumeName": csi_name(driver, j)}}}
            for driver in drivers for j in range(count)]


def _csi(test: str, incoming, existing=(), drivers=(EBS_CSI,), limit: int | None = None, extra=(), pre=None,
         filters=FITS, skip: str = "", attachments: int = 0):
    """One TestCSILimits case: `limit` None is limitSource "csinode-with-no-limit"; `attachments` vaCount; `pre` /
    `filters` upstream's wantPreFilterStatus / wantStatus."""
    marks = [pytest.mark.skip(reason=skip)] if skip else []
    return pytest.param(incoming, tuple(existing), tuple(drivers), limit,
                        [*extra, *csi_attachments(attachments, drivers)], pre, filters, marks=marks,
                        id=f"TestCSILimits/{test}")


EPHEMERAL_CLAIM = owned_claim(EPHEMERAL_POD, "xyz")
CSI_CASES = [
    # the pod's own volume csi-ebs-0 is attached already: counted once attached and once new, as upstream counts it
    _csi("should count VolumeAttachments towards volume limit when no pods exist", EBS_ONE, limit=2,
         filters=EXCEEDED, attachments=2),
    _csi("should schedule pod when VolumeAttachments count does not exceed limit", EBS_ONE, limit=2, attachments=1),
    _csi("fits when node volume limit >= new pods CSI volume", EBS_ONE, [RUNNING, EBS_TWO], limit=4),
    _csi("doesn't when node volume limit <= pods CSI volume", EBS_ONE, [RUNNING, EBS_TWO], limit=2,
         filters=EXCEEDED),
    _csi("should when driver does not support volume limits", EBS_ONE, [RUNNING, EBS_TWO]),
    _csi("count pending PVCs towards volume limit <= pods CSI volume", EBS_ONE, [PENDING, EBS_TWO], limit=2,
         filters=EXCEEDED),
    _csi("count multiple pending pvcs towards volume limit >= pods CSI volume", EBS_ONE,
         [PENDING, UNBOUND_PVC_POD2, EBS_TWO], limit=4),
    _csi("should count PVCs with invalid PV name but valid SC", EBS_ONE, [MISSING_PV, EBS_TWO], limit=2,
         filters=EXCEEDED),
    _csi("don't count pvcs with missing SC towards volume limit", EBS_ONE, [RUNNING, NO_SC_PVC], limit=2),
    _csi("count pvcs with the same type towards volume limit", EBS_ONE, [GCE_TWO, EBS_TWO], (EBS_CSI, GCE_CSI), 2,
         filters=EXCEEDED),
    _csi("don't count pvcs with different type towards volume limit", GCE_TWO, [EBS_TWO, RUNNING],
         (EBS_CSI, GCE_CSI), 2),
    *(_csi(name, EBS_ONE, skip=MIGRATION) for name in (
        "should count in-tree volumes if migration is enabled",
        "nil csi node",
        "should count unbound in-tree volumes if migration is enabled",
        "should not limit pod if volume used does not report limits",
        "should count in-tree inline volumes if migration is enabled",
        "should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)",
        "should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
        "should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
        "should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)",
        "don't skip Filter when the pod has inline migratable volumes")),
    # a hostPath volume is no CSI volume (and no in-tree plugin CSI migration translates): counts for no driver
    _csi("should not count non-migratable in-tree volumes", NON_MIGRATABLE, [EBS_TWO], (HOSTPATH, EBS_CSI), 2),
    _csi("ephemeral volume missing", EPHEMERAL_POD, filters=MISSING_ABC_XYZ),
    _csi("ephemeral volume not owned", EPHEMERAL_POD, extra=[owned_claim(EPHEMERAL_POD, "xyz", owned=False)],
         filters=[(ERROR, ["PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"])]),
    _csi("ephemeral volume unbound", EPHEMERAL_POD, extra=[EPHEMERAL_CLAIM]),
    _csi("ephemeral doesn't when node volume limit <= pods CSI volume", EPHEMERAL_POD, [RUNNING, EBS_TWO], limit=2,
         extra=[EPHEMERAL_CLAIM], filters=EXCEEDED),
    _csi("ephemeral doesn't when node volume limit <= pods ephemeral CSI volume", EBS_ONE, [RUNNING, EPHEMERAL_TWO],
         limit=2, extra=[owned_claim(EPHEMERAL_TWO, "x"), owned_claim(EPHEMERAL_TWO, "y")], filters=EXCEEDED),
    # upstream's ephemeralEnabled is read by no code of the test (generic ephemeral volumes are GA): same as enabled
    _csi("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume, ephemeral "
         "disabled", EBS_ONE, [RUNNING, EPHEMERAL_POD, EBS_TWO], limit=3, extra=[EPHEMERAL_CLAIM], filters=EXCEEDED),
    _csi("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume", EBS_ONE,
         [RUNNING, EPHEMERAL_POD, EBS_TWO], limit=3, extra=[EPHEMERAL_CLAIM], filters=EXCEEDED),
    _csi("persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume", EBS_ONE,
         [RUNNING, EPHEMERAL_POD, EBS_TWO], limit=5, extra=[EPHEMERAL_CLAIM]),
    _csi("skip Filter when the pod only uses secrets and configmaps", ONLY_CONFIGMAP_AND_SECRET, limit=2, pre=SKIP,
         filters=[]),
    _csi("don't skip Filter when the pod has pvcs", PVC_WITH_CONFIGMAP_AND_SECRET, limit=2),
    _csi("don't skip Filter when the pod has ephemeral volumes", EPHEMERAL_WITH_CONFIGMAP_AND_SECRET,
         filters=MISSING_ABC_XYZ),
]


@pytest.mark.parametrize("incoming, existing, drivers, limit, extra, pre, filters", CSI_CASES)
def test_csi_limits(incoming, existing, drivers, limit, extra, pre, filters):
    storage = csi_storage(drivers) + extra + [csi_node(drivers, limit)]
    on_node = [other.model_copy(update={"spec": other.spec.model_copy(update={"node_name": CSI_NODE})})
               for other in existing]
    report = plugin_report("NodeVolumeLimits", [node(CSI_NODE)], storage, incoming, on_node)
    if filters and filters[0][0] == ERROR:
        # framework.AsStatus(err): the cycle fails with the error RunFilterPlugins wraps; the node's status is the
        # Error with its message
        [(_, [message])] = filters
        assert [n["filters"]["NodeVolumeLimits"] for n in report["nodes"]] == [{"status": ERROR, "reasons": [message]}]
        assert report["message"] == f'running "NodeVolumeLimits" filter plugin: {message}'
    else:
        assert statuses_in(report, "NodeVolumeLimits") == (pre, filters)
