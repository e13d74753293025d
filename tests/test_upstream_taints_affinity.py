"""Upstream kube-scheduler's own unit-test vectors for TaintToleration and NodeAffinity, replayed through phalanx.

Every case below is an upstream test case, written as data, named by its upstream test function and case name;
every expected value is copied from upstream's test file (never computed by phalanx). Sources, in
kubernetes/kubernetes (v1.36 line: `fwk` framework package, TaintTolerationComparisonOperators):

- pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go: TestTaintTolerationScore,
  TestTaintTolerationFilter, TestTaintTolerationFilterWithFeatureGate;
- staging/src/k8s.io/api/core/v1/toleration_test.go: TestTolerationToleratesTaint;
- staging/src/k8s.io/component-helpers/scheduling/corev1/helpers_test.go: TestFindMatchingUntoleratedTaint,
  TestMatchNodeSelectorTerms;
- pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go: TestNodeAffinity (PreFilter status and
  PreFilterResult, then Filter), TestNodeAffinityPriority (PreScore status, then Score and NormalizeScore);
- staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity_test.go:
  TestPodMatchesNodeSelectorAndAffinityTerms, TestNodeSelectorMatch, TestPreferredSchedulingTermsScore.

The newest stored node_affinity_test.go still spells the framework package `framework.` (before the `fwk` rename);
its cases were checked against v1.36's node_affinity.go and component-helpers nodeaffinity.go, whose semantics
they exercise unchanged.

How a case runs: a Scheduler over the case's nodes and pod, with a KubeSchedulerConfiguration that enables only
the plugin under test at the extension points the upstream test calls (and its args, e.g. addedAffinity); one
what-if cycle (`Scheduler.evaluate`), whose per-plugin filter codes and reasons, PreFilter/PreScore outcomes and
normalized scores are compared with upstream's.

Adaptations (none changes what is decided):
- node names are DNS subdomains in phalanx's model, so upstream's "nodeA"/"nodeB"/"nodeC" are "nodea"/...,
  "host_1" is "host-1", and a node upstream leaves unnamed is "node" (NodeAffinity's matchFields only reads names
  in the cases that give one);
- upstream's PreFilterResult.NodeNames is checked as phalanx's allowed-node mask over a cluster holding the test
  node plus every node the expected result names.

Upstream cases left out or skipped are listed where they would be, each with its reason.
"""
from __future__ import annotations

import numpy as np
import pytest

try:
    from tests.strategies import make_node, make_pod
except ImportError:  # rootdir not on sys.path: tests/ itself is (pytest prepend import mode)
    from strategies import make_node, make_pod

from phalanx.cluster_models import ClusterObjects
from phalanx.cluster_models.objects import Toleration
from phalanx.kernels.status import CODE_NAMES, SUCCESS
from phalanx.kernels.tolerations import tolerates
from phalanx.plugins.framework import NOT_RUN
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.config import config_from_doc

MAX = 100                                   # fwk.MaxNodeScore
UU = "UnschedulableAndUnresolvable"
TAINT_REASON = "node(s) had untolerated taint(s)"
NA_POD = "node(s) didn't match Pod's node affinity/selector"          # nodeaffinity.ErrReasonPod
NA_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"  # nodeaffinity.errReasonEnforced
NA_CONFLICT = "pod affinity terms conflict"                           # nodeaffinity.errReasonConflict
SKIP = "Skip"
ERROR = "Error"



# ------------------------------------------------------------------------------------------------ harness
def config(plugin: str, points, args: dict | None = None, gates: dict | None = None):
    """A configuration enabling `plugin` alone at `points` (queueSort and bind as required)."""
    only = lambda names: {"enabled": [{"name": n} for n in names]}      # noqa: E731
    plugins = {"multiPoint": {"disabled": [{"name": "*"}]}, "queueSort": only(["PrioritySort"]),
               "bind": only(["DefaultBinder"])}
    for point in points:
        plugins[point] = {"enabled": [{"name": plugin, "weight": 1}]} if point == "score" else only([plugin])
    profile = {"schedulerName": "default-scheduler", "plugins": plugins}
    if args is not None:
        profile["pluginConfig"] = [{"name": plugin, "args": args}]
    doc = {"kind": "KubeSchedulerConfiguration", "percentageOfNodesToScore": 100, "profiles": [profile]}
    if gates:
        doc["featureGates"] = gates
    return config_from_doc(doc)


def cycle(nodes, pod, cfg):
    """(scheduler, Prepared, Evaluation) of one what-if cycle of `pod` over `nodes`."""
    sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes, pods=[pod])), cfg, preemption=False)
    p, ev, _ = sched.evaluate(sched.shape_of(pod), advance=False)
    return sched, p, ev


def filter_status(sched, p, ev, plugin: str, node: int):
    """Upstream's Filter status of `plugin` on node `node`: None (success) or (code name, reasons). A PreFilter
    that rejected the pod leaves no Filter result in the cycle; upstream's test calls Filter all the same (its
    PreFilter state was written before the rejection), so it is run here on the plugin directly."""
    pl = sched.framework_for(p.pod.pod).plugin(plugin)
    tensors = sched.cluster.tensors
    if p.rejection is not None:
        code, payload = pl.filter(np, pl.filter_state(p.pod, sched.cluster, NOT_RUN), tensors)
    elif plugin not in ev.codes:       # PreFilter returned Skip: the Filter does not run (success)
        return None
    else:
        code, payload = ev.codes[plugin], ev.payloads[plugin]
    code, payload = int(np.asarray(code)[node]), int(np.asarray(payload)[node])
    return None if code == SUCCESS else (CODE_NAMES[code], pl.reasons(payload, tensors))


def params(cases):
    """pytest params named by the upstream case (each case's first value)."""
    out = []
    for c in cases:
        values, marks = (c.values, c.marks) if hasattr(c, "marks") else (c, ())
        out.append(pytest.param(*values, marks=marks, id=values[0]))
    return out


def skipped(p, plugin: str, point: str) -> bool:
    return any(pl.name == plugin and at == point for pl, at in p.skipped)


