"""ImageLocality (plugins/image_locality.py): upstream's unit-test vectors at v1.36
(pkg/scheduler/framework/plugins/imagelocality/image_locality_test.go: TestImageLocalityPriority,
TestNormalizedImageName), checked on phalanx and on the plain reference; the cache's image summaries (sizes, node
counts) through node events and topology placements; manifests."""
from __future__ import annotations

import json

import numpy as np
import pytest
from strategies import make_node, make_pod

from phalanx.cluster_models import ClusterObjects, InputError, load_text
from phalanx.cluster_models.images import NodeImages
from phalanx.plugins.image_locality import normalized_image_name
from phalanx.sched import Cluster
from phalanx.sched.scheduler import Scheduler

try:
    from tests.reference import plugins as P
except ImportError:  # tests/ itself on sys.path
    from reference import plugins as P

MB = 1024 * 1024

# The node statuses of TestImageLocalityPriority: (names, size in MiB) per image.
NODE_403002000 = [(("gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"), 40),
                  (("gcr.io/300:latest", "gcr.io/300:v1"), 300), (("gcr.io/2000:latest",), 2000)]
NODE_25010 = [(("gcr.io/250:latest",), 250), (("gcr.io/10:latest", "gcr.io/10:v1"), 10)]
NODE_60040900 = [(("gcr.io/600:latest",), 600), (("gcr.io/40:latest",), 40), (("gcr.io/900:latest",), 900)]
NODE_300600900 = [(("gcr.io/300:latest",), 300), (("gcr.io/600:latest",), 600), (("gcr.io/900:latest",), 900)]
NODE_400030 = [(("gcr.io/4000:latest",), 4000), (("gcr.io/30:latest",), 30)]
NODE_203040 = [(("gcr.io/20:latest",), 20), (("gcr.io/30:latest",), 30), (("gcr.io/40:latest",), 40)]
NO_IMAGES: list = []

# (case, pod containers' images, pod init containers' images, node statuses, upstream's expected scores)
UPSTREAM = [
    ("two images spread on two nodes, prefer the larger image one", ["gcr.io/40", "gcr.io/250"], [],
     [NODE_403002000, NODE_25010], [0, 5]),
    ("two images on one node, prefer this node", ["gcr.io/40", "gcr.io/300"], [],
     [NODE_403002000, NODE_25010], [7, 0]),
    ("if exceed limit, use limit", ["gcr.io/10", "gcr.io/4000"], [], [NODE_400030, NODE_25010], [100, 0]),
    ("if exceed limit, use limit (with node which has no images present)", ["gcr.io/10", "gcr.io/4000"], [],
     [NODE_400030, NODE_25010, NO_IMAGES], [66, 0, 0]),
    ("pod with multiple large images, node2 is preferred", ["gcr.io/300", "gcr.io/600", "gcr.io/900"], [],
     [NODE_60040900, NODE_300600900, NO_IMAGES], [32, 36, 0]),
    ("pod with multiple small images", ["gcr.io/30", "gcr.io/40"], [], [NODE_203040, NODE_400030], [1, 0]),
    ("include InitContainers: two images spread on two nodes, prefer the larger image one", ["gcr.io/30"],
     ["gcr.io/300"], [NODE_403002000, NODE_203040], [6, 0]),
]


def image_node(name: str, status: list):
    return make_node(name, images=[(names, size * MB) for names, size in status])


def image_pod(name: str, images: list[str], init_images: list[str] = (), **kw):
    return make_pod(name, containers=[{}] * len(images), images=images,
                    init_containers=[({}, False)] * len(init_images), init_images=init_images, **kw)


def phalanx_scores(pod, nodes, bound=()) -> list[int]:
    """ImageLocality's raw scores of `pod` on every node (the default profile)."""
    cluster = Cluster.from_objects(ClusterObjects(nodes=list(nodes), pods=list(bound)))
    sched = Scheduler(cluster)
    _, ev, _ = sched.evaluate(sched.shape_of(pod))
    return np.asarray(ev.raw["ImageLocality"]).tolist()


