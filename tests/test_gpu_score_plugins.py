"""The GPU score policies as Score plugins (plugins/*_score.py over plugins/gpu_scoring.py): each against the plain
per-node reference (tests/reference/gpus.py) on random clusters, a hand-checked toy per policy, selection through
a KubeSchedulerConfiguration, bad args, batched runs equal to pod-by-pod ones, and the simulator with a score
policy."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from reference import gpus as ref
from strategies import make_node, make_pod
from typer.testing import CliRunner

from phalanx.cli import app
from phalanx.cluster_models import ClusterObjects, InputError
from phalanx.cluster_models.write import write_manifests
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.config import config_from_doc
from phalanx.simulate.engine import Simulation, policy_named
from phalanx.simulate.workload import JobSpec

PRODUCT = "nvidia.com/gpu.product"
MODELS = ("A", "B")
DETERMINISTIC = ("FGDScore", "BestFitScore", "DotProductScore", "GpuPackingScore", "GpuClusteringScore")
runner = CliRunner()


def gnode(name, gpus, model="A", cpu=32):
    return make_node(name, cpu=str(cpu), memory="64Gi", gpu=gpus, labels={PRODUCT: model} if gpus else {})


def gpod(name, cpu_milli, count=0, milli=0, models=(), node_name="", memory="1Gi"):
    pod = make_pod(name, cpu=f"{cpu_milli}m", memory=memory, node_name=node_name)
    if count:
        ann = {"alibabacloud.com/gpu-count": str(count), "alibabacloud.com/gpu-milli": str(milli)}
        if models:
            ann["alibabacloud.com/gpu-card-model"] = "|".join(models)
        pod.metadata.annotations.update(ann)
    return pod


def profile(scores, typical=None, filters=("NodeResourcesFit", "GpuShare"), pre_score=()):
    """A configuration with these Filters, GpuShare's Reserve and the Score plugins `scores` (weight 1)."""
    only = lambda names: {"enabled": [{"name": n} for n in names]}      # noqa: E731
    prof = {"schedulerName": "default-scheduler", "plugins": {
        "multiPoint": {"disabled": [{"name": "*"}]}, "queueSort": only(["PrioritySort"]),
        "preFilter": only(filters), "filter": only(filters), "reserve": only(["GpuShare"]),
        "bind": only(["DefaultBinder"]), "preScore": only(pre_score),
        "score": {"enabled": [{"name": n, "weight": 1} for n in scores]}}}
    if typical is not None:
        prof["pluginConfig"] = [{"name": "FGDScore", "args": {"typicalPods": typical}}]
    return config_from_doc({"kind": "KubeSchedulerConfiguration", "percentageOfNodesToScore": 100,
                            "profiles": [prof]})


def typical_args(typ):
    return [{"cpuMilli": c, "gpuMilli": m, "gpuCount": k, "gpuModels": s, "frequency": f} for (c, m, k, s), f in typ]


# ---------------------------------------------------------------------- every plugin against the reference
@st.composite
def gpu_cluster(draw):
    """Nodes (reference dicts and Node objects), bound pods that fit where they are (input order, best fit, as the
    reference takes them), one pending pod, typical pods."""
    nodes, objects = [], []
    for i in range(draw(st.integers(1, 6))):
        d = draw(st.sampled_from([1, 2, 4, 8]))
        model = draw(st.sampled_from(MODELS))
        cpu = draw(st.integers(1, 16)) * 4
        nodes.append({"free": [1000] * d, "models": [model] * d, "cpu_left": cpu * 1000, "tags": {}})
        objects.append(gnode(f"n{i}", d, model, cpu))

    def pod_shape():
        count = draw(st.sampled_from([0, 1, 1, 1, 2, 4]))
        milli = 0 if count == 0 else (draw(st.sampled_from([1000, 100, 250, 500, 700])) if count == 1 else 1000)
        models = draw(st.lists(st.sampled_from(MODELS + ("Z",)), max_size=2, unique=True)) if count else []
        return {"cpu": draw(st.integers(1, 16)) * 1000, "count": count, "milli": milli, "models": models}

    bound = []
    for j in range(draw(st.integers(0, 12))):
        n = draw(st.integers(0, len(nodes) - 1))
        pod = pod_shape()
        node = nodes[n]
        if node["cpu_left"] < pod["cpu"] or not ref.share_fits(node, pod):
            continue
        ref.take(node, pod)
        node["cpu_left"] -= pod["cpu"]
        tag = ref.pod_tag(pod)
        if tag is not None:
            node["tags"][tag] = node["tags"].get(tag, 0) + 1
        bound.append(gpod(f"b{j}", pod["cpu"], pod["count"], pod["milli"], pod["models"], node_name=f"n{n}"))
    pending = pod_shape()
    typical = [((s["cpu"], s["milli"], s["count"], "|".join(s["models"])), w)
               for s, w in zip([pod_shape() for _ in range(3)], (0.5, 0.3, 0.2))]
    return nodes, objects, bound, pending, typical


