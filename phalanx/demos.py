"""The stranded-GPU demo: why a group of pods must be one scheduling decision.

A 64-worker training Job (1 GPU per worker, Indexed: the Job controller makes it a gang with minCount 64)
arrives at a cluster with 47 free GPUs; a 40-worker job arrives a minute later. Scheduled pod by pod, the
first job takes all 47 GPUs and cannot start, and the second finds none. As a gang, the first job binds
nothing, and the second one runs.
"""
from __future__ import annotations

from .cluster_models import ClusterObjects, Job, Node, Pod, job_objects
from .sched import Cluster, Scheduler, explain_group

GPU = "nvidia.com/gpu"
IMAGE = "registry.k8s.io/pause:3.10"     # the API server wants every container's image


def _job(name: str, workers: int) -> Job:
    return Job.model_validate({
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"parallelism": workers, "completions": workers, "completionMode": "Indexed",
                 "template": {"spec": {"containers": [{"name": "worker", "image": IMAGE, "resources": {
                     "requests": {"cpu": "4", "memory": "32Gi", GPU: "1"}, "limits": {GPU: "1"}}}]}}}})


def _cluster(gpu_nodes: int, busy_gpus: int) -> ClusterObjects:
    nodes = [Node.model_validate({
        "metadata": {"name": f"gpu-{i}", "labels": {"kubernetes.io/hostname": f"gpu-{i}"}},
        "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110", GPU: "8"}}})
        for i in range(gpu_nodes)]
    busy = [Pod.model_validate({
        "metadata": {"name": "inference", "namespace": "serving"},
        "spec": {"nodeName": "gpu-0", "containers": [{"name": "server", "image": IMAGE, "resources": {
            "requests": {"cpu": "8", "memory": "64Gi", GPU: str(busy_gpus)}, "limits": {GPU: str(busy_gpus)}}}]}})]
    return ClusterObjects(nodes=nodes, pods=busy)


def _free_gpus(scheduler: Scheduler) -> int:
    tensors = scheduler.cluster.tensors
    col = tensors.resources.ids[GPU]
    return int((tensors.nodes.allocatable[:, col] - tensors.nodes.requested[:, col]).sum())


def _without_group(pods: list[Pod]) -> list[Pod]:
    """What a workload-unaware scheduler sees: the same pods, no PodGroup."""
    return [p.model_copy(update={"spec": p.spec.model_copy(update={"scheduling_group": None})}) for p in pods]


def stranded_gpus(workers: int = 64, later_workers: int = 40, gpu_nodes: int = 6, busy_gpus: int = 1,
                  later_at_s: float = 60.0) -> list[dict]:
    """Run the story both ways; one row per way: pods bound per job, free GPUs, GPUs held by a job that
    cannot start (fewer than all its workers bound), and why the first job waits."""
    rows = []
    for way in ("pod-by-pod", "gang"):
        scheduler = Scheduler(Cluster.from_objects(_cluster(gpu_nodes, busy_gpus)))
        free_at_start = _free_gpus(scheduler)
        for job, at in ((_job("train", workers), 0.0), (_job("finetune", later_workers), later_at_s)):
            scheduler.step(until=at)
            if way == "gang":
                scheduler.add_job(job)
            else:
                scheduler.add_pods(_without_group(job_objects(job).pods))
            scheduler.run_until_idle()
        bound = {name: sum(1 for r in scheduler.records if r.kind == "Bound" and r.object.startswith(f"ml/{name}-"))
                 for name in ("train", "finetune")}
        wanted = {"train": workers, "finetune": later_workers}
        stranded = sum(n for name, n in bound.items() if n < wanted[name])
        why = explain_group(scheduler, "ml/train-workers")["message"] if way == "gang" else None
        rows.append({"way": way, "free_gpus_at_start": free_at_start, "train_bound": bound["train"],
                     "finetune_bound": bound["finetune"], "stranded_gpus": stranded,
                     "free_gpus_at_end": _free_gpus(scheduler), "train_waits_because": why})
    return rows


# --- the preemption demo ------------------------------------------------------------------------------------
_NOW = 1_764_000_000             # the demo's "now" (epoch seconds): GPU-hours are counted up to here


