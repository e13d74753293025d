"""The simulator: workloads arriving over time on a cluster, scheduled by phalanx's Scheduler on its clock, with a
GPU-second ledger and per-class pending and completion times; policies compared on the same workload."""
from .engine import POLICIES, Ledger, Policy, SimResult, Simulation
from .workload import CLASSES, JobSpec, generate_jobs

__all__ = ["CLASSES", "JobSpec", "Ledger", "POLICIES", "Policy", "SimResult", "Simulation", "generate_jobs"]
