"""The plugin framework: what a plugin is, which extension points it can implement, and the records the cycles
pass between plugins. kube-scheduler's framework (pkg/scheduler/framework/interface.go) with array-valued
Filter and Score: a Filter returns a status code and a reason payload for every node at once, a Score a raw
score for every node.

A plugin is one module under phalanx/plugins/ holding one `Plugin` subclass: its name, its args (a pydantic
model validated as upstream validates them), the extension points it implements (the methods it overrides),
its failure reasons, the cluster events that can make a pod it rejected schedulable, and how its Filter and
Score behave while copies of one pod are placed (which decides whether a run of identical pods can be batched).
Array arithmetic lives in phalanx.kernels; a plugin prepares the kernel's inputs on the host (PreFilter,
PreScore), calls the kernel, and turns payloads into reason strings.

Layering: sched -> plugins -> kernels -> cluster_models. A plugin reads cluster state through the `cluster`
handle it is given (sched.cluster.Cluster: tensors, claims, GPU shares, namespaces, groups); it never imports
sched.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

if TYPE_CHECKING:
    from ..cluster_models import PodGroup

# Extension points as a KubeSchedulerConfiguration names them, in cycle order, with the method implementing each.
EXTENSION_POINTS: dict[str, str] = {
    "preEnqueue": "pre_enqueue",
    "queueSort": "less",
    "preFilter": "pre_filter",
    "filter": "filter",
    "postFilter": "post_filter",
    "preScore": "pre_score",
    "score": "score",
    "reserve": "reserve",
    "permit": "permit",
    "preBind": "pre_bind",
    "bind": "bind",
    "postBind": "post_bind",
    "placementGenerate": "generate_placements",
    "placementScore": "score_placement",
}

# Cluster events a rejected pod can wait for (upstream fwk.ClusterEvent, coarsened to what phalanx emits).
POD_DELETED = "PodDeleted"            # a bound pod left (deleted, completed, rejected at Permit, node removed)
# a pending pod with a nominated node was deleted: upstream's AssignedPodDelete, sent only to pods of lower or equal
# priority (they counted the nominated pod on its node); the hints that skip unscheduled pods skip it
NOMINATED_POD_DELETED = "NominatedPodDeleted"
POD_BOUND = "PodBound"                # a pod was bound (it now counts for inter-pod plugins)
NODE_ADDED = "NodeAdded"
NODE_UPDATED = "NodeUpdated"          # labels, taints, allocatable or cordon changed
GROUP_MEMBER_ADDED = "PodGroupMemberAdded"
ALL_EVENTS = frozenset({POD_DELETED, NOMINATED_POD_DELETED, POD_BOUND, NODE_ADDED, NODE_UPDATED, GROUP_MEMBER_ADDED})

# How a plugin's Filter and Score move while copies of one pod are placed one after another (batching).
FIXED = "fixed"            # they do not move: a function of the state before the run
NODE_LOCAL = "node-local"  # they move only on the node that took a copy: Filter bounds the copies per node
                           # (copy_capacity), Score is a per-node sequence (copy_scores) with no normalization
DOMAIN = "domain"          # Score only: a copy moves the raw scores of the nodes sharing its node's topology
                           # domains, as a model says copy by copy (copy_model), and NormalizeScore is a function of
                           # the raw score and the feasible nodes' minimum and maximum (scale): the run is placed by a
                           # sequential loop over picks (kernels/domain_batch.py) instead of a cycle per pod
PER_POD = "per-pod"        # anything else (other nodes' pods, per-pod state at Reserve): the run goes pod by pod


class _Sentinel:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self):
        return (_sentinel, (self.name,))


def _sentinel(name: str) -> _Sentinel:
    return {"SKIP": SKIP, "NOT_RUN": NOT_RUN}[name]


SKIP = _Sentinel("SKIP")          # PreFilter / PreScore result: the plugin's Filter (Score) does not run for the pod
NOT_RUN = _Sentinel("NOT_RUN")    # the profile does not enable the plugin's PreFilter (PreScore)


class Outcome:
    """Base of the PreFilter results that are not a plain state (one isinstance test per result in the cycle)."""
    __slots__ = ()


@dataclass(frozen=True)
class Rejection(Outcome):
    """A PreFilter that rejects the pod on every node (UnschedulableAndUnresolvable): the cycle fails with
    `0/N nodes are available: <message>.`"""
    message: str


@dataclass(frozen=True)
class CycleError(Outcome):
    """A plugin error (upstream's Error status): the cycle fails with this message as it stands."""
    message: str


@dataclass(frozen=True)
class NodeSubset(Outcome):
    """A PreFilter result that names the only nodes the pod can go to (upstream PreFilterResult.NodeNames);
    `state` is the plugin's PreFilter state for its Filter. `names` are the names themselves, nodes the cluster does
    not have included: the framework rejects the pod when the results' names have nothing in common."""
    allowed: np.ndarray        # (N,) bool
    state: object
    names: frozenset[str]


@dataclass(frozen=True)
class PodInfo:
    """What PreFilter and PreScore read about the pod being scheduled."""
    shape: object              # sched.shapes.PodShape: the pod (shape.pod), requests, non-zero requests, host ports
    request: np.ndarray        # (R,) int64 the pod's requests over the cluster's current resource columns
    pod: object = None         # shape.pod (filled in: plugins read it often)

    def __post_init__(self):
        if self.pod is None:
            object.__setattr__(self, "pod", self.shape.pod)

    @functools.cached_property
    def requested_columns(self) -> tuple[int, ...]:
        """The resource columns the pod requests any of (made once: NodeResourcesFit and BalancedAllocation both
        read it)."""
        return tuple([col for col, amount in enumerate(self.request.tolist()) if amount])     # R is small


@dataclass(frozen=True)
class FailedCycle:
    """What PostFilter plugins read about a pod no node passed Filter for."""
    pod: PodInfo
    priority: int                 # the pod's priority (spec.priority or its PriorityClass's)
    preemption_policy: str        # "PreemptLowerPriority" or "Never", as admission leaves it
    codes: np.ndarray | None      # (N,) int8 each node's status code in this cycle (UnschedulableAndUnresolvable
                                  # for nodes a PreFilter rejected or left out); None when no plugin reads nodes
    nominated: int                # node id of the pod's status.nominatedNodeName, -1 if none (or gone)
    dry_run: object               # sched.preemption.DryRun: victims on nodes, for preemption plugins (or None, as
                                  # codes)
    offset: int                   # node id DefaultPreemption's scan starts at, wrapping (upstream: random)
    pod_group: PodGroup | None = None   # the PodGroup the pod's schedulingGroup names (None: it names none, or
                                        # the group does not exist)


@dataclass(frozen=True)
class FailedGroupCycle:
    """What a PodGroupPostFilter plugin reads about a PodGroup whose cycle failed Unschedulable (workload-aware
    preemption: the group is one preemptor)."""
    group: str                    # the PodGroup's key
    priority: int                 # its priority (spec.priority, or its PriorityClass's value, else 0)
    preemption_policy: str        # "Never" when any member says so, else "PreemptLowerPriority"
    dry_run: object               # sched.workload_preemption.GroupDryRun: victim units, the group re-run without some
                                  # (schedules_without; by position in its units: index, schedules_without_at),
                                  # whether giving units back can only hurt (monotone)


# PostFilterResult.nominate when the plugin leaves the pod's nomination as it is (upstream ModeNoop).
KEEP_NOMINATION = None


@dataclass(frozen=True)
class PostFilterResult:
    """A PostFilter plugin's status (upstream fwk.Status + PostFilterResult)."""
    code: int                     # kernels.status SUCCESS, UNSCHEDULABLE, UNSCHEDULABLE_AND_UNRESOLVABLE or ERROR
    message: str = ""
    nominate: str | None = KEEP_NOMINATION      # node name to nominate, "" to clear, None to keep
    victims: tuple = ()                         # pods to evict (most important first)
    victim_keys: tuple | None = None            # their keys, where the plugin has them at hand (else read from
                                                # each victim, whose metadata is cold memory by then)
    pdb_violations: int = 0                     # victim units whose eviction violates a PDB (groups)
    # What the plugin changed in the cluster, each applied to it when the cycle's PostFilter runs for real (the
    # plugins run as a what-if first, changing nothing): DynamicResources deletes a stale claim.
    changes: tuple[Callable[[object], None], ...] = ()


def fit_error(n_nodes: int, hist: dict[str, int], prefilter_message: str | None = None) -> str:
    """FitError.Error(): counts and reasons joined after a lexicographic sort of the "count reason" strings;
    a PreFilter rejection replaces the histogram."""
    msg = f"0/{n_nodes} nodes are available:"
    if prefilter_message:
        return f"{msg} {prefilter_message}."
    parts = sorted(f"{count} {reason}" for reason, count in hist.items())
    if parts:
        msg += " " + ", ".join(parts) + "."
    return msg


def with_post_filter(message: str, post_filter_message: str) -> str:
    """FitError.Error() with the PostFilter plugins' message (Diagnosis.PostFilterMsg), when there is one, after the
    Filter part (which ends with its own period)."""
    return f"{message} {post_filter_message}" if post_filter_message else message


def aggregate(errors: list[str]) -> str:
    """utilerrors.NewAggregate(errors).Error(): each message once, one as it is, more as "[a, b]"."""
    errors = list(dict.fromkeys(errors))
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


class ArgsInvalid(ValueError):
    """A plugin's args failing its upstream validation (Validate<Plugin>Args' field.ErrorList): each error
    "path: problem" with the path relative to the args, which a configuration prefixes with
    profiles[i].pluginConfig[j].args."""

    def __init__(self, errors: list[str]):
        self.errors = list(dict.fromkeys(errors))
        super().__init__(aggregate(self.errors))


class PluginArgs(BaseModel):
    """Base of every plugin's args: camelCase names as in a KubeSchedulerConfiguration, unknown fields rejected
    (kube-scheduler decodes its configuration strictly), frozen (a profile is a value)."""
    model_config = ConfigDict(populate_by_name=True, extra="forbid", frozen=True, alias_generator=to_camel, strict=True)
    # False: a configuration's validation (validatePluginConfig) checks these args; True: only the plugin's
    # constructor does, when a profile enables it (sched/config.py words the error as scheduler.New does).
    validated_at_construction: ClassVar[bool] = False


@dataclass(frozen=True)
class ProfileContext:
    """What every plugin of a profile may read: formula version and feature gates."""
    compat: str = "1.36"
    feature_gates: tuple[tuple[str, bool], ...] = ()

    def enabled(self, gate: str, default: bool) -> bool:
        return dict(self.feature_gates).get(gate, default)

    @property
    def toleration_comparison(self) -> bool:
        """KEP-5471: the TaintTolerationComparisonOperators gate (alpha, off): Gt/Lt tolerations match."""
        return self.enabled("TaintTolerationComparisonOperators", False)

    @property
    def topology_aware_scheduling(self) -> bool:
        """KEP-5732: the TopologyAwareWorkloadScheduling gate (v1.36); 1.35 had no such thing."""
        return self.compat != "1.35" and self.enabled("TopologyAwareWorkloadScheduling", True)

    @property
    def workload_aware_preemption(self) -> bool:
        """KEP-5710: the WorkloadAwarePreemption gate (v1.36); 1.35 had no such thing."""
        return self.compat != "1.35" and self.enabled("WorkloadAwarePreemption", True)


class Plugin:
    """Base class. A subclass overrides the methods of the extension points it implements; `points()` lists them.
    Instances are immutable values (they are part of compiled-program cache keys on the JAX backend)."""

    name: ClassVar[str] = ""
    Args: ClassVar[type[PluginArgs] | None] = None
    # Extension points the upstream plugin implements that phalanx does not model: a configuration may enable the
    # plugin there (as upstream accepts), and nothing runs.
    unmodelled_points: ClassVar[tuple[str, ...]] = ()
    # Cluster events that can make a pod this plugin rejected schedulable (its queueing hints' registrations).
    events: ClassVar[frozenset[str]] = ALL_EVENTS
    # What PreEnqueue's answer depends on, so that pods arriving together share it: "pod" (anything of the pod),
    # "spec" (its PodSpec alone), "group" (its PodSpec and its PodGroup).
    pre_enqueue_reads: ClassVar[str] = "pod"
    # Whether `signature` reads only the pod's spec, labels, annotations and namespace (pods copied from one template
    # into one namespace share those objects, so they sign alike and their shape is found by template).
    signs_from_template: ClassVar[bool] = False
    # Whether PostFilter reads the failed cycle's node statuses and dry run (FailedCycle.codes / .dry_run); when no
    # PostFilter plugin of a profile does, they are not built (None).
    post_filter_reads_nodes: ClassVar[bool] = True
    # Whether PreFilter, Filter's state, PreScore or Score's state read the pod's resource requests (its containers',
    # init containers' and pod-level `resources`): those that do not give equal results for pods that differ only
    # there (sched/cycle.py prepare's `like`). True unless a plugin says otherwise.
    reads_requests: ClassVar[bool] = True
    # Whether Score reads what the plugin's PreFilter and Filter left in the cycle state (upstream's plugin has no
    # PreScore): score_state then gets the Filter's state, SKIP or NOT_RUN (sched/cycle.py _filter_left) as `pre`.
    score_reads_filter: ClassVar[bool] = False
    # Whether a pod's failure at this plugin can be helped by removing pods (upstream code Unschedulable) is in
    # the status codes its Filter returns.

    def __init__(self, args: PluginArgs | None = None, context: ProfileContext = ProfileContext()):
        self.args = args if args is not None or self.Args is None else self.Args()
        self.context = context
        self._hash = hash((type(self).__name__, context))     # plugins key the cycle's per-plugin dicts

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.args!r})"

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.args == other.args and self.context == other.context

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self):
        return (type(self), (self.args, self.context))

    @classmethod
    def args_from_input(cls, args: PluginArgs | None, cluster) -> PluginArgs | None:
        """The args with what the configuration left out taken from the scheduler's input (`cluster`: its pending
        and bound pods when the Scheduler is made), for a plugin whose defaults depend on the workload (FGDScore's
        typical pods). Default: as configured."""
        return args

    def signature(self, pod):
        """What this plugin reads of the pod beyond its spec, for the pod's shape signature (KEP-5598 SignPod):
        pods whose signatures are equal are interchangeable for the plugin. None: nothing beyond the spec."""
        return None

    def splits_runs(self, cluster) -> bool:
        """Whether run_key may tell pods of equal signatures apart on this cluster now."""
        return False

    def signs(self, spec) -> bool:
        """Whether `signature` may return something for pods with this PodSpec (a cheap test of the spec alone,
        so pods whose plugins cannot sign them skip `signature`)."""
        return True

    def run_key(self, pod, cluster):
        """For pods whose signatures are equal: what this plugin, given the cluster now, still reads differently
        of them (e.g. which bound pods' terms select their labels). Consecutive pods of one run with different
        keys are placed as separate runs. None: nothing."""
        return None

    def hint(self, event: str, pod, objects, cluster) -> bool:
        """Queueing hint: whether `event` (one of `events`) may make `pod`, which this plugin rejected,
        schedulable. `objects`: the pods the event concerns (bound or deleted), the node for node events, or None;
        `cluster`: the scheduler's Cluster now. Default: it may."""
        return True

    @property
    def hints(self) -> bool:
        """Whether the plugin has a queueing hint of its own (without one, each event it registered may help)."""
        return type(self).hint is not Plugin.hint

    def warnings(self, pod, cluster) -> list[str]:
        """What of the pod this plugin would read upstream but phalanx cannot, or does not on this cluster (reported,
        never silently dropped; the same text from several plugins is reported once). Read from the spec without its
        resource requirements: the shapes of one family (PodShape.family) take their first shape's."""
        return []

    @classmethod
    def points(cls) -> tuple[str, ...]:
        """The extension points (configuration names) this plugin implements."""
        return tuple(point for point, method in EXTENSION_POINTS.items() if cls.implements(method))

    # -- PreEnqueue ---------------------------------------------------------------------------------
    def pre_enqueue(self, pod, cluster) -> str | None:
        """None lets the pod into the activeQ; a message keeps it waiting (it is reported as its reason)."""
        return None

    # -- QueueSort ----------------------------------------------------------------------------------
    def less(self, a, b) -> bool:
        raise NotImplementedError

    # -- PreFilter / Filter -------------------------------------------------------------------------
    def pre_filter(self, pod: PodInfo, cluster):
        """The PreFilter extension point (only plugins that have one upstream override it): its state, SKIP, a
        NodeSubset, or a Rejection."""
        raise NotImplementedError

    def filter_state(self, pod: PodInfo, cluster, pre):
        """What Filter reads, from PreFilter's result `pre` (NOT_RUN when the profile does not enable this
        plugin's PreFilter). Plugins without an upstream PreFilter prepare their per-pod inputs here. Upstream
        plugins whose PreFilter is disabled either fall back to computing the state or fail reading it: the
        default is the failure (a CycleError)."""
        if pre is NOT_RUN:
            return CycleError(f'error reading "PreFilter{self.name}" from cycleState: not found')
        return pre

    def filter(self, xp, state, tensors):
        """(code (N,) int8, payload (N,) int64) for every node. `tensors` has .nodes (NodeTable fields),
        .node_labels, .bound_pods() (numpy on the host, or padded device arrays on the JAX backend)."""
        raise NotImplementedError

    def filter_errors(self, state) -> tuple[str, ...]:
        """The messages of the Error statuses this plugin's Filter gives for the pod of `state` (code
        kernels.status.ERROR, the payload an index into them); empty for a Filter that never fails (the usual
        plugin: the cycle then skips looking for errors)."""
        return ()

    def reasons(self, payload: int, tensors) -> list[str]:
        """Upstream reason strings of one failing node from its payload."""
        raise NotImplementedError

    def explain_detail(self, payload: int, tensors) -> dict:
        """Extra facts about one failing node for `explain` (e.g. which taint)."""
        return {}

    def removal_behaviour(self, state) -> str:
        """How this pod's Filter moves when other pods leave nodes (preemption's dry run) or pods nominated to a
        node count there: FIXED (it reads no pods), NODE_LOCAL (on a node it reads only that node's load columns
        of the node table, and less load never fails it), or PER_POD (anything else)."""
        return PER_POD

    # -- PostFilter ---------------------------------------------------------------------------------
    def post_filter(self, failed: "FailedCycle", cluster) -> "PostFilterResult":
        """After a cycle in which no node passed Filter (upstream PostFilter)."""
        raise NotImplementedError

    def pod_group_post_filter(self, failed: "FailedGroupCycle", cluster) -> "PostFilterResult":
        """After a PodGroup cycle that failed Unschedulable (upstream PodGroupPostFilter, v1.36: not a
        configuration extension point; the postFilter plugins that implement it run it)."""
        raise NotImplementedError

    @classmethod
    def implements(cls, method: str) -> bool:
        """Whether this plugin overrides the base class's `method`."""
        return getattr(cls, method) is not getattr(Plugin, method)

    # -- PreScore / Score / NormalizeScore ----------------------------------------------------------
    def pre_score(self, pod: PodInfo, cluster):
        """The PreScore extension point: its state, SKIP, or a CycleError (reported only when PreScore runs:
        with at least two feasible nodes)."""
        raise NotImplementedError

    def score_state(self, pod: PodInfo, cluster, pre):
        """What Score reads, from PreScore's result `pre` (NOT_RUN when the profile does not enable this plugin's
        PreScore); see filter_state. SKIP: the Score would be 0 on every node for this pod (it is left out)."""
        if pre is NOT_RUN:
            return CycleError(f'reading "PreScore{self.name}" from cycleState: not found')
        return pre

    def score(self, xp, state, tensors, feasible, cache=None):
        """(N,) int64 raw scores; only feasible nodes are read. `cache`: a dict the caller keeps for this plugin
        across cycles on one cluster (None on compiled paths), for per-node terms that only change where load
        changed (tensors.changes)."""
        raise NotImplementedError

    def normalize(self, xp, raw, feasible, state, tensors):
        """NormalizeScore over the feasible nodes; identity for plugins without ScoreExtensions. Equal raw scores
        normalize to equal scores (as every upstream normalization does): a sampled cycle on kept results skips a
        FIXED Score whose raw scores are equal on every node (ShapeScores.fixed_raw)."""
        return raw

    def sampled_scores(self, xp, state, tensors, feasible, rows, cache=None):
        """The normalized scores of a sampled cycle's nodes `rows` ((k,) int64 node ids; `feasible`, (N,) bool,
        marks exactly them) for a Score that reads other nodes (DOMAIN, PER_POD): score and normalize over every
        node, read at the rows. A plugin may compute them at the rows alone. rows (B, k) (numpy): B cycles' nodes,
        one cycle per row, each scored and normalized as its own cycle from this one state, (B, k); by default row
        by row."""
        if rows.ndim == 2:
            out = np.zeros(rows.shape, np.int64)
            for b, own in enumerate(rows):
                marked = np.zeros(len(feasible), bool)
                marked[own] = True
                out[b] = self.sampled_scores(xp, state, tensors, marked, own, cache)
            return out
        return self.normalize(xp, self.score(xp, state, tensors, feasible, cache), feasible, state, tensors)[rows]

    def sampled_lap(self, state, tensors, windows, cache=None):
        """For a Score that reads bound pods, of a shape whose copies move nothing pod by pod (cycle.batchable or
        domain_batchable): the sampled cycles of one lap of the ring (`windows`, (B, k) int64 node ids, one cycle's
        nodes per row, disjoint) scored one after another from this one state. An object whose scores(b) gives
        cycle b's normalized scores ((k,) int64) after the copies so far, as sampled_scores on windows[b] would
        after a fresh PreScore, and whose copy(node) counts a copy placed on a node of an earlier window; None when
        the plugin has none (the cycles then go one at a time)."""
        return None

    def copies_move_own_node(self, state, tensors) -> bool:
        """For a Score that reads bound pods (run afresh in every sampled cycle): whether a placed copy of the pod
        moves the raw score of no node but its own (each topology domain it adds to holds one node), so that sampled
        cycles over disjoint nodes may share one PreScore (Placer._place_kept_sampled's laps). Default: no."""
        return False

    def normalization_holders(self, xp, raw, feasible, state) -> list:
        """Feasible nodes whose leaving the feasible set would change the normalized scores ((N,) bool masks;
        the normalization stays while any node of every mask is still feasible). Only FIXED scores are asked."""
        return []

    # -- batching: behaviour while copies of the pod are placed ---------------------------------------
    def filter_behaviour(self, state) -> str:
        """How this pod's Filter moves as copies of it are placed: FIXED, NODE_LOCAL or PER_POD."""
        return FIXED

    def score_behaviour(self, state) -> str:
        """How this pod's Score moves as copies of it are placed: FIXED (normalized over the feasible set, see
        normalization_holders), NODE_LOCAL (copy_scores; not normalized), DOMAIN (copy_domains, scale) or PER_POD. For a plugin that reads no
        bound pods (reads_bound_pods) and no host state (host_only) FIXED and NODE_LOCAL also hold while any other
        pods are placed or removed: the incremental per-shape path (sched/incremental.py) relies on it."""
        return FIXED

    def prepare_token(self, cluster, point: str):
        """For a plugin whose PreFilter or PreScore (point: "preFilter" or "preScore") decides from the bound pods
        whether to skip a pod: a value that changes whenever a binding may turn that skip into a run (None: no
        binding ever does). A shape's kept results (sched/incremental.py) are prepared again when it changes."""
        return None

    def skip_behaviour(self, pod: PodInfo, point: str) -> str:
        """For a pod this plugin's PreFilter or PreScore (point: "preFilter" or "preScore") skipped: FIXED when
        copies of the pod placed one after another keep it skipped, PER_POD when a copy may make it run for the
        next one."""
        return FIXED

    def kept_behaviour(self, state) -> str:
        """How this pod's Filter moves between its cycles while pods are placed and removed anywhere, for the kept
        per-shape results (sched/incremental.py): FIXED, NODE_LOCAL (on a node only when tensors.changes lists the
        node; it is run again on those rows, tensors.node_rows) or PER_POD. For a Score that is kept
        (score_behaviour FIXED or NODE_LOCAL) only PER_POD matters: a host_only plugin's state is taken to be a copy
        made at PreFilter/PreScore unless it says otherwise. Default: removal_behaviour, PER_POD when host_only."""
        return PER_POD if self.host_only() else self.removal_behaviour(state)

    def reads_bound_pods(self) -> bool:
        """Whether Filter/Score read tensors.bound_pods() (then a compiled pod-by-pod loop appends the run's own
        pods to that table as it places them)."""
        return False

    def host_only(self) -> bool:
        """Whether the plugin keeps per-pod host state (Reserve): runs where it takes part are never compiled."""
        return False

    def reserves_for(self, pod, cluster) -> bool:
        """Whether Reserve keeps per-pod state for this pod (then its runs are never batched or coalesced)."""
        return False

    def copy_capacity(self, xp, state, tensors):
        """NODE_LOCAL filters: (N,) int64 copies each node takes before the Filter rejects it."""
        raise NotImplementedError

    def copy_scores(self, xp, state, tensors, rows, copies):
        """NODE_LOCAL scores: (len(rows), J) raw score of copy copies[0, j] (1 = the next pod) on rows; copies may
        be the int 1 (J = 1)."""
        raise NotImplementedError

    # NODE_LOCAL scores whose copy_scores read the node table's columns named here and nothing else (no host state,
    # no other node): a node's copy scores are a function of its rows of these columns and the Score state, and
    # copy_totals remembers them by those rows (sched/cycle.py RememberedRows). Empty: not such a score.
    score_columns: ClassVar[tuple[str, ...]] = ()
    # The same for a NODE_LOCAL Filter: the columns its Filter and copy_capacity read, and nothing else.
    filter_columns: ClassVar[tuple[str, ...]] = ()

    def copy_model(self, state, tensors, feasible, rows, cache=None):
        """DOMAIN scores: the raw scores of the nodes `rows` (the feasible ones, (C,) int64) as a
        kernels.domain_batch.RawModel, which moves them as copies of the pod are placed on those nodes one after
        another, exactly as Score would compute them for the next copy. `cache` as for score."""
        raise NotImplementedError

    def scale(self, xp, raw, lo, hi):
        """DOMAIN scores: NormalizeScore of raw scores `raw` (any subset of the feasible nodes) when the feasible
        nodes' raw scores range over [lo, hi]. A raw score equal to lo must scale to a value that does not depend
        on hi (the sequential loop rescales only the nodes above the minimum when the maximum moves)."""
        raise NotImplementedError

    # -- Reserve / Unreserve ------------------------------------------------------------------------
    def reserve(self, state, node: int, pod, cluster, extra, picks=()):
        """Per-pod state taken on the chosen node (DRA claims, GPU devices); returns what unreserve needs.
        `extra`: what this plugin's Filter returned besides code and payload (None if nothing); `picks`: what the
        profile's Score plugins picked for the pod on this node (Plugin.pick), in profile order."""
        return None

    def pick(self, state, node: int, cluster):
        """For a Score plugin whose policy also decides what a Reserve plugin takes on the chosen node (the devices
        of a GPU share: FGDScore, RandomScore; the trace simulator's allocateGpuIdFunc): that choice on `node`, for
        Reserve's `picks`; None: no choice. Asked once per placed pod that a Reserve plugin keeps state for, once
        the node is chosen and before the pod's load is placed there (the node as the pod was scored on it)."""
        return None

    def unreserve(self, record, cluster) -> None:
        """Exactly undo reserve (placements are undone newest first)."""

    def release(self, pod_keys: list[str], cluster) -> None:
        """Placed pods left (deleted, completed, rejected at Permit; a cycle's evictions at once): drop what each
        held."""

    def permit_rejected(self, pod_keys: list[str], cluster) -> None:
        """Placed pods rejected at Permit (timed out, or deleted while waiting): upstream runs Unreserve for them.
        `release` follows for the same pods; this undoes what a Reserve leaves after a pod's release."""

    def replay(self, record, cluster):
        """A reserve made on a restricted copy of the cluster (a topology placement), made again on `cluster`;
        returns its record there."""
        raise NotImplementedError

    # -- Permit -------------------------------------------------------------------------------------
    def permit(self, pod, cluster):
        raise NotImplementedError

    # -- PreBind / Bind / PostBind ------------------------------------------------------------------
    def pre_bind(self, *args):
        raise NotImplementedError

    def bind(self, *args):
        raise NotImplementedError

    def post_bind(self, *args):
        raise NotImplementedError

    # -- PodGroup placements (KEP-5732) -------------------------------------------------------------
    def generate_placements(self, *args):
        raise NotImplementedError

    def score_placement(self, *args):
        raise NotImplementedError

    # -- JAX backend: padding, and what of the states is a run-time input ----------------------------
    def pad_filter_state(self, state, pads: "Pads"):
        """The Filter state with node- and vocabulary-indexed masks padded to the compiled program's buckets."""
        return state

    def pad_score_state(self, state, pads: "Pads"):
        """The Score state, padded likewise."""
        return state

    def request_pattern(self, pod: PodInfo, cluster):
        """For a plugin that reads the pod's requests (reads_requests): what of them its results depend on besides
        the run-time amounts of its states (runtime_filter_inputs, runtime_score_inputs). Two pods that differ only
        in their requests (PodShape.family) and have equal patterns get, on one cluster, the same results at every
        point (SKIP, errors, which Filters and Scores run) and states that differ in those amounts alone (the JAX
        segments' members take the first member's compiled configuration on it). None: no such pattern."""
        return None

    def runtime_filter_inputs(self, state) -> tuple[object, np.ndarray]:
        """(the Filter state without its run-time amounts, those amounts as an int64 vector): amounts stay inputs
        of the compiled program, so pods differing only in them share one program."""
        return state, np.zeros(0, np.int64)

    def with_runtime_filter(self, state, values):
        """Inverse of runtime_filter_inputs, with traced `values`."""
        return state

    def runtime_score_inputs(self, state) -> tuple[object, np.ndarray]:
        """As runtime_filter_inputs, for the Score state."""
        return state, np.zeros(0, np.int64)

    def runtime_filter_sources(self, state, cluster) -> np.ndarray | None:
        """For a plugin that reads requests: where each run-time amount of its (padded) Filter state comes from in the
        pod's amount vector (kernels/resource_allocation.py pod_amounts: its request columns, then its non-zero and
        scoring cpu/memory, and a zero), for every pod of the family with this state's request_pattern on the
        cluster as it is: their amounts are that vector gathered, with no PreFilter of their own (JAX segments). None:
        not so expressible; each such pod is prepared."""
        return None

    def runtime_score_sources(self, state, cluster) -> np.ndarray | None:
        """As runtime_filter_sources, for the (padded) Score state."""
        return None

    def with_runtime_score(self, state, values):
        return state


@dataclass(frozen=True)
class Pads:
    """Padded sizes of the compiled program's arrays (JAX backend)."""
    nodes: int
    resources: int
    taints: int
    ports: int
    label_values: int


def pad1(a: np.ndarray, size: int, fill) -> np.ndarray:
    """a (n,) padded to (size,) with `fill`."""
    out = np.full((size,), fill, dtype=a.dtype)
    out[: a.shape[0]] = a
    return out
