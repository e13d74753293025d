"""PodTopologySpread: DoNotSchedule constraints filter, ScheduleAnyway constraints score.
Upstream: pkg/scheduler/framework/plugins/podtopologyspread/{common,filtering,scoring,plugin}.go.

Counts of matching pods per domain are segment sums over the bound pods, computed by the kernels in every cycle;
they read other nodes' pods (and the feasible set), so a run of such pods goes pod by pod.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from pydantic import Field

from ..kernels import node_affinity as affinity_kernel
from ..kernels import pod_topology_spread as kernel
from ..kernels import taint_toleration as taint_kernel
from ..kernels.status import SUCCESS
from .framework import PER_POD, POD_BOUND, POD_DELETED, SKIP, Pads, Plugin, PluginArgs, pad1
from .labels import label_test, selector_matches, selector_tests
from .node_affinity import pad_terms, required_node_affinity
from .taint_toleration import untolerated_hard

REASON_MISSING_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
REASON_SKEW = "node(s) didn't match pod topology spread constraints"
_SPREAD_OWNERS = {"ReplicaSet", "StatefulSet", "ReplicationController"}


class DefaultConstraint(PluginArgs):
    max_skew: int = Field(ge=1)
    topology_key: str
    when_unsatisfiable: Literal["DoNotSchedule", "ScheduleAnyway"]


class PodTopologySpreadArgs(PluginArgs):
    default_constraints: list[DefaultConstraint] = Field(default_factory=list)
    defaulting_type: Literal["System", "List"] = "System"


@dataclass(frozen=True)
class State:
    namespace: int                            # namespace id of the pod, -1 when no bound pod shares it
    constraints: tuple[kernel.Constraint, ...]
    node_affinity: tuple | None               # the pod's required node affinity terms (inclusion policy)
    untolerated: np.ndarray                   # (T,) bool hard taints the pod does not tolerate (inclusion)


def _constraints(pod, tensors, own_labels, action: str) -> tuple[kernel.Constraint, ...]:
    out = []
    labels = pod.metadata.labels
    for c in pod.spec.topology_spread_constraints:
        if c.when_unsatisfiable != action:
            continue
        # matchLabelKeys: the pod's own value for each listed key joins the selector (absent keys are ignored); a
        # key also in matchLabels must satisfy both.
        selector = selector_tests(c.label_selector, tensors.pod_labels)
        if selector is not None:
            extra = tuple(label_test(tensors.pod_labels, k, "In", [labels[k]]) for k in c.match_label_keys
                          if k in labels)
            selector = selector + extra
        out.append(kernel.Constraint(
            key=tensors.node_labels.keys.get(c.topology_key), is_hostname=c.topology_key == kernel.HOSTNAME,
            max_skew=c.max_skew, min_domains=c.min_domains or 1, selector=selector,
            self_match=int(selector is not None
                           and bool(affinity_kernel.term_matches(np, own_labels[None, :], selector)[0])),
            honor_affinity=(c.node_affinity_policy or "Honor") == "Honor",
            honor_taints=(c.node_taints_policy or "Ignore") == "Honor"))
    return tuple(out)


class PodTopologySpread(Plugin):
    name = "PodTopologySpread"
    Args = PodTopologySpreadArgs

    def warnings(self, pod):
        # Default constraints apply to pods selected by Services / ReplicaSets / StatefulSets /
        # ReplicationControllers, whose selectors phalanx does not load.
        defaults = self.args.defaulting_type == "System" or self.args.default_constraints
        if (defaults and not pod.spec.topology_spread_constraints
                and any(o.kind in _SPREAD_OWNERS and o.controller for o in pod.metadata.owner_references)):
            return ["default topology spreading for controller-owned pods (needs the owner's selector; "
                    "not modelled)"]
        return []

    def hint(self, event, pod, objects) -> bool:
        """isSchedulableAfterPodChange: a pod bound or deleted helps only if it lives in the pod's namespace and
        a constraint's selector (with matchLabelKeys) selects it; node events may always help."""
        if event not in (POD_BOUND, POD_DELETED) or objects is None:
            return True
        own = pod.metadata.labels
        for c in pod.spec.topology_spread_constraints:
            extra = {k: own[k] for k in c.match_label_keys if k in own}
            for other in objects:
                if (other.metadata.namespace == pod.metadata.namespace
                        and selector_matches(c.label_selector, other.metadata.labels)
                        and all(other.metadata.labels.get(k) == v for k, v in extra.items())):
                    return True
        return False

    def signs(self, spec) -> bool:
        return bool(spec.topology_spread_constraints)

    def signature(self, pod):
        # The pod's own labels and namespace feed its constraints (selectors, matchLabelKeys, self-match).
        if not pod.spec.topology_spread_constraints:
            return None
        return {"labels": pod.metadata.labels, "namespace": pod.metadata.namespace}

    def _state(self, pod, cluster, action: str):
        tensors = cluster.tensors
        spec = pod.pod.spec
        if not any(c.when_unsatisfiable == action for c in spec.topology_spread_constraints):
            return SKIP
        tensors.bound_pods()      # brings the pod-label and namespace vocabularies up to date
        own = tensors.pod_label_row(pod.pod.metadata.labels)
        return State(tensors.namespaces.add(pod.pod.metadata.namespace or "default"),
                     _constraints(pod.pod, tensors, own, action), required_node_affinity(pod.pod, tensors),
                     untolerated_hard(pod.pod, tensors.taints))

    def pre_filter(self, pod, cluster):
        return self._state(pod, cluster, "DoNotSchedule")

    def filter(self, xp, state, tensors):
        nodes = tensors.nodes
        affinity_ok, taints_ok = _inclusion(xp, state, nodes)
        counts, n_values = _counts(xp, state, tensors)
        return kernel.pod_topology_spread_filter(xp, nodes.labels, n_values, counts, state.constraints,
                                                 affinity_ok, taints_ok)

    def reasons(self, payload, tensors):
        return [REASON_MISSING_LABEL if payload == kernel.MISSING_LABEL_BIT else REASON_SKEW]

    def pre_score(self, pod, cluster):
        return self._state(pod, cluster, "ScheduleAnyway")

    def score(self, xp, state, tensors, feasible, cache=None):
        nodes = tensors.nodes
        affinity_ok, taints_ok = _inclusion(xp, state, nodes)
        counts, n_values = _counts(xp, state, tensors)
        return kernel.pod_topology_spread_score(xp, nodes.labels, n_values, counts, state.constraints, feasible,
                                                affinity_ok, taints_ok)[0]

    def normalize(self, xp, raw, feasible, state, tensors):
        # Feasible nodes missing a topology key were not scored and do not take part in the normalization.
        labels = tensors.nodes.labels
        ignored = feasible & ~kernel.has_all_keys(xp, labels, state.constraints, labels.shape[0])
        return kernel.pod_topology_spread_normalize(xp, raw, feasible, ignored)

    def filter_behaviour(self, state):
        return PER_POD

    def score_behaviour(self, state):
        return PER_POD

    def reads_bound_pods(self) -> bool:
        return True

    def pad_filter_state(self, state, pads: Pads):
        return _pad(state, pads)

    def pad_score_state(self, state, pads: Pads):
        return _pad(state, pads)

    def runtime_filter_inputs(self, state):
        # The namespace id is a run-time input: it may be new to the vocabulary.
        return replace(state, namespace=0), np.array([state.namespace], np.int64)

    def with_runtime_filter(self, state, values):
        return replace(state, namespace=values[0].astype("int32"))

    runtime_score_inputs = runtime_filter_inputs
    with_runtime_score = with_runtime_filter


def _pad(state: State, pads: Pads) -> State:
    return replace(state, node_affinity=pad_terms(state.node_affinity, pads.nodes),
                   untolerated=pad1(state.untolerated, pads.taints, False))


def _inclusion(xp, state: State, nodes):
    """Whether each node matches the pod's node affinity/selector and tolerates its hard taints
    (nodeAffinityPolicy / nodeTaintsPolicy)."""
    if state.node_affinity is None:
        affinity_ok = xp.ones((nodes.labels.shape[0],), dtype=bool)
    else:
        affinity_ok = affinity_kernel.node_affinity_filter(xp, nodes.labels, state.node_affinity)[0] == SUCCESS
    taints_ok = taint_kernel.taint_toleration_filter(xp, nodes.taints, state.untolerated)[0] == SUCCESS
    return affinity_ok, taints_ok


def _counts(xp, state: State, tensors):
    """Matching bound pods per node for each constraint, and the number of values of each node label key."""
    bound = tensors.bound_pods()
    n = tensors.nodes.labels.shape[0]
    counts = [kernel.matching_pods_per_node(xp, bound, n, state.namespace, c.selector) for c in state.constraints]
    return counts, [len(v) for v in tensors.node_labels.values]
