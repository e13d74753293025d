"""NodePorts: a pod's host ports must not collide with host ports already used on the node.
Upstream: plugins/nodeports/node_ports.go and framework HostPortInfo.CheckConflict."""
from __future__ import annotations

import numpy as np

from .status import SUCCESS, UNSCHEDULABLE

REASONS = ("node(s) didn't have free ports for the requested pod ports",)
ANY_IP = "0.0.0.0"


def conflicts(wanted: list[tuple[str, str, int]], ports) -> np.ndarray:
    """(P,) bool over the port vocabulary: entries that clash with any wanted (hostIP, protocol, port).
    0.0.0.0 clashes with every address on the same protocol and port."""
    out = np.zeros(len(ports), bool)
    for p, (ip, proto, port) in enumerate(ports.items):
        for wip, wproto, wport in wanted:
            if proto == wproto and port == wport and (ip == wip or ANY_IP in (ip, wip)):
                out[p] = True
    return out


def node_ports_filter(xp, host_ports, conflict):
    """host_ports: (N, P) bool; conflict: (P,) bool."""
    clash = xp.any(host_ports & conflict, axis=1)
    return xp.where(clash, UNSCHEDULABLE, SUCCESS).astype(xp.int8), clash.astype(xp.int64)
