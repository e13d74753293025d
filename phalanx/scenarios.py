"""Named benchmark scenarios, after kube-scheduler's scheduler_perf (test/integration/scheduler_perf).

A scenario builds a Cluster with its pods queued; `run_scenario` times only the scheduling. Used by
`phalanx bench` and by bench/ (pytest-benchmark).
"""
from __future__ import annotations

import gc
import time
from dataclasses import dataclass
from typing import Callable

from .cluster_models import ClusterObjects, Pod
from .cluster_models.controllers import Deployment
from .cluster_models.generate import (anti_affinity_pods, basic_pods, copies, gang_pods, generate_nodes, gpu_mix_pods,
                                      gpu_mix_workloads, heterogeneous_pods, kube_mix_pods, pod_template,
                                      preferred_affinity_pods)
from .cluster_models.load import cyclic_gc_paused
from .sched import Cluster, Scheduler
from .sched.config import default_config
from .sched.scheduler import ScheduleResult
from .sched.records import Preempted


@dataclass(frozen=True)
class Scenario:
    name: str
    nodes: int
    pods: int
    make: Callable[[], ClusterObjects]
    description: str
    replicas: Callable[[], Pod] | None = None     # a template whose `pods` copies arrive by add_replicas, timed

    def build(self) -> ClusterObjects:
        # Millions of long-lived objects and no garbage cycles: the cyclic collector would walk them again and
        # again while they are made (1M SchedulingBasic pods: 8.0 -> 3.6 s, 100k nodes: 8.2 -> 4.7 s).
        with cyclic_gc_paused():
            return self.make()

    def schedule(self, scheduler: Scheduler) -> ScheduleResult:
        """scheduler.schedule() of the built cluster, after the scenario's replicas arrive (timed with it, as
        intake)."""
        t0 = time.perf_counter()
        if self.replicas is not None:
            with cyclic_gc_paused():
                scheduler.add_replicas(self.replicas(), self.pods)
        added_s = time.perf_counter() - t0
        result = scheduler.schedule()
        result.intake_s += added_s
        result.schedule_s += added_s
        return result


def _objects(nodes, pods) -> ClusterObjects:
    return ClusterObjects(nodes=nodes, pods=pods, priority_classes=[], warnings=[])


def _scenario(name, n_nodes, n_pods, make_nodes, make_pods, description) -> Scenario:
    return Scenario(name, n_nodes, n_pods, lambda: _objects(make_nodes(n_nodes), make_pods(n_pods)), description)


def _replicas_scenario(name: str, n_nodes: int, n_pods: int) -> Scenario:
    return Scenario(name, n_nodes, n_pods, lambda: _objects(generate_nodes(n_nodes), []),
                    "SchedulingBasic's pods arriving as one columnar add_replicas call (no Pod object until each is "
                    "scheduled); timed from that call", replicas=lambda: basic_pods(1)[0])


