"""Seeded synthetic clusters and pod mixes, and a tiny hand-checked toy cluster.

Nodes carry a four-level topology (zone > block > rack > host): 32 nodes a rack, 16 racks a block,
4 blocks a zone. Pods are built from a few templates with `model_copy`, so a million of them share a handful
of spec objects (cheap to build, and the scheduler interns their shapes once).
"""
from __future__ import annotations

import numpy as np

from .objects import (Container, Node, NodeSpec, NodeStatus, ObjectMeta, Pod, PodSchedulingGroup, PodSpec,
                      ResourceRequirements, Taint, Toleration)
from .workloads import PodGroup

ZONE, BLOCK, RACK, HOSTNAME = ("topology.kubernetes.io/zone", "topology.phalanx.dev/block",
                               "topology.phalanx.dev/rack", "kubernetes.io/hostname")
GPU = "nvidia.com/gpu"
GPU_PRODUCT = "nvidia.com/gpu.product"
RACK_NODES, BLOCK_RACKS, ZONE_BLOCKS = 32, 16, 4

# name -> (cpu, memory, pods, gpus); "basic" is scheduler_perf's node (4 cpu / 32Gi / 110 pods).
NODE_TYPES = {
    "basic": ("4", "32Gi", "110", 0),
    "cpu-large": ("64", "256Gi", "110", 0),
    "kube-mix": ("32", "256Gi", "110", 8),
    "gpu-8x": ("96", "1Ti", "110", 8),
}
GPU_TAINT = Taint(key=GPU, value="present", effect="NoSchedule")


def make_node(name: str, node_type: str, index: int, *, taints=(), unschedulable=False) -> Node:
    cpu, memory, pods, gpus = NODE_TYPES[node_type]
    rack = index // RACK_NODES
    block = rack // BLOCK_RACKS
    zone = block // ZONE_BLOCKS
    # The kubelet's own labels too (os, arch): real nodes always carry them and pods select on them.
    labels = {HOSTNAME: name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", ZONE: f"zone-{zone}",
              BLOCK: f"block-{block}", RACK: f"rack-{rack}", "node.phalanx.dev/type": node_type}
    allocatable = {"cpu": cpu, "memory": memory, "pods": pods, "ephemeral-storage": "100Gi"}
    if gpus:
        allocatable[GPU] = str(gpus)
        labels[GPU_PRODUCT] = "NVIDIA-H100-80GB-HBM3"
    return Node(metadata=ObjectMeta(name=name, labels=labels),
                spec=NodeSpec(taints=list(taints), unschedulable=unschedulable),
                status=NodeStatus(allocatable=allocatable, capacity=allocatable))


def generate_nodes(n: int, seed: int = 0, *, gpu_fraction: float = 0.0, taint_fraction: float = 0.0,
                   unschedulable_fraction: float = 0.0, node_type: str = "basic") -> list[Node]:
    """n nodes of `node_type`, a `gpu_fraction` of them 8-GPU nodes tainted nvidia.com/gpu:NoSchedule,
    a `taint_fraction` carrying a PreferNoSchedule taint, an `unschedulable_fraction` cordoned."""
    rng = np.random.default_rng(seed)
    is_gpu = rng.random(n) < gpu_fraction
    tainted = rng.random(n) < taint_fraction
    cordoned = rng.random(n) < unschedulable_fraction
    nodes = []
    for i in range(n):
        taints = [GPU_TAINT] if is_gpu[i] else []
        if tainted[i]:
            taints.append(Taint(key="phalanx.dev/maintenance", value="soon", effect="PreferNoSchedule"))
        nodes.append(make_node(f"node-{i:06d}", "gpu-8x" if is_gpu[i] else node_type, i, taints=taints,
                               unschedulable=bool(cordoned[i])))
    return nodes


def pod_template(cpu: str, memory: str, *, gpus: int = 0, namespace: str = "default",
                 tolerate_gpu: bool = False, labels: dict[str, str] | None = None) -> Pod:
    requests = {"cpu": cpu, "memory": memory}
    limits = {}
    if gpus:
        # An extended resource cannot be overcommitted: the API server wants its limit, equal to the request.
        requests[GPU] = limits[GPU] = str(gpus)
    tolerations = [Toleration(key=GPU, operator="Exists", effect="NoSchedule")] if tolerate_gpu or gpus else []
    return Pod(metadata=ObjectMeta(name="template", namespace=namespace, labels=labels or {}),
               spec=PodSpec(containers=[Container(name="main", image="registry.k8s.io/pause:3.10",
                                                  resources=ResourceRequirements(requests=requests, limits=limits))],
                            tolerations=tolerations))


