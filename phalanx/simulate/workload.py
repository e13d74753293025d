"""Seeded workload generators for the simulator: jobs of three classes arriving as a Poisson process.

- training: gang jobs of 2-16 workers holding 4 or 8 GPUs each; a job makes progress only while every worker runs.
- inference: a Deployment of 1, 2 or 4 replicas of 1 GPU each, serving for hours (each replica on its own).
- batch: one pod, 0 or 1 GPU, minutes.

The arrival rate is set so that the GPU-seconds the jobs ask for equal `load` × the cluster's GPUs over time (the
offered load), from the mean demand of the job shapes drawn. Everything is a function of the seed.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CLASSES = ("training", "inference", "batch")
KINDS = ("Job", "Deployment")
PRIORITY = {"inference": 1000, "training": 100, "batch": 0}
# Share of jobs by class (by count).
MIX = {"training": 0.25, "inference": 0.15, "batch": 0.60}


@dataclass(frozen=True)
class JobSpec:
    """One job of a simulated workload."""
    name: str          # unique in the workload (a DNS label)
    klass: str         # "training" | "inference" | "batch"
    arrival: float     # seconds from the start
    workers: int       # pods; a job with more than one makes progress only while all of them run
    gpus: int          # nvidia.com/gpu per worker
    cpu: str           # per worker
    memory: str        # per worker
    duration: float    # seconds of progress the job needs to complete
    priority: int      # spec.priority of its pods
    gpu_milli: int = 1000   # milli of each GPU a worker uses (< 1000: a share of one device)
    gpu_models: str = ""    # "|"-separated GPU models a worker may use ("" any)
    kind: str = "Job"       # "Job": the workers make progress together for `duration` seconds; "Deployment": the
                            # workers are replicas, each serving on its own, and the service lives `duration` seconds
                            # from its arrival

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"job {self.name}: kind must be one of {KINDS}, got {self.kind!r}")

    @property
    def service(self) -> bool:
        return self.kind == "Deployment"

    @property
    def milli(self) -> int:
        """Milli-GPUs one worker holds."""
        return self.gpus * self.gpu_milli

    @property
    def demand_milli(self) -> int:
        """Milli-GPUs the whole job holds while it runs."""
        return self.workers * self.milli


def _shape(rng: np.random.Generator, klass: str) -> tuple[int, int, str, str, float]:
    """(workers, gpus per worker, cpu, memory, duration s) of one job of `klass`."""
    if klass == "training":
        workers = int(rng.choice([2, 4, 8, 16], p=[0.4, 0.3, 0.2, 0.1]))
        gpus = int(rng.choice([4, 8], p=[0.3, 0.7]))
        duration = float(np.clip(rng.lognormal(np.log(2 * 3600), 0.8), 600, 12 * 3600))
        return workers, gpus, str(4 * gpus), f"{32 * gpus}Gi", duration
    if klass == "inference":
        replicas = int(rng.choice([1, 2, 4], p=[0.5, 0.3, 0.2]))
        duration = float(np.clip(rng.lognormal(np.log(6 * 3600), 0.6), 1800, 24 * 3600))
        return replicas, 1, "4", "32Gi", duration
    gpus = int(rng.random() < 0.5)
    duration = float(np.clip(rng.lognormal(np.log(20 * 60), 0.7), 60, 4 * 3600))
    return 1, gpus, "2", "8Gi", duration


def generate_jobs(total_gpus: int, hours: float, seed: int = 0, load: float = 0.8) -> list[JobSpec]:
    """Jobs arriving over `hours` on a cluster of `total_gpus` GPUs at offered load `load`, in arrival order."""
    if total_gpus <= 0:
        raise ValueError("the cluster has no GPUs: the simulated workload needs nvidia.com/gpu nodes")
    if not hours > 0:
        raise ValueError(f"hours must be > 0, got {hours!r}")
    if not 0 < load <= 10:
        raise ValueError(f"load must be in (0, 10], got {load!r}")
    rng = np.random.default_rng(seed)
    classes = list(MIX)
    probs = np.array([MIX[c] for c in classes])
    # The mean GPU-seconds of a job, from a pilot sample of the same distribution (its own stream).
    pilot = np.random.default_rng([seed, 1])
    mean = np.mean([w * g * d for w, g, _, _, d in
                    (_shape(pilot, classes[int(pilot.choice(len(classes), p=probs))]) for _ in range(4000))])
    rate = load * total_gpus / mean                  # jobs per second
    horizon, t, jobs = hours * 3600.0, 0.0, []
    while True:
        t += float(rng.exponential(1.0 / rate))
        if t >= horizon:
            return jobs
        klass = classes[int(rng.choice(len(classes), p=probs))]
        workers, gpus, cpu, memory, duration = _shape(rng, klass)
        jobs.append(JobSpec(f"{klass[0]}{len(jobs):06d}", klass, t, workers, gpus, cpu, memory, duration,
                            PRIORITY[klass], kind="Deployment" if klass == "inference" else "Job"))
