"""Hand-checked toy cases for InterPodAffinity: the plain reference (tests/reference/interpod_affinity.py) and
phalanx (its plugin and kernels, through `explain` on a profile that enables InterPodAffinity alone).

Tests taking `impl` run on both; the others (hints, parse errors) test the reference's functions directly.
Every expected value is worked out by hand in the comment next to it.

Default toy cluster (labels):
    n1: zone=a, kubernetes.io/hostname=n1
    n2: zone=a, kubernetes.io/hostname=n2
    n3: zone=b, kubernetes.io/hostname=n3
    n4:          kubernetes.io/hostname=n4          (no zone label)
Namespaces: default, other (team=x), third (team=y).
"""

from __future__ import annotations

import pytest

from phalanx.cluster_models.objects import Affinity, Namespace, Node, Pod

try:
    from tests.reference import interpod_affinity as IPA
except ImportError:  # tests/ itself on sys.path
    from reference import interpod_affinity as IPA

S, U, UU = "Success", "Unschedulable", "UnschedulableAndUnresolvable"
R_AFF, R_ANTI, R_EXIST = IPA.REASON_AFFINITY, IPA.REASON_ANTI_AFFINITY, IPA.REASON_EXISTING_ANTI_AFFINITY
HOST = "kubernetes.io/hostname"
Q, QS = IPA.QUEUE, IPA.QUEUE_SKIP


# ----------------------------------------------------------------------------- builders
def node(name, zone=None, host=True, **extra):
    labels = {}
    if zone is not None:
        labels["zone"] = zone
    if host:
        labels[HOST] = name
    labels.update(extra)
    return Node.model_validate({"metadata": {"name": name, "labels": labels}})


def ns(name, **labels):
    return Namespace.model_validate({"metadata": {"name": name, "labels": labels}})


NODES = [node("n1", "a"), node("n2", "a"), node("n3", "b"), node("n4")]
NAMESPACES = [ns("default"), ns("other", team="x"), ns("third", team="y")]

_MISSING = object()


def term(tk, match=_MISSING, exprs=None, namespaces=None, ns_selector=_MISSING, mlk=None, mmlk=None):
    """A PodAffinityTerm manifest.  match=None -> labelSelector: null; match={} -> labelSelector: {}."""
    t = {"topologyKey": tk}
    if match is not _MISSING:
        if match is None:
            t["labelSelector"] = None
        else:
            t["labelSelector"] = {"matchLabels": dict(match), "matchExpressions": list(exprs or [])}
    if namespaces is not None:
        t["namespaces"] = list(namespaces)
    if ns_selector is not _MISSING:
        t["namespaceSelector"] = ns_selector
    if mlk:
        t["matchLabelKeys"] = list(mlk)
    if mmlk:
        t["mismatchLabelKeys"] = list(mmlk)
    return t


def pod(name, labels=None, on=None, namespace="default", aff=(), anti=(), pref_aff=(), pref_anti=(),
        deleting=False, uid="", validate=True):
    """aff/anti: required term manifests; pref_*: (weight, term manifest). validate=False builds the pod without
    the API server's checks (as if they had been skipped)."""
    affinity = {}
    if aff or pref_aff:
        affinity["podAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": list(aff),
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": w, "podAffinityTerm": t} for w, t in pref_aff],
        }
    if anti or pref_anti:
        affinity["podAntiAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": list(anti),
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": w, "podAffinityTerm": t} for w, t in pref_anti],
        }
    meta = {"name": name, "namespace": namespace, "labels": dict(labels or {}), "uid": uid}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec = {"containers": [{"name": "c"}], "nodeName": on or ""}
    if affinity:
        spec["affinity"] = affinity
    doc = {"metadata": meta, "spec": spec}
    if validate:
        return Pod.model_validate(doc)
    plain = Pod.model_validate({**doc, "spec": {k: v for k, v in spec.items() if k != "affinity"}})
    plain.spec.affinity = Affinity.model_validate(affinity)
    return plain


def pod_unvalidated(*args, **kw):
    return pod(*args, validate=False, **kw)


def by_node(pods, nodes=NODES):
    out = {n.metadata.name: [] for n in nodes}
    for p in pods:
        out[p.spec.node_name].append(p)
    return out


