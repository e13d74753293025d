"""PrioritySort: the activeQ order, higher pod priority first, then the earlier queue timestamp (the pod's
arrival, refreshed each time it is requeued after a failure). Upstream: plugins/queuesort/priority_sort.go."""
from __future__ import annotations

from .framework import Plugin


class PrioritySort(Plugin):
    name = "PrioritySort"

    def less(self, a, b) -> bool:
        """a and b: (priority, timestamp) of two queued pods."""
        return a[0] > b[0] or (a[0] == b[0] and a[1] < b[1])

    @staticmethod
    def key(priority: int, timestamp: int) -> tuple[int, int]:
        """A heap key ordering entries as `less` does."""
        return (-priority, timestamp)
