"""The `phalanx` command: schedule, explain, generate, bench, simulate, demo-gang, demo-preemption, trace."""
from __future__ import annotations

import dataclasses
import gc
import importlib.util
import json
import math
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

import typer
from typer.core import TyperGroup
from pydantic import ValidationError

from .cluster_models import InputError, load_paths
from .cluster_models.errors import validation_problem
from .cluster_models.objects import label_key_problem
from .cluster_models.load import cyclic_gc_paused
from .sched import Cluster, Scheduler
from .sched.config import COMPAT_VERSIONS, default_config, load_config, parse_gates
from .sched.config import feature_gates as check_gates
from .sched.scheduler import TIE_BREAKS



# click's exceptions as typer raises them (typer vendors click as typer._click since 0.29, so the `click` package's
# classes are not the ones raised): the module of typer.BadParameter.
_clicks = importlib.import_module(typer.BadParameter.__module__)


class _OneLineUsageErrors(TyperGroup):
    """Every command's usage errors (a bad option value, a missing or unknown option or argument, an unknown
    command) as one line on stderr, `error: phalanx <cmd>: --option: message`, exit code 2, instead of typer's boxed
    usage text. They all pass through the root group: its own parsing (make_context) and its invoke, which parses
    and runs the subcommand."""

    def make_context(self, *args, **kwargs):
        try:
            return super().make_context(*args, **kwargs)
        except _clicks.UsageError as exc:
            _usage_error(exc)

    def resolve_command(self, ctx, args):
        name, cmd, rest = super().resolve_command(ctx, args)
        ctx.meta[_COMMAND] = name           # for the errors of its parsing, whose ctx the parser leaves unset
        return name, cmd, rest

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except _clicks.UsageError as exc:
            _usage_error(exc, ctx.meta.get(_COMMAND))


_COMMAND = "phalanx.command"


def _usage_error(exc, command: str | None = None):
    if isinstance(exc, _clicks.NoArgsIsHelpError):      # `phalanx` alone: its help, as typer shows it
        raise exc
    names, ctx = [], exc.ctx
    while ctx is not None and ctx.parent is not None:
        names.append(ctx.info_name)
        ctx = ctx.parent
    if exc.ctx is None and command:
        names = [command]
    where = " ".join(["phalanx", *reversed(names)])
    param = getattr(exc, "param", None)
    if isinstance(exc, _clicks.BadParameter) and not isinstance(exc, _clicks.MissingParameter) and param is not None:
        name = param.opts[0] if param.param_type_name == "option" else (param.name or "").upper()
        message = f"{name}: {exc.message}"
    else:
        message = exc.format_message()
    typer.echo(f"error: {where}: {' '.join(message.split())}", err=True)     # as the other errors (fail)
    raise typer.Exit(exc.exit_code)


app = typer.Typer(add_completion=False, no_args_is_help=True, cls=_OneLineUsageErrors,
                  help="Exact, vectorised Kubernetes scheduling (kube-scheduler v1.36 semantics).")

from .kernels.backend import CHOICES as BACKENDS, BackendUnavailable   # numpy, jax, cupy, auto


def _print_version(value: bool) -> None:
    if value:
        from . import __version__
        typer.echo(f"phalanx {__version__} (kube-scheduler v1.36 semantics)")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                      help="print the version and exit")) -> None:
    """Exact, vectorised Kubernetes scheduling (kube-scheduler v1.36 semantics)."""


@contextmanager
def _progress(total: int | None, unit: str, desc: str):
    """A progress bar on stderr while the block runs, only when stderr is a terminal; yields its update(n), or
    None (no bar)."""
    if not sys.stderr.isatty():
        yield None
        return
    from tqdm import tqdm
    with tqdm(total=total, unit=unit, desc=desc, file=sys.stderr, leave=False, mininterval=0.5) as bar:
        yield bar.update


def _load(paths, strict: bool = False):
    """load_paths with a progress bar of the documents read (on a terminal)."""
    with _progress(None, "objects", "loading") as update:
        return load_paths(paths, strict=strict, progress=update)


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def _config(config: Optional[Path], compat: str, feature_gates: str, percentage: Optional[int] = None):
    """The KubeSchedulerConfiguration of --config (every profile) or the default one, with --feature-gates, and
    with every profile's percentageOfNodesToScore set to `percentage` when given."""
    if compat not in COMPAT_VERSIONS:
        _fail(f"--compat: unsupported version {compat!r} (use one of {', '.join(COMPAT_VERSIONS)})")
    gates = parse_gates(feature_gates)
    check_gates(gates, "--feature-gates")          # a flag error names the flag, not the config file
    out = load_config(config, compat, gates) if config else default_config(compat, gates)
    if percentage is None:
        return out
    return dataclasses.replace(out, profiles=tuple(dataclasses.replace(p, percentage_of_nodes_to_score=percentage)
                                                   for p in out.profiles))


def _scheduler(cluster, config, compat, backend, tie_break, seed, batching=True, feature_gates="",
               preemption=True, topology_preemption=False, incremental=True,
               percentage: Optional[int] = None) -> Scheduler:
    if backend not in BACKENDS:
        _fail(f"--backend: unknown backend {backend!r} (use one of {', '.join(BACKENDS)})")
    if tie_break not in TIE_BREAKS:
        _fail(f"--tie-break: unknown tie-break {tie_break!r} (use one of {', '.join(TIE_BREAKS)})")
    scheduler_config = _config(config, compat, feature_gates, percentage)     # its errors name the config file
    try:
        return Scheduler(cluster, scheduler_config, backend=backend, tie_break=tie_break, seed=seed,
                         batching=batching, preemption=preemption, topology_preemption=topology_preemption,
                         incremental=incremental)
    except BackendUnavailable as exc:
        _fail(f"--backend: {exc}")


