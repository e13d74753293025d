"""DefaultPreemption in phalanx against the plain reference (tests/reference/preemption.py): the nominated node,
the victims in order, the PostFilter text, on hand-checked toys and on random clusters; the vectorised dry run
against the per-node one; what happens after (victims evicted, the preemptor bound on its node, nominated pods
counted by Filter); the args' validation; PDB manifests."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st
from strategies import make_node, make_pod
from test_simulation import assert_same, snapshot

from phalanx.cluster_models import ClusterObjects, InputError, load_text
from phalanx.cluster_models.disruption import PodDisruptionBudget
from phalanx.kernels import preemption as kernel
from phalanx.sched import preemption as sched_preemption
from phalanx.sched.cluster import Cluster
from phalanx.sched.config import config_from_doc
from phalanx.sched.records import NOMINATED, PREEMPTED, Preempted
from phalanx.sched.scheduler import Scheduler

try:
    from tests.reference import preemption as R
    from tests.reference.profile import RefProfile, config_doc
    from tests.reference.scheduler import fit_error_message, ref_filter
except ImportError:  # tests/ itself on sys.path
    from reference import preemption as R
    from reference.profile import RefProfile, config_doc
    from reference.scheduler import fit_error_message, ref_filter

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SIZES = {"small": ("100m", "100"), "medium": ("200m", "200"), "large": ("300m", "300"), "veryLarge": ("500m", "500")}
POST = ("DynamicResources", "DefaultPreemption")
FIT_ONLY = RefProfile(filters=("NodeResourcesFit",), scores=(("NodeResourcesFit", 1),), post_filters=POST)
WITH_AFFINITY = RefProfile(filters=("TaintToleration", "NodeResourcesFit", "InterPodAffinity"),
                           scores=(("NodeResourcesFit", 1),), post_filters=POST)
EPOCH = 1_700_000_000


def timestamp(t: int) -> str:
    from datetime import datetime, timezone
    return datetime.fromtimestamp(EPOCH + t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def bound_pod(name, node, prio, size="small", start=0, labels=None, anti=None):
    cpu, mem = SIZES[size]
    p = make_pod(name, cpu=cpu, memory=mem, priority=prio, labels=labels, node_name=node, pod_affinity=anti)
    return p.model_copy(update={"status": p.status.model_copy(update={"start_time": timestamp(start),
                                                                       "phase": "Running"})})


def preemptor(prio, size="small", policy=None, anti=None):
    cpu, mem = SIZES[size]
    p = make_pod("preemptor", cpu=cpu, memory=mem, priority=prio, pod_affinity=anti)
    if policy is not None:
        p = p.model_copy(update={"spec": p.spec.model_copy(update={"preemption_policy": policy})})
    return p


def pdb_object(i, ref: R.RefPDB) -> PodDisruptionBudget:
    return PodDisruptionBudget.model_validate({
        "metadata": {"name": f"pdb{i}", "namespace": ref.namespace},
        "spec": {"selector": None if ref.match_labels is None else {"matchLabels": ref.match_labels}},
        "status": {"disruptionsAllowed": ref.disruptions_allowed,
                   "disruptedPods": {n: timestamp(0) for n in ref.disrupted_pods}}})


def profile_config(ref: RefProfile, percentage=10, absolute=100):
    doc = config_doc(ref)
    doc["profiles"][0]["pluginConfig"].append({"name": "DefaultPreemption", "args": {
        "minCandidateNodesPercentage": percentage, "minCandidateNodesAbsolute": absolute}})
    return config_from_doc(doc, "test")


def first_attempt(pod, nodes, layout, ref=FIT_ONLY, pdbs=(), percentage=10, absolute=100):
    """phalanx's first cycle for `pod`: (nominated node or None, victims in order, the Unschedulable message)."""
    bound = [p for ps in layout.values() for p in ps]
    objects = ClusterObjects(nodes=nodes, pods=bound, priority_classes=[], warnings=[])
    objects.pdbs = [pdb_object(i, p) for i, p in enumerate(pdbs)]
    sched = Scheduler(Cluster.from_objects(objects), profile_config(ref, percentage, absolute))
    sched.add_pods([pod])
    sched.step(until=0)
    message = next((r.message for r in sched.records if r.object == pod.key and r.kind == "Unschedulable"), None)
    if message is None:            # it fit somewhere: no PostFilter
        return None
    entry = next((e for e in sched.log.entries if isinstance(e, Preempted)), None)
    if entry is None:
        return None, [], message
    return entry.node, [v.split("/")[1] for v in entry.victims], message


def reference(pod, nodes, layout, ref=FIT_ONLY, pdbs=(), percentage=10, absolute=100):
    start = {p.key: (R_START(p)) for ps in layout.values() for p in ps}
    r = R.ref_preempt(pod, nodes, layout, ref, lambda p: p.spec.priority or 0, lambda p: start.get(p.key, math.inf),
                      pdbs=list(pdbs), percentage=percentage, absolute=absolute)
    return r


def reference_fit_error(pod, nodes, layout, ref) -> str:
    """The main cycle's FitError by the reference: each node's failing filter status."""
    reasons = {}
    for node in nodes:
        name = node.metadata.name
        status = ref_filter(pod, node, layout.get(name, []), nodes, layout, ref)
        if status and status[-1][1] != "Success":
            reasons[name] = status[-1][2]
    return fit_error_message(len(nodes), reasons)


def R_START(p) -> int:
    from phalanx.cluster_models.objects import rfc3339_seconds
    return int(rfc3339_seconds(p.status.start_time)) - EPOCH


def check(pod, nodes, layout, ref=FIT_ONLY, pdbs=(), percentage=10, absolute=100, fitting=False):
    """phalanx's first attempt equals the reference's PostFilter (`fitting`: a pod that fits is no case)."""
    got = first_attempt(pod, nodes, layout, ref, pdbs, percentage, absolute)
    if fitting:
        assume(got is not None)
    assert got is not None, "the pod fit: no PostFilter ran"
    want = reference(pod, nodes, layout, ref, pdbs, percentage, absolute)
    assert got[0] == want.node
    assert got[1] == [v.metadata.name for v in want.victims]
    fit = reference_fit_error(pod, nodes, layout, ref)
    assert got[2] == (fit if want.node else f"{fit} {want.message}")
    return got