def _stamp(minutes_ago: float) -> str:
    from datetime import datetime, timezone
    return datetime.fromtimestamp(_NOW - 60 * minutes_ago, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _gpu_pod(name: str, node: str | None, priority: int, minutes_ago: float | None = None,
             group: str | None = None) -> Pod:
    doc = {"metadata": {"name": name, "namespace": "ml"},
           "spec": {"priority": priority, "containers": [{"name": "worker", "image": IMAGE, "resources": {
               "requests": {"cpu": "4", "memory": "32Gi", GPU: "1"}, "limits": {GPU: "1"}}}]}}
    if node is not None:
        doc["spec"]["nodeName"] = node
        doc["status"] = {"phase": "Running", "startTime": _stamp(minutes_ago)}
    if group is not None:
        doc["spec"]["schedulingGroup"] = {"podGroupName": group}
    return Pod.model_validate(doc)


def _preemption_cluster() -> tuple[ClusterObjects, dict[str, tuple[int, float]]]:
    """4 nodes x 8 GPUs, all busy at priority 100: training jobs a (16 workers, 6 h), b (8, 2 h), c (4, 1 h), all
    gangs with disruptionMode PodGroup, three workers of a and b restarted minutes ago, and 4 notebooks (single
    pods, 30 min). Returns the objects and, per job, (GPUs, hours run)."""
    from .cluster_models import PodGroup
    nodes = [Node.model_validate({
        "metadata": {"name": f"gpu-{i}", "labels": {"kubernetes.io/hostname": f"gpu-{i}"}},
        "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110", GPU: "8"}}}) for i in range(4)]
    jobs = {"train-a": (16, 360.0), "train-b": (8, 120.0), "train-c": (4, 60.0)}
    restarted = {("train-a", 0): 10.0, ("train-b", 1): 20.0, ("train-a", 2): 15.0}   # (job, node) -> minutes ago
    groups, pods = [], []
    for job, (workers, minutes) in jobs.items():
        groups.append(PodGroup.model_validate({
            "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": job, "namespace": "ml"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": workers}}, "priority": 100,
                     "disruptionMode": "PodGroup"}}))
        for w in range(workers):
            node = w % 4
            age = restarted.get((job, node), minutes) if w < 4 else minutes
            pods.append(_gpu_pod(f"{job}-{w}", f"gpu-{node}", 100, age, job))
    pods += [_gpu_pod(f"notebook-{i}", f"gpu-{i}", 100, 30.0) for i in range(4)]
    hours = {job: (workers, minutes / 60) for job, (workers, minutes) in jobs.items()}
    hours.update({f"notebook-{i}": (1, 0.5) for i in range(4)})
    return ClusterObjects(nodes=nodes, pods=pods, pod_groups=groups), hours


def _urgent(as_group: bool) -> tuple[list, list[Pod]]:
    from .cluster_models import PodGroup
    group = PodGroup.model_validate({
        "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "urgent", "namespace": "ml"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 8}}, "priority": 1000}})
    pods = [_gpu_pod(f"urgent-{i}", None, 1000, group="urgent" if as_group else None) for i in range(8)]
    return ([group] if as_group else []), pods


def preemption_story() -> list[dict]:
    """A high-priority 8-worker gang on a full GPU cluster, preempting as one PodGroup (workload-aware) and pod by
    pod. One row per way: the victims, the jobs broken (a gang job that loses any worker loses all its work), the
    GPU-hours lost (a broken job's GPUs x its run time; a notebook's own), the urgent workers bound."""
    rows = []
    for way in ("workload-aware", "pod-by-pod"):
        objects, hours = _preemption_cluster()
        groups, urgent = _urgent(way == "workload-aware")
        objects.pod_groups = objects.pod_groups + groups
        scheduler = Scheduler(Cluster.from_objects(objects))
        scheduler.add_pods(urgent)
        records = scheduler.run_until_idle()
        victims = [r.object for r in records if r.kind == "Preempted"]
        owners = sorted({v.split("/")[1].rsplit("-", 1)[0] if v.split("/")[1].startswith("train-")
                         else v.split("/")[1] for v in victims})
        lost = sum(gpus * h for name, (gpus, h) in hours.items() if name in owners)
        rows.append({"way": way, "victims": victims, "jobs_hit": owners,
                     "broken_jobs": [o for o in owners if o.startswith("train-")],
                     "gpu_hours_lost": round(lost, 2),
                     "urgent_bound": sum(1 for r in records if r.kind == "Bound" and "/urgent-" in r.object),
                     "preemptions": sum(1 for e in scheduler.log.entries if type(e).__name__ == "Preempted")})
    return rows
