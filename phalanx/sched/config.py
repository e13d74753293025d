"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) read as kube-scheduler v1.36 reads it: the
default plugin set, mergePluginSet, multiPoint expansion per extension point, weights, every profile, pluginConfig
args (strictly decoded, defaulted and validated), podInitialBackoffSeconds / podMaxBackoffSeconds.

Upstream: pkg/scheduler/apis/config/v1/{default_plugins,defaults}.go (getDefaultPlugins, applyFeatureGates,
mergePlugins), pkg/scheduler/framework/runtime/framework.go (NewFramework, expandMultiPointPlugins,
getValidScoreWeights), pkg/scheduler/apis/config/validation/validation{,_pluginargs}.go. Errors are one line that
names the config file and the field.

Feature gates are not part of an upstream configuration (kube-scheduler reads them from --feature-gates); phalanx
takes them from `--feature-gates` and also, as a documented extension, from a top-level `featureGates:` map of the
config file.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from pydantic import ValidationError

from ..cluster_models.durations import duration_from_json, duration_text
from ..cluster_models.errors import InputError, validation_problem
from ..cluster_models.jobs import go_json
from ..cluster_models.load import yaml_documents
from ..cluster_models.objects import go_quote, is_extended_resource_name, qualified_name_errors
from ..plugins import EXTENSION_POINTS, REGISTRY, UNMODELLED, UNMODELLED_ARGS
from ..plugins.framework import ArgsInvalid, PluginArgs, aggregate

API_VERSION = "kubescheduler.config.k8s.io/v1"
DEFAULT_SCHEDULER_NAME = "default-scheduler"
COMPAT_VERSIONS = ("1.36", "1.35")

# getDefaultPlugins (v1.36): MultiPoint.Enabled in order, with weights (None: no weight given).
_BASE_PLUGINS: tuple[tuple[str, int | None], ...] = (
    ("SchedulingGates", None), ("PrioritySort", None), ("NodeUnschedulable", None), ("NodeName", None),
    ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", None), ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None), ("NodeVolumeLimits", None), ("VolumeBinding", None), ("VolumeZone", None),
    ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", None),
)

# Feature gates that change decisions, with phalanx's defaults: v1.36's, except the workload-aware scheduling gates,
# which phalanx models on, and SchedulerPopFromBackoffQ, off (docs/semantics.md: with cycles that take no time it
# would drop every woken pod's backoff). StorageCapacityScoring (alpha, off) changes only what VolumeBinding's args
# may hold (plugins/volume_binding.py: its Score, which reads them, is not modelled).
FEATURE_GATES: dict[str, bool] = {
    "DynamicResourceAllocation": True,
    "NodeDeclaredFeatures": True,
    "GenericWorkload": True,
    "GangScheduling": True,
    "TopologyAwareWorkloadScheduling": True,
    "WorkloadAwarePreemption": True,
    "DRAWorkloadResourceClaims": True,
    "WorkloadWithJob": True,
    "TaintTolerationComparisonOperators": False,
    "SchedulerPopFromBackoffQ": False,
    "StorageCapacityScoring": False,
}
# Gates that are locked in v1.36 (cannot be changed).
_LOCKED_GATES = {"DynamicResourceAllocation": True}
_GATE_DEPENDENCIES = {"GangScheduling": ("GenericWorkload",), "TopologyAwareWorkloadScheduling": ("GenericWorkload",),
                      "WorkloadAwarePreemption": ("GangScheduling",),
                      "DRAWorkloadResourceClaims": ("DynamicResourceAllocation", "GenericWorkload")}

# phalanx's own plugins, appended to the default set (after every upstream plugin).
_PHALANX_PLUGINS: tuple[tuple[str, int | None], ...] = (("GpuShare", None),)

# The Go types of the structs a configuration holds that phalanx does not otherwise read (componentbaseconfig's
# LeaderElectionConfiguration and ClientConnectionConfiguration, v1.Extender, ExtenderTLSConfig,
# ExtenderManagedResource), decoded strictly as kube-scheduler decodes them; []byte fields are base64 strings.
_LEADER_ELECTION = {"leaderElect": "bool", "leaseDuration": "duration", "renewDeadline": "duration",
                    "retryPeriod": "duration", "resourceLock": "string", "resourceName": "string",
                    "resourceNamespace": "string"}
_CLIENT_CONNECTION = {"kubeconfig": "string", "acceptContentTypes": "string", "contentType": "string", "qps": "float",
                      "burst": "int32"}
_TOP_BOOLS = ("enableProfiling", "enableContentionProfiling", "delayCacheUntilActive")
_TOP_FIELDS = {"apiVersion", "kind", "parallelism", "leaderElection", "clientConnection", "enableProfiling",
               "enableContentionProfiling", "percentageOfNodesToScore", "podInitialBackoffSeconds",
               "podMaxBackoffSeconds", "profiles", "extenders", "delayCacheUntilActive", "featureGates"}
_PROFILE_FIELDS = {"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"}
_SET_POINTS = ("multiPoint", *EXTENSION_POINTS)


def default_plugins(gates: dict[str, bool]) -> list[tuple[str, int | None]]:
    """getDefaultPlugins + applyFeatureGates for the given gates, then phalanx's own plugins."""
    out = list(_BASE_PLUGINS)
    if gates["NodeDeclaredFeatures"]:
        out.append(("NodeDeclaredFeatures", None))
    if gates["DynamicResourceAllocation"]:
        at = [n for n, _ in out].index("DefaultPreemption")
        out.insert(at, ("DynamicResources", 2))
    if gates["GangScheduling"]:
        out.append(("GangScheduling", None))
    if gates["TopologyAwareWorkloadScheduling"]:
        out += [("TopologyPlacementGenerator", None), ("PodGroupPodsCount", 1)]
    return out + list(_PHALANX_PLUGINS)


