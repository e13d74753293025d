"""Storage objects and the volume plugins (VolumeRestrictions, VolumeZone, VolumeBinding), v1.36.0.

Toy clusters, decisions and messages worked out by hand from upstream's code (the comments say why): nodes are
4 cpu / 8Gi, pods 1 cpu / 1Gi; between equally good nodes the first one (input order) wins, and with
LeastAllocated an emptier node scores higher.
"""
from __future__ import annotations

import dataclasses

import pytest

from phalanx.cluster_models import InputError, load_text


# -- the models: API-server validation of what phalanx reads -------------------------------------------------------
@pytest.mark.parametrize("text, message", [
    ("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\n"
     "spec: {accessModes: [RWX], resources: {requests: {storage: 1Gi}}}",
     'PersistentVolumeClaim default/c: spec.accessModes: Unsupported value: "RWX": supported values: "ReadOnlyMany", '
     '"ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"'),
    ("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {accessModes: [ReadWriteOnce]}",
     "PersistentVolumeClaim default/c: spec.resources[storage]: Required value"),
    ("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\n"
     "spec: {resources: {requests: {storage: 1Gi}}}",
     "PersistentVolumeClaim default/c: spec.accessModes: Required value: at least 1 access mode is required"),
    ("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\n"
     "spec: {accessModes: [ReadWriteOncePod, ReadWriteOnce], resources: {requests: {storage: 1Gi}}}",
     "PersistentVolumeClaim default/c: spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access "
     "modes"),
    ("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v}\n"
     "spec: {accessModes: [ReadWriteOnce], capacity: {storage: 0}}",
     'PersistentVolume v: spec.capacity[storage]: Invalid value: "0": must be greater than zero'),
    ("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v}\nspec: {accessModes: [ReadWriteOnce]}",
     "PersistentVolume v: spec.capacity: Required value"),
    ("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v}\n"
     "spec: {accessModes: [ReadWriteOnce], capacity: {storage: 1Gi}, nodeAffinity: {required: {nodeSelectorTerms: []}}}",
     "PersistentVolume v: spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least one node "
     "selector term"),
    ("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: s}\n",
     "StorageClass s: provisioner: Required value"),
    ("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: s}\nprovisioner: p\n"
     "volumeBindingMode: Later",
     'StorageClass s: volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", '
     '"WaitForFirstConsumer"'),
    ("apiVersion: storage.k8s.io/v1beta1\nkind: StorageClass\nmetadata: {name: s}\nprovisioner: p\n",
     'StorageClass s: apiVersion: unknown version "storage.k8s.io/v1beta1" of StorageClass (served: '
     'storage.k8s.io/v1)'),
    # CSIDriver (ValidateCSIDriver after SetDefaults_CSIDriver), CSIStorageCapacity, VolumeAttachment
    ("apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: example.com/csi}\n",
     "CSIDriver example.com/csi: metadata.name: must be a DNS subdomain: lowercase letters, digits, '-' and '.', each "
     "'.'-separated part starting and ending with a letter or digit (got \"example.com/csi\")"),
    ("apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: d}\nspec: {fsGroupPolicy: Any}\n",
     'CSIDriver d: spec.fsGroupPolicy: Unsupported value: "Any": supported values: "File", "None", '
     '"ReadWriteOnceWithFSType"'),
    ("apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: d}\n"
     "spec: {tokenRequests: [{audience: a}, {audience: a}]}\n",
     'CSIDriver d: spec.tokenRequests[1].audience: Duplicate value: "a"'),
    ("apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: d}\nspec: {volumeLifecycleModes: [Once]}\n",
     'CSIDriver d: spec.volumeLifecycleModes: Unsupported value: "Once": supported values: "Persistent", "Ephemeral"'),
    ("apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: d}\n"
     "spec: {nodeAllocatableUpdatePeriodSeconds: 5}\n",
     "CSIDriver d: spec.nodeAllocatableUpdatePeriodSeconds: Invalid value: 5: must be greater than or equal to 10 "
     "seconds"),
    ("apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: c, namespace: kube-system}\n"
     "storageClassName: fast\ncapacity: -1Gi\n",
     'CSIStorageCapacity kube-system/c: capacity: Invalid value: "-1Gi": must be greater than or equal to 0'),
    ("apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: c}\ncapacity: 1Gi\n",
     "CSIStorageCapacity default/c: storageClassName: Invalid value: \"\": must be a DNS subdomain: lowercase letters, "
     "digits, '-' and '.', each '.'-separated part starting and ending with a letter or digit (got \"\")"),
    ("apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: c}\nstorageClassName: fast\n"
     "nodeTopology: {matchExpressions: [{key: zone, operator: In}]}\n",
     "CSIStorageCapacity default/c: nodeTopology.matchExpressions[0].values: Required value: must be specified when "
     "`operator` is 'In' or 'NotIn'"),
    ("apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: a}\n"
     "spec: {nodeName: n0, source: {persistentVolumeName: pv}}\n",
     "VolumeAttachment a: spec.attacher: Required value"),
    ("apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: a}\n"
     "spec: {attacher: csi.example.com, nodeName: n0, source: {}}\n",
     "VolumeAttachment a: spec.source: Required value: must specify exactly one of inlineVolumeSpec and "
     "persistentVolumeName"),
    ("apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: a}\n"
     "spec: {attacher: csi.example.com, nodeName: n0, source: {persistentVolumeName: pv, inlineVolumeSpec: {}}}\n",
     "VolumeAttachment a: spec.source: Forbidden: must specify exactly one of inlineVolumeSpec and "
     "persistentVolumeName"),
    ("apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: a}\n"
     "spec: {attacher: example.com/csi, nodeName: n0, source: {persistentVolumeName: pv}}\n",
     "VolumeAttachment a: spec.attacher: Invalid value: \"example.com/csi\": must be a DNS subdomain: lowercase "
     "letters, digits, '-' and '.', each '.'-separated part starting and ending with a letter or digit (got "
     "\"example.com/csi\")"),
])
def test_storage_objects_are_validated_as_the_api_server_does(text, message):
    with pytest.raises(InputError) as error:
        load_text(text)
    assert str(error.value) == message


