"""GPU shares in the main Scheduler (sched/gpushare.py): hand-checked toys and a per-device reference check.

Pods ask for GPUs in the trace's annotation form (alibabacloud.com/gpu-count, -gpu-milli, -gpu-card-model); nodes
advertise nvidia.com/gpu with the model in the nvidia.com/gpu.product label.
"""
from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import gpus as ref
from strategies import make_node, make_pod, make_pod_group

from phalanx.cluster_models import ClusterObjects, InputError
from phalanx.sched import Cluster, Scheduler, gpushare
from phalanx.sched.records import BOUND

PRODUCT = "nvidia.com/gpu.product"
GPU = "nvidia.com/gpu"


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
    """Milli the shares use, per device."""
    return s.cluster.gpus.table.milli_used.tolist()


def devices(s: Scheduler) -> list[int]:
    """Milli in use per device, devices held by whole-GPU (nvidia.com/gpu) pods included."""
    return s.cluster.gpus.device_used().tolist()


def gpu_requested(s: Scheduler) -> list[int]:
    """Requested nvidia.com/gpu per node in the node table (whole-GPU pods + devices used by shares)."""
    t = s.cluster.tensors
    return t.nodes.requested[:, t.resources.get(GPU)].tolist()


def node_state(s: Scheduler) -> tuple:
    n = s.cluster.tensors.nodes
    return n.requested.copy(), n.nonzero_requested.copy(), n.pod_count.copy()


# A pod outside a PodGroup that fits nowhere runs PostFilter: DynamicResources, then DefaultPreemption. These pods
# all have priority 0, so no node has a victim.
def no_victims(n: int) -> str:
    return f" no new claims to deallocate, preemption: 0/{n} nodes are available: {n} No preemption victims found for incoming pod."


# A PodGroup member that fits nowhere: DefaultPreemption leaves group members to workload-aware preemption.
MEMBER_POST_FILTER = " no new claims to deallocate, preemption: not eligible due to workload aware preemption enabled"


# -- hand-checked toys --------------------------------------------------------------------------------------------
def test_two_half_gpu_pods_share_one_device_and_a_third_does_not_fit():
    s = Scheduler(cluster([gnode("n0", 1)]))
    recs = s.add_pods([gpod("a", 500), gpod("b", 500), gpod("c", 500)]) + s.run_until_idle()
    assert bindings(recs) == {"default/a": "n0", "default/b": "n0"}
    assert used(s) == [1000]                        # 500 + 500 on gpu0
    assert s.pending_message["default/c"] == "0/1 nodes are available: 1 Insufficient GPU share." + no_victims(1)


def test_600m_does_not_fit_a_device_with_500m_free():
    s = Scheduler(cluster([gnode("n0", 1), make_node("cpu-only", cpu="8")]))
    s.add_pods([gpod("a", 500)])
    s.run_until_idle()
    recs = s.add_pods([gpod("b", 600)]) + s.run_until_idle()
    assert not bindings(recs) and used(s) == [500]
    # n0: 1000 - 500 = 500 free < 600; cpu-only has no GPU (any model allowed: "Insufficient" wording is
    # reserved for nodes with GPUs, a node without any GPU has none of an allowed model)
    assert s.pending_message["default/b"] == \
        "0/2 nodes are available: 1 Insufficient GPU share, 1 node(s) had no GPU of an allowed model. no new claims to" \
        " deallocate, preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption" \
        " is not helpful for scheduling."   # no GPU of an allowed model is UnschedulableAndUnresolvable


def test_model_restriction():
    s = Scheduler(cluster([gnode("t4", 2, "T4"), gnode("a100", 1, "A100")]))
    recs = s.add_pods([gpod("want-a100", 300, models=("A100",)), gpod("want-v100", 300, models=("V100",)),
                       gpod("either", 1000, count=2, models=("A100", "T4"))]) + s.run_until_idle()
    assert bindings(recs) == {"default/want-a100": "a100", "default/either": "t4"}
    assert used(s) == [1000, 1000, 300]           # rows: t4/gpu0, t4/gpu1, a100/gpu0
    assert s.pending_message["default/want-v100"] == \
        "0/2 nodes are available: 2 node(s) had no GPU of an allowed model. no new claims to deallocate, preemption:" \
        " 0/2 nodes are available: 2 Preemption is not helpful for scheduling."


