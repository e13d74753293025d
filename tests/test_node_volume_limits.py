"""NodeVolumeLimits (CSI attach limits from CSINode allocatable counts), v1.36.0 csi.go.

Toy clusters with hand-worked expectations (test_volumes.py's helpers and conventions: nodes 4 cpu / 8Gi, pods 1 cpu
/ 1Gi, the first of equally good nodes wins, an emptier node scores higher)."""
from __future__ import annotations

from strategies import make_node
from test_volumes import cluster, pod_with, pv, pvc, run, storage_class

from phalanx.cluster_models import parse_objects
from phalanx.plugins.node_volume_limits import REASON
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.records import BOUND, UNSCHEDULABLE

DRIVER = "csi.example.com"


def csi_pv(name, handle, claim, driver=DRIVER):
    doc = pv(name, "1Gi", "std", claim=claim)
    doc["spec"]["csi"] = {"driver": driver, "volumeHandle": handle}
    return doc


def csi_node(node, count, driver=DRIVER):
    allocatable = {} if count is None else {"allocatable": {"count": count}}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": node},
            "spec": {"drivers": [{"name": driver, "nodeID": node, **allocatable}]}}


def bound_claims(*names, driver=DRIVER):
    """Claims bound to CSI volumes of `driver`, one each (handle h-<claim>)."""
    docs = [storage_class("std", mode="Immediate", provisioner=driver)]
    for name in names:
        docs += [csi_pv(f"pv-{name}", f"h-{name}", name, driver), pvc(name, "1Gi", "std", volume=f"pv-{name}",
                                                                      bound=True)]
    return docs


def claims(*names):
    return [{"name": name, "persistentVolumeClaim": {"claimName": name}} for name in names]


def test_a_node_takes_no_more_csi_volumes_than_its_count():
    # n0 allows 2 volumes of the driver. p12 brings 2 (2 <= 2); p3 one more: 2 in use + 1 > 2, Unschedulable (p12 has
    # p3's priority: no victims). p1 shares c1 with p12: already in use on n0, not new, so it fits. big brings 3 to
    # an empty node... n0 is the only node: 2 in use + 3 new (none shared) fails.
    c = cluster([*bound_claims("c1", "c2", "c3", "c4", "c5"), csi_node("n0", 2)], nodes=1)
    got = run(c, [pod_with("p12", claims("c1", "c2")), pod_with("p3", claims("c3")), pod_with("p1", claims("c1")),
                  pod_with("big", claims("c3", "c4", "c5"))])
    assert got["default/p12"] == "n0" and got["default/p1"] == "n0"
    assert got["default/p3"] == (f"0/1 nodes are available: 1 {REASON}. no new claims to deallocate, preemption: "
                                 f"0/1 nodes are available: 1 No preemption victims found for incoming pod.")
    assert got["default/big"].startswith(f"0/1 nodes are available: 1 {REASON}.")
    assert REASON == "node(s) exceed max volume count"


def test_three_volumes_never_fit_a_count_of_two():
    # Even on an empty node: 0 in use + 3 new > 2. Every node fails Unschedulable, but no pod is there to preempt.
    c = cluster([*bound_claims("a", "b", "d"), csi_node("n0", 2), csi_node("n1", 2)], nodes=2)
    got = run(c, [pod_with("p", claims("a", "b", "d"))])
    assert got["default/p"].startswith(f"0/2 nodes are available: 2 {REASON}.")


def test_a_volume_used_twice_by_one_pod_counts_once():
    c = cluster([*bound_claims("a", "b"), csi_node("n0", 2)], nodes=1)
    twice = [*claims("a", "b"), {"name": "again", "persistentVolumeClaim": {"claimName": "a"}}]
    assert run(c, [pod_with("p", twice)]) == {"default/p": "n0"}


def test_nodes_without_a_csinode_or_a_count_are_unlimited():
    # n0 allows 1 volume; n1 has no CSINode; n2's CSINode gives no count. p0 takes n0 (first of equals), p1 finds n0
    # full and goes to the emptiest of n1, n2 (n1 first); p2 and p3 spread over n2 and n1 by resources.
    c = cluster([*bound_claims("a", "b", "c", "d"), csi_node("n0", 1), csi_node("n2", None)], nodes=3)
    got = run(c, [pod_with(f"p{i}", claims(name)) for i, name in enumerate("abcd")])
    assert got == {"default/p0": "n0", "default/p1": "n1", "default/p2": "n2", "default/p3": "n1"}


def test_limits_are_per_driver():
    # n0 allows 1 volume of the driver and none of other.example.com: a pod whose volume is of a third driver, with no
    # count anywhere, is not limited; one of other.example.com fails.
    c = cluster([*bound_claims("a"),
                 csi_pv("pv-x", "h-x", "x", "third.example.com"), pvc("x", "1Gi", "std", volume="pv-x", bound=True),
                 csi_pv("pv-o", "h-o", "o", "other.example.com"), pvc("o", "1Gi", "std", volume="pv-o", bound=True),
                 {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n0"},
                  "spec": {"drivers": [{"name": DRIVER, "nodeID": "n0", "allocatable": {"count": 1}},
                                       {"name": "other.example.com", "nodeID": "n0", "allocatable": {"count": 0}}]}}],
                nodes=1)
    got = run(c, [pod_with("pa", claims("a")), pod_with("px", claims("x")), pod_with("po", claims("o"))])
    assert got["default/pa"] == "n0" and got["default/px"] == "n0"
    assert got["default/po"].startswith(f"0/1 nodes are available: 1 {REASON}.")


