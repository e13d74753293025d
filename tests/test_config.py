"""KubeSchedulerConfiguration -> SchedulerConfig, read as kube-scheduler v1.36 reads it (expected values are
upstream's getDefaultPlugins order, mergePluginSet / expandMultiPointPlugins rules and validation texts)."""
from __future__ import annotations

import dataclasses

import pytest

from phalanx.cluster_models import ClusterObjects, InputError
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.config import (DEFAULT_PROFILE, base64_error_offset, config_from_doc, load_config, parse_gates,
                                  profile_from_config)
from strategies import make_node, make_pod

UPSTREAM_FILTERS = ("NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
                    "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
                    "InterPodAffinity", "DynamicResources")


def _doc(*profiles, **top) -> dict:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": list(profiles), **top}


def test_defaults_are_v136_default_plugins_in_order():
    prof = profile_from_config(_doc({}))
    # A file that does not set percentageOfNodesToScore gets upstream's adaptive default (0); phalanx's built-in
    # profile scores every node.
    assert prof == dataclasses.replace(DEFAULT_PROFILE, percentage_of_nodes_to_score=0)
    assert prof.enabled("filter")[:len(UPSTREAM_FILTERS)] == UPSTREAM_FILTERS
    assert prof.enabled("preScore")[:6] == ("TaintToleration", "NodeAffinity", "NodeResourcesFit",
                                             "PodTopologySpread", "InterPodAffinity",
                                             "NodeResourcesBalancedAllocation")
    assert {n: prof.weight(n) for n in prof.enabled("score")} == {
        "TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "PodTopologySpread": 2,
        "InterPodAffinity": 2, "DynamicResources": 2, "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1}
    assert prof.enabled("placementScore") == ("NodeResourcesFit", "PodGroupPodsCount")
    assert prof.enabled("placementGenerate") == ("TopologyPlacementGenerator",)


def test_a_plugin_at_score_only_is_legal():
    """The issue's config: TaintToleration scores while no filter runs."""
    prof = profile_from_config(_doc({"plugins": {"filter": {"disabled": [{"name": "*"}]},
                                                 "score": {"disabled": [{"name": "*"}],
                                                           "enabled": [{"name": "TaintToleration"}]}}}))
    assert prof.enabled("filter") == ()
    assert prof.enabled("score") == ("TaintToleration",) and prof.weight("TaintToleration") == 1
    assert "TaintToleration" in prof.enabled("preScore")


def test_prescore_disabled_everywhere():
    prof = profile_from_config(_doc({"plugins": {"preScore": {"disabled": [{"name": "*"}]}}}))
    assert prof.enabled("preScore") == ()
    assert "InterPodAffinity" in prof.enabled("score")


def test_multipoint_expansion_and_reordering():
    prof = profile_from_config(_doc({"plugins": {
        "multiPoint": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}],
                       "enabled": [{"name": "TaintToleration", "weight": 7}]},
        "filter": {"enabled": [{"name": "NodeResourcesFit"}]}}}))
    # A default plugin configured at the point itself comes first (expandMultiPointPlugins); TaintToleration,
    # re-enabled in multiPoint, keeps its default position with the custom weight.
    assert prof.enabled("filter")[:10] == ("NodeResourcesFit", "NodeUnschedulable", "TaintToleration",
                                           "NodeAffinity", "NodePorts", "VolumeRestrictions", "NodeVolumeLimits",
                                           "VolumeBinding", "VolumeZone", "PodTopologySpread")
    assert "NodeResourcesBalancedAllocation" not in prof.enabled("score")
    assert prof.weight("TaintToleration") == 7


def test_score_weight_given_at_score_wins_and_zero_means_one():
    prof = profile_from_config(_doc({"plugins": {"score": {"enabled": [{"name": "NodeAffinity", "weight": 5},
                                                                       {"name": "InterPodAffinity", "weight": 0}]}}}))
    assert prof.weight("NodeAffinity") == 5 and prof.weight("InterPodAffinity") == 1


