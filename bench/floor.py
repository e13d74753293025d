"""How far each scenario's scheduling is from its memory-traffic floor, per backend.

Every evaluation over the cluster (one per-pod cycle or one batch round: ScheduleResult.pod_cycles +
batch_rounds) has to read the node table at least once: `NodeTable.nbytes()` bytes (allocatable, requested,
non-zero requested, pod counts, cordon bits, label value ids, taints, host ports: the columns the default
profile's filters and scores read). The floor is

    evaluations x table bytes / bandwidth

with the bandwidth measured here, on the backend's device, as the best of five copies of a 256 MiB array
(bytes read + bytes written per second; JAX on the CPU uses numpy's copy, the faster of the two there).
Backends: numpy, jax (on a GPU when jax sees one) and cupy. "x floor" =
scheduling time / floor time: 1 would be a placer that does nothing but stream the table once per evaluation.
Intake (queueing, signatures) is excluded from the scheduling time, as upstream's scheduling-attempt duration
excludes it.

Run: .venv/bin/python bench/floor.py [--backend numpy|jax|cupy] [NAME ...]   (default: the 5,000-node scenarios)
"""
from __future__ import annotations

import platform
import sys
import time

import numpy as np

from phalanx.kernels.backend import namespace, precision
from phalanx.scenarios import SCENARIOS
from phalanx.sched import Cluster, Scheduler

COPY_BYTES = 256 << 20


def bandwidth(backend: str) -> float:
    """Bytes per second of a device-to-device copy (read + write) on the backend's default device. JAX on the
    CPU reads the same memory as numpy, whose copy is the faster one there: the floor uses numpy's."""
    if backend == "jax":
        import jax
        if jax.default_backend() == "cpu":
            backend = "numpy"
    xp = namespace(backend)
    with precision(xp):
        return _bandwidth(backend, xp)


def _bandwidth(backend: str, xp) -> float:
    a = xp.ones((COPY_BYTES // 8,), dtype=xp.int64)
    if backend == "jax":
        import jax
        copy = jax.jit(lambda x: x + 1)
        sync = jax.block_until_ready
    elif backend == "cupy":
        import cupy
        copy = lambda x: x + 1        # noqa: E731
        sync = lambda y: cupy.cuda.get_current_stream().synchronize()   # noqa: E731
    else:
        out = np.empty_like(a)
        copy = lambda x: np.add(x, 1, out=out)    # noqa: E731
        sync = lambda y: None                     # noqa: E731
    sync(copy(a))                                 # compile / first-touch the output
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        sync(copy(a))
        best = min(best, time.perf_counter() - t0)
    return 2 * COPY_BYTES / best


def main(argv: list[str]) -> None:
    backend = "numpy"
    if "--backend" in argv:
        i = argv.index("--backend")
        backend = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if backend not in ("numpy", "jax", "cupy"):
        sys.exit(f"bench/floor.py: --backend: {backend!r} is not one of numpy, jax, cupy")
    names = argv or [n for n in SCENARIOS if "5000Nodes" in n]
    bw = bandwidth(backend)
    print(f"python {platform.python_version()}, backend {backend}, copy bandwidth {bw / 1e9:.1f} GB/s")
    print("| Scenario | Backend | Pods | Evaluations | Table bytes | Scheduling (s) | Floor (s) | x floor |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name in names:
        for _ in range(1 if backend == "numpy" else 2):      # JAX, CuPy: the second run has nothing to compile
            cluster = Cluster.from_objects(SCENARIOS[name].build())
            table_bytes = cluster.tensors.nodes.nbytes()
            scheduler = Scheduler(cluster, backend=backend)
            result = SCENARIOS[name].schedule(scheduler)
        stats = getattr(scheduler.placer, "stats", None)
        seconds = result.schedule_s - result.intake_s - (stats.compile_s if stats is not None else 0.0)
        evaluations = result.pod_cycles + result.batch_rounds
        floor = evaluations * table_bytes / bw
        pods = len(result.bindings) + len(result.unschedulable)
        print(f"| {name} | {backend} | {pods:,} | {evaluations:,} | {table_bytes:,} | {seconds:.3f} | "
              f"{floor:.5f} | {seconds / floor:,.0f} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