@pytest.mark.parametrize("case, images, init_images, statuses, expected", UPSTREAM, ids=[c[0] for c in UPSTREAM])
def test_upstream_image_locality_priority(case, images, init_images, statuses, expected):
    nodes = [image_node(f"node{i + 1}", status) for i, status in enumerate(statuses)]
    pod = image_pod("p", images, init_images)
    assert phalanx_scores(pod, nodes) == expected
    assert [P.score_image_locality(pod, node, nodes) for node in nodes] == expected


DIGEST = "sha256:4813494d137e1631bba301d5acab6e7bb7aa74ce1185d456565ef51d737677b2"   # sha256 of "root"


@pytest.mark.parametrize("name, normalized", [
    ("root", "root:latest"),                                   # add :latest postfix 1
    ("gcr.io:5000/root", "gcr.io:5000/root:latest"),           # add :latest postfix 2
    ("root:tag", "root:tag"),                                  # keep it as is 1
    (f"root@{DIGEST}", f"root@{DIGEST}"),                      # keep it as is 2
])
def test_upstream_normalized_image_name(name, normalized):
    assert normalized_image_name(name) == normalized
    assert P.normalized_image_name(name) == normalized


def test_size_is_the_first_listing_nodes_and_a_name_counts_a_node_once():
    # node1 lists img:v1 twice (two images), 600 MiB first; node2 lists it with 50 MiB. The cache keeps the first size
    # it was given for a name: 600 MiB for both nodes, spread 2/2. Pod of one container:
    # (600 MiB - 23 MiB) * 100 / (1000 MiB - 23 MiB) = 57700 / 977 = 59.
    nodes = [image_node("node1", [(("img:v1",), 600), (("img:v1", "other:1"), 10)]),
             image_node("node2", [(("img:v1",), 50)])]
    pod = image_pod("p", ["img:v1"])
    assert phalanx_scores(pod, nodes) == [59, 59]
    state = NodeImages.of(nodes).states["img:v1"]
    assert (state.size, state.nodes.tolist()) == (600 * MB, [0, 1])


def test_a_container_counts_each_time_it_names_a_held_image():
    # Two containers and an init container all naming img (300 MiB), held by two nodes of three; node3 holds nothing.
    nodes = [image_node("node1", [(("img:latest",), 300)]), image_node("node2", [(("img:latest",), 300)]),
             make_node("node3")]
    pod = image_pod("p", ["img", "img:latest"], ["img"])
    # spread 2/3: int(300 MiB * 2/3) = 209715200 each, three of them = 629145600; (629145600 - 24117248) * 100 //
    # (3145728000 - 24117248) = 60502835200 // 3121610752 = 19
    assert phalanx_scores(pod, nodes) == [19, 19, 0]


def test_node_events_recount_the_images():
    mib300 = [(("img:latest",), 300)]
    nodes = [image_node("node1", mib300), make_node("node2")]
    pod = image_pod("p", ["img"])
    sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes)))

    def scores():
        _, ev, _ = sched.evaluate(sched.shape_of(pod))
        return np.asarray(ev.raw["ImageLocality"]).tolist()

    # int(300 MiB * 1/2) = 150 MiB: (150 - 23) * 100 // 977 = 12
    assert scores() == [12, 0]
    sched.add_nodes([image_node("node3", mib300)])           # 2 of 3 nodes: int(300 MiB * 2/3) = 209715200
    assert scores() == [18, 0, 18]                           # (209715200 - 24117248) * 100 // 1024458752 = 18
    sched.update_node(image_node("node2", mib300))           # all 3: 300 MiB: (300 - 23) * 100 // 977 = 28
    assert scores() == [28, 28, 28]
    sched.remove_node("node1")                               # 2 of 2
    assert scores() == [28, 28]