@dataclass(frozen=True)
class Profile:
    """One scheduling profile: the plugins enabled per extension point (in order), score weights, plugin args."""
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    plugins: tuple[tuple[str, tuple[str, ...]], ...] = ()     # extension point -> modelled plugins, in order
    weights: tuple[tuple[str, int], ...] = ()                 # score plugin -> weight
    placement_weights: tuple[tuple[str, int], ...] = ()       # placementScore plugin -> weight
    args: tuple[tuple[str, PluginArgs], ...] = ()             # plugin -> its args (defaulted)
    percentage_of_nodes_to_score: int = 100                   # 0: upstream's adaptive formula
    compat: str = "1.36"
    feature_gates: tuple[tuple[str, bool], ...] = tuple(FEATURE_GATES.items())
    ignored_plugins: tuple[str, ...] = ()                     # enabled but not modelled by phalanx
    unmodelled_scores: tuple[str, ...] = ()                   # Score plugins enabled but not modelled (they still
                                                              # count as scoring: see `scoring`)

    def __post_init__(self):
        if self.compat not in COMPAT_VERSIONS:
            raise InputError(f"profile: compat: unsupported version {self.compat!r} (use one of "
                             f"{', '.join(COMPAT_VERSIONS)})")
        if not 0 <= self.percentage_of_nodes_to_score <= 100:
            raise InputError(f"profile: percentageOfNodesToScore: Invalid value: {self.percentage_of_nodes_to_score}: "
                             f"not in valid range [0-100]")

    def enabled(self, point: str) -> tuple[str, ...]:
        return dict(self.plugins).get(point, ())

    @property
    def scoring(self) -> bool:
        """Whether the profile has a Score plugin (upstream HasScorePlugins, modelled or not): without one a cycle
        takes the first feasible node it finds (findNodesThatPassFilters looks for one)."""
        return bool(self.enabled("score") or self.unmodelled_scores)

    def weight(self, plugin: str) -> int:
        return dict(self.weights).get(plugin, 0)

    def arg(self, plugin: str):
        return dict(self.args).get(plugin)


@dataclass(frozen=True)
class SchedulerConfig:
    """A whole configuration: its profiles (a pod goes to the one its spec.schedulerName names) and the queue's
    backoff."""
    profiles: tuple[Profile, ...]
    pod_initial_backoff_s: float = 1.0
    pod_max_backoff_s: float = 10.0
    warnings: tuple[str, ...] = ()                            # configured but not modelled

    def profile(self, scheduler_name: str) -> Profile | None:
        return next((p for p in self.profiles if p.scheduler_name == scheduler_name), None)

    def gate(self, name: str) -> bool:
        """A feature gate of the process (every profile is given the same ones)."""
        return dict(self.profiles[0].feature_gates if self.profiles else FEATURE_GATES)[name]


class _Reader:
    """Parses one document; every error names the source and the field."""

    def __init__(self, source: str):
        self.source = source
        self.invalid: list[str] = []        # ValidateKubeSchedulerConfiguration's errors, in its order

    def report(self, where: str, problem: str) -> None:
        """A validation error: upstream validates the whole decoded configuration and reports every error at once
        (utilerrors.NewAggregate: one as itself, several as "[e1, e2]"); `check` raises them."""
        self.invalid.append(f"{where}: {problem}")

    def check(self) -> None:
        if self.invalid:
            self.fail("", aggregate(self.invalid))

    def fail(self, where: str, problem: str):
        raise InputError(f"{self.source}: {where}: {problem}" if where else f"{self.source}: {problem}")

    def mapping(self, value, where: str) -> dict:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.fail(where, f"expected an object, got {type(value).__name__}")
        return value

    def known(self, doc: dict, fields: set[str], where: str) -> None:
        for key in doc:
            if key not in fields:
                self.fail(f"{where}.{key}" if where else str(key), "unknown field (strict decoding error)")

    def fields(self, doc, kinds: dict[str, str], where: str) -> dict:
        """An object of a struct phalanx does not otherwise read, decoded strictly: its fields known and of their Go
        types (`kinds`: field -> string, bool, int32, int64, float, duration, object or list); null leaves a field
        out."""
        doc = self.mapping(doc, where)
        self.known(doc, set(kinds), where)
        for key, value in doc.items():
            at, kind = f"{where}.{key}" if where else key, kinds[key]
            if value is None:
                continue
            if kind == "string" and not isinstance(value, str):
                self.fail(at, f"expected a string, got {value!r}")
            elif kind == "bool" and not isinstance(value, bool):
                self.fail(at, f"expected true or false, got {value!r}")
            elif kind in ("int32", "int64"):
                self.integer(value, at, int(kind[3:]))
            elif kind == "float" and (isinstance(value, bool) or not isinstance(value, (int, float))):
                self.fail(at, f"expected a number, got {value!r}")
            elif kind == "duration":
                try:
                    duration_from_json(value)
                except ValueError as exc:
                    self.fail(at, str(exc))
            elif kind == "bytes":         # []byte: a base64 string (base64.StdEncoding, as encoding/json decodes it)
                if not isinstance(value, str):
                    self.fail(at, f"expected a string, got {value!r}")
                offset = base64_error_offset(value)
                if offset is not None:
                    self.fail(at, f"illegal base64 data at input byte {offset}")
            elif kind == "object":
                self.mapping(value, at)
            elif kind == "list" and not isinstance(value, list):
                self.fail(at, "expected a list")
        return doc

    def integer(self, value, where: str, bits: int = 32) -> int:
        """An int32 (int64 with bits=64) field: anything else fails decoding, as it does upstream."""
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(where, f"expected an integer, got {value!r}")
        if not -(1 << bits - 1) <= value < 1 << bits - 1:
            self.fail(where, f"expected a {bits}-bit integer, got {value}")
        return value


