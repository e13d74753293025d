"""Compiling objects into the node tensors: vocabularies, load of bound pods, growth, size."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from phalanx.cluster_models import ClusterObjects
from phalanx.cluster_models.generate import generate_nodes, toy_cluster
from phalanx.cluster_models.tensors import add_nodes, parse_int64_label
from phalanx.sched import Cluster
from strategies import make_node, make_pod


def _cluster(nodes, pods=()):
    return Cluster.from_objects(ClusterObjects(nodes=list(nodes), pods=list(pods), priority_classes=[], warnings=[]))


def test_toy_tensors_by_hand():
    nodes, pods = toy_cluster()
    t = _cluster(nodes, pods).tensors
    n = t.nodes
    assert n.names == ["node-a", "node-b", "node-c"]
    assert t.resources.items[:3] == ["cpu", "memory", "ephemeral-storage"]
    assert n.allocatable[:, 0].tolist() == [4000, 4000, 8000]                # millicores
    assert n.allocatable[:, 1].tolist() == [8 << 30, 8 << 30, 16 << 30]      # bytes
    # "busy" (3 cpu / 2Gi) is bound to node-b; the pending pods add nothing yet.
    assert n.requested[:, 0].tolist() == [0, 3000, 0]
    assert n.nonzero_requested[1].tolist() == [3000, 2 << 30]
    assert n.pod_count.tolist() == [0, 1, 0]
    assert n.taints.shape == (3, 1) and n.taints[:, 0].tolist() == [-1, -1, 0]
    assert t.taints.items == [("dedicated", "ml", "NoSchedule")]


def test_nonzero_defaults_for_bound_pods_without_requests():
    # A bound pod with no requests counts 100m / 200Mi towards the scoring sums, nothing towards the fit sums.
    t = _cluster([make_node("n0")], [make_pod("p", node_name="n0")]).tensors
    assert t.nodes.requested[0, :2].tolist() == [0, 0]
    assert t.nodes.nonzero_requested[0].tolist() == [100, 200 << 20]


def test_extended_resource_of_a_pending_pod_gets_a_column():
    c = _cluster([make_node("n0", gpu=2)], [make_pod("p", cpu="1", gpu=1)])
    assert "nvidia.com/gpu" in c.tensors.resources.ids
    before = c.tensors.nodes.allocatable.shape[1]
    c.tensors.resource_column("example.com/fpga")
    assert c.tensors.nodes.allocatable.shape[1] == before + 1
    assert (c.tensors.nodes.allocatable[:, -1] == 0).all()


def test_load_columns_stay_views_of_one_block():
    """The five load columns are views of NodeTable.load, side by side in LOAD_COLUMNS' order, through placements,
    new resource columns, nodes added and rewritten; a row's key read from the block is the columns' own bytes, and a
    table copy with a column replaced is not read from the block."""
    import dataclasses

    from phalanx.cluster_models.tensors import update_node
    from phalanx.sched.cycle import LOAD_COLUMNS, RememberedRows

    def check(t):
        nodes = t.nodes
        load = nodes.shared_load
        assert load is not None
        columns = [getattr(nodes, c).reshape(nodes.size, -1) for c in LOAD_COLUMNS]
        assert np.array_equal(load, np.concatenate(columns, axis=1))
        rows = np.array([0, nodes.size - 1, 0])
        keys = RememberedRows(LOAD_COLUMNS).keys(t, rows)
        assert keys == [np.concatenate([c[r] for c in columns]).tobytes() for r in rows.tolist()]
    c = _cluster([make_node("n0", gpu=2), make_node("n1", cpu="8", pods=30)], [make_pod("p", cpu="1", gpu=1)])
    t = c.tensors
    check(t)
    t.account(np.array([1, 1, 0]), t.request_vector({"cpu": 500}), np.array([500, 1 << 20]), [])
    check(t)
    t.resource_column("example.com/fpga")
    check(t)
    add_nodes(t, [make_node("n2", memory="1Gi", pods=5)])
    check(t)
    update_node(t, make_node("n1", cpu="2", pods=7, labels={"x": "y"}))
    check(t)
    assert t.nodes.pod_count.tolist() == [1, 2, 0] and t.nodes.allowed_pods.tolist() == [110, 7, 5]
    copy = dataclasses.replace(t.nodes, requested=t.nodes.requested.copy())
    assert copy.shared_load is None


def test_account_and_unaccount_move_each_pods_load_through_the_load_block():
    """account adds a pod's request, nonzero requests and one pod per node id (one node, several with one twice)
    in one update of NodeTable.load, through resource columns added since the load was first met, on restricted
    copies and on a table whose columns were replaced; unaccount takes exactly that off again."""
    import dataclasses

    from phalanx.cluster_models.tensors import restrict

    t = _cluster([make_node("n0", gpu=2), make_node("n1"), make_node("n2")]).tensors
    request, nonzero = t.request_vector({"cpu": 500, "nvidia.com/gpu": 1}), np.array([500, 1 << 20])
    gpu = t.resources.ids["nvidia.com/gpu"]

    def load():
        assert t.nodes.shared_load is not None
        n = t.nodes
        return n.requested[:, 0].tolist(), n.requested[:, gpu].tolist(), n.nonzero_requested.tolist(), \
            n.pod_count.tolist()

    placed = [np.array([2]), np.array([0, 2, 0])]
    for ids in placed:
        t.account(ids, request, nonzero, [])
    assert load() == ([1000, 0, 1000], [2, 0, 2], [[1000, 2 << 20], [0, 0], [1000, 2 << 20]], [2, 0, 2])
    t.resource_column("example.com/fpga")
    t.nodes = dataclasses.replace(t.nodes, requested=t.nodes.requested.copy())
    placed += [np.array([1]), np.array([1, 1])]
    for ids in placed[2:]:
        t.account(ids, request, nonzero, [])
    assert load() == ([1000, 1500, 1000], [2, 3, 2], [[1000, 2 << 20], [1500, 3 << 20], [1000, 2 << 20]], [2, 3, 2])
    assert (t.nodes.requested[:, -1] == 0).all()
    sub = restrict(t, np.array([0, 2]))
    assert sub.nodes.shared_load is not None
    sub.account(np.array([1, 1]), request, nonzero, [])
    assert sub.nodes.pod_count.tolist() == [2, 4] and t.nodes.pod_count.tolist() == [2, 3, 2]
    for ids in reversed(placed):
        t.unaccount(ids, request, nonzero, [], None)
    assert load() == ([0, 0, 0], [0, 0, 0], [[0, 0]] * 3, [0, 0, 0])


def test_label_ints_parse_like_go():
    assert [parse_int64_label(v) for v in ["7", "+4", "-3", "02", "x1", "", "9223372036854775808"]] == \
        [7, 4, -3, 2, None, None, None]


def test_bytes_per_node():
    # 10k generated nodes: int64 resources (3 columns x 2 tables + 2 non-zero), counts, 7 label ids (hostname, os, arch, zone, block, rack, type), no taints.
    t = _cluster(generate_nodes(10_000)).tensors.nodes
    per_node = t.nbytes() / t.size
    assert per_node == 3 * 8 * 2 + 2 * 8 + 8 + 8 + 1 + 7 * 4
    assert isinstance(t.allocatable, np.ndarray) and t.allocatable.dtype == np.int64


def test_evictions_take_off_each_pods_own_load_through_new_resource_columns():
    # unbind reads a pod's load from vectors kept per pod_load result (load_vectors: pods of a template share one);
    # a resource column added between two evictions must widen them, and after evicting all but one pod the node
    # table equals that of a cluster holding only that pod.
    def named(pod, name, node):
        return pod.model_copy(update={"metadata": pod.metadata.model_copy(update={"name": name}),
                                      "spec": pod.spec.model_copy(update={"node_name": node})})

    low, gpu = make_pod("low", cpu="900m", memory="500Mi"), make_pod("gpu", cpu="1", gpu=1)
    nodes = [make_node("n0"), make_node("n1", gpu=2)]
    pods = [named(low, f"low{i}", f"n{i % 2}") for i in range(4)] + [named(gpu, "g", "n1")]
    tensors = _cluster(nodes, pods).tensors
    tensors.unbind("default/low0")
    tensors.resource_column("example.com/fpga")
    for key in ("default/low1", "default/low2", "default/g"):
        tensors.unbind(key)
    alone = _cluster(nodes, [pods[3]]).tensors.nodes
    width = alone.requested.shape[1]
    assert (tensors.nodes.requested[:, :width] == alone.requested).all()
    assert (tensors.nodes.requested[:, width:] == 0).all()
    assert (tensors.nodes.nonzero_requested == alone.nonzero_requested).all()
    assert (tensors.nodes.pod_count == alone.pod_count).all()


def test_unbind_all_takes_every_pod_off_in_one_step_as_one_by_one():
    # The victims of a cycle's preemptions: pods of two templates on several nodes, a key met twice and one not
    # bound. One load change per template for all their nodes leaves the node table as unbinding them one at a
    # time does; each key gets its node and pod, the repeated and the unknown key -1 and None.
    def named(pod, name, node):
        return pod.model_copy(update={"metadata": pod.metadata.model_copy(update={"name": name}),
                                      "spec": pod.spec.model_copy(update={"node_name": node})})

    low, big = make_pod("low", cpu="900m", memory="500Mi"), make_pod("big", cpu="2", memory="1Gi")
    nodes = [make_node(f"n{i}") for i in range(3)]
    pods = [named(low, f"low{i}", f"n{i % 3}") for i in range(6)] + [named(big, f"big{i}", f"n{i}") for i in range(2)]
    keys = ["default/low0", "default/big1", "default/low3", "default/low4", "default/low0", "default/nobody",
            "default/big0"]
    together, one_by_one = _cluster(nodes, pods).tensors, _cluster(nodes, pods).tensors
    changes = len(together.changes)
    taken_nodes, taken = together.unbind_all(keys)
    assert taken_nodes == [0, 1, 0, 1, -1, -1, 0]
    assert [p.key if p is not None else None for p in taken] == [*keys[:4], None, None, keys[6]]
    assert len(together.changes) == changes + 2            # one per template
    assert [one_by_one.unbind(key) for key in keys] == taken_nodes
    for name in ("requested", "nonzero_requested", "pod_count"):
        assert (getattr(together.nodes, name) == getattr(one_by_one.nodes, name)).all()


def test_log_keys_follow_the_binding_log():
    # The keys per log position (and the position index built with them) stay those of the log's pods through
    # bindings recorded after they were built and cuts of the log.
    t = _cluster([make_node("n0"), make_node("n1")], [make_pod("a", node_name="n0")]).tensors
    assert t.log_keys() == ["default/a"]
    mark = t.log_mark()
    t.record_bound([make_pod("b"), make_pod("c")], [1, 0])
    assert t.log_keys() == [p.key for p in t.log()[0]] == ["default/a", "default/b", "default/c"]
    assert (t.node_of("default/b"), t.node_of("default/c")) == (1, 0)
    t.truncate_log(mark)
    assert t.log_keys() == ["default/a"] and t.node_of("default/b") == -1
    t.record_bound([make_pod("c")], [1])
    assert t.log_keys() == ["default/a", "default/c"] and t.position("default/c") == 1 and t.node_of("default/c") == 1


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_changed_since_lists_the_nodes_of_the_changes_since(data):
    """changed_since(seen): the node ids of every load change after `seen`, each once, ascending, however many
    changes there are and whichever marks were asked before (change_stamps folds each change in once), and nodes
    appended after some changes (add_nodes)."""
    t = _cluster([make_node(f"n{i}") for i in range(9)]).tensors
    request = np.zeros(len(t.resources), np.int64)
    for _ in range(data.draw(st.integers(1, 12))):
        if data.draw(st.integers(0, 4)) == 0:
            add_nodes(t, [make_node(f"n{t.nodes.size}")])
        for _ in range(data.draw(st.sampled_from([0, 1, 3, 20, 70]))):
            ids = data.draw(st.lists(st.integers(0, t.nodes.size - 1), min_size=1, max_size=3))
            t.account(np.array(ids), request, np.zeros(2, np.int64), [])
        for _ in range(data.draw(st.integers(1, 3))):
            seen = data.draw(st.integers(0, len(t.changes)))
            want = sorted({n for chunk in t.changes[seen:] for n in np.asarray(chunk).tolist()})
            got = t.changed_since(seen)
            assert got.dtype == np.int64 and got.tolist() == want


def test_bind_runs_binds_as_one_bind_per_run():
    """A segment's runs (different requests, a node met by several, an empty run) bound in one step leave the node
    table, the binding log and its loads as one bind per run does; undo by run (unaccount) takes them off again."""
    nodes = [make_node(f"n{i}", gpu=1 if i == 1 else None) for i in range(3)]
    runs = [([make_pod("a0"), make_pod("a1")], np.array([0, 2]), {"cpu": 100}, (100, 200 << 20)),
            ([], np.array([], np.int64), {"cpu": 700}, (700, 1 << 20)),
            ([make_pod("b0")], np.array([2]), {"cpu": 250, "memory": 1 << 30}, (250, 1 << 30)),
            ([make_pod("c0"), make_pod("c1"), make_pod("c2")], np.array([1, 2, 1]), {"nvidia.com/gpu": 1},
             (100, 200 << 20))]
    together, one_by_one = _cluster(nodes).tensors, _cluster(nodes).tensors
    vectors = [(together.request_vector(req), np.array(nz)) for _, _, req, nz in runs]
    one_by_one.request_vector({"nvidia.com/gpu": 1})
    together.bind_runs([(pods, ids, req, nz) for (pods, ids, _, _), (req, nz) in zip(runs, vectors)])
    for (pods, ids, _, _), (req, nz) in zip(runs, vectors):
        one_by_one.bind(pods, ids, req, nz, [])
    assert together.nodes.pod_count.tolist() == [1, 2, 3]
    assert together.nodes.requested[:, 0].tolist() == [100, 0, 350]             # the GPU pods request no cpu
    assert together.nodes.nonzero_requested[:, 0].tolist() == [100, 200, 450]   # ... but count 100m here
    for name in ("requested", "nonzero_requested", "pod_count"):
        assert (getattr(together.nodes, name) == getattr(one_by_one.nodes, name)).all()
    assert together.log_keys() == one_by_one.log_keys() == ["default/a0", "default/a1", "default/b0", "default/c0",
                                                            "default/c1", "default/c2"]
    positions = np.arange(6)
    assert together.node_of("default/c2") == 1
    for i in range(2):      # each logged pod's load (request vector, nonzero requests), by value: ids are internal
        assert (together.load_table()[i][together.log_loads(positions)]
                == one_by_one.load_table()[i][one_by_one.log_loads(positions)]).all()
    assert together.changed_since(0).tolist() == [0, 1, 2]
    for (_, ids, _, _), (req, nz) in zip(runs, vectors):
        together.unaccount(ids, req, nz, [], None)
    assert (together.nodes.requested == 0).all() and (together.nodes.pod_count == 0).all()


def test_pods_bound_without_pod_terms_are_not_scanned_for_them():
    """bind(..., pod_terms=False) marks its pods scanned for pod (anti-)affinity terms only while every pod before
    them was scanned: terms of pods recorded before, not yet read, are still found, and so are later pods' terms."""
    anti = {"pod_anti_affinity": {"required_during_scheduling_ignored_during_execution": [
        {"label_selector": {"match_labels": {"app": "x"}}, "topology_key": "kubernetes.io/hostname"}]}}
    t = _cluster([make_node("n0"), make_node("n1")]).tensors
    request, nonzero = np.zeros(len(t.resources), np.int64), np.zeros(2, np.int64)
    t.bind([make_pod("plain-0")], np.array([0]), request, nonzero, [], pod_terms=False)
    assert t.affinity_terms().pods_seen == 1 and t.affinity_terms().count == 0
    t.bind([make_pod("anti-0", pod_affinity=anti)], np.array([1]), request, nonzero, [])
    # not read since: the terms-free pods after it do not hide it
    t.bind([make_pod("plain-1"), make_pod("plain-2")], np.array([0, 1]), request, nonzero, [], pod_terms=False)
    terms = t.affinity_terms()
    assert terms.pods_seen == 4 and terms.pod[:terms.count].tolist() == [1] and terms.added_anti == 1
    t.bind([make_pod("plain-3")], np.array([0]), request, nonzero, [], pod_terms=False)
    t.bind([make_pod("anti-1", pod_affinity=anti)], np.array([0]), request, nonzero, [])
    terms = t.affinity_terms()
    assert terms.pods_seen == 6 and terms.pod[:terms.count].tolist() == [1, 5] and terms.added_anti == 2
