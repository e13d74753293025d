"""Plain reference ("oracle") version of the kube-scheduler InterPodAffinity plugin, v1.36.0.

One node / one pod at a time, ordinary Python loops and dicts keyed like upstream's maps
((topologyKey, value) -> count, topologyKey -> value -> score).  Independent of phalanx's kernels;
duck-typed on phalanx.cluster_models (snake_case attribute names).

Upstream sources (kubernetes/kubernetes; see /work/scratch/interpodaffinity-v1.36.md for how the
v1.36.0 text was pinned):
  pkg/scheduler/framework/plugins/interpodaffinity/plugin.go     (args use, namespace merging, hints)
  pkg/scheduler/framework/plugins/interpodaffinity/filtering.go  (PreFilter, Filter)
  pkg/scheduler/framework/plugins/interpodaffinity/scoring.go    (PreScore, Score, NormalizeScore)
  staging/src/k8s.io/kube-scheduler/framework/types.go @ kubernetes-1.36.0
      (AffinityTerm, AffinityTerm.Matches, GetAffinityTerms, getNamespacesFromPodAffinityTerm)
  pkg/scheduler/framework/types.go (PodInfo.Update / NewPodInfo, NodeInfo.AddPodInfo)
  pkg/scheduler/apis/config/validation (hardPodAffinityWeight range), v1 defaults (weight 1)
The InterPodAffinityHostnameFastPath gate, the filtering/scoring memos and the AssignedPod/TargetPod
event split are 1.37 work and are NOT modelled.

Semantics worth knowing (all upstream behaviour, reproduced on purpose):
  * matchLabelKeys / mismatchLabelKeys are NOT read here: the API server (and phalanx's model
    validation) already merged them into label_selector at pod creation.
  * labelSelector nil matches no pod; labelSelector {} matches every pod (in the term's namespaces).
  * A term's namespaces: the listed ones, OR the owner's own namespace when the list is empty AND
    namespaceSelector is nil; namespaceSelector is OR-ed on top ({} = every namespace).
  * Terminating pods (deletion_timestamp set) ARE counted (NodeInfo never filters them), unlike
    PodTopologySpread.
  * Required affinity: the matching pod must match ALL required affinity terms.  The first pod of a
    self-affine group is let in only when no pod in the cluster matches all the terms (the global
    count map is empty) and the pod matches all its own terms; a node lacking a topology key still
    fails.  Affinity failures are UnschedulableAndUnresolvable, anti-affinity failures Unschedulable.
  * PreScore walks ALL nodes (not only feasible ones), skips nodes with no labels, and never scores
    existing pods' required ANTI-affinity.  NormalizeScore: int64(100 * ((s - min) / (max - min)))
    over the scored nodes; all-equal raw scores give 0.
  * The 1.36 queueing hints match anti-affinity terms with ALL-terms semantics (fixed after 1.36)
    and test namespaceSelectors against an empty label set (no namespace merging in hints).
"""

from __future__ import annotations

from dataclasses import dataclass, field

try:
    from tests.reference import plugins as P
except ImportError:  # tests/ itself on sys.path
    from reference import plugins as P  # type: ignore[no-redef]

SUCCESS = P.SUCCESS
UNSCHEDULABLE = P.UNSCHEDULABLE
UNSCHEDULABLE_AND_UNRESOLVABLE = P.UNSCHEDULABLE_AND_UNRESOLVABLE
SelectorError = P.SelectorError

QUEUE = "Queue"
QUEUE_SKIP = "QueueSkip"

MAX_NODE_SCORE = 100  # fwk.MaxNodeScore
DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1  # SetDefaults_InterPodAffinityArgs

# filtering.go reason strings
REASON_AFFINITY = "node(s) didn't match pod affinity rules"  # ErrReasonAffinityRulesNotMatch
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"  # ErrReasonAntiAffinityRulesNotMatch
# ErrReasonExistingAntiAffinityRulesNotMatch
REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"


# --------------------------------------------------------------------------------------
# AffinityTerm (fwk.AffinityTerm) and PodInfo term lists
# --------------------------------------------------------------------------------------
@dataclass
class Term:
    """A processed PodAffinityTerm (fwk.AffinityTerm / WeightedAffinityTerm)."""

    namespaces: set
    selector: P.LabelSel
    topology_key: str
    ns_selector: P.LabelSel
    weight: int = 0  # only for preferred terms

    def matches(self, pod, ns_labels) -> bool:
        """AffinityTerm.Matches: (namespace listed OR namespaceSelector matches the pod's
        namespace labels) AND label selector matches the pod's labels."""
        if P.pod_namespace(pod) in self.namespaces or self.ns_selector.matches(ns_labels or {}):
            return self.selector.matches(P.pod_labels(pod))
        return False


