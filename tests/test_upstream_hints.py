"""Upstream kube-scheduler's queueing-hint unit-test vectors for the node plugins, replayed through each plugin's
`hint` with phalanx's events (NODE_ADDED: the node; NODE_UPDATED: (old, new); POD_DELETED: the pods that left).

Source (kubernetes/kubernetes, v1.36-era): pkg/scheduler/framework/plugins/
  tainttoleration/taint_toleration_test.go     TestIsSchedulableAfterNodeChange
  nodeunschedulable/node_unschedulable_test.go TestIsSchedulableAfterNodeChange
  nodeaffinity/node_affinity_test.go           Test_isSchedulableAfterNodeChange
  nodeports/node_ports_test.go                 Test_isSchedulableAfterPodDeleted
(NodeResourcesFit's are in tests/test_upstream_noderesources.py, InterPodAffinity's and PodTopologySpread's in
tests/test_upstream_spread_interpod.py.)

Each case is upstream's data and expected hint (Queue True, QueueSkip False), copied from the upstream test file;
nothing expected here was computed by phalanx. Left out: the "backoff-wrong-*-object" / "error-wrong-*-object" cases
(objects of the wrong type cannot reach a hint here), and the pod-update hints (isSchedulableAfterPodChange,
isSchedulableAfterPodTolerationChange: pods are immutable here, docs/semantics.md "Queueing hints").
"""
from __future__ import annotations

import pytest

from phalanx.cluster_models import parse_objects
from phalanx.plugins.framework import NODE_ADDED, NODE_UPDATED, POD_DELETED
from phalanx.plugins.node_affinity import NodeAffinity, NodeAffinityArgs
from phalanx.plugins.node_ports import NodePorts
from phalanx.plugins.node_unschedulable import NodeUnschedulable
from phalanx.plugins.taint_toleration import TaintToleration
from phalanx.sched import Cluster

try:
    from tests.strategies import make_node, make_pod
except ImportError:  # rootdir not on sys.path: tests/ itself is (pytest prepend import mode)
    from strategies import make_node, make_pod

Q, SKIP = True, False


def hint(plugin, incoming, old, new) -> bool:
    """plugin.hint for `new` added (old None) or `old` updated to `new`, on a cluster holding `new` (and `old`
    under another name: every version of a node read has put its labels in the vocabularies)."""
    nodes = [new] if old is None else [new, old.model_copy(update={"metadata": old.metadata.model_copy(
        update={"name": old.metadata.name + "-before"})})]
    objects = parse_objects([])
    objects.nodes = nodes
    cluster = Cluster.from_objects(objects)
    event, seen = (NODE_ADDED, new) if old is None else (NODE_UPDATED, (old, new))
    return plugin.hint(event, incoming, seen, cluster)


def node(labels=None, taints=(), unschedulable=False):
    return make_node("node-a", labels=labels, taints=taints, unschedulable=unschedulable, hostname_label=False)


# -- TaintToleration ------------------------------------------------------------------------------------------
def _user(n: str) -> tuple:
    return ("dedicated", f"user{n}", "NoSchedule")


