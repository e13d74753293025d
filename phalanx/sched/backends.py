"""Which Placer a Scheduler gets for a backend name. Optional packages are imported only here, on demand.

- numpy: the reference path (kernels on host arrays, exact batch path).
- jax: `JaxPlacer` (jax_placer.py): each run of identical pods is one compiled XLA program (CPU or GPU,
  wherever jax's default device is), int64 under a scoped jax.enable_x64.
- cupy: `CupyPlacer` (cupy_placer.py): the JAX backend's placement program run eagerly on CuPy arrays, the node
  table resident on the GPU; runs JAX would not compile take numpy's path on the host.
- auto: with jax installed, numpy with segments of short runs handed to JAX (on jax's default device, a GPU when
  it has one) when that was measured faster (auto_placer.py: "numpy+jax"); else numpy. Chosen by the measurements
  in bench/RESULTS.md ("GPU backends", an H200): pure JAX on the GPU was 13x slower than numpy on the kube mix
  (recurring shapes: numpy's kept results, compiled programs reused), 47x slower on the first run of identical
  pods (its compile) and 2.4x faster on their second, and 1.45x faster on all-distinct pods (Heterogeneous, first
  run), which are what the segments carry; CuPy was slower than numpy on every scenario measured against numpy
  there, so auto never picks it.
"""
from __future__ import annotations

import numpy as np

from ..kernels.backend import CHOICES, BackendUnavailable, namespace, resolve
from .placement import Placer

SCHEDULER_BACKENDS = CHOICES     # accepted names


def scheduler_backend(name: str) -> str:
    """The backend a Scheduler runs for `name` (auto resolved; "numpy+jax", what auto resolves to, is kept: the
    placers of topology placements and preemption dry runs are made from the Scheduler's resolved name); raises
    ValueError / BackendUnavailable."""
    if name == "numpy+jax":
        namespace("jax")
        return name
    if name == "auto":
        try:
            namespace("jax")
        except BackendUnavailable:
            return "numpy"
        return "numpy+jax"
    return resolve(name)


def make_placer(name: str, cluster, framework, batching: bool, incremental: bool = True) -> Placer:
    """A Placer for one profile's Framework on `cluster`. incremental: keep shapes' results between their cycles
    (numpy; sched/incremental.py)."""
    name = scheduler_backend(name)
    if name == "jax":
        from .jax_placer import JaxPlacer
        placer = JaxPlacer(cluster, framework, batching)
    elif name == "cupy":
        from .cupy_placer import CupyPlacer
        placer = CupyPlacer(cluster, framework, batching)
    elif name == "numpy+jax":
        from .auto_placer import AutoPlacer
        placer = AutoPlacer(cluster, framework, batching, incremental)
    else:
        placer = Placer(cluster, framework, np, batching, incremental)
    placer.backend = name
    return placer