def test_storage_objects_load_with_api_defaults():
    objects = load_text("""
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv1, annotations: {volume.beta.kubernetes.io/storage-class: beta}}
spec: {capacity: {storage: 1536Mi}, accessModes: [ReadWriteOnce], storageClassName: ga}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: c1, namespace: ml}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1.5Gi}}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: std}
provisioner: example.com/csi
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n0}
spec: {drivers: [{name: example.com/csi, nodeID: n0, allocatable: {count: 3}}]}
""")
    pv, = objects.persistent_volumes
    claim, = objects.persistent_volume_claims
    sc, = objects.storage_classes
    assert pv.capacity == 1536 * 2**20 and pv.storage_class == "beta"      # the beta annotation first
    assert pv.status.phase == "Available" and pv.spec.volume_mode == "Filesystem"
    assert claim.key == "ml/c1" and claim.request == claim.request.numerator == 1536 * 2**20
    assert claim.storage_class == "" and not claim.fully_bound
    assert sc.volume_binding_mode == "Immediate"                              # the API server's default
    assert objects.csi_nodes[0].spec.drivers[0].allocatable.count == 3
    assert not objects.warnings


# -- the plugins on toy clusters ------------------------------------------------------------------------------------
from strategies import make_node, make_pod  # noqa: E402

from phalanx.cluster_models import parse_objects  # noqa: E402
from phalanx.plugins.framework import NODE_ADDED, POD_DELETED  # noqa: E402
from phalanx.plugins.volume_restrictions import VolumeRestrictions  # noqa: E402
from phalanx.sched import Cluster, Scheduler  # noqa: E402
from phalanx.sched.volumes import VolumeBook  # noqa: E402
from phalanx.sched.records import BOUND, UNSCHEDULABLE  # noqa: E402

ZONE = "topology.kubernetes.io/zone"
# The default profile's PostFilter plugins after a failed cycle (DynamicResources for a pod without claims, then
# DefaultPreemption: every node UnschedulableAndUnresolvable).
NO_PREEMPTION = " no new claims to deallocate, preemption: 0/{n} nodes are available: {n} Preemption is not helpful for scheduling."


def pod_with(name, volumes, cpu="1"):
    pod = make_pod(name, cpu=cpu, memory="1Gi")
    doc = pod.model_dump(by_alias=True, exclude_defaults=True)
    doc["spec"]["volumes"] = volumes
    return type(pod).model_validate(doc)


def claim_volume(claim):
    return {"name": claim, "persistentVolumeClaim": {"claimName": claim}}


