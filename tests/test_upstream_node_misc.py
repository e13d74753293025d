"""Upstream kube-scheduler's own unit-test vectors for NodeUnschedulable and NodePorts, replayed through phalanx.

Source (kubernetes/kubernetes, v1.36-era, `fwk` package names): pkg/scheduler/framework/plugins/nodeunschedulable/
node_unschedulable_test.go (TestNodeUnschedulable) and pkg/scheduler/framework/plugins/nodeports/node_ports_test.go
(TestNodePorts). Each case is upstream's data (node, pods already there, incoming pod) and upstream's expected
status; the case id names the upstream test function and case. Each runs through the Scheduler with a profile of the
plugin alone at the extension points upstream's test calls and reads the explain report.

The queueing hints (TestIsSchedulableAfterNodeChange, Test_isSchedulableAfterPodDeleted) are in
tests/test_upstream_hints.py; TestIsSchedulableAfterPodTolerationChange is left out (pods are immutable here, so there
is no toleration-change event).
"""
from __future__ import annotations

import pytest

from phalanx.cluster_models import ClusterObjects
from phalanx.cluster_models import objects as _m
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.config import config_from_doc
from phalanx.sched.explain import explain_pod

try:
    from tests.strategies import make_node, make_pod
except ImportError:  # rootdir not on sys.path: tests/ itself is (pytest prepend import mode)
    from strategies import make_node, make_pod

S, U, UU = "Success", "Unschedulable", "UnschedulableAndUnresolvable"


def explain(nodes, bound, incoming, plugin: str) -> dict:
    # NodeUnschedulable has no PreFilter; NodePorts runs its PreFilter before its Filter, as upstream's test does.
    points = ("filter",) if plugin == "NodeUnschedulable" else ("preFilter", "filter")
    doc = {"kind": "KubeSchedulerConfiguration", "profiles": [{"plugins": {
        "multiPoint": {"disabled": [{"name": "*"}], "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}]},
        **{point: {"enabled": [{"name": plugin}]} for point in points}}}]}
    cluster = Cluster.from_objects(ClusterObjects(nodes=list(nodes), pods=list(bound)))
    return explain_pod(Scheduler(cluster, config_from_doc(doc)), incoming)


def filter_status(nodes, bound, incoming, plugin: str):
    """The plugin's Filter status on the (one) node as (code, reasons); None when its PreFilter skipped the pod
    (then Filter does not run)."""
    report = explain(nodes, bound, incoming, plugin)
    status = report["nodes"][0]["filters"].get(plugin)
    return None if status is None else (status["status"], status["reasons"])


# ------------------------------------------------------------------------------------------------ nodeunschedulable
UNSCHEDULABLE_REASON = "node(s) were unschedulable"     # nodeunschedulable.ErrReasonUnschedulable


@pytest.mark.parametrize("unschedulable, tolerations, want", [
    pytest.param(True, [], (UU, [UNSCHEDULABLE_REASON]),
                 id="TestNodeUnschedulable/Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)"),
    pytest.param(False, [], (S, []), id="TestNodeUnschedulable/Schedule pod to normal node"),
    pytest.param(True, [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}], (S, []),
                 id="TestNodeUnschedulable/Schedule pod with toleration to unschedulable node "
                    "(node.Spec.Unschedulable==true)"),
])
def test_node_unschedulable(unschedulable, tolerations, want):
    # Upstream's pod is &v1.Pod{} (with the toleration in the third case): no containers.
    incoming = make_pod("p", containers=[], tolerations=tolerations)
    nodes = [make_node("node", unschedulable=unschedulable)]
    assert filter_status(nodes, [], incoming, "NodeUnschedulable") == want


# ------------------------------------------------------------------------------------------------ nodeports
PORTS_REASON = "node(s) didn't have free ports for the requested pod ports"     # nodeports.ErrReason

_names = iter(range(1_000_000))


def _port(info: str) -> dict:
    """node_ports_test.go newPod's "PROTOCOL/hostIP/hostPort". Upstream leaves ContainerPort 0, which the object
    model refuses (it must be 1-65535); NodePorts reads only hostIP, protocol and hostPort, so it is the host port."""
    protocol, host_ip, host_port = info.split("/")
    return {"container_port": int(host_port), "host_port": int(host_port), "protocol": protocol, "host_ip": host_ip}


