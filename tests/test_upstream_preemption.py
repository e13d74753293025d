"""Upstream kube-scheduler's own unit-test vectors for DefaultPreemption, replayed through phalanx.

Each case is upstream's, as data; its id names the upstream test function and case. Expected values are upstream's
(or follow from upstream's source by the rule stated next to the case), never phalanx's output. Sources (repository
kubernetes/kubernetes):

- pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go at 008b3652 (the version that imports
  k8s.io/api/scheduling/v1alpha2 and `fwk`, before #137981 "pod group as victim" reworked the plugin; v1.36 era):
  TestPostFilter, TestDryRunPreemption, TestSelectBestCandidate, TestPreempt, TestPodEligibleToPreemptOthers;
  the plugin itself (default_preemption.go at the same commit: PostFilter, calculateNumCandidates,
  SelectVictimsOnNode, filterPodsWithPDBViolation) for the rules stated beside some cases.
- pkg/scheduler/framework/preemption/preemption_test.go (v1.36 era, WorkloadRef/`fwk.Preemptor` version): every
  test there drives the Evaluator through fake PostFilter plugins (a SelectVictimsOnDomain that returns each node's
  first pod with a fixed violation count, OrderedScoreFuncs counting containers) or API calls (TestPrepareCandidate),
  so none of it is replayed; see LEFT_OUT.

Two tests are not upstream cases but follow from default_preemption.go / preemption.go by the rule stated beside
them (ids "(rule) ..." and test_rule_*).
Cases phalanx cannot replay are listed in LEFT_OUT at the end, each with the reason.

How upstream's harnesses map onto phalanx:
- Upstream calls PostFilter / DryRunPreemption / Preempt directly with a NodeToStatus it makes up. phalanx runs the
  pod's real cycle (PreFilter + Filter with the plugins upstream registers) and then hands the DefaultPreemption
  plugin upstream's statuses instead of the cycle's (Preemption.failed_cycle(codes=...)); a node upstream leaves out
  of the map reads UnschedulableAndUnresolvable (NewNodeToStatus's default, as upstream).
- Candidates: DefaultPreemption.candidates() gives the candidate list DryRunPreemption returns; each candidate's
  victims and PDB violations come from the dry run. Upstream's TestDryRunPreemption sorts victims and candidates by
  name before comparing, and so does this file. expectedNumFilterCalled is not compared: phalanx evaluates the
  Filters of many nodes at once (docs/semantics.md "Preemption").
- Randomness: upstream draws the scan offset from rand.New(rand.NewSource(4)).Int31n and breaks full ties at random;
  phalanx scans from `offset` deterministically and takes the first candidate (docs/semantics.md "Preemption").
  Where upstream's expectation depends on the offset, the offset its comment names (`cycle=0 => offset=4`) is passed;
  where the number of candidates is every node (default args: max(10% of n, 100) capped at n), the offset cannot
  change the candidates, and the case is run at every offset so that a tie-break phalanx makes differently cannot
  hide (TestSelectBestCandidate's "any of" expectations are checked at every offset too).
- Start times: upstream's epochTimeN is N nanoseconds after the epoch; only their order matters (MoreImportantPod,
  pickOneNodeForPreemption), so phalanx's pods start N seconds after a fixed time. Pods upstream gives no start time
  read as now, alike, in phalanx.
- st.MakeNode().Capacity(res) is `res` plus pods 32; st.MakePod().Req(res) is one container requesting `res`; a pod
  without Req has one container requesting nothing. Upstream's pods without namespace and its PDBs without namespace
  share the namespace "" there; here both are in "default" (PDBs count pods of their own namespace).
"""
from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pytest

from phalanx.cluster_models import ClusterObjects
from phalanx.cluster_models.disruption import PodDisruptionBudget
from phalanx.kernels.status import ERROR, SUCCESS, UNSCHEDULABLE, UNSCHEDULABLE_AND_UNRESOLVABLE
from phalanx.plugins.framework import PostFilterResult
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.config import config_from_doc

try:
    from tests.strategies import make_node, make_pod, make_pod_group
except ImportError:  # rootdir not on sys.path: tests/ itself is (pytest prepend import mode)
    from strategies import make_node, make_pod, make_pod_group

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}                        # TestPostFilter onePodRes
NODE_RES = {"cpu": "200m", "memory": "400"}    # TestPostFilter nodeRes
MAX_INT32 = 2**31 - 1
EPOCH = 1_700_000_000
U, UU = "Unschedulable", "UnschedulableAndUnresolvable"
CODES = {U: UNSCHEDULABLE, UU: UNSCHEDULABLE_AND_UNRESOLVABLE}

FIT = ("NodeResourcesFit",)
SPREAD = ("PodTopologySpread",)
FIT_AFFINITY = ("NodeResourcesFit", "InterPodAffinity")
PRE_FILTERS = {"NodeResourcesFit", "InterPodAffinity", "PodTopologySpread"}     # the others have no PreFilter


# ------------------------------------------------------------------------------------------------ harness
def node(name: str, res: dict | None = None, labels: dict | None = None, capacity: bool = True):
    """st.MakeNode().Name(name).Capacity(res).Label(...): `res` plus pods 32 (capacity=False: `res` alone)."""
    alloc = {"pods": "32", **(res or {})} if capacity else dict(res or {})
    return make_node(name, cpu=None, memory=None, pods=None, extra=alloc, labels=labels, hostname_label=False)


def topo_node(spec: str, res: dict):
    """TestDryRunPreemption / TestPreempt node names "name/zone/region": labels hostname, zone, region."""
    parts = spec.split("/")
    return node(parts[0], res, dict(zip(("hostname", "zone", "region"), parts)))