def pv(name, size, cls="local", node=None, modes=("ReadWriteOnce",), labels=None, claim=None):
    spec = {"capacity": {"storage": size}, "accessModes": list(modes), "storageClassName": cls}
    if node is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}
    if claim is not None:
        spec["claimRef"] = {"namespace": "default", "name": claim}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "labels": labels or {}},
            "spec": spec}


def pvc(name, size, cls="local", modes=("ReadWriteOnce",), volume=None, bound=False):
    meta = {"name": name, "annotations": {"pv.kubernetes.io/bind-completed": "yes"} if bound else {}}
    spec = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}, "storageClassName": cls}
    if volume:
        spec["volumeName"] = volume
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}


def storage_class(name, mode="WaitForFirstConsumer", provisioner="kubernetes.io/no-provisioner", zones=None):
    doc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
           "provisioner": provisioner, "volumeBindingMode": mode}
    if zones:
        doc["allowedTopologies"] = [{"matchLabelExpressions": [{"key": ZONE, "values": zones}]}]
    return doc


def cluster(docs, nodes=3, labels=None) -> Cluster:
    objects = parse_objects(list(docs))
    objects.nodes = [make_node(f"n{i}", labels=(labels or {}).get(i)) for i in range(nodes)]
    return Cluster.from_objects(objects)


def run(c: Cluster, pods) -> dict:
    s = Scheduler(c)
    records = s.add_pods(pods) + s.run_until_idle()
    return {r.object: (r.node if r.kind == BOUND else r.message) for r in records if r.kind in (BOUND, UNSCHEDULABLE)}


def test_wait_for_first_consumer_claims_take_the_smallest_fitting_local_volume():
    # Local volumes: pv-big (20Gi) on n0, pv-small (10Gi) on n1, pv-tiny (1Gi) on n2. Claim a (5Gi) fits pv-big and
    # pv-small only: n2 fails "didn't find available persistent volumes to bind" (no provisioner). n0 and n1 tie on
    # resources (both empty), so n0 wins the tie... but each node offers its own volume, so a goes to n0 with pv-big.
    # Claim b (5Gi) next: pv-big is bound to a now, so only n1 (pv-small) is left.
    c = cluster([storage_class("local"), pv("pv-big", "20Gi", node="n0"), pv("pv-small", "10Gi", node="n1"),
                 pv("pv-tiny", "1Gi", node="n2"), pvc("a", "5Gi"), pvc("b", "5Gi"), pvc("c", "5Gi")])
    got = run(c, [pod_with("pa", [claim_volume("a")]), pod_with("pb", [claim_volume("b")]),
                  pod_with("pc", [claim_volume("c")])])
    assert got["default/pa"] == "n0" and got["default/pb"] == "n1"
    # Claim c: pv-big and pv-small are taken, pv-tiny too small: every node fails.
    assert got["default/pc"] == ("0/3 nodes are available: 3 node(s) didn't find available persistent volumes to "
                                 "bind." + NO_PREEMPTION.format(n=3))
    book = c.volumes
    assert book.volume_of == {"default/a": "pv-big", "default/b": "pv-small"}
    assert book.claim_of == {"pv-big": "default/a", "pv-small": "default/b"}


def test_smallest_volume_of_several_on_one_node():
    # Both volumes on n0 allow the claim (3Gi): the smaller, pv-5, is chosen (FindMatchingVolume), not the first.
    c = cluster([storage_class("local"), pv("pv-8", "8Gi", node="n0"), pv("pv-5", "5Gi", node="n0"),
                 pvc("a", "3Gi")], nodes=1)
    assert run(c, [pod_with("pa", [claim_volume("a")])]) == {"default/pa": "n0"}
    assert c.volumes.volume_of == {"default/a": "pv-5"}


