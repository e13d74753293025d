"""Upstream kube-scheduler's unit-test vectors for the generic parts of the scheduling cycle (node sampling, the
number of feasible nodes looked for, the FitError message, selectHost, prioritizeNodes), replayed through phalanx.

Sources (kubernetes/kubernetes, v1.36 era: the test file imports k8s.io/api/scheduling/v1alpha2 and the `fwk`
package): pkg/scheduler/schedule_one_test.go (TestNumFeasibleNodesToFind, TestFairEvaluationForNodes,
TestSchedulerSchedulePod, TestSchedulerNoPhantomPodAfterDelete, TestSchedulerFailedSchedulingReasons,
Test_prioritizeNodes, Test_SelectHost) and pkg/scheduler/framework/types_test.go (TestFitError_Error). Rules taken
from upstream source are stated next to the cases that use them: pkg/scheduler/schedule_one.go (schedulePod: one
feasible node is taken without scoring and EvaluatedNodes = 1 + len(NodeToStatus); findNodesThatFitPod:
nextStartNodeIndex advances by len(feasible) + len(NodeToStatus), modulo all nodes; findNodesThatPassFilters: a
profile with no Score plugin (and no extender) looks for one feasible node) and pkg/scheduler/framework/types.go
(FitError.Error: absent nodes report the absent status's reasons).

Each case is upstream's data, its id naming the upstream test and case; nothing expected here was computed by
phalanx. Upstream's fake test plugins are replaced by real plugins only where the real plugin gives the same outcome
(TrueFilter: NodeUnschedulable on schedulable nodes; EqualPrioritizerPlugin: ImageLocality for a pod without images,
0 on every node; a PreFilter returning NodeNames: NodeAffinity's PreFilter for a matchFields metadata.name term).
Upstream picks among equal totals at random (Randomizer); phalanx takes the lowest node index, so a case whose
`wantNodes` has several nodes checks that phalanx's node is one of them.

Left out (phalanx has no counterpart, or the case needs a fake plugin whose outcome no real plugin gives):
- TestSchedulerMultipleProfilesScheduling, TestSchedulerGuaranteeNonNilNodeInSchedulingCycle: FakeNodeSelector /
  FakeNodeSelectorDependOnPodAnnotation plugins (profiles by schedulerName are tests/test_config.py's).
- TestSchedulerScheduleOne, TestScheduleOneMarksPodAsProcessedBeforePreBind, the binding-cycle tests (fake Reserve /
  Permit / PreBind / PreBindPreFlight plugins, API dispatcher, events), TestSchedulerBinding (extenders),
  TestUpdatePodStatus (pod status patches: phalanx does not write pods), TestEvaluateNominatedNode (placements'
  snapshot API).
- TestSchedulerWithVolumeBinding and the PVC cases of TestSchedulerSchedulePod: VolumeBinding is not modelled.
- TestSchedulerSchedulePod cases "test 1" .. "test 8", "test error with priority map", the FakeFilter / FakePreFilter
  status cases, "test prefilter plugin returning node" / "non-intersecting nodes" / "empty node set" (two PreFilter
  results intersected, or a Success with no node: no real plugin does that), "test prefilter plugin returning
  skip", "test all prescore plugins return skip", "test with extender ...": fake plugins or extenders.
- TestFindFitAllError, TestFindFitSomeError: MatchFilter (pod name = node name) with the fake reason; no real plugin
  gives that outcome (NodeName is not modelled; NodeAffinity pins report through PreFilter instead).
- TestFindFitPredicateCallCounts, TestPreferNominatedNodeFilterCallCounts: Filter call counts are not observable.
- TestFindNodesThatPassExtenders and Test_prioritizeNodes' extender case: extenders are not modelled.
- Test_prioritizeNodes "plugin which returned skip ..." / "all score plugins are skipped": fake PreScore plugin.
"""
from __future__ import annotations

import numpy as np
import pytest

from phalanx.cluster_models import ClusterObjects
from phalanx.kernels.select import num_feasible_nodes_to_find, select_best
from phalanx.plugins.framework import fit_error, with_post_filter
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.config import config_from_doc
from phalanx.sched.explain import explain_pod

try:
    from tests.strategies import make_node, make_pod
