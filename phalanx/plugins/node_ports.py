"""NodePorts: a pod's host ports must not collide with host ports already used on the node.
Upstream: plugins/nodeports/node_ports.go and framework HostPortInfo.CheckConflict."""
from __future__ import annotations

import numpy as np

from ..cluster_models.tensors import pod_host_ports
from ..kernels.node_ports import node_ports_filter
from .framework import NODE_ADDED, NODE_LOCAL, NOMINATED_POD_DELETED, POD_DELETED, SKIP, Pads, Plugin, pad1

REASON = "node(s) didn't have free ports for the requested pod ports"
ANY_IP = "0.0.0.0"


def clashes(used: tuple[str, str, int], wanted: list[tuple[str, str, int]]) -> bool:
    """HostPortInfo.CheckConflict: a used (hostIP, protocol, port) clashes with one of the wanted ones. 0.0.0.0
    clashes with every address on the same protocol and port."""
    ip, proto, port = used
    return any(proto == wproto and port == wport and (ip == wip or ANY_IP in (ip, wip))
               for wip, wproto, wport in wanted)


def conflicts(wanted: list[tuple[str, str, int]], ports) -> np.ndarray:
    """(P,) bool over the port vocabulary: entries that clash with any wanted (hostIP, protocol, port)."""
    return np.array([clashes(used, wanted) for used in ports.items], bool)


class NodePorts(Plugin):
    name = "NodePorts"
    reads_requests = False
    events = frozenset({POD_DELETED, NOMINATED_POD_DELETED, NODE_ADDED})

    def pre_filter(self, pod, cluster):
        """(P,) bool over the port vocabulary: used ports that clash with the pod's host ports; SKIP without any."""
        if not pod.shape.host_ports:
            return SKIP
        return conflicts(pod.shape.host_ports, cluster.tensors.ports)

    def filter(self, xp, state, tensors):
        return node_ports_filter(xp, tensors.nodes.host_ports, state)

    def hint(self, event, pod, objects, cluster) -> bool:
        """isSchedulableAfterPodDeleted (v1.36): the pod that left (bound or nominated) used a host port clashing
        with one the pod wants. A node added may always help (upstream registers it without a hint)."""
        if event not in (POD_DELETED, NOMINATED_POD_DELETED) or objects is None:
            return True
        wanted = pod_host_ports(pod)
        return any(clashes(used, wanted) for other in objects for used in pod_host_ports(other))

    def reasons(self, payload, tensors):
        return [REASON]

    def filter_behaviour(self, state):
        return NODE_LOCAL

    def copy_capacity(self, xp, state, tensors):
        # A second copy would clash with the first one's host ports.
        return xp.ones((tensors.nodes.allocatable.shape[0],), dtype=xp.int64)

    def pad_filter_state(self, state, pads: Pads):
        return pad1(state, pads.ports, False)
