"""InterPodAffinity: the pod's required pod affinity / anti-affinity and existing pods' required anti-affinity
(Filter); preferred terms both ways and existing pods' required affinity (Score).
Upstream: pkg/scheduler/framework/plugins/interpodaffinity/{plugin,filtering,scoring}.go (v1.36.0).

Host side, once per pod: which bound pods each of the pod's terms selects (a vectorised label test over the
BoundPods table) and which term classes of the bound pods select the pod (one test per distinct term, cached
per pod labels and namespace). Kernels (kernels/interpod_affinity.py) turn per-node counts into per-domain counts
(segment sums over a node label) and read them back at every node; no loop over nodes.

Upstream's semantics kept on purpose (docs/semantics.md): terminating pods count; a nil labelSelector selects no
pod; an empty namespaceSelector selects every namespace; the incoming pod's namespaceSelectors are resolved to the
namespaces that exist; the first pod of a self-affine group may go where no matching pod is yet, if no pod
anywhere matches its terms; a node without an affinity term's topology key is UnschedulableAndUnresolvable.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pydantic import model_validator

from ..cluster_models.objects import Int32
from ..cluster_models.tensors import (PREFERRED_AFFINITY, PREFERRED_ANTI_AFFINITY, REQUIRED_AFFINITY,
                                      REQUIRED_ANTI_AFFINITY, TermClass, pod_term_classes)
from ..kernels import interpod_affinity as kernel
from ..kernels.domain_batch import AddedWeights
from ..kernels.node_affinity import term_matches
from .framework import (DOMAIN, FIXED, NODE_ADDED, NODE_LOCAL, NODE_UPDATED, PER_POD, POD_BOUND, POD_DELETED, SKIP,
                        ArgsInvalid, Plugin, PluginArgs)
from .labels import selector_matches, selector_tests

REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
_REASONS = {kernel.AFFINITY_BIT: REASON_AFFINITY, kernel.ANTI_AFFINITY_BIT: REASON_ANTI_AFFINITY,
            kernel.EXISTING_ANTI_AFFINITY_BIT: REASON_EXISTING_ANTI_AFFINITY}
# More copies than any node can hold: the capacity of a node this plugin does not limit.
_UNLIMITED = 1 << 40
# Incoming pods whose PreScore sums are kept per cluster (AffinityTerms.score_sums); beyond it they start over.
_KEPT_SUMS = 64


class InterPodAffinityArgs(PluginArgs):
    hard_pod_affinity_weight: Int32 = 1
    ignore_preferred_terms_of_existing_pods: bool = False

    @model_validator(mode="after")
    def _weight_range(self):
        # validateHardPodAffinityWeight: 0 is valid (it turns the existing pods' required-affinity score off). A
        # validation error (ArgsInvalid), reported with the configuration's others, not a decoding one.
        weight = self.hard_pod_affinity_weight
        if not 0 <= weight <= 100:
            raise ArgsInvalid([f"hardPodAffinityWeight: Invalid value: {weight}: not in valid range [0, 100]"])
        return self


@dataclass(frozen=True)
class Term:
    """One of the incoming pod's terms, its namespaceSelector resolved (mergeAffinityTermNamespacesIfNotEmpty)."""
    key: int                      # node label key id of topologyKey (-1: no node has it)
    topology_key: str
    selector: object              # metav1.LabelSelector or None
    namespaces: frozenset | None  # namespace names the term selects; None: every namespace ({} selector)
    weight: int = 0

    def matches(self, pod) -> bool:
        ns_ok = self.namespaces is None or pod.metadata.namespace in self.namespaces
        return ns_ok and selector_matches(self.selector, pod.metadata.labels)

    def bound_match(self, tensors, bound) -> np.ndarray:
        """(M,) bool the bound pods this term selects (live or not; the caller masks)."""
        tests = selector_tests(self.selector, tensors.pod_labels)
        if tests is None or bound.count == 0:
            return np.zeros(bound.count, bool)
        if self.namespaces is None:
            ns_ok = np.ones(bound.count, bool)
        else:
            ids = [i for i in (tensors.namespaces.get(n) for n in self.namespaces) if i >= 0]
            # one namespace (the usual term) is one comparison; isin sorts
            ns_ok = bound.namespace == ids[0] if len(ids) == 1 else np.isin(bound.namespace, ids)
        return ns_ok & np.asarray(term_matches(np, bound.labels, tests))


