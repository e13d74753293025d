"""VolumeZone: a pod whose claims are bound to volumes labelled with zones or regions goes only to nodes in them.
Upstream: pkg/scheduler/framework/plugins/volumezone/volume_zone.go (v1.36.0).

PreFilter reads each persistentVolumeClaim source's bound volume (claims of WaitForFirstConsumer classes not bound
yet are left to VolumeBinding) and keeps the volume's topology labels: failure-domain.beta.kubernetes.io/zone and
/region, topology.kubernetes.io/zone and /region, each a set of values joined by "__". Filter passes a node with none
of those labels (a single-zone cluster), else each label must have a value of the volume's set on the node (a beta
key read from the node's GA label where the node lacks it).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..cluster_models.storage import WAIT_FOR_FIRST_CONSUMER
from ..kernels.volume_zone import volume_zone_filter
from .framework import NODE_ADDED, NODE_UPDATED, SKIP, Rejection
from .labels import label_test
from .volumes import VolumePlugin, claim_volumes, not_found

REASON = "node(s) had no available volume zone"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (BETA_ZONE, BETA_REGION, ZONE, REGION)
_GA = {BETA_ZONE: ZONE, BETA_REGION: REGION}


def label_zones(value: str) -> set[str] | None:
    """volumehelpers.LabelZonesToSet: values joined by "__", each trimmed; None when one is empty (upstream then
    ignores the label)."""
    zones = {zone.strip() for zone in value.split("__")}
    return None if "" in zones else zones


@dataclass(frozen=True)
class VolumeTopology:
    """One topology label of a bound volume (upstream pvTopology)."""
    volume: str
    key: str
    values: frozenset[str]


def volume_topologies(pv) -> list[VolumeTopology]:
    """getPVTopologies: the volume's topology labels in upstream's key order."""
    out = []
    for key in TOPOLOGY_LABELS:
        value = pv.metadata.labels.get(key)
        zones = None if value is None else label_zones(value)
        if zones is not None:
            out.append(VolumeTopology(pv.name, key, frozenset(zones)))
    return out


@dataclass(frozen=True)
class ZoneState:
    topologies: tuple[VolumeTopology, ...]


class VolumeZone(VolumePlugin):
    name = "VolumeZone"
    # Points a configuration may enable it at (as before it was modelled) that take no part in decisions.
    unmodelled_points = ("preScore", "score")
    events = frozenset({NODE_ADDED, NODE_UPDATED})

    def pre_filter(self, pod, cluster):
        if not cluster.volumes.described:
            return SKIP
        topologies = self._topologies(pod.pod, cluster.volumes)
        if isinstance(topologies, Rejection):
            return topologies
        return ZoneState(tuple(topologies)) if topologies else SKIP

    @staticmethod
    def _topologies(pod, book) -> list[VolumeTopology] | Rejection:
        """getPVbyPod: the topologies of the volumes the pod's claims are bound to, or the rejection."""
        out = []
        for volume in claim_volumes(pod, ephemeral=False):
            if not volume.claim:
                return Rejection("PersistentVolumeClaim had no name")
            claim = book.claim(f"{pod.metadata.namespace}/{volume.claim}")
            if claim is None:
                return Rejection(not_found("persistentvolumeclaim", volume.claim))
            pv_name = book.volume_name(claim)
            if not pv_name:
                class_name = claim.storage_class
                if not class_name:
                    return Rejection("PersistentVolumeClaim had no pv name and storageClass name")
                storage_class = book.classes.get(class_name)
                if storage_class is None:
                    return Rejection(not_found("storageclass.storage.k8s.io", class_name))
                if storage_class.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER:
                    continue                # VolumeBinding binds it
                return Rejection("PersistentVolume had no name")
            pv = book.volumes.get(pv_name)
            if pv is None:
                return Rejection(not_found("persistentvolume", pv_name))
            out += volume_topologies(pv)
        return out

    def filter(self, xp, state, tensors):
        vocab = tensors.node_labels
        constrained = tuple(label_test(vocab, key, "Exists", []) for key in TOPOLOGY_LABELS)
        tests = []
        for topology in state.topologies:
            values = sorted(topology.values)
            fallback = _GA.get(topology.key, topology.key)
            tests.append((label_test(vocab, topology.key, "Exists", []), label_test(vocab, topology.key, "In", values),
                          label_test(vocab, fallback, "In", values)))
        return volume_zone_filter(xp, tensors.nodes.labels, constrained, tests)

    def reasons(self, payload, tensors):
        return [REASON]
