"""Hand-checked toy cases for the PodGroup reference (tests/reference/groups.py).

Every expected value was worked out by hand in the comment next to it.  Nodes are identical unless said
otherwise (4 cpu, 8Gi, 110 pods, 1 nvidia.com/gpu), so between empty nodes the first one (input order) wins
the tie, and a node whose GPU is taken fails NodeResourcesFit with "Insufficient nvidia.com/gpu".
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

try:
    from tests.reference.groups import (
        GATED_MESSAGE,
        MEMBER_UNSCHEDULABLE,
        QUORUM_MESSAGE,
        group_min_count,
        ref_schedule_groups,
    )
    from tests.reference.scheduler import ref_schedule
    from tests.strategies import (
        clusters,
        clusters_with_groups,
        make_node,
        make_pod,
        make_pod_group,
        make_priority_class,
        make_profile,
        profiles,
    )
except ImportError:  # rootdir not on sys.path: tests/ itself is (pytest prepend import mode)
    from reference.groups import (
        GATED_MESSAGE,
        MEMBER_UNSCHEDULABLE,
        QUORUM_MESSAGE,
        group_min_count,
        ref_schedule_groups,
    )
    from reference.scheduler import ref_schedule
    from strategies import (
        clusters,
        clusters_with_groups,
        make_node,
        make_pod,
        make_pod_group,
        make_priority_class,
        make_profile,
        profiles,
    )

DEFAULT = make_profile()
# A failed gang's placeable members: the Permit wait, then workload-aware preemption's reason (these profiles
# have no PostFilter plugin).
FAILED = MEMBER_UNSCHEDULABLE + ", default preemption plugin is not registered, workload aware preemption is disabled"
NO_GPU_2 = "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."


def gpu_nodes(n):
    return [make_node(f"n{i + 1}", gpu=1) for i in range(n)]


def gpu_pod(name, group=None, gpu=1, **kw):
    return make_pod(name, cpu="100m", memory="128Mi", gpu=gpu, pod_group=group, **kw)


def run(nodes, pods, groups, classes=()):
    return ref_schedule_groups(nodes, pods, groups, list(classes), DEFAULT)


def test_gang_larger_than_cluster_binds_nothing():
    # g: gang minCount 3; a0, a1, a2 identical -> one run.
    # a0 -> n1 (tie, first node); a1 -> n2 (n1's GPU is taken); a2: both GPUs taken -> FitError, run ends.
    # every member tried: 2 placed < minCount 3 -> the cycle fails (Permit waits), a0/a1 are undone.
    nodes = gpu_nodes(2)
    pods = [gpu_pod(f"a{i}", "g") for i in range(3)]
    bindings, unsched = run(nodes, pods, [make_pod_group("g", min_count=3)])
    assert bindings == {}
    assert unsched == {
        "default/a0": FAILED,
        "default/a1": FAILED,
        "default/a2": NO_GPU_2,
    }


def test_gang_min_count_reached_binds_what_fits():
    # Same pods, minCount 2: after the run 2 scheduled + 0 remaining >= 2 -> a0, a1 bound, a2 keeps its FitError.
    nodes = gpu_nodes(2)
    pods = [gpu_pod(f"a{i}", "g") for i in range(3)]
    bindings, unsched = run(nodes, pods, [make_pod_group("g", min_count=2)])
    assert bindings == {"default/a0": "n1", "default/a1": "n2"}
    assert unsched == {"default/a2": NO_GPU_2}


def test_basic_group_is_pod_by_pod():
    # basic: minCount 1 -> 2 bound, the third a FitError (as three plain pods would).
    nodes = gpu_nodes(2)
    pods = [gpu_pod(f"a{i}", "g") for i in range(3)]
    bindings, unsched = run(nodes, pods, [make_pod_group("g")])
    assert bindings == {"default/a0": "n1", "default/a1": "n2"}
    assert unsched == {"default/a2": NO_GPU_2}


def test_quorum_and_bound_members():
    # gang minCount 3 with 2 pending members: 2 + 0 bound < 3 -> both wait (PreEnqueue), nothing attempted.
    nodes = gpu_nodes(2)
    pods = [gpu_pod("a0", "g"), gpu_pod("a1", "g")]
    bindings, unsched = run(nodes, pods, [make_pod_group("g", min_count=3)])
    assert bindings == {}
    assert unsched == {"default/a0": QUORUM_MESSAGE, "default/a1": QUORUM_MESSAGE}
    # A bound member on n1 (holding n1's GPU) completes the quorum: 2 pending + 1 bound = 3.
    # cycle: scheduled starts at 1; a0 -> n2 (n1 full), scheduled 2; a1: no GPU left -> FitError.
    # 1 bound + 1 placed < 3 -> fail, a0 undone.
    bound = gpu_pod("b", "g", node_name="n1")
    bindings, unsched = run(nodes, [bound, *pods], [make_pod_group("g", min_count=3)])
    assert bindings == {}
    assert unsched == {
        "default/a0": FAILED,
        "default/a1": NO_GPU_2,
    }
    # minCount 2 instead: 1 bound + 1 placed >= 2 -> a0 bound to n2.
    bindings, unsched = run(nodes, [bound, *pods], [make_pod_group("g", min_count=2)])
    assert bindings == {"default/a0": "n2"}
    assert unsched == {"default/a1": NO_GPU_2}


def test_missing_group_and_gated_member():
    # "nope" does not exist -> the GangScheduling PreEnqueue wording.  The gated member of g counts toward the
    # quorum (v1.36): g (minCount 2) has a0 (gated) + a1 -> a1 is tried alone; 1 placed < 2 -> the cycle fails
    # and a1's placement is undone.  p is a plain pod and binds to n1.
    nodes = gpu_nodes(2)
    pods = [
        gpu_pod("x", "nope"),
        gpu_pod("a0", "g", scheduling_gates=["wait"]),
        gpu_pod("a1", "g"),
        gpu_pod("p"),
    ]
    bindings, unsched = run(nodes, pods, [make_pod_group("g", min_count=2)])
    assert bindings == {"default/p": "n1"}
    assert unsched == {
        "default/x": 'waiting for pods\'s pod group "nope" to appear in scheduling queue',   # v1.36's typo
        "default/a0": GATED_MESSAGE,
        "default/a1": FAILED,
    }


def test_every_run_is_tried_before_the_gang_is_decided():
    # gang minCount 4: members big0, big1 (2 GPUs each, arrive first) then c0, c1 (no GPU).
    # runs: [big0, big1], [c0, c1].  big0 fits nowhere (1 GPU per node) -> FitError
    # "0/2 nodes are available: 2 Insufficient nvidia.com/gpu." for big0 and, unevaluated, big1.
    # v1.36 has no early stop: run 2 is tried too, c0 -> n1, c1 -> n2 (as worked out below); 2 placed < 4 ->
    # the cycle fails, c0/c1 are undone and read the Permit status.
    nodes = gpu_nodes(2)
    pods = [gpu_pod("big0", "g", gpu=2), gpu_pod("big1", "g", gpu=2), gpu_pod("c0", "g", gpu=None),
            gpu_pod("c1", "g", gpu=None)]
    bindings, unsched = run(nodes, pods, [make_pod_group("g", min_count=4)])
    assert bindings == {}
    assert unsched == {
        "default/big0": NO_GPU_2,
        "default/big1": NO_GPU_2,
        "default/c0": FAILED,
        "default/c1": FAILED,
    }
    # minCount 2: 0 + 2 >= 2 after run 1 -> go on; c0 -> n1 (tie); c1 (100m, 128Mi) on n1 (holding c0) vs n2:
    #   LeastAllocated n1: cpu (4000-200)*100/4000 = 95, mem (8192-256)*100/8192 = 96.9 -> 96, (95+96)/2 = 95
    #                  n2: cpu 3900*100/4000 = 97.5 -> 97, mem 8064*100/8192 = 98.4 -> 98, (97+98)/2 = 97
    #   Balanced (1.36) n1: std without .0047 -> 99, with .0094 -> 99: 50 + (50+99-99)/2 = 75
    #                   n2: without 0 -> 100, with 99: 50 + (50+99-100)/2 = 50 + 24 = 74
    #   TaintToleration 100*3 on both -> n1 300+95+75 = 470 < n2 300+97+74 = 471 -> n2.
    # 2 placed >= 2 -> bound; big0/big1 keep their FitError.
    bindings, unsched = run(nodes, pods, [make_pod_group("g", min_count=2)])
    assert bindings == {"default/c0": "n1", "default/c1": "n2"}
    assert unsched == {"default/big0": NO_GPU_2, "default/big1": NO_GPU_2}


def test_run_is_one_signature_whatever_the_priorities():
    # gang minCount 2: hi (priority 10) and lo (priority 5) differ only in priority -> one signature, one run
    # [hi, lo].  hi (2 GPUs) fits nowhere -> FitError; lo gets the same FitError without being evaluated.
    # 0 placed < 2 -> the cycle fails, but every member already has a FitError.
    nodes = gpu_nodes(2)
    pods = [gpu_pod("lo", "g", gpu=2, priority=5), gpu_pod("hi", "g", gpu=2, priority=10)]
    bindings, unsched = run(nodes, pods, [make_pod_group("g", min_count=2)])
    assert bindings == {}
    assert unsched == {"default/hi": NO_GPU_2, "default/lo": NO_GPU_2}


def test_member_priorities_order_entities():
    # One node with one GPU.  Plain pod p (priority 50) arrives first; group g (basic, one member a, whose own
    # priority is 0).  v1.36's queue holds pods: the group's turn is its member's, priority 0, so p goes first
    # and takes the GPU and a gets the FitError, whatever g's own spec.priority (100) or priorityClassName (1000)
    # says (those are read by preemption, not by the queue).
    nodes = gpu_nodes(1)
    pods = [gpu_pod("p", priority=50), gpu_pod("a", "g", priority=0)]
    no_gpu_1 = "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
    classes = [make_priority_class("high", 1000)]
    for group in (make_pod_group("g", priority=100), make_pod_group("g", priority_class_name="high"),
                  make_pod_group("g")):
        bindings, unsched = run(nodes, pods, [group], classes)
        assert bindings == {"default/p": "n1"}
        assert unsched == {"default/a": no_gpu_1}
    # a second member with priority 60 lifts the group above p (its first member popped: 60 > 50); inside the
    # cycle a2 (60) goes first and takes the GPU, a (0) fails.
    pods2 = [*pods, gpu_pod("a2", "g", priority=60)]
    bindings, unsched = run(nodes, pods2, [make_pod_group("g")])
    assert bindings == {"default/a2": "n1"}
    assert unsched == {"default/a": no_gpu_1, "default/p": no_gpu_1}


# Not hand-checked numbers: cheap invariants of the group reference on random clusters.
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(clusters(max_nodes=6, max_pods=12), profiles())
def test_without_groups_is_ref_schedule(cluster, profile):
    nodes, pods, classes = cluster
    assert ref_schedule_groups(nodes, pods, [], classes, profile) == ref_schedule(nodes, pods, classes, profile)


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(clusters_with_groups(max_nodes=6, max_pods=16), profiles())
def test_group_reference_invariants(cluster, profile):
    nodes, pods, classes, groups = cluster
    bindings, unsched = ref_schedule_groups(nodes, pods, groups, classes, profile)
    considered = {f"{p.metadata.namespace}/{p.metadata.name}" for p in pods
                  if not p.spec.node_name and p.status.phase not in ("Succeeded", "Failed")
                  and p.spec.scheduler_name == "default-scheduler"}
    assert set(bindings) | set(unsched) == considered
    assert not set(bindings) & set(unsched)
    for group in groups:  # all or nothing: a gang binds nothing new, or reaches minCount with its bound members
        def member(p, group=group):
            sg = p.spec.scheduling_group
            return (p.metadata.namespace == group.metadata.namespace and sg is not None
                    and sg.pod_group_name == group.metadata.name)
        new = sum(1 for p in pods if member(p) and f"{p.metadata.namespace}/{p.metadata.name}" in bindings)
        old = sum(1 for p in pods if member(p) and p.spec.node_name and p.status.phase not in ("Succeeded", "Failed"))
        assert new == 0 or new + old >= group_min_count(group), group.key
