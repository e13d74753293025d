"""Scheduling orchestration: queue, pod cycle, batching, explain. Per-node arithmetic lives in phalanx.kernels."""
from .cluster import Cluster
from .config import DEFAULT_PROFILE, Profile, load_profile
from .explain import explain_pod
from .scheduler import ScheduleResult, Scheduler

__all__ = ["Cluster", "DEFAULT_PROFILE", "Profile", "load_profile", "ScheduleResult", "Scheduler", "explain_pod"]
