"""The simulator (phalanx/simulate): hand-checked toys for the GPU-second ledger, gang progress and node failures,
conservation of GPU-seconds on random runs, determinism by seed, the CLI."""
from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from phalanx.cli import app
from phalanx.cluster_models.generate import make_node
from phalanx.simulate import POLICIES, JobSpec, Simulation, generate_jobs

H = 3600.0


def _nodes(n: int):
    return [make_node(f"node-{i:06d}", "gpu-8x", i) for i in range(n)]


def _job(name, klass, arrival, workers, gpus, duration, priority=0, cpu="1"):
    return JobSpec(name, klass, arrival, workers, gpus, cpu, "1Gi", duration, priority)


def _without_timings(rows):
    return [{k: v for k, v in row.items() if k not in ("wall_s", "scheduler_s", "events_per_s")} for row in rows]


def test_a_partly_bound_job_holds_gpus_pod_by_pod_and_not_as_a_gang():
    """3 nodes of 8 GPUs. A one-node batch job runs 0-2 h; a 3-worker training job (8 GPUs each, 1 h) arrives at
    10 s. Pod by pod two workers bind at once and hold 16 GPUs until the batch job leaves at 2 h; as a gang nothing
    binds until then. Both run the training job 2-3 h."""
    jobs = [_job("x", "batch", 0.0, 1, 8, 2 * H), _job("t", "training", 10.0, 3, 8, H)]
    pod_by_pod = Simulation(_nodes(3), jobs, POLICIES["pod-by-pod"], hours=4).run()
    gang = Simulation(_nodes(3), jobs, POLICIES["gang"], hours=4).run()
    for r in (pod_by_pod, gang):
        assert r.gpu_hours["running"] == pytest.approx(8 * 2 + 24 * 1)
        assert r.jobs["training"] == {"arrived": 1, "started": 1, "finished": 1}
        assert r.pending_s["training"]["p50"] == pytest.approx(2 * H - 10.0)
        assert r.completion_s["training"]["p50"] == pytest.approx(3 * H - 10.0)
        assert r.gpu_hours["permit"] == 0 and r.gpu_hours["down"] == 0
    assert pod_by_pod.gpu_hours["incomplete"] == pytest.approx(16 * (2 * H - 10.0) / H)
    assert gang.gpu_hours["incomplete"] == 0
    # Idle: pod by pod 8 GPUs 0-10 s, 24 GPUs 3-4 h; the gang leaves 16 idle 0-2 h (not stranded: the pending
    # gang asks for 24).
    assert pod_by_pod.gpu_hours["idle"] + pod_by_pod.gpu_hours["stranded"] == pytest.approx((16 * 10.0 + 24 * H) / H)
    assert gang.gpu_hours["idle"] == pytest.approx((16 * 2 * H + 24 * H) / H)
    assert gang.gpu_hours["stranded"] == 0


def test_idle_gpus_a_pending_job_could_use_in_total_are_stranded():
    """2 nodes of 96 cpu. Two 4-GPU batch jobs of 40 cpu take half of each node (LeastAllocated on cpu spreads
    them); an 8-GPU job then fits nowhere though 8 GPUs are idle: they are stranded until the first one leaves."""
    jobs = [_job("a", "batch", 0.0, 1, 4, 2 * H, cpu="40"), _job("b", "batch", 0.0, 1, 4, 3 * H, cpu="40"),
            _job("c", "batch", 60.0, 1, 8, H)]
    r = Simulation(_nodes(2), jobs, POLICIES["pod-by-pod"], hours=4).run()
    assert r.gpu_hours["stranded"] == pytest.approx(8 * (2 * H - 60.0) / H)
    assert r.pending_s["batch"]["p99"] == pytest.approx(2 * H - 60.0)


def test_a_node_failure_destroys_the_progress_of_a_running_gang_and_its_pod_is_recreated():
    """2 nodes; a 2-worker job of 8 GPUs each needs 2 h. Node 0 fails at 30 min and returns at 40 min: the run
    so far is lost (16 GPUs x 30 min), the recreated worker binds when the node returns, and the job runs 2 h more."""
    jobs = [_job("t", "training", 0.0, 2, 8, 2 * H)]
    sim = Simulation(_nodes(2), jobs, POLICIES["gang"], hours=3, repair_s=600.0)
    sim._push(1800.0, "fail", "node-000000")
    r = sim.run()
    assert r.destroyed_gpu_hours == pytest.approx(16 * 0.5)
    assert r.gpu_hours["down"] == pytest.approx(8 * 600 / H)
    assert r.gpu_hours["incomplete"] == pytest.approx(8 * 600 / H)
    assert r.gpu_hours["running"] == pytest.approx(16 * (1800 + 2 * H) / H)
    assert r.completion_s["training"]["p50"] == pytest.approx(2400 + 2 * H)
    assert r.pods_bound == 3


