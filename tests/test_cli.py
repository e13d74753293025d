"""The `phalanx` command end to end: generate -> schedule, explain, bench, configuration, bad input."""
from __future__ import annotations

import json

from typer.testing import CliRunner

from phalanx.cli import app
from phalanx.cluster_models.generate import toy_cluster
from phalanx.cluster_models.write import write_manifests

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
    assert set(report) == {"bindings", "unschedulable", "unserved", "pod_groups", "preemptions", "warnings", "timing"}
    assert len(report["bindings"]) + len(report["unschedulable"]) == 120
    assert set(report["timing"]) == {"load_s", "schedule_s"}


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
  containers: [{name: c, resources: {requests: {cpu: "1", memory: 1Gi}}}]
""")
    res = runner.invoke(app, ["explain", "--cluster", str(cluster), "--pod", str(pod), "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["selected"] == "node-a" and report["message"] is None
    by_name = {n["name"]: n for n in report["nodes"]}
    assert set(by_name["node-a"]["filters"]) == {"NodeUnschedulable", "TaintToleration", "NodeResourcesFit"}
    assert by_name["node-a"]["total"] == 452          # as in tests/test_toy.py
    assert by_name["node-c"]["scores"] == {} and by_name["node-c"]["total"] is None


def test_bench_json():
    res = runner.invoke(app, ["bench", "SchedulingBasic_500Nodes_1000Pods", "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert {"scenario", "nodes", "pods", "seconds", "pods_per_s", "backend"} <= set(report)
    assert report["pods"] == 1000 and report["backend"] == "numpy"


def test_bad_input_is_one_line(tmp_path):
    (tmp_path / "pods.yaml").write_text("""apiVersion: v1
kind: Pod
metadata: {name: w-3}
spec:
  containers: [{name: c, resources: {requests: {cpu: 12x}}}]
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
spec: {nodeName: n1, containers: [{name: c, resources: {requests: {cpu: 100m}}}]}
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
  containers: [{name: c, resources: {requests: {cpu: 100m}}}]
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
    assert out.output.strip() == (f'error: {tmp_path / "bad.yaml"}: profiles[0].plugins.score.enabled[0].name: '
                                  f'unknown plugin "NoSuch"')
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
  containers: [{name: c, resources: {requests: {cpu: "2"}}}]
""")
    (tmp_path / "p.yaml").write_text("""apiVersion: v1
kind: Pod
metadata: {name: urgent}
spec:
  priority: 10
  containers: [{name: c, resources: {requests: {cpu: "2"}}}]
""")
    args = ["explain", "--cluster", str(tmp_path / "c.yaml"), "--pod", str(tmp_path / "p.yaml")]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[-2:] == ["  preemption on n1 would evict 1 pods, 0 GPU-hours lost:",
                                            "    evict default/low (priority 1, 0 GPUs x 0.00 h)"]
    report = json.loads(runner.invoke(app, args + ["--json"]).stdout)
    assert report["preemption"]["node"] == "n1" and report["preemption"]["spared"] == []