@settings(max_examples=60, deadline=None)
@given(gpu_cluster())
def test_every_plugin_scores_as_the_reference(case):
    nodes, objects, bound, pending, typical = case
    pod = gpod("p", pending["cpu"], pending["count"], pending["milli"], pending["models"])
    sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=objects, pods=[*bound, pod])),
                      profile(DETERMINISTIC, typical_args(typical)), preemption=False)
    p, ev, chosen = sched.evaluate(sched.shape_of(pod))
    feasible = np.asarray(ev.feasible)
    assert feasible.tolist() == [n["cpu_left"] >= pending["cpu"] and ref.share_fits(n, pending) for n in nodes]
    if not feasible.any():
        return
    want = {"BestFitScore": [ref.bestfit(n, pending) for n in nodes],
            "DotProductScore": [ref.dotprod(n, pending) for n in nodes],
            "GpuPackingScore": [ref.gpupacking(n, pending) for n in nodes],
            "GpuClusteringScore": [ref.gpuclustering(n, pending) for n in nodes],
            "FGDScore": [ref.fgd(n, pending, typical)[0] for n in nodes]}
    for name, scores in want.items():
        assert np.asarray(ev.raw[name])[feasible].tolist() == np.asarray(scores)[feasible].tolist(), name
    normalized = ref.normalize([s for s, ok in zip(want["BestFitScore"], feasible) if ok])
    assert np.asarray(ev.normalized["BestFitScore"])[feasible].tolist() == normalized
    total = [sum(want[n][i] for n in want if n != "BestFitScore") for i in range(len(nodes))]
    it = iter(normalized)
    total = [t + next(it) if ok else 0 for t, ok in zip(total, feasible)]
    assert chosen == ref.select_node(total, feasible.tolist())
    # The chosen node's devices: FGD's best device for a share (its pick), else best fit.
    sched.schedule()
    held = sched.cluster.gpus.held.get(pod.key)
    if pending["count"]:
        node = nodes[chosen]
        want_devices = [ref.fgd(node, pending, typical)[1]] if pending["count"] == 1 and pending["milli"] < 1000 \
            else ref.pick_devices(node, pending)
        assert held[1].tolist() == want_devices


# -------------------------------------------------------------------------------- hand-checked toys
def toy(scores, typical=None, pre_score=(), evaluate=True):
    """n0: 2 x A, 32 cores, a 500m share on device 0 (4 cores); n1: 4 x A, 64 cores, idle. The pod: 250m of one
    GPU, 8 cores. evaluate: a what-if cycle first (its scores; RandomScore would draw from the stream)."""
    objects = [gnode("n0", 2, cpu=32), gnode("n1", 4, cpu=64)]
    bound = [gpod("b", 4000, 1, 500, node_name="n0")]
    pod = gpod("p", 8000, 1, 250)
    sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=objects, pods=[*bound, pod])),
                      profile(scores, typical, pre_score=pre_score), preemption=False, seed=0)
    ev = sched.evaluate(sched.shape_of(pod), advance=False)[1] if evaluate else None
    return sched, pod, ev


