"""The issue's failure case: a 64-worker job (1 GPU each) on a cluster with 47 free GPUs."""
from __future__ import annotations

from typer.testing import CliRunner

from phalanx.cli import app
from phalanx.demos import stranded_gpus


def test_pod_by_pod_strands_47_gpus_and_the_gang_does_not():
    # 6 nodes x 8 GPUs = 48, one held by a bound inference pod: 47 free.
    by_way = {row["way"]: row for row in stranded_gpus()}
    pod_by_pod, gang = by_way["pod-by-pod"], by_way["gang"]
    assert pod_by_pod["free_gpus_at_start"] == gang["free_gpus_at_start"] == 47
    # Pod by pod: 47 of 64 workers bound, the job cannot start, the 40-worker job finds no GPU.
    assert (pod_by_pod["train_bound"], pod_by_pod["finetune_bound"], pod_by_pod["stranded_gpus"]) == (47, 0, 47)
    assert pod_by_pod["free_gpus_at_end"] == 0
    # Gang: nothing of the 64 bound, the 40-worker job runs, 47 - 40 = 7 GPUs left.
    assert (gang["train_bound"], gang["finetune_bound"], gang["stranded_gpus"]) == (0, 40, 0)
    assert gang["free_gpus_at_end"] == 7
    # With finetune's 40 GPUs taken, 7 remain: 7 of the 64 workers would fit, the other 57 find no GPU.
    assert gang["train_waits_because"] == ("PodGroup ml/train-workers: 7/64 pods placeable; 57 pods: 0/6 nodes are "
                                           "available: 6 Insufficient nvidia.com/gpu.; pod group is unschedulable, "
                                           "waiting for minCount pods from a gang to be scheduled")


def test_demo_gang_cli():
    out = CliRunner().invoke(app, ["demo-gang"])
    assert out.exit_code == 0, out.output
    assert "pod-by-pod            47               0             47          0" in out.output
    assert "gang                   0              40              0          7" in out.output


TWO_GPU_NODE = """
apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110", nvidia.com/gpu: "2"}}
"""


def test_explain_group_cli(tmp_path):
    (tmp_path / "c.yaml").write_text(TWO_GPU_NODE + """---
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: pg, namespace: ml}
spec: {schedulingPolicy: {gang: {minCount: 3}}}
""" + "".join(f"""---
apiVersion: v1
kind: Pod
metadata: {{name: w{i}, namespace: ml}}
spec:
  schedulingGroup: {{podGroupName: pg}}
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources: {{requests: {{nvidia.com/gpu: "1"}}, limits: {{nvidia.com/gpu: "1"}}}}
""" for i in range(3)))
    out = CliRunner().invoke(app, ["explain", "--cluster", str(tmp_path / "c.yaml"), "--group", "ml/pg"])
    assert out.exit_code == 0, out.output
    # Two GPUs: w0 and w1 fit, w2 finds 2 of 2 GPUs taken. Nothing of lower priority runs, so preemption would not
    # help.
    assert out.output.strip() == ("PodGroup ml/pg: 2/3 pods placeable; 1 pods: 0/1 nodes are available: "
                                  "1 Insufficient nvidia.com/gpu.; pod group is unschedulable, waiting for minCount "
                                  "pods from a gang to be scheduled\n"
                                  "  preemption would not help: No preemption victims found for incoming preemptor")
    out = CliRunner().invoke(app, ["explain", "--cluster", str(tmp_path / "c.yaml"), "--group", "ml/nope"])
    assert out.exit_code != 0 and "PodGroup ml/nope" in out.output
    out = CliRunner().invoke(app, ["schedule", "--cluster", str(tmp_path / "c.yaml")])
    # TopologyAwareWorkloadScheduling on: the unconstrained group's one placement (every node) failed
    assert ("ml/pg: PodGroupScheduled=False Unschedulable: 0/1 placements are available, first placement status: pod "
            "group is unschedulable") in out.output


def test_explain_group_accepts_a_workload_name(tmp_path):
    # An Indexed Job of 3 workers makes Workload ml/train and its gang PodGroup ml/train-workers; 2 GPUs fit 2.
    (tmp_path / "c.yaml").write_text(TWO_GPU_NODE + """---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  parallelism: 3
  completions: 3
  completionMode: Indexed
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {limits: {nvidia.com/gpu: "1"}}}]
""")
    by_workload = CliRunner().invoke(app, ["explain", "-f", str(tmp_path / "c.yaml"), "--group", "ml/train"])
    by_group = CliRunner().invoke(app, ["explain", "-f", str(tmp_path / "c.yaml"), "--group", "ml/train-workers"])
    assert by_workload.exit_code == 0, by_workload.output
    assert by_workload.stdout == by_group.stdout
    assert by_workload.stdout.startswith("PodGroup ml/train-workers: 2/3 pods placeable")