def new_term(owner, t, weight: int = 0) -> Term:
    """newAffinityTerm(owner pod, v1 term); raises SelectorError when a selector does not parse."""
    selector = P.label_selector_as_selector(t.label_selector)
    if not t.namespaces and t.namespace_selector is None:
        namespaces = {P.pod_namespace(owner)}  # getNamespacesFromPodAffinityTerm
    else:
        namespaces = set(t.namespaces)
    ns_selector = P.label_selector_as_selector(t.namespace_selector)
    return Term(namespaces, selector, t.topology_key, ns_selector, weight)


def _part(pod, which: str):
    aff = pod.spec.affinity
    if aff is None:
        return None
    return aff.pod_affinity if which == "affinity" else aff.pod_anti_affinity


def required_v1_terms(pod, which: str) -> list:
    """GetPodAffinityTerms / GetPodAntiAffinityTerms (required terms only)."""
    part = _part(pod, which)
    return list(part.required_during_scheduling_ignored_during_execution) if part is not None else []


def preferred_v1_terms(pod, which: str) -> list:
    part = _part(pod, which)
    return list(part.preferred_during_scheduling_ignored_during_execution) if part is not None else []


def get_terms(owner, v1_terms) -> list[Term]:
    """GetAffinityTerms: all terms or a SelectorError (one bad term fails the whole list)."""
    return [new_term(owner, t) for t in v1_terms]


@dataclass
class PodTerms:
    """The four term lists PodInfo precomputes, plus the parse errors NewPodInfo returns."""

    required_affinity: list = field(default_factory=list)
    required_anti: list = field(default_factory=list)
    preferred_affinity: list = field(default_factory=list)
    preferred_anti: list = field(default_factory=list)
    errors: list = field(default_factory=list)


def pod_terms(pod) -> PodTerms:
    """PodInfo.Update: a list that fails to parse is left empty and its error recorded.
    (For pods already on nodes the error is ignored, as NodeInfo.AddPod does.)"""
    out = PodTerms()
    for attr, prefix, build in (
        ("required_affinity", "requiredAffinityTerms", lambda: get_terms(pod, required_v1_terms(pod, "affinity"))),
        ("required_anti", "requiredAntiAffinityTerms", lambda: get_terms(pod, required_v1_terms(pod, "anti"))),
        ("preferred_affinity", "preferredAffinityTerms",
         lambda: [new_term(pod, w.pod_affinity_term, w.weight) for w in preferred_v1_terms(pod, "affinity")]),
        ("preferred_anti", "preferredAntiAffinityTerms",
         lambda: [new_term(pod, w.pod_affinity_term, w.weight) for w in preferred_v1_terms(pod, "anti")]),
    ):
        try:
            setattr(out, attr, build())
        except SelectorError as e:
            out.errors.append(f"{prefix}: {e}")
    return out


def _aggregate(errors: list) -> str:
    """utilerrors.NewAggregate(...).Error()."""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


def has_pod_affinity(pod) -> bool:
    """podWithAffinity: spec.affinity.podAffinity or .podAntiAffinity present (even if empty)."""
    aff = pod.spec.affinity
    return aff is not None and (aff.pod_affinity is not None or aff.pod_anti_affinity is not None)


def has_required_anti_affinity(pod) -> bool:
    """podWithRequiredAntiAffinity."""
    return len(required_v1_terms(pod, "anti")) != 0


def matches_all(terms: list, pod) -> bool:
    """podMatchesAllAffinityTerms: non-empty list, every term matches (nsLabels nil)."""
    if not terms:
        return False
    return all(t.matches(pod, None) for t in terms)


# --------------------------------------------------------------------------------------
# namespaces
# --------------------------------------------------------------------------------------
def namespace_labels(name: str, namespaces) -> dict:
    """GetNamespaceLabelsSnapshot: the namespace's labels, or an empty set when it does not exist."""
    for ns in namespaces or ():
        if ns.metadata.name == name:
            return dict(ns.metadata.labels or {})
    return {}


