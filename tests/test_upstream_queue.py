"""Upstream kube-scheduler's scheduling-queue unit-test vectors, replayed through phalanx's Scheduler on its clock.

Sources (kubernetes/kubernetes, v1.35/v1.36 era: the files import `fwk "k8s.io/kube-scheduler/framework"`, have
the podBackoffQ / podErrorBackoffQ pair and the SchedulerPopFromBackoffQ gate, Beta and on by default since 1.33,
and no queue of PodGroups, which is post-1.36): pkg/scheduler/backend/queue/scheduling_queue_test.go and
backoff_queue_test.go. Rules taken from upstream source are stated next to the cases that use them:
backoff_queue.go (calculateBackoffDuration: initial << (attempts-1), capped, 0 without attempts; getBackoffTime:
the expiry is truncated to the 1 s ordering window; isPodBackingoff: backing off while the expiry is not before the
current window; popBackoff: with SchedulerPopFromBackoffQ the activeQ pops the podBackoffQ's head when it is empty,
never the podErrorBackoffQ's), scheduling_queue.go (AddUnschedulableIfNotPresent refreshes the pod's Timestamp,
which PrioritySort orders by after priority; a pod with no rejector plugin goes to the backoffQ at once;
flushUnschedulablePodsLeftover moves pods pooled for longer than podMaxInUnschedulablePodsDuration, 5 min, every
30 s).

Upstream's fake plugins are replaced by real ones that reject the pod the same way: "fooPlugin" registering NodeAdd
is NodeResourcesFit (a pod too big for every node), a plugin that does not register the event is NodeAffinity (a
nodeSelector no node matches; it registers node events, not pod deletions), queueHintReturnQueue / Skip are
InterPodAffinity's and PodTopologySpread's v1.36 hints for a bound pod that does / does not match. Each test's id
names the upstream test and case; expected values are upstream's, never phalanx's output. Where phalanx differs,
the test is a strict xfail naming the phalanx function, and docs/semantics.md ("Queueing hints", "Backoff and the
queue against v1.36") says why.

Left out (no counterpart in phalanx's model):
- Test_InFlightPods, TestPriorityQueue_AddUnschedulableIfNotPresent_Backoff, TestPriorityQueue_UpdateWhenInflight,
  the in-flight cases of TestPriorityQueue_Update / TestPriorityQueue_Activate: events received while a pod is being
  scheduled (phalanx's cycles take no time, so no event is ever in flight).
- TestPriorityQueue_Update, Test_queuedPodInfo_gatedSetUponCreationAndUnsetUponUpdate, TestPriorityQueue_moveToActiveQ
  / moveToBackoffQ's Update steps: pod updates (pods are immutable in phalanx; a gate is never lifted).
- TestPriorityQueue_Activate, TestPriorityQueue_MovePodsToActiveOrBackoffQueueForGangScheduling (ForceActivate and
  the v1.35 GangScheduling requeue), PendingPlugins / queueImmediately (Test_isPodWorthRequeuing, TestPop): no
  phalanx plugin returns Pending.
- Nominator internals (TestPriorityQueue_NominatedPodsForNode, NominatedPodDeleted, UpdateNominatedPodForNode),
  metrics (TestPendingPodsMetric, TestPerPodSchedulingMetrics, TestIncomingPodsMetrics,
  TestFlushUnschedulablePodsLeftoverSetsFlag), TestSchedulingQueue_Close, TestPriorityQueue_GetPod,
  BenchmarkMoveAllToActiveOrBackoffQueue, Test_isPodWorthRequeuing's wildcard / event-matching table (upstream's
  event registry; phalanx's coarser events are docs/semantics.md's "Queueing hints").
"""
from __future__ import annotations

import pytest

from phalanx.cluster_models import ClusterObjects
from phalanx.sched import DEFAULT_PROFILE, Cluster, Scheduler
from phalanx.sched.config import config_from_doc
from phalanx.sched.queue import SchedulingQueue, backoff_s
from phalanx.sched.records import BOUND, UNSCHEDULABLE

try:
    from tests.strategies import make_node, make_pod
except ImportError:  # rootdir not on sys.path: tests/ itself is (pytest prepend import mode)
    from strategies import make_node, make_pod

