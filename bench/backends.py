"""Scenario x backend table for bench/RESULTS.md: every scheduler_perf-named scenario on numpy and on the other
backends (JAX on jax's default device: CPU unless a GPU is there; CuPy on a GPU), in one process.

Run: .venv/bin/python bench/backends.py [--skip-large] [--pod-by-pod] [--backends jax,cupy] [--recorded]
                                        [--record] [--once] [NAME ...]

JAX and CuPy rows show the first run (compiles included, compile time reported apart) and a second run of a fresh
cluster in the same process (JAX reuses the compiled programs: compile count 0; CuPy copies its plugin states
again, counted as its compiles, and reuses the kernels CuPy compiled). Decisions are checked equal to
numpy's: numpy runs first in the same process, or, with --recorded, the digest of numpy's decisions recorded in
bench/decisions.json is compared instead (the 1M-pod scenarios take minutes on numpy, which a device lease cannot
spare). --record runs numpy alone and writes those digests.
"""
from __future__ import annotations

import hashlib
import json
import platform
import sys
import time
from pathlib import Path

from phalanx.scenarios import SCENARIOS
from phalanx.sched import Cluster, Scheduler

DECISIONS = Path(__file__).with_name("decisions.json")


def decision_digest(result) -> str:
    """sha256 of every pod's outcome: its node, or its last failure message."""
    h = hashlib.sha256()
    for key, node in sorted(result.bindings.items()):
        h.update(f"B {key} {node}\n".encode())
    for key, message in sorted(result.unschedulable.items()):
        h.update(f"U {key} {message}\n".encode())
    return h.hexdigest()


def run(name: str, backend: str, batching: bool = True):
    cluster = Cluster.from_objects(SCENARIOS[name].build())
    scheduler = Scheduler(cluster, backend=backend, batching=batching)
    t0 = time.perf_counter()
    result = SCENARIOS[name].schedule(scheduler)
    seconds = time.perf_counter() - t0
    stats = getattr(scheduler.placer, "stats", None)
    return result, seconds, stats


def _option(argv: list[str], name: str, default: str) -> tuple[str, list[str]]:
    if name not in argv:
        return default, argv
    i = argv.index(name)
    return argv[i + 1], argv[:i] + argv[i + 2:]


def main(argv: list[str]) -> None:
    skip_large = "--skip-large" in argv
    pod_by_pod = "--pod-by-pod" in argv     # also the compiled pod-by-pod loop (batching off), for comparison
    recorded = "--recorded" in argv
    record = "--record" in argv
    once = "--once" in argv       # no second run (at 1M pods a run takes long enough to show the compile apart)
    backends, argv = _option(argv, "--backends", "jax")
    # Default: every scenario but the smoke one and the 1M-pod GPU gang goal (~100 s on numpy, many minutes on
    # JAX-CPU: name it to run it).
    names = [a for a in argv if not a.startswith("--")] or [
        n for n in SCENARIOS if not n.startswith(("SchedulingBasic_500N", "GpuMixGangs"))]
    known = json.loads(DECISIONS.read_text()) if DECISIONS.exists() else {}
    if record:
        for name in names:
            result, seconds, _ = run(name, "numpy")
            known[name] = {"pods": len(result.bindings) + len(result.unschedulable),
                           "bound": len(result.bindings), "digest": decision_digest(result)}
            print(f"{name}: {known[name]} ({seconds:.1f} s)", flush=True)
            DECISIONS.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n")
        return
    line = f"python {platform.python_version()}"
    if "jax" in backends.split(","):
        import jax
        line += f", jax {jax.__version__} on {jax.default_backend()}, devices {jax.devices()}"
    if "cupy" in backends.split(","):
        import cupy
        line += f", cupy {cupy.__version__}"
    print(line)
    print("| Scenario | Backend | Pods | Time (s) | pods/s | Compiles | Compile (s) | Run (s) | run pods/s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in names:
        sc = SCENARIOS[name]
        if skip_large and sc.nodes >= 100_000:
            continue
        if recorded:
            if name not in known:
                sys.exit(f"bench/backends.py: --recorded: {name} has no digest in {DECISIONS.name} (run --record)")
            want, pods = known[name]["digest"], known[name]["pods"]
        else:
            result, seconds, _ = run(name, "numpy")
            want, pods = decision_digest(result), len(result.bindings) + len(result.unschedulable)
            print(f"| {name} | numpy | {pods:,} | {seconds:.3f} | {pods / seconds:,.0f} | - | - | {seconds:.3f} | "
                  f"{pods / seconds:,.0f} |", flush=True)
        for backend in backends.split(","):
            runs = [(f"{backend} (1st run)", True)] + ([] if once else [(f"{backend} (2nd run)", True)])
            if pod_by_pod and sc.nodes < 100_000:     # pod by pod at 100,000 nodes: tens of minutes on a CPU
                runs.append((f"{backend} pod by pod", False))
            for label, batching in runs:
                got, seconds, stats = run(name, backend, batching)
                if decision_digest(got) != want:
                    print(f"| {name} | {label} | DECISIONS DIFFER FROM NUMPY'S |", flush=True)
                    break
                compile_s = stats.compile_s if stats is not None else 0.0
                compiles = stats.compiles if stats is not None else 0
                run_s = seconds - compile_s
                print(f"| {name} | {label} | {pods:,} | {seconds:.3f} | {pods / seconds:,.0f} | {compiles} | "
                      f"{compile_s:.3f} | {run_s:.3f} | {pods / run_s:,.0f} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
