"""Gt/Lt tolerations (KEP-5471, gate TaintTolerationComparisonOperators): TaintToleration's Filter and Score and
NodeUnschedulable against the plain reference (tests/reference/plugins.py: per-node loops, its own parser) on random
clusters with numeric, non-canonical and out-of-range taint values, with the gate on and off; a hand-checked toy;
what the API server rejects. Upstream's own vectors are in test_upstream_taints_affinity.py."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

try:
    from tests.strategies import make_node, make_pod
    from tests.reference import plugins as P
except ImportError:  # rootdir not on sys.path: tests/ itself is (pytest prepend import mode)
    from strategies import make_node, make_pod
    from reference import plugins as P

from phalanx.cluster_models import ClusterObjects, InputError, load_text
from phalanx.kernels.status import CODE_NAMES
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.config import config_from_doc

GATE = "TaintTolerationComparisonOperators"
KEYS = ("sla", "tier")
# Taint values: canonical integers around the thresholds, the int64 edges, and what the parser refuses.
NUMBERS = ("0", "5", "10", "950", "9223372036854775807")
VALUES = NUMBERS + ("9223372036854775808", "007", "high", "")
THRESHOLDS = NUMBERS + ("-5", "-9223372036854775808")
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def profile(gate: bool):
    plugins = {"multiPoint": {"disabled": [{"name": "*"}]},
               "queueSort": {"enabled": [{"name": "PrioritySort"}]}, "bind": {"enabled": [{"name": "DefaultBinder"}]},
               "filter": {"enabled": [{"name": "NodeUnschedulable"}, {"name": "TaintToleration"}]},
               "preScore": {"enabled": [{"name": "TaintToleration"}]},
               "score": {"enabled": [{"name": "TaintToleration", "weight": 1}]}}
    return config_from_doc({"kind": "KubeSchedulerConfiguration", "percentageOfNodesToScore": 100,
                            "featureGates": {GATE: gate},
                            "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]})


def evaluate(nodes, pod, gate: bool):
    """phalanx's per-node Filter codes (by name) of both plugins and the Evaluation (normalized scores)."""
    sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes, pods=[pod])), profile(gate), preemption=False)
    _, ev, _ = sched.evaluate(sched.shape_of(pod), advance=False)
    codes = {name: [CODE_NAMES[c] for c in np.asarray(ev.codes[name]).tolist()] for name in ("NodeUnschedulable", "TaintToleration")
             if name in ev.codes}
    return codes, ev


def reference(nodes, pod, gate: bool):
    codes = {"NodeUnschedulable": [P.filter_node_unschedulable(pod, n, gate)[0] for n in nodes],
             "TaintToleration": [P.filter_taint_toleration(pod, n, gate)[0] for n in nodes]}
    feasible = [n for n, a, b in zip(nodes, *codes.values()) if a == b == P.SUCCESS]
    raw = {n.metadata.name: P.score_taint_toleration(pod, n, gate) for n in feasible}
    return codes, P.default_normalize(raw, reverse=True)


@st.composite
def cases(draw):
    nodes, used = [], []
    for i in range(draw(st.integers(1, 6))):
        taints = draw(st.lists(st.tuples(st.sampled_from(KEYS), st.sampled_from(VALUES), st.sampled_from(EFFECTS)),
                               max_size=3, unique_by=lambda t: (t[0], t[2])))
        nodes.append(make_node(f"n{i}", taints=taints, unschedulable=draw(st.booleans())))
        used += [value for _, value, _ in taints if value in NUMBERS]
    tolerations = []
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["Gt", "Lt", "Gt", "Lt", "Equal", "Exists"]))
        key = draw(st.sampled_from(KEYS + KEYS + ("node.kubernetes.io/unschedulable",)))
        tol = {"key": key, "operator": op, "effect": draw(st.sampled_from(("",) + EFFECTS))}
        if op in ("Gt", "Lt"):      # often a value some taint has (the boundary: equal is not tolerated)
            tol["value"] = draw(st.sampled_from(used) if used and draw(st.booleans()) else st.sampled_from(THRESHOLDS))
        elif op == "Equal":
            tol["value"] = draw(st.sampled_from([v for v in VALUES if v not in ("007",)]))
        tolerations.append(tol)
    return nodes, make_pod("p", cpu="100m", tolerations=tolerations), draw(st.booleans())


