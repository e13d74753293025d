"""The Alibaba trace loaders, the replay procedure and `phalanx trace alibaba` (errors, JSON, CSV)."""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from phalanx.cli import app
from phalanx.cluster_models import InputError
from phalanx.cluster_models.alibaba import default_data_dir, load_nodes, load_pods
from phalanx.simulate.alibaba import arrival_order, replay

runner = CliRunner()
NODES = "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,65536,2,A\nn1,64000,131072,4,B\nn2,16000,32768,1,A\n"
PODS = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
        "scheduled_time\n"
        "p0,4000,1024,1,500,,LS,Running,0,1,0\np1,8000,2048,2,1000,B,LS,Running,0,1,0\n"
        "p2,2000,512,0,0,,BE,Running,0,1,0\np3,1000,512,1,250,A|B,LS,Running,0,1,0\n")


@pytest.fixture
def data(tmp_path):
    (tmp_path / "openb_node_list_gpu_node.csv").write_text(NODES)
    (tmp_path / "pods.csv").write_text(PODS)
    return tmp_path


def test_all_shared_pod_lists_load():
    base = default_data_dir()
    if base is None or not (base / "openb_node_list_gpu_node.csv").exists():
        pytest.skip("shared trace data not present")
    nodes = load_nodes(base / "openb_node_list_gpu_node.csv")
    assert nodes.size == 1213 and nodes.gpus.size == 6212
    lists = sorted(base.glob("openb_pod_list_*.csv"))
    assert len(lists) >= 23
    for path in lists:
        pods = load_pods(path)
        assert pods.size > 7000 and (pods.num_gpu * pods.gpu_milli).sum() > 0


def test_arrival_order_inflates_to_130_percent(data):
    pods = load_pods(data / "pods.csv")
    # capacity 7 GPUs = 7000 milli; demand 500 + 2000 + 0 + 250 = 2750; target 1.3 * 7000 = 9100.
    order = arrival_order(pods, 7000, np.random.default_rng(3))
    assert sorted(order[:4].tolist()) == [0, 1, 2, 3]          # every pod once, shuffled, then clones
    total = int((pods.num_gpu * pods.gpu_milli)[order].sum())
    assert total <= 9100
    # the next clone would have passed the target: the loop stops at the first draw whose per-GPU milli
    # overshoots, so the demand is within one pod's per-GPU milli (max 1000) of 9100
    assert total > 9100 - 1000
    # too much demand: pods are dropped until at or below the target (1.3 * 2000 = 2600 < 2750)
    short = arrival_order(pods, 2000, np.random.default_rng(3))
    assert int((pods.num_gpu * pods.gpu_milli)[short].sum()) <= 2600 and len(short) < 4


def test_replay_is_deterministic_and_accounts_gpus(data):
    nodes, pods = load_nodes(data / "openb_node_list_gpu_node.csv"), load_pods(data / "pods.csv")
    a = replay(nodes, pods, "fgd", seed=5)
    b = replay(nodes, pods, "fgd", seed=5)
    assert a.node_of.tolist() == b.node_of.tolist() and a.devices_of == b.devices_of
    # p1 asks for model B (node n1 only) and p3 for A or B
    for k, row in enumerate(a.pod_rows):
        if pods.names[row] == "p1" and a.node_of[k] >= 0:
            assert nodes.names[a.node_of[k]] == "n1"
    assert int(a.used_milli[-1]) == int(a.gpus.milli_used.sum())
    assert int(nodes.gpus.milli_used.sum()) == 0               # the input table is untouched
    assert (a.gpus.milli_used <= 1000).all()


def test_cli_json(data):
    r = runner.invoke(app, ["trace", "alibaba", "--pods", "pods.csv", "--data-dir", str(data), "--policy", "bestfit",
                            "--seed", "1", "--json", "--csv", str(data / "out.csv")])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert {"trace", "policy", "seed", "pods", "seconds", "alloc_by_arrival"} <= set(out)
    assert out["trace"] == "pods" and out["policy"] == "bestfit" and out["seed"] == 1
    assert all(0 <= int(k) <= 130 for k in out["alloc_by_arrival"])
    rows = list(csv.DictReader(open(data / "out.csv")))
    assert len(rows) == out["pods"]


