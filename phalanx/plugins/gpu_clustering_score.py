"""GpuClusteringScore (the FGD paper's GpuClustering): puts pods of one GPU affinity tag (a share, or k whole GPUs)
together, fuller nodes first. Simulator: pkg/simulator/plugin/gpu_clustering_score.go. The tags of the pods on
each node come from the GpuBook (affinity_counts, over the binding log). Arithmetic: kernels/gpu_scores.py
gpuclustering."""
from __future__ import annotations

import numpy as np

from ..kernels.gpu_scores import gpuclustering
from .gpu_scoring import GpuScore


class GpuClusteringScore(GpuScore):
    name = "GpuClusteringScore"

    def evaluate(self, state, view):
        tag = state.affinity
        if tag < 0:
            return (gpuclustering(np, view.free, np.zeros((view.free.shape[0], 1), np.int64), tag),)
        counts = state.book.affinity_counts(tag + 1)
        counts = counts[view.rows] if view.rows is not None else counts.copy()
        counts[:, tag] += view.copies            # the earlier copies of the pod carry its tag
        return (gpuclustering(np, view.free, counts, tag),)