NS = 1e-9
MAX_INT32, MAX_INT64 = 2**31 - 1, 2**63 - 1
# scheduling_queue_test.go's priorities: lowPriority, midPriority, highPriority, mediumPriority = (low + high) / 2.
LOW, MID, HIGH, MEDIUM = 0, 100, 1000, 500
AFFINITY_SERVICE = {"pod_affinity": {"required_during_scheduling_ignored_during_execution": [
    {"label_selector": {"match_expressions": [{"key": "service", "operator": "Exists"}]}, "topology_key": "region"}]}}


# v1.36's default: SchedulerPopFromBackoffQ on (phalanx's default is off: docs/semantics.md).
POP_FROM_BACKOFF = config_from_doc({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                                    "profiles": [{}], "featureGates": {"SchedulerPopFromBackoffQ": True}})


def new_scheduler(nodes, pods=(), profile=DEFAULT_PROFILE) -> Scheduler:
    objects = ClusterObjects(nodes=list(nodes), pods=list(pods), priority_classes=[], warnings=[], workloads=[],
                             pod_groups=[])
    return Scheduler(Cluster.from_objects(objects), profile)


def attempts_of(records, key: str) -> list[tuple[float, str]]:
    """(time, kind) of every attempt's outcome for the pod: when it was tried, and how it ended."""
    return [(r.time, r.kind) for r in records if r.object == key and r.kind in (BOUND, UNSCHEDULABLE)]


def bound_order(records) -> list[str]:
    return [r.object for r in records if r.kind == BOUND]


def too_big(name, **kw):
    """Rejected by NodeResourcesFit on 4-cpu nodes (upstream's "fooPlugin" that registers NodeAdd)."""
    return make_pod(name, cpu="8", **kw)


# -- backoff durations ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("initial, maximum, attempts, want", [
    pytest.param(1 * NS, 32 * NS, 0, 0.0, id="TestBackoffQueue_calculateBackoffDuration/no backoff"),
    pytest.param(1 * NS, 32 * NS, 16, 32 * NS, id="TestBackoffQueue_calculateBackoffDuration/normal"),
    pytest.param(1 * NS, MAX_INT32 * NS, 32, MAX_INT32 * NS, id="TestBackoffQueue_calculateBackoffDuration/overflow_32bit"),
    pytest.param(1 * NS, MAX_INT64 * NS, 64, MAX_INT64 * NS, id="TestBackoffQueue_calculateBackoffDuration/overflow_64bit"),
])
def test_calculate_backoff_duration(initial, maximum, attempts, want):
    assert backoff_s(attempts, initial, maximum) == want
    assert SchedulingQueue(initial, maximum).backoff(attempts) == want


def test_backoff_per_attempt_doubles_from_one_to_ten_seconds():
    """TestBackOffFlow's steps (1, 2, 4, 8, 10, 10, 10 s), as the time between a failure and the retry that a
    cluster event right after it brings (phalanx keeps the backoff where v1.36's SchedulerPopFromBackoffQ would pop
    the pod at once from an empty activeQ: test_pop_from_backoffq_when_the_activeq_is_empty). The failures are at whole seconds and the retries come at
    the end of the backoff; upstream's 1 s ordering window moves them to the next window
    (test_backoff_ends_in_the_next_ordering_window)."""
    want = [1, 2, 4, 8, 10, 10, 10]
    s = new_scheduler([make_node("n1")])
    s.add_pods([too_big("p")])
    s.step(0)
    failures = [0.0]
    for i in range(len(want)):
        # Right after the failure (the clock is at it): NodeAdd, which NodeResourcesFit registered, moves p to the
        # backoffQ (a node it would fit: the plugin's hint queues it; cordoned, so that p fails again); the
        # scheduler's next timer is the end of that backoff.
        s.add_nodes([make_node(f"cordoned{i}", cpu="16", unschedulable=True)])
        s.step(s.next_due())
        failures.append(attempts_of(s.records, "default/p")[-1][0])
    assert [b - a for a, b in zip(failures, failures[1:])] == want


def test_backoff_options_from_the_configuration():
    """TestPriorityQueue_NewWithOptions: podInitialBackoffSeconds 2, podMaxBackoffSeconds 20."""
    config = config_from_doc({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                              "profiles": [{}], "podInitialBackoffSeconds": 2, "podMaxBackoffSeconds": 20})
    s = new_scheduler([make_node("n1")], profile=config)
    assert [s.queue.backoff(k) for k in (1, 2, 3, 4, 5, 6)] == [2, 4, 8, 16, 20, 20]


