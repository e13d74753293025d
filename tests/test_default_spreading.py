"""PodTopologySpread's default constraints (v1.36 plugin.go, common.go buildDefaultConstraints, scoring.go
requireAllTopologies): a pod without constraints of its own is spread by the system defaults (hostname maxSkew 3,
zone maxSkew 5, ScheduleAnyway) or by args.defaultConstraints (defaultingType List), with the selector its
Services and controller give it; hand-checked toys, then random clusters against the plain reference."""
from __future__ import annotations

import importlib.util
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phalanx.cluster_models import ClusterObjects, InputError
from phalanx.cluster_models.objects import LabelSelector, OwnerReference
from phalanx.cluster_models.spreading import DefaultSelectors
from phalanx.plugins.framework import POD_BOUND
from phalanx.plugins.pod_topology_spread import PodTopologySpread, PodTopologySpreadArgs
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.config import config_from_doc, profile_from_config
from phalanx.sched.explain import explain_pod
from reference import plugins as P
from reference.profile import config_doc, ref_profile
from reference.scheduler import ref_filter, ref_schedule, ref_scores
from strategies import (HOSTNAME, ZONE, clusters, explained_filters, first_attempts, make_node, make_pod, make_profile,
                        profiles)

HAVE_JAX = importlib.util.find_spec("jax") is not None
PTS = "PodTopologySpread"
MISSING = "node(s) didn't match pod topology spread constraints (missing required label)"
SKEW = "node(s) didn't match pod topology spread constraints"
SYSTEM_AS_LIST = {"defaultingType": "List", "defaultConstraints": [
    {"maxSkew": 3, "topologyKey": HOSTNAME, "whenUnsatisfiable": "ScheduleAnyway"},
    {"maxSkew": 5, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"}]}


def with_spread_args(profile, args: dict):
    """`profile` (a phalanx Profile or a RefProfile) with PodTopologySpread args, through a configuration file."""
    ref = ref_profile(profile)
    doc = config_doc(ref)
    doc["profiles"][0]["pluginConfig"].append({"name": PTS, "args": args})
    return profile_from_config(doc, compat=ref.compat)


def selectors(services=(), controllers=()) -> DefaultSelectors:
    """phalanx's default selectors from (namespace, spec.selector) Services and (kind, namespace, name,
    spec.selector) controllers (as DefaultSelectors.from_objects keeps them: Services without a selector drop)."""
    out = DefaultSelectors()
    for namespace, selector in services:
        if selector is not None:
            out.services.setdefault(namespace, []).append(selector)
    for kind, namespace, name, selector in controllers:
        out.owners[(kind, namespace, name)] = SimpleNamespace(spec=SimpleNamespace(selector=selector))
    return out


def spreading(args: dict | None, services=(), controllers=()) -> P.SpreadDefaults:
    """The reference's view of the same objects and args."""
    if args is None or (args.get("defaultingType") or "System") == "System":
        return P.SpreadDefaults(services=tuple(services), controllers=tuple(controllers))
    constraints = tuple(P.ArgsConstraint(c["maxSkew"], c["topologyKey"], c["whenUnsatisfiable"],
                                         c.get("minDomains"), c.get("nodeAffinityPolicy"), c.get("nodeTaintsPolicy"))
                        for c in args.get("defaultConstraints", []))
    return P.SpreadDefaults(constraints, False, tuple(services), tuple(controllers))


def owned(pod, api_version: str, kind: str, name: str, controller: bool | None = True):
    pod.metadata.owner_references = [OwnerReference(api_version=api_version, kind=kind, name=name, uid="u",
                                                    controller=controller)]
    return pod


# -- toys ------------------------------------------------------------------------------------------------------
# n1, n2 in zone z1, n3 in z2, n4 without a zone label. A Service selects app=web; web pods are bound two on n1,
# one on n2, one on n4.
NODES = [make_node("n1", labels={ZONE: "z1"}), make_node("n2", labels={ZONE: "z1"}),
         make_node("n3", labels={ZONE: "z2"}), make_node("n4")]
WEB_SERVICE = [("default", {"app": "web"})]
ONLY_SPREAD = make_profile(scores=((PTS, 1),))


def web(name, node="", app="web", **kw):
    return make_pod(name, cpu="100m", memory="64Mi", labels={"app": app}, node_name=node, **kw)


BOUND = [web("b1", "n1"), web("b2", "n1"), web("b3", "n2"), web("b4", "n4")]


def scheduler(profile=ONLY_SPREAD, bound=BOUND, services=WEB_SERVICE, controllers=(), nodes=NODES, **kw):
    cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=bound, priority_classes=[], warnings=[]))
    cluster.default_selectors = selectors(services, controllers)
    return Scheduler(cluster, profile, **kw)


def spread_scores(report) -> dict:
    return {n["name"]: (n["scores"][PTS]["raw"], n["scores"][PTS]["normalized"]) for n in report["nodes"]
            if PTS in n["scores"] and not n["scores"][PTS].get("skipped")}


def test_system_defaults_score_nodes_without_a_zone_by_hostname():
    """Every feasible node is scored (requireAllTopologies is false). hostname: 4 feasible nodes, weight
    log(4 + 2) = 1.7918; zone: domains z1, z2 and "" (n4 has no zone label), weight log(3 + 2) = 1.6094, matching
    pods z1 = 3, z2 = 0, "" = 1 (n4's pod, read by no node). Raw = cnt * weight + maxSkew - 1 per constraint the
    node has a key for:
      n1: 2 * 1.7918 + 2 + 3 * 1.6094 + 4 = 14.41 -> 14      n2: 1.7918 + 2 + 8.8283 = 12.62 -> 13
      n3: 0 + 2 + 0 + 4 = 6                                n4: 1.7918 + 2 (no zone term) = 3.79 -> 4
    Normalized 100 * (max + min - raw) / max with max 14, min 4: 28, 35, 85, 100; n4 wins."""
    sched = scheduler()
    report = explain_pod(sched, web("p"))
    assert spread_scores(report) == {"n1": (14, 28), "n2": (13, 35), "n3": (6, 85), "n4": (4, 100)}
    assert report["selected"] == "n4"
    assert report["warnings"] == []


def test_list_defaults_require_every_topology_key():
    """The same two constraints given as a List: n4 misses the zone key, so it is ignored (0) and neither a zone
    domain nor a hostname: hostname weight log(3 + 2), zone domains z1, z2, weight log(2 + 2) = 1.3863:
      n1: 2 * 1.6094 + 2 + 3 * 1.3863 + 4 = 13.38 -> 13     n2: 1.6094 + 2 + 8.1589 = 11.77 -> 12     n3: 6
    Normalized over n1..n3 (max 13, min 6): 46, 53, 100; n3 wins."""
    sched = scheduler(with_spread_args(ONLY_SPREAD, SYSTEM_AS_LIST))
    report = explain_pod(sched, web("p"))
    assert spread_scores(report) == {"n1": (13, 46), "n2": (12, 53), "n3": (6, 100), "n4": (0, 0)}
    assert report["selected"] == "n3"


def test_missing_zone_and_empty_zone_share_one_domain():
    """A node labelled zone "" reads the domain "" that nodes without the label count into (Go's zero value):
    n3 (z2), n4 (no zone, one web pod), n5 (zone ""). hostname weight log(5); zone domains z2 and "", log(4):
      n3: 2 + 4 = 6     n4: log 5 + 2 = 3.61 -> 4     n5: 2 + 1 * log 4 + 4 = 7.39 -> 7
    Normalized (max 7, min 4): 71, 100, 57."""
    nodes = [NODES[2], NODES[3], make_node("n5", labels={ZONE: ""})]
    sched = scheduler(nodes=nodes, bound=[web("b4", "n4")])
    report = explain_pod(sched, web("p"))
    assert spread_scores(report) == {"n3": (6, 71), "n4": (4, 100), "n5": (7, 57)}


def test_pods_without_a_default_selector_skip_spreading():
    report = explain_pod(scheduler(), web("p", app="db"))            # no Service selects it
    assert all(n["scores"][PTS] == {"raw": 0, "normalized": 0, "skipped": True} for n in report["nodes"])
    report = explain_pod(scheduler(services=[("default", {})]), web("p"))    # selects it, adds nothing
    assert all(n["scores"][PTS].get("skipped") for n in report["nodes"])
    # An empty List means no default constraints.
    report = explain_pod(scheduler(with_spread_args(ONLY_SPREAD, {"defaultingType": "List"})), web("p"))
    assert all(n["scores"][PTS].get("skipped") for n in report["nodes"])


def test_controller_selector():
    """A ReplicaSet owner adds its selector's requirements: db pods owned by ReplicaSet rs (selector app=web)
    are spread with the web pods, as in the first toy."""
    rs = ("ReplicaSet", "default", "rs", LabelSelector.model_validate({"matchLabels": {"app": "web"}}))
    pod = owned(web("p", app="db"), "apps/v1", "ReplicaSet", "rs")
    report = explain_pod(scheduler(services=(), controllers=[rs]), pod)
    # The RS selects web pods: the same counts as the Service gave, and the pod itself does not match.
    assert spread_scores(report) == {"n1": (14, 28), "n2": (13, 35), "n3": (6, 85), "n4": (4, 100)}
    # Not the controller (controller: false), or an unknown group/version: no selector.
    for pod in (owned(web("p", app="db"), "apps/v1", "ReplicaSet", "rs", controller=False),
                owned(web("p", app="db"), "extensions/v1beta1", "ReplicaSet", "rs")):
        report = explain_pod(scheduler(services=(), controllers=[rs]), pod)
        assert all(n["scores"][PTS].get("skipped") for n in report["nodes"])


def test_explicit_constraints_ignore_defaults():
    """A pod with its own constraint gets none of the defaults: zone maxSkew 1 over app=web, every key
    required (n4 ignored), zone weight log(2 + 2): n1, n2: 3 * 1.3863 = 4.16 -> 4, n3: 0; normalized 0, 0, 100."""
    own = [{"max_skew": 1, "topology_key": ZONE, "when_unsatisfiable": "ScheduleAnyway",
            "label_selector": {"match_labels": {"app": "web"}}}]
    want = {"n1": (4, 0), "n2": (4, 0), "n3": (0, 100), "n4": (0, 0)}
    for services in (WEB_SERVICE, ()):
        assert spread_scores(explain_pod(scheduler(services=services), web("p", spread=own))) == want


@pytest.mark.parametrize("busy_z2,min_domains,selected,message", [
    # Domains z1 (3 web pods) and z2 (0): min 0, n1/n2 skew 3 + 1 - 0 > 1, n3 0 + 1 - 0 <= 1; n4 has no zone label.
    (False, None, "n3", None),
    # Two web pods on n3 too: min 2; n3: 2 + 1 - 2 = 1 fits.
    (True, None, "n3", None),
    # ... and minDomains 3 > 2 domains: the global minimum is 0, so nothing fits.
    (True, 3, None, f"0/4 nodes are available: 1 {MISSING}, 3 {SKEW}."),
])
def test_list_do_not_schedule_default_filters(busy_z2, min_domains, selected, message):
    constraint = {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}
    if min_domains is not None:
        constraint["minDomains"] = min_domains
    bound = BOUND + ([web("b5", "n3"), web("b6", "n3")] if busy_z2 else [])
    profile = with_spread_args(make_profile(), {"defaultingType": "List", "defaultConstraints": [constraint]})
    report = explain_pod(scheduler(profile, bound=bound), web("p"))
    assert report["selected"] == selected
    assert report["message"] == message
    by_node = {n["name"]: n["filters"][PTS] for n in report["nodes"]}
    assert by_node["n4"] == {"status": "UnschedulableAndUnresolvable", "reasons": [MISSING]}
    # System defaults never filter.
    report = explain_pod(scheduler(make_profile(), bound=bound), web("p"))
    assert all(PTS not in n["filters"] for n in report["nodes"])


def test_runs_split_by_default_selector():
    """Pods with one PodSpec but different labels share a shape (their signatures cannot see the Services) and
    are placed as separate runs, each by its own selector: a-pods spread away from n1, b-pods away from n3."""
    bound = [web(f"a{i}", "n1", app="a") for i in range(3)] + [web(f"b{i}", "n3", app="b") for i in range(3)]
    services = [("default", {"app": "a"}), ("default", {"app": "b"})]
    pending = [web(f"p{i}", app=app) for i, app in enumerate("aabbab")]
    sched = scheduler(make_profile(), bound=bound, services=services)
    shapes = {id(sched.shape_of(p)) for p in pending}
    assert len(shapes) == 1
    shape = sched.shape_of(pending[0])
    parts = sched.framework.split_run(shape, pending, sched.cluster)
    assert [[p.metadata.name for p in part] for _, part in parts] == [["p0", "p1"], ["p2", "p3"], ["p4"], ["p5"]]
    # Each part is placed as a pod of its own labels (the shape's first pod where they are the same).
    assert all(part_shape.pod.metadata.labels == part[0].metadata.labels for part_shape, part in parts)
    # Pods no selector applies to stay one run.
    plain = [web(f"x{i}", app="c") for i in range(3)] + [web("y", app="d")]
    assert len(sched.framework.split_run(sched.shape_of(plain[0]), plain, sched.cluster)) == 1
    for batching in (True, False):
        got = first_attempts(scheduler(make_profile(), bound=bound, services=services, batching=batching), pending)
        ref = ref_schedule(NODES, bound + pending, [], make_profile(), spreading(None, services))
        assert got == ref


def test_hint_for_default_constraints():
    """isSchedulableAfterPodChange with getConstraints: a pod rejected under default DoNotSchedule constraints is
    helped by a pod of its namespace that its default selector selects, and by nothing else; explicit
    constraints count only when DoNotSchedule."""
    plugin = PodTopologySpread(PodTopologySpreadArgs.model_validate(
        {"defaultingType": "List",
         "defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}]}))
    cluster = SimpleNamespace(default_selectors=selectors(WEB_SERVICE))
    pod = web("p")
    assert plugin.hint(POD_BOUND, pod, [web("x")], cluster)
    assert not plugin.hint(POD_BOUND, pod, [web("x", app="db")], cluster)              # not selected
    assert not plugin.hint(POD_BOUND, pod, [web("x", namespace="other")], cluster)      # another namespace
    assert not plugin.hint(POD_BOUND, web("q", app="db"), [web("x", app="db")], cluster)   # no default selector
    system = PodTopologySpread(PodTopologySpreadArgs())                  # ScheduleAnyway defaults never reject
    assert not system.hint(POD_BOUND, pod, [web("x")], cluster)
    explicit = make_pod("e", labels={"app": "web"}, spread=[
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway",
         "labelSelector": {"matchLabels": {"app": "db"}}},
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": {"matchLabels": {"app": "web"}}}])
    assert plugin.hint(POD_BOUND, explicit, [web("x")], cluster)
    assert not plugin.hint(POD_BOUND, explicit, [web("x", app="db")], cluster)   # matches the ScheduleAnyway one


@pytest.mark.parametrize("args,message", [
    ({"defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}]},
     'defaultingType: Invalid value: "System": when .defaultConstraints are not empty'),
    ({"defaultingType": "Bogus"}, 'defaultingType: Unsupported value: "Bogus": supported values: "System", "List"'),
    ({"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 0, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}]},
     "defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)"),
    ({"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}]},
     "defaultConstraints[0].topologyKey: Required value: can not be empty"),
    ({"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE,
                                                        "whenUnsatisfiable": "Maybe"}]},
     'defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Maybe": supported values: "DoNotSchedule", '
     '"ScheduleAnyway"'),
    ({"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {}}]},
     "defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced for "
     "each pod"),
    ({"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"},
        {"maxSkew": 2, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}]},
     'defaultConstraints[1]: Duplicate value: "{topology.kubernetes.io/zone, DoNotSchedule}"'),
    ({"defaultingType": "List", "defaultConstraints": [{"maxSkew": 0, "whenUnsatisfiable": "DoNotSchedule"}]},
     ["defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)",
      "defaultConstraints[0].topologyKey: Required value: can not be empty"]),
])
def test_args_validation(args, message):
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"pluginConfig": [{"name": PTS, "args": args}]}]}
    with pytest.raises(InputError) as err:
        config_from_doc(doc, "sched.yaml")
    # Upstream validates the args at profiles[0].pluginConfig[0].args: each error's field continues that path, several
    # aggregated as "[e1, e2]".
    errors = [f"profiles[0].pluginConfig[0].args.{m}" for m in ([message] if isinstance(message, str) else message)]
    assert str(err.value) == "sched.yaml: " + (errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")


def test_args_defaulting():
    assert PodTopologySpreadArgs.model_validate({"defaultingType": ""}).defaulting_type == "System"
    listed = PodTopologySpreadArgs.model_validate(SYSTEM_AS_LIST)
    assert [(c.max_skew, c.topology_key) for c in listed.defaults] == [(3, HOSTNAME), (5, ZONE)]
    assert [(c.max_skew, c.topology_key) for c in PodTopologySpreadArgs().defaults] == [(3, HOSTNAME), (5, ZONE)]


# -- random clusters against the reference ---------------------------------------------------------------------
_SERVICE_SELECTORS = [None, {}, {"app": "a"}, {"app": "b"}, {"app": "c"}, {"app": "a"}, {"app": "b"}, {"app": "c"},
                      {"app": "a", "tier": "web"}, {"pod-template-hash": "h1"}]
_OWNERS = [None, ("apps/v1", "ReplicaSet", "rs"), ("apps/v1", "ReplicaSet", "gone"),
           ("apps/v1", "StatefulSet", "ss"), ("v1", "ReplicationController", "rc"), ("batch/v1", "Job", "j"),
           ("apps/v1beta2", "ReplicaSet", "rs")]
_RS_SELECTORS = [{"matchLabels": {"app": "a"}}, {"matchLabels": {"app": "b", "pod-template-hash": "h2"}},
                 {"matchExpressions": [{"key": "app", "operator": "In", "values": ["a", "c"]}]},
                 {"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, {}]
_RC_SELECTORS = [{"app": "b"}, {"app": "c", "tier": "web"}, {}]


@st.composite
def default_spreading(draw, nodes, pods):
    """(args or None, services, controllers). Changes `nodes` and `pods` in place: some nodes lose their zone label
    or get the value "", some pods lose their own constraints or get an owner (alike for pods of one labels set,
    so that pods of one template mostly stay alike)."""
    for node in nodes:
        change = draw(st.integers(0, 9))
        if change <= 1:
            node.metadata.labels.pop(ZONE, None)
        elif change == 2:
            node.metadata.labels[ZONE] = ""
    args = None
    if draw(st.integers(0, 2)) == 0:
        constraints = []
        for key in draw(st.lists(st.sampled_from([ZONE, HOSTNAME, "rack", "disktype"]), max_size=3, unique=True)):
            for action in draw(st.lists(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"]), min_size=1,
                                        unique=True)):
                c = {"maxSkew": draw(st.integers(1, 3)), "topologyKey": key, "whenUnsatisfiable": action}
                if draw(st.integers(0, 3)) == 0:
                    c["minDomains"] = draw(st.integers(1, 4))
                if draw(st.integers(0, 3)) == 0:
                    c["nodeAffinityPolicy"] = draw(st.sampled_from(["Honor", "Ignore"]))
                if draw(st.integers(0, 3)) == 0:
                    c["nodeTaintsPolicy"] = draw(st.sampled_from(["Honor", "Ignore"]))
                constraints.append(c)
        args = {"defaultingType": "List", "defaultConstraints": constraints}
    services = [(draw(st.sampled_from(["default", "default", "other"])), draw(st.sampled_from(_SERVICE_SELECTORS)))
                for _ in range(draw(st.integers(1, 4)))]
    controllers = []
    for namespace in ("default", "other"):
        if draw(st.booleans()):
            selector = LabelSelector.model_validate(draw(st.sampled_from(_RS_SELECTORS)))
            controllers.append(("ReplicaSet", namespace, "rs", selector))
        if draw(st.booleans()):
            selector = LabelSelector.model_validate(draw(st.sampled_from(_RS_SELECTORS)))
            controllers.append(("StatefulSet", namespace, "ss", selector))
        if draw(st.booleans()):
            controllers.append(("ReplicationController", namespace, "rc", draw(st.sampled_from(_RC_SELECTORS))))
    by_labels = {}
    for pod in pods:
        key = tuple(sorted(pod.metadata.labels.items()))
        if key not in by_labels or draw(st.integers(0, 5)) == 0:
            by_labels[key] = (draw(st.booleans()), draw(st.sampled_from(_OWNERS)),
                              draw(st.sampled_from([True, True, None])))
        keep_own, owner, controller = by_labels[key]
        if not keep_own:
            pod.spec.topology_spread_constraints = []
        if owner is not None:
            owned(pod, *owner, controller=controller)
    return args, services, controllers


def _cluster(nodes, bound, classes, services, controllers):
    cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=bound, priority_classes=classes, warnings=[]))
    cluster.default_selectors = selectors(services, controllers)
    return cluster


@given(cluster=clusters(), profile=profiles(), data=st.data())
def test_filters_and_scores_match_reference(cluster, profile, data):
    """Per pending pod: every filter's statuses up to the first failure, and PodTopologySpread's raw and
    normalized scores, as the reference builds default constraints from the same Services and controllers."""
    nodes, pods, classes = cluster
    args, services, controllers = data.draw(default_spreading(nodes, pods))
    if args is not None:
        profile = with_spread_args(profile, args)
    ref = spreading(args, services, controllers)
    bound = [p for p in pods if p.spec.node_name]
    pending = [p for p in pods if not p.spec.node_name]
    pods_by_node = {n.metadata.name: [p for p in bound if p.spec.node_name == n.metadata.name
                                      and p.status.phase not in ("Succeeded", "Failed")] for n in nodes}
    for pod in pending[:4]:
        # A fresh scheduler per pod: the pod is its shape's own representative.
        report = explain_pod(Scheduler(_cluster(nodes, bound, classes, services, controllers), profile), pod)
        for node, got in zip(nodes, report["nodes"]):
            want = ref_filter(pod, node, pods_by_node[node.metadata.name], nodes, pods_by_node, profile, ref)
            assert explained_filters(got) == [(pl, code, sorted(r)) for pl, code, r in want], (pod.key,
                                                                                               node.metadata.name)
        feasible = [n for n, r in zip(nodes, report["nodes"]) if r["total"] is not None]
        if not feasible:
            continue
        want = ref_scores(pod, feasible, nodes, pods_by_node, profile, ref).get(PTS)
        got = {r["name"]: (r["scores"][PTS]["raw"], r["scores"][PTS]["normalized"])
               for r in report["nodes"] if r["total"] is not None and PTS in r["scores"]
               and not r["scores"][PTS].get("skipped")}
        assert got == (want or {}), pod.key


@given(cluster=clusters(max_nodes=10, max_pods=24), profile=profiles(), batching=st.booleans(), data=st.data())
def test_schedule_matches_reference(cluster, profile, batching, data):
    """Whole runs with default spreading: the same bindings and messages, pod for pod, with and without
    batching (pods of one spec with different selectors are told apart)."""
    nodes, pods, classes = cluster
    args, services, controllers = data.draw(default_spreading(nodes, pods))
    if args is not None:
        profile = with_spread_args(profile, args)
    want = ref_schedule(nodes, pods, classes, profile, spreading(args, services, controllers))
    bound = [p for p in pods if p.spec.node_name]
    pending = [p for p in pods if not p.spec.node_name and p.status.phase not in ("Succeeded", "Failed")]
    sched = Scheduler(_cluster(nodes, bound, classes, services, controllers), profile, batching=batching)
    assert first_attempts(sched, pending) == want


# -- JAX ---------------------------------------------------------------------------------------------------------
def _jax_case():
    """Web pods selected by a Service, with nodes missing the zone label: each run is one compiled call."""
    nodes = [make_node(f"n{i}", labels={ZONE: f"z{i % 3}"} if i % 4 else {}) for i in range(12)]
    pods = [web(f"b{i}", f"n{i % 5}") for i in range(6)]
    pods += [web(f"p{i}", app="web" if i % 3 else "db") for i in range(24)]
    return nodes, pods


@pytest.mark.skipif(not HAVE_JAX, reason="jax is not installed")
@pytest.mark.parametrize("args", [None, SYSTEM_AS_LIST])
def test_jax_matches_numpy(args):
    nodes, pods = _jax_case()
    profile = make_profile() if args is None else with_spread_args(make_profile(), args)
    out = []
    for backend in ("numpy", "jax"):
        cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[]))
        cluster.default_selectors = selectors([("default", {"app": "web"})])
        sched = Scheduler(cluster, profile, backend=backend)
        out.append((sched, sched.schedule()))
    (_, want), (jax_sched, got) = out
    assert got.bindings == want.bindings and got.unschedulable == want.unschedulable
    assert jax_sched.placer.stats.calls > 0
    # System defaults put some web pods on zone-less nodes (scored by hostname alone).
    assert args is not None or any(not nodes[int(n[1:])].metadata.labels.get(ZONE)
                                   for k, n in want.bindings.items() if k.startswith("default/p"))


@pytest.mark.skipif(not HAVE_JAX, reason="jax is not installed")
@settings(max_examples=15)
@given(cluster=clusters(max_nodes=10, max_pods=24), profile=profiles(), data=st.data())
def test_jax_random_matches_numpy(cluster, profile, data):
    nodes, pods, classes = cluster
    args, services, controllers = data.draw(default_spreading(nodes, pods))
    if args is not None:
        profile = with_spread_args(profile, args)
    out = []
    for backend in ("numpy", "jax"):
        cluster = Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods, priority_classes=classes, warnings=[]))
        cluster.default_selectors = selectors(services, controllers)
        out.append(Scheduler(cluster, profile, backend=backend).schedule())
    assert out[1].bindings == out[0].bindings
    assert out[1].unschedulable == out[0].unschedulable