def test_bound_claim_pins_the_pod_to_its_volume_node():
    c = cluster([storage_class("local"), pv("pv0", "5Gi", node="n2", claim="a"),
                 pvc("a", "5Gi", volume="pv0", bound=True)])
    assert run(c, [pod_with("pa", [claim_volume("a")])]) == {"default/pa": "n2"}
    # A claim bound to a volume that does not exist: VolumeBinding's Filter would fail every node "unavailable due
    # to one or more pvc(s) bound to non-existent pv(s)", but VolumeZone's PreFilter (after VolumeBinding's, before
    # any Filter) reads the volume first and rejects the pod with its lister's NotFound.
    c = cluster([storage_class("local"), pvc("a", "5Gi", volume="gone", bound=True)])
    assert run(c, [pod_with("pa", [claim_volume("a")])]) == {"default/pa": (
        '0/3 nodes are available: persistentvolume "gone" not found.' + NO_PREEMPTION.format(n=3))}
    # A local volume (hostname In) names the only nodes its users may take (GetEligibleNodes, a PreFilterResult):
    # one the cluster does not have leaves every node out.
    c = cluster([storage_class("local"), pv("pv0", "5Gi", node="elsewhere", claim="a"),
                 pvc("a", "5Gi", volume="pv0", bound=True)])
    assert run(c, [pod_with("pa", [claim_volume("a")])]) == {"default/pa": (
        "0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) [VolumeBinding]." + NO_PREEMPTION.format(n=3))}
    # Two local volumes on different nodes: the PreFilterResults have no node in common.
    c = cluster([storage_class("local"), pv("pv0", "5Gi", node="n0", claim="a"), pv("pv1", "5Gi", node="n1", claim="b"),
                 pvc("a", "5Gi", volume="pv0", bound=True), pvc("b", "5Gi", volume="pv1", bound=True)])
    assert run(c, [pod_with("pa", [claim_volume("a"), claim_volume("b")])]) == {"default/pa": (
        "0/3 nodes are available: node(s) didn't satisfy plugin VolumeBinding." + NO_PREEMPTION.format(n=3))}
    # A volume whose node affinity is not by hostname: its Filter's conflict on the other nodes.
    zonal = pv("pv0", "5Gi", claim="a")
    zonal["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": ZONE, "operator": "In", "values": ["a"]}]}]}}
    c = cluster([storage_class("local"), zonal, pvc("a", "5Gi", volume="pv0", bound=True)], labels={1: {ZONE: "a"}})
    assert run(c, [pod_with("pa", [claim_volume("a")])]) == {"default/pa": "n1"}
    c = cluster([storage_class("local"), zonal, pvc("a", "5Gi", volume="pv0", bound=True)])
    assert run(c, [pod_with("pa", [claim_volume("a")])]) == {"default/pa": (
        "0/3 nodes are available: 3 node(s) had volume node affinity conflict." + NO_PREEMPTION.format(n=3))}


def test_missing_and_immediate_claims_are_prefilter_rejections():
    # VolumeRestrictions' PreFilter (first in the profile) meets the missing claim: its lister's NotFound text.
    c = cluster([storage_class("fast", mode="Immediate", provisioner="example.com/csi"), pvc("late", "1Gi", "fast")])
    got = run(c, [pod_with("p0", [claim_volume("nope")]), pod_with("p1", [claim_volume("late")])])
    post = NO_PREEMPTION.format(n=3)
    assert got["default/p0"] == '0/3 nodes are available: persistentvolumeclaim "nope" not found.' + post
    assert got["default/p1"] == "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims." + post


def test_dynamic_provisioning_follows_allowed_topologies_and_pins_later_users():
    # Class zonal provisions only in zone b (n1). The pod goes to n1 and the claim is selected for n1; a second pod
    # of the same claim then fails elsewhere (the selected node's fast path) and goes to n1 too.
    c = cluster([storage_class("zonal", provisioner="example.com/csi", zones=["b"]), pvc("d", "1Gi", "zonal")],
                labels={0: {ZONE: "a"}, 1: {ZONE: "b"}, 2: {ZONE: "c"}})
    got = run(c, [pod_with("p0", [claim_volume("d")]), pod_with("p1", [claim_volume("d")])])
    assert got == {"default/p0": "n1", "default/p1": "n1"}
    assert c.volumes.selected == {"default/d": "n1"} and not c.volumes.volume_of
    # Pinned: with a class that may provision anywhere, p0 takes n0 (nodes alike, the first) and p1, which would
    # otherwise take the emptier n1, follows the claim to n0.
    c = cluster([storage_class("any", provisioner="example.com/csi"), pvc("d", "1Gi", "any")])
    got = run(c, [pod_with("p0", [claim_volume("d")]), pod_with("p1", [claim_volume("d")])])
    assert got == {"default/p0": "n0", "default/p1": "n0"}
    assert c.volumes.selected == {"default/d": "n0"}