def test_pop_from_backoffq_when_the_activeq_is_empty():
    """TestPriorityQueue_Pop "Pop pods from both activeQ and backoffQ when PopFromBackoffQ is enabled", and
    TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint "Queue queues pod to backoffQ if Pod is
    backing off": p fails at 0; a node it fits on arrives at 0.5, inside its 1 s backoff, so it goes to the
    backoffQ; nothing else is queued, so the next Pop takes it from there: bound at 0.5. With the gate off (phalanx's
    default) p waits for the end of its backoff, at 1."""
    for profile, want in ((POP_FROM_BACKOFF, [(0.5, BOUND)]), (DEFAULT_PROFILE, [(1.0, BOUND)])):
        s = new_scheduler([make_node("n1")], profile=profile)
        s.add_pods([too_big("p")])
        s.step(0.5)
        s.add_nodes([make_node("big", cpu="16")])
        assert attempts_of(s.step(5), "default/p") == want


def test_backoffq_pops_by_window_then_priority():
    """Rule (backoff_queue.go lessBackoffCompletedWithPriority, getBackoffTime): with SchedulerPopFromBackoffQ the
    backoffQ orders pods whose backoff ends in the same 1 s window as the activeQ would (priority first), and an
    earlier window before a higher priority. low fails at 0.2 and high at 0.7 (both end in window 1, so both are
    ready at 2); mid fails at 1.1 (ready at 3); a node they all fit on arrives at 1.5, while all three back off: the
    empty activeQ pops high, low, mid from the backoffQ. Without the gate they leave by the end of their backoff:
    low (1.2), high (1.7), mid (2.1)."""
    for profile, want in ((POP_FROM_BACKOFF, ["high", "low", "mid"]), (DEFAULT_PROFILE, ["low", "high", "mid"])):
        s = new_scheduler([make_node("n1")], profile=profile)
        for name, at, prio in (("low", 0.2, LOW), ("high", 0.7, HIGH), ("mid", 1.1, MID)):
            s.step(at)
            s.add_pods([too_big(name, priority=prio)])
        s.step(1.5)
        s.add_nodes([make_node("big", cpu="64")])
        assert bound_order(s.step(5)) == [f"default/{n}" for n in want]


def test_backoff_ends_in_the_next_ordering_window():
    """TestBackOffFlow step 0 ("Still in backoff queue after an early flush": one window after the failure) and
    TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint "Queue queues pod to activeQ if Pod is not
    backing off" ("waiting for DefaultPodInitialBackoffDuration isn't enough, need to wait for +1"): a pod failing at
    0 is still backing off at 1.0 and done at 2.0. Observed through a pod that failed with an error (no rejector
    plugin): it waits in the podErrorBackoffQ, which SchedulerPopFromBackoffQ never pops early, so a node event
    is not needed and the activeQ being empty does not matter: tried at 0, 2 (expiry trunc(0 + 1) = 1, done once
    the window is past 1) and 5 (failure at 2, 2 s: expiry 4). Without the gate (phalanx's default) there are no
    windows: 0, 1, 3."""
    for profile, want in ((POP_FROM_BACKOFF, [0, 2, 5]), (DEFAULT_PROFILE, [0, 1, 3])):
        s = new_scheduler([make_node("n1"), make_node("n2")], profile=profile)
        s.add_pods([error_pod("e")])
        assert [t for t, _ in attempts_of(s.step(5.5), "default/e")] == want


def error_pod(name):
    """Fails with an error on two feasible nodes: NodeAffinity's PreScore cannot parse a preferred term's Gt value."""
    return make_pod(name, cpu="100m",
                    preferred_terms=[(1, {"match_expressions": [{"key": "gen", "operator": "Gt", "values": ["x"]}]})])


def test_pod_that_failed_with_an_error_is_retried_after_backoff():
    """Test_InFlightPods "pod is enqueued to backoff if no failed plugin" and TestPriorityQueue_MoveAllToActiveOrBackoffQueue
    ("This Pod will go to backoffQ because no failure plugin is associated with it"): no cluster event at all, yet
    the pod is tried again (the time of the retry is test_backoff_ends_in_the_next_ordering_window's)."""
    s = new_scheduler([make_node("n1"), make_node("n2")])
    s.add_pods([error_pod("e")])
    assert len(attempts_of(s.step(30), "default/e")) > 1


