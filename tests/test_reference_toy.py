"""Hand-checked toy cases for the reference scheduler (tests/reference).

Every expected number below was worked out by hand in the comment next to it; none is computed
by code.  Units: cpu in millicores, memory in bytes (1Gi = 1073741824, 1Mi = 1048576).
Default profile: filters NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts,
NodeResourcesFit, PodTopologySpread; scores TaintToleration*3, NodeAffinity*2,
NodeResourcesFit*1 (LeastAllocated cpu:1 memory:1), PodTopologySpread*2,
NodeResourcesBalancedAllocation*1 (cpu, memory); compat 1.36.
"""

from __future__ import annotations

import pytest

try:
    from tests.reference import plugins as P
    from tests.reference import ref_filter, ref_schedule, ref_schedule_one, ref_scores
    from tests.reference.scheduler import effective_priority
    from tests.strategies import GEN, HOSTNAME, ZONE, make_node, make_pod, make_priority_class, make_profile
except ImportError:  # rootdir not on sys.path: tests/ itself is (pytest prepend import mode)
    from reference import plugins as P
    from reference import ref_filter, ref_schedule, ref_schedule_one, ref_scores
    from reference.scheduler import effective_priority
    from strategies import GEN, HOSTNAME, ZONE, make_node, make_pod, make_priority_class, make_profile

DEFAULT = make_profile()
S, U, UU = "Success", "Unschedulable", "UnschedulableAndUnresolvable"


def by_node(nodes, pods=()):
    out = {n.metadata.name: [] for n in nodes}
    for p in pods:
        out[p.spec.node_name].append(p)
    return out


def scores_of(pod, nodes, bound=(), profile=DEFAULT):
    return ref_scores(pod, nodes, nodes, by_node(nodes, bound), profile)


def filt(pod, node, nodes, bound=(), profile=DEFAULT):
    pbn = by_node(nodes, bound)
    return ref_filter(pod, node, pbn[node.metadata.name], nodes, pbn, profile)


# ------------------------------------------------------------------------------ NodeResourcesFit score
def test_least_allocated_example():
    n1 = make_node("n1", cpu="4", memory="8Gi")
    b = make_pod("b", cpu="1", memory="1Gi", node_name="n1")
    p = make_pod("p", cpu="100m", memory="1Gi")
    s = scores_of(p, [n1], [b])
    # cpu: ((4000 - (1000+100)) * 100) / 4000 = 290000/4000 = 72 (72.5 truncated)
    # mem: ((8Gi - 2Gi) * 100) / 8Gi = 75
    # (72*1 + 75*1) / 2 = 147/2 = 73
    assert s["NodeResourcesFit"]["n1"] == (73, 73)


def test_least_allocated_nonzero_defaults_and_best_effort_skip():
    n1 = make_node("n1", cpu="1", memory="1Gi")
    p = make_pod("p")  # no requests at all
    s = scores_of(p, [n1])
    # defaults 100m / 200Mi: cpu (1000-100)*100/1000 = 90; mem (1024Mi-200Mi)*100/1024Mi = 82400/1024 = 80
    # (90 + 80) / 2 = 85
    assert s["NodeResourcesFit"]["n1"] == (85, 85)
    # BalancedAllocation PreScore returns Skip for a pod requesting 0 cpu and 0 memory
    assert "NodeResourcesBalancedAllocation" not in s
    # no preferred terms / no spread constraints -> both skipped
    assert "NodeAffinity" not in s and "PodTopologySpread" not in s


def test_most_allocated_weighted():
    prof = make_profile(fit_strategy="MostAllocated", fit_resources=(("cpu", 2), ("memory", 1)))
    n1 = make_node("n1", cpu="2", memory="4Gi")
    b = make_pod("b", cpu="500m", memory="1Gi", node_name="n1")
    p = make_pod("p", cpu="700m", memory="1Gi")
    s = scores_of(p, [n1], [b], prof)
    # cpu (500+700)*100/2000 = 60 ; mem 2Gi*100/4Gi = 50 ; (60*2 + 50*1)/3 = 170/3 = 56
    assert s["NodeResourcesFit"]["n1"] == (56, 56)