def test_volume_zone_and_read_write_once_pod():
    # pv-a is labelled zone a (n1): VolumeZone keeps the pod off n0 (zone b); n2 has no zone label (allowed), but
    # n1 and n2 tie and n1 is first. The ReadWriteOncePod claim solo is used by s0 once bound: s1 fails everywhere.
    c = cluster([storage_class("std", mode="Immediate", provisioner="example.com/csi"),
                 pv("pv-a", "5Gi", "std", labels={ZONE: "a"}, claim="data"),
                 pvc("data", "5Gi", "std", volume="pv-a", bound=True),
                 pv("pv-s", "5Gi", "std", modes=("ReadWriteOncePod",), claim="solo"),
                 pvc("solo", "5Gi", "std", modes=("ReadWriteOncePod",), volume="pv-s", bound=True)],
                labels={0: {ZONE: "b"}, 1: {ZONE: "a"}})
    got = run(c, [pod_with("z", [claim_volume("data")]), pod_with("s0", [claim_volume("solo")]),
                  pod_with("s1", [claim_volume("solo")])])
    assert got["default/z"] == "n1" and got["default/s0"] == "n0"
    assert got["default/s1"].startswith(
        "0/3 nodes are available: 3 node has pod using PersistentVolumeClaim with the same name and "
        "ReadWriteOncePod access mode. no new claims to deallocate, preemption: 0/3 nodes are available: 3 No "
        "preemption victims found for incoming pod.")      # Unschedulable: preemption tries (s0 has s1's priority)


def test_disk_conflicts_keep_pods_apart():
    ebs = {"name": "d", "awsElasticBlockStore": {"volumeID": "vol-1"}}
    ro = {"name": "d", "gcePersistentDisk": {"pdName": "pd", "readOnly": True}}
    c = cluster([], nodes=2)
    got = run(c, [pod_with("e0", [ebs]), pod_with("e1", [ebs]), pod_with("e2", [ebs])])
    assert got["default/e0"] == "n0" and got["default/e1"] == "n1"
    assert got["default/e2"].startswith("0/2 nodes are available: 2 node(s) had no available disk.")
    # On one node: read-only GCE PDs share it; the same PD written by both does not.
    rw = {"name": "d", "gcePersistentDisk": {"pdName": "pd"}}
    got = run(cluster([], nodes=1), [pod_with("g0", [ro]), pod_with("g1", [ro])])
    assert got == {"default/g0": "n0", "default/g1": "n0"}
    got = run(cluster([], nodes=1), [pod_with("w0", [rw]), pod_with("w1", [rw])])
    assert got["default/w0"] == "n0"
    assert got["default/w1"].startswith("0/1 nodes are available: 1 node(s) had no available disk.")


def test_gang_rollback_leaves_the_volume_book_as_before():
    from strategies import make_pod_group
    c = cluster([storage_class("local"), pv("pv0", "5Gi", node="n0"), pvc("a", "1Gi"), pvc("b", "1Gi")], nodes=1)
    group = make_pod_group("g", min_count=2)
    c.pod_groups.append(group)
    before = c.volumes.state()
    pods = []
    for name, claim in (("m0", "a"), ("m1", "b")):
        pod = pod_with(name, [claim_volume(claim)])
        doc = pod.model_dump(by_alias=True, exclude_defaults=True)
        doc["spec"]["schedulingGroup"] = {"podGroupName": "g"}
        pods.append(type(pod).model_validate(doc))
    s = Scheduler(c)
    records = s.add_pods(pods) + s.run_until_idle()
    # One volume for two claims: m0 binds pv0, m1 finds none, the gang fails and m0's binding is undone.
    assert not any(r.kind == BOUND for r in records)
    assert c.volumes.state() == before


# -- storage the input does not describe; a StatefulSet's claims -----------------------------------------------------
STATEFUL_SET = """
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: web}}
  persistentVolumeClaimRetentionPolicy: {whenDeleted: %s}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: nginx, resources: {requests: {cpu: "1"}}}]
      volumes: [{name: www, emptyDir: {}}, {name: cache, emptyDir: {}}]
  volumeClaimTemplates:
  - metadata: {name: www, labels: {tier: a}, annotations: {note: x}}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
"""


def _stateful(extra_docs, when_deleted="Retain", nodes=2):
    objects = load_text(STATEFUL_SET % when_deleted)
    objects = dataclasses.replace(objects, **{k: getattr(objects, k) + getattr(parse_objects(extra_docs), k)
                                              for k in ("persistent_volumes", "persistent_volume_claims",
                                                        "storage_classes")})
    objects.nodes = [make_node(f"n{i}") for i in range(nodes)]
    return Cluster.from_objects(objects)


