"""NodeUsage: which pods hold each node's GPUs in a simulation, read from the scheduler's decisions (where each pod
went), and what the ledger and the plots derive from it: stranded capacity, per-rack fragmentation."""
from __future__ import annotations

import numpy as np

from ..cluster_models.generate import GPU, RACK
from ..cluster_models.gpus import MILLI


class NodeUsage:
    def __init__(self, nodes: list, in_cluster: int):
        """nodes: every node the run may have (the cluster's first `in_cluster`, then an autoscaler's pool)."""
        self.names = [n.metadata.name for n in nodes]
        self.row = {name: i for i, name in enumerate(self.names)}
        self.milli = np.array([MILLI * int(n.status.allocatable.get(GPU, "0")) for n in nodes], np.int64)  # (N,)
        self.used = np.zeros(len(nodes), np.int64)     # (N,) milli-GPUs held by pods bound or waiting at Permit
        self.pods = np.zeros(len(nodes), np.int64)     # (N,) pods holding the node
        self.up = np.arange(len(nodes)) < in_cluster   # (N,) bool in the cluster and not failed
        racks, self.rack = np.unique(np.array([n.metadata.labels.get(RACK, "") for n in nodes], dtype=object),
                                     return_inverse=True)                     # (N,) rack id
        self.racks = [str(r) for r in racks]
        self.pod_node: dict[str, int] = {}             # pod key -> the node row it holds
        self.version = 0                               # bumped whenever used or up changes
        self._stranded_key, self._stranded = None, 0

    def milli_of(self, name: str) -> int:
        return int(self.milli[self.row[name]])

    def hold(self, key: str, node: str, milli: int) -> None:
        """A pod holds `milli` of `node` (bound, or placed and waiting at Permit); a second call for it is a no-op."""
        if key not in self.pod_node:
            row = self.pod_node[key] = self.row[node]
            self.used[row] += milli
            self.pods[row] += 1
            self.version += 1

    def release(self, key: str, milli: int) -> str | None:
        """The pod holds nothing any more; returns its node's name when the node now holds no pod."""
        row = self.pod_node.pop(key, None)
        if row is None:
            return None
        self.used[row] -= milli
        self.pods[row] -= 1
        self.version += 1
        return self.names[row] if not self.pods[row] else None

    def empty(self, name: str) -> bool:
        return not self.pods[self.row[name]]

    def set_up(self, name: str, up: bool) -> None:
        self.up[self.row[name]] = up
        self.version += 1

    def stranded(self, worker: int) -> int:
        """Idle milli-GPUs on up, partly used nodes whose free capacity is below `worker` (the smallest pending
        worker's milli) while their whole capacity is not (remembered until the nodes change)."""
        key = (self.version, worker)
        if key != self._stranded_key:             # the ledger asks at every step; nodes change far less often
            free = self.milli - self.used
            self._stranded_key = key
            self._stranded = int(free[self.up & (free > 0) & (free < worker) & (self.milli >= worker)].sum())
        return self._stranded

    def fragmented(self) -> np.ndarray:
        """(racks,) int64 free milli-GPUs on partly used nodes, per rack."""
        partly = self.up & (self.used > 0) & (self.used < self.milli)
        return np.bincount(self.rack, weights=np.where(partly, self.milli - self.used, 0),
                           minlength=len(self.racks)).astype(np.int64)