def test_cli_table(data):
    r = runner.invoke(app, ["trace", "alibaba", "--pods", str(data / "pods.csv"), "--nodes",
                            str(data / "openb_node_list_gpu_node.csv"), "--seeds", "0-1", "--all-policies", "--json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["rows"]
    assert [row["policy"] for row in rows] == ["random", "dotprod", "gpuclustering", "gpupacking", "bestfit", "fgd"]
    assert all(len(row["unallocated_at_100"]) == 2 for row in rows)


@pytest.mark.parametrize("args, message", [
    (["--pods", "missing.csv"], "missing.csv: no such file"),
    (["--pods", "pods.csv", "--policy", "tetris"], "--policy: unknown policy 'tetris'"),
    (["--pods", "pods.csv", "--seeds", "a-b"], "--seeds: expected a range"),
    (["--pods", "bad.csv"], "bad.csv: line 3 (p1): gpu_milli: not an integer: 'x'"),
    (["--pods", "short.csv"], "short.csv: header: missing column 'gpu_milli'"),
    (["--pods", "frac.csv"], "frac.csv: line 2 (p0): gpu_milli: must be 1000 when num_gpu > 1 (got 500)"),
])
def test_cli_errors_are_one_line(data, args, message):
    (data / "bad.csv").write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,0,0\np1,1,1,1,x\n")
    (data / "short.csv").write_text("name,cpu_milli,memory_mib,num_gpu\np0,1,1,0\n")
    (data / "frac.csv").write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,2,500\n")
    r = runner.invoke(app, ["trace", "alibaba", "--data-dir", str(data), *args])
    assert r.exit_code == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], r.stderr


def test_node_list_errors(tmp_path):
    p = tmp_path / "nodes.csv"
    p.write_text("sn,cpu_milli,memory_mib,gpu,model\nn0,1000,1,2,\n")
    with pytest.raises(InputError, match=r"line 2 \(n0\): model: empty for a node with 2 GPUs"):
        load_nodes(p)
    p.write_text("sn,cpu_milli,memory_mib,gpu,model\nn0,1000,1,2,A\nn0,1000,1,2,A\n")
    with pytest.raises(InputError, match=r"line 3 \(n0\): sn: duplicate node name"):
        load_nodes(p)


def test_tie_break_perm_is_one_random_node_order_per_run(tmp_path):
    """Four identical 1-GPU nodes and only CPU pods: GpuPacking scores CPU pods 0 everywhere, so every pod is a
    tie. With --tie-break name every pod of every seed lands on a0 (the smallest name); with perm (the
    simulator's renamed nodes) each run sends all its pods to the one node its permutation puts first, and that
    node differs between seeds."""
    (tmp_path / "nodes.csv").write_text("sn,cpu_milli,memory_mib,gpu,model\n" +
                                        "".join(f"{n},64000,65536,1,A\n" for n in ("c0", "a0", "d0", "b0")))
    (tmp_path / "pods.csv").write_text(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
        "scheduled_time\n" + "".join(f"p{i},1000,1024,0,0,,BE,Running,0,1,0\n" for i in range(3)) +
        "g0,1000,1024,1,1000,,LS,Running,0,1,0\n")
    nodes, pods = load_nodes(tmp_path / "nodes.csv"), load_pods(tmp_path / "pods.csv")
    first_nodes = {"name": set(), "perm": set()}
    for tie_break in first_nodes:
        for seed in range(8):
            r = replay(nodes, pods, "gpupacking", seed, tie_break=tie_break)
            cpu_rows = [k for k, i in enumerate(r.pod_rows) if pods.num_gpu[i] == 0 and r.node_of[k] >= 0]
            cpu_nodes = {r.node_names[r.node_of[k]] for k in cpu_rows}
            assert len(cpu_nodes) == 1                 # one order per run: the same first node every time
            first_nodes[tie_break] |= cpu_nodes
    assert first_nodes["name"] == {"a0"}
    assert len(first_nodes["perm"]) > 1
