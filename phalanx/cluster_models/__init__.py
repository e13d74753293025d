"""The input layer: Kubernetes manifests -> validated, API-defaulted objects, and the resource arithmetic
kube-scheduler applies to them. Tensor compilation lives in phalanx.cluster_models.tensors."""
from .errors import InputError
from .load import ClusterObjects, load_paths, load_text, parse_objects
from .objects import (
    Affinity,
    Container,
    ContainerPort,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    NodeSpec,
    NodeStatus,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodSchedulingGate,
    PodSchedulingGroup,
    PodSpec,
    PodStatus,
    PreferredSchedulingTerm,
    PriorityClass,
    ResourceList,
    ResourceRequirements,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from .quantity import QuantityError, milli_value, parse_quantity, to_int64, value
from .requests import effective_priority, pod_nonzero_requests, pod_requests, pod_scoring_requests

__all__ = [
    "Affinity", "ClusterObjects", "Container", "ContainerPort", "InputError", "LabelSelector",
    "LabelSelectorRequirement", "Node", "NodeAffinity", "NodeSelector", "NodeSelectorRequirement",
    "NodeSelectorTerm", "NodeSpec", "NodeStatus", "ObjectMeta", "OwnerReference", "Pod", "PodSchedulingGate",
    "PodSchedulingGroup", "PodSpec", "PodStatus", "PreferredSchedulingTerm", "PriorityClass", "QuantityError",
    "ResourceList", "ResourceRequirements", "Taint", "Toleration", "TopologySpreadConstraint", "effective_priority",
    "load_paths", "load_text", "milli_value", "parse_objects", "parse_quantity", "pod_nonzero_requests",
    "pod_requests", "pod_scoring_requests", "to_int64", "value",
]
