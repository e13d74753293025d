"""A node autoscaler for the simulator, modelled on Cluster Autoscaler's scale-up and scale-down loops, simplified:

- every `scan_s` (CA's --scan-interval, 10 s) while pods are unschedulable, it packs them, largest first (GPUs,
  then CPU, then memory), first fit, into the room left on the nodes in the cluster and on those already asked for,
  and asks for as many template nodes as the pods left over need, up to `max_nodes` in all; a node joins
  `provision_s` after it was asked for (cloud provisioning and kubelet start). A node's room is its unrequested
  CPU, memory and pod slots and its devices' free milli-GPU: whole GPUs take idle devices, a share takes the device
  with the least room that holds it. Which nodes a pod may use at all is the scheduler's Filter: a node in the
  cluster where it fails now (taints, affinity, GPU model, ...) is skipped, and a pod that does not fit an empty
  template node (CA: "pod didn't trigger scale-up") asks for none;
- a node it added that holds no pod for `scale_down_s` (CA's --scale-down-unneeded-time, 10 min) is removed.

The nodes it may add exist from the start as a pool (`auto-000000`, ...); the ledger counts their GPUs as
"unprovisioned" while they are not in the cluster, so the GPU-seconds of a run still add up. Comparing a gang under
v1.36's PodGroup cycle with a gang held at Permit (gang_mode "permit") shows the interplay: a Permit timeout shorter
than `provision_s` releases the placed members before the new nodes arrive, and the gang asks for more.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..cluster_models.gpus import MILLI
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

    def scale_up(self, pending: list[Pending], rooms: Rooms, template: Rooms) -> list[str]:
        """The pool nodes to ask for now: the `pending` pods packed first fit into `rooms` (the nodes in the cluster)
        and the nodes in flight, then into new template nodes (`template`: one row, an empty template node)."""
        if not pending:
            return []
        existing = rooms.size
        rooms = rooms.extend(template, len(self.in_flight))
        opened = 0
        for pod in sorted(pending, key=lambda p: p.need.order, reverse=True):
            may = np.concatenate([pod.nodes, np.full(rooms.size - existing, pod.on_template)])
            k = rooms.first_fit(pod.need, may)
            if k < 0 and pod.on_template and opened < len(self.free):
                rooms = rooms.extend(template, 1)
                opened += 1
                k = rooms.size - 1
            if k >= 0:
                rooms.take(k, pod.need)
        take = self.free[:opened]
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


@dataclass(frozen=True)
class Need:
    """What one pod asks of a node, as the autoscaler packs it."""
    cpu: int          # milli-CPU requested
    memory: int       # bytes requested
    gpus: int = 0     # devices
    milli: int = 0    # milli-GPU of each device (MILLI: whole devices)

    @property
    def order(self) -> tuple:
        """Largest first: GPU milli in all, then CPU, then memory."""
        return self.gpus * self.milli, self.cpu, self.memory


@dataclass(frozen=True)
class Pending:
    """An unschedulable pod as a scan sees it."""
    need: Need
    nodes: np.ndarray      # (E,) bool: the scheduler's Filter passes on each node in the cluster now
    on_template: bool      # it fits an empty template node (else no node is asked for it)


@dataclass
class Rooms:
    """The room left on R nodes."""
    cpu: np.ndarray        # (R,) int64 milli-CPU unrequested
    memory: np.ndarray     # (R,) int64 bytes unrequested
    pods: np.ndarray       # (R,) int64 pod slots left
    devices: np.ndarray    # (R, D) int64 free milli-GPU per device (0: padding or held)

    @property
    def size(self) -> int:
        return len(self.cpu)

    def extend(self, template: Rooms, copies: int) -> Rooms:
        """These rows and `copies` rows of the template's one, devices padded to the wider of the two."""
        width = max(self.devices.shape[1], template.devices.shape[1])

        def pad(d):
            return np.pad(d, ((0, 0), (0, width - d.shape[1])))
        return Rooms(np.concatenate([self.cpu, np.repeat(template.cpu, copies)]),
                     np.concatenate([self.memory, np.repeat(template.memory, copies)]),
                     np.concatenate([self.pods, np.repeat(template.pods, copies)]),
                     np.concatenate([pad(self.devices), np.repeat(pad(template.devices), copies, axis=0)]))

    def first_fit(self, need: Need, may: np.ndarray) -> int:
        """The first node among `may` with room for `need`, -1 when none has."""
        ok = may & (self.cpu >= need.cpu) & (self.memory >= need.memory) & (self.pods >= 1)
        if need.gpus and need.milli >= MILLI:
            ok &= np.count_nonzero(self.devices >= MILLI, axis=1) >= need.gpus
        elif need.gpus:
            ok &= (self.devices >= need.milli).any(axis=1)
        return int(np.argmax(ok)) if ok.any() else -1

    def take(self, k: int, need: Need) -> None:
        self.cpu[k] -= need.cpu
        self.memory[k] -= need.memory
        self.pods[k] -= 1
        devices = self.devices[k]
        if need.gpus and need.milli >= MILLI:
            devices[np.flatnonzero(devices >= MILLI)[:need.gpus]] = 0
        elif need.gpus:
            room = np.where(devices >= need.milli, devices, MILLI + 1)
            devices[int(np.argmin(room))] -= need.milli


def node_rooms(cluster) -> Rooms:
    """The room left on every node of a scheduler's cluster (node-table order), devices from its GpuBook."""
    tensors = cluster.tensors
    nodes = tensors.nodes

    def left(resource):
        col = tensors.resources.get(resource)
        if col < 0:
            return np.zeros(nodes.size, np.int64)
        return (nodes.allocatable[:, col] - nodes.requested[:, col]).astype(np.int64)
    devices = cluster.gpus.devices()[0] if cluster.gpus is not None else np.zeros((nodes.size, 0), np.int64)
    return Rooms(left("cpu"), left("memory"), (nodes.allowed_pods - nodes.pod_count).astype(np.int64),
                 np.array(devices, np.int64))
