"""Hand-checked toys for the plain DefaultPreemption reference (tests/reference/preemption.py), shaped after
upstream's unit tests at v1.36 (default_preemption_test.go: TestSelectBestCandidate, TestPostFilter,
TestDryRunPreemption). The phalanx implementation is not there yet (issue 13); these pin the oracle it will be
compared with. Every expected value is worked out in the comment beside it.

Fixtures as upstream: priorities neg=-100, low=0, mid=100, high=1000, veryHigh=10000; requests small=100m/100,
medium=200m/200, large=300m/300, veryLarge=500m/500 (cpu / memory bytes); start times are integers (t1 < t2 ...).
The profile enables NodeResourcesFit alone (as upstream's tests do), unless a test says otherwise.
"""
from __future__ import annotations

import pytest
from strategies import make_node, make_pod

try:
    from tests.reference import preemption as R
    from tests.reference.profile import RefProfile
except ImportError:  # tests/ itself on sys.path
    from reference import preemption as R
    from reference.profile import RefProfile

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL, MEDIUM, LARGE, VERY_LARGE = ("100m", "100"), ("200m", "200"), ("300m", "300"), ("500m", "500")
FIT_ONLY = RefProfile(filters=("NodeResourcesFit",), scores=(("NodeResourcesFit", 1),))

START: dict[str, int] = {}


def pod(name, prio, size=SMALL, start=0, labels=None, preemption_policy=None):
    p = make_pod(name, cpu=size[0], memory=size[1], priority=prio, labels=labels)
    if preemption_policy is not None:
        p = p.model_copy(update={"spec": p.spec.model_copy(update={"preemption_policy": preemption_policy})})
    START[p.key] = start
    return p


def prio(p) -> int:
    return p.spec.priority or 0


def start(p) -> int:
    return START[p.key]


def cluster(layout: dict, cpu="500m", memory="500", pods=110):
    """layout: node name -> its pods. Returns (nodes, pods_by_node)."""
    nodes = [make_node(name, cpu=cpu, memory=memory, pods=pods) for name in layout]
    return nodes, {name: list(ps) for name, ps in layout.items()}


def preempt(preemptor, layout, profile=FIT_ONLY, **kw):
    nodes, by_node = cluster(layout, **{k: kw.pop(k) for k in ("cpu", "memory", "pods") if k in kw})
    return R.ref_preempt(preemptor, nodes, by_node, profile, prio, start, **kw)


def victims(result) -> list[str]:
    return [v.metadata.name for v in result.victims]


# ----------------------------------------------------------------------------- pickOneNodeForPreemption
# The preemptor (high, veryLarge) needs a whole node, so every lower-priority pod on the chosen node goes.
BIG = dict(size=VERY_LARGE)


def test_lowest_highest_victim_priority_wins():
    # node1 {mid, mid}, node2 {mid, low}, node3 {low, low}: the highest victim is mid, mid, low -> node3.
    r = preempt(pod("p", HIGH, **BIG), {"node1": [pod("a1", MID), pod("a2", MID)],
                                         "node2": [pod("b1", MID), pod("b2", LOW)],
                                         "node3": [pod("c1", LOW), pod("c2", LOW)]})
    assert (r.node, sorted(victims(r))) == ("node3", ["c1", "c2"])


def test_same_highest_priority_smallest_adjusted_sum_wins():
    # Highest victim mid everywhere; sums (+2^31 each): node1 2*(100+2^31), node2 (100+2^31)+(0+2^31) <- smallest,
    # node3 as node1.
    r = preempt(pod("p", HIGH, **BIG), {"node1": [pod("a1", MID), pod("a2", MID)],
                                         "node2": [pod("b1", MID, LARGE), pod("b2", LOW)],
                                         "node3": [pod("c1", MID), pod("c2", MID)]})
    assert r.node == "node2"


def test_priority_sum_adds_2_to_the_31_per_victim():
    # Raw sums: node1 100-100-100 = -100 (smallest raw), node2 100-100 = 0, node3 100-100+0 = 0. Adjusted:
    # node1 -100 + 3*2^31, node2 0 + 2*2^31 <- smallest, node3 0 + 3*2^31.
    r = preempt(pod("p", HIGH, **BIG), {"node1": [pod("a1", MID), pod("a2", NEG), pod("a3", NEG)],
                                         "node2": [pod("b1", MID), pod("b2", NEG)],
                                         "node3": [pod("c1", MID), pod("c2", NEG), pod("c3", LOW)]})
    assert r.node == "node2"