def pod(name: str, prio: int | None = None, req: dict | None = None, on: str = "", labels: dict | None = None,
        start: int | None = None, policy: str | None = None, spread=(), anti=None, group: str | None = None):
    p = make_pod(name, containers=[dict(req or {})], priority=prio, labels=labels, node_name=on, spread=spread,
                 pod_affinity=anti, pod_group=group)
    if policy is not None:
        p = p.model_copy(update={"spec": p.spec.model_copy(update={"preemption_policy": policy})})
    if start is not None:
        stamp = datetime.fromtimestamp(EPOCH + start, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        p = p.model_copy(update={"status": p.status.model_copy(update={"start_time": stamp, "phase": "Running"})})
    return p


def pdb(name: str, labels: dict, allowed: int, disrupted=()):
    """A PDB as upstream's tests build it: a matchLabels selector and status.disruptionsAllowed (Go's zero value
    when upstream sets none), disruptedPods by name."""
    return PodDisruptionBudget.model_validate({
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": labels}},
        "status": {"disruptionsAllowed": allowed,
                   "disruptedPods": {n: "2024-01-01T00:00:00Z" for n in disrupted}}})


def spread(key: str) -> dict:
    """SpreadConstraint(1, key, DoNotSchedule, Exists(foo))."""
    return {"max_skew": 1, "topology_key": key, "when_unsatisfiable": "DoNotSchedule",
            "label_selector": {"match_expressions": [{"key": "foo", "operator": "Exists"}]}}


ANTI_FOO_HOSTNAME = {"pod_anti_affinity": {"required_during_scheduling_ignored_during_execution": [
    {"label_selector": {"match_expressions": [{"key": "foo", "operator": "Exists"}]}, "topology_key": "hostname"}]}}


def scheduler(nodes, pods, filters=FIT, pdbs=(), args=None, gates=None, groups=()) -> Scheduler:
    """A Scheduler whose profile has the plugins upstream registers (PreFilter + Filter), DefaultPreemption as the
    only PostFilter, and PrioritySort / DefaultBinder."""
    doc = {"kind": "KubeSchedulerConfiguration", "profiles": [{
        "plugins": {"multiPoint": {"disabled": [{"name": "*"}],
                                   "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}]},
                    "preFilter": {"enabled": [{"name": f} for f in filters if f in PRE_FILTERS]},
                    "filter": {"enabled": [{"name": f} for f in filters]},
                    "postFilter": {"enabled": [{"name": "DefaultPreemption"}]}},
        "pluginConfig": [{"name": "DefaultPreemption", "args": args}] if args else []}]}
    if gates is not None:
        doc["featureGates"] = gates
    objects = ClusterObjects(nodes=list(nodes), pods=list(pods), priority_classes=[], warnings=[],
                             workloads=[], pod_groups=list(groups))
    objects.pdbs = list(pdbs)
    return Scheduler(Cluster.from_objects(objects), config_from_doc(doc))


def failed_cycle(sched: Scheduler, preemptor, statuses: dict | None = None, offset: int = 0):
    """(the DefaultPreemption plugin, the FailedCycle it reads) for `preemptor`: its cycle run, then upstream's
    statuses (node -> "Unschedulable" / "UnschedulableAndUnresolvable", absent: UnschedulableAndUnresolvable; None:
    every node Unschedulable, as TestDryRunPreemption hands every node to DryRunPreemption) and the offset."""
    placer = sched.placer_for(preemptor)
    shape = placer.framework.split_run(sched.shape_of(preemptor), [preemptor], sched.cluster)[0][0]
    p, ev, _ = placer.evaluate(shape, advance=False)
    names = sched.cluster.tensors.nodes.names
    if statuses is None:
        codes = np.full(len(names), UNSCHEDULABLE, np.int8)
    else:
        codes = np.array([CODES[statuses.get(n, UU)] for n in names], np.int8)
    failed = sched.preemption.failed_cycle(placer, preemptor, p, ev, codes=codes, offset=offset)
    return placer.framework.plugin("DefaultPreemption"), failed


def candidates(sched, preemptor, offset=0) -> list[tuple[str, list[str], int]]:
    """DryRunPreemption's candidates: (node, victims, PDB violations), sorted by node and victims by name as
    upstream's TestDryRunPreemption compares them."""
    plugin, failed = failed_cycle(sched, preemptor, None, offset)
    found = plugin.candidates(failed)
    if isinstance(found, PostFilterResult):
        return []
    dry_run, out = failed.dry_run, []
    for n in list(found[0]):
        victims, _ = dry_run.victims_of(int(n))
        out.append((dry_run.node_name(int(n)), sorted(v.metadata.name for v in victims),
                    int(dry_run.criteria(np.array([int(n)]))[0][0])))
    return sorted(out)


# ------------------------------------------------------------------------------------------------ TestPostFilter
# (name, preemptor, bound pods, nodes, pdbs, statuses, gates, groups, (code, message, nominated node)). Upstream's
# wantResult NewPostFilterResultWithNominatedNode(x) is nominate=x ("" clears the nomination); a nil wantResult is
# nominate=None (phalanx's "keep the nomination").
def _post(name, preemptor, pods, nodes, want, statuses=None, pdbs=(), gates=None, groups=(), marks=()):
    return pytest.param(preemptor, pods, nodes, pdbs, statuses, gates, groups, want,
                        id=f"TestPostFilter/{name}", marks=marks)


DEFAULT_GATES_OFF = {"TopologyAwareWorkloadScheduling": False, "WorkloadAwarePreemption": False}

POST_FILTER_CASES = [
    _post("pod with higher priority can be made schedulable",
          pod("p", HIGH), [pod("p1", on="node1")], [node("node1", ONE_POD)],
          (SUCCESS, "", "node1"), {"node1": U}),
    _post("pod with tied priority is still unschedulable",
          pod("p"), [pod("p1", on="node1")], [node("node1", ONE_POD)],
          (UNSCHEDULABLE, "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.", ""),
          {"node1": U}),
    _post("preemption should respect filteredNodesStatuses",
          pod("p", HIGH), [pod("p1", on="node1")], [node("node1", ONE_POD)],
          (UNSCHEDULABLE, "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.", ""),
          {"node1": UU}),
    _post("preemption should respect absent NodeToStatusReader entry meaning UnschedulableAndUnresolvable",
          pod("p", HIGH), [pod("p1", on="node1")], [node("node1", ONE_POD)],
          (UNSCHEDULABLE, "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.", ""),
          {}),
    _post("pod can be made schedulable on one node",
          pod("p", MID), [pod("p1", HIGH, on="node1"), pod("p2", LOW, on="node2")],
          [node("node1", ONE_POD), node("node2", ONE_POD)], (SUCCESS, "", "node2"), {"node1": U, "node2": U}),
    _post("pod can be made schedulable on minHighestPriority node",
          pod("p", VERY_HIGH),
          [pod("p1", HIGH, on="node1", labels={"test.kubernetes.io/is-violating-pdb": "non-violating"}),
           pod("p2", LOW, on="node1", labels={"test.kubernetes.io/is-violating-pdb": "violating"}),
           pod("p3", MID, on="node2", labels={"test.kubernetes.io/is-violating-pdb": "violating"})],
          [node("node1", ONE_POD), node("node2", ONE_POD)], (SUCCESS, "", "node2"), {"node1": U, "node2": U},
          # MinAvailable("100%") without DisruptionsAllowed: status.disruptionsAllowed is Go's zero, 0.
          pdbs=[pdb("violating-pdb", {"test.kubernetes.io/is-violating-pdb": "violating"}, 0),
                pdb("non-violating-pdb", {"test.kubernetes.io/is-violating-pdb": "non-violating"}, MAX_INT32)]),
    _post("no candidate nodes found, no enough resource after removing low priority pods",
          pod("p", HIGH, LARGE), [pod("p1", on="node1"), pod("p2", on="node2")],
          [node("node1", NODE_RES), node("node2", NODE_RES)],
          (UNSCHEDULABLE, "preemption: 0/2 nodes are available: 2 Insufficient cpu.", ""),
          {"node1": U, "node2": U}),
    _post("no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
          pod("p", HIGH, LARGE), [pod("p1", HIGH, on="node1"), pod("p2", on="node2"), pod("p3", HIGH, on="node3")],
          [node("node1", ONE_POD), node("node2", NODE_RES), node("node3", ONE_POD)],
          (UNSCHEDULABLE, "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found "
                          "for incoming pod.", ""),
          {"node1": U, "node2": U, "node3": U}),
    _post("no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes don't have "
          "enough CPU resource",
          pod("p", HIGH, LARGE), [pod("p1", on="node1"), pod("p2", on="node2")],
          [node(f"node{i}", NODE_RES) for i in range(1, 5)],
          (UNSCHEDULABLE, "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for "
                          "scheduling.", ""),
          {"node1": U, "node2": U, "node4": UU}),
    # PodGroup members (default_preemption.go PostFilter): with TopologyAwareWorkloadScheduling on, a member of a
    # group with schedulingConstraints is refused first; with WorkloadAwarePreemption on, any member is refused.
    _post("pod with SchedulingGroup with TAS with scheduling constraint enabled should not preempt",
          pod("p-with-podgroup", HIGH, group="foo"), [pod("p1", on="node1")], [node("node1", ONE_POD)],
          (UNSCHEDULABLE, "preemption: not eligible due to placement-based pod group scheduling limitation", None),
          {"node1": U}, gates={"TopologyAwareWorkloadScheduling": True, "WorkloadAwarePreemption": False},
          groups=[make_pod_group("foo", topology="rack")]),
    _post("pod with SchedulingGroup with TAS with scheduling constraint enabled should not preempt even when WAP is "
          "enabled",
          pod("p-with-podgroup", HIGH, group="foo"), [pod("p1", on="node1")], [node("node1", ONE_POD)],
          (UNSCHEDULABLE, "preemption: not eligible due to placement-based pod group scheduling limitation", None),
          {"node1": U}, gates={"TopologyAwareWorkloadScheduling": True, "WorkloadAwarePreemption": True},
          groups=[make_pod_group("foo", topology="rack")]),
    _post("pod with SchedulingGroup with TAS without scheduling constraint enabled should preempt",
          pod("p-with-podgroup", HIGH, group="foo"), [pod("p1", on="node1")], [node("node1", ONE_POD)],
          (SUCCESS, "", "node1"),
          {"node1": U}, gates={"TopologyAwareWorkloadScheduling": True, "WorkloadAwarePreemption": False},
          groups=[make_pod_group("foo")]),
    _post("pod with SchedulingGroup with TAS with WAP enabled should not preempt",
          pod("p-with-podgroup", HIGH, group="foo"), [pod("p1", on="node1")], [node("node1", ONE_POD)],
          (UNSCHEDULABLE, "preemption: not eligible due to workload aware preemption enabled", None),
          {"node1": U}, gates={"TopologyAwareWorkloadScheduling": True, "WorkloadAwarePreemption": True},
          groups=[make_pod_group("foo")]),
    _post("pod with SchedulingGroup with WAP enabled should not preempt",
          pod("p-with-podgroup", HIGH, group="foo"), [pod("p1", on="node1")], [node("node1", ONE_POD)],
          (UNSCHEDULABLE, "preemption: not eligible due to workload aware preemption enabled", None),
          {"node1": U}, gates={"TopologyAwareWorkloadScheduling": False, "WorkloadAwarePreemption": True}),
    # Not an upstream case; the rule is default_preemption.go PostFilter's: with TopologyAwareWorkloadScheduling on,
    # a pod whose schedulingGroup names no existing PodGroup reads "preemption: pod group for pod not found" (nil
    # result), before the WorkloadAwarePreemption check.
    _post("(rule) pod with SchedulingGroup naming a missing PodGroup with TAS enabled",
          pod("p-with-podgroup", HIGH, group="foo"), [pod("p1", on="node1")], [node("node1", ONE_POD)],
          (UNSCHEDULABLE, "preemption: pod group for pod not found", None),
          {"node1": U}, gates={"TopologyAwareWorkloadScheduling": True, "WorkloadAwarePreemption": True}),
    _post("pod with SchedulingGroup with TAS and WAP disabled should preempt",
          pod("p-with-podgroup", HIGH, group="foo"), [pod("p1", on="node1")], [node("node1", ONE_POD)],
          (SUCCESS, "", "node1"), {"node1": U}, gates=DEFAULT_GATES_OFF),
]


@pytest.mark.parametrize("preemptor, pods, nodes, pdbs, statuses, gates, groups, want", POST_FILTER_CASES)
def test_post_filter(preemptor, pods, nodes, pdbs, statuses, gates, groups, want):
    # Every node is a candidate's worth of scan (default args: all nodes), so every offset must give upstream's answer.
    for offset in range(len(nodes)):
        sched = scheduler(nodes, pods, pdbs=pdbs, gates=gates, groups=groups)
        plugin, failed = failed_cycle(sched, preemptor, statuses, offset)
        result = plugin.post_filter(failed, sched.cluster)
        assert (result.code, result.message, result.nominate) == want, f"offset {offset}"


# ------------------------------------------------------------------------------------------------ TestDryRunPreemption
# (name, filters, node specs, preemptors, bound pods, pdbs, args, [(offset, expected candidates)] per cycle).
# Nodes are st.MakeNode().Capacity(veryLargeRes) with hostname/zone/region labels from "name/zone/region".
def _dry(name, filters, node_specs, preemptors, pods, cycles, pdbs=(), args=None, marks=()):
    return pytest.param(filters, node_specs, preemptors, pods, pdbs, args, cycles,
                        id=f"TestDryRunPreemption/{name}", marks=marks)


ALL_OFFSETS = None    # default args: numCandidates is every node, so the candidates must not depend on the offset
PDB_FOO_1 = [pdb("pdb", {"app": "foo"}, 1)]
FOO = {"app": "foo"}

# A Filter that rejects every node whatever is removed from it (upstream FalseFilter, or its FakeFilter returning
# Unschedulable for every node): here NodeUnschedulable on nodes marked unschedulable, which no victim changes.
NEVER = ("NodeUnschedulable",)

DRY_RUN_CASES = [
    _dry("a pod that does not fit on any node", NEVER, ["!node1", "!node2"], [pod("p", HIGH)],
         [pod("p1", MID, on="node1"), pod("p2", MID, on="node2")], [(ALL_OFFSETS, [])]),
    _dry("a pod that fits with no preemption", NEVER, ["!node1", "!node2"], [pod("p", HIGH)],
         [pod("p1", MID, on="node1"), pod("p2", MID, on="node2")], [(ALL_OFFSETS, [])]),
    _dry("a pod that fits on one node with no preemption", NEVER, ["!node1", "!node2"], [pod("node1", HIGH)],
         [pod("p1", MID, on="node1"), pod("p2", MID, on="node2")], [(ALL_OFFSETS, [])]),
    _dry("a pod that fits on both nodes when lower priority pods are preempted", FIT, ["node1", "node2"],
         [pod("p", HIGH, LARGE)], [pod("p1", MID, LARGE, "node1"), pod("p2", MID, LARGE, "node2")],
         [(ALL_OFFSETS, [("node1", ["p1"], 0), ("node2", ["p2"], 0)])]),
    _dry("a pod that would fit on the nodes, but other pods running are higher priority, no preemption would happen",
         FIT, ["node1", "node2"], [pod("p", LOW, LARGE)],
         [pod("p1", MID, LARGE, "node1"), pod("p2", MID, LARGE, "node2")], [(ALL_OFFSETS, [])]),
    _dry("medium priority pod is preempted, but lower priority one stays as it is small", FIT, ["node1", "node2"],
         [pod("p", HIGH, LARGE)],
         [pod("p1.1", LOW, SMALL, "node1"), pod("p1.2", MID, LARGE, "node1"), pod("p2", MID, LARGE, "node2")],
         [(ALL_OFFSETS, [("node1", ["p1.2"], 0), ("node2", ["p2"], 0)])]),
    _dry("mixed priority pods are preempted", FIT, ["node1", "node2"], [pod("p", HIGH, LARGE)],
         [pod("p1.1", MID, SMALL, "node1"), pod("p1.2", LOW, SMALL, "node1"), pod("p1.3", MID, MEDIUM, "node1"),
          pod("p1.4", HIGH, SMALL, "node1"), pod("p2", HIGH, LARGE, "node2")],
         [(ALL_OFFSETS, [("node1", ["p1.2", "p1.3"], 0)])]),
    _dry("mixed priority pods are preempted, pick later StartTime one when priorities are equal", FIT,
         ["node1", "node2"], [pod("p", HIGH, LARGE)],
         [pod("p1.1", LOW, SMALL, "node1", start=5), pod("p1.2", LOW, SMALL, "node1", start=4),
          pod("p1.3", MID, MEDIUM, "node1", start=3), pod("p1.4", HIGH, SMALL, "node1", start=2),
          pod("p2", HIGH, LARGE, "node2", start=1)],
         [(ALL_OFFSETS, [("node1", ["p1.1", "p1.3"], 0)])]),
    _dry("pod with anti-affinity is preempted", FIT_AFFINITY, ["node1", "node2"],
         [pod("p", HIGH, SMALL, labels={"foo": ""})],
         [pod("p1.1", LOW, SMALL, "node1", labels={"foo": ""}, anti=ANTI_FOO_HOSTNAME),
          pod("p1.2", MID, SMALL, "node1"), pod("p1.3", HIGH, SMALL, "node1"), pod("p2", HIGH, SMALL, "node2")],
         [(ALL_OFFSETS, [("node1", ["p1.1"], 0)])]),
    _dry("preemption to resolve pod topology spread filter failure", SPREAD,
         ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
         [pod("p", HIGH, labels={"foo": ""}, spread=[spread("zone"), spread("hostname")])],
         [pod("pod-a1", MID, on="node-a", labels={"foo": ""}), pod("pod-a2", LOW, on="node-a", labels={"foo": ""}),
          pod("pod-b1", LOW, on="node-b", labels={"foo": ""}), pod("pod-x1", HIGH, on="node-x", labels={"foo": ""}),
          pod("pod-x2", HIGH, on="node-x", labels={"foo": ""})],
         [(ALL_OFFSETS, [("node-a", ["pod-a2"], 0), ("node-b", ["pod-b1"], 0)])]),
    _dry("get Unschedulable in the preemption phase when the filter plugins filtering the nodes", FIT + NEVER,
         ["!node1", "!node2"], [pod("p", HIGH, LARGE)],
         [pod("p1", MID, LARGE, "node1"), pod("p2", MID, LARGE, "node2")], [(ALL_OFFSETS, [])]),
    _dry("preemption with violation of same pdb", FIT, ["node1"], [pod("p", HIGH, VERY_LARGE)],
         [pod("p1.1", MID, MEDIUM, "node1", labels=FOO), pod("p1.2", MID, MEDIUM, "node1", labels=FOO)],
         [(ALL_OFFSETS, [("node1", ["p1.1", "p1.2"], 1)])], pdbs=PDB_FOO_1),
    _dry("preemption with violation of the pdb with pod whose eviction was processed, the victim doesn't belong to "
         "DisruptedPods", FIT, ["node1"], [pod("p", HIGH, VERY_LARGE)],
         [pod("p1.1", MID, MEDIUM, "node1", labels=FOO), pod("p1.2", MID, MEDIUM, "node1", labels=FOO)],
         [(ALL_OFFSETS, [("node1", ["p1.1", "p1.2"], 1)])], pdbs=[pdb("pdb", FOO, 1, disrupted=["p2"])]),
    _dry("preemption with violation of the pdb with pod whose eviction was processed, the victim belongs to "
         "DisruptedPods", FIT, ["node1"], [pod("p", HIGH, VERY_LARGE)],
         [pod("p1.1", MID, MEDIUM, "node1", labels=FOO), pod("p1.2", MID, MEDIUM, "node1", labels=FOO)],
         [(ALL_OFFSETS, [("node1", ["p1.1", "p1.2"], 0)])], pdbs=[pdb("pdb", FOO, 1, disrupted=["p1.2"])]),
    _dry("preemption with violation of the pdb with pod whose eviction was processed, the victim which belongs to "
         "DisruptedPods is treated as 'nonViolating'", FIT, ["node1"], [pod("p", HIGH, VERY_LARGE)],
         [pod("p1.1", MID, MEDIUM, "node1", labels=FOO), pod("p1.2", MID, MEDIUM, "node1", labels=FOO),
          pod("p1.3", MID, MEDIUM, "node1", labels=FOO)],
         [(ALL_OFFSETS, [("node1", ["p1.1", "p1.2", "p1.3"], 1)])], pdbs=[pdb("pdb", FOO, 1, disrupted=["p1.3"])]),
    # The next cases set minCandidateNodesPercentage 40 and so depend on the offset: upstream's comments name the
    # offsets its seeded source draws (cycle=0 => offset=4, cycle=1 => offset=1, cycle=2 => offset=3).
    _dry("all nodes are possible candidates, but DefaultPreemptionArgs limits to 2", FIT,
         [f"node{i}" for i in range(1, 6)], [pod("p", HIGH, LARGE)],
         [pod(f"p{i}", MID, LARGE, f"node{i}") for i in range(1, 6)],
         [(4, [("node1", ["p1"], 0), ("node5", ["p5"], 0)])],
         args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1}),
    _dry("some nodes are not possible candidates, DefaultPreemptionArgs limits to 2", FIT,
         [f"node{i}" for i in range(1, 6)], [pod("p", HIGH, LARGE)],
         [pod("p1", MID, LARGE, "node1"), pod("p2", VERY_HIGH, LARGE, "node2"), pod("p3", MID, LARGE, "node3"),
          pod("p4", MID, LARGE, "node4"), pod("p5", VERY_HIGH, LARGE, "node5")],
         [(4, [("node1", ["p1"], 0), ("node3", ["p3"], 0)])],
         args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1}),
    _dry("preemption offset across multiple scheduling cycles and wrap around", FIT,
         [f"node{i}" for i in range(1, 6)], [pod("tp1", HIGH, LARGE), pod("tp2", HIGH, LARGE), pod("tp3", HIGH, LARGE)],
         [pod(f"p{i}", MID, LARGE, f"node{i}") for i in range(1, 6)],
         [(4, [("node1", ["p1"], 0), ("node5", ["p5"], 0)]),
          (1, [("node2", ["p2"], 0), ("node3", ["p3"], 0)]),
          (3, [("node4", ["p4"], 0), ("node5", ["p5"], 0)])],
         args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1}),
    _dry("preemption looks past numCandidates until a non-PDB violating node is found", FIT,
         [f"node{i}" for i in range(1, 6)], [pod("p", HIGH, LARGE)],
         [pod("p1", MID, LARGE, "node1", labels=FOO), pod("p2", MID, LARGE, "node2", labels=FOO),
          pod("p3", MID, LARGE, "node3"), pod("p4", MID, LARGE, "node4"), pod("p5", MID, LARGE, "node5", labels=FOO)],
         [(4, [("node1", ["p1"], 1), ("node3", ["p3"], 0), ("node5", ["p5"], 1)])],
         pdbs=[pdb("pdb", FOO, 0)], args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2}),
]