def test_a_placement_divides_by_its_nodes_and_keeps_the_clusters_counts():
    # KEP-5732 AssumePlacement: the snapshot lists the placement's nodes, its NodeInfos keep the cache's summaries.
    nodes = [image_node("node1", [(("img:latest",), 300)]), make_node("node2"), make_node("node3"),
             image_node("node4", [(("img:latest",), 300)])]
    cluster = Cluster.from_objects(ClusterObjects(nodes=nodes))
    sub = cluster.restricted(np.array([0, 1]))
    held, score = sub.images.scaled("img:latest")
    assert sub.images.total == 2 and held.tolist() == [0] and score == 300 * MB      # 300 MiB x 2 / 2
    assert sub.restricted(np.array([1])).images.scaled("img:latest") is None         # node2 alone: none holds it
    held, score = cluster.restricted(np.array([1, 2, 3])).images.scaled("img:latest")
    assert held.tolist() == [2] and score == 209715200                                # 300 MiB x 2 / 3
    sched = Scheduler(sub)
    _, ev, _ = sched.evaluate(sched.shape_of(image_pod("p", ["img"])))
    # spread 2 / 2 (the cluster's two holders over the placement's two nodes): 300 MiB -> 28
    assert np.asarray(ev.raw["ImageLocality"]).tolist() == [28, 0]
    assert P.score_image_locality(image_pod("p", ["img"]), nodes[0], nodes[:2], image_nodes=nodes) == 28


def test_images_decide_a_placement():
    # Equal nodes but for node2's image: the pod goes to node2 (first node on a tie otherwise).
    nodes = [make_node("node1"), image_node("node2", [(("app:1.0",), 900)])]
    cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=[image_pod("p", ["app:1.0"])]))
    assert Scheduler(cluster).schedule().bindings == {"default/p": "node2"}


def _node_doc(images) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                       "status": {"allocatable": {"cpu": "1"}, "images": images}})


def test_node_images_from_a_manifest():
    objects = load_text(_node_doc([{"names": ["a:1", "a@sha256:00"], "sizeBytes": 12345}, {"sizeBytes": 7}]))
    images = objects.nodes[0].status.images
    assert [(i.names, i.size_bytes) for i in images] == [(["a:1", "a@sha256:00"], 12345), ([], 7)]


@pytest.mark.parametrize("images, problem", [
    ([{"names": ["a"], "sizeBytes": "12x"}], "status.images[0].sizeBytes"),
    ([{"names": "a", "sizeBytes": 1}], "status.images[0].names"),
    ([{"names": ["a"], "sizeBytes": 1 << 63}], "status.images[0].sizeBytes"),
])
def test_bad_node_images_are_one_line_errors(images, problem):
    with pytest.raises(InputError) as err:
        load_text(_node_doc(images))
    message = str(err.value)
    assert "\n" not in message and message.startswith("Node n1: ") and problem in message


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_replicas_follow_the_images_on_every_backend(backend):
    # Pods of two containers (max 2000 MiB). app:1 (900 MiB) is on node1 and node3: 900 MiB x 2/4 = 450 MiB each;
    # side:2 (300 MiB) on node3 alone: 300 MiB x 1/4 = 75 MiB. node1: (450 - 23) * 100 // 1977 = 21; node3:
    # (525 - 23) * 100 // 1977 = 25. The first replica goes to node3; LeastAllocated then moves the next to node1.
    # Batched (and on JAX, compiled) as unbatched, pod by pod.
    pytest.importorskip("jax") if backend == "jax" else None
    nodes = [make_node("node0"), image_node("node1", [(("app:1",), 900)]), make_node("node2"),
             image_node("node3", [(("app:1",), 900), (("side:2",), 300)])]
    pods = [image_pod(f"p{i}", ["app:1", "side:2"]) for i in range(8)]
    assert [P.score_image_locality(pods[0], n, nodes) for n in nodes] == [0, 21, 0, 25]
    cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods))
    bindings = Scheduler(cluster, backend=backend).schedule().bindings
    assert list(bindings.values())[:2] == ["node3", "node1"]
    reference = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods))
    assert bindings == Scheduler(reference, backend="numpy", batching=False, incremental=False).schedule().bindings