def _deployment(n_nodes: int, replicas: int) -> ClusterObjects:
    """One Deployment of 500m / 1Gi replicas: its ReplicaSet controls them, so the system default topology spreading
    applies (and they go pod by pod, as kube-scheduler places them)."""
    template = {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                         "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}]}}
    deployment = Deployment.model_validate({"metadata": {"name": "web"}, "spec": {
        "replicas": replicas, "selector": {"matchLabels": {"app": "web"}}, "template": template}})
    return ClusterObjects(nodes=generate_nodes(n_nodes), controllers=[deployment])


def gpu_mix_nodes(n: int):
    """GpuMix's nodes: 25% tainted 8-GPU nodes, 64-cpu nodes, soft taints, cordoned nodes."""
    return generate_nodes(n, seed=1, gpu_fraction=0.25, taint_fraction=0.05, unschedulable_fraction=0.01,
                          node_type="cpu-large")


def _gpu_gangs(n_nodes: int, n_pods: int) -> ClusterObjects:
    groups, pods = gpu_mix_workloads(n_pods, seed=1, gang_training=True)
    return ClusterObjects(nodes=gpu_mix_nodes(n_nodes), pods=pods, pod_groups=groups)


def _gang_scenario(name, n_nodes, gangs, size, description) -> Scenario:
    def build() -> ClusterObjects:
        groups, pods = gang_pods(gangs, size)
        return ClusterObjects(nodes=generate_nodes(n_nodes), pods=pods, pod_groups=groups)
    return Scenario(name, n_nodes, gangs * size, build, description)


def _preemption(n_nodes: int, n_low: int, n_high: int) -> ClusterObjects:
    """scheduler_perf PreemptionBasic: nodes full of low-priority pods (900m each, four per 4-cpu node, bound in
    the input as if scheduled before the measurement), then high-priority pods asking 3 cpu, each of which must
    evict three low pods."""
    nodes = generate_nodes(n_nodes)
    low = pod_template("900m", "500Mi")
    low = low.model_copy(update={"spec": low.spec.model_copy(update={"priority": 1})})
    bound = []
    for i, pod in enumerate(copies(low, n_low, "low-priority")):
        spec = pod.spec.model_copy(update={"node_name": nodes[i % n_nodes].metadata.name})
        bound.append(pod.model_copy(update={"spec": spec}))
    high = pod_template("3", "500Mi")
    high = high.model_copy(update={"spec": high.spec.model_copy(update={"priority": 10})})
    return _objects(nodes, bound + copies(high, n_high, "high-priority"))


def _group_preemption(n_nodes: int, n_gangs: int) -> ClusterObjects:
    """Workload-aware preemption: 4-cpu nodes full of low-priority gangs (PodGroups of 8 x 1 cpu, priority 1,
    disruptionMode PodGroup; each fills two nodes), then high-priority gangs of 8 x 2 cpu (priority 100), each of
    which must evict two whole low gangs."""
    nodes = generate_nodes(n_nodes)
    low_groups, low = gang_pods(n_nodes // 2, 8, cpu="1", name="low")
    bound = []
    for i, pod in enumerate(low):
        spec = pod.spec.model_copy(update={"node_name": nodes[i // 4].metadata.name})
        bound.append(pod.model_copy(update={"spec": spec}))
    low_groups = [g.model_copy(update={"spec": g.spec.model_copy(update={"priority": 1, "disruption_mode": "PodGroup"})})
                  for g in low_groups]
    high_groups, high = gang_pods(n_gangs, 8, cpu="2", name="high")
    high_groups = [g.model_copy(update={"spec": g.spec.model_copy(update={"priority": 100})}) for g in high_groups]
    return ClusterObjects(nodes=nodes, pods=bound + high, pod_groups=low_groups + high_groups)


SCENARIOS = {s.name: s for s in [
    _scenario("SchedulingBasic_500Nodes_1000Pods", 500, 1000, generate_nodes, basic_pods,
              "small smoke version of SchedulingBasic"),
    _scenario("SchedulingBasic_5000Nodes_10000Pods", 5000, 10_000, generate_nodes, basic_pods,
              "4 cpu / 32Gi / 110-pod nodes, identical 100m / 500Mi pods (scheduler_perf SchedulingBasic)"),
    _scenario("Heterogeneous_5000Nodes_10000Pods", 5000, 10_000, generate_nodes, heterogeneous_pods,
              "as SchedulingBasic, but every pod has its own cpu/memory request (no batching possible)"),
    _scenario("SchedulingPodAntiAffinity_5000Nodes_5000Pods", 5000, 5000, generate_nodes, anti_affinity_pods,
              "pods with required anti-affinity on kubernetes.io/hostname among themselves: one per node "
              "(scheduler_perf SchedulingPodAntiAffinity)"),
    _scenario("SchedulingPreferredPodAffinity_5000Nodes_5000Pods", 5000, 5000, generate_nodes,
              preferred_affinity_pods,
              "pods preferring (weight 1) nodes that hold pods like them, on kubernetes.io/hostname "
              "(scheduler_perf SchedulingPreferredPodAffinity)"),
    *[_scenario(f"SchedulingKubeMix_{n}Nodes_{p}Pods", n, p, lambda k: generate_nodes(k, node_type="kube-mix"),
                kube_mix_pods, "32 cpu / 256Gi / 110-pod / 8-GPU nodes; pods cycling 4x 250m/512Mi, 3x 1/2Gi, "
                "2x 2/8Gi, 1x 4/16Gi + 1 GPU (the mix real kube-scheduler v1.35 was timed on)")
      for n, p in ((5000, 5000), (20_000, 3000), (50_000, 3000))],
    Scenario("SchedulingDeployment_5000Nodes_5000Pods", 5000, 5000, lambda: _deployment(5000, 5000),
             "a Deployment of 5,000 replicas: ReplicaSet-owned pods, spread by the system default constraints"),
    _scenario("SchedulingBasic_100000Nodes_1000000Pods", 100_000, 1_000_000, generate_nodes, basic_pods,
              "SchedulingBasic at 100k nodes and 1M identical pods"),
    _replicas_scenario("SchedulingBasicReplicas_5000Nodes_10000Pods", 5000, 10_000),
    _replicas_scenario("SchedulingBasicReplicas_100000Nodes_1000000Pods", 100_000, 1_000_000),
    _scenario("GpuMix_100000Nodes_100000Pods", 100_000, 100_000, gpu_mix_nodes, lambda n: gpu_mix_pods(n, seed=1),
              "25% 8-GPU nodes (tainted), 64-cpu nodes, soft taints, cordoned nodes; CPU, 1/2/8-GPU pods"),
    Scenario("GpuMixGangs_100000Nodes_1000000Pods", 100_000, 1_000_000,
             lambda: _gpu_gangs(100_000, 1_000_000),
             "the backends issue's goal: GpuMix's nodes and arrivals at 1M pods, 2- and 8-GPU training jobs as gang "
             "PodGroups (minCount = replicas); GPU demand exceeds supply, so many gangs fail and roll back"),
    Scenario("PreemptionBasic_500Nodes", 500, 500, lambda: _preemption(500, 2000, 500),
             "small smoke version of PreemptionBasic"),
    Scenario("PreemptionBasic_5000Nodes", 5000, 5000, lambda: _preemption(5000, 20_000, 5000),
             "20,000 low-priority pods fill 5,000 nodes; 5,000 high-priority pods each preempt three of them "
             "(scheduler_perf PreemptionBasic); pods/s counts the preemptors until all are bound"),
    Scenario("PreemptionPodGroup_500Nodes_10Gangs", 500, 80, lambda: _group_preemption(500, 10),
             "workload-aware preemption: 250 low-priority gangs of 8 (disruptionMode PodGroup) fill 500 nodes; 10 "
             "high-priority gangs of 8 each evict two whole gangs (the gang's members counted per node: MemberCount)"),
    Scenario("PreemptionPodGroup_5000Nodes_1000Gangs", 5000, 8000, lambda: _group_preemption(5000, 1000),
             "workload-aware preemption at scale: 2,500 low-priority gangs of 8 fill 5,000 nodes; 1,000 "
             "high-priority gangs of 8 each evict two whole gangs"),
    _gang_scenario("GangScheduling_5000Nodes_1000Gangs_3Pods", 5000, 1000, 3,
                   "1,000 gang PodGroups (minCount 3) of identical SchedulingBasic pods (scheduler_perf gang scheduling)"),
    _gang_scenario("GangScheduling_5000Nodes_10Gangs_5000Pods", 5000, 10, 500,
                   "10 gang PodGroups of 500 identical pods (minCount 500), 5,000 pods in all"),
]}


def run_scenario(name: str, backend: str = "numpy", batching: bool = True, incremental: bool = True,
                 percentage_of_nodes_to_score: int = 100) -> dict:
    """Build the scenario, schedule every pod once, and report pods/s of the scheduling alone. The default profile
    scores every node (phalanx's default); percentage_of_nodes_to_score 0 is upstream's adaptive sampling, as a
    KubeSchedulerConfiguration that leaves it out gets (and as scheduler_perf runs)."""
    if name not in SCENARIOS:
        raise KeyError(f"unknown scenario {name!r}; known: {', '.join(SCENARIOS)}")
    scenario = SCENARIOS[name]
    t0 = time.perf_counter()
    cluster = Cluster.from_objects(scenario.build())
    load_s = time.perf_counter() - t0
    scheduler = Scheduler(cluster, default_config(percentage_of_nodes_to_score=percentage_of_nodes_to_score),
                          backend=backend, batching=batching, incremental=incremental)
    # As `phalanx schedule` does after loading (cli._settled): the cyclic collector leaves the loaded objects
    # alone while the scheduler runs; given back afterwards, since a benchmark process runs many scenarios.
    gc.freeze()
    try:
        result = scenario.schedule(scheduler)
    finally:
        gc.unfreeze()
    pods = len(result.bindings) + len(result.unschedulable)
    preemptions = sum(1 for e in scheduler.log.entries if isinstance(e, Preempted))
    report = {"scenario": name, "nodes": scenario.nodes, "pods": pods, "seconds": round(result.schedule_s, 6),
              "pods_per_s": round(pods / result.schedule_s, 1) if result.schedule_s else None,
              "backend": scheduler.backend, "bound": len(result.bindings),
              "unschedulable": len(result.unschedulable), "load_s": round(load_s, 3),
              "intake_s": round(result.intake_s, 6)}
    if percentage_of_nodes_to_score != 100:
        report.update(percentage_of_nodes_to_score=percentage_of_nodes_to_score)
    if preemptions:
        report.update(preemptions=preemptions, pod_cycles=result.pod_cycles)
    stats = getattr(scheduler.placer, "stats", None)
    if stats is not None:
        # JAX: `seconds` includes compiling; compile_s is that part, compiles the programs built in this run
        # (programs already compiled by this process for the same shapes and buckets are reused).
        report.update(compiles=stats.compiles, compile_s=round(stats.compile_s, 6),
                      run_s=round(result.schedule_s - stats.compile_s, 6), device_calls=stats.calls)
    if result.group_attempts:
        # Per attempt as upstream's PodGroup scheduling-attempt duration counts it (queue pop to bind, intake
        # excluded), and with the intake (queueing, PreEnqueue, shape signatures) spread over the attempts.
        cycles_s = result.schedule_s - result.intake_s
        report.update(podgroup_attempts=result.group_attempts,
                      us_per_podgroup_attempt=round(1e6 * cycles_s / result.group_attempts, 1),
                      us_per_podgroup_attempt_with_intake=round(1e6 * result.schedule_s / result.group_attempts, 1))
    return report