def parse_gates(text: str, source: str = "--feature-gates") -> dict[str, bool]:
    """`A=true,B=false` (the --feature-gates flag's form)."""
    out = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        name, _, value = item.partition("=")
        if value.lower() not in ("true", "false"):
            raise InputError(f"{source}: {name}: invalid value {value!r} (use true or false)")
        out[name] = value.lower() == "true"
    return out


def feature_gates(overrides: dict[str, bool], source: str = "--feature-gates") -> dict[str, bool]:
    gates = dict(FEATURE_GATES)
    for name, value in overrides.items():
        if name not in FEATURE_GATES:
            raise InputError(f"{source}: {name}: unknown feature gate (known: {', '.join(sorted(FEATURE_GATES))})")
        if name in _LOCKED_GATES and value != _LOCKED_GATES[name]:
            raise InputError(f"{source}: {name}: cannot set feature gate {name} to {str(value).lower()}, "
                             f"feature is locked to {str(_LOCKED_GATES[name]).lower()}")
        gates[name] = value
    for name, needs in _GATE_DEPENDENCIES.items():
        for dep in needs:
            if gates[name] and not gates[dep]:
                raise InputError(f"{source}: {name}: feature gate {name} depends on {dep}, which is disabled")
    return gates


def _named(r: _Reader, item, at: str, fields: set[str]) -> tuple[dict, str]:
    """A list entry with only `fields` and a string `name` (config.Plugin, config.PluginConfig): (the entry, its
    name). The decoder requires no name (an absent one is ""); NewFramework refuses a name no plugin has where a
    plugin set enables it, a pluginConfig entry for it is ignored."""
    item = r.mapping(item, at)
    r.known(item, fields, at)
    name = item.get("name")
    if name is None:
        name = ""
    if not isinstance(name, str):
        r.fail(f"{at}.name", f"expected a string, got {name!r}")
    return item, name


def _entries(r: _Reader, section, where: str) -> tuple[list[tuple[str, int | None, str]], list[str]]:
    """(enabled (name, weight or None, field path), disabled names) of one plugin set."""
    section = r.mapping(section, where)
    r.known(section, {"enabled", "disabled"}, where)
    enabled, disabled = [], []
    for kind, out in (("enabled", enabled), ("disabled", disabled)):
        items = section.get(kind) or []
        if not isinstance(items, list):
            r.fail(f"{where}.{kind}", "expected a list")
        for i, p in enumerate(items):
            at = f"{where}.{kind}[{i}]"
            p, name = _named(r, p, at, {"name", "weight"})
            weight = p.get("weight")
            if weight is not None:
                weight = r.integer(weight, f"{at}.weight")
            out.append((name, weight, at) if kind == "enabled" else name)
    return enabled, disabled


def _merge(defaults, enabled, disabled):
    """mergePluginSet: disabled defaults go (all with "*"), re-configured defaults change in place (taking the
    custom weight, even none), the other custom plugins are appended in order."""
    custom = {name: (i, w) for i, (name, w, _) in enumerate(enabled)}      # the last duplicate wins
    used, out = set(), []
    if "*" not in disabled:
        for name, weight in defaults:
            if name in disabled:
                continue
            if name in custom:
                used.add(custom[name][0])
                out.append((name, custom[name][1]))
            else:
                out.append((name, weight))
    out += [(name, w) for i, (name, w, _) in enumerate(enabled) if i not in used]
    return out


def _implements(name: str, point: str) -> bool:
    """Whether the upstream plugin implements the extension point (modelled by phalanx or not)."""
    if name in REGISTRY:
        return point in REGISTRY[name].points() or point in REGISTRY[name].unmodelled_points
    return point in UNMODELLED.get(name, ())


def _modelled(name: str, point: str) -> bool:
    return name in REGISTRY and point in REGISTRY[name].points()


def _expand(multipoint, sets: dict, point: str) -> list[tuple[str, int | None]]:
    """expandMultiPointPlugins for one extension point (the configuration checked by _check_framework): plugins also
    configured at the point itself first (in the point's order), then the remaining multiPoint plugins, then the
    point's other plugins."""
    enabled, disabled = sets[point]
    if "*" in disabled:
        return [(n, w) for n, w, _ in enabled]
    at_point = {n for n, _, _ in enabled}
    from_multipoint, seen = [], set()
    for name, weight in multipoint:
        if not _implements(name, point) or name in disabled or name in at_point or name in seen:
            continue
        seen.add(name)
        from_multipoint.append((name, weight))
    multi_names = {n for n, _ in multipoint}
    return ([(n, w) for n, w, _ in enabled if n in multi_names] + from_multipoint
            + [(n, w) for n, w, _ in enabled if n not in multi_names])


# NewFramework's extension points in its order (getExtensionPoints, v1.36): the order its checks fail in.
_FRAMEWORK_POINTS = ("preFilter", "filter", "postFilter", "reserve", "preScore", "score", "preBind", "bind", "postBind",
                     "permit", "preEnqueue", "queueSort", "placementGenerate", "placementScore")
assert sorted(_FRAMEWORK_POINTS) == sorted(EXTENSION_POINTS)


def _plugin_type(point: str) -> str:
    """The Go interface of an extension point as NewFramework's errors name it (filter -> FilterPlugin)."""
    return f"{point[0].upper()}{point[1:]}Plugin"


