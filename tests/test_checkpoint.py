"""Checkpoint/resume (simulate/checkpoint.py, sched/checkpoint.py): a run resumed from any of its checkpoints ends
exactly as the uninterrupted run (every policy; node failures, the autoscaler, GPU shares, Permit, preemption), the
scheduler alone resumes to the same decisions, bad files and unsupported states are one-line errors."""
from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from phalanx.cli import app
from phalanx.cluster_models import ClusterObjects
from phalanx.cluster_models.generate import make_node, pod_template
from phalanx.sched import Cluster, Scheduler
from phalanx.sched.checkpoint import CheckpointError, manifest, restore_scheduler, scheduler_state
from phalanx.sched.config import DEFAULT_SCHEDULER_NAME, config_from_doc
from phalanx.simulate import JobSpec, Simulation, generate_jobs
from phalanx.simulate import checkpoint
from phalanx.simulate.autoscaler import Autoscaler
from phalanx.simulate.engine import policy_named

H = 3600.0


def _nodes(n: int):
    return [make_node(f"node-{i:06d}", "gpu-8x", i) for i in range(n)]


def _outcome(result):
    """Everything a run measured but the wall-clock timings."""
    row = {k: v for k, v in result.row().items() if k not in ("wall_s", "scheduler_s", "events_per_s")}
    return row, result.samples, result.pending_times, [s.tolist() for s in result.rack_samples]


def _synthetic(policy: str, nodes: int = 16, hours: float = 4.0, seed: int = 3):
    jobs = generate_jobs(8 * nodes, hours, seed=seed, load=2.0)
    scaler = Autoscaler(_nodes(1)[0], 4, 600.0, 600.0)
    return Simulation(_nodes(nodes), jobs, policy_named(policy), hours=hours, seed=seed, node_failures_per_day=3.0,
                      repair_s=1800.0, autoscaler=scaler, permit_timeout_s=300.0)


def _shares(policy: str, hours: float = 3.0, seed: int = 1):
    """Jobs asking for a quarter, half or whole GPU (some of one model): GpuShare places them on devices."""
    rng = np.random.default_rng(seed)
    jobs = [JobSpec(f"s{i:03d}", "batch", float(t), 1, 1, "2", "4Gi", float(rng.uniform(600, 5400)), 0,
                    gpu_milli=int(rng.choice([250, 500, 1000])),
                    gpu_models="NVIDIA-H100-80GB-HBM3" if i % 7 == 0 else "")
            for i, t in enumerate(np.sort(rng.uniform(0, hours * H, 160)))]
    return Simulation(_nodes(3), jobs, policy_named(policy), hours=hours, seed=seed)


def _resumed_runs(make, every: float, tmp_path) -> tuple[object, list]:
    """(the run with pauses every `every` s, the results of resuming from each of its checkpoints, the first
    through a file)."""
    docs = []
    paused = make().run(every, lambda sim: docs.append(json.loads(json.dumps(checkpoint.simulation_state(sim)))))
    assert len(docs) >= 2
    path = tmp_path / "first.json.gz"
    path.write_bytes(gzip.compress(json.dumps(docs[0]).encode()))
    return paused, [checkpoint.load(path).run()] + [checkpoint.resume(doc).run() for doc in docs[1:]]


@pytest.mark.parametrize("policy", ["pod-by-pod", "gang", "gang-topology", "gang-preemption", "gang-permit",
                                    "gang+fgd", "pod-by-pod+random"])
def test_a_run_resumed_from_any_checkpoint_ends_as_the_uninterrupted_run(policy, tmp_path):
    whole = _outcome(_synthetic(policy).run())
    paused, resumed = _resumed_runs(lambda: _synthetic(policy), 0.9 * H, tmp_path)
    assert _outcome(paused) == whole                 # pausing to checkpoint changes nothing
    for result in resumed:
        assert _outcome(result) == whole
    assert whole[0]["pods_bound"] > 0


def test_gpu_shares_are_held_on_the_same_devices_after_a_resume(tmp_path):
    sim = _shares("pod-by-pod+fgd")
    sim.run_until(1.5 * H)
    held = checkpoint.simulation_state(sim)["scheduler"]["gpu_held"]
    assert held and any(milli < 1000 for _, _, _, milli in held)
    assert checkpoint.resume(json.loads(json.dumps(checkpoint.simulation_state(sim)))).sched.cluster.gpus.held \
        .keys() == sim.sched.cluster.gpus.held.keys()
    whole = _outcome(_shares("pod-by-pod+fgd").run())
    paused, resumed = _resumed_runs(lambda: _shares("pod-by-pod+fgd"), 0.7 * H, tmp_path)
    assert _outcome(paused) == whole
    assert all(_outcome(r) == whole for r in resumed)


