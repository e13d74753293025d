"""PodGroupPodsCount (KEP-5732): a placement scores by how many of the group's pods it holds (members already
scheduled and members placed in it), normalized to the best placement (score * 100 / max).
Upstream: pkg/scheduler/framework/plugins/podgrouppodscount."""
from __future__ import annotations

import numpy as np

from ..kernels.topology_placement import pods_count_score
from .framework import Plugin


class PodGroupPodsCount(Plugin):
    name = "PodGroupPodsCount"

    def score_placement(self, tries, cluster, scheduled: int) -> np.ndarray:
        """tries: (nodes, placements made there) per feasible placement; scheduled: members already scheduled."""
        pods = np.array([sum(len(pl.pods) for pl in placed) + scheduled for _, placed in tries], np.int64)
        return np.asarray(pods_count_score(np, pods))