def _framework_fail(r: _Reader, scheduler_name, problem: str):
    """A NewFramework error as scheduler.New reports it (profile.NewMap names the profile)."""
    r.fail("", f"initializing profiles: creating profile for scheduler name {scheduler_name}: {problem}")


def _check_framework(r: _Reader, sets: dict, multipoint, scheduler_name) -> None:
    """NewFramework's checks of the plugin sets, failing at the first as it does, worded as scheduler.New reports
    it: every point's own enabled plugins (updatePluginList: the plugin exists, extends the point, is not listed
    twice), then the multiPoint plugins at each point not disabled with "*" (expandMultiPointPlugins: the plugin
    exists, is not enabled twice through multiPoint). A plugin exists when it is in REGISTRY or UNMODELLED."""
    def fail(problem: str):
        _framework_fail(r, scheduler_name, problem)

    def exists(name: str) -> bool:
        return name in REGISTRY or name in UNMODELLED

    for point in _FRAMEWORK_POINTS:
        seen = set()
        for name, _, _ in sets[point][0]:
            if not exists(name):
                fail(f"{_plugin_type(point)} {go_quote(name)} does not exist")
            if not _implements(name, point):
                fail(f"plugin {go_quote(name)} does not extend {_plugin_type(point)} plugin")
            if name in seen:
                fail(f"plugin {go_quote(name)} already registered as {go_quote(_plugin_type(point))}")
            seen.add(name)
    for point in _FRAMEWORK_POINTS:
        enabled, disabled = sets[point]
        if "*" in disabled:
            continue
        at_point, seen = {n for n, _, _ in enabled}, set()
        for name, _ in multipoint:
            if not exists(name):
                fail(f"{_plugin_type(point)} {go_quote(name)} does not exist")
            if not _implements(name, point) or name in disabled or name in at_point:
                continue
            if name in seen:
                fail(f"plugin {go_quote(name)} already registered as {go_quote(_plugin_type(point))}")
            seen.add(name)


def _weights(points: dict, multipoint, point: str) -> dict[str, int]:
    """getScoreWeights for one extension point (score or placementScore, weighted separately): the first weight
    given (at the point, then multiPoint) wins; none or 0 means 1."""
    out: dict[str, int] = {}
    for name, weight in points.get(point, []):
        out.setdefault(name, weight or 1)
    for name, weight in multipoint:
        if _implements(name, point):
            out.setdefault(name, weight or 1)
    return out


def _args(r: _Reader, entries, where: str, context) -> tuple[dict[str, PluginArgs], dict[str, list[str]]]:
    """pluginConfig: each entry's args strictly decoded into its plugin's args type (decoding errors fail at once),
    defaulted, and validated as validatePluginConfig does (errors reported: a repeated name, a removed plugin, another
    plugin's args, the args' own checks; for plugins not enabled too, which then ignore them); args of plugins without
    an args type are kept unread. Returns (args, the errors of args only their plugin's constructor checks)."""
    if entries is None:
        entries = []
    if not isinstance(entries, list):
        r.fail(where, "expected a list")
    out, seen, deferred = {}, set(), {}
    for j, entry in enumerate(entries):
        at = f"{where}[{j}]"
        entry, name = _named(r, entry, at, {"name", "args"})
        if name in seen:
            r.report(at, f"Duplicate value: {go_quote(name)}")
        seen.add(name)
        if name in _REMOVED_PLUGINS:
            r.report(at, _removed(name))
            continue
        cls = REGISTRY.get(name)
        # Out of tree, or without args: upstream leaves args of no registered kind undecoded.
        kind_of_args = cls.Args if cls is not None else UNMODELLED_ARGS.get(name)
        if kind_of_args is None:
            continue
        raw = dict(r.mapping(entry.get("args"), f"{at}.args"))
        kind = raw.pop("kind", None)
        api = raw.pop("apiVersion", None)
        if kind is not None and kind != f"{name}Args":
            if kind in _ARGS_KINDS:         # validatePluginConfig: another plugin's args type
                r.report(f"{at}.args", f'Invalid value: "{kind}": has to match plugin args')
                continue
            r.fail(f"{at}.args", f"args for plugin {name} were not of type {name}Args, got {kind}")
        if api is not None and api != API_VERSION:
            r.fail(f"{at}.args.apiVersion", f"unsupported version {api!r} (use {API_VERSION})")
        try:
            args = kind_of_args.model_validate(raw, context={"gates": context})
            if cls is not None:
                out[name] = args
        except ValidationError as exc:
            error = exc.errors(include_url=False)[0].get("ctx", {}).get("error")
            if not isinstance(error, ArgsInvalid):
                r.fail("", _args_problem(exc, f"{at}.args"))          # a decoding error
            if kind_of_args.validated_at_construction:
                deferred[name] = error.errors
            else:
                r.invalid += _under(error.errors, f"{at}.args")
    return out, deferred


# invalidPluginsByVersion (validation.go): plugins removed by kubescheduler.config.k8s.io/v1.
_REMOVED_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")
# validatePluginConfig's plugin sets checked for removed plugins (not multiPoint, not the placement points).
_CHECKED_SETS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "reserve",
                 "permit", "preBind", "bind", "postBind")


def _removed(name: str) -> str:
    return (f'Invalid value: {go_quote(name)}: was invalid in version "{API_VERSION}" (KubeSchedulerConfiguration '
            f'is version "{API_VERSION}")')


_ARGS_KINDS = frozenset(f"{name}Args" for name, cls in REGISTRY.items() if cls.Args is not None) | frozenset(
    f"{name}Args" for name in UNMODELLED_ARGS)


