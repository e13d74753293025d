"""SchedulingGates: a pod with spec.schedulingGates does not enter the activeQ. Upstream:
plugins/schedulinggates/scheduling_gates.go (PreEnqueue)."""
from __future__ import annotations

from .framework import Plugin

MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"


class SchedulingGates(Plugin):
    name = "SchedulingGates"
    events = frozenset()     # only an update of the pod removing its gates (not modelled: pods are immutable here)
    pre_enqueue_reads = "spec"

    def pre_enqueue(self, pod, cluster) -> str | None:
        return MESSAGE if pod.spec.scheduling_gates else None