def test_run_until_idle_stops_before_a_retry_that_would_fail_again():
    """phalanx's own rule (upstream runs for ever): run_until_idle does not step to an error backoffQ retry when
    nothing happened since the failure (the retry would fail the same way), so it returns after the first attempt;
    after a node arrives (no event wakes the pod: it waits for its backoff) the retry at 1 s runs, then it stops
    again. step() keeps retrying: 0, 1, 3, 7, 15 (backoff 1, 2, 4, 8 s)."""
    s = new_scheduler([make_node("n1"), make_node("n2")])
    s.add_pods([error_pod("e")])
    assert attempts_of(s.run_until_idle(), "default/e") == [(0, UNSCHEDULABLE)]
    s.add_nodes([make_node("n3")])
    assert attempts_of(s.run_until_idle(), "default/e") == [(1, UNSCHEDULABLE)]
    s = new_scheduler([make_node("n1"), make_node("n2")])
    s.add_pods([error_pod("e")])
    assert [t for t, _ in attempts_of(s.step(20), "default/e")] == [0, 1, 3, 7, 15]


# -- activeQ order ------------------------------------------------------------------------------------------------
def test_activeq_pops_by_priority():
    """TestPriorityQueue_Add / TestPriorityQueue_AddWithReversePriorityLessFunc: added mpp (medium), up (low), hpp
    (high); popped hpp, mpp, up. One node holds them all, so each binds when popped, in that order."""
    s = new_scheduler([make_node("n1")])
    s.add_pods([make_pod("mpp", cpu="1", priority=MEDIUM), make_pod("up", cpu="1", priority=LOW),
                make_pod("hpp", cpu="1", priority=HIGH)])
    assert bound_order(s.step(0)) == ["default/hpp", "default/mpp", "default/up"]


def test_activeq_pops_one_priority_by_timestamp():
    """TestPodTimestamp "add two pod to activeQ and sort them by the timestamp": pInfo1 (earlier) before pInfo2.
    Only one of them fits, so the order decides which binds."""
    s = new_scheduler([make_node("n1", cpu="1")])
    s.add_pods([make_pod("p1", cpu="1")])
    s.add_pods([make_pod("p2", cpu="1")])
    assert bound_order(s.step(0)) == ["default/p1"]


def test_high_priority_pod_backing_off_does_not_block_others():
    """TestHighPriorityBackoff: highPod is popped first and fails; while it backs off, midPod is popped and binds."""
    s = new_scheduler([make_node("n1")])
    s.add_pods([make_pod("test-midpod", cpu="1", priority=MID), too_big("test-highpod", priority=HIGH)])
    records = s.step(0)
    assert attempts_of(records, "default/test-highpod") == [(0, UNSCHEDULABLE)]
    assert attempts_of(records, "default/test-midpod") == [(0, BOUND)]


def test_recently_tried_pods_go_back():
    """TestRecentlyTriedPodsGoBack / TestPodFailedSchedulingMultipleTimesDoesNotBlockNewerPod: a arrives at 0 and
    fails (NodeResourcesFit); b arrives at 1 and fails (NodeAffinity). At 2 a pod is deleted: a (its rejector
    registered pod deletions) is tried again and fails, its timestamp now 2. At 10 a node that fits either of them,
    not both, arrives and both are queued: b (timestamp 1) goes first and takes it."""
    s = new_scheduler([make_node("n1", cpu="1")])
    s.add_pods([make_pod("x", cpu="100m"), make_pod("a", cpu="2")])
    s.step(1)
    s.add_pods([make_pod("b", cpu="2", node_selector={"zone": "b"})])
    s.step(2)
    s.delete_pod("default/x")
    s.step(10)
    s.add_nodes([make_node("n2", cpu="2", labels={"zone": "b"})])
    records = s.step(20)
    assert attempts_of(s.records, "default/a")[:2] == [(0, UNSCHEDULABLE), (2, UNSCHEDULABLE)]
    assert bound_order(records) == ["default/b"]


