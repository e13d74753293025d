"""tests/data/manifests: manifests as users write them (the Kubernetes docs' Deployment, StatefulSet, DaemonSet,
Job and CronJob, a PDB, scheduler_perf's generateName templates, DRA in resource.k8s.io/v1beta1 and v1beta2)
loaded and scheduled end to end, through the library and the CLI."""
import json
from collections import Counter
from pathlib import Path

from typer.testing import CliRunner

from phalanx.cli import app
from phalanx.sched import Cluster, Scheduler

MANIFESTS = Path(__file__).parent / "data" / "manifests"


def owner(pod) -> str:
    ref = pod.metadata.owner_references[0] if pod.metadata.owner_references else None
    return f"{ref.kind}/{ref.name.split('-')[0]}" if ref is not None else "Pod"


def test_every_pod_the_controllers_make_is_created_and_bound():
    state = Cluster.from_paths([MANIFESTS])
    assert len(state.nodes) == 5 and state.nodes[-1].metadata.name.startswith("scheduler-perf-")
    made = {p.key: p for p in state.pending}
    successors = list(state.successors.values())
    counts = Counter(owner(p) for p in [*made.values(), *successors])
    # 4 nginx replicas; web-0 and web-1 (web-1 waits for web-0: OrderedReady); fluentd on the 4 nodes labelled
    # kubernetes.io/os=linux (the control plane's taint is tolerated; the template node has no labels); pi's one
    # pod; the CronJob's Job's one pod; four scheduler_perf pods and two DRA pods.
    assert counts == {"ReplicaSet/nginx": 4, "StatefulSet/web": 2, "DaemonSet/fluentd": 4, "Job/pi": 1,
                      "Job/hello": 1, "Pod": 6}
    assert [p.metadata.name for p in successors] == ["web-1"]

    result = Scheduler(state).schedule()
    # The folder holds no PersistentVolume, PersistentVolumeClaim or StorageClass: web-0's and web-1's claims (made
    # from the volumeClaimTemplate, of the class my-storage-class the folder does not hold) are not evaluated, with a
    # warning (docs/semantics.md "Volumes"), so web-0 binds and web-1 is made and binds after it.
    assert len(result.bindings) == 18 and result.unschedulable == {}
    assert any("volumes persistentVolumeClaim (the input describes no storage" in w for w in result.warnings)
    daemon = {p.key: p for p in made.values() if owner(p) == "DaemonSet/fluentd"}
    for key, pod in daemon.items():
        [term] = pod.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution \
            .node_selector_terms
        assert result.bindings[key] == term.match_fields[0].values[0]
    assert sorted(result.bindings[k] for k in daemon) == ["control-plane", "worker-a1", "worker-a2", "worker-b1"]
    anti = [result.bindings[k] for k in result.bindings if k.startswith("default/anti-affinity-pod-")]
    assert len(anti) == 2 and len(set(anti)) == 2
    assert "control-plane" not in {result.bindings[k] for k in result.bindings if k not in daemon}
    # The v1beta1 claim and the v1beta2 template each got one of worker-b1's two devices.
    assert result.bindings["default/trainer-shared"] == result.bindings["default/trainer-own"] == "worker-b1"
    assert result.allocations == {
        "default/trainer-shared": [{"claim": "default/single-gpu", "request": "gpu", "driver": "gpu.example.com",
                                    "pool": "worker-b1", "device": "gpu-0"}],
        "default/trainer-own": [{"claim": "default/trainer-own-gpu", "request": "gpu", "driver": "gpu.example.com",
                                 "pool": "worker-b1", "device": "gpu-1"}]}


def test_the_cli_schedules_the_folder():
    out = CliRunner().invoke(app, ["schedule", "--cluster", str(MANIFESTS), "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout[: out.stdout.rindex("}") + 1])
    assert len(report["bindings"]) == 18 and report["unschedulable"] == {}
    assert set(report["allocations"]) == {"default/trainer-shared", "default/trainer-own"}
