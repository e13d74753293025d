"""policy/v1 PodDisruptionBudget, as preemption reads it, and its budget as the disruption controller keeps it.

Upstream: staging api/policy/v1/types.go; validation pkg/apis/policy/validation (ValidatePodDisruptionBudgetSpec:
minAvailable, maxUnavailable, selector, unhealthyPodEvictionPolicy);
the budget pkg/controller/disruption/disruption.go (getExpectedPodCount, updatePdbStatus).

DefaultPreemption reads `status.disruptionsAllowed` and `status.disruptedPods`. phalanx keeps the controller's
`desiredHealthy` fixed from the input and recounts the healthy pods (bound pods the selector matches) as pods come
and go, so a budget spent by one preemption is spent for the next (docs/semantics.md, "Preemption").
"""
from __future__ import annotations

import json
import math
import re
from typing import Any

from pydantic import Field, StrictInt, field_validator, model_validator

from .objects import INT32_MAX, K8sModel, LabelSelector, ObjectMeta, selector_problems

_PERCENT = re.compile(r"^[0-9]+%$")


def _int_or_percent(value: Any) -> Any:
    """ValidatePositiveIntOrPercent and IsValidPercent (and at most 100% for a percentage)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"Invalid value: {value!r}: must be an integer or percentage (e.g '5%')")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"Invalid value: {value}: must be greater than or equal to 0")
        if value > INT32_MAX:
            raise ValueError(f"Invalid value: {value}: must be a 32-bit integer")
        return value
    if isinstance(value, str):
        if not _PERCENT.match(value):
            raise ValueError(f'Invalid value: "{value}": a valid percent string must be a numeric string '
                             f"followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is "
                             f"'[0-9]+%')")
        if int(value[:-1]) > 100:
            raise ValueError(f'Invalid value: "{value}": must not be greater than 100%')
        return value
    raise ValueError(f"Invalid value: {value!r}: must be an integer or percentage (e.g '5%')")


UNHEALTHY_POD_EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")      # sorted, as upstream lists them


class PodDisruptionBudgetSpec(K8sModel):
    min_available: StrictInt | str | None = None
    max_unavailable: StrictInt | str | None = None
    selector: LabelSelector | None = None
    unhealthy_pod_eviction_policy: str | None = None      # read only to be validated: preemption does not use it

    @field_validator("min_available", "max_unavailable", mode="before")
    @classmethod
    def _amount(cls, value: Any) -> Any:
        return _int_or_percent(value)

    @field_validator("unhealthy_pod_eviction_policy")
    @classmethod
    def _eviction_policy(cls, value: str | None) -> str | None:
        if value is not None and value not in UNHEALTHY_POD_EVICTION_POLICIES:
            supported = ", ".join(f'"{v}"' for v in UNHEALTHY_POD_EVICTION_POLICIES)
            raise ValueError(f"Unsupported value: {json.dumps(value, ensure_ascii=False)}: supported values: "
                             f"{supported}")
        return value

    @model_validator(mode="after")
    def _one_of(self) -> "PodDisruptionBudgetSpec":
        if self.min_available is not None and self.max_unavailable is not None:
            raise ValueError("Invalid value: minAvailable and maxUnavailable cannot be both set")
        if self.selector is not None:
            problems = selector_problems(self.selector, "selector")
            if problems:
                raise ValueError(problems[0])
        return self


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
    def _namespace_defaults(self) -> "PodDisruptionBudget":
        if not self.metadata.namespace:
            self.metadata.namespace = "default"
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
