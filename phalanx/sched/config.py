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
    fit_ignored_resources: tuple[str, ...] = ()                      # NodeResourcesFit ignoredResources
    fit_ignored_groups: tuple[str, ...] = ()                         # NodeResourcesFit ignoredResourceGroups
    scheduler_name: str = "default-scheduler"                        # pods naming another scheduler are left
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


def _entries(section: dict, where: str) -> tuple[list[tuple[str, int | None]], list[str]]:
    """(enabled (name, weight or None), disabled names) of one extension point's plugin set."""
    enabled = []
    for i, p in enumerate(section.get("enabled") or []):
        name, weight = p.get("name"), p.get("weight")
        if not isinstance(name, str):
            raise InputError(f"KubeSchedulerConfiguration: {where}.enabled[{i}].name: required")
        if weight is not None and (not isinstance(weight, int) or not 0 <= weight <= 100):
            raise InputError(f"KubeSchedulerConfiguration: {where}.enabled[{i}].weight: must be an integer in "
                             f"the range [0, 100]")
        enabled.append((name, weight))
    return enabled, [p.get("name") for p in section.get("disabled") or []]


def _merge_defaults(defaults, section: dict, where: str):
    """mergePluginSet: disabled defaults go, re-configured defaults change in place, new plugins append."""
    enabled, disabled = _entries(section, where)
    custom = dict(enabled)
    merged = [] if "*" in disabled else [(n, custom.get(n, w) if n in custom else w)
                                         for n, w in defaults if n not in disabled]
    names = {n for n, _ in merged}
    return merged + [(n, w) for n, w in enabled if n not in names and n not in dict(defaults)]


def _expand(plugins: dict, point: str, defaults, known: set[str], ignored: list[str]):
    """The plugins of one extension point, in upstream's order (expandMultiPointPlugins): those configured at
    the point itself that are also in multiPoint first, in their listed order; then the remaining multiPoint
    plugins; then the point's other plugins. A weight of 0 or none at the point itself means 1."""
    multipoint = _merge_defaults(defaults, plugins.get("multiPoint") or {}, "profiles[0].plugins.multiPoint")
    enabled, disabled = _entries(plugins.get(point) or {}, f"profiles[0].plugins.{point}")
    if "*" in disabled:
        multipoint = []
    multipoint = [(n, w) for n, w in multipoint if n not in disabled]
    in_multipoint = {n for n, _ in multipoint}
    at_point = {n for n, _ in enabled}
    ordered = ([(n, w or 1) for n, w in enabled if n in in_multipoint]
               + [(n, w or 1) for n, w in multipoint if n not in at_point]
               + [(n, w or 1) for n, w in enabled if n not in in_multipoint])
    out = []
    for name, weight in ordered:
        if name in known:
            out.append((name, weight))
        elif name in UNMODELLED_PLUGINS:
            ignored.append(name)
        else:
            raise InputError(f"KubeSchedulerConfiguration: profiles[0].plugins.{point}: unknown plugin {name!r}")
    return out


def profile_from_config(doc: dict, compat: str = "1.36") -> Profile:
    """profiles[0] of a KubeSchedulerConfiguration document, applied on top of the v1.36 defaults."""
    kind = doc.get("kind")
    if kind != "KubeSchedulerConfiguration":
        raise InputError(f"scheduler config: kind: expected KubeSchedulerConfiguration, got {kind!r}")
    profiles = doc.get("profiles") or [{}]
    prof = profiles[0] or {}
    plugins = prof.get("plugins") or {}
    for point in ("preFilter", "preScore"):
        # phalanx ties each plugin's PreFilter to its Filter and PreScore to its Score.
        enabled, disabled = _entries(plugins.get(point) or {}, f"profiles[0].plugins.{point}")
        touched = [n for n in [*dict(enabled), *disabled] if n in _ALL_FILTERS | _ALL_SCORES]
        if touched:
            raise InputError(f"KubeSchedulerConfiguration: profiles[0].plugins.{point}: configuring {touched[0]} "
                             f"separately from its Filter/Score is not supported")
    ignored: list[str] = []
    filters = [n for n, _ in _expand(plugins, "filter", [(f, 0) for f in DEFAULT_FILTERS], _ALL_FILTERS, ignored)]
    scores = _expand(plugins, "score", list(DEFAULT_SCORES), _ALL_SCORES, ignored)

    kwargs: dict = {"filters": tuple(filters), "scores": tuple(scores), "ignored_plugins": tuple(dict.fromkeys(ignored)),
                    "compat": compat, "scheduler_name": prof.get("schedulerName") or "default-scheduler"}
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
                kwargs["fit_resources"] = _resource_weights(strategy["resources"])
            kwargs["fit_ignored_resources"] = tuple(args.get("ignoredResources") or ())
            kwargs["fit_ignored_groups"] = tuple(args.get("ignoredResourceGroups") or ())
            shape = (strategy.get("requestedToCapacityRatio") or {}).get("shape")
            if shape:
                kwargs["rtcr_shape"] = tuple((int(p["utilization"]), int(p["score"])) for p in shape)
        elif name == "NodeResourcesBalancedAllocation":
            if args.get("resources"):
                kwargs["balanced_resources"] = _resource_weights(args["resources"])
        elif name == "PodTopologySpread":
            kind = args.get("defaultingType", "System")
            if kind == "List" and args.get("defaultConstraints"):
                raise InputError("KubeSchedulerConfiguration: PodTopologySpread.defaultConstraints: "
                                 "custom default constraints are not supported yet")
            kwargs["system_default_spreading"] = kind == "System"
        elif name == "NodeAffinity" and args.get("addedAffinity"):
            raise InputError("KubeSchedulerConfiguration: NodeAffinity.addedAffinity: not supported yet")
    _validate_shape(kwargs.get("rtcr_shape", Profile.rtcr_shape))
    return Profile(**kwargs)


def _resource_weights(resources) -> tuple[tuple[str, int], ...]:
    """SetDefaults_NodeResourcesFitArgs / ...BalancedAllocationArgs: a weight of 0 (or none) means 1."""
    return tuple((r["name"], int(r.get("weight") or 1)) for r in resources)


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
