"""`phalanx capacity` (sched/capacity.py) on a hand-checked toy: 4 nodes of 8 GPUs in two racks, 6 / 0 / 4 / 2 GPUs
used (n3 has 4 cpu only), a pending gang of two 8-GPU members that must share a rack."""
from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from phalanx.cli import app

TOY = str(Path(__file__).parent / "data" / "capacity")
RACK = "topology.phalanx.dev/rack"


def _run(*args):
    result = CliRunner().invoke(app, ["capacity", "-f", TOY, *args])
    return result


def test_two_whole_nodes_in_one_rack_do_not_fit_and_the_gpus_bind():
    r = _run("--shape", "cpu=1,nvidia.com/gpu=8", "-n", "2", "--topology-key", RACK, "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert (out["fits"], out["where"], out["total"]) == (False, None, 1)          # only n1 is empty
    assert out["domains"] == [{"domain": "rack-a", "nodes": 2, "copies": 1, "free_gpus": 10},
                              {"domain": "rack-b", "nodes": 2, "copies": 0, "free_gpus": 10}]
    assert out["rejected"] == {"Insufficient nvidia.com/gpu": 3}
    # The gang needs 2 x 8 GPUs in one rack: nowhere, so every rack's free GPUs are stranded.
    assert out["pending_groups"] == [{"group": "default/train", "needed": 2, "key": RACK, "domains": []}]
    assert out["stranded_gpus"] == {"rack-a": 10, "rack-b": 10}


def test_copies_per_node_and_what_runs_out_first():
    """2-GPU, 2-cpu copies: n0 1 (2 GPUs free), n1 4, n2 2, n3 1 (3 cpu free, 6 GPUs): 8 in all, 9 do not fit."""
    out = json.loads(_run("--shape", "cpu=2,nvidia.com/gpu=2", "-n", "9", "--json").output)
    assert (out["fits"], out["total"]) == (False, 8)
    assert out["limited_by"] == {"nvidia.com/gpu": 3, "cpu": 1}
    fits = json.loads(_run("--shape", "cpu=2,nvidia.com/gpu=2", "-n", "8", "--json").output)
    assert (fits["fits"], fits["where"]) == (True, "(whole cluster)")


def test_evicting_the_pod_on_n0_lets_the_gang_into_rack_a():
    out = json.loads(_run("--pod", "default/train-0", "-n", "2", "--topology-key", RACK, "--evict", "default/used-0",
                          "--json").output)
    assert out["fit_after_eviction"] == ["default/train"]
    text = _run("--pod", "default/train-0", "-n", "2", "--topology-key", RACK, "--evict", "default/used-0").output
    assert "default/train: 2 more members fit nowhere now" in text
    assert "after the evictions these pending PodGroups would fit: default/train" in text


def test_bad_capacity_questions_are_one_line_errors():
    assert "exactly one of --shape and --pod" in _run("-n", "2").output
    bad = _run("--shape", "cpu", "-n", "1")
    assert bad.exit_code == 2 and "--shape: expected name=quantity" in bad.output
    bad = _run("--shape", "cpu=12x", "-n", "1")
    assert bad.exit_code == 2 and 'error: --shape: requests.cpu: invalid quantity "12x"\n' in bad.output
    bad = _run("--shape", "cpu=1", "--evict", "default/nobody")
    assert bad.exit_code == 2 and bad.output == "error: --evict: default/nobody: not a pod or PodGroup of --cluster\n"
    assert _run("--shape", "cpu=1", "-n", "0").exit_code == 2


def _error(*args) -> str:
    result = _run(*args)
    assert result.exit_code == 2, result.output
    return result.output


def test_capacity_arguments_refused_as_the_api_server_or_a_typo_would_be():
    # each was accepted (a key given twice: the last won; -n beyond int64: an OverflowError traceback; an unknown
    # --topology-key: "0 copies fit"; one unknown --evict among known ones: silently dropped)
    assert _error("--shape", "cpu=1,cpu=2") == "error: --shape: cpu given twice\n"
    assert _error("--shape", "nvidia.com/gpu=0.5") == \
        'error: --shape: requests[nvidia.com/gpu]: Invalid value: "500m": must be an integer\n'
    assert _error("--shape", "pods=1") == \
        'error: --shape: requests[pods]: Invalid value: "pods": must be a standard resource for containers\n'
    assert _error("--shape", "cpu=1", "-n", "99999999999999999999") == \
        "error: --count: must be at most 2147483647, got 99999999999999999999\n"
    assert _error("--shape", "cpu=1", "--topology-key", "topology.phalanx.dev/rak") == \
        'error: --topology-key: no node of --cluster has the label "topology.phalanx.dev/rak"\n'
    assert _error("--shape", "cpu=1", "--topology-key", "").startswith("error: --topology-key: name part must be "
                                                                       "non-empty")
    assert _error("--shape", "cpu=1", "--evict", "default/used-0", "--evict", "default/usde-2") == \
        "error: --evict: default/usde-2: not a pod or PodGroup of --cluster\n"
    assert _run("--shape", "cpu=1", "--evict", "default/train", "--evict", "default/used-2").exit_code == 0