def merge_term_namespaces(term: Term, namespaces) -> None:
    """mergeAffinityTermNamespacesIfNotEmpty: an incoming pod's non-empty namespaceSelector is
    unrolled into the names of the existing namespaces it matches, then becomes Nothing.
    An empty selector ({} = Everything) is kept as is."""
    if term.ns_selector.empty():
        return
    for ns in namespaces or ():
        if term.ns_selector.matches(ns.metadata.labels or {}):
            term.namespaces.add(ns.metadata.name)
    term.ns_selector = P.LabelSel(kind=P.NOTHING)


def _args(args):
    hard = getattr(args, "hard_pod_affinity_weight", DEFAULT_HARD_POD_AFFINITY_WEIGHT)
    if hard is None:
        hard = DEFAULT_HARD_POD_AFFINITY_WEIGHT
    ignore = bool(getattr(args, "ignore_preferred_terms_of_existing_pods", False))
    if hard < 0 or hard > 100:
        raise ValueError(f"hardPodAffinityWeight: Invalid value: {hard}: not in valid range [0, 100]")
    return hard, ignore


def _add(counts: dict, key, value: int) -> None:
    counts[key] = counts.get(key, 0) + value


# --------------------------------------------------------------------------------------
# PreFilter / Filter
# --------------------------------------------------------------------------------------
@dataclass
class FilterState:
    existing_anti: dict  # (topologyKey, value) -> #existing pods whose required anti terms match the pod
    affinity: dict  # (topologyKey, value) -> #pods matching ALL required affinity terms (per term)
    anti: dict  # (topologyKey, value) -> #pods matching a required anti term (per term)
    required_affinity: list
    required_anti: list
    pod: object
    namespace_labels: dict


def prefilter(pod, nodes, pods_by_node, namespaces, args=None) -> FilterState | None:
    """PreFilter.  Returns None for Skip.  Raises SelectorError("parsing pod: ...") where upstream
    returns UnschedulableAndUnresolvable from PreFilter (the pod's own terms do not parse)."""
    info = pod_terms(pod)
    if info.errors:
        raise SelectorError("parsing pod: " + _aggregate(info.errors))
    for t in info.required_affinity + info.required_anti:
        merge_term_namespaces(t, namespaces)
    ns_labels = namespace_labels(P.pod_namespace(pod), namespaces)

    # existing pods' required anti-affinity (nodes with such pods: HavePodsWithRequiredAntiAffinityList)
    existing: dict = {}
    for node in nodes:
        labels = P.node_labels(node)
        for ep in pods_by_node.get(P.node_name(node), []):
            if not has_required_anti_affinity(ep):
                continue
            for t in pod_terms(ep).required_anti:
                if t.matches(pod, ns_labels) and t.topology_key in labels:
                    _add(existing, (t.topology_key, labels[t.topology_key]), 1)

    if not existing and not info.required_affinity and not info.required_anti:
        return None  # Skip

    # incoming pod's required terms against every pod on every node
    affinity: dict = {}
    anti: dict = {}
    if info.required_affinity or info.required_anti:
        for node in nodes:
            labels = P.node_labels(node)
            for ep in pods_by_node.get(P.node_name(node), []):
                if matches_all(info.required_affinity, ep):
                    for t in info.required_affinity:
                        if t.topology_key in labels:
                            _add(affinity, (t.topology_key, labels[t.topology_key]), 1)
                for t in info.required_anti:
                    if t.matches(ep, None) and t.topology_key in labels:
                        _add(anti, (t.topology_key, labels[t.topology_key]), 1)

    return FilterState(existing, affinity, anti, info.required_affinity, info.required_anti, pod, ns_labels)


def filter(state: FilterState, pod, node):  # noqa: A001 - mirrors the extension point's name
    """Filter: (code, [reason]).  Order: affinity, incoming anti-affinity, existing anti-affinity."""
    labels = P.node_labels(node)

    # satisfyPodAffinity
    pods_exist = True
    for t in state.required_affinity:
        if t.topology_key not in labels:
            return UNSCHEDULABLE_AND_UNRESOLVABLE, [REASON_AFFINITY]
        if state.affinity.get((t.topology_key, labels[t.topology_key]), 0) <= 0:
            pods_exist = False
    if not pods_exist:
        # first pod of a self-affine group
        if not (len(state.affinity) == 0 and matches_all(state.required_affinity, state.pod)):
            return UNSCHEDULABLE_AND_UNRESOLVABLE, [REASON_AFFINITY]

    # satisfyPodAntiAffinity
    if state.anti:
        for t in state.required_anti:
            if t.topology_key in labels and state.anti.get((t.topology_key, labels[t.topology_key]), 0) > 0:
                return UNSCHEDULABLE, [REASON_ANTI_AFFINITY]

    # satisfyExistingPodsAntiAffinity: every label pair of the node
    if state.existing_anti:
        for k, v in labels.items():
            if state.existing_anti.get((k, v), 0) > 0:
                return UNSCHEDULABLE, [REASON_EXISTING_ANTI_AFFINITY]

    return SUCCESS, []