def test_requested_to_capacity_ratio_rounds_half_away_from_zero():
    prof = make_profile(fit_strategy="RequestedToCapacityRatio", rtcr_shape=((0, 0), (100, 10)))
    n1 = make_node("n1", cpu="4", memory="8Gi")
    p = make_pod("p", cpu="1200m", memory="3584Mi")
    s = scores_of(p, [n1], (), prof)
    # shape scaled x10: (0,0),(100,100)
    # cpu utilization 1200*100/4000 = 30 -> 30 ; mem 3584Mi*100/8192Mi = 43.75 -> 43 -> 43
    # (30 + 43) / 2 = 36.5 -> math.Round -> 37   (Python's round() would give 36)
    assert s["NodeResourcesFit"]["n1"] == (37, 37)


def test_requested_to_capacity_ratio_truncates_toward_zero_and_drops_zero_scores():
    prof = make_profile(
        fit_strategy="RequestedToCapacityRatio", fit_resources=(("cpu", 1), ("memory", 1)), rtcr_shape=((0, 10), (30, 0))
    )
    n1 = make_node("n1", cpu="4", memory="1Gi")
    p = make_pod("p", cpu="1", memory="512Mi")
    s = scores_of(p, [n1], (), prof)
    # shape (0,100),(30,0)
    # cpu util 1000*100/4000 = 25: 100 + ((0-100)*(25-0))/(30-0) = 100 + (-2500/30 -> -83, Go truncation) = 17
    # mem util 50 > 30 -> last point score 0 -> not counted (neither score nor weight)
    # result round(17*1 / 1) = 17
    assert s["NodeResourcesFit"]["n1"] == (17, 17)


# ------------------------------------------------------------------------------ BalancedAllocation
def test_balanced_allocation_v136_and_v135():
    n1 = make_node("n1", cpu="4", memory="8Gi")
    b = make_pod("b", cpu="1", memory="1Gi", node_name="n1")
    p = make_pod("p", cpu="1", memory="3Gi")
    # without pod: cpu 1000/4000 = .25, mem 1/8 = .125 -> std |.25-.125|/2 = .0625 -> int(93.75) = 93
    # with pod:    cpu 2000/4000 = .5,  mem 4/8 = .5    -> std 0 -> 100
    # v1.36: 50 + (50 + 100 - 93)/2 = 50 + 57/2 = 50 + 28 = 78 ; v1.35: 100
    assert scores_of(p, [n1], [b])["NodeResourcesBalancedAllocation"]["n1"] == (78, 78)
    old = make_profile(compat="1.35")
    assert scores_of(p, [n1], [b], old)["NodeResourcesBalancedAllocation"]["n1"] == (100, 100)


def test_balanced_allocation_v136_matches_upstream_pr_example():
    # kubernetes PR #135573 test: both nodes 6000m cpu / 10000 bytes memory, pod asks 4500m cpu only.
    n1 = make_node("node1", cpu="6", memory="10000")
    n2 = make_node("node2", cpu="6", memory="10000")
    bound = [
        make_pod("e1", cpu="1", node_name="node1"),
        make_pod("e2", cpu="2", node_name="node1"),
        make_pod("e3", cpu="1", memory="2000", node_name="node2"),
        make_pod("e4", cpu="2", memory="3000", node_name="node2"),
    ]
    p = make_pod("p", cpu="4500m")
    s = scores_of(p, [n1, n2], bound)["NodeResourcesBalancedAllocation"]
    # node1: without (.5, 0) std .25 -> 75 ; with (7500/6000 capped 1, 0) std .5 -> 50
    #        50 + (50 + 50 - 75)/2 = 50 + 25/2 = 62
    # node2: without (.5, .5) -> 100 ; with (1, .5) std .25 -> 75 ; 50 + (50+75-100)/2 = 62
    assert s == {"node1": (62, 62), "node2": (62, 62)}


