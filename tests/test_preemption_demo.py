"""`phalanx demo-preemption`: the same urgent gang on the same full cluster, preempting as one PodGroup and pod by
pod. The victims are worked out by hand in the comments."""
from __future__ import annotations

import json

from typer.testing import CliRunner

from phalanx.cli import app
from phalanx.demos import preemption_story


def test_workload_aware_evicts_whole_groups_pod_by_pod_breaks_three_jobs():
    wap, pods = preemption_story()
    # Units, most important first: train-a (16), train-b (8), train-c (4) (groups before pods, larger first),
    # then the notebooks. Given back in that order: a fits back (4 free per node), b too (2 per node), c does
    # not (1 per node), and no notebook does (without c: 7 free < 8). Whole train-c and the notebooks go:
    # 4 GPUs x 1 h + 4 x 0.5 h = 6 GPU-hours.
    assert wap["victims"] == ["ml/train-c-0", "ml/train-c-1", "ml/train-c-2", "ml/train-c-3",
                              "ml/notebook-0", "ml/notebook-1", "ml/notebook-2", "ml/notebook-3"]
    assert (wap["broken_jobs"], wap["gpu_hours_lost"], wap["urgent_bound"], wap["preemptions"]) == \
        (["train-c"], 6.0, 8, 1)
    # Pod by pod, each worker takes the node whose youngest victim is youngest: the restarted workers of a (10
    # and 15 min) and b (20 min), then the notebooks (30 min), then a worker of c (1 h). Three jobs broken:
    # 16 x 6 + 8 x 2 + 4 x 1 + 4 x 0.5 = 118 GPU-hours.
    assert pods["victims"] == ["ml/train-a-0", "ml/train-a-2", "ml/train-b-1", "ml/notebook-3", "ml/notebook-0",
                               "ml/notebook-1", "ml/notebook-2", "ml/train-c-3"]
    assert (pods["broken_jobs"], pods["gpu_hours_lost"], pods["urgent_bound"], pods["preemptions"]) == \
        (["train-a", "train-b", "train-c"], 118.0, 8, 8)


def test_demo_preemption_cli():
    runner = CliRunner()
    out = runner.invoke(app, ["demo-preemption", "--json"])
    assert out.exit_code == 0, out.output
    assert [r["way"] for r in json.loads(out.stdout)] == ["workload-aware", "pod-by-pod"]
    text = runner.invoke(app, ["demo-preemption"])
    assert text.exit_code == 0 and "GPU-hours lost: 6;" in text.output and "GPU-hours lost: 118;" in text.output
