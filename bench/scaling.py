"""Scaling study (issue 18): microseconds per pod against the number of nodes, per pod mix and backend.

Each point is one fresh process: build the cluster (not timed), schedule its pods once through
`Scheduler.schedule()` (intake included), record seconds and pods. --percentages 100,0 measures each point also
at upstream's adaptive sampling (percentageOfNodesToScore 0, what a KubeSchedulerConfiguration without it gets).
JAX rows are the first run in the process, so they include compiling; `compile_s` says how much. A point that
passes --timeout seconds is recorded as such.

Run:  .venv/bin/python bench/scaling.py [--nodes 1000,5000,...] [--mixes kube,...] [--backends numpy,jax]
                                         [--percentages 100,0] [--timeout 600] [--out bench/scaling]
Writes <out>.json (every point), <out>.md (the table) and, with matplotlib, <out>.png (log-log plot).
"""
from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

NODES = (1000, 5000, 20_000, 50_000, 100_000)
# mix -> (pods per point, what it is). Pod counts keep a point under a minute or so on numpy at 100,000 nodes.
MIXES = {
    "identical": (20_000, "SchedulingBasic: identical 100m / 500Mi pods on 4-cpu nodes (batched)"),
    "kube": (3000, "the kube mix: 4 shapes cycling in runs of 4, 3, 2, 1 on 32-cpu / 8-GPU nodes (kept shapes)"),
    "distinct": (1000, "Heterogeneous: every pod its own cpu / memory request (one full cycle per pod)"),
    "gpu": (5000, "GpuMix: controllers' replicas of CPU services and 1/2/8-GPU pods; 25% tainted 8-GPU nodes"),
    "gangs": (3000, "gang PodGroups of 3 identical pods (minCount 3), 1 per 3 pods"),
}