def tnode(name, taints=()):
    """nodeWithTaints."""
    return make_node(name, hostname_label=False, taints=taints)


def tpod(tolerations=()):
    """podWithTolerations: tolerations as upstream writes them (an operator left out is "")."""
    return make_pod("pod1", tolerations=[dict(t) for t in tolerations])


def tol(key="", operator=None, value="", effect=""):
    out = {"key": key, "value": value, "effect": effect}
    if operator is not None:
        out["operator"] = operator
    return out


# ============================================================================ TaintToleration: Score
# TestTaintTolerationScore: (name, pod tolerations, nodes [(name, taints)], expected normalized scores, comparison
# operators gate)
PNS, NS, NE = "PreferNoSchedule", "NoSchedule", "NoExecute"
TAINT_SCORE_CASES = [
    ("node with taints tolerated by the pod, gets a higher score than those node with intolerable taints",
     [tol("foo", "Equal", "bar", PNS)],
     [("nodea", [("foo", "bar", PNS)]), ("nodeb", [("foo", "blah", PNS)])],
     [MAX, 0], False),
    ("the nodes that all of their taints are tolerated by the pod, get the same score, no matter how many "
     "tolerable taints a node has",
     [tol("cpu-type", "Equal", "arm64", PNS), tol("disk-type", "Equal", "ssd", PNS)],
     [("nodea", []), ("nodeb", [("cpu-type", "arm64", PNS)]),
      ("nodec", [("cpu-type", "arm64", PNS), ("disk-type", "ssd", PNS)])],
     [MAX, MAX, MAX], False),
    ("the more intolerable taints a node has, the lower score it gets.",
     [tol("foo", "Equal", "bar", PNS)],
     [("nodea", []), ("nodeb", [("cpu-type", "arm64", PNS)]),
      ("nodec", [("cpu-type", "arm64", PNS), ("disk-type", "ssd", PNS)])],
     [MAX, 50, 0], False),
    ("only taints and tolerations that have effect PreferNoSchedule are checked by taints-tolerations priority "
     "function",
     [tol("cpu-type", "Equal", "arm64", NS), tol("disk-type", "Equal", "ssd", NS)],
     [("nodea", []), ("nodeb", [("cpu-type", "arm64", NS)]),
      ("nodec", [("cpu-type", "arm64", PNS), ("disk-type", "ssd", PNS)])],
     [MAX, MAX, 0], False),
    ("Default behaviour No taints and tolerations, lands on node with no taints",
     [],
     [("nodea", []), ("nodeb", [("cpu-type", "arm64", PNS)])],
     [MAX, 0], False),
    pytest.param("Numeric Gt operator: pod with Gt toleration prefers nodes with matching SLA taint",
                 [tol("node.kubernetes.io/sla", "Gt", "950", PNS)],
                 [("nodea", [("node.kubernetes.io/sla", "800", PNS)]),
                  ("nodeb", [("node.kubernetes.io/sla", "999", PNS)])],
                 [0, MAX], True),
    pytest.param("Numeric Lt operator: pod with Lt toleration prefers nodes with matching SLA taint",
                 [tol("node.kubernetes.io/sla", "Lt", "800", PNS)],
                 [("nodea", [("node.kubernetes.io/sla", "950", PNS)]),
                  ("nodeb", [("node.kubernetes.io/sla", "700", PNS)])],
                 [0, MAX], True),
    pytest.param("Score ignores parse errors from numeric PreferNoSchedule taint value",
                 [tol("node.kubernetes.io/sla", "Gt", "950", PNS)],
                 [("nodea", []), ("nodeb", [("node.kubernetes.io/sla", "high", PNS)])],
                 [MAX, 0], True),
]


@pytest.mark.parametrize("name, tolerations, nodes, expected, comparison_ops", params(TAINT_SCORE_CASES))
def test_taint_toleration_score(name, tolerations, nodes, expected, comparison_ops):
    """TestTaintTolerationScore: PreScore (never Skip, never an error), Score, NormalizeScore (reversed)."""
    cfg = config("TaintToleration", ["preScore", "score"],
                 gates={"TaintTolerationComparisonOperators": comparison_ops})
    _, p, ev = cycle([tnode(n, t) for n, t in nodes], tpod(tolerations), cfg)
    assert p.score_error is None and not skipped(p, "TaintToleration", "preScore")
    assert np.asarray(ev.normalized["TaintToleration"]).tolist() == expected


