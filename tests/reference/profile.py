"""The profile the plain reference reads, and its two-way link with phalanx's Profile.

RefProfile is a plain description (which filters and scores run, weights, the resource plugins' args).
`make_profile` builds a phalanx Profile from it through a KubeSchedulerConfiguration document, as a user would
write one; `ref_profile` reads a phalanx Profile back into a RefProfile. The reference functions accept either.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

DEFAULT_FILTERS = (
    "NodeUnschedulable",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
)
DEFAULT_SCORES = (
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodeResourcesFit", 1),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
)


@dataclass(frozen=True)
class RefProfile:
    """What the plain reference (tests/reference) reads of a profile: which filters and scores run (with weights)
    and the resource plugins' args. tests build phalanx profiles from it through a KubeSchedulerConfiguration
    document (make_profile), and turn a phalanx Profile back into it (ref_profile)."""

    filters: tuple = DEFAULT_FILTERS
    scores: tuple = DEFAULT_SCORES
    fit_strategy: str = "LeastAllocated"
    fit_resources: tuple = (("cpu", 1), ("memory", 1))
    rtcr_shape: tuple = ((0, 10), (100, 0))
    balanced_resources: tuple = (("cpu", 1), ("memory", 1))
    percentage_of_nodes_to_score: int = 100
    compat: str = "1.36"
    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False
    post_filters: tuple = ()          # PostFilter plugins (tests/reference/preemption.py models DefaultPreemption)


# Filters phalanx runs for pods that need them whatever a test profile lists (as its default profile does).
_ALWAYS_FILTERS = ("DynamicResources", "GpuShare")
# Scores that are 0 on every node for pods without ResourceClaims, the only pods the reference schedules.
_CLAIM_SCORES = ("DynamicResources",)


def config_doc(ref: RefProfile) -> dict:
    """A KubeSchedulerConfiguration enabling exactly the reference profile's filters and scores, in its order."""
    fit_args = {"scoringStrategy": {"type": ref.fit_strategy,
                                    "resources": [{"name": n, "weight": w} for n, w in ref.fit_resources]}}
    if ref.fit_strategy == "RequestedToCapacityRatio":
        fit_args["scoringStrategy"]["requestedToCapacityRatio"] = {
            "shape": [{"utilization": u, "score": s} for u, s in ref.rtcr_shape]}
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": ref.percentage_of_nodes_to_score,
        "profiles": [{
            "schedulerName": "default-scheduler",
            "plugins": {
                # A plugin's PreFilter (PreScore) goes with its Filter (Score), as the reference reads a profile.
                "preFilter": {"disabled": [{"name": "*"}],
                              "enabled": [{"name": f} for f in (*ref.filters, *_ALWAYS_FILTERS)
                                          if _implements(f, "preFilter")]},
                "filter": {"disabled": [{"name": "*"}],
                           "enabled": [{"name": f} for f in (*ref.filters, *_ALWAYS_FILTERS)]},
                "preScore": {"disabled": [{"name": "*"}],
                             "enabled": [{"name": n} for n, _ in ref.scores if _implements(n, "preScore")]},
                "score": {"disabled": [{"name": "*"}], "enabled": [{"name": n, "weight": w} for n, w in ref.scores]},
                "postFilter": {"disabled": [{"name": "*"}], "enabled": [{"name": n} for n in ref.post_filters]},
            },
            "pluginConfig": [
                {"name": "NodeResourcesFit", "args": fit_args},
                {"name": "NodeResourcesBalancedAllocation",
                 "args": {"resources": [{"name": n, "weight": w} for n, w in ref.balanced_resources]}},
                {"name": "InterPodAffinity",
                 "args": {"hardPodAffinityWeight": ref.hard_pod_affinity_weight,
                          "ignorePreferredTermsOfExistingPods": ref.ignore_preferred_terms_of_existing_pods}},
            ],
        }],
    }


def _implements(plugin: str, point: str) -> bool:
    from phalanx.plugins import REGISTRY
    return point in REGISTRY[plugin].points()


def make_profile(**kw):
    """A phalanx Profile for the reference profile RefProfile(**kw), built from a KubeSchedulerConfiguration."""
    from phalanx.sched.config import profile_from_config
    ref = RefProfile(**kw)
    return profile_from_config(config_doc(ref), compat=ref.compat)


def ref_profile(profile) -> RefProfile:
    """The reference's view of a phalanx Profile (a RefProfile passes through)."""
    if isinstance(profile, RefProfile):
        return profile
    fit, balanced, ipa = (profile.arg(n) for n in ("NodeResourcesFit", "NodeResourcesBalancedAllocation",
                                                      "InterPodAffinity"))
    weights = dict(profile.weights)
    out = RefProfile(
        filters=tuple(f for f in profile.enabled("filter") if f not in _ALWAYS_FILTERS),
        scores=tuple((n, weights[n]) for n in profile.enabled("score") if n not in _CLAIM_SCORES),
        percentage_of_nodes_to_score=profile.percentage_of_nodes_to_score, compat=profile.compat,
        post_filters=profile.enabled("postFilter"))
    if fit is not None:
        out = replace(out, fit_strategy=fit.strategy, fit_resources=fit.resources, rtcr_shape=fit.shape or out.rtcr_shape)
    if balanced is not None:
        out = replace(out, balanced_resources=tuple((r.name, r.weight or 1) for r in balanced.resources))
    if ipa is not None:
        out = replace(out, hard_pod_affinity_weight=ipa.hard_pod_affinity_weight,
                      ignore_preferred_terms_of_existing_pods=ipa.ignore_preferred_terms_of_existing_pods)
    return out