def build(mix: str, nodes: int, pods: int):
    from phalanx.cluster_models import ClusterObjects
    from phalanx.scenarios import gpu_mix_nodes
    from phalanx.cluster_models.generate import (basic_pods, gang_pods, generate_nodes, gpu_mix_pods,
                                                 heterogeneous_pods, kube_mix_pods)
    if mix == "identical":
        return ClusterObjects(nodes=generate_nodes(nodes), pods=basic_pods(pods))
    if mix == "kube":
        return ClusterObjects(nodes=generate_nodes(nodes, node_type="kube-mix"), pods=kube_mix_pods(pods))
    if mix == "distinct":
        return ClusterObjects(nodes=generate_nodes(nodes), pods=heterogeneous_pods(pods))
    if mix == "gpu":
        return ClusterObjects(nodes=gpu_mix_nodes(nodes), pods=gpu_mix_pods(pods, seed=1))
    if mix == "gangs":
        groups, members = gang_pods(pods // 3, 3)
        return ClusterObjects(nodes=generate_nodes(nodes), pods=members, pod_groups=groups)
    raise ValueError(f"unknown mix {mix!r}")


def point(mix: str, nodes: int, backend: str, percentage: int = 100) -> dict:
    """One measurement, in this process."""
    from phalanx.sched import Cluster, Scheduler
    from phalanx.sched.config import default_config
    pods = MIXES[mix][0]
    cluster = Cluster.from_objects(build(mix, nodes, pods))
    scheduler = Scheduler(cluster, default_config(percentage_of_nodes_to_score=percentage), backend=backend)
    result = scheduler.schedule()
    n = len(result.bindings) + len(result.unschedulable)
    stats = getattr(scheduler.placer, "stats", None)
    return {"mix": mix, "nodes": nodes, "backend": backend, "percentage": percentage, "pods": n,
            "bound": len(result.bindings),
            "seconds": result.schedule_s, "us_per_pod": 1e6 * result.schedule_s / n,
            "compile_s": stats.compile_s if stats is not None else 0.0}


def run_point(mix: str, nodes: int, backend: str, percentage: int, timeout: float) -> dict:
    cmd = [sys.executable, __file__, "--point", f"{mix},{nodes},{backend},{percentage}"]
    where = {"mix": mix, "nodes": nodes, "backend": backend, "percentage": percentage}
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {**where, "timeout_s": timeout}
    if done.returncode != 0:
        return {**where, "error": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def series(p: dict) -> str:
    """A point's line in the table and the plot: its backend, and the percentage when it samples."""
    pct = p.get("percentage", 100)
    return p["backend"] if pct == 100 else f"{p['backend']} at {pct}%"


def slopes(points: list[dict]) -> dict:
    """Per (mix, backend): the log-log slope of us/pod against nodes between consecutive sizes (1: one pass over
    the nodes per pod; 0: independent of the cluster size)."""
    import math
    out = {}
    for key in sorted({(p["mix"], series(p)) for p in points}):
        row = sorted((p["nodes"], p["us_per_pod"]) for p in points
                     if (p["mix"], series(p)) == key and "us_per_pod" in p)
        out[key] = [(n1, n2, math.log(u2 / u1) / math.log(n2 / n1)) for (n1, u1), (n2, u2) in zip(row, row[1:])]
    return out


def table(points: list[dict], nodes: list[int]) -> str:
    lines = ["| mix | backend | pods | " + " | ".join(f"{n:,} nodes" for n in nodes) + " |",
             "|---|---|---:|" + "---:|" * len(nodes)]
    for mix in MIXES:
        for backend in sorted({series(p) for p in points}):
            cells = []
            for n in nodes:
                p = next((p for p in points if (p["mix"], p["nodes"], series(p)) == (mix, n, backend)), None)
                if p is None:
                    cells.append("")
                elif "us_per_pod" in p:
                    cells.append(f"{p['us_per_pod']:,.1f}")
                else:
                    cells.append("timeout" if "timeout_s" in p else "error")
            if any(cells):
                lines.append(f"| {mix} | {backend} | {MIXES[mix][0]:,} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("us per pod (scheduling with intake; JAX: first run, compiling included). Log-log slopes between "
                 "consecutive sizes (1 = one pass over the nodes per pod, 0 = independent of the size):")
    lines.append("")
    for (mix, backend), s in slopes(points).items():
        lines.append(f"- {mix} / {backend}: " + ", ".join(f"{a // 1000}k->{b // 1000}k {v:+.2f}" for a, b, v in s))
    return "\n".join(lines) + "\n"


def plot(points: list[dict], path: Path) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(7, 5))
    for (mix, backend) in sorted({(p["mix"], series(p)) for p in points}):
        row = sorted((p["nodes"], p["us_per_pod"]) for p in points
                     if (p["mix"], series(p)) == (mix, backend) and "us_per_pod" in p)
        if row:
            style = "-" if backend == "numpy" else ":" if "%" in backend else "--"
            ax.plot(*zip(*row), marker="o", linestyle=style, label=f"{mix} ({backend})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("nodes")
    ax.set_ylabel("us per pod")
    ax.set_title(f"phalanx scaling ({platform.machine()}, Python {platform.python_version()})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return True


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", default=",".join(map(str, NODES)))
    ap.add_argument("--mixes", default=",".join(MIXES))
    ap.add_argument("--backends", default="numpy,jax")
    ap.add_argument("--percentages", default="100", help="percentageOfNodesToScore of each point (0: adaptive)")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--out", default="bench/scaling")
    ap.add_argument("--point", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.point:
        mix, nodes, backend, percentage = args.point.split(",")
        print(json.dumps(point(mix, int(nodes), backend, int(percentage))))
        return
    nodes = [int(n) for n in args.nodes.split(",")]
    mixes = args.mixes.split(",")
    unknown = [m for m in mixes if m not in MIXES]
    if unknown:
        ap.error(f"--mixes: unknown {', '.join(unknown)} (use {', '.join(MIXES)})")
    points = []
    started = time.time()
    percentages = [int(v) for v in args.percentages.split(",")]
    if any(not 0 <= v <= 100 for v in percentages):
        ap.error("--percentages: each in [0, 100]")
    for backend in args.backends.split(","):
        for percentage in percentages:
            for mix in mixes:
                for n in nodes:
                    p = run_point(mix, n, backend, percentage, args.timeout)
                    points.append(p)
                    print(json.dumps(p), flush=True)
    out = Path(args.out)
    meta = {"python": platform.python_version(), "machine": platform.machine(), "processor": platform.processor(),
            "wall_s": round(time.time() - started, 1)}
    out.with_suffix(".json").write_text(json.dumps({"meta": meta, "points": points}, indent=1) + "\n")
    out.with_suffix(".md").write_text(table(points, nodes))
    print(table(points, nodes))
    if plot(points, out.with_suffix(".png")):
        print(f"wrote {out.with_suffix('.png')}")


if __name__ == "__main__":
    main(sys.argv[1:])
