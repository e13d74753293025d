"""BestFitScore (the FGD paper's BestFit): favours the node left with the least free CPU and GPU after the pod,
min-max normalized over the feasible nodes. Simulator: pkg/simulator/plugin/best_fit_score.go (getBestFitScore,
NormalizeScore). Arithmetic: kernels/gpu_scores.py bestfit, min_max_normalize."""
from __future__ import annotations

import numpy as np

from ..kernels.gpu_scores import bestfit, min_max_normalize
from .framework import PER_POD
from .gpu_scoring import GpuScore


class BestFitScore(GpuScore):
    name = "BestFitScore"

    def evaluate(self, state, view):
        return (bestfit(np, view.cpu_left, view.free, state.cpu, state.count * state.milli),)

    def normalize(self, xp, raw, feasible, state, tensors):
        return min_max_normalize(xp, raw, feasible)

    def score_behaviour(self, state):
        # The normalization reads the lowest and highest scores of the feasible nodes, which move as copies land.
        return PER_POD
