"""A node autoscaler for the simulator, modelled on Cluster Autoscaler's scale-up and scale-down loops, simplified:

- every `scan_s` (CA's --scan-interval, 10 s) while GPU pods are unschedulable, it packs them, largest first, into
  the free GPUs of the nodes in the cluster and of those already asked for (first fit, by GPUs only), and asks for
  as many template nodes as the pods left over need, up to `max_nodes` in all; a node joins the cluster
  `provision_s` after it was asked for (cloud provisioning and kubelet start);
- a node it added that holds no pod for `scale_down_s` (CA's --scale-down-unneeded-time, 10 min) is removed.

The nodes it may add exist from the start as a pool (`auto-000000`, ...); the ledger counts their GPUs as
"unprovisioned" while they are not in the cluster, so the GPU-seconds of a run still add up. Comparing a gang under
v1.36's PodGroup cycle with a gang held at Permit (gang_mode "permit") shows the interplay: a Permit timeout shorter
than `provision_s` releases the placed members before the new nodes arrive, and the gang asks for more.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..cluster_models.objects import Node


@dataclass
class Autoscaler:
    template: Node                # the node type it adds (its labels, taints and allocatable)
    max_nodes: int                # nodes it may add in all
    provision_s: float = 600.0    # from asking to the node joining the cluster
    scale_down_s: float = 600.0   # a node it added, empty this long, is removed
    scan_s: float = 10.0          # how often it looks at unschedulable pods
    free: list = field(default_factory=list)        # pool node names not in the cluster nor asked for
    in_flight: set = field(default_factory=set)     # asked for, not joined yet
    added: set = field(default_factory=set)         # joined (theirs to remove)
    asked: int = 0                                  # nodes asked for over the run
    joins: int = 0                                  # nodes that joined the cluster over the run
    removed: int = 0                                # nodes removed over the run

    def pool(self) -> list[Node]:
        """The nodes it may add: copies of the template named auto-<i>, labelled with their own hostname."""
        nodes = []
        for i in range(self.max_nodes):
            name = f"auto-{i:06d}"
            labels = {**self.template.metadata.labels, "kubernetes.io/hostname": name}
            nodes.append(self.template.model_copy(update={"metadata": self.template.metadata.model_copy(
                update={"name": name, "labels": labels})}))
        self.free = [n.metadata.name for n in nodes]
        return nodes

    def scale_up(self, pods_milli: list[int], free: np.ndarray, node_milli: int) -> list[str]:
        """The pool nodes to ask for now: `pods_milli` (each unschedulable pod's milli-GPUs) packed first fit into
        `free` (milli-GPUs free on each node in the cluster) and the nodes in flight; new nodes for the rest."""
        if node_milli <= 0 or not pods_milli:
            return []
        bins = np.concatenate([free, np.full(len(self.in_flight), node_milli, np.int64)])
        opened: list[int] = []
        for milli in sorted(pods_milli, reverse=True):
            fit = np.flatnonzero(bins >= milli)
            if len(fit):
                bins[fit[0]] -= milli
                continue
            k = next((i for i, room in enumerate(opened) if room >= milli), None)
            if k is None and milli <= node_milli:
                opened.append(node_milli)
                k = len(opened) - 1
            if k is not None:
                opened[k] -= milli
        take = self.free[:len(opened)]
        del self.free[:len(take)]
        self.in_flight.update(take)
        self.asked += len(take)
        return take

    def joined(self, name: str) -> None:
        self.in_flight.discard(name)
        self.added.add(name)
        self.joins += 1

    def gone(self, name: str) -> None:
        self.added.discard(name)
        self.free.append(name)
        self.removed += 1