def _dry_nodes(specs):
    """"!name": a node NEVER rejects (spec.unschedulable); "name/zone": labelled."""
    out = []
    for s in specs:
        n = topo_node(s.lstrip("!"), VERY_LARGE)
        if s.startswith("!"):
            n = n.model_copy(update={"spec": n.spec.model_copy(update={"unschedulable": True})})
        out.append(n)
    return out


@pytest.mark.parametrize("filters, node_specs, preemptors, pods, pdbs, args, cycles", DRY_RUN_CASES)
def test_dry_run_preemption(filters, node_specs, preemptors, pods, pdbs, args, cycles):
    nodes = _dry_nodes(node_specs)
    for cycle, (preemptor, (offset, want)) in enumerate(zip(preemptors, cycles)):
        for at in range(len(nodes)) if offset is ALL_OFFSETS else [offset]:
            sched = scheduler(nodes, pods, filters, pdbs, args)
            assert candidates(sched, preemptor, at) == want, f"cycle {cycle}, offset {at}"


# ------------------------------------------------------------------------------------------------ TestSelectBestCandidate
# Nodes st.MakeNode().Capacity(veryLargeRes); every pod started at epochTime unless given; NodeResourcesFit only; the
# expected node is any of the listed ones (upstream breaks full ties at random), checked at every offset.
def _best(name, node_names, preemptor, pods, expected):
    return pytest.param(node_names, preemptor, pods, expected, id=f"TestSelectBestCandidate/{name}")


