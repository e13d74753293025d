"""Pod shapes: pods that the filters and scores cannot tell apart share one shape (KEP-5598 signature).

The signature is the pod's scheduling-relevant spec plus what the profile's plugins read beyond it (their
`signature`: labels and namespace for PodTopologySpread and InterPodAffinity pods, the pod itself for DRA claims,
the GPU-share annotations). A shape holds what is fixed for the pod — its requests, ports and the warnings for what
phalanx does not model — while vocabulary-dependent state (taint masks, label tests) is prepared at each
evaluation, because vocabularies grow as pods bind.
"""
from __future__ import annotations

import json
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..cluster_models import Pod
from ..cluster_models.requests import pod_load, pod_scoring_cpu_memory
from ..cluster_models.tensors import ClusterTensors, has_pod_terms, pod_host_ports
from ..plugins.volumes import READ_SOURCES

# Not part of a pod's placement: who it is, when it runs, queue-only fields, and its group (the group decides
# how pods are cycled, not where one pod fits). schedulerName stays: pods of two profiles never share a run.
_UNSIGNED_FIELDS = {"node_name", "priority", "priority_class_name", "preemption_policy", "scheduling_gates",
                    "scheduling_group", "workload_ref", "restart_policy", "dns_policy", "active_deadline_seconds"}
# Volume sources that never constrain placement (an `image` volume only adds to ImageLocality's score, which models it),
# and those the modelled volume plugins read (plugins/volumes.py).
_NEUTRAL_VOLUMES = {"name", "emptyDir", "configMap", "secret", "downwardAPI", "projected", "hostPath", "image"}
_MODELLED_VOLUMES = _NEUTRAL_VOLUMES | set(READ_SOURCES)


_SPEC, _STATUS, _META = operator.attrgetter("spec"), operator.attrgetter("status"), operator.attrgetter("metadata")
_LABELS, _ANNOTATIONS = operator.attrgetter("labels"), operator.attrgetter("annotations")
_NAMESPACE = operator.attrgetter("namespace")


def run_starts(n: int, columns: list[tuple[list, Callable]]) -> list[int]:
    """0, every position where some (column, differ) pair says the value differs from the one before, then n: the
    starts of runs of consecutive equal rows. Compared column by column (C loops), not row by row."""
    if n < 2:
        return list(range(n + 1))
    new = np.zeros(n, bool)
    new[0] = True
    for column, differ in columns:
        new[1:] |= np.fromiter(map(differ, column[1:], column), bool, n - 1)
    return [*np.flatnonzero(new).tolist(), n]


def template_runs(pods: list[Pod]) -> list[int]:
    """Where the runs of consecutive pods made from one template start, then len(pods): a run's pods share their
    spec, status, labels and annotations objects and their namespace (a controller's replicas, a loader's), so what
    intake reads of one it reads of all but the name."""
    metas = list(map(_META, pods))
    return run_starts(len(pods), [(list(map(_SPEC, pods)), operator.is_not),
                                  (list(map(_STATUS, pods)), operator.is_not),
                                  (list(map(_LABELS, metas)), operator.is_not),
                                  (list(map(_ANNOTATIONS, metas)), operator.is_not),
                                  (list(map(_NAMESPACE, metas)), operator.ne)])


# The pod's resource requirements besides: the fields a family's shapes may differ in (`family`).
_FAMILY_UNSIGNED = {**dict.fromkeys(_UNSIGNED_FIELDS, True), "resources": True,
                    "containers": {"__all__": {"resources"}}, "init_containers": {"__all__": {"resources"}}}


def signature(pod: Pod, extra: dict | None = None) -> tuple[str, tuple]:
    """(family, requirements): the spec without the pod's resource requirements (its containers', init containers'
    and pod-level `resources`) as JSON in field order (pydantic's serializer, the cheapest exact form) with the
    plugins' `extra` parts; then those requirements, exactly (ResourceList.key). Equal specs give equal signatures;
    specs equal up to the order of map keys may not, which only costs a batching opportunity. Every field is
    written: leaving out those at their defaults makes the serializer build each default to compare (1.7x the time
    of the whole spec)."""
    spec = pod.spec
    # the serializer's own call: model_dump_json's wrapper is an eighth of the dump
    fam = spec.__pydantic_serializer__.to_json(spec, by_alias=True, exclude=_FAMILY_UNSIGNED).decode()
    if extra:
        fam = json.dumps({"spec": fam, "plugins": extra}, sort_keys=True, separators=(",", ":"))
    return fam, (_requirements(spec.resources), tuple(_requirements(c.resources) for c in spec.containers),
                 tuple(_requirements(c.resources) for c in spec.init_containers))


def _requirements(resources) -> tuple | None:
    if resources is None:
        return None
    claims = resources.claims
    return (resources.requests.key(), resources.limits.key(),
            tuple([(c.name, c.request) for c in claims]) if claims else ())