def test_a_share_preempts_a_lower_priority_share_and_takes_its_device():
    # n0: 1 device, "low" (priority 0) holds 700m of it. "high" (priority 100) wants 600m: 300 free < 600, so
    # GpuShare fails Unschedulable; removing low frees the device -> low is the one victim, high binds on n0.
    # "two" (priority 100) wants 2 whole devices: n0 has only 1 -> UnschedulableAndUnresolvable, no preemption.
    low = gpod("low", 700, node_name="n0")
    s = Scheduler(cluster([gnode("n0", 1)], pods=[low]))
    high, two = gpod("high", 600), gpod("two", 1000, count=2)
    high.spec.priority = two.spec.priority = 100
    recs = s.add_pods([high, two]) + s.run_until_idle()
    kinds = [(r.kind, r.object, r.node) for r in recs]
    assert ("Preempted", "default/low", "n0") in kinds and bindings(recs) == {"default/high": "n0"}
    assert used(s) == [600]
    assert s.pending_message["default/two"] == (
        "0/1 nodes are available: 1 Insufficient GPU share. no new claims to deallocate, preemption: 0/1 nodes are"
        " available: 1 Preemption is not helpful for scheduling.")


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
    assert s.pending_message["default/p4"] == "0/1 nodes are available: 1 Insufficient GPU share." + no_victims(1)


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
    assert "default/b" in s.pending_message
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
    assert s.pending_message["default/m2"] == "0/1 nodes are available: 1 Insufficient GPU share." + MEMBER_POST_FILTER


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
    # nvidia.com/gpu in resources: NodeResourcesFit's count (upstream semantics); without shares nothing else
    # changes: the node table is upstream's, the share table untouched, the devices shown held.
    s = Scheduler(cluster([gnode("n0", 2)]))
    recs = s.add_pods([make_pod("w", cpu="1", gpu=2), make_pod("x", cpu="1", gpu=1)]) + s.run_until_idle()
    assert bindings(recs) == {"default/w": "n0"} and used(s) == [0, 0]
    assert s.pending_message["default/x"] == "0/1 nodes are available: 1 Insufficient nvidia.com/gpu." + no_victims(1)
    assert devices(s) == [1000, 1000] and gpu_requested(s) == [2] and s.cluster.gpus.extra.tolist() == [0]


def test_whole_gpu_pod_does_not_take_a_device_a_share_uses():
    # 2 devices; a 500m share on gpu0. A pod asking nvidia.com/gpu: 2 used to pass NodeResourcesFit (0 of 2
    # requested) and double-book gpu0; gpu0 now counts as one requested nvidia.com/gpu, so only 1 is free.
    s = Scheduler(cluster([gnode("n0", 2)]))
    s.add_pods([gpod("a", 500)])
    s.run_until_idle()
    assert devices(s) == [500, 0] and gpu_requested(s) == [1]          # 0 whole + 1 device used by shares
    recs = s.add_pods([make_pod("w2", cpu="1", gpu=2)]) + s.run_until_idle()
    assert not bindings(recs)
    assert s.pending_message["default/w2"] == "0/1 nodes are available: 1 Insufficient nvidia.com/gpu." + no_victims(1)
    recs = s.add_pods([make_pod("w1", cpu="1", gpu=1)]) + s.run_until_idle()
    assert bindings(recs) == {"default/w1": "n0"}
    assert devices(s) == [500, 1000] and gpu_requested(s) == [2]       # w1 holds gpu1 (the one no share uses)
    # A second share fits gpu0 (500 free), not gpu1 (held whole): best fit among devices w1 does not hold.
    recs = s.add_pods([gpod("b", 500), gpod("c", 100)]) + s.run_until_idle()
    assert bindings(recs) == {"default/b": "n0"} and devices(s) == [1000, 1000]
    assert s.pending_message["default/c"] == "0/1 nodes are available: 1 Insufficient GPU share." + no_victims(1)
    # a and b leave: gpu0 is free of shares, so w1 is shown on it (the lowest-index device no share uses) and
    # the waiting c takes gpu1; w2 still waits (1 device free), and once c and w1 leave it takes both.
    s.delete_pod("default/a")
    recs = s.delete_pod("default/b") + s.run_until_idle()
    assert bindings(recs) == {"default/c": "n0"} and devices(s) == [1000, 100] and gpu_requested(s) == [2]
    recs = s.delete_pod("default/c") + s.run_until_idle()
    assert not bindings(recs) and devices(s) == [1000, 0] and gpu_requested(s) == [1]
    recs = s.delete_pod("default/w1") + s.run_until_idle()
    assert bindings(recs) == {"default/w2": "n0"} and devices(s) == [1000, 1000] and gpu_requested(s) == [2]
    assert s.cluster.gpus.extra.tolist() == [0] and used(s) == [0, 0]