def filt(incoming, existing=(), nodes=NODES, namespaces=NAMESPACES):
    return IPA.filter_all(incoming, nodes, by_node(existing, nodes), namespaces)


def codes(result):
    return {n: c for n, (c, _r) in result.items()}


class Args:
    def __init__(self, hard=1, ignore=False):
        self.hard_pod_affinity_weight = hard
        self.ignore_preferred_terms_of_existing_pods = ignore


def sc(incoming, existing=(), feasible=None, nodes=NODES, args=None, namespaces=NAMESPACES):
    feasible = nodes if feasible is None else feasible
    return IPA.scores(incoming, feasible, nodes, by_node(existing, nodes), namespaces, args)


WEB = {"app": "web"}


class Reference:
    filt = staticmethod(filt)
    sc = staticmethod(sc)


class Phalanx:
    """The same questions asked of phalanx: a profile with InterPodAffinity alone at preFilter/filter/preScore/
    score (NodeUnschedulable marks the nodes a toy leaves out of the feasible set)."""

    @staticmethod
    def _explain(incoming, existing, nodes, namespaces, args=None, feasible=None):
        from phalanx.cluster_models import ClusterObjects
        from phalanx.sched import Cluster, Scheduler
        from phalanx.sched.config import config_from_doc
        from phalanx.sched.explain import explain_pod

        keep = None if feasible is None else {n.metadata.name for n in feasible}
        nodes = [n if keep is None or n.metadata.name in keep
                 else n.model_copy(update={"spec": n.spec.model_copy(update={"unschedulable": True})})
                 for n in nodes]
        ipa_args = {}
        if args is not None:
            ipa_args = {"hardPodAffinityWeight": args.hard_pod_affinity_weight,
                        "ignorePreferredTermsOfExistingPods": args.ignore_preferred_terms_of_existing_pods}
        # Filter questions run InterPodAffinity's PreFilter/Filter; score questions its PreScore/Score alone (the
        # reference scores the nodes it is given, whatever the filter would say).
        points = ("preFilter", "filter") if feasible is None else ("preScore", "score")
        doc = {"kind": "KubeSchedulerConfiguration", "profiles": [{"plugins": {
            "multiPoint": {"disabled": [{"name": "*"}],
                           "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"},
                                       {"name": "NodeUnschedulable"}]},
            **{point: {"enabled": [{"name": "InterPodAffinity"}]} for point in points}},
            "pluginConfig": [{"name": "InterPodAffinity", "args": ipa_args}]}]}
        cluster = Cluster.from_objects(ClusterObjects(nodes=list(nodes), pods=list(existing),
                                                      namespaces=list(namespaces)))
        return explain_pod(Scheduler(cluster, config_from_doc(doc)), incoming)

    @staticmethod
    def filt(incoming, existing=(), nodes=NODES, namespaces=NAMESPACES):
        report = Phalanx._explain(incoming, existing, nodes, namespaces)
        out = {}
        for r in report["nodes"]:
            status = r["filters"].get("InterPodAffinity")
            if status is None:
                return None                     # PreFilter skipped: Filter does not run
            out[r["name"]] = (status["status"], status["reasons"])
        return out

    @staticmethod
    def sc(incoming, existing=(), feasible=None, nodes=NODES, args=None, namespaces=NAMESPACES):
        report = Phalanx._explain(incoming, existing, nodes, namespaces, args, nodes if feasible is None else feasible)
        out = {}
        for r in report["nodes"]:
            if r["total"] is None:
                continue
            score = r["scores"].get("InterPodAffinity")
            if score is None or score.get("skipped"):
                return None                     # PreScore skipped
            out[r["name"]] = (score["raw"], score["normalized"])
        return out


@pytest.fixture(params=[Reference, Phalanx], ids=["reference", "phalanx"])
def impl(request):
    return request.param


# ----------------------------------------------------------------------------- required affinity
def test_required_affinity_zone_satisfied_not_and_missing_key(impl):
    # web on n1 -> affinity counts {(zone,a): 1}.
    # n1, n2 (zone a): count 1 > 0 -> Success.
    # n3 (zone b): count 0 -> podsExist false; map non-empty -> UU.
    # n4: no zone label -> UU immediately (same reason string).
    r = impl.filt(pod("p", aff=[term("zone", WEB)]), [pod("w", WEB, on="n1")])
    assert r == {"n1": (S, []), "n2": (S, []), "n3": (UU, [R_AFF]), "n4": (UU, [R_AFF])}


