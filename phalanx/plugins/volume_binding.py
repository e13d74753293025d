"""VolumeBinding's args. The plugin itself (PersistentVolumeClaims bound and provisioned with the pod) is not modelled
(plugins/__init__.py UNMODELLED), but a configuration's pluginConfig for it is decoded, defaulted and validated as
upstream's: a bad one fails here too. Upstream: pkg/scheduler/apis/config/{types_pluginargs.go,v1/defaults.go,
validation/validation_pluginargs.go} (VolumeBindingArgs)."""
from __future__ import annotations

from pydantic import Field, ValidationInfo, field_validator, model_validator

from ..cluster_models.objects import Int64
from ..kernels.node_resources_fit import MAX_CUSTOM_PRIORITY_SCORE
from .framework import ArgsInvalid, PluginArgs
from .node_resources_fit import UtilizationShapePoint, shape_errors

DEFAULT_BIND_TIMEOUT_S = 600        # SetDefaults_VolumeBindingArgs
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