def test_share_does_not_take_a_device_a_whole_gpu_pod_holds():
    # n0: 2 devices, both requested by whole-GPU pods; n1: 1 device. The share used to see n0's devices idle.
    s = Scheduler(cluster([gnode("n0", 2, cpu="64"), gnode("n1", 1)]))
    recs = s.add_pods([make_pod("w", cpu="1", gpu=2)]) + s.run_until_idle()
    assert bindings(recs) == {"default/w": "n0"} and devices(s) == [1000, 1000, 0]
    recs = s.add_pods([gpod("a", 300), gpod("b", 800)]) + s.run_until_idle()
    assert bindings(recs) == {"default/a": "n1"} and devices(s) == [1000, 1000, 300]
    assert s.pending_message["default/b"] == "0/2 nodes are available: 2 Insufficient GPU share." + no_victims(2)
    assert gpu_requested(s) == [2, 1]
    recs = s.delete_pod("default/w") + s.run_until_idle()                # both devices free again
    assert bindings(recs) == {"default/b": "n0"} and devices(s) == [800, 0, 300] and gpu_requested(s) == [1, 1]


def test_bound_input_whole_gpu_pods_hold_their_devices_before_shares():
    # Input: on n0 (2 devices) a 400m share, a whole-GPU pod, then a 700m share. Whole-GPU pods are counted
    # first (node level), so the shares see one device: a -> gpu1 (gpu0 held whole), c (700) no longer fits.
    pods = [gpod("a", 400, node_name="n0"), make_pod("w", cpu="1", gpu=1, node_name="n0"),
            gpod("c", 700, node_name="n0")]
    c = cluster([gnode("n0", 2)], pods)
    assert c.gpus.device_used().tolist() == [1000, 400] and c.gpus.held["default/a"][1].tolist() == [1]
    assert c.warnings == ["Pod default/c: metadata.annotations: its GPU request does not fit the free GPUs of node "
                          "n0; not accounted"]
    assert c.tensors.nodes.requested[:, c.tensors.resources.get(GPU)].tolist() == [2]


def test_failed_gang_cycle_on_a_mixed_node_restores_devices_and_node_table_bit_for_bit():
    # n0: 3 devices, x (100m) bound on gpu0. Gang of 4 (minCount 4): two whole-GPU members (one run: batched),
    # then two 950m shares. w0, w1 hold gpu1, gpu2 (the devices no share uses) -> nvidia.com/gpu 2 + 1 = 3 of 3;
    # s0 fits nowhere (gpu0 has 900 free, the others held whole) -> the cycle is undone.
    # incremental=False: the two whole-GPU members take the batch path (kept shapes would place a run of 2 pod by
    # pod), whose undo is what this checks.
    s = Scheduler(cluster([gnode("n0", 3)], pods=[gpod("x", 100, node_name="n0")],
                          groups=[make_pod_group("g", min_count=4)]), incremental=False)
    before, nodes0 = s.cluster.gpus.snapshot(), node_state(s)
    changes0 = len(s.cluster.tensors.changes)
    recs = s.add_pods([make_pod(f"w{i}", cpu="1", gpu=1, pod_group="g") for i in range(2)]
                      + [gpod(f"s{i}", 950, group="g") for i in range(2)]) + s.run_until_idle()
    assert not bindings(recs) and s.stats.batch_rounds >= 1              # the whole-GPU run went batched
    assert s.pending_message["default/s0"] == "0/1 nodes are available: 1 Insufficient GPU share." + MEMBER_POST_FILTER
    assert len(s.cluster.tensors.changes) > changes0
    after = s.cluster.gpus.snapshot()
    for x, y in zip(before, after):
        assert (np.array_equal(x, y) and x.dtype == y.dtype) if isinstance(x, np.ndarray) else x == y
    assert all(np.array_equal(x, y) for x, y in zip(nodes0, node_state(s)))
    assert devices(s) == [100, 0, 0] and gpu_requested(s) == [1]
    # The other way round: shares placed first in the gang, then a whole-GPU member that no longer fits.
    s2 = Scheduler(cluster([gnode("n0", 2)], groups=[make_pod_group("h", min_count=3)]))
    before, nodes0 = s2.cluster.gpus.snapshot(), node_state(s2)
    recs = s2.add_pods([gpod("a", 600, group="h"), gpod("b", 600, group="h"),
                        make_pod("w", cpu="1", gpu=1, pod_group="h")]) + s2.run_until_idle()
    assert not bindings(recs)
    assert s2.pending_message["default/w"] == "0/1 nodes are available: 1 Insufficient nvidia.com/gpu." + MEMBER_POST_FILTER
    after = s2.cluster.gpus.snapshot()
    assert all(np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y for x, y in zip(before, after))
    assert all(np.array_equal(x, y) for x, y in zip(nodes0, node_state(s2)))


