"""PodTopologySpread: DoNotSchedule constraints filter, ScheduleAnyway constraints score.
Upstream: pkg/scheduler/framework/plugins/podtopologyspread/{common,filtering,scoring,plugin}.go.

Counts of matching pods per domain are segment sums over the bound pods, computed by the kernels in every cycle;
they read other nodes' pods (and the feasible set), so a run of such pods goes pod by pod.

A pod without constraints of its own gets the default constraints (args.defaultingType System: the system
defaults; List: args.defaultConstraints) with the selector its Services, ReplicationController, ReplicaSet or
StatefulSet give it (cluster.default_selectors, upstream helper.DefaultSelector); none when that selector is
empty. The system defaults score without requiring every topology key on a node (kernels/pod_topology_spread.py).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from pydantic import Field, field_validator, model_validator

from ..cluster_models.objects import Int32, LabelSelector, label_key_problem
from ..kernels import node_affinity as affinity_kernel
from ..kernels import pod_topology_spread as kernel
from ..kernels import taint_toleration as taint_kernel
from ..kernels.status import SUCCESS
from .framework import (DOMAIN, NODE_ADDED, NODE_UPDATED, NOMINATED_POD_DELETED, PER_POD, POD_BOUND, POD_DELETED, SKIP,
                        ArgsInvalid, Pads, Plugin, PluginArgs, pad1)
from .labels import label_test, selector_matches, selector_tests
from .node_affinity import pad_terms, required_node_affinity
from .taint_toleration import untolerated_hard

REASON_MISSING_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
REASON_SKEW = "node(s) didn't match pod topology spread constraints"
ZONE = "topology.kubernetes.io/zone"
_ACTIONS = ("DoNotSchedule", "ScheduleAnyway")


class DefaultConstraint(PluginArgs):
    """One of args.defaultConstraints: a v1.TopologySpreadConstraint, checked as ValidatePodTopologySpreadArgs
    does (by PodTopologySpreadArgs). labelSelector is decoded only to be refused; matchLabelKeys has no effect
    (the pod's default selector replaces the constraint's)."""
    max_skew: Int32 = 0
    topology_key: str = ""
    when_unsatisfiable: str = ""
    label_selector: LabelSelector | None = None
    min_domains: Int32 | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: list[str] = Field(default_factory=list)


# systemDefaultConstraints (plugin.go).
SYSTEM_DEFAULTS = (
    DefaultConstraint(max_skew=3, topology_key=kernel.HOSTNAME, when_unsatisfiable="ScheduleAnyway"),
    DefaultConstraint(max_skew=5, topology_key=ZONE, when_unsatisfiable="ScheduleAnyway"),
)


class PodTopologySpreadArgs(PluginArgs):
    default_constraints: list[DefaultConstraint] = Field(default_factory=list)
    defaulting_type: str = "System"

    @field_validator("defaulting_type", mode="before")
    @classmethod
    def _system_by_default(cls, raw):
        # SetDefaults_PodTopologySpreadArgs: an empty defaultingType is System.
        return raw or "System"

    @model_validator(mode="after")
    def _validate(self):
        # ValidatePodTopologySpreadArgs: the errors in upstream's order, aggregated as upstream renders them.
        errors = []
        if self.defaulting_type not in ("System", "List"):
            errors.append(f'defaultingType: Unsupported value: "{self.defaulting_type}": supported values: '
                          '"System", "List"')
        elif self.defaulting_type == "System" and self.default_constraints:
            errors.append('defaultingType: Invalid value: "System": when .defaultConstraints are not empty')
        seen = set()
        for i, c in enumerate(self.default_constraints):
            at = f"defaultConstraints[{i}]"
            if c.max_skew <= 0:
                errors.append(f"{at}.maxSkew: Invalid value: {c.max_skew}: not in valid range (0, inf)")
            if not c.topology_key:
                errors.append(f"{at}.topologyKey: Required value: can not be empty")
            elif (problem := label_key_problem(c.topology_key)) is not None:
                errors.append(f'{at}.topologyKey: Invalid value: "{c.topology_key}": {problem}')
            if not c.when_unsatisfiable:
                errors.append(f"{at}.whenUnsatisfiable: Required value: can not be empty")
            elif c.when_unsatisfiable not in _ACTIONS:
                errors.append(f'{at}.whenUnsatisfiable: Unsupported value: "{c.when_unsatisfiable}": supported '
                              'values: "DoNotSchedule", "ScheduleAnyway"')
            if c.label_selector is not None:
                errors.append(f"{at}.labelSelector: Forbidden: constraint must not define a selector, as they "
                              "deduced for each pod")
            if (c.topology_key, c.when_unsatisfiable) in seen:
                errors.append(f'{at}: Duplicate value: "{{{c.topology_key}, {c.when_unsatisfiable}}}"')
            seen.add((c.topology_key, c.when_unsatisfiable))
        if errors:
            raise ArgsInvalid(errors)
        return self

    @property
    def defaults(self) -> tuple[DefaultConstraint, ...]:
        """pl.defaultConstraints: what a pod without constraints of its own is spread by."""
        return SYSTEM_DEFAULTS if self.defaulting_type == "System" else tuple(self.default_constraints)


@dataclass(frozen=True)
class State:
    namespace: int                            # namespace id of the pod, -1 when no bound pod shares it
    constraints: tuple[kernel.Constraint, ...]
    node_affinity: tuple | None               # the pod's required node affinity terms (inclusion policy)
    untolerated: np.ndarray                   # (T,) bool hard taints the pod does not tolerate (inclusion)
    require_all: bool = True                  # Score ignores nodes missing a topology key (requireAllTopologies:
                                              # False only for the system default constraints)


def _constraints(pod, tensors, own_labels, given, default_selector=None) -> tuple[kernel.Constraint, ...]:
    """filterTopologySpreadConstraints over `given` (the pod's constraints of one action); for the args' default
    constraints (buildDefaultConstraints) `default_selector`, the pod's non-empty default selector, replaces
    each constraint's own selector and its matchLabelKeys."""
    out = []
    labels = pod.metadata.labels
    keys = tensors.node_labels.keys
    for c in given:
        if default_selector is not None:
            selector = selector_tests(default_selector, tensors.pod_labels)
        else:
            # matchLabelKeys: the pod's own value for each listed key joins the selector (absent keys are
            # ignored); a key also in matchLabels must satisfy both.
            selector = selector_tests(c.label_selector, tensors.pod_labels)
            if selector is not None:
                extra = tuple(label_test(tensors.pod_labels, k, "In", [labels[k]]) for k in c.match_label_keys
                              if k in labels)
                selector = selector + extra
        key = keys.get(c.topology_key)
        out.append(kernel.Constraint(
            key=key, is_hostname=c.topology_key == kernel.HOSTNAME, max_skew=c.max_skew,
            min_domains=1 if c.min_domains is None else c.min_domains, selector=selector,
            self_match=int(selector is not None
                           and bool(affinity_kernel.term_matches(np, own_labels[None, :], selector)[0])),
            # Unset policies are Honor (affinity) and Ignore (taints); any other value but Honor ignores.
            honor_affinity=c.node_affinity_policy in (None, "Honor"),
            honor_taints=c.node_taints_policy == "Honor",
            empty_value=tensors.node_labels.value_id(key, "")))
    return tuple(out)


_KEPT_SELECTORS = 256      # selectors whose counts one score cache keeps


class PodTopologySpread(Plugin):
    name = "PodTopologySpread"
    reads_requests = False
    Args = PodTopologySpreadArgs
    signs_from_template = True         # its signature: labels and namespace

    def hint(self, event, pod, objects, cluster) -> bool:
        """isSchedulableAfterPodChange / isSchedulableAfterNodeChange (v1.36), over the constraints that can reject
        the pod (getConstraints: its DoNotSchedule ones, or the default DoNotSchedule ones with its default
        selector; matchLabelKeys merged). A pod bound or deleted helps only if it was on a node, lives in the pod's
        namespace and a constraint's selector selects it. A node added helps when it has every constraint's
        topology key; a node updated, when it gained or lost one of them, or keeps them all with another value of
        one or other taints."""
        if event == NOMINATED_POD_DELETED:      # the deleted pod was not on a node (involvedInTopologySpreading)
            return False
        if objects is None or event not in (POD_BOUND, POD_DELETED, NODE_ADDED, NODE_UPDATED):
            return True
        constraints = self._hard_constraints(pod, cluster)
        if event in (NODE_ADDED, NODE_UPDATED):
            keys = [key for key, _, _ in constraints]
            old, new = (None, objects) if event == NODE_ADDED else objects
            matching = all(k in new.metadata.labels for k in keys)
            if old is None:
                return matching
            if all(k in old.metadata.labels for k in keys) != matching:
                return True
            return matching and (any(old.metadata.labels.get(k) != new.metadata.labels.get(k) for k in keys)
                                 or old.spec.taints != new.spec.taints)
        own = pod.metadata.labels
        tests = [(selector, {k: own[k] for k in keys if k in own}) for _, selector, keys in constraints]
        return any(other.metadata.namespace == pod.metadata.namespace
                   and selector_matches(selector, other.metadata.labels)
                   and all(other.metadata.labels.get(k) == v for k, v in extra.items())
                   for selector, extra in tests for other in objects)

    def _hard_constraints(self, pod, cluster) -> list[tuple[str, object, list[str]]]:
        """getConstraints' DoNotSchedule constraints as (topologyKey, selector, matchLabelKeys)."""
        found = self._given(pod, cluster, "DoNotSchedule")
        if found is None:
            return []
        given, default_selector = found
        if default_selector is not None:
            return [(c.topology_key, default_selector, []) for c in given]
        return [(c.topology_key, c.label_selector, c.match_label_keys) for c in given]

    def _given(self, pod, cluster, action: str) -> tuple[list, object] | None:
        """getConstraints for `action`: the pod's own constraints of it (no default selector), or, when it has none
        of its own, the default ones with its default selector; None when none apply (none of that action, or
        defaults and no default selector)."""
        if pod.spec.topology_spread_constraints:
            given = [c for c in pod.spec.topology_spread_constraints if c.when_unsatisfiable == action]
            return (given, None) if given else None
        given = [c for c in self.args.defaults if c.when_unsatisfiable == action]
        selector = cluster.default_selectors.selector(pod) if given else None
        return None if selector is None else (given, selector)

    def signs(self, spec) -> bool:
        return bool(spec.topology_spread_constraints)

    def signature(self, pod):
        # The pod's own labels and namespace feed its constraints (selectors, matchLabelKeys, self-match).
        if not pod.spec.topology_spread_constraints:
            return None
        return {"labels": pod.metadata.labels, "namespace": pod.metadata.namespace}

    def splits_runs(self, cluster) -> bool:
        return bool(self.args.defaults) and bool(cluster.default_selectors)

    def run_key(self, pod, cluster):
        """For a pod without constraints of its own: what its default selector is read from (labels, namespace,
        controller), when it has one. Its signature cannot say: the selector comes from the cluster's Services and
        controllers, and signing every such pod by its labels would split shapes on clusters where no default
        selector exists."""
        if pod.spec.topology_spread_constraints:
            return None
        selectors = cluster.default_selectors
        return None if selectors.selector(pod) is None else selectors.cache_key(pod)

    def _state(self, pod, cluster, action: str):
        tensors = cluster.tensors
        spec = pod.pod.spec
        found = self._given(pod.pod, cluster, action)
        if found is None:
            return SKIP
        given, default_selector = found
        tensors.bound_pods()      # brings the pod-label and namespace vocabularies up to date
        own = tensors.pod_label_row(pod.pod.metadata.labels)
        return State(tensors.namespaces.add(pod.pod.metadata.namespace or "default"),
                     _constraints(pod.pod, tensors, own, given, default_selector),
                     required_node_affinity(pod.pod, tensors),
                     untolerated_hard(pod.pod, tensors.taints, self.context.toleration_comparison),
                     require_all=bool(spec.topology_spread_constraints) or self.args.defaulting_type != "System")

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
        counts, n_values = _counts(xp, state, tensors, cache)
        return kernel.pod_topology_spread_score(xp, nodes.labels, n_values, counts, state.constraints, feasible,
                                                affinity_ok, taints_ok, state.require_all)[0]

    def normalize(self, xp, raw, feasible, state, tensors):
        # Ignored nodes were not scored and do not take part in the normalization.
        ignored = kernel.ignored_nodes(xp, tensors.nodes.labels, state.constraints, feasible, state.require_all)
        return kernel.pod_topology_spread_normalize(xp, raw, feasible, ignored)

    def sampled_scores(self, xp, state, tensors, feasible, rows, cache=None):
        # The domains' pod counts read every node; the terms and the normalization only the sampled ones.
        if rows.ndim == 2:
            return super().sampled_scores(xp, state, tensors, feasible, rows, cache)
        nodes = tensors.nodes
        affinity_ok, taints_ok = _inclusion(xp, state, nodes)
        counts, n_values = _counts(xp, state, tensors, cache)
        raw, ignored = kernel.pod_topology_spread_score(xp, nodes.labels, n_values, counts, state.constraints, feasible,
                                                        affinity_ok, taints_ok, state.require_all, rows)
        return kernel.pod_topology_spread_normalize(xp, raw, xp.ones(raw.shape, dtype=bool), ignored)

    def sampled_lap(self, state, tensors, windows, cache=None):
        nodes = tensors.nodes
        affinity_ok, taints_ok = _inclusion(np, state, nodes)
        counts, n_values = _counts(np, state, tensors, cache)
        return kernel.SampledSpread(nodes.labels, n_values, counts, state.constraints, affinity_ok, taints_ok,
                                    state.require_all, windows)

    def filter_behaviour(self, state):
        return PER_POD

    def score_behaviour(self, state):
        # A copy adds to the counts of its own domains; a node that fills changes the number of scored domains.
        return DOMAIN

    def copy_model(self, state, tensors, feasible, rows, cache=None):
        nodes = tensors.nodes
        affinity_ok, taints_ok = _inclusion(np, state, nodes)
        counts, n_values = _counts(np, state, tensors, cache)
        return kernel.SpreadScores(nodes.labels, n_values, counts, state.constraints, feasible, affinity_ok, taints_ok,
                                   state.require_all, rows)

    def scale(self, xp, raw, lo, hi):
        return kernel.spread_scale(xp, raw, lo, hi)

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


def _counts(xp, state: State, tensors, cache: dict | None = None):
    """Matching bound pods per node for each constraint, and the number of values of each node label key.
    cache (host only): each selector's counts kept across cycles and brought up to date with the pods bound since;
    a pod removed or a binding log cut back counts them all again."""
    bound = tensors.bound_pods()
    n = tensors.nodes.labels.shape[0]
    n_values = [len(v) for v in tensors.node_labels.values]
    if cache is None:
        return [kernel.matching_pods_per_node(xp, bound, n, state.namespace, c.selector)
                for c in state.constraints], n_values
    epoch = (len(tensors.truncations), tensors.removals(), n)
    if len(cache) > _KEPT_SELECTORS:
        cache.clear()
    counts = []
    for c in state.constraints:
        if not c.selector:
            counts.append(kernel.matching_pods_per_node(np, bound, n, state.namespace, c.selector))
            continue
        # The selector's masks grow with the pod-label vocabulary: a new vocabulary is a new entry.
        key = (state.namespace, tuple((t.key, t.allowed.tobytes()) for t in c.selector))
        hit = cache.get(key)
        if hit is None or hit[1] != epoch or hit[2] > bound.count:
            count = kernel.matching_pods_per_node(np, bound, n, state.namespace, c.selector)
        else:
            count, _, seen = hit
            if seen < bound.count:
                count = count + kernel.matching_pods_per_node(np, bound.rows(seen), n, state.namespace, c.selector)
        cache[key] = (count, epoch, bound.count)
        counts.append(count)
    return counts, n_values