GATES_HELP = "feature gates, e.g. TaintTolerationComparisonOperators=true (as kube-scheduler's --feature-gates)"


@app.command()
def schedule(
    cluster: list[Path] = typer.Option(..., "--cluster", "-f", help="file or directory of manifests (Nodes, Pods, "
                                                                    "controllers, ...); repeatable, as kubectl's -f"),
    pods: Optional[Path] = typer.Option(None, "--pods", help="more pending pods (file or directory)"),
    config: Optional[Path] = typer.Option(None, "--config", help="KubeSchedulerConfiguration (every profile: a pod "
                                                                 "goes to the one its spec.schedulerName names)"),
    feature_gates: str = typer.Option("", "--feature-gates", help=GATES_HELP),
    compat: str = typer.Option("1.36", "--compat", help="Kubernetes version whose formulas to use: 1.36 or 1.35"),
    backend: str = typer.Option("numpy", "--backend", help="numpy, jax, cupy or auto (numpy, with all-distinct "
                                "pods handed to JAX, on a GPU when present, when measured faster)"),
    tie_break: str = typer.Option("first", "--tie-break", help="first (lowest node index) or random (seeded)"),
    seed: int = typer.Option(0, "--seed", min=0, help="seed for --tie-break random"),
    no_batching: bool = typer.Option(False, "--no-batching", help="schedule identical pods one at a time"),
    no_incremental: bool = typer.Option(False, "--no-incremental", help="evaluate every node for every run (do not "
                                                                        "keep shapes' results between their runs)"),
    no_preemption: bool = typer.Option(False, "--no-preemption",
                                       help="never evict pods (as profiles without DefaultPreemption)"),
    percentage: Optional[int] = typer.Option(None, "--percentage-of-nodes-to-score", min=0, max=100,
                                             help="every profile's percentageOfNodesToScore, over --config's (0: "
                                                  "upstream's adaptive sampling, what a config without it gets; "
                                                  "default: --config's, else 100, every node)"),
    topology_preemption: bool = typer.Option(False, "--topology-preemption",
                                             help="beyond v1.36: PodGroups with a topology constraint preempt in "
                                                  "the domain whose victims cost least (v1.36 refuses them)"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object (as -o json)"),
    output: str = typer.Option("", "--output", "-o", help="json, yaml (the --json object) or wide (every binding "
                                                          "and every unschedulable pod)"),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="list every binding and every unschedulable pod"),
    strict: bool = typer.Option(False, "--strict", help="a field the Kubernetes API does not have is an error "
                                                        "(kubectl --validate=strict), not a warning"),
):
    """Schedule every pending pod found and report bindings, preemptions and unschedulable pods."""
    if output not in ("", "json", "yaml", "wide"):
        _fail(f"--output: unknown format {output!r} (use json, yaml or wide)")
    try:
        t0 = time.perf_counter()
        # The objects made here live until the command exits: made with the cyclic collector off, and out of its
        # reach (gc.freeze) before it is on again, or its passes would walk millions of them, the first one right
        # after loading (100,000 pods: Cluster.from_objects 1.02 -> 0.51 s, scheduling 1.13 -> 0.91 s).
        with cyclic_gc_paused():
            state = Cluster.from_objects(_load([*cluster, *([pods] if pods else [])], strict))
            gc.freeze()
        load_s = time.perf_counter() - t0
        scheduler = _scheduler(state, config, compat, backend, tie_break, seed, not no_batching,
                               feature_gates, not no_preemption, topology_preemption, not no_incremental, percentage)
        with _progress(len(state.pending), "pods", "scheduling") as update:
            scheduler.on_attempt = update
            result = scheduler.schedule()
    except InputError as exc:
        _fail(str(exc))
    timing = {"load_s": round(load_s, 6), "schedule_s": round(result.schedule_s, 6)}
    if result.compiles:       # JAX: programs compiled in this run, and the part of schedule_s that took
        timing.update(compiles=result.compiles, compile_s=round(result.compile_s, 6))
    for w in result.warnings:
        typer.echo(f"warning: {w}", err=True)
    if as_json or output in ("json", "yaml"):
        report = {"bindings": result.bindings, "unschedulable": result.unschedulable,
                  "preemptions": result.preemptions, "unserved": result.unserved,
                  "pod_groups": {k: dict(zip(("status", "reason", "message"), v)) for k, v in result.pod_groups.items()},
                  "allocations": result.allocations, "warnings": result.warnings, "timing": timing}
        if output == "yaml":
            import yaml
            typer.echo(yaml.safe_dump(report, sort_keys=False), nl=False)
        else:
            typer.echo(json.dumps(report))
        return
    _summary(state, result, load_s, verbose or output == "wide")