def test_mixed_gang_that_fits_binds_and_permit_rejection_releases():
    s = Scheduler(cluster([gnode("n0", 2)], groups=[make_pod_group("g", min_count=3)]), gang_mode="permit")
    s.add_pods([gpod("a", 500, group="g"), make_pod("w", cpu="1", gpu=1, pod_group="g"),
                make_pod("big", cpu="100", pod_group="g")])
    s.step(1.0)                                    # a and w wait at Permit; big fits nowhere
    assert devices(s) == [500, 1000] and gpu_requested(s) == [2]
    s.step(400.0)                                  # rejected at Permit: both released
    assert devices(s) == [0, 0] and gpu_requested(s) == [0] and s.cluster.gpus.held == {}


def test_node_events_keep_the_whole_gpu_correction():
    s = Scheduler(cluster([gnode("n0", 2), gnode("n1", 1)]))
    s.add_pods([gpod("a", 300), gpod("b", 300, models=("A100",)), make_pod("w", cpu="1", gpu=1)])
    s.run_until_idle()
    assert devices(s) == [600, 1000, 0] and gpu_requested(s) == [2, 0]   # a, b share gpu0 of n0; w: gpu1
    s.update_node(gnode("n0", 2))                  # the correction is not applied twice
    assert devices(s) == [600, 1000, 0] and gpu_requested(s) == [2, 0]
    s.add_nodes([gnode("n2", 2)])
    assert gpu_requested(s) == [2, 0, 0]
    s.remove_node("n1")                            # a new node table: the correction is put in again
    assert devices(s) == [600, 1000, 0, 0] and gpu_requested(s) == [2, 0]
    recs = s.add_pods([make_pod("w2", cpu="1", gpu=2)]) + s.run_until_idle()
    assert bindings(recs) == {"default/w2": "n2"}
    s.update_node(gnode("n0", 1))                  # n0 shrinks to gpu0 (the shares' device): w holds nothing
    assert devices(s) == [600, 1000, 1000] and gpu_requested(s) == [2, 2]   # over-committed, as upstream


def rack_scheduler(gpus: int, min_count: int) -> Scheduler:
    """Four A100 nodes with `gpus` devices each in racks r0 (n0, n1) and r1 (n2, n3); a 900m share bound on n0's
    gpu0; PodGroup g (minCount `min_count`) constrained to one rack."""
    rack = "example.com/rack"
    nodes = [make_node(f"n{i}", cpu="8", memory="16Gi", gpu=gpus, labels={PRODUCT: "A100", rack: f"r{i // 2}"})
             for i in range(4)]
    return Scheduler(cluster(nodes, pods=[gpod("x", 900, node_name="n0")],
                             groups=[make_pod_group("g", min_count=min_count, topology=rack)]))