def scheduled(c: Cluster) -> dict:
    """The cluster's pending pods scheduled: each pod's node or FitError."""
    result = Scheduler(c).schedule()
    return {**result.bindings, **result.unschedulable}


def test_a_stateful_sets_claims_are_made_from_its_templates():
    default = storage_class("std", provisioner="example.com/csi")
    default["metadata"]["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    c = _stateful([default, pvc("www-web-1", "1Gi", "std")])        # web-1's claim exists: not made again
    www0 = c.volumes.claims["default/www-web-0"]
    assert set(c.volumes.claims) == {"default/www-web-0", "default/www-web-1"}
    assert www0.metadata.labels == {"tier": "a", "app": "web"} and www0.metadata.annotations == {"note": "x"}
    assert www0.storage_class == "std" and www0.request == 2**30 and not www0.metadata.owner_references
    # updateStorage: the claim's volume replaces the template's volume of its name, first.
    web0 = next(p for p in c.pending if p.metadata.name == "web-0")
    assert web0.spec.volumes == [{"name": "www", "persistentVolumeClaim": {"claimName": "www-web-0"}},
                                 {"name": "cache", "emptyDir": {}}]
    # Provisioned on the nodes chosen (a WaitForFirstConsumer class with a provisioner); the spread moves web-1.
    assert scheduled(c) == {"default/web-0": "n0", "default/web-1": "n1"}
    assert c.volumes.selected == {"default/www-web-0": "n0", "default/www-web-1": "n1"}
    # whenDeleted: Delete gives the claims a controller reference to the StatefulSet.
    c = _stateful([default], when_deleted="Delete")
    [ref] = c.volumes.claims["default/www-web-0"].metadata.owner_references
    assert (ref.kind, ref.name, ref.controller) == ("StatefulSet", "web", True)


def test_local_volumes_bind_a_stateful_sets_claims():
    local = storage_class("local")
    local["metadata"]["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    c = _stateful([local, pv("pv-a", "2Gi", node="n1"), pv("pv-b", "1Gi", node="n1")], nodes=3)
    assert scheduled(c) == {"default/web-0": "n1", "default/web-1": "n1"}
    assert c.volumes.volume_of == {"default/www-web-0": "pv-b", "default/www-web-1": "pv-a"}


def test_storage_the_input_does_not_describe_is_not_evaluated():
    # No PV, PVC or StorageClass: the StatefulSet's claims (of no class) are not evaluated, with one warning a pod.
    c = _stateful([])
    s = Scheduler(c)
    result = s.schedule()
    assert result.bindings == {"default/web-0": "n0", "default/web-1": "n1"}
    assert [w for w in result.warnings if "volumes" in w] == [
        "2 pods (default/web-0, default/web-1): volumes persistentVolumeClaim (the input describes no storage: no "
        "PersistentVolume, PersistentVolumeClaim or StorageClass; ignored)"]
    # Disk conflicts need no storage objects: they are still checked.
    ebs = {"name": "d", "awsElasticBlockStore": {"volumeID": "vol-1"}}
    got = run(cluster([], nodes=1), [pod_with("e0", [ebs, claim_volume("nope")]), pod_with("e1", [ebs])])
    assert got["default/e0"] == "n0" and got["default/e1"].startswith(
        "0/1 nodes are available: 1 node(s) had no available disk.")
    # Any storage object in the input: upstream's semantics, a missing claim included.
    c = _stateful([storage_class("other")])
    assert scheduled(c) == {f"default/web-{i}": ("0/2 nodes are available: pod has unbound immediate "
                                               "PersistentVolumeClaims." + NO_PREEMPTION.format(n=2)) for i in (0, 1)}


def test_a_claim_template_is_validated_as_the_claims_made_from_it():
    bad = (STATEFUL_SET % "Retain").replace("accessModes: [ReadWriteOnce]", "accessModes: []")
    objects = load_text(bad)
    objects.nodes = [make_node("n0")]
    c = Cluster.from_objects(objects)
    # The controller creates each pod's claims before the pod, and fails with them: no pod is made.
    assert not c.pending and c.warnings == [
        "StatefulSet default/web: creates no pods: the API server refuses its claims (spec.volumeClaimTemplates): "
        "PersistentVolumeClaim www-web-0: spec.accessModes: Required value: at least 1 access mode is required"]
    with pytest.raises(InputError) as error:
        load_text(STATEFUL_SET % "Never")
    assert 'spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Never": supported values: ' \
           '"Retain", "Delete"' in str(error.value)


def _gang_members(claims):
    pods = []
    for i, claim in enumerate(claims):
        doc = pod_with(f"m{i}", [claim_volume(claim)]).model_dump(by_alias=True, exclude_defaults=True)
        doc["spec"]["schedulingGroup"] = {"podGroupName": "g"}
        pods.append(make_pod("x").model_validate(doc))
    return pods


def test_a_pod_rejected_at_permit_gives_its_volumes_back():
    # gang_mode "permit": m0 and m1 bind their claims' volumes at Reserve and wait at Permit for a third member, which
    # finds no volume; at the timeout they are rejected and Unreserve gives the volumes back (upstream: the assumed
    # bindings reverted, PreBind never ran).
    from strategies import make_pod_group
    c = cluster([storage_class("local"), pv("pv0", "5Gi", node="n0"), pv("pv1", "5Gi", node="n0"),
                 pvc("a", "1Gi"), pvc("b", "1Gi"), pvc("c", "1Gi")], nodes=1)
    c.pod_groups.append(make_pod_group("g", min_count=3))
    before = c.volumes.state()
    s = Scheduler(c, gang_mode="permit", permit_timeout_s=60)
    s.add_pods(_gang_members(["a", "b", "c"]))
    s.advance(1.0)
    assert set(c.volumes.volume_of) == {"default/a", "default/b"} and set(c.volumes.assumed) == {"default/m0",
                                                                                             "default/m1"}
    s.advance(61.0)
    assert c.volumes.state() == before
    # Retried (the unschedulable pool's flush) they bind and wait again; one deleted while it waits is rejected at
    # Permit too.
    s.advance(400.0)
    assert set(c.volumes.volume_of) == {"default/a", "default/b"}
    s.delete_pod("default/m0")
    assert set(c.volumes.volume_of) == {"default/b"} and set(c.volumes.assumed) == {"default/m1"}


def test_bound_pods_keep_their_volumes_when_they_leave():
    c = cluster([storage_class("local"), pv("pv0", "5Gi", node="n0"), pvc("a", "1Gi")], nodes=1)
    s = Scheduler(c)
    s.add_pods([pod_with("p", [claim_volume("a")])])
    s.run_until_idle()
    s.delete_pod("default/p")
    assert c.volumes.volume_of == {"default/a": "pv0"} and not c.volumes.assumed


def test_volume_restrictions_hint_reads_the_deleted_pods_volumes():
    """isSchedulableAfterPodDeleted (v1.36, worked out by hand): a pod of the same namespace leaving helps when it
    used a disk that clashes with the pod's or a claim the pod names; otherwise, or from another namespace, not."""
    ebs = {"name": "d", "awsElasticBlockStore": {"volumeID": "vol-1"}}
    pod = pod_with("p", [ebs, claim_volume("data")])

    def helps(other):
        return VolumeRestrictions().hint(POD_DELETED, pod, [other], None)

    assert helps(pod_with("same-disk", [ebs]))
    assert helps(pod_with("same-claim", [claim_volume("data")]))
    assert not helps(pod_with("other-disk", [{"name": "d", "awsElasticBlockStore": {"volumeID": "vol-2"}},
                                             claim_volume("logs")]))
    assert not helps(pod_with("nothing", []))
    elsewhere = pod_with("same-disk", [ebs])
    elsewhere = elsewhere.model_copy(update={"metadata": elsewhere.metadata.model_copy(update={"namespace": "team"})})
    assert not helps(elsewhere)
    assert VolumeRestrictions().hint(NODE_ADDED, pod, make_node("n9"), None)


def test_volume_pods_follow_the_binding_log_through_cuts_and_removals():
    """VolumeBook.volume_pods reads only the log entries recorded since its last call: it must still give every
    live bound pod with a volume, as a plain walk of the log does, after bindings, a cut of the log and an unbind."""
    objects = parse_objects([])
    objects.nodes = [make_node("n0"), make_node("n1")]
    tensors, book = Cluster.from_objects(objects).tensors, VolumeBook()

    def plain():
        pods, nodes, removed = tensors.log()
        return [(int(nodes[i]), p.key) for i, p in enumerate(pods) if i not in removed and p.spec.volumes]

    def seen():
        return [(node, pod.key) for node, pod in book.volume_pods(tensors)]

    disk = {"name": "d", "awsElasticBlockStore": {"volumeID": "vol-1"}}
    tensors.record_bound([pod_with("a", [disk]), make_pod("b")], [0, 1])
    assert seen() == plain() == [(0, "default/a")]
    mark = tensors.log_mark()
    tensors.record_bound([pod_with("c", [claim_volume("x")]), pod_with("d", [disk])], [1, 0])
    assert seen() == plain() == [(0, "default/a"), (1, "default/c"), (0, "default/d")]
    tensors.truncate_log(mark)
    tensors.record_bound([pod_with("e", [disk])], [1])
    assert seen() == plain() == [(0, "default/a"), (1, "default/e")]
    tensors.unbind("default/a")
    assert seen() == plain() == [(1, "default/e")]


# -- CSI storage capacity (hasEnoughCapacity) ----------------------------------------------------------------------
def _capacity(name, cls, host=None, capacity=None, maximum=None):
    doc = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
           "metadata": {"name": name, "namespace": "kube-system"}, "storageClassName": cls}
    if host is not None:
        doc["nodeTopology"] = {"matchLabels": {"kubernetes.io/hostname": host}}
    if capacity is not None:
        doc["capacity"] = capacity
    if maximum is not None:
        doc["maximumVolumeSize"] = maximum
    return doc


CAPACITY_DRIVER = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "csi.example.com"},
                   "spec": {"storageCapacity": True}}


