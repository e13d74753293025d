"""RandomScore (the FGD paper's Random): one feasible node, drawn uniformly, scores 100 and every other node 0;
a GPU share then takes a uniformly drawn fitting device of the chosen node (the experiments' random GPU selection).
Simulator: pkg/simulator/plugin/random_score.go, open_gpu_share.go allocateGpuIdBasedOnRandomFit.

Draws come from the scheduler's seeded stream (cluster.rng), one per cycle with a feasible node and one per share
placed. The simulator draws its node at PreScore over the feasible nodes; phalanx's PreScore runs before Filter, so
the draw is made at Score, over the same nodes (docs/semantics.md)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels.gpu_fit import device_fits, random_device
from ..kernels.gpu_scores import random_score
from .framework import PER_POD, Plugin
from .gpu_scoring import GpuScore, GpuScoreState, gpu_score_state
from .gpu_share import DevicePick


@dataclass(frozen=True)
class RandomState:
    gpu: GpuScoreState
    rng: np.random.Generator       # the scheduler's stream (cluster.rng)


class RandomScore(GpuScore):
    name = "RandomScore"

    def pre_score(self, pod, cluster):
        return RandomState(gpu_score_state(pod, cluster), cluster.rng)

    def score_state(self, pod, cluster, pre):
        # As upstream: Score reads PreScore's state (an error when the profile does not enable PreScore).
        return Plugin.score_state(self, pod, cluster, pre)

    def score(self, xp, state, tensors, feasible, cache=None):
        if not bool(np.any(np.asarray(feasible))):
            return xp.zeros(feasible.shape, dtype=xp.int64)
        return random_score(xp, feasible, state.rng.random())

    def score_behaviour(self, state):
        return PER_POD

    def pick(self, state, node, cluster):
        gpu = state.gpu
        if not gpu.share:
            return None
        free, model, _ = gpu.book.devices(slice(node, node + 1))
        fits = device_fits(np, free, model, gpu.milli, gpu.allowed)
        chosen = random_device(np, fits, np.array([state.rng.random()]))
        return DevicePick(np.flatnonzero(chosen[0]).astype(np.int64))