# ----------------------------------------------------------------------------- toys (upstream's vectors)
def test_min_highest_priority_node_is_chosen():
    nodes = [make_node(n, cpu="500m", memory="500") for n in ("node1", "node2", "node3")]
    layout = {"node1": [bound_pod("a1", "node1", MID), bound_pod("a2", "node1", MID)],
              "node2": [bound_pod("b1", "node2", MID), bound_pod("b2", "node2", LOW)],
              "node3": [bound_pod("c1", "node3", LOW), bound_pod("c2", "node3", LOW)]}
    assert check(preemptor(HIGH, "veryLarge"), nodes, layout)[:2] == ("node3", ["c1", "c2"])


def test_no_victims_and_policy_never_messages():
    nodes = [make_node("node1", cpu="500m", memory="500", pods=1)]
    layout = {"node1": [bound_pod("p1", "node1", LOW)]}
    _, _, message = check(preemptor(LOW), nodes, layout)
    assert message == ("0/1 nodes are available: 1 Too many pods. no new claims to deallocate, preemption: 0/1 "
                       "nodes are available: 1 No preemption victims found for incoming pod.")
    _, _, message = check(preemptor(HIGH, policy="Never"), nodes, layout)
    assert message.endswith("no new claims to deallocate, preemption: not eligible due to preemptionPolicy=Never.")


def test_unresolvable_nodes_are_not_helped():
    nodes = [make_node("node1", cpu="500m", memory="500", taints=[("k", "v", "NoSchedule")]),
             make_node("node2", cpu="500m", memory="500")]
    layout = {"node1": [bound_pod("a", "node1", LOW, "veryLarge")], "node2": [bound_pod("b", "node2", HIGH, "large")]}
    _, _, message = check(preemptor(MID, "large"), nodes, layout, WITH_AFFINITY)
    assert message.endswith("preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
                            "1 Preemption is not helpful for scheduling.")


def test_pdb_violating_victims_are_reprieved_first():
    nodes = [make_node("node1", cpu="500m", memory="500")]
    layout = {"node1": [bound_pod("a", "node1", MID, "large", labels={"app": "foo"}),
                        bound_pod("b", "node1", LOW, "large")]}
    assert check(preemptor(HIGH, "medium"), nodes, layout, pdbs=[R.RefPDB("default", {"app": "foo"}, 0)])[1] == ["b"]


def test_looks_past_the_candidate_count_for_a_pdb_respecting_node():
    nodes = [make_node(f"node{i}", cpu="500m", memory="500", pods=1) for i in range(1, 6)]
    layout = {f"node{i}": [bound_pod(f"v{i}", f"node{i}", LOW, labels={"app": "foo"} if i in (1, 2) else None)]
              for i in range(1, 6)}
    got = check(preemptor(HIGH), nodes, layout, pdbs=[R.RefPDB("default", {"app": "foo"}, 0)], percentage=40,
                absolute=2)
    assert got[0] == "node3"


def test_anti_affinity_victim_is_the_blocking_pod_only():
    # The low pod's anti-affinity (app=p) blocks the preemptor; the mid pod stays (per-node dry run).
    anti = {"pod_anti_affinity": {"required_during_scheduling_ignored_during_execution": [
        {"label_selector": {"match_labels": {"app": "p"}}, "topology_key": "kubernetes.io/hostname"}]}}
    nodes = [make_node("node1", cpu="2", memory="2000")]
    layout = {"node1": [bound_pod("blocker", "node1", LOW, anti=anti), bound_pod("mid", "node1", MID)]}
    pod = make_pod("preemptor", cpu="100m", memory="100", priority=HIGH, labels={"app": "p"})
    assert check(pod, nodes, layout, WITH_AFFINITY)[:2] == ("node1", ["blocker"])


# ----------------------------------------------------------------------------- random clusters
@st.composite
def preemption_cases(draw):
    n = draw(st.integers(1, 6))
    nodes, layout = [], {}
    for i in range(n):
        name = f"node{i + 1}"
        taint = [("k", "v", "NoSchedule")] if draw(st.integers(0, 5)) == 0 else []
        nodes.append(make_node(name, cpu=draw(st.sampled_from(["500m", "700m", "1"])), memory="1000",
                               pods=draw(st.integers(1, 5)), taints=taint))
        layout[name] = [bound_pod(f"{name}-p{j}", name, draw(st.sampled_from([NEG, LOW, MID, HIGH])),
                                  draw(st.sampled_from(list(SIZES)[:3])), draw(st.integers(0, 3)),
                                  labels=draw(st.sampled_from([None, {"app": "foo"}, {"app": "bar"}])))
                        for j in range(draw(st.integers(0, 4)))]
    pdbs = [R.RefPDB("default", draw(st.sampled_from([{"app": "foo"}, {"app": "bar"}, None])),
                     draw(st.integers(0, 2))) for _ in range(draw(st.integers(0, 2)))]
    pod = preemptor(draw(st.sampled_from([LOW, MID, HIGH, VERY_HIGH])), draw(st.sampled_from(list(SIZES))),
                    draw(st.sampled_from([None, None, None, "Never"])))
    pct, absolute = draw(st.sampled_from([(10, 100), (40, 1), (40, 2), (0, 1), (100, 0)]))
    return pod, nodes, layout, pdbs, pct, absolute


@settings(max_examples=120, deadline=None)
@given(preemption_cases())
def test_matches_the_reference_on_random_clusters(case):
    pod, nodes, layout, pdbs, pct, absolute = case
    check(pod, nodes, layout, RefProfile(filters=("TaintToleration", "NodeResourcesFit"),
                                         scores=(("NodeResourcesFit", 1),), post_filters=POST), pdbs, pct, absolute,
          fitting=True)