def test_a_resumed_run_saves_checkpoints_again_and_ends_the_same():
    docs = []
    whole = _outcome(_synthetic("gang-preemption").run())
    _synthetic("gang-preemption").run(1.3 * H, lambda sim: docs.append(checkpoint.simulation_state(sim)))
    again = []
    resumed = checkpoint.resume(json.loads(json.dumps(docs[0]))).run(
        1.3 * H, lambda sim: again.append(checkpoint.simulation_state(sim)))
    assert _outcome(resumed) == whole
    # The resumed run's later checkpoints are the uninterrupted run's (the timings aside).
    for doc in (*docs, *again):
        doc["simulation"].update(wall_s=0.0, scheduler_s=0.0)
    assert json.loads(json.dumps(again)) == json.loads(json.dumps(docs[1:]))


# -- the scheduler alone, pods and PodGroups as manifests --------------------------------------------------------
def _pods(prefix: str, n: int, cpu: str, priority: int, gpus: int = 0):
    template = pod_template(cpu, "1Gi", gpus=gpus)
    return [template.model_copy(update={
        "metadata": template.metadata.model_copy(update={"name": f"{prefix}-{i}"}),
        "spec": template.spec.model_copy(update={"priority": priority})}) for i in range(n)]


def _scheduler(nodes, **options) -> Scheduler:
    return Scheduler(Cluster.from_objects(ClusterObjects(nodes=list(nodes), pods=[], warnings=[])), **options)


def _summaries(sched: Scheduler, mark: int) -> list:
    return [(type(e).__name__, e.time, getattr(e, "kind", ""), *e.summary().items())
            if hasattr(e, "summary") else (type(e).__name__, e.time, repr(e)) for e in sched.decisions(mark)]


@pytest.mark.parametrize("tie_break,nodes,percentage", [("first", 4, 0), ("random", 4, 0), ("first", 150, 10)])
def test_a_restored_scheduler_decides_as_the_one_it_was_taken_from(tie_break, nodes, percentage):
    """Low-priority pods fill the nodes and more wait in the unschedulable pool; a node leaves; then high-priority
    pods arrive and preempt, and time passes through backoffs. The restored scheduler (a new one, its state read
    from JSON) makes the same decisions as the original from the checkpoint on. With 150 nodes and
    percentageOfNodesToScore 10 a cycle looks at 100 of them from nextStartNodeIndex on."""
    config = config_from_doc({"kind": "KubeSchedulerConfiguration", "percentageOfNodesToScore": percentage,
                              "profiles": [{"schedulerName": DEFAULT_SCHEDULER_NAME}]}, "test")
    nodes = _nodes(nodes)
    options = {"profile": config, "tie_break": tie_break}
    sched = _scheduler(nodes, seed=7, **options)
    sched.add_pods(_pods("low", 3 * len(nodes) + 2, "30", 10))
    sched.advance(5.0)
    sched.remove_node(nodes[1].metadata.name)
    sched.advance(9.0)
    state = json.loads(json.dumps(scheduler_state(sched)))
    assert state["queue"]["pool"] and state["bound"]
    copy = _scheduler([n for n in nodes if n.metadata.name in state["nodes"]], seed=0, **options)
    restore_scheduler(copy, state)
    assert json.loads(json.dumps(scheduler_state(copy))) == state
    marks = [s.decision_mark() for s in (sched, copy)]
    for s in (sched, copy):
        s.add_pods(_pods("high", 5, "40", 1000))
        s.add_pods(_pods("small", 40, "1", 10))
        s.advance(30.0)
        s.add_nodes([nodes[1]])
        s.advance(200.0)
    assert _summaries(sched, marks[0]) == _summaries(copy, marks[1])
    assert any(type(e).__name__ == "Preempted" for e in sched.decisions(marks[0]))