def _summary(state: Cluster, result, load_s: float, verbose: bool) -> None:
    """Human summary: how many pods went where, how full the nodes are, why the rest wait."""
    nodes = state.tensors.nodes
    total = len(result.bindings) + len(result.unschedulable)
    rate = f", {total / result.schedule_s:,.0f} pods/s" if result.schedule_s else ""
    compiled = (f"; compiled {result.compiles} device programs in {result.compile_s:.2f}s, included"
                if result.compiles else "")
    typer.echo(f"scheduled {len(result.bindings):,} of {total:,} pending pods on {nodes.size:,} nodes "
               f"in {result.schedule_s:.3f}s{rate} (load {load_s:.2f}s{compiled})")
    used = nodes.requested.sum(axis=0)
    alloc = nodes.allocatable.sum(axis=0)
    for col, name in enumerate(state.tensors.resources.items):
        if alloc[col] > 0:
            typer.echo(f"  {name:<22} {100 * used[col] / alloc[col]:5.1f}% of allocatable requested")
    busy = int((nodes.pod_count > 0).sum())
    typer.echo(f"  nodes with pods         {busy:,} of {nodes.size:,}")
    if result.preemptions:
        evicted = sum(len(p["victims"]) for p in result.preemptions)
        typer.echo(f"preemptions: {len(result.preemptions):,}, {evicted:,} pods evicted")
        for p in result.preemptions if verbose else result.preemptions[:5]:
            where = p["node"] if p["kind"] == "Pod" else f"{len(p['nominated'])} members nominated"
            typer.echo(f"  {p['kind']} {p['preemptor']} -> {where}: evicted {', '.join(p['victims']) or 'nothing new'}")
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


def _pod_to_explain(pod: str, state: Cluster):
    """--pod: a manifest file with one Pod, or "namespace/name" (or "name" in default) of a pod in --cluster."""
    if Path(pod).is_file():
        pods = load_paths([pod], priority_classes=state.priority_classes.values()).pods   # may name --cluster's
        if len(pods) != 1:
            _fail(f"{pod}: expected exactly one Pod, found {len(pods)}")
        return pods[0]
    key = pod if "/" in pod else f"default/{pod}"
    found = next((p for p in state.pending if p.key == key), None) or next(
        (p for p, _ in state.tensors.live_bound() if p.key == key), None)
    if found is None:
        _fail(f"--pod: {pod!r} is neither a manifest file nor a pod of --cluster")
    return found


def _groups_to_explain(group: str, scheduler: Scheduler) -> list[str]:
    """--group: "namespace/name" of a PodGroup, or of a Workload (its PodGroups, in input order)."""
    key = group if "/" in group else f"default/{group}"
    if key in scheduler.groups.states:
        return [key]
    namespace, _, name = key.partition("/")
    made = [g.key for g in scheduler.cluster.pod_groups if g.metadata.namespace == namespace
            and g.spec.pod_group_template_ref is not None
            and g.spec.pod_group_template_ref.workload.workload_name == name]
    return made or [key]


@app.command()
def explain(
    cluster: list[Path] = typer.Option(..., "--cluster", "-f", help="file or directory of manifests; repeatable"),
    pod: Optional[str] = typer.Option(None, "--pod", help="manifest of the pod to explain, or namespace/name of a "
                                                          "pod in --cluster"),
    group: Optional[str] = typer.Option(None, "--group", help="namespace/name of a PodGroup (or of a Workload: "
                                                              "each of its PodGroups) in --cluster"),
    config: Optional[Path] = typer.Option(None, "--config", help="KubeSchedulerConfiguration (the pod's profile by "
                                                                 "its spec.schedulerName)"),
    feature_gates: str = typer.Option("", "--feature-gates", help=GATES_HELP),
    compat: str = typer.Option("1.36", "--compat"),
    all_nodes: bool = typer.Option(False, "--all-nodes", help="one line per node instead of a summary"),
    strict: bool = typer.Option(False, "--strict", help="a field the Kubernetes API does not have is an error"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
):
    """Why a pod lands where it lands: the chosen node, the best-scored nodes and why the others were rejected
    (--all-nodes: every filter's reasons and every score, node by node).
    With --group: schedule the cluster's other pods, then why the PodGroup waits (quorum, or what a PodGroup
    cycle would place now and why the rest fits nowhere)."""
    from .sched.explain import explain_group, explain_pod, render_preemption, render_text
    if (pod is None) == (group is None):
        _fail("give exactly one of --pod and --group")
    try:
        state = Cluster.from_objects(_load(cluster, strict))
        if group is not None:
            scheduler = _scheduler(state, config, compat, "numpy", "first", 0, feature_gates=feature_gates)
            scheduler.schedule()
            reports = []
            for key in _groups_to_explain(group, scheduler):
                try:
                    reports.append(explain_group(scheduler, key))
                except KeyError as exc:
                    _fail(exc.args[0])
            if as_json:
                typer.echo(json.dumps(reports[0] if len(reports) == 1 else reports))
                return
            for report in reports:
                preemption = render_preemption(report["preemption"]) if "preemption" in report else []
                typer.echo("\n".join([report["message"], *preemption]))
            return
        target = _pod_to_explain(pod, state)
        queued = [p for p in state.pending if p is not target]
        state.pending = []                     # explained against the others' nodes, not scheduled beside them
        scheduler = _scheduler(state, config, compat, "numpy", "first", 0, feature_gates=feature_gates)
        # Into the queue without a cycle, after the others (a gang's quorum counts them): does PreEnqueue hold it?
        scheduler.add_pods(queued)
        waiting = None
        if not target.spec.node_name and not scheduler.knows(target.key):
            scheduler.add_pods([target])
            waiting = scheduler.pending_message.get(target.key)
        report = explain_pod(scheduler, target, waiting)
    except InputError as exc:
        _fail(str(exc))
    typer.echo(json.dumps(report) if as_json else render_text(report, all_nodes))


@app.command()
def generate(
    out: Path = typer.Option(..., "--out", help="directory to write nodes.yaml and pods.yaml into"),
    nodes: int = typer.Option(1000, "--nodes", min=1),
    pods: int = typer.Option(2000, "--pods", min=0),
    mix: str = typer.Option("basic", "--mix", help="basic, heterogeneous, gpu or kube (four shapes interleaved in "
                                                   "runs of 4, 3, 2, 1 on 32-cpu / 8-GPU nodes)"),
    seed: int = typer.Option(0, "--seed", min=0),
    gpu_fraction: float = typer.Option(0.0, "--gpu-fraction", min=0.0, max=1.0),
    force: bool = typer.Option(False, "--force", help="write into a non-empty --out directory"),
):
    """Write a synthetic cluster (and pending pods) as manifests."""
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not force)):
        _fail(f"--out: {out} is not an empty directory" + ("" if not out.is_dir() else " (--force writes into it)"))
    from .cluster_models.generate import basic_pods, generate_nodes, gpu_mix_pods, heterogeneous_pods, kube_mix_pods
    from .cluster_models.write import write_manifests
    makers = {"basic": lambda n: basic_pods(n), "heterogeneous": lambda n: heterogeneous_pods(n, seed),
              "gpu": lambda n: gpu_mix_pods(n, seed), "kube": kube_mix_pods}
    if mix not in makers:
        _fail(f"--mix: unknown mix {mix!r} (use one of {', '.join(makers)})")
    gpu = gpu_fraction if gpu_fraction or mix != "gpu" else 0.25
    node_objs = generate_nodes(nodes, seed, gpu_fraction=gpu, taint_fraction=0.02, unschedulable_fraction=0.01,
                               node_type={"gpu": "cpu-large", "kube": "kube-mix"}.get(mix, "basic"))
    out.mkdir(parents=True, exist_ok=True)
    write_manifests(out / "nodes.yaml", node_objs)
    write_manifests(out / "pods.yaml", makers[mix](pods))
    typer.echo(f"wrote {nodes} nodes to {out / 'nodes.yaml'} and {pods} pods to {out / 'pods.yaml'}")


