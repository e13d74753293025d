"""DotProductScore (the FGD paper's DotProd): the node's free (CPU, GPU) against the pod's request, both scaled
by the largest node, merged and max-normalized: int(100 (1 - dot / 2)). Simulator:
pkg/simulator/plugin/dot_product_score.go (DimExtMethod merge, NormMethod max, the experiments' setting).
Arithmetic: kernels/gpu_scores.py dotprod."""
from __future__ import annotations

import numpy as np

from ..kernels.gpu_scores import dotprod
from .gpu_scoring import GpuScore


class DotProductScore(GpuScore):
    name = "DotProductScore"

    def evaluate(self, state, view):
        return (dotprod(np, view.cpu_left, view.free, state.cpu, state.count * state.milli),)
