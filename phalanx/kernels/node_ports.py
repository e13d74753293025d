"""NodePorts: a pod's host ports must not collide with host ports already used on the node.
Upstream: plugins/nodeports/node_ports.go and framework HostPortInfo.CheckConflict."""
from __future__ import annotations

from .status import SUCCESS, UNSCHEDULABLE


def node_ports_filter(xp, host_ports, conflict):
    """host_ports: (N, P) bool; conflict: (P,) bool."""
    clash = xp.any(host_ports & conflict, axis=1)
    return xp.where(clash, UNSCHEDULABLE, SUCCESS).astype(xp.int8), clash.astype(xp.int64)