def _args_problem(exc: ValidationError, path: str) -> str:
    """A plugin's args error under the args' path: upstream validates args at profiles[i].pluginConfig[j].args, so
    each field error's path continues it (`...args.minCandidateNodesPercentage: Invalid value: ...`), several
    aggregated as `[e1, e2]`."""
    error = exc.errors(include_url=False)[0].get("ctx", {}).get("error")
    problems = error.errors if isinstance(error, ArgsInvalid) else [validation_problem(exc)]
    return aggregate(_under(problems, path))


def _under(problems: list[str], path: str) -> list[str]:
    return [f"{path}.{p}" if _field_first(p) else f"{path}: {p}" for p in problems]


def _field_first(problem: str) -> bool:
    """Whether `problem` starts with a field path ("weight: ...", "resources[0].name: ..."), not an error type."""
    head = problem.split(": ", 1)[0]
    return head[:1].islower() and " " not in head


@dataclass
class _Decoded:
    """A profile as decoded, defaulted and validated, before its framework is built."""
    name: object
    sets: dict
    args: dict
    deferred: dict
    pct: int | None
    queue_sort: tuple                 # its own queueSort set as written: ((name, weight), ...), (disabled, ...)
    plugin_config: object


def _decode_profile(r: _Reader, prof, i: int, gates: dict[str, bool]) -> _Decoded:
    """Decoding (errors fail at once) and validateKubeSchedulerProfile (errors reported): schedulerName, the
    percentage, removed plugins in the plugin sets, pluginConfig."""
    where = f"profiles[{i}]"
    prof = r.mapping(prof, where)
    r.known(prof, _PROFILE_FIELDS, where)
    name = prof.get("schedulerName")
    if name is not None and not isinstance(name, str):
        r.fail(f"{where}.schedulerName", f"expected a string, got {name!r}")
    pct = prof.get("percentageOfNodesToScore")
    if pct is not None:
        pct = r.integer(pct, f"{where}.percentageOfNodesToScore")
    plugins = r.mapping(prof.get("plugins"), f"{where}.plugins")
    r.known(plugins, set(_SET_POINTS), f"{where}.plugins")
    sets = {point: _entries(r, plugins.get(point), f"{where}.plugins.{point}") for point in _SET_POINTS}
    if not name:
        r.report(f"{where}.schedulerName", "Required value")
    if pct is not None and not 0 <= pct <= 100:
        r.report(f"{where}.percentageOfNodesToScore", f"Invalid value: {pct}: not in valid range [0-100]")
    for point in _CHECKED_SETS:
        for k, (plugin, _, _) in enumerate(sets[point][0]):
            if plugin in _REMOVED_PLUGINS:
                r.report(f"{where}.plugins.{point}.enabled[{k}]", _removed(plugin))
    args, deferred = _args(r, prof.get("pluginConfig"), f"{where}.pluginConfig", gates)
    enabled, disabled = sets["queueSort"]
    queue_sort = (tuple((n, w or 0) for n, w, _ in enabled), tuple(disabled))
    return _Decoded(name, sets, args, deferred, pct, queue_sort, prof.get("pluginConfig"))


def _go_plugin_set(queue_sort: tuple) -> str:
    """A config.PluginSet as field.Error shows it (%#v; a set left empty has nil lists)."""
    def plugins(entries):
        if not entries:
            return "[]config.Plugin(nil)"
        return "[]config.Plugin{" + ", ".join(f"config.Plugin{{Name:{go_quote(n)}, Weight:{w}}}"
                                              for n, w in entries) + "}"
    enabled, disabled = queue_sort
    return f"config.PluginSet{{Enabled:{plugins(enabled)}, Disabled:{plugins([(n, 0) for n in disabled])}}}"