@dataclass(frozen=True)
class FilterState:
    affinity: tuple               # (key, (N,) pods matching all required affinity terms) per required term
    self_affine: bool             # the pod matches all its own required affinity terms
    anti: tuple                   # (key, (N,) pods the term selects) per required anti-affinity term
    existing: tuple               # (key, (N,) existing pods whose required anti-affinity of that key selects the pod)
    copies_per_node: bool         # copies of the pod block each other only on their own node (see filter_behaviour)
    self_blocking: tuple = ()     # node label key ids of the pod's anti-affinity terms that select the pod itself


@dataclass(frozen=True)
class ScoreSums:
    """PreScore's per-node signed weights for one incoming pod, over the bound pods and term rows seen so far."""
    affinity: object              # the pod's spec.affinity these are for (identity)
    epoch: tuple                  # what, when it moves, makes the sums start over (pods removed, nodes rewritten)
    bound_seen: int               # BoundPods rows summed
    terms_seen: int               # AffinityTerms rows summed
    by_key: tuple                 # (key, (N,) int64 signed weights per node) per topology key, sorted
    contributed: bool             # some term reached a node carrying its key (else PreScore skips)
    copy: tuple                   # ScoreState.copy: what one more bound copy of the pod adds (made with the epoch)


@dataclass(frozen=True)
class ScoreState:
    by_key: tuple                 # (key, (N,) signed weights of matching pods per node) per topology key
    copy: tuple                   # ((key, weight), ...): a bound copy of the pod adds weight to its domain of key
                                  # (the pod's preferred terms and its own terms selecting itself; nonzero only)


def _has_pod_affinity(pod) -> bool:
    a = pod.spec.affinity
    return a is not None and (a.pod_affinity is not None or a.pod_anti_affinity is not None)


def _required(pod, anti: bool) -> list:
    a = pod.spec.affinity
    part = None if a is None else (a.pod_anti_affinity if anti else a.pod_affinity)
    return [] if part is None else list(part.required_during_scheduling_ignored_during_execution)


def _preferred(pod, anti: bool) -> list:
    a = pod.spec.affinity
    part = None if a is None else (a.pod_anti_affinity if anti else a.pod_affinity)
    return [] if part is None else list(part.preferred_during_scheduling_ignored_during_execution)


def _term_namespaces(term, owner_namespace: str) -> tuple[frozenset, object]:
    """(listed namespaces, namespaceSelector) of a term as upstream reads it (getNamespacesFromPodAffinityTerm):
    no namespaces and no namespaceSelector means the owner's namespace."""
    if not term.namespaces and term.namespace_selector is None:
        return frozenset({owner_namespace}), None
    return frozenset(term.namespaces), term.namespace_selector


def _selects_namespace(term, owner_namespace: str, namespace: str, namespace_labels: dict) -> bool:
    listed, selector = _term_namespaces(term, owner_namespace)
    return namespace in listed or selector_matches(selector, namespace_labels)


def _existing_term_selects(tc, pod, namespace_labels: dict) -> bool:
    """AffinityTerm.Matches of a bound pod's term against the incoming pod."""
    return (_selects_namespace(tc.term, tc.namespace, pod.metadata.namespace, namespace_labels)
            and selector_matches(tc.term.label_selector, pod.metadata.labels))


def _merged(term, owner_namespace: str, cluster, weight: int = 0) -> Term:
    """The incoming pod's term with its namespaceSelector replaced by the names of the namespaces it selects."""
    listed, selector = _term_namespaces(term, owner_namespace)
    if selector is not None and not selector.match_labels and not selector.match_expressions:
        namespaces = None                                      # {}: every namespace
    elif selector is not None:
        namespaces = listed | {name for name, ns in _namespaces(cluster, owner_namespace).items()
                               if selector_matches(selector, ns.metadata.labels)}
    else:
        namespaces = listed
    key = cluster.tensors.node_labels.keys.get(term.topology_key)
    return Term(key, term.topology_key, term.label_selector, namespaces, weight)


def _namespaces(cluster, own: str) -> dict:
    """The namespaces that exist: the input's Namespace objects, the incoming pod's and every namespace a bound
    pod lives in."""
    cluster.namespace(own)
    for name in cluster.tensors.namespaces.items:
        cluster.namespace(name)
    return cluster.namespaces