def test_a_gang_waiting_at_permit_is_restored_with_its_deadline():
    from phalanx.cluster_models.workloads import PodGroup
    from phalanx.cluster_models.objects import PodSchedulingGroup
    nodes = _nodes(2)
    group = PodGroup.model_validate({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                                     "metadata": {"name": "g", "namespace": "default"},
                                     "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}}})
    members = [p.model_copy(update={"spec": p.spec.model_copy(
        update={"scheduling_group": PodSchedulingGroup(pod_group_name="g")})}) for p in _pods("w", 3, "1", 0, 8)]
    sched = _scheduler(nodes, gang_mode="permit", permit_timeout_s=60.0)
    sched.add_pod_group(group)
    sched.add_pods(members)
    sched.advance(10.0)
    state = json.loads(json.dumps(scheduler_state(sched)))
    assert [g["permit_deadline"] for g in state["groups"]] == [60.0]
    copy = _scheduler(nodes, gang_mode="permit", permit_timeout_s=60.0)
    restore_scheduler(copy, state)
    marks = [s.decision_mark() for s in (sched, copy)]
    for s in (sched, copy):
        s.advance(61.0)
        s.add_nodes([make_node("node-000009", "gpu-8x", 9)])
        s.advance(400.0)
    assert _summaries(sched, marks[0]) == _summaries(copy, marks[1])
    assert any(getattr(e, "kind", "") == "PermitRejected" for e in sched.decisions(marks[0]))


# -- errors ------------------------------------------------------------------------------------------------------
def test_what_cannot_be_taken_or_does_not_fit_is_one_clear_error(tmp_path):
    nodes = _nodes(3)
    sched = _scheduler(nodes)
    sched.add_pods(_pods("p", 2, "1", 0))
    sched.advance(1.0)
    state = scheduler_state(sched)
    with pytest.raises(CheckpointError, match="nodes are not the checkpoint's"):
        restore_scheduler(_scheduler(nodes[:2]), state)
    with pytest.raises(CheckpointError, match="has no pods yet"):
        restore_scheduler(sched, state)
    with pytest.raises(CheckpointError, match="not a phalanx.scheduler-state version 5"):
        restore_scheduler(_scheduler(nodes), {**state, "version": 99})
    sched.cluster.successors["x"] = object()
    with pytest.raises(CheckpointError, match="OrderedReady StatefulSets"):
        scheduler_state(sched)

    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    with pytest.raises(CheckpointError, match="not a phalanx.simulation-checkpoint version 2 document"):
        checkpoint.load(bad)
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(gzip.compress(b'{"format": "phalanx.simulation-checkpoint"')[:20])
    with pytest.raises(CheckpointError, match="not a readable checkpoint"):
        checkpoint.load(cut)
    doc = checkpoint.simulation_state(_synthetic("gang"))
    del doc["simulation"]["ledger"]
    with pytest.raises(CheckpointError, match="malformed checkpoint: KeyError"):
        checkpoint.resume(doc)


# -- the CLI -----------------------------------------------------------------------------------------------------
def test_cli_simulate_saves_checkpoints_and_resume_prints_the_uninterrupted_rows(tmp_path):
    common = ["simulate", "--nodes", "12", "--hours", "3", "--load", "1.5", "--node-failures-per-day", "2",
              "--policy", "gang", "--policy", "pod-by-pod", "--json"]
    runner = CliRunner()
    whole = runner.invoke(app, common)
    saved = runner.invoke(app, [*common, "--checkpoint-dir", str(tmp_path / "cp"), "--checkpoint-every", "1.25"])
    assert whole.exit_code == saved.exit_code == 0, whole.output + saved.output
    files = sorted((tmp_path / "cp").iterdir())
    assert [f.name for f in files] == ["run-gang-seed0.json.gz", "run-pod-by-pod-seed0.json.gz"]
    assert checkpoint.read(files[0])["simulation"]["reached"] == 2.5 * H
    resumed = runner.invoke(app, ["simulate", "--resume", str(files[0]), "--resume", str(files[1]), "--json"])
    assert resumed.exit_code == 0, resumed.output

    def rows(output):
        return [{k: v for k, v in r.items() if k not in ("wall_s", "scheduler_s", "events_per_s")}
                for r in json.loads(output)["runs"]]
    assert rows(resumed.output) == rows(saved.output) == rows(whole.output)
    table = runner.invoke(app, ["simulate", "--resume", str(files[0])])
    assert table.exit_code == 0 and "resumed at 2.5 h of 3 h" in table.output
    bad = runner.invoke(app, ["simulate", "--resume", str(tmp_path / "missing.json")])
    assert bad.exit_code != 0 and "--resume:" in bad.output and "Traceback" not in bad.output
    assert runner.invoke(app, [*common, "--checkpoint-every", "0"]).exit_code != 0


def test_a_member_bound_to_a_node_outside_the_node_table_is_restored():
    from strategies import make_pod, make_pod_group
    nodes = _nodes(1)
    objects = ClusterObjects(nodes=nodes, pods=[make_pod("gone", node_name="missing", pod_group="pg")],
                             pod_groups=[make_pod_group("pg", min_count=2)], warnings=[])
    sched = Scheduler(Cluster.from_objects(objects))
    state = json.loads(json.dumps(scheduler_state(sched)))
    copy = _scheduler(nodes)
    restore_scheduler(copy, state)
    assert copy.groups.states["default/pg"].elsewhere == {"default/gone": "missing"}
    assert json.loads(json.dumps(scheduler_state(copy))) == state


@pytest.mark.parametrize("pop_from_backoff", [False, True])
def test_pods_in_the_backoff_queues_are_restored(pop_from_backoff):
    """An error pod (NodeAffinity's PreScore cannot parse a preferred Gt value) waits in the error backoffQ, retried
    after each backoff with no event; pods too big for the nodes are woken by a node added inside their backoff and
    wait in the backoffQ (with SchedulerPopFromBackoffQ they are popped at once). The restored scheduler retries and
    binds them as the original does (the checkpoint is taken before the scheduler runs again, so the woken pods are
    in the backoffQ with the gate too)."""
    from strategies import make_pod
    config = config_from_doc({"kind": "KubeSchedulerConfiguration", "profiles": [{}],
                              "featureGates": {"SchedulerPopFromBackoffQ": pop_from_backoff}}, "test")
    error = make_pod("e", cpu="100m", preferred_terms=[(1, {"match_expressions": [
        {"key": "gen", "operator": "Gt", "values": ["x"]}]})])
    nodes = _nodes(2)
    sched = _scheduler(nodes, profile=config)
    sched.add_pods([error, *_pods("big", 4, "60", 10), *_pods("bigger", 1, "70", 100)])
    sched.advance(0.5)
    sched.add_nodes([make_node("node-000009", "gpu-8x", 9)])
    state = json.loads(json.dumps(scheduler_state(sched)))
    assert len(state["queue"]["errors"]) == 1 and len(state["queue"]["backoff"]) == 3
    copy = _scheduler(nodes + [make_node("node-000009", "gpu-8x", 9)], profile=config)
    restore_scheduler(copy, state)
    assert json.loads(json.dumps(scheduler_state(copy))) == state
    marks = [s.decision_mark() for s in (sched, copy)]
    for s in (sched, copy):
        s.advance(30.0)
    assert _summaries(sched, marks[0]) == _summaries(copy, marks[1])
    assert sum(getattr(e, "kind", "") == "Unschedulable" for e in sched.decisions(marks[0])) >= 4


def test_volume_bindings_are_restored():
    """Pods with claims bind local volumes and provision others; a restored scheduler holds the same bindings (and
    a gang member's, waiting at Permit, still revertible) and decides the later pods as the original does."""
    from phalanx.cluster_models import parse_objects
    from strategies import make_pod_group

    def claim(name, size):
        return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}},
                         "storageClassName": "local" if name < "p" else "dyn"}}

    docs = [{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local"},
             "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"},
            {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "dyn"},
             "provisioner": "example.com/csi", "volumeBindingMode": "WaitForFirstConsumer"}]
    nodes = _nodes(3)
    for i in range(6):
        host = nodes[i % 3].metadata.name
        docs.append({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"pv{i}"},
                     "spec": {"capacity": {"storage": f"{i + 1}Gi"}, "accessModes": ["ReadWriteOnce"],
                              "storageClassName": "local", "nodeAffinity": {"required": {"nodeSelectorTerms": [
                                  {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                                                         "values": [host]}]}]}}}})
    docs += [claim(f"c{i}", f"{i % 3 + 1}Gi") for i in range(6)] + [claim(f"p{i}", "1Gi") for i in range(4)]

    def pods(names, group=None):
        out = []
        for name in names:
            [pod] = _pods(f"w-{name}", 1, "1", 10)
            doc = manifest(pod)
            doc["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": name}}]
            if group:
                doc["spec"]["schedulingGroup"] = {"podGroupName": group}
            out.append(type(pod).model_validate(doc))
        return out

    def scheduler():
        objects = parse_objects(docs)
        objects.nodes = list(nodes)
        cluster = Cluster.from_objects(objects)
        cluster.pod_groups.append(make_pod_group("g", min_count=3))
        return Scheduler(cluster, gang_mode="permit", permit_timeout_s=100)

    sched = scheduler()
    sched.add_pods(pods(["c0", "c1", "c2", "p0"]) + pods(["c3", "c4", "missing"], group="g"))
    sched.advance(5.0)
    book = sched.cluster.volumes
    assert len(book.volume_of) == 5 and book.selected and len(book.assumed) == 6
    state = json.loads(json.dumps(scheduler_state(sched)))
    copy = scheduler()
    restore_scheduler(copy, state)
    assert json.loads(json.dumps(scheduler_state(copy))) == state
    marks = [s.decision_mark() for s in (sched, copy)]
    for s in (sched, copy):
        s.add_pods(pods(["c5", "p1", "p2"]))
        s.advance(200.0)          # the gang times out at Permit: its volumes are given back
    assert _summaries(sched, marks[0]) == _summaries(copy, marks[1])
    assert sched.cluster.volumes.state() == copy.cluster.volumes.state()
    assert "default/c3" not in sched.cluster.volumes.volume_of