# -- the unschedulable pool and queueing hints --------------------------------------------------------------------
def test_move_all_moves_only_pods_whose_rejector_registered_the_event():
    """TestPriorityQueue_MoveAllToActiveOrBackoffQueue (hpp2, rejected by barPlugin, "won't be moved regardless of
    its backoff timer"; the others move to the activeQ once their backoff is over). A pod deletion, which
    NodeResourcesFit registered and NodeAffinity did not: up and hpp (fit) are retried at the deletion, hpp (high
    priority) first, taking the freed cpu; hpp2 (affinity) is not."""
    # x holds n1's cpu; at hpp's priority, so that no pod here can preempt it.
    s = new_scheduler([make_node("n1", cpu="1")], [make_pod("x", cpu="1", node_name="n1", priority=HIGH)])
    s.add_pods([make_pod("up", cpu="1", priority=LOW),
                make_pod("hpp", cpu="1", priority=HIGH), make_pod("hpp2", cpu="1", node_selector={"zone": "z"})])
    s.step(5)            # every backoff over
    s.delete_pod("default/x")
    records = s.step(30)
    assert attempts_of(records, "default/hpp") == [(5, BOUND)]
    assert attempts_of(records, "default/up") == [(5, UNSCHEDULABLE)]
    assert attempts_of(records, "default/hpp2") == []


def test_unschedulable_pod_stays_without_an_event():
    """TestPriorityQueue_AddUnschedulableIfNotPresent: "unschedulablePodInfo is inserted to unschedulable pod pool
    because no events happened during scheduling": it is not tried again however long nothing happens (nothing but
    the 5 min flush would move it: test_flush_unschedulable_pods_leftover)."""
    s = new_scheduler([make_node("n1")])
    s.add_pods([too_big("up"), make_pod("hpp", cpu="1", priority=HIGH)])
    records = s.step(250)
    assert attempts_of(records, "default/up") == [(0, UNSCHEDULABLE)]
    assert attempts_of(records, "default/hpp") == [(0, BOUND)]
    assert set(s.queue.unschedulable) == {"default/up"}


# TestPriorityQueue_AssignedPodAdded_'s bound pods: one its pod-affinity and spread cases match, one unrelated.
MATCHING_BOUND = make_pod("lbp", cpu="100m", namespace="ns1", labels={"service": "securityscan"})
UNRELATED_BOUND = make_pod("lbp", cpu="100m", namespace="unrelated", labels={"unrelated": "unrelated"})


@pytest.mark.parametrize("bound_pod, requeued", [
    pytest.param(MATCHING_BOUND, True,
                 id="TestPriorityQueue_AssignedPodAdded_/Pod rejected by pod affinity is requeued with matching Pod's update"),
    pytest.param(UNRELATED_BOUND, False,
                 id="TestPriorityQueue_AssignedPodAdded_/Pod rejected by pod affinity isn't requeued with unrelated Pod's update"),
])
def test_assigned_pod_added_wakes_a_pod_rejected_by_pod_affinity(bound_pod, requeued):
    """afp (required affinity to pods with a "service" label in its region) fits nowhere. 2 s later (its backoff
    over) lbp binds: a matching pod wakes afp, which is tried at once and binds next to it; an unrelated pod does
    not (InterPodAffinity's hint says QueueSkip)."""
    s = new_scheduler([make_node("node1", labels={"region": "r1"})])
    s.add_pods([make_pod("afp", cpu="100m", namespace="ns1", pod_affinity=AFFINITY_SERVICE)])
    s.step(2)
    s.add_pods([bound_pod])
    records = s.step(30)
    assert attempts_of(records, "ns1/afp") == ([(2, BOUND)] if requeued else [])


@pytest.mark.parametrize("bound_pod, requeued", [
    pytest.param(MATCHING_BOUND, True,
                 id="TestPriorityQueue_AssignedPodAdded_/Pod rejected by pod topology spread is requeued with Pod's update in the same namespace"),
    pytest.param(UNRELATED_BOUND, False,
                 id="TestPriorityQueue_AssignedPodAdded_/Pod rejected by pod topology spread isn't requeued with unrelated Pod's update"),
])
def test_assigned_pod_added_wakes_a_pod_rejected_by_topology_spread(bound_pod, requeued):
    """tsp (DoNotSchedule on key "node", which no node has: PodTopologySpread rejects every node) is retried when a
    pod its constraint selects binds in its namespace. Upstream's case uses a fake hint returning Queue and a
    constraint with no selector; v1.36's real hint (podLabelsMatchSpreadConstraints) would skip a pod no selector
    selects, so the constraint here selects "service"."""
    spread = [{"max_skew": 1, "topology_key": "node", "when_unsatisfiable": "DoNotSchedule",
               "label_selector": {"match_expressions": [{"key": "service", "operator": "Exists"}]}}]
    s = new_scheduler([make_node("node1")])
    s.add_pods([make_pod("tsp", cpu="100m", namespace="ns1", spread=spread)])
    s.step(2)
    s.add_pods([bound_pod])
    records = s.step(30)
    assert attempts_of(records, "ns1/tsp") == ([(2, UNSCHEDULABLE)] if requeued else [])