# ============================================================================ TaintToleration: Filter
# TestTaintTolerationFilter and TestTaintTolerationFilterWithFeatureGate: (name, pod tolerations, node taints,
# expected status (None: success), comparison operators gate). Upstream compares code and message; the message of
# v1.36's Filter is the fixed "node(s) had untolerated taint(s)" (taint_toleration.go: `return
# fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)")`).
UNTOLERATED = (UU, [TAINT_REASON])
TAINT_FILTER_CASES = [
    ("A pod having no tolerations can't be scheduled onto a node with nonempty taints",
     [], [("dedicated", "user1", NS)], UNTOLERATED, False),
    ("A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
     [tol("dedicated", None, "user1", NS)], [("dedicated", "user1", NS)], None, False),
    ("A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
     [tol("dedicated", "Equal", "user2", NS)], [("dedicated", "user1", NS)], UNTOLERATED, False),
    ("A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the taints on "
     "the node",
     [tol("foo", "Exists", "", NS)], [("foo", "bar", NS)], None, False),
    ("A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, pod can be "
     "scheduled onto the node",
     [tol("dedicated", "Equal", "user2", NS), tol("foo", "Exists", "", NS)],
     [("dedicated", "user2", NS), ("foo", "bar", NS)], None, False),
    ("A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect doesn't "
     "match, can't be scheduled onto the node",
     [tol("foo", "Equal", "bar", PNS)], [("foo", "bar", NS)], UNTOLERATED, False),
    ("The pod has a toleration that keys and values match the taint on the node, the effect of toleration is "
     "empty, and the effect of taint is NoSchedule. Pod can be scheduled onto the node",
     [tol("foo", "Equal", "bar")], [("foo", "bar", NS)], None, False),
    ("The pod has a toleration that key and value don't match the taint on the node, but the effect of taint on "
     "node is PreferNoSchedule. Pod can be scheduled onto the node",
     [tol("dedicated", "Equal", "user2", NS)], [("dedicated", "user1", PNS)], None, False),
    ("The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto "
     "the node",
     [], [("dedicated", "user1", PNS)], None, False),
    pytest.param("Pod with Gt toleration cannot be scheduled on node when taint value is lower than threshold",
                 [tol("node.example.com/priority-level", "Gt", "950", NS)],
                 [("node.example.com/priority-level", "800", NS)], UNTOLERATED, True),
    pytest.param("Pod with Gt toleration can be scheduled on node when taint value is higher than threshold",
                 [tol("node.kubernetes.io/sla", "Gt", "750", NS)],
                 [("node.kubernetes.io/sla", "950", NS)], None, True),
    pytest.param("Pod with Lt toleration cannot be scheduled on node when taint value is higher than threshold",
                 [tol("node.example.com/priority-level", "Lt", "800", NS)],
                 [("node.example.com/priority-level", "950", NS)], UNTOLERATED, True),
    pytest.param("Pod with Lt toleration can be scheduled on node when taint value is lower than threshold",
                 [tol("node.kubernetes.io/sla", "Lt", "950", NS)],
                 [("node.kubernetes.io/sla", "800", NS)], None, True),
    # Upstream's test file (at the stored version) expects the code UnschedulableAndUnresolvable with the parse
    # error as message, from an intermediate ToleratesTaint returning (bool, error); v1.36's ToleratesTaint logs
    # the parse error and returns false, so the Filter's message is the fixed one. The code is upstream's.
    pytest.param("Pod with Gt toleration cannot be scheduled on node with non-numeric taint value",
                 [tol("node.kubernetes.io/sla", "Gt", "950", NS)],
                 [("node.kubernetes.io/sla", "high", NS)], UNTOLERATED, True),
    # TestTaintTolerationFilterWithFeatureGate
    pytest.param("FeatureGate: Pod with Gt toleration can be scheduled when feature gate is enabled and taint "
                 "value is higher",
                 [tol("node.kubernetes.io/sla", "Gt", "750", NS)],
                 [("node.kubernetes.io/sla", "950", NS)], None, True),
    pytest.param("FeatureGate: Pod with Gt toleration cannot be scheduled when feature gate is disabled",
                 [tol("node.kubernetes.io/sla", "Gt", "750", NS)],
                 [("node.kubernetes.io/sla", "950", NS)], UNTOLERATED, False),
    pytest.param("FeatureGate: Pod with Lt toleration can be scheduled when feature gate is enabled and taint "
                 "value is lower",
                 [tol("node.kubernetes.io/sla", "Lt", "950", NS)],
                 [("node.kubernetes.io/sla", "800", NS)], None, True),
    pytest.param("FeatureGate: Pod with Lt toleration cannot be scheduled when feature gate is disabled",
                 [tol("node.kubernetes.io/sla", "Lt", "950", NS)],
                 [("node.kubernetes.io/sla", "800", NS)], UNTOLERATED, False),
    pytest.param("FeatureGate: Pod with mixed tolerations (Equal and Gt) when feature gate is disabled - only "
                 "Equal is honored",
                 [tol("dedicated", "Equal", "user1", NS), tol("node.kubernetes.io/sla", "Gt", "750", NS)],
                 [("dedicated", "user1", NS)], None, False),
    pytest.param("FeatureGate: Pod with mixed tolerations, Gt toleration needed but filtered out when feature gate "
                 "is disabled",
                 [tol("dedicated", "Equal", "user1", NS), tol("node.kubernetes.io/sla", "Gt", "750", NS)],
                 [("dedicated", "user1", NS), ("node.kubernetes.io/sla", "950", NS)], UNTOLERATED, False),
]


@pytest.mark.parametrize("name, tolerations, taints, expected, comparison_ops", params(TAINT_FILTER_CASES))
def test_taint_toleration_filter(name, tolerations, taints, expected, comparison_ops):
    """TestTaintTolerationFilter / TestTaintTolerationFilterWithFeatureGate: Filter on one node."""
    cfg = config("TaintToleration", ["filter"], gates={"TaintTolerationComparisonOperators": comparison_ops})
    sched, p, ev = cycle([tnode("nodea", taints)], tpod(tolerations), cfg)
    assert filter_status(sched, p, ev, "TaintToleration", 0) == expected


# taint_toleration_test.go's TestIsSchedulableAfterNodeChange is in tests/test_upstream_hints.py; left out:
# Test_isSchedulableAfterTargetPodTolerationChange (pods are immutable, so there is no toleration-change event).


