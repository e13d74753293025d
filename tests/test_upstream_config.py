"""Upstream kube-scheduler's unit-test vectors for the KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1),
replayed through phalanx's loader (phalanx.sched.config.config_from_doc).

Sources (kubernetes/kubernetes):
- pkg/scheduler/apis/config/v1/defaults_test.go, the v1.36-era version (commit 008b3652, the snapshot whose
  schedule_one_test.go imports k8s.io/api/scheduling/v1alpha2): TestSchedulerDefaults, TestPluginArgsDefaults. Its
  "two profiles" case spells out getDefaultPlugins() under v1.36's default feature gates (DynamicResources before
  DefaultPreemption, NodeDeclaredFeatures last, no workload-aware plugins: their gates are off by default upstream).
- pkg/scheduler/apis/config/validation/validation_test.go, the v1-only version (TestValidateKubeSchedulerConfigurationV1):
  each case expects one error of a type (Invalid / Required / Duplicate value) at a field path, the bad value and
  detail ignored (ignoreBadValueDetail); phalanx's one-line error must name that field and type. Texts used by the
  fixes come from pkg/scheduler/apis/config/validation/validation.go (parallelism, leaderElection.resourceLock).

phalanx's loader turns a file into profiles, so a vector is checked where a profile shows it: the effective
percentageOfNodesToScore (the profile's own, else the global one: numFeasibleNodesToFind), the backoff, the plugins
and their defaulted args. Nothing expected here was computed by phalanx.

Left out:
- TestSchedulerDefaults "two profiles" (FooPlugin, BarPlugin) and "unknown plugin config" (runtime.Unknown args):
  plugins enabled that no registry has (NewFramework refuses them, as phalanx does: tests/test_config.py) and args no
  file can spell.
- TestSchedulerDefaults' clientConnection / leaderElection / debugging defaults: phalanx reads none of them.
- TestPluginArgsDefaults DynamicResourcesArgs: the stored defaults_test.go predates it (its defaults, 10 s and 600 s,
  are the constants of types_pluginargs.go, checked in test_dynamic_resources_args below).
- TestValidateKubeSchedulerConfigurationV1 "good", "valid-plugins", "different-queue-sort", "one-empty-queue-sort",
  "mismatch-queue-sort": they rest on CustomSort / CustomBind / AnotherSort, plugins no registry has (phalanx refuses
  them as unknown first; PrioritySort is the only real QueueSort plugin). The same checks on PrioritySort:
  test_queue_sort_sets_as_written_must_be_equal and test_queue_sort_args_must_be_equal.
- "bad-resource-name-not-set", "bad-resource-namespace-not-set": an empty resourceName / resourceNamespace in a file
  is defaulted to kube-scheduler / kube-system before validation, so no file reaches these errors.

validation_pluginargs_test.go (the stored versions' tables; validation_pluginargs.go read at commit 0bd65a06, which
has #132120, in the v1.36 changelog): TestValidateDefaultPreemptionArgs, TestValidateInterPodAffinityArgs,
TestValidatePodTopologySpreadArgs, TestValidateNodeAffinityArgs below; TestValidateNodeResourcesBalancedAllocationArgs,
TestValidateFitArgs and the scoring-strategy tables in tests/test_upstream_noderesources.py; TestValidateVolumeBindingArgs
below but for "[StorageCapacityScoring=on] shape should not be empty": through a file an empty shape is defaulted first
(SetDefaults_VolumeBindingArgs). The stored validation_pluginargs_test.go has no DynamicResourcesArgs table; its
checks are read from ValidateDynamicResourcesArgs (v1.36's gates: DRASchedulerFilterTimeout, DRADeviceBindingConditions
and DRAResourceClaimDeviceStatus beta and on).
- default_plugins_test.go TestApplyFeatureGates / TestMergePlugins: the index holds no v1.36 version of the file (the
  stored one predates v1.29: EBSLimits, GCEPDLimits); the v1.36 default list is checked from defaults_test.go above,
  and the merge rules with real plugins in tests/test_config.py.
"""
from __future__ import annotations

import dataclasses

import pytest

from phalanx.cluster_models import InputError
from phalanx.kernels.select import num_feasible_nodes_to_find
from phalanx.sched.config import _PHALANX_PLUGINS, config_from_doc, default_plugins, feature_gates

API = "kubescheduler.config.k8s.io/v1"

# v1.36's default feature gates for the gates phalanx turns on by default (docs/semantics.md): upstream has the
# workload-aware scheduling gates off.
UPSTREAM_DEFAULT_GATES = {"GenericWorkload": False, "GangScheduling": False, "TopologyAwareWorkloadScheduling": False,
                          "WorkloadAwarePreemption": False, "DRAWorkloadResourceClaims": False,
                          "WorkloadWithJob": False}


def doc(profiles=None, **top) -> dict:
    out = {"apiVersion": API, "kind": "KubeSchedulerConfiguration", **top}
    if profiles is not None:
        out["profiles"] = profiles
    return out


def load(d: dict, gates: dict | None = None):
    return config_from_doc(d, "sched.yaml", gates=gates)