except ImportError:  # rootdir not on sys.path: tests/ itself is (pytest prepend import mode)
    from strategies import make_node, make_pod

HOSTNAME = "kubernetes.io/hostname"
MB = 1024 * 1024
DEFAULT_MEMORY_REQUEST = 200 * MB           # schedutil.DefaultMemoryRequest


# ------------------------------------------------------------------------------------------------ harness
def config(points: dict, top: dict | None = None, profile: dict | None = None):
    """A configuration whose only profile runs PrioritySort, DefaultBinder and `points` (extension point -> plugin
    names), as upstream's tf.NewFramework registers exactly the plugins a case names."""
    doc = {"kind": "KubeSchedulerConfiguration", **(top or {}), "profiles": [{
        **(profile or {}),
        "plugins": {"multiPoint": {"disabled": [{"name": "*"}],
                                   "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}]},
                    **{point: {"enabled": [{"name": p} for p in plugins]} for point, plugins in points.items()}}}]}
    return config_from_doc(doc)


def scheduler(nodes, bound, points, pending=(), top=None) -> Scheduler:
    cluster = Cluster.from_objects(ClusterObjects(nodes=list(nodes), pods=[*bound, *pending]))
    return Scheduler(cluster, config(points, top))


def plain_node(name: str, labels: dict | None = None):
    """metav1.ObjectMeta{Name, Labels}: no allocatable at all (the plugins of these cases read none)."""
    return make_node(name, cpu=None, memory=None, pods=None, hostname_label=False, labels=labels)


def host_node(name: str, hostname: str | None = None):
    """TestSchedulerSchedulePod's nodes: labelled kubernetes.io/hostname (the node's name unless given)."""
    return plain_node(name, {HOSTNAME: hostname or name})


def empty_pod(name: str, **kw):
    """st.MakePod().Name(name): no containers, no requests."""
    return make_pod(name, containers=[], **kw)


# ------------------------------------------------------------------------------------------------ TestNumFeasibleNodesToFind
# (name, globalPercentage (0: unset), profilePercentage (None: unset), numAllNodes, wantNumNodes)
NUM_FEASIBLE = [
    ("not set percentageOfNodesToScore and nodes number not more than 50", 0, None, 10, 10),
    ("set profile percentageOfNodesToScore and nodes number not more than 50", 0, 40, 10, 10),
    ("not set percentageOfNodesToScore and nodes number more than 50", 0, None, 1000, 420),
    ("set profile percentageOfNodesToScore and nodes number more than 50", 0, 40, 1000, 400),
    ("set global and profile percentageOfNodesToScore and nodes number more than 50", 100, 40, 1000, 400),
    ("set global percentageOfNodesToScore and nodes number more than 50", 40, None, 1000, 400),
    ("not set profile percentageOfNodesToScore and nodes number more than 50*125", 0, None, 6000, 300),
    ("set profile percentageOfNodesToScore and nodes number more than 50*125", 0, 40, 6000, 2400),
]


@pytest.mark.parametrize("global_pct,profile_pct,n,want", [c[1:] for c in NUM_FEASIBLE],
                         ids=[f"TestNumFeasibleNodesToFind/{c[0]}" for c in NUM_FEASIBLE])
def test_num_feasible_nodes_to_find(global_pct, profile_pct, n, want):
    """The global percentage is the configuration's top-level percentageOfNodesToScore, the profile's its
    profiles[0].percentageOfNodesToScore (which wins when set); the configuration resolves them into the
    profile, and numFeasibleNodesToFind reads that."""
    top = {"percentageOfNodesToScore": global_pct} if global_pct else {}
    prof = {"percentageOfNodesToScore": profile_pct} if profile_pct is not None else {}
    doc = {"kind": "KubeSchedulerConfiguration", **top, "profiles": [prof]}
    profile = config_from_doc(doc).profiles[0]
    assert num_feasible_nodes_to_find(profile.percentage_of_nodes_to_score, n) == want


# ------------------------------------------------------------------------------------------------ TestFairEvaluationForNodes
def test_fair_evaluation_for_nodes():
    """TestFairEvaluationForNodes: 500 nodes, percentageOfNodesToScore 30 (the scheduler's, the profile leaves it
    unset), TrueFilter + EqualPrioritizerPlugin: every cycle finds nodesToFind = 150 feasible nodes and
    nextStartNodeIndex = (i+1) * nodesToFind % 500 after cycle i, for 2 * (500 / 150 + 1) cycles."""
    num_all = 500
    nodes = [plain_node(str(i)) for i in range(num_all)]
    s = scheduler(nodes, [], {"filter": ["NodeUnschedulable"], "score": ["ImageLocality"]},
                  top={"percentageOfNodesToScore": 30})
    nodes_to_find = num_feasible_nodes_to_find(s.profile.percentage_of_nodes_to_score, num_all)
    assert nodes_to_find == 150
    for i in range(2 * (num_all // nodes_to_find + 1)):
        s.add_pods([empty_pod(f"p{i}")])
        s.schedule()
        assert s.next_start == (i + 1) * nodes_to_find % num_all


# ------------------------------------------------------------------------------------------------ TestSchedulerSchedulePod
def _spread(max_skew: int) -> dict:
    """SpreadConstraint(maxSkew, kubernetes.io/hostname, DoNotSchedule, {foo Exists})."""
    return {"max_skew": max_skew, "topology_key": HOSTNAME, "when_unsatisfiable": "DoNotSchedule",
            "label_selector": {"match_expressions": [{"key": "foo", "operator": "Exists"}]}}


def _bound(name: str, node: str):
    return empty_pod(name, labels={"foo": ""}, node_name=node, phase="Running")


def _pins(*names: str) -> list:
    """Required node-affinity terms each pinning metadata.name In [name] (every term pins: NodeAffinity's PreFilter
    returns their union as PreFilterResult.NodeNames)."""
    return [{"match_fields": [{"key": "metadata.name", "operator": "In", "values": [name]}]} for name in names]


# (name, nodes, bound pods, pod, extension points, wantNodes, wantEvaluatedNodes or None (= all nodes), wErr text)
SCHEDULE_POD = [
    ("test podtopologyspread plugin - 2 nodes with maxskew=1",
     [host_node("node1"), host_node("node2")], [_bound("pod1", "node1")],
     empty_pod("p", labels={"foo": ""}, spread=[_spread(1)]),
     {"preFilter": ["PodTopologySpread"], "filter": ["PodTopologySpread"]}, {"node2"}, None, None),
    # EqualPrioritizerPlugin -> ImageLocality (0 on every node for a pod without images).
    ("test podtopologyspread plugin - 3 nodes with maxskew=2",
     [host_node("node1"), host_node("node2"), host_node("node3")],
     [_bound("pod1a", "node1"), _bound("pod1b", "node1"), _bound("pod2", "node2")],
     empty_pod("p", labels={"foo": ""}, spread=[_spread(2)]),
     {"preFilter": ["PodTopologySpread"], "filter": ["PodTopologySpread"], "score": ["ImageLocality"]},
     {"node2", "node3"}, None, None),
    # TrueFilter -> NodeUnschedulable (every node is schedulable).
    ("test without score plugin no extra nodes are evaluated",
     [host_node("node1"), host_node("node2"), host_node("node3")], [], empty_pod("pod1"),
     {"filter": ["NodeUnschedulable"]}, {"node1", "node2", "node3"}, 1, None),
    # FakePreFilter returning NodeNames {node1, node2} -> NodeAffinity's PreFilter alone (its Filter not enabled).
    ("test no score plugin, prefilter plugin returning 2 nodes",
     [host_node("node1"), host_node("node2"), host_node("node3")], [],
     empty_pod("test-prefilter", required_terms=_pins("node1", "node2")),
     {"preFilter": ["NodeAffinity"]}, {"node1", "node2"}, 1, None),
    # FakePreFilter {node2} + FakeFilter failing node2 -> NodeAffinity pinning node2 + NodeUnschedulable with node2
    # cordoned. Expected by FitError.Error's rule: node1, absent from NodeToStatus, reports the absent status
    # "node(s) didn't satisfy plugin(s) [<the PreFilter plugin>]"; node2 its Filter's reason.
    ("test some nodes are filtered out by prefilter plugin and other are filtered out by filter plugin",
     [host_node("node1"), make_node("node2", cpu=None, memory=None, pods=None, unschedulable=True)], [],
     empty_pod("test-prefilter", required_terms=_pins("node2")),
     {"preFilter": ["NodeAffinity"], "filter": ["NodeUnschedulable"]}, None, None,
     "0/2 nodes are available: 1 node(s) didn't satisfy plugin(s) [NodeAffinity], 1 node(s) were unschedulable."),
    # FakePreFilter returning an unknown node + TrueFilter -> NodeAffinity pinning "invalid-node".
    ("test prefilter plugin returned an invalid node",
     [host_node("1"), host_node("2")], [], empty_pod("test-prefilter", required_terms=_pins("invalid-node")),
     {"preFilter": ["NodeAffinity"], "filter": ["NodeUnschedulable"]}, None, None,
     "0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [NodeAffinity]."),
]


@pytest.mark.parametrize("nodes,bound,pod,points,want_nodes,want_evaluated,want_err", [c[1:] for c in SCHEDULE_POD],
                         ids=[f"TestSchedulerSchedulePod/{c[0]}" for c in SCHEDULE_POD])
def test_scheduler_schedule_pod(nodes, bound, pod, points, want_nodes, want_evaluated, want_err):
    """One cycle from nextStartNodeIndex 0. wantEvaluatedNodes is checked through nextStartNodeIndex: a cycle that
    schedules the pod advances it by len(feasible) + len(NodeToStatus), which is EvaluatedNodes (schedulePod)."""
    s = scheduler(nodes, bound, points, pending=[pod])
    result = s.schedule()
    if want_err is not None:
        assert result.unschedulable == {pod.key: want_err}
        return
    assert result.bindings[pod.key] in want_nodes
    evaluated = len(nodes) if want_evaluated is None else want_evaluated
    assert s.next_start == evaluated % len(nodes)


def test_without_score_plugin_each_cycle_takes_the_next_feasible_node():
    """TestSchedulerSchedulePod "test without score plugin no extra nodes are evaluated", cycle after cycle: each
    evaluates one node (EvaluatedNodes 1), so nextStartNodeIndex moves by one, and phalanx, which visits nodes in
    ring order from nextStartNodeIndex (docs/semantics.md, node sampling), takes the next node each time."""
    nodes = [host_node("node1"), host_node("node2"), host_node("node3")]
    s = scheduler(nodes, [], {"filter": ["NodeUnschedulable"]})
    for i in range(4):
        s.add_pods([empty_pod(f"pod{i}")])
        s.schedule()
        assert s.next_start == (i + 1) % 3
    bindings = {key: s.cluster.tensors.nodes.names[s.cluster.tensors.node_of(key)] for key in
                ("default/pod0", "default/pod1", "default/pod2", "default/pod3")}
    assert bindings == {"default/pod0": "node1", "default/pod1": "node2", "default/pod2": "node3",
                        "default/pod3": "node1"}


# ------------------------------------------------------------------------------------------------ NodePorts / NodeResourcesFit
def test_scheduler_no_phantom_pod_after_delete():
    """TestSchedulerNoPhantomPodAfterDelete: foo (host port 8080) is bound to node1; bar (host port 8080) fails
    with NodePorts' reason; once foo is deleted, bar is bound to node1."""
    first = make_pod("foo", containers=[{}], host_ports=[(8080, "TCP", "")])
    s = scheduler([plain_node("node1")], [], {"preFilter": ["NodePorts"], "filter": ["NodePorts"]}, pending=[first])
    assert s.schedule().bindings == {"default/foo": "node1"}
    second = make_pod("bar", containers=[{}], host_ports=[(8080, "TCP", "")])
    s.add_pods([second])
    assert s.schedule().unschedulable == {
        "default/bar": "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports."}
    s.delete_pod("default/foo")
    s.run_until_idle()
    assert s.cluster.tensors.nodes.names[s.cluster.tensors.node_of("default/bar")] == "node1"


def test_scheduler_failed_scheduling_reasons():
    """TestSchedulerFailedSchedulingReasons: 100 nodes of cpu 2, memory 100, pods 10; a pod requesting cpu 4 and
    memory 500 (limits the same): every node UnschedulableAndUnresolvable with "Insufficient cpu" and "Insufficient
    memory" from NodeResourcesFit, rolled up into a message shorter than 150 characters."""
    nodes = [make_node(f"node{i}", cpu="2", memory="100", pods="10", hostname_label=False) for i in range(100)]
    pod = make_pod("bar", cpu="4", memory="500")
    s = scheduler(nodes, [], {"preFilter": ["NodeResourcesFit"], "filter": ["NodeResourcesFit"]}, pending=[pod])
    message = s.schedule().unschedulable["default/bar"]
    assert message == "0/100 nodes are available: 100 Insufficient cpu, 100 Insufficient memory."
    assert len(message) <= 150
    report = explain_pod(s, pod)
    assert {n["filters"]["NodeResourcesFit"]["status"] for n in report["nodes"]} == {"UnschedulableAndUnresolvable"}


# ------------------------------------------------------------------------------------------------ Test_prioritizeNodes
def _image_node(name: str, images):
    """makeNode(name, 1000 milli-cpu, DefaultMemoryRequest * 10, images...): pods 100."""
    return make_node(name, cpu="1000m", memory=str(DEFAULT_MEMORY_REQUEST * 10), pods=100, hostname_label=False,
                     images=images)


IMAGE_STATUS_1 = [(["gcr.io/40:latest", "gcr.io/40:v1"], 80 * MB), (["gcr.io/300:latest", "gcr.io/300:v1"], 300 * MB)]
IMAGE_STATUS_2 = [(["gcr.io/300:latest"], 300 * MB), (["gcr.io/40:latest", "gcr.io/40:v1"], 80 * MB)]
IMAGE_STATUS_3 = [(["gcr.io/600:latest"], 600 * MB), (["gcr.io/40:latest"], 80 * MB), (["gcr.io/900:latest"], 900 * MB)]
IMAGE_NODES = [("node1", IMAGE_STATUS_1), ("node2", IMAGE_STATUS_2), ("node3", IMAGE_STATUS_3)]

PRIORITIZE = [
    ("the score from Image Locality plugin with image in all nodes", "gcr.io/40",
     {"node1": 5, "node2": 5, "node3": 5}),
    ("the score from Image Locality plugin with image in partial nodes", "gcr.io/300",
     {"node1": 18, "node2": 18, "node3": 0}),
]


@pytest.mark.parametrize("image,want", [c[1:] for c in PRIORITIZE],
                         ids=[f"Test_prioritizeNodes/{c[0]}" for c in PRIORITIZE])
def test_prioritize_nodes_image_locality(image, want):
    """ImageLocality registered at Score with weight 1: NodePluginScores per node (TotalScore = the score)."""
    nodes = [_image_node(name, images) for name, images in IMAGE_NODES]
    s = scheduler(nodes, [], {"score": ["ImageLocality"]})
    report = explain_pod(s, make_pod("p", containers=[{}], images=[image]))
    assert {n["name"]: n["scores"]["ImageLocality"]["normalized"] for n in report["nodes"]} == want
    assert {n["name"]: n["total"] for n in report["nodes"]} == want


def test_prioritize_nodes_balanced_allocation_of_an_empty_pod():
    """Test_prioritizeNodes "the score from all plugins should be recorded in PluginToNodeScores" (the
    NodeResourcesBalancedAllocation part; Node2Prioritizer is a fake plugin): BalancedAllocation registered at Score
    alone (its PreScore not run) scores &v1.Pod{} 0 on both nodes."""
    nodes = [_image_node("node1", ()), _image_node("node2", ())]
    s = scheduler(nodes, [], {"score": ["NodeResourcesBalancedAllocation"]})
    report = explain_pod(s, empty_pod("p"))
    assert {n["name"]: n["scores"]["NodeResourcesBalancedAllocation"]["normalized"] for n in report["nodes"]} == {
        "node1": 0, "node2": 0}


# ------------------------------------------------------------------------------------------------ Test_SelectHost
# (name, [(node, TotalScore)], the nodes upstream may pop first: the highest total; among equal totals upstream
# pops the highest Randomizer, phalanx the lowest node index)
SELECT_HOST = [
    ("unique properly ordered scores", [("node1", 1), ("node2", 2)], {"node2"}),
    ("equal scores", [("node2.2", 2), ("node2.1", 2), ("node2.3", 2)], {"node2.1", "node2.2", "node2.3"}),
    ("out of order scores", [("node3.1", 3), ("node2.1", 2), ("node1.1", 1), ("node3.2", 3)], {"node3.1", "node3.2"}),
]


@pytest.mark.parametrize("scores,first", [c[1:] for c in SELECT_HOST], ids=[f"Test_SelectHost/{c[0]}" for c in SELECT_HOST])
def test_select_host(scores, first):
    """The first node popped from the sorted scores (newSortedNodeScores(list).Pop()) is the selected host."""
    names = [name for name, _ in scores]
    total = np.array([score for _, score in scores], np.int64)
    best = int(select_best(np, total, np.ones(len(scores), bool), np.arange(len(scores))))
    assert names[best] in first


# ------------------------------------------------------------------------------------------------ TestFitError_Error
def _histogram(statuses: list[str]) -> dict[str, int]:
    """The explicit nodes' reasons counted (every node of these cases is explicit: NumAllNodes nodes)."""
    out: dict[str, int] = {}
    for reason in statuses:
        out[reason] = out.get(reason, 0) + 1
    return out


PRE = "Node(s) failed PreFilter plugin FalsePreFilter"
F1, F2 = "Node(s) failed Filter plugin FalseFilter-1", "Node(s) failed Filter plugin FalseFilter-2"
POST = "Error running PostFilter plugin FailedPostFilter"
# (name, numAllNodes, PreFilterMsg, each node's one reason, PostFilterMsg, wantReasonMsg)
FIT_ERROR = [
    ("nodes failed Prefilter plugin", 3, PRE, [PRE] * 3, "",
     "0/3 nodes are available: Node(s) failed PreFilter plugin FalsePreFilter."),
    ("nodes failed Prefilter plugin and the preemption also failed", 3, PRE, [PRE] * 3, POST,
     "0/3 nodes are available: Node(s) failed PreFilter plugin FalsePreFilter. Error running PostFilter plugin "
     "FailedPostFilter"),
    ("nodes failed one Filter plugin with an empty PostFilterMsg", 3, "", [F1] * 3, "",
     "0/3 nodes are available: 3 Node(s) failed Filter plugin FalseFilter-1."),
    ("nodes failed one Filter plugin with a non-empty PostFilterMsg", 3, "", [F1] * 3, POST,
     "0/3 nodes are available: 3 Node(s) failed Filter plugin FalseFilter-1. Error running PostFilter plugin "
     "FailedPostFilter"),
    ("nodes failed two Filter plugins with an empty PostFilterMsg", 3, "", [F1, F1, F2], "",
     "0/3 nodes are available: 1 Node(s) failed Filter plugin FalseFilter-2, 2 Node(s) failed Filter plugin "
     "FalseFilter-1."),
    ("nodes failed two Filter plugins with a non-empty PostFilterMsg", 3, "", [F1, F1, F2], POST,
     "0/3 nodes are available: 1 Node(s) failed Filter plugin FalseFilter-2, 2 Node(s) failed Filter plugin "
     "FalseFilter-1. Error running PostFilter plugin FailedPostFilter"),
    ("failed to Permit on node", 1, "", ["Node failed Permit plugin Permit-1"], "",
     "0/1 nodes are available: 1 Node failed Permit plugin Permit-1."),
    ("failed to Reserve on node", 1, "", ["Node failed Reserve plugin Reserve-1"], "",
     "0/1 nodes are available: 1 Node failed Reserve plugin Reserve-1."),
]


@pytest.mark.parametrize("n,pre,reasons,post,want", [c[1:] for c in FIT_ERROR],
                         ids=[f"TestFitError_Error/{c[0]}" for c in FIT_ERROR])
def test_fit_error_message(n, pre, reasons, post, want):
    """phalanx formats FitError.Error() from the reason histogram (sched/messages.py counts it from the Filter
    payloads) and the PreFilter message; the PostFilter plugins' message follows (sched/placement.py)."""
    assert with_post_filter(fit_error(n, _histogram(reasons), pre or None), post) == want