@st.composite
def _runs(draw):
    nodes = draw(st.integers(2, 12))
    return (nodes, draw(st.floats(0.5, 6.0)), draw(st.integers(0, 10_000)), draw(st.sampled_from(list(POLICIES))),
            draw(st.sampled_from([0.0, 0.0, 2.0])), draw(st.floats(0.3, 2.0)))


@given(_runs())
@example((9, 5.0, 3083, "pod-by-pod", 0.0, 1.25))    # an inference Deployment deleted before any replica started
@settings(max_examples=25, deadline=None)
def test_every_gpu_second_is_in_exactly_one_state(run):
    nodes, hours, seed, policy, failures, load = run
    jobs = generate_jobs(8 * nodes, hours, seed=seed, load=load)
    r = Simulation(_nodes(nodes), jobs, POLICIES[policy], hours=hours, seed=seed,
                   node_failures_per_day=failures, repair_s=900.0).run()
    assert all(v >= -1e-6 for v in r.gpu_hours.values())
    assert sum(r.gpu_hours.values()) == pytest.approx(8 * nodes * hours, rel=1e-9)
    for _, counts in r.samples:
        assert sum(counts) == 8000 * nodes and min(counts) >= 0
    finished = sum(c["finished"] for c in r.jobs.values())
    started = sum(c["started"] for c in r.jobs.values())
    assert finished <= started <= len(jobs)


@pytest.mark.parametrize("policy", ["gang-preemption", "pod-by-pod"])
def test_the_same_seed_gives_the_same_run(policy):
    def run():
        jobs = generate_jobs(8 * 20, 6, seed=5, load=1.2)
        r = Simulation(_nodes(20), jobs, POLICIES[policy], hours=6, seed=5, node_failures_per_day=1.0).run()
        return _without_timings([r.row()]), r.samples, [s.tolist() for s in r.rack_samples]
    assert run() == run()


def test_forgetting_decisions_once_read_changes_nothing_but_memory():
    jobs = generate_jobs(8 * 10, 4, seed=2, load=1.5)
    runs = [Simulation(_nodes(10), jobs, POLICIES["gang-preemption"], hours=4, seed=2, keep_decisions=keep)
            for keep in (False, True)]
    rows = _without_timings([sim.run().row() for sim in runs])
    assert rows[0] == rows[1]
    forgetful, keeping = (sim.sched for sim in runs)
    assert forgetful.decision_mark() == keeping.decision_mark() > 0
    assert forgetful.records == [] and len(keeping.records) > 0
    assert forgetful.decisions(0) == [] and keeping.decisions(keeping.decision_mark() - 1)


def test_workload_generator_meets_its_offered_load_and_checks_its_inputs():
    jobs = generate_jobs(8000, 48, seed=1, load=0.5)
    asked = sum(j.demand_milli / 1000 * j.duration for j in jobs)
    assert asked / (8000 * 48 * H) == pytest.approx(0.5, rel=0.15)
    assert [j.arrival for j in jobs] == sorted(j.arrival for j in jobs)
    with pytest.raises(ValueError, match="no GPUs"):
        generate_jobs(0, 1)
    with pytest.raises(ValueError, match="load"):
        generate_jobs(8, 1, load=0)