@settings(max_examples=40, deadline=None)
@given(case=preemption_cases())
def test_per_node_dry_run_equals_the_vectorised_one(case, monkeypatch_module):
    pod, nodes, layout, pdbs, pct, absolute = case
    ref = RefProfile(filters=("TaintToleration", "NodeResourcesFit"), scores=(("NodeResourcesFit", 1),),
                     post_filters=POST)
    want = first_attempt(pod, nodes, layout, ref, pdbs, pct, absolute)
    monkeypatch_module.setattr(sched_preemption, "vectorised", lambda p: False)
    try:
        assert first_attempt(pod, nodes, layout, ref, pdbs, pct, absolute) == want
    finally:
        monkeypatch_module.undo()


@settings(max_examples=150, deadline=None)
@given(case=preemption_cases(), later=st.integers(0, 3))
def test_no_victims_anywhere_answers_as_the_scan(case, later, monkeypatch_module):
    """When no pod anywhere may be evicted for the pod, PostFilter answers without the per-node dry runs
    (DefaultPreemption._no_victims_anywhere): the same messages, nominations and victims as the scan over every
    node, and the scan's stop, which the next preemption's offset starts from (a few more preemptors of every
    priority follow, so later scans start where the skipped ones stopped)."""
    from phalanx.plugins.default_preemption import DefaultPreemption
    pod, nodes, layout, pdbs, pct, absolute = case
    ref = RefProfile(filters=("TaintToleration", "NodeResourcesFit"), scores=(("NodeResourcesFit", 1),),
                     post_filters=POST)
    pods = [pod] + [preemptor(prio, "veryLarge").model_copy(update={"metadata": pod.metadata.model_copy(
        update={"name": f"later-{i}"})}) for i, prio in enumerate([VERY_HIGH, NEG, VERY_HIGH][:later])]

    def run():
        bound = [p for ps in layout.values() for p in ps]
        objects = ClusterObjects(nodes=nodes, pods=bound, priority_classes=[], warnings=[])
        objects.pdbs = [pdb_object(i, p) for i, p in enumerate(pdbs)]
        sched = Scheduler(Cluster.from_objects(objects), profile_config(ref, pct, absolute))
        sched.add_pods(pods)
        sched.step(until=0)
        return ([(r.kind, r.object, r.node, r.message) for r in sched.records],
                [(e.node, e.victims) for e in sched.log.entries if isinstance(e, Preempted)])
    original = DefaultPreemption._no_victims_anywhere
    answered = []

    def counted(failed, potential, start, n):
        out = original(failed, potential, start, n)
        answered.append(out is not None)
        return out
    monkeypatch_module.setattr(DefaultPreemption, "_no_victims_anywhere", staticmethod(counted))
    try:
        got = run()
    finally:
        monkeypatch_module.undo()
    monkeypatch_module.setattr(DefaultPreemption, "_no_victims_anywhere", staticmethod(lambda *args: None))
    try:
        assert run() == got           # every PostFilter through the scan
    finally:
        monkeypatch_module.undo()
    event(f"answered without dry runs: {min(sum(answered), 2)}")


def test_a_preemption_without_victims_moves_the_next_scan_start():
    """Four full nodes of priority-0 pods. A priority-0 pod finds no victim anywhere: its scan (answered without dry
    runs) goes round every node from node1 and stops after node4, so the next scan starts at node1 again; a
    priority-1000 pod that wants one candidate (minCandidateNodesAbsolute 1) then takes node1. A priority-0 pod
    placed before it whose scan had stopped after node1 would have sent it to node2."""
    nodes = [make_node(f"node{i}", cpu="500m", memory="500", pods=1) for i in range(1, 5)]
    layout = {f"node{i}": [bound_pod(f"p{i}", f"node{i}", LOW)] for i in range(1, 5)}
    bound = [p for ps in layout.values() for p in ps]
    sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes, pods=bound, priority_classes=[], warnings=[])),
                      profile_config(FIT_ONLY, 0, 1))
    low = preemptor(LOW)
    sched.add_pods([low])
    sched.step(until=0)
    assert sched.preemption.next_offset % 4 == 0
    high = preemptor(HIGH).model_copy(update={"metadata": low.metadata.model_copy(update={"name": "high"})})
    sched.add_pods([high])
    sched.step(until=0)
    assert [(e.node, e.victims) for e in sched.log.entries if isinstance(e, Preempted)] == \
        [("node1", ["default/p1"])]


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


# ----------------------------------------------------------------------------- after the PostFilter
def test_victims_go_and_the_preemptor_binds_on_its_nominated_node():
    nodes = [make_node("node1", cpu="1", memory="1000"), make_node("node2", cpu="1", memory="1000")]
    pods = [bound_pod("old", "node1", LOW, "veryLarge", start=1), bound_pod("young", "node2", LOW, "veryLarge",
                                                                             start=5)]
    pods += [bound_pod("keep1", "node1", HIGH, "large"), bound_pod("keep2", "node2", HIGH, "large")]
    sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[])))
    sched.add_pods([preemptor(MID, "veryLarge")])
    records = sched.run_until_idle()
    kinds = [(r.kind, r.object, r.node) for r in records]
    # Equal on criteria 1-4; criterion 5: the node whose top victim started latest (young, t5) -> node2.
    assert ("Nominated", "default/preemptor", "node2") in kinds
    assert ("Preempted", "default/young", "node2") in kinds
    assert kinds[-1] == ("Bound", "default/preemptor", "node2")
    assert records[-1].time == 1.0                       # retried after the initial backoff
    assert not sched.cluster.nominations


def test_a_pod_without_start_time_reads_as_started_now():
    # GetPodStartTime: no status.startTime is "now", the latest start. node1 (600m) holds "dated" (started at
    # EPOCH) and "undated", 300m each, both low priority: dated is the more important, so it is given back first
    # and stays (300m + the preemptor's 300m), and undated goes.
    nodes = [make_node("node1", cpu="600m", memory="10Gi")]
    dated = bound_pod("dated", "node1", LOW, "large")
    undated = make_pod("undated", cpu=SIZES["large"][0], memory=SIZES["large"][1], priority=LOW, node_name="node1")
    sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes, pods=[dated, undated], priority_classes=[],
                                                          warnings=[])))
    sched.add_pods([preemptor(MID, "large")])
    sched.run_until_idle()
    (entry,) = [e for e in sched.log.entries if isinstance(e, Preempted)]
    assert entry.victims == ["default/undated"]


