"""Hypothesis strategies for small random clusters, plus plain builders.

`clusters(max_nodes=12, max_pods=20)` -> (nodes, pods, priority_classes) as phalanx.cluster_models
pydantic objects.  Pods are drawn from a handful of *templates* so many pods are identical apart
from their name (the kernels batch identical pods, so repeated shapes matter).

`clusters_with_groups()` -> (nodes, pods, priority_classes, pod_groups): the same plus PodGroups.

`profiles()` -> Profile objects (phalanx.sched.config.Profile when importable, otherwise a
duck-typed stand-in with the same attributes).

`make_node`, `make_pod`, `make_profile` are plain builders used by the hand-written toy tests.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from phalanx.cluster_models import objects as _m  # contract: phalanx/cluster_models/objects.py

ZONE = "topology.kubernetes.io/zone"
RACK = "rack"
HOSTNAME = "kubernetes.io/hostname"
DISK = "disktype"
GEN = "gen"  # numeric label for Gt/Lt
SCORE = "score"  # numeric label (may be negative / non-numeric) for Gt/Lt
GPU = "nvidia.com/gpu"

# --------------------------------------------------------------------------------------
# profiles
# --------------------------------------------------------------------------------------
from reference.profile import (DEFAULT_FILTERS, DEFAULT_SCORES, RefProfile, config_doc, make_profile,  # noqa: E402,F401
                               ref_profile)


_RTCR_SHAPES = (
    ((0, 10), (100, 0)),  # least-requested-like
    ((0, 0), (100, 10)),  # bin packing
    ((0, 0), (50, 10), (100, 0)),
    ((20, 3), (70, 9), (90, 2)),
    ((0, 7), (30, 0), (100, 10)),
)


@st.composite
def profiles(draw):
    fit_strategy = draw(st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]))
    fit_resources = [("cpu", draw(st.integers(1, 3))), ("memory", draw(st.integers(1, 3)))]
    if draw(st.booleans()):
        fit_resources.append(("ephemeral-storage", draw(st.integers(1, 3))))
    if draw(st.booleans()):
        fit_resources.append((GPU, draw(st.integers(1, 5))))
    if draw(st.integers(0, 3)) == 0:
        fit_resources = fit_resources[1:]  # memory only (+ extras)
    if draw(st.booleans()):
        rtcr_shape = draw(st.sampled_from(_RTCR_SHAPES))
    else:
        us = sorted(draw(st.sets(st.integers(0, 100), min_size=1, max_size=4)))
        rtcr_shape = tuple((u, draw(st.integers(0, 10))) for u in us)
    balanced = [("cpu", 1), ("memory", 1)]
    if draw(st.integers(0, 3)) == 0:
        balanced.append((GPU, 1))
    if draw(st.integers(0, 4)) == 0:
        balanced.append(("ephemeral-storage", 1))
    scores = []
    for name, _w in DEFAULT_SCORES:
        if draw(st.integers(0, 6)) == 0:
            continue  # plugin disabled
        scores.append((name, draw(st.integers(1, 5))))
    filters = tuple(f for f in DEFAULT_FILTERS if draw(st.integers(0, 9)) != 0)
    return make_profile(
        filters=filters,
        scores=tuple(scores),
        fit_strategy=fit_strategy,
        fit_resources=tuple(fit_resources),
        rtcr_shape=tuple(rtcr_shape),
        balanced_resources=tuple(balanced),
        compat=draw(st.sampled_from(["1.36", "1.35"])),
        hard_pod_affinity_weight=draw(st.sampled_from([1, 1, 0, 7, 100])),
        ignore_preferred_terms_of_existing_pods=draw(st.integers(0, 4)) == 0,
    )


# --------------------------------------------------------------------------------------
# builders
# --------------------------------------------------------------------------------------
def make_node(
    name,
    cpu="4",
    memory="8Gi",
    pods=110,
    labels=None,
    taints=(),
    unschedulable=False,
    ephemeral=None,
    gpu=None,
    hostname_label=True,
    extra=None,
    images=(),
):
    """taints: iterable of (key, value, effect); images: iterable of (names, sizeBytes)."""
    alloc = {}
    if cpu is not None:
        alloc["cpu"] = str(cpu)
    if memory is not None:
        alloc["memory"] = str(memory)
    if pods is not None:
        alloc["pods"] = str(pods)
    if ephemeral is not None:
        alloc["ephemeral-storage"] = str(ephemeral)
    if gpu is not None:
        alloc[GPU] = str(gpu)
    alloc.update({k: str(v) for k, v in (extra or {}).items()})
    lab = {HOSTNAME: name} if hostname_label else {}
    lab.update(labels or {})
    return _m.Node.model_validate(
        {
            "metadata": {"name": name, "labels": lab},
            "spec": {
                "unschedulable": unschedulable,
                "taints": [{"key": k, "value": v, "effect": e} for k, v, e in taints],
            },
            "status": {"allocatable": alloc,
                       "images": [{"names": list(names), "size_bytes": size} for names, size in images]},
        }
    )


def _requests(cpu=None, memory=None, ephemeral=None, gpu=None, extra=None):
    r = {}
    if cpu is not None:
        r["cpu"] = str(cpu)
    if memory is not None:
        r["memory"] = str(memory)
    if ephemeral is not None:
        r["ephemeral-storage"] = str(ephemeral)
    if gpu is not None:
        r[GPU] = str(gpu)
    r.update({k: str(v) for k, v in (extra or {}).items()})
    return r


def make_pod(
    name,
    cpu=None,
    memory=None,
    ephemeral=None,
    gpu=None,
    namespace="default",
    labels=None,
    node_name="",
    node_selector=None,
    required_terms=None,
    preferred_terms=None,
    tolerations=(),
    host_ports=(),
    spread=(),
    priority=None,
    priority_class_name="",
    containers=None,
    init_containers=(),
    overhead=None,
    pod_level=None,
    pod_group=None,
    scheduling_gates=(),
    scheduler_name=None,
    phase=None,
    pod_affinity=None,
    images=(),
    init_images=(),
):
    """Build a Pod from plain data.

    required_terms / preferred_terms: node selector terms as dicts in the snake_case model shape,
    e.g. {"match_expressions": [{"key": "gen", "operator": "Gt", "values": ["3"]}]};
    preferred_terms: list of (weight, term_dict).
    tolerations: dicts ({"key":..., "operator":..., "value":..., "effect":...}).
    host_ports: list of (host_port, protocol, host_ip).
    spread: topology spread constraint dicts.
    containers: list of request dicts (overrides cpu/memory/...); init_containers: list of
    (request dict, is_sidecar).
    pod_group: spec.schedulingGroup.podGroupName; scheduling_gates: gate names; phase: status.phase.
    pod_affinity: {"pod_affinity": ..., "pod_anti_affinity": ...} (snake_case model shape) for spec.affinity.
    images / init_images: the containers' / init containers' images, in order (as many as given).
    """
    if containers is None:
        containers = [_requests(cpu, memory, ephemeral, gpu)]
    ctrs = []
    for i, req in enumerate(containers):
        c = {"name": f"c{i}", "resources": {"requests": dict(req)}}
        if i == 0 and host_ports:
            c["ports"] = [
                {"container_port": 10000 + j, "host_port": hp, "protocol": proto, "host_ip": ip}
                for j, (hp, proto, ip) in enumerate(host_ports)
            ]
        ctrs.append(c)
    inits = []
    for i, (req, sidecar) in enumerate(init_containers):
        c = {"name": f"i{i}", "resources": {"requests": dict(req)}}
        if sidecar:
            c["restart_policy"] = "Always"
        inits.append(c)
    for c, image in zip(ctrs, images):
        c["image"] = image
    for c, image in zip(inits, init_images):
        c["image"] = image
    spec = {
        "containers": ctrs,
        "init_containers": inits,
        "node_name": node_name,
        "node_selector": dict(node_selector or {}),
        "tolerations": list(tolerations),
        "topology_spread_constraints": list(spread),
        "priority_class_name": priority_class_name,
    }
    if priority is not None:
        spec["priority"] = priority
    if pod_group is not None:
        spec["scheduling_group"] = {"pod_group_name": pod_group}
    if scheduling_gates:
        spec["scheduling_gates"] = [{"name": g} for g in scheduling_gates]
    if scheduler_name is not None:
        spec["scheduler_name"] = scheduler_name
    if overhead:
        spec["overhead"] = {k: str(v) for k, v in overhead.items()}
    if pod_level:
        spec["resources"] = {"requests": {k: str(v) for k, v in pod_level.items()}}
    na = {}
    if required_terms is not None:
        na["required_during_scheduling_ignored_during_execution"] = {"node_selector_terms": list(required_terms)}
    if preferred_terms:
        na["preferred_during_scheduling_ignored_during_execution"] = [
            {"weight": w, "preference": t} for w, t in preferred_terms
        ]
    if na:
        spec["affinity"] = {"node_affinity": na}
    if pod_affinity:
        spec.setdefault("affinity", {}).update(pod_affinity)
    obj = {"metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {})}, "spec": spec}
    if phase is not None:
        obj["status"] = {"phase": phase}
    return _m.Pod.model_validate(obj)


def make_priority_class(name, value, global_default=False):
    return _m.PriorityClass.model_validate(
        {"metadata": {"name": name}, "value": value, "global_default": global_default}
    )


# --------------------------------------------------------------------------------------
# random clusters
# --------------------------------------------------------------------------------------
_CPU = ["250m", "500m", "1", "2", "3", "4", "4", "8", "8", "16"]
_MEM = ["256Mi", "512Mi", "1Gi", "2Gi", "4Gi", "8Gi", "8Gi", "16Gi"]
_EPH = ["1Gi", "10Gi", "50Gi"]
_PODS = [0, 1, 2, 3, 5, 10] + [110] * 10
_TAINT_KEYS = ["dedicated", "spot", "gpu"]
_TAINT_VALUES = ["", "a", "b"]
_EFFECTS = ["NoSchedule", "PreferNoSchedule", "PreferNoSchedule", "NoExecute"]


@st.composite
def node_specs(draw, idx: int):
    name = f"n{idx}"
    labels = {}
    if draw(st.integers(0, 9)) != 0:
        labels[ZONE] = draw(st.sampled_from(["z1", "z2", "z3"]))
    if draw(st.integers(0, 4)) != 0:
        labels[RACK] = draw(st.sampled_from(["r1", "r2", "r3", "r4"]))
    if draw(st.booleans()):
        labels[DISK] = draw(st.sampled_from(["ssd", "hdd"]))
    if draw(st.integers(0, 3)) != 0:
        labels[GEN] = str(draw(st.integers(1, 6)))
    if draw(st.booleans()):
        labels[SCORE] = draw(st.sampled_from(["-3", "0", "7", "12", "+4", "x1"]))
    taints = [
        (draw(st.sampled_from(_TAINT_KEYS)), draw(st.sampled_from(_TAINT_VALUES)), draw(st.sampled_from(_EFFECTS)))
        for _ in range(draw(st.sampled_from([0, 0, 0, 0, 0, 1, 1, 2])))
    ]
    # The API server rejects two taints with the same key and effect.
    taints = list({(k, e): (k, v, e) for k, v, e in taints}.values())
    return make_node(
        name,
        cpu=draw(st.sampled_from(_CPU)),
        memory=draw(st.sampled_from(_MEM)),
        pods=draw(st.sampled_from(_PODS)),
        labels=labels,
        taints=taints,
        unschedulable=draw(st.integers(0, 14)) == 0,
        ephemeral=draw(st.sampled_from([None] + _EPH * 2)),
        gpu=draw(st.sampled_from([None, None, None, 0, 1, 2, 4])),
        hostname_label=draw(st.integers(0, 19)) != 0,
        images=[(names, draw(st.sampled_from(_IMAGE_SIZES)))
                for names in draw(st.lists(st.sampled_from(_NODE_IMAGES), max_size=3, unique=True))],
    )


# ImageLocality: images nodes hold (names of one image) and their sizes (23 MiB is the score's lower threshold,
# 1000 MiB per container its upper one); pods name them with and without tags.
_NODE_IMAGES = [("img/a:latest", "img/a:v1"), ("img/b:latest",), ("reg:5000/c:latest",), ("img/big:latest",),
                ("img/d@sha256:0f1e",), ("img/a:v1",)]
_IMAGE_SIZES = [5 << 20, 30 << 20, 300 << 20, 900 << 20, 2500 << 20]
_POD_IMAGES = ["", "img/a", "img/a:v1", "img/b", "reg:5000/c", "img/big", "img/d@sha256:0f1e", "img/none"]


_REQ_CPU = [None, None, "0", "50m", "100m", "250m", "500m", "1", "2", "3"]
_REQ_MEM = [None, None, "0", "64Mi", "128Mi", "256Mi", "512Mi", "1Gi", "3Gi"]


@st.composite
def _request_dicts(draw, allow_gpu=True):
    return _requests(
        cpu=draw(st.sampled_from(_REQ_CPU)),
        memory=draw(st.sampled_from(_REQ_MEM)),
        ephemeral=draw(st.sampled_from([None] * 14 + ["100Mi", "1Gi", "20Gi"])),
        gpu=draw(st.sampled_from([None] * 12 + [1, 2])) if allow_gpu else None,
    )


@st.composite
def _node_requirements(draw, nnodes, lowest: int = -1):
    """A valid node selector term (never empty). Gt/Lt values from `lowest` to 7: "-1" is no label value, so a
    required term with it never matches (a preferred one would fail PreScore, which the reference does not model:
    preferred terms are drawn with lowest=0; tests/test_warnings.py covers that error)."""
    exprs = []
    for _ in range(draw(st.integers(0, 2))):
        op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]))
        if op in ("Gt", "Lt"):
            key = draw(st.sampled_from([GEN, GEN, SCORE]))
            values = [str(draw(st.integers(lowest, 7)))]
        elif op in ("Exists", "DoesNotExist"):
            key = draw(st.sampled_from([ZONE, RACK, DISK, GEN]))
            values = []
        else:
            key = draw(st.sampled_from([ZONE, RACK, DISK]))
            pool = {ZONE: ["z1", "z2", "z3"], RACK: ["r1", "r2", "r3", "r4"], DISK: ["ssd", "hdd"]}[key]
            values = sorted(draw(st.sets(st.sampled_from(pool), min_size=1, max_size=2)))
        exprs.append({"key": key, "operator": op, "values": values})
    fields = []
    if draw(st.integers(0, 5)) == 0:
        op = draw(st.sampled_from(["In", "In", "NotIn"]))
        # may name a node that does not exist (n<nnodes>)
        fields.append({"key": "metadata.name", "operator": op, "values": [f"n{draw(st.integers(0, max(nnodes, 1)))}"]})
    if not exprs and not fields:
        exprs.append({"key": draw(st.sampled_from([ZONE, DISK, GEN])), "operator": "Exists", "values": []})
    return {"match_expressions": exprs, "match_fields": fields}


@st.composite
def _tolerations(draw):
    out = []
    for _ in range(draw(st.sampled_from([0, 0, 1, 1, 2, 3]))):
        kind = draw(st.integers(0, 9))
        if kind == 0:
            out.append({"operator": "Exists"})  # tolerates everything
        elif kind == 1:
            out.append({"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"})
        else:
            key = draw(st.sampled_from(_TAINT_KEYS))
            effect = draw(st.sampled_from(["", "NoSchedule", "PreferNoSchedule", "NoExecute"]))
            if draw(st.booleans()):
                out.append({"key": key, "operator": "Exists", "effect": effect})
            else:
                out.append(
                    {"key": key, "operator": "Equal", "value": draw(st.sampled_from(_TAINT_VALUES)), "effect": effect}
                )
    return out


@st.composite
def _spread_constraints(draw, app):
    out = []
    for _ in range(draw(st.sampled_from([0, 0, 1, 1, 2]))):
        mode = draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"]))
        c = {
            "max_skew": draw(st.integers(1, 3)),
            "topology_key": draw(st.sampled_from([ZONE, ZONE, RACK, HOSTNAME, HOSTNAME, DISK])),
            "when_unsatisfiable": mode,
        }
        sel = draw(st.integers(0, 9))
        if sel <= 5:
            c["label_selector"] = {"match_labels": {"app": draw(st.sampled_from([app, app, "a", "b"]))}}
        elif sel == 6:
            c["label_selector"] = {
                "match_expressions": [{"key": "app", "operator": "In", "values": sorted({app, "b"})}]
            }
        elif sel == 7:
            c["label_selector"] = {"match_expressions": [{"key": "tier", "operator": "DoesNotExist"}]}
        elif sel == 8:
            c["label_selector"] = {}  # empty selector: matches everything (but counts nothing)
        # sel == 9: no selector at all
        if mode == "DoNotSchedule" and draw(st.integers(0, 3)) == 0:
            c["min_domains"] = draw(st.integers(1, 4))
        if draw(st.integers(0, 3)) == 0:
            c["node_affinity_policy"] = draw(st.sampled_from(["Honor", "Ignore"]))
        if draw(st.integers(0, 3)) == 0:
            c["node_taints_policy"] = draw(st.sampled_from(["Honor", "Ignore"]))
        if draw(st.integers(0, 4)) == 0:
            c["match_label_keys"] = [draw(st.sampled_from(["pod-template-hash", "app"]))]
        out.append(c)
    return out


@st.composite
def _pod_affinity_term(draw, app):
    """One PodAffinityTerm: selectors that pick some pods, every pod, or none (nil); namespaces listed, selected
    by label ({} = all) or the owner's; matchLabelKeys / mismatchLabelKeys merged at validation."""
    t = {"topology_key": draw(st.sampled_from([HOSTNAME, HOSTNAME, ZONE, ZONE, RACK, DISK]))}
    sel = draw(st.integers(0, 8))
    if sel <= 4:
        t["label_selector"] = {"match_labels": {"app": draw(st.sampled_from([app, app, "a", "b"]))}}
    elif sel == 5:
        t["label_selector"] = {"match_expressions": [
            {"key": "tier", "operator": draw(st.sampled_from(["Exists", "DoesNotExist"]))}]}
    elif sel == 6:
        t["label_selector"] = {"match_expressions": [{"key": "app", "operator": "NotIn", "values": [app]}]}
    elif sel == 7:
        t["label_selector"] = {}
    # sel == 8: no labelSelector (selects nothing)
    ns = draw(st.integers(0, 6))
    if ns == 0:
        t["namespaces"] = ["other"]
    elif ns == 1:
        t["namespaces"] = ["default", "other"]
    elif ns == 2:
        t["namespace_selector"] = {}
    elif ns == 3:
        t["namespace_selector"] = {"match_labels": {"kubernetes.io/metadata.name": "other"}}
    if "label_selector" in t and draw(st.integers(0, 3)) == 0:
        t[draw(st.sampled_from(["match_label_keys", "mismatch_label_keys"]))] = ["pod-template-hash"]
    return t