def test_unbound_claims_count_for_their_class_provisioner():
    # WaitForFirstConsumer claims to provision, of a class whose provisioner is the driver: each counts as a volume of
    # its own (upstream: a random prefix with the claim's key). n0, the only node, allows one: pa takes it, pb's
    # claim would be a second; pc reuses pa's claim (being provisioned on n0), already in use there: it fits.
    docs = [storage_class("wait", provisioner=DRIVER), pvc("a", "1Gi", "wait"), pvc("b", "1Gi", "wait"),
            csi_node("n0", 1)]
    c = cluster(docs, nodes=1)
    got = run(c, [pod_with("pa", claims("a")), pod_with("pb", claims("b")), pod_with("pc", claims("a"))])
    assert got["default/pa"] == "n0" and got["default/pc"] == "n0"
    assert got["default/pb"].startswith(f"0/1 nodes are available: 1 {REASON}.")


def test_pods_bound_in_the_input_count_and_leaving_frees_their_volumes():
    # `bound` uses c1 on n0 (count 1) in the input: p2 cannot go there, n0 being the only node. Once `bound` leaves,
    # the pod deleted event (the hint: it used a claim) brings p2 back, and it fits.
    bound = pod_with("bound", claims("c1"))
    bound = bound.model_copy(update={"spec": bound.spec.model_copy(update={"node_name": "n0"})})
    objects = parse_objects([*bound_claims("c1", "c2"), csi_node("n0", 1)])
    objects.nodes, objects.pods = [make_node("n0")], [bound]
    s = Scheduler(Cluster.from_objects(objects))
    first = s.add_pods([pod_with("p2", claims("c2"))]) + s.run_until_idle()
    assert [r.message for r in first if r.kind == UNSCHEDULABLE][0].startswith(
        f"0/1 nodes are available: 1 {REASON}.")
    s.delete_pod("default/bound")
    assert [(r.object, r.node) for r in s.run_until_idle() if r.kind == BOUND] == [("default/p2", "n0")]


def attachment(name, node, volume, attacher=DRIVER):
    return {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": name},
            "spec": {"attacher": attacher, "nodeName": node, "source": {"persistentVolumeName": volume}}}


def test_volume_attachments_count_as_volumes_in_use():
    # n0 allows 2 volumes. pv-a and pv-b are attached to n0 (VolumeAttachments, no pod there uses them): 2 in use, so
    # p (claim c) does not fit n0 and goes to n1. An attachment of another attacher counts for that driver (no limit
    # there), one of a volume that does not exist counts for none: on n1 (count 1) q's claim d fits.
    c = cluster([*bound_claims("a", "b", "c", "d"), csi_node("n0", 2), csi_node("n1", 1),
                 attachment("va-a", "n0", "pv-a"), attachment("va-b", "n0", "pv-b"),
                 attachment("va-x", "n1", "pv-a", attacher="other.example.com"), attachment("va-y", "n1", "gone")],
                nodes=2)
    got = run(c, [pod_with("p", claims("c"))])
    assert got == {"default/p": "n1"}


def test_an_attached_volume_a_pod_uses_counts_once_and_the_pods_own_twice():
    # n0 allows 2. pv-a is attached to n0 and used by pod u there: counted once (1 in use), so v (claim b) fits
    # (1 + 1). Then w brings claim a itself: in use by u, not new; 2 in use + 0 new fits. A volume attached but used
    # by no pod is in use via the attachment and new as well (upstream removes from the new volumes only those the
    # pods use).
    c = cluster([*bound_claims("a", "b", "c"), csi_node("n0", 2), attachment("va-a", "n0", "pv-a")], nodes=1)
    got = run(c, [pod_with("u", claims("a")), pod_with("v", claims("b")), pod_with("w", claims("a"))])
    assert got == {"default/u": "n0", "default/v": "n0", "default/w": "n0"}
    c = cluster([*bound_claims("a", "c"), csi_node("n0", 2), attachment("va-c", "n0", "pv-c")], nodes=1)
    got = run(c, [pod_with("x", claims("c")), pod_with("y", claims("a"))])
    # x: 1 in use (c, attached) + 1 new (c) = 2 <= 2 fits; then y: c in use by x, a new: 1 + 1 fits.
    assert got == {"default/x": "n0", "default/y": "n0"}
    c = cluster([*bound_claims("a", "b", "c"), csi_node("n0", 2), attachment("va-c", "n0", "pv-c")], nodes=1)
    got = run(c, [pod_with("z", claims("b", "c"))])
    # z: 1 in use (c, attached) + 2 new (b, c: c is used by no pod) = 3 > 2.
    assert got["default/z"].startswith(f"0/1 nodes are available: 1 {REASON}.")