def test_required_affinity_hostname_only_that_node(impl):
    # counts {(hostname, n1): 1} -> only n1 passes; the rest have a hostname label but count 0 -> UU.
    r = impl.filt(pod("p", aff=[term(HOST, WEB)]), [pod("w", WEB, on="n1")])
    assert codes(r) == {"n1": S, "n2": UU, "n3": UU, "n4": UU}


def test_first_pod_of_self_affine_group(impl):
    # No pods at all: counts empty, the pod (app=db) matches its own term -> every node carrying the
    # topology key passes; n4 (no zone) still fails.
    p = pod("p", {"app": "db"}, aff=[term("zone", {"app": "db"})])
    assert codes(impl.filt(p)) == {"n1": S, "n2": S, "n3": S, "n4": UU}
    # The pod does not match its own term -> nobody lets it in.
    q = pod("q", {"app": "other"}, aff=[term("zone", {"app": "db"})])
    assert codes(impl.filt(q)) == {"n1": UU, "n2": UU, "n3": UU, "n4": UU}


def test_self_affine_rule_off_once_another_pod_matches(impl):
    # db already on n3 -> counts {(zone,b):1} non-empty -> only zone b passes.
    p = pod("p", {"app": "db"}, aff=[term("zone", {"app": "db"})])
    assert codes(impl.filt(p, [pod("d", {"app": "db"}, on="n3")])) == {"n1": UU, "n2": UU, "n3": S, "n4": UU}


def test_matching_pod_on_node_without_the_key_keeps_map_empty(impl):
    # db runs on n4 which has no zone label: nothing is counted, the map stays empty, so the
    # self-affine rule still lets the pod into every zoned node.
    p = pod("p", {"app": "db"}, aff=[term("zone", {"app": "db"})])
    assert codes(impl.filt(p, [pod("d", {"app": "db"}, on="n4")])) == {"n1": S, "n2": S, "n3": S, "n4": UU}


def test_all_affinity_terms_must_be_matched_by_one_pod(impl):
    # terms: app=web (zone) AND tier=fe (zone).  On n1: A(app=web) and B(tier=fe): neither matches
    # BOTH -> nothing counted -> map empty; incoming pod has no labels -> self rule fails -> all UU.
    terms = [term("zone", WEB), term("zone", {"tier": "fe"})]
    ex = [pod("a", WEB, on="n1"), pod("b", {"tier": "fe"}, on="n1")]
    assert codes(impl.filt(pod("p", aff=terms), ex)) == {"n1": UU, "n2": UU, "n3": UU, "n4": UU}
    # C(app=web,tier=fe) on n3 -> counts {(zone,b): 2} (once per term, same key) -> only n3.
    ex.append(pod("c", {"app": "web", "tier": "fe"}, on="n3"))
    st = IPA.prefilter(pod("p", aff=terms), NODES, by_node(ex), NAMESPACES)
    assert st.affinity == {("zone", "b"): 2}
    assert codes(impl.filt(pod("p", aff=terms), ex)) == {"n1": UU, "n2": UU, "n3": S, "n4": UU}


def test_two_terms_different_keys(impl):
    # zone AND hostname: C(app=web) on n1 -> counts {(zone,a):1, (hostname,n1):1}.
    # n2: zone ok, hostname n2 count 0 -> podsExist false, map non-empty -> UU.  Only n1 passes.
    p = pod("p", aff=[term("zone", WEB), term(HOST, WEB)])
    assert codes(impl.filt(p, [pod("c", WEB, on="n1")])) == {"n1": S, "n2": UU, "n3": UU, "n4": UU}


# ----------------------------------------------------------------------------- anti-affinity
def test_incoming_required_anti_affinity(impl):
    # web on n1 -> anti counts {(zone,a):1}: n1, n2 Unschedulable; n3 ok; n4 has no zone -> ok.
    r = impl.filt(pod("p", anti=[term("zone", WEB)]), [pod("w", WEB, on="n1")])
    assert r == {"n1": (U, [R_ANTI]), "n2": (U, [R_ANTI]), "n3": (S, []), "n4": (S, [])}


