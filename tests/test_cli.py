"""The `phalanx` command end to end: generate -> schedule, explain, bench, configuration, bad input."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from phalanx.cli import app
from phalanx.cluster_models.generate import pod_template, toy_cluster
from phalanx.cluster_models.write import write_manifests
from strategies import make_node

runner = CliRunner()


def _toy_dir(tmp_path):
    tmp_path.mkdir(parents=True, exist_ok=True)
    nodes, pods = toy_cluster()
    write_manifests(tmp_path / "nodes.yaml", nodes)
    write_manifests(tmp_path / "pods.yaml", pods)
    return tmp_path


def test_generate_then_schedule(tmp_path):
    out = runner.invoke(app, ["generate", "--out", str(tmp_path), "--nodes", "50", "--pods", "120", "--mix", "gpu"])
    assert out.exit_code == 0, out.output
    res = runner.invoke(app, ["schedule", "--cluster", str(tmp_path), "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert set(report) == {"bindings", "unschedulable", "unserved", "pod_groups", "preemptions", "allocations",
                           "warnings", "timing"}
    assert len(report["bindings"]) + len(report["unschedulable"]) == 120
    assert set(report["timing"]) == {"load_s", "schedule_s"}


def test_kube_mix_schedules_the_same_with_and_without_kept_shapes(tmp_path):
    out = runner.invoke(app, ["generate", "--out", str(tmp_path), "--nodes", "10", "--pods", "400", "--mix", "kube"])
    assert out.exit_code == 0, out.output
    reports = []
    for flags in ([], ["--no-incremental"], ["--no-incremental", "--no-batching"]):
        res = runner.invoke(app, ["schedule", "-f", str(tmp_path), "--json", *flags])
        assert res.exit_code == 0, res.output
        reports.append(json.loads(res.stdout))
    assert reports[0]["bindings"] == reports[1]["bindings"] == reports[2]["bindings"]
    assert reports[0]["unschedulable"] == reports[1]["unschedulable"] == reports[2]["unschedulable"]
    assert len(reports[0]["bindings"]) + len(reports[0]["unschedulable"]) == 400
    assert reports[0]["unschedulable"]            # 10 nodes of 32 cpu: the mix (1.2 cpu a pod) overflows them


def test_schedule_toy_matches_hand_worked_result(tmp_path):
    res = runner.invoke(app, ["schedule", "--cluster", str(_toy_dir(tmp_path)), "--json"])
    report = json.loads(res.stdout)
    # worked out by hand in tests/test_toy.py
    assert report["bindings"] == {"default/web-0": "node-a", "default/web-1": "node-a", "default/ml": "node-c"}


def test_schedule_with_config_and_compat(tmp_path):
    cluster = _toy_dir(tmp_path / "c")
    config = tmp_path / "sched.yaml"
    config.write_text("""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
""")
    res = runner.invoke(app, ["schedule", "--cluster", str(cluster), "--config", str(config), "--compat", "1.35",
                              "--json"])
    assert res.exit_code == 0, res.output
    # MostAllocated packs: node-b (3 of 4 cpu used) scores higher for web-0 than empty node-a.
    assert json.loads(res.stdout)["bindings"]["default/web-0"] == "node-b"


def test_explain_json(tmp_path):
    cluster = _toy_dir(tmp_path / "c")
    pod = tmp_path / "pod.yaml"
    pod.write_text("""apiVersion: v1
kind: Pod
metadata: {name: probe}
spec:
  containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: "1", memory: 1Gi}}}]