def _p(name, prio, req, start=0):
    return pod(name, prio, req, on="node" + name[1], start=start)


SELECT_BEST_CASES = [
    _best("a pod that fits on both nodes when lower priority pods are preempted", ["node1", "node2"],
          pod("p", HIGH, LARGE), [_p("p1", MID, LARGE), _p("p2", MID, LARGE)], {"node1", "node2"}),
    _best("node with min highest priority pod is picked", ["node1", "node2", "node3"], pod("p", HIGH, VERY_LARGE),
          [_p("p1.1", MID, MEDIUM), _p("p1.2", MID, LARGE), _p("p2.1", MID, MEDIUM), _p("p2.2", LOW, MEDIUM),
           _p("p3.1", LOW, MEDIUM), _p("p3.2", LOW, MEDIUM)], {"node3"}),
    _best("when highest priorities are the same, minimum sum of priorities is picked", ["node1", "node2", "node3"],
          pod("p", HIGH, VERY_LARGE),
          [_p("p1.1", MID, MEDIUM), _p("p1.2", MID, LARGE), _p("p2.1", MID, LARGE), _p("p2.2", LOW, MEDIUM),
           _p("p3.1", MID, MEDIUM), _p("p3.2", MID, MEDIUM)], {"node2"}),
    _best("when highest priority and sum are the same, minimum number of pods is picked", ["node1", "node2", "node3"],
          pod("p", HIGH, VERY_LARGE),
          [_p("p1.1", MID, SMALL), _p("p1.2", NEG, SMALL), _p("p1.3", MID, SMALL), _p("p1.4", NEG, SMALL),
           _p("p2.1", MID, LARGE), _p("p2.2", NEG, MEDIUM), _p("p3.1", MID, MEDIUM), _p("p3.2", NEG, SMALL),
           _p("p3.3", LOW, SMALL)], {"node2"}),
    _best("sum of adjusted priorities is considered", ["node1", "node2", "node3"], pod("p", HIGH, VERY_LARGE),
          [_p("p1.1", MID, SMALL), _p("p1.2", NEG, SMALL), _p("p1.3", NEG, SMALL), _p("p2.1", MID, LARGE),
           _p("p2.2", NEG, MEDIUM), _p("p3.1", MID, MEDIUM), _p("p3.2", NEG, SMALL), _p("p3.3", LOW, SMALL)],
          {"node2"}),
    _best("non-overlapping lowest high priority, sum priorities, and number of pods",
          ["node1", "node2", "node3", "node4"], pod("p", VERY_HIGH, VERY_LARGE),
          [_p("p1.1", MID, SMALL), _p("p1.2", LOW, SMALL), _p("p1.3", LOW, SMALL), _p("p2.1", HIGH, LARGE),
           _p("p3.1", MID, MEDIUM), _p("p3.2", LOW, SMALL), _p("p3.3", LOW, SMALL), _p("p3.4", LOW, MEDIUM),
           _p("p4.1", MID, MEDIUM), _p("p4.2", MID, SMALL), _p("p4.3", MID, SMALL), _p("p4.4", NEG, SMALL)],
          {"node1"}),
    _best("same priority, same number of victims, different start time for each node's pod",
          ["node1", "node2", "node3"], pod("p", HIGH, VERY_LARGE),
          [_p("p1.1", MID, MEDIUM, 2), _p("p1.2", MID, MEDIUM, 2), _p("p2.1", MID, MEDIUM, 3),
           _p("p2.2", MID, MEDIUM, 3), _p("p3.1", MID, MEDIUM, 1), _p("p3.2", MID, MEDIUM, 1)], {"node2"}),
    _best("same priority, same number of victims, different start time for all pods", ["node1", "node2", "node3"],
          pod("p", HIGH, VERY_LARGE),
          [_p("p1.1", MID, MEDIUM, 4), _p("p1.2", MID, MEDIUM, 2), _p("p2.1", MID, MEDIUM, 5),
           _p("p2.2", MID, MEDIUM, 1), _p("p3.1", MID, MEDIUM, 3), _p("p3.2", MID, MEDIUM, 6)], {"node3"}),
    _best("different priority, same number of victims, different start time for all pods",
          ["node1", "node2", "node3"], pod("p", HIGH, VERY_LARGE),
          [_p("p1.1", LOW, MEDIUM, 4), _p("p1.2", MID, MEDIUM, 2), _p("p2.1", MID, MEDIUM, 6),
           _p("p2.2", LOW, MEDIUM, 1), _p("p3.1", LOW, MEDIUM, 3), _p("p3.2", MID, MEDIUM, 5)], {"node2"}),
]