def test_a_nominated_pod_holds_its_node_against_lower_priority_pods():
    nodes = [make_node("node1", cpu="500m", memory="1000")]
    pods = [bound_pod("victim", "node1", LOW, "veryLarge")]
    sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[])))
    sched.add_pods([preemptor(HIGH, "veryLarge")])
    sched.step(until=0.5)                                # victim gone, the preemptor backing off until t=1
    assert sched.cluster.tensors.node_of("default/victim") < 0
    late = make_pod("late", cpu="500m", memory="500", priority=MID)
    records = sched.add_pods([late])
    records += sched.step(until=0.6)
    late_msgs = [r.message for r in records if r.object == "default/late" and r.kind == "Unschedulable"]
    assert late_msgs and late_msgs[0].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    sched.run_until_idle()
    assert sched.cluster.tensors.node_of("default/preemptor") == 0


def test_pods_nominated_with_node_name_affinity_bind_on_their_nodes():
    # Two preemptors that may not go to node3 (matchFields metadata.name NotIn) are nominated to node1 and node2;
    # on their retry evaluateNominatedNode runs Filter on those two rows alone, the node-name mask included.
    nodes = [make_node("node1", cpu="500m", memory="1000"), make_node("node2", cpu="500m", memory="1000"),
             make_node("node3", cpu="100m", memory="1000")]
    pods = [bound_pod("v1", "node1", LOW, "veryLarge"), bound_pod("v2", "node2", LOW, "veryLarge")]
    sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[])))
    away = [{"match_fields": [{"key": "metadata.name", "operator": "NotIn", "values": ["node3"]}]}]
    cpu, mem = SIZES["veryLarge"]
    sched.add_pods([make_pod(f"pre{i}", cpu=cpu, memory=mem, priority=HIGH, required_terms=away) for i in (1, 2)])
    sched.run_until_idle()
    assert sorted(sched.cluster.tensors.node_of(f"default/pre{i}") for i in (1, 2)) == [0, 1]


def test_no_preemption_switch():
    nodes = [make_node("node1", cpu="500m", memory="500", pods=1)]
    pods = [bound_pod("p1", "node1", LOW)]
    sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[])),
                      preemption=False)
    result = (sched.add_pods([preemptor(HIGH)]), sched.schedule())[1]
    assert result.unschedulable["default/preemptor"] == ("0/1 nodes are available: 1 Too many pods. "
                                                         "no new claims to deallocate")
    assert not any(r.kind in (NOMINATED, PREEMPTED) for r in sched.records)


# ----------------------------------------------------------------------------- args and PDB manifests
@pytest.mark.parametrize("args, message", [
    ({"minCandidateNodesPercentage": 101}, "minCandidateNodesPercentage: Invalid value: 101: not in valid range "
                                           "[0, 100]"),
    ({"minCandidateNodesAbsolute": -1}, "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"),
    ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
     ["minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute",
      "minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage"]),
])
def test_args_are_validated_as_upstream(args, message):
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"pluginConfig": [{"name": "DefaultPreemption", "args": args}]}]}
    with pytest.raises(InputError) as err:
        config_from_doc(doc, "cfg")
    # Each error's field continues the args' path, several aggregated as "[e1, e2]" (ValidateKubeSchedulerConfiguration).
    errors = [f"profiles[0].pluginConfig[0].args.{m}" for m in ([message] if isinstance(message, str) else message)]
    assert str(err.value) == "cfg: " + (errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")


@pytest.mark.parametrize("spec, problem", [
    ("{minAvailable: 120%}", 'spec.minAvailable: Invalid value: "120%": must not be greater than 100%'),
    # field.Invalid(spec path, the internal PodDisruptionBudgetSpec struct: its Go field names, as JSON)
    ("{minAvailable: 1, maxUnavailable: 1}", 'spec: Invalid value: {"MinAvailable":1,"Selector":null,'
                                             '"MaxUnavailable":1,"UnhealthyPodEvictionPolicy":null}: minAvailable and '
                                             "maxUnavailable cannot be both set"),
    ("{maxUnavailable: -2}", "spec.maxUnavailable: Invalid value: -2: must be greater than or equal to 0"),
])
def test_pdb_manifests_are_validated(spec, problem):
    with pytest.raises(InputError) as err:
        load_text(f"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: b}}\nspec: {spec}\n", "x")
    assert str(err.value) == f"PodDisruptionBudget default/b: {problem}"


@pytest.mark.parametrize("spec, allowed", [
    ("{minAvailable: 2, selector: {matchLabels: {app: foo}}}", 1),       # 3 healthy - 2
    ("{minAvailable: 50%, selector: {matchLabels: {app: foo}}}", 1),     # 3 - ceil(1.5)
    ("{maxUnavailable: 1, selector: {matchLabels: {app: foo}}}", 1),     # 3 - (3 - 1)
    ("{maxUnavailable: 34%, selector: {matchLabels: {app: foo}}}", 2),   # ceil(1.02) = 2 unavailable
    ("{selector: {matchLabels: {app: foo}}}", 0),                        # neither set: none
])
def test_budget_computed_from_the_spec_without_status(spec, allowed):
    pods = [bound_pod(f"f{i}", "node1", LOW, labels={"app": "foo"}) for i in range(3)]
    objects = load_text(f"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: b}}\nspec: {spec}\n", "x")
    objects.nodes, objects.pods = [make_node("node1")], pods
    cluster = Cluster.from_objects(objects)
    assert [a for _, a in cluster.disruptions_allowed()] == [allowed]


def test_cli_reports_preemptions_in_json(tmp_path):
    import json

    from typer.testing import CliRunner

    from phalanx.cli import app
    manifest = tmp_path / "c.yaml"
    manifest.write_text("""
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: low}
spec:
  nodeName: n1
  priority: 0
  containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 600m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: high}
spec:
  priority: 100
  containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 600m}}}]
""")
    out = json.loads(CliRunner().invoke(app, ["schedule", "--cluster", str(manifest), "--json"]).stdout)
    assert out["preemptions"] == [{"preemptor": "default/high", "kind": "Pod", "node": "n1",
                                   "victims": ["default/low"]}]
    assert out["bindings"] == {"default/high": "n1"}
    off = json.loads(CliRunner().invoke(app, ["schedule", "--cluster", str(manifest), "--json",
                                              "--no-preemption"]).stdout)
    assert off["preemptions"] == [] and off["unschedulable"] == {
        "default/high": "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate"}


def test_a_placed_preemptor_drops_its_nomination_before_the_next_pod_of_its_run():
    # One 2-cpu node with four 500m low pods. Two identical 1-cpu preemptors: high1 evicts two lows; high2 sees
    # high1 nominated there (1 cpu) beside the other two lows and evicts them too. On the retry both go in one
    # run: high1 binds and must stop counting as a nominated pod (upstream assume), else high2 would see
    # 1 (bound) + 1 (nominated) cpu used and find no room and no victim.
    nodes = [make_node("node1", cpu="2", memory="2000")]
    pods = [bound_pod(f"low{j}", "node1", LOW, "veryLarge", start=j) for j in range(4)]
    sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[])))
    high = [make_pod(f"high{k}", cpu="1", memory="500", priority=HIGH) for k in (1, 2)]
    records = sched.add_pods(high) + sched.run_until_idle()
    assert sum(1 for e in sched.log.entries if isinstance(e, Preempted)) == 2
    assert sorted(r.object for r in records if r.kind == PREEMPTED) == [f"default/low{j}" for j in range(4)]
    assert {r.object for r in records if r.kind == "Bound"} == {"default/high1", "default/high2"}