def test_plugin_args_defaulted_and_validated():
    prof = profile_from_config(_doc({"pluginConfig": [
        {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 0,
                                              "ignorePreferredTermsOfExistingPods": True}},
        {"name": "NodeResourcesBalancedAllocation", "args": {"resources": [{"name": "cpu", "weight": 1}]}}]}))
    ipa = prof.arg("InterPodAffinity")
    assert ipa.hard_pod_affinity_weight == 0 and ipa.ignore_preferred_terms_of_existing_pods
    assert profile_from_config(_doc({})).arg("InterPodAffinity").hard_pod_affinity_weight == 1


def test_every_profile_and_unserved_pods():
    doc = _doc({"schedulerName": "default-scheduler"},
               {"schedulerName": "packer", "plugins": {"score": {"disabled": [{"name": "*"}]}}})
    config = config_from_doc(doc)
    assert [p.scheduler_name for p in config.profiles] == ["default-scheduler", "packer"]
    assert config.profile("packer").enabled("score") == ()
    nodes = [make_node("n0", cpu="4", memory="8Gi")]
    pods = [make_pod("a", cpu="1"), make_pod("b", cpu="1", scheduler_name="packer"),
            make_pod("c", cpu="1", scheduler_name="nobody")]
    s = Scheduler(Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods)), config)
    result = s.schedule()
    assert result.bindings == {"default/a": "n0", "default/b": "n0"}
    assert result.unserved == ["default/c"]


def test_an_unserved_pod_deleted_and_added_again_is_known_as_long_as_it_is_there():
    s = Scheduler(Cluster.from_objects(ClusterObjects(nodes=[make_node("n0", cpu="4", memory="8Gi")])))
    s.add_pods([make_pod("c", cpu="1", scheduler_name="nobody")])
    assert s.knows("default/c")
    with pytest.raises(InputError, match="already exists"):
        s.add_pods([make_pod("c", cpu="1")])
    s.delete_pod("default/c")
    assert not s.knows("default/c")
    s.add_pods([make_pod("c", cpu="1")])          # now one the default profile serves
    s.run_until_idle()
    assert s.cluster.tensors.node_of("default/c") == 0 and s.knows("default/c")


def test_pods_of_one_call_are_queued_by_priority_then_arrival():
    # One call whose pods are not in queue order (mixed priorities): bound highest priority first, then by arrival.
    s = Scheduler(Cluster.from_objects(ClusterObjects(nodes=[make_node("n0", cpu="8", memory="8Gi")])))
    s.add_pods([make_pod(name, cpu="1", priority=prio) for name, prio in
                (("a", 0), ("b", 5), ("c", 0), ("d", 5), ("e", 9))])
    s.run_until_idle()
    assert [key for e in s.log.entries if hasattr(e, "keys") for key in e.keys] == [
        "default/e", "default/b", "default/d", "default/a", "default/c"]


def test_unmodelled_plugins_are_warned_about():
    config = config_from_doc(_doc({"plugins": {"score": {"enabled": [{"name": "VolumeZone"}]}}}), "cfg.yaml")
    assert config.profiles[0].ignored_plugins == ("VolumeZone (score)",)
    assert config.warnings == ("cfg.yaml: profiles[0] (default-scheduler): configured but not modelled by phalanx, "
                               "no effect on decisions: VolumeZone (score)",)


_NEW_FRAMEWORK = "sched.yaml: initializing profiles: creating profile for scheduler name default-scheduler: "


def _framework_error(profile) -> str:
    with pytest.raises(InputError) as err:
        config_from_doc(_doc(profile), "sched.yaml")
    assert str(err.value).startswith(_NEW_FRAMEWORK)
    return str(err.value)[len(_NEW_FRAMEWORK):]