def test_bestfit_toy():
    # n0: CPU (28000 - 8000) / 128000 * 0.5 = 0.078125, GPU (1500 - 250) / 8000 * 0.5 = 0.078125; (1 - 0.15625) * 100
    # = 84.375 -> 84. n1: (64000 - 8000) / 128000 * 0.5 = 0.21875, (4000 - 250) / 8000 * 0.5 = 0.234375;
    # (1 - 0.453125) * 100 = 54.6875 -> 54. Normalized: n0 (84 - 54) * 100 / 30 = 100, n1 0.
    sched, pod, ev = toy(["BestFitScore"])
    assert ev.raw["BestFitScore"].tolist() == [84, 54]
    assert ev.normalized["BestFitScore"].tolist() == [100, 0]
    assert sched.schedule().bindings == {"default/p": "n0"}
    assert sched.cluster.gpus.held["default/p"][1].tolist() == [0]       # best fit: 500 free beats 1000


def test_dotproduct_toy():
    # n0: 28000/128000 * 8000/128000 + 1500/8000 * 250/8000 = 0.013671875 + 0.005859375 = 0.01953125;
    # 100 * (1 - 0.01953125 / 2) = 99.0234375 -> 99. n1: 0.5 * 0.0625 + 0.5 * 0.03125 = 0.046875;
    # 100 * (1 - 0.0234375) = 97.65625 -> 97.
    sched, pod, ev = toy(["DotProductScore"])
    assert ev.raw["DotProductScore"].tolist() == [99, 97]


def test_gpupacking_toy():
    # n0 is in use (1 of 2 devices fully free); 250m goes to the tightest device, device 0 (500 free, not fully free):
    # case 1: 500 * 100 // 1000 = 50; max(100 - 50 // 10, 50) = 95. n1 is idle: max(33 - 4, 4) = 29.
    sched, pod, ev = toy(["GpuPackingScore"])
    assert ev.raw["GpuPackingScore"].tolist() == [95, 29]


def test_gpuclustering_toy():
    # n0 holds one share-gpu pod (its only tag): 25 * (8000 - 1500) // 8000 = 20, + 75 = 95. n1 has no GPU pod:
    # 25 * (8000 - 4000) // 8000 = 12, + 25 = 37.
    sched, pod, ev = toy(["GpuClusteringScore"])
    assert ev.raw["GpuClusteringScore"].tolist() == [95, 37]


def test_fgd_toy_and_its_device_reaches_reserve():
    # One typical pod: 8 cores, 500m of one GPU, frequency 1. F counts the free milli of devices with less than
    # 500 free while the typical pod fits (Q3). n0 [500, 1000], 28 cores: fits, nothing under 500: F = 0. Placing
    # 250m on device 0 leaves [250, 1000]: F' = 250, int(100 / (1 + e^0.25)) = int(43.78) = 43; on device 1 leaves
    # [500, 750]: F' = 0, int(100 * 0.5) = 50: n0 scores 50 with device 1. n1 [1000] x 4: F = F' = 0, 50, device 0.
    # The tie goes to n0 (first node), and the pod takes device 1 there, where best fit would take device 0.
    typical = [{"cpuMilli": 8000, "gpuMilli": 500, "gpuCount": 1, "frequency": 1.0}]
    sched, pod, ev = toy(["FGDScore"], typical)
    assert ev.raw["FGDScore"].tolist() == [50, 50]
    assert sched.schedule().bindings == {"default/p": "n0"}
    assert sched.cluster.gpus.held["default/p"][1].tolist() == [1]


def test_random_toy_draws_from_the_scheduler_stream():
    # default_rng(0).random(2) = [0.6369616873214543, 0.26978671376387001]: the node is the floor(0.637 * 2) = 1st
    # feasible one (n1), and the share takes the floor(0.270 * 4) = 1st of n1's four fitting devices.
    sched, pod, _ = toy(["RandomScore"], pre_score=["RandomScore"], evaluate=False)
    assert sched.schedule().bindings == {"default/p": "n1"}
    assert sched.cluster.gpus.held["default/p"][1].tolist() == [1]


def test_random_needs_its_prescore():
    # As upstream: Score reads PreScore's state; without PreScore the cycle fails with two feasible nodes.
    sched, pod, _ = toy(["RandomScore"], evaluate=False)
    assert sched.schedule().unschedulable == {
        "default/p": ('running Score plugins: plugin "RandomScore" failed with: reading '
                      '"PreScoreRandomScore" from cycleState: not found')}