def copies(template: Pod, n: int, prefix: str, start: int = 0) -> list[Pod]:
    """n pods named prefix-<i>, sharing the template's spec object."""
    meta = template.metadata
    return [template.replaced(metadata=meta.replaced(name=f"{prefix}-{i}")) for i in range(start, start + n)]


def basic_pods(n: int) -> list[Pod]:
    """scheduler_perf SchedulingBasic: identical 100m / 500Mi pods."""
    return copies(pod_template("100m", "500Mi"), n, "pod")


def _with_pod_affinity(template: Pod, affinity: dict) -> Pod:
    """The template with spec.affinity set from a manifest fragment (validated as a pod would be)."""
    doc = template.model_dump(by_alias=True, exclude_defaults=True)
    doc["spec"]["affinity"] = affinity
    return Pod.model_validate(doc)


def anti_affinity_pods(n: int) -> list[Pod]:
    """scheduler_perf SchedulingPodAntiAffinity (pod-with-pod-anti-affinity.yaml): pods labelled color=green that
    must not share a node (required anti-affinity on kubernetes.io/hostname) with any color=green pod."""
    template = pod_template("100m", "500Mi", labels={"color": "green", "name": "test"})
    term = {"labelSelector": {"matchLabels": {"color": "green"}}, "topologyKey": "kubernetes.io/hostname"}
    return copies(_with_pod_affinity(template, {"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [term]}}), n, "anti-affinity-pod")


def preferred_affinity_pods(n: int) -> list[Pod]:
    """scheduler_perf SchedulingPreferredPodAffinity (pod-with-preferred-pod-affinity.yaml): pods labelled foo=""
    preferring (weight 1) nodes that already hold foo pods (kubernetes.io/hostname)."""
    template = pod_template("100m", "500Mi", labels={"foo": ""})
    term = {"labelSelector": {"matchLabels": {"foo": ""}}, "topologyKey": "kubernetes.io/hostname"}
    return copies(_with_pod_affinity(template, {"podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "podAffinityTerm": term}]}}), n,
        "preferred-affinity-pod")


def gang(template: Pod, size: int, name: str) -> tuple[PodGroup, list[Pod]]:
    """A gang PodGroup `name` (minCount = size) and its `size` pods, copies of `template` (left unchanged)."""
    group = PodGroup.model_validate({"metadata": {"name": name, "namespace": template.metadata.namespace},
                                     "spec": {"schedulingPolicy": {"gang": {"minCount": size}}}})
    member = template.model_copy(update={"spec": template.spec.model_copy(
        update={"scheduling_group": PodSchedulingGroup(pod_group_name=name)})})
    return group, copies(member, size, name)


def gang_pods(gangs: int, size: int, cpu: str = "100m", memory: str = "500Mi",
              name: str = "gang") -> tuple[list[PodGroup], list[Pod]]:
    """`gangs` gang PodGroups (minCount = size) of `size` identical pods each (scheduler_perf gang scheduling),
    named `{name}-{g}`."""
    groups, pods = [], []
    for g in range(gangs):
        group, members = gang(pod_template(cpu, memory), size, f"{name}-{g}")
        groups.append(group)
        pods.extend(members)
    return groups, pods


def heterogeneous_pods(n: int, seed: int = 0) -> list[Pod]:
    """Every pod a distinct shape: cpu and memory requests drawn per pod."""
    rng = np.random.default_rng(seed)
    cpu = rng.integers(1, 40, n) * 25
    mem = rng.integers(1, 64, n) * 16
    pods = []
    for i in range(n):
        pod = pod_template(f"{cpu[i]}m", f"{mem[i] + i % 7}Mi")   # i % 7 keeps neighbours distinct
        pods.append(pod.model_copy(update={"metadata": pod.metadata.model_copy(update={"name": f"pod-{i}"})}))
    return pods


# The pod mix real kube-scheduler v1.35 was timed on (issue 18): shapes cycling 4x A, 3x B, 2x C, 1x D.
KUBE_MIX = (("250m", "512Mi", 0, 4), ("1", "2Gi", 0, 3), ("2", "8Gi", 0, 2), ("4", "16Gi", 1, 1))


def kube_mix_pods(n: int) -> list[Pod]:
    """Four shapes interleaved in runs of 4, 3, 2 and 1 identical pods (the last with one GPU), repeating."""
    cycle = [t for cpu, memory, gpus, count in KUBE_MIX for t in [pod_template(cpu, memory, gpus=gpus)] * count]
    pods = []
    for i in range(n):
        template = cycle[i % len(cycle)]
        pods.append(template.model_copy(update={"metadata": template.metadata.model_copy(update={"name": f"pod-{i}"})}))
    return pods


def gpu_mix_pods(n: int, seed: int = 0) -> list[Pod]:
    """A GPU cluster's arrivals: workloads (a controller's identical replicas, arriving together) of CPU services,
    1-GPU inference and 1/2/8-GPU training, in shuffled order, until n pods."""
    return gpu_mix_workloads(n, seed)[1]


def gpu_mix_workloads(n: int, seed: int = 0, gang_training: bool = False) -> tuple[list[PodGroup], list[Pod]]:
    """gpu_mix_pods' arrivals; with gang_training the 2- and 8-GPU training workloads are gang PodGroups
    (minCount = replicas: all of a job's workers or none). The same draws either way."""
    rng = np.random.default_rng(seed)
    kinds = [  # (template, replicas low, high, weight)
        (pod_template("500m", "1Gi"), 10, 200, 0.35),
        (pod_template("2", "8Gi"), 5, 100, 0.2),
        (pod_template("8", "64Gi", gpus=1), 4, 32, 0.25),
        (pod_template("12", "96Gi", gpus=2), 8, 64, 0.1),
        (pod_template("90", "900Gi", gpus=8), 8, 64, 0.1),
    ]
    weights = np.array([k[3] for k in kinds])
    training = {3, 4}           # the 2- and 8-GPU kinds
    groups: list[PodGroup] = []
    pods: list[Pod] = []
    w = 0
    while len(pods) < n:
        kind = rng.choice(len(kinds), p=weights / weights.sum())
        template, low, high, _ = kinds[kind]
        replicas = min(int(rng.integers(low, high + 1)), n - len(pods))
        if gang_training and kind in training:
            group, members = gang(template, replicas, f"w{w}")
            groups.append(group)
            pods.extend(members)
        else:
            pods.extend(copies(template, replicas, f"w{w}", 0))
        w += 1
    return groups, pods


def toy_cluster() -> tuple[list[Node], list[Pod]]:
    """Three nodes and three pending pods whose placements are worked out by hand in tests/test_toy.py.

    node-a: 4 cpu / 8Gi, empty.           node-b: 4 cpu / 8Gi, 3 cpu / 2Gi already used by pod "busy".
    node-c: 8 cpu / 16Gi, tainted dedicated=ml:NoSchedule.
    """
    def node(name, cpu, memory, taints=()):
        alloc = {"cpu": cpu, "memory": memory, "pods": "110"}
        return Node(metadata=ObjectMeta(name=name, labels={HOSTNAME: name, ZONE: "zone-0"}),
                    spec=NodeSpec(taints=list(taints)), status=NodeStatus(allocatable=alloc))
    nodes = [node("node-a", "4", "8Gi"), node("node-b", "4", "8Gi"),
             node("node-c", "8", "16Gi", [Taint(key="dedicated", value="ml", effect="NoSchedule")])]
    busy = pod_template("3", "2Gi").model_copy(deep=True)
    busy.metadata.name, busy.spec.node_name = "busy", "node-b"
    web = copies(pod_template("1", "1Gi"), 2, "web")
    ml = pod_template("6", "4Gi").model_copy(deep=True)
    ml.metadata.name = "ml"
    ml.spec.tolerations = [Toleration(key="dedicated", operator="Equal", value="ml", effect="NoSchedule")]
    return nodes, [busy, *web, ml]
