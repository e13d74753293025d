"""The periodic flush of the unschedulable pool (v1.36 scheduling_queue.go: flushUnschedulablePodsLeftover, run by
wait.Until every 30 s from the queue's Run): a pod pooled for strictly longer than 5 min
(DefaultPodMaxInUnschedulablePodsDuration) since its last failure is retried at the next 30 s tick of the
scheduler's clock, whatever its rejectors registered. Every expected time below is worked out by hand from that
rule: failed at f, retried at the first multiple of 30 s, T, with T - f > 300."""
from __future__ import annotations

from phalanx.cluster_models import ClusterObjects
from phalanx.sched import DEFAULT_PROFILE, Cluster, Scheduler
from phalanx.sched.config import config_from_doc
from phalanx.sched.queue import FLUSH_PERIOD_S, MAX_IN_UNSCHEDULABLE_S, flush_tick
from phalanx.sched.records import BOUND, UNSCHEDULABLE

try:
    from tests.strategies import make_node, make_pod, make_pod_group
except ImportError:  # rootdir not on sys.path: tests/ itself is (pytest prepend import mode)
    from strategies import make_node, make_pod, make_pod_group


def new_scheduler(nodes, pods=(), groups=(), profile=DEFAULT_PROFILE, **kw) -> Scheduler:
    objects = ClusterObjects(nodes=list(nodes), pods=list(pods), priority_classes=[], warnings=[], workloads=[],
                             pod_groups=list(groups))
    return Scheduler(Cluster.from_objects(objects), profile, **kw)


def attempts_of(records, key: str) -> list[tuple[float, str]]:
    return [(r.time, r.kind) for r in records if r.object == key and r.kind in (BOUND, UNSCHEDULABLE)]


def too_big(name, **kw):
    """NodeResourcesFit rejects it on 4-cpu nodes; only a node event could move it."""
    return make_pod(name, cpu="8", **kw)


def test_the_constants_are_upstreams():
    assert MAX_IN_UNSCHEDULABLE_S == 300.0 and FLUSH_PERIOD_S == 30.0


def test_flush_tick_is_strictly_after_five_minutes():
    assert flush_tick(0.0) == 330.0          # 300 - 0 is not > 300
    assert flush_tick(0.5) == 330.0
    assert flush_tick(7.0) == 330.0          # 323 > 300, and 300 - 7 is not
    assert flush_tick(29.9) == 330.0
    assert flush_tick(30.0) == 360.0         # 330 - 30 = 300, not > 300
    assert flush_tick(31.0) == 360.0
    assert flush_tick(330.0) == 660.0


def test_a_pod_rejected_by_node_resources_fit_is_retried_every_five_minutes_and_a_half():
    """Failed at 0: retried at 330, failing again refreshes its time, so the next retries are at 660 (630 - 330 is
    not > 300) and 990."""
    s = new_scheduler([make_node("n1")])
    s.add_pods([too_big("p")])
    records = s.step(1000)
    assert attempts_of(records, "default/p") == [(0, UNSCHEDULABLE), (330, UNSCHEDULABLE), (660, UNSCHEDULABLE),
                                                 (990, UNSCHEDULABLE)]
    assert set(s.queue.unschedulable) == {"default/p"}


def test_the_failure_time_is_the_last_failure():
    """p fails at 7 (arrives then); a node event at 100 that moves it but does not help (a cordoned node it would
    fit: NodeResourcesFit's hint queues it) retries it at once and it fails at 100; the flush then waits for
    100 + 300: the tick at 420 (390 - 100 = 290)."""
    s = new_scheduler([make_node("n1")])
    s.step(7)
    s.add_pods([too_big("p")])
    s.step(100)
    s.add_nodes([make_node("cordoned", cpu="16", unschedulable=True)])
    records = s.step(500)
    assert attempts_of(s.records, "default/p") == [(7, UNSCHEDULABLE), (100, UNSCHEDULABLE), (420, UNSCHEDULABLE)]
    assert attempts_of(records, "default/p") == [(100, UNSCHEDULABLE), (420, UNSCHEDULABLE)]


def test_a_node_the_pod_does_not_fit_leaves_it_pooled():
    """NodeResourcesFit's hint (isSchedulableAfterNodeChange): a node added that the pod would not fit even empty
    (1 cpu for an 8-cpu pod) does not move it; it waits for the flush after its failure at 7 (the tick at 330)."""
    s = new_scheduler([make_node("n1")])
    s.step(7)
    s.add_pods([too_big("p")])
    s.step(100)
    s.add_nodes([make_node("small", cpu="1")])
    s.step(500)
    assert attempts_of(s.records, "default/p") == [(7, UNSCHEDULABLE), (330, UNSCHEDULABLE)]