def test_explain_shows_the_scores_and_a_pod_no_node_holds_images_for_scores_0():
    from phalanx.sched.explain import explain_pod

    nodes = [image_node("node1", [(("app:1",), 900)]), make_node("node2")]
    sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes)))
    report = explain_pod(sched, image_pod("p", ["app:1"]))
    # 900 MiB x 1/2 = 450 MiB: (450 - 23) * 100 // 977 = 43
    assert [n["scores"]["ImageLocality"] for n in report["nodes"]] == [{"raw": 43, "normalized": 43},
                                                                         {"raw": 0, "normalized": 0}]
    # No node holds "other": every node scores 0 (the Score is left out of the cycle; explain still lists it).
    report = explain_pod(sched, image_pod("q", ["other"]))
    assert [n["scores"]["ImageLocality"] for n in report["nodes"]] == [{"raw": 0, "normalized": 0}] * 2


def test_explain_text_lists_a_score_that_is_0_everywhere(tmp_path):
    from typer.testing import CliRunner

    from phalanx.cli import app

    (tmp_path / "c.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
         "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"},
                    "images": [{"names": ["app:1"], "sizeBytes": 900 * MB}]}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
         "spec": {"containers": [{"name": "c", "image": "other:2"}]}}]}))
    out = CliRunner().invoke(app, ["explain", "--cluster", str(tmp_path / "c.json"), "--pod", "default/p"])
    assert out.exit_code == 0, out.output
    assert "ImageLocality 0->0x1" in out.output


def test_image_volumes_add_to_the_sum_but_not_to_the_threshold():
    """v1.36 (#130231): an `image` volume's image counts like a container's, while calculatePriority's maximum still
    counts containers only (upstream issue #138952, changed after v1.36). One container (gcr.io/10, held nowhere)
    and an image volume gcr.io/250 held by node1 of two nodes: 250 MiB x 1/2 = 125 MiB; the maximum is 1 x 1000 MiB,
    so node1 scores 100 x (125 - 23) / (1000 - 23) = 10 (it would be 5 with the volume counted in the maximum)."""
    nodes = [image_node("node1", [(["gcr.io/250:latest"], 250)]), image_node("node2", [])]
    pod = image_pod("p", ["gcr.io/10"])
    pod.spec.volumes = [{"name": "model", "image": {"reference": "gcr.io/250", "pullPolicy": "IfNotPresent"}}]
    assert phalanx_scores(pod, nodes) == [10, 0]
    assert [P.score_image_locality(pod, node, nodes) for node in nodes] == [10, 0]


def test_image_volume_is_modelled_not_warned():
    from phalanx.cluster_models import load_text

    objects = load_text("""
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}, images: [{names: ["models/llama:v1"], sizeBytes: 524288000}]}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: busybox}]
  volumes: [{name: m, image: {reference: "models/llama:v1"}}]
""")
    sched = Scheduler(Cluster.from_objects(objects))
    result = sched.schedule()
    assert result.bindings == {"default/p": "n2"} and not any("volume" in w for w in result.warnings)


@pytest.mark.parametrize("volume, message", [
    ("{name: m, image: {}}", "Pod default/p: spec.volumes[0].image.reference: Required value"),
    ("{name: m, image: {reference: 5}}", "Pod default/p: spec.volumes[0].image.reference: Invalid value: 5: must be a "
                                          "string"),
])
def test_image_volume_needs_a_reference(volume, message):
    from phalanx.cluster_models import InputError, load_text

    with pytest.raises(InputError) as caught:
        load_text(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\n"
                  f"spec: {{containers: [{{name: c, image: x}}], volumes: [{volume}]}}\n")
    assert str(caught.value) == message