@dataclass
class PodShape:
    id: int
    pod: Pod                         # first pod seen with this signature
    requests: dict[str, int]         # upstream PodRequests
    nonzero: np.ndarray              # (2,) int64 cpu/memory as a bound pod adds to NonZeroRequested
    scoring: np.ndarray              # (2,) int64 cpu/memory as NodeResourcesFit scoring reads the incoming pod
    host_ports: list[tuple[str, str, int]]
    unmodelled: tuple[str, ...]      # constraints phalanx does not evaluate yet (reported as warnings)
    family: str                      # its signature without the pod's resource requirements (signature): shapes
                                     # of one family differ at most in their requests, so the plugins that do not
                                     # read them (Plugin.reads_requests) prepare them alike
    pod_terms: bool = True           # whether its pods hold pod (anti-)affinity terms (tensors.has_pod_terms)

    def request_vector(self, tensors: ClusterTensors) -> np.ndarray:
        return tensors.request_vector(self.requests)


def unmodelled_constraints(pod: Pod, framework, cluster) -> tuple[str, ...]:
    """What in the pod phalanx cannot honour yet (or, on this cluster, does not evaluate); each is reported once,
    never silently dropped."""
    found = []
    volumes = [v for v in pod.spec.volumes if set(v) - _MODELLED_VOLUMES]
    if volumes:
        found.append("volumes " + ", ".join(sorted({k for v in volumes for k in v if k not in _MODELLED_VOLUMES}))
                     + " (CSI inline volumes and the attach limits of in-tree volumes are not modelled; ignored)")
    for plugin in framework.warners:
        found += plugin.warnings(pod, cluster)
    return tuple(dict.fromkeys(found))


class _FamilyTraits(NamedTuple):
    """What the shapes of one family (PodShape.family) share: read from the spec without its resource requirements
    (the plugins' warnings read volumes)."""
    host_ports: list[tuple[str, str, int]]
    unmodelled: tuple[str, ...]
    pod_terms: bool


class ShapeTable:
    """Interns pods into shapes by signature, for one profile (its plugins sign the pods) and one cluster (what the
    plugins warn about may depend on it)."""

    def __init__(self, framework, cluster):
        self.framework = framework
        self.cluster = cluster
        self.by_signature: dict[tuple[str, tuple], PodShape] = {}
        self.by_family: dict[str, _FamilyTraits] = {}
        # Pods built from one template share their PodSpec, labels and annotations objects: remembering the objects
        # (not just their ids, which could be reused after they are freed) of pods no plugin signs beyond those
        # objects and the namespace skips both the plugins' signatures and re-serializing the spec.
        self.by_template: dict[tuple[int, int, int, str], tuple[object, object, object, PodShape]] = {}
        self.shapes: list[PodShape] = []

    def intern(self, pod: Pod) -> PodShape:
        return self._intern(pod)[0]

    def _intern(self, pod: Pod) -> tuple[PodShape, bool]:
        """(the pod's shape, whether its template objects decide it: every pod made from them has it)."""
        meta = pod.metadata
        template = (id(pod.spec), id(meta.labels), id(meta.annotations), meta.namespace)
        hit = self.by_template.get(template)
        if hit is not None and hit[0] is pod.spec and hit[1] is meta.labels and hit[2] is meta.annotations:
            return hit[3], True
        extra = self.framework.signature(pod)
        sig = signature(pod, extra)
        shape = self.by_signature.get(sig)
        if shape is None:
            requests, nonzero = pod_load(pod)        # remembered: the pod's binding reads them again
            # What the spec says besides its requirements is its family's (host ports, pod terms, volumes).
            kin = self.by_family.get(sig[0])
            if kin is None:
                kin = self.by_family[sig[0]] = _FamilyTraits(
                    pod_host_ports(pod), unmodelled_constraints(pod, self.framework, self.cluster),
                    has_pod_terms(pod.spec))
            shape = PodShape(len(self.shapes), pod, dict(requests), np.array(nonzero, np.int64),
                             np.array(pod_scoring_cpu_memory(pod, nonzero), np.int64), kin.host_ports,
                             kin.unmodelled, sig[0], kin.pod_terms)
            self.by_signature[sig] = shape
            self.shapes.append(shape)
        by_template = not extra or self.framework.signs_by_template(pod.spec)
        if by_template:
            self.by_template[template] = (pod.spec, meta.labels, meta.annotations, shape)
        return shape, by_template

    def intern_all(self, pods: list[Pod], starts: list[int] | None = None) -> list[PodShape]:
        """intern for each pod; the pods of a template run (template_runs, or `starts` given) take the shape of its
        first without a lookup when that shape is the template's."""
        if starts is None:
            starts = template_runs(pods)
        shapes: list[PodShape] = []
        for a, b in zip(starts, starts[1:]):
            shape, by_template = self._intern(pods[a])
            if by_template:
                shapes += [shape] * (b - a)
            else:
                shapes.append(shape)
                shapes += [self._intern(pod)[0] for pod in pods[a + 1:b]]
        return shapes