def test_nodes_whose_pods_outrank_the_preemptor_are_no_candidates():
    # Preemptor veryHigh. node2's only pod is high < veryHigh, so node2 is a candidate with victim priority 1000;
    # the others' highest victim is mid -> node2 out at criterion 2. Sums: node1 100+0+0 + 3*2^31 (smallest),
    # node3 100+0+0+0 + 4*2^31, node4 3*100-100 + 4*2^31.
    r = preempt(pod("p", VERY_HIGH, **BIG), {"node1": [pod("a1", MID), pod("a2", LOW), pod("a3", LOW)],
                                              "node2": [pod("b1", HIGH)],
                                              "node3": [pod("c1", MID), pod("c2", LOW), pod("c3", LOW),
                                                        pod("c4", LOW)],
                                              "node4": [pod("d1", MID), pod("d2", MID), pod("d3", MID),
                                                        pod("d4", NEG)]})
    assert r.node == "node1"


@pytest.mark.parametrize("starts, want", [
    # Two mid victims per node, both started at one time per node: t2, t3, t1 -> the latest (t3) wins.
    ({"node1": (2, 2), "node2": (3, 3), "node3": (1, 1)}, "node2"),
    # Earliest start per node: node1 min(4,2)=2, node2 min(5,1)=1, node3 min(3,6)=3 -> node3.
    ({"node1": (4, 2), "node2": (5, 1), "node3": (3, 6)}, "node3"),
])
def test_latest_earliest_start_among_top_victims_wins(starts, want):
    layout = {n: [pod(f"{n}-a", MID, start=s[0]), pod(f"{n}-b", MID, start=s[1])] for n, s in starts.items()}
    assert preempt(pod("p", HIGH, **BIG), layout).node == want


def test_start_times_of_lower_victims_do_not_count():
    # Only mid victims' starts count: node1 t2, node2 t6, node3 t5 -> node2 (its low victim started first of all).
    # Sums are equal (one mid and one low each), so criterion 5 decides.
    layout = {"node1": [pod("a-low", LOW, start=4), pod("a-mid", MID, start=2)],
              "node2": [pod("b-mid", MID, start=6), pod("b-low", LOW, start=1)],
              "node3": [pod("c-low", LOW, start=3), pod("c-mid", MID, start=5)]}
    assert preempt(pod("p", HIGH, **BIG), layout).node == "node2"


def test_full_ties_go_to_the_first_candidate_in_scan_order():
    layout = {n: [pod(f"{n}-a", MID, start=1)] for n in ("node1", "node2", "node3")}
    assert preempt(pod("p", HIGH, **BIG), layout).node == "node1"
    assert preempt(pod("p", HIGH, **BIG), layout, offset=2).node == "node3"     # the scan starts at node3


# ----------------------------------------------------------------------------- PostFilter outcomes
def test_one_lower_priority_pod_on_a_full_node_is_evicted():
    # node1 allows one pod; p1 (priority 0) holds it; the preemptor (high) nominates node1 and evicts p1.
    r = preempt(pod("p", HIGH), {"node1": [pod("p1", LOW)]}, pods=1)
    assert (r.node, victims(r), r.message) == ("node1", ["p1"], "")


def test_equal_priority_is_never_a_victim():
    r = preempt(pod("p", LOW), {"node1": [pod("p1", LOW)]}, pods=1)
    assert r.node is None
    assert r.message == ("no new claims to deallocate, preemption: 0/1 nodes are available: "
                         "1 No preemption victims found for incoming pod.")


def test_unresolvable_nodes_are_not_tried():
    r = preempt(pod("p", HIGH), {"node1": [pod("p1", LOW)]}, pods=1,
                statuses={"node1": "UnschedulableAndUnresolvable"}, dra=False)
    assert r.message == "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."


def test_the_node_whose_victims_matter_least_is_chosen():
    # Preemptor mid: node1's p1 is high (no victim), node2's p2 is low -> node2.
    r = preempt(pod("p", MID), {"node1": [pod("p1", HIGH)], "node2": [pod("p2", LOW)]}, pods=1)
    assert (r.node, victims(r)) == ("node2", ["p2"])


