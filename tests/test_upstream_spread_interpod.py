"""Upstream kube-scheduler's own unit-test vectors for PodTopologySpread and InterPodAffinity, replayed through phalanx.

Sources (kubernetes/kubernetes, pkg/scheduler/framework/plugins/...; the stored newest versions, which use v1.36's
`fwk` package where they have been touched since):
  podtopologyspread/scoring_test.go    TestPreScoreSkip, TestPreScoreStateEmptyNodes, TestPodTopologySpreadScore
  podtopologyspread/filtering_test.go  TestPreFilterState, TestSingleConstraint, TestMultipleConstraints
  podtopologyspread/plugin_test.go     Test_isSchedulableAfterNodeChange, Test_isSchedulableAfterPodChange
  interpodaffinity/scoring_test.go     TestPreferredAffinity, TestPreferredAffinityWithHardPodAffinitySymmetricWeight
  interpodaffinity/filtering_test.go   TestRequiredAffinitySingleNode, TestRequiredAffinityMultipleNodes (the newest
                                       stored version predates the `fwk` rename; its cases are v1.36's semantics)
  interpodaffinity/plugin_test.go      Test_isSchedulableAfterPodChange, Test_isSchedulableAfterNodeChange

Every case id starts with the upstream test function's initials and carries the upstream case name. The cluster,
pods and expected values are upstream's, as data; only the plumbing is phalanx's: each case runs `explain` on a
profile that enables the plugin under test alone (with the args upstream's test builds it with), plus
NodeUnschedulable to leave upstream's `failedNodes` out of the feasible set (they are cordoned here; upstream
simply does not pass them to PreScore/Score).

Translations (semantics unchanged):
  - upstream pods without a name get one (p0, p1, ...): phalanx keys pods by namespace/name;
  - namespace "" (Go's zero value, upstream's `defaultNamespace`) is "default", in pods and in terms' `namespaces`;
    namespace names that are not DNS labels (which phalanx's model refuses, as the API server does) are renamed
    consistently: "subteamN.teamM" -> "subteamN-teamM", "NS1"/"NS2" -> "ns1"/"ns2"; likewise node and pod names
    (DNS subdomains): "nodeA" -> "nodea", "podA" -> "poda";
  - upstream's feature-gate switches (enableNodeInclusionPolicy, enableMatchLabelKeys) are GA in v1.36 and always on
    in phalanx. With the gate off, upstream still honours the pod's required node affinity and ignores taints
    (filtering.go calPreFilterState / scoring.go PreScore: `if !enableNodeInclusionPolicy... requiredNodeAffinity
    .Match`), which is exactly what the default policies (nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore) do, so
    those cases are ported as they are; cases that depend on a gate being off are left out (listed below).
PodTopologySpread's Filter status decides its reason (filtering.go Filter): a missing topology label is
UnschedulableAndUnresolvable with ErrReasonNodeLabelNotMatch, a skew failure Unschedulable with
ErrReasonConstraintsNotMatch; the tests check both from the upstream code. InterPodAffinity's reasons are in
upstream's test vectors.
"""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from phalanx.cluster_models import ClusterObjects
from phalanx.cluster_models.objects import Affinity, LabelSelector, Namespace, Node, Pod
from phalanx.cluster_models.spreading import DefaultSelectors
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.config import config_from_doc
from phalanx.sched.explain import explain_pod

S, U, UU = "Success", "Unschedulable", "UnschedulableAndUnresolvable"
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
PTS, IPA = "PodTopologySpread", "InterPodAffinity"
R_SKEW = "node(s) didn't match pod topology spread constraints"
R_LABEL = R_SKEW + " (missing required label)"
R_AFF = "node(s) didn't match pod affinity rules"
R_ANTI = "node(s) didn't match pod anti-affinity rules"
R_EXIST = "node(s) didn't satisfy existing pods anti-affinity rules"


# ----------------------------------------------------------------------------------------------------- builders
def node(name, labels=None, taints=(), failed=False):
    """upstream st.MakeNode(): only the labels given (no hostname label unless named)."""
    spec = {"taints": [{"key": k, "value": v, "effect": e} for k, v, e in taints]}
    if failed:
        spec["unschedulable"] = True
    return Node.model_validate({"metadata": {"name": name, "labels": dict(labels or {})}, "spec": spec})


UNSCHEDULABLE_TAINT = [("node.kubernetes.io/unschedulable", "", "NoSchedule")]   # filtering_test.go `taints`


def pod(name, labels=None, on="", ns="default", spread=(), node_selector=None, node_affinity=None, affinity=None,
        terminating=False, owner=None, validate=True, tolerations=()):
    """affinity: a v1.Affinity manifest (camelCase) with podAffinity / podAntiAffinity.
    validate=False: the affinity is set after the model is built (API validation skipped, as upstream's unit tests
    build pods the API server would refuse, e.g. a term without topologyKey)."""
    spread = [dict(c) for c in spread]
    # minDomains with ScheduleAnyway: refused by the API server (and by phalanx's model); upstream's test builds it
    # anyway ("This test is artificial"), so it is set after validation.
    late_min_domains = {i: c.pop("minDomains") for i, c in enumerate(spread)
                        if "minDomains" in c and c["whenUnsatisfiable"] != "DoNotSchedule"}
    # matchLabelKeys without a labelSelector: refused likewise ("must not be specified when labelSelector is not
    # set"); upstream's PreFilter test builds it to show the keys are then ignored.
    late_mlk = {i: c.pop("matchLabelKeys") for i, c in enumerate(spread)
                if "matchLabelKeys" in c and "labelSelector" not in c}
    meta = {"name": name, "namespace": ns, "labels": dict(labels or {})}
    if terminating:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner, "uid": "u",
                                    "controller": True}]
    spec = {"containers": [{"name": "c"}], "nodeName": on, "topologySpreadConstraints": list(spread),
            "tolerations": list(tolerations)}
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    aff = dict(affinity or {})
    if node_affinity is not None:
        aff["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [node_affinity]}]}}
    if not validate:
        p = Pod.model_validate({"metadata": meta, "spec": spec})
        p.spec.affinity = Affinity.model_validate(aff)
        return p
    if aff:
        spec["affinity"] = aff
    p = Pod.model_validate({"metadata": meta, "spec": spec})
    for i, v in late_min_domains.items():
        p.spec.topology_spread_constraints[i].min_domains = v
    for i, v in late_mlk.items():
        p.spec.topology_spread_constraints[i].match_label_keys = v
    return p


def exists(key):
    return {"matchExpressions": [{"key": key, "operator": "Exists"}]}


FOO, BAR = exists("foo"), exists("bar")     # upstream fooSelector, barSelector
_UNSET = object()


def sc(max_skew, key, when, selector=_UNSET, min_domains=None, affinity_policy=None, taints_policy=None, mlk=None):
    """upstream st.SpreadConstraint(maxSkew, key, when, selector, minDomains, nodeAffinityPolicy, nodeTaintsPolicy,
    matchLabelKeys); selector None is a nil labelSelector."""
    c = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    if selector is not _UNSET and selector is not None:
        c["labelSelector"] = selector
    if min_domains is not None:
        c["minDomains"] = min_domains
    if affinity_policy is not None:
        c["nodeAffinityPolicy"] = affinity_policy
    if taints_policy is not None:
        c["nodeTaintsPolicy"] = taints_policy
    if mlk:
        c["matchLabelKeys"] = list(mlk)
    return c


def soft(*a, **kw):
    return sc(a[0], a[1], "ScheduleAnyway", *a[2:], **kw)


def hard(*a, **kw):
    return sc(a[0], a[1], "DoNotSchedule", *a[2:], **kw)


def foo_pods(spec: str, labels=None):
    """'node-a:2 node-b:1' -> pods labelled foo="" (or `labels`), named p-<node suffix><i> as upstream."""
    out = []
    for part in spec.split():
        n, k = part.split(":")
        for i in range(int(k)):
            out.append(pod(f"p-{n[5:]}{i + 1}", dict(labels or {"foo": ""}), on=n))
    return out


def report(incoming, nodes, existing=(), plugin=PTS, points=("preFilter", "filter"), args=None, namespaces=(),
           default_selectors=None):
    doc = {"kind": "KubeSchedulerConfiguration", "profiles": [{"plugins": {
        "multiPoint": {"disabled": [{"name": "*"}],
                       "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"},
                                   {"name": "NodeUnschedulable"}]},
        **{point: {"enabled": [{"name": plugin}]} for point in points}},
        "pluginConfig": [{"name": plugin, "args": dict(args or {})}]}]}
    cluster = Cluster.from_objects(ClusterObjects(nodes=list(nodes), pods=list(existing),
                                                  namespaces=list(namespaces)))
    if default_selectors is not None:
        cluster.default_selectors = default_selectors
    return explain_pod(Scheduler(cluster, config_from_doc(doc)), incoming)


def filter_statuses(rep, plugin):
    """{node: (status, reasons)}; None when the plugin's PreFilter skipped the pod (its Filter does not run)."""
    out = {}
    for n in rep["nodes"]:
        st = n["filters"].get(plugin)
        if st is None:
            return None
        out[n["name"]] = (st["status"], st["reasons"])
    return out


def scores(rep, plugin):
    """{node: normalized score} over the feasible nodes; "skip" when PreScore skipped the pod."""
    out = {}
    for n in rep["nodes"]:
        if n["total"] is None:
            continue
        s = n["scores"][plugin]
        if s.get("skipped"):
            return "skip"
        out[n["name"]] = s["normalized"]
    return out


def raw_scores(rep, plugin):
    return {n["name"]: n["scores"][plugin]["raw"] for n in rep["nodes"] if n["total"] is not None}


def pts_want(codes: dict) -> dict:
    """PodTopologySpread's Filter reason for each status code (filtering.go Filter)."""
    reason = {S: [], U: [R_SKEW], UU: [R_LABEL]}
    return {k: (v, reason[v]) for k, v in codes.items()}


# ============================================================================ podtopologyspread: filtering_test.go
def _zone4(extra=None):
    """The four-node zone1/zone2 layout most filter cases use: node-a, node-b in zone1, node-x, node-y in zone2,
    each with label node=<name>."""
    extra = extra or {}
    return [node(n, {"zone": z, "node": n, **extra.get(n, {})}) for n, z in
            (("node-a", "zone1"), ("node-b", "zone1"), ("node-x", "zone2"), ("node-y", "zone2"))]


def _node_only(names, extra=None, taints=None):
    extra, taints = extra or {}, taints or {}
    return [node(n, {"node": n, **extra.get(n, {})}, taints.get(n, ())) for n in names]


_FOO_NODES = {"node-a": {"foo": ""}, "node-b": {"foo": ""}, "node-x": {"foo": ""}}   # node-y lacks label foo