def filter_all(pod, nodes, pods_by_node, namespaces, args=None) -> dict | None:
    """{node name: (code, reasons)} for every node, or None when PreFilter skips (all pass)."""
    state = prefilter(pod, nodes, pods_by_node, namespaces, args)
    if state is None:
        return None
    return {P.node_name(n): filter(state, pod, n) for n in nodes}


# --------------------------------------------------------------------------------------
# PreScore / Score / NormalizeScore
# --------------------------------------------------------------------------------------
@dataclass
class ScoreState:
    topology_score: dict  # topologyKey -> value -> score
    pod: object
    namespace_labels: dict


def _process_term(node_map: dict, t: Term, weight: int, target, ns_labels, labels: dict, mult: int) -> None:
    """scoreMap.processTerm."""
    if t.matches(target, ns_labels) and t.topology_key in labels:
        inner = node_map.setdefault(t.topology_key, {})
        v = labels[t.topology_key]
        inner[v] = inner.get(v, 0) + weight * mult


def _process_existing_pod(node_map: dict, info: PodTerms, ns_labels: dict, existing_pod, node, pod, hard: int) -> None:
    """processExistingPod."""
    labels = P.node_labels(node)
    if not labels:
        return
    for t in info.preferred_affinity:
        _process_term(node_map, t, t.weight, existing_pod, None, labels, 1)
    for t in info.preferred_anti:
        _process_term(node_map, t, t.weight, existing_pod, None, labels, -1)
    e = pod_terms(existing_pod)  # parse errors of existing pods are ignored (NodeInfo.AddPod)
    if hard > 0:
        for t in e.required_affinity:
            _process_term(node_map, t, hard, pod, ns_labels, labels, 1)
    for t in e.preferred_affinity:
        _process_term(node_map, t, t.weight, pod, ns_labels, labels, 1)
    for t in e.preferred_anti:
        _process_term(node_map, t, t.weight, pod, ns_labels, labels, -1)


def prescore(pod, feasible_nodes, nodes, pods_by_node, namespaces, args=None) -> ScoreState | None:
    """PreScore.  Returns None for Skip.  `nodes` = every node in the snapshot (PreScore walks all of
    them, not only the feasible ones)."""
    hard, ignore = _args(args)
    if not feasible_nodes:
        return None  # len(nodes) == 0 -> Skip (unobservable: the scheduler never scores 0 nodes)
    has_constraints = bool(preferred_v1_terms(pod, "affinity")) or bool(preferred_v1_terms(pod, "anti"))
    if ignore and not has_constraints:
        return None  # Skip
    info = pod_terms(pod)
    if info.errors:
        raise SelectorError("failed to parse pod: " + _aggregate(info.errors))
    for t in info.preferred_affinity + info.preferred_anti:
        merge_term_namespaces(t, namespaces)
    ns_labels = namespace_labels(P.pod_namespace(pod), namespaces)

    topology_score: dict = {}
    contributed = False
    for node in nodes:
        npods = pods_by_node.get(P.node_name(node), [])
        to_process = npods if has_constraints else [p for p in npods if has_pod_affinity(p)]
        node_map: dict = {}
        for ep in to_process:
            _process_existing_pod(node_map, info, ns_labels, ep, node, pod, hard)
        if node_map:
            contributed = True
            for tk, vals in node_map.items():
                inner = topology_score.setdefault(tk, {})
                for v, s in vals.items():
                    inner[v] = inner.get(v, 0) + s
    if not contributed:
        return None  # Skip
    return ScoreState(topology_score, pod, ns_labels)


def score(state: ScoreState, pod, node) -> int:
    """Score: sum of topology scores for every topology key the node carries (may be negative)."""
    labels = P.node_labels(node)
    s = 0
    for tk, vals in state.topology_score.items():
        if tk in labels:
            s += vals.get(labels[tk], 0)
    return s