def test_plugin_config_of_an_out_of_tree_plugin_is_accepted_and_ignored():
    """decodeNestedObjects leaves the args of a kind no scheme registers undecoded (runtime.Unknown: any JSON value),
    validatePluginConfig checks only its name for duplicates, and NewFramework builds only enabled plugins: the entry
    changes nothing, and phalanx says it ignores it."""
    entries = [{"name": "OutOfTree", "args": {"anything": [1, 2]}}, {"name": "Other", "args": [1, "two"]},
               {"name": "Scalar", "args": "text"}, {"name": "NoArgs"}, {"args": {"x": 1}}]
    config = config_from_doc(_doc({"pluginConfig": entries}), "cfg.yaml")
    assert config.profiles[0] == dataclasses.replace(
        DEFAULT_PROFILE, percentage_of_nodes_to_score=0,
        ignored_plugins=("OutOfTree (pluginConfig)", "Other (pluginConfig)", "Scalar (pluginConfig)",
                         "NoArgs (pluginConfig)", '"" (pluginConfig)'))
    assert config.warnings == ('cfg.yaml: profiles[0] (default-scheduler): configured but not modelled by phalanx, '
                               'no effect on decisions: OutOfTree (pluginConfig), Other (pluginConfig), Scalar '
                               '(pluginConfig), NoArgs (pluginConfig), "" (pluginConfig)',)


def test_plugin_config_names_are_unique_known_or_not():
    """validatePluginConfig's Duplicate check runs over every entry's name, before any lookup of the plugin."""
    with pytest.raises(InputError) as err:
        config_from_doc(_doc({"pluginConfig": [{"name": "OutOfTree"}, {"name": "X"}, {"name": "OutOfTree"},
                                               {}, {"name": ""}]}), "sched.yaml")
    assert str(err.value) == ('sched.yaml: [profiles[0].pluginConfig[2]: Duplicate value: "OutOfTree", '
                              'profiles[0].pluginConfig[4]: Duplicate value: ""]')
    with pytest.raises(InputError, match=r"^sched\.yaml: profiles\[0\]\.pluginConfig\[0\]\.name: expected a string, "
                                         r"got 3$"):
        config_from_doc(_doc({"pluginConfig": [{"name": 3}]}), "sched.yaml")


def test_an_enabled_plugin_no_registry_has_fails_as_new_framework_fails():
    """updatePluginList ("<Point>Plugin %q does not exist", "plugin %q does not extend <Point>Plugin plugin", "plugin %q
    already registered as %q") over getExtensionPoints' order (preFilter, filter, postFilter, reserve, preScore,
    score, preBind, bind, postBind, permit, preEnqueue, queueSort, placementGenerate, placementScore), then
    expandMultiPointPlugins over the same order, skipping points disabled with "*"; the first failure is the one
    reported, its pluginConfig entry or not."""
    config = {"name": "OutOfTree", "args": {"a": 1}}
    assert _framework_error({"plugins": {"filter": {"enabled": [{"name": "OutOfTree"}]}}, "pluginConfig": [config]}) \
        == 'FilterPlugin "OutOfTree" does not exist'
    assert _framework_error({"plugins": {"multiPoint": {"enabled": [{"name": "OutOfTree"}]}}}) \
        == 'PreFilterPlugin "OutOfTree" does not exist'
    assert _framework_error({"plugins": {"multiPoint": {"enabled": [{"name": "OutOfTree"}]},
                                         "preFilter": {"disabled": [{"name": "*"}]}}}) \
        == 'FilterPlugin "OutOfTree" does not exist'
    # the points' own sets before multiPoint; score before queueSort; an earlier point's other error first
    assert _framework_error({"plugins": {"multiPoint": {"enabled": [{"name": "A"}]},
                                         "score": {"enabled": [{"name": "B"}]}}}) == 'ScorePlugin "B" does not exist'
    assert _framework_error({"plugins": {"queueSort": {"enabled": [{"name": "A"}]},
                                         "score": {"enabled": [{"name": "B"}]}}}) == 'ScorePlugin "B" does not exist'
    assert _framework_error({"plugins": {"filter": {"enabled": [{"name": "ImageLocality"}]},
                                         "score": {"enabled": [{"name": "B"}]}}}) \
        == 'plugin "ImageLocality" does not extend FilterPlugin plugin'
    assert _framework_error({"plugins": {"score": {"enabled": [{"name": "ImageLocality"}, {"name": "ImageLocality"}]}}}) \
        == 'plugin "ImageLocality" already registered as "ScorePlugin"'
    assert _framework_error({"plugins": {"filter": {"enabled": [{}]}}}) == 'FilterPlugin "" does not exist'
    # validation refuses a removed plugin in a point's set; in multiPoint only NewFramework sees it
    assert _framework_error({"plugins": {"multiPoint": {"enabled": [{"name": "EBSLimits"}]}}}) \
        == 'PreFilterPlugin "EBSLimits" does not exist'
    assert _framework_error({"plugins": {"queueSort": {"disabled": [{"name": "*"}]}}}) \
        == 'only one queue sort plugin required for profile with scheduler name "default-scheduler", but got 0'


