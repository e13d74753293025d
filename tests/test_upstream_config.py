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
  plugins not in the registry (phalanx refuses unknown plugin names) and args no file can spell.
- TestSchedulerDefaults' clientConnection / leaderElection / debugging defaults: phalanx reads none of them.
- TestPluginArgsDefaults VolumeBindingArgs (x2) and DynamicResourcesArgs: VolumeBinding is not modelled and phalanx's
  DynamicResources has no args (filterTimeout / bindingTimeout are about wall time).
- TestValidateKubeSchedulerConfigurationV1 "good", "valid-plugins", "different-queue-sort", "one-empty-queue-sort",
  "mismatch-queue-sort": they rest on CustomSort / CustomBind / AnotherSort, plugins no registry has (phalanx refuses
  them as unknown first; PrioritySort is the only real QueueSort plugin, so no two real profiles can differ there).
- "bad-resource-name-not-set", "bad-resource-namespace-not-set": an empty resourceName / resourceNamespace in a file
  is defaulted to kube-scheduler / kube-system before validation, so no file reaches these errors.
- "extender-negative-weight", "extender-duplicate-managed-resources", "extender-duplicate-bind": extenders are not
  modelled.
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