def test_affinity_checked_before_anti_affinity(impl):
    # affinity to app=web (zone) and anti to app=db (hostname): web on n3, db on n3.
    # n3: affinity ok, anti (hostname,n3)=1 -> U anti.  n1,n2: affinity fails first -> UU.
    p = pod("p", aff=[term("zone", WEB)], anti=[term(HOST, {"app": "db"})])
    ex = [pod("w", WEB, on="n3"), pod("d", {"app": "db"}, on="n3")]
    r = impl.filt(p, ex)
    assert r["n3"] == (U, [R_ANTI]) and r["n1"] == (UU, [R_AFF]) and r["n4"] == (UU, [R_AFF])


def test_existing_pods_anti_affinity_symmetry(impl):
    # e on n1 has required anti app=web (zone).  Incoming app=web without any affinity:
    # existing counts {(zone,a):1} -> n1, n2 U (existing reason); n3, n4 Success.
    ex = [pod("e", on="n1", anti=[term("zone", WEB)])]
    r = impl.filt(pod("p", WEB), ex)
    assert r == {"n1": (U, [R_EXIST]), "n2": (U, [R_EXIST]), "n3": (S, []), "n4": (S, [])}
    # An incoming pod not matching the term: nothing counted and no own terms -> PreFilter Skip.
    assert impl.filt(pod("q", {"app": "x"}), ex) is None


def test_existing_anti_affinity_checks_every_node_label():
    # The existing term uses topologyKey "rack"; only n3 carries rack=r1 (plus e runs there).
    nodes = [node("n1", "a", rack="r1"), node("n2", "a", rack="r2"), node("n3", "b", rack="r1")]
    ex = [pod("e", on="n3", anti=[term("rack", WEB)])]
    r = IPA.filter_all(pod("p", WEB), nodes, by_node(ex, nodes), NAMESPACES)
    assert codes(r) == {"n1": U, "n2": S, "n3": U}


def test_existing_anti_affinity_namespace_rules(impl):
    # e lives in "third"; its term has no namespaces and no selector -> only namespace "third".
    ex_own = [pod("e", namespace="third", on="n1", anti=[term("zone", WEB)])]
    assert impl.filt(pod("p", WEB), ex_own) is None  # incoming in default: no match -> Skip
    assert codes(impl.filt(pod("p", WEB, namespace="third"), ex_own))["n1"] == U
    # namespaceSelector team=x is matched against the INCOMING pod's namespace labels.
    team_x = {"matchLabels": {"team": "x"}}
    ex_sel = [pod("e", namespace="third", on="n1", anti=[term("zone", WEB, ns_selector=team_x)])]
    assert codes(impl.filt(pod("p", WEB, namespace="other"), ex_sel)) == {"n1": U, "n2": U, "n3": S, "n4": S}
    assert impl.filt(pod("p", WEB, namespace="default"), ex_sel) is None
    # namespaceSelector {} -> every namespace.
    ex_all = [pod("e", namespace="third", on="n1", anti=[term("zone", WEB, ns_selector={})])]
    assert codes(impl.filt(pod("p", WEB, namespace="default"), ex_all))["n2"] == U


# ----------------------------------------------------------------------------- namespaces of the incoming pod's terms
@pytest.mark.parametrize(
    "kw, n1_ok",
    [
        ({}, False),  # no namespaces, no selector -> own namespace "default" only
        ({"namespaces": ["other"]}, True),  # listed
        ({"namespaces": ["third"]}, False),  # listed, wrong one
        ({"ns_selector": {}}, True),  # {} -> all namespaces
        ({"ns_selector": {"matchLabels": {"team": "x"}}}, True),  # other has team=x
        ({"ns_selector": {"matchLabels": {"team": "y"}}}, False),  # only third has team=y
        ({"ns_selector": {"matchLabels": {"kubernetes.io/metadata.name": "other"}}}, True),  # automatic label
        ({"namespaces": ["third"], "ns_selector": {"matchLabels": {"team": "x"}}}, True),  # OR-ed
        ({"ns_selector": None}, False),  # explicit null selector == unset
    ],
)
def test_incoming_term_namespaces(impl, kw, n1_ok):
    # web runs in "other" on n1.  Incoming in "default" has no labels, so if the term does not see
    # the web pod, the map is empty and the self rule fails (no own match) -> all UU.
    r = impl.filt(pod("p", aff=[term("zone", WEB, **kw)]), [pod("w", WEB, namespace="other", on="n1")])
    want = {"n1": S, "n2": S, "n3": UU, "n4": UU} if n1_ok else {"n1": UU, "n2": UU, "n3": UU, "n4": UU}
    assert codes(r) == want