# ------------------------------------------------------------------------------ TaintToleration
def test_taint_toleration_score_reverse_normalized():
    n1 = make_node("n1")
    n2 = make_node("n2", taints=[("dedicated", "a", "PreferNoSchedule")])
    n3 = make_node(
        "n3",
        taints=[("dedicated", "a", "PreferNoSchedule"), ("gpu", "b", "PreferNoSchedule"), ("spot", "", "PreferNoSchedule")],
    )
    p = make_pod("p", cpu="100m", tolerations=[{"key": "spot", "operator": "Exists", "effect": "PreferNoSchedule"}])
    s = scores_of(p, [n1, n2, n3])["TaintToleration"]
    # untolerated PreferNoSchedule taints: n1 0, n2 1, n3 2 (spot tolerated); max 2
    # reverse: n1 100 - 0 = 100 ; n2 100 - 100*1/2 = 50 ; n3 100 - 100 = 0
    assert s == {"n1": (0, 100), "n2": (1, 50), "n3": (2, 0)}


def test_taint_and_unschedulable_filters():
    tainted = make_node("n1", taints=[("dedicated", "a", "NoSchedule"), ("spot", "", "PreferNoSchedule")])
    cordoned = make_node("n2", unschedulable=True)
    p = make_pod("p", cpu="100m")
    assert filt(p, tainted, [tainted, cordoned]) == [
        ("NodeUnschedulable", S, []),
        ("TaintToleration", UU, ["node(s) had untolerated taint(s)"]),
    ]
    assert filt(p, cordoned, [tainted, cordoned]) == [("NodeUnschedulable", UU, ["node(s) were unschedulable"])]
    # Exists with no key tolerates every taint; the unschedulable taint toleration lets a pod onto a cordoned node
    q = make_pod(
        "q",
        cpu="100m",
        tolerations=[{"operator": "Exists"}],
    )
    assert filt(q, tainted, [tainted, cordoned])[:2] == [("NodeUnschedulable", S, []), ("TaintToleration", S, [])]
    assert filt(q, cordoned, [tainted, cordoned])[0] == ("NodeUnschedulable", S, [])


# ------------------------------------------------------------------------------ NodeAffinity
def test_node_affinity_required_gt_lt_notin():
    term = {
        "match_expressions": [
            {"key": GEN, "operator": "Lt", "values": ["3"]},
            {"key": ZONE, "operator": "NotIn", "values": ["z2"]},
        ]
    }
    p = make_pod("p", cpu="100m", required_terms=[term])
    nodes = [
        make_node("a", labels={GEN: "2", ZONE: "z1"}),  # 2 < 3, z1 not in [z2]      -> match
        make_node("b", labels={GEN: "2"}),  # NotIn matches a missing key           -> match
        make_node("c", labels={GEN: "02"}),  # ParseInt("02") = 2                    -> match
        make_node("d", labels={GEN: "x"}),  # not an integer                         -> no
        make_node("e", labels={GEN: "3"}),  # 3 < 3 false                            -> no
        make_node("f", labels={GEN: "+1", ZONE: "z2"}),  # +1 parses, but zone z2    -> no
    ]
    got = {n.metadata.name: filt(p, n, nodes)[2] for n in nodes}
    ok = ("NodeAffinity", S, [])
    bad = ("NodeAffinity", UU, ["node(s) didn't match Pod's node affinity/selector"])
    assert got == {"a": ok, "b": ok, "c": ok, "d": bad, "e": bad, "f": bad}


def test_node_affinity_preferred_score():
    pref = [
        (30, {"match_expressions": [{"key": ZONE, "operator": "In", "values": ["z1"]}]}),
        (50, {"match_expressions": [{"key": GEN, "operator": "Gt", "values": ["3"]}]}),
        (10, {"match_fields": [{"key": "metadata.name", "operator": "In", "values": ["n3"]}]}),
    ]
    p = make_pod("p", cpu="100m", preferred_terms=pref)
    nodes = [
        make_node("n1", labels={ZONE: "z1", GEN: "2"}),  # 30
        make_node("n2", labels={ZONE: "z2", GEN: "5"}),  # 50
        make_node("n3", labels={ZONE: "z1", GEN: "4"}),  # 30 + 50 + 10 = 90
        make_node("n4"),  # 0
    ]
    s = scores_of(p, nodes)["NodeAffinity"]
    # max 90: n1 100*30/90 = 33 ; n2 100*50/90 = 55 ; n3 100 ; n4 0
    assert s == {"n1": (30, 33), "n2": (50, 55), "n3": (90, 100), "n4": (0, 0)}


