"""The `phalanx` command: schedule, explain, generate, bench, demo-gang."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Optional

import typer

from .cluster_models import InputError, load_paths
from .sched import DEFAULT_PROFILE, Cluster, Scheduler, load_profile
from .sched.config import COMPAT_VERSIONS, with_compat

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Exact, vectorised Kubernetes scheduling (kube-scheduler v1.36 semantics).")

BACKENDS = ("numpy", "jax", "cupy")


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def _profile(config: Optional[Path], compat: str):
    if compat not in COMPAT_VERSIONS:
        _fail(f"--compat: unsupported version {compat!r} (use one of {', '.join(COMPAT_VERSIONS)})")
    return load_profile(config, compat=compat) if config else with_compat(DEFAULT_PROFILE, compat)


def _scheduler(cluster, config, compat, backend, tie_break, seed, batching=True) -> Scheduler:
    if backend not in BACKENDS:
        _fail(f"--backend: unknown backend {backend!r} (use one of {', '.join(BACKENDS)})")
    try:
        return Scheduler(cluster, _profile(config, compat), backend=backend, tie_break=tie_break, seed=seed,
                         batching=batching)
    except ValueError as exc:
        _fail(f"--backend/--tie-break: {exc}")


@app.command()
def schedule(
    cluster: Path = typer.Option(..., "--cluster", help="file or directory of Node/Pod/PriorityClass manifests"),
    pods: Optional[Path] = typer.Option(None, "--pods", help="more pending pods (file or directory)"),
    config: Optional[Path] = typer.Option(None, "--config", help="KubeSchedulerConfiguration (profiles[0] is used)"),
    compat: str = typer.Option("1.36", "--compat", help="Kubernetes version whose formulas to use: 1.36 or 1.35"),
    backend: str = typer.Option("numpy", "--backend", help="numpy, jax or cupy"),
    tie_break: str = typer.Option("first", "--tie-break", help="first (lowest node index) or random (seeded)"),
    seed: int = typer.Option(0, "--seed", help="seed for --tie-break random"),
    no_batching: bool = typer.Option(False, "--no-batching", help="schedule identical pods one at a time"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="list every binding and every unschedulable pod"),
):
    """Schedule every pending pod found and report bindings and unschedulable pods."""
    try:
        t0 = time.perf_counter()
        objects = load_paths([cluster, *([pods] if pods else [])])
        state = Cluster.from_objects(objects)
        load_s = time.perf_counter() - t0
        result = _scheduler(state, config, compat, backend, tie_break, seed, not no_batching).schedule()
    except InputError as exc:
        _fail(str(exc))
    timing = {"load_s": round(load_s, 6), "schedule_s": round(result.schedule_s, 6)}
    for w in result.warnings:
        typer.echo(f"warning: {w}", err=True)
    if as_json:
        typer.echo(json.dumps({"bindings": result.bindings, "unschedulable": result.unschedulable,
                               "pod_groups": {k: dict(zip(("status", "reason", "message"), v))
                                              for k, v in result.pod_groups.items()},
                               "timing": timing}))
        return
    _summary(state, result, load_s, verbose)


def _summary(state: Cluster, result, load_s: float, verbose: bool) -> None:
    """Human summary: how many pods went where, how full the nodes are, why the rest wait."""
    nodes = state.tensors.nodes
    total = len(result.bindings) + len(result.unschedulable)
    rate = f", {total / result.schedule_s:,.0f} pods/s" if result.schedule_s else ""
    typer.echo(f"scheduled {len(result.bindings):,} of {total:,} pending pods on {nodes.size:,} nodes "
               f"in {result.schedule_s:.3f}s{rate} (load {load_s:.2f}s)")
    used = nodes.requested.sum(axis=0)
    alloc = nodes.allocatable.sum(axis=0)
    for col, name in enumerate(state.tensors.resources.items):
        if alloc[col] > 0:
            typer.echo(f"  {name:<22} {100 * used[col] / alloc[col]:5.1f}% of allocatable requested")
    busy = int((nodes.pod_count > 0).sum())
    typer.echo(f"  nodes with pods         {busy:,} of {nodes.size:,}")
    if result.unschedulable:
        typer.echo(f"unschedulable: {len(result.unschedulable):,} pods")
        counts: dict[str, int] = {}
        for message in result.unschedulable.values():
            counts[message] = counts.get(message, 0) + 1
        for message, count in sorted(counts.items(), key=lambda kv: -kv[1]):
            typer.echo(f"  {count:>7,} x {message}")
    shown = result.bindings.items() if verbose else list(result.bindings.items())[:5]
    if shown:
        typer.echo("bindings" + ("" if verbose else " (first 5; --verbose lists all)") + ":")
        for key, node in shown:
            typer.echo(f"  {key} -> {node}")
    if verbose:
        for key, message in result.unschedulable.items():
            typer.echo(f"  {key}: {message}")
    if result.pod_groups:
        typer.echo(f"pod groups: {len(result.pod_groups)}")
        for key, (status, reason, message) in sorted(result.pod_groups.items()):
            typer.echo(f"  {key}: PodGroupScheduled={status} {reason}" + (f": {message}" if message else ""))


@app.command()
def explain(
    cluster: Path = typer.Option(..., "--cluster", help="file or directory of Node/Pod/PodGroup manifests"),
    pod: Optional[Path] = typer.Option(None, "--pod", help="manifest of the pod to explain"),
    group: Optional[str] = typer.Option(None, "--group", help="namespace/name of a PodGroup in --cluster to explain"),
    config: Optional[Path] = typer.Option(None, "--config", help="KubeSchedulerConfiguration"),
    compat: str = typer.Option("1.36", "--compat"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
):
    """Per node: every filter's status and reasons, every score's raw and normalized value, the total.
    With --group: schedule the cluster's other pods, then why the PodGroup waits (quorum, or what a PodGroup
    cycle would place now and why the rest fits nowhere)."""
    from .sched.explain import explain_group, explain_pod, render_text
    if (pod is None) == (group is None):
        _fail("give exactly one of --pod and --group")
    try:
        state = Cluster.from_objects(load_paths([cluster]))
        if group is not None:
            scheduler = _scheduler(state, config, compat, "numpy", "first", 0)
            scheduler.schedule()
            try:
                report = explain_group(scheduler, group)
            except KeyError as exc:
                _fail(exc.args[0])
            typer.echo(json.dumps(report) if as_json else report["message"])
            return
        pods = load_paths([pod]).pods
        if len(pods) != 1:
            _fail(f"{pod}: expected exactly one Pod, found {len(pods)}")
        report = explain_pod(_scheduler(state, config, compat, "numpy", "first", 0), pods[0])
    except InputError as exc:
        _fail(str(exc))
    typer.echo(json.dumps(report) if as_json else render_text(report))


@app.command()
def generate(
    out: Path = typer.Option(..., "--out", help="directory to write nodes.yaml and pods.yaml into"),
    nodes: int = typer.Option(1000, "--nodes", min=1),
    pods: int = typer.Option(2000, "--pods", min=0),
    mix: str = typer.Option("basic", "--mix", help="basic, heterogeneous or gpu"),
    seed: int = typer.Option(0, "--seed"),
    gpu_fraction: float = typer.Option(0.0, "--gpu-fraction", min=0.0, max=1.0),
):
    """Write a synthetic cluster (and pending pods) as manifests."""
    from .cluster_models.generate import basic_pods, generate_nodes, gpu_mix_pods, heterogeneous_pods
    from .cluster_models.write import write_manifests
    makers = {"basic": lambda n: basic_pods(n), "heterogeneous": lambda n: heterogeneous_pods(n, seed),
              "gpu": lambda n: gpu_mix_pods(n, seed)}
    if mix not in makers:
        _fail(f"--mix: unknown mix {mix!r} (use one of {', '.join(makers)})")
    gpu = gpu_fraction if gpu_fraction or mix != "gpu" else 0.25
    node_objs = generate_nodes(nodes, seed, gpu_fraction=gpu, taint_fraction=0.02, unschedulable_fraction=0.01,
                               node_type="cpu-large" if mix == "gpu" else "basic")
    out.mkdir(parents=True, exist_ok=True)
    write_manifests(out / "nodes.yaml", node_objs)
    write_manifests(out / "pods.yaml", makers[mix](pods))
    typer.echo(f"wrote {nodes} nodes to {out / 'nodes.yaml'} and {pods} pods to {out / 'pods.yaml'}")


@app.command()
def bench(
    name: str = typer.Argument(..., help="scenario name, e.g. SchedulingBasic_5000Nodes_10000Pods"),
    backend: str = typer.Option("numpy", "--backend"),
    no_batching: bool = typer.Option(False, "--no-batching"),
    as_json: bool = typer.Option(False, "--json"),
):
    """Run one named benchmark scenario and report pods/s (scheduling time only)."""
    from .scenarios import SCENARIOS, run_scenario
    if name not in SCENARIOS:
        _fail(f"unknown scenario {name!r}; known: {', '.join(SCENARIOS)}")
    try:
        report = run_scenario(name, backend=backend, batching=not no_batching)
    except ValueError as exc:
        _fail(f"--backend: {exc}")
    if as_json:
        typer.echo(json.dumps(report))
    else:
        per_group = (f", {report['us_per_podgroup_attempt']:,.1f} us per PodGroup attempt "
                     f"({report['podgroup_attempts']} attempts)" if "podgroup_attempts" in report else "")
        typer.echo(f"{report['scenario']}: {report['pods']} pods on {report['nodes']} nodes in "
                   f"{report['seconds']:.3f}s = {report['pods_per_s']:,.0f} pods/s ({backend}){per_group}")


@app.command("demo-gang")
def demo_gang(
    workers: int = typer.Option(64, "--workers", min=2, help="workers of the first training job (1 GPU each)"),
    later_workers: int = typer.Option(40, "--later-workers", min=1, help="workers of the job arriving a minute later"),
    as_json: bool = typer.Option(False, "--json"),
):
    """A 64-worker gang on a cluster with 47 free GPUs, scheduled pod by pod and as a PodGroup."""
    from .demos import stranded_gpus
    rows = stranded_gpus(workers, later_workers)
    if as_json:
        typer.echo(json.dumps(rows))
        return
    typer.echo(f"{rows[0]['free_gpus_at_start']} free GPUs; job 'train' ({workers} x 1 GPU) arrives at t=0, "
               f"job 'finetune' ({later_workers} x 1 GPU) at t=60s")
    typer.echo(f"  {'':<11} {'train bound':>12} {'finetune bound':>15} {'stranded GPUs':>14} {'free GPUs':>10}")
    for r in rows:
        typer.echo(f"  {r['way']:<11} {r['train_bound']:>12} {r['finetune_bound']:>15} {r['stranded_gpus']:>14} "
                   f"{r['free_gpus_at_end']:>10}")
    typer.echo(rows[1]["train_waits_because"])


def main() -> None:  # pragma: no cover - console entry
    sys.exit(app())