def test_label_selector_nil_vs_empty(impl):
    ex = [pod("w", WEB, on="n1")]
    # labelSelector: null matches nothing - not even the pod itself (labels identical to the web pod).
    assert codes(impl.filt(pod("p", WEB, aff=[term("zone", None)]), ex)) == {"n1": UU, "n2": UU, "n3": UU, "n4": UU}
    # labelSelector: {} matches every pod in the namespace -> zone a.
    assert codes(impl.filt(pod("p", aff=[term("zone", {})]), ex)) == {"n1": S, "n2": S, "n3": UU, "n4": UU}
    # anti-affinity with {}: any pod in zone a repels.
    assert codes(impl.filt(pod("p", anti=[term("zone", {})]), ex)) == {"n1": U, "n2": U, "n3": S, "n4": S}
    # anti-affinity with null: no effect at all; no existing anti either -> but own terms exist, no Skip.
    assert codes(impl.filt(pod("p", anti=[term("zone", None)]), ex)) == {"n1": S, "n2": S, "n3": S, "n4": S}


def test_match_label_keys_merged_by_model(impl):
    # The model (like the API server at create) appends `version In (v1)` and `tenant NotIn (t1)`.
    p = pod("p", {"app": "web", "version": "v1", "tenant": "t1"},
            aff=[term("zone", WEB, mlk=["version", "absent"], mmlk=["tenant"])])
    t = p.spec.affinity.pod_affinity.required_during_scheduling_ignored_during_execution[0]
    got = [(e.key, e.operator, e.values) for e in t.label_selector.match_expressions]
    assert got == [("version", "In", ["v1"]), ("tenant", "NotIn", ["t1"])]  # "absent": pod has no such label
    # Read back from its stored form (keys and merged requirements both there), the pod is unchanged.
    assert Pod.model_validate(p.model_dump(by_alias=True)) == p
    # Existing: web v1 tenant t2 on n3 (matches), web v2 on n1 (version mismatch), web v1 tenant t1 on n2
    # (tenant NotIn fails).  Only zone b counts -> n3 passes.
    ex = [pod("a", {"app": "web", "version": "v1", "tenant": "t2"}, on="n3"),
          pod("b", {"app": "web", "version": "v2", "tenant": "t2"}, on="n1"),
          pod("c", {"app": "web", "version": "v1", "tenant": "t1"}, on="n2")]
    assert codes(impl.filt(p, ex)) == {"n1": UU, "n2": UU, "n3": S, "n4": UU}


def test_terminating_pods_still_count(impl):
    # InterPodAffinity never looks at deletionTimestamp (PodTopologySpread does).
    ex = [pod("w", WEB, on="n1", deleting=True)]
    assert codes(impl.filt(pod("p", aff=[term("zone", WEB)]), ex)) == {"n1": S, "n2": S, "n3": UU, "n4": UU}
    assert codes(impl.filt(pod("p", anti=[term("zone", WEB)]), ex)) == {"n1": U, "n2": U, "n3": S, "n4": S}
    ex2 = [pod("e", on="n3", anti=[term("zone", WEB)], deleting=True)]
    assert codes(impl.filt(pod("p", WEB), ex2)) == {"n1": S, "n2": S, "n3": U, "n4": S}


def test_prefilter_skip_without_terms():
    # No required terms of its own (preferred ones do not count) and no matching existing anti.
    p = pod("p", pref_aff=[(5, term("zone", WEB))])
    assert IPA.prefilter(p, NODES, by_node([pod("w", WEB, on="n1")]), NAMESPACES) is None


def test_parse_errors():
    # The reference takes unvalidated terms (the scheduler's own parsing rules); phalanx, as the API server,
    # rejects such a pod when it is read (test_pod_affinity_validation).
    bad = {"key": "app", "operator": "In", "values": []}
    p = pod_unvalidated("p", aff=[term("zone", {}, exprs=[bad])])
    with pytest.raises(IPA.SelectorError, match=r"^parsing pod: requiredAffinityTerms: "):
        IPA.prefilter(p, NODES, by_node([]), NAMESPACES)
    # An existing pod whose anti list fails to parse just loses that list.
    e = pod_unvalidated("e", WEB, on="n1", anti=[term("zone", WEB), term("zone", {}, exprs=[bad])])
    assert filt(pod("q", WEB), [e]) is None