# ============================================================================ toleration matching
# TestTolerationToleratesTaint (k8s.io/api/core/v1): (description, toleration, taint, expected tolerated).
TOLERATES_CASES = [
    ("toleration and taint have the same key and effect, and operator is Exists, and taint has no value, expect "
     "tolerated", tol("foo", "Exists", "", NS), ("foo", "", NS), True),
    ("toleration and taint have the same key and effect, and operator is Exists, and taint has some value, "
     "expect tolerated", tol("foo", "Exists", "", NS), ("foo", "bar", NS), True),
    ("toleration and taint have the same effect, toleration has empty key and operator is Exists, means match "
     "all taints, expect tolerated", tol("", "Exists", "", NS), ("foo", "bar", NS), True),
    ("toleration and taint have the same key, effect and value, and operator is Equal, expect tolerated",
     tol("foo", "Equal", "bar", NS), ("foo", "bar", NS), True),
    ("toleration and taint have the same key and effect, but different values, and operator is Equal, expect "
     "not tolerated", tol("foo", "Equal", "value1", NS), ("foo", "value2", NS), False),
    ("toleration and taint have the same key and value, but different effects, and operator is Equal, expect "
     "not tolerated", tol("foo", "Equal", "bar", NS), ("foo", "bar", NE), False),
    pytest.param("toleration with Gt operator - taint value less than toleration value, expect not tolerated",
                 tol("node.kubernetes.io/sla", "Gt", "950", NS), ("node.kubernetes.io/sla", "800", NS), False),
    pytest.param("toleration with Gt operator - taint value greater than toleration value, expect tolerated",
                 tol("node.kubernetes.io/sla", "Gt", "750", NS), ("node.kubernetes.io/sla", "950", NS), True),
    pytest.param("toleration with Lt operator - taint value greater than toleration value, expect not tolerated",
                 tol("node.kubernetes.io/sla", "Lt", "800", NS), ("node.kubernetes.io/sla", "950", NS), False),
    pytest.param("toleration with Lt operator - taint value less than toleration value, expect tolerated",
                 tol("node.kubernetes.io/sla", "Lt", "950", NS), ("node.kubernetes.io/sla", "800", NS), True),
    pytest.param("toleration with Gt operator and taint with equal numeric value, expect not tolerated",
                 tol("node.kubernetes.io/sla", "Gt", "950", NS), ("node.kubernetes.io/sla", "950", NS), False),
    pytest.param("toleration with Gt operator and taint with non-numeric value, expect not tolerated",
                 tol("node.kubernetes.io/sla", "Gt", "950", NS), ("node.kubernetes.io/sla", "high", NS), False),
    pytest.param("toleration with Gt operator and negative numeric values - taint value less than threshold, "
                 "expect not tolerated",
                 tol("test-key", "Gt", "-100", NS), ("test-key", "-200", NS), False),
    pytest.param("toleration with Gt operator and large int64 values - taint value less than threshold, expect "
                 "not tolerated",
                 tol("test-key", "Gt", "9223372036854775806", NS), ("test-key", "100", NS), False),
]


@pytest.mark.parametrize("name, toleration, taint, expected", params(TOLERATES_CASES))
def test_toleration_tolerates_taint(name, toleration, taint, expected):
    """TestTolerationToleratesTaint: phalanx's v1.Toleration.ToleratesTaint (kernels/tolerations.tolerates), with
    comparison operators enabled as upstream's test calls it."""
    assert tolerates(Toleration.model_validate(toleration), *taint, True) is expected


# TestFindMatchingUntoleratedTaint (component-helpers): (description, tolerations, taints, the taints filter,
# expected tolerated). The filter picks the taints that count: None is upstream's nil filter (every taint).
ALL, NONE = (lambda t: True), (lambda t: False)
FIND_UNTOLERATED_CASES = [
    ("empty tolerations tolerate empty taints", [], [], ALL, True),
    ("non-empty tolerations tolerate empty taints", [tol("foo", "Exists", "", NS)], [], ALL, True),
    ("tolerations match all taints, expect tolerated", [tol("foo", "Exists", "", NS)], [("foo", "", NS)], ALL,
     True),
    ("tolerations don't match taints, but no taints apply to the filter, expect tolerated",
     [tol("foo", "Exists", "", NS)], [("bar", "", NS)], NONE, True),
    ("no filterFunc indicated, means all taints apply to the filter, tolerations don't match taints, expect "
     "untolerated", [tol("foo", "Exists", "", NS)], [("bar", "", NS)], None, False),
    ("tolerations match taints, expect tolerated", [tol("foo", "Exists", "", NE)],
     [("foo", "", NE), ("bar", "", NS)], lambda t: t[2] == NE, True),
    pytest.param("numeric Gt operator with taint value below threshold, expect not tolerated",
                 [tol("node.kubernetes.io/sla", "Gt", "950", NS)], [("node.kubernetes.io/sla", "800", NS)], ALL,
                 False),
    pytest.param("numeric Gt operator with taint value above threshold, expect tolerated",
                 [tol("node.kubernetes.io/sla", "Gt", "750", NS)], [("node.kubernetes.io/sla", "950", NS)], ALL,
                 True),
    pytest.param("numeric Lt operator with taint value above threshold, expect not tolerated",
                 [tol("node.kubernetes.io/sla", "Lt", "800", NS)], [("node.kubernetes.io/sla", "950", NS)], ALL,
                 False),
    pytest.param("numeric Gt operator with non-numeric taint value, expect not tolerated",
                 [tol("node.kubernetes.io/sla", "Gt", "950", NS)], [("node.kubernetes.io/sla", "high", NS)], ALL,
                 False),
    pytest.param("numeric Gt parse error is ignored when a later toleration matches the taint",
                 [tol("node.kubernetes.io/sla", "Gt", "950", NS), tol("node.kubernetes.io/sla", "Exists", "", NS)],
                 [("node.kubernetes.io/sla", "high", NS)], ALL, True),
]


@pytest.mark.parametrize("name, tolerations, taints, applies, expected", params(FIND_UNTOLERATED_CASES))
def test_find_matching_untolerated_taint(name, tolerations, taints, applies, expected):
    """TestFindMatchingUntoleratedTaint: every taint the filter picks is tolerated by some toleration."""
    tols = [Toleration.model_validate(t) for t in tolerations]
    counted = [t for t in taints if applies is None or applies(t)]
    assert all(any(tolerates(x, *t, True) for x in tols) for t in counted) is expected



# ============================================================================ NodeAffinity
def expr(key, op, *values):
    return {"key": key, "operator": op, "values": list(values)}


def name_in(*names):
    return {"key": "metadata.name", "operator": "In", "values": list(names)}


def term(*exprs, fields=()):
    return {"match_expressions": list(exprs), "match_fields": list(fields)}


def napod(node_selector=None, required=None, preferred=None, node_affinity_only=False):
    """A pod with spec.nodeSelector, required terms (a list of terms) and preferred terms ((weight, term)).
    node_affinity_only: affinity.nodeAffinity set with neither (upstream's "nil NodeSelector")."""
    return make_pod("pod", node_selector=node_selector, required_terms=required, preferred_terms=preferred,
                    pod_affinity={"node_affinity": {}} if node_affinity_only else None)