def test_assigned_pod_added_does_not_wake_a_pod_rejected_by_other_plugins():
    """TestPriorityQueue_AssignedPodAdded_ "Pod rejected by other plugins isn't requeued with any Pod's update":
    a pod NodeAffinity rejected (it registers node events only) stays in the pool when a pod binds."""
    s = new_scheduler([make_node("node1")])
    s.add_pods([make_pod("afp", cpu="100m", namespace="ns1", node_selector={"zone": "z"})])
    s.step(2)
    s.add_pods([make_pod("lbp", cpu="100m", namespace="unrelated", labels={"unrelated": "unrelated"})])
    assert attempts_of(s.step(30), "ns1/afp") == []


def test_flush_unschedulable_pods_leftover():
    """TestHighPriorityFlushUnschedulablePodsLeftover: highPod and midPod wait for an event that never comes; after
    DefaultPodMaxInUnschedulablePodsDuration (5 min) the flush (every 30 s, so by 330 s) moves them to the activeQ,
    and highPod is popped first."""
    s = new_scheduler([make_node("n1")])
    s.add_pods([too_big("test-highpod", priority=HIGH)])
    s.add_pods([too_big("test-midpod", priority=MID)])
    s.step(299)
    records = s.step(331)
    retried = [r for r in records if r.kind == UNSCHEDULABLE]
    assert [r.object for r in retried] == ["default/test-highpod", "default/test-midpod"]
    assert all(300 < r.time <= 330 for r in retried)


# -- PreEnqueue ---------------------------------------------------------------------------------------------------
def test_gated_pod_stays_out_of_the_queue():
    """TestPriorityQueue_moveToActiveQ "preEnqueue plugin registered, pod name not in allowlists" (the pod waits in
    the unschedulable pool, never in the activeQ) and TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint
    "QueueHintFunction is not called when Pod is gated by the plugin that isn't interested in the event": a pod with
    a scheduling gate is not tried, neither on a node event (SchedulingGates registers only the pod's own update)
    nor as time passes, while an ungated pod added after it binds."""
    s = new_scheduler([make_node("n1")])
    s.add_pods([make_pod("gated", cpu="100m", scheduling_gates=["hello world"])])
    s.add_pods([make_pod("p", cpu="100m")])
    s.add_nodes([make_node("n2")])
    records = s.step(400)
    assert attempts_of(records, "default/gated") == []
    assert attempts_of(records, "default/p") == [(0, BOUND)]
    assert set(s.queue.held) == {"default/gated"}


# -- Delete -------------------------------------------------------------------------------------------------------
def test_deleted_queued_pods_are_never_tried():
    """TestPriorityQueue_Delete: the deleted pod leaves the activeQ, the other one stays and is popped. Also for a
    pod deleted from the unschedulable pool and one deleted from the backoffQ: the event that would have moved
    them, and the end of the backoff, bring nothing back."""
    s = new_scheduler([make_node("n1")])
    s.add_pods([make_pod("hpp", cpu="100m", namespace="ns1", priority=HIGH),
                make_pod("up", cpu="100m", namespace="ns1", priority=LOW)])
    s.delete_pod("ns1/hpp")
    assert [(r.object, r.kind) for r in s.step(0)] == [("ns1/up", BOUND)]

    s = new_scheduler([make_node("n1")])
    s.add_pods([too_big("pooled"), too_big("backing-off")])
    s.step(0.5)
    s.delete_pod("default/pooled")
    s.add_nodes([make_node("big", cpu="16")])       # moves backing-off to the backoffQ (until 1.0)
    s.delete_pod("default/backing-off")
    assert [r for r in s.step(30) if r.kind in (BOUND, UNSCHEDULABLE)] == []
    assert s.queue.queued_pods() == [] and not s.queue.unschedulable