@st.composite
def pod_affinities(draw, app):
    """spec.affinity's podAffinity / podAntiAffinity (None for most pods)."""
    out = {}
    for kind in ("pod_affinity", "pod_anti_affinity"):
        if draw(st.integers(0, 3)) != 0:
            continue
        required = [draw(_pod_affinity_term(app)) for _ in range(draw(st.sampled_from([0, 1, 1, 2])))]
        preferred = [{"weight": draw(st.integers(1, 100)), "pod_affinity_term": draw(_pod_affinity_term(app))}
                     for _ in range(draw(st.sampled_from([0, 0, 1, 2])))]
        out[kind] = {"required_during_scheduling_ignored_during_execution": required,
                     "preferred_during_scheduling_ignored_during_execution": preferred}
    return out or None


@st.composite
def pod_templates(draw, nnodes: int, class_names):
    """A pod 'shape': everything but the name (and nodeName)."""
    app = draw(st.sampled_from(["a", "b", "c"]))
    labels = {"app": app}
    if draw(st.booleans()):
        labels["pod-template-hash"] = draw(st.sampled_from(["h1", "h2"]))
    if draw(st.integers(0, 3)) == 0:
        labels["tier"] = "web"
    containers = [draw(_request_dicts()) for _ in range(draw(st.sampled_from([1, 1, 1, 2])))]
    init_containers = [
        (draw(_request_dicts(allow_gpu=False)), draw(st.booleans()))
        for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2])))
    ]
    overhead = draw(st.sampled_from([None] * 5 + [{"cpu": "50m", "memory": "32Mi"}]))
    pod_level = None
    if draw(st.integers(0, 9)) == 0:  # only the unambiguous form: both cpu and memory
        pod_level = {"cpu": draw(st.sampled_from(["100m", "1", "2"])), "memory": draw(st.sampled_from(["128Mi", "1Gi"]))}
    node_selector = None
    if draw(st.integers(0, 5)) == 0:
        node_selector = draw(
            st.sampled_from([{ZONE: "z1"}, {DISK: "ssd"}, {ZONE: "z2", DISK: "hdd"}, {RACK: "r1"}])
        )
    required = None
    if draw(st.integers(0, 3)) == 0:
        required = [draw(_node_requirements(nnodes)) for _ in range(draw(st.integers(1, 2)))]
    preferred = []
    for _ in range(draw(st.sampled_from([0, 0, 1, 2, 3]))):
        preferred.append((draw(st.integers(1, 100)), draw(_node_requirements(nnodes, lowest=0))))
    host_ports = []
    if draw(st.integers(0, 5)) == 0:
        host_ports.append(
            (
                draw(st.sampled_from([80, 8080])),
                draw(st.sampled_from(["TCP", "TCP", "UDP"])),
                draw(st.sampled_from(["", "", "0.0.0.0", "127.0.0.1"])),
            )
        )
    priority = None
    pcn = ""
    pr = draw(st.integers(0, 5))
    if pr == 1:
        priority = draw(st.sampled_from([-5, 0, 10, 1000]))
    elif pr == 2 and class_names:
        pcn = draw(st.sampled_from(sorted(class_names)))
    return dict(
        namespace=draw(st.sampled_from(["default", "default", "default", "other"])),
        labels=labels,
        containers=containers,
        init_containers=init_containers,
        overhead=overhead,
        pod_level=pod_level,
        node_selector=node_selector,
        required_terms=required,
        preferred_terms=preferred,
        tolerations=draw(_tolerations()),
        host_ports=host_ports,
        spread=draw(_spread_constraints(app)),
        priority=priority,
        priority_class_name=pcn,
        pod_affinity=draw(pod_affinities(app)),
        images=[draw(st.sampled_from(_POD_IMAGES)) for _ in containers],
        init_images=[draw(st.sampled_from(_POD_IMAGES)) for _ in init_containers],
    )


