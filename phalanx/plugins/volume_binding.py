"""VolumeBinding: a pod's PersistentVolumeClaims (persistentVolumeClaim and generic ephemeral volumes) bound with it.
Upstream: pkg/scheduler/framework/plugins/volumebinding/{volume_binding.go,binder.go} and
component-helpers/storage/volume (FindMatchingVolume, CheckNodeAffinity), v1.36.0; its args:
pkg/scheduler/apis/config/{types_pluginargs.go,v1/defaults.go,validation/validation_pluginargs.go}.

PreFilter: every claim must exist (not lost, not being deleted; an ephemeral one owned by the pod), and the claims
not bound yet must be of a WaitForFirstConsumer class, else the pod waits ("pod has unbound immediate
PersistentVolumeClaims"). Filter, per node: a bound claim's volume must exist and its node affinity hold; each
unbound claim (smallest request first) takes the smallest available volume of its class that fits (capacity, access
modes, volume mode, selector, node affinity; a volume pre-bound to the claim wins outright), and a claim left
without one must be provisionable there (its class has a provisioner and its allowedTopologies hold) with enough
storage (hasEnoughCapacity: when the provisioner's CSIDriver sets storageCapacity, a CSIStorageCapacity of the
class whose nodeTopology selects the node and whose maximumVolumeSize, else capacity, holds the request); a claim
already being provisioned for another node fails. Reserve binds the chosen volumes and marks the provisioned claims'
node in the cluster's VolumeBook (sched/volumes.py); Unreserve undoes it. The Score exists only with the
StorageCapacityScoring gate (alpha, off in v1.36), which phalanx does not model.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from pydantic import Field, ValidationInfo, field_validator, model_validator

from ..cluster_models.objects import Int64, selector_matches
from ..cluster_models.storage import NO_PROVISIONER, WAIT_FOR_FIRST_CONSUMER
from ..kernels.node_affinity import term_matches
from ..kernels.node_resources_fit import MAX_CUSTOM_PRIORITY_SCORE
from ..kernels.volume_binding import (BIND_CONFLICT, NODE_CONFLICT, NOT_ENOUGH_SPACE, PV_NOT_EXIST, REASONS,
                                      volume_binding_filter)
from .framework import NODE_ADDED, NODE_UPDATED, SKIP, ArgsInvalid, NodeSubset, PluginArgs, Rejection
from .labels import label_test, selector_tests
from .node_affinity import label_only_terms
from .node_resources_fit import UtilizationShapePoint, shape_errors
from .volumes import VolumePlugin, claim_volumes, not_for_pod, not_found

DEFAULT_BIND_TIMEOUT_S = 600        # SetDefaults_VolumeBindingArgs
HOSTNAME = "kubernetes.io/hostname"
GATE = "StorageCapacityScoring"     # alpha, off in v1.36: the shape is read only with it


class VolumeBindingArgs(PluginArgs):
    bind_timeout_seconds: Int64 = DEFAULT_BIND_TIMEOUT_S
    shape: list[UtilizationShapePoint] | None = Field(default=None, validate_default=True)

    @field_validator("bind_timeout_seconds", mode="before")
    @classmethod
    def _default_timeout(cls, value):
        return DEFAULT_BIND_TIMEOUT_S if value is None else value

    @field_validator("shape", mode="after")
    @classmethod
    def _default_shape(cls, shape, info: ValidationInfo):
        """With the gate, an empty or absent shape is (0, 10), (100, 0): the emptiest volumes first."""
        if not shape and _gate(info):
            return [UtilizationShapePoint(utilization=0, score=MAX_CUSTOM_PRIORITY_SCORE),
                    UtilizationShapePoint(utilization=100, score=0)]
        return shape

    @model_validator(mode="after")
    def _validate(self, info: ValidationInfo):
        """ValidateVolumeBindingArgsWithOptions: a timeout not negative; with the gate validateFunctionShape, without
        it no shape at all (even an empty list; `null` is none)."""
        errors = []
        if self.bind_timeout_seconds < 0:
            errors.append(f"bindTimeoutSeconds: Invalid value: {self.bind_timeout_seconds}: invalid "
                          f"BindTimeoutSeconds, should not be a negative value")
        if _gate(info):
            errors += shape_errors(self.shape, "shape")
        elif self.shape is not None:
            points = ", ".join(f"config.UtilizationShapePoint{{Utilization:{p.utilization}, Score:{p.score}}}"
                               for p in self.shape)
            errors.append(f"shape: Invalid value: []config.UtilizationShapePoint{{{points}}}: unexpected field "
                          f"`shape`, remove it or turn on the feature gate {GATE}")
        if errors:
            raise ArgsInvalid(errors)
        return self


def _gate(info: ValidationInfo) -> bool:
    return bool((info.context or {}).get("gates", {}).get(GATE, False))


@dataclass(frozen=True)
class ClaimsToBind:
    """PreFilter's state (upstream PodVolumeClaims): the pod's bound claims, and its unbound WaitForFirstConsumer
    claims with their classes' volumes."""
    pod: str                        # the pod's key
    bound: tuple                    # PersistentVolumeClaims fully bound, in volume order
    unbound: tuple                  # unbound delayed claims, in volume order
    book: object                    # the cluster's VolumeBook

    @property
    def by_size(self) -> list[int]:
        """The unbound claims' indices, smallest request first, as findMatchingVolumes sorts them (stable: equal
        requests keep volume order; upstream's sort is not stable)."""
        return sorted(range(len(self.unbound)), key=lambda c: self.unbound[c].request)


