"""NodeUnschedulable: cordoned nodes (spec.unschedulable) take only pods that tolerate
node.kubernetes.io/unschedulable:NoSchedule. Upstream: plugins/nodeunschedulable/node_unschedulable.go."""
from __future__ import annotations

from ..kernels.node_unschedulable import node_unschedulable_filter
from ..kernels.tolerations import tolerates
from .framework import FIXED, NODE_ADDED, NODE_UPDATED, Plugin

REASON = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = ("node.kubernetes.io/unschedulable", "", "NoSchedule")


class NodeUnschedulable(Plugin):
    name = "NodeUnschedulable"
    reads_requests = False
    events = frozenset({NODE_ADDED, NODE_UPDATED})

    def filter_state(self, pod, cluster, pre):
        """Whether the pod tolerates the unschedulable taint (then cordoned nodes are fine)."""
        comparison = self.context.toleration_comparison
        return any(tolerates(t, *UNSCHEDULABLE_TAINT, comparison) for t in pod.pod.spec.tolerations)

    def hint(self, event, pod, objects, cluster) -> bool:
        """isSchedulableAfterNodeChange (v1.36): the node is schedulable now and was not before (or is new)."""
        if objects is None:
            return True
        old, new = (None, objects) if event == NODE_ADDED else objects
        return (old is None or old.spec.unschedulable) and not new.spec.unschedulable

    def removal_behaviour(self, state):
        return FIXED         # reads the node, not its pods

    def filter(self, xp, state, tensors):
        return node_unschedulable_filter(xp, tensors.nodes.unschedulable, state)

    def reasons(self, payload, tensors):
        return [REASON]