@app.command()
def bench(
    name: str = typer.Argument(..., help="scenario name, e.g. SchedulingBasic_5000Nodes_10000Pods"),
    backend: str = typer.Option("numpy", "--backend", help="numpy, jax, cupy or auto"),
    no_batching: bool = typer.Option(False, "--no-batching"),
    no_incremental: bool = typer.Option(False, "--no-incremental"),
    repeat: int = typer.Option(1, "--repeat", min=1, help="run the scenario this many times in one process (each "
                                                          "built afresh) and report the fastest run"),
    percentage: int = typer.Option(100, "--percentage-of-nodes-to-score", min=0, max=100,
                                   help="the default profile's percentageOfNodesToScore: 100 scores every node "
                                        "(phalanx's default), 0 is upstream's adaptive sampling (what "
                                        "kube-scheduler and scheduler_perf run with when it is left out)"),
    as_json: bool = typer.Option(False, "--json"),
):
    """Run one named benchmark scenario and report pods/s (scheduling time only)."""
    from .scenarios import SCENARIOS, run_scenario
    if name not in SCENARIOS:
        _fail(f"unknown scenario {name!r}; known: {', '.join(SCENARIOS)}")
    try:
        # The first run of a process also pays for first calls (imports, caches, JAX compiling): --repeat shows
        # the steady state, as pytest-benchmark's rounds do.
        reports = [run_scenario(name, backend=backend, batching=not no_batching, incremental=not no_incremental,
                                percentage_of_nodes_to_score=percentage) for _ in range(repeat)]
    except (ValueError, BackendUnavailable) as exc:
        _fail(f"--backend: {exc}")
    # The fastest run by its rate (from the unrounded time: two runs' rounded seconds may tie or swap).
    report = max(reports, key=lambda r: math.inf if r["pods_per_s"] is None else r["pods_per_s"])
    if repeat > 1:
        report = {**report, "runs_pods_per_s": [r["pods_per_s"] for r in reports]}
    if as_json:
        typer.echo(json.dumps(report))
    else:
        compile_note = (f"; compiled {report['compiles']} programs in {report['compile_s']:.3f}s, included above"
                        if report.get("compiles") else "")
        per_group = (f", {report['us_per_podgroup_attempt']:,.1f} us per PodGroup attempt "
                     f"({report['podgroup_attempts']} attempts)" if "podgroup_attempts" in report else "")
        best = f", fastest of {repeat} runs" if repeat > 1 else ""
        best += f", percentageOfNodesToScore {percentage}" if percentage != 100 else ""
        typer.echo(f"{report['scenario']}: {report['pods']} pods on {report['nodes']} nodes in "
                   f"{report['seconds']:.3f}s = {report['pods_per_s']:,.0f} pods/s ({report['backend']}{best})"
                   f"{per_group}{compile_note}")


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


@app.command("demo-preemption")
def demo_preemption(as_json: bool = typer.Option(False, "--json")):
    """A high-priority 8-worker gang on a full GPU cluster: workload-aware preemption (whole PodGroups) beside
    pod-by-pod preemption, with the GPU-hours each wastes."""
    from .demos import preemption_story
    rows = preemption_story()
    if as_json:
        typer.echo(json.dumps(rows))
        return
    typer.echo("4 nodes x 8 GPUs, all busy at priority 100: gangs train-a (16 workers, 6 h), train-b (8, 2 h), "
               "train-c (4, 1 h), disruptionMode PodGroup, three workers of a and b restarted minutes ago; 4 "
               "notebooks (30 min). An 8 x 1 GPU gang at priority 1000 arrives.")
    for r in rows:
        typer.echo(f"  {r['way']:<15} evicts {len(r['victims'])} pods ({', '.join(r['jobs_hit'])}); jobs broken: "
                   f"{', '.join(r['broken_jobs']) or 'none'}; GPU-hours lost: {r['gpu_hours_lost']:g}; urgent "
                   f"workers bound: {r['urgent_bound']}")