# ------------------------------------------------------------------------------------------------ TestSchedulerDefaults
# defaults_test.go "two profiles": getDefaultPlugins() as the custom-scheduler profile's multiPoint.enabled.
DEFAULT_MULTIPOINT = [
    ("SchedulingGates", None), ("PrioritySort", None), ("NodeUnschedulable", None), ("NodeName", None),
    ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", None), ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None), ("NodeVolumeLimits", None), ("VolumeBinding", None), ("VolumeZone", None),
    ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", 2), ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", None),
    ("NodeDeclaredFeatures", None),
]


def test_scheduler_defaults_default_plugins():
    """TestSchedulerDefaults "empty config" / "default DynamicResources": profiles[0].plugins = getDefaultPlugins()
    (v1.36 gates; DynamicResourceAllocation is locked on). phalanx appends its own plugins after upstream's."""
    got = default_plugins(feature_gates(UPSTREAM_DEFAULT_GATES))
    assert got[:len(got) - len(_PHALANX_PLUGINS)] == DEFAULT_MULTIPOINT
    assert got[len(got) - len(_PHALANX_PLUGINS):] == list(_PHALANX_PLUGINS)


def _defaulted_args(profile) -> dict:
    """defaults_test.go pluginConfigs (the modelled plugins'): what every default profile carries."""
    return {name: profile.arg(name) for name in ("DefaultPreemption", "InterPodAffinity", "NodeAffinity",
                                                 "NodeResourcesBalancedAllocation", "NodeResourcesFit",
                                                 "PodTopologySpread")}


def test_scheduler_defaults_empty_config():
    """TestSchedulerDefaults "empty config": percentageOfNodesToScore 0 (DefaultPercentageOfNodesToScore), backoff
    1 s / 10 s, one profile "default-scheduler" with pluginConfigs' defaulted args."""
    config = load(doc())
    assert (config.pod_initial_backoff_s, config.pod_max_backoff_s) == (1.0, 10.0)
    assert [p.scheduler_name for p in config.profiles] == ["default-scheduler"]
    profile = config.profiles[0]
    assert profile.percentage_of_nodes_to_score == 0
    args = _defaulted_args(profile)
    assert (args["DefaultPreemption"].min_candidate_nodes_percentage,
            args["DefaultPreemption"].min_candidate_nodes_absolute) == (10, 100)
    assert args["InterPodAffinity"].hard_pod_affinity_weight == 1
    assert args["NodeAffinity"].added_affinity is None
    assert [(r.name, r.weight) for r in args["NodeResourcesBalancedAllocation"].resources] == [("cpu", 1),
                                                                                              ("memory", 1)]
    strategy = args["NodeResourcesFit"].scoring_strategy
    assert strategy.type == "LeastAllocated"
    assert [(r.name, r.weight) for r in strategy.resources] == [("cpu", 1), ("memory", 1)]
    assert args["PodTopologySpread"].defaulting_type == "System"
    assert args["PodTopologySpread"].default_constraints == []


# (name, the configuration's fields, the effective percentageOfNodesToScore of profiles[0])
DEFAULTS = [
    ("no scheduler name", doc([{}]), 0),
    ("Prallelism with no port", doc(parallelism=16), 0),
    ("set non default parallelism", doc(parallelism=8), 0),
    ("set non default delayCacheUntilActive", doc(delayCacheUntilActive=True), 0),
    ("set non default global percentageOfNodesToScore", doc(percentageOfNodesToScore=50), 50),
    ("set non default profile percentageOfNodesToScore", doc([{"percentageOfNodesToScore": 50}]), 50),
    ("set non default global and profile percentageOfNodesToScore",
     doc([{"percentageOfNodesToScore": 50}], percentageOfNodesToScore=10), 50),
]


@pytest.mark.parametrize("d,pct", [c[1:] for c in DEFAULTS], ids=[f"TestSchedulerDefaults/{c[0]}" for c in DEFAULTS])
def test_scheduler_defaults(d, pct):
    """Everything but percentageOfNodesToScore is the empty configuration's; the profile's percentage wins over the
    global one (numFeasibleNodesToFind reads the profile's when set)."""
    empty = load(doc())
    config = load(d)
    assert [p.scheduler_name for p in config.profiles] == ["default-scheduler"]
    assert (config.pod_initial_backoff_s, config.pod_max_backoff_s) == (1.0, 10.0)
    profile = config.profiles[0]
    assert profile.percentage_of_nodes_to_score == pct
    assert dataclasses.replace(profile, percentage_of_nodes_to_score=0) == empty.profiles[0]
    assert num_feasible_nodes_to_find(profile.percentage_of_nodes_to_score, 1000) == (420 if pct == 0 else 500)


# ------------------------------------------------------------------------------------------------ TestPluginArgsDefaults
def _resources(specs) -> list:
    return [(r.name, r.weight) for r in specs]


