"""Which Placer a Scheduler gets for a backend name. Optional packages are imported only here, on demand.

- numpy: the reference path (kernels on host arrays, exact batch path).
- jax: `JaxPlacer` (jax_placer.py): each run of identical pods is one compiled XLA program (CPU or GPU,
  wherever jax's default device is), int64 under a scoped jax.enable_x64.
- cupy: every kernel runs under CuPy (tests/test_backend_parity.py, on a GPU), but the scheduler does not
  keep a CuPy copy of the cluster yet, so Scheduler(backend="cupy") raises BackendUnavailable instead of
  silently running on the host.
- auto: jax when jax sees a GPU; else, with jax installed, numpy with segments of short runs handed to JAX when
  that was measured faster (auto_placer.py: "numpy+jax"); else numpy. CuPy is skipped until its scheduler path
  exists.
"""
from __future__ import annotations

import numpy as np

from ..kernels.backend import CHOICES, BackendUnavailable, gpu_available, namespace, resolve
from .placement import Placer

SCHEDULER_BACKENDS = CHOICES     # accepted names; cupy is refused with a reason when the Scheduler is built


def scheduler_backend(name: str) -> str:
    """The backend a Scheduler runs for `name` (auto resolved); raises ValueError / BackendUnavailable."""
    if name == "auto":
        if gpu_available("jax"):
            return "jax"
        try:
            namespace("jax")
        except BackendUnavailable:
            return "numpy"
        return "numpy+jax"
    name = resolve(name)
    if name == "cupy":
        raise BackendUnavailable("backend 'cupy': the kernels run under CuPy, but the Scheduler has no CuPy "
                                 "device state yet; use --backend jax (GPU or CPU) or numpy")
    return name


def make_placer(name: str, cluster, framework, batching: bool, incremental: bool = True) -> Placer:
    """A Placer for one profile's Framework on `cluster`. incremental: keep shapes' results between their cycles
    (numpy; sched/incremental.py)."""
    name = scheduler_backend(name)
    if name == "jax":
        from .jax_placer import JaxPlacer
        placer = JaxPlacer(cluster, framework, batching)
    elif name == "numpy+jax":
        from .auto_placer import AutoPlacer
        placer = AutoPlacer(cluster, framework, batching, incremental)
    else:
        placer = Placer(cluster, framework, np, batching, incremental)
    placer.backend = name
    return placer