""")
    res = runner.invoke(app, ["explain", "--cluster", str(cluster), "--pod", str(pod), "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["selected"] == "node-a" and report["message"] is None
    by_name = {n["name"]: n for n in report["nodes"]}
    assert set(by_name["node-a"]["filters"]) == {"NodeUnschedulable", "TaintToleration", "NodeResourcesFit"}
    assert by_name["node-a"]["total"] == 452          # as in tests/test_toy.py
    assert by_name["node-c"]["scores"] == {} and by_name["node-c"]["total"] is None


def test_schedule_with_upstreams_sampling(tmp_path):
    # test_sampled_rows_by_hand through the command: 200 identical nodes at 50% look for 100 feasible ones, so p1
    # samples n100..n199 and takes n100, then p2 samples n0..n99 again: n1. Every node scored: n0, n1, n2. The flag
    # sets every profile's percentage, over a config file's 100.
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(200)]
    write_manifests(tmp_path / "nodes.yaml", nodes)
    template = pod_template("1", "1Gi")
    write_manifests(tmp_path / "pods.yaml", [template.replaced(metadata=template.metadata.replaced(name=f"p{i}"))
                                             for i in range(3)])
    config = tmp_path / "sched.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "percentageOfNodesToScore: 100\n")
    bindings = {}
    for flags in ([], ["--percentage-of-nodes-to-score", "50"], ["--config", str(config)],
                  ["--config", str(config), "--percentage-of-nodes-to-score", "50"]):
        res = runner.invoke(app, ["schedule", "-f", str(tmp_path / "nodes.yaml"), "-f", str(tmp_path / "pods.yaml"),
                                  "--json", *flags])
        assert res.exit_code == 0, res.output
        bindings[len(flags)] = [json.loads(res.stdout)["bindings"][f"default/p{i}"] for i in range(3)]
    assert bindings == {0: ["n0", "n1", "n2"], 2: ["n0", "n1", "n2"], 4: ["n0", "n100", "n1"]}
    res = runner.invoke(app, ["schedule", "-f", str(tmp_path / "nodes.yaml"), "--percentage-of-nodes-to-score", "-1"])
    assert res.exit_code == 2 and "--percentage-of-nodes-to-score" in res.output


def test_bench_json():
    res = runner.invoke(app, ["bench", "SchedulingBasic_500Nodes_1000Pods", "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert {"scenario", "nodes", "pods", "seconds", "pods_per_s", "backend"} <= set(report)
    assert report["pods"] == 1000 and report["backend"] == "numpy"


def test_bench_repeat_reports_the_fastest_run():
    res = runner.invoke(app, ["bench", "SchedulingBasic_500Nodes_1000Pods", "--json", "--repeat", "3"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert len(report["runs_pods_per_s"]) == 3 and report["pods_per_s"] == max(report["runs_pods_per_s"])
    assert report["pods"] == 1000
    assert runner.invoke(app, ["bench", "SchedulingBasic_500Nodes_1000Pods", "--repeat", "0"]).exit_code == 2


def test_bench_with_upstreams_adaptive_sampling():
    # 500 nodes at percentageOfNodesToScore 0: each cycle looks for max(50 - 500 // 125, 5) = 46% of them.
    res = runner.invoke(app, ["bench", "SchedulingBasic_500Nodes_1000Pods", "--json",
                              "--percentage-of-nodes-to-score", "0"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["percentage_of_nodes_to_score"] == 0 and report["bound"] == 1000
    res = runner.invoke(app, ["bench", "SchedulingBasic_500Nodes_1000Pods", "--percentage-of-nodes-to-score", "101"])
    assert res.exit_code == 2 and "--percentage-of-nodes-to-score" in res.output


def test_bad_input_is_one_line(tmp_path):
    (tmp_path / "pods.yaml").write_text("""apiVersion: v1
kind: Pod
metadata: {name: w-3}
spec:
  containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 12x}}}]