def test_topology_group_mixing_whole_gpus_and_shares():
    # r0: n0 has a 900m share on gpu0, n1 is idle; r1 is idle. The group: 2 whole GPUs, then 3 x 500m shares.
    # In r0 the whole-GPU member fits only n1 (n0 has 1 device no share uses), which leaves n0's gpu1 for two of
    # the shares and nothing for the third: r0 is infeasible. r1: w -> n2, the shares on n3 (2 + 1).
    s = rack_scheduler(gpus=2, min_count=4)
    recs = s.add_pods([make_pod("w", cpu="1", gpu=2, pod_group="g")]
                      + [gpod(f"m{i}", 500, group="g") for i in range(3)]) + s.run_until_idle()
    assert bindings(recs) == {"default/w": "n2", "default/m0": "n3", "default/m1": "n3", "default/m2": "n3"}
    assert devices(s) == [900, 0, 0, 0, 1000, 1000, 1000, 500]
    assert gpu_requested(s) == [1, 0, 2, 2]


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


def test_node_events_renew_the_failure_reasons_kept_per_request():
    # What each node reports when the pod's devices do not fit is kept per request (GpuBook.share_failure) until the
    # devices are rebuilt: after the update n1 has a device of the allowed model (the model ids stay), one short of two.
    s = Scheduler(cluster([gnode("n0", 1, "T4"), gnode("n1", 1, "A100")]))
    s.add_pods([gpod("p", 1000, count=2, models=("T4",))])
    s.run_until_idle()
    unhelpful = " no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for" \
        " scheduling."
    assert s.pending_message["default/p"] == \
        "0/2 nodes are available: 1 Insufficient GPU share, 1 node(s) had no GPU of an allowed model." + unhelpful
    s.update_node(gnode("n1", 1, "T4"))
    s.run_until_idle()
    assert s.pending_message["default/p"] == "0/2 nodes are available: 2 Insufficient GPU share." + unhelpful


def test_topology_group_with_shares():
    s = rack_scheduler(gpus=1, min_count=3)
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
        return bindings(recs), used(s), dict(s.pending_message)
    assert run("jax") == run("numpy")


def test_jax_backend_whole_gpu_runs_next_to_shares():
    # Runs of identical whole-GPU pods go the compiled (batched) path on JAX and the batch path on numpy; both
    # read requested nvidia.com/gpu with the devices shares use, including after shares change between runs.
    pytest.importorskip("jax")
    def run(backend):
        s = Scheduler(cluster([gnode("n0", 4, cpu="64"), gnode("n1", 2, cpu="64"), gnode("n2", 3, cpu="64")]),
                      backend=backend)
        recs = s.add_pods([gpod("a", 300), gpod("b", 800), gpod("c", 900)]) + s.run_until_idle()
        recs += s.add_pods([make_pod(f"w{i}", cpu="1", gpu=1) for i in range(5)]) + s.run_until_idle()
        recs += s.delete_pod("default/b") + s.delete_pod("default/c") + s.run_until_idle()
        recs += s.add_pods([make_pod(f"v{i}", cpu="1", gpu=2) for i in range(3)] + [gpod("d", 600)])
        recs += s.run_until_idle()
        return bindings(recs), devices(s), gpu_requested(s), dict(s.pending_message)
    numpy_run = run("numpy")
    assert run("jax") == numpy_run
    assert sum(numpy_run[2]) <= 9 and max(numpy_run[1]) <= 1000


# -- random clusters vs the per-device reference --------------------------------------------------------------
MODELS = ("A100", "T4", "V100")


@st.composite
def share_cases(draw):
    n = draw(st.integers(1, 4))
    nodes = [(draw(st.integers(0, 4)), draw(st.sampled_from(MODELS))) for _ in range(n)]
    events = []
    for i in range(draw(st.integers(1, 16))):
        if events and draw(st.integers(0, 4)) == 0:
            events.append(("delete", draw(st.integers(0, len(events) - 1))))
            continue
        if draw(st.integers(0, 2)) == 0:          # a whole-GPU pod: nvidia.com/gpu in its resources
            events.append(("add", ("nvidia", draw(st.integers(1, 3)), 1000, ())))
            continue
        whole = draw(st.booleans()) and draw(st.booleans())
        count = draw(st.integers(1, 3)) if whole else 1
        milli = 1000 if whole else draw(st.sampled_from([100, 250, 300, 500, 600, 700, 1000]))
        models = tuple(draw(st.lists(st.sampled_from(MODELS), max_size=2, unique=True)))
        events.append(("add", ("share", count, milli, models)))
    return nodes, events


