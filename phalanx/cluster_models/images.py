"""The nodes' container images as kube-scheduler's cache keeps them for ImageLocality
(pkg/scheduler/backend/cache/cache.go addNodeImageStates, fwk.ImageStateSummary): for each image name a node
lists, its size and the nodes that list it."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .objects import Node


@dataclass(frozen=True)
class ImageState:
    size: int               # sizeBytes as the first node (in node order) listing the name gave it
    nodes: np.ndarray       # (k,) int64 ids of the nodes listing it, ascending; k is ImageStateSummary.NumNodes


@dataclass(frozen=True)
class NodeImages:
    states: dict[str, ImageState]     # image name (as the nodes list it) -> its state, over the whole cluster
    total: int                        # nodes in the table (the snapshot's node list ImageLocality divides by)
    renumber: np.ndarray | None = None   # (cluster nodes,) int64 each node's id in a restricted table, -1 outside;
                                         # None: the table is the cluster's

    @classmethod
    def of(cls, nodes: list[Node]) -> "NodeImages":
        """Every name of every image of `nodes` (node id = position). The cache makes one summary per name and
        keeps the size it was first given; a name listed twice on one node counts that node once."""
        sizes: dict[str, int] = {}
        holders: dict[str, list[int]] = {}
        for node_id, node in enumerate(nodes):
            for image in node.status.images:
                for name in image.names:
                    ids = holders.get(name)
                    if ids is None:
                        sizes[name], holders[name] = image.size_bytes, [node_id]
                    elif ids[-1] != node_id:
                        ids.append(node_id)
        return cls({name: ImageState(sizes[name], np.array(ids, np.int64)) for name, ids in holders.items()},
                   len(nodes))

    def restricted(self, node_ids: np.ndarray) -> "NodeImages":
        """Seen through the table's nodes `node_ids` (ascending), renumbered 0..k-1: a topology placement's copy of
        the cluster (KEP-5732 AssumePlacement). Its node list is those nodes; each name keeps the whole cluster's
        node count, as the NodeInfos it shares carry the cache's summaries."""
        node_ids = np.asarray(node_ids, np.int64)
        inside = np.full(self.total, -1, np.int64)
        inside[node_ids] = np.arange(len(node_ids))
        if self.renumber is None:
            renumber = inside
        else:
            renumber = np.where(self.renumber >= 0, inside[np.maximum(self.renumber, 0)], -1)
        return NodeImages(self.states, len(node_ids), renumber)

    def scaled(self, name: str) -> tuple[np.ndarray, int] | None:
        """(the table's nodes holding the image `name`, its score there: the size scaled by the share of the
        cluster's nodes that hold it over the table's node count, truncated as Go converts a float64), None when
        none of them lists the name."""
        state = self.states.get(name)
        if state is None:
            return None
        nodes = state.nodes
        if self.renumber is not None:
            nodes = self.renumber[nodes]
            nodes = nodes[nodes >= 0]
            if not len(nodes):
                return None
        return nodes, int(float(state.size) * (len(state.nodes) / self.total))
