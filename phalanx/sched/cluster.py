"""Cluster: the scheduler's mutable view of one cluster — node tensors, bound load, pending pods."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

import dataclasses

import numpy as np

from ..cluster_models import (ClusterObjects, InputError, Job, Node, Pod, PodGroup, PodGroupIndex, PriorityClass,
                              Workload, effective_priority, expand_jobs, load_paths,
                              pod_group_priority)
from ..cluster_models.controllers import DaemonSet, daemon_probe, expand_controllers
from ..cluster_models.disruption import PodDisruptionBudget, budget_floor
from ..cluster_models.gpus import device_request
from ..cluster_models.images import NodeImages
from ..cluster_models.load import cyclic_gc_paused
from ..cluster_models.objects import DONE_PHASES, Namespace, selector_matches
from ..cluster_models.requests import global_default_class
from ..cluster_models.spreading import DefaultSelectors
from ..cluster_models.tensors import ClusterTensors, bind_existing, compile_nodes, restrict
from ..kernels.node_affinity import node_affinity_filter
from ..kernels.status import SUCCESS
from ..kernels.taint_toleration import taint_toleration_filter
from ..plugins.node_affinity import required_node_affinity
from ..plugins.taint_toleration import untolerated_hard
from .claims import ClaimBook
from .gpushare import GpuBook
from .volumes import VolumeBook

if TYPE_CHECKING:
    from .shapes import PodShape


@dataclass(frozen=True)
class Nomination:
    """status.nominatedNodeName of a pending pod (upstream's nominator entry)."""
    pod: Pod
    node: str
    priority: int
    request: np.ndarray        # (R',) int64 its requests over the resource columns when it was nominated


_TOUCHED_KEPT = 4096        # nomination changes remembered (a kept evaluation older than that is made again)


class Nominations:
    """pod key -> Nomination, with the nominated pods' load per node kept up to date for each priority level: Filter
    adds the load of the pods nominated at a priority >= the pod's own, so a cycle reads a few (N, R) arrays instead
    of walking every nomination."""

    def __init__(self):
        self._by_key: dict[str, Nomination] = {}
        self._on_node: dict[str, dict[str, None]] = {}                  # node name -> keys nominated there
        self._levels: dict[int, tuple[np.ndarray, np.ndarray]] = {}   # priority -> (requested (N, R), count (N,))
        self._tensors = None        # the ClusterTensors the levels are laid out for (None: to build)
        self._shape = (0, 0)        # its (nodes, resource columns) then
        # Nodes whose nominations changed, in order (what a kept evaluation re-reads): _touched[i] is change
        # _dropped + i; the oldest are dropped once there are many.
        self._touched: list[str] = []
        self._dropped = 0

    def __len__(self) -> int:
        return len(self._by_key)

    def __contains__(self, key) -> bool:
        return key in self._by_key

    def __iter__(self):
        return iter(self._by_key)

    def get(self, key: str) -> Nomination | None:
        return self._by_key.get(key)

    def items(self):
        return self._by_key.items()

    def __setitem__(self, key: str, nom: Nomination) -> None:
        self.pop(key, None)
        self._by_key[key] = nom
        self._on_node.setdefault(nom.node, {})[key] = None
        self._account(nom, 1)

    def __delitem__(self, key: str) -> None:
        if self.pop(key) is None:
            raise KeyError(key)

    def pop(self, key: str, default=None):
        nom = self._by_key.pop(key, None)
        if nom is None:
            return default
        there = self._on_node[nom.node]
        del there[key]
        if not there:
            del self._on_node[nom.node]
        self._account(nom, -1)
        return nom

    def pop_all(self, keys: list[str]) -> list[Nomination | None]:
        """pop for several pods (a run of retried preemptors placed at once): their load leaves the levels in one
        step per priority and request."""
        out, taken = [], {}
        for key in keys:
            nom = self._by_key.pop(key, None)
            out.append(nom)
            if nom is None:
                continue
            there = self._on_node[nom.node]
            del there[key]
            if not there:
                del self._on_node[nom.node]
            self._touch(nom.node)
            node = self._node_of(nom)
            if node is not None:
                taken.setdefault((nom.priority, id(nom.request)), (nom, []))[1].append(node)
        for nom, nodes in taken.values():
            requested, count = self._level(nom.priority)
            request = nom.request[: self._shape[1]]
            np.subtract.at(requested[:, : len(request)], nodes, request)
            np.subtract.at(count, nodes, 1)
        return out

    def mark(self) -> int:
        """A position in the changes (for changed_since)."""
        return self._dropped + len(self._touched)

    def changed_since(self, mark: int) -> set[str] | None:
        """Names of the nodes whose nominations changed since `mark`; None when that is no longer known."""
        if mark < self._dropped:
            return None
        return set(self._touched[mark - self._dropped:])

    def on_node(self, node: str) -> list[tuple[str, Nomination]]:
        """(key, nomination) of the pods nominated to `node`, in nomination order."""
        return [(key, self._by_key[key]) for key in self._on_node.get(node, ())]

    def _account(self, nom: Nomination, sign: int) -> None:
        self._touch(nom.node)
        node = self._node_of(nom)
        if node is None:
            return
        # Columns beyond the node table's are resources no node has: no Filter can pass there with them anyway.
        request = nom.request[: self._shape[1]]
        requested, count = self._level(nom.priority)
        row = requested[node, : len(request)]
        if sign > 0:
            row += request
        else:
            row -= request
        count[node] += sign

    def _touch(self, node: str) -> None:
        if len(self._touched) >= _TOUCHED_KEPT:
            self._dropped += len(self._touched)
            self._touched = []
        self._touched.append(node)

    def _node_of(self, nom: Nomination) -> int | None:
        """The node id whose level rows hold the nomination's load; None while the levels are not laid out for the
        node table (built on the next read) or the node is not in it."""
        if self._tensors is None:
            return None
        if self._tensors.nodes.requested.shape != self._shape:
            self._tensors = None           # nodes or resource columns were added: rebuilt on the next read
            return None
        return self._tensors.node_index.get(nom.node)

    def _level(self, priority: int) -> tuple[np.ndarray, np.ndarray]:
        level = self._levels.get(priority)
        if level is None:
            n, r = self._shape
            level = self._levels[priority] = (np.zeros((n, r), np.int64), np.zeros(n, np.int64))
        return level

    def for_pod(self, pod: Pod, priority: int, node_index: dict) -> list[tuple[Nomination, int]]:
        """(nomination, node id) of the pods nominated to a node that Filter counts for `pod`: priority >= its
        own, not itself (addGENominatedPods)."""
        out = []
        for key, nom in self._by_key.items():
            if key != pod.key and nom.priority >= priority:
                node = node_index.get(nom.node)
                if node is not None:
                    out.append((nom, node))
        return out

    def load_for(self, pod: Pod, priority: int, tensors) -> tuple[np.ndarray, np.ndarray] | None:
        """(requested (N, R), pod count (N,)) the pods of for_pod add to their nodes, or None when they add
        nothing. R is the node table's resource columns."""
        requested, count = self._load([pod], priority, tensors, None)
        return (requested, count) if count.any() else None

    def load_at(self, pods: list[Pod], priority: int, tensors, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The load on the node ids `nodes` alone that pods nominated at a priority >= `priority` add, each of
        `pods`' own nomination left out (load_for when `pods` is one pod): ((k, R) requested, (k,) pod count)."""
        return self._load(pods, priority, tensors, np.asarray(nodes, np.int64))

    def load_rows(self, pod: Pod, priority: int, tensors, nodes: list[int]) -> list[tuple[list[int], int]]:
        """load_at for one pod on a few node ids, in Python values: per node (requested over the node table's
        resource columns, pod count). A preemptor's cycle and its dry run ask for the node or two nominated since
        the one before, where numpy's per-call cost would be the whole cost."""
        r = self._laid_out(tensors)[1]
        levels = [load for level, load in self._levels.items() if level >= priority]
        own = self._by_key.get(pod.key)
        own_node = -1 if own is None or own.priority < priority else tensors.node_index.get(own.node, -1)
        out = []
        for node in nodes:
            requested, count = [0] * r, 0
            if levels:
                requested, count = levels[0][0][node].tolist(), int(levels[0][1][node])
            for level_requested, level_count in levels[1:]:
                requested = list(map(int.__add__, requested, level_requested[node].tolist()))
                count += int(level_count[node])
            if node == own_node:
                mine = own.request.tolist()
                requested = [amount - mine[i] if i < len(mine) else amount for i, amount in enumerate(requested)]
                count -= 1
            out.append((requested, count))
        return out

    def _load(self, pods: list[Pod], priority: int, tensors, nodes: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """nodes: node ids, None for every node."""
        n, r = self._laid_out(tensors)
        requested = count = None
        # The dry runs ask for a few rows often: `take` (half the cost of indexing by an array for a row or two).
        for level, (req, cnt) in self._levels.items():
            if level >= priority:
                if requested is None:     # the first level's rows, copied
                    requested, count = (req.copy(), cnt.copy()) if nodes is None else \
                        (req.take(nodes, axis=0), cnt.take(nodes))
                else:
                    requested += req if nodes is None else req.take(nodes, axis=0)
                    count += cnt if nodes is None else cnt.take(nodes)
        if requested is None:
            k = n if nodes is None else len(nodes)
            requested, count = np.zeros((k, r), np.int64), np.zeros(k, np.int64)
        for pod in pods:
            own = self._by_key.get(pod.key)
            node = -1 if own is None or own.priority < priority else tensors.node_index.get(own.node, -1)
            if node >= 0:
                at = [node] if nodes is None else np.flatnonzero(nodes == node)
                requested[at, : len(own.request)] -= own.request
                count[at] -= 1
        return requested, count

    def _laid_out(self, tensors) -> tuple[int, int]:
        """The levels laid out for `tensors` (rebuilt if it is another table or grew); its (nodes, columns)."""
        shape = tensors.nodes.requested.shape
        if self._tensors is not tensors or self._shape != shape:
            self._rebuild(tensors)
        return shape

    def _rebuild(self, tensors) -> None:
        """Lay the levels out again for `tensors` (nodes added or removed, a new resource column)."""
        self._tensors, self._shape, self._levels = tensors, tensors.nodes.requested.shape, {}
        for nom in self._by_key.values():
            self._account(nom, 1)


def daemon_nodes(ds: DaemonSet, tensors: ClusterTensors) -> list[str]:
    """The nodes a DaemonSet should run on, in node order (NodeShouldRunDaemonPod): the template's nodeName,
    nodeSelector and required node affinity match, and its NoSchedule/NoExecute taints are tolerated with the
    DaemonSet's default tolerations. The Filter kernels decide, as the scheduler would."""
    probe = daemon_probe(ds)
    names = tensors.nodes.names
    ok = taint_toleration_filter(np, tensors.nodes.taints, untolerated_hard(probe, tensors.taints))[0] == SUCCESS
    required = required_node_affinity(probe, tensors)
    if required is not None:
        ok &= node_affinity_filter(np, tensors.nodes.labels, required)[0] == SUCCESS
    if probe.spec.node_name:
        ok &= np.asarray(names) == probe.spec.node_name
    return [names[i] for i in np.flatnonzero(ok).tolist()]


@dataclass
class Cluster:
    tensors: ClusterTensors
    priority_classes: dict[str, PriorityClass]
    pending: list[Pod]                                 # arrival order, not yet handed to a Scheduler
    warnings: list[str] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)    # the objects behind tensors.nodes, same order
    pod_groups: list[PodGroup] = field(default_factory=list)
    workloads: list[Workload] = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)
    claims: ClaimBook | None = None                    # DRA devices and claims (sched/claims.py); empty if None
    gpus: GpuBook | None = None                        # GPU devices and shares (sched/gpushare.py); from nodes if None
    namespaces: dict[str, Namespace] = field(default_factory=dict)  # name -> Namespace (inputs, and implicit ones
                                                                    # for namespaces pods live in)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)   # policy/v1, input order
    nominations: Nominations = field(default_factory=Nominations)   # pending pods' status.nominatedNodeName
    default_selectors: DefaultSelectors = field(default_factory=DefaultSelectors)  # default topology spreading
    successors: dict[str, Pod] = field(default_factory=dict)   # OrderedReady StatefulSets: pod key -> the pod its
                                                                # controller creates once that pod is bound
    # Pods bound to a node not in the input, with that node's name: no load anywhere (upstream's snapshot lists no
    # node without its Node object), yet scheduled members of their PodGroups (its cache keeps them in the group).
    bound_elsewhere: list[tuple[Pod, str]] = field(default_factory=list)
    images: NodeImages | None = None                   # the nodes' container images (ImageLocality); from nodes
                                                       # if None
    rng: np.random.Generator | None = None     # the Scheduler's seeded random stream, for plugins that draw
                                               # (RandomScore); set by the Scheduler
    volumes: VolumeBook = field(default_factory=VolumeBook)    # PVs, PVCs, StorageClasses, CSINodes (sched/volumes.py)
    _class_priority: dict[str, int] = field(default_factory=dict)   # priorityClassName -> value
    _pdb_floor: dict[str, int] = field(default_factory=dict)        # PDB key -> desiredHealthy fixed at load

    @classmethod
    def from_objects(cls, objects: ClusterObjects) -> "Cluster":
        """Run the workload controllers (cluster_models.controllers: their pods join the input after its own, in
        controller order) and the Job controller over the Jobs (CronJobs' included: their Workloads, PodGroups
        and pods follow), compile nodes, account bound pods as load, queue the rest. Raises InputError, changing
        nothing."""
        tensors = compile_nodes(objects.nodes)
        with cyclic_gc_paused():
            made = expand_controllers(objects.controllers, objects.pods, lambda ds: daemon_nodes(ds, tensors),
                                      claims=(c.key for c in objects.persistent_volume_claims))
            objects = expand_jobs(dataclasses.replace(objects, pods=[*objects.pods, *made.pods],
                                                      jobs=[*objects.jobs, *made.jobs]))
        classes = {pc.metadata.name: pc for pc in objects.priority_classes}
        warnings = [*objects.warnings, *made.warnings]
        pending: list[Pod] = []
        bound: list[tuple[Pod, str]] = []
        later = {pod.key for pod in made.successors.values()}      # OrderedReady pods not created yet
        last_spec = last_annotations = None       # those of the pod before: replicas share them, checked once
        for pod in objects.pods:
            spec, annotations = pod.spec, pod.metadata.annotations
            if spec is not last_spec or annotations is not last_annotations:
                effective_priority(pod, classes)      # validates priorityClassName before anything is built
                device_request(pod)                   # validates the GPU-share annotations (sched/gpushare.py)
                last_spec, last_annotations = spec, annotations
            if pod.status.phase in DONE_PHASES:
                continue
            if spec.node_name:
                bound.append((pod, spec.node_name))
            elif not later or pod.key not in later:
                pending.append(pod)
        for group in objects.pod_groups:
            pod_group_priority(group, classes)         # validates priorityClassName, as admission does
        elsewhere: list[tuple[Pod, str]] = []
        for pod, node in bound:
            node_id = tensors.node_index.get(node)
            if node_id is None:
                warnings.append(f"Pod {pod.key}: spec.nodeName: node {node!r} not found; its load is ignored")
                elsewhere.append((pod, node))
                continue
            bind_existing(tensors, pod, node_id)
        claims = ClaimBook.from_objects(objects, tensors.node_index)
        # Bound pods use (and hold) their claims, and DRA devices for the extended resources they ask for.
        if any(pod.spec.resource_claims or claims.extended_requests(pod) for pod, _ in bound):
            index = PodGroupIndex(objects)
            for pod, node in bound:
                if node in tensors.node_index:
                    problem = claims.add_bound(pod, tensors.node_index[node], index.resolve(pod).group, tensors)
                    warnings.extend([problem] if problem else [])
        gpus = GpuBook.from_nodes(objects.nodes)
        namespaces = {ns.metadata.name: ns for ns in objects.namespaces}
        cluster = cls(tensors, classes, pending, warnings, list(objects.nodes), list(objects.pod_groups),
                      list(objects.workloads), list(objects.jobs), claims, gpus, namespaces, list(objects.pdbs),
                      default_selectors=DefaultSelectors.from_objects(
                          objects.services, [*objects.controllers, *made.replica_sets]),
                      successors=made.successors, bound_elsewhere=elsewhere,
                      volumes=VolumeBook.from_objects(objects, made.claims))
        for name in dict.fromkeys(pod.metadata.namespace for pod in objects.pods):
            cluster.namespace(name)
        cluster.disruptions_allowed()                 # each PDB's desiredHealthy, against the pods bound at load
        for pod, node in bound:      # bound GPU-share pods hold their share: best fit on their node, input order
            req = device_request(pod)    # (after every bound whole-GPU pod's devices: sched/gpushare.py)
            if req is not None and node in tensors.node_index:
                problem = gpus.add_bound(pod, tensors.node_index[node], req)
                warnings.extend([problem] if problem else [])
        return cluster

    def __post_init__(self):
        if self.claims is None:
            self.claims = ClaimBook.empty(self.tensors.node_index)
        if self.gpus is None or self.images is None:    # from the Node objects (none when they are not given)
            names = list(self.tensors.nodes.names)
            same = [n.metadata.name for n in self.nodes] == names
            if self.gpus is None:
                self.gpus = GpuBook.from_nodes(self.nodes) if same else GpuBook.empty(names)
            if self.images is None:
                self.images = NodeImages.of(self.nodes) if same else NodeImages({}, len(names))
        if self.gpus.owner is None:  # its whole-GPU / share correction lives in this cluster's node table
            self.gpus.attach(self)

    def disruptions_allowed(self, not_running: frozenset[str] = frozenset()
                            ) -> list[tuple[PodDisruptionBudget, int]]:
        """Each PDB with its status.disruptionsAllowed now: the controller's desiredHealthy, fixed when the
        budget was first seen, against the healthy pods its selector matches now (cluster_models.disruption): the
        pods on nodes but those of `not_running` (waiting at Permit: pending, so never Ready, which the disruption
        controller's health asks)."""
        if not self.pdbs:
            return []
        live = [pod for pod, _ in self.tensors.live_bound() if pod.key not in not_running]
        out = []
        for pdb in self.pdbs:
            ns = pdb.metadata.namespace
            healthy = sum(1 for pod in live if pod.metadata.namespace == ns
                          and selector_matches(pdb.spec.selector, pod.metadata.labels))
            floor = self._pdb_floor.get(pdb.key)
            if floor is None:
                floor = self._pdb_floor[pdb.key] = budget_floor(pdb, healthy)
            out.append((pdb, max(0, healthy - floor)))
        return out

    def preemption_policy(self, pod: Pod) -> str:
        """spec.preemptionPolicy as admission leaves it: the pod's own, else its PriorityClass's, else
        PreemptLowerPriority."""
        if pod.spec.preemption_policy is not None:
            return pod.spec.preemption_policy
        if pod.spec.priority is not None:          # admission already ran (it sets both)
            return "PreemptLowerPriority"
        name = pod.spec.priority_class_name
        pc = self.priority_classes.get(name) if name else global_default_class(self.priority_classes)
        return (pc.preemption_policy if pc is not None else None) or "PreemptLowerPriority"

    def namespace(self, name: str) -> Namespace:
        """The Namespace object of `name`; one pods live in but the input does not list exists implicitly, with
        only its default label (the API server creates no pod in a missing namespace)."""
        ns = self.namespaces.get(name)
        if ns is None:
            ns = self.namespaces[name] = Namespace.implicit(name)
        return ns

    def grow_vocabularies(self, pods: Iterable[tuple[Pod, PodShape]]) -> None:
        """Columns the (pod, its shape) may need (resources, host ports, label pairs, namespaces), added to this
        cluster's tables first, so that copies (`restricted`, which share the vocabularies) never add any."""
        tensors = self.tensors
        for pod, shape in pods:
            shape.request_vector(tensors)
            for port in shape.host_ports:
                tensors.port_column(port)
            tensors.pod_label_row(pod.metadata.labels)
            tensors.namespaces.add(pod.metadata.namespace or "default")

    def restricted(self, node_ids: np.ndarray, live=None) -> "Cluster":
        """A copy seen through some nodes only (a topology placement, KEP-5732 AssumePlacement): restricted node
        table, DRA claim and GPU-share state; placing pods on it leaves this cluster untouched. Grow the
        vocabularies the pods need on this cluster first (the copy shares them)."""
        sub = restrict(self.tensors, node_ids, live)
        return dataclasses.replace(self, tensors=sub, claims=self.claims.restricted(sub.node_index),
                                   gpus=self.gpus.restricted(node_ids, sub.nodes.names),
                                   images=self.images.restricted(node_ids), volumes=self.volumes.restricted())

    @classmethod
    def from_paths(cls, paths: Iterable[str | Path]) -> "Cluster":
        return cls.from_objects(load_paths(paths))

    def priority(self, pod: Pod) -> int:
        if pod.spec.priority is not None:
            return pod.spec.priority
        name = pod.spec.priority_class_name
        cached = self._class_priority.get(name)
        if cached is None:
            cached = self._class_priority[name] = effective_priority(pod, self.priority_classes)
        return cached

    def add_pods(self, pods: Iterable[Pod]) -> None:
        """Queue more pending pods (after the ones already queued)."""
        pods = list(pods)
        for pod in pods:
            if pod.spec.node_name:
                raise InputError(f"Pod {pod.key}: spec.nodeName: already bound; add it to the cluster input instead")
            self.priority(pod)
        self.pending.extend(pods)