@settings(max_examples=200, deadline=None)
@given(share_cases())
def test_random_share_sequences_match_the_per_device_reference(case):
    """Share pods (annotations) and whole-GPU pods (nvidia.com/gpu) added and deleted in random order: every
    decision and the device table match the per-device reference, and no device is ever promised twice."""
    nodes, events = case
    s = Scheduler(cluster([gnode(f"n{i}", c, m) for i, (c, m) in enumerate(nodes)]))
    state = [{"free": [1000] * c, "models": [m] * c, "whole": 0} for c, m in nodes]
    held: dict[str, tuple[int, list[int], int]] = {}
    whole: dict[str, tuple[int, int]] = {}

    def account(recs):
        """Pods bound now (the new one, or waiting ones retried after a delete), in binding order."""
        for key, node_name in bindings(recs).items():
            kind, c, m, ms = events[int(key.split("/p")[1])][1]
            node = int(node_name[1:])
            if kind == "nvidia":
                assert ref.whole_fits(state[node], c), (key, node_name, state)
                state[node]["whole"] += c
                whole[key] = (node, c)
                continue
            p = {"count": c, "milli": m, "models": list(ms)}
            assert ref.share_fits(state[node], p), (key, node_name, state)
            devs = ref.take_share(state[node], p)
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
            if key in whole:
                node, c = whole.pop(key)
                state[node]["whole"] -= c
            recs = s.delete_pod(key) if s.knows(key) else []
            account(recs + s.run_until_idle())
        else:
            pkind, count, milli, models = arg
            if pkind == "nvidia":
                pod = make_pod(f"p{i}", cpu="100m", memory="100Mi", gpu=count)
                got = account(s.add_pods([pod]) + s.run_until_idle())
                if f"default/p{i}" not in got:
                    assert not any(ref.whole_fits(st_, count) for st_ in state)
            else:
                pod = {"count": count, "milli": milli, "models": list(models)}
                got = account(s.add_pods([gpod(f"p{i}", milli, count, models)]) + s.run_until_idle())
                if f"default/p{i}" not in got:
                    assert not any(ref.share_fits(st_, pod) for st_ in state)
        free = np.array([f for st_ in state for f in st_["free"]], np.int64)
        assert np.array_equal(1000 - free, s.cluster.gpus.table.milli_used)
        effective = np.array([f for st_ in state for f in ref.effective_free(st_)], np.int64)
        assert np.array_equal(1000 - effective, s.cluster.gpus.device_used())
        # No device promised twice: per node, devices held whole + devices shares use <= its devices, and the
        # node table's requested nvidia.com/gpu (whole + shared devices) within allocatable.
        gpu_req = gpu_requested(s)
        for n, st_ in enumerate(state):
            shared = sum(1 for f in st_["free"] if f < 1000)
            assert min(st_["free"]) >= 0 if st_["free"] else True
            assert st_["whole"] + shared <= len(st_["free"])
            assert gpu_req[n] == st_["whole"] + shared


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_node_values_read_in_part_equal_values_computed_afresh(data):
    """GpuBook.node_values keeps per-node values, computes again only the nodes read whose load changed, and leaves
    the others for a later read: after any sequence of load changes and reads (of some nodes, or of every node), the
    nodes read hold what computing every node now gives, and only the nodes changed since they were computed were
    computed again."""
    c = cluster([gnode(f"n{i}", gpus=2) for i in range(6)])
    t, book = c.tensors, c.gpus
    cpu = t.resources.get("cpu")
    computed = []
    fresh = set()            # nodes computed since their last load change
    few = data.draw(st.integers(0, 3))     # reads computing up to `few` nodes compute them one by one

    def compute(rows):
        computed.extend(range(6) if rows is None else rows.tolist())
        at = slice(None) if rows is None else rows
        return t.nodes.requested[at, cpu] * 7 + t.nodes.pod_count[at], t.nodes.requested[at, cpu] % 3 == 0

    def one(node):
        computed.append(node)
        request = int(t.nodes.requested[node, cpu])
        return request * 7 + int(t.nodes.pod_count[node]), request % 3 == 0

    # Stale nodes looked up one by one or as arrays (among the nodes read, or the nodes changed since all were read)
    with mock.patch.object(gpushare, "_FEW_ROWS", data.draw(st.sampled_from([0, 2, 16]))):
        for _ in range(data.draw(st.integers(1, 40))):
            if data.draw(st.booleans()):
                node = data.draw(st.integers(0, 5))
                request = np.zeros(len(t.resources), np.int64)
                request[cpu] = data.draw(st.integers(1, 500))
                t.account(np.array([node]), request, np.zeros(2, np.int64), [])
                fresh.discard(node)
                continue
            rows = data.draw(st.none() | st.lists(st.integers(0, 5), unique=True).map(
                lambda r: np.array(r, np.int64)))
            read = set(range(6)) if rows is None else set(rows.tolist())
            computed.clear()
            got = book.node_values("k", compute, rows, one, few)
            assert sorted(computed) == sorted(read - fresh)
            fresh |= set(computed)
            want = compute(None)
            at = slice(None) if rows is None else rows
            for g, w in zip(got, want):
                assert g[at].tolist() == w[at].tolist()


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_fgd_values_node_by_node_equal_the_arrays(data):
    """FGDScore's values of one node in plain Python (GpuBook.node_values' one: a node's own state, a request's
    score, device and F after) equal those its arrays give over every node, after random shares and CPU loads."""
    from phalanx.cluster_models.gpus import GpuRequest
    from phalanx.kernels import fgd
    from phalanx.kernels.gpu_fit import allowed_ids
    from phalanx.plugins.fgd_score import FGDScore, FGDScoreArgs, as_args
    from phalanx.plugins.gpu_scoring import GpuScoreState, node_view
    # 4 cores: CPU left lands on the typical pods' CPU (where a class changes) as often as not
    c = cluster([gnode(f"n{i}", gpus=data.draw(st.integers(0, 4)), model=data.draw(st.sampled_from(["A100", "T4"])),
                       cpu="4") for i in range(5)])
    book, t = c.gpus, c.tensors
    cpu = t.resources.get("cpu")
    typ = fgd.TypicalPods(cpu=(1000, 4000, 2000, 500), milli=(500, 1000, 0, 250), count=(1, 2, 0, 1),
                          spec=("", "A100", "", "T4"), freq=(0.4, 0.3, 0.2, 0.1))
    plugin = FGDScore(FGDScoreArgs(typical_pods=as_args(typ)))
    for i in range(data.draw(st.integers(0, 10))):
        node = data.draw(st.integers(0, 4))
        request = np.zeros(len(t.resources), np.int64)
        request[cpu] = data.draw(st.sampled_from([0, 500, 1000, 2000]) | st.integers(0, 3000))
        t.account(np.array([node]), request, np.zeros(2, np.int64), [])
        g = book.prepare(f"p{i}", GpuRequest(1, data.draw(st.sampled_from([100, 250, 500, 1000]))))
        if g.filter(np)[0][node] == 0:
            book.allocate(g, node, f"p{i}")
    count, milli = data.draw(st.sampled_from([(0, 0), (1, 300), (1, 500), (1, 1000), (2, 1000), (2, 500)]))
    names = data.draw(st.sampled_from([(), ("A100",), ("T4", "A100")]))
    pod_cpu = data.draw(st.sampled_from([500, 1000, 2000]) | st.integers(1, 4000))
    state = GpuScoreState(count, milli, names, allowed_ids(book.table.models, names), pod_cpu, pod_cpu, 0,
                          -1 if count == 0 else 0, False, book)
    own = plugin._own_rows(state, t, None)
    for n in range(5):
        got = plugin._own_node(state, t, n)
        assert got[:3] == tuple(v[n].tolist() for v in own[:3]) and got[3] == float(own[3][n])
    one, few = plugin.one_by_one(state, t)
    if count > 1 and milli < 1000:           # several shares of GPUs: the arrays alone
        assert one is None and few == 0
        return
    want = plugin.evaluate(state, node_view(state, t, None))
    for n in range(5):
        assert one(n) == (int(want[0][n]), int(want[1][n]), float(want[2][n]))


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_share_filter_by_ranked_free_equals_the_device_count(data):
    """GpuShare's Filter for a pod that names no model compares each node's count-th most free slot with its milli
    (GpuBook.ranked_free, kept sorted through takes, undos and releases): the codes and payloads gpu_share_filter
    gives over the devices, on every node and on some rows."""
    from phalanx.cluster_models.gpus import GpuRequest
    from phalanx.kernels.gpu_share import gpu_share_filter
    from phalanx.sched.gpushare import GpuBook
    counts = data.draw(st.lists(st.integers(0, 4), min_size=1, max_size=5))
    book = GpuBook.from_nodes([gnode(f"n{i}", k) for i, k in enumerate(counts)])    # no node table: no whole GPUs
    millis = st.sampled_from([100, 250, 300, 500, 700, 1000])
    held, undos = [], []
    for i in range(data.draw(st.integers(0, 12))):
        step = data.draw(st.integers(0, 3))
        if step == 0 and held:
            key = held.pop(data.draw(st.integers(0, len(held) - 1)))
            book.release(key)
            undos = [rec for rec in undos if rec.pod != key]
        elif step == 1 and undos:
            rec = undos.pop()
            book.undo(rec)
            held.remove(rec.pod)
        else:
            g = book.prepare(f"p{i}", GpuRequest(1, data.draw(millis)))
            fits = np.flatnonzero(g.filter(np)[0] == 0).tolist()
            if fits:
                undos.append(book.allocate(g, data.draw(st.sampled_from(fits)), f"p{i}"))
                held.append(f"p{i}")
    rows = st.none() | st.lists(st.integers(0, len(counts) - 1), unique=True).map(lambda r: np.array(r, np.int64))
    for count in range(1, 6):
        assert count > max(counts) or book.ranked_free(count) is not None        # the path under test
        for milli in (100, 300, 500, 1000):
            at = data.draw(rows)
            free, model, _ = book.devices(at)
            code, payload = book.share_failure(None, count)
            part = slice(None) if at is None else at
            want = gpu_share_filter(np, free, model, (code[part], payload[part]), count, milli, None)
            got = book.prepare("q", GpuRequest(count, milli)).filter(np, at)
            assert [a.tolist() for a in got] == [w.tolist() for w in want]