# --- phalanx trace alibaba: replay of the Alibaba GPU trace (FGD paper procedure) ------------------------------
def _check_runs(workers: int, out: Optional[Path]) -> None:
    """--workers and --out of simulate and sweep."""
    if workers < 1:
        _fail(f"--workers: must be at least 1, got {workers}")
    if out is not None and out.suffix not in (".csv", ".parquet"):
        _fail(f"--out: {out}: use a .csv or .parquet file name")
    if out is not None and not out.parent.is_dir():     # found now, not once every run is done
        _fail(f"--out: {out}: no such directory {str(out.parent)!r}")
    if out is not None and out.is_dir():
        _fail(f"--out: {out} is a directory")
    if out is not None and out.suffix == ".parquet" and importlib.util.find_spec("pyarrow") is None:
        _fail("--out: writing Parquet needs pyarrow: pip install pyarrow (or write .csv)")


@app.command()
def simulate(
    nodes: int = typer.Option(256, "--nodes", help="8-GPU nodes of the synthetic cluster (32 a rack)"),
    hours: float = typer.Option(24.0, "--hours", help="simulated time"),
    load: float = typer.Option(0.9, "--load", help="offered load: GPU-seconds asked for / GPU-seconds there are"),
    seed: int = typer.Option(0, "--seed", min=0, help="seed of the workload, the failures and the scheduler"),
    workers: int = typer.Option(1, "--workers", help="run the policies on this many local processes"),
    policy: Optional[list[str]] = typer.Option(None, "--policy", help="pod-by-pod, gang, gang-topology, "
                                               "gang-preemption, gang-permit, each optionally +<score> (e.g. "
                                               "gang+fgd; repeatable; default: the five)"),
    score: Optional[list[str]] = typer.Option(None, "--score", help="a GPU score policy (fgd, bestfit, dotprod, "
                                              "gpupacking, gpuclustering, random) as the only Score plugin: "
                                              "each policy runs also with it (repeatable)"),
    node_failures_per_day: float = typer.Option(0.0, "--node-failures-per-day",
                                                help="failures per node per day (a node comes back after "
                                                     "--repair-hours)"),
    repair_hours: float = typer.Option(1.0, "--repair-hours"),
    autoscale_nodes: int = typer.Option(0, "--autoscale-nodes", help="an autoscaler may add up to this many nodes "
                                        "(copies of the cluster's largest GPU node; 0: none)"),
    provision_minutes: float = typer.Option(10.0, "--provision-minutes", help="autoscaler: from asking to joining"),
    scale_down_minutes: float = typer.Option(10.0, "--scale-down-minutes",
                                             help="autoscaler: an added node empty this long is removed"),
    permit_timeout: float = typer.Option(300.0, "--permit-timeout", help="seconds a gang waits at Permit "
                                         "(the gang-permit policy)"),
    trace: Optional[str] = typer.Option(None, "--trace", help="replay an Alibaba pod list CSV in time instead of "
                                        "the synthetic workload (a bare name is looked up in --data-dir)"),
    trace_nodes: str = typer.Option("openb_node_list_gpu_node.csv", "--trace-nodes", help="the trace's node list"),
    trace_day: float = typer.Option(130.0, "--trace-day", help="where the trace window starts, in days"),
    clones: int = typer.Option(1, "--clones", help="each trace pod arrives this many times (more load)"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="trace directory (default: $PHALANX_DATA, "
                                            "else shared/data/alibaba-gpu-v2023 next to the repository)"),
    out: Optional[Path] = typer.Option(None, "--out", help="write one row per run: .csv, or .parquet (pyarrow)"),
    plot: Optional[Path] = typer.Option(None, "--plot", help="write utilization, pending-time CDF and rack "
                                        "fragmentation plots to this directory (needs matplotlib)"),
    checkpoint_dir: Optional[Path] = typer.Option(None, "--checkpoint-dir", help="save each run's state in this "
                                                  "directory (<scenario>-<policy>-seed<seed>.json.gz) every "
                                                  "--checkpoint-every simulated hours; --resume goes on from one"),
    checkpoint_every: float = typer.Option(1.0, "--checkpoint-every", help="simulated hours between checkpoints"),
    resume: Optional[list[Path]] = typer.Option(None, "--resume", help="go on with a run saved in this checkpoint "
                                                "file to its end (repeatable); the cluster, workload, policy and "
                                                "options are the checkpoint's, and the other workload options are "
                                                "not read"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
):
    """Simulate a day of training, inference and batch jobs arriving on a GPU cluster (or a window of the Alibaba
    trace) under each policy, and compare: utilization, GPU-hours by state (held by incomplete gangs, stranded by
    fragmentation), preemption cost, pending times, the simulator's own speed."""
    from .simulate import POLICIES
    from .simulate.engine import SCORES, policy_named
    from .simulate.sweep import Scenario, checkpoint_name, run_many, simulate_one
    if not checkpoint_every > 0:
        _fail(f"--checkpoint-every: must be > 0 hours, got {checkpoint_every:g}")
    if checkpoint_dir is not None:
        if checkpoint_dir.exists() and not checkpoint_dir.is_dir():
            _fail(f"--checkpoint-dir: {checkpoint_dir} is not a directory")
        checkpoint_dir.mkdir(parents=True, exist_ok=True)
    _check_runs(workers, out)
    if plot is not None and plot.exists() and not plot.is_dir():      # found now, not after the runs
        _fail(f"--plot: {plot} is not a directory")
    if plot is not None and importlib.util.find_spec("matplotlib") is None:
        _fail("--plot: needs matplotlib: pip install 'phalanx[viz]'")
    if resume:
        _resume_runs(resume, checkpoint_dir, checkpoint_every * 3600, workers, out, plot, as_json)
        return
    for name in score or []:
        if name not in SCORES:
            _fail(f"--score: unknown score policy {name!r} (use one of {', '.join(SCORES)})")
    names = policy or list(POLICIES)
    names = names + [f"{name}+{s}" for s in score or [] for name in names if "+" not in name]
    for name in names:
        try:
            policy_named(name)
        except ValueError as exc:
            _fail(f"--policy: {exc}")
    if nodes < 1:
        _fail(f"--nodes: must be at least 1, got {nodes}")
    if node_failures_per_day < 0 or not repair_hours > 0:
        _fail("--node-failures-per-day must be >= 0 and --repair-hours > 0")
    if autoscale_nodes < 0 or not provision_minutes >= 0 or not scale_down_minutes > 0 or not permit_timeout > 0:
        _fail("--autoscale-nodes and --provision-minutes must be >= 0, --scale-down-minutes and --permit-timeout > 0")
    if not hours > 0 or not 0 < load <= 10 or clones < 1:
        _fail("--hours must be > 0, --load in (0, 10], --clones at least 1")
    try:
        scenario = Scenario(hours=hours, nodes=None if trace else nodes, load=load, trace=trace,
                            trace_nodes=trace_nodes, data_dir=str(data_dir) if data_dir else None, day=trace_day,
                            clones=clones, node_failures_per_day=node_failures_per_day, repair_hours=repair_hours,
                            autoscale_nodes=autoscale_nodes, provision_minutes=provision_minutes,
                            scale_down_minutes=scale_down_minutes, permit_timeout=permit_timeout)
    except ValidationError as exc:           # a field is its option's name ("day": --trace-day)
        err = exc.errors(include_url=False)[0]
        field = str(err["loc"][0]) if err["loc"] else ""
        _fail(f"--{'trace-day' if field == 'day' else field.replace('_', '-')}: {err['msg']} (got {err['input']})")
    try:
        cluster, jobs, what = scenario.build(seed)          # here first: bad input fails before any run
        runs = [{"scenario": scenario.model_dump(), "policy": name, "seed": seed} for name in names]
        if checkpoint_dir is not None:
            for run in runs:
                run["checkpoint"] = {"path": str(checkpoint_dir / checkpoint_name(run)),
                                     "every_s": checkpoint_every * 3600}
        with _progress(len(runs), "runs", "simulate") as update:
            results = run_many(runs, simulate_one, workers, on_done=(lambda: update(1)) if update else None)
    except (InputError, ValueError) as exc:
        _fail(str(exc))
    gpus = sum(int(n.status.allocatable.get("nvidia.com/gpu", "0")) for n in cluster)
    header = f"{len(jobs):,} jobs over {hours:g} h on {len(cluster):,} nodes ({gpus:,} GPUs), {what}, seed {seed}"
    _report_runs(results, header, {"jobs": len(jobs)}, out, plot, as_json)


def _report_runs(results, header: str, extra: dict, out: Optional[Path], plot: Optional[Path],
                 as_json: bool) -> None:
    """simulate's output: the comparison table (or one JSON object), the rows and plots written."""
    from .simulate.report import comparison_table, plot as plot_results, write_rows
    rows = [r.row() for r in results]
    if out is not None:
        write_rows(rows, out)
    written = plot_results(results, plot) if plot is not None else []
    if as_json:
        typer.echo(json.dumps({**extra, "runs": rows, "plots": [str(p) for p in written]}))
        return
    typer.echo(header)
    typer.echo(comparison_table(rows))
    for path in written + ([out] if out is not None else []):
        typer.echo(f"wrote {path}")


def _resume_runs(files: list[Path], checkpoint_dir: Optional[Path], every_s: float, workers: int,
                 out: Optional[Path], plot: Optional[Path], as_json: bool) -> None:
    """simulate --resume: each checkpoint's run goes on to its end; saving again to --checkpoint-dir if given."""
    from .simulate.checkpoint import CheckpointError, read
    from .simulate.sweep import run_many, simulate_one
    runs, lines = [], []
    for path in files:
        try:
            doc = read(path)
        except CheckpointError as exc:
            _fail(f"--resume: {exc}")
        inputs = doc["inputs"]
        lines.append(f"{path}: {inputs['policy']}, seed {inputs['seed']}, {len(inputs['nodes']):,} nodes, "
                     f"{len(inputs['jobs']):,} jobs, resumed at {doc['simulation']['reached'] / 3600:g} h of "
                     f"{inputs['hours']:g} h")
        run = {"resume": str(path)}
        if checkpoint_dir is not None:
            run["checkpoint"] = {"path": str(checkpoint_dir / path.name), "every_s": every_s}
        runs.append(run)
    try:
        with _progress(len(runs), "runs", "simulate") as update:
            results = run_many(runs, simulate_one, workers, on_done=(lambda: update(1)) if update else None)
    except (InputError, ValueError) as exc:
        _fail(str(exc))
    _report_runs(results, "\n".join(lines), {"resumed": [str(p) for p in files]}, out, plot, as_json)


@app.command()
def sweep(
    config: Path = typer.Argument(..., help="sweep config (YAML): scenarios, policies, seeds"),
    workers: int = typer.Option(1, "--workers", help="local processes (1: one run after another)"),
    ray: Optional[str] = typer.Option(None, "--ray", help="run on Ray: 'local' starts one here, or a cluster "
                                      "address (needs the dist extra)"),
    out: Optional[Path] = typer.Option(None, "--out", help="write the merged rows: .csv, or .parquet (pyarrow)"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
):
    """Run scenarios × policies × seeds of the simulator (each a pure function of them) and merge the rows."""
    from .simulate.report import comparison_table, write_rows
    from .simulate.sweep import load_sweep, run_many
    _check_runs(workers, out)
    try:
        cfg = load_sweep(config)
        with _progress(len(cfg.runs()), "runs", "sweep") as update:
            rows = run_many(cfg.runs(), workers=workers, ray_address=ray,
                            on_done=(lambda: update(1)) if update else None)
    except InputError as exc:
        _fail(str(exc))
    if out is not None:
        write_rows(rows, out)
    if as_json:
        typer.echo(json.dumps({"runs": rows}))
        return
    typer.echo(comparison_table(rows))
    if out is not None:
        typer.echo(f"wrote {out}")


def _probe_pod(shape: Optional[str], pod: Optional[str], state: Cluster):
    """--shape "cpu=8,memory=64Gi,nvidia.com/gpu=8" (a pod requesting that, tolerating GPU taints) or --pod."""
    from .cluster_models.generate import pod_template
    from .cluster_models.objects import ResourceRequirements, resource_list_problem
    if (shape is None) == (pod is None):
        _fail("give exactly one of --shape and --pod")
    if pod is not None:
        return _pod_to_explain(pod, state), pod
    requests = {}
    for part in shape.split(","):
        name, eq, amount = part.strip().partition("=")
        if not eq or not name or not amount:
            _fail(f"--shape: expected name=quantity[,name=quantity...] (got {part.strip()!r})")
        if name.strip() in requests:
            _fail(f"--shape: {name.strip()} given twice")
        requests[name.strip()] = amount.strip()
    template = pod_template("0", "0", tolerate_gpu=True)
    container = template.spec.containers[0]
    try:
        resources = ResourceRequirements.model_validate({"requests": requests})
    except ValidationError as exc:
        _fail(f"--shape: {validation_problem(exc)}")
    problem = resource_list_problem(resources.requests, "requests")    # what a pod's container may ask for
    if problem is not None:
        _fail(f"--shape: {problem}")
    spec = template.spec.model_copy(update={"containers": [container.model_copy(update={"resources": resources})]})
    return template.model_copy(update={"spec": spec}), shape


@app.command()
def capacity(
    cluster: list[Path] = typer.Option(..., "--cluster", "-f", help="file or directory of manifests; repeatable"),
    shape: Optional[str] = typer.Option(None, "--shape", help='requests of one pod, e.g. "cpu=8,memory=64Gi,'
                                        'nvidia.com/gpu=8"'),
    pod: Optional[str] = typer.Option(None, "--pod", help="or a pod manifest / namespace/name of a pod in --cluster"),
    count: int = typer.Option(1, "--count", "-n", help="copies that must be placed together"),
    topology_key: Optional[str] = typer.Option(None, "--topology-key", help="all copies inside one domain of this "
                                               "node label (e.g. topology.phalanx.dev/rack)"),
    evict: Optional[list[str]] = typer.Option(None, "--evict", help="namespace/name of a pod or PodGroup to evict "
                                              "first (repeatable): which pending PodGroups would fit then"),
    config: Optional[Path] = typer.Option(None, "--config", help="KubeSchedulerConfiguration"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
):
    """Can COUNT copies of a pod shape be placed now (inside one domain of --topology-key, or anywhere)? Where,
    and if not how many fit per domain and what binds; free GPUs in domains where no pending PodGroup fits; with
    --evict, which pending PodGroups the evictions would let in."""
    from .sched.capacity import answer, pending_groups, stranded_gpus
    if count < 1:
        _fail(f"--count: must be at least 1, got {count}")
    if count > 2**31 - 1:                       # a PodGroup's minCount is an int32
        _fail(f"--count: must be at most 2147483647, got {count}")
    if topology_key is not None and label_key_problem(topology_key) is not None:
        _fail(f"--topology-key: {label_key_problem(topology_key)}")
    try:
        objects = _load(cluster)
        state = Cluster.from_objects(objects)
        if topology_key is not None and not any(topology_key in n.metadata.labels for n in state.nodes):
            _fail(f'--topology-key: no node of --cluster has the label "{topology_key}"')
        probe, describe = _probe_pod(shape, pod, state)
        if probe in state.pending:
            state.pending.remove(probe)
        scheduler = _scheduler(state, config, "1.36", "numpy", "first", 0)
        result = answer(scheduler, probe, count, topology_key, describe)
        groups = pending_groups(scheduler, topology_key)
        stranded = stranded_gpus(scheduler, groups, topology_key)
        after = None
        if evict:
            evicted = set(evict)
            groups_of = {p.key: f"{p.metadata.namespace}/{p.spec.scheduling_group.pod_group_name}"
                         for p in objects.pods if p.spec.scheduling_group is not None}
            kept = [p for p in objects.pods if not (p.key in evicted or groups_of.get(p.key) in evicted)]
            unknown = sorted(evicted - {p.key for p in objects.pods} - set(groups_of.values())
                             - {g.key for g in objects.pod_groups})
            if unknown:                   # each name must evict something: a typo is not an eviction of nothing
                _fail(f"--evict: {', '.join(unknown)}: not a pod or PodGroup of --cluster")
            import dataclasses
            freed = Cluster.from_objects(dataclasses.replace(objects, pods=kept))
            before = {g.group for g in groups if g.domains}
            after = [g for g in pending_groups(_scheduler(freed, config, "1.36", "numpy", "first", 0), topology_key)
                     if g.domains and g.group not in before]
    except InputError as exc:
        _fail(str(exc))
    if as_json:
        out = result.to_json()
        out["pending_groups"] = [g.__dict__ for g in groups]
        out["stranded_gpus"] = stranded
        if after is not None:
            out["fit_after_eviction"] = [g.group for g in after]
        typer.echo(json.dumps(out))
        return
    typer.echo(result.summary())
    if groups:
        typer.echo("pending PodGroups:")
        for g in groups:
            where = ("fit in " + ", ".join(g.domains[:5]) + (" ..." if len(g.domains) > 5 else "")
                     if g.domains else "fit nowhere now")
            typer.echo(f"  {g.group}: {g.needed} more member{'s' if g.needed > 1 else ''} {where}")
    if stranded:
        typer.echo(f"free GPUs where no pending PodGroup fits: {sum(stranded.values()):,} in {len(stranded)} "
                   f"domain{'s' if len(stranded) > 1 else ''}")
    if after is not None:
        typer.echo("after the evictions these pending PodGroups would fit: "
                   + (", ".join(g.group for g in after) or "none"))


trace_app = typer.Typer(no_args_is_help=True, help="Replay cluster traces (GPU allocation experiments).")
app.add_typer(trace_app, name="trace")


@trace_app.command("alibaba")
def trace_alibaba(
    pods: str = typer.Option(..., "--pods", help="pod list CSV: a bare name is looked up in --data-dir"),
    nodes: str = typer.Option("openb_node_list_gpu_node.csv", "--nodes", help="node list CSV (GPU nodes)"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="trace directory (default: $PHALANX_DATA, "
                                            "else shared/data/alibaba-gpu-v2023 next to the repository)"),
    policy: str = typer.Option("fgd", "--policy", help="random, dotprod, gpuclustering, gpupacking, bestfit, fgd"),
    seed: int = typer.Option(42, "--seed", min=0, help="seed of the shuffle, the clones and random choices"),
    seeds: Optional[str] = typer.Option(None, "--seeds", help="several seeds (0-9 or 1,5,7): print a table"),
    all_policies: bool = typer.Option(False, "--all-policies", help="every policy: print a table"),
    tie_break: str = typer.Option("perm", "--tie-break",
                                   help="perm (one seeded node order, as the simulator), name or random"),
    csv_out: Optional[Path] = typer.Option(None, "--csv", help="write one row per arriving pod to this CSV"),
    plot: Optional[Path] = typer.Option(None, "--plot", help="write the allocation curve (PNG/PDF; needs matplotlib)"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
):
    """The FGD paper's experiment: GPU nodes, shuffled arrivals inflated to 130% of GPU capacity, one pod at a
    time, no departures; GPU allocation ratio against arrived GPU demand."""
    from . import trace_runs
    if plot is not None and importlib.util.find_spec("matplotlib") is None:    # before minutes of replay, not after
        _fail("--plot: needs matplotlib: pip install 'phalanx[viz]'")
    try:
        node_list, pod_list = trace_runs.load(pods, nodes, str(data_dir) if data_dir else None)
        trace = Path(pods).name.removesuffix(".csv")
        if seeds is not None or all_policies:
            seed_list = trace_runs.parse_seeds(seeds) if seeds is not None else [seed]
            policies = trace_runs.POLICIES if all_policies else (policy,)
            for p in policies:
                if p not in trace_runs.POLICIES:
                    _fail(f"--policy: unknown policy {p!r} (use one of {', '.join(trace_runs.POLICIES)})")
            with _progress(len(policies) * len(seed_list), "replays", "trace") as update:
                rows, text = trace_runs.table(node_list, pod_list, trace, policies, seed_list, tie_break,
                                              (lambda: update(1)) if update else None)
            typer.echo(json.dumps({"trace": trace, "rows": rows}) if as_json else
                       f"unallocated GPU % at 100% arrived GPU demand, {trace}, seeds {seeds or seed}\n{text}")
            return
        from .simulate.alibaba import replay
        result = replay(node_list, pod_list, policy, seed, trace=trace, tie_break=tie_break)
    except InputError as exc:
        _fail(str(exc))
    if csv_out is not None:
        trace_runs.write_csv(result, pod_list, csv_out)
    if plot is not None:
        message = trace_runs.write_plot([result], plot)
        if message:
            typer.echo(message, err=True)
    if as_json:
        typer.echo(json.dumps(trace_runs.result_json(result)))
        return
    curve = result.alloc_by_arrival()
    typer.echo(f"{trace} / {policy} / seed {seed}: {result.pods:,} pods arrived, {result.placed:,} placed on "
               f"{len(node_list.names):,} nodes ({node_list.gpus.size:,} GPUs) in {result.seconds:.2f}s")
    for k in ("50", "80", "90", "100", "110", "130"):
        if k in curve:
            typer.echo(f"  arrived {k:>3}% of GPU capacity: {curve[k]:6.2f}% allocated")


def main() -> None:  # pragma: no cover - console entry
    sys.exit(app())
