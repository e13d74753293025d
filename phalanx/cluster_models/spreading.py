"""The selector default topology spreading gives a pod: what Services, ReplicationControllers, ReplicaSets and
StatefulSets say about it (upstream: pkg/scheduler/framework/plugins/helper/spread.go, DefaultSelector).

  - every Service of the pod's namespace whose spec.selector is set and matches the pod's labels contributes
    its selector's pairs (a Service without a selector matches nothing; an empty one contributes nothing);
  - the pod's controller (the ownerReference with controller: true), looked up by name in the pod's namespace:
    a v1 ReplicationController merges its spec.selector pairs in; an apps/v1 ReplicaSet or StatefulSet adds the
    requirements of its spec.selector. Other owners, and owners not in the input, add nothing.

An empty result means no default constraints (buildDefaultConstraints returns none).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .objects import LabelSelector, Pod

_OWNER_KINDS = {("v1", "ReplicationController"), ("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")}


def _pairs_match(pairs: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in pairs.items())


@dataclass
class DefaultSelectors:
    """Services per namespace and spreading owners per (kind, namespace, name), as loaded."""

    services: dict[str, list[dict[str, str]]] = field(default_factory=dict)    # namespace -> set selectors
    owners: dict[tuple[str, str, str], Any] = field(default_factory=dict)       # (kind, ns, name) -> object
    _known: dict[tuple, LabelSelector | None] = field(default_factory=dict, repr=False, compare=False)  # memo

    @classmethod
    def from_objects(cls, services: Iterable, controllers: Iterable) -> DefaultSelectors:
        """`services`: v1 Services; `controllers`: any objects, of which ReplicationControllers, ReplicaSets and
        StatefulSets are kept."""
        out = cls()
        for service in services:
            if service.spec.selector is not None:
                out.services.setdefault(service.metadata.namespace, []).append(service.spec.selector)
        out.add_owners(controllers)
        return out

    def add_owners(self, controllers: Iterable) -> None:
        """The ReplicationControllers, ReplicaSets and StatefulSets among `controllers` select pods from now on."""
        for obj in controllers:
            kind = type(obj).__name__
            if kind in ("ReplicationController", "ReplicaSet", "StatefulSet"):
                self.owners[(kind, obj.metadata.namespace, obj.metadata.name)] = obj
        self._known.clear()       # a pod that named one of them before it existed had no selector

    def __bool__(self) -> bool:
        return bool(self.services or self.owners)

    def selector(self, pod: Pod) -> LabelSelector | None:
        """The pod's default spreading selector; None when it is empty (computed once per cache_key)."""
        key = self.cache_key(pod)
        if key not in self._known:
            self._known[key] = self._selector(pod)
        return self._known[key]

    def _selector(self, pod: Pod) -> LabelSelector | None:
        namespace, labels = pod.metadata.namespace or "default", pod.metadata.labels
        pairs: dict[str, str] = {}
        for selector in self.services.get(namespace, ()):
            if _pairs_match(selector, labels):
                pairs.update(selector)
        expressions = []
        owner = next((ref for ref in pod.metadata.owner_references if ref.controller), None)
        if owner is not None and (owner.api_version, owner.kind) in _OWNER_KINDS:
            obj = self.owners.get((owner.kind, namespace, owner.name))
            if obj is not None and owner.kind == "ReplicationController":
                pairs.update(obj.spec.selector or {})
            elif obj is not None:
                own = obj.spec.selector
                expressions = [{"key": k, "operator": "In", "values": [v]} for k, v in own.match_labels.items()]
                expressions += [r.model_dump(by_alias=True) for r in own.match_expressions]
        if not pairs and not expressions:
            return None
        return LabelSelector.model_validate({"matchLabels": pairs, "matchExpressions": expressions})

    def cache_key(self, pod: Pod) -> tuple:
        """What selector() reads of the pod (for signatures: pods with equal keys get equal selectors)."""
        owner = next((ref for ref in pod.metadata.owner_references if ref.controller), None)
        ref = (owner.api_version, owner.kind, owner.name) if owner is not None else None
        return pod.metadata.namespace, tuple(sorted(pod.metadata.labels.items())), ref