class InterPodAffinity(Plugin):
    name = "InterPodAffinity"
    reads_requests = False
    Args = InterPodAffinityArgs
    events = frozenset({POD_BOUND, POD_DELETED, NODE_ADDED, NODE_UPDATED})
    signs_from_template = True         # its signature: labels and namespace

    def signs(self, spec) -> bool:
        return spec.affinity is not None and (spec.affinity.pod_affinity is not None
                                              or spec.affinity.pod_anti_affinity is not None)

    def signature(self, pod):
        # The pod's own labels and namespace feed its terms (self-affinity, the first-pod rule, copies); pods
        # without terms whose labels existing terms tell apart are split by run_key.
        if not _has_pod_affinity(pod):
            return None
        return {"labels": pod.metadata.labels, "namespace": pod.metadata.namespace}

    def splits_runs(self, cluster) -> bool:
        return bool(cluster.tensors.affinity_terms().classes)

    def run_key(self, pod, cluster):
        """Which existing term classes select this pod (pods without terms of their own; None: no term exists or
        the pod has terms, then its labels are in its signature)."""
        if _has_pod_affinity(pod):
            return None
        terms = cluster.tensors.affinity_terms()
        if not terms.classes:
            return None
        return tuple(np.flatnonzero(self._selecting_classes(pod, cluster, terms)).tolist())

    def _selecting_classes(self, pod, cluster, terms) -> np.ndarray:
        """(C,) bool: the bound pods' term classes that select `pod` (cached per namespace and labels)."""
        key = (pod.metadata.namespace, tuple(sorted(pod.metadata.labels.items())))
        hit = terms.selecting.get(key)
        if hit is None or len(hit) < len(terms.classes):
            ns_labels = cluster.namespace(pod.metadata.namespace).metadata.labels
            done = np.zeros(0, bool) if hit is None else hit
            more = [_existing_term_selects(tc, pod, ns_labels) for tc in terms.classes[len(done):]]
            hit = terms.selecting[key] = np.concatenate([done, np.array(more, bool)])
        return hit

    # -- hints ------------------------------------------------------------------------------------
    def hint(self, event, pod, objects, cluster) -> bool:
        """isSchedulableAfterPodChange / isSchedulableAfterNodeChange (v1.36). Events that do not say which
        objects changed (a node removed with its pods, a Permit rejection) may help."""
        if objects is None:
            return True
        affinity = [_merged_plain(t, pod) for t in _required(pod, anti=False)]
        anti = [_merged_plain(t, pod) for t in _required(pod, anti=True)]
        if event == POD_BOUND:
            return any(_matches_all(affinity, p) for p in objects)
        if event == POD_DELETED:
            for p in objects:
                if _matches_all(anti, p):
                    return True
                if _matches_all([_merged_plain(t, p) for t in _required(p, anti=True)], pod):
                    return True
            return False
        if event == NODE_ADDED:                  # objects: the node
            return bool(anti) or any(t.topology_key in objects.metadata.labels for t in affinity)
        if event == NODE_UPDATED:
            old, new = objects
            before, after = old.metadata.labels, new.metadata.labels
            for t in affinity:
                k = t.topology_key
                if k in after and (k not in before or before[k] != after[k]):
                    return True
            for t in anti:
                k = t.topology_key
                if k in before and (k not in after or before[k] != after[k]):
                    return True
            return False
        return True

    # -- PreFilter / Filter -----------------------------------------------------------------------
    def pre_filter(self, pod, cluster):
        pod = pod.pod
        tensors = cluster.tensors
        terms = tensors.affinity_terms()
        if not _required(pod, anti=False) and not _required(pod, anti=True) \
                and REQUIRED_ANTI_AFFINITY not in terms.kinds:
            return SKIP
        bound = tensors.bound_pods()
        n = tensors.nodes.size
        live = bound.live()
        ns = pod.metadata.namespace
        affinity = [_merged(t, ns, cluster) for t in _required(pod, anti=False)]
        anti = [_merged(t, ns, cluster) for t in _required(pod, anti=True)]

        existing = []           # (key, per-node counts) of existing required anti-affinity selecting the pod
        if terms.count:
            kinds, keys = _class_columns(terms, tensors)
            anti_classes = self._selecting_classes(pod, cluster, terms) & (kinds == REQUIRED_ANTI_AFFINITY)
            cls, owner = terms.cls[: terms.count], terms.pod[: terms.count]
            for key in np.unique(keys[anti_classes & (keys >= 0)]).tolist():
                take = (anti_classes & (keys == key))[cls] & live[owner]
                per_node = kernel.matching_pods_per_node(np, bound.node[owner], take, n)
                if (per_node[tensors.nodes.labels[:, key] >= 0] > 0).any():     # upstream's map has an entry
                    existing.append((key, per_node))
        if not existing and not affinity and not anti:
            return SKIP
        existing = tuple(existing)

        all_match = live.copy()
        for t in affinity:
            all_match &= t.bound_match(tensors, bound)
        per_node_all = kernel.matching_pods_per_node(np, bound.node, all_match, n) if affinity else None
        anti_counts = tuple((t.key, kernel.matching_pods_per_node(np, bound.node, live & t.bound_match(tensors, bound),
                                                                  n)) for t in anti)
        # A copy blocks the next one where the pod's anti-affinity selects the copy, or the copy's (as an existing
        # pod's term) selects the pod.
        ns_labels = cluster.namespace(ns).metadata.labels
        self_blocking = tuple(sorted({t.key for t, raw in zip(anti, _required(pod, anti=True))
                                      if t.key >= 0 and (t.matches(pod) or _existing_term_selects(
                                          TermClass(REQUIRED_ANTI_AFFINITY, 0, raw, ns), pod, ns_labels))}))
        per_node_keys = all(tensors.unique_label_values(k) for k in self_blocking)
        return FilterState(
            affinity=tuple((t.key, per_node_all) for t in affinity),
            self_affine=bool(affinity) and all(t.matches(pod) for t in affinity),
            anti=anti_counts, existing=existing,
            copies_per_node=not affinity and per_node_keys, self_blocking=self_blocking)

    def filter(self, xp, state, tensors):
        return kernel.interpod_affinity_filter(xp, tensors.nodes.labels, _n_values(tensors), state.affinity,
                                               state.self_affine, state.anti, state.existing)

    def reasons(self, payload, tensors):
        return [_REASONS[int(payload)]]

    def filter_behaviour(self, state):
        # Copies of a pod without terms change nothing this Filter reads. With only anti-affinity whose topology
        # keys are per node (hostname), a copy blocks only its own node (copy_capacity); otherwise pod by pod.
        if not state.affinity and not state.anti:
            return FIXED
        return NODE_LOCAL if state.copies_per_node else PER_POD

    def copy_capacity(self, xp, state, tensors):
        labels = tensors.nodes.labels
        blocked = xp.zeros((labels.shape[0],), dtype=bool)
        for key in state.self_blocking:
            blocked = blocked | (labels[:, key] >= 0)
        return xp.where(blocked, 1, _UNLIMITED).astype(xp.int64)

    # -- PreScore / Score -------------------------------------------------------------------------
    def pre_score(self, pod, cluster):
        pod = pod.pod
        has_constraints = bool(_preferred(pod, anti=False) or _preferred(pod, anti=True))
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return SKIP
        terms = cluster.tensors.affinity_terms()
        if not has_constraints and not terms.kinds - {REQUIRED_ANTI_AFFINITY}:
            return SKIP                      # nothing could contribute
        sums = self._score_sums(pod, cluster, terms)
        if not sums.contributed:
            return SKIP
        return ScoreState(sums.by_key, sums.copy)

    def _score_sums(self, pod, cluster, terms) -> ScoreSums:
        """The pod's PreScore sums now: those kept for it with the bound pods and term rows added since summed on
        top (pods bind far more often than they leave, and each binding adds to one node); anything removed,
        nodes added or rewritten, or new namespaces start them over."""
        tensors = cluster.tensors
        bound = tensors.bound_pods()
        epoch = (len(tensors.truncations), tensors.removals(), tensors.nodes.size, tensors.node_rewrites,
                 len(cluster.namespaces))
        key = (pod.metadata.namespace, tuple(sorted(pod.metadata.labels.items())), id(pod.spec.affinity),
               self.args.hard_pod_affinity_weight)
        sums = terms.score_sums.get(key)
        if sums is None or sums.affinity is not pod.spec.affinity or sums.epoch != epoch \
                or sums.bound_seen > bound.count or sums.terms_seen > terms.count:
            sums = ScoreSums(pod.spec.affinity, epoch, 0, 0, (), False, self._copy_weights(pod, cluster))
        if sums.bound_seen < bound.count or sums.terms_seen < terms.count:
            sums = self._sum_rows(pod, cluster, terms, bound, sums)
            if len(terms.score_sums) >= _KEPT_SUMS and key not in terms.score_sums:
                terms.score_sums.clear()
            terms.score_sums[key] = sums
        return sums

    def _sum_rows(self, pod, cluster, terms, bound, sums: ScoreSums) -> ScoreSums:
        """`sums` with the bound pods from row sums.bound_seen and the term rows from sums.terms_seen added:
        the incoming pod's preferred terms over those pods, and those terms' weights where they select the pod."""
        tensors = cluster.tensors
        n = tensors.nodes.size
        live = bound.live()
        ns = pod.metadata.namespace
        per_node = dict(sums.by_key)              # node label key id -> (N,) signed weights (new arrays, below)
        contributed = sums.contributed

        def add(key: int, rows: np.ndarray, w: np.ndarray) -> None:
            nonlocal contributed
            if key < 0 or not rows.size:
                return
            nodes = bound.node[rows]
            keyed = tensors.nodes.labels[nodes, key] >= 0
            if keyed.any():
                contributed = True
                acc = per_node[key].copy() if key in per_node else np.zeros(n, np.int64)
                np.add.at(acc, nodes[keyed], w[keyed])
                per_node[key] = acc

        first = sums.bound_seen
        new = bound.rows(first) if first else bound
        for anti, sign in ((False, 1), (True, -1)):
            for wt in _preferred(pod, anti):
                t = _merged(wt.pod_affinity_term, ns, cluster, wt.weight)
                rows = first + np.flatnonzero(live[first:] & t.bound_match(tensors, new))
                add(t.key, rows, np.full(rows.size, sign * wt.weight, np.int64))
        if terms.count > sums.terms_seen:
            hard = self.args.hard_pod_affinity_weight
            selecting = self._selecting_classes(pod, cluster, terms)
            cls, owner = terms.cls[sums.terms_seen: terms.count], terms.pod[sums.terms_seen: terms.count]
            value = np.array([_class_weight(tc, hard) for tc in terms.classes], np.int64)
            _, keys = _class_columns(terms, tensors)
            take = selecting[cls] & live[owner] & (value[cls] != 0)
            for key in np.unique(keys[cls[take]]).tolist():
                sel = np.flatnonzero(take & (keys[cls] == key))
                add(key, owner[sel], value[cls[sel]])
        return ScoreSums(sums.affinity, sums.epoch, bound.count, terms.count, tuple(sorted(per_node.items())),
                         contributed, sums.copy)

    def _copy_weights(self, pod, cluster) -> tuple:
        """What _sum_rows adds for one more bound copy of `pod`, per topology key: the pod's preferred terms that
        select the copy, and the copy's terms (as an existing pod's: hardPodAffinityWeight for required affinity)
        that select the pod; keys no node carries and zero sums left out."""
        ns = pod.metadata.namespace
        weights: dict[int, int] = {}
        for anti, sign in ((False, 1), (True, -1)):
            for wt in _preferred(pod, anti):
                t = _merged(wt.pod_affinity_term, ns, cluster, wt.weight)
                if t.key >= 0 and t.matches(pod):
                    weights[t.key] = weights.get(t.key, 0) + sign * wt.weight
        ns_labels = cluster.namespace(ns).metadata.labels
        keys = cluster.tensors.node_labels.keys
        for tc in pod_term_classes(pod):
            weight, key = _class_weight(tc, self.args.hard_pod_affinity_weight), keys.get(tc.term.topology_key)
            if weight and key >= 0 and _existing_term_selects(tc, pod, ns_labels):
                weights[key] = weights.get(key, 0) + weight
        return tuple(sorted((key, weight) for key, weight in weights.items() if weight))

    def score(self, xp, state, tensors, feasible, cache=None):
        return kernel.interpod_affinity_score(xp, tensors.nodes.labels, _n_values(tensors), state.by_key)

    def normalize(self, xp, raw, feasible, state, tensors):
        return kernel.interpod_affinity_normalize(xp, raw, feasible)

    def sampled_lap(self, state, tensors, windows, cache=None):
        return kernel.SampledAffinity(tensors.nodes.labels, _n_values(tensors), state.by_key, state.copy,
                                      _per_node_keys((*state.by_key, *state.copy), tensors), windows)

    def copies_move_own_node(self, state, tensors):
        # A copy adds its weights to its own domains of the keys in state.copy.
        return all(tensors.unique_label_values(key) for key, _ in state.copy)

    def sampled_scores(self, xp, state, tensors, feasible, rows, cache=None):
        # Domain totals at the sampled nodes alone (a per-node key's without a sum over every node), normalized
        # over each cycle's.
        raw = kernel.interpod_affinity_score(xp, tensors.nodes.labels, _n_values(tensors), state.by_key,
                                             rows.reshape(-1), _per_node_keys(state.by_key, tensors))
        return kernel.interpod_affinity_normalize_rows(xp, raw.reshape(rows.shape))

    def scale(self, xp, raw, lo, hi):
        return kernel.minmax_scale(xp, raw, lo, hi)

    def copy_model(self, state, tensors, feasible, rows, cache=None):
        labels = tensors.nodes.labels
        return AddedWeights(self.score(np, state, tensors, feasible)[rows],
                            tuple((labels[rows, key].astype(np.int64), weight) for key, weight in state.copy))

    def normalization_holders(self, xp, raw, feasible, state):
        hi, lo = kernel.feasible_range(xp, raw, feasible)
        return [feasible & (raw == hi), feasible & (raw == lo)]

    def score_behaviour(self, state):
        # A copy adds to the scores of its own domains where its terms and the pod's select each other.
        return DOMAIN if state.copy else FIXED

    def skip_behaviour(self, pod, point):
        # Skipped now, but once bound a copy holds the pod's preferred terms (or its required affinity, scored
        # with hardPodAffinityWeight), which may select the next copy: PreScore would no longer skip. PreFilter
        # skips only pods without required terms, whose copies bring none.
        if point == "preFilter":
            return FIXED
        pod = pod.pod
        has_preferred = bool(_preferred(pod, anti=False) or _preferred(pod, anti=True))
        hard = self.args.hard_pod_affinity_weight > 0 and bool(_required(pod, anti=False))
        return PER_POD if has_preferred or hard else FIXED

    def reads_bound_pods(self) -> bool:
        return True

    def prepare_token(self, cluster, point):
        # PreFilter skips a pod without required terms until a bound pod brings required anti-affinity, PreScore
        # one without preferred terms until a bound pod brings any other term; removing pods never makes them run.
        terms = cluster.tensors.affinity_terms()
        return terms.added_anti if point == "preFilter" else terms.added - terms.added_anti

    def host_only(self) -> bool:
        # Per-pod states hold per-node counts made on the host; runs where the plugin takes part are not compiled.
        return True