@dataclass(frozen=True)
class NodeVolumes:
    """The Filter's findings over a node table: each node's reasons (payload bits), and per unbound claim the
    volume chosen on each node (its index in the claim's class list; -1: none, to provision)."""
    payload: np.ndarray             # (N,) int64
    chosen: np.ndarray              # (C, N) int64


def _node_mask(terms, labels) -> np.ndarray:
    """(N,) bool: a node matches one of the terms (NodeSelector terms are ORed)."""
    ok = np.zeros(labels.shape[0], bool)
    for term in terms:
        ok |= np.asarray(term_matches(np, labels, term))
    return ok


def _affinity(pv, tensors) -> np.ndarray:
    """volume.CheckNodeAffinity on every node: the volume's required node affinity against the node's labels."""
    labels = np.asarray(tensors.nodes.labels)
    required = pv.spec.node_affinity.required if pv.spec.node_affinity is not None else None
    if required is None:
        return np.ones(labels.shape[0], bool)
    return _node_mask(label_only_terms(required, tensors.node_labels), labels)


def _allowed_topologies(storage_class, tensors) -> np.ndarray:
    """MatchTopologySelectorTerms: no terms match every node; a term without expressions none; a term's expressions
    (key In values) all hold."""
    labels = np.asarray(tensors.nodes.labels)
    if not storage_class.allowed_topologies:
        return np.ones(labels.shape[0], bool)
    terms = [tuple(label_test(tensors.node_labels, r.key, "In", r.values) for r in term.match_label_expressions)
             for term in storage_class.allowed_topologies if term.match_label_expressions]
    return _node_mask(terms, labels)


def _bound_to(claim_ref, claim) -> bool:
    """IsVolumeBoundToClaim: the reference names the claim (and its uid, when the reference has one)."""
    if claim_ref is None:
        return False
    namespace, name, uid = claim_ref
    return name == claim.metadata.name and namespace == claim.metadata.namespace and (not uid or
                                                                                      uid == claim.metadata.uid)


def match_volumes(state: ClaimsToBind, tensors) -> NodeVolumes:
    """FindPodVolumes on every node of `tensors`."""
    book, n = state.book, tensors.nodes.size
    names = np.asarray(tensors.nodes.names, dtype=object)
    payload = np.zeros(n, np.int64)
    decided = np.zeros(n, bool)          # checkBoundClaims returns at a node's first failing claim
    for claim in state.bound:
        pv = book.volumes.get(book.volume_name(claim))
        if pv is None:
            payload[~decided] |= PV_NOT_EXIST
            break
        fails = ~_affinity(pv, tensors) & ~decided
        payload[fails] |= NODE_CONFLICT
        decided |= fails
    chosen = np.full((len(state.unbound), n), -1, np.int64)
    if not state.unbound:
        return NodeVolumes(payload, chosen)
    # checkVolumeProvisions reads the claims to provision in order (the claims being provisioned already, in volume
    # order, then those no volume matched, smallest first) and stops at a node's first failing claim: `decided`.
    decided = np.zeros(n, bool)
    selected = []
    for c, claim in enumerate(state.unbound):
        node = book.selected_node(claim)
        if node is not None:
            decided |= names != node     # the fast path: a claim being provisioned for another node
            selected.append(c)
    payload[decided] |= BIND_CONFLICT
    excluded: dict[str, np.ndarray] = {}            # volume name -> (N,) bool chosen by an earlier claim there
    unmatched = [c for c in state.by_size if c not in selected]
    for c in unmatched:
        claim = state.unbound[c]
        volumes = book.volumes_of_class(claim.storage_class)
        chosen[c] = _smallest_match(claim, volumes, book, tensors, excluded)
        for i, pv in enumerate(volumes):
            taken = chosen[c] == i
            if taken.any():
                excluded[pv.name] = excluded.get(pv.name, np.zeros(n, bool)) | taken
    for c in selected + unmatched:
        to_provision = ~decided if c in selected else ~decided & (chosen[c] < 0)
        if not to_provision.any():
            continue
        claim = state.unbound[c]
        storage_class = book.classes.get(claim.storage_class)
        can = np.zeros(n, bool)
        if storage_class.provisioner not in ("", NO_PROVISIONER):
            can = _allowed_topologies(storage_class, tensors)
        no_volume = to_provision & ~can
        no_space = to_provision & can & ~_enough_capacity(claim, storage_class, book, tensors)
        payload[no_volume] |= BIND_CONFLICT
        payload[no_space] |= NOT_ENOUGH_SPACE
        decided |= no_volume | no_space
    return NodeVolumes(payload, chosen)