def test_failure_reasons_of_the_dry_run_are_counted():
    # Preemptor high asking large (300m). node1 (one pod slot) holds p1 high: no victims. node2 (200m) holds p2
    # low: even empty it lacks cpu -> its filter's reason. node3 as node1. Sorted as strings. As in upstream's
    # test the main cycle's statuses are given, all Unschedulable (a real cycle marks node2 Unresolvable: 300m is
    # more than its allocatable, and it would read "Preemption is not helpful for scheduling").
    nodes = [make_node("node1", cpu="500m", memory="500", pods=1), make_node("node2", cpu="200m", memory="500"),
             make_node("node3", cpu="500m", memory="500", pods=1)]
    by_node = {"node1": [pod("p1", HIGH)], "node2": [pod("p2", LOW)], "node3": [pod("p3", HIGH)]}
    statuses = dict.fromkeys(by_node, "Unschedulable")
    r = R.ref_preempt(pod("p", HIGH, LARGE), nodes, by_node, FIT_ONLY, prio, start, statuses=statuses)
    assert r.message == ("no new claims to deallocate, preemption: 0/3 nodes are available: "
                         "1 Insufficient cpu, 2 No preemption victims found for incoming pod.")
    assert R.ref_preempt(pod("p", HIGH, LARGE), nodes, by_node, FIT_ONLY, prio, start).message == (
        "no new claims to deallocate, preemption: 0/3 nodes are available: "
        "1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.")


def test_preemption_policy_never():
    r = preempt(pod("p", HIGH, preemption_policy="Never"), {"node1": [pod("p1", LOW)]}, pods=1)
    assert (r.node, r.message) == (None, "no new claims to deallocate, preemption: "
                                         "not eligible due to preemptionPolicy=Never.")


# ----------------------------------------------------------------------------- PDBs
FOO = {"app": "foo"}


def test_pdb_violations_are_counted_per_pod_with_a_shared_budget():
    # p1.1 and p1.2 (mid, medium, app=foo) on one node; PDB app=foo allows 1. The preemptor (high, veryLarge)
    # needs both gone: the first takes the allowance (1 -> 0), the second goes below zero -> 1 violation.
    pdb = R.RefPDB("default", FOO, 1)
    r = preempt(pod("p", HIGH, **BIG), {"node1": [pod("p1.1", MID, MEDIUM, labels=FOO),
                                                  pod("p1.2", MID, MEDIUM, labels=FOO)]}, pdbs=[pdb])
    assert (sorted(victims(r)), r.candidates[0].pdb_violations) == (["p1.1", "p1.2"], 1)


def test_pods_already_disrupted_do_not_use_the_budget():
    pdb = R.RefPDB("default", FOO, 1, frozenset({"p1.2"}))
    r = preempt(pod("p", HIGH, **BIG), {"node1": [pod("p1.1", MID, MEDIUM, labels=FOO),
                                                  pod("p1.2", MID, MEDIUM, labels=FOO)]}, pdbs=[pdb])
    assert r.candidates[0].pdb_violations == 0


@pytest.mark.parametrize("selector", [None, {}])
def test_a_pdb_without_selector_protects_nothing(selector):
    pdb = R.RefPDB("default", selector, 0)
    r = preempt(pod("p", HIGH, **BIG), {"node1": [pod("a", MID, labels=FOO)]}, pdbs=[pdb])
    assert r.candidates[0].pdb_violations == 0


def test_fewest_pdb_violations_first_then_the_lowest_top_victim():
    # Preemptor veryHigh, veryLarge. node1: p1 high (PDB allows plenty), p2 low (PDB allows 0) -> 1 violation,
    # top victim 1000. node2: p3 mid (PDB allows 0) -> 1 violation, top victim 100 -> node2.
    pdbs = [R.RefPDB("default", {"app": "ok"}, 2**31 - 1), R.RefPDB("default", FOO, 0)]
    r = preempt(pod("p", VERY_HIGH, **BIG), {"node1": [pod("p1", HIGH, labels={"app": "ok"}),
                                                       pod("p2", LOW, labels=FOO)],
                                              "node2": [pod("p3", MID, labels=FOO)]}, pdbs=pdbs)
    assert r.node == "node2"


def test_pdb_violating_victims_are_reprieved_first():
    # node (500m) holds a (mid, 300m, app=foo, PDB allows 0) and b (low, 300m). Preemptor high asks 200m: with
    # both removed it fits. a would violate the PDB, so it is tried first: a + p = 500m fits (reprieved); b:
    # 800m does not -> b is the only victim, no violation.
    pdb = R.RefPDB("default", FOO, 0)
    r = preempt(pod("p", HIGH, MEDIUM), {"node1": [pod("a", MID, LARGE, labels=FOO), pod("b", LOW, LARGE)]},
                pdbs=[pdb])
    assert (victims(r), r.candidates[0].pdb_violations) == (["b"], 0)


def test_reprieve_keeps_the_most_important_victims():
    # node (600m) full with x (mid, 200m, t1), y (low, 200m, t2), z (low, 200m, t1). Preemptor high asks 200m.
    # All three removed: p fits. Reprieve by importance: x (mid): x + p = 400m fits; z (low, started before y):
    # x + z + p = 600m fits; y: 800m does not -> victims [y].
    r = preempt(pod("p", HIGH, MEDIUM), {"node1": [pod("x", MID, MEDIUM, start=1), pod("y", LOW, MEDIUM, start=2),
                                                   pod("z", LOW, MEDIUM, start=1)]}, cpu="600m", memory="1000")
    assert victims(r) == ["y"]