def test_records_and_clock_of_a_step_sequence():
    """Nothing before the tick; the retry is at 330 whatever the steps' ends are."""
    s = new_scheduler([make_node("n1")])
    s.add_pods([too_big("p")])
    assert attempts_of(s.step(0), "default/p") == [(0, UNSCHEDULABLE)]
    assert s.next_due() == 330.0
    assert s.step(100) == [] and s.now == 100
    assert s.step(329.999) == []
    out = s.step(330)
    assert [(r.time, r.kind, r.object) for r in out] == [(330, UNSCHEDULABLE, "default/p")] and s.now == 330
    assert s.next_due() == 660.0
    assert s.step(659) == []
    assert attempts_of(s.step(700), "default/p") == [(660, UNSCHEDULABLE)] and s.now == 700


def test_pods_move_in_queue_order():
    """Both pooled since 0: the flush takes them in PrioritySort order, the high-priority one first even though it
    arrived second."""
    s = new_scheduler([make_node("n1")])
    s.add_pods([too_big("low", priority=1)])
    s.add_pods([too_big("high", priority=10)])
    out = [r.object for r in s.step(330) if r.time == 330]
    assert out == ["default/high", "default/low"]


def test_a_gated_pod_is_not_tried():
    """Upstream skips a gated pod unless its gating plugin registered a wildcard event (SchedulingGates does not)."""
    s = new_scheduler([make_node("n1")])
    s.add_pods([make_pod("gated", cpu="100m", scheduling_gates=["g"])])
    records = s.step(1000)
    assert attempts_of(records, "default/gated") == []
    assert set(s.queue.held) == {"default/gated"} and s.next_due() is None


def nominated_blocker_scheduler() -> Scheduler:
    """n1 (2 cpu) holds x (1 cpu); nom (2 cpu, priority 1000) is nominated to n1 and cannot fit (no preemption); p
    (1 cpu, priority 0) would fit in n1's free cpu but nom's nomination reserves it: rejected by NodeResourcesFit.
    high (1.5 cpu, priority 2000) ignores nom's nomination (a higher priority) but does not fit next to x."""
    s = new_scheduler([make_node("n1", cpu="2")], [make_pod("x", cpu="1", node_name="n1", priority=0)],
                      preemption=False)
    nom = make_pod("nom", cpu="2", priority=1000)
    nom.status.nominated_node_name = "n1"
    s.add_pods([nom, make_pod("p", cpu="1", priority=0), make_pod("high", cpu="1500m", priority=2000)])
    return s


def test_deleting_a_nominated_pending_pod_wakes_the_pods_of_its_priority_or_lower():
    """Deleting the pending nominated pod frees the room its nomination held: upstream's deletePodFromSchedulingQueue
    sends AssignedPodDelete to the pooled pods of lower or equal priority (getLEPriorityPreCheck), and
    NodeResourcesFit's hint queues them (the deleted pod had a nominated node). p binds at once; high, of a higher
    priority, is left in the pool until the flush at 330 (where it fails again)."""
    s = nominated_blocker_scheduler()
    first = s.step(10)
    assert attempts_of(first, "default/p") == [(0, UNSCHEDULABLE)]
    assert attempts_of(first, "default/high") == [(0, UNSCHEDULABLE)]
    s.delete_pod("default/nom")
    out = s.step(329)
    assert [(r.time, r.kind, r.object, r.node) for r in out if r.kind == BOUND] == [(10, BOUND, "default/p", "n1")]
    assert attempts_of(out, "default/high") == []
    assert attempts_of(s.step(400), "default/high") == [(330, UNSCHEDULABLE)]


def test_run_until_idle_after_a_nominated_pod_is_deleted():
    """The same through run_until_idle: p binds at 10; the deletion is an outside change since high failed, so
    high's flush at 330 is tried (it fails again), and then nothing is left."""
    s = nominated_blocker_scheduler()
    s.step(10)
    s.delete_pod("default/nom")
    out = s.run_until_idle()
    assert [(r.time, r.kind, r.object) for r in out if r.kind in (BOUND, UNSCHEDULABLE)] == [
        (10, BOUND, "default/p"), (330, UNSCHEDULABLE, "default/high")]
    assert s.now == 330 and s.run_until_idle() == []


def test_run_until_idle_stops_before_a_futile_flush():
    """A closed cluster and a pod that never fits: with nothing since its failure, a flush would fail the same way;
    run_until_idle (and schedule) stop with the clock where it is, as without the flush."""
    s = new_scheduler([make_node("n1")])
    s.add_pods([too_big("p")])
    assert attempts_of(s.run_until_idle(), "default/p") == [(0, UNSCHEDULABLE)]
    assert s.now == 0 and s.run_until_idle() == [] and s.now == 0

    s = new_scheduler([make_node("n1")])
    s.cluster.pending = [too_big("p")]
    result = s.schedule()
    assert set(result.unschedulable) == {"default/p"} and s.now == 0