def _enough_capacity(claim, storage_class, book, tensors) -> np.ndarray:
    """hasEnoughCapacity on every node: (N,) bool. Only a provisioner whose CSIDriver sets storageCapacity is
    checked; then some CSIStorageCapacity of the claim's class must hold the request (Quantity.Value of each: whole
    bytes, rounded up) and select the node with its nodeTopology (none: no node)."""
    n = tensors.nodes.size
    driver = book.csi_drivers.get(storage_class.provisioner)
    if driver is None or not driver.spec.storage_capacity:
        return np.ones(n, bool)
    labels = np.asarray(tensors.nodes.labels)
    size = math.ceil(claim.request)
    enough = np.zeros(n, bool)
    for capacity in book.capacities:
        limit = capacity.volume_limit
        if capacity.storage_class_name != storage_class.name or limit is None or math.ceil(limit) < size:
            continue
        tests = selector_tests(capacity.node_topology, tensors.node_labels)
        if tests is not None:
            enough |= _node_mask([tests], labels)
    return enough


def _smallest_match(claim, volumes, book, tensors, excluded) -> np.ndarray:
    """FindMatchingVolume on every node: (N,) index into `volumes` of the claim's volume, -1 for none. Volumes are
    read in order, those chosen on the node by an earlier claim (`excluded`) passed over: the first volume pre-bound to
    the claim is the answer where its node affinity holds and none where it does not; otherwise the smallest
    available volume that fits (the first of equal ones)."""
    n = tensors.nodes.size
    answer = np.full(n, -1, np.int64)
    answered = np.zeros(n, bool)
    best = np.full(n, -1, np.int64)
    sizes = sorted({pv.capacity for pv in volumes})
    best_rank = np.full(n, len(sizes), np.int64)        # the rank of the best volume's capacity
    for i, pv in enumerate(volumes):
        ref = book.claim_ref(pv)
        if ref is not None and not _bound_to(ref, claim):
            continue
        if pv.capacity < claim.request or pv.spec.volume_mode != claim.spec.volume_mode:
            continue
        if (claim.spec.volume_attributes_class_name or "") != (pv.spec.volume_attributes_class_name or "") \
                or pv.metadata.deletion_timestamp is not None:
            continue
        unanswered = ~answered
        if pv.name in excluded:
            unanswered &= ~excluded[pv.name]
        if ref is not None:                            # pre-bound to this claim
            answer = np.where(unanswered & _affinity(pv, tensors), i, answer)
            answered |= unanswered
            continue
        if pv.status.phase != "Available" or (claim.spec.selector is not None and not selector_matches(
                claim.spec.selector, pv.metadata.labels)):
            continue
        if not set(claim.spec.access_modes) <= set(pv.spec.access_modes):
            continue
        rank = sizes.index(pv.capacity)
        better = unanswered & _affinity(pv, tensors) & (rank < best_rank)
        best = np.where(better, i, best)
        best_rank = np.where(better, rank, best_rank)
    return np.where(answered, answer, best)


def eligible_nodes(bound, book, tensors) -> tuple[np.ndarray, frozenset[str]] | None:
    """GetEligibleNodes: the nodes the bound claims' local volumes name, the volumes' sets intersected (the
    PreFilterResult's (N,) mask and names); None when no volume names nodes or a bound claim's volume does not
    exist."""
    names = None
    for claim in bound:
        pv = book.volumes.get(book.volume_name(claim))
        if pv is None:
            return None
        local = local_node_names(pv)
        if local:
            names = local if names is None else names & local
    if names is None:
        return None
    allowed = np.zeros(tensors.nodes.size, bool)
    allowed[[tensors.node_index[name] for name in names if name in tensors.node_index]] = True
    return allowed, frozenset(names)