def _profile(r: _Reader, decoded: _Decoded, i: int, top_pct, gates: dict[str, bool], compat: str,
             warnings: list[str]) -> Profile:
    """The profile's framework (NewFramework): multiPoint expansion per extension point, plugins that exist and
    extend their points, one QueueSort, a Bind, weights; the enabled plugins' args."""
    where = f"profiles[{i}]"
    name = decoded.name
    sets = dict(decoded.sets)
    m_enabled, m_disabled = sets.pop("multiPoint")
    multipoint = _merge(default_plugins(gates), m_enabled, m_disabled)
    # NewFramework builds every plugin some set enables (pluginsNeeded: multiPoint's too, even where every point
    # disables it) before it checks the sets: a constructor's error comes first, as scheduler.New words it.
    needed = dict.fromkeys([n for n, _ in multipoint] + [n for enabled, _ in sets.values() for n, _, _ in enabled])
    for plugin in needed:
        if plugin in decoded.deferred:
            _framework_fail(r, name, f"initializing plugin {go_quote(plugin)}: {aggregate(decoded.deferred[plugin])}")
    _check_framework(r, sets, multipoint, name)
    points = {point: _expand(multipoint, sets, point) for point in EXTENSION_POINTS}
    queue_sort = points["queueSort"]
    quoted = go_quote(str(name))
    if len(queue_sort) != 1:
        _framework_fail(r, name, f"only one queue sort plugin required for profile with scheduler name {quoted}, but "
                                 f"got {len(queue_sort)}")
    if not points["bind"]:
        _framework_fail(r, name, f"at least one bind plugin is needed for profile with scheduler name {quoted}")
    if len(points["placementGenerate"]) > 1:
        _framework_fail(r, name, f"at most one placement generate plugin is allowed for profile with scheduler name "
                                 f"{quoted}")
    weights = _weights(points, multipoint, "score")
    placement_weights = _weights(points, multipoint, "placementScore")
    args = decoded.args
    # What the configuration itself names (not the defaults) and phalanx does not model is reported.
    named = [(n, point) for point, (enabled, _) in [("multiPoint", (m_enabled, m_disabled)), *sets.items()]
             for n, _, _ in enabled]
    ignored = list(dict.fromkeys(f"{n} ({point})" for n, point in named
                                 if not (_modelled(n, point) or point == "multiPoint" and n in REGISTRY)))
    # pluginConfig of a plugin phalanx does not model, or of one no registry has (upstream keeps an out-of-tree
    # plugin's args undecoded, runtime.Unknown, and NewFramework ignores them: the plugin is not enabled, or the
    # checks above would have failed).
    ignored += [f"{n or go_quote(n)} (pluginConfig)" for n in _named_config(decoded.plugin_config)
                if n in UNMODELLED or n not in REGISTRY]
    if ignored:
        warnings.append(f"{r.source}: {where} ({name}): configured but not modelled by phalanx, no effect on "
                        f"decisions: {', '.join(ignored)}")
    pct = decoded.pct if decoded.pct is not None else top_pct
    modelled = tuple((point, tuple(n for n, _ in ns if _modelled(n, point))) for point, ns in points.items())
    used = list(dict.fromkeys(n for _, ns in modelled for n in ns))
    # Plugins without a pluginConfig entry get their defaulted args (SetDefaults_KubeSchedulerConfiguration).
    args = {n: args.get(n) or REGISTRY[n].Args() for n in used if REGISTRY[n].Args is not None}
    return Profile(scheduler_name=name, plugins=modelled,
                   weights=tuple((n, w) for n, w in weights.items() if n in used),
                   placement_weights=tuple((n, w) for n, w in placement_weights.items() if n in used),
                   args=tuple((n, a) for n, a in args.items() if n in used),
                   percentage_of_nodes_to_score=0 if pct is None else pct, compat=compat,
                   feature_gates=tuple(gates.items()), ignored_plugins=tuple(ignored),
                   unmodelled_scores=tuple(n for n, _ in points["score"] if not _modelled(n, "score")))


def _named_config(entries) -> list[str]:
    return [e.get("name") or "" for e in _config_entries(entries)]


def _config_entries(entries) -> list[dict]:
    return [e for e in entries or [] if isinstance(e, dict)]


def _args_json(entry: dict) -> str | None:
    """A pluginConfig entry's args as the RawExtension holds them after the YAML is made JSON (keys sorted, compact,
    Go's escapes): what validateCommonQueueSort compares for the args of a plugin with no args type. None: no args
    (absent or null)."""
    args = entry.get("args")
    return None if args is None else go_json(args, sort_keys=True)


def _go_unknown(raw: str | None) -> str:
    """Args of no registered type as field.Error shows them: the *runtime.Unknown (%#v of what it points to), "null"
    for none."""
    if raw is None:
        return '"null"'
    data = ", ".join(f"0x{byte:x}" for byte in raw.encode("utf-8"))
    return ('runtime.Unknown{TypeMeta:runtime.TypeMeta{APIVersion:"", Kind:""}, Raw:[]uint8{' + data
            + '}, ContentEncoding:"", ContentType:"application/json"}')