@settings(max_examples=200, deadline=None)
@given(cases())
def test_filters_and_score_vs_reference(case):
    nodes, pod, gate = case
    codes, ev = evaluate(nodes, pod, gate)
    want_codes, want_scores = reference(nodes, pod, gate)
    for name, got in codes.items():       # a plugin left out of ev.codes was skipped: success everywhere
        assert got == want_codes[name], name
    for name in set(want_codes) - set(codes):
        assert all(c == P.SUCCESS for c in want_codes[name]), name
    feasible = np.flatnonzero(np.asarray(ev.feasible)).tolist()
    assert [nodes[i].metadata.name for i in feasible] == list(want_scores)
    if feasible:
        got = np.asarray(ev.normalized["TaintToleration"])[feasible].tolist()
        assert got == list(want_scores.values())


def test_toy_by_hand():
    """Taint sla=950 (NoSchedule) on n0, sla=800 on n1, sla=high on n2, none on n3; a pod tolerating sla Gt 900.
    Gate on: n0 (950 > 900) and n3 pass, n1 (800) and n2 (not a number) fail. Gate off: only n3."""
    nodes = [make_node("n0", taints=[("sla", "950", "NoSchedule")]),
             make_node("n1", taints=[("sla", "800", "NoSchedule")]),
             make_node("n2", taints=[("sla", "high", "NoSchedule")]), make_node("n3")]
    pod = make_pod("p", cpu="100m", tolerations=[{"key": "sla", "operator": "Gt", "value": "900"}])
    on, _ = evaluate(nodes, pod, True)
    off, _ = evaluate(nodes, pod, False)
    assert [c == "Success" for c in on["TaintToleration"]] == [True, False, False, True]
    assert [c == "Success" for c in off["TaintToleration"]] == [False, False, False, True]


def test_lt_tolerates_the_cordon_only_with_the_gate():
    """NodeUnschedulable's taint has an empty value, which is not a number: an Lt toleration never tolerates it."""
    nodes = [make_node("n0", unschedulable=True)]
    pod = make_pod("p", cpu="100m", tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Lt",
                                                   "value": "5", "effect": "NoSchedule"}])
    for gate in (True, False):
        codes, _ = evaluate(nodes, pod, gate)
        assert codes["NodeUnschedulable"] == ["UnschedulableAndUnresolvable"]


POD = """
apiVersion: v1
kind: Pod
metadata: {{name: w-3, namespace: default}}
spec:
  containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: 100m}}}}}}]
  tolerations: [{{key: sla, operator: {op}, value: "{value}", effect: NoSchedule}}]
"""


@pytest.mark.parametrize("value", ["12x", "007", "+5", "-0", "", "1.5"])
def test_manifest_rejects_a_non_integer_threshold(value):
    """content.IsDecimalInteger's messages: EmptyError for "", the canonical-form one otherwise."""
    with pytest.raises(InputError) as err:
        load_text(POD.format(op="Gt", value=value))
    detail = "must be non-empty" if value == "" else "must be a valid decimal integer in canonical form"
    assert str(err.value) == f'Pod default/w-3: spec.tolerations[0].value: Invalid value: "{value}": {detail}'


@pytest.mark.parametrize("op,value", [("Gt", "-100"), ("Lt", "9223372036854775807"), ("Equal", "gold")])
def test_manifest_accepts_integer_thresholds(op, value):
    objects = load_text(POD.format(op=op, value=value))
    assert objects.pods[0].spec.tolerations[0].operator == op