# ------------------------------------------------------------------------ configuration and bad args
def test_selected_in_a_config_file_by_phalanx_schedule(tmp_path):
    objects = [gnode("n0", 2, cpu=32), gnode("n1", 4, cpu=64), gpod("b", 4000, 1, 500, node_name="n0"),
               gpod("p", 8000, 1, 250)]
    for pod in objects[2:]:         # a manifest's container needs an image; a pod built in Python does not
        pod.spec.containers[0].image = "registry.k8s.io/pause:3.10"
    write_manifests(tmp_path / "cluster.yaml", objects)
    (tmp_path / "config.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  plugins:\n    score:\n      disabled: [{name: '*'}]\n"
        "      enabled: [{name: GpuPackingScore, weight: 1}]\n")
    r = runner.invoke(app, ["schedule", "-f", str(tmp_path / "cluster.yaml"), "--config",
                            str(tmp_path / "config.yaml"), "--json"])
    assert r.exit_code == 0, r.output
    # GpuPacking prefers the partly used n0 (95 against 29); the default scores would take the emptier n1.
    assert json.loads(r.stdout)["bindings"] == {"default/p": "n0"}
    r = runner.invoke(app, ["schedule", "-f", str(tmp_path / "cluster.yaml"), "--json"])
    assert json.loads(r.stdout)["bindings"] == {"default/p": "n1"}


def test_fgd_typical_pods_default_to_the_input_pods():
    objects = [gnode("n0", 2), gpod("a", 1000, 1, 500), gpod("b", 1000, 1, 500), gpod("c", 2000)]
    sched = Scheduler(Cluster.from_objects(ClusterObjects(nodes=objects[:1], pods=objects[1:])),
                      profile(["FGDScore"]))
    fgd = sched.framework.plugin("FGDScore")
    # two of three pods are (1000m, 500m x 1 GPU): 2/3 of the workload, then (2000m, no GPU): 1/3
    assert (fgd.typical.cpu, fgd.typical.milli, fgd.typical.count) == ((1000, 2000), (500, 0), (1, 0))
    assert fgd.typical.freq == (2 / 3, 1 / 3)


@pytest.mark.parametrize("args, message", [
    ({"typicalPods": [{"cpuMilli": 1000, "gpuMilli": 500, "gpuCount": 2, "frequency": 1}]},
     "typicalPods[0]: gpuMilli: must be 1000 when gpuCount > 1 (got 500)"),
    ({"typicalPods": [{"cpuMilli": 1000, "frequency": 0}]}, "typicalPods[0].frequency: input should be greater than 0"),
    ({"typicalPods": [{"cpuMilli": -1, "frequency": 1}]}, "typicalPods[0].cpuMilli: input should be greater than"),
    ({"popularityThreshold": 0}, "popularityThreshold: input should be greater than or equal to 1"),
    ({"typicalPods": [{"frequency": 1}]}, "typicalPods[0].cpuMilli: field required"),
])
def test_bad_fgd_args_are_one_line_errors_naming_the_field(args, message):
    doc = {"kind": "KubeSchedulerConfiguration", "profiles": [{"schedulerName": "s", "pluginConfig": [
        {"name": "FGDScore", "args": args}]}]}
    with pytest.raises(InputError) as err:
        config_from_doc(doc, "cfg.yaml")
    text = str(err.value)
    assert text.startswith("cfg.yaml: profiles[0].pluginConfig[0].args.") and message in text
    assert "\n" not in text


# --------------------------------------------------------------- copies of one pod: batched = pod by pod
def _batched_and_pod_by_pod(build, score):
    """The same cluster (build()) scheduled with the score plugin alone after NodeResourcesFit: batched and kept
    shapes as by default, and pod by pod with full cycles."""
    typical = [{"cpuMilli": 4000, "gpuMilli": 1000, "gpuCount": 1, "frequency": 0.6},
               {"cpuMilli": 2000, "frequency": 0.4}]
    config = profile([score], typical, filters=("NodeResourcesFit",))
    return (Scheduler(build(), config, preemption=False).schedule(),
            Scheduler(build(), config, preemption=False, batching=False, incremental=False).schedule())


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0, 1, 2, 4]), st.integers(1, 8)), min_size=1, max_size=5),
       st.lists(st.tuples(st.sampled_from([0, 1, 2]), st.integers(1, 4), st.integers(1, 12)), min_size=1,
                max_size=4),
       st.sampled_from(("FGDScore", "DotProductScore", "GpuPackingScore", "GpuClusteringScore")))