def test_cli_simulate_compares_policies(tmp_path):
    out = tmp_path / "runs.csv"
    result = CliRunner().invoke(app, ["simulate", "--nodes", "16", "--hours", "3", "--policy", "pod-by-pod",
                                      "--policy", "gang", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert [r["policy"] for r in report["runs"]] == ["pod-by-pod", "gang"]
    assert out.read_text().splitlines()[0].startswith("policy,seed,nodes,gpus,hours,utilization")
    text = CliRunner().invoke(app, ["simulate", "--nodes", "8", "--hours", "1", "--policy", "gang"])
    assert text.exit_code == 0 and "gang" in text.output and "stranded GPU-h" in text.output
    bad = CliRunner().invoke(app, ["simulate", "--policy", "fifo"])
    assert bad.exit_code == 2 and "unknown policy 'fifo'" in bad.output
    bad = CliRunner().invoke(app, ["simulate", "--out", str(tmp_path / "x.txt")])
    assert bad.exit_code == 2 and ".csv or .parquet" in bad.output
    bad = CliRunner().invoke(app, ["simulate", "--seed", "-1"])      # was numpy's "expected non-negative integer"
    assert bad.exit_code == 2 and bad.output == "error: phalanx simulate: --seed: Input should be greater than or equal to 0\n"


def test_cli_simulate_refuses_bad_numbers_and_paths_before_running(tmp_path):
    # were: --hours inf ran forever; --node-failures-per-day nan, --trace-day -1: a pydantic traceback; --out in a
    # missing directory, --plot naming a file: a traceback once every run was done
    def error(*args):
        result = CliRunner().invoke(app, ["simulate", "--nodes", "2", "--hours", "0.1", "--policy", "gang", *args])
        assert result.exit_code == 2, result.output
        return result.output
    assert error("--hours", "inf") == "error: --hours: Input should be a finite number (got inf)\n"
    assert error("--node-failures-per-day", "nan") == \
        "error: --node-failures-per-day: Input should be a finite number (got nan)\n"
    assert error("--trace-day", "-1") == "error: --trace-day: Input should be greater than or equal to 0 (got -1.0)\n"
    missing = tmp_path / "no" / "runs.csv"
    assert error("--out", str(missing)) == f"error: --out: {missing}: no such directory '{tmp_path / 'no'}'\n"
    (tmp_path / "file").write_text("")
    assert error("--plot", str(tmp_path / "file")) == f"error: --plot: {tmp_path / 'file'} is not a directory\n"


def test_a_sweep_config_that_is_not_utf8_is_one_line(tmp_path):
    from phalanx.cluster_models import InputError
    from phalanx.simulate.sweep import load_sweep
    path = tmp_path / "sweep.yaml"
    path.write_bytes(b"scenarios: [{name: \xff, nodes: 2, hours: 1}]\n")       # was a UnicodeDecodeError traceback
    with pytest.raises(InputError) as err:
        load_sweep(path)
    assert str(err.value) == f"{path}: not UTF-8 text (byte 19)"


# -- sweeps ---------------------------------------------------------------------------------------------------
SWEEP = """
scenarios:
  - {name: tiny, nodes: 6, hours: 2, load: 1.0}
  - {name: failing, nodes: 4, hours: 1.5, node_failures_per_day: 3, repair_hours: 0.2, autoscale_nodes: 2}
policies: [pod-by-pod, gang-preemption]
seeds: [0, 1]
"""


def test_a_sweep_on_a_process_pool_equals_its_runs_one_by_one(tmp_path):
    from phalanx.simulate.sweep import load_sweep, run_many, run_one
    path = tmp_path / "sweep.yaml"
    path.write_text(SWEEP)
    config = load_sweep(path)
    alone = [run_one(run) for run in config.runs()]
    assert [(r["scenario"], r["policy"], r["seed"]) for r in alone] == [
        (s, p, seed) for s in ("tiny", "failing") for p in ("pod-by-pod", "gang-preemption") for seed in (0, 1)]
    assert _without_timings(run_many(config.runs(), workers=2)) == _without_timings(alone)


# ray.init starts its processes with subprocess (fork, then exec at once): JAX's fork warning does not apply.
@pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")
def test_a_sweep_on_a_local_ray_equals_its_runs_one_by_one(tmp_path):
    pytest.importorskip("ray")
    from phalanx.simulate.sweep import load_sweep, run_many, run_one
    path = tmp_path / "sweep.yaml"
    path.write_text(SWEEP)
    config = load_sweep(path)
    alone = [run_one(run) for run in config.runs()]
    assert _without_timings(run_many(config.runs(), ray_address="local")) == _without_timings(alone)


@pytest.mark.parametrize("text, message", [
    ("scenarios: []", "scenarios: List should have at least 1 item"),
    ("scenarios: [{name: a, nodes: 0, hours: 1}]", "scenarios.0.nodes: Input should be greater than 0"),
    ("scenarios: [{name: a, nodes: 2, hours: 1, gpus: 3}]", "scenarios.0.gpus: Extra inputs are not permitted"),
    ("scenarios: [{name: a, nodes: 2, hours: 1}]\npolicies: [fifo]", "policies: Value error, unknown policy 'fifo'"),
    ("scenarios: [{name: a, hours: 1}]", "scenarios.0: Value error, give exactly one of nodes"),
    ("scenarios: [", "sweep.yaml: line 1: invalid YAML: expected the node content, but found '<stream end>'"),
    # each of these ran (a key twice: the last won; seeds [-1]: numpy's ValueError mid-sweep; hours .inf: forever;
    # policies []: no run, exit 0; a policy twice: its rows twice; a 5,000-digit int or deep nesting: a traceback)
    ("scenarios: [{name: a, nodes: 2, hours: 1, hours: 2}]", 'sweep.yaml: line 1: invalid YAML: key "hours" already '
                                                             "set in map"),
    ("scenarios: [{name: a, nodes: 2, hours: 1}]\nseeds: [-1]", "seeds.0: Input should be greater than or equal to 0"),
    ("scenarios: [{name: a, nodes: 2, hours: 1}]\nseeds: [true]", "seeds.0: Input should be a valid integer"),
    ("scenarios: [{name: a, nodes: 2, hours: .inf}]", "scenarios.0.hours: Input should be a finite number"),
    ("scenarios: [{name: a, nodes: 2, hours: 1, node_failures_per_day: .inf}]",
     "scenarios.0.node_failures_per_day: Input should be a finite number"),
    ("scenarios: [{name: a, nodes: 2, hours: 1}]\npolicies: []", "policies: List should have at least 1 item"),
    ("scenarios: [{name: a, nodes: 2, hours: 1}]\npolicies: [gang, gang]", "policies: Value error, gang given twice"),
    ("scenarios: [{name: a, nodes: 2, hours: 1}, {name: a, nodes: 4, hours: 1}]",
     "scenarios: Value error, a given twice"),
    ("scenarios: [{name: a, nodes: %s, hours: 1}]" % ("1" * 5000), "sweep.yaml: line 1: invalid YAML: number out of range"),
    ("scenarios: " + "[" * 3000 + "]" * 3000, "sweep.yaml: invalid YAML: nested deeper than phalanx reads"),
    ("", "sweep.yaml: Input should be a valid dictionary"),
])
def test_a_bad_sweep_config_names_the_file_and_field(tmp_path, text, message):
    from phalanx.cluster_models import InputError
    from phalanx.simulate.sweep import load_sweep
    path = tmp_path / "sweep.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match="sweep.yaml") as err:
        load_sweep(path)
    assert message in str(err.value)


def test_cli_sweep_prints_the_merged_table(tmp_path):
    path = tmp_path / "sweep.yaml"
    path.write_text(SWEEP)
    out = tmp_path / "rows.csv"
    result = CliRunner().invoke(app, ["sweep", str(path), "--workers", "2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].split()[:3] == ["scenario", "seed", "policy"]
    assert len(out.read_text().splitlines()) == 1 + 8
    bad = CliRunner().invoke(app, ["sweep", str(tmp_path / "missing.yaml")])
    assert bad.exit_code == 2 and "missing.yaml" in bad.output


# -- the Alibaba trace in time ----------------------------------------------------------------------------------
TRACE_NODES = """sn,cpu_milli,memory_mib,gpu,model
n0,8000,16384,1,T4
n1,8000,16384,1,V100M16
"""
TRACE_PODS = """name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
p-old,1000,1024,1,500,,LS,Running,0,90000,10
p-gone,1000,1024,0,0,,BE,Succeeded,100,200,100
p-a,1000,1024,1,500,,BE,Running,86460,90060,86460
p-b,1000,1024,1,1000,V100M16,BE,Running,86520,88320,
p-late,1000,1024,0,0,,BE,Running,200000,300000,200000
"""


def test_a_trace_window_replays_pods_alive_at_its_start_and_those_created_in_it(tmp_path):
    """Day 1, 2 h: p-old (alive, 1 h left) at 0, p-a at 60 s for 1 h, p-b (never scheduled in the trace: its life
    from creation) at 120 s for 30 min; p-gone and p-late are outside. p-old takes n0 (a tie, the first node);
    p-a takes n1 (LeastAllocated: n0 holds p-old's cpu); p-b needs a whole V100 (n1) and waits for p-a to leave
    at 3660 s. Both nodes then hold half a GPU that p-b's whole GPU cannot use: stranded."""
    from phalanx.cluster_models.alibaba import load_nodes, load_pods
    from phalanx.simulate.alibaba import trace_jobs, trace_nodes
    (tmp_path / "nodes.csv").write_text(TRACE_NODES)
    (tmp_path / "pods.csv").write_text(TRACE_PODS)
    nodes = trace_nodes(load_nodes(tmp_path / "nodes.csv"))
    assert nodes[1].metadata.labels["nvidia.com/gpu.product"] == "V100M16"
    jobs = trace_jobs(load_pods(tmp_path / "pods.csv"), start_day=1, hours=2)
    assert [(j.name, j.klass, j.arrival, j.duration, j.gpu_milli, j.gpu_models) for j in jobs] == [
        ("p-old", "inference", 0.0, 3600.0, 500, ""), ("p-a", "batch", 60.0, 3600.0, 500, ""),
        ("p-b", "batch", 120.0, 1800.0, 1000, "V100M16")]
    sim = Simulation(nodes, jobs, POLICIES["pod-by-pod"], hours=2, keep_decisions=True)
    r = sim.run()
    bound = {rec.object: rec.node for rec in sim.sched.records if rec.kind == "Bound"}
    assert bound == {"inference/p-old-0": "n0", "batch/p-a-0": "n1", "batch/p-b-0": "n1"}
    assert r.pending_s["batch"]["p99"] == pytest.approx(3660.0 - 120.0)
    assert r.gpu_hours["running"] == pytest.approx((0.5 * 3600 + 0.5 * 3600 + 1800) / H)
    assert r.gpu_hours["stranded"] == pytest.approx((0.5 * (3600 - 120) + 0.5 * (3660 - 120)) / H)
    assert sum(r.gpu_hours.values()) == pytest.approx(2 * 2)
    clones = trace_jobs(load_pods(tmp_path / "pods.csv"), start_day=1, hours=2, clones=2)
    assert [j.name for j in clones] == ["p-old-c1", "p-old-c2", "p-a-c1", "p-a-c2", "p-b-c1", "p-b-c2"]


def test_cli_simulate_replays_a_trace(tmp_path):
    (tmp_path / "nodes.csv").write_text(TRACE_NODES)
    (tmp_path / "pods.csv").write_text(TRACE_PODS)
    result = CliRunner().invoke(app, ["simulate", "--trace", "pods.csv", "--trace-nodes", "nodes.csv",
                                      "--data-dir", str(tmp_path), "--trace-day", "1", "--hours", "2",
                                      "--policy", "pod-by-pod", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["jobs"] == 3
    no_times = tmp_path / "bare.csv"
    no_times.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,1024,0,0\n")
    bad = CliRunner().invoke(app, ["simulate", "--trace", str(no_times), "--trace-nodes", "nodes.csv",
                                   "--data-dir", str(tmp_path)])
    assert bad.exit_code == 2 and "cannot be replayed in time" in bad.output


# -- the autoscaler ---------------------------------------------------------------------------------------------
def _autoscaled(policy, timeout=300.0):
    from phalanx.simulate.autoscaler import Autoscaler
    nodes = _nodes(1)
    scaler = Autoscaler(nodes[0], max_nodes=4, provision_s=600.0, scale_down_s=600.0)
    jobs = [_job("t", "training", 0.0, 2, 8, H)]
    sim = Simulation(nodes, jobs, POLICIES[policy], hours=2, autoscaler=scaler, permit_timeout_s=timeout)
    return sim.run(), scaler


def test_the_autoscaler_adds_the_node_a_gang_lacks_and_removes_it_once_empty():
    """One 8-GPU node; a gang of two 8-GPU workers fails its cycle at 0. At the first scan (10 s) one worker packs
    onto the free node, the other needs a node: one is asked for and joins at 610 s; the gang binds on both and
    runs to 4210 s; the added node is removed 600 s after it empties (4810 s)."""
    r, scaler = _autoscaled("gang")
    assert (scaler.asked, r.nodes_added, r.nodes_removed) == (1, 1, 1)
    assert r.pending_s["training"]["p50"] == pytest.approx(610.0)
    assert r.completion_s["training"]["p50"] == pytest.approx(610.0 + H)
    # The pool node is in the ledger as unprovisioned except 610-4810 s; three more never join.
    assert r.gpu_hours["unprovisioned"] == pytest.approx((8 * (610 + (2 * H - 4810)) + 3 * 8 * 2 * H) / H)
    assert r.gpu_hours["running"] == pytest.approx(16.0)
    assert sum(r.gpu_hours.values()) == pytest.approx(5 * 8 * 2)


def test_a_gang_held_at_permit_holds_gpus_while_the_node_is_provisioned():
    """gang_mode "permit": the first worker waits at Permit on the free node while the second is unschedulable.
    A timeout longer than provisioning holds its 8 GPUs until the node joins (610 s) and the gang binds then."""
    r, scaler = _autoscaled("gang-permit", timeout=900.0)
    assert scaler.asked == 1 and r.jobs["training"]["finished"] == 1
    assert r.gpu_hours["permit"] == pytest.approx(8 * 610.0 / H)
    assert r.pending_s["training"]["p50"] == pytest.approx(610.0)
    assert sum(r.gpu_hours.values()) == pytest.approx(5 * 8 * 2)


def test_a_permit_timeout_shorter_than_provisioning_never_overlaps_the_workers():
    """The same gang with a 300 s timeout. A worker rejected at Permit waits for a member of its gang added, or the
    pool's flush (its first 30 s tick more than 300 s later); its rejection moves the other worker (NodeResourcesFit
    rejected it) onto the node it freed. So t-0 waits 0-300, t-1 300-600; the node that joins at 610 moves neither
    (GangScheduling did not register it); then the flushes take turns with the timeouts, never overlapping: t-0
    630-930 (flushed after its rejection at 300), t-1 930-1230 (its timeout and the flush at 930: the timeout goes
    first), t-0 1260-1560, ..., every 630 s, the last from 6930 to the end (7200). 8 GPUs held 600 + 10 x 600 + 270
    s; the gang never starts."""
    r, scaler = _autoscaled("gang-permit", timeout=300.0)
    assert scaler.asked == 1 and r.jobs["training"]["started"] == 0
    assert r.gpu_hours["permit"] == pytest.approx(8 * (600 + 10 * 600 + 270) / H)
    assert sum(r.gpu_hours.values()) == pytest.approx(5 * 8 * 2)


def test_a_permit_timeout_shorter_than_provisioning_loops():
    """One node, busy for 10 h; a gang of three 8-GPU workers held at Permit (300 s), arriving at 1 s; the
    autoscaler may add two nodes (600 s to join, removed 60 s after they empty). All three are unschedulable at 1
    and again at the flush at 330; the two nodes it asks for join at 611 and move them (NodeResourcesFit): t-0 and
    t-1 wait on them, t-2 fits nowhere. At 911 both are rejected, which moves t-2 onto the first node; it is rejected
    at 1211. The flush at 1230 (the first tick more than 300 s after 911) retries t-0 and t-1: t-0 waits on the
    first node, still there, t-1 fits nowhere (the second was removed 60 s after it emptied). The gang never
    starts within the hour."""
    from phalanx.simulate.autoscaler import Autoscaler
    nodes = _nodes(1)
    scaler = Autoscaler(nodes[0], max_nodes=2, provision_s=600.0, scale_down_s=60.0)
    jobs = [_job("x", "batch", 0.0, 1, 8, 10 * H), _job("t", "training", 1.0, 3, 8, H)]
    sim = Simulation(nodes, jobs, POLICIES["gang-permit"], hours=1, autoscaler=scaler, permit_timeout_s=300.0,
                     keep_decisions=True)
    r = sim.run()
    seen = [(rec.time, rec.kind, rec.object.split("/")[1], rec.node) for rec in sim.sched.records
            if rec.object.startswith("training/") and rec.time <= 1230
            and rec.kind in ("WaitingOnPermit", "PermitRejected", "Unschedulable")]
    assert seen == [(1, "Unschedulable", "t-0", None), (1, "Unschedulable", "t-1", None),
                    (1, "Unschedulable", "t-2", None), (330, "Unschedulable", "t-0", None),
                    (330, "Unschedulable", "t-1", None), (330, "Unschedulable", "t-2", None),
                    (611, "WaitingOnPermit", "t-0", "auto-000000"), (611, "WaitingOnPermit", "t-1", "auto-000001"),
                    (611, "Unschedulable", "t-2", None), (911, "PermitRejected", "t-0", None),
                    (911, "PermitRejected", "t-1", None), (911, "WaitingOnPermit", "t-2", "auto-000000"),
                    (1211, "PermitRejected", "t-2", None), (1230, "WaitingOnPermit", "t-0", "auto-000000"),
                    (1230, "Unschedulable", "t-1", None)]
    assert r.jobs["training"]["started"] == 0
    assert sum(r.gpu_hours.values()) == pytest.approx(3 * 8 * 1)


def _scaled_for(jobs, nodes=None, policy="gang", max_nodes=6):
    from phalanx.simulate.autoscaler import Autoscaler
    nodes = nodes or _nodes(1)
    scaler = Autoscaler(nodes[0], max_nodes=max_nodes, provision_s=600.0, scale_down_s=600.0)
    r = Simulation(nodes, jobs, POLICIES[policy], hours=2, autoscaler=scaler).run()
    return r, scaler


def test_the_autoscaler_packs_by_cpu_and_memory_too():
    """The one node is full (a batch job holds its 8 GPUs). A gang of four workers of 1 GPU and 60 of the node's
    96 CPUs: by GPUs alone one new node would hold all four; by CPU each takes a node of its own, so four are asked
    for at the first scan and the gang binds when they join (610 s). Same with memory (600Gi of 1Ti each)."""
    for cpu, memory in (("60", "1Gi"), ("1", "600Gi")):
        busy = _job("x", "batch", 0.0, 1, 8, 10 * H)
        gang = JobSpec("t", "training", 1.0, 4, 1, cpu, memory, H, 0)
        r, scaler = _scaled_for([busy, gang])
        assert scaler.asked == 4, (cpu, memory)
        # It arrives at 1 s and fails; the scan at 11 s asks; the nodes join at 611 s: 610 s pending.
        assert r.pending_s["training"]["p50"] == pytest.approx(610.0)


def test_pods_no_template_node_can_hold_ask_for_no_node():
    """A worker of 16 GPUs, or of more memory than the template node has, or a CPU-only pod that does not tolerate
    the template's GPU taint (CA: "pod didn't trigger scale-up: it wouldn't fit if a new node is added")."""
    from phalanx.cluster_models.generate import GPU_TAINT
    busy = _job("x", "batch", 0.0, 1, 8, 10 * H)
    for job in (JobSpec("t", "training", 1.0, 1, 16, "1", "1Gi", H, 0),
                JobSpec("t", "training", 1.0, 1, 1, "1", "2Ti", H, 0)):
        _, scaler = _scaled_for([busy, job])
        assert scaler.asked == 0
    tainted = [make_node("node-000000", "gpu-8x", 0, taints=[GPU_TAINT])]
    cpu_only = JobSpec("c", "batch", 1.0, 1, 0, "200", "1Gi", H, 0)     # more CPU than a node has: never fits
    _, scaler = _scaled_for([cpu_only], nodes=tainted)
    assert scaler.asked == 0
    fits_untainted = JobSpec("c", "batch", 1.0, 2, 0, "90", "1Gi", H, 0)
    _, scaler = _scaled_for([_job("y", "batch", 0.0, 1, 0, 10 * H, cpu="90"), fits_untainted], policy="pod-by-pod")
    assert scaler.asked == 2                     # CPU-only pods trigger it where the template takes them
    _, scaler = _scaled_for([fits_untainted], nodes=tainted, policy="pod-by-pod")
    assert scaler.asked == 0                     # ... and not where its taint keeps them off


def test_cli_simulate_on_two_processes_prints_what_one_prints():
    args = ["simulate", "--nodes", "12", "--hours", "3", "--policy", "gang", "--policy", "gang-permit",
            "--autoscale-nodes", "3", "--json"]
    one, two = (CliRunner().invoke(app, args + ["--workers", str(w)]) for w in (1, 2))
    assert one.exit_code == 0 and two.exit_code == 0, one.output + two.output
    assert _without_timings(json.loads(one.output)["runs"]) == _without_timings(json.loads(two.output)["runs"])


@pytest.mark.parametrize("policy", ["gang", "gang-preemption", "gang-topology"])
def test_kept_gang_shortfalls_change_no_decision(policy):
    """Saturated runs whose waiting gangs are retried after every pod that leaves (GroupCycle.shortfalls answers
    most retries from the last failed cycle of their shape): every record equals that of a run that makes every
    cycle, preemption (nominated gang members see their own nodes free) and node failures included."""
    jobs = generate_jobs(8 * 24, 5, seed=1, load=2.0)

    def run(keep: bool):
        sim = Simulation(_nodes(24), jobs, POLICIES[policy], hours=5, seed=1, node_failures_per_day=1.0,
                         keep_decisions=True)
        sim.sched.group_cycle.keep_shortfalls = keep
        hits = []
        shortfall = sim.sched.group_cycle._shortfall
        sim.sched.group_cycle._shortfall = lambda *a: hits.append(shortfall(*a)) or hits[-1]
        sim.run()
        return sim.sched.records, sum(h is not None for h in hits)
    kept, hits = run(True)
    every, none = run(False)
    assert hits > 0 and none == 0
    assert kept == every


def test_a_deployment_serves_from_each_bound_replica_and_is_deleted_after_its_duration():
    """2 nodes of 8 GPUs. A Deployment of 3 replicas of 4 GPUs arrives at 0 for 2 h: its controllers make a
    ReplicaSet whose pods bind at once (node-0, node-1 by LeastAllocated, then node-0: the tie goes to the first),
    each serving on its own: 12 GPUs running for 2 h, none incomplete. An 8-GPU batch job arriving at 10 s fits
    nowhere while node-1's 4 free GPUs are stranded; the Deployment is deleted at 2 h and the batch job runs to
    2.5 h."""
    service = JobSpec("web", "inference", 0.0, 3, 4, "1", "1Gi", 2 * H, 1000, kind="Deployment")
    sim = Simulation(_nodes(2), [service, _job("b", "batch", 10.0, 1, 8, 0.5 * H)], POLICIES["gang"], hours=3,
                     keep_decisions=True)
    r = sim.run()
    bound = [rec for rec in sim.sched.records if rec.kind == "Bound"]
    assert [rec.node for rec in bound] == ["node-000000", "node-000001", "node-000000", "node-000000"]
    assert all(rec.object.startswith("inference/web-") for rec in bound[:3]) and bound[3].object == "batch/b-0"
    owners = sim.sched.cluster.default_selectors.owners
    assert [(kind, ns) for kind, ns, _ in owners] == [("ReplicaSet", "inference")]
    assert r.gpu_hours["running"] == pytest.approx(12 * 2 + 8 * 0.5)
    assert r.gpu_hours["incomplete"] == 0
    assert r.gpu_hours["stranded"] == pytest.approx(4 * (2 * H - 10.0) / H)
    assert r.jobs["inference"] == {"arrived": 1, "started": 1, "finished": 1}
    assert r.pending_s["inference"]["p50"] == 0 and r.completion_s["inference"]["p50"] == pytest.approx(2 * H)
    assert r.pending_s["batch"]["p50"] == pytest.approx(2 * H - 10.0)
    deleted = [rec for rec in sim.sched.records if rec.kind == "Deleted" and rec.object.startswith("inference/")]
    assert len(deleted) == 3 and {rec.message for rec in deleted} == {"owner Deployment inference/web deleted"}
    assert sum(r.gpu_hours.values()) == pytest.approx(16 * 3)


def test_a_lost_replica_is_recreated_and_costs_the_service_no_work():
    """2 nodes of 8 GPUs; a Deployment of 2 replicas of 8 GPUs for 2 h. Node 0 fails at 30 min and returns at 40
    min: its replica is lost (8 GPUs down, nothing destroyed: a replica keeps no progress), the ReplicaSet's new pod
    binds when the node returns, and the other replica served throughout."""
    service = JobSpec("web", "inference", 0.0, 2, 8, "1", "1Gi", 2 * H, 1000, kind="Deployment")
    sim = Simulation(_nodes(2), [service], POLICIES["gang"], hours=3, repair_s=600.0, keep_decisions=True)
    sim._push(1800.0, "fail", "node-000000")
    r = sim.run()
    assert r.destroyed_gpu_hours == 0
    assert r.gpu_hours["running"] == pytest.approx(8 * 2 + 8 * (2 * H - 600) / H)
    assert r.gpu_hours["down"] == pytest.approx(8 * 600 / H)
    assert r.gpu_hours["incomplete"] == 0 and r.pods_bound == 3
    again = [rec for rec in sim.sched.records if rec.kind == "Bound"][-1]
    assert again.time == 2400.0 and again.object.endswith("-r1")
    assert r.completion_s["inference"]["p50"] == pytest.approx(2 * H)
