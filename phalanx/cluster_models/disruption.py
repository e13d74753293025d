"""policy/v1 PodDisruptionBudget, as preemption reads it, and its budget as the disruption controller keeps it.

Upstream: staging api/policy/v1/types.go; validation (v1.36) pkg/apis/policy/validation ValidatePodDisruptionBudget
(the spec only: minAvailable and maxUnavailable not both, each ValidatePositiveIntOrPercent and
IsNotMoreThan100Percent, the selector, unhealthyPodEvictionPolicy), then the API server's generic object-meta check
(apiserver registry/rest BeforeCreate: ValidateObjectMetaAccessor with path.ValidatePathSegmentName, so a PDB's name
is any path segment, upper case included; the namespace, labels and annotations as every kind's, load.py);
the budget pkg/controller/disruption/disruption.go (getExpectedPodCount, updatePdbStatus).

DefaultPreemption reads `status.disruptionsAllowed` and `status.disruptedPods`. phalanx keeps the controller's
`desiredHealthy` fixed from the input and recounts the healthy pods (bound pods the selector matches) as pods come
and go, so a budget spent by one preemption is spent for the next (docs/semantics.md, "Preemption").
"""
from __future__ import annotations

import math
from typing import Any

from pydantic import Field, StrictInt, model_validator

from .controllers import IntOrString, int_or_percent_problem, over_100_percent_problem
from .jobs import go_json, not_supported, selector_json
from .objects import K8sModel, LabelSelector, ObjectMeta, selector_problems
from .workloads import path_segment_errors

UNHEALTHY_POD_EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")      # sorted, as upstream lists them


class PodDisruptionBudgetSpec(K8sModel):
    min_available: IntOrString | None = None
    max_unavailable: IntOrString | None = None
    selector: LabelSelector | None = None
    unhealthy_pod_eviction_policy: str | None = None      # read only to be validated: preemption does not use it


def pdb_spec_problem(spec: PodDisruptionBudgetSpec) -> str | None:
    """ValidatePodDisruptionBudgetSpec's first error, in its order."""
    if spec.min_available is not None and spec.max_unavailable is not None:
        # The bad value is the internal PodDisruptionBudgetSpec struct (no json tags; the selector's own tags).
        shown = (f'{{"MinAvailable":{go_json(spec.min_available)},'
                 f'"Selector":{"null" if spec.selector is None else selector_json(spec.selector)},'
                 f'"MaxUnavailable":{go_json(spec.max_unavailable)},'
                 f'"UnhealthyPodEvictionPolicy":{go_json(spec.unhealthy_pod_eviction_policy)}}}')
        return f"spec: Invalid value: {shown}: minAvailable and maxUnavailable cannot be both set"
    for value, path in ((spec.min_available, "spec.minAvailable"), (spec.max_unavailable, "spec.maxUnavailable")):
        problem = None if value is None else (int_or_percent_problem(value, path)
                                              or over_100_percent_problem(value, path))
        if problem is not None:
            return problem
    if spec.selector is not None:
        problems = selector_problems(spec.selector, "spec.selector")
        if problems:
            return problems[0]
    policy = spec.unhealthy_pod_eviction_policy
    if policy is not None and policy not in UNHEALTHY_POD_EVICTION_POLICIES:
        return not_supported("spec.unhealthyPodEvictionPolicy", policy, UNHEALTHY_POD_EVICTION_POLICIES)
    return None


class PodDisruptionBudgetStatus(K8sModel):
    disruptions_allowed: StrictInt = Field(default=0, ge=0)
    current_healthy: StrictInt = Field(default=0, ge=0)
    desired_healthy: StrictInt = Field(default=0, ge=0)
    expected_pods: StrictInt = Field(default=0, ge=0)
    disrupted_pods: dict[str, Any] = Field(default_factory=dict)    # pod name -> the time its eviction began


class PodDisruptionBudget(K8sModel):
    kind: str = "PodDisruptionBudget"
    metadata: ObjectMeta
    spec: PodDisruptionBudgetSpec = Field(default_factory=PodDisruptionBudgetSpec)
    status: PodDisruptionBudgetStatus | None = None

    @model_validator(mode="after")
    def _rules(self) -> "PodDisruptionBudget":
        if not self.metadata.namespace:
            self.metadata.namespace = "default"
        problem = pdb_spec_problem(self.spec)
        if problem is not None:
            raise ValueError(problem)
        # ValidatePodDisruptionBudget checks no name; BeforeCreate's generic check, after it, wants a path segment.
        errors = path_segment_errors(self.metadata.name)
        if errors:
            raise ValueError(f"metadata.name: Invalid value: {go_json(self.metadata.name)}: {errors[0]}")
        return self

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"


def _scaled(value: int | str, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent(value, total, roundUp=true)."""
    if isinstance(value, int):
        return value
    return math.ceil(int(value[:-1]) * total / 100)


def desired_healthy(pdb: PodDisruptionBudget, matching: int) -> int:
    """The controller's desiredHealthy (getExpectedPodCount) for a PDB over `matching` pods. The controller scales
    percentages and maxUnavailable by its workload controllers' replicas; phalanx models no controllers, so the
    expected count is the number of pods the selector matches."""
    spec = pdb.spec
    if spec.max_unavailable is not None:
        return max(0, matching - _scaled(spec.max_unavailable, matching))
    if spec.min_available is not None:
        return _scaled(spec.min_available, matching)
    return matching + 1        # neither set: expectedCount is 0 and the controller allows no disruption


def budget_floor(pdb: PodDisruptionBudget, healthy: int) -> int:
    """desiredHealthy fixed at load: disruptionsAllowed = max(0, healthy now - this). From the status when the
    input has one (so `status.disruptionsAllowed` holds at load), otherwise computed from the spec."""
    if pdb.status is not None:
        return healthy - pdb.status.disruptions_allowed
    return desired_healthy(pdb, healthy)