@pytest.mark.parametrize("node_names, preemptor, pods, expected", SELECT_BEST_CASES)
def test_select_best_candidate(node_names, preemptor, pods, expected):
    nodes = [node(n, VERY_LARGE) for n in node_names]
    for offset in range(len(nodes)):
        sched = scheduler(nodes, pods)
        plugin, failed = failed_cycle(sched, preemptor, None, offset)
        result = plugin.post_filter(failed, sched.cluster)
        assert result.code == SUCCESS and result.nominate in expected, f"offset {offset}: {result}"


# ------------------------------------------------------------------------------------------------ TestPreempt
# Evaluator.Preempt with every node Unschedulable: the nominated node and the victims deleted. Nodes
# st.MakeNode().Capacity(veryLargeRes) with hostname/zone/region labels.
def _preempt(name, node_specs, filters, preemptor, pods, want_node, want_victims):
    return pytest.param(node_specs, filters, preemptor, pods, want_node, want_victims, id=f"TestPreempt/{name}")


PREEMPT_CASES = [
    _preempt("basic preemption logic", ["node1", "node2", "node3"], FIT,
             pod("p", HIGH, VERY_LARGE, policy="PreemptLowerPriority"),
             [pod("p1.1", LOW, SMALL, "node1"), pod("p1.2", LOW, SMALL, "node1"), pod("p2.1", HIGH, LARGE, "node2"),
              pod("p3.1", MID, MEDIUM, "node3")], "node1", ["p1.1", "p1.2"]),
    _preempt("preemption for topology spread constraints", ["node-a/zone1", "node-b/zone1", "node-x/zone2"], SPREAD,
             pod("p", HIGH, labels={"foo": ""}, spread=[spread("zone"), spread("hostname")]),
             [pod("p-a1", HIGH, on="node-a", labels={"foo": ""}), pod("p-a2", HIGH, on="node-a", labels={"foo": ""}),
              pod("p-b1", LOW, on="node-b", labels={"foo": ""}), pod("p-x1", HIGH, on="node-x", labels={"foo": ""}),
              pod("p-x2", HIGH, on="node-x", labels={"foo": ""})], "node-b", ["p-b1"]),
    # want nil: no nomination made (phalanx: the pod's nomination kept, None), nothing deleted.
    _preempt("no preempting in pod", ["node1", "node2", "node3"], FIT,
             pod("p", HIGH, VERY_LARGE, policy="Never"),
             [pod("p1.1", LOW, SMALL, "node1"), pod("p1.2", LOW, SMALL, "node1"), pod("p2.1", HIGH, LARGE, "node2"),
              pod("p3.1", MID, MEDIUM, "node3")], None, []),
    _preempt("PreemptionPolicy is nil", ["node1", "node2", "node3"], FIT, pod("p", HIGH, VERY_LARGE),
             [pod("p1.1", LOW, SMALL, "node1"), pod("p1.2", LOW, SMALL, "node1"), pod("p2.1", HIGH, LARGE, "node2"),
              pod("p3.1", MID, MEDIUM, "node3")], "node1", ["p1.1", "p1.2"]),
]