def test_nominations_follow_nodes_added_after_they_were_counted():
    # The per-priority loads of nominated pods are laid out per node: a pod arriving nominated to a node added
    # after they were laid out must not index past them.
    nodes = [make_node("node1", cpu="500m", memory="1000")]
    pods = [bound_pod("victim", "node1", LOW, "veryLarge")]
    sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[])))
    sched.add_pods([preemptor(HIGH, "veryLarge")])
    sched.step(until=0)                                   # nominated to node1: the loads are laid out for 1 node
    sched.add_nodes([make_node("node2", cpu="500m", memory="1000")])
    late = make_pod("late", cpu="500m", memory="500", priority=MID)
    late = late.model_copy(update={"status": late.status.model_copy(update={"nominated_node_name": "node2"})})
    sched.add_pods([late])
    records = sched.run_until_idle()
    assert {r.object: r.node for r in records if r.kind == "Bound"} == {"default/preemptor": "node1",
                                                                        "default/late": "node2"}


@given(st.integers(0, 300), st.data())
def test_longest_reprieve_finds_the_first_unit_that_cannot_come_back(n, data):
    # A monotone predicate: the first `fit` units can be given back together, no longer prefix can. The search
    # must return `fit` and ask O(log n) prefixes, each within 0..n.
    fit = data.draw(st.integers(0, n))
    asked = []

    def fits_without_first(k):
        assert 0 <= k <= n
        asked.append(k)
        return k <= fit

    assert kernel.longest_reprieve(n, fits_without_first) == fit
    assert len(asked) <= 2 * max(n, 1).bit_length() + 2


@given(st.lists(st.tuples(st.booleans(), st.booleans()), max_size=40), st.integers(1, 8), st.integers(0, 6),
       st.integers(0, 10))
def test_scan_prefix_stops_where_dry_run_preemption_does(nodes, wanted, fine, bad):
    # DryRunPreemption's walk, node by node (each list bounded by `wanted`), against the kernel's cumulative counts,
    # and against the single flatnonzero it takes when no node of the chunk violates a PDB.
    def walk(nodes):
        f, b = fine, bad
        for i, (c, v) in enumerate(nodes):
            f, b = f + (c and not v), b + (c and v)
            if f > 0 and min(f, wanted) + min(b, wanted) >= wanted:
                return i + 1
        return len(nodes)

    for chunk in (nodes, [(c, False) for c, _ in nodes]):
        candidate, violating = (np.array([x[j] for x in chunk], bool) for j in (0, 1))
        hits = np.flatnonzero(candidate)
        assert kernel.scan_prefix(hits, violating[hits], len(chunk), wanted, fine, bad) == walk(chunk)


@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 2), st.integers(1, 2),
                          st.sampled_from([0.0, 1.0, math.inf])), min_size=1, max_size=12))
def test_pick_one_is_the_lexicographic_choice(candidates):
    # pickOneNodeForPreemption's criteria in order, ties to the first candidate; pick_one passes over a criterion
    # every tied candidate meets alike without filtering on it.
    cols = [np.array(col) for col in zip(*candidates)]
    best = min(range(len(candidates)), key=lambda i: (*candidates[i][:4], -candidates[i][4], i))
    assert kernel.pick_one(*cols) == best


def test_explain_lists_the_victims_the_spared_and_the_gpu_hours_lost():
    # node1: 4 cpu, 2 GPUs. "high" (100, 1 cpu, started at EPOCH + 2 h: the snapshot's latest start, so "now"),
    # "mid" (5, 1 cpu) and "low" (1, 2 cpu, 1 GPU), both started at EPOCH. The preemptor (50, 2 cpu) fits once
    # mid and low are gone; mid, the more important, is given back (1 + 1 + 2 = 4 cpu) and low is not: low goes,
    # 1 GPU x 2 h = 2 GPU-hours. Nothing is nominated or evicted by explain.
    from phalanx.sched.explain import explain_pod, render_text
    nodes = [make_node("node1", cpu="4", memory="10Gi", gpu="2")]

    def started(name, cpu, prio, start, gpu=None):
        p = make_pod(name, cpu=cpu, memory="100", gpu=gpu, priority=prio, node_name="node1")
        return p.model_copy(update={"status": p.status.model_copy(update={"start_time": timestamp(start),
                                                                           "phase": "Running"})})

    pods = [started("high", "1", 100, 7200), started("mid", "1", 5, 0), started("low", "2", 1, 0, gpu="1")]
    sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[])))
    report = explain_pod(sched, make_pod("urgent", cpu="2", memory="100", priority=50))
    pre = report["preemption"]
    assert pre["node"] == "node1"
    assert [(v["pod"], v["priority"], v["gpus"], v["hours_run"], v["gpu_hours"]) for v in pre["victims"]] == [
        ("default/low", 1, 1, 2.0, 2.0)]
    assert pre["gangs_broken"] == [] and pre["gpu_hours_lost"] == 2.0
    assert pre["spared"] == [
        {"pod": "default/high", "priority": 100, "why": "priority 100 is not lower than the preemptor's 50"},
        {"pod": "default/mid", "priority": 5, "why": "reprieved: the preemptor still fits with it"}]
    assert "preemption on node1 would evict 1 pods, 2 GPU-hours lost:" in render_text(report)
    assert not sched.cluster.nominations and sched.cluster.tensors.node_of("default/low") == 0