def normalize(state: ScoreState, raw: dict) -> dict:
    """NormalizeScore: float64(100) * (float64(s-min) / float64(max-min)), truncated to int64."""
    if not state.topology_score:
        return dict(raw)
    if not raw:
        return {}
    mn = min(raw.values())
    mx = max(raw.values())
    diff = mx - mn
    out = {}
    for n, s in raw.items():
        f = 0.0
        if diff > 0:
            f = float(MAX_NODE_SCORE) * (float(s - mn) / float(diff))
        out[n] = int(f)  # Go int64(float64) truncates toward zero
    return out


def scores(pod, feasible_nodes, nodes, pods_by_node, namespaces, args=None) -> dict | None:
    """{node name: (raw, normalized)} for the feasible nodes, or None when PreScore skips."""
    state = prescore(pod, feasible_nodes, nodes, pods_by_node, namespaces, args)
    if state is None:
        return None
    raw = {P.node_name(n): score(state, pod, n) for n in feasible_nodes}
    norm = normalize(state, raw)
    return {n: (raw[n], norm[n]) for n in raw}


# --------------------------------------------------------------------------------------
# Queueing hints (EventsToRegister in 1.36: Pod Add|UpdatePodLabel|Delete, Node Add|UpdateNodeLabel)
# --------------------------------------------------------------------------------------
def _same_pod(a, b) -> bool:
    """pod.UID == modifiedPod.UID (the namespace/name key when either UID is unset)."""
    ua, ub = getattr(a.metadata, "uid", ""), getattr(b.metadata, "uid", "")
    if ua and ub:
        return ua == ub
    return P.pod_key(a) == P.pod_key(b)


def _unscheduled(p) -> bool:
    nominated = getattr(p.status, "nominated_node_name", "") or ""
    return not p.spec.node_name and not nominated


def hint_after_pod_change(pod, old_pod, new_pod) -> str:
    """isSchedulableAfterPodChange (v1.36): `pod` is the pod rejected earlier; old_pod None = Add,
    new_pod None = Delete.  A parse error answers Queue (as upstream returns Queue with an error)."""
    try:
        # the target pod's own label update (PR #135394)
        if new_pod is not None and old_pod is not None and _same_pod(pod, new_pod) \
                and P.pod_labels(old_pod) != P.pod_labels(new_pod):
            return QUEUE
        if (new_pod is not None and _unscheduled(new_pod)) or (old_pod is not None and _unscheduled(old_pod)):
            return QUEUE_SKIP
        terms = get_terms(pod, required_v1_terms(pod, "affinity"))
        anti = get_terms(pod, required_v1_terms(pod, "anti"))
        if new_pod is not None and old_pod is not None:
            if not matches_all(terms, old_pod) and matches_all(terms, new_pod):
                return QUEUE
            if matches_all(anti, old_pod) and not matches_all(anti, new_pod):
                return QUEUE
            return QUEUE_SKIP
        if new_pod is not None:
            return QUEUE if matches_all(terms, new_pod) else QUEUE_SKIP
        # deleted
        if matches_all(anti, old_pod):
            return QUEUE
        old_anti = get_terms(old_pod, required_v1_terms(old_pod, "anti"))
        if matches_all(old_anti, pod):  # PR #135325
            return QUEUE
        return QUEUE_SKIP
    except SelectorError:
        return QUEUE


def hint_after_node_change(pod, old_node, new_node) -> str:
    """isSchedulableAfterNodeChange: old_node None = Add."""
    try:
        terms = get_terms(pod, required_v1_terms(pod, "affinity"))
        anti = get_terms(pod, required_v1_terms(pod, "anti"))
    except SelectorError:
        return QUEUE
    new_labels = P.node_labels(new_node)
    old_labels = P.node_labels(old_node) if old_node is not None else None
    for t in terms:
        if old_labels is None:
            if t.topology_key in new_labels:
                return QUEUE
            continue
        had, has = t.topology_key in old_labels, t.topology_key in new_labels
        if not had and has:
            return QUEUE
        if had and has and old_labels[t.topology_key] != new_labels[t.topology_key]:
            return QUEUE
    for t in anti:
        if old_labels is None:
            return QUEUE  # any node add may help a pod with required anti-affinity
        had, has = t.topology_key in old_labels, t.topology_key in new_labels
        if had and not has:
            return QUEUE
        if had and has and old_labels[t.topology_key] != new_labels[t.topology_key]:
            return QUEUE
    return QUEUE_SKIP