def test_pod_affinity_validation():
    bad = {"key": "app", "operator": "In", "values": []}
    with pytest.raises(ValueError, match=r"spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution"
                                         r"\[0\].labelSelector.matchExpressions\[0\].values: Required value"):
        pod("p", aff=[term("zone", {}, exprs=[bad])])
    with pytest.raises(ValueError, match=r"Invalid value: 101: must be in the range 1-100"):
        pod("p", pref_aff=[(101, term("zone", WEB))])
    with pytest.raises(ValueError, match=r"topologyKey: Required value: can not be empty"):
        pod("p", anti=[term("", WEB)])
    # matchLabelKeys without a labelSelector (which would match nothing) is refused.
    with pytest.raises(ValueError, match=r"matchLabelKeys: Forbidden: must not be specified when labelSelector is "
                                         r"not set"):
        pod("p", anti=[term("zone", None, mlk=["version"])])


# ----------------------------------------------------------------------------- scoring
def test_preferred_affinity_and_anti_affinity_weights(impl):
    # incoming: pref affinity w5 app=web (zone), pref anti w3 app=db (hostname).
    # existing: web on n1, db on n2, web on n3.
    # topology_score: zone {a: 5, b: 5}, hostname {n2: -3}.
    # raw: n1 5, n2 5-3=2, n3 5, n4 0.  min 0, max 5: n1 100, n2 int(100*(2/5))=40, n3 100, n4 0.
    p = pod("p", pref_aff=[(5, term("zone", WEB))], pref_anti=[(3, term(HOST, {"app": "db"}))])
    ex = [pod("w1", WEB, on="n1"), pod("d", {"app": "db"}, on="n2"), pod("w3", WEB, on="n3")]
    assert impl.sc(p, ex) == {"n1": (5, 100), "n2": (2, 40), "n3": (5, 100), "n4": (0, 0)}


def test_negative_raw_scores_and_all_equal(impl):
    # pref anti w10 app=web (zone); web on n1 -> zone a: -10.
    # raw n1 -10, n2 -10, n3 0, n4 0; min -10, max 0, diff 10: n1 0, n2 0, n3 100, n4 100.
    p = pod("p", pref_anti=[(10, term("zone", WEB))])
    ex = [pod("w", WEB, on="n1")]
    assert impl.sc(p, ex) == {"n1": (-10, 0), "n2": (-10, 0), "n3": (0, 100), "n4": (0, 100)}
    # Only n1, n2 feasible: raw -10, -10 -> max == min -> everybody 0.
    assert impl.sc(p, ex, feasible=[NODES[0], NODES[1]]) == {"n1": (-10, 0), "n2": (-10, 0)}


def test_normalize_truncates(impl):
    # pref affinity w1 app=web (hostname); 2 web pods on n2, 3 on n3 -> hostname {n2: 2, n3: 3}.
    # raw n1 0, n2 2, n3 3, n4 0: n2 int(100*(2/3)) = int(66.67) = 66 (not 67), n3 100.
    p = pod("p", pref_aff=[(1, term(HOST, WEB))])
    ex = [pod(f"a{i}", WEB, on="n2") for i in range(2)] + [pod(f"b{i}", WEB, on="n3") for i in range(3)]
    assert impl.sc(p, ex) == {"n1": (0, 0), "n2": (2, 66), "n3": (3, 100), "n4": (0, 0)}


def test_existing_required_affinity_times_hard_weight(impl):
    # e on n1 requires affinity to app=web (zone); the incoming web pod matches it -> zone a += hard.
    ex = [pod("e", on="n1", aff=[term("zone", WEB)])]
    p = pod("p", WEB)
    assert impl.sc(p, ex) == {"n1": (1, 100), "n2": (1, 100), "n3": (0, 0), "n4": (0, 0)}  # default weight 1
    assert impl.sc(p, ex, args=Args(hard=5)) == {"n1": (5, 100), "n2": (5, 100), "n3": (0, 0), "n4": (0, 0)}
    assert impl.sc(p, ex, args=Args(hard=0)) is None  # nothing contributes -> PreScore Skip
    with pytest.raises(ValueError, match=r"not in valid range \[0, 100\]"):
        impl.sc(p, ex, args=Args(hard=101))