@settings(max_examples=100, deadline=None)
@given(case=preemption_cases(), data=st.data())
def test_runs_of_preemptors_decide_alike_with_and_without_kept_results(case, data):
    # Several identical preemptors (then a different one) in one run: each later one reuses the per-node results
    # of the earlier ones except where pods were nominated since (DryRunCache), and the earlier one's failed
    # Filter pass, message and node statuses with the nodes whose nominations changed evaluated again
    # (KeptFailure); retried preemptors are checked on their nominated nodes together (_place_nominated). The
    # whole run's records (messages included), the preemptions and their order must equal those of a run that
    # evaluates every node afresh, pod by pod.
    pod, nodes, layout, pdbs, pct, absolute = case
    copies = data.draw(st.integers(2, 5))
    pending = [pod.model_copy(update={"metadata": pod.metadata.model_copy(update={"name": f"preemptor-{i}"})})
               for i in range(copies)]
    pending.append(preemptor(data.draw(st.sampled_from([LOW, MID, HIGH, VERY_HIGH])), "small").model_copy(
        update={"metadata": pod.metadata.model_copy(update={"name": "other"})}))
    config = profile_config(RefProfile(filters=("TaintToleration", "NodeResourcesFit"),
                                       scores=(("NodeResourcesFit", 1),), post_filters=POST), pct, absolute)
    runs = []
    for caching in (True, False):
        objects = ClusterObjects(nodes=nodes, pods=[p for ps in layout.values() for p in ps], priority_classes=[],
                                 warnings=[])
        objects.pdbs = [pdb_object(i, ref) for i, ref in enumerate(pdbs)]
        sched = Scheduler(Cluster.from_objects(objects), config)
        sched.preemption.caching = sched.placer.keep_failures = sched.placer.batch_nominated = caching
        records = sched.add_pods(pending) + sched.run_until_idle()
        runs.append(([(r.time, r.kind, r.object, r.node, r.message) for r in records],
                     [e.summary() for e in sched.log.entries if isinstance(e, Preempted)]))
    event(f"{min(len(runs[0][1]), 3)}+ preemptions")
    assert runs[0] == runs[1]


def test_the_dry_run_cache_survives_a_new_resource_column():
    # p0 preempts "low" on n0 (nominated there); ha, identical to hb, then finds no victims (its dry run is cached);
    # y, served by a profile without PostFilter, asks for example.com/foo, a new resource column; hb must not
    # reuse rows laid out for the narrower table, and decides as a run without the cache does.
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler"},
                        {"schedulerName": "nopre", "plugins": {"postFilter": {"disabled": [{"name": "*"}]}}}]}
    runs = []
    for caching in (True, False):
        nodes = [make_node("n0", cpu="4", memory="8Gi"), make_node("n1", cpu="4", memory="8Gi")]
        bound = [make_pod("low", cpu="4", memory="100", priority=0, node_name="n0"),
                 make_pod("vip", cpu="4", memory="100", priority=1000, node_name="n1")]
        sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes, pods=bound, priority_classes=[],
                                                              warnings=[])), config_from_doc(doc, "t"))
        sched.preemption.caching = caching
        pending = [make_pod("p0", cpu="4", memory="100", priority=100),
                   make_pod("ha", cpu="4", memory="200", priority=100),
                   make_pod("y", containers=[{"cpu": "1", "example.com/foo": "1"}], priority=100,
                            scheduler_name="nopre"),
                   make_pod("hb", cpu="4", memory="200", priority=100)]
        records = sched.add_pods(pending) + sched.run_until_idle()
        runs.append([(r.time, r.kind, r.object, r.node, r.message) for r in records])
    assert runs[0] == runs[1]
    assert (1.0, "Bound", "default/p0", "n0", "") in runs[0]


def test_victim_priorities_follow_the_log_after_a_node_is_removed():
    """Removing a node rebuilds the node table and its binding log; the dry run's per-row priorities must follow
    (they once kept the old rows, so a pod bound afterwards could read a deleted pod's lower priority and be
    evicted by a pod of its own priority)."""
    text = """
apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: a}
spec: {nodeName: n0, priority: -5, containers: [{name: c, image: registry.k8s.io/pause:3.10}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b}
spec: {nodeName: n1, priority: -5, containers: [{name: c, image: registry.k8s.io/pause:3.10}]}
"""
    s = Scheduler(Cluster.from_objects(load_text(text)))
    s.preemption.rows.sync(s.cluster, s.start_of)             # as an earlier PostFilter would have
    s.remove_node("n0")
    port = lambda name: load_text(f"""
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  priority: 0
  containers: [{{name: c, image: registry.k8s.io/pause:3.10, ports: [{{containerPort: 80, hostPort: 80}}]}}]
""").pods[0]
    s.add_pods([port("c")])
    assert [r.kind for r in s.step(0.0)] == ["Bound"]
    s.add_pods([port("d")])                                     # the port is taken; c's priority is not lower
    records = s.step(0.0)
    assert [r.kind for r in records] == ["Unschedulable"] and not any(r.kind == PREEMPTED for r in records)


@settings(max_examples=60, deadline=None)
@given(nodes=st.integers(2, 8), preemptors=st.integers(2, 7), blockers=st.lists(st.sampled_from(["1", "2", "3"]),
                                                                               max_size=4),
       taken=st.lists(st.integers(0, 7), max_size=3))
