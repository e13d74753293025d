"""Pod shapes: pods that the filters and scores cannot tell apart share one shape (KEP-5598 signature).

The signature is the pod's scheduling-relevant spec; pods with topology spread constraints also carry their
labels and namespace (their own labels feed the constraint). A shape holds what is fixed for the pod — its
requests, ports and the warnings for what phalanx does not model — while vocabulary-dependent state (taint
masks, label tests) is prepared at each evaluation, because vocabularies grow as pods bind.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from ..cluster_models import Pod, pod_nonzero_requests, pod_requests
from ..cluster_models.requests import pod_scoring_requests
from ..cluster_models.tensors import ClusterTensors, pod_host_ports
from .gpushare import device_request

# Not part of a pod's placement: who it is, when it runs, queue-only fields, and its group (the group decides
# how pods are cycled, not where one pod fits).
_UNSIGNED_FIELDS = {"node_name", "priority", "priority_class_name", "preemption_policy", "scheduling_gates",
                    "scheduler_name", "scheduling_group", "workload_ref"}
# Volume sources that never constrain placement.
_NEUTRAL_VOLUMES = {"name", "emptyDir", "configMap", "secret", "downwardAPI", "projected", "hostPath"}
_SPREAD_OWNERS = {"ReplicaSet", "StatefulSet", "ReplicationController"}


def signature(pod: Pod) -> str:
    """The spec as JSON in field order (pydantic's serializer, the cheapest exact form). Equal specs give equal
    signatures; specs equal up to the order of map keys may not, which only costs a batching opportunity."""
    spec = pod.spec.model_dump_json(by_alias=True, exclude=_UNSIGNED_FIELDS, exclude_defaults=True)
    gpu = device_request(pod)
    if gpu is not None:      # GPU share (sched/gpushare.py): the request lives in annotations, so it joins the key
        spec = json.dumps({"spec": spec, "gpu": [gpu.count, gpu.milli, list(gpu.models)]}, separators=(",", ":"))
    if pod.spec.resource_claims:
        # DRA claims are per pod (which claims, allocated or not: sched/claims.py), so a pod with claims is a
        # shape of its own, never batched (upstream's DynamicResources makes such pods unsignable too).
        return json.dumps({"spec": spec, "pod": pod.key}, separators=(",", ":"))
    if pod.spec.topology_spread_constraints:
        return json.dumps({"spec": spec, "labels": pod.metadata.labels, "namespace": pod.metadata.namespace},
                          sort_keys=True, separators=(",", ":"))
    return spec


@dataclass
class PodShape:
    id: int
    pod: Pod                         # first pod seen with this signature
    requests: dict[str, int]         # upstream PodRequests
    nonzero: np.ndarray              # (2,) int64 cpu/memory as a bound pod adds to NonZeroRequested
    scoring: np.ndarray              # (2,) int64 cpu/memory as NodeResourcesFit scoring reads the incoming pod
    host_ports: list[tuple[str, str, int]]
    unmodelled: tuple[str, ...]      # constraints phalanx does not evaluate yet (reported as warnings)
    gpu: object = None               # gpus.GpuRequest of a GPU-share pod (sched/gpushare.py): per-pod path only

    @property
    def has_spread(self) -> bool:
        return bool(self.pod.spec.topology_spread_constraints)

    @property
    def has_claims(self) -> bool:
        """DRA resourceClaims: evaluated per pod by DynamicResources (sched/claims.py); one pod per shape."""
        return bool(self.pod.spec.resource_claims)

    def request_vector(self, tensors: ClusterTensors) -> np.ndarray:
        return tensors.request_vector(self.requests)


def unmodelled_constraints(pod: Pod, system_default_spreading: bool) -> tuple[str, ...]:
    """What in the pod phalanx cannot honour yet; each is reported, never silently dropped."""
    found = []
    aff = pod.spec.affinity
    if aff is not None and (aff.pod_affinity or aff.pod_anti_affinity):
        found.append("podAffinity/podAntiAffinity (InterPodAffinity is not modelled yet; ignored)")
    volumes = [v for v in pod.spec.volumes if set(v) - _NEUTRAL_VOLUMES]
    if volumes:
        found.append("volumes " + ", ".join(sorted({k for v in volumes for k in v if k != "name"}))
                     + " (volume plugins are not modelled yet; ignored)")
    if (system_default_spreading and not pod.spec.topology_spread_constraints
            and any(o.kind in _SPREAD_OWNERS and o.controller for o in pod.metadata.owner_references)):
        found.append("system default topology spreading for controller-owned pods (needs the owner's selector; "
                     "not modelled)")
    return tuple(found)


class ShapeTable:
    """Interns pods into shapes by signature."""

    def __init__(self, system_default_spreading: bool = True):
        self.by_signature: dict[str, PodShape] = {}
        # Pods built from one template share their PodSpec object; remembering the object (not just its id,
        # which could be reused after it is freed) skips re-serializing the spec.
        self.by_spec: dict[int, tuple[object, PodShape]] = {}
        self.shapes: list[PodShape] = []
        self.system_default_spreading = system_default_spreading

    def intern(self, pod: Pod) -> PodShape:
        # Annotations are not in the spec: pods with GPU-share annotations skip the per-spec cache.
        ann = pod.metadata.annotations
        per_spec = (not pod.spec.topology_spread_constraints and not pod.spec.resource_claims
                    and not (ann and device_request(pod) is not None))
        if per_spec:
            hit = self.by_spec.get(id(pod.spec))
            if hit is not None and hit[0] is pod.spec:
                return hit[1]
        sig = signature(pod)
        shape = self.by_signature.get(sig)
        if shape is None:
            scoring = pod_scoring_requests(pod)
            shape = PodShape(len(self.shapes), pod, pod_requests(pod), np.array(pod_nonzero_requests(pod), np.int64),
                             np.array([scoring.get("cpu", 0), scoring.get("memory", 0)], np.int64),
                             pod_host_ports(pod), unmodelled_constraints(pod, self.system_default_spreading),
                             device_request(pod))
            self.by_signature[sig] = shape
            self.shapes.append(shape)
        if per_spec:
            self.by_spec[id(pod.spec)] = (pod.spec, shape)
        return shape