def _class_weight(tc, hard: int) -> int:
    """What a bound pod's term adds to the incoming pod's score when it selects it."""
    if tc.kind == REQUIRED_AFFINITY:
        return hard
    if tc.kind == PREFERRED_AFFINITY:
        return tc.weight
    if tc.kind == PREFERRED_ANTI_AFFINITY:
        return -tc.weight
    return 0                                            # required anti-affinity is not scored


def _merged_plain(term, owner) -> Term:
    """A term as the queueing hints read it: not namespace-merged, its namespaceSelector tested against an empty
    label set (so only a selector without requirements selects)."""
    listed, selector = _term_namespaces(term, owner.metadata.namespace)
    everything = selector is not None and selector_matches(selector, {})
    return Term(-1, term.topology_key, term.label_selector, None if everything else listed)


def _matches_all(terms: list[Term], pod) -> bool:
    return bool(terms) and all(t.matches(pod) for t in terms)


def _n_values(tensors) -> list[int]:
    return [len(v) for v in tensors.node_labels.values]


def _per_node_keys(keyed, tensors) -> tuple:
    """The node label keys of (key, ...) pairs whose values each sit on one node alone (their domain totals are the
    node's own)."""
    return tuple(key for key, _ in keyed if key >= 0 and tensors.unique_label_values(key))


def _class_columns(terms, tensors) -> tuple[np.ndarray, np.ndarray]:
    """((C,) kind, (C,) node label key id of the topology key, -1 when no node has it) of every term class."""
    kinds = np.array([tc.kind for tc in terms.classes], np.int64)
    keys = np.array([tensors.node_labels.keys.get(tc.term.topology_key) for tc in terms.classes], np.int64)
    return kinds, keys


