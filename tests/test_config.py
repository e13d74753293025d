"""KubeSchedulerConfiguration -> Profile."""
from __future__ import annotations

import pytest

from phalanx.cluster_models import InputError
from phalanx.sched.config import DEFAULT_PROFILE, Profile, profile_from_config


def _doc(profile: dict, **top) -> dict:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [profile], **top}


def test_defaults_when_empty():
    assert profile_from_config(_doc({})) == DEFAULT_PROFILE


def test_enable_disable_weights_and_args():
    prof = profile_from_config(_doc({
        "plugins": {"filter": {"disabled": [{"name": "NodePorts"}]},
                    "score": {"disabled": [{"name": "*"}],
                              "enabled": [{"name": "NodeResourcesFit", "weight": 5},
                                          {"name": "TaintToleration"}]}},
        "percentageOfNodesToScore": 30,
        "pluginConfig": [
            {"name": "NodeResourcesFit", "args": {"scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "resources": [{"name": "cpu", "weight": 2}, {"name": "nvidia.com/gpu", "weight": 5}],
                "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0},
                                                       {"utilization": 100, "score": 10}]}}}},
            {"name": "NodeResourcesBalancedAllocation", "args": {"resources": [{"name": "cpu", "weight": 1}]}},
        ]}), compat="1.35")
    assert "NodePorts" not in prof.filters and prof.filters[0] == "NodeUnschedulable"
    # A weight left unset at the score point itself is 1 (getScoreWeights), not the multiPoint default.
    assert prof.scores == (("NodeResourcesFit", 5), ("TaintToleration", 1))
    assert prof.fit_strategy == "RequestedToCapacityRatio"
    assert prof.fit_resources == (("cpu", 2), ("nvidia.com/gpu", 5))
    assert prof.rtcr_shape == ((0, 0), (100, 10))
    assert prof.balanced_resources == (("cpu", 1),)
    assert prof.percentage_of_nodes_to_score == 30 and prof.compat == "1.35"


def test_multipoint_and_reordering():
    prof = profile_from_config(_doc({"plugins": {
        "multiPoint": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}],
                       "enabled": [{"name": "TaintToleration", "weight": 7}]},
        "filter": {"enabled": [{"name": "NodeResourcesFit"}]}}}))
    # A default plugin configured at the filter point itself moves to the front (expandMultiPointPlugins).
    assert prof.filters == ("NodeResourcesFit", "NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts",
                            "PodTopologySpread")
    assert dict(prof.scores) == {"TaintToleration": 7, "NodeAffinity": 2, "NodeResourcesFit": 1,
                                 "PodTopologySpread": 2}


def test_resource_weight_zero_means_one_and_ignored_resources():
    prof = profile_from_config(_doc({"pluginConfig": [{"name": "NodeResourcesFit", "args": {
        "ignoredResources": ["example.com/foo"], "ignoredResourceGroups": ["vendor.io"],
        "scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 0}, {"name": "memory"}]}}}]}))
    assert prof.fit_resources == (("cpu", 1), ("memory", 1))
    assert prof.fit_ignored_resources == ("example.com/foo",) and prof.fit_ignored_groups == ("vendor.io",)


def test_unmodelled_plugins_are_recorded_not_fatal():
    prof = profile_from_config(_doc({"plugins": {"score": {"enabled": [{"name": "ImageLocality"}]}}}))
    assert prof.ignored_plugins == ("ImageLocality",)


@pytest.mark.parametrize("profile,message", [
    ({"plugins": {"filter": {"enabled": [{"name": "Bogus"}]}}}, "unknown plugin 'Bogus'"),
    ({"plugins": {"score": {"enabled": [{"name": "NodeAffinity", "weight": -1}]}}}, "range [0, 100]"),
    ({"plugins": {"score": {"enabled": [{"name": "NodeAffinity", "weight": 101}]}}}, "range [0, 100]"),
    ({"plugins": {"preFilter": {"disabled": [{"name": "NodeAffinity"}]}}}, "not supported"),
    ({"pluginConfig": [{"name": "NodeAffinity", "args": {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}}]},
     "addedAffinity: not supported"),
    ({"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Spread"}}}]},
     "unknown strategy"),
    ({"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
        "type": "RequestedToCapacityRatio",
        "requestedToCapacityRatio": {"shape": [{"utilization": 50, "score": 1}, {"utilization": 10, "score": 2}]}}}}]},
     "strictly increasing"),
])
def test_bad_configs_are_one_line_errors(profile, message):
    with pytest.raises(InputError, match=None) as err:
        profile_from_config(_doc(profile))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_wrong_kind():
    with pytest.raises(InputError, match="expected KubeSchedulerConfiguration"):
        profile_from_config({"kind": "Pod"})


def test_profile_validates_its_own_fields():
    with pytest.raises(InputError, match="compat"):
        Profile(compat="1.20")
    with pytest.raises(InputError, match="percentageOfNodesToScore"):
        Profile(percentage_of_nodes_to_score=101)