def test_a_node_with_more_gpus_than_modelled_is_an_input_error():
    """Found by fuzzing manifests: `nvidia.com/gpu: 100000000` on one node made a device row each (minutes and
    gigabytes, then the machine's memory) instead of one line."""
    with pytest.raises(InputError) as caught:
        cluster([gnode("n0", gpus=100_000_000)])
    assert str(caught.value) == ("Node n0: status.allocatable[nvidia.com/gpu]: 100000000 GPU devices, more than the "
                                 "1024 per node phalanx models")
    assert cluster([gnode("n0", gpus=1024)]).gpus.table.node.size == 1024


@pytest.mark.parametrize("event", ["add", "update"])
def test_a_node_whose_gpus_are_refused_changes_nothing(event):
    """add_nodes / update_node met the node's GPU errors only after the node table had taken it: the node stayed in
    the cluster beside a GPU table without it."""
    s = Scheduler(cluster([gnode("n0")]))
    bad = make_node("n1" if event == "add" else "n0",
                    extra={"alibabacloud.com/gpu-count": "2", "alibabacloud.com/gpu-milli": "500"})
    with pytest.raises(InputError) as caught:
        s.add_nodes([bad]) if event == "add" else s.update_node(bad)
    assert str(caught.value) == (f"Node {bad.metadata.name}: status.allocatable[alibabacloud.com/gpu-milli]: 500 is "
                                 "not alibabacloud.com/gpu-count x 1000 (2000)")
    assert [n.metadata.name for n in s.cluster.nodes] == ["n0"] and s.cluster.nodes[0] is not bad
    assert s.cluster.tensors.nodes.size == 1
    s.add_pods([gpod("p", 1000)])
    assert bindings(s.run_until_idle()) == {"default/p": "n0"}