def config_from_doc(doc, source: str = "scheduler config", compat: str = "1.36",
                    gates: dict[str, bool] | None = None) -> SchedulerConfig:
    """A KubeSchedulerConfiguration document (a mapping) -> SchedulerConfig. `gates`: --feature-gates overrides."""
    r = _Reader(source)
    doc = r.mapping(doc, "")
    if doc.get("kind") != "KubeSchedulerConfiguration":
        r.fail("kind", f"expected KubeSchedulerConfiguration, got {doc.get('kind')!r}")
    if doc.get("apiVersion", API_VERSION) != API_VERSION:
        r.fail("apiVersion", f"no kind \"KubeSchedulerConfiguration\" is registered for version "
                             f"{doc.get('apiVersion')!r} (use {API_VERSION})")
    r.known(doc, _TOP_FIELDS, "")
    overrides = {}
    file_gates = r.mapping(doc.get("featureGates"), "featureGates")
    for name, value in file_gates.items():
        if not isinstance(value, bool):
            r.fail(f"featureGates.{name}", f"expected true or false, got {value!r}")
        overrides[name] = value
    overrides.update(gates or {})
    try:
        resolved = feature_gates(overrides, f"{source}: featureGates")
    except InputError as exc:
        raise exc from None
    # Decoding: a field written as null is left out (defaulted).
    parallelism = doc.get("parallelism")
    if parallelism is not None:
        parallelism = r.integer(parallelism, "parallelism")
    leader = r.fields(doc.get("leaderElection"), _LEADER_ELECTION, "leaderElection")
    client = r.fields(doc.get("clientConnection"), _CLIENT_CONNECTION, "clientConnection")
    r.fields({key: doc[key] for key in _TOP_BOOLS if key in doc}, dict.fromkeys(_TOP_BOOLS, "bool"), "")
    top_pct = doc.get("percentageOfNodesToScore")
    if top_pct is not None:
        top_pct = r.integer(top_pct, "percentageOfNodesToScore")
    initial, maximum = (doc.get(key) for key in ("podInitialBackoffSeconds", "podMaxBackoffSeconds"))
    initial = 1 if initial is None else r.integer(initial, "podInitialBackoffSeconds", 64)
    maximum = 10 if maximum is None else r.integer(maximum, "podMaxBackoffSeconds", 64)
    profiles = doc.get("profiles")
    if profiles is None or profiles == []:
        profiles = [{}]
    if not isinstance(profiles, list):
        r.fail("profiles", "expected a list")
    if len(profiles) == 1:
        profiles = [dict(r.mapping(profiles[0], "profiles[0]"))]
        if profiles[0].get("schedulerName") is None:
            profiles[0]["schedulerName"] = DEFAULT_SCHEDULER_NAME
    # ValidateKubeSchedulerConfiguration, the profiles' checks included: every error in its order, reported together
    # once the whole configuration is decoded (decoding errors fail at once).
    if (client.get("burst") or 0) < 0:              # ValidateClientConnectionConfiguration
        r.report("clientConnection.burst", f"Invalid value: {client['burst']}: must be non-negative")
    lock = leader.get("resourceLock") or "leases"         # SetDefaults: leaderElect true, resourceLock "leases"
    if leader.get("leaderElect") is not False:
        _check_leader_election(r, leader)
        if lock != "leases":
            r.report("leaderElection.resourceLock", f'Invalid value: {go_quote(str(lock))}: resourceLock value must '
                                                    f'be "leases"')
    if parallelism is not None and parallelism <= 0:
        r.report("parallelism", f"Invalid value: {parallelism}: should be an integer value greater than zero")
    decoded: list[_Decoded] = []
    for i, prof in enumerate(profiles):
        decoded.append(_decode_profile(r, prof, i, resolved))
        if decoded[-1].name in [p.name for p in decoded[:-1]]:
            r.report(f"profiles[{i}].schedulerName", f"Duplicate value: {go_quote(str(decoded[-1].name))}")
    first = decoded[0].queue_sort
    if len(first[0]) > 1:
        r.report("profiles[0].plugins.queueSort.Enabled", f"Invalid value: {len(first[0])}: only one queue sort "
                                                          f"plugin can be enabled")
    # The queue-sort plugin's args as profiles[0] gives them (its last pluginConfig entry; none when no queueSort
    # plugin is written there): another profile's entries for that name must hold the same.
    sort_name = first[0][0][0] if first[0] else ""
    sort_args = next((_args_json(e) for e in reversed(_config_entries(decoded[0].plugin_config))
                      if sort_name and e.get("name", "") == sort_name), None)
    for i, p in enumerate(decoded[1:], 1):
        if p.queue_sort != first:
            r.report(f"profiles[{i}].plugins.queueSort", f"Invalid value: {_go_plugin_set(p.queue_sort)}: must be the "
                                                         f"same for all profiles")
        for entry in _config_entries(p.plugin_config):
            if entry.get("name", "") == sort_name and _args_json(entry) != sort_args:
                r.report(f"profiles[{i}].pluginConfig.args", f"Invalid value: {_go_unknown(_args_json(entry))}: "
                                                             f"queueSort must be the same for all profiles")
    if top_pct is not None and not 0 <= top_pct <= 100:
        r.report("percentageOfNodesToScore", f"Invalid value: {top_pct}: not in valid range [0-100]")
    if initial <= 0:
        r.report("podInitialBackoffSeconds", f"Invalid value: {initial}: must be greater than 0")
    if maximum < initial:
        r.report("podMaxBackoffSeconds", f"Invalid value: {maximum}: must be greater than or equal to "
                                         f"PodInitialBackoffSeconds")
    extenders = _extenders(r, doc.get("extenders"))
    r.check()
    warnings: list[str] = []
    if extenders:
        warnings.append(f"{r.source}: extenders: {extenders} configured but not modelled by phalanx (it calls no "
                        f"extender), no effect on decisions")
    out = [_profile(r, p, i, top_pct, resolved, compat, warnings) for i, p in enumerate(decoded)]
    return SchedulerConfig(tuple(out), float(initial), float(maximum), tuple(warnings))


# RecommendedDefaultLeaderElectionConfiguration: a zero (or unset) duration is defaulted, in ns.
_LEADER_DURATIONS = {"leaseDuration": 15 * 10**9, "renewDeadline": 10 * 10**9, "retryPeriod": 2 * 10**9}


def _check_leader_election(r: _Reader, leader: dict) -> None:
    """ValidateLeaderElectionConfiguration on the defaulted durations (leader election on); the names and the lock
    are never empty once defaulted."""
    written = [0 if leader.get(key) is None else duration_from_json(leader[key]) for key in _LEADER_DURATIONS]
    lease, renew, retry = (value or default for value, default in zip(written, _LEADER_DURATIONS.values()))
    for key, value in zip(_LEADER_DURATIONS, (lease, renew, retry)):
        if value <= 0:
            r.report(f"leaderElection.{key}", f"Invalid value: {duration_text(value)}: must be greater than zero")
    if lease <= renew:
        r.report("leaderElection.leaseDuration", f"Invalid value: {duration_text(renew)}: must be greater than "
                                                 f"`RenewDeadline`")


# v1.Extender's fields, its tlsConfig's and its managedResources entries', with their Go types.
_EXTENDER_FIELDS = {"urlPrefix": "string", "filterVerb": "string", "preemptVerb": "string", "prioritizeVerb": "string",
                    "weight": "int64", "bindVerb": "string", "enableHTTPS": "bool", "tlsConfig": "object",
                    "httpTimeout": "duration", "nodeCacheCapable": "bool", "managedResources": "list",
                    "ignorable": "bool"}
_TLS_FIELDS = {"insecure": "bool", "serverName": "string", "certFile": "string", "keyFile": "string",
               "caFile": "string", "certData": "bytes", "keyData": "bytes", "caData": "bytes"}
_BASE64_ALPHABET = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_NEWLINES = frozenset(b"\r\n")


