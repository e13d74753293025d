"""GPU shares in the main Scheduler (sched/gpushare.py): hand-checked toys and a per-device reference check.

Pods ask for GPUs in the trace's annotation form (alibabacloud.com/gpu-count, -gpu-milli, -gpu-card-model); nodes
advertise nvidia.com/gpu with the model in the nvidia.com/gpu.product label.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import gpus as ref
from strategies import make_node, make_pod, make_pod_group

from phalanx.cluster_models import ClusterObjects, InputError
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.records import BOUND

PRODUCT = "nvidia.com/gpu.product"


def gnode(name, gpus=1, model="A100", cpu="8"):
    return make_node(name, cpu=cpu, memory="16Gi", gpu=gpus, labels={PRODUCT: model})


def gpod(name, milli=1000, count=1, models=(), cpu="100m", group=None, node_name=""):
    pod = make_pod(name, cpu=cpu, memory="100Mi", pod_group=group, node_name=node_name)
    ann = {"alibabacloud.com/gpu-count": str(count), "alibabacloud.com/gpu-milli": str(milli)}
    if models:
        ann["alibabacloud.com/gpu-card-model"] = "|".join(models)
    pod.metadata.annotations.update(ann)
    return pod


def cluster(nodes, pods=(), groups=()) -> Cluster:
    return Cluster.from_objects(ClusterObjects(nodes=list(nodes), pods=list(pods), pod_groups=list(groups)))


def bindings(records) -> dict[str, str]:
    return {r.object: r.node for r in records if r.kind == BOUND}


def used(s: Scheduler) -> list[int]:
    return s.cluster.gpus.table.milli_used.tolist()


def node_state(s: Scheduler) -> tuple:
    n = s.cluster.tensors.nodes
    return n.requested.copy(), n.nonzero_requested.copy(), n.pod_count.copy()


# -- hand-checked toys --------------------------------------------------------------------------------------------
def test_two_half_gpu_pods_share_one_device_and_a_third_does_not_fit():
    s = Scheduler(cluster([gnode("n0", 1)]))
    recs = s.add_pods([gpod("a", 500), gpod("b", 500), gpod("c", 500)]) + s.run_until_idle()
    assert bindings(recs) == {"default/a": "n0", "default/b": "n0"}
    assert used(s) == [1000]                        # 500 + 500 on gpu0
    assert s._last_message["default/c"] == "0/1 nodes are available: 1 Insufficient GPU share."


def test_600m_does_not_fit_a_device_with_500m_free():
    s = Scheduler(cluster([gnode("n0", 1), make_node("cpu-only", cpu="8")]))
    s.add_pods([gpod("a", 500)])
    s.run_until_idle()
    recs = s.add_pods([gpod("b", 600)]) + s.run_until_idle()
    assert not bindings(recs) and used(s) == [500]
    # n0: 1000 - 500 = 500 free < 600; cpu-only has no GPU (any model allowed: "Insufficient" wording is
    # reserved for nodes with GPUs, a node without any GPU has none of an allowed model)
    assert s._last_message["default/b"] == \
        "0/2 nodes are available: 1 Insufficient GPU share, 1 node(s) had no GPU of an allowed model."


def test_model_restriction():
    s = Scheduler(cluster([gnode("t4", 2, "T4"), gnode("a100", 1, "A100")]))
    recs = s.add_pods([gpod("want-a100", 300, models=("A100",)), gpod("want-v100", 300, models=("V100",)),
                       gpod("either", 1000, count=2, models=("A100", "T4"))]) + s.run_until_idle()
    assert bindings(recs) == {"default/want-a100": "a100", "default/either": "t4"}
    assert used(s) == [1000, 1000, 300]           # rows: t4/gpu0, t4/gpu1, a100/gpu0
    assert s._last_message["default/want-v100"] == \
        "0/2 nodes are available: 2 node(s) had no GPU of an allowed model."


def test_best_fit_device_choice():
    # One node, 3 devices. 300 -> gpu0 (all idle: lowest index). 600: free 700/1000/1000, least free that fits
    # is gpu0 -> 900. 200: gpu0 has 100 free (no); gpu1, gpu2 tie at 1000 -> gpu1. 500: gpu1 800 < gpu2 1000 ->
    # gpu1 -> 700. Whole GPU (count 1, milli 1000): only gpu2 is idle.
    s = Scheduler(cluster([gnode("n0", 3)]))
    for name, milli in [("a", 300), ("b", 600), ("c", 200), ("d", 500)]:
        s.add_pods([gpod(name, milli)])
        s.run_until_idle()
    assert used(s) == [900, 700, 0]
    assert s.cluster.gpus.held["default/d"][1].tolist() == [1]
    s.add_pods([gpod("e", 1000)])
    s.run_until_idle()
    assert used(s) == [900, 700, 1000]


def test_identical_share_pods_in_one_run_are_placed_one_by_one():
    # Five identical 400m pods arrive together (one shape, one run): never batched, each pod re-evaluated.
    # n0 has 2 devices: 400, 400 on gpu0 (800), then gpu0 has 200 free -> gpu1 twice; the fifth fits nowhere.
    s = Scheduler(cluster([gnode("n0", 2)]))
    recs = s.add_pods([gpod(f"p{i}", 400) for i in range(5)]) + s.run_until_idle()
    assert len(bindings(recs)) == 4 and used(s) == [800, 800]
    assert s._last_message["default/p4"] == "0/1 nodes are available: 1 Insufficient GPU share."


def test_delete_releases_exactly():
    s = Scheduler(cluster([gnode("n0", 2), gnode("n1", 1)]))
    before, nodes0 = s.cluster.gpus.snapshot(), node_state(s)
    s.add_pods([gpod("b", 1000, count=2), gpod("a", 700), gpod("c", 250)])   # b: n0 (2 idle); a, c: n1
    s.run_until_idle()
    assert sorted(s.cluster.gpus.held) == ["default/a", "default/b", "default/c"]
    for key in ("default/b", "default/a", "default/c"):
        s.delete_pod(key)
    after = s.cluster.gpus.snapshot()
    assert np.array_equal(before[0], after[0]) and after[1] == {}
    assert all(np.array_equal(x, y) for x, y in zip(nodes0, node_state(s)))


def test_waiting_pod_is_retried_when_a_share_is_released():
    s = Scheduler(cluster([gnode("n0", 1)]))
    s.add_pods([gpod("a", 800)])
    s.run_until_idle()
    s.add_pods([gpod("b", 500)])
    s.run_until_idle()
    assert "default/b" in s._last_message
    recs = s.delete_pod("default/a") + s.run_until_idle()
    assert bindings(recs) == {"default/b": "n0"} and used(s) == [500]


def test_failed_gang_cycle_restores_the_gpu_table_bit_for_bit():
    # gang of 3 x 600m; n0 has 2 devices: m0 -> gpu0, m1 -> gpu1 (gpu0 has 400 free), m2 fits nowhere. minCount
    # 3 is out of reach: the cycle is undone, device table and node table exactly as before.
    s = Scheduler(cluster([gnode("n0", 2)], pods=[gpod("x", 100, node_name="n0")], groups=[make_pod_group("g", min_count=3)]))
    before, nodes0 = s.cluster.gpus.snapshot(), node_state(s)
    recs = s.add_pods([gpod(f"m{i}", 600, group="g") for i in range(3)]) + s.run_until_idle()
    assert not bindings(recs)
    after = s.cluster.gpus.snapshot()
    assert before[0].dtype == after[0].dtype and np.array_equal(before[0], after[0]) and before[1] == after[1]
    assert all(np.array_equal(x, y) for x, y in zip(nodes0, node_state(s)))
    assert s._last_message["default/m2"] == "0/1 nodes are available: 1 Insufficient GPU share."


def test_gangs_of_share_pods_do_not_ride_trains_but_schedule():
    s = Scheduler(cluster([gnode("n0", 2)], groups=[make_pod_group("g1", min_count=2),
                                                   make_pod_group("g2", min_count=2)]))
    recs = s.add_pods([gpod(f"a{i}", 500, group="g1") for i in range(2)]
                      + [gpod(f"b{i}", 500, group="g2") for i in range(2)]) + s.run_until_idle()
    assert len(bindings(recs)) == 4 and used(s) == [1000, 1000]


def test_permit_rejection_releases_the_share():
    # gang of 3 in permit mode: two members wait at Permit holding their shares, the third (5 GPUs) never fits;
    # the timeout rejects the two and their shares are released.
    s = Scheduler(cluster([gnode("n0", 2)], groups=[make_pod_group("g", min_count=3)]), gang_mode="permit")
    s.add_pods([gpod("m0", 500, group="g"), gpod("m1", 500, group="g"), gpod("m2", 1000, count=5, group="g")])
    s.step(1.0)
    assert used(s) == [1000, 0]
    s.step(400.0)
    assert used(s) == [0, 0] and s.cluster.gpus.held == {}


def test_bound_input_pods_account_their_share_in_input_order():
    # Bound pods take best fit in input order: a 600 -> gpu0; b 300 -> gpu0 (free 400, the least that fits);
    # c 700 -> gpu1; d 800 fits no device (100 and 300 free): warned, holds nothing, its cpu still counts.
    pods = [gpod("a", 600, node_name="n0"), gpod("b", 300, node_name="n0"), gpod("c", 700, node_name="n0"),
            gpod("d", 800, node_name="n0")]
    c = cluster([gnode("n0", 2)], pods)
    assert c.gpus.table.milli_used.tolist() == [900, 700]
    assert c.warnings == ["Pod default/d: metadata.annotations: its GPU request does not fit the free GPUs of node "
                          "n0; not accounted"]
    s = Scheduler(c)
    recs = s.add_pods([gpod("e", 300)]) + s.run_until_idle()
    assert bindings(recs) == {"default/e": "n0"} and used(s) == [900, 1000]


def test_whole_nvidia_gpu_pods_keep_node_level_fit():
    # nvidia.com/gpu in resources: NodeResourcesFit's count, no device tracking (upstream semantics).
    s = Scheduler(cluster([gnode("n0", 2)]))
    recs = s.add_pods([make_pod("w", cpu="1", gpu=2), make_pod("x", cpu="1", gpu=1)]) + s.run_until_idle()
    assert bindings(recs) == {"default/w": "n0"} and used(s) == [0, 0]
    assert s._last_message["default/x"] == "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."


def test_node_events_keep_what_pods_hold():
    s = Scheduler(cluster([gnode("n0", 1), gnode("n1", 2, "T4")]))
    s.add_pods([gpod("a", 400, models=("T4",)), gpod("b", 300, models=("A100",))])
    s.run_until_idle()
    assert used(s) == [300, 400, 0]
    s.add_nodes([gnode("n2", 1, "T4")])
    assert used(s) == [300, 400, 0, 0]
    s.remove_node("n0")                               # b is deleted with its node
    assert used(s) == [400, 0, 0] and sorted(s.cluster.gpus.held) == ["default/a"]
    s.update_node(gnode("n1", 1, "T4"))               # one device left: a's device 0 stays held
    assert used(s) == [400, 0]
    recs = s.add_pods([gpod("c", 700, models=("T4",))]) + s.run_until_idle()
    assert bindings(recs) == {"default/c": "n2"}


def test_topology_group_with_shares():
    rack = "example.com/rack"
    nodes = [make_node(f"n{i}", cpu="8", memory="16Gi", gpu=1, labels={PRODUCT: "A100", rack: f"r{i // 2}"})
             for i in range(4)]
    s = Scheduler(cluster(nodes, pods=[gpod("x", 900, node_name="n0")],
                          groups=[make_pod_group("g", min_count=3, topology=rack)]))
    recs = s.add_pods([gpod(f"m{i}", 500, group="g") for i in range(3)]) + s.run_until_idle()
    # rack r0 (n0: 100 free, n1: 1000) takes only 2 of the 500m pods; r1 takes all three.
    assert set(bindings(recs).values()) <= {"n2", "n3"} and len(bindings(recs)) == 3
    assert sum(used(s)) == 900 + 1500 and used(s)[:2] == [900, 0]


@pytest.mark.parametrize("ann,message", [
    ({"alibabacloud.com/gpu-milli": "abc"}, "Pod default/p: metadata.annotations: alibabacloud.com/gpu-count and "
                                            "alibabacloud.com/gpu-milli must be integers"),
    ({"alibabacloud.com/gpu-count": "2", "alibabacloud.com/gpu-milli": "500"},
     "Pod default/p: gpu_milli: must be 1000 when num_gpu > 1 (got 500)"),
])
def test_bad_annotations_are_input_errors(ann, message):
    pod = make_pod("p", cpu="1")
    pod.metadata.annotations.update(ann)
    with pytest.raises(InputError, match="^" + message.replace("(", r"\(").replace(")", r"\)") + "$"):
        Scheduler(cluster([gnode("n0")])).add_pods([pod])
    with pytest.raises(InputError):
        cluster([gnode("n0")], [pod])


def test_jax_backend_makes_the_same_decisions():
    pytest.importorskip("jax")
    def run(backend):
        s = Scheduler(cluster([gnode("n0", 2), gnode("n1", 1, "T4"), make_node("c0", cpu="4")]), backend=backend)
        recs = s.add_pods([gpod("a", 300), gpod("b", 800, models=("T4",)), gpod("c", 900), make_pod("plain", cpu="1"),
                           gpod("d", 700), gpod("e", 1000, count=2), gpod("f", 300, models=("T4",))])
        recs += s.run_until_idle()
        return bindings(recs), used(s), dict(s._last_message)
    assert run("jax") == run("numpy")


# -- random clusters vs the per-device reference --------------------------------------------------------------
MODELS = ("A100", "T4", "V100")


@st.composite
def share_cases(draw):
    n = draw(st.integers(1, 4))
    nodes = [(draw(st.integers(0, 4)), draw(st.sampled_from(MODELS))) for _ in range(n)]
    events = []
    for i in range(draw(st.integers(1, 14))):
        if events and draw(st.integers(0, 4)) == 0:
            events.append(("delete", draw(st.integers(0, len(events) - 1))))
            continue
        whole = draw(st.booleans()) and draw(st.booleans())
        count = draw(st.integers(1, 3)) if whole else 1
        milli = 1000 if whole else draw(st.sampled_from([100, 250, 300, 500, 600, 700, 1000]))
        models = tuple(draw(st.lists(st.sampled_from(MODELS), max_size=2, unique=True)))
        events.append(("add", (count, milli, models)))
    return nodes, events


@settings(max_examples=150, deadline=None)
@given(share_cases())
def test_random_share_sequences_match_the_per_device_reference(case):
    nodes, events = case
    s = Scheduler(cluster([gnode(f"n{i}", c, m) for i, (c, m) in enumerate(nodes)]))
    state = [{"free": [1000] * c, "models": [m] * c} for c, m in nodes]
    held: dict[str, tuple[int, list[int], int]] = {}

    def account(recs):
        """Pods bound now (the new one, or waiting ones retried after a delete), in binding order."""
        for key, node_name in bindings(recs).items():
            c, m, ms = events[int(key.split("/p")[1])][1]
            p = {"count": c, "milli": m, "models": list(ms)}
            node = int(node_name[1:])
            assert ref.fits(state[node], p), (key, node_name, state)
            devs = ref.take(state[node], p)
            assert s.cluster.gpus.held[key][1].tolist() == devs
            held[key] = (node, devs, m)
        return bindings(recs)

    for i, (kind, arg) in enumerate(events):
        if kind == "delete":
            key = f"default/p{arg}"
            if key in held:
                node, devs, milli = held.pop(key)
                for d in devs:
                    state[node]["free"][d] += milli
            recs = s.delete_pod(key) if s._known(key) else []
            account(recs + s.run_until_idle())
        else:
            count, milli, models = arg
            pod = {"count": count, "milli": milli, "models": list(models)}
            got = account(s.add_pods([gpod(f"p{i}", milli, count, models)]) + s.run_until_idle())
            if f"default/p{i}" not in got:
                assert not any(ref.fits(st_, pod) for st_ in state)
        free = np.array([f for st_ in state for f in st_["free"]], np.int64)
        assert np.array_equal(1000 - free, s.cluster.gpus.table.milli_used)