def test_node_affinity_prefilter_node_names_and_conflict():
    nodes = [make_node("n1"), make_node("n2", unschedulable=True), make_node("n3")]
    pinned = make_pod(
        "p", cpu="100m", required_terms=[{"match_fields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]
    )
    r = ref_schedule_one(pinned, nodes, by_node(nodes), DEFAULT)
    # n1, n3 are outside the PreFilterResult; n2 runs the filters and is cordoned.
    # histogram strings sorted: "1 node(s) were unschedulable" < "2 node(s) didn't satisfy ..."
    assert r.node is None
    assert r.message == (
        "0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )
    conflict = make_pod(
        "q",
        cpu="100m",
        required_terms=[
            {
                "match_fields": [
                    {"key": "metadata.name", "operator": "In", "values": ["n1"]},
                    {"key": "metadata.name", "operator": "In", "values": ["n3"]},
                ]
            }
        ],
    )
    r = ref_schedule_one(conflict, nodes, by_node(nodes), DEFAULT)
    assert r.node is None and r.message == "0/3 nodes are available: pod affinity terms conflict."


# ------------------------------------------------------------------------------ NodePorts
def test_node_ports_conflicts():
    n1 = make_node("n1")
    b = make_pod("b", cpu="100m", node_name="n1", host_ports=[(8080, "TCP", "127.0.0.1")])
    nodes = [n1]
    wildcard = make_pod("w", cpu="100m", host_ports=[(8080, "TCP", "")])  # "" -> 0.0.0.0 checks every IP
    udp = make_pod("u", cpu="100m", host_ports=[(8080, "UDP", "")])  # other protocol
    other_ip = make_pod("o", cpu="100m", host_ports=[(8080, "TCP", "10.0.0.1")])  # checks 0.0.0.0 and 10.0.0.1 only
    no_ports = make_pod("n", cpu="100m")
    assert ("NodePorts", U, ["node(s) didn't have free ports for the requested pod ports"]) in filt(wildcard, n1, nodes, [b])
    assert ("NodePorts", S, []) in filt(udp, n1, nodes, [b])
    assert ("NodePorts", S, []) in filt(other_ip, n1, nodes, [b])
    assert all(pl != "NodePorts" for pl, _, _ in filt(no_ports, n1, nodes, [b]))  # PreFilter Skip


# ------------------------------------------------------------------------------ NodeResourcesFit filter
def test_fit_filter_codes():
    n1 = make_node("n1", cpu="2", memory="4Gi", pods=2)
    b = make_pod("b", cpu="1500m", node_name="n1")
    nodes = [n1]
    # 1000 > 2000-1500 = 500 -> Insufficient cpu; 1000 > 2000 is false -> resolvable
    assert filt(make_pod("p", cpu="1"), n1, nodes, [b])[-1] == ("NodeResourcesFit", U, ["Insufficient cpu"])
    # 3000 > 2000 -> unresolvable; memory 5Gi > 4Gi -> unresolvable too; both reasons kept in order
    assert filt(make_pod("q", cpu="3", memory="5Gi"), n1, nodes, [b])[-1] == (
        "NodeResourcesFit",
        UU,
        ["Insufficient cpu", "Insufficient memory"],
    )
    # gpu requested, node has none: 1 > 0 -> unresolvable
    assert filt(make_pod("g", cpu="100m", gpu=1), n1, nodes, [b])[-1] == (
        "NodeResourcesFit",
        UU,
        ["Insufficient nvidia.com/gpu"],
    )
    # pods=2 with 2 bound pods -> 2+1 > 2 -> Too many pods (never unresolvable);
    # cpu 1000 > 2000-1500 (b2 has no requests: raw requested stays 1500) -> Insufficient cpu, resolvable
    b2 = make_pod("b2", node_name="n1")
    assert filt(make_pod("r", cpu="1"), n1, nodes, [b, b2])[-1] == (
        "NodeResourcesFit",
        U,
        ["Too many pods", "Insufficient cpu"],
    )


def test_fit_filter_overcommitted_node_and_zero_request():
    n1 = make_node("n1", cpu="1", memory="4Gi")
    b = make_pod("b", cpu="2", node_name="n1")  # node already over-committed on cpu
    p = make_pod("p", memory="1Gi")  # cpu request 0 -> the cpu check is skipped (podRequest.MilliCPU > 0 guard)
    assert filt(p, n1, [n1], [b])[-1] == ("NodeResourcesFit", S, [])


def test_sidecar_overhead_and_pod_level_requests():
    # containers 500m; init: sidecar 200m then regular 1 cpu
    # steady state 500 + 200 = 700 ; init phase: sidecar alone 200, regular 1000 + sidecar 200 = 1200
    # request = max(700, 1200) = 1200 ; + overhead 50m = 1250
    p = make_pod("p", containers=[{"cpu": "500m"}], init_containers=[({"cpu": "200m"}, True), ({"cpu": "1"}, False)])
    fits = make_node("a", cpu="1200m")
    short = make_node("b", cpu="1199m")
    assert filt(p, fits, [fits])[-1] == ("NodeResourcesFit", S, [])
    # 1200 > 1199 - 0 and 1200 > 1199 allocatable -> unresolvable
    assert filt(p, short, [short])[-1] == ("NodeResourcesFit", UU, ["Insufficient cpu"])
    q = make_pod(
        "q",
        containers=[{"cpu": "500m"}],
        init_containers=[({"cpu": "200m"}, True), ({"cpu": "1"}, False)],
        overhead={"cpu": "50m", "memory": "32Mi"},
    )
    assert filt(q, fits, [fits])[-1] == ("NodeResourcesFit", UU, ["Insufficient cpu"])  # 1250 > 1200 allocatable
    # with 100m already used on a 1300m node: 1250 > 1300-100 = 1200 but 1250 <= 1300 -> resolvable
    big = make_node("c", cpu="1300m")
    used = make_pod("u", cpu="100m", node_name="c")
    assert filt(q, big, [big], [used])[-1] == ("NodeResourcesFit", U, ["Insufficient cpu"])
    # pod-level requests override the container sum: 2000 > 1200 allocatable -> unresolvable
    r = make_pod("r", containers=[{"cpu": "100m"}], pod_level={"cpu": "2", "memory": "1Gi"})
    assert filt(r, fits, [fits])[-1] == ("NodeResourcesFit", UU, ["Insufficient cpu"])


# ------------------------------------------------------------------------------ PodTopologySpread
def _zone_spread(max_skew=1, mode="DoNotSchedule", **kw):
    c = {"max_skew": max_skew, "topology_key": ZONE, "when_unsatisfiable": mode, "label_selector": {"match_labels": {"app": "a"}}}
    c.update(kw)
    return c


def test_pts_filter_skew_and_missing_label():
    nodes = [
        make_node("n1", labels={ZONE: "z1"}),
        make_node("n2", labels={ZONE: "z1"}),
        make_node("n3", labels={ZONE: "z2"}),
        make_node("n4", labels={ZONE: "z3"}),
        make_node("n5"),
    ]
    bound = [make_pod(f"b{i}", cpu="10m", labels={"app": "a"}, node_name=n) for i, n in enumerate(["n1", "n1", "n3"])]
    p = make_pod("p", cpu="100m", labels={"app": "a"}, spread=[_zone_spread()])
    # domains z1:2 z2:1 z3:0 -> min 0 ; self-match 1
    # n1,n2 (z1): 2+1-0 = 3 > 1 ; n3 (z2): 1+1-0 = 2 > 1 ; n4 (z3): 0+1-0 = 1 ok ; n5: no zone label
    got = {n.metadata.name: filt(p, n, nodes, bound)[-1] for n in nodes}
    bad = ("PodTopologySpread", U, ["node(s) didn't match pod topology spread constraints"])
    assert got == {
        "n1": bad,
        "n2": bad,
        "n3": bad,
        "n4": ("PodTopologySpread", S, []),
        "n5": ("PodTopologySpread", UU, ["node(s) didn't match pod topology spread constraints (missing required label)"]),
    }
    r = ref_schedule_one(p, nodes, by_node(nodes, bound), DEFAULT)
    assert r.node == "n4"


def test_pts_min_domains_and_taints_policy():
    nodes = [make_node("n1", labels={ZONE: "z1"}), make_node("n2", labels={ZONE: "z2"}), make_node("n3", labels={ZONE: "z1"})]
    bound = [make_pod("b1", cpu="10m", labels={"app": "a"}, node_name="n1"), make_pod("b2", cpu="10m", labels={"app": "a"}, node_name="n2")]
    # z1:1 z2:1 -> min 1 -> n1: 1+1-1 = 1 ok
    p = make_pod("p", cpu="100m", labels={"app": "a"}, spread=[_zone_spread()])
    assert ref_schedule_one(p, nodes, by_node(nodes, bound), DEFAULT).node is not None
    # minDomains 3 > 2 domains -> global min treated as 0 -> every node: 1+1-0 = 2 > 1
    q = make_pod("q", cpu="100m", labels={"app": "a"}, spread=[_zone_spread(min_domains=3)])
    r = ref_schedule_one(q, nodes, by_node(nodes, bound), DEFAULT)
    assert r.node is None
    assert r.message == "0/3 nodes are available: 3 node(s) didn't match pod topology spread constraints."

    # nodeTaintsPolicy: z2's only node carries an untolerated NoSchedule taint
    nodes2 = [make_node("n1", labels={ZONE: "z1"}), make_node("n2", labels={ZONE: "z2"}, taints=[("dedicated", "a", "NoSchedule")])]
    bound2 = [make_pod("b1", cpu="10m", labels={"app": "a"}, node_name="n1")]
    ignore = make_pod("p", cpu="100m", labels={"app": "a"}, spread=[_zone_spread()])
    # Ignore (default): z1:1 z2:0 -> min 0 -> n1: 1+1-0 = 2 > 1 ; n2 fails TaintToleration
    r = ref_schedule_one(ignore, nodes2, by_node(nodes2, bound2), DEFAULT)
    assert r.node is None
    assert r.message == (
        "0/2 nodes are available: 1 node(s) didn't match pod topology spread constraints, 1 node(s) had untolerated taint(s)."
    )
    honor = make_pod("p", cpu="100m", labels={"app": "a"}, spread=[_zone_spread(node_taints_policy="Honor")])
    # Honor: n2 is not counted -> domains {z1:1} -> min 1 -> n1: 1+1-1 = 1 ok
    assert ref_schedule_one(honor, nodes2, by_node(nodes2, bound2), DEFAULT).node == "n1"


def test_pts_score_zone():
    nodes = [
        make_node("n1", labels={ZONE: "z1"}),
        make_node("n2", labels={ZONE: "z1"}),
        make_node("n3", labels={ZONE: "z2"}),
        make_node("n4"),  # no zone label -> ignored
    ]
    bound = [make_pod(f"b{i}", cpu="10m", labels={"app": "a"}, node_name=n) for i, n in enumerate(["n1", "n1", "n3"])]
    p = make_pod("p", cpu="100m", labels={"app": "a"}, spread=[_zone_spread(mode="ScheduleAnyway")])
    s = scores_of(p, nodes, bound)["PodTopologySpread"]
    # 2 zone values among feasible non-ignored nodes -> weight ln(2+2) = 1.3862943611198906
    # counts z1 = 2, z2 = 1 ; n1,n2: 2*1.386 + (1-1) = 2.77 -> 3 ; n3: 1.386 -> 1 ; n4 ignored -> 0
    # normalize over non-ignored: min 1, max 3 ; n1,n2: 100*(3+1-3)/3 = 33 ; n3: 100*(3+1-1)/3 = 100 ; n4 0
    assert s == {"n1": (3, 33), "n2": (3, 33), "n3": (1, 100), "n4": (0, 0)}


def test_pts_score_hostname():
    nodes = [make_node("n1"), make_node("n2"), make_node("n3")]
    bound = [make_pod(f"b{i}", cpu="10m", labels={"app": "a"}, node_name=n) for i, n in enumerate(["n1", "n1", "n1", "n2"])]
    spread = [{"max_skew": 2, "topology_key": HOSTNAME, "when_unsatisfiable": "ScheduleAnyway", "label_selector": {"match_labels": {"app": "a"}}}]
    p = make_pod("p", cpu="100m", labels={"app": "a"}, spread=spread)
    s = scores_of(p, nodes, bound)["PodTopologySpread"]
    # hostname weight uses the number of scored nodes: ln(3+2) = 1.6094379124341003
    # n1: 3*1.609 + (2-1) = 5.83 -> 6 ; n2: 1.609 + 1 = 2.61 -> 3 ; n3: 0 + 1 = 1
    # min 1, max 6: n1 100*(6+1-6)/6 = 16 ; n2 100*(6+1-3)/6 = 66 ; n3 100*6/6 = 100
    assert s == {"n1": (6, 16), "n2": (3, 66), "n3": (1, 100)}


# ------------------------------------------------------------------------------ whole cycle
def test_totals_and_compat():
    n1 = make_node("n1", cpu="4", memory="8Gi")
    n2 = make_node("n2", cpu="2", memory="8Gi")
    p = make_pod("p", cpu="1", memory="2Gi")
    r = ref_schedule_one(p, [n1, n2], by_node([n1, n2]), DEFAULT)
    # TaintToleration: no taints -> raw 0 everywhere -> reverse-normalized 100 -> *3 = 300 on both
    # Fit: n1 cpu (4000-1000)*100/4000 = 75, mem (8-2)/8 -> 75 -> 75 ; n2 cpu 50, mem 75 -> 125/2 = 62
    # Balanced 1.36: n1 without (0,0) 100, with (.25,.25) 100 -> 50 + 50/2 = 75
    #                n2 without 100, with (.5,.25) std .125 -> 87 -> 50 + (50+87-100)/2 = 50 + 18 = 68
    # totals: n1 300 + 75 + 75 = 450 ; n2 300 + 62 + 68 = 430
    assert r.node == "n1" and r.totals == {"n1": 450, "n2": 430}
    old = ref_schedule_one(p, [n1, n2], by_node([n1, n2]), make_profile(compat="1.35"))
    # Balanced 1.35: n1 100, n2 87 -> n1 300+75+100 = 475 ; n2 300+62+87 = 449
    assert old.totals == {"n1": 475, "n2": 449}


def test_tie_break_lowest_index():
    a, b = make_node("a"), make_node("b")
    p = make_pod("p", cpu="100m")
    assert ref_schedule_one(p, [a, b], by_node([a, b]), DEFAULT).node == "a"
    assert ref_schedule_one(p, [b, a], by_node([b, a]), DEFAULT).node == "b"


def test_message_histogram_string_sort():
    nodes = [make_node(f"t{i}", taints=[("dedicated", "a", "NoSchedule")]) for i in range(10)]
    nodes += [make_node(f"u{i}", unschedulable=True) for i in range(3)]
    r = ref_schedule_one(make_pod("p", cpu="100m"), nodes, by_node(nodes), DEFAULT)
    # "10 node(s) had ..." sorts before "3 node(s) were ..." as strings
    assert r.message == "0/13 nodes are available: 10 node(s) had untolerated taint(s), 3 node(s) were unschedulable."


def test_schedule_priority_order_and_sequential_state():
    n1 = make_node("n1", cpu="1", memory="4Gi")
    pods = [
        make_pod("low", cpu="600m"),  # priority 0, first in input
        make_pod("high", cpu="600m", priority_class_name="high"),  # priority 1000 -> scheduled first
        make_pod("bound", cpu="100m", node_name="n1"),  # already bound: 100m used
    ]
    classes = [make_priority_class("high", 1000)]
    bindings, unsched = ref_schedule([n1], pods, classes, DEFAULT)
    # high: 600 <= 1000-100 -> n1 ; low: 600 > 1000-700 = 300 -> Insufficient cpu (resolvable)
    assert bindings == {"default/high": "n1"}
    assert unsched == {"default/low": "0/1 nodes are available: 1 Insufficient cpu."}


def test_go_helpers():
    assert P.go_div(-2500, 30) == -83 and P.go_div(2500, 30) == 83
    assert P.go_round(36.5) == 37 and P.go_round(0.49999999999999994) == 0 and P.go_round(-2.5) == -3
    assert P.go_parse_int64("+4") == 4 and P.go_parse_int64("1_0") is None and P.go_parse_int64(" 1") is None


@pytest.mark.parametrize("compat", ["1.35", "1.36"])
def test_balanced_three_resources(compat):
    prof = make_profile(compat=compat, balanced_resources=(("cpu", 1), ("memory", 1), ("nvidia.com/gpu", 1)))
    n1 = make_node("n1", cpu="4", memory="4Gi", gpu=4)
    p = make_pod("p", cpu="2", memory="1Gi", gpu=1)
    s = scores_of(p, [n1], (), prof)["NodeResourcesBalancedAllocation"]["n1"]
    # with pod: fractions .5, .25, .25 ; mean 1/3 ; deviations 1/6, -1/12, -1/12
    # variance (1/36 + 1/144 + 1/144)/3 = (6/144)/3 = 1/72 ; std = 0.11785 -> int(88.21) = 88
    # without pod: gpu allocatable 4, nothing used -> fractions 0,0,0 -> 100
    # 1.35: 88 ; 1.36: 50 + (50 + 88 - 100)/2 = 50 + 19 = 69
    assert s == ((88, 88) if compat == "1.35" else (69, 69))


# ------------------------------------------------------------------------------ self-consistency
# Not hand-checked numbers: cheap invariants of the reference on random clusters, plus a cross-check of
# the object model's request helpers against the reference's own PodRequests implementation.
import re  # noqa: E402

from hypothesis import HealthCheck, given, settings  # noqa: E402

try:
    from tests.strategies import clusters, profiles
except ImportError:  # pragma: no cover
    from strategies import clusters, profiles

_MSG = re.compile(r"^0/(\d+) nodes are available: (.+)\.$")


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(clusters(max_nodes=6, max_pods=10), profiles())
def test_reference_invariants(cluster, profile):
    nodes, pods, classes = cluster
    bindings, unsched = ref_schedule(nodes, pods, classes, profile)
    pending = [p for p in pods if not p.spec.node_name]
    assert len(bindings) + len(unsched) == len(pending)
    for msg in unsched.values():
        m = _MSG.match(msg)
        assert m, msg
        assert int(m.group(1)) == len(nodes)
        parts = m.group(2).split(", ")
        if not parts[0][0].isdigit():  # PreFilter rejection: plain message
            continue
        assert parts == sorted(parts)
        assert sum(int(x.split(" ", 1)[0]) for x in parts) >= len(nodes)
    # replay: every binding passed every filter against the state at its time, and its total is maximal
    by_key = {P.pod_key(p): p for p in pods}
    state = {n.metadata.name: [p for p in pods if p.spec.node_name == n.metadata.name] for n in nodes}
    order = sorted(
        (p for p in pending if P.pod_key(p) in bindings),
        key=lambda p: (-P_effective(p, classes), pods.index(p)),
    )
    for p in order:
        node = next(n for n in nodes if n.metadata.name == bindings[P.pod_key(p)])
        st_ = ref_filter(p, node, state[node.metadata.name], nodes, state, profile)
        assert all(code == "Success" for _, code, _ in st_)
        r = ref_schedule_one(p, nodes, state, profile)
        if profile.scoring:
            assert r.node == node.metadata.name and r.totals[r.node] == max(r.totals.values())
        else:   # no Score plugin: the next feasible node round nextStartNodeIndex's ring, which this replay lacks
            assert node.metadata.name in r.totals
        state[node.metadata.name].append(by_key[P.pod_key(p)])


def P_effective(pod, classes):
    return effective_priority(pod, {c.metadata.name: c for c in classes})


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(clusters(max_nodes=2, max_pods=12))
def test_object_model_requests_match_reference(cluster):
    requests = pytest.importorskip("phalanx.cluster_models.requests")
    _nodes, pods, _classes = cluster
    for p in pods:
        assert {k: v for k, v in requests.pod_requests(p).items() if v} == {
            k: v for k, v in P.pod_requests(p).items() if v
        }
        assert tuple(requests.pod_nonzero_requests(p)) == P.pod_nonzero_cpu_mem(p)