@pytest.mark.parametrize("node_specs, filters, preemptor, pods, want_node, want_victims", PREEMPT_CASES)
def test_preempt(node_specs, filters, preemptor, pods, want_node, want_victims):
    nodes = [topo_node(s, VERY_LARGE) for s in node_specs]
    for offset in range(len(nodes)):
        sched = scheduler(nodes, pods, filters)
        plugin, failed = failed_cycle(sched, preemptor, {n.metadata.name: U for n in nodes}, offset)
        result = plugin.post_filter(failed, sched.cluster)
        assert (result.nominate, sorted(v.metadata.name for v in result.victims)) == (want_node, want_victims), \
            f"offset {offset}"


# ------------------------------------------------------------------------------------------------ TestPodEligibleToPreemptOthers
# PodEligibleToPreemptOthers false is PostFilter's "not eligible due to preemptionPolicy=Never." (Preempt prefixes
# its reason with "preemption: "); true lets the dry run run ("No preemption victims found" here, as no node has
# pods). Upstream's pod names p_without_nominated_node / p_with_preempt_never_policy are no valid object names (the
# API server would reject them; upstream's unit test builds them in memory): "-" here.
@pytest.mark.parametrize("preemptor, eligible", [
    pytest.param(pod("p-without-nominated-node", HIGH), True,
                 id="TestPodEligibleToPreemptOthers/Pod without nominated node"),
    pytest.param(pod("p-with-preempt-never-policy", HIGH, policy="Never"), False,
                 id="TestPodEligibleToPreemptOthers/Pod with 'PreemptNever' preemption policy"),
])
def test_pod_eligible_to_preempt_others(preemptor, eligible):
    sched = scheduler([node("node1", ONE_POD)], [])
    plugin, failed = failed_cycle(sched, preemptor, {"node1": U})
    result = plugin.post_filter(failed, sched.cluster)
    never = "preemption: not eligible due to preemptionPolicy=Never."
    assert (result.message != never) == eligible
    if eligible:
        assert result.message == "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."