def test_provisioning_needs_a_storage_capacity_that_holds_the_claim():
    # Class lvm provisions with csi.example.com, whose CSIDriver tracks capacity. n0 publishes 10Gi but volumes of at
    # most 4Gi (maximumVolumeSize wins over capacity): the 5Gi claim does not fit. n1 publishes 5Gi (exactly the
    # request: enough). n2 publishes nothing (a capacity without nodeTopology reaches no node). So p goes to n1 and
    # its claim is selected there; q's 6Gi claim fits nowhere: every node "did not have enough free storage".
    c = cluster([storage_class("lvm", provisioner="csi.example.com"), CAPACITY_DRIVER,
                 _capacity("n0", "lvm", "n0", "10Gi", "4Gi"), _capacity("n1", "lvm", "n1", "5Gi"),
                 _capacity("none", "lvm", capacity="100Gi"),
                 pvc("d", "5Gi", "lvm"), pvc("e", "6Gi", "lvm")])
    got = run(c, [pod_with("p", [claim_volume("d")]), pod_with("q", [claim_volume("e")])])
    assert got["default/p"] == "n1" and c.volumes.selected == {"default/d": "n1"}
    assert got["default/q"] == ("0/3 nodes are available: 3 node(s) did not have enough free storage."
                                + NO_PREEMPTION.format(n=3))