""")
    res = runner.invoke(app, ["schedule", "--cluster", str(tmp_path)])
    assert res.exit_code == 2
    assert res.stderr.strip() == 'error: Pod default/w-3: spec.containers[0].resources.requests.cpu: invalid quantity "12x"'
    assert "Traceback" not in res.output


def test_unknown_scenario_and_backend(tmp_path):
    assert runner.invoke(app, ["bench", "NoSuchScenario"]).exit_code == 2
    res = runner.invoke(app, ["schedule", "--cluster", str(_toy_dir(tmp_path)), "--backend", "tpu"])
    assert res.exit_code == 2 and "unknown backend" in res.stderr


_NODES = """apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1, zone: a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2, zone: b}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: web-0, labels: {app: web}}
spec: {nodeName: n1, containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 100m}}}]}
"""
_WEB_1 = """apiVersion: v1
kind: Pod
metadata: {name: web-1, labels: {app: web}}
spec:
  affinity:
    podAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 10
        podAffinityTerm: {labelSelector: {matchLabels: {app: web}}, topologyKey: kubernetes.io/hostname}
  containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 100m}}}]
"""
_SCORE_ONLY = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    filter: {disabled: [{name: "*"}]}
    preScore: {disabled: [{name: "*"}], enabled: [{name: InterPodAffinity}]}
    score: {disabled: [{name: "*"}], enabled: [{name: InterPodAffinity}]}
"""