def test_batched_runs_of_whole_gpu_pods_equal_pod_by_pod(node_specs, runs, score):
    """Runs of identical nvidia.com/gpu pods (no GpuShare: batchable) are placed in batches with the copies' scores
    from the state the earlier copies leave (their lowest-index idle devices, their CPU)."""
    def build():
        nodes = [gnode(f"n{i}", gpus, cpu=cores * 4) for i, (gpus, cores) in enumerate(node_specs)]
        pods = [make_pod(f"r{r}-{k}", cpu=f"{cores}", memory="1Gi", gpu=gpus or None)
                for r, (gpus, cores, copies) in enumerate(runs) for k in range(copies)]
        return Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods))
    batched, one_by_one = _batched_and_pod_by_pod(build, score)
    assert batched.bindings == one_by_one.bindings
    event(f"batch rounds: {batched.batch_rounds > 0}")


@pytest.mark.parametrize("score", ["FGDScore", "DotProductScore", "GpuPackingScore", "GpuClusteringScore"])
def test_a_long_run_of_whole_gpu_pods_is_batched_and_equals_pod_by_pod(score):
    # Runs up to SHORT_RUN (8) copies go on kept shapes pod by pod; a run of 12 one-GPU pods takes batch rounds.
    def build():
        nodes = [gnode(f"n{i}", gpus, cpu=64) for i, gpus in enumerate((8, 4, 2))]
        pods = [make_pod(f"r-{k}", cpu="2", memory="1Gi", gpu=1) for k in range(12)]
        return Cluster.from_objects(ClusterObjects(nodes=nodes, pods=pods))
    batched, one_by_one = _batched_and_pod_by_pod(build, score)
    assert batched.bindings == one_by_one.bindings and len(batched.bindings) == 12
    assert batched.batch_rounds > 0


# ------------------------------------------------------------------------------- the simulator
def test_simulation_with_a_score_policy():
    nodes = [gnode(f"n{i}", 8, cpu=64) for i in range(4)]
    jobs = [JobSpec(f"j{i}", "batch", 60.0 * i, 1, i % 3, "4", "1Gi", 3600.0, 0) for i in range(12)]
    jobs.append(JobSpec("t", "training", 30.0, 2, 4, "8", "1Gi", 7200.0, 100))
    rows = {}
    for name in ("gang", "gang+fgd", "gang+bestfit", "gang+random"):
        policy = policy_named(name)
        first = Simulation(nodes, jobs, policy, hours=4, seed=3).run()
        again = Simulation(nodes, jobs, policy, hours=4, seed=3).run()
        assert first.row()["policy"] == name
        assert {k: v for k, v in first.row().items() if "s" != k[-1:]} == \
            {k: v for k, v in again.row().items() if "s" != k[-1:]}                   # seeded: the same run
        assert abs(sum(first.gpu_hours.values()) - first.gpus * 4) < 1e-6                # the ledger adds up
        rows[name] = first
    assert rows["gang+fgd"].pods_bound == rows["gang"].pods_bound == 14
    with pytest.raises(ValueError, match="unknown policy 'gang\\+tetris'"):
        policy_named("gang+tetris")


def test_simulate_cli_score_option():
    r = runner.invoke(app, ["simulate", "--nodes", "8", "--hours", "2", "--policy", "gang", "--score", "fgd",
                            "--json"])
    assert r.exit_code == 0, r.output
    assert [row["policy"] for row in json.loads(r.stdout)["runs"]] == ["gang", "gang+fgd"]
    r = runner.invoke(app, ["simulate", "--nodes", "8", "--score", "tetris"])
    assert r.exit_code == 2 and "--score: unknown score policy 'tetris'" in r.stderr