def test_existing_preferred_terms_and_required_anti_not_scored(impl):
    # e on n3: pref affinity w7 app=web (zone) -> zone b +7; pref anti w2 app=web (hostname) -> n3 -2;
    # required anti app=web (zone) scores nothing.  raw n1 0, n2 0, n3 5, n4 0 -> n3 100, rest 0.
    e = pod("e", on="n3", pref_aff=[(7, term("zone", WEB))], pref_anti=[(2, term(HOST, WEB))],
            anti=[term("zone", WEB)])
    assert impl.sc(pod("p", WEB), [e]) == {"n1": (0, 0), "n2": (0, 0), "n3": (5, 100), "n4": (0, 0)}


def test_ignore_preferred_terms_of_existing_pods(impl):
    e = pod("e", on="n3", pref_aff=[(7, term("zone", WEB))])
    # incoming without preferred terms -> PreScore Skip.
    assert impl.sc(pod("p", WEB), [e], args=Args(ignore=True)) is None
    # incoming WITH a preferred term: the flag does nothing, e's term still counts.
    # incoming pref anti w1 app=db (zone): no db pod -> nothing.  zone b += 7: n3 7 -> 100.
    p = pod("p", WEB, pref_anti=[(1, term("zone", {"app": "db"}))])
    assert impl.sc(p, [e], args=Args(ignore=True)) == {"n1": (0, 0), "n2": (0, 0), "n3": (7, 100), "n4": (0, 0)}


def test_node_without_labels(impl):
    bare = node("n0", host=False)
    nodes = NODES + [bare]
    # An existing pod on an unlabeled node contributes nothing (processExistingPod returns early).
    ex = [pod("e", on="n0", aff=[term("zone", WEB)])]
    assert impl.sc(pod("p", WEB), ex, nodes=nodes) is None
    # An unlabeled feasible node scores 0.  pref affinity w4 app=web (zone), web on n3 -> zone b 4.
    p = pod("p", pref_aff=[(4, term("zone", WEB))])
    r = impl.sc(p, [pod("w", WEB, on="n3")], nodes=nodes)
    assert r == {"n1": (0, 0), "n2": (0, 0), "n3": (4, 100), "n4": (0, 0), "n0": (0, 0)}


def test_prescore_walks_infeasible_nodes_too(impl):
    # web on n1 (not feasible) still puts 5 on zone a, so feasible n2 gets it: n2 5 -> 100, n3 0 -> 0.
    p = pod("p", pref_aff=[(5, term("zone", WEB))])
    assert impl.sc(p, [pod("w", WEB, on="n1")], feasible=[NODES[1], NODES[2]]) == {"n2": (5, 100), "n3": (0, 0)}


def test_net_zero_contribution_is_not_skip(impl):
    # +3 and -3 on the same key: the map is non-empty (zone a: 0), so no Skip; all raw 0 -> all 0.
    p = pod("p", pref_aff=[(3, term("zone", WEB))], pref_anti=[(3, term("zone", WEB))])
    st = IPA.prescore(p, NODES, NODES, by_node([pod("w", WEB, on="n1")]), NAMESPACES)
    assert st is not None and st.topology_score == {"zone": {"a": 0}}
    assert impl.sc(p, [pod("w", WEB, on="n1")]) == {n.metadata.name: (0, 0) for n in NODES}


def test_terminating_pods_scored(impl):
    p = pod("p", pref_aff=[(5, term("zone", WEB))])
    assert impl.sc(p, [pod("w", WEB, on="n3", deleting=True)])["n3"] == (5, 100)


# ----------------------------------------------------------------------------- queueing hints
def test_hint_pod_add_update_delete():
    target = pod("p", uid="p", aff=[term("zone", WEB)])
    # add: scheduled and matching -> Queue; not matching -> Skip; unscheduled -> Skip.
    assert IPA.hint_after_pod_change(target, None, pod("w", WEB, on="n1", uid="w")) == Q
    assert IPA.hint_after_pod_change(target, None, pod("w", {"app": "x"}, on="n1", uid="w")) == QS
    assert IPA.hint_after_pod_change(target, None, pod("w", WEB, uid="w")) == QS
    # update: non-match -> match Queue; match -> match Skip; match -> non-match Skip.
    old, new = pod("w", {"app": "x"}, on="n1", uid="w"), pod("w", WEB, on="n1", uid="w")
    assert IPA.hint_after_pod_change(target, old, new) == Q
    assert IPA.hint_after_pod_change(target, new, new) == QS
    assert IPA.hint_after_pod_change(target, new, old) == QS