# ------------------------------------------------------------------------------------------------ left out
# Upstream cases phalanx does not replay, with why (module doc: sources).
LEFT_OUT = {
    "TestPostFilter/preemption result filtered out by extenders": "scheduler extenders are not modelled",
    "TestPostFilter/only one node but failed with TestPlugin": "a fake PreFilter plugin whose AddPod/RemovePod fail "
                                                               "on labelled nodes (an Error status) has no real "
                                                               "counterpart",
    "TestPostFilter/one failed with TestPlugin and the other pass": "same fake TestPlugin",
    "TestPostFilter/(Async API calls enabled: true|false)": "each case runs twice upstream, with and without the "
                                                            "async API dispatcher; phalanx has no API calls, so "
                                                            "each case is one here",
    "TestDryRunPreemption/expectedNumFilterCalled": "Filter call counts: phalanx evaluates nodes vectorised",
    "TestCustomSelection/*": "IsEligiblePod, a Go function an out-of-tree build assigns to the plugin; no "
                             "configuration reaches it",
    "TestCustomOrdering/*": "MoreImportantPod replaced by a Go function, likewise",
    "TestPodEligibleToPreemptOthers/Pod with nominated node": "needs a terminating victim on the nominated node; "
                                                              "phalanx deletes victims at once (docs/semantics.md "
                                                              "'Preemption', Eviction)",
    "TestPodEligibleToPreemptOthers/preemption victim pod terminating, as indicated by the dedicated "
    "DisruptionTarget condition": "terminating pods are not modelled (as above)",
    "TestPodEligibleToPreemptOthers/non-victim Pods terminating": "terminating pods are not modelled (as above)",
    "TestPreempt/Scheduler extenders allow only node1, otherwise node3 would have been chosen": "extenders",
    "TestPreempt/Scheduler extenders do not allow any preemption": "extenders",
    "TestPreempt/One scheduler extender allows only node1, the other returns error but ignorable. Only node1 would "
    "be chosen": "extenders",
    "TestPreempt/One scheduler extender allows only node1, but it is not interested in given pod, otherwise node1 "
    "would have been chosen": "extenders",
    "TestPreempt/(second Preempt call, no further preemption)": "relies on the victims' deletionTimestamp "
                                                                "(asynchronous deletion); phalanx deletes at once",
    "TestPreEnqueue/*": "async preemption's PreEnqueue gate; phalanx deletes victims when the cycle ends "
                        "(DefaultPreemption.unmodelled_points)",
    "preemption_test.go TestDryRunPreemption/*": "FakePostFilterPlugin: SelectVictimsOnDomain returns each node's "
                                                 "first pod with a fixed violation count",
    "preemption_test.go TestSelectCandidate/*": "FakePreemptionScorePostFilterPlugin: OrderedScoreFuncs counting "
                                                "containers",
    "preemption_test.go TestPrepareCandidate/*": "API calls (patch, delete), async preemption",
}


