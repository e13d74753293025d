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


def _job(name: str, workers: int) -> Job:
    return Job.model_validate({
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"parallelism": workers, "completions": workers, "completionMode": "Indexed",
                 "template": {"spec": {"containers": [{"name": "worker", "resources": {
                     "requests": {"cpu": "4", "memory": "32Gi", GPU: "1"}, "limits": {GPU: "1"}}}]}}}})


def _cluster(gpu_nodes: int, busy_gpus: int) -> ClusterObjects:
    nodes = [Node.model_validate({
        "metadata": {"name": f"gpu-{i}", "labels": {"kubernetes.io/hostname": f"gpu-{i}"}},
        "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110", GPU: "8"}}})
        for i in range(gpu_nodes)]
    busy = [Pod.model_validate({
        "metadata": {"name": "inference", "namespace": "serving"},
        "spec": {"nodeName": "gpu-0", "containers": [{"name": "server", "resources": {
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