def test_hint_anti_affinity():
    target = pod("p", uid="p", anti=[term("zone", WEB)])
    w = pod("w", WEB, on="n1", uid="w")
    x = pod("w", {"app": "x"}, on="n1", uid="w")
    assert IPA.hint_after_pod_change(target, w, x) == Q  # stops matching the anti term
    assert IPA.hint_after_pod_change(target, x, w) == QS
    assert IPA.hint_after_pod_change(target, w, None) == Q  # deleted pod matched the anti term
    assert IPA.hint_after_pod_change(target, x, None) == QS
    # deleted pod's own anti-affinity matched the target (PR #135325)
    t2 = pod("p", WEB, uid="p")
    assert IPA.hint_after_pod_change(t2, pod("e", on="n1", uid="e", anti=[term("zone", WEB)]), None) == Q
    assert IPA.hint_after_pod_change(t2, pod("e", on="n1", uid="e", anti=[term("zone", {"app": "z"})]), None) == QS


def test_hint_anti_affinity_all_terms_quirk_in_1_36():
    # Target anti terms app=web AND tier=db; the deleted pod matches only app=web.  Filtering would have
    # rejected on the first term, but the 1.36 hint requires ALL terms to match -> QueueSkip.
    target = pod("p", uid="p", anti=[term("zone", WEB), term("zone", {"tier": "db"})])
    assert IPA.hint_after_pod_change(target, pod("w", WEB, on="n1", uid="w"), None) == QS
    assert IPA.hint_after_pod_change(target, pod("w", {"app": "web", "tier": "db"}, on="n1", uid="w"), None) == Q


def test_hint_target_pod_label_change():
    # The unscheduled target pod itself changes labels -> Queue (checked before the "unscheduled" skip).
    old, new = pod("p", {"a": "1"}, uid="p"), pod("p", {"a": "2"}, uid="p")
    assert IPA.hint_after_pod_change(old, old, new) == Q
    # Another unscheduled pod changing labels -> Skip.
    assert IPA.hint_after_pod_change(old, pod("q", {"a": "1"}, uid="q"), pod("q", {"a": "2"}, uid="q")) == QS


def test_hint_does_not_merge_namespace_selector():
    # The hint matches the target's raw terms with empty namespace labels: a team=x selector can never
    # match, {} matches everything.
    added = pod("w", WEB, namespace="other", on="n1", uid="w")
    sel = pod("p", uid="p", aff=[term("zone", WEB, ns_selector={"matchLabels": {"team": "x"}})])
    assert IPA.hint_after_pod_change(sel, None, added) == QS
    everything = pod("p", uid="p", aff=[term("zone", WEB, ns_selector={})])
    assert IPA.hint_after_pod_change(everything, None, added) == Q


def test_hint_node_change():
    aff = pod("p", aff=[term("zone", WEB)])
    anti = pod("p", anti=[term("zone", WEB)])
    plain = pod("p")
    assert IPA.hint_after_node_change(aff, None, node("m", "a")) == Q  # added with the key
    assert IPA.hint_after_node_change(aff, None, node("m")) == QS  # added without
    assert IPA.hint_after_node_change(aff, node("m"), node("m", "a")) == Q  # gained the key
    assert IPA.hint_after_node_change(aff, node("m", "a"), node("m", "b")) == Q  # value changed
    assert IPA.hint_after_node_change(aff, node("m", "a"), node("m", "a", x="1")) == QS  # unrelated
    assert IPA.hint_after_node_change(anti, None, node("m")) == Q  # any added node
    assert IPA.hint_after_node_change(anti, node("m"), node("m", "a")) == QS  # gaining the key never helps
    assert IPA.hint_after_node_change(anti, node("m", "a"), node("m")) == Q  # lost the key
    assert IPA.hint_after_node_change(anti, node("m", "a"), node("m", "b")) == Q
    assert IPA.hint_after_node_change(plain, None, node("m", "a")) == QS
