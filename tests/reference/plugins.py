"""Plain reference versions of the kube-scheduler plugins phalanx implements.

Every function works on ONE pod and ONE node (or one list of nodes for the
normalisers) with ordinary Python values.  Objects are duck-typed: anything with
the attribute names of phalanx.cluster_models (snake_case pydantic models) works.

Upstream sources these functions were derived from (kubernetes/kubernetes, v1.35/v1.36):
  pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go
  pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go
  pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go
  staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go
  staging/src/k8s.io/apimachinery/pkg/labels/selector.go (Requirement.Matches)
  pkg/scheduler/framework/plugins/nodeports/node_ports.go, pkg/scheduler/util/utils.go (GetHostPorts)
  pkg/scheduler/framework/types.go (HostPortInfo.CheckConflict, NodeInfo accounting)
  pkg/scheduler/framework/plugins/noderesources/{fit,resource_allocation,least_allocated,
      most_allocated,requested_to_capacity_ratio,balanced_allocation}.go
  pkg/scheduler/framework/plugins/helper/{normalize_score,shape_score}.go
  staging/src/k8s.io/component-helpers/resource/helpers.go (PodRequests)
  pkg/scheduler/framework/plugins/podtopologyspread/{common,filtering,scoring,plugin}.go
  pkg/scheduler/framework/plugins/helper/spread.go (DefaultSelector, GetPodServices)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

# --------------------------------------------------------------------------------------
# constants
# --------------------------------------------------------------------------------------
MAX_NODE_SCORE = 100  # fwk.MaxNodeScore
MAX_CUSTOM_PRIORITY_SCORE = 10  # config.MaxCustomPriorityScore (RTCR shape scores are 0..10)
MAX_UTILIZATION = 100  # requested_to_capacity_ratio.go maxUtilization
DEFAULT_MILLI_CPU_REQUEST = 100  # schedutil.DefaultMilliCPURequest
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024  # schedutil.DefaultMemoryRequest
HOSTNAME_LABEL = "kubernetes.io/hostname"  # v1.LabelHostname
ZONE_LABEL = "topology.kubernetes.io/zone"  # v1.LabelTopologyZone
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
OBJECT_NAME_FIELD = "metadata.name"

SUCCESS = "Success"
UNSCHEDULABLE = "Unschedulable"
UNSCHEDULABLE_AND_UNRESOLVABLE = "UnschedulableAndUnresolvable"
ERROR = "Error"             # a Filter that fails the cycle (NodeVolumeLimits' unreadable claims)

# upstream reason strings
REASON_NODE_UNSCHEDULABLE = "node(s) were unschedulable"
REASON_UNTOLERATED_TAINT = "node(s) had untolerated taint(s)"  # v1.35+: no {key: value} any more
REASON_NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
REASON_NODE_AFFINITY_CONFLICT = "pod affinity terms conflict"
REASON_NODE_PORTS = "node(s) didn't have free ports for the requested pod ports"
REASON_TOO_MANY_PODS = "Too many pods"
REASON_PTS_CONSTRAINTS = "node(s) didn't match pod topology spread constraints"
REASON_PTS_MISSING_LABEL = REASON_PTS_CONSTRAINTS + " (missing required label)"

CPU, MEMORY, EPHEMERAL, PODS = "cpu", "memory", "ephemeral-storage", "pods"
NATIVE_RESOURCES = (CPU, MEMORY, EPHEMERAL, PODS)


# --------------------------------------------------------------------------------------
# Go arithmetic helpers
# --------------------------------------------------------------------------------------
def go_div(a: int, b: int) -> int:
    """Go integer division: truncates toward zero (Python // floors)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def go_round(x: float) -> int:
    """Go math.Round: half away from zero (Python round() is half-to-even)."""
    if x < 0:
        return -go_round(-x)
    r = math.floor(x)
    return int(r) + (1 if x - r >= 0.5 else 0)


def go_parse_int64(s: str):
    """strconv.ParseInt(s, 10, 64); returns None on error."""
    if not isinstance(s, str) or not s:
        return None
    body = s[1:] if s[0] in "+-" else s
    if not body or not all("0" <= ch <= "9" for ch in body):
        return None
    v = int(s)
    if v < -(2**63) or v > 2**63 - 1:
        return None
    return v


# --------------------------------------------------------------------------------------
# small object accessors (duck typing on the phalanx.cluster_models field names)
# --------------------------------------------------------------------------------------
def pod_namespace(pod) -> str:
    return pod.metadata.namespace or "default"


def pod_key(pod) -> str:
    return f"{pod_namespace(pod)}/{pod.metadata.name}"


def node_name(node) -> str:
    return node.metadata.name


def node_labels(node) -> dict:
    return node.metadata.labels or {}


def pod_labels(pod) -> dict:
    return pod.metadata.labels or {}


def node_allocatable(node) -> dict:
    """status.allocatable as the API server stored it.  (SetDefaults_NodeStatus copies the whole
    capacity map when allocatable is absent; the object model applies that at validation.  A
    resource in capacity but missing from a present allocatable map is 0 for the scheduler.)"""
    return dict(node.status.allocatable or {})


def is_scalar_resource(name: str) -> bool:
    """v1helper.IsScalarResourceName: extended ("domain/name" outside kubernetes.io),
    hugepages-*, prefixed native (kubernetes.io/*) or attachable-volumes-*."""
    if name in NATIVE_RESOURCES:
        return False
    return "/" in name or name.startswith("hugepages-") or name.startswith("attachable-volumes-")


def _container_requests(c) -> dict:
    res = getattr(c, "resources", None)
    if res is None:
        return {}
    return dict(res.requests or {})


# --------------------------------------------------------------------------------------
# resource helpers: component-helpers/resource PodRequests
# --------------------------------------------------------------------------------------
def _add(into: dict, other: dict) -> None:
    for k, v in other.items():
        into[k] = into.get(k, 0) + v


def _max_into(into: dict, other: dict) -> None:
    for k, v in other.items():
        if k not in into or v > into[k]:
            into[k] = v


def _apply_non_missing(reqs: dict, non_missing: dict | None) -> dict:
    out = dict(reqs)
    if non_missing:
        for k, v in non_missing.items():
            if k not in reqs:  # missing, NOT zero: an explicit 0 stays 0
                out[k] = out.get(k, 0) + v
    return out


def aggregate_container_requests(pod, non_missing: dict | None = None) -> dict:
    """AggregateContainerRequests (KEP-753 sidecar formula)."""
    reqs: dict = {}
    for c in pod.spec.containers:
        _add(reqs, _apply_non_missing(_container_requests(c), non_missing))
    restartable: dict = {}
    init_max: dict = {}
    for c in pod.spec.init_containers:
        creqs = _apply_non_missing(_container_requests(c), non_missing)
        if getattr(c, "restart_policy", None) == "Always":
            # a sidecar runs for the pod's whole life: it adds to the steady-state sum
            _add(reqs, creqs)
            _add(restartable, creqs)
            eff = dict(restartable)
        else:
            # a regular init container runs next to every sidecar started before it
            eff = dict(creqs)
            _add(eff, restartable)
        _max_into(init_max, eff)
    _max_into(reqs, init_max)
    return reqs


def pod_level_requests(pod) -> dict:
    res = getattr(pod.spec, "resources", None)
    if res is None:
        return {}
    return {k: v for k, v in (res.requests or {}).items() if k in (CPU, MEMORY)}


def pod_requests(pod, non_missing: dict | None = None) -> dict:
    """resourcehelper.PodRequests: containers (+sidecar rules), pod-level cpu/memory override,
    plus overhead.  Values are int64 (cpu in millicores)."""
    reqs = aggregate_container_requests(pod, non_missing)
    reqs.update(pod_level_requests(pod))  # IsPodLevelRequestsSet: only cpu/memory are supported
    _add(reqs, dict(pod.spec.overhead or {}))
    return reqs


_DEFAULTS = {CPU: DEFAULT_MILLI_CPU_REQUEST, MEMORY: DEFAULT_MEMORY_REQUEST}


def pod_nonzero_cpu_mem(pod) -> tuple[int, int]:
    """framework/types.go calculateResource: the NonZeroRequested contribution of a pod
    (default 100m / 200Mi per container whose request is *missing*; with pod-level requests
    set, a default is only applied for a resource missing at both levels)."""
    requests = pod_requests(pod)
    if pod_level_requests(pod):
        nm = {k: v for k, v in _DEFAULTS.items() if k not in requests}
    else:
        nm = dict(_DEFAULTS)
    non0 = pod_requests(pod, nm) if nm else requests
    return non0.get(CPU, 0), non0.get(MEMORY, 0)


def score_pod_request(pod, resource: str, use_requested: bool) -> int:
    """resourceAllocationScorer.calculatePodResourceRequest."""
    nm = None if use_requested else dict(_DEFAULTS)
    return pod_requests(pod, nm).get(resource, 0)


@dataclass
class NodeState:
    """The parts of upstream NodeInfo the plugins read."""

    allocatable: dict
    allowed_pods: int
    requested: dict = field(default_factory=dict)  # raw PodRequests sums (cpu millis)
    nonzero_cpu: int = 0
    nonzero_mem: int = 0
    num_pods: int = 0
    used_ports: list = field(default_factory=list)  # (ip, protocol, port)


def node_state(node, node_pods) -> NodeState:
    alloc = node_allocatable(node)
    st = NodeState(allocatable=alloc, allowed_pods=alloc.get(PODS, 0))
    for p in node_pods:
        st.num_pods += 1
        _add(st.requested, pod_requests(p))
        c, m = pod_nonzero_cpu_mem(p)
        st.nonzero_cpu += c
        st.nonzero_mem += m
        for port in host_ports(p):
            st.used_ports.append(_sanitize_port(port))
    return st


# --------------------------------------------------------------------------------------
# tolerations
# --------------------------------------------------------------------------------------
def _parse_int64(text: str):
    """content.IsDecimalInteger + strconv.ParseInt(text, 10, 64), character by character; None on failure."""
    digits = text[1:] if text.startswith("-") else text
    if digits == "" or any(c not in "0123456789" for c in digits):
        return None
    if digits[0] == "0" and (len(digits) > 1 or text.startswith("-")):
        return None
    value = int(text)
    if value < -2**63 or value > 2**63 - 1:
        return None
    return value


def toleration_tolerates(tol, key: str, value: str, effect: str, comparison: bool = False) -> bool:
    """v1.Toleration.ToleratesTaint; `comparison`: the TaintTolerationComparisonOperators gate (Gt/Lt)."""
    if tol.effect and tol.effect != effect:
        return False
    if tol.key and tol.key != key:
        return False
    op = tol.operator or "Equal"
    if op == "Equal":
        return (tol.value or "") == (value or "")
    if op == "Exists":
        return True
    if op in ("Gt", "Lt") and comparison:
        threshold, taint = _parse_int64(tol.value or ""), _parse_int64(value or "")
        if threshold is None or taint is None:
            return False
        return taint > threshold if op == "Gt" else taint < threshold
    return False


def tolerations_tolerate(tolerations, key: str, value: str, effect: str, comparison: bool = False) -> bool:
    return any(toleration_tolerates(t, key, value, effect, comparison) for t in tolerations)


def has_untolerated_noschedule_taint(node, pod, comparison: bool = False) -> bool:
    """FindMatchingUntoleratedTaint with DoNotScheduleTaintsFilterFunc (NoSchedule|NoExecute)."""
    for t in node.spec.taints:
        if t.effect not in ("NoSchedule", "NoExecute"):
            continue
        if not tolerations_tolerate(pod.spec.tolerations, t.key, t.value, t.effect, comparison):
            return True
    return False


# --------------------------------------------------------------------------------------
# label / node selectors
# --------------------------------------------------------------------------------------
class SelectorError(ValueError):
    pass


def label_requirement_matches(labels: dict, key: str, op: str, values) -> bool:
    """labels.Requirement.Matches."""
    if op in ("In", "=", "=="):
        return key in labels and labels[key] in values
    if op in ("NotIn", "!="):
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if op in ("Gt", "Lt"):
        if key not in labels:
            return False
        lv = go_parse_int64(labels[key])
        if lv is None or len(values) != 1:
            return False
        rv = go_parse_int64(values[0])
        if rv is None:
            return False
        return lv > rv if op == "Gt" else lv < rv
    raise SelectorError(f"unknown operator {op!r}")


# validation.IsValidLabelValue: at most 63 characters, empty or alphanumeric at both ends with '-', '_', '.' inside.
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


def _check_label_values(req) -> None:
    """labels.NewRequirement: every value must be a valid label value (so `Gt ["-1"]` does not parse). Checked for
    required terms only (required_node_selector_matches): a preferred term that fails it fails upstream's PreScore,
    which phalanx models (tests/test_warnings.py) and this reference does not (the strategies draw no such term)."""
    for v in req.values or []:
        if len(v) > 63 or not _LABEL_VALUE.fullmatch(v):
            raise SelectorError(f"invalid label value {v!r}")


def _check_node_requirement(req) -> None:
    """labels.NewRequirement value-count validation for node selector requirements."""
    op, vals = req.operator, list(req.values or [])
    if op in ("In", "NotIn") and not vals:
        raise SelectorError("for 'in', 'notin' operators, values set can't be empty")
    if op in ("Exists", "DoesNotExist") and vals:
        raise SelectorError("values set must be empty for exists and does not exist")
    if op in ("Gt", "Lt"):
        if len(vals) != 1:
            raise SelectorError("for 'Gt', 'Lt' operators, exactly one value is required")
        if go_parse_int64(vals[0]) is None:
            raise SelectorError("for 'Gt', 'Lt' operators, the value must be an integer")


def node_selector_term_matches(term, node):
    """nodeSelectorTerm.match; returns True/False, or raises SelectorError on a parse error.

    An empty term (no expressions and no fields) must be filtered out by the caller."""
    labels = node_labels(node)
    exprs = list(term.match_expressions or [])
    fields_ = list(term.match_fields or [])
    for r in exprs:
        _check_node_requirement(r)
    for r in fields_:
        if r.operator not in ("In", "NotIn"):
            raise SelectorError("matchFields supports In/NotIn only")
        if len(r.values or []) != 1:
            raise SelectorError("matchFields In/NotIn must have one element")
    if exprs:
        for r in exprs:
            if not label_requirement_matches(labels, r.key, r.operator, list(r.values or [])):
                return False
    if fields_:
        node_fields = {OBJECT_NAME_FIELD: node_name(node)} if node_name(node) else {}
        if node_fields:
            for r in fields_:
                got = node_fields.get(r.key, "")
                want = r.values[0]
                if r.operator == "In" and got != want:
                    return False
                if r.operator == "NotIn" and got == want:
                    return False
    return True


def _term_is_empty(term) -> bool:
    return not (term.match_expressions or []) and not (term.match_fields or [])


def required_node_selector_matches(node_selector, node) -> bool:
    """LazyErrorNodeSelector.Match: ORed terms; empty terms select nothing; a term with a
    parse error is skipped (it never matches)."""
    for term in node_selector.node_selector_terms:
        if _term_is_empty(term):
            continue
        try:
            for r in term.match_expressions or []:
                _check_label_values(r)
            if node_selector_term_matches(term, node):
                return True
        except SelectorError:
            continue
    return False


def _required_affinity(pod):
    aff = pod.spec.affinity
    if aff is None or aff.node_affinity is None:
        return None
    return aff.node_affinity.required_during_scheduling_ignored_during_execution


def required_node_affinity_matches(pod, node) -> bool:
    """nodeaffinity.GetRequiredNodeAffinity(pod).Match(node): nodeSelector AND required terms."""
    labels = node_labels(node)
    for k, v in (pod.spec.node_selector or {}).items():
        if labels.get(k) != v:
            return False
    req = _required_affinity(pod)
    if req is not None:
        return required_node_selector_matches(req, node)
    return True


# --------------------------------------------------------------------------------------
# Filters.  Each returns (code, reasons).  A prefilter "Skip" is reported as None.
# --------------------------------------------------------------------------------------
def filter_node_unschedulable(pod, node, comparison: bool = False):
    if not node.spec.unschedulable:
        return SUCCESS, []
    if tolerations_tolerate(pod.spec.tolerations, TAINT_NODE_UNSCHEDULABLE, "", "NoSchedule", comparison):
        return SUCCESS, []
    return UNSCHEDULABLE_AND_UNRESOLVABLE, [REASON_NODE_UNSCHEDULABLE]


def filter_taint_toleration(pod, node, comparison: bool = False):
    if has_untolerated_noschedule_taint(node, pod, comparison):
        return UNSCHEDULABLE_AND_UNRESOLVABLE, [REASON_UNTOLERATED_TAINT]
    return SUCCESS, []


@dataclass
class NodeAffinityPreFilter:
    skip: bool = False
    rejected: bool = False  # conflicting metadata.name terms -> whole pod rejected
    node_names: set | None = None  # PreFilterResult.NodeNames (None = all nodes)


def prefilter_node_affinity(pod) -> NodeAffinityPreFilter:
    req = _required_affinity(pod)
    if req is None and not (pod.spec.node_selector or {}):
        return NodeAffinityPreFilter(skip=True)
    if req is None or len(req.node_selector_terms) == 0:
        return NodeAffinityPreFilter()
    names: set | None = None
    for term in req.node_selector_terms:
        term_names: set | None = None
        for r in term.match_fields or []:
            if r.key == OBJECT_NAME_FIELD and r.operator == "In":
                s = set(r.values or [])
                term_names = s if term_names is None else (term_names & s)
        if term_names is None:
            # this term does not pin node names: every node is eligible (terms are ORed)
            return NodeAffinityPreFilter()
        names = term_names if names is None else (names | term_names)
    if names is not None and len(names) == 0:
        return NodeAffinityPreFilter(rejected=True)
    return NodeAffinityPreFilter(node_names=names)


def filter_node_affinity(pod, node):
    if required_node_affinity_matches(pod, node):
        return SUCCESS, []
    return UNSCHEDULABLE_AND_UNRESOLVABLE, [REASON_NODE_AFFINITY]


def host_ports(pod) -> list:
    """util.GetHostPorts: host ports (>0) of sidecar init containers, then app containers."""
    out = []
    for c in pod.spec.init_containers:
        if getattr(c, "restart_policy", None) != "Always":
            continue
        out.extend(p for p in c.ports if (p.host_port or 0) > 0)
    for c in pod.spec.containers:
        out.extend(p for p in c.ports if (p.host_port or 0) > 0)
    return out


def _sanitize_port(p) -> tuple:
    ip = p.host_ip or "0.0.0.0"
    proto = p.protocol or "TCP"
    return (ip, proto, p.host_port)


def ports_conflict(used: list, ip: str, proto: str, port: int) -> bool:
    """HostPortInfo.CheckConflict (after sanitize)."""
    if port <= 0:
        return False
    if ip == "0.0.0.0":
        return any(u[1] == proto and u[2] == port for u in used)
    return any(u[0] in ("0.0.0.0", ip) and u[1] == proto and u[2] == port for u in used)


def filter_node_ports(pod, node, node_pods):
    want = host_ports(pod)
    if not want:
        return None  # PreFilter Skip
    used = node_state(node, node_pods).used_ports
    for p in want:
        ip, proto, port = _sanitize_port(p)
        if ports_conflict(used, ip, proto, port):
            return UNSCHEDULABLE, [REASON_NODE_PORTS]
    return SUCCESS, []


def fit_insufficient(pod, node, node_pods) -> list[tuple[str, bool]]:
    """fitsRequest: list of (reason, unresolvable) in upstream order."""
    st = node_state(node, node_pods)
    out = []
    if st.num_pods + 1 > st.allowed_pods:
        out.append((REASON_TOO_MANY_PODS, False))
    req = pod_requests(pod)
    # the filter's preFilterState only keeps cpu, memory, ephemeral-storage and scalar resources
    scalars = {k: v for k, v in req.items() if is_scalar_resource(k)}
    if req.get(CPU, 0) == 0 and req.get(MEMORY, 0) == 0 and req.get(EPHEMERAL, 0) == 0 and not scalars:
        return out
    alloc = st.allocatable
    for name in (CPU, MEMORY, EPHEMERAL):
        q = req.get(name, 0)
        if q > 0 and q > alloc.get(name, 0) - st.requested.get(name, 0):
            out.append((f"Insufficient {name}", q > alloc.get(name, 0)))
    # upstream iterates a Go map here (random order); the reference sorts by name
    for name in sorted(scalars):
        q = scalars[name]
        if q == 0:
            continue
        if q > alloc.get(name, 0) - st.requested.get(name, 0):
            out.append((f"Insufficient {name}", q > alloc.get(name, 0)))
    return out


def filter_node_resources_fit(pod, node, node_pods):
    ins = fit_insufficient(pod, node, node_pods)
    if not ins:
        return SUCCESS, []
    code = UNSCHEDULABLE_AND_UNRESOLVABLE if any(u for _, u in ins) else UNSCHEDULABLE
    return code, [r for r, _ in ins]


# ---------------------------------- PodTopologySpread ---------------------------------
NOTHING = "nothing"


@dataclass
class LabelSel:
    """A parsed labels.Selector: NOTHING (nil LabelSelector) or a list of requirements
    (an empty list is labels.Everything())."""

    kind: str = "reqs"
    reqs: list = field(default_factory=list)  # (key, op, values)

    def empty(self) -> bool:
        return self.kind != NOTHING and not self.reqs

    def matches(self, labels: dict) -> bool:
        if self.kind == NOTHING:
            return False
        return all(label_requirement_matches(labels, k, op, vals) for k, op, vals in self.reqs)


def label_selector_as_selector(ls) -> LabelSel:
    """metav1.LabelSelectorAsSelector."""
    if ls is None:
        return LabelSel(kind=NOTHING)
    reqs = []
    for k, v in (ls.match_labels or {}).items():
        reqs.append((k, "=", [v]))
    for e in ls.match_expressions or []:
        vals = list(e.values or [])
        if e.operator in ("In", "NotIn") and not vals:
            raise SelectorError("values set can't be empty")
        if e.operator in ("Exists", "DoesNotExist") and vals:
            raise SelectorError("values set must be empty")
        reqs.append((e.key, e.operator, vals))
    return LabelSel(reqs=reqs)


@dataclass
class SpreadConstraint:
    max_skew: int
    topology_key: str
    selector: LabelSel
    min_domains: int
    node_affinity_policy: str
    node_taints_policy: str


@dataclass(frozen=True)
class ArgsConstraint:
    """A v1.TopologySpreadConstraint of PodTopologySpreadArgs.defaultConstraints (no labelSelector: validation
    forbids one)."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: tuple = ()
    label_selector: None = None


# plugin.go systemDefaultConstraints
SYSTEM_DEFAULT_CONSTRAINTS = (
    ArgsConstraint(3, HOSTNAME_LABEL, "ScheduleAnyway"),
    ArgsConstraint(5, ZONE_LABEL, "ScheduleAnyway"),
)


@dataclass(frozen=True)
class SpreadDefaults:
    """What PodTopologySpread's New() leaves in the plugin for pods without constraints of their own:
    pl.defaultConstraints, pl.systemDefaulted, and the objects its listers return.

    services: (namespace, spec.selector) per Service, the selector a dict or None;
    controllers: (kind, namespace, name, spec.selector) per ReplicationController (a dict), ReplicaSet or
    StatefulSet (a LabelSelector-like object, or None)."""

    constraints: tuple = SYSTEM_DEFAULT_CONSTRAINTS
    system_defaulted: bool = True
    services: tuple = ()
    controllers: tuple = ()


# The default args (defaultingType System) on a cluster without Services or controllers.
SYSTEM_SPREADING = SpreadDefaults()


def get_pod_services(pod, spreading: SpreadDefaults) -> list:
    """helper.GetPodServices: the selectors of the pod's namespace's Services that select it."""
    out = []
    for namespace, selector in spreading.services:
        if namespace != pod_namespace(pod):
            continue
        if selector is None:  # services with nil selectors match nothing, not everything
            continue
        if all(label_requirement_matches(pod_labels(pod), k, "=", [v]) for k, v in selector.items()):
            out.append(selector)
    return out


def default_selector(pod, spreading: SpreadDefaults) -> LabelSel:
    """helper.DefaultSelector: the pod's Services' selectors merged, then its controller's (a
    ReplicationController's pairs merged in, a ReplicaSet's or StatefulSet's requirements added)."""
    label_set: dict = {}
    for selector in get_pod_services(pod, spreading):
        label_set.update(selector)  # labels.Merge
    selector = LabelSel(reqs=[(k, "=", [v]) for k, v in label_set.items()])
    owner = None
    for ref in pod.metadata.owner_references:  # metav1.GetControllerOfNoCopy
        if ref.controller:
            owner = ref
            break
    if owner is None:
        return selector
    found = None
    for kind, namespace, name, spec_selector in spreading.controllers:
        if kind == owner.kind and namespace == pod_namespace(pod) and name == owner.name:
            found = spec_selector
            break
    gvk = (owner.api_version, owner.kind)
    if gvk == ("v1", "ReplicationController") and found is not None:
        label_set.update(found)
        selector = LabelSel(reqs=[(k, "=", [v]) for k, v in label_set.items()])
    elif gvk in (("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")) and found is not None:
        try:
            other = label_selector_as_selector(found)
        except SelectorError:
            return selector
        if other.kind != NOTHING:  # Nothing() has no requirements to add
            selector = LabelSel(reqs=selector.reqs + other.reqs)
    return selector


def filter_constraints(constraints, plabels: dict, action: str) -> list[SpreadConstraint]:
    """filterTopologySpreadConstraints."""
    out = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        sel = label_selector_as_selector(c.label_selector)
        if c.match_label_keys:
            extra = [(k, "=", [plabels[k]]) for k in c.match_label_keys if k in plabels]
            if extra and sel.kind != NOTHING:  # mergeLabelSetWithSelector keeps Nothing as is
                sel = LabelSel(reqs=extra + list(sel.reqs))
        out.append(
            SpreadConstraint(
                max_skew=c.max_skew,
                topology_key=c.topology_key,
                selector=sel,
                min_domains=c.min_domains if c.min_domains is not None else 1,
                node_affinity_policy=c.node_affinity_policy if c.node_affinity_policy is not None else "Honor",
                node_taints_policy=c.node_taints_policy if c.node_taints_policy is not None else "Ignore",
            )
        )
    return out


def build_default_constraints(pod, action: str, spreading: SpreadDefaults) -> list[SpreadConstraint]:
    """buildDefaultConstraints: the args' default constraints of this action, each with the pod's default
    selector; none when that selector is empty."""
    constraints = filter_constraints(spreading.constraints, pod_labels(pod), action)
    if not constraints:
        return []
    selector = default_selector(pod, spreading)
    if selector.empty():
        return []
    for c in constraints:
        c.selector = selector
    return constraints


def spread_constraints(pod, action: str, spreading: SpreadDefaults = SYSTEM_SPREADING) -> list[SpreadConstraint]:
    """The pod's own constraints of this action, or the default ones when it has none (getConstraints /
    calPreFilterState / initPreScoreState)."""
    if pod.spec.topology_spread_constraints:
        return filter_constraints(pod.spec.topology_spread_constraints, pod_labels(pod), action)
    return build_default_constraints(pod, action, spreading)


def node_has_all_topology_keys(node, constraints) -> bool:
    labels = node_labels(node)
    return all(c.topology_key in labels for c in constraints)


def node_inclusion_matches(c: SpreadConstraint, pod, node) -> bool:
    """topologySpreadConstraint.matchNodeInclusionPolicies (a policy other than Honor ignores)."""
    if c.node_affinity_policy == "Honor" and not required_node_affinity_matches(pod, node):
        return False
    if c.node_taints_policy == "Honor" and has_untolerated_noschedule_taint(node, pod):
        return False
    return True


def count_pods_match_selector(pods, sel: LabelSel, namespace: str) -> int:
    if sel.empty():
        return 0
    n = 0
    for p in pods:
        if p.metadata.deletion_timestamp is not None or pod_namespace(p) != namespace:
            continue
        if sel.matches(pod_labels(p)):
            n += 1
    return n


def pts_prefilter_counts(pod, constraints, nodes, pods_by_node) -> list[dict]:
    """calPreFilterState: per constraint, topology value -> matching pod count, over every
    node carrying all topology keys and passing the node inclusion policies."""
    tp = [dict() for _ in constraints]
    ns = pod_namespace(pod)
    for node in nodes:
        if not node_has_all_topology_keys(node, constraints):
            continue
        npods = pods_by_node.get(node_name(node), [])
        for i, c in enumerate(constraints):
            if not node_inclusion_matches(c, pod, node):
                continue
            v = node_labels(node)[c.topology_key]
            tp[i][v] = tp[i].get(v, 0) + count_pods_match_selector(npods, c.selector, ns)
    return tp


def filter_pod_topology_spread(pod, node, nodes, pods_by_node, spreading: SpreadDefaults = SYSTEM_SPREADING):
    constraints = spread_constraints(pod, "DoNotSchedule", spreading)
    if not constraints:
        return None  # PreFilter Skip
    tp = pts_prefilter_counts(pod, constraints, nodes, pods_by_node)
    labels = node_labels(node)
    plabels = pod_labels(pod)
    for i, c in enumerate(constraints):
        if c.topology_key not in labels:
            return UNSCHEDULABLE_AND_UNRESOLVABLE, [REASON_PTS_MISSING_LABEL]
        if len(tp[i]) < c.min_domains:
            min_match = 0
        else:
            min_match = min(tp[i].values())
        self_match = 1 if c.selector.matches(plabels) else 0
        match = tp[i].get(labels[c.topology_key], 0)
        if match + self_match - min_match > c.max_skew:
            return UNSCHEDULABLE, [REASON_PTS_CONSTRAINTS]
    return SUCCESS, []


# --------------------------------------------------------------------------------------
# Normalisers
# --------------------------------------------------------------------------------------
def default_normalize(raw: dict, reverse: bool) -> dict:
    """helper.DefaultNormalizeScore(MaxNodeScore, reverse, scores)."""
    max_count = 0
    for v in raw.values():
        if v > max_count:
            max_count = v
    if max_count == 0:
        return {n: (MAX_NODE_SCORE if reverse else v) for n, v in raw.items()}
    out = {}
    for n, v in raw.items():
        s = go_div(MAX_NODE_SCORE * v, max_count)
        out[n] = MAX_NODE_SCORE - s if reverse else s
    return out


# --------------------------------------------------------------------------------------
# Scores.  score_* return raw scores for one node; the caller normalises.
# --------------------------------------------------------------------------------------
def score_taint_toleration(pod, node, comparison: bool = False) -> int:
    """Count of PreferNoSchedule taints not tolerated by the pod's tolerations whose effect
    is empty or PreferNoSchedule."""
    tols = [t for t in pod.spec.tolerations if not t.effect or t.effect == "PreferNoSchedule"]
    n = 0
    for t in node.spec.taints:
        if t.effect != "PreferNoSchedule":
            continue
        if not tolerations_tolerate(tols, t.key, t.value, t.effect, comparison):
            n += 1
    return n


def preferred_terms(pod):
    aff = pod.spec.affinity
    if aff is None or aff.node_affinity is None:
        return []
    return list(aff.node_affinity.preferred_during_scheduling_ignored_during_execution or [])


def score_node_affinity(pod, node) -> int:
    """Sum of weights of matching preferred terms (weight 0 / empty terms are dropped).
    A parse error would make PreScore fail the whole cycle upstream; raise here."""
    s = 0
    for t in preferred_terms(pod):
        if t.weight == 0 or _term_is_empty(t.preference):
            continue
        if node_selector_term_matches(t.preference, node):
            s += t.weight
    return s


# --------------------------- noderesources scorers ---------------------------------
def resource_vectors(pod, node, node_pods, resources, use_requested: bool):
    """resourceAllocationScorer.score's inputs: (pod_requests, requested_with_pod,
    allocated_without_pod, allocatable) per configured resource; a resource whose
    allocatable is 0 (or an extended resource the pod does not request) is zeroed."""
    st = node_state(node, node_pods)
    pod_req, with_pod, without, alloc = [], [], [], []
    for name, _w in resources:
        preq = score_pod_request(pod, name, use_requested)
        if preq == 0 and is_scalar_resource(name):
            a, used = 0, 0  # bypass: pod does not request this extended resource
        elif name == CPU:
            a = st.allocatable.get(CPU, 0)
            used = st.requested.get(CPU, 0) if use_requested else st.nonzero_cpu
        elif name == MEMORY:
            a = st.allocatable.get(MEMORY, 0)
            used = st.requested.get(MEMORY, 0) if use_requested else st.nonzero_mem
        elif name == EPHEMERAL:
            a = st.allocatable.get(EPHEMERAL, 0)
            used = st.requested.get(EPHEMERAL, 0)
        elif is_scalar_resource(name) and name in st.allocatable:
            a = st.allocatable[name]
            used = st.requested.get(name, 0)
        else:
            a, used = 0, 0
        if a == 0:
            pod_req.append(preq)
            with_pod.append(0)
            without.append(0)
            alloc.append(0)
            continue
        pod_req.append(preq)
        with_pod.append(used + preq)
        without.append(used)
        alloc.append(a)
    return pod_req, with_pod, without, alloc


def least_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return go_div((capacity - requested) * MAX_NODE_SCORE, capacity)


def most_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    if requested > capacity:
        requested = capacity
    return go_div(requested * MAX_NODE_SCORE, capacity)


def broken_linear(shape, p: int) -> int:
    """helper.BuildBrokenLinearFunction; shape = [(utilization, score)] already scaled."""
    for i, (u, s) in enumerate(shape):
        if p <= u:
            if i == 0:
                return s
            u0, s0 = shape[i - 1]
            return s0 + go_div((s - s0) * (p - u0), (u - u0))
    return shape[-1][1]


def rtcr_resource_score(shape, requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return broken_linear(shape, MAX_UTILIZATION)
    return broken_linear(shape, go_div(requested * MAX_UTILIZATION, capacity))


def score_fit(pod, node, node_pods, profile) -> int:
    resources = list(profile.fit_resources)
    _preq, req, _without, alloc = resource_vectors(pod, node, node_pods, resources, use_requested=False)
    strategy = profile.fit_strategy
    node_score = weight_sum = 0
    if strategy in ("LeastAllocated", "MostAllocated"):
        fn = least_requested_score if strategy == "LeastAllocated" else most_requested_score
        for (name, w), r, a in zip(resources, req, alloc):
            if a == 0:
                continue
            node_score += fn(r, a) * w
            weight_sum += w
        return 0 if weight_sum == 0 else go_div(node_score, weight_sum)
    if strategy == "RequestedToCapacityRatio":
        shape = [(int(u), int(s) * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for u, s in profile.rtcr_shape]
        for (name, w), r, a in zip(resources, req, alloc):
            if a == 0:
                continue
            rs = rtcr_resource_score(shape, r, a)
            if rs > 0:  # only resources with a positive score count, weights included
                node_score += rs * w
                weight_sum += w
        if weight_sum == 0:
            return 0
        return go_round(node_score / weight_sum)
    raise ValueError(f"unknown fit strategy {strategy!r}")


def balanced_std_score(requested: list, allocatable: list) -> int:
    """v1.35 balancedResourceScorer (== v1.36 balancedResourceScore): int64((1-std)*100)."""
    fractions = []
    total = 0.0
    for r, a in zip(requested, allocatable):
        if a == 0:
            continue
        f = float(r) / float(a)
        if f > 1:
            f = 1.0
        total += f
        fractions.append(f)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / float(len(fractions))
        s = 0.0
        for f in fractions:
            s = s + (f - mean) * (f - mean)
        std = math.sqrt(s / float(len(fractions)))
    return int((1 - std) * float(MAX_NODE_SCORE))


def balanced_is_skipped(pod, profile) -> bool:
    """PreScore returns Skip for a pod whose requests for every balanced resource are 0."""
    return all(score_pod_request(pod, name, use_requested=True) == 0 for name, _w in profile.balanced_resources)


def score_balanced(pod, node, node_pods, profile) -> int:
    resources = list(profile.balanced_resources)
    _preq, with_pod, without, alloc = resource_vectors(pod, node, node_pods, resources, use_requested=True)
    if str(getattr(profile, "compat", "1.36")) == "1.35":
        return balanced_std_score(with_pod, alloc)
    # v1.36 (kubernetes PR #135573): score the *change* of balance, mapped to [50, 100]
    s_with = balanced_std_score(with_pod, alloc)
    s_without = balanced_std_score(without, alloc)
    return MAX_NODE_SCORE // 2 + go_div(MAX_NODE_SCORE // 2 + s_with - s_without, 2)


# --------------------------- PodTopologySpread scoring -----------------------------
@dataclass
class PtsScoreState:
    constraints: list
    ignored: set
    tp_counts: list  # per constraint: value -> count (non-hostname constraints only)
    weights: list


def pts_prescore(pod, feasible_nodes, nodes, pods_by_node, spreading: SpreadDefaults = SYSTEM_SPREADING):
    constraints = spread_constraints(pod, "ScheduleAnyway", spreading)
    if not constraints or not nodes:
        return None
    # Only non-system-default constraints require every topology key on a node: a node without a zone label
    # still gets hostname spreading under the system defaults.
    require_all = bool(pod.spec.topology_spread_constraints) or not spreading.system_defaulted
    ignored: set = set()
    tp_counts = [dict() for _ in constraints]
    topo_size = [0 for _ in constraints]
    for node in feasible_nodes:
        if require_all and not node_has_all_topology_keys(node, constraints):
            ignored.add(node_name(node))
            continue
        for i, c in enumerate(constraints):
            if c.topology_key == HOSTNAME_LABEL:
                continue
            v = node_labels(node).get(c.topology_key, "")  # Go: a missing label reads as ""
            if v not in tp_counts[i]:
                tp_counts[i][v] = 0
                topo_size[i] += 1
    weights = []
    for i, c in enumerate(constraints):
        sz = topo_size[i]
        if c.topology_key == HOSTNAME_LABEL:
            sz = len(feasible_nodes) - len(ignored)
        weights.append(math.log(float(sz + 2)))
    ns = pod_namespace(pod)
    for node in nodes:
        if require_all and not node_has_all_topology_keys(node, constraints):
            continue
        npods = pods_by_node.get(node_name(node), [])
        for i, c in enumerate(constraints):
            if not node_inclusion_matches(c, pod, node):
                continue
            v = node_labels(node).get(c.topology_key, "")
            if v not in tp_counts[i]:
                continue
            tp_counts[i][v] += count_pods_match_selector(npods, c.selector, ns)
    return PtsScoreState(constraints, ignored, tp_counts, weights)


def score_pod_topology_spread(state: PtsScoreState, pod, node, node_pods) -> int:
    if node_name(node) in state.ignored:
        return 0
    labels = node_labels(node)
    score = 0.0
    for i, c in enumerate(state.constraints):
        if c.topology_key not in labels:
            continue
        if c.topology_key == HOSTNAME_LABEL:
            cnt = count_pods_match_selector(node_pods, c.selector, pod_namespace(pod))
        else:
            cnt = state.tp_counts[i][labels[c.topology_key]]
        score += float(cnt) * state.weights[i] + float(c.max_skew - 1)
    return go_round(score)


def normalize_pod_topology_spread(state: PtsScoreState, raw: dict) -> dict:
    min_s = None
    max_s = 0
    for n, s in raw.items():
        if n in state.ignored:
            continue
        if min_s is None or s < min_s:
            min_s = s
        if s > max_s:
            max_s = s
    out = {}
    for n, s in raw.items():
        if n in state.ignored:
            out[n] = 0
        elif max_s == 0:
            out[n] = MAX_NODE_SCORE
        else:
            out[n] = go_div(MAX_NODE_SCORE * (max_s + min_s - s), max_s)
    return out


# --------------------------- ImageLocality ------------------------------------------
IMAGE_MB = 1024 * 1024
IMAGE_MIN_THRESHOLD = 23 * IMAGE_MB
IMAGE_MAX_CONTAINER_THRESHOLD = 1000 * IMAGE_MB


def normalized_image_name(name: str) -> str:
    """normalizedImageName: ":latest" appended when the last ':' is not after the last '/'."""
    if name.rfind(":") <= name.rfind("/"):
        name = name + ":latest"
    return name


def image_summaries(nodes) -> dict:
    """The cache's image states, node by node in order (addNodeImageStates): name -> [size, set of node names];
    the size is the first node's that listed the name."""
    states: dict = {}
    for node in nodes:
        for image in node.status.images:
            for name in image.names:
                if name not in states:
                    states[name] = [image.size_bytes, {node_name(node)}]
                else:
                    states[name][1].add(node_name(node))
    return states


def score_image_locality(pod, node, nodes, image_nodes=None) -> int:
    """sumImageScores over init containers, containers, then `image` volumes (each image of the node's summaries adds
    int64(float64(size) * float64(numNodes) / float64(totalNumNodes))), then calculatePriority. totalNumNodes is the
    snapshot's node list, `nodes`; the summaries are the cache's, over `image_nodes` (default: `nodes`): a placement's
    cycle lists its nodes alone but its NodeInfos carry the whole cluster's summaries."""
    states = image_summaries(nodes if image_nodes is None else image_nodes)
    total_nodes = len(nodes)
    held = {name for image in node.status.images for name in image.names}
    containers = list(pod.spec.init_containers) + list(pod.spec.containers)
    references = [c.image for c in containers]
    for volume in pod.spec.volumes:
        if volume.get("image") is not None:
            references.append(volume["image"].get("reference", ""))
    total = 0
    for reference in references:
        name = normalized_image_name(reference)
        if name in held:
            size, holders = states[name]
            spread = float(len(holders)) / float(total_nodes)
            total += int(float(size) * spread)
    top = IMAGE_MAX_CONTAINER_THRESHOLD * len(containers)      # containers only: v1.36 (issue #138952)
    if total < IMAGE_MIN_THRESHOLD:
        total = IMAGE_MIN_THRESHOLD
    elif total > top:
        total = top
    return go_div(MAX_NODE_SCORE * (total - IMAGE_MIN_THRESHOLD), top - IMAGE_MIN_THRESHOLD)