def ports_pod(*infos: str, node_name: str = "", init: tuple[bool, list[dict]] | None = None):
    """newPod(host, ports...): one container carrying the ports (st.MakePod().ContainerPort); or, with `init`, a pod
    whose only container is an init container (sidecar or not) carrying the given ports
    (st.MakePod().InitContainerPort)."""
    spec: dict = {"containers": [], "init_containers": [], "node_name": node_name}
    if infos:
        spec["containers"].append({"name": "c0", "ports": [_port(i) for i in infos]})
    if init is not None:
        sidecar, ports = init
        container = {"name": "i0", "ports": ports}
        if sidecar:
            container["restart_policy"] = "Always"
        spec["init_containers"].append(container)
    return _m.Pod.model_validate({"metadata": {"name": f"p{next(_names)}", "namespace": "default"}, "spec": spec})


_TCP_8001 = [{"container_port": 8001, "host_port": 8001, "protocol": "TCP"}]


@pytest.mark.parametrize("incoming, existing, want", [
    pytest.param(ports_pod(), [], None, id="TestNodePorts/skip filter"),
    pytest.param(ports_pod("UDP/127.0.0.1/8080"), ["UDP/127.0.0.1/9090"], (S, []), id="TestNodePorts/other port"),
    pytest.param(ports_pod("UDP/127.0.0.1/8080"), ["UDP/127.0.0.1/8080"], (U, [PORTS_REASON]),
                 id="TestNodePorts/same udp port"),
    pytest.param(ports_pod("TCP/127.0.0.1/8080"), ["TCP/127.0.0.1/8080"], (U, [PORTS_REASON]),
                 id="TestNodePorts/same tcp port"),
    pytest.param(ports_pod("TCP/127.0.0.1/8080"), ["TCP/127.0.0.2/8080"], (S, []), id="TestNodePorts/different host ip"),
    pytest.param(ports_pod("UDP/127.0.0.1/8080"), ["TCP/127.0.0.1/8080"], (S, []), id="TestNodePorts/different protocol"),
    pytest.param(ports_pod("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"), ["UDP/127.0.0.1/8080"], (U, [PORTS_REASON]),
                 id="TestNodePorts/second udp port conflict"),
    pytest.param(ports_pod("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"), ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"],
                 (U, [PORTS_REASON]), id="TestNodePorts/first tcp port conflict"),
    pytest.param(ports_pod("TCP/0.0.0.0/8001"), ["TCP/127.0.0.1/8001"], (U, [PORTS_REASON]),
                 id="TestNodePorts/first tcp port conflict due to 0.0.0.0 hostIP"),
    pytest.param(ports_pod("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"), ["TCP/127.0.0.1/8001"], (U, [PORTS_REASON]),
                 id="TestNodePorts/TCP hostPort conflict due to 0.0.0.0 hostIP"),
    pytest.param(ports_pod("TCP/127.0.0.1/8001"), ["TCP/0.0.0.0/8001"], (U, [PORTS_REASON]),
                 id="TestNodePorts/second tcp port conflict to 0.0.0.0 hostIP"),
    pytest.param(ports_pod("UDP/127.0.0.1/8001"), ["TCP/0.0.0.0/8001"], (S, []),
                 id="TestNodePorts/second different protocol"),
    pytest.param(ports_pod("UDP/127.0.0.1/8001"), ["TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"], (U, [PORTS_REASON]),
                 id="TestNodePorts/UDP hostPort conflict due to 0.0.0.0 hostIP"),
    pytest.param(ports_pod(init=(False, _TCP_8001)), ["TCP/0.0.0.0/8001"], None,
                 id="TestNodePorts/non-sidecar initContainer using hostPort"),
    pytest.param(ports_pod(init=(True, _TCP_8001)), ["TCP/0.0.0.0/8001"], (U, [PORTS_REASON]),
                 id="TestNodePorts/TCP hostPort conflict from sidecar initContainer"),
])
def test_node_ports(incoming, existing, want):
    # Upstream's NodeInfo holds the existing pod (newPod("m1", ...)); here it is bound to the one node, "m1".
    bound = [ports_pod(*existing, node_name="m1")] if existing else []
    assert filter_status([make_node("m1")], bound, incoming, "NodePorts") == want


def test_node_ports_pre_filter_disabled():
    """TestPreFilterDisabled: Filter without PreFilter's cycle state is an Error status wrapping fwk.ErrNotFound
    ("not found"; node_ports.go getPreFilterState: error reading "PreFilterNodePorts" from cycleState)."""
    doc = {"kind": "KubeSchedulerConfiguration", "profiles": [{"plugins": {
        "multiPoint": {"disabled": [{"name": "*"}], "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}]},
        "filter": {"enabled": [{"name": "NodePorts"}]}}}]}
    cluster = Cluster.from_objects(ClusterObjects(nodes=[make_node("m1")], pods=[]))
    report = explain_pod(Scheduler(cluster, config_from_doc(doc)), ports_pod())
    assert report["selected"] is None
    assert report["message"].endswith('error reading "PreFilterNodePorts" from cycleState: not found')