@st.composite
def _cluster_base(draw, max_nodes: int):
    """(nnodes, nodes, priority_classes, pod templates): what every random cluster starts from."""
    nnodes = draw(st.integers(1, max_nodes))
    nodes = [draw(node_specs(i)) for i in range(nnodes)]
    classes = [make_priority_class("high", 1000), make_priority_class("low", -10)]
    if draw(st.booleans()):
        classes.append(make_priority_class("std", 5, global_default=True))
    names = [c.metadata.name for c in classes]
    templates = [draw(pod_templates(nnodes, names)) for _ in range(draw(st.integers(1, 5)))]
    return nnodes, nodes, classes, templates


@st.composite
def clusters(draw, max_nodes: int = 12, max_pods: int = 20):
    """(nodes, pods, priority_classes): bound pods (nodeName set) first, then pending pods,
    all drawn from 1-5 templates so most pods share their spec with others."""
    nnodes, nodes, classes, templates = draw(_cluster_base(max_nodes))
    pods = []
    nbound = draw(st.integers(0, max(0, min(max_pods // 2, 8))))
    for i in range(nbound):
        t = templates[draw(st.integers(0, len(templates) - 1))]
        pods.append(make_pod(f"b{i}", node_name=f"n{draw(st.integers(0, nnodes - 1))}", **t))
    npending = draw(st.integers(0, max(0, max_pods - nbound)))
    for i in range(npending):
        t = templates[draw(st.integers(0, len(templates) - 1))]
        pods.append(make_pod(f"p{i}", **t))
    return nodes, pods, classes


@st.composite
def interleaved_clusters(draw, max_nodes: int = 12, max_pods: int = 60):
    """(nodes, pods, priority_classes) whose pending pods come as runs of 1-4 identical pods of a few templates,
    interleaved (the queues where a shape's kept results are reused between its runs, sched/incremental.py)."""
    nnodes, nodes, classes, templates = draw(_cluster_base(max_nodes))
    pods = [make_pod(f"b{i}", node_name=f"n{draw(st.integers(0, nnodes - 1))}",
                     **templates[draw(st.integers(0, len(templates) - 1))])
            for i in range(draw(st.integers(0, 4)))]
    pending, wanted = 0, draw(st.integers(0, max_pods))
    while pending < wanted:
        t = templates[draw(st.integers(0, len(templates) - 1))]
        for _ in range(draw(st.integers(1, 4))):
            pods.append(make_pod(f"p{pending}", **t))
            pending += 1
    return nodes, pods, classes


# --------------------------------------------------------------------------------------
# random clusters with PodGroups
# --------------------------------------------------------------------------------------
def make_pod_group(name, namespace="default", min_count=None, priority=None, priority_class_name="", topology=None,
                   disruption_mode=None):
    """A scheduling.k8s.io/v1alpha2 PodGroup built from its API (camelCase) form: gang with `min_count`,
    or basic when min_count is None; `topology`: the node label key of its topology constraint;
    `disruption_mode`: "Pod" or "PodGroup"."""
    from phalanx.cluster_models.workloads import PodGroup

    policy = {"basic": {}} if min_count is None else {"gang": {"minCount": min_count}}
    spec = {"schedulingPolicy": policy}
    if topology is not None:
        spec["schedulingConstraints"] = {"topology": [{"key": topology}]}
    if priority is not None:
        spec["priority"] = priority
    if priority_class_name:
        spec["priorityClassName"] = priority_class_name
    if disruption_mode is not None:
        spec["disruptionMode"] = disruption_mode
    return PodGroup.model_validate({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                                    "metadata": {"name": name, "namespace": namespace}, "spec": spec})


@st.composite
def clusters_with_groups(draw, max_nodes: int = 12, max_pods: int = 30, max_groups: int = 4):
    """(nodes, pods, priority_classes, pod_groups): a `clusters()`-style cluster plus 0-4 PodGroups (gang with
    minCount 1-6, or basic; sometimes a priority or a priorityClassName) and their members.

    Members come mostly from their group's own template (identical pods form homogeneous runs), sometimes
    from another template (heterogeneous groups) or with a priority of their own; a group may have more members than fit, fewer than its
    minCount (quorum), or a bound member (nodeName set).  Some pods name a PodGroup that does not exist (or
    exists only in another namespace); a few are gated, belong to another scheduler or are terminal.  Bound
    pods come first, then every pending pod in a random order (arrival order matters)."""
    nnodes, nodes, classes, templates = draw(_cluster_base(max_nodes))
    class_names = [c.metadata.name for c in classes]
    groups = []
    for g in range(draw(st.integers(0, max_groups))):
        namespace = draw(st.sampled_from(["default", "default", "other"]))
        min_count = draw(st.sampled_from([None, 1, 2, 2, 3, 3, 4, 5, 6]))
        priority = draw(st.sampled_from([None, None, None, -5, 0, 10, 1000, 2000]))
        pcn = draw(st.sampled_from(["", "", ""] + class_names)) if priority is None else ""
        groups.append(make_pod_group(f"g{g}", namespace, min_count, priority, pcn))

    def template():
        return templates[draw(st.integers(0, len(templates) - 1))]

    def pod_of(name, t, namespace=None, **kw):
        t = dict(t)
        if namespace is not None:
            t["namespace"] = namespace
        return make_pod(name, **t, **kw)

    bound, pending = [], []
    budget = max_pods
    for group in groups:  # members
        own = template()
        ns, gname = group.metadata.namespace, group.metadata.name
        for i in range(min(budget, draw(st.integers(0, 7)))):
            budget -= 1
            t = own if draw(st.integers(0, 3)) != 0 else template()
            if draw(st.integers(0, 7)) == 0:  # same spec, own priority: one signature, several priorities
                t = {**t, "priority": draw(st.sampled_from([0, 10, 1000])), "priority_class_name": ""}
            kind = draw(st.integers(0, 29))
            if kind == 0:
                bound.append(pod_of(f"{gname}-b{i}", t, ns, pod_group=gname,
                                    node_name=f"n{draw(st.integers(0, nnodes - 1))}"))
            elif kind == 1:
                pending.append(pod_of(f"{gname}-p{i}", t, ns, pod_group=gname, scheduling_gates=["wait"]))
            elif kind == 2:
                pending.append(pod_of(f"{gname}-p{i}", t, ns, pod_group=gname, phase="Succeeded"))
            elif kind == 3:
                pending.append(pod_of(f"{gname}-p{i}", t, ns, pod_group=gname, scheduler_name="other-scheduler"))
            else:
                pending.append(pod_of(f"{gname}-p{i}", t, ns, pod_group=gname))
    for i in range(min(budget, draw(st.sampled_from([0, 0, 0, 1, 2])))):  # dangling references
        budget -= 1
        ns = draw(st.sampled_from(["default", "other"]))
        pending.append(pod_of(f"dangling{i}", template(), ns, pod_group=draw(st.sampled_from(["missing", "g0", "g1"]))))
    for i in range(min(budget, draw(st.integers(0, 6)))):  # plain bound pods
        budget -= 1
        bound.append(pod_of(f"b{i}", template(), node_name=f"n{draw(st.integers(0, nnodes - 1))}"))
    for i in range(draw(st.integers(0, budget))):  # plain pending pods
        gates = ["wait"] if draw(st.integers(0, 19)) == 0 else ()
        pending.append(pod_of(f"p{i}", template(), scheduling_gates=gates))
    pending = list(draw(st.permutations(pending)))
    return nodes, bound + pending, classes, groups


def first_attempts(scheduler, pods) -> tuple[dict, dict]:
    """Queue `pods` on a phalanx Scheduler and run its first pass (everything at time 0): bindings and each pod's
    last failure message at time 0 (a gang member may wait at PreEnqueue as it arrives, then fail its group's
    cycle). The one-pass references (tests/reference) model no retries; phalanx, as kube-scheduler, retries a pod
    woken by a later binding (PodTopologySpread, InterPodAffinity hints) or a failed PodGroup after their backoff
    (>= 1 s), so those come after time 0."""
    records = scheduler.add_pods(pods) + scheduler.step(0.0)
    bindings = {r.object: r.node for r in records if r.kind == "Bound"}
    failures = {r.object: r.message for r in records if r.kind == "Unschedulable" and r.object not in bindings}
    return bindings, failures


def explained_filters(node_report: dict) -> list[tuple[str, str, list[str]]]:
    """An explain report's node entry as (plugin, status, sorted reasons) of every filter up to its first failure,
    the form the reference's ref_filter gives."""
    out = []
    for plugin, status in node_report["filters"].items():
        out.append((plugin, status["status"], sorted(status["reasons"])))
        if plugin == node_report["first_failure"]:
            break
    return out


# -- storage: PersistentVolumes, PersistentVolumeClaims, StorageClasses and the pods that use them ---------------------
_SIZES = ["1Gi", "2Gi", "2048Mi", "5Gi"]
CSI_DRIVER = "csi.example.com"       # the provisioner of the CSI classes: a CSIDriver's name is a DNS subdomain
_ACCESS = [["ReadWriteOnce"], ["ReadWriteOnce"], ["ReadWriteOnce", "ReadOnlyMany"], ["ReadWriteMany"],
           ["ReadWriteOncePod"]]


@st.composite
def _volume_affinity(draw, nnodes: int):
    """A PersistentVolume's nodeAffinity.required: local (hostname In), zonal, both in one term, or two terms."""
    host = {"key": HOSTNAME, "operator": "In",
            "values": sorted(draw(st.sets(st.sampled_from([f"n{i}" for i in range(nnodes)] + ["gone"]),
                                          min_size=1, max_size=2)))}
    zone = {"key": ZONE, "operator": draw(st.sampled_from(["In", "NotIn"])),
            "values": sorted(draw(st.sets(st.sampled_from(["z1", "z2", "z3"]), min_size=1, max_size=2)))}
    terms = draw(st.sampled_from([[[host]], [[host]], [[zone]], [[host, zone]], [[host], [zone]],
                                  [[{"key": HOSTNAME, "operator": "Exists"}]]]))
    return {"required": {"nodeSelectorTerms": [{"matchExpressions": t} for t in terms]}}


@st.composite
def storage_clusters(draw, max_nodes: int = 6, max_pods: int = 10):
    """(nodes, pods, priority_classes, storage documents): a `clusters()`-style cluster whose pods name claims (some
    missing, some shared, some ReadWriteOncePod) and in-tree disks, with StorageClasses (WaitForFirstConsumer or
    Immediate, with or without a provisioner and allowedTopologies, maybe a default one), PersistentVolumes (local,
    zonal, labelled with zones, pre-bound or bound to claims, of other phases, some CSI volumes of the provisioner's
    driver) and PersistentVolumeClaims (bound or not, with selectors, of no class); CSINodes with attach limits,
    VolumeAttachments of the CSI volumes, and maybe the driver's CSIDriver with capacity tracking and
    CSIStorageCapacity objects (zonal or per node, with capacity and/or maximumVolumeSize). Always at least one
    StorageClass: the input describes storage."""
    nnodes, nodes, classes, templates = draw(_cluster_base(max_nodes))
    docs = []
    nclasses = draw(st.integers(1, 3))
    default = draw(st.integers(-1, nclasses - 1))
    for c in range(nclasses):
        doc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
               "metadata": {"name": f"sc{c}", "annotations": {
                   "storageclass.kubernetes.io/is-default-class": "true"} if c == default else {}},
               "provisioner": draw(st.sampled_from(["kubernetes.io/no-provisioner", CSI_DRIVER])),
               "volumeBindingMode": draw(st.sampled_from(["WaitForFirstConsumer"] * 4 + ["Immediate"]))}
        if draw(st.integers(0, 3)) == 0:
            doc["allowedTopologies"] = [{"matchLabelExpressions": [
                {"key": ZONE, "values": sorted(draw(st.sets(st.sampled_from(["z1", "z2"]), min_size=1)))}]}]
        docs.append(doc)
    class_names = [f"sc{c}" for c in range(nclasses)]
    odd_classes = ["", "missing"]       # no class (immediate, or the default), a class the input lacks
    nclaims = draw(st.integers(1, 6))
    claim_names = [f"c{i}" for i in range(nclaims)]
    claims = []
    for name in claim_names:
        spec = {"accessModes": draw(st.sampled_from(_ACCESS)),
                "resources": {"requests": {"storage": draw(st.sampled_from(["1Gi", "1536Mi", "2Gi", "3Gi"]))}}}
        pick = draw(st.integers(0, 9))
        if pick >= 2:
            spec["storageClassName"] = draw(st.sampled_from(class_names))
        elif pick == 1:
            spec["storageClassName"] = draw(st.sampled_from(odd_classes))
        if draw(st.integers(0, 5)) == 0:
            spec["selector"] = {"matchLabels": {"tier": draw(st.sampled_from(["gold", "silver"]))}}
        claims.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                       "metadata": {"name": name, "namespace": "default", "annotations": {}}, "spec": spec})
    for i in range(draw(st.integers(0, 8))):
        spec = {"capacity": {"storage": draw(st.sampled_from(_SIZES))}, "accessModes": draw(st.sampled_from(_ACCESS)),
                "storageClassName": draw(st.sampled_from(class_names * 4 + odd_classes))}
        meta = {"name": f"pv{i}", "labels": {}}
        if draw(st.booleans()):
            spec["nodeAffinity"] = draw(_volume_affinity(nnodes))
        if draw(st.booleans()):
            meta["labels"][draw(st.sampled_from([ZONE, "failure-domain.beta.kubernetes.io/zone"]))] = \
                draw(st.sampled_from(["z1", "z2", "z1__z2", "z3"]))
        if draw(st.integers(0, 4)) == 0:
            meta["labels"]["tier"] = draw(st.sampled_from(["gold", "silver"]))
        if draw(st.booleans()):
            spec["csi"] = {"driver": CSI_DRIVER, "volumeHandle": f"pv{i}"}
        status = {"phase": draw(st.sampled_from(["Available", "Available", "Available", "Released"]))}
        use = draw(st.integers(0, 5))
        if claims and use <= 1:         # pre-bound to a claim (0), or bound to it (1)
            claim = claims[draw(st.integers(0, len(claims) - 1))]
            spec["claimRef"] = {"namespace": "default", "name": claim["metadata"]["name"]}
            if use == 1 and "volumeName" not in claim["spec"]:
                claim["spec"]["volumeName"] = meta["name"]
                claim["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] = "yes"
                status["phase"] = "Bound"
        docs.append({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": spec,
                     "status": status})
    if draw(st.integers(0, 7)) == 0:      # a claim bound to a volume that does not exist
        claim = claims[draw(st.integers(0, len(claims) - 1))]
        claim["spec"].setdefault("volumeName", "ghost")
        claim["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] = "yes"
    if claims and draw(st.integers(0, 5)) == 0:      # selected for a node by an earlier scheduling
        claim = claims[draw(st.integers(0, len(claims) - 1))]
        claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] = f"n{draw(st.integers(0, nnodes))}"
    docs += claims
    for n in range(nnodes):          # CSI attach limits of the provisioner's driver on some nodes (NodeVolumeLimits)
        if draw(st.integers(0, 2)) == 0:
            docs.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": f"n{n}"},
                         "spec": {"drivers": [{"name": CSI_DRIVER, "nodeID": f"n{n}",
                                               "allocatable": {"count": draw(st.integers(0, 2))}}]}})
    volume_names = [d["metadata"]["name"] for d in docs if d["kind"] == "PersistentVolume"] + ["gone"]
    for a in range(draw(st.integers(0, 3))):     # attached volumes (counted by NodeVolumeLimits)
        docs.append({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": f"va{a}"},
                     "spec": {"attacher": draw(st.sampled_from([CSI_DRIVER, CSI_DRIVER, "other.example.com"])),
                              "nodeName": f"n{draw(st.integers(0, nnodes - 1))}",
                              "source": {"persistentVolumeName": draw(st.sampled_from(volume_names))}}})
    if draw(st.booleans()):              # the driver's CSIDriver; with capacity tracking, CSIStorageCapacities
        docs.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": CSI_DRIVER},
                     "spec": {"storageCapacity": draw(st.sampled_from([True, True, False]))}})
        for c in range(draw(st.integers(0, 3))):
            doc = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                   "metadata": {"name": f"cap{c}", "namespace": "kube-system"},
                   "storageClassName": draw(st.sampled_from(class_names))}
            topology = draw(st.sampled_from(["zone", "host", "all", "none"]))
            if topology == "zone":
                doc["nodeTopology"] = {"matchLabels": {ZONE: draw(st.sampled_from(["z1", "z2"]))}}
            elif topology == "host":
                doc["nodeTopology"] = {"matchExpressions": [{"key": HOSTNAME, "operator": "In",
                                                             "values": [f"n{draw(st.integers(0, nnodes - 1))}"]}]}
            elif topology == "all":
                doc["nodeTopology"] = {}
            for key in ("capacity", "maximumVolumeSize"):
                if draw(st.booleans()):
                    doc[key] = draw(st.sampled_from(["0", "1Gi", "1536Mi", "2Gi", "2147483649", "10Gi"]))
            docs.append(doc)
    disks = [{"awsElasticBlockStore": {"volumeID": "vol-1"}}, {"gcePersistentDisk": {"pdName": "pd", "readOnly": True}},
             {"gcePersistentDisk": {"pdName": "pd"}}, {"iscsi": {"iqn": "iqn-1", "targetPortal": "t", "lun": 0}}]

    def volumes():
        out = []
        for k in range(draw(st.integers(0, 2))):
            name = draw(st.sampled_from(claim_names)) if draw(st.integers(0, 9)) else "nope"
            out.append({"name": f"v{k}", "persistentVolumeClaim": {"claimName": name}})
        if draw(st.integers(0, 2)) == 0:
            out.append({"name": "disk", **draw(st.sampled_from(disks))})
        return out

    def with_volumes(pod):
        found = volumes()
        if not found:
            return pod
        doc = pod.model_dump(by_alias=True, exclude_defaults=True)
        doc["spec"]["volumes"] = found
        return type(pod).model_validate(doc)

    def template():
        """Mostly small pods with no constraints of their own (the volumes decide), sometimes a drawn template."""
        if draw(st.integers(0, 3)):
            return {"cpu": "100m", "memory": "64Mi"}
        return {**templates[draw(st.integers(0, len(templates) - 1))], "namespace": "default"}

    pods = []
    for i in range(draw(st.integers(0, 3))):
        pods.append(with_volumes(make_pod(f"b{i}", node_name=f"n{draw(st.integers(0, nnodes - 1))}", **template())))
    for i in range(draw(st.integers(1, max_pods))):
        pods.append(with_volumes(make_pod(f"p{i}", **template())))
    return nodes, pods, classes, docs
