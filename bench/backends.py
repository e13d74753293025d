"""Scenario x backend table for bench/RESULTS.md: every scheduler_perf-named scenario on numpy and on JAX (on
jax's default device: CPU unless a GPU is there), in one process.

Run: .venv/bin/python bench/backends.py [--skip-large] [--pod-by-pod] [NAME ...]

JAX rows show the first run (compiles included, compile time reported apart) and a second run of a fresh
cluster in the same process (the compiled programs are reused: compile count 0). Decisions are checked equal
to numpy's.
"""
from __future__ import annotations

import platform
import sys
import time

from phalanx.scenarios import SCENARIOS
from phalanx.sched import Cluster, Scheduler


def run(name: str, backend: str, batching: bool = True):
    cluster = Cluster.from_objects(SCENARIOS[name].build())
    scheduler = Scheduler(cluster, backend=backend, batching=batching)
    t0 = time.perf_counter()
    result = scheduler.schedule()
    seconds = time.perf_counter() - t0
    stats = getattr(scheduler.placer, "stats", None)
    return result, seconds, stats


def main(argv: list[str]) -> None:
    skip_large = "--skip-large" in argv
    pod_by_pod = "--pod-by-pod" in argv     # also the compiled pod-by-pod loop (batching off), for comparison
    # Default: every scenario but the smoke one and the 1M-pod GPU gang goal (~100 s on numpy, many minutes on
    # JAX-CPU: name it to run it).
    names = [a for a in argv if not a.startswith("--")] or [
        n for n in SCENARIOS if not n.startswith(("SchedulingBasic_500N", "GpuMixGangs"))]
    import jax
    print(f"python {platform.python_version()}, jax {jax.__version__} on {jax.default_backend()}")
    print("| Scenario | Backend | Pods | Time (s) | pods/s | Compiles | Compile (s) | Run (s) | run pods/s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in names:
        sc = SCENARIOS[name]
        if skip_large and sc.nodes >= 100_000:
            continue
        want, seconds, _ = run(name, "numpy")
        pods = len(want.bindings) + len(want.unschedulable)
        print(f"| {name} | numpy | {pods:,} | {seconds:.3f} | {pods / seconds:,.0f} | - | - | {seconds:.3f} | "
              f"{pods / seconds:,.0f} |", flush=True)
        runs = [("jax (1st run)", True), ("jax (2nd run)", True)]
        if pod_by_pod and sc.nodes < 100_000:     # pod by pod at 100,000 nodes: tens of minutes on a CPU
            runs.append(("jax pod by pod", False))
        for label, batching in runs:
            got, seconds, stats = run(name, "jax", batching)
            assert got.bindings == want.bindings and got.unschedulable == want.unschedulable, name
            run_s = seconds - stats.compile_s
            print(f"| {name} | {label} | {pods:,} | {seconds:.3f} | {pods / seconds:,.0f} | {stats.compiles} | "
                  f"{stats.compile_s:.3f} | {run_s:.3f} | {pods / run_s:,.0f} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