def local_node_names(pv) -> frozenset[str]:
    """GetLocalPersistentVolumeNodeNames: per node selector term, the intersection of its kubernetes.io/hostname In
    values; the union over terms (a term without one adds none)."""
    required = pv.spec.node_affinity.required if pv.spec.node_affinity is not None else None
    out: set[str] = set()
    for term in required.node_selector_terms if required is not None else ():
        names = None
        for r in term.match_expressions:
            if r.key == HOSTNAME and r.operator == "In":
                names = set(r.values) if names is None else names & set(r.values)
        out |= names or set()
    return frozenset(out)


class VolumeBinding(VolumePlugin):
    name = "VolumeBinding"
    Args = VolumeBindingArgs
    # PreBind's API updates are Reserve's bindings here (they cannot fail); the Score needs StorageCapacityScoring.
    unmodelled_points = ("preBind", "preScore", "score")
    events = frozenset({NODE_ADDED, NODE_UPDATED})

    def pre_filter(self, pod, cluster):
        pod, book = pod.pod, cluster.volumes
        namespace = pod.metadata.namespace
        bound, unbound, immediate = [], [], False
        volumes = claim_volumes(pod)
        if not volumes or not book.described:
            return SKIP
        claims = []
        for volume in volumes:                     # podHasPVCs
            claim = book.claim(f"{namespace}/{volume.claim}")
            if claim is None:
                return Rejection(f'waiting for ephemeral volume controller to create the persistentvolumeclaim '
                                 f'"{volume.claim}"' if volume.ephemeral else
                                 not_found("persistentvolumeclaim", volume.claim))
            if claim.status.phase == "Lost":
                return Rejection(f'persistentvolumeclaim "{claim.name}" bound to non-existent persistentvolume '
                                 f'"{claim.spec.volume_name}"')
            if claim.metadata.deletion_timestamp is not None:
                return Rejection(f'persistentvolumeclaim "{claim.name}" is being deleted')
            if volume.ephemeral:
                problem = not_for_pod(claim, pod)
                if problem is not None:
                    return Rejection(problem)
            claims.append(claim)
        for claim in claims:                       # GetPodVolumeClaims
            if book.fully_bound(claim):
                bound.append(claim)
                continue
            storage_class = book.classes.get(claim.storage_class)
            delayed = storage_class is not None and storage_class.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER
            if delayed and not book.volume_name(claim):
                unbound.append(claim)
            else:
                immediate = True
        if immediate:
            return Rejection("pod has unbound immediate PersistentVolumeClaims")
        state = ClaimsToBind(pod.key, tuple(bound), tuple(unbound), book)
        eligible = eligible_nodes(bound, book, cluster.tensors)
        return state if eligible is None else NodeSubset(eligible[0], state, eligible[1])

    def filter(self, xp, state, tensors):
        return volume_binding_filter(xp, xp.asarray(match_volumes(state, tensors).payload))

    def reasons(self, payload, tensors):
        return [reason for bit, reason in REASONS if payload & bit]

    def reserves_for(self, pod, cluster) -> bool:
        return bool(claim_volumes(pod))

    def reserve(self, state, node, pod, cluster, extra, picks=()):
        """AssumePodVolumes on the chosen node: its static bindings and the claims to provision there."""
        if not state.unbound:
            return None                            # every claim bound: nothing to assume
        book = cluster.volumes
        found = match_volumes(state, cluster.tensors)
        name = cluster.tensors.nodes.names[node]
        bound, provisioned = [], []
        for c, claim in enumerate(state.unbound):
            i = int(found.chosen[c, node])
            if i >= 0:
                bound.append((claim.key, book.volumes_of_class(claim.storage_class)[i].name))
            else:
                provisioned.append((claim.key, name))
        return book.assume(state.pod, bound, provisioned)

    def unreserve(self, record, cluster):
        if record is not None:
            cluster.volumes.undo(record)

    def release(self, pod_keys, cluster):
        cluster.volumes.forget(pod_keys)

    def permit_rejected(self, pod_keys, cluster):
        cluster.volumes.revert(pod_keys)

    def replay(self, record, cluster):
        return None if record is None else cluster.volumes.replay(record)