def test_capacity_is_not_checked_without_a_tracking_csidriver():
    # The same objects but storageCapacity false (or no CSIDriver): capacity never limits provisioning, so p takes
    # the first node, n0.
    for driver in ([], [{**CAPACITY_DRIVER, "spec": {"storageCapacity": False}}]):
        c = cluster([storage_class("lvm", provisioner="csi.example.com"), *driver, pvc("d", "5Gi", "lvm"),
                     _capacity("n1", "lvm", "n1", "1Gi")])
        assert run(c, [pod_with("p", [claim_volume("d")])]) == {"default/p": "n0"}


def test_the_first_claim_to_provision_that_fails_gives_the_reason():
    # Two claims to provision on each node, checked smallest first (checkVolumeProvisions stops at the first that
    # fails). Claim small (1Gi, class lvm: capacity tracked, no capacity published) fails first everywhere: the reason
    # is "did not have enough free storage" alone, although claim big's class (zone b only) fails n0 and n2 too.
    c = cluster([storage_class("lvm", provisioner="csi.example.com"), CAPACITY_DRIVER,
                 storage_class("zonal", provisioner="csi.example.com", zones=["b"]),
                 pvc("small", "1Gi", "lvm"), pvc("big", "2Gi", "zonal")],
                labels={0: {ZONE: "a"}, 1: {ZONE: "b"}, 2: {ZONE: "c"}})
    got = run(c, [pod_with("p", [claim_volume("big"), claim_volume("small")])])
    assert got["default/p"] == ("0/3 nodes are available: 3 node(s) did not have enough free storage."
                                + NO_PREEMPTION.format(n=3))