def base64_error_offset(text: str) -> int | None:
    """Where base64.StdEncoding.DecodeString fails on `text` (its CorruptInputError: a byte offset), None when it
    decodes: quanta of four alphabet bytes, newlines skipped, "=" padding only in a last quantum's third or fourth
    byte, nothing after it."""
    src, si = text.encode(), 0
    while True:
        j = 0
        while j < 4:
            if si == len(src):
                return None if j == 0 else si - j          # an incomplete last quantum
            c = src[si]
            si += 1
            if c in _BASE64_ALPHABET:
                j += 1
                continue
            if c in _NEWLINES:
                continue
            if c != ord("=") or j < 2:
                return si - 1                               # not base64, or padding too early
            if j == 2:                                      # "==" expected: the second one
                while si < len(src) and src[si] in _NEWLINES:
                    si += 1
                if si == len(src):
                    return len(src)
                if src[si] != ord("="):
                    return si - 1
                si += 1
            while si < len(src) and src[si] in _NEWLINES:
                si += 1
            return si if si < len(src) else None           # anything after the padding

_MANAGED_RESOURCE_FIELDS = {"name": "string", "ignoredByScheduler": "bool"}


def _extenders(r: _Reader, extenders) -> int:
    """The extenders decoded strictly and checked as validateExtenders (a prioritizing extender's weight positive,
    managed resources extended resource names without duplicates, one binder at most); returns how many."""
    if extenders is None:
        return 0
    if not isinstance(extenders, list):
        r.fail("extenders", "expected a list")
    binders, managed = 0, set()
    for i, ext in enumerate(extenders):
        where = f"extenders[{i}]"
        ext = r.fields(ext, _EXTENDER_FIELDS, where)
        r.fields(ext.get("tlsConfig"), _TLS_FIELDS, f"{where}.tlsConfig")
        weight = r.integer(ext.get("weight") or 0, f"{where}.weight", 64)
        resources = ext.get("managedResources") or []
        if not isinstance(resources, list):
            r.fail(f"{where}.managedResources", "expected a list")
        names = []
        for j, res in enumerate(resources):
            res = r.fields(res, _MANAGED_RESOURCE_FIELDS, f"{where}.managedResources[{j}]")
            names.append(res.get("name") or "")
        if ext.get("prioritizeVerb") and weight <= 0:
            r.report(f"{where}.weight", f"Invalid value: {weight}: must have a positive weight applied to it")
        if ext.get("bindVerb"):
            binders += 1
        for j, name in enumerate(names):
            at = f"{where}.managedResources[{j}].name"
            problems = qualified_name_errors(name)
            for problem in problems:
                r.report(at, f"Invalid value: {go_quote(name)}: {problem}")
            if not problems and not is_extended_resource_name(name):
                r.report(at, f"Invalid value: {go_quote(name)}: is an invalid extended resource name")
            if name in managed:
                r.report(at, f"Invalid value: {go_quote(name)}: duplicate extender managed resource name")
            managed.add(name)
    if binders > 1:
        r.report("extenders", f'Invalid value: "found {binders} extenders implementing bind": only one extender can '
                              f'implement bind')
    return len(extenders)


def load_config(path: str | Path, compat: str = "1.36", gates: dict[str, bool] | None = None) -> SchedulerConfig:
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read scheduler config: {str(exc).splitlines()[0]}") from None
    docs = yaml_documents(text, str(path))      # strict decoding: a repeated key is an error, as kubectl's
    if len(docs) > 1:
        raise InputError(f"{path}: cannot read scheduler config: expected a single document in the stream")
    return config_from_doc(docs[0] if docs else None, str(path), compat, gates)


def default_config(compat: str = "1.36", gates: dict[str, bool] | None = None,
                   percentage_of_nodes_to_score: int = 100) -> SchedulerConfig:
    """The v1.36 default profile (phalanx scores every node by default: percentageOfNodesToScore 100)."""
    doc = {"kind": "KubeSchedulerConfiguration", "percentageOfNodesToScore": percentage_of_nodes_to_score}
    return config_from_doc(doc, "default configuration", compat, gates)


def load_profile(path: str | Path, compat: str = "1.36") -> Profile:
    """profiles[0] of a configuration file."""
    return load_config(path, compat).profiles[0]


def profile_from_config(doc: dict, compat: str = "1.36") -> Profile:
    return config_from_doc(doc, compat=compat).profiles[0]


def with_compat(profile: Profile, compat: str) -> Profile:
    return replace(profile, compat=compat)


def args_from_input(config: SchedulerConfig, cluster) -> SchedulerConfig:
    """Every profile's plugin args with what a plugin takes from the scheduler's input when the configuration
    leaves it out (Plugin.args_from_input: FGDScore's typical pods, from the input's pods)."""
    def complete(profile: Profile) -> Profile:
        args = tuple((name, REGISTRY[name].args_from_input(a, cluster)) for name, a in profile.args)
        return profile if args == profile.args else replace(profile, args=args)
    return replace(config, profiles=tuple(complete(p) for p in config.profiles))


def without_plugin(config: SchedulerConfig, name: str) -> SchedulerConfig:
    """Every profile with `name` disabled at every extension point (e.g. DefaultPreemption: no preemption)."""
    def strip(profile: Profile) -> Profile:
        return replace(profile, plugins=tuple((point, tuple(n for n in names if n != name))
                                              for point, names in profile.plugins))
    return replace(config, profiles=tuple(strip(p) for p in config.profiles))


DEFAULT_CONFIG = default_config()
DEFAULT_PROFILE = DEFAULT_CONFIG.profiles[0]