def test_run_until_idle_terminates_after_a_flush_that_fails_again():
    """q arrives after p failed (outside progress that is no event for p's rejector): the flush at 330 is tried; p
    fails again, and then it is futile: run_until_idle stops at 330."""
    s = new_scheduler([make_node("n1")])
    s.add_pods([too_big("p")])
    s.step(10)
    s.add_pods([make_pod("q", cpu="1")])
    out = s.run_until_idle()
    assert attempts_of(out, "default/q") == [(10, BOUND)]
    assert attempts_of(out, "default/p") == [(330, UNSCHEDULABLE)]
    assert s.now == 330 and s.run_until_idle() == []


def test_a_binding_is_no_progress_for_the_flush():
    """q binds after p failed: its PodBound event woke the pooled pods it may help, so a flush of p would fail again
    the same way; schedule() stays one pass (the clock at 0) while step() still does the flush at 330."""
    s = new_scheduler([make_node("n1")])
    s.add_pods([too_big("p"), make_pod("q", cpu="1")])
    out = s.run_until_idle()
    assert attempts_of(out, "default/p") == [(0, UNSCHEDULABLE)] and attempts_of(out, "default/q") == [(0, BOUND)]
    assert s.now == 0
    assert attempts_of(s.step(400), "default/p") == [(330, UNSCHEDULABLE)]


def test_a_flushed_pod_still_backing_off_waits_in_the_backoffq():
    """With podInitialBackoffSeconds 400 (and max 600) p, failed at 0, backs off until 400: the flush at 330 moves
    it to the backoffQ (upstream isPodBackingoff), and it is tried at 400."""
    config = config_from_doc({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                              "profiles": [{}], "podInitialBackoffSeconds": 400, "podMaxBackoffSeconds": 600})
    s = new_scheduler([make_node("n1")], profile=config)
    s.add_pods([too_big("p")])
    s.step(330)
    assert not s.queue.unschedulable and s.queue.next_backoff_expiry() == 400
    assert attempts_of(s.step(500), "default/p") == [(400, UNSCHEDULABLE)]


def test_a_failed_pod_group_is_retried_by_the_flush():
    """A gang of two 8-cpu members on 4-cpu nodes fails its cycle at 0; v1.36 pools its members (their FitErrors),
    so the flush brings the group's cycle back at 330 and 660."""
    s = new_scheduler([make_node("n1")], groups=[make_pod_group("g", min_count=2)])
    s.add_pods([make_pod(f"m{i}", cpu="8", pod_group="g") for i in range(2)])
    records = s.step(700)
    assert attempts_of(records, "default/m0") == [(0, UNSCHEDULABLE), (330, UNSCHEDULABLE), (660, UNSCHEDULABLE)]
    # and run_until_idle does not wait for it with nothing changed
    s = new_scheduler([make_node("n1")], groups=[make_pod_group("g", min_count=2)])
    s.add_pods([make_pod(f"m{i}", cpu="8", pod_group="g") for i in range(2)])
    s.run_until_idle()
    assert s.now == 0


def test_a_nominated_pod_deleted_does_not_wake_pods_rejected_by_pod_topology_spread():
    """PodTopologySpread's hint (isSchedulableAfterPodChange) skips a deleted pod that was on no node. nom (1 cpu)
    is nominated to n1 but fits nowhere (its node selector); p (5.5 cpu) is rejected by NodeResourcesFit on n1
    (8 cpu, 2 bound, 1 nominated); s (100m) fits there but PodTopologySpread rejects it (two web pods in z1, none in
    z2, whose only node is cordoned but still a domain). Deleting nom wakes p, which binds; s stays pooled."""
    spread = {"max_skew": 1, "topology_key": "topology.kubernetes.io/zone", "when_unsatisfiable": "DoNotSchedule",
              "label_selector": {"match_labels": {"app": "web"}}}
    nodes = [make_node("n1", cpu="8", labels={"topology.kubernetes.io/zone": "z1"}),
             make_node("n2", cpu="4", labels={"topology.kubernetes.io/zone": "z2"}, unschedulable=True)]
    bound = [make_pod(f"w{i}", cpu="1", labels={"app": "web"}, node_name="n1") for i in range(2)]
    s = new_scheduler(nodes, bound, preemption=False)
    nom = make_pod("nom", cpu="1", priority=1000, node_selector={"pool": "none"})
    nom.status.nominated_node_name = "n1"
    s.add_pods([nom, make_pod("p", cpu="5500m", priority=0),
                make_pod("s", cpu="100m", labels={"app": "web"}, spread=[spread], priority=0)])
    first = s.step(10)
    assert attempts_of(first, "default/p") == [(0, UNSCHEDULABLE)]
    assert attempts_of(first, "default/s") == [(0, UNSCHEDULABLE)]
    assert [p.name for p in s.queue.unschedulable["default/s"].plugins] == ["NodeUnschedulable", "PodTopologySpread"]
    s.delete_pod("default/nom")
    out = s.step(300)
    assert attempts_of(out, "default/p") == [(10, BOUND)]
    assert attempts_of(out, "default/s") == []
