"""Plain reference scheduling loop (kube-scheduler v1.36 semantics, percentageOfNodesToScore=100,
no preemption, one pod at a time, ties broken by the lowest node index; a profile without Score plugins takes the
next feasible node round the ring from nextStartNodeIndex).

Upstream: pkg/scheduler/schedule_one.go (schedulePod, findNodesThatFitPod, prioritizeNodes),
pkg/scheduler/framework/runtime/framework.go (RunPreFilterPlugins, RunFilterPlugins,
RunScorePlugins), pkg/scheduler/framework/types.go (FitError.Error),
pkg/scheduler/framework/plugins/queuesort/priority_sort.go.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import interpod_affinity as IPA
from . import plugins as P
from . import volumes as V
from .profile import DEFAULT_FILTERS, DEFAULT_SCORES, ref_profile

# What the reference implements: the default profile's filters and scores (tests/reference/profile.py).
FILTER_PLUGINS = DEFAULT_FILTERS
SCORE_PLUGINS = tuple(name for name, _weight in DEFAULT_SCORES)
NO_NODES_MESSAGE = "no nodes available to schedule pods"  # schedule_one.go ErrNoNodesAvailable


@dataclass
class RefResult:
    node: str | None
    totals: dict = field(default_factory=dict)  # node name -> weighted total (feasible nodes)
    message: str | None = None  # FitError text when node is None


def _check_profile(profile):
    profile = ref_profile(profile)
    for name in profile.filters:
        if name not in FILTER_PLUGINS:
            raise ValueError(f"reference does not implement filter plugin {name!r}")
    for name, _w in profile.scores:
        if name not in SCORE_PLUGINS:
            raise ValueError(f"reference does not implement score plugin {name!r}")
    return profile


@dataclass
class PreFilterOutcome:
    """RunPreFilterPlugins over the reference's plugins, in the profile's order: a rejection (plugin, message), the
    merged PreFilterResult node names (None: all nodes) with the plugins that narrowed them, and the volume plugins'
    states for their Filters."""
    rejection: tuple | None = None
    names: set | None = None
    narrowing: list = field(default_factory=list)
    volumes: dict = field(default_factory=dict)       # plugin name -> its PreFilter state (tests/reference/volumes.py)


def _prefilter(pod, profile, storage=None, pods_by_node=None) -> PreFilterOutcome:
    """Each plugin's PreFilter in turn: the first rejection ends it; after each PreFilterResult the merged node set
    must not be empty ("node(s) didn't satisfy plugin <name>", or "plugin(s) [<names>] simultaneously" when
    several narrowed it)."""
    out = PreFilterOutcome()
    for name in profile.filters:
        narrowed = None
        if name == "NodeAffinity":
            pre = P.prefilter_node_affinity(pod)
            if pre.rejected:
                out.rejection = ("NodeAffinity", P.REASON_NODE_AFFINITY_CONFLICT)
                return out
            narrowed = pre.node_names
        elif name == "VolumeRestrictions":
            pre = V.prefilter_volume_restrictions(pod, storage, pods_by_node or {})
        elif name == "VolumeBinding":
            pre = V.prefilter_volume_binding(pod, storage)
            narrowed = pre.eligible
        elif name == "VolumeZone":
            pre = V.prefilter_volume_zone(pod, storage)
        else:
            continue
        if getattr(pre, "rejection", None) is not None:
            out.rejection = (name, pre.rejection)
            return out
        if name.startswith("Volume"):
            out.volumes[name] = pre
        if narrowed is not None:
            out.narrowing.append(name)
            out.names = set(narrowed) if out.names is None else out.names & set(narrowed)
            if not out.names:
                plugins = sorted(out.narrowing)
                message = (f"node(s) didn't satisfy plugin {plugins[0]}" if len(plugins) == 1 else
                           f"node(s) didn't satisfy plugin(s) [{' '.join(plugins)}] simultaneously")
                out.rejection = (name, message)
                return out
    return out


def ref_filter(pod, node, node_pods, nodes, pods_by_node, profile,
               spreading: P.SpreadDefaults = P.SYSTEM_SPREADING, storage=None) -> list[tuple[str, str, list[str]]]:
    """The status the framework records for `node`: one (plugin, code, reasons) per filter
    plugin that ran, in profile order, stopping at the first failure.

    Upstream details reproduced here:
    * a plugin whose PreFilter returned Skip does not run and is not listed
      (NodeAffinity without nodeSelector/required affinity, NodePorts without host ports,
      PodTopologySpread without DoNotSchedule constraints);
    * a PreFilter rejection (NodeAffinity: metadata.name terms that intersect to nothing)
      is reported as the only entry: ("NodeAffinity", UnschedulableAndUnresolvable,
      ["pod affinity terms conflict"]);
    * a node outside the PreFilterResult node set (NodeAffinity matchFields metadata.name In)
      is not filtered at all; its status is ("NodeAffinity", UnschedulableAndUnresolvable,
      ["node(s) didn't satisfy plugin(s) [NodeAffinity]"]).

    `spreading`: PodTopologySpread's default constraints and the Services / controllers that give pods
    without constraints of their own a default selector (default: the system defaults, no such objects).
    `storage`: tests/reference/volumes.py Storage (None: the input describes no storage).
    """
    profile = _check_profile(profile)
    pre = _prefilter(pod, profile, storage, pods_by_node)
    if pre.rejection is not None:
        return [(pre.rejection[0], P.UNSCHEDULABLE_AND_UNRESOLVABLE, [pre.rejection[1]])]
    names, narrowing = pre.names, pre.narrowing
    if names is not None and P.node_name(node) not in names:
        msg = f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowing))}]"
        return [(narrowing[0], P.UNSCHEDULABLE_AND_UNRESOLVABLE, [msg])]
    out = []
    for name in profile.filters:
        if name == "NodeUnschedulable":
            res = P.filter_node_unschedulable(pod, node)
        elif name == "TaintToleration":
            res = P.filter_taint_toleration(pod, node)
        elif name == "NodeAffinity":
            res = None if P.prefilter_node_affinity(pod).skip else P.filter_node_affinity(pod, node)
        elif name == "NodePorts":
            res = P.filter_node_ports(pod, node, node_pods)
        elif name == "NodeResourcesFit":
            res = P.filter_node_resources_fit(pod, node, node_pods)
        elif name == "VolumeRestrictions":
            state = pre.volumes[name]
            res = None if state.skip else V.filter_volume_restrictions(pod, node_pods, state)
        elif name == "NodeVolumeLimits":
            res = V.filter_node_volume_limits(pod, node, node_pods, storage)
        elif name == "VolumeBinding":
            state = pre.volumes[name]
            res = None if state.skip else V.filter_volume_binding(storage, state, node)
        elif name == "VolumeZone":
            state = pre.volumes[name]
            res = None if state.skip else V.filter_volume_zone(pod, node, state)
        elif name == "PodTopologySpread":
            res = P.filter_pod_topology_spread(pod, node, nodes, pods_by_node, spreading)
        elif name == "InterPodAffinity":
            state = IPA.prefilter(pod, nodes, pods_by_node, namespaces_of(pod, pods_by_node), profile)
            res = None if state is None else IPA.filter(state, pod, node)
        else:  # pragma: no cover - rejected by _check_profile
            raise ValueError(name)
        if res is None:
            continue
        code, reasons = res
        out.append((name, code, list(reasons)))
        if code != P.SUCCESS:
            break
    return out


def ref_scores(pod, feasible_nodes, nodes, pods_by_node, profile,
               spreading: P.SpreadDefaults = P.SYSTEM_SPREADING, image_nodes=None) -> dict:
    """plugin -> {node name: (raw score, normalized score)} for every score plugin in the profile
    that is not skipped by its PreScore.  Normalized scores are before the plugin weight.

    Skipped plugins (absent from the result; they contribute 0 to every node):
    NodeAffinity without preferred terms, NodeResourcesBalancedAllocation for a pod requesting
    0 of every balanced resource, PodTopologySpread without ScheduleAnyway constraints."""
    profile = _check_profile(profile)
    out: dict = {}
    names = [P.node_name(n) for n in feasible_nodes]

    def npods(n):
        return pods_by_node.get(P.node_name(n), [])

    for plugin, _weight in profile.scores:
        if plugin == "TaintToleration":
            raw = {P.node_name(n): P.score_taint_toleration(pod, n) for n in feasible_nodes}
            norm = P.default_normalize(raw, reverse=True)
        elif plugin == "NodeAffinity":
            if not P.preferred_terms(pod):
                continue
            raw = {P.node_name(n): P.score_node_affinity(pod, n) for n in feasible_nodes}
            norm = P.default_normalize(raw, reverse=False)
        elif plugin == "NodeResourcesFit":
            raw = {P.node_name(n): P.score_fit(pod, n, npods(n), profile) for n in feasible_nodes}
            norm = dict(raw)
        elif plugin == "NodeResourcesBalancedAllocation":
            if P.balanced_is_skipped(pod, profile):
                continue
            raw = {P.node_name(n): P.score_balanced(pod, n, npods(n), profile) for n in feasible_nodes}
            norm = dict(raw)
        elif plugin == "InterPodAffinity":
            ipa = IPA.scores(pod, feasible_nodes, nodes, pods_by_node, namespaces_of(pod, pods_by_node), profile)
            if ipa is None:
                continue
            raw = {n: v[0] for n, v in ipa.items()}
            norm = {n: v[1] for n, v in ipa.items()}
        elif plugin == "ImageLocality":
            raw = {P.node_name(n): P.score_image_locality(pod, n, nodes, image_nodes) for n in feasible_nodes}
            norm = dict(raw)
        elif plugin == "PodTopologySpread":
            state = P.pts_prescore(pod, feasible_nodes, nodes, pods_by_node, spreading)
            if state is None:
                continue
            raw = {P.node_name(n): P.score_pod_topology_spread(state, pod, n, npods(n)) for n in feasible_nodes}
            norm = P.normalize_pod_topology_spread(state, raw)
        else:  # pragma: no cover
            raise ValueError(plugin)
        for n in names:
            if not 0 <= norm[n] <= P.MAX_NODE_SCORE:
                raise AssertionError(f"{plugin} normalized score {norm[n]} out of range for {n}")
        out[plugin] = {n: (raw[n], norm[n]) for n in names}
    return out


# Namespace objects given with the cluster (tests set it); a namespace a pod lives in exists in any case, with only
# its default label, as phalanx assumes (the API server creates no pod in a missing namespace).
NAMESPACES: list = []


def namespaces_of(pod, pods_by_node) -> list:
    from phalanx.cluster_models.objects import Namespace

    known = {ns.metadata.name: ns for ns in NAMESPACES}
    for p in [pod, *(q for ps in pods_by_node.values() for q in ps)]:
        name = P.pod_namespace(p)
        if name not in known:
            known[name] = Namespace.implicit(name)
    return list(known.values())


def fit_error_message(num_all_nodes: int, statuses: dict, prefilter_msg: str | None = None) -> str:
    """FitError.Error(): "0/N nodes are available: <count> <reason>, ... ." with the histogram
    strings sorted as strings (so "10 x" sorts before "2 y")."""
    msg = f"0/{num_all_nodes} nodes are available:"
    if prefilter_msg:
        return msg + f" {prefilter_msg}."
    counts: dict = {}
    for reasons in statuses.values():
        for r in reasons:
            counts[r] = counts.get(r, 0) + 1
    hist = sorted(f"{v} {k}" for k, v in counts.items())
    if hist:
        msg += " " + ", ".join(hist) + "."
    return msg


def ref_schedule_one(pod, nodes, pods_by_node, profile, spreading: P.SpreadDefaults = P.SYSTEM_SPREADING,
                     image_nodes=None, ring: list | None = None, storage=None) -> RefResult:
    """ring: [nextStartNodeIndex], for a profile without Score plugins: upstream's findNodesThatPassFilters then
    looks for one feasible node among the cycle's nodes (a PreFilterResult's, else all), from nextStartNodeIndex
    round their ring, and the index moves past the nodes visited, modulo all nodes (schedule_one.go; phalanx visits
    nodes in ring order). None: from index 0, the index not kept."""
    profile = _check_profile(profile)
    if not nodes:
        return RefResult(node=None, totals={}, message=NO_NODES_MESSAGE)
    pre = _prefilter(pod, profile, storage, pods_by_node)
    if pre.rejection is not None:
        return RefResult(node=None, totals={}, message=fit_error_message(len(nodes), {}, pre.rejection[1]))
    feasible = []
    failed: dict = {}
    for node in nodes:
        st = ref_filter(pod, node, pods_by_node.get(P.node_name(node), []), nodes, pods_by_node, profile, spreading,
                        storage)
        if st and st[-1][1] != P.SUCCESS:
            failed[P.node_name(node)] = st[-1][2]
        else:
            feasible.append(node)
    # The nodes the cycle looks at: a PreFilterResult's (in node order; upstream's order is a Go map's), else all.
    listed = [n for n in nodes if pre.names is None or P.node_name(n) in pre.names]
    if not feasible:
        if ring is not None:        # every listed node was visited
            ring[0] = (ring[0] + len(listed)) % len(nodes)
        return RefResult(node=None, totals={}, message=fit_error_message(len(nodes), failed))
    if not profile.scores:
        start = ring[0] if ring is not None else 0
        names = {P.node_name(n) for n in feasible}
        for visited in range(1, len(listed) + 1):
            name = P.node_name(listed[(start + visited - 1) % len(listed)])
            if name in names:
                if ring is not None:
                    ring[0] = (start + visited) % len(nodes)
                return RefResult(node=name, totals={name: 0}, message=None)
    # upstream skips scoring when exactly one node is feasible; the totals are still reported
    scores = ref_scores(pod, feasible, nodes, pods_by_node, profile, spreading, image_nodes)
    weights = dict(profile.scores)
    totals = {}
    for n in feasible:
        name = P.node_name(n)
        totals[name] = sum(weights[pl] * per_node[name][1] for pl, per_node in scores.items())
    best = None
    for n in feasible:  # input order: the first node with the max total wins
        name = P.node_name(n)
        if best is None or totals[name] > totals[best]:
            best = name
    return RefResult(node=best, totals=totals, message=None)


def effective_priority(pod, classes: dict) -> int:
    if pod.spec.priority is not None:
        return pod.spec.priority
    if pod.spec.priority_class_name:
        pc = classes.get(pod.spec.priority_class_name)
        if pc is None:
            raise ValueError(f'PriorityClass "{pod.spec.priority_class_name}" not found')
        return pc.value
    for pc in classes.values():
        if pc.global_default:
            return pc.value
    return 0


def _is_terminal(pod) -> bool:
    status = getattr(pod, "status", None)
    return status is not None and status.phase in ("Succeeded", "Failed")


def priority_class_map(priority_classes) -> dict:
    """name -> PriorityClass, from a list (or a dict already keyed by name)."""
    if isinstance(priority_classes, dict):
        return dict(priority_classes)
    return {pc.metadata.name: pc for pc in (priority_classes or [])}


def bound_pods_by_node(nodes, pods) -> dict:
    """node name -> the bound (spec.nodeName set), non-terminal pods on it, in input order.  Pods bound to a
    node that is not in `nodes` are dropped."""
    pods_by_node: dict = {P.node_name(n): [] for n in nodes}
    for pod in pods:
        if _is_terminal(pod) or not pod.spec.node_name:
            continue
        if pod.spec.node_name in pods_by_node:
            pods_by_node[pod.spec.node_name].append(pod)
    return pods_by_node


def pending_pods(pods) -> list:
    """[(input index, pod)] for the pods this scheduler has to place: non-terminal, no spec.nodeName,
    schedulerName default-scheduler (gated pods included)."""
    out = []
    for idx, pod in enumerate(pods):
        if _is_terminal(pod) or pod.spec.node_name:
            continue
        if (pod.spec.scheduler_name or "default-scheduler") != "default-scheduler":
            continue
        out.append((idx, pod))
    return out


def ref_schedule(nodes, pods, priority_classes, profile, spreading: P.SpreadDefaults = P.SYSTEM_SPREADING,
                 storage=None):
    """Schedule every pending pod in PrioritySort order (effective priority desc, then input
    order), one at a time against the state that includes all previous bindings.

    Returns (bindings {"ns/name": node}, unschedulable {"ns/name": FitError message}).
    Bound pods (spec.nodeName set) are loaded as node usage.  Pods in a terminal phase are
    ignored entirely (the scheduler's informer excludes them); pods for another scheduler are
    ignored; pods with scheduling gates are reported unschedulable with upstream's
    SchedulingGated message.  There is no retry of failed pods (no queueing hints).  `spreading`, `storage`: see
    ref_filter (the storage object is changed: VolumeBinding's Reserve of each pod placed)."""
    profile = _check_profile(profile)
    classes = priority_class_map(priority_classes)
    pods_by_node = bound_pods_by_node(nodes, pods)
    pending = [(-effective_priority(pod, classes), idx, pod) for idx, pod in pending_pods(pods)]
    pending.sort(key=lambda t: (t[0], t[1]))
    bindings: dict = {}
    unschedulable: dict = {}
    ring = [0]          # nextStartNodeIndex (read only by profiles without Score plugins)
    for _negprio, _idx, pod in pending:
        key = P.pod_key(pod)
        if pod.spec.scheduling_gates:
            unschedulable[key] = "Scheduling is blocked due to non-empty scheduling gates"
            continue
        res = ref_schedule_one(pod, nodes, pods_by_node, profile, spreading, ring=ring, storage=storage)
        if res.node is None:
            unschedulable[key] = res.message
        else:
            bindings[key] = res.node
            if "VolumeBinding" in profile.filters:
                node = next(n for n in nodes if P.node_name(n) == res.node)
                V.reserve_volume_binding(storage, V.prefilter_volume_binding(pod, storage), node)
            pods_by_node[res.node].append(pod)  # assume: later pods see this one on the node
    return bindings, unschedulable