# (upstream case name, incoming pod, nodes, existing pods, want codes)
SINGLE_CONSTRAINT = [
    ("no existing pods",
     pod("p", {"foo": ""}, spread=[hard(1, "zone", FOO)]), _zone4(), [],
     {"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
    ("no existing pods, incoming pod doesn't match itself",
     pod("p", {"foo": ""}, spread=[hard(1, "zone", BAR)]), _zone4(), [],
     {"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
    ("existing pods in a different namespace do not count",
     pod("p", {"foo": ""}, spread=[hard(1, "zone", FOO)]), _zone4(),
     [pod("p-a1", {"foo": ""}, on="node-a", ns="ns1"), pod("p-b1", {"foo": ""}, on="node-a", ns="ns2"),
      pod("p-x1", {"foo": ""}, on="node-x"), pod("p-y1", {"foo": ""}, on="node-y")],
     {"node-a": S, "node-b": S, "node-x": U, "node-y": U}),
    ("existing pods do not match null selector",
     pod("p", {"foo": ""}, spread=[hard(1, "zone", None)]), _zone4(), foo_pods("node-x:1 node-y:1"),
     {"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
    ("pods spread across zones as 3/3, all nodes fit",
     pod("p", {"foo": ""}, spread=[hard(1, "zone", FOO)]), _zone4(), foo_pods("node-a:2 node-b:1 node-y:3"),
     {"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
    ("pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
     pod("p", {"foo": ""}, spread=[hard(1, "zone", FOO)]),
     [node("node-a", {"zone": "zone1", "node": "node-a"}), node("node-b", {"zon": "zone1", "node": "node-b"}),
      node("node-x", {"zone": "zone2", "node": "node-x"}), node("node-y", {"zone": "zone2", "node": "node-y"})],
     foo_pods("node-a:1 node-b:1 node-x:1 node-y:1"),
     {"node-a": S, "node-b": UU, "node-x": U, "node-y": U}),
    ("pod cannot be scheduled as all nodes don't have label 'rack'",
     pod("p", {"foo": ""}, spread=[hard(1, "rack", FOO)]),
     [node("node-a", {"zone": "zone1", "node": "node-a"}), node("node-x", {"zone": "zone2", "node": "node-x"})], [],
     {"node-a": UU, "node-x": UU}),
    ("pods spread across nodes as 2/1/0/3, only node-x fits",
     pod("p", {"foo": ""}, spread=[hard(1, "node", FOO)]), _zone4(), foo_pods("node-a:2 node-b:1 node-y:3"),
     {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    ("pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
     pod("p", {"foo": ""}, spread=[hard(2, "node", FOO)]), _zone4(), foo_pods("node-a:2 node-b:1 node-y:3"),
     {"node-a": U, "node-b": S, "node-x": S, "node-y": U}),
    ("pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
     pod("p", {"bar": ""}, spread=[hard(1, "node", FOO)]), _zone4(), foo_pods("node-a:2 node-b:1 node-y:3"),
     {"node-a": U, "node-b": S, "node-x": S, "node-y": U}),
    ("incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
     pod("p", {"foo": ""}, spread=[hard(1, "node", FOO)],
         node_affinity={"key": "node", "operator": "In", "values": ["node-a", "node-y"]}),
     _zone4(), foo_pods("node-a:2 node-b:1 node-y:3"),
     {"node-a": S, "node-b": S, "node-x": S, "node-y": U}),
    ("terminating Pods should be excluded",
     pod("p", {"foo": ""}, spread=[hard(1, "node", FOO)]), _node_only(["node-a", "node-b"]),
     [pod("p-a", {"foo": ""}, on="node-a", terminating=True), pod("p-b", {"foo": ""}, on="node-b")],
     {"node-a": S, "node-b": U}),
    ("incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
     pod("p", {"foo": ""}, spread=[hard(1, "zone", FOO)],
         node_affinity={"key": "node", "operator": "NotIn", "values": ["node-b"]}),
     _zone4(), foo_pods("node-b:2 node-y:1"),
     {"node-a": S, "node-b": S, "node-x": U, "node-y": U}),
    ("pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, "
     "then the third node fits",
     pod("p", {"foo": ""}, spread=[hard(2, "node", FOO, min_domains=4)]), _node_only(["node-a", "node-b", "node-c"]),
     foo_pods("node-a:2 node-b:2 node-c:1"),
     {"node-a": U, "node-b": U, "node-c": S}),
    ("pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, "
     "then the all nodes fit",
     pod("p", {"foo": ""}, spread=[hard(2, "node", FOO, min_domains=2)]), _node_only(["node-a", "node-b", "node-c"]),
     foo_pods("node-a:2 node-b:2 node-c:1"),
     {"node-a": S, "node-b": S, "node-c": S}),
    ("pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, "
     "then the third and fourth nodes fit",
     pod("p", {"foo": ""}, spread=[hard(2, "zone", FOO, min_domains=3)]), _zone4(),
     [pod("p-b1", {"foo": ""}, on="node-a"), pod("p-b2", {"foo": ""}, on="node-b"),
      pod("p-y1", {"foo": ""}, on="node-y")],
     {"node-a": U, "node-b": U, "node-x": S, "node-y": S}),
    ("pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes fit",
     pod("p", {"foo": ""}, spread=[hard(2, "zone", FOO, min_domains=1)]), _zone4(),
     [pod("p-b1", {"foo": ""}, on="node-a"), pod("p-b2", {"foo": ""}, on="node-b"),
      pod("p-y1", {"foo": ""}, on="node-y")],
     {"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
    ("NodeAffinityPolicy honored with labelSelectors",
     pod("p", {"foo": ""}, spread=[hard(1, "node", FOO)], node_selector={"foo": ""}),
     _node_only(["node-a", "node-b", "node-x", "node-y"], _FOO_NODES),
     [pod("p-b1", {"foo": ""}, on="node-a"), pod("p-b2", {"foo": ""}, on="node-b"),
      pod("p-y1", {"foo": ""}, on="node-y")],
     {"node-a": U, "node-b": U, "node-x": S, "node-y": S}),
    ("NodeAffinityPolicy ignored with labelSelectors",
     pod("p", {"foo": ""}, spread=[hard(1, "node", FOO, affinity_policy="Ignore")], node_selector={"foo": ""}),
     _node_only(["node-a", "node-b", "node-x", "node-y"], _FOO_NODES),
     [pod("p-b1", {"foo": ""}, on="node-a"), pod("p-b2", {"foo": ""}, on="node-b"),
      pod("p-y1", {"foo": ""}, on="node-y")],
     {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    ("NodeAffinityPolicy honored with nodeAffinity",
     pod("p", {"foo": ""}, spread=[hard(1, "node", FOO)],
         node_affinity={"key": "foo", "operator": "In", "values": [""]}),
     _node_only(["node-a", "node-b", "node-x", "node-y"], _FOO_NODES),
     [pod("p-b1", {"foo": ""}, on="node-a"), pod("p-b2", {"foo": ""}, on="node-b"),
      pod("p-y1", {"foo": ""}, on="node-y")],
     {"node-a": U, "node-b": U, "node-x": S, "node-y": S}),
    ("NodeAffinityPolicy ignored with labelSelectors (nodeAffinity)",    # upstream reuses the previous name
     pod("p", {"foo": ""}, spread=[hard(1, "node", FOO, affinity_policy="Ignore")],
         node_affinity={"key": "foo", "operator": "In", "values": [""]}),
     _node_only(["node-a", "node-b", "node-x", "node-y"], _FOO_NODES),
     [pod("p-b1", {"foo": ""}, on="node-a"), pod("p-b2", {"foo": ""}, on="node-b"),
      pod("p-y1", {"foo": ""}, on="node-y")],
     {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    ("NodeTaintsPolicy honored",
     pod("p", {"foo": ""}, spread=[hard(1, "node", FOO, taints_policy="Honor")]),
     _node_only(["node-a", "node-b", "node-x", "node-y"], _FOO_NODES, {"node-y": UNSCHEDULABLE_TAINT}),
     [pod("p-b1", {"foo": ""}, on="node-a"), pod("p-b2", {"foo": ""}, on="node-b"),
      pod("p-y1", {"foo": ""}, on="node-y")],
     {"node-a": U, "node-b": U, "node-x": S, "node-y": S}),
    ("NodeTaintsPolicy ignored",
     pod("p", {"foo": ""}, spread=[hard(1, "node", FOO)]),
     _node_only(["node-a", "node-b", "node-x", "node-y"], _FOO_NODES, {"node-y": UNSCHEDULABLE_TAINT}),
     [pod("p-b1", {"foo": ""}, on="node-a"), pod("p-b2", {"foo": ""}, on="node-b"),
      pod("p-y1", {"foo": ""}, on="node-y")],
     {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
]

_FOO_BAR = {"foo": "", "bar": ""}
_ZONE_NODE_FOO = {"node-a": {"foo": ""}, "node-b": {"foo": ""}, "node-x": {"foo": ""}}

MULTIPLE_CONSTRAINTS = [
    ("two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
     pod("p", {"foo": ""}, spread=[hard(1, "zone", FOO), hard(1, "node", FOO)]), _zone4(),
     foo_pods("node-a:2 node-b:1 node-y:3"),
     {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    ("two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
     pod("p", {"foo": ""}, spread=[hard(1, "zone", FOO), hard(1, "node", FOO)]), _zone4(),
     foo_pods("node-a:2 node-b:1 node-y:4"),
     {"node-a": U, "node-b": U, "node-x": U, "node-y": U}),
    ("Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
     pod("p", _FOO_BAR, spread=[hard(1, "zone", FOO), hard(1, "node", BAR)]), _zone4(),
     [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-y1", {"bar": ""}, on="node-y")],
     {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    ("Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
     pod("p", _FOO_BAR, spread=[hard(1, "zone", FOO), hard(1, "node", BAR)]), _zone4(),
     [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-x1", {"bar": ""}, on="node-x"),
      pod("p-y1", {"bar": ""}, on="node-y")],
     {"node-a": U, "node-b": U, "node-x": U, "node-y": U}),
    ("Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
     pod("p", _FOO_BAR, spread=[hard(1, "zone", FOO), hard(1, "node", BAR)]), _zone4(),
     [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-a2", _FOO_BAR, on="node-a"),
      pod("p-y1", {"foo": ""}, on="node-y"), pod("p-y2", _FOO_BAR, on="node-y"),
      pod("p-y3", {"foo": ""}, on="node-y")],
     {"node-a": U, "node-b": S, "node-x": U, "node-y": U}),
    ("Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
     pod("p", {"bar": ""}, spread=[hard(1, "zone", FOO), hard(1, "node", BAR)]), _zone4(),
     [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-x1", {"bar": ""}, on="node-x"),
      pod("p-y1", {"bar": ""}, on="node-y")],
     {"node-a": S, "node-b": S, "node-x": U, "node-y": U}),
    ("two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
     pod("p", {"foo": ""}, spread=[hard(1, "zone", FOO), hard(1, "node", FOO)]),
     [node("node-a", {"zone": "zone1", "node": "node-a"}), node("node-b", {"zone": "zone1", "node": "node-b"}),
      node("node-x", {"zone": "zone2"}), node("node-y", {"zone": "zone2", "node": "node-y"})],
     [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-y3", {"foo": ""}, on="node-y")],
     {"node-a": U, "node-b": S, "node-x": UU, "node-y": U}),
    ("two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
     pod("p", {"foo": ""}, node_selector={"foo": ""},
         spread=[hard(1, "zone", FOO), hard(1, "node", FOO, affinity_policy="Ignore")]),
     _zone4(_ZONE_NODE_FOO), foo_pods("node-a:1 node-b:1 node-y:1"),
     {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    ("two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
     pod("p", {"foo": ""}, spread=[hard(1, "zone", FOO, taints_policy="Honor"), hard(1, "node", FOO)]),
     [node("node-a", {"zone": "zone1", "node": "node-a", "foo": ""}),
      node("node-b", {"zone": "zone1", "node": "node-b", "foo": ""}),
      node("node-x", {"zone": "zone2", "node": "node-x", "foo": ""}),
      node("node-y", {"zone": "zone2", "node": "node-y"}, UNSCHEDULABLE_TAINT)],
     foo_pods("node-a:1 node-b:1 node-y:1"),
     {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    ("two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
     pod("p", {"foo": ""}, node_selector={"foo": ""}, spread=[hard(1, "zone", FOO), hard(1, "node", FOO)]),
     [node("node-a", {"zone": "zone1", "node": "node-a", "foo": ""}), node("node-b", {"zone": "zone1", "node": "node-b"}),
      node("node-x", {"zone": "zone2", "node": "node-x", "foo": ""}),
      node("node-y", {"zone": "zone2", "node": "node-y", "foo": ""}, UNSCHEDULABLE_TAINT)],
     foo_pods("node-a:1 node-b:1 node-y:1"),
     {"node-a": U, "node-b": S, "node-x": S, "node-y": U}),
    ("two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
     pod("p", {"foo": ""}, node_selector={"foo": ""},
         spread=[hard(1, "zone", FOO, taints_policy="Honor"), hard(1, "node", FOO, affinity_policy="Ignore")]),
     [node("node-a", {"zone": "zone1", "node": "node-a", "foo": ""}), node("node-b", {"zone": "zone1", "node": "node-b"}),
      node("node-x", {"zone": "zone2", "node": "node-x", "foo": ""}),
      node("node-y", {"zone": "zone2", "node": "node-y", "foo": ""}, UNSCHEDULABLE_TAINT)],
     foo_pods("node-a:1 node-b:1 node-y:1"),
     {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    ("two Constraints on zone, spreads = [3/3, 2/1]",
     pod("p", _FOO_BAR, spread=[hard(1, "zone", BAR), hard(1, "zone", FOO)]), _zone4(),
     [pod("p-a1", _FOO_BAR, on="node-a"), pod("p-a2", {"foo": ""}, on="node-a"), pod("p-b1", _FOO_BAR, on="node-b"),
      pod("p-y1", {"foo": ""}, on="node-y"), pod("p-y2", _FOO_BAR, on="node-y"),
      pod("p-y3", {"foo": ""}, on="node-y")],
     {"node-a": U, "node-b": U, "node-x": S, "node-y": S}),
    ("two Constraints on zone, spreads = [3/4, 2/1]",
     pod("p", _FOO_BAR, spread=[hard(1, "zone", BAR), hard(1, "zone", FOO)]), _zone4(),
     [pod("p-a1", _FOO_BAR, on="node-a"), pod("p-a2", {"foo": ""}, on="node-a"), pod("p-b1", _FOO_BAR, on="node-b"),
      pod("p-y1", {"foo": ""}, on="node-y"), pod("p-y2", _FOO_BAR, on="node-y"),
      pod("p-y3", {"foo": ""}, on="node-y"), pod("p-y4", {"foo": ""}, on="node-y")],
     {"node-a": U, "node-b": U, "node-x": U, "node-y": U}),
]

# Both upstream filter tests build the plugin with DefaultingType List and no default constraints.
_LIST = {"defaultingType": "List"}


@pytest.mark.parametrize("name,incoming,nodes,existing,want",
                         [pytest.param(*c, id="TSC: " + c[0]) for c in SINGLE_CONSTRAINT]
                         + [pytest.param(*c, id="TMC: " + c[0]) for c in MULTIPLE_CONSTRAINTS])
def test_pod_topology_spread_filter(name, incoming, nodes, existing, want):
    rep = report(incoming, nodes, existing, PTS, ("preFilter", "filter"), _LIST)
    assert filter_statuses(rep, PTS) == pts_want(want)


# TestPreFilterState checks PreFilter's state: per constraint, the matching pods per domain (TpValueToMatchNum)
# and the two smallest (CriticalPaths). phalanx keeps no such object; the state is checked through what Filter makes
# of it (filtering.go Filter): a node without the key is UnschedulableAndUnresolvable, else the first constraint with
# TpValueToMatchNum[i][value] + selfMatch - CriticalPaths[i][0].MatchNum > maxSkew makes it Unschedulable (every
# case has minDomains 1). `state` below is upstream's expected state, as data: per constraint (topologyKey,
# maxSkew, selfMatch (whether the incoming pod's labels match the state's Selector), TpValueToMatchNum, the
# critical path's MatchNum); the expected Filter codes are computed from it by that rule, never from phalanx.
def _codes_from_state(nodes, state):
    out = {}
    for n in nodes:
        labels, code = n.metadata.labels, S
        for key, max_skew, self_match, counts, min_match in state:
            if key not in labels:
                code = UU
                break
            if counts.get(labels[key], 0) + self_match - min_match > max_skew:
                code = U
                break
        out[n.metadata.name] = code
    return out


_ABC_NODE = lambda extra=None, taints=None: _node_only(["node-a", "node-b", "node-c"], extra, taints)  # noqa: E731
_AB_FOO_C_BAR = {"node-a": {"foo": ""}, "node-b": {"foo": ""}, "node-c": {"bar": ""}}
_BAR_ABBC = [pod("p-a", {"bar": ""}, on="node-a"), pod("p-b", {"bar": ""}, on="node-b"),
             pod("p-c", {"bar": ""}, on="node-b"), pod("p-d", on="node-c")]
_FOO_A = {"foo": "a"}
_FOO_A_PODS = [pod(n, _FOO_A, on=o) for n, o in (("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b"),
                                                 ("p-y1", "node-y"), ("p-y2", "node-y"))]

PREFILTER_STATE = [
    # (upstream case name, incoming pod, nodes, existing pods, state | "skip")
    ("clean cluster with one spreadConstraint",
     pod("p", {"foo": ""}, spread=[hard(5, "zone", {"matchLabels": {"foo": "bar"}})]), _zone4(), [],
     [("zone", 5, 0, {"zone1": 0, "zone2": 0}, 0)]),
    ("normal case with one spreadConstraint",
     pod("p", {"foo": ""}, spread=[hard(1, "zone", FOO)]), _zone4(), foo_pods("node-a:2 node-b:1 node-y:2"),
     [("zone", 1, 1, {"zone1": 3, "zone2": 2}, 2)]),
    ("normal case with null label selector",
     pod("p", {"foo": ""}, spread=[hard(1, "zone", None)]), _zone4(), foo_pods("node-a:2 node-b:1 node-y:2"),
     [("zone", 1, 0, {"zone1": 0, "zone2": 0}, 0)]),
    ("normal case with one spreadConstraint, on a 3-zone cluster",
     pod("p", {"foo": ""}, spread=[hard(1, "zone", FOO)]),
     _zone4() + [node("node-o", {"zone": "zone3", "node": "node-o"}), node("node-p", {"zone": "zone3", "node": "node-p"})],
     foo_pods("node-a:2 node-b:1 node-y:2"),
     [("zone", 1, 1, {"zone1": 3, "zone2": 2, "zone3": 0}, 0)]),
    ("namespace mismatch doesn't count",
     pod("p", {"foo": ""}, spread=[hard(1, "zone", FOO)]), _zone4(),
     [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-a2", {"foo": ""}, on="node-a", ns="ns1"),
      pod("p-b1", {"foo": ""}, on="node-b"), pod("p-y1", {"foo": ""}, on="node-y", ns="ns2"),
      pod("p-y2", {"foo": ""}, on="node-y")],
     [("zone", 1, 1, {"zone1": 2, "zone2": 1}, 1)]),
    ("normal case with two spreadConstraints",
     pod("p", {"foo": ""}, spread=[hard(1, "zone", FOO), hard(1, "node", FOO)]), _zone4(),
     foo_pods("node-a:2 node-b:1 node-y:4"),
     [("zone", 1, 1, {"zone1": 3, "zone2": 4}, 3),
      ("node", 1, 1, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}, 0)]),
    ("soft spreadConstraints should be bypassed",
     pod("p", {"foo": ""}, spread=[soft(1, "zone", FOO), hard(1, "zone", FOO), soft(1, "node", FOO),
                                   hard(1, "node", FOO)]),
     [node("node-a", {"zone": "zone1", "node": "node-a"}), node("node-b", {"zone": "zone1", "node": "node-b"}),
      node("node-y", {"zone": "zone2", "node": "node-y"})], foo_pods("node-a:2 node-b:1 node-y:4"),
     [("zone", 1, 1, {"zone1": 3, "zone2": 4}, 3), ("node", 1, 1, {"node-a": 2, "node-b": 1, "node-y": 4}, 1)]),
    ("different labelSelectors - simple version",
     pod("p", _FOO_BAR, spread=[hard(1, "zone", FOO), hard(1, "node", BAR)]),
     [node("node-a", {"zone": "zone1", "node": "node-a"}), node("node-b", {"zone": "zone1", "node": "node-b"}),
      node("node-y", {"zone": "zone2", "node": "node-y"})],
     [pod("p-a", {"foo": ""}, on="node-a"), pod("p-b", {"bar": ""}, on="node-b")],
     [("zone", 1, 1, {"zone1": 1, "zone2": 0}, 0), ("node", 1, 1, {"node-a": 0, "node-b": 1, "node-y": 0}, 0)]),
    ("different labelSelectors - complex pods",
     pod("p", _FOO_BAR, spread=[hard(1, "zone", FOO), hard(1, "node", BAR)]),
     [node("node-a", {"zone": "zone1", "node": "node-a"}), node("node-b", {"zone": "zone1", "node": "node-b"}),
      node("node-y", {"zone": "zone2", "node": "node-y"})],
     [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-a2", _FOO_BAR, on="node-a"), pod("p-b1", {"foo": ""}, on="node-b"),
      pod("p-y1", {"foo": ""}, on="node-y"), pod("p-y2", _FOO_BAR, on="node-y"), pod("p-y3", {"foo": ""}, on="node-y"),
      pod("p-y4", _FOO_BAR, on="node-y")],
     [("zone", 1, 1, {"zone1": 3, "zone2": 4}, 3), ("node", 1, 1, {"node-a": 1, "node-b": 0, "node-y": 2}, 0)]),
    ("two spreadConstraints, and with podAffinity",
     pod("p", {"foo": ""}, node_affinity={"key": "node", "operator": "NotIn", "values": ["node-x"]},
         spread=[hard(1, "zone", FOO), hard(1, "node", FOO)]), _zone4(), foo_pods("node-a:2 node-b:1 node-y:4"),
     [("zone", 1, 1, {"zone1": 3, "zone2": 4}, 3), ("node", 1, 1, {"node-a": 2, "node-b": 1, "node-y": 4}, 1)]),
    # Upstream runs the two Skip cases without nodes; one node is added here to observe the skip (PreFilter's
    # decision reads the pod and the Services only).
    ("default constraints and a service that doesn't match",
     pod("p", {"foo": "bar"}), [node("node-a", {"node": "node-a"})], [], "skip",
     {"defaultingType": "List", "defaultConstraints": [
         {"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}]}, {"baz": "kep"}),
    ("default soft constraints and a service",
     pod("p", {"foo": "bar"}), [node("node-a", {"node": "node-a"})], [], "skip",
     {"defaultingType": "List", "defaultConstraints": [
         {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": "ScheduleAnyway"}]}, {"foo": "bar"}),
    ("TpKeyToDomainsNum is calculated when MinDomains is enabled",
     pod("p", {"foo": ""}, spread=[hard(1, "zone", FOO), hard(1, "node", FOO)]), _zone4(),
     foo_pods("node-a:2 node-b:1 node-y:4"),
     [("zone", 1, 1, {"zone1": 3, "zone2": 4}, 3),
      ("node", 1, 1, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}, 0)]),
    # With the gate off upstream honours the node selector and ignores taints: the default policies.
    ("feature gate disabled with NodeAffinityPolicy",
     pod("p", {"foo": ""}, node_selector={"foo": ""}, spread=[hard(1, "node", BAR)]), _ABC_NODE(_AB_FOO_C_BAR),
     _BAR_ABBC, [("node", 1, 0, {"node-a": 1, "node-b": 2}, 1)]),
    ("NodeAffinityPolicy honored with labelSelectors",
     pod("p", {"foo": ""}, node_selector={"foo": ""}, spread=[hard(1, "node", BAR)]), _ABC_NODE(_AB_FOO_C_BAR),
     _BAR_ABBC, [("node", 1, 0, {"node-a": 1, "node-b": 2}, 1)]),
    ("NodeAffinityPolicy ignored with labelSelectors",
     pod("p", {"foo": ""}, node_selector={"foo": ""}, spread=[hard(1, "node", BAR, affinity_policy="Ignore")]),
     _ABC_NODE(_AB_FOO_C_BAR), _BAR_ABBC, [("node", 1, 0, {"node-a": 1, "node-b": 2, "node-c": 0}, 0)]),
    ("NodeAffinityPolicy honored with nodeAffinity",
     pod("p", {"foo": ""}, node_affinity={"key": "foo", "operator": "In", "values": [""]},
         spread=[hard(1, "node", BAR)]), _ABC_NODE(_AB_FOO_C_BAR),
     [pod("p-a", {"bar": ""}, on="node-a"), pod("p-c", {"bar": ""}, on="node-b"), pod("p-d", {"bar": ""}, on="node-b"),
      pod("p-e", on="node-c")],
     [("node", 1, 0, {"node-a": 1, "node-b": 2}, 1)]),
    ("NodeAffinityPolicy ignored with nodeAffinity",
     pod("p", {"foo": ""}, node_affinity={"key": "foo", "operator": "In", "values": [""]},
         spread=[hard(1, "node", BAR, affinity_policy="Ignore")]), _ABC_NODE(_AB_FOO_C_BAR), _BAR_ABBC,
     [("node", 1, 0, {"node-a": 1, "node-b": 2, "node-c": 0}, 0)]),
    ("feature gate disabled with NodeTaintsPolicy",
     pod("p", {"foo": ""}, spread=[hard(1, "node", BAR)]),
     _ABC_NODE({"node-c": {"bar": ""}}, {"node-c": UNSCHEDULABLE_TAINT}), _BAR_ABBC,
     [("node", 1, 0, {"node-a": 1, "node-b": 2, "node-c": 0}, 0)]),
    ("NodeTaintsPolicy ignored",
     pod("p", {"foo": ""}, spread=[hard(1, "node", BAR)]),
     _ABC_NODE({"node-c": {"bar": ""}}, {"node-c": UNSCHEDULABLE_TAINT}), _BAR_ABBC,
     [("node", 1, 0, {"node-a": 1, "node-b": 2, "node-c": 0}, 0)]),
    ("NodeTaintsPolicy honored",
     pod("p", {"foo": ""}, spread=[hard(1, "node", BAR, taints_policy="Honor")]),
     _ABC_NODE({"node-c": {"bar": ""}}, {"node-c": UNSCHEDULABLE_TAINT}), _BAR_ABBC,
     [("node", 1, 0, {"node-a": 1, "node-b": 2}, 1)]),
    ("NodeTaintsPolicy honored with tolerated taints",
     pod("p", {"foo": ""}, spread=[hard(1, "node", BAR, taints_policy="Honor")],
         tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]),
     _ABC_NODE({"node-c": {"bar": ""}}, {"node-c": UNSCHEDULABLE_TAINT}), _BAR_ABBC,
     [("node", 1, 0, {"node-a": 1, "node-b": 2, "node-c": 0}, 0)]),
    ("two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
     pod("p", {"foo": ""}, node_selector={"foo": ""},
         spread=[hard(1, "zone", FOO), hard(1, "node", FOO, affinity_policy="Ignore")]),
     [node("node-a", {"zone": "zone1", "node": "node-a", "foo": ""}), node("node-b", {"zone": "zone1", "node": "node-b"}),
      node("node-x", {"zone": "zone2", "node": "node-x", "foo": ""})],
     foo_pods("node-b:2 node-x:1"),
     [("zone", 1, 1, {"zone1": 0, "zone2": 1}, 0), ("node", 1, 1, {"node-a": 0, "node-b": 2, "node-x": 1}, 0)]),
    ("two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
     pod("p", {"foo": ""}, spread=[hard(1, "zone", FOO, taints_policy="Honor"), hard(1, "node", FOO)]),
     [node("node-a", {"zone": "zone1", "node": "node-a", "foo": ""}),
      node("node-b", {"zone": "zone1", "node": "node-b"}, UNSCHEDULABLE_TAINT),
      node("node-x", {"zone": "zone2", "node": "node-x", "foo": ""})],
     foo_pods("node-b:2 node-x:1"),
     [("zone", 1, 1, {"zone1": 0, "zone2": 1}, 0), ("node", 1, 1, {"node-a": 0, "node-b": 2, "node-x": 1}, 0)]),
    ("two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
     pod("p", {"foo": ""}, node_selector={"foo": ""}, spread=[hard(1, "zone", FOO), hard(1, "node", FOO)]),
     [node("node-a", {"zone": "zone1", "node": "node-a"}),
      node("node-b", {"zone": "zone1", "node": "node-b", "foo": ""}, UNSCHEDULABLE_TAINT),
      node("node-x", {"zone": "zone2", "node": "node-x", "foo": ""}), node("node-y", {"zone": "zone2", "node": "node-y"})],
     foo_pods("node-a:2 node-x:1 node-y:1"),
     [("zone", 1, 1, {"zone1": 0, "zone2": 1}, 0), ("node", 1, 1, {"node-b": 0, "node-x": 1}, 0)]),
    ("two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
     pod("p", {"foo": ""}, node_selector={"foo": ""},
         spread=[hard(1, "zone", FOO, affinity_policy="Ignore"), hard(1, "node", FOO, taints_policy="Honor")]),
     [node("node-a", {"zone": "zone1", "node": "node-a"}),
      node("node-b", {"zone": "zone1", "node": "node-b", "foo": ""}, UNSCHEDULABLE_TAINT),
      node("node-x", {"zone": "zone2", "node": "node-x", "foo": ""}),
      node("node-y", {"zone": "zone2", "node": "node-y", "foo": ""})],
     foo_pods("node-a:2 node-x:2 node-y:1"),
     [("zone", 1, 1, {"zone1": 2, "zone2": 3}, 2), ("node", 1, 1, {"node-x": 2, "node-y": 1}, 1)]),
    ("matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
     pod("p", {"foo": "", "bar": "a"}, spread=[hard(1, "zone", FOO, mlk=["bar"])]), _zone4(),
     [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-a2", {"foo": "", "bar": "a"}, on="node-a"),
      pod("p-b1", {"foo": ""}, on="node-b"), pod("p-y1", {"foo": "", "bar": "a"}, on="node-y"),
      pod("p-y2", {"bar": ""}, on="node-y")],
     [("zone", 1, 1, {"zone1": 1, "zone2": 1}, 1)]),
    ("matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
     pod("p", _FOO_A, spread=[hard(1, "zone", {}, mlk=["foo"])]), _zone4(), _FOO_A_PODS,
     [("zone", 1, 1, {"zone1": 3, "zone2": 2}, 2)]),
    ("key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled",
     pod("p", {"foo": ""}, spread=[hard(1, "zone", None, mlk=["bar"])]), _zone4(), _FOO_A_PODS,
     [("zone", 1, 0, {"zone1": 0, "zone2": 0}, 0)]),
    ("key in matchLabelKeys is ignored when it isn't exist in pod.labels",
     pod("p", {"foo": ""}, spread=[hard(1, "zone", FOO, mlk=["bar"])]), _zone4(), _FOO_A_PODS,
     [("zone", 1, 1, {"zone1": 3, "zone2": 2}, 2)]),
    ("two spreadConstraints with the same topologyKey",
     pod("p", _FOO_BAR, spread=[hard(1, "zone", FOO), hard(1, "zone", BAR)]), _zone4(),
     [pod("p-a1", _FOO_BAR, on="node-a"), pod("p-b1", {"foo": ""}, on="node-b"), pod("p-x1", {"bar": ""}, on="node-x"),
      pod("p-y1", _FOO_BAR, on="node-y"), pod("p-y2", {"bar": ""}, on="node-y")],
     [("zone", 1, 1, {"zone1": 2, "zone2": 1}, 1), ("zone", 1, 1, {"zone1": 1, "zone2": 3}, 1)]),
    ("skip if not specified",
     pod("p", {"foo": ""}), [node("node-a", {"zone": "zone1", "node": "node-a"})], [], "skip"),
]
# Left out of TestPreFilterState: "default constraints and a service" and "default constraints and a service, but
# pod has constraints" (upstream runs them on no nodes: the state holds only the constraints, nothing Filter
# could show), "matchLabelKeys ignored when feature gate disabled" and "no pod is matched when LabelSelector is nil
# when feature gate disabled" (MatchLabelKeysInPodTopologySpread is on in v1.36; the latter's state equals the
# gate-enabled case ported above).


def _service(selector):
    out = DefaultSelectors()
    out.services["default"] = [selector]
    return out


@pytest.mark.parametrize("case", [pytest.param(c, id="TPFS: " + c[0]) for c in PREFILTER_STATE])
def test_pod_topology_spread_prefilter_state(case):
    name, incoming, nodes, existing, state = case[:5]
    args, service = (case[5], case[6]) if len(case) > 5 else (_LIST, None)
    rep = report(incoming, nodes, existing, PTS, ("preFilter", "filter"), args,
                 default_selectors=None if service is None else _service(service))
    got = filter_statuses(rep, PTS)
    if state == "skip":
        assert got is None
    else:
        assert got == pts_want(_codes_from_state(nodes, state))


# ============================================================================ podtopologyspread: scoring_test.go
def _hosts(names, key=HOST, extra=None, failed=(), taints=None):
    extra, taints = extra or {}, taints or {}
    return [node(n, {key: n, **extra.get(n, {})}, taints.get(n, ()), failed=n in failed) for n in names]


def _zoned(spec, failed=(), key_host=True):
    """'node-a:zone1 node-b:zone1' -> nodes with label zone (and hostname)."""
    out = []
    for part in spec.split():
        n, z = part.split(":")
        labels = {"zone": z}
        if key_host:
            labels[HOST] = n
        out.append(node(n, labels, failed=n in failed))
    return out


_SPREAD_2103 = "node-a:2 node-b:1 node-d:3"
_SPREAD_4321 = "node-a:4 node-b:3 node-c:2 node-d:1"
_SPREAD_421_3 = "node-a:4 node-b:2 node-x:1 node-y:3"
_ABCD = ["node-a", "node-b", "node-c", "node-d"]
_ABC_FOO = {"node-a": {"foo": ""}, "node-b": {"foo": ""}}
_ABC = ["node-a", "node-b", "node-c"]
_EXISTING_2_1_1 = "node-a:2 node-b:1 node-c:1"

# (upstream case name, incoming pod, nodes (failedNodes cordoned), existing pods, want {node: score}, default selectors)
SCORE = [
    ("one constraint on node, no existing pods",
     pod("p", {"foo": ""}, spread=[soft(1, HOST, FOO)]), _hosts(["node-a", "node-b"]), [],
     {"node-a": 100, "node-b": 100}),
    ("one constraint on node, only one node is candidate",
     pod("p", {"foo": ""}, spread=[soft(1, HOST, FOO)]), _hosts(["node-a", "node-b"], failed=["node-b"]),
     foo_pods("node-a:2 node-b:1"), {"node-a": 100}),
    ("one constraint on node, all nodes have the same number of matching pods",
     pod("p", {"foo": ""}, spread=[soft(1, HOST, FOO)]), _hosts(["node-a", "node-b"]),
     foo_pods("node-a:1 node-b:1"), {"node-a": 100, "node-b": 100}),
    ("one constraint on node, all 4 nodes are candidates",
     pod("p", {"foo": ""}, spread=[soft(1, HOST, FOO)]), _hosts(_ABCD), foo_pods(_SPREAD_2103),
     {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0}),
    ("one constraint on node, null selector",
     pod("p", {"foo": ""}, spread=[soft(1, HOST, None)]), _hosts(_ABCD), foo_pods(_SPREAD_2103),
     {"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100}),
    ("one constraint on node, all 4 nodes are candidates, maxSkew=2",
     pod("p", {"foo": ""}, spread=[soft(2, HOST, FOO)]), _hosts(_ABCD), foo_pods(_SPREAD_2103),
     {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16}),
    ("one constraint on node, all 4 nodes are candidates, maxSkew=3",
     pod("p", {"foo": ""}, spread=[soft(3, HOST, FOO)]), _hosts(_ABCD), foo_pods(_SPREAD_4321),
     {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}),
    ("system defaulting, nodes don't have zone, pods match service",
     pod("p", {"foo": ""}), _hosts(_ABCD), foo_pods(_SPREAD_4321),
     {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}, "service foo"),
    ("one constraint on node, 3 out of 4 nodes are candidates",
     pod("p", {"foo": ""}, spread=[soft(1, HOST, FOO)]),
     _hosts(["node-a", "node-b", "node-x", "node-y"], failed=["node-y"]), foo_pods(_SPREAD_421_3),
     {"node-a": 33, "node-b": 83, "node-x": 100}),
    ("one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
     pod("p", {"foo": ""}, spread=[soft(1, HOST, FOO)]),
     [node("node-a", {HOST: "node-a"}), node("node-b", {"n": "node-b"}), node("node-x", {HOST: "node-x"}),
      node("node-y", {HOST: "node-y"}, failed=True)], foo_pods(_SPREAD_421_3),
     {"node-a": 16, "node-b": 0, "node-x": 100}),
    ("one constraint on zone, 3 out of 4 nodes are candidates",
     pod("p", {"foo": ""}, spread=[soft(1, "zone", FOO)]),
     _zoned("node-a:zone1 node-b:zone1 node-x:zone2 node-y:zone2", failed=["node-y"]), foo_pods(_SPREAD_421_3),
     {"node-a": 75, "node-b": 75, "node-x": 100}),
    ("two Constraints on zone and node, 2 out of 4 nodes are candidates",
     pod("p", {"foo": ""}, spread=[soft(1, "zone", FOO), soft(1, HOST, FOO)]),
     _zoned("node-a:zone1 node-x:zone2 node-b:zone1 node-y:zone2", failed=["node-b", "node-y"]),
     foo_pods("node-a:2 node-b:1 node-x:2 node-y:4"),
     {"node-a": 100, "node-x": 63}),
    ("two Constraints on zone, 2 out of 4 nodes are candidates",
     pod("p", _FOO_BAR, spread=[soft(1, "zone", FOO), soft(1, "zone", BAR)]),
     _zoned("node-a:zone1 node-x:zone2 node-b:zone1 node-y:zone2", failed=["node-b", "node-y"], key_host=False),
     [pod("p-a1", _FOO_BAR, on="node-a"), pod("p-a2", {"foo": ""}, on="node-a"), pod("p-b1", _FOO_BAR, on="node-b"),
      pod("p-y1", {"foo": ""}, on="node-y"), pod("p-y2", _FOO_BAR, on="node-y"),
      pod("p-y3", {"foo": ""}, on="node-y")],
     {"node-a": 85, "node-x": 100}),
    ("two Constraints on zone and node, with different labelSelectors",
     pod("p", _FOO_BAR, spread=[soft(1, "zone", FOO), soft(1, HOST, BAR)]),
     _zoned("node-a:zone1 node-b:zone1 node-x:zone2 node-y:zone2"),
     [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-b1", _FOO_BAR, on="node-b"),
      pod("p-y1", {"foo": ""}, on="node-y"), pod("p-y2", {"bar": ""}, on="node-y")],
     {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60}),
    ("two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
     pod("p", _FOO_BAR, spread=[soft(1, "zone", FOO), soft(1, HOST, BAR)]),
     _zoned("node-a:zone1 node-b:zone1 node-x:zone2 node-y:zone2"),
     [pod("p-b1", {"bar": ""}, on="node-b"), pod("p-x1", {"foo": ""}, on="node-x"),
      pod("p-y1", _FOO_BAR, on="node-y")],
     {"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0}),
    ("two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
     pod("p", _FOO_BAR, spread=[soft(1, "zone", FOO), soft(1, HOST, BAR)]),
     _zoned("node-a:zone1 node-b:zone1 node-x:zone2 node-y:zone2", failed=["node-y"]),
     [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-b1", _FOO_BAR, on="node-b"),
      pod("p-y1", {"foo": ""}, on="node-y"), pod("p-y2", {"bar": ""}, on="node-y")],
     {"node-a": 50, "node-b": 25, "node-x": 100}),
    ("existing pods in a different namespace do not count",
     pod("p", {"foo": ""}, spread=[soft(1, HOST, FOO)]), _hosts(["node-a", "node-b"]),
     [pod("p-a1", {"foo": ""}, on="node-a", ns="ns1"), pod("p-a2", {"foo": ""}, on="node-a"),
      pod("p-b1", {"foo": ""}, on="node-b"), pod("p-b2", {"foo": ""}, on="node-b")],
     {"node-a": 100, "node-b": 33}),
    ("terminating Pods should be excluded",
     pod("p", {"foo": ""}, spread=[soft(1, HOST, FOO)]), _hosts(["node-a", "node-b"]),
     [pod("p-a", {"foo": ""}, on="node-a", terminating=True), pod("p-b", {"foo": ""}, on="node-b")],
     {"node-a": 100, "node-b": 0}),
    ("minDomains has no effect when ScheduleAnyway",
     pod("p", {"foo": ""}, spread=[soft(2, "node", FOO, min_domains=10)]), _hosts(_ABC, key="node"),
     foo_pods("node-a:2 node-b:2 node-c:1"),
     {"node-a": 75, "node-b": 75, "node-c": 100}),
    ("NodeAffinityPolicy honoed with labelSelectors",
     pod("p", {"foo": ""}, node_selector={"foo": ""}, spread=[soft(1, "node", FOO)]),
     _hosts(_ABC, key="node", extra=_ABC_FOO), foo_pods(_EXISTING_2_1_1),
     {"node-a": 0, "node-b": 33, "node-c": 100}),
    ("NodeAffinityPolicy ignored with labelSelectors",
     pod("p", {"foo": ""}, node_selector={"foo": ""}, spread=[soft(1, "node", FOO, affinity_policy="Ignore")]),
     _hosts(_ABC, key="node", extra=_ABC_FOO), foo_pods(_EXISTING_2_1_1),
     {"node-a": 66, "node-b": 100, "node-c": 100}),
    ("NodeAffinityPolicy honoed with nodeAffinity",
     pod("p", {"foo": ""}, node_affinity={"key": "foo", "operator": "In", "values": [""]},
         spread=[soft(1, "node", FOO)]),
     _hosts(_ABC, key="node", extra=_ABC_FOO), foo_pods(_EXISTING_2_1_1),
     {"node-a": 0, "node-b": 33, "node-c": 100}),
    ("NodeAffinityPolicy ignored with nodeAffinity",
     pod("p", {"foo": ""}, node_affinity={"key": "foo", "operator": "In", "values": [""]},
         spread=[soft(1, "node", FOO, affinity_policy="Ignore")]),
     _hosts(_ABC, key="node", extra=_ABC_FOO), foo_pods(_EXISTING_2_1_1),
     {"node-a": 66, "node-b": 100, "node-c": 100}),
    ("NodeTaintsPolicy honored",
     pod("p", {"foo": ""}, spread=[soft(1, "node", FOO, taints_policy="Honor")]),
     _hosts(_ABC, key="node", taints={"node-c": UNSCHEDULABLE_TAINT}), foo_pods(_EXISTING_2_1_1),
     {"node-a": 0, "node-b": 33, "node-c": 100}),
    ("NodeTaintsPolicy ignored",
     pod("p", {"foo": ""}, spread=[soft(1, "node", FOO)]),
     _hosts(_ABC, key="node", taints={"node-c": UNSCHEDULABLE_TAINT}), foo_pods(_EXISTING_2_1_1),
     {"node-a": 66, "node-b": 100, "node-c": 100}),
    ("matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
     pod("p", _FOO_BAR, spread=[soft(1, "zone", {}, mlk=["foo"]), soft(1, HOST, {}, mlk=["bar"])]),
     _zoned("node-a:zone1 node-b:zone1 node-c:zone2 node-d:zone2"),
     [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-b1", _FOO_BAR, on="node-b"),
      pod("p-y1", {"foo": ""}, on="node-c"), pod("p-y2", {"bar": ""}, on="node-c")],
     {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100}),
    ("matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
     pod("p", {"foo": "", "bar": "", "baz": ""}, spread=[soft(1, "zone", FOO), soft(1, HOST, BAR, mlk=["baz"])]),
     _zoned("node-a:zone1 node-b:zone1 node-c:zone2 node-d:zone2"),
     [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-b1", {"foo": "", "bar": "", "baz": ""}, on="node-b"),
      pod("p-c1", {"foo": ""}, on="node-c"), pod("p-c2", {"bar": ""}, on="node-c"),
      pod("p-d3", {"bar": "", "baz": ""}, on="node-c")],
     {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100}),
]
# Left out of TestPodTopologySpreadScore: "matchLabelKeys ignored when feature gate disabled" (the gate
# MatchLabelKeysInPodTopologySpread is on in v1.36 and phalanx has no switch for it).


def _service_foo():
    out = DefaultSelectors()
    out.services["default"] = [{"foo": ""}]       # upstream: a Service selecting foo="" in the pod's namespace
    return out


@pytest.mark.parametrize("name,incoming,nodes,existing,want,selectors",
                         [pytest.param(*(c + (None,))[:6], id="TPTSS: " + c[0]) for c in SCORE])
def test_pod_topology_spread_score(name, incoming, nodes, existing, want, selectors):
    # Upstream builds the plugin with DefaultingType System for this test.
    rep = report(incoming, nodes, existing, PTS, ("preScore", "score"), {"defaultingType": "System"},
                 default_selectors=_service_foo() if selectors == "service foo" else None)
    assert scores(rep, PTS) == want


# TestPreScoreStateEmptyNodes checks PreScore's state: the constraints (maxSkew, key, policies), IgnoredNodes and
# the domains counted. phalanx keeps no such state object; with no existing pods the observable consequence is
# exact: each scored node's raw score is the sum of scoreForCount(0) = maxSkew - 1 over the constraints whose key it
# carries (scoring.go scoreForCount), and an ignored node is not scored (raw 0, normalized 0: NormalizeScore sets
# IgnoredNodes to 0). `want_raw` below is that sum over upstream's expected Constraints, `ignored` its IgnoredNodes.
def _rs_owned(name, labels):
    return pod(name, labels, owner="rs1")


def _rs1_selector():
    out = DefaultSelectors()
    out.owners[("ReplicaSet", "default", "rs1")] = SimpleNamespace(
        spec=SimpleNamespace(selector=LabelSelector.model_validate(FOO)))
    return out


_ABX = "node-a:zone1 node-b:zone1 node-x:zone2"
PRESCORE_STATE = [
    # (name, pod, nodes, args, default selectors, want raw per scored node, ignored nodes)
    ("normal case",
     pod("p", {"foo": ""}, spread=[soft(1, "zone", FOO), soft(1, HOST, FOO)]), _zoned(_ABX), _LIST, None,
     {"node-a": 0, "node-b": 0, "node-x": 0}, set()),
    ("null selector",
     pod("p", {"foo": ""}, spread=[soft(1, "zone", None)]), _zoned(_ABX), _LIST, None,
     {"node-a": 0, "node-b": 0, "node-x": 0}, set()),
    ("node-x doesn't have label zone",
     pod("p", {"foo": ""}, spread=[soft(1, "zone", FOO), soft(1, HOST, BAR)]),
     _zoned("node-a:zone1 node-b:zone1") + [node("node-x", {HOST: "node-x"})], _LIST, None,
     {"node-a": 0, "node-b": 0}, {"node-x"}),
    # Constraints: hostname maxSkew 3, zone maxSkew 5 (the system defaults); nodes without a zone are not ignored.
    ("system default constraints and a replicaset",
     _rs_owned("p", {"foo": "tar", "baz": "sup"}),
     [node("node-a", {HOST: "node-a", ZONE: "mars"}), node("node-b", {HOST: "node-b", ZONE: "mars"}),
      node("node-c", {HOST: "node-c"}), node("node-d", {HOST: "node-d"})],
     {"defaultingType": "System"}, "rs1",
     {"node-a": 2 + 4, "node-b": 2 + 4, "node-c": 2, "node-d": 2}, set()),
    # Constraints: hostname maxSkew 1 and planet maxSkew 2 (the DoNotSchedule rack default does not score).
    ("default constraints and a replicaset",
     _rs_owned("p", {"foo": "tar", "baz": "sup"}),
     [node("node-a", {"rack": "rack1", HOST: "node-a", "planet": "mars"})],
     {"defaultingType": "List", "defaultConstraints": [
         {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "ScheduleAnyway"},
         {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": "DoNotSchedule"},
         {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": "ScheduleAnyway"}]}, "rs1",
     {"node-a": 0 + 1}, set()),
    # Constraints: the pod's own ScheduleAnyway planet maxSkew 2 only (no galaxy default).
    ("default constraints and a replicaset, but pod has constraints",
     pod("p", {"foo": "bar", "baz": "sup"}, owner="rs1",
         spread=[hard(1, "zone", BAR), soft(2, "planet", {"matchLabels": {"baz": "sup"}})]),
     [node("node-a", {"planet": "mars", "galaxy": "andromeda"})],
     {"defaultingType": "List", "defaultConstraints": [
         {"maxSkew": 2, "topologyKey": "galaxy", "whenUnsatisfiable": "ScheduleAnyway"}]}, "rs1",
     {"node-a": 1}, set()),
    ("NodeAffinityPolicy honored with labelSelectors",
     pod("p", {"foo": ""}, node_selector={"foo": ""}, spread=[soft(1, "zone", BAR)]),
     [node("node-a", {"zone": "zone1", "foo": "", HOST: "node-a"}), node("node-b", {"zone": "zone1", "foo": "",
                                                                                    HOST: "node-b"}),
      node("node-x", {"zone": "zone2", HOST: "node-x"})], _LIST, None,
     {"node-a": 0, "node-b": 0, "node-x": 0}, set()),
    ("NodeAffinityPolicy ignored with labelSelectors",
     pod("p", {"foo": ""}, node_selector={"foo": ""}, spread=[soft(1, "zone", BAR, affinity_policy="Ignore")]),
     [node("node-a", {"zone": "zone1", "foo": "", HOST: "node-a"}), node("node-b", {"zone": "zone1", "foo": "",
                                                                                    HOST: "node-b"}),
      node("node-x", {"zone": "zone2", HOST: "node-x"})], _LIST, None,
     {"node-a": 0, "node-b": 0, "node-x": 0}, set()),
    ("NodeAffinityPolicy honored with nodeAffinity",
     pod("p", {"foo": ""}, node_affinity={"key": "foo", "operator": "In", "values": [""]},
         spread=[soft(1, "zone", BAR)]),
     [node("node-a", {"zone": "zone1", "foo": "", HOST: "node-a"}), node("node-b", {"zone": "zone1", "foo": "",
                                                                                    HOST: "node-b"}),
      node("node-x", {"zone": "zone2", HOST: "node-x"})], _LIST, None,
     {"node-a": 0, "node-b": 0, "node-x": 0}, set()),
    ("NodeAffinityPolicy ignored with nodeAffinity",
     pod("p", {"foo": ""}, node_affinity={"key": "foo", "operator": "In", "values": [""]},
         spread=[soft(1, "zone", BAR, affinity_policy="Ignore")]),
     [node("node-a", {"zone": "zone1", "foo": "", HOST: "node-a"}), node("node-b", {"zone": "zone1", "foo": "",
                                                                                    HOST: "node-b"}),
      node("node-x", {"zone": "zone2", HOST: "node-x"})], _LIST, None,
     {"node-a": 0, "node-b": 0, "node-x": 0}, set()),
    ("NodeTaintsPolicy ignored",
     pod("p", {"foo": ""}, spread=[soft(1, "zone", BAR)]),
     [node("node-a", {"zone": "zone1", "foo": "", HOST: "node-a"}), node("node-b", {"zone": "zone1", "foo": "",
                                                                                    HOST: "node-b"}),
      node("node-x", {"zone": "zone2", HOST: "node-x"}, UNSCHEDULABLE_TAINT)], _LIST, None,
     {"node-a": 0, "node-b": 0, "node-x": 0}, set()),
    ("NodeTaintsPolicy honored",
     pod("p", {"foo": ""}, spread=[soft(1, "zone", BAR, taints_policy="Honor")]),
     [node("node-a", {"zone": "zone1", "foo": "", HOST: "node-a"}), node("node-b", {"zone": "zone1", "foo": "",
                                                                                    HOST: "node-b"}),
      node("node-x", {"zone": "zone2", HOST: "node-x"}, UNSCHEDULABLE_TAINT)], _LIST, None,
     {"node-a": 0, "node-b": 0, "node-x": 0}, set()),
]


@pytest.mark.parametrize("name,incoming,nodes,args,selectors,want_raw,ignored",
                         [pytest.param(*c, id="TPSSEN: " + c[0]) for c in PRESCORE_STATE])
def test_pod_topology_spread_prescore_state(name, incoming, nodes, args, selectors, want_raw, ignored):
    rep = report(incoming, nodes, (), PTS, ("preScore", "score"), args,
                 default_selectors=_rs1_selector() if selectors == "rs1" else None)
    raw = raw_scores(rep, PTS)
    assert {n: r for n, r in raw.items() if n not in ignored} == want_raw
    norm = scores(rep, PTS)
    assert {n: s for n, s in norm.items() if n in ignored} == {n: 0 for n in ignored}
    if len(set(want_raw.values())) == 1:
        assert all(norm[n] == 100 for n in want_raw)      # equal raw scores: MaxNodeScore for every scored node


# TestPreScoreSkip: PreScore returns Skip (explain reports the plugin skipped on every node).
def _rs1_tar_selector():
    out = DefaultSelectors()
    out.owners[("ReplicaSet", "default", "rs1")] = SimpleNamespace(
        spec=SimpleNamespace(selector=LabelSelector.model_validate(exists("tar"))))
    return out


PRESCORE_SKIP = [
    ("the pod doesn't have soft topology spread Constraints",
     pod("p"), [node("node-a", {HOST: "node-a"}), node("node-b", {HOST: "node-b"})], _LIST, None),
    # The pod's owner rs2 is not in the input (only rs1 is): no default selector, so no default constraint applies.
    ("default constraints and a replicaset that doesn't match",
     pod("p", {"foo": "bar", "baz": "sup"}, owner="rs2"), [node("node-a", {"planet": "mars"})],
     {"defaultingType": "List", "defaultConstraints": [
         {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": "ScheduleAnyway"}]}, _rs1_tar_selector()),
]


@pytest.mark.parametrize("name,incoming,nodes,args,selectors", [pytest.param(*c, id="TPSS: " + c[0])
                                                                 for c in PRESCORE_SKIP])
def test_pod_topology_spread_prescore_skip(name, incoming, nodes, args, selectors):
    rep = report(incoming, nodes, (), PTS, ("preScore", "score"), args, default_selectors=selectors)
    assert scores(rep, PTS) == "skip"


# ============================================================================ interpodaffinity: scoring_test.go
def _in(key, *values):
    return {"key": key, "operator": "In", "values": list(values)}


def _term(exprs, key, namespaces=None, ns_selector=_UNSET):
    t = {"labelSelector": {"matchExpressions": list(exprs)}, "topologyKey": key}
    if namespaces is not None:
        t["namespaces"] = list(namespaces)
    if ns_selector is not _UNSET:
        t["namespaceSelector"] = ns_selector
    return t


def _pref(weight, term):
    return {"weight": weight, "podAffinityTerm": term}


RG_CHINA, RG_INDIA = {"region": "China"}, {"region": "India"}
AZ1, AZ2 = {"az": "az1"}, {"az": "az2"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
S1, S2 = {"security": "S1"}, {"security": "S2"}
TEAM1 = {"matchExpressions": [_in("team", "team1")]}

STAY_S1_REGION = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    _pref(5, _term([_in("security", "S1")], "region"))]}}
STAY_S2_REGION = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    _pref(6, _term([_in("security", "S2")], "region"))]}}
AFFINITY3 = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    _pref(8, _term([{"key": "security", "operator": "NotIn", "values": ["S1"]}, _in("security", "S2")], "region")),
    _pref(2, _term([{"key": "security", "operator": "Exists"}, {"key": "wrongkey", "operator": "DoesNotExist"}],
                   "region"))]}}
HARD_AFFINITY = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    _term([_in("security", "S1", "value2")], "region"),
    _term([{"key": "security", "operator": "Exists"}, {"key": "wrongkey", "operator": "DoesNotExist"}], "region")]}}
AWAY_S1_AZ = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    _pref(5, _term([_in("security", "S1")], "az"))]}}
AWAY_S2_AZ = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    _pref(5, _term([_in("security", "S2")], "az"))]}}
STAY_S1_REGION_AWAY_S2_AZ = {
    "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        _pref(8, _term([_in("security", "S1")], "region"))]},
    "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        _pref(5, _term([_in("security", "S2")], "az"))]}}
AFFINITY_NS_SELECTOR = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    _pref(5, _term([_in("security", "S1")], "region", ["subteam2-team2"], TEAM1))]}}
ANTI_AFFINITY_NS_SELECTOR = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    _pref(5, _term([_in("security", "S1")], "region", ["subteam2-team2"], TEAM1))]}}

# scoring_test.go `namespaces`
NAMESPACES = [Namespace.model_validate({"metadata": {"name": n, "labels": {"team": t}}}) for n, t in
              (("subteam1-team1", "team1"), ("subteam2-team1", "team1"), ("subteam1-team2", "team2"),
               ("subteam2-team2", "team2"))]


def _nodes(*labels):
    return [node(f"node{i + 1}", lab) for i, lab in enumerate(labels)]


def _existing(*specs):
    """(node, labels, affinity[, namespace]) -> pods p0, p1, ..."""
    out = []
    for i, s in enumerate(specs):
        on, labels, aff = s[:3]
        ns = s[3] if len(s) > 3 else "default"
        out.append(pod(f"p{i}", labels, on=on, ns=ns, affinity=aff))
    return out


MAX = 100
PREFERRED = [
    # (upstream name, incoming, existing, nodes, want (dict or "skip"), ignorePreferredTermsOfExistingPods)
    ("all nodes are same priority as Affinity is nil",
     pod("p", S1), [], _nodes(RG_CHINA, RG_INDIA, AZ1), "skip", False),
    ("Affinity: pod that matches topology key & pods in nodes will get high score comparing to otherswhich doesn't "
     "match either pods in nodes or in topology key",
     pod("p", S1, affinity=STAY_S1_REGION),
     _existing(("node1", S1, None), ("node2", S2, None), ("node3", S1, None)), _nodes(RG_CHINA, RG_INDIA, AZ1),
     {"node1": MAX, "node2": 0, "node3": 0}, False),
    ("All the nodes that have the same topology key & label value with one of them has an existing pod that match the "
     "affinity rules, have the same score",
     pod("p", affinity=STAY_S1_REGION), _existing(("node1", S1, None)), _nodes(RG_CHINA, RG_CHINA_AZ1, RG_INDIA),
     {"node1": MAX, "node2": MAX, "node3": 0}, False),
    ("Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more "
     "matches will get high score",
     pod("p", S1, affinity=STAY_S2_REGION),
     _existing(("node1", S2, None), ("node1", S2, None), ("node2", S2, None), ("node3", S2, None),
               ("node4", S2, None), ("node5", S2, None)),
     _nodes(RG_CHINA, RG_INDIA, RG_CHINA, RG_CHINA, RG_INDIA),
     {"node1": MAX, "node2": 0, "node3": MAX, "node4": MAX, "node5": 0}, False),
    ("Affinity: different Label operators and values for pod affinity scheduling preference, including some match "
     "failures ",
     pod("p", S1, affinity=AFFINITY3),
     _existing(("node1", S1, None), ("node2", S2, None), ("node3", S1, None)), _nodes(RG_CHINA, RG_INDIA, AZ1),
     {"node1": 20, "node2": MAX, "node3": 0}, False),
    ("Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
     pod("p", S2), _existing(("node1", S1, STAY_S1_REGION), ("node2", S2, STAY_S2_REGION)),
     _nodes(RG_CHINA, RG_INDIA, AZ1), {"node1": 0, "node2": MAX, "node3": 0}, False),
    ("Affinity symmetry with namespace selector",
     pod("p", S1, ns="subteam1-team1"),
     _existing(("node1", S1, AFFINITY_NS_SELECTOR), ("node2", S2, STAY_S2_REGION)),
     _nodes(RG_CHINA, RG_INDIA, AZ1), {"node1": MAX, "node2": 0, "node3": 0}, False),
    ("AntiAffinity symmetry with namespace selector",
     pod("p", S1, ns="subteam1-team1"),
     _existing(("node1", S1, ANTI_AFFINITY_NS_SELECTOR), ("node2", S2, STAY_S2_REGION)),
     _nodes(RG_CHINA, RG_INDIA, AZ1), {"node1": 0, "node2": MAX, "node3": MAX}, False),
    ("Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
     pod("p", S1), _existing(("node1", S1, HARD_AFFINITY), ("node2", S2, HARD_AFFINITY)),
     _nodes(RG_CHINA, RG_INDIA, AZ1), {"node1": MAX, "node2": MAX, "node3": 0}, False),
    ("Anti Affinity: pod that does not match existing pods in node will get high score ",
     pod("p", S1, affinity=AWAY_S1_AZ), _existing(("node1", S1, None), ("node2", S2, None)),
     _nodes(AZ1, RG_CHINA), {"node1": 0, "node2": MAX}, False),
    ("Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score comparing "
     "to others ",
     pod("p", S1, affinity=AWAY_S1_AZ), _existing(("node1", S1, None), ("node2", S1, None)),
     _nodes(AZ1, RG_CHINA), {"node1": 0, "node2": MAX}, False),
    ("Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches "
     "will get high score",
     pod("p", S1, affinity=AWAY_S1_AZ),
     _existing(("node1", S1, None), ("node1", S1, None), ("node2", S2, None)),
     _nodes(AZ1, RG_INDIA), {"node1": 0, "node2": MAX}, False),
    ("Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
     pod("p", S2), _existing(("node1", S1, AWAY_S2_AZ), ("node2", S2, AWAY_S1_AZ)),
     _nodes(AZ1, AZ2), {"node1": 0, "node2": MAX}, False),
    ("Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod "
     "affinity & anti affinity",
     pod("p", S1, affinity=STAY_S1_REGION_AWAY_S2_AZ), _existing(("node1", S1, None), ("node2", S1, None)),
     _nodes(RG_CHINA, AZ1), {"node1": MAX, "node2": 0}, False),
    ("Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing pods "
     "have the same labels",
     pod("p", S1, affinity=STAY_S1_REGION_AWAY_S2_AZ),
     _existing(("node1", S1, None), ("node1", S1, None), ("node2", S1, None), ("node3", S1, None),
               ("node3", S1, None), ("node4", S1, None), ("node5", S1, None)),
     _nodes(RG_CHINA_AZ1, RG_INDIA, RG_CHINA, RG_CHINA, RG_INDIA),
     {"node1": MAX, "node2": 0, "node3": MAX, "node4": MAX, "node5": 0}, False),
    ("Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in "
     "both pod affinity & anti affinity & symmetry",
     pod("p", S1, affinity=STAY_S1_REGION_AWAY_S2_AZ),
     _existing(("node1", S1, None), ("node2", S2, None), ("node3", None, STAY_S1_REGION_AWAY_S2_AZ),
               ("node4", None, AWAY_S1_AZ)),
     _nodes(RG_CHINA, AZ1, RG_INDIA, AZ2), {"node1": MAX, "node2": 0, "node3": MAX, "node4": 0}, False),
    ("Avoid panic when partial nodes in a topology don't have pods with affinity",
     pod("p", S1), _existing(("node1", S1, None), ("node2", None, STAY_S1_REGION_AWAY_S2_AZ)),
     _nodes(RG_CHINA, RG_CHINA), {"node1": 0, "node2": 0}, False),
    ("Affinity with pods matching NamespaceSelector",
     pod("p", S1, ns="subteam1-team1", affinity=AFFINITY_NS_SELECTOR),
     _existing(("node1", S1, None, "subteam1-team1"), ("node1", S1, None, "subteam1-team1"),
               ("node1", S1, None, "subteam1-team2"), ("node2", S1, None, "subteam2-team1")),
     _nodes(RG_CHINA, RG_INDIA), {"node1": MAX, "node2": 0}, False),
    ("Affinity with pods matching both NamespaceSelector and Namespaces fields",
     pod("p", S1, ns="subteam1-team1", affinity=AFFINITY_NS_SELECTOR),
     _existing(("node1", S1, None, "subteam1-team1"), ("node1", S1, None, "subteam1-team1"),
               ("node1", S1, None, "subteam2-team2"), ("node2", S1, None, "subteam2-team1")),
     _nodes(RG_CHINA, RG_INDIA), {"node1": MAX, "node2": 0}, False),
    ("Affinity with pods matching NamespaceSelector (anti-affinity)",       # upstream reuses the name
     pod("p", S1, ns="subteam1-team1", affinity=ANTI_AFFINITY_NS_SELECTOR),
     _existing(("node1", S1, None, "subteam1-team1"), ("node1", S1, None, "subteam1-team1"),
               ("node1", S1, None, "subteam1-team2"), ("node2", S1, None, "subteam2-team1")),
     _nodes(RG_CHINA, RG_INDIA), {"node1": 0, "node2": MAX}, False),
    ("Affinity with pods matching both NamespaceSelector and Namespaces fields (anti-affinity)",
     pod("p", S1, ns="subteam1-team1", affinity=ANTI_AFFINITY_NS_SELECTOR),
     _existing(("node1", S1, None, "subteam1-team1"), ("node1", S1, None, "subteam1-team1"),
               ("node1", S1, None, "subteam2-team2"), ("node2", S1, None, "subteam2-team1")),
     _nodes(RG_CHINA, RG_INDIA), {"node1": 0, "node2": MAX}, False),
    ("Ignore preferred terms of existing pods",
     pod("p", S2), _existing(("node1", S1, STAY_S1_REGION_AWAY_S2_AZ), ("node2", S2, STAY_S2_REGION)),
     _nodes(RG_CHINA, RG_INDIA), "skip", True),
    ("Do not ignore preferred terms of existing pods",
     pod("p", S2), _existing(("node1", S1, STAY_S1_REGION_AWAY_S2_AZ), ("node2", S2, STAY_S2_REGION)),
     _nodes(RG_CHINA, RG_INDIA), {"node1": 0, "node2": MAX}, False),
]
# Left out of TestPreferredAffinity: "invalid Affinity fails PreScore" and "invalid AntiAffinity fails PreScore"
# (a label value "{{.bad-value.}}" in a term: phalanx refuses such a pod when it is read, as the API server does, so
# PreScore never sees it) and "No nodes to score" (phalanx scores nothing without nodes; there is no PreScore call to
# observe).


@pytest.mark.parametrize("name,incoming,existing,nodes,want,ignore",
                         [pytest.param(*c, id="TPA: " + c[0]) for c in PREFERRED])
def test_interpod_preferred_affinity(name, incoming, existing, nodes, want, ignore):
    rep = report(incoming, nodes, existing, IPA, ("preScore", "score"),
                 {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": ignore}, NAMESPACES)
    assert scores(rep, IPA) == want


HARD_POD_AFFINITY = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    # Namespaces ["", "subteam2-team2"]: "" is the default namespace here.
    _term([_in("service", "S1")], "region", ["default", "subteam2-team2"], TEAM1)]}}
SERVICE_S1 = {"service": "S1"}
SYMMETRIC = [
    # (name, incoming namespace, hardPodAffinityWeight, want)
    ("with default weight", "default", 1, {"node1": MAX, "node2": MAX, "node3": 0}),
    ("with zero weight", "default", 0, "skip"),
    ("with no matching namespace", "subteam1-team2", 1, "skip"),
    ("with matching NamespaceSelector", "subteam1-team1", 1, {"node1": MAX, "node2": MAX, "node3": 0}),
    ("with matching Namespaces", "subteam2-team2", 1, {"node1": MAX, "node2": MAX, "node3": 0}),
]


@pytest.mark.parametrize("name,ns,weight,want", [pytest.param(*c, id="TPAWHPASW: " + c[0]) for c in SYMMETRIC])
def test_interpod_hard_pod_affinity_symmetric_weight(name, ns, weight, want):
    existing = _existing(("node1", None, HARD_POD_AFFINITY), ("node2", None, HARD_POD_AFFINITY))
    rep = report(pod("p", SERVICE_S1, ns=ns), _nodes(RG_CHINA, RG_INDIA, AZ1), existing, IPA, ("preScore", "score"),
                 {"hardPodAffinityWeight": weight}, NAMESPACES)
    assert scores(rep, IPA) == want


# ============================================================================ interpodaffinity: filtering_test.go
def _req(aff=(), anti=()):
    out = {}
    if aff:
        out["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": list(aff)}
    if anti:
        out["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": list(anti)}
    return out


def _exists(key):
    return {"key": key, "operator": "Exists"}


def _not_in(key, *values):
    return {"key": key, "operator": "NotIn", "values": list(values)}


SERVICE = {"service": "securityscan"}       # podLabel
SEC_S1 = {"security": "S1"}                 # podLabel2
NODE1 = [node("node1", {"region": "r1", "zone": "z11"})]
EXISTING = [pod("e", SERVICE, on="node1")]   # `pod` in upstream's test: podLabel on node1


def _svc_in(key, *values):
    return _term([_in("service", *values)], key)


SINGLE_NODE = [
    # (name, incoming, existing, want status on node1 | "skip")
    ("A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
     pod("p"), [], "skip"),
    ("satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches the "
     "existing pod",
     pod("p", SEC_S1, affinity=_req([_svc_in("region", "securityscan", "value2")])), EXISTING, (S, [])),
    ("satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in "
     "labelSelector that matches the existing pod",
     pod("p", SEC_S1, affinity=_req([_term([_not_in("service", "securityscan3", "value3")], "region")])), EXISTING,
     (S, [])),
    ("Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
     # no topologyKey (upstream builds the term without one; the API server would refuse it)
     pod("p", SEC_S1, validate=False, affinity=_req([{
         "labelSelector": {"matchExpressions": [_in("service", "securityscan", "value2")]},
         "namespaces": ["DiffNameSpace"]}])),
     [pod("e", SERVICE, on="node1", ns="ns")], (UU, [R_AFF])),
    ("Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
     pod("p", SERVICE, validate=False, affinity=_req([_svc_in("", "antivirusscan", "value2")])), EXISTING,
     (UU, [R_AFF])),
    ("satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution ",
     pod("p", SEC_S1, affinity=_req([
         _term([_exists("service"), {"key": "wrongkey", "operator": "DoesNotExist"}], "region"),
         _term([_in("service", "securityscan"), _not_in("service", "WrongValue")], "region")])),
     EXISTING, (S, [])),
    ("The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node "
     "because one of the matchExpression item don't match.",
     pod("p", SEC_S1, affinity=_req([
         _term([_exists("service"), {"key": "wrongkey", "operator": "DoesNotExist"}], "region"),
         _term([_in("service", "securityscan2"), _not_in("service", "WrongValue")], "region")])),
     EXISTING, (UU, [R_AFF])),
    ("satisfies the PodAffinity and PodAntiAffinity with the existing pod",
     pod("p", SEC_S1, affinity=_req([_svc_in("region", "securityscan", "value2")],
                                    [_svc_in("node", "antivirusscan", "value2")])), EXISTING, (S, [])),
    ("satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
     pod("p", SEC_S1, affinity=_req([_svc_in("region", "securityscan", "value2")],
                                    [_svc_in("node", "antivirusscan", "value2")])),
     [pod("e", SERVICE, on="node1", affinity=_req(anti=[_svc_in("node", "antivirusscan", "value2")]))], (S, [])),
    ("satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
     pod("p", SEC_S1, affinity=_req([_svc_in("region", "securityscan", "value2")],
                                    [_svc_in("zone", "securityscan", "value2")])), EXISTING, (U, [R_ANTI])),
    ("satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
     pod("p", SERVICE, affinity=_req([_svc_in("region", "securityscan", "value2")],
                                     [_svc_in("node", "antivirusscan", "value2")])),
     [pod("e", SERVICE, on="node1", affinity=_req(anti=[_svc_in("zone", "securityscan", "value2")]))],
     (U, [R_EXIST])),
    ("pod matches its own Label in PodAffinity and that matches the existing pod Labels",
     pod("p", SERVICE, affinity=_req([_term([_not_in("service", "securityscan", "value2")], "region")])),
     [pod("e", SERVICE, on="node2")], (UU, [R_AFF])),
    ("verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't "
     "satisfy PodAntiAffinity symmetry with the existing pod",
     pod("p", SERVICE), [pod("e", SERVICE, on="node1", affinity=_req(anti=[_svc_in("zone", "securityscan", "value2")]))],
     (U, [R_EXIST])),
    ("verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy "
     "PodAntiAffinity symmetry with the existing pod",
     pod("p", SERVICE),
     [pod("e", SERVICE, on="node1", affinity=_req(anti=[_term([_not_in("service", "securityscan", "value2")],
                                                               "zone")]))], "skip"),
    ("satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod",
     pod("p", SERVICE, affinity=_req(anti=[_term([_exists("service")], "region"),
                                           _term([_exists("security")], "region")])),
     [pod("e", SEC_S1, on="node1", affinity=_req(anti=[_term([_exists("security")], "zone")]))], (U, [R_ANTI])),
    ("PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
     pod("p", SERVICE, affinity=_req(anti=[_term([_exists("service")], "zone"),
                                           _term([_exists("security")], "zone")])),
     [pod("e", SEC_S1, on="node1", affinity=_req(anti=[_term([_exists("security")], "zone")]))], (U, [R_ANTI])),
    ("PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
     pod("p", SEC_S1, affinity=_req(anti=[_term([_exists("security")], "zone")])),
     [pod("e", SERVICE, on="node1", affinity=_req(anti=[_term([_exists("service")], "zone"),
                                                         _term([_exists("security")], "zone")]))], (U, [R_EXIST])),
    ("PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
     pod("p", {"abc": "", "xyz": ""}, affinity=_req(anti=[_term([_exists("abc")], "zone"),
                                                          _term([_exists("def")], "zone")])),
     [pod("e", {"def": "", "xyz": ""}, on="node1", affinity=_req(anti=[_term([_exists("abc")], "zone"),
                                                                        _term([_exists("def")], "zone")]))],
     (U, [R_ANTI])),
    ("PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms",
     pod("p", {"def": "", "xyz": ""}, affinity=_req(anti=[_term([_exists("abc")], "zone"),
                                                          _term([_exists("def")], "zone")])),
     [pod("e", {"abc": "", "xyz": ""}, on="node1", affinity=_req(anti=[_term([_exists("abc")], "zone"),
                                                                        _term([_exists("def")], "zone")]))],
     (U, [R_ANTI])),
    ("affinity with NamespaceSelector",
     pod("p", SEC_S1, affinity=_req([_term([_in("service", "securityscan", "value2")], "region", ns_selector=TEAM1)])),
     [pod("e", SERVICE, on="node1", ns="subteam1-team1")], (S, [])),
    ("affinity with non-matching NamespaceSelector",
     pod("p", SEC_S1, affinity=_req([_term([_in("service", "securityscan", "value2")], "region", ns_selector=TEAM1)])),
     [pod("e", SERVICE, on="node1", ns="subteam1-team2")], (UU, [R_AFF])),
    ("anti-affinity with matching NamespaceSelector",
     pod("p", SEC_S1, ns="subteam1-team1",
         affinity=_req(anti=[_term([_in("service", "securityscan", "value2")], "zone", ns_selector=TEAM1)])),
     [pod("e", SERVICE, on="node1", ns="subteam2-team1")], (U, [R_ANTI])),
    ("anti-affinity with matching all NamespaceSelector",
     pod("p", SEC_S1, ns="subteam1-team1",
         affinity=_req(anti=[_term([_in("service", "securityscan", "value2")], "zone", ns_selector={})])),
     [pod("e", SERVICE, on="node1", ns="subteam2-team1")], (U, [R_ANTI])),
    ("anti-affinity with non-matching NamespaceSelector",
     pod("p", SEC_S1, ns="subteam1-team1",
         affinity=_req(anti=[_term([_in("service", "securityscan", "value2")], "zone", ns_selector=TEAM1)])),
     [pod("e", SERVICE, on="node1", ns="subteam1-team2")], (S, [])),
]
# Left out of TestRequiredAffinitySingleNode: "PodAffinity fails PreFilter with an invalid affinity label syntax" and
# "PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax" (label value "{{.bad-value.}}": phalanx
# refuses the pod when it is read, as the API server does; upstream's PreFilter message is not reachable).


@pytest.mark.parametrize("name,incoming,existing,want", [pytest.param(*c, id="TRASN: " + c[0]) for c in SINGLE_NODE])
def test_interpod_required_affinity_single_node(name, incoming, existing, want):
    # Upstream's node list is node1 alone; an existing pod bound to "node2" (a node not in the snapshot) is
    # not in the snapshot either, so it is left out here too.
    existing = [e for e in existing if e.spec.node_name == "node1"]
    rep = report(incoming, NODE1, existing, IPA, ("preFilter", "filter"), {}, NAMESPACES)
    got = filter_statuses(rep, IPA)
    assert (got if got is None else got["node1"]) == (None if want == "skip" else want)


_RZH = lambda name, r, z: node(name, {"region": r, "zone": z, "hostname": name})     # noqa: E731
MULTI_NODE = [
    # (name, incoming, existing, nodes, want per node in order | "skip")
    ("A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has an "
     "existing pod that matches the affinity rules",
     pod("p", affinity=_req([_term([_in("foo", "bar")], "region")])), [pod("p1", {"foo": "bar"}, on="node1")],
     _nodes(RG_CHINA, RG_CHINA_AZ1, RG_INDIA), [(S, []), (S, []), (UU, [R_AFF])]),
    ("The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the "
     "collection should not be blocked from being scheduled onto any node, even there's no existing pod that matches "
     "the rule anywhere.",
     pod("p", {"foo": "bar", "service": "securityscan"},
         affinity=_req([_term([_in("foo", "bar")], "zone"), _term([_in("service", "securityscan")], "zone")])),
     [pod("p1", {"foo": "bar"}, on="nodea")],
     [node("nodea", {"zone": "az1", "hostname": "h1"}), node("nodeb", {"zone": "az2", "hostname": "h2"})],
     [(S, []), (S, [])]),
    ("The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
     pod("p", {"foo": "bar", "service": "securityscan"},
         affinity=_req([_term([_in("foo", "bar")], "zone"), _term([_in("service", "securityscan")], "zone")])),
     [pod("p1", {"foo": "bar"}, on="nodea")],
     [node("nodea", {"zoneLabel": "az1", "hostname": "h1"}), node("nodeb", {"zoneLabel": "az2", "hostname": "h2"})],
     [(UU, [R_AFF]), (UU, [R_AFF])]),
    ("NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
     "affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
     pod("p", affinity=_req(anti=[_term([_in("foo", "abc")], "region")])), [pod("p0", {"foo": "abc"}, on="nodea")],
     [node("nodea", {"region": "r1", "hostname": "nodea"}), node("nodeb", {"region": "r1", "hostname": "nodeb"})],
     [(U, [R_ANTI]), (U, [R_ANTI])]),
    ("This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
     pod("p", affinity=_req(anti=[_term([_in("foo", "abc")], "region"), _term([_in("service", "securityscan")],
                                                                             "zone")])),
     [pod("p0", {"foo": "abc", "service": "securityscan"}, on="nodea")],
     [_RZH("nodea", "r1", "z1"), _RZH("nodeb", "r1", "z2")], [(U, [R_ANTI]), (U, [R_ANTI])]),
    ("NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
     "affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
     pod("p", affinity=_req(anti=[_term([_in("foo", "abc")], "region")])), [pod("p0", {"foo": "abc"}, on="nodea")],
     [node("nodea", RG_CHINA), node("nodeb", RG_CHINA_AZ1), node("nodec", RG_INDIA)],
     [(U, [R_ANTI]), (U, [R_ANTI]), (S, [])]),
    ("NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
     "affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an "
     "existing pod that match the inter pod affinity rule but in different namespace)",
     pod("p", {"foo": "123"}, ns="ns1", affinity=_req(anti=[_term([_in("foo", "bar")], "region")])),
     [pod("p0", {"foo": "bar"}, on="nodea", ns="ns1"),
      pod("p1", on="nodec", ns="ns2", affinity=_req(anti=[_term([_in("foo", "123")], "region")]))],
     [node("nodea", RG_CHINA), node("nodeb", RG_CHINA_AZ1), node("nodec", RG_INDIA)],
     [(U, [R_ANTI]), (U, [R_ANTI]), (S, [])]),
    ("Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of the "
     "term is firstly checked, and then topologyKey of the term is also checked",
     pod("p", {"foo": ""}),
     [pod("p0", on="nodea", affinity=_req(anti=[_term([_exists("foo")], "invalid-node-label")]))],
     [_RZH("nodea", "r1", "z1"), _RZH("nodeb", "r1", "z1")], "skip"),
    ("Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
     pod("p", affinity=_req(anti=[_term([_exists("foo")], "invalid-node-label")])),
     [pod("p0", {"foo": ""}, on="nodea")],
     [_RZH("nodea", "r1", "z1"), _RZH("nodeb", "r1", "z1")], [(S, []), (S, [])]),
    ("Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each existingPod's "
     "terms on all nodes",
     pod("p", {"foo": "", "bar": ""}),
     [pod("p0", on="nodea", affinity=_req(anti=[_term([_exists("foo")], "zone")])),
      pod("p1", on="nodea", affinity=_req(anti=[_term([_exists("bar")], "region")]))],
     [_RZH("nodea", "r1", "z1"), _RZH("nodeb", "r1", "z2")], [(U, [R_EXIST]), (U, [R_EXIST])]),
    ("Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one "
     "anti-affinity rule of existingPod",
     pod("p", affinity=_req(anti=[_term([_exists("foo")], "zone"), _term([_exists("bar")], "region")])),
     [pod("p0", {"foo": ""}, on="nodea"), pod("p1", {"bar": ""}, on="nodeb")],
     [_RZH("nodea", "r1", "z1"), _RZH("nodeb", "r1", "z2")], [(U, [R_ANTI]), (U, [R_ANTI])]),
    ("Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single "
     "term match - case when one term has invalid topologyKey",
     pod("p", {"foo": "", "bar": ""}),
     [pod("p0", on="nodea", affinity=_req(anti=[_term([_exists("foo")], "invalid-node-label"),
                                                _term([_exists("bar")], "zone")]))],
     [_RZH("nodea", "r1", "z1"), _RZH("nodeb", "r1", "z2")], [(U, [R_EXIST]), (S, [])]),
    ("Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single "
     "term match - case when one term has invalid topologyKey",
     pod("p", affinity=_req(anti=[_term([_exists("foo")], "invalid-node-label"), _term([_exists("bar")], "zone")])),
     [pod("poda", {"foo": "", "bar": ""}, on="nodea")],
     [_RZH("nodea", "r1", "z1"), _RZH("nodeb", "r1", "z2")], [(U, [R_ANTI]), (S, [])]),
    ("Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single "
     "term match - case when all terms have valid topologyKey",
     pod("p", {"foo": "", "bar": ""}),
     [pod("p0", on="nodea", affinity=_req(anti=[_term([_exists("foo")], "region"), _term([_exists("bar")], "zone")]))],
     [_RZH("nodea", "r1", "z1"), _RZH("nodeb", "r1", "z2")], [(U, [R_EXIST]), (U, [R_EXIST])]),
    ("Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single "
     "term match - case when all terms have valid topologyKey",
     pod("p", affinity=_req(anti=[_term([_exists("foo")], "region"), _term([_exists("bar")], "zone")])),
     [pod("p0", {"foo": "", "bar": ""}, on="nodea")],
     [_RZH("nodea", "r1", "z1"), _RZH("nodeb", "r1", "z2")], [(U, [R_ANTI]), (U, [R_ANTI])]),
    ("Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term matches "
     "incoming pod, so incoming pod can only be scheduled to nodeC",
     pod("p", {"foo": "", "bar": ""}),
     [pod("p0", on="nodea", affinity=_req(anti=[_term([_exists("foo")], "zone"), _term([_exists("labelA")], "zone")])),
      pod("p1", on="nodeb", affinity=_req(anti=[_term([_exists("bar")], "zone"), _term([_exists("labelB")], "zone")]))],
     [_RZH("nodea", "r1", "z1"), _RZH("nodeb", "r1", "z2"), _RZH("nodec", "r1", "z3")],
     [(U, [R_EXIST]), (U, [R_EXIST]), (S, [])]),
    ("Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match",
     pod("p", affinity=_req([_term([_exists("foo")], "region"), _term([_exists("bar")], "zone")])),
     [pod("pod1", {"foo": "", "bar": ""}, on="nodea")],
     [_RZH("nodea", "r1", "z1"), _RZH("nodeb", "r1", "z1")], [(S, []), (S, [])]),
    ("Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys "
     "match, and the match logic should be satisfied on the same pod",
     pod("p", affinity=_req([_term([_exists("foo")], "region"), _term([_exists("bar")], "zone")])),
     [pod("pod1", {"foo": ""}, on="nodea"), pod("pod2", {"bar": ""}, on="nodeb")],
     [_RZH("nodea", "r1", "z1"), _RZH("nodeb", "r1", "z2")], [(UU, [R_AFF]), (UU, [R_AFF])]),
]


@pytest.mark.parametrize("name,incoming,existing,nodes,want",
                         [pytest.param(*c, id="TRAMN: " + c[0]) for c in MULTI_NODE])
def test_interpod_required_affinity_multiple_nodes(name, incoming, existing, nodes, want):
    rep = report(incoming, nodes, existing, IPA, ("preFilter", "filter"), {},
                 [Namespace.model_validate({"metadata": {"name": "ns1"}})])
    got = filter_statuses(rep, IPA)
    if want == "skip":
        assert got is None
    else:
        assert got == {n.metadata.name: w for n, w in zip(nodes, want)}


# ============================================================================ queueing hints: plugin_test.go (both)
# phalanx's events (docs/semantics.md, "Queueing hints"): PodBound (objects: the bound pods), PodDeleted (the pods
# that left), NodeAdded (the node), NodeUpdated ((old, new)). Pods are immutable here, so upstream's pod-update
# cases and its "un-scheduled pod" add/update/delete cases (not events for these plugins) are left out, as is
# node deletion (phalanx reports a removed node's pods as PodDeleted).
from phalanx.plugins.framework import NODE_ADDED, NODE_UPDATED, POD_BOUND, POD_DELETED   # noqa: E402
from phalanx.plugins.interpod_affinity import InterPodAffinity   # noqa: E402
from phalanx.plugins.pod_topology_spread import PodTopologySpread, PodTopologySpreadArgs   # noqa: E402

Q, QS = True, False     # fwk.Queue, fwk.QueueSkip
_SVC_REGION = _req([_svc_in("region", "securityscan", "value2")])
_SVC_REGION_ANTI = _req(anti=[_svc_in("region", "securityscan", "value2")])
_FAKE = "fake-node"

IPA_POD_HINTS = [
    # (upstream case name, pod's affinity, event, the other pod's labels, want)
    ("add a pod which matches the pod affinity", _SVC_REGION, POD_BOUND, {"service": "securityscan"}, Q),
    ("add a pod which doesn't match the pod affinity", _SVC_REGION, POD_BOUND, {"aaa": "a"}, QS),
    ("delete a pod which doesn't match pod's anti-affinity", _SVC_REGION_ANTI, POD_DELETED, {"aaa": "a"}, QS),
    ("delete a pod which matches pod's anti-affinity", _SVC_REGION_ANTI, POD_DELETED, {"service": "securityscan"}, Q),
]


@pytest.mark.parametrize("name,affinity,event,labels,want",
                         [pytest.param(*c, id="IPA Test_isSchedulableAfterPodChange: " + c[0]) for c in IPA_POD_HINTS])
def test_interpod_hint_pod_change(name, affinity, event, labels, want):
    plugin = InterPodAffinity()
    other = pod("o", labels, on=_FAKE)
    assert plugin.hint(event, pod("p", affinity=affinity), [other], None) is want


_SVC_ZONE = _req([_svc_in("zone", "securityscan", "value2")])
_ANOTHER_ZONE_ANTI = _req(anti=[{"labelSelector": {"matchLabels": {"another": "label"}}, "topologyKey": "zone"}])
IPA_NODE_HINTS = [
    # (upstream case name, pod's affinity, old node labels (None: added), new node labels, want)
    ("add a new node with matched pod affinity topologyKey", _SVC_ZONE, None, {"zone": "zone1"}, Q),
    ("add a new node without matched topologyKey", _SVC_REGION, None, {"zone": "zone1"}, QS),
    ("update node label but not topologyKey", _SVC_ZONE, {"aaa": "a"}, {"aaa": "b"}, QS),
    ("update node label that isn't related to the pod affinity", _SVC_ZONE, {"zone": "zone1"},
     {"zone": "zone1", "unrelated-label": "unrelated"}, QS),
    ("update node with different affinity topologyKey value", _SVC_ZONE, {"zone": "zone1"}, {"zone": "zone2"}, Q),
    ("update node to have the affinity topology label", _SVC_ZONE, {"aaa": "a"}, {"zone": "zone1"}, Q),
    ("add a new node with matched pod anti-affinity topologyKey", _ANOTHER_ZONE_ANTI, None, {"zone": "zone1"}, Q),
    ("add a new node without matched pod anti-affinity topologyKey", _ANOTHER_ZONE_ANTI, None, {}, Q),
    ("update node label that isn't related to the pod anti-affinity", _ANOTHER_ZONE_ANTI, {"zone": "zone1"},
     {"zone": "zone1", "unrelated-label": "unrelated"}, QS),
    ("update node with different anti-affinity topologyKey value", _ANOTHER_ZONE_ANTI, {"zone": "zone1"},
     {"zone": "zone2"}, Q),
    ("update node to have the anti-affinity topology label", _ANOTHER_ZONE_ANTI, {"aaa": "a"}, {"zone": "zone1"}, QS),
    ("update node label not to have anti-affinity topology label", _ANOTHER_ZONE_ANTI, {"zone": "zone1"},
     {"aaa": "a"}, Q),
]


def _node_event(old, new):
    if old is None:
        return NODE_ADDED, node("node-a", new)
    return NODE_UPDATED, (node("node-a", old), node("node-a", new))


@pytest.mark.parametrize("name,affinity,old,new,want",
                         [pytest.param(*c, id="IPA Test_isSchedulableAfterNodeChange: " + c[0]) for c in IPA_NODE_HINTS])
def test_interpod_hint_node_change(name, affinity, old, new, want):
    event, objects = _node_event(old, new)
    assert InterPodAffinity().hint(event, pod("p", affinity=affinity), objects, None) is want


_ZONE_FOO = [hard(1, "zone", FOO)]
PTS_POD_HINTS = [
    # (upstream case name, event, the other pod (namespace, labels), want)
    ("add pod with labels match topologySpreadConstraints selector", POD_BOUND, "default", {"foo": ""}, Q),
    ("add pod with different namespace", POD_BOUND, "fake-namespace", {"foo": ""}, QS),
    ("add pod with labels don't match topologySpreadConstraints selector", POD_BOUND, "default", {"bar": ""}, QS),
    ("delete pod with labels that match topologySpreadConstraints selector", POD_DELETED, "default", {"foo": ""}, Q),
    ("delete pod with labels that don't match topologySpreadConstraints selector", POD_DELETED, "default",
     {"bar": ""}, QS),
]


@pytest.mark.parametrize("name,event,ns,labels,want",
                         [pytest.param(*c, id="PTS Test_isSchedulableAfterPodChange: " + c[0]) for c in PTS_POD_HINTS])
def test_pod_topology_spread_hint_pod_change(name, event, ns, labels, want):
    plugin = PodTopologySpread(PodTopologySpreadArgs.model_validate(_LIST))
    cluster = SimpleNamespace(default_selectors=DefaultSelectors())
    other = pod("o", labels, on=_FAKE, ns=ns)
    assert plugin.hint(event, pod("p", {"foo": ""}, spread=_ZONE_FOO), [other], cluster) is want


_ZONE_NODE_FOO_C = [hard(1, "zone", FOO), hard(1, "node", FOO)]
_TAINT_A = [("aaa", "bbb", "NoSchedule")]
_TAINT_C = [("ccc", "bbb", "NoSchedule")]
PTS_NODE_HINTS = [
    # (upstream case name, constraints, old node (labels, taints) (None: added), new node (labels, taints), want).
    # Left out: "delete node ..." (a node removed is no node event here).
    ("node updates label which matches topologyKey", _ZONE_FOO, ({"zone": "zone1"}, ()), ({"zone": "zone2"}, ()), Q),
    ("node that doesn't match topologySpreadConstraints updates non-related label", _ZONE_FOO, ({"foo": "bar1"}, ()),
     ({"foo": "bar2"}, ()), QS),
    ("node that match topologySpreadConstraints adds non-related label", _ZONE_NODE_FOO_C,
     ({"zone": "zone1", "node": "node1", "foo": "bar"}, ()), ({"zone": "zone1", "node": "node1"}, ()), QS),
    ("create node with non-related labels", _ZONE_FOO, None, ({"foo": "bar"}, ()), QS),
    ("create node with related labels", _ZONE_FOO, None, ({"zone": "zone1"}, ()), Q),
    ("add node with related labels that only match one of topologySpreadConstraints", _ZONE_NODE_FOO_C, None,
     ({"zone": "zone1"}, ()), QS),
    ("add node with related labels that match all topologySpreadConstraints", _ZONE_NODE_FOO_C, None,
     ({"zone": "zone1", "node": "node1"}, ()), Q),
    ("update node with related labels that only match one of topologySpreadConstraints", _ZONE_NODE_FOO_C,
     ({"zone": "zone1"}, ()), ({"zone": "zone1"}, ()), QS),
    ("update node with related labels that match all topologySpreadConstraints", _ZONE_NODE_FOO_C,
     ({"zone": "zone1", "node": "node1"}, ()), ({"zone": "zone1", "node": "node2"}, ()), Q),
    ("update node with different taints that match all topologySpreadConstraints", _ZONE_NODE_FOO_C,
     ({"zone": "zone1", "node": "node1"}, _TAINT_A), ({"zone": "zone1", "node": "node1"}, _TAINT_C), Q),
    ("update node with different taints that only match one of topologySpreadConstraints", _ZONE_NODE_FOO_C,
     ({"node": "node1"}, _TAINT_A), ({"node": "node1"}, _TAINT_C), QS),
]


@pytest.mark.parametrize("name,constraints,old,new,want", [
    pytest.param(*c, id="PTS Test_isSchedulableAfterNodeChange: " + c[0]) for c in PTS_NODE_HINTS])
def test_pod_topology_spread_hint_node_change(name, constraints, old, new, want):
    plugin = PodTopologySpread(PodTopologySpreadArgs.model_validate(_LIST))
    cluster = SimpleNamespace(default_selectors=DefaultSelectors())
    made_new = node("node-a", new[0], taints=new[1])
    event, objects = (NODE_ADDED, made_new) if old is None else (
        NODE_UPDATED, (node("node-a", old[0], taints=old[1]), made_new))
    assert plugin.hint(event, pod("p", spread=constraints), objects, cluster) is want