# (name, plugin, args as written, what of the defaulted args to read, its expected value)
ARGS = [
    ("DefaultPreemptionArgs empty", "DefaultPreemption", {},
     lambda a: (a.min_candidate_nodes_percentage, a.min_candidate_nodes_absolute), (10, 100)),
    ("DefaultPreemptionArgs with value", "DefaultPreemption", {"minCandidateNodesPercentage": 50},
     lambda a: (a.min_candidate_nodes_percentage, a.min_candidate_nodes_absolute), (50, 100)),
    ("InterPodAffinityArgs empty", "InterPodAffinity", {}, lambda a: a.hard_pod_affinity_weight, 1),
    ("InterPodAffinityArgs explicit 0", "InterPodAffinity", {"hardPodAffinityWeight": 0},
     lambda a: a.hard_pod_affinity_weight, 0),
    ("InterPodAffinityArgs with value", "InterPodAffinity", {"hardPodAffinityWeight": 5},
     lambda a: a.hard_pod_affinity_weight, 5),
    ("NodeResourcesBalancedAllocationArgs resources empty", "NodeResourcesBalancedAllocation", {},
     lambda a: _resources(a.resources), [("cpu", 1), ("memory", 1)]),
    ("NodeResourcesBalancedAllocationArgs with scalar resource", "NodeResourcesBalancedAllocation",
     {"resources": [{"name": "scalar.io/scalar1", "weight": 1}]},
     lambda a: _resources(a.resources), [("scalar.io/scalar1", 1)]),
    ("NodeResourcesBalancedAllocationArgs with mixed resources", "NodeResourcesBalancedAllocation",
     {"resources": [{"name": "cpu", "weight": 1}, {"name": "scalar.io/scalar1", "weight": 1}]},
     lambda a: _resources(a.resources), [("cpu", 1), ("scalar.io/scalar1", 1)]),
    ("NodeResourcesBalancedAllocationArgs have resource no weight", "NodeResourcesBalancedAllocation",
     {"resources": [{"name": "cpu"}, {"name": "scalar.io/scalar0"}, {"name": "scalar.io/scalar1", "weight": 1}]},
     lambda a: _resources(a.resources), [("cpu", 1), ("scalar.io/scalar0", 1), ("scalar.io/scalar1", 1)]),
    ("PodTopologySpreadArgs resources empty", "PodTopologySpread", {}, lambda a: a.defaulting_type, "System"),
    ("NodeResourcesFitArgs not set", "NodeResourcesFit", {},
     lambda a: (a.scoring_strategy.type, _resources(a.scoring_strategy.resources)),
     ("LeastAllocated", [("cpu", 1), ("memory", 1)])),
    ("NodeResourcesFitArgs Resources empty", "NodeResourcesFit", {"scoringStrategy": {"type": "MostAllocated"}},
     lambda a: (a.scoring_strategy.type, _resources(a.scoring_strategy.resources)),
     ("MostAllocated", [("cpu", 1), ("memory", 1)])),
]


@pytest.mark.parametrize("plugin,args,read,want", [c[1:] for c in ARGS],
                         ids=[f"TestPluginArgsDefaults/{c[0]}" for c in ARGS])
def test_plugin_args_defaults(plugin, args, read, want):
    profile = load(doc([{"pluginConfig": [{"name": plugin, "args": args}]}])).profiles[0]
    assert read(profile.arg(plugin)) == want