def test_retried_preemptors_are_placed_alike_together_and_one_by_one(nodes, preemptors, blockers, taken):
    # Identical preemptors each evict the low pods of a node and are nominated there; before they are retried,
    # higher-priority pods arrive (they may take a nominated node: nominations only hold off pods of lower or equal
    # priority) and some nodes are cordoned. The retried preemptors checked on their nominated nodes together
    # (Placer._place_nominated: the passing front of the run bound at once) must decide as one at a time does.
    runs = []
    for together in (True, False):
        ns = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(nodes)]
        low = [make_pod(f"low-{i}-{j}", cpu="1", memory="100", priority=0, node_name=f"n{i}")
               for i in range(nodes) for j in range(4)]
        sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=ns, pods=low, priority_classes=[], warnings=[])))
        sched.placer.batch_nominated = together
        records = sched.add_pods([make_pod(f"p{i}", cpu="3", memory="100", priority=10) for i in range(preemptors)])
        records += sched.add_pods([make_pod(f"b{i}", cpu=cpu, memory="100", priority=100)
                                   for i, cpu in enumerate(blockers)])
        for i in sorted(set(taken)):
            if i < nodes:
                records += sched.update_node(ns[i].model_copy(update={
                    "spec": ns[i].spec.model_copy(update={"unschedulable": True})}))
        records += sched.run_until_idle()
        runs.append([(r.time, r.kind, r.object, r.node, r.message) for r in records])
    assert runs[0] == runs[1]


def test_nominated_pods_columns_are_on_the_cluster_tables_through_a_node_rebuild():
    # Filter binds nominated pods on cluster copies (with_nominated's per-node path for host-port pods, the dry
    # run), and copies share the vocabularies: a preemptor nominated with a host port new to the cluster must have
    # its column on the real node table, also after remove_node rebuilds it with vocabularies of its own, or the
    # next pod's NodePorts state is wider than the table (a broadcast error test_simulation's capacity invariant
    # found). Each later preemptor (another new port) is evaluated while the earlier ones are nominated.
    nodes = [make_node(f"n{i}", cpu="1", memory="1Gi") for i in range(4)]
    bound = [make_pod(f"low{i}", cpu="1", memory="100", priority=0, node_name=f"n{i}") for i in range(4)]
    sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes, pods=bound, priority_classes=[],
                                                          warnings=[])))

    def preemptor(name, port):
        out = sched.add_pods([make_pod(name, cpu="1", memory="100", priority=10, host_ports=[(port, "TCP", "")])])
        out += sched.step(sched.now)          # it preempts and waits in backoff, nominated
        tensors = sched.cluster.tensors
        assert f"default/{name}" in sched.cluster.nominations
        assert tensors.nodes.host_ports.shape[1] == len(tensors.ports)
        return out

    records = preemptor("p", 8080) + preemptor("q", 9090)
    records += sched.remove_node("n3")
    tensors = sched.cluster.tensors
    assert tensors.nodes.host_ports.shape[1] == len(tensors.ports) >= 2
    records += preemptor("r", 7070) + sched.run_until_idle()
    bound_to = {r.object: r.node for r in records if r.kind == "Bound"}
    assert set(bound_to) >= {"default/p", "default/q", "default/r"}