# ----------------------------------------------------------------------------- candidate count and early stop
def test_number_of_candidates():
    # 10% of n, at least 100, at most n.
    assert [R.num_candidates(n) for n in (5, 100, 1000, 5000)] == [5, 100, 100, 500]
    assert R.num_candidates(5, 40, 1) == 2           # 5 * 40 / 100 = 2


def test_dry_run_stops_after_enough_candidates_from_the_offset():
    # args {40%, 1} on 5 preemptable nodes: 2 candidates; starting at offset 4: node5, then node1.
    layout = {f"node{i}": [pod(f"v{i}", LOW)] for i in range(1, 6)}
    r = preempt(pod("p", HIGH), layout, pods=1, percentage=40, absolute=1, offset=4)
    assert [c.node for c in r.candidates] == ["node5", "node1"]


def test_dry_run_looks_past_the_count_until_a_non_violating_candidate():
    # args {40%, 2} -> 2 candidates. Victims on node1, node2 and node5 violate a PDB (allows 0). From offset 4:
    # node5 (violating), node1 (violating; the violating list is now full), node2 (violating, dropped), node3
    # (non-violating) -> stop: non-violating first, then violating.
    layout = {f"node{i}": [pod(f"v{i}", LOW, labels=FOO if i in (1, 2, 5) else None)] for i in range(1, 6)}
    r = preempt(pod("p", HIGH), layout, pods=1, percentage=40, absolute=2, offset=4,
                pdbs=[R.RefPDB("default", FOO, 0)])
    assert [(c.node, c.pdb_violations) for c in r.candidates] == [("node3", 0), ("node5", 1), ("node1", 1)]
    assert r.node == "node3"


# ----------------------------------------------------------------------------- nominated pods
def test_pods_nominated_to_a_node_count_against_lower_or_equal_priority_pods():
    # node1 (one pod slot) holds v (low). q (high) waits nominated to node1. The preemptor (mid) would evict v,
    # but with q counted node1 still has no room -> no candidate; q's own priority > mid.
    q = pod("q", HIGH)
    r = preempt(pod("p", MID), {"node1": [pod("v", LOW)]}, pods=1, nominated=[(q, "node1")])
    assert r.node is None and "1 Too many pods" in r.message
    # A lower-priority nomination does not count.
    r = preempt(pod("p", MID), {"node1": [pod("v", LOW)]}, pods=1, nominated=[(pod("q2", LOW), "node1")])
    assert r.node == "node1"


# ----------------------------------------------------------------------------- pods waiting at Permit
# A pod waiting at Permit is assumed on its node: it is a potential victim like a bound pod, under the same priority
# and PDB rules; only PreemptPod tells them apart (a waiting victim is preempted at Permit, not deleted). It has not
# started, so its start time is "now", later than every running pod's.
def test_a_pod_waiting_at_permit_is_a_victim_preempted_there():
    # node1 (500m) holds b (low, 300m, bound, t1) and w (low, 200m, waiting, now = t9). The preemptor (high, 200m)
    # fits with both gone. Reprieve by importance: b (started earlier): b + p = 500m fits; w: 700m does not -> w is
    # the victim, preempted at Permit (nothing deleted) with WaitOnPermit's error message.
    w = pod("w", LOW, MEDIUM, start=9)
    r = preempt(pod("p", HIGH, MEDIUM), {"node1": [pod("b", LOW, LARGE, start=1), w]})
    assert (r.node, victims(r)) == ("node1", ["w"])
    assert R.ref_actuate(r.victims, {w.key}) == ([], {"default/w": "waiting on permit for pod: preempted"})


def test_a_pdb_protects_a_waiting_pod_as_it_protects_a_bound_one():
    # As above, w (app=foo) under a PDB that allows 0: w would violate it, so it is tried first in the reprieve:
    # w + p = 400m fits (reprieved); b: 700m does not -> b is deleted, w keeps waiting.
    w = pod("w", LOW, MEDIUM, start=9, labels=FOO)
    r = preempt(pod("p", HIGH, MEDIUM), {"node1": [pod("b", LOW, LARGE, start=1), w]},
                pdbs=[R.RefPDB("default", FOO, 0)])
    assert (victims(r), r.candidates[0].pdb_violations) == (["b"], 0)
    assert R.ref_actuate(r.victims, {w.key}) == (r.victims, {})
