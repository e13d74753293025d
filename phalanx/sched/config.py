"""Scheduler profile: which plugins run, in which order, with which weights and arguments.

Mirrors the parts of KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) that change decisions;
`load_profile` reads profiles[0] of such a file.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from ..cluster_models.errors import InputError

# v1.36 default profile, filter plugins in upstream order (volume, DRA and inter-pod plugins are not modelled yet;
# see docs/semantics.md).
DEFAULT_FILTERS = ("NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts",
                   "NodeResourcesFit", "PodTopologySpread")
DEFAULT_SCORES = (("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1),
                  ("PodTopologySpread", 2), ("NodeResourcesBalancedAllocation", 1))
FIT_STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
COMPAT_VERSIONS = ("1.36", "1.35")
# Plugins of the default profile phalanx accepts in a configuration but does not model; enabling one is
# not an error, it is reported as a warning by the scheduler.
UNMODELLED_PLUGINS = ("NodeName", "ImageLocality", "InterPodAffinity", "VolumeRestrictions", "NodeVolumeLimits",
                      "VolumeBinding", "VolumeZone", "DynamicResources", "SchedulingGates", "PrioritySort",
                      "DefaultBinder", "DefaultPreemption", "GangScheduling", "TopologyAware")


@dataclass(frozen=True)
class Profile:
    filters: tuple[str, ...] = DEFAULT_FILTERS
    scores: tuple[tuple[str, int], ...] = DEFAULT_SCORES            # (plugin, weight)
    fit_strategy: str = "LeastAllocated"
    fit_resources: tuple[tuple[str, int], ...] = (("cpu", 1), ("memory", 1))
    rtcr_shape: tuple[tuple[int, int], ...] = ((0, 10), (100, 0))    # (utilization %, score 0..10)
    balanced_resources: tuple[tuple[str, int], ...] = (("cpu", 1), ("memory", 1))
    percentage_of_nodes_to_score: int = 100                          # 0: upstream adaptive formula
    compat: str = "1.36"
    system_default_spreading: bool = True                            # PodTopologySpread defaultingType System
    ignored_plugins: tuple[str, ...] = field(default=())              # enabled in config but not modelled

    def __post_init__(self):
        if self.fit_strategy not in FIT_STRATEGIES:
            raise InputError(f"profile: scoringStrategy.type: unknown strategy {self.fit_strategy!r}")
        if self.compat not in COMPAT_VERSIONS:
            raise InputError(f"profile: compat: unsupported version {self.compat!r} (use one of "
                             f"{', '.join(COMPAT_VERSIONS)})")
        if not 0 <= self.percentage_of_nodes_to_score <= 100:
            raise InputError("profile: percentageOfNodesToScore: must be between 0 and 100")

    def weight(self, plugin: str) -> int:
        return dict(self.scores).get(plugin, 0)


DEFAULT_PROFILE = Profile()

_ALL_FILTERS = set(DEFAULT_FILTERS)
_ALL_SCORES = {name for name, _ in DEFAULT_SCORES}


def profile_from_config(doc: dict, compat: str = "1.36") -> Profile:
    """profiles[0] of a KubeSchedulerConfiguration document, applied on top of the v1.36 defaults."""
    kind = doc.get("kind")
    if kind != "KubeSchedulerConfiguration":
        raise InputError(f"scheduler config: kind: expected KubeSchedulerConfiguration, got {kind!r}")
    profiles = doc.get("profiles") or [{}]
    prof = profiles[0] or {}
    plugins = prof.get("plugins") or {}
    filters = list(DEFAULT_FILTERS)
    scores = list(DEFAULT_SCORES)
    ignored: list[str] = []

    section = plugins.get("filter") or {}
    disabled = [p.get("name") for p in section.get("disabled") or []]
    if "*" in disabled:
        filters = []
    filters = [f for f in filters if f not in disabled]
    for p in section.get("enabled") or []:
        name = p.get("name")
        if name in _ALL_FILTERS:
            if name not in filters:
                filters.append(name)
        elif name in UNMODELLED_PLUGINS:
            ignored.append(name)
        else:
            raise InputError(f"KubeSchedulerConfiguration: profiles[0].plugins.filter.enabled: unknown plugin {name!r}")

    section = plugins.get("score") or {}
    disabled = [p.get("name") for p in section.get("disabled") or []]
    if "*" in disabled:
        scores = []
    scores = [(n, w) for n, w in scores if n not in disabled]
    for i, p in enumerate(section.get("enabled") or []):
        name, weight = p.get("name"), p.get("weight")
        if weight is not None and (not isinstance(weight, int) or weight < 0):
            raise InputError(f"KubeSchedulerConfiguration: profiles[0].plugins.score.enabled[{i}].weight: "
                             f"must be a non-negative integer")
        if name in _ALL_SCORES:
            default = dict(DEFAULT_SCORES)[name]
            scores = [(n, w) for n, w in scores if n != name] + [(name, default if weight is None else weight)]
        elif name in UNMODELLED_PLUGINS:
            ignored.append(name)
        else:
            raise InputError(f"KubeSchedulerConfiguration: profiles[0].plugins.score.enabled: unknown plugin {name!r}")
    # Upstream treats weight 0 as "use the default weight" only when unset; an explicit 0 is rejected by
    # validation ("must be in the range [1, 100]") for score plugins.
    for name, weight in scores:
        if weight < 1 or weight > 100:
            raise InputError(f"KubeSchedulerConfiguration: profiles[0].plugins.score: weight of {name} must be "
                             f"in the range [1, 100]")

    kwargs: dict = {"filters": tuple(filters), "scores": tuple(scores), "ignored_plugins": tuple(ignored),
                    "compat": compat}
    pct = prof.get("percentageOfNodesToScore", doc.get("percentageOfNodesToScore"))
    if pct is not None:
        kwargs["percentage_of_nodes_to_score"] = int(pct)
    for arg in prof.get("pluginConfig") or []:
        name, args = arg.get("name"), arg.get("args") or {}
        if name == "NodeResourcesFit":
            strategy = args.get("scoringStrategy") or {}
            if "type" in strategy:
                kwargs["fit_strategy"] = strategy["type"]
            if strategy.get("resources"):
                kwargs["fit_resources"] = tuple((r["name"], int(r.get("weight", 1))) for r in strategy["resources"])
            shape = (strategy.get("requestedToCapacityRatio") or {}).get("shape")
            if shape:
                kwargs["rtcr_shape"] = tuple((int(p["utilization"]), int(p["score"])) for p in shape)
        elif name == "NodeResourcesBalancedAllocation":
            if args.get("resources"):
                kwargs["balanced_resources"] = tuple((r["name"], int(r.get("weight", 1))) for r in args["resources"])
        elif name == "PodTopologySpread":
            kind = args.get("defaultingType", "System")
            if kind == "List" and args.get("defaultConstraints"):
                raise InputError("KubeSchedulerConfiguration: PodTopologySpread.defaultConstraints: "
                                 "custom default constraints are not supported yet")
            kwargs["system_default_spreading"] = kind == "System"
    _validate_shape(kwargs.get("rtcr_shape", Profile.rtcr_shape))
    return Profile(**kwargs)


def _validate_shape(shape) -> None:
    prev = -1
    for u, s in shape:
        if not 0 <= u <= 100 or u <= prev:
            raise InputError("KubeSchedulerConfiguration: requestedToCapacityRatio.shape: utilization values "
                             "must be strictly increasing within [0, 100]")
        if not 0 <= s <= 10:
            raise InputError("KubeSchedulerConfiguration: requestedToCapacityRatio.shape: score must be in [0, 10]")
        prev = u


def load_profile(path: str | Path, compat: str = "1.36") -> Profile:
    try:
        doc = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(f"{path}: cannot read scheduler config: {str(exc).splitlines()[0]}") from None
    if not isinstance(doc, dict):
        raise InputError(f"{path}: scheduler config must be a mapping")
    return profile_from_config(doc, compat=compat)


def with_compat(profile: Profile, compat: str) -> Profile:
    return replace(profile, compat=compat)