def _full_nodes_run(node_cpus, low_prios, starts, preemptors, cpu, pct, absolute, pdb, kept):
    """Nodes full of low-priority pods (900m each, priorities from low_prios, start times from starts, some covered
    by a PDB), then identical preemptors asking `cpu`: every node fails Unschedulable, so each preemptor scans
    every node.
    kept: the kept results (dry runs, rows ahead, the settled scan, the kept failed cycle) on or off. Returns
    the records, the preemptions and the scheduler."""
    nodes = [make_node(f"n{i}", cpu=cpu, memory="8Gi") for i, cpu in enumerate(node_cpus)]
    low = []
    for i, cpu in enumerate(node_cpus):
        for j in range(int(cpu) * 10 // 9):
            prio = low_prios[(i + j) % len(low_prios)]
            p = make_pod(f"low-{i}-{j}", cpu="900m", memory="100", priority=prio, labels={"app": f"a{prio}"},
                         node_name=f"n{i}")
            low.append(p.model_copy(update={"status": p.status.model_copy(update={
                "start_time": timestamp(starts[(i * 7 + j) % len(starts)]), "phase": "Running"})}))
    objects = ClusterObjects(nodes=nodes, pods=low, priority_classes=[], warnings=[])
    objects.pdbs = [pdb_object(0, R.RefPDB("default", {"app": "a1"}, 0))] if pdb else []
    config = profile_config(RefProfile(filters=("TaintToleration", "NodeResourcesFit"),
                                       scores=(("NodeResourcesFit", 1),), post_filters=POST), pct, absolute)
    sched = Scheduler(Cluster.from_objects(objects), config)
    sched.preemption.caching = sched.placer.keep_failures = sched.placer.batch_nominated = kept
    records = sched.add_pods([make_pod(f"p{i}", cpu=cpu, memory="100", priority=10)
                              for i in range(preemptors)]) + sched.run_until_idle()
    return ([(r.time, r.kind, r.object, r.node, r.message) for r in records],
            [e.summary() for e in sched.log.entries if isinstance(e, Preempted)], sched)


@settings(max_examples=60, deadline=None)
@given(node_cpus=st.lists(st.sampled_from(["2", "4", "6"]), min_size=2, max_size=10),
       low_prios=st.lists(st.integers(0, 3), min_size=1, max_size=3),
       starts=st.lists(st.integers(0, 4), min_size=1, max_size=2), preemptors=st.integers(2, 16),
       cpu=st.sampled_from(["1500m", "3"]), pct=st.integers(0, 60), absolute=st.integers(0, 4), pdb=st.booleans())
def test_runs_on_full_nodes_decide_alike_with_and_without_rows_ahead(node_cpus, low_prios, starts, preemptors, cpu,
                                                                     pct, absolute, pdb):
    # Every node is a potential one for every preemptor of the run: its dry run takes each nominated node's row
    # ahead (one more preemptor nominated there, DryRunCache.ahead), the kept failed cycle its Filter rows ahead
    # (Evaluation._ahead), and the scan is settled from the known candidates (DryRun.settled) while none violates
    # a PDB and all tie; nodes of different sizes and victims of different priorities and starts make the
    # candidates differ (pick_one) and some nodes take two preemptors. The records, the preemptions and their
    # order must equal those of runs that evaluate every node afresh, pod by pod (no candidate is wanted where
    # the percentage of few nodes rounds to 0 and the absolute minimum is 0).
    assume(pct or absolute)
    runs = [_full_nodes_run(node_cpus, low_prios, starts, preemptors, cpu, pct, absolute, pdb, kept)[:2]
            for kept in (True, False)]
    event(f"{min(len(runs[0][1]), 3)}+ preemptions")
    assert runs[0] == runs[1]


def test_a_run_of_preemptors_is_settled_from_rows_ahead(monkeypatch):
    # The paths the test above compares are taken: after the first preemptors, the nodes nominated to are not
    # dry-run again (their rows ahead hold), the kept cycle is handed on from its Filter rows ahead, and the scans
    # are settled from the known candidates, which stay what the stored results say.
    taken, settled, evaluated = [], [], []
    take_ahead, settle, select = (sched_preemption.DryRunCache.take_ahead_few, sched_preemption.DryRun.settled,
                                  sched_preemption.DryRun._select_vectorised)
    monkeypatch.setattr(sched_preemption.DryRunCache, "take_ahead_few",
                        lambda self, nodes, *a: taken.append(len(nodes) - len(r := take_ahead(self, nodes, *a))) or r)
    monkeypatch.setattr(sched_preemption.DryRun, "settled", lambda self: settled.append(r := settle(self)) or r)
    monkeypatch.setattr(sched_preemption.DryRun, "_select_vectorised",
                        lambda self, nodes, *a: evaluated.append(len(nodes)) or select(self, nodes, *a))
    records, preemptions, sched = _full_nodes_run(["4"] * 30, [1], [0], 20, "3", 10, 5, False, True)
    assert len(preemptions) == 20 and all(p["victims"] for p in preemptions)
    assert sum(taken) >= 15 and sum(s is not None for s in settled) >= 15
    assert len(evaluated) <= 3          # the first chunks only (each node with its row ahead)
    cache = sched.preemption.cache
    fresh = sched_preemption.KnownCandidates.of(cache)
    assert (cache.listed.nodes, cache.listed.violating, cache.listed.criteria) == (
        fresh.nodes, fresh.violating, fresh.criteria)
    assert cache.unknown == int(np.count_nonzero(~cache.known))


@pytest.mark.parametrize("ports", [False, True])
@pytest.mark.parametrize("preemptors, keep", [(n, k) for n in (2, 3, 4) for k in range(n + 1)])
def test_retried_preemptors_placed_together_are_undone_pod_by_pod(preemptors, keep, ports):
    # Retried preemptors that pass on their nominated nodes are one placement (Placer._place_nominated). A group
    # cycle that undoes all but its first `keep` pods must leave the node table, the binding log and the
    # nominations as placing those `keep` pods alone does (host ports included: the nodes are distinct).

    def nominated():
        nodes = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(preemptors + 1)]
        low = [make_pod(f"low-{i}-{j}", cpu="1", memory="100", priority=0, node_name=f"n{i}")
               for i in range(len(nodes)) for j in range(4)]
        sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes, pods=low, priority_classes=[],
                                                              warnings=[])))
        pods = [make_pod(f"p{i}", cpu="3", memory="100", priority=10,
                         host_ports=[(8080, "TCP", "")] if ports else ()) for i in range(preemptors)]
        sched.add_pods(pods)
        sched.step(sched.now)          # each preempts and waits in backoff, nominated to a node of its own
        assert all(pod.key in sched.cluster.nominations for pod in pods)
        return sched, pods

    def nominations(sched):
        return sorted((key, nom.node, nom.priority, nom.request.tolist())
                      for key, nom in sched.cluster.nominations.items())

    together, pods = nominated()
    mark = together.cluster.tensors.log_mark()
    out = together.placer.place_run(together.shape_of(pods[0]), pods, together.rank())
    assert sum(len(pl.pods) for pl in out.placed) == preemptors and not out.failures
    assert ports or len(out.placed) == 1      # (host ports keep no shape: placed one by one)
    together.placer.undo(out.placed, mark, keep=keep)

    alone, pods = nominated()
    if keep:
        out = alone.placer.place_run(alone.shape_of(pods[0]), pods[:keep], alone.rank())
        assert sum(len(pl.pods) for pl in out.placed) == keep
    assert_same(snapshot(alone.cluster.tensors), snapshot(together.cluster.tensors))
    assert nominations(together) == nominations(alone)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), nodes=st.integers(1, 6), width=st.integers(1, 3))
def test_nominated_load_on_few_rows_in_python_values_equals_load_at(data, nodes, width):
    # Nominations.load_rows (a preemptor's cycle and dry run, a node or two) must give what load_at gives: every
    # level at or above the priority summed, the asking pod's own nomination left out.
    from phalanx.sched.cluster import Nomination, Nominations
    cluster = Cluster.from_objects(ClusterObjects(
        nodes=[make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(nodes)], pods=[], priority_classes=[],
        warnings=[]))
    tensors = cluster.tensors
    r = tensors.nodes.requested.shape[1]
    nominations = Nominations()
    pods = [make_pod(f"p{i}", cpu="1", memory="100") for i in range(6)]
    for pod in pods[: data.draw(st.integers(0, 6))]:
        request = np.array(data.draw(st.lists(st.integers(0, 5000), min_size=1, max_size=min(width, r))), np.int64)
        nominations[pod.key] = Nomination(pod, f"n{data.draw(st.integers(0, nodes - 1))}",
                                          data.draw(st.sampled_from([0, 5, 10])), request)
    asking = data.draw(st.sampled_from(pods))
    priority = data.draw(st.sampled_from([0, 5, 10, 11]))
    ids = sorted(data.draw(st.sets(st.integers(0, nodes - 1), min_size=1, max_size=3)))
    requested, count = nominations.load_at([asking], priority, tensors, np.array(ids))
    assert nominations.load_rows(asking, priority, tensors, ids) == list(zip(requested.tolist(), count.tolist()))
