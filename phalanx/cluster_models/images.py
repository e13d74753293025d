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
    num_nodes: int          # nodes of the whole cluster listing the name (ImageStateSummary.NumNodes)
    nodes: np.ndarray       # (k,) int64 ids of the nodes of this table listing it, ascending


@dataclass(frozen=True)
class NodeImages:
    states: dict[str, ImageState]     # image name (as the nodes list it) -> its state
    total: int                        # nodes in the table (the snapshot's node list ImageLocality divides by)

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
        states = {name: ImageState(sizes[name], len(ids), np.array(ids, np.int64)) for name, ids in holders.items()}
        return cls(states, len(nodes))

    def restricted(self, node_ids: np.ndarray) -> "NodeImages":
        """Seen through the nodes `node_ids` (ascending), renumbered 0..k-1: a topology placement's copy of the
        cluster (KEP-5732 AssumePlacement). Its node list is those nodes; each name keeps the whole cluster's node
        count, as the NodeInfos it shares carry the cache's summaries."""
        node_ids = np.asarray(node_ids, np.int64)
        states = {}
        for name, state in self.states.items():
            at = np.searchsorted(node_ids, state.nodes)
            inside = at < len(node_ids)
            inside[inside] = node_ids[at[inside]] == state.nodes[inside]
            if inside.any():
                states[name] = ImageState(state.size, state.num_nodes, at[inside].astype(np.int64))
        return NodeImages(states, len(node_ids))

    def scaled(self, name: str) -> tuple[np.ndarray, int] | None:
        """(the nodes holding the image `name`, its score there: the size scaled by the share of the cluster's
        nodes that hold it, truncated as Go converts a float64), None when no node lists the name."""
        state = self.states.get(name)
        if state is None:
            return None
        return state.nodes, int(float(state.size) * (state.num_nodes / self.total))