def test_a_plugin_constructor_fails_before_the_sets_are_checked():
    """NewFramework runs the factory of every plugin some set enables (multiPoint's default plugins included, even
    where every point disables them) before updatePluginList."""
    bad = [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Foo"}}}]
    everything_off = {point: {"disabled": [{"name": "*"}]} for point in (
        "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "reserve", "permit",
        "preBind", "bind", "postBind", "placementGenerate", "placementScore")}
    for plugins in ({"filter": {"enabled": [{"name": "OutOfTree"}]}}, everything_off):
        assert _framework_error({"plugins": plugins, "pluginConfig": bad}) == (
            'initializing plugin "NodeResourcesFit": scoringStrategy.type: Unsupported value: "Foo": supported '
            'values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"')


def test_feature_gates_from_the_file_and_the_flag():
    doc = _doc({}, featureGates={"TaintTolerationComparisonOperators": True})
    assert dict(config_from_doc(doc).profiles[0].feature_gates)["TaintTolerationComparisonOperators"]
    flag = parse_gates("TaintTolerationComparisonOperators=false")
    assert not dict(config_from_doc(doc, gates=flag).profiles[0].feature_gates)["TaintTolerationComparisonOperators"]


@pytest.mark.parametrize("profile,message", [
    ({"plugins": {"filter": {"enabled": [{"name": "Bogus"}]}}},
     'initializing profiles: creating profile for scheduler name default-scheduler: FilterPlugin "Bogus" does not '
     'exist'),
    ({"plugins": {"filter": {"enabled": [{"name": "ImageLocality"}]}}},
     'creating profile for scheduler name default-scheduler: plugin "ImageLocality" does not extend FilterPlugin '
     'plugin'),
    ({"plugins": {"preFilter": {"enabled": [{"name": "TaintToleration"}]}}},
     'plugin "TaintToleration" does not extend PreFilterPlugin plugin'),
    ({"plugins": {"sideways": {}}}, "profiles[0].plugins.sideways: unknown field (strict decoding error)"),
    ({"plugins": {"queueSort": {"disabled": [{"name": "*"}]}}}, "only one queue sort plugin required"),
    ({"pluginConfig": [{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 101}}]},
     "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"),
    ({"pluginConfig": [{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": -1}}]},
     "hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]"),
    ({"pluginConfig": [{"name": "InterPodAffinity", "args": {"hardPodAffinityWieght": 3}}]},
     "profiles[0].pluginConfig[0].args"),
    ({"pluginConfig": [{"name": "InterPodAffinity"}, {"name": "InterPodAffinity"}]},
     'profiles[0].pluginConfig[1]: Duplicate value: "InterPodAffinity"'),
    ({"percentageOfNodesToScore": 101}, "profiles[0].percentageOfNodesToScore: Invalid value: 101"),
])
def test_errors_name_the_file_and_field(profile, message):
    with pytest.raises(InputError) as err:
        config_from_doc(_doc(profile), "sched.yaml")
    assert str(err.value).startswith("sched.yaml: ") and message in str(err.value)
    assert "\n" not in str(err.value)


def test_top_level_errors():
    with pytest.raises(InputError, match="sched.yaml: featureGates: Bogus: unknown feature gate"):
        config_from_doc(_doc({}, featureGates={"Bogus": True}), "sched.yaml")
    with pytest.raises(InputError, match="podMaxBackoffSeconds"):
        config_from_doc(_doc({}, podInitialBackoffSeconds=5, podMaxBackoffSeconds=2), "sched.yaml")
    with pytest.raises(InputError, match=r'profiles\[1\].schedulerName: Duplicate value: "a"'):
        config_from_doc(_doc({"schedulerName": "a"}, {"schedulerName": "a"}), "sched.yaml")


def test_load_config_names_the_path(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("kind: KubeSchedulerConfiguration\nprofiles: [{plugins: {score: {enabled: [{name: Nope}]}}}]\n")
    with pytest.raises(InputError, match=f'^{path}: initializing profiles: .*: ScorePlugin "Nope" does not exist$'):
        load_config(path)


def test_load_config_decodes_strictly(tmp_path):
    """A key written twice is refused (kube-scheduler's strict decoder: `key "parallelism" already set in map`), not
    silently the last; one document per file; a YAML syntax error names its line."""
    path = tmp_path / "sched.yaml"
    path.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                    "parallelism: 4\nparallelism: 8\n")
    with pytest.raises(InputError) as info:
        load_config(path)
    assert str(info.value) == f'{path}: line 4: invalid YAML: key "parallelism" already set in map'
    path.write_text("kind: KubeSchedulerConfiguration\n---\nkind: KubeSchedulerConfiguration\n")
    with pytest.raises(InputError) as info:
        load_config(path)
    assert str(info.value) == f"{path}: cannot read scheduler config: expected a single document in the stream"
    path.write_text("kind: [\n")
    with pytest.raises(InputError) as info:
        load_config(path)
    assert str(info.value) == f"{path}: line 2: invalid YAML: expected the node content, but found '<stream end>'"


def test_extenders_are_validated_as_upstream_and_reported_as_not_modelled():
    """validateExtenders (validation.go): a prioritizing extender needs a positive weight, managed resources are
    extended resource names, each once, and one extender at most binds; errors come after the others, together.
    Valid extenders are accepted with a warning: phalanx calls none."""
    ok = config_from_doc(_doc({}, extenders=[{"urlPrefix": "http://x", "filterVerb": "filter",
                                              "managedResources": [{"name": "example.com/foo"}]}]), "sched.yaml")
    assert ok.warnings == ("sched.yaml: extenders: 1 configured but not modelled by phalanx (it calls no extender), "
                           "no effect on decisions",)
    bad = _doc({}, podInitialBackoffSeconds=0, extenders=[
        {"prioritizeVerb": "prioritize", "bindVerb": "bind",
         "managedResources": [{"name": "example.com/foo"}, {"name": "cpu"}, {"name": "example.com/foo"}]},
        {"bindVerb": "bind", "weight": 3}])
    with pytest.raises(InputError) as info:
        config_from_doc(bad, "sched.yaml")
    assert str(info.value) == (
        "sched.yaml: [podInitialBackoffSeconds: Invalid value: 0: must be greater than 0, "
        "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it, "
        'extenders[0].managedResources[1].name: Invalid value: "cpu": is an invalid extended resource name, '
        'extenders[0].managedResources[2].name: Invalid value: "example.com/foo": duplicate extender managed resource '
        'name, extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind]')
    with pytest.raises(InputError) as info:
        config_from_doc(_doc({}, extenders=[{"urlPrefix": "x", "filterVerbs": "f"}]), "sched.yaml")
    assert str(info.value) == "sched.yaml: extenders[0].filterVerbs: unknown field (strict decoding error)"


@pytest.mark.parametrize("text,offset", [
    # base64.StdEncoding.DecodeString's CorruptInputError offsets, worked out by hand from encoding/base64's
    # decodeQuantum: padded quanta of four, "\n" / "\r" skipped anywhere, nothing after the padding
    ("", None), ("YQ==", None), ("YWI=", None), ("YWJj", None), ("YW\nJj\r\n", None), ("YQ=\n=", None),
    ("abc", 0),            # an incomplete quantum at the end: its first byte
    ("ab!d", 2),           # a byte outside the alphabet
    ("Y===", 1),           # padding in a quantum's second byte
    ("YQ=", 3),            # one "=" where "==" is due: the end
    ("YQ=x", 2),           # ... and something else there: the first "="
    ("YQ==YQ==", 4),       # data after the padding
])
def test_base64_error_offsets(text, offset):
    assert base64_error_offset(text) == offset
