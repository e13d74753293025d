"""GpuPackingScore (the FGD paper's GpuPacking): prefers partly used GPUs, then nodes already in use, then idle
nodes (three integer bands). Simulator: pkg/simulator/plugin/gpu_packing_score.go. Arithmetic:
kernels/gpu_scores.py gpupacking."""
from __future__ import annotations

import numpy as np

from ..kernels.gpu_scores import gpupacking
from .gpu_scoring import GpuScore


class GpuPackingScore(GpuScore):
    name = "GpuPackingScore"

    def evaluate(self, state, view):
        return (gpupacking(np, view.free, view.devices, state.count, state.milli),)
