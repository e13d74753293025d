"""Scheduling orchestration: queue, pod and PodGroup cycles, Permit, batching, explain.
Per-node arithmetic lives in phalanx.kernels."""
from .cluster import Cluster
from .config import DEFAULT_PROFILE, Profile, load_profile
from .explain import explain_group, explain_pod
from .records import Record
from .scheduler import GANG_MODES, ScheduleResult, Scheduler

__all__ = ["Cluster", "DEFAULT_PROFILE", "GANG_MODES", "Profile", "Record", "ScheduleResult", "Scheduler",
           "explain_group", "explain_pod", "load_profile"]