_TOLERATES_USER2 = [{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"}]
TAINT_HINTS = [
    # (case, old node's taints (None: added), new node's taints, want)
    ("skip-queue-on-untoleratedtaint-node-added", None, [_user("1")], SKIP),
    ("queue-on-toleratedtaint-node-added", None, [_user("2")], Q),
    # (upstream's second taint repeats key and effect, which the API server refuses: another key here)
    ("skip-unrelated-change", [_user("1")], [_user("1"), ("dedicated-3", "user3", "NoSchedule")], SKIP),
    ("queue-on-taint-change", [_user("1")], [_user("2")], Q),
]


@pytest.mark.parametrize("name,old,new,want",
                         [pytest.param(*c, id="TaintToleration TestIsSchedulableAfterNodeChange: " + c[0])
                          for c in TAINT_HINTS])
def test_taint_toleration_hint(name, old, new, want):
    incoming = make_pod("pod1", tolerations=_TOLERATES_USER2)
    assert hint(TaintToleration(), incoming, None if old is None else node(taints=old), node(taints=new)) is want


# -- NodeUnschedulable ----------------------------------------------------------------------------------------
_NOT_READY = [("node.kubernetes.io/not-ready", "", "NoExecute")]
UNSCHEDULABLE_HINTS = [
    # (case, old node (unschedulable, taints) or None (added), new node, want)
    ("skip-queue-on-unschedulable-node-added", None, (True, ()), SKIP),
    ("queue-on-schedulable-node-added", None, (False, ()), Q),
    ("skip-unrelated-change-unschedulable-true", (True, ()), (True, _NOT_READY), SKIP),
    ("skip-unrelated-change-unschedulable-false", (False, ()), (False, _NOT_READY), SKIP),
    ("queue-on-unschedulable-field-change", (True, ()), (False, ()), Q),
]


@pytest.mark.parametrize("name,old,new,want",
                         [pytest.param(*c, id="NodeUnschedulable TestIsSchedulableAfterNodeChange: " + c[0])
                          for c in UNSCHEDULABLE_HINTS])
def test_node_unschedulable_hint(name, old, new, want):
    def made(state):
        return node(unschedulable=state[0], taints=state[1])
    assert hint(NodeUnschedulable(), make_pod("p"), None if old is None else made(old), made(new)) is want


# -- NodeAffinity ---------------------------------------------------------------------------------------------
_FOO_BAR = [{"match_expressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}]
_ENFORCED = NodeAffinityArgs.model_validate({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [{"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}]}}})
AFFINITY_HINTS = [
    # (case, addedAffinity args or None, old node's labels (None: added), new node's labels, want); the pod is
    # podWithNodeAffinity (required: foo In [bar]). "skip-unrelated-changes" updates the capacity alone.
    ("skip-queue-on-add", None, None, {}, SKIP),
    ("queue-on-add", None, None, {"foo": "bar"}, Q),
    ("skip-unrelated-changes", None, {}, {}, SKIP),
    ("skip-unrelated-changes-on-labels", None, {}, {"k": "v"}, SKIP),
    ("skip-labels-changes-on-node-from-suitable-to-unsuitable", None, {"foo": "bar"}, {"k": "v"}, SKIP),
    ("queue-on-labels-change-makes-pod-schedulable", None, {}, {"foo": "bar"}, Q),
    ("skip-queue-on-add-scheduler-enforced-node-affinity", _ENFORCED, None, {}, SKIP),
    ("queue-on-add-scheduler-enforced-node-affinity", _ENFORCED, None, {"foo": "bar"}, Q),
]


@pytest.mark.parametrize("name,args,old,new,want",
                         [pytest.param(*c, id="NodeAffinity Test_isSchedulableAfterNodeChange: " + c[0])
                          for c in AFFINITY_HINTS])
def test_node_affinity_hint(name, args, old, new, want):
    incoming = make_pod("p", required_terms=_FOO_BAR)
    assert hint(NodeAffinity(args), incoming, None if old is None else node(labels=old), node(labels=new)) is want


# -- NodePorts ------------------------------------------------------------------------------------------------
PORT_HINTS = [
    # (case, the deleted pod's host ports, want); the pod wants host port 8080. "skip-queue-on-unscheduled" (the
    # deleted pod was never bound nor nominated) has no counterpart: such a deletion is no event here.
    ("skip-queue-on-non-hostport", (), SKIP),
    ("skip-queue-on-unrelated-hostport", ((8081, "TCP", ""),), SKIP),
    ("queue-on-released-hostport", ((8080, "TCP", ""),), Q),
]


@pytest.mark.parametrize("name,ports,want",
                         [pytest.param(*c, id="NodePorts Test_isSchedulableAfterPodDeleted: " + c[0])
                          for c in PORT_HINTS])
def test_node_ports_hint(name, ports, want):
    incoming = make_pod("p", host_ports=[(8080, "TCP", "")])
    deleted = make_pod("other", host_ports=list(ports), node_name="fake-node")
    assert NodePorts().hint(POD_DELETED, incoming, [deleted], None) is want