# ------------------------------------------------------------------------------------------------ rules from the source
def test_rule_a_node_needing_no_victim_is_no_candidate():
    # Rule (preemption.go DryRunPreemption: a candidate needs status Success and at least one victim; Preempt returns
    # the nodes' errors when none is a candidate): node1 fits the preemptor with its one lower-priority pod in place,
    # yet is handed over as Unschedulable. Unreachable from a real cycle (a node that failed Filter fails it again
    # with every pod back); only statuses made up as upstream's unit tests make them reach it.
    sched = scheduler([node("node1", VERY_LARGE)], [pod("p1", MID, SMALL, "node1")])
    plugin, failed = failed_cycle(sched, pod("p", HIGH, SMALL), {"node1": U})
    assert candidates(sched, pod("p", HIGH, SMALL)) == []
    result = plugin.post_filter(failed, sched.cluster)
    assert result.code != SUCCESS and 'expected at least one victim pod on node "node1"' in result.message


# Rule (preemption.go DryRunPreemption / Preempt): a node needing no victim is no candidate, and its Error status
# matters only when no node is one: Preempt then returns the errors (utilerrors.NewAggregate: one as it is, more as
# "[a, b]"; upstream in the order its workers met them, phalanx in scan order) instead of the FitError, so the other
# nodes' failures are not reported, and no result (the nomination stays). Both dry-run paths: vectorised (FIT) and
# per node on cluster copies (FIT_AFFINITY).
@pytest.mark.parametrize("filters", [FIT, FIT_AFFINITY], ids=["vectorised", "per node"])
@pytest.mark.parametrize("nodes, offset, want", [
    pytest.param([node("node1", VERY_LARGE), node("node2", SMALL)], 0, (SUCCESS, "", "node2"),
                 id="a candidate elsewhere"),
    pytest.param([node("node1", VERY_LARGE), node("node2", VERY_LARGE)], 0, (
        ERROR, 'preemption: [expected at least one victim pod on node "node1", expected at least one victim pod on '
        'node "node2"]', None), id="no candidate, two nodes needing no victim"),
    pytest.param([node("node1", VERY_LARGE), node("node2", VERY_LARGE)], 1, (
        ERROR, 'preemption: [expected at least one victim pod on node "node2", expected at least one victim pod on '
        'node "node1"]', None), id="no candidate, two nodes needing no victim, scan from node2"),
    pytest.param([node("node1", VERY_LARGE), node("node2", {"cpu": "50m", "memory": "500"})], 0, (
        ERROR, 'preemption: expected at least one victim pod on node "node1"', None),
                 id="no candidate, the other node failing"),
])
def test_rule_needing_no_victim_with_other_nodes(filters, nodes, offset, want):
    pods = [pod("p1", MID, SMALL, "node1"), pod("p2", MID, SMALL, "node2")]
    sched = scheduler(nodes, pods, filters=filters)
    plugin, failed = failed_cycle(sched, pod("p", HIGH, SMALL), {"node1": U, "node2": U}, offset)
    result = plugin.post_filter(failed, sched.cluster)
    assert (result.code, result.message, result.nominate) == want


def test_rule_a_post_filter_error_ends_the_post_filter_plugins(monkeypatch):
    # Rule (runtime/framework.go RunPostFilterPlugins, schedule_one.go): a PostFilter plugin's Error ends the loop with
    # no result, so the message is the error's alone (DynamicResources' reason before it is dropped) and the pod's
    # nomination stays.
    doc = {"kind": "KubeSchedulerConfiguration", "profiles": [{"plugins": {
        "multiPoint": {"disabled": [{"name": "*"}], "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}]},
        "preFilter": {"enabled": [{"name": "NodeResourcesFit"}]}, "filter": {"enabled": [{"name": "NodeResourcesFit"}]},
        "postFilter": {"enabled": [{"name": "DynamicResources"}, {"name": "DefaultPreemption"}]}}}]}
    objects = ClusterObjects(nodes=[node("node1", VERY_LARGE)], pods=[pod("p1", MID, SMALL, "node1")],
                             priority_classes=[], warnings=[], workloads=[], pod_groups=[])
    sched = Scheduler(Cluster.from_objects(objects), config_from_doc(doc))
    preemptor = pod("p", HIGH, SMALL)
    placer = sched.placer_for(preemptor)
    shape = placer.framework.split_run(sched.shape_of(preemptor), [preemptor], sched.cluster)[0][0]
    p, ev, _ = placer.evaluate(shape, advance=False)
    failed = sched.preemption.failed_cycle
    monkeypatch.setattr(sched.preemption, "failed_cycle",                  # upstream's made-up statuses
                        lambda *args: failed(*args, codes=np.array([UNSCHEDULABLE], np.int8)))
    outcome = sched.preemption.what_if(placer, preemptor, p, ev)
    assert (outcome.message, outcome.nominate, outcome.success) == (
        'preemption: expected at least one victim pod on node "node1"', None, None)