def nanode(name, labels=None):
    return make_node(name, hostname_label=False, labels=labels or {})


def added_required(*terms_):
    """NodeAffinityArgs.addedAffinity with required terms (camelCase, as a configuration file writes them)."""
    return {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": t["match_expressions"], "matchFields": t["match_fields"]} for t in terms_]}}}


def added_preferred(*weighted):
    return {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": w, "preference": {"matchExpressions": t["match_expressions"], "matchFields": t["match_fields"]}}
        for w, t in weighted]}}


POD_MISMATCH = (UU, [NA_POD])
ENFORCED_MISMATCH = (UU, [NA_ENFORCED])
CONFLICT = (UU, NA_CONFLICT)
GPU_NOT_AMD = term(expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER"))

# TestNodeAffinity: (name, pod, node labels, node name ("" upstream: "node" here), args, run PreFilter,
# expected PreFilter (None: success, no result; SKIP; CONFLICT; or the PreFilterResult's node names),
# expected Filter status (None: success)).
NODE_AFFINITY_CASES = [
    ("missing labels", napod({"foo": "bar"}), {}, "", None, True, None, POD_MISMATCH),
    ("same labels", napod({"foo": "bar"}), {"foo": "bar"}, "", None, True, None, None),
    ("node labels are superset", napod({"foo": "bar"}), {"foo": "bar", "baz": "blah"}, "", None, True, None, None),
    ("node labels are subset", napod({"foo": "bar", "baz": "blah"}), {"foo": "bar"}, "", None, True, None,
     POD_MISMATCH),
    ("Pod with matchExpressions using In operator that matches the existing node",
     napod(required=[term(expr("foo", "In", "bar", "value2"))]), {"foo": "bar"}, "", None, True, None, None),
    ("Pod with matchExpressions using Gt operator that matches the existing node",
     napod(required=[term(expr("kernel-version", "Gt", "0204"))]), {"kernel-version": "0206"}, "", None, True,
     None, None),
    ("Pod with matchExpressions using NotIn operator that matches the existing node",
     napod(required=[term(expr("mem-type", "NotIn", "DDR", "DDR2"))]), {"mem-type": "DDR3"}, "", None, True,
     None, None),
    ("Pod with matchExpressions using Exists operator that matches the existing node",
     napod(required=[term(expr("GPU", "Exists"))]), {"GPU": "NVIDIA-GRID-K1"}, "", None, True, None, None),
    ("Pod with affinity that don't match node's labels won't schedule onto the node",
     napod(required=[term(expr("foo", "In", "value1", "value2"))]), {"foo": "bar"}, "", None, True, None,
     POD_MISMATCH),
    ("Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto the node",
     napod(required=[term()]), {"foo": "bar"}, "", None, True, None, POD_MISMATCH),
    ("Pod with no Affinity will schedule onto a node", napod(), {"foo": "bar"}, "", None, True, SKIP, None),
    ("Pod with Affinity but nil NodeSelector will schedule onto a node", napod(node_affinity_only=True),
     {"foo": "bar"}, "", None, True, SKIP, None),
    ("Pod with multiple matchExpressions ANDed that matches the existing node",
     napod(required=[GPU_NOT_AMD]), {"GPU": "NVIDIA-GRID-K1"}, "", None, True, None, None),
    ("Pod with multiple matchExpressions ANDed that doesn't match the existing node",
     napod(required=[term(expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER"))]), {"GPU": "NVIDIA-GRID-K1"},
     "", None, True, None, POD_MISMATCH),
    ("Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule onto the "
     "node",
     napod(required=[term(expr("foo", "In", "bar", "value2")), term(expr("diffkey", "In", "wrong", "value2"))]),
     {"foo": "bar"}, "", None, True, None, None),
    ("Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are satisfied, "
     "will schedule onto the node",
     napod({"foo": "bar"}, required=[term(expr("foo", "Exists"))]), {"foo": "bar"}, "", None, True, None, None),
    ("Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we are "
     "deprecating) is not satisfied, won't schedule onto the node",
     napod({"foo": "bar"}, required=[term(expr("foo", "Exists"))]), {"foo": "barrrrrr"}, "", None, True, None,
     POD_MISMATCH),
    ("Pod with an invalid value in Affinity term won't be scheduled onto the node",
     napod(required=[term(expr("foo", "NotIn", "invalid value: ___@#$%^"))]), {"foo": "bar"}, "", None, True,
     None, POD_MISMATCH),
    ("Pod with matchFields using In operator that matches the existing node",
     napod(required=[term(fields=[name_in("node1")])]), {}, "node1", None, True, {"node1"}, None),
    ("Pod with matchFields using In operator that does not match the existing node",
     napod(required=[term(fields=[name_in("node1")])]), {}, "node2", None, True, {"node1"}, POD_MISMATCH),
    ("Pod with two terms: matchFields does not match, but matchExpressions matches",
     napod(required=[term(fields=[name_in("node1"), name_in("node2")]), term(expr("foo", "In", "bar"))]),
     {"foo": "bar"}, "node2", None, True, None, None),
    ("Pod with one term: matchFields does not match, but matchExpressions matches",
     napod(required=[term(expr("foo", "In", "bar"), fields=[name_in("node1")])]), {"foo": "bar"}, "node2", None,
     True, {"node1"}, POD_MISMATCH),
    ("Pod with one term: both matchFields and matchExpressions match",
     napod(required=[term(expr("foo", "In", "bar"), fields=[name_in("node1")])]), {"foo": "bar"}, "node1", None,
     True, {"node1"}, None),
    ("Pod with two terms: both matchFields and matchExpressions do not match",
     napod(required=[term(fields=[name_in("node1")]), term(expr("foo", "In", "not-match-to-bar"))]),
     {"foo": "bar"}, "node2", None, True, None, POD_MISMATCH),
    ("Pod with two terms of node.Name affinity",
     napod(required=[term(fields=[name_in("node1")]), term(fields=[name_in("node2")])]), {}, "node2", None, True,
     {"node1", "node2"}, None),
    ("Pod with two conflicting mach field requirements",
     napod(required=[term(fields=[name_in("node1"), name_in("node2")])]), {"foo": "bar"}, "node2", None, True,
     CONFLICT, POD_MISMATCH),
    ("Matches added affinity and Pod's node affinity",
     napod(required=[term(expr("zone", "In", "foo"))]), {"zone": "foo"}, "node2",
     added_required(term(fields=[name_in("node2")])), True, None, None),
    ("Matches added affinity but not Pod's node affinity",
     napod(required=[term(expr("zone", "In", "bar"))]), {"zone": "foo"}, "node2",
     added_required(term(fields=[name_in("node2")])), True, None, POD_MISMATCH),
    ("Doesn't match added affinity", napod(), {"zone": "foo"}, "node2",
     added_required(term(expr("zone", "In", "bar"))), True, None, ENFORCED_MISMATCH),
    ("Matches node selector correctly even if PreFilter is not called", napod({"foo": "bar"}),
     {"foo": "bar", "baz": "blah"}, "", None, False, None, None),
    ("Matches node affinity correctly even if PreFilter is not called", napod(required=[GPU_NOT_AMD]),
     {"GPU": "NVIDIA-GRID-K1"}, "", None, False, None, None),
]


@pytest.mark.parametrize("name, pod, labels, node_name, args, run_prefilter, want_prefilter, want_filter",
                         params(NODE_AFFINITY_CASES))
def test_node_affinity(name, pod, labels, node_name, args, run_prefilter, want_prefilter, want_filter):
    """TestNodeAffinity: PreFilter (when the case runs it) and Filter on one node."""
    node_name = node_name or "node"
    nodes = [nanode(node_name, labels)]
    if isinstance(want_prefilter, set):     # PreFilterResult: its nodes must exist for phalanx's mask to name them
        nodes += [nanode(n) for n in sorted(want_prefilter - {node_name})]
    cfg = config("NodeAffinity", ["preFilter", "filter"] if run_prefilter else ["filter"], args)
    sched, p, ev = cycle(nodes, pod, cfg)
    if run_prefilter:
        rejected = None if p.rejection is None else (UU, p.rejection)
        assert rejected == (want_prefilter if want_prefilter == CONFLICT else None)
        assert skipped(p, "NodeAffinity", "preFilter") is (want_prefilter == SKIP)
        if isinstance(want_prefilter, set):
            assert p.narrowing == ("NodeAffinity",)
            names = sched.cluster.tensors.nodes.names
            assert {names[i] for i in np.flatnonzero(p.allowed)} == want_prefilter
        else:
            assert p.narrowing == () and p.allowed is None
    assert filter_status(sched, p, ev, "NodeAffinity", 0) == want_filter


# TestMatchNodeSelectorTerms (component-helpers MatchNodeSelectorTerms, i.e. LazyErrorNodeSelector.Match): the
# terms as a pod's required node affinity, the expected match as the NodeAffinity Filter's success. (name, terms,
# node name, node labels, expected match). Left out: "nil terms" (a nil NodeSelector matches nothing there, while
# a pod without required terms matches every node: no pod carries it).
MATCH_TERMS_CASES = [
    ("node label matches matchExpressions terms", [term(expr("label_1", "In", "label_1_val"))], "node",
     {"label_1": "label_1_val"}, True),
    ("node field matches matchFields terms", [term(fields=[name_in("host-1")])], "host-1", {}, True),
    pytest.param("invalid node field requirement", lambda: [term(fields=[name_in("host-1", "host-2")])], "host-1",
                 {}, False,
                 marks=pytest.mark.skip(reason="phalanx's Pod model refuses matchFields In with two values at input, "
                                        "as the API server's validateNodeFieldSelectorRequirement does, so no such "
                                        "pod reaches the scheduler")),
    ("fieldSelectorTerm with node labels", [term(fields=[name_in("host-1")])], "not-host-1",
     {"metadata.name": "host_1"}, False),
    ("labelSelectorTerm with node fields", [term(expr("metadata.name", "In", "host_1"))], "host-1", {}, False),
    ("labelSelectorTerm and fieldSelectorTerm was set, but only node fields",
     [term(expr("label_1", "In", "label_1_val"), fields=[name_in("host-1")])], "host-1", {}, False),
    ("labelSelectorTerm and fieldSelectorTerm was set, both node fields and labels (both matched)",
     [term(expr("label_1", "In", "label_1_val"), fields=[name_in("host-1")])], "host-1",
     {"label_1": "label_1_val"}, True),
    ("labelSelectorTerm and fieldSelectorTerm was set, both node fields and labels (one mismatched)",
     [term(expr("label_1", "In", "label_1_val"), fields=[name_in("host-1")])], "host-1",
     {"label_1": "label_1_val-failed"}, False),
    ("multi-selector was set, both node fields and labels (one mismatched)",
     [term(expr("label_1", "In", "label_1_val")), term(fields=[name_in("host-1")])], "host-1",
     {"label_1": "label_1_val-failed"}, True),
]


@pytest.mark.parametrize("name, terms, node_name, labels, want", params(MATCH_TERMS_CASES))
def test_match_node_selector_terms(name, terms, node_name, labels, want):
    """TestMatchNodeSelectorTerms through the NodeAffinity Filter (PreFilter off: only the match is tested)."""
    terms = terms() if callable(terms) else terms
    sched, p, ev = cycle([nanode(node_name, labels)], napod(required=terms), config("NodeAffinity", ["filter"]))
    assert filter_status(sched, p, ev, "NodeAffinity", 0) == (None if want else POD_MISMATCH)


# TestNodeAffinityPriority: (name, pod, nodes [(name, labels)], args, run PreScore, expected PreScore (None:
# success; SKIP; ERROR), expected normalized scores (None: not reached)).
LABEL1, LABEL2, LABEL3 = {"foo": "bar"}, {"key": "value"}, {"az": "az1"}
LABEL4, LABEL5 = {"abc": "az11", "def": "az22"}, {"foo": "bar", "key": "value", "az": "az1"}
AFFINITY1 = [(2, term(expr("foo", "In", "bar")))]
AFFINITY2 = [(2, term(expr("foo", "In", "bar"))), (4, term(expr("key", "In", "value"))),
             (5, term(expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1")))]
NODE_AFFINITY_SCORE_CASES = [
    ("all nodes are same priority as NodeAffinity is nil", napod(),
     [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)], None, False, None, [0, 0, 0]),
    ("Skip is returned in PreScore when NodeAffinity is nil", napod(), [("node1", LABEL1)], None, True, SKIP,
     None),
    # Upstream's status message is `[0].matchExpressions[0].key: Invalid value: "invalid key": name part must
    # consist of ...` (the aggregated field errors of NewPreferredSchedulingTerms); phalanx reproduces that text for
    # values (tests/test_warnings.py), but an invalid key is refused at input.
    pytest.param("PreScore returns error when an incoming Pod has a broken affinity",
                 lambda: napod(preferred=[(2, term(expr("invalid key", "In", "bar")))]), [("node1", LABEL1)], None,
                 True, ERROR, None,
                 marks=pytest.mark.skip(reason="phalanx's Pod model refuses the label key \"invalid key\" in a node "
                                        "affinity term at input, as the API server's validateNodeSelectorRequirement "
                                        "(ValidateLabelName) does, so no such pod reaches the scheduler")),
    ("no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is zero",
     napod(preferred=AFFINITY1), [("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)], None, True, None,
     [0, 0, 0]),
    ("only node1 matches the preferred scheduling requirements of pod", napod(preferred=AFFINITY1),
     [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)], None, True, None, [MAX, 0, 0]),
    ("all nodes matches the preferred scheduling requirements of pod but with different priorities ",
     napod(preferred=AFFINITY2), [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)], None, True, None,
     [18, MAX, 36]),
    ("added affinity", napod(), [("node1", LABEL1), ("node2", LABEL2)], added_preferred(*AFFINITY1), True, None,
     [MAX, 0]),
    ("added affinity and pod has default affinity", napod(preferred=AFFINITY1),
     [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)],
     added_preferred((3, term(expr("key", "In", "value")))), True, None, [40, 60, MAX]),
    # runPreScore is true in upstream's case despite its name; run as upstream does.
    ("calculate the priorities correctly even if PreScore is not called", napod(preferred=AFFINITY2),
     [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)], None, True, None, [18, MAX, 36]),
]


@pytest.mark.parametrize("name, pod, nodes, args, run_prescore, want_prescore, expected",
                         params(NODE_AFFINITY_SCORE_CASES))
def test_node_affinity_priority(name, pod, nodes, args, run_prescore, want_prescore, expected):
    """TestNodeAffinityPriority: PreScore (when the case runs it), Score, NormalizeScore."""
    cfg = config("NodeAffinity", ["preScore", "score"] if run_prescore else ["score"], args)
    pod = pod() if callable(pod) else pod
    _, p, ev = cycle([nanode(n, labels) for n, labels in nodes], pod, cfg)
    assert (p.score_error is not None) is (want_prescore == ERROR)
    assert skipped(p, "NodeAffinity", "preScore") is (want_prescore == SKIP)
    if expected is not None:
        assert np.asarray(ev.normalized["NodeAffinity"]).tolist() == expected


# node_affinity_test.go's Test_isSchedulableAfterNodeChange is in tests/test_upstream_hints.py.


# TestPodMatchesNodeSelectorAndAffinityTerms (component-helpers GetRequiredNodeAffinity(pod).Match): the pod's
# nodeSelector and required terms through the NodeAffinity Filter. (name, pod (or a function making it), node name
# ("" upstream: "node"), node labels, expected match). Node names "node_1"/"node_2" are "node-1"/"node-2".
def _no_terms():
    return napod(required=[])


POD_MATCHES_CASES = [
    ("no selector", napod(), "", {}, True),
    ("missing labels", napod({"foo": "bar"}), "", {}, False),
    ("same labels", napod({"foo": "bar"}), "", {"foo": "bar"}, True),
    ("node labels are superset", napod({"foo": "bar"}), "", {"foo": "bar", "baz": "blah"}, True),
    ("node labels are subset", napod({"foo": "bar", "baz": "blah"}), "", {"foo": "bar"}, False),
    ("Pod with matchExpressions using In operator that matches the existing node",
     napod(required=[term(expr("foo", "In", "bar", "value2"))]), "", {"foo": "bar"}, True),
    ("Pod with matchExpressions using Gt operator that matches the existing node",
     napod(required=[term(expr("kernel-version", "Gt", "0204"))]), "", {"kernel-version": "0206"}, True),
    ("Pod with matchExpressions using NotIn operator that matches the existing node",
     napod(required=[term(expr("mem-type", "NotIn", "DDR", "DDR2"))]), "", {"mem-type": "DDR3"}, True),
    ("Pod with matchExpressions using Exists operator that matches the existing node",
     napod(required=[term(expr("GPU", "Exists"))]), "", {"GPU": "NVIDIA-GRID-K1"}, True),
    ("Pod with affinity that don't match node's labels won't schedule onto the node",
     napod(required=[term(expr("foo", "In", "value1", "value2"))]), "", {"foo": "bar"}, False),
    # Upstream's nil and empty term lists are one and the same here (an empty list). The API server refuses both
    # ("must have at least one node selector term"); a pod built in Python carries them.
    ("Pod with a nil []NodeSelectorTerm in affinity, can't match the node's labels and won't schedule onto the node",
     _no_terms, "", {"foo": "bar"}, False),
    ("Pod with an empty []NodeSelectorTerm in affinity, can't match the node's labels and won't schedule onto the "
     "node", _no_terms, "", {"foo": "bar"}, False),
    ("Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto the node",
     napod(required=[term()]), "", {"foo": "bar"}, False),
    ("Pod with no Affinity will schedule onto a node", napod(), "", {"foo": "bar"}, True),
    ("Pod with Affinity but nil NodeSelector will schedule onto a node", napod(node_affinity_only=True), "",
     {"foo": "bar"}, True),
    ("Pod with multiple matchExpressions ANDed that matches the existing node", napod(required=[GPU_NOT_AMD]), "",
     {"GPU": "NVIDIA-GRID-K1"}, True),
    ("Pod with multiple matchExpressions ANDed that doesn't match the existing node",
     napod(required=[term(expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER"))]), "",
     {"GPU": "NVIDIA-GRID-K1"}, False),
    ("Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule onto the "
     "node",
     napod(required=[term(expr("foo", "In", "bar", "value2")), term(expr("diffkey", "In", "wrong", "value2"))]),
     "", {"foo": "bar"}, True),
    ("Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are satisfied, "
     "will schedule onto the node",
     napod({"foo": "bar"}, required=[term(expr("foo", "Exists"))]), "", {"foo": "bar"}, True),
    ("Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we are "
     "deprecating) is not satisfied, won't schedule onto the node",
     napod({"foo": "bar"}, required=[term(expr("foo", "Exists"))]), "", {"foo": "barrrrrr"}, False),
    ("Pod with an invalid value in Affinity term won't be scheduled onto the node",
     napod(required=[term(expr("foo", "NotIn", "invalid value: ___@#$%^"))]), "", {"foo": "bar"}, False),
    ("Pod with matchFields using In operator that matches the existing node",
     napod(required=[term(fields=[name_in("node-1")])]), "node-1", {}, True),
    ("Pod with matchFields using In operator that does not match the existing node",
     napod(required=[term(fields=[name_in("node-1")])]), "node-2", {}, False),
    ("Pod with two terms: matchFields does not match, but matchExpressions matches",
     napod(required=[term(fields=[name_in("node-1")]), term(expr("foo", "In", "bar"))]), "node-2",
     {"foo": "bar"}, True),
    ("Pod with one term: matchFields does not match, but matchExpressions matches",
     napod(required=[term(expr("foo", "In", "bar"), fields=[name_in("node-1")])]), "node-2", {"foo": "bar"},
     False),
    ("Pod with one term: both matchFields and matchExpressions match",
     napod(required=[term(expr("foo", "In", "bar"), fields=[name_in("node-1")])]), "node-1", {"foo": "bar"},
     True),
    ("Pod with two terms: both matchFields and matchExpressions do not match",
     napod(required=[term(fields=[name_in("node-1")]), term(expr("foo", "In", "not-match-to-bar"))]), "node-2",
     {"foo": "bar"}, False),
]


@pytest.mark.parametrize("name, pod, node_name, labels, want", params(POD_MATCHES_CASES))
def test_pod_matches_node_selector_and_affinity_terms(name, pod, node_name, labels, want):
    """TestPodMatchesNodeSelectorAndAffinityTerms through the NodeAffinity Filter (PreFilter off)."""
    pod = pod() if callable(pod) else pod
    sched, p, ev = cycle([nanode(node_name or "node", labels)], pod, config("NodeAffinity", ["filter"]))
    assert filter_status(sched, p, ev, "NodeAffinity", 0) == (None if want else POD_MISMATCH)


# TestNodeSelectorMatch (component-helpers NewNodeSelector(...).Match, what the plugin builds of
# addedAffinity.requiredDuringSchedulingIgnoredDuringExecution): the selector as addedAffinity, the expected match
# as the Filter's success (else the enforced reason). (name, terms, node name, node labels, expected match).
# Left out: "nil node" (no node to give), "invalid field selector and label selector" (NewNodeSelector's parse
# error: phalanx's model refuses matchFields In with two values, and an invalid key, as the configuration's
# validation does).
NODE_SELECTOR_MATCH_CASES = [
    ("node matches field selector, but not labels",
     [term(expr("label_1", "In", "label_1_val"), fields=[name_in("host-1")])], "host-1", {}, False),
    ("node matches field selector and label selector",
     [term(expr("label_1", "In", "label_1_val"), fields=[name_in("host-1")])], "host-1",
     {"label_1": "label_1_val"}, True),
    ("second term matches", [term(expr("label_1", "In", "label_1_val")), term(fields=[name_in("host-1")])],
     "host-1", {}, True),
]


@pytest.mark.parametrize("name, terms, node_name, labels, want", params(NODE_SELECTOR_MATCH_CASES))
def test_node_selector_match(name, terms, node_name, labels, want):
    """TestNodeSelectorMatch through NodeAffinity's addedAffinity (PreFilter and Filter)."""
    cfg = config("NodeAffinity", ["preFilter", "filter"], added_required(*terms))
    sched, p, ev = cycle([nanode(node_name, labels)], napod(), cfg)
    assert filter_status(sched, p, ev, "NodeAffinity", 0) == (None if want else ENFORCED_MISMATCH)


# TestPreferredSchedulingTermsScore (component-helpers PreferredSchedulingTerms.Score): the terms as the pod's
# preferred terms, the expected score as NodeAffinity's raw Score. Left out: "invalid field selector and label
# selector" and "invalid field selector but no weight, error not reported" (phalanx's model refuses matchFields In
# with two values, an invalid key and weight 0 at input, as the API server's validation does).
def test_preferred_scheduling_terms_score():
    """TestPreferredSchedulingTermsScore "first and third term match": weights 5 (metadata.name In host_1),
    7 (unknown_label), 11 (label_1 In label_1_val) on host_1 labelled label_1=label_1_val: 16."""
    pod = napod(preferred=[(5, term(fields=[name_in("host-1")])),
                           (7, term(expr("unknown_label", "In", "unknown_label_val"))),
                           (11, term(expr("label_1", "In", "label_1_val")))])
    _, p, ev = cycle([nanode("host-1", {"label_1": "label_1_val"})], pod,
                     config("NodeAffinity", ["preScore", "score"]))
    assert p.score_error is None
    assert np.asarray(ev.raw["NodeAffinity"]).tolist() == [16]