def test_plugin_args_defaults_pod_topology_spread_with_value():
    """TestPluginArgsDefaults "PodTopologySpreadArgs resources with value": defaultConstraints given, defaultingType
    left out, defaults to System; validation (ValidatePodTopologySpreadArgs: System needs no defaultConstraints) then
    refuses the args, naming defaultingType and the defaulted value."""
    d = doc([{"pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultConstraints": [
        {"topologyKey": "planet", "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 2}]}}]}])
    with pytest.raises(InputError, match='defaultingType: Invalid value: "System"'):
        load(d)


# ------------------------------------------------------------------------------------------------ TestValidateKubeSchedulerConfigurationV1
# (name, the configuration, the field upstream's error names, its type)
VALIDATION = [
    ("bad-parallelism-invalid-value", doc(parallelism=0), "parallelism", "Invalid value"),
    ("bad-resource-lock-not-leases", doc(leaderElection={"resourceLock": "configmap"}),
     "leaderElection.resourceLock", "Invalid value"),
    ("bad-percentage-of-nodes-to-score", doc(percentageOfNodesToScore=101), "percentageOfNodesToScore",
     "Invalid value"),
    ("negative-percentage-of-nodes-to-score", doc(percentageOfNodesToScore=-1), "percentageOfNodesToScore",
     "Invalid value"),
    ("scheduler-name-not-set", doc([{"schedulerName": "me"}, {"schedulerName": ""}]), "profiles[1].schedulerName",
     "Required value"),
    ("repeated-scheduler-name", doc([{"schedulerName": "other"}, {"schedulerName": "other"}]),
     "profiles[1].schedulerName", "Duplicate value"),
    ("greater-than-100-profile-percentage-of-nodes-to-score",
     doc([{"schedulerName": "me"}, {"schedulerName": "other", "percentageOfNodesToScore": 101}]),
     "profiles[1].percentageOfNodesToScore", "Invalid value"),
    ("negative-profile-percentage-of-nodes-to-score",
     doc([{"schedulerName": "me"}, {"schedulerName": "other", "percentageOfNodesToScore": -1}]),
     "profiles[1].percentageOfNodesToScore", "Invalid value"),
    pytest.param(doc([{"schedulerName": "me", "pluginConfig": [{"name": "DefaultPreemption", "args": {
        "minCandidateNodesPercentage": 200, "minCandidateNodesAbsolute": 100}}]}]),
        "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage", "Invalid value",
        id="TestValidateKubeSchedulerConfigurationV1/invalid-node-percentage"),
    pytest.param(doc([{"schedulerName": "me", "pluginConfig": [{"name": "DefaultPreemption", "args": {
        "kind": "InterPodAffinityArgs", "apiVersion": API}}]}]),
        "profiles[0].pluginConfig[0].args", "Invalid value",
        id="TestValidateKubeSchedulerConfigurationV1/invalid-plugin-args"),
    # Upstream's entries are named "config" (no plugin); a registered name gives the same Duplicate.
    ("duplicated-plugin-config", doc([{"schedulerName": "me", "pluginConfig": [{"name": "InterPodAffinity"},
                                                                             {"name": "InterPodAffinity"}]}]),
     "profiles[0].pluginConfig[1]", "Duplicate value"),
    # validConfig's extender is {prioritizeVerb: prioritize, weight: 1}.
    ("extender-negative-weight", doc(extenders=[{"prioritizeVerb": "prioritize", "weight": -1}]),
     "extenders[0].weight", "Invalid value"),
    ("extender-duplicate-managed-resources", doc(extenders=[{"prioritizeVerb": "prioritize", "weight": 1,
                                                            "managedResources": [
                                                                {"name": "example.com/foo", "ignoredByScheduler": False},
                                                                {"name": "example.com/foo", "ignoredByScheduler": False}]}]),
     "extenders[0].managedResources[1].name", "Invalid value"),
    ("extender-duplicate-bind", doc(extenders=[{"prioritizeVerb": "prioritize", "weight": 1, "bindVerb": "foo"},
                                               {"prioritizeVerb": "prioritize", "bindVerb": "bar", "weight": 2}]),
     "extenders", "Invalid value"),
]


def _case(c):
    if not hasattr(c, "marks"):         # a plain tuple (pytest.param's are tuples with marks)
        return pytest.param(*c[1:], id=f"TestValidateKubeSchedulerConfigurationV1/{c[0]}")
    return c


@pytest.mark.parametrize("d,field,kind", [_case(c) for c in VALIDATION])
def test_validate_kube_scheduler_configuration_v1(d, field, kind):
    with pytest.raises(InputError) as err:
        load(d)
    assert str(err.value).startswith(f"sched.yaml: {field}: {kind}")


def test_validation_texts_of_the_fixes():
    """The whole texts of the two checks phalanx did not make (validation.go: parallelism <= 0; leaderElect with a
    resourceLock other than leases), and a file that turns leader election off may name any lock."""
    with pytest.raises(InputError) as err:
        load(doc(parallelism=-3))
    assert str(err.value) == "sched.yaml: parallelism: Invalid value: -3: should be an integer value greater than zero"
    with pytest.raises(InputError) as err:
        load(doc(leaderElection={"leaderElect": True, "resourceLock": "endpointsleases"}))
    assert str(err.value) == ('sched.yaml: leaderElection.resourceLock: Invalid value: "endpointsleases": '
                              'resourceLock value must be "leases"')
    assert load(doc(leaderElection={"leaderElect": False, "resourceLock": "configmap"})).profiles


# ------------------------------------------------------------------------------------- validation_pluginargs_test.go
# The tables of pkg/scheduler/apis/config/validation/validation_pluginargs_test.go for the plugins whose args a
# configuration's validation checks (validatePluginConfig), replayed through a file's pluginConfig: upstream compares
# each error's type and field (ignoreBadValueDetail), so these compare "<field>: <type>" under the args' path.
def _args_errors(plugin: str, args: dict) -> list[str]:
    try:
        load(doc([{"pluginConfig": [{"name": plugin, "args": args}]}]))
    except InputError as exc:
        import re
        return re.findall(r"profiles\[0\]\.pluginConfig\[0\]\.args\.([^:]+: [A-Z][a-z]+(?: value)?)", str(exc))
    return []


def _pts(*constraints, defaulting="List"):
    return {"defaultingType": defaulting, "defaultConstraints": [
        dict(zip(("maxSkew", "topologyKey", "whenUnsatisfiable"), c)) for c in constraints]}


PLUGIN_ARGS = [
    ("TestValidateDefaultPreemptionArgs/valid args (default)", "DefaultPreemption",
     {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}, []),
    ("TestValidateDefaultPreemptionArgs/negative minCandidateNodesPercentage", "DefaultPreemption",
     {"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": 100},
     ["minCandidateNodesPercentage: Invalid value"]),
    ("TestValidateDefaultPreemptionArgs/minCandidateNodesPercentage over 100", "DefaultPreemption",
     {"minCandidateNodesPercentage": 900, "minCandidateNodesAbsolute": 100},
     ["minCandidateNodesPercentage: Invalid value"]),
    ("TestValidateDefaultPreemptionArgs/negative minCandidateNodesAbsolute", "DefaultPreemption",
     {"minCandidateNodesPercentage": 20, "minCandidateNodesAbsolute": -1},
     ["minCandidateNodesAbsolute: Invalid value"]),
    ("TestValidateDefaultPreemptionArgs/all zero", "DefaultPreemption",
     {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
     ["minCandidateNodesPercentage: Invalid value", "minCandidateNodesAbsolute: Invalid value"]),
    ("TestValidateDefaultPreemptionArgs/both negative", "DefaultPreemption",
     {"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": -1},
     ["minCandidateNodesPercentage: Invalid value", "minCandidateNodesAbsolute: Invalid value"]),
    ("TestValidateInterPodAffinityArgs/valid args", "InterPodAffinity", {"hardPodAffinityWeight": 10}, []),
    ("TestValidateInterPodAffinityArgs/hardPodAffinityWeight less than min", "InterPodAffinity",
     {"hardPodAffinityWeight": -1}, ["hardPodAffinityWeight: Invalid value"]),
    ("TestValidateInterPodAffinityArgs/hardPodAffinityWeight more than max", "InterPodAffinity",
     {"hardPodAffinityWeight": 101}, ["hardPodAffinityWeight: Invalid value"]),
    ("TestValidatePodTopologySpreadArgs/valid config", "PodTopologySpread",
     _pts((1, "node", "DoNotSchedule"), (2, "zone", "ScheduleAnyway")), []),
    ("TestValidatePodTopologySpreadArgs/maxSkew less than zero", "PodTopologySpread",
     _pts((-1, "node", "DoNotSchedule")), ["defaultConstraints[0].maxSkew: Invalid value"]),
    ("TestValidatePodTopologySpreadArgs/empty topology key", "PodTopologySpread",
     _pts((1, "", "DoNotSchedule")), ["defaultConstraints[0].topologyKey: Required value"]),
    ("TestValidatePodTopologySpreadArgs/whenUnsatisfiable is empty", "PodTopologySpread",
     _pts((1, "node", "")), ["defaultConstraints[0].whenUnsatisfiable: Required value"]),
    ("TestValidatePodTopologySpreadArgs/whenUnsatisfiable contains unsupported action", "PodTopologySpread",
     _pts((1, "node", "unknown action")), ["defaultConstraints[0].whenUnsatisfiable: Unsupported value"]),
    ("TestValidatePodTopologySpreadArgs/duplicated constraints", "PodTopologySpread",
     _pts((1, "node", "DoNotSchedule"), (2, "node", "DoNotSchedule")), ["defaultConstraints[1]: Duplicate value"]),
    ("TestValidatePodTopologySpreadArgs/label selector present", "PodTopologySpread",
     {"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1, "topologyKey": "key",
                                                        "whenUnsatisfiable": "DoNotSchedule",
                                                        "labelSelector": {"matchLabels": {"a": "b"}}}]},
     ["defaultConstraints[0].labelSelector: Forbidden"]),
    ("TestValidatePodTopologySpreadArgs/list default constraints, no constraints", "PodTopologySpread",
     {"defaultingType": "List"}, []),
    ("TestValidatePodTopologySpreadArgs/system default constraints", "PodTopologySpread",
     {"defaultingType": "System"}, []),
    ("TestValidatePodTopologySpreadArgs/wrong constraints", "PodTopologySpread", {"defaultingType": "unknown"},
     ["defaultingType: Unsupported value"]),
    ("TestValidatePodTopologySpreadArgs/system default constraints, but has constraints", "PodTopologySpread",
     _pts((1, "key", "DoNotSchedule"), defaulting="System"), ["defaultingType: Invalid value"]),
    ("TestValidateNodeAffinityArgs/empty", "NodeAffinity", {}, []),
    ("TestValidateNodeAffinityArgs/valid added affinity", "NodeAffinity", {"addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "label-1", "operator": "In", "values": ["label-1-val"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}}]}}, []),
    ("TestValidateNodeAffinityArgs/invalid added affinity", "NodeAffinity", {"addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "invalid/label/key", "operator": "In", "values": ["label-1-val"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["node-1", "node-2"]}]}}]}},
     ["addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key: "
      "Invalid value",
      "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].values: Invalid value"]),
]


@pytest.mark.parametrize("plugin,args,want", [c[1:] for c in PLUGIN_ARGS], ids=[c[0] for c in PLUGIN_ARGS])
def test_validate_plugin_args(plugin, args, want):
    assert _args_errors(plugin, args) == want


def test_node_affinity_args_whole_text():
    """ValidateNodeAffinityArgs (nodeaffinity.NewNodeSelector / NewPreferredSchedulingTerms with the args' paths;
    labels.NewRequirement's key check; matchFields' "must have one element" showing the []string as %#v): phalanx
    accepted any addedAffinity before."""
    _, _, args, _ = PLUGIN_ARGS[-1]
    with pytest.raises(InputError) as err:
        load(doc([{"pluginConfig": [{"name": "NodeAffinity", "args": args}]}]))
    at = "profiles[0].pluginConfig[0].args.addedAffinity."
    assert str(err.value) == (
        f'sched.yaml: [{at}requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]'
        '.key: Invalid value: "invalid/label/key": a qualified name must consist of alphanumeric characters, '
        "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
        "or '123-abc', "
        "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain "
        "prefix and '/' (e.g. 'example.com/MyName'), "
        f'{at}preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].values: Invalid value: '
        '[]string{"node-1", "node-2"}: must have one element]')


# ------------------------------------------------------------------------------------------ validation.go, whole texts
def _error(d: dict) -> str:
    with pytest.raises(InputError) as err:
        load(d)
    return str(err.value)


def test_validation_errors_are_aggregated():
    """ValidateKubeSchedulerConfiguration collects every error and returns utilerrors.Flatten(NewAggregate(errs)):
    several print as "[e1, e2]" in its order (parallelism before the profiles, the global percentage after)."""
    assert _error(doc([{"percentageOfNodesToScore": -1}], parallelism=0, percentageOfNodesToScore=101)) == (
        "sched.yaml: [parallelism: Invalid value: 0: should be an integer value greater than zero, "
        "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100], "
        "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]]")
    assert _error(doc([{"schedulerName": "a", "pluginConfig": [{"name": "InterPodAffinity", "args": {
        "hardPodAffinityWeight": 101}}]}, {"schedulerName": "a"}], podInitialBackoffSeconds=0)) == (
        "sched.yaml: [profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid range "
        '[0, 100], profiles[1].schedulerName: Duplicate value: "a", podInitialBackoffSeconds: Invalid value: 0: must '
        "be greater than 0]")


def test_null_fields_are_defaulted():
    """A field written as null decodes as absent (v1 pointers stay nil) and is defaulted: backoffs 1 s / 10 s, the
    only profile's schedulerName default-scheduler (SetDefaults_KubeSchedulerConfiguration)."""
    config = load(doc([{"schedulerName": None}], podInitialBackoffSeconds=None, podMaxBackoffSeconds=None,
                      parallelism=None))
    assert (config.pod_initial_backoff_s, config.pod_max_backoff_s) == (1.0, 10.0)
    assert [p.scheduler_name for p in config.profiles] == ["default-scheduler"]


def test_queue_sort_sets_as_written_must_be_equal():
    """validateCommonQueueSort compares the queueSort sets as written (after mergePluginSet, which keeps a custom set
    as it is), not the effective plugins: naming PrioritySort in one profile only is refused; the bad value is the
    config.PluginSet printed with %#v. More than one plugin in profiles[0] is refused at .Enabled."""
    assert _error(doc([{"schedulerName": "a"}, {"schedulerName": "b", "plugins": {"queueSort": {
        "enabled": [{"name": "PrioritySort"}]}}}])) == (
        'sched.yaml: profiles[1].plugins.queueSort: Invalid value: config.PluginSet{Enabled:[]config.Plugin{'
        'config.Plugin{Name:"PrioritySort", Weight:0}}, Disabled:[]config.Plugin(nil)}: must be the same for all '
        'profiles')
    assert _error(doc([{"plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}, {"name": "PrioritySort"}]}}}])
                  ) == ("sched.yaml: profiles[0].plugins.queueSort.Enabled: Invalid value: 2: only one queue sort "
                        "plugin can be enabled")
    same = {"plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}}}
    assert len(load(doc([{"schedulerName": "a", **same}, {"schedulerName": "b", **same}])).profiles) == 2


def test_removed_plugins():
    """invalidPluginsByVersion: AzureDiskLimits, CinderLimits, EBSLimits, GCEPDLimits in a plugin set (not multiPoint)
    or in pluginConfig."""
    v1 = '"kubescheduler.config.k8s.io/v1"'
    assert _error(doc([{"plugins": {"filter": {"enabled": [{"name": "EBSLimits"}]}}}])) == (
        f'sched.yaml: profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in version {v1} '
        f'(KubeSchedulerConfiguration is version {v1})')
    assert _error(doc([{"pluginConfig": [{"name": "GCEPDLimits"}]}])) == (
        f'sched.yaml: profiles[0].pluginConfig[0]: Invalid value: "GCEPDLimits": was invalid in version {v1} '
        f'(KubeSchedulerConfiguration is version {v1})')


def test_node_resources_fit_args_are_checked_by_the_plugin():
    """validatePluginConfig keys ValidateNodeResourcesFitArgs by "NodeResourcesFitArgs" (no plugin has that name), so
    only NewFit validates the args, when the profile enables NodeResourcesFit; scheduler.New then fails with
    'initializing profiles: creating profile for scheduler name ...: initializing plugin "NodeResourcesFit": ...'
    (#132120's description shows the text), the paths relative to the args. With the plugin disabled the args are
    never checked."""
    bad = [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Foo"}}}]
    assert _error(doc([{"pluginConfig": bad}])) == (
        'sched.yaml: initializing profiles: creating profile for scheduler name default-scheduler: initializing plugin '
        '"NodeResourcesFit": scoringStrategy.type: Unsupported value: "Foo": supported values: "LeastAllocated", '
        '"MostAllocated", "RequestedToCapacityRatio"')
    off = {"plugins": {"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}}}
    assert load(doc([{**off, "pluginConfig": bad}])).profiles[0].arg("NodeResourcesFit") is None
    ratio = {"shape": [{"utilization": 0, "score": 0}]}
    assert _error(doc([{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
        "type": "LeastAllocated", "requestedToCapacityRatio": ratio}}}]}])) == (
        'sched.yaml: initializing profiles: creating profile for scheduler name default-scheduler: initializing plugin '
        '"NodeResourcesFit": scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not '
        'RequestedToCapacityRatio')


def test_int32_fields_fail_decoding_out_of_range():
    """parallelism, percentageOfNodesToScore and plugin weights are int32: a larger number fails decoding."""
    assert _error(doc(parallelism=2 ** 40)) == "sched.yaml: parallelism: expected a 32-bit integer, got 1099511627776"


# ------------------------------------------------------------------------------------------------ VolumeBindingArgs
VOLUME_BINDING = [
    ("zero is a valid config", {"bindTimeoutSeconds": 0}, False, []),
    ("positive value is valid config", {"bindTimeoutSeconds": 10}, False, []),
    ("negative value is invalid config", {"bindTimeoutSeconds": -10}, False, ["bindTimeoutSeconds: Invalid value"]),
    ("[StorageCapacityScoring=off] shape should be nil when the feature is off",
     {"bindTimeoutSeconds": 10, "shape": None}, False, []),
    ("[StorageCapacityScoring=off] error if the shape is not nil when the feature is off",
     {"bindTimeoutSeconds": 10, "shape": [{"utilization": 1, "score": 1}, {"utilization": 3, "score": 3}]}, False,
     ["shape: Invalid value"]),
    ("[StorageCapacityScoring=on] shape points must be sorted in increasing order",
     {"bindTimeoutSeconds": 10, "shape": [{"utilization": 3, "score": 3}, {"utilization": 1, "score": 1}]}, True,
     ["shape[1].utilization: Invalid value"]),
    ("[StorageCapacityScoring=on] shape point: invalid utilization and score",
     {"bindTimeoutSeconds": 10, "shape": [{"utilization": -1, "score": 1}, {"utilization": 10, "score": -1},
                                          {"utilization": 20, "score": 11}, {"utilization": 101, "score": 1}]}, True,
     ["shape[0].utilization: Invalid value", "shape[1].score: Invalid value", "shape[2].score: Invalid value",
      "shape[3].utilization: Invalid value"]),
]


@pytest.mark.parametrize("args,gate,want", [c[1:] for c in VOLUME_BINDING],
                         ids=[f"TestValidateVolumeBindingArgs/{c[0]}" for c in VOLUME_BINDING])
def test_validate_volume_binding_args(args, gate, want):
    """VolumeBinding is not modelled, but its args are decoded and validated as upstream's (validatePluginConfig)."""
    d = doc([{"pluginConfig": [{"name": "VolumeBinding", "args": args}]}], featureGates={"StorageCapacityScoring": gate})
    try:
        load(d)
        got = []
    except InputError as exc:
        import re
        got = re.findall(r"profiles\[0\]\.pluginConfig\[0\]\.args\.([^:]+: [A-Z][a-z]+(?: value)?)", str(exc))
        assert got, str(exc)
    assert got == want


def test_volume_binding_args_whole_texts():
    """The texts of ValidateVolumeBindingArgsWithOptions; the gate's refusal shows the shape with %#v."""
    assert _error(doc([{"pluginConfig": [{"name": "VolumeBinding", "args": {"bindTimeoutSeconds": -10}}]}])) == (
        "sched.yaml: profiles[0].pluginConfig[0].args.bindTimeoutSeconds: Invalid value: -10: invalid "
        "BindTimeoutSeconds, should not be a negative value")
    assert _error(doc([{"pluginConfig": [{"name": "VolumeBinding", "args": {"shape": [
        {"utilization": 1, "score": 1}]}}]}])) == (
        "sched.yaml: profiles[0].pluginConfig[0].args.shape: Invalid value: []config.UtilizationShapePoint{"
        "config.UtilizationShapePoint{Utilization:1, Score:1}}: unexpected field `shape`, remove it or turn on the "
        "feature gate StorageCapacityScoring")
    # An empty list is a shape too (not nil) ...
    assert "[]config.UtilizationShapePoint{}: unexpected field `shape`" in _error(
        doc([{"pluginConfig": [{"name": "VolumeBinding", "args": {"shape": []}}]}]))
    # ... and a field VolumeBindingArgs lacks fails decoding.
    assert _error(doc([{"pluginConfig": [{"name": "VolumeBinding", "args": {"bindTimeout": 1}}]}])).startswith(
        "sched.yaml: profiles[0].pluginConfig[0].args.bindTimeout:")
    # Another plugin's args type: validatePluginConfig's "has to match plugin args".
    assert _error(doc([{"pluginConfig": [{"name": "InterPodAffinity", "args": {"kind": "VolumeBindingArgs"}}]}])) == (
        'sched.yaml: profiles[0].pluginConfig[0].args: Invalid value: "VolumeBindingArgs": has to match plugin args')


@pytest.mark.parametrize("gate,shape", [(False, None), (True, [(0, 10), (100, 0)])],
                         ids=["VolumeBindingArgs empty, StorageCapacityScoring disabled",
                              "VolumeBindingArgs empty, StorageCapacityScoring enabled"])
def test_volume_binding_args_defaults(gate, shape):
    """TestPluginArgsDefaults: bindTimeoutSeconds 600; the shape only with StorageCapacityScoring. (The plugin is
    not modelled, so no profile holds the args: they are read as the loader decodes them.)"""
    from phalanx.plugins.volume_binding import VolumeBindingArgs
    args = VolumeBindingArgs.model_validate({}, context={"gates": feature_gates({"StorageCapacityScoring": gate})})
    assert args.bind_timeout_seconds == 600
    assert (None if args.shape is None else [(p.utilization, p.score) for p in args.shape]) == shape
    assert load(doc([{"pluginConfig": [{"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 0}}]}]))


# ------------------------------------------------------------------------------------------------ DynamicResourcesArgs
def test_dynamic_resources_args():
    """DynamicResourcesArgs: defaults DynamicResourcesFilterTimeoutDefault (10 s) and ...BindingTimeoutDefault (600 s);
    ValidateDynamicResourcesArgs refuses a negative filterTimeout and a bindingTimeout under a second, showing the
    metav1.Duration with its String(); a value ParseDuration refuses fails decoding with its error (a JSON number
    is decoded as "", its json error dropped by metav1.Duration.UnmarshalJSON)."""
    def args(given):
        return load(doc([{"pluginConfig": [{"name": "DynamicResources", "args": given}]}])).profiles[0].arg(
            "DynamicResources")

    assert (args({}).filter_timeout, args({}).binding_timeout) == (10 * 10**9, 600 * 10**9)
    assert (args({"filterTimeout": "0s", "bindingTimeout": "1s"}).filter_timeout, args(
        {"filterTimeout": None}).filter_timeout) == (0, 10 * 10**9)
    assert args({"filterTimeout": "1m30s"}).filter_timeout == 90 * 10**9

    def error(given):
        return _error(doc([{"pluginConfig": [{"name": "DynamicResources", "args": given}]}]))

    at = "sched.yaml: profiles[0].pluginConfig[0].args"
    assert error({"filterTimeout": "-1.5s", "bindingTimeout": "500ms"}) == (
        f"sched.yaml: [{at[12:]}.filterTimeout: Invalid value: -1.5s: must be zero or positive, "
        f"{at[12:]}.bindingTimeout: Invalid value: 500ms: must be at least 1 second]")
    assert error({"bindingTimeout": "0s"}) == f"{at}.bindingTimeout: Invalid value: 0s: must be at least 1 second"
    assert error({"filterTimeout": "10"}) == f'{at}.filterTimeout: time: missing unit in duration "10"'
    assert error({"filterTimeout": 10}) == f'{at}.filterTimeout: time: invalid duration ""'
    assert error({"timeout": "1s"}).startswith(f"{at}.timeout:")


def test_queue_sort_args_must_be_equal():
    """validateCommonQueueSort: with a queueSort plugin written in profiles[0], the other profiles' pluginConfig
    entries for it must hold profiles[0]'s args (Semantic.DeepEqual of the *runtime.Unknown a plugin without an args
    type keeps: its raw JSON, keys sorted as the YAML was made JSON), at profiles[i].pluginConfig.args, the bad value
    shown with %#v, "null" for none."""
    sort = {"plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}}}

    def two(first, second):
        return doc([{"schedulerName": "a", **sort, **first}, {"schedulerName": "b", **sort, **second}])

    def entry(*args):
        return {"pluginConfig": [{"name": "PrioritySort", **({"args": args[0]} if args else {})}]}

    assert _error(two({}, entry({"a": 1}))) == (
        'sched.yaml: profiles[1].pluginConfig.args: Invalid value: runtime.Unknown{TypeMeta:runtime.TypeMeta{'
        'APIVersion:"", Kind:""}, Raw:[]uint8{0x7b, 0x22, 0x61, 0x22, 0x3a, 0x31, 0x7d}, ContentEncoding:"", '
        'ContentType:"application/json"}: queueSort must be the same for all profiles')
    assert _error(two(entry({}), entry())) == (
        'sched.yaml: profiles[1].pluginConfig.args: Invalid value: "null": queueSort must be the same for all '
        'profiles')
    assert len(load(two(entry({"b": 2, "a": "<x>"}), entry({"a": "<x>", "b": 2}))).profiles) == 2
    assert len(load(two({}, entry())).profiles) == 2
    # Without a queueSort plugin written in profiles[0] nothing is compared.
    assert len(load(doc([{"schedulerName": "a"}, {"schedulerName": "b", **entry({"a": 1})}])).profiles) == 2