def test_explain_a_plugin_enabled_alone_at_prescore_and_score(tmp_path):
    """How upstream's plugin unit tests are shaped: one plugin's raw and normalized scores. web-0 on n1 is selected
    by web-1's preferred term (weight 10, hostname): raw n1 10, n2 0 -> normalized 100 and 0."""
    (tmp_path / "c.yaml").write_text(_NODES)
    (tmp_path / "p.yaml").write_text(_WEB_1)
    (tmp_path / "cfg.yaml").write_text(_SCORE_ONLY)
    out = runner.invoke(app, ["explain", "--cluster", str(tmp_path / "c.yaml"), "--pod", str(tmp_path / "p.yaml"),
                              "--config", str(tmp_path / "cfg.yaml"), "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert {n["name"]: n["scores"] for n in report["nodes"]} == {
        "n1": {"InterPodAffinity": {"raw": 10, "normalized": 100}},
        "n2": {"InterPodAffinity": {"raw": 0, "normalized": 0}}}
    assert report["selected"] == "n1"


def test_config_errors_name_the_file_not_the_flags(tmp_path):
    (tmp_path / "c.yaml").write_text(_NODES)
    (tmp_path / "bad.yaml").write_text("kind: KubeSchedulerConfiguration\nprofiles: [{plugins: {score: "
                                       "{enabled: [{name: NoSuch}]}}}]\n")
    out = runner.invoke(app, ["schedule", "--cluster", str(tmp_path / "c.yaml"), "--config", str(tmp_path / "bad.yaml")])
    assert out.exit_code == 2
    assert out.output.strip() == (f'error: {tmp_path / "bad.yaml"}: initializing profiles: creating profile for '
                                  f'scheduler name default-scheduler: ScorePlugin "NoSuch" does not exist')
    out = runner.invoke(app, ["schedule", "--cluster", str(tmp_path / "c.yaml"), "--feature-gates", "Nope=true"])
    assert out.exit_code == 2 and out.output.startswith("error: --feature-gates: Nope: unknown feature gate")


def test_explain_a_pod_that_would_preempt(tmp_path):
    # One 2-cpu node holding a low-priority 2-cpu pod: a priority-10 pod fits nowhere, and preemption on n1 would
    # evict "low" (it runs no GPU, so no GPU-hours are lost). The text ends with what preemption would do.
    (tmp_path / "c.yaml").write_text("""apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: low}
spec:
  nodeName: n1
  priority: 1
  containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: "2"}}}]
""")
    (tmp_path / "p.yaml").write_text("""apiVersion: v1
kind: Pod
metadata: {name: urgent}
spec:
  priority: 10
  containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: "2"}}}]
""")
    args = ["explain", "--cluster", str(tmp_path / "c.yaml"), "--pod", str(tmp_path / "p.yaml")]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[-2:] == ["  preemption on n1 would evict 1 pods, 0 GPU-hours lost:",
                                            "    evict default/low (priority 1, 0 GPUs x 0.00 h)"]
    report = json.loads(runner.invoke(app, args + ["--json"]).stdout)
    assert report["preemption"]["node"] == "n1" and report["preemption"]["spared"] == []


def test_version_and_kubectl_style_f(tmp_path):
    out = runner.invoke(app, ["--version"])
    assert out.exit_code == 0 and out.stdout.startswith("phalanx 0.1.0")
    toy = _toy_dir(tmp_path)
    res = runner.invoke(app, ["schedule", "-f", str(toy), "--json"])
    assert res.exit_code == 0 and '"bindings"' in res.stdout
    split = runner.invoke(app, ["schedule", "-f", str(toy / "nodes.yaml"), "-f", str(toy / "pods.yaml"), "--json"])
    assert json.loads(split.stdout)["bindings"] == json.loads(res.stdout)["bindings"]      # -f repeats, as kubectl's


def test_an_empty_cluster_directory_is_an_error(tmp_path):
    (tmp_path / "empty").mkdir()
    res = runner.invoke(app, ["schedule", "--cluster", str(tmp_path / "empty")])
    assert res.exit_code == 2 and res.stderr.strip() == f"error: {tmp_path / 'empty'}: no .yaml, .yml or .json files"


def test_generate_refuses_a_non_empty_out_without_force_and_labels_nodes_as_kubelets_do(tmp_path):
    args = ["generate", "--out", str(tmp_path), "--nodes", "3", "--pods", "2"]
    assert runner.invoke(app, args).exit_code == 0
    again = runner.invoke(app, args)
    assert again.exit_code == 2 and again.stderr.strip() == (f"error: --out: {tmp_path} is not an empty directory "
                                                             "(--force writes into it)")
    assert runner.invoke(app, [*args, "--force"]).exit_code == 0
    from phalanx.cluster_models import load_paths
    node = load_paths([tmp_path / "nodes.yaml"]).nodes[0]
    assert node.metadata.labels["kubernetes.io/os"] == "linux" and node.metadata.labels["kubernetes.io/arch"] == "amd64"


def test_explain_summarises_and_takes_a_pod_of_the_cluster_by_name(tmp_path):
    cluster = _toy_dir(tmp_path / "c")
    out = runner.invoke(app, ["explain", "--cluster", str(cluster), "--pod", "default/web-0"])
    assert out.exit_code == 0, out.output
    # node-c's dedicated=ml taint rejects the pod; node-a scores 452 (tests/test_toy.py), node-b 402.
    lines = out.stdout.splitlines()
    assert lines[0] == "pod default/web-0: selected node-a"
    assert lines[1] == "  2 of 3 nodes fit; the best 2:"
    assert lines[2].startswith("  node-a: total 452 (") and lines[3].startswith("  node-b: total 402 (")
    assert lines[4:] == ["  1 nodes rejected:", "         1 TaintToleration: node(s) had untolerated taint(s)",
                         "  (--all-nodes lists every node)"]
    every = runner.invoke(app, ["explain", "--cluster", str(cluster), "--pod", "web-0", "--all-nodes"])
    assert every.stdout.splitlines()[3] == ("  node-c: rejected by TaintToleration: node(s) had untolerated taint(s) "
                                            "(dedicated=ml:NoSchedule)")
    missing = runner.invoke(app, ["explain", "--cluster", str(cluster), "--pod", "default/nope"])
    assert missing.exit_code == 2 and missing.stderr.strip() == ("error: --pod: 'default/nope' is neither a manifest "
                                                                 "file nor a pod of --cluster")


def test_unknown_fields_warn_by_default_and_fail_with_strict(tmp_path):
    (tmp_path / "c.yaml").write_text(_NODES + """---
apiVersion: v1
kind: Pod
metadata: {name: typo}
spec:
  containers: [{name: c, image: nginx, resources: {requets: {cpu: "64"}}}]
""")
    res = runner.invoke(app, ["schedule", "--cluster", str(tmp_path / "c.yaml"), "--json"])
    assert res.exit_code == 0
    warning = ('Pod default/typo: unknown field "spec.containers[0].resources.requets" (ignored; --strict makes it '
               "an error)")
    assert json.loads(res.stdout)["warnings"] == [warning]
    strict = runner.invoke(app, ["schedule", "--cluster", str(tmp_path / "c.yaml"), "--strict"])
    assert strict.exit_code == 2 and strict.stdout == ""
    assert strict.stderr.strip() == 'error: Pod default/typo: unknown field "spec.containers[0].resources.requets"'


def test_a_plot_without_matplotlib_fails_before_the_replay(tmp_path, monkeypatch):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    res = runner.invoke(app, ["trace", "alibaba", "--pods", "no-such.csv", "--plot", str(tmp_path / "p.png")])
    assert res.exit_code == 2 and res.stderr.strip() == "error: --plot: needs matplotlib: pip install 'phalanx[viz]'"


def test_output_formats(tmp_path):
    import yaml
    cluster = str(_toy_dir(tmp_path / "c"))
    as_json = json.loads(runner.invoke(app, ["schedule", "-f", cluster, "-o", "json"]).stdout)
    as_yaml = yaml.safe_load(runner.invoke(app, ["schedule", "-f", cluster, "-o", "yaml"]).stdout)
    assert {k: v for k, v in as_yaml.items() if k != "timing"} == {k: v for k, v in as_json.items() if k != "timing"}
    wide = runner.invoke(app, ["schedule", "-f", cluster, "-o", "wide"]).stdout
    assert all(f"  {key} -> {node}" in wide for key, node in as_json["bindings"].items())
    bad = runner.invoke(app, ["schedule", "-f", cluster, "-o", "xml"])
    assert bad.exit_code == 2 and bad.stderr.strip() == "error: --output: unknown format 'xml' (use json, yaml or wide)"


def test_the_progress_hook_sees_every_pod_attempted(tmp_path):
    from phalanx.cluster_models import load_paths
    from phalanx.sched import Cluster, Scheduler
    state = Cluster.from_objects(load_paths([_toy_dir(tmp_path / "c")]))
    pending = len(state.pending)
    scheduler, seen = Scheduler(state), []
    scheduler.on_attempt = seen.append
    result = scheduler.schedule()
    assert len(result.bindings) == pending and sum(seen) == pending      # each pod attempted once, all bound


def test_explain_says_when_a_pod_waits_before_scheduling(tmp_path):
    # A gang of three with one member so far: GangScheduling's PreEnqueue holds it (schedule reports the same);
    # explain says so first, then what its cycle would find once it may go. A gang complete is not held.
    group = """---
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: g}
spec: {schedulingPolicy: {gang: {minCount: 3}}}
"""
    member = """---
apiVersion: v1
kind: Pod
metadata: {{name: m{i}}}
spec:
  schedulingGroup: {{podGroupName: g}}
  containers: [{{name: c, image: registry.k8s.io/pause:3.10, resources: {{requests: {{cpu: 100m}}}}}}]
"""
    (tmp_path / "c.yaml").write_text(_NODES + group + member.format(i=0))
    out = runner.invoke(app, ["explain", "-f", str(tmp_path / "c.yaml"), "--pod", "m0"])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert lines[0] == ("pod default/m0: waits before scheduling: waiting for minCount pods from a gang to appear in "
                        "scheduling queue")
    assert lines[1].startswith("  once it may go: selected ")
    report = json.loads(runner.invoke(app, ["explain", "-f", str(tmp_path / "c.yaml"), "--pod", "m0", "--json"]).stdout)
    assert report["waiting"] == "waiting for minCount pods from a gang to appear in scheduling queue"
    (tmp_path / "c.yaml").write_text(_NODES + group + "".join(member.format(i=i) for i in range(3)))
    whole = json.loads(runner.invoke(app, ["explain", "-f", str(tmp_path / "c.yaml"), "--pod", "m0", "--json"]).stdout)
    assert "waiting" not in whole and whole["selected"] is not None


def test_explain_a_pod_manifest_whose_priority_class_is_in_the_cluster(tmp_path):
    # was: 'Pod default/p: spec.priorityClassName: PriorityClass "high" not found' (the file was read alone)
    (tmp_path / "c.yaml").write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4', pods: '10'}}\n---\n"
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n")
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  priorityClassName: %s\n  containers: [{name: c, image: i}]\n"
    (tmp_path / "p.yaml").write_text(pod % "high")
    for command in (["explain", "--pod"], ["capacity", "--pod"]):
        out = runner.invoke(app, [command[0], "-f", str(tmp_path / "c.yaml"), command[1], str(tmp_path / "p.yaml")])
        assert out.exit_code == 0, out.output
    (tmp_path / "q.yaml").write_text(pod % "higher")
    out = runner.invoke(app, ["explain", "-f", str(tmp_path / "c.yaml"), "--pod", str(tmp_path / "q.yaml")])
    assert out.exit_code == 2
    assert out.stderr == 'error: Pod default/p: spec.priorityClassName: PriorityClass "higher" not found\n'


def test_sweep_on_a_ray_address_nothing_listens_at_fails_quickly(tmp_path):
    """ray.init retries an unreachable address for some 13 minutes by default; phalanx bounds it with Ray's own
    settings (one attempt; each wait here shortened further through the environment, which phalanx leaves as set)
    and reports a usage error. In a fresh process: Ray reads its C++ settings when first imported."""
    pytest.importorskip("ray")
    (tmp_path / "sweep.yaml").write_text("scenarios: [{name: tiny, nodes: 2, hours: 1}]\npolicies: [pod-by-pod]\n")
    env = {**os.environ, "RAY_py_gcs_connect_timeout_s": "1", "RAY_gcs_rpc_server_connect_timeout_s": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                       os.environ.get("PYTHONPATH")]))}
    start = time.monotonic()
    out = subprocess.run([sys.executable, "-c", "from phalanx.cli import app; app()", "sweep",
                          str(tmp_path / "sweep.yaml"), "--ray", "127.0.0.1:1"],
                         capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert time.monotonic() - start < 30
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr
    # Ray's C++ client logs its own warnings to stderr first; phalanx's error is the last line
    assert out.stderr.strip().splitlines()[-1].startswith(
        "error: --ray: cannot connect to a Ray cluster at 127.0.0.1:1: Failed to connect to Ray cluster at ")


@pytest.mark.parametrize("args, line", [
    (["simulate", "--hours", "x"],
     "error: phalanx simulate: --hours: Input should be a valid number, unable to parse string as a number"),
    (["bench", "--repeat", "x"],
     "error: phalanx bench: --repeat: Input should be a valid integer, unable to parse string as an integer"),
    (["schedule"], "error: phalanx schedule: Missing option '--cluster' / '-f'."),
    (["schedule", "--nope"], "error: phalanx schedule: No such option: --nope"),
    (["schedule", "--cluster"], "error: phalanx schedule: Option '--cluster' requires an argument."),
    (["sweep"], "error: phalanx sweep: Missing argument 'config'."),
    (["schedul"], "error: phalanx: No such command 'schedul'. Did you mean 'schedule'?"),
    (["--bogus"], "error: phalanx: No such option: --bogus"),
])
def test_usage_errors_are_one_line(args, line):
    """click's usage errors, from every command, as one line (not typer's usage text and box), exit code 2."""
    res = runner.invoke(app, args)
    assert res.exit_code == 2
    assert res.stderr == line + "\n" and res.stdout == ""


def test_help_is_still_typers():
    assert "Usage:" in runner.invoke(app, ["schedule", "--help"]).stdout
    res = runner.invoke(app, [])                 # no_args_is_help: the help, exit code 2 (click's NoArgsIsHelpError)
    assert res.exit_code == 2 and "Usage:" in res.output
