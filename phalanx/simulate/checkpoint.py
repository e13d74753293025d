"""Checkpoints of a running simulation: its whole state as one JSON document (gzip-compressed when the file name
ends in .gz), and a Simulation resumed from one that goes on exactly as the uninterrupted run would (same decisions,
same ledger, same result but for the wall-clock timings).

The document (format "phalanx.simulation-checkpoint", version 2) holds plain data only, no pickled objects:

- "inputs": the run as given: the policy's name, the seed, the horizon and options, the autoscaler's settings, the
  cluster's nodes (Node manifests) and the workload (one record per job, JobSpec's fields);
- "simulation": where the run stands: the event heap (time, sequence, kind, payload by name: a job, a node), each
  job's state (its live pods by key and worker, bound, waiting at Permit, progress, run epochs), the ledger
  (GPU-seconds per state so far, the counts now, the samples), which node rows hold which pods, the autoscaler's
  pool, counters;
- "scheduler": sched/checkpoint.py's state, with the simulator's pods written as [job, pod name] (the pod is the
  job's template under that name) and its PodGroups as the job's name.

A checkpoint is taken between two steps of the run (Simulation.run's `on_checkpoint`), never inside one.
"""
from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path

import numpy as np

from ..cluster_models import ClusterObjects, Node, Pod, PodGroup
from ..sched import Cluster, Scheduler
from ..sched.checkpoint import CheckpointError, manifest, restore_scheduler, scheduler_state
from .autoscaler import Autoscaler
from .engine import Job, Simulation, policy_named
from .workload import JobSpec

FORMAT = "phalanx.simulation-checkpoint"
VERSION = 2                 # 2: the autoscaler's unschedulable pods name their job (1: their milli-GPU)

__all__ = ["CheckpointError", "FORMAT", "VERSION", "load", "read", "resume", "save", "simulation_state"]


class _Codec:
    """The simulator's pods as [job, name] and its PodGroups as the job's name; anything else as a manifest."""

    def __init__(self, sim: Simulation):
        self.sim = sim
        self.specs = {spec.name: spec for spec in sim.workload}

    def encode_pod(self, pod: Pod):
        job = pod.metadata.labels.get("job")
        template = self.sim.templates.get(job)       # a live job's (a completed one's is gone)
        if template is not None and template.spec is pod.spec:
            return [job, pod.metadata.name]
        return manifest(pod)

    def decode_pod(self, doc) -> Pod:
        if isinstance(doc, dict):
            return Pod.model_validate(doc)
        job, name = doc
        template = self.sim._template(self.specs[job])
        return template.model_copy(update={"metadata": template.metadata.model_copy(update={"name": name})})

    def encode_group(self, group: PodGroup):
        spec = self.specs.get(group.metadata.name)
        return spec.name if spec is not None and self.sim._pod_group(spec) == group else manifest(group)

    def decode_group(self, doc) -> PodGroup:
        return PodGroup.model_validate(doc) if isinstance(doc, dict) else self.sim._pod_group(self.specs[doc])


def _payload(kind: str, payload):
    if kind == "arrive":
        return payload.name
    if kind == "complete":
        job, epoch = payload
        return [job.spec.name, epoch]
    return payload                       # a node's name, or None (an autoscaler scan)


def simulation_state(sim: Simulation) -> dict:
    """The checkpoint document of `sim` as it stands (module docstring), sharing nothing with it (the run may go
    on). Raises CheckpointError for a scheduler state that is not taken (sched/checkpoint.py)."""
    codec = _Codec(sim)
    scaler = sim.autoscaler
    ledger, usage = sim.ledger, sim.usage
    inputs = {
        "policy": sim.policy.name, "seed": sim.seed, "hours": sim.horizon / 3600.0,
        "node_failures_per_day": sim.node_failures_per_day, "repair_s": sim.repair_s,
        "sample_every": ledger.sample_every, "permit_timeout_s": sim.sched.permit_timeout_s,
        "keep_decisions": sim.keep_decisions,
        "autoscaler": None if scaler is None else {
            "template": manifest(scaler.template), "max_nodes": scaler.max_nodes, "provision_s": scaler.provision_s,
            "scale_down_s": scaler.scale_down_s, "scan_s": scaler.scan_s},
        "nodes": [manifest(n) for n in sim.initial_nodes],
        "jobs": [dataclasses.asdict(spec) for spec in sim.workload],
    }
    jobs = {name: {"live": dict(job.live), "bound": sorted(job.bound), "waiting": sorted(job.waiting),
                   "progress": job.progress, "running_since": job.running_since, "first_start": job.first_start,
                   "finished": job.finished, "epoch": job.epoch, "recreated": job.recreated,
                   "completing": job.completing}
            for name, job in sim.jobs.items()}
    state = {
        "events": [[t, seq, kind, _payload(kind, payload)] for t, seq, kind, payload in sim.events],
        "seq": sim._seq, "reached": sim.reached, "wall_s": sim.wall_s, "scheduler_s": sim.scheduler_s,
        "jobs": jobs,
        "pending_heap": [list(item) for item in sim.pending_heap],
        "ledger": {"seconds": dict(ledger.seconds), "running": ledger.running, "incomplete": ledger.incomplete,
                   "permit": ledger.permit, "down": ledger.down, "unprovisioned": ledger.unprovisioned,
                   "now": ledger.now, "samples": [[t, list(counts)] for t, counts in ledger.samples]},
        "rack_samples": [sample.tolist() for sample in sim.rack_samples],
        "usage": {"used": usage.used.tolist(), "pods": usage.pods.tolist(), "up": usage.up.tolist(),
                  "pod_node": dict(usage.pod_node)},
        "unschedulable": dict(sim.unschedulable), "scan_due": sim.scan_due, "emptied": dict(sim.emptied),
        "down": sorted(sim.down),
        "preemptions": sim.preemptions, "destroyed": sim.destroyed, "pods_bound": sim.pods_bound,
        "applied": sim.applied,
        "autoscaler": None if scaler is None else {
            "free": list(scaler.free), "in_flight": sorted(scaler.in_flight), "added": sorted(scaler.added),
            "asked": scaler.asked, "joins": scaler.joins, "removed": scaler.removed},
    }
    return {"format": FORMAT, "version": VERSION, "inputs": inputs, "simulation": state,
            "scheduler": scheduler_state(sim.sched, codec.encode_pod, codec.encode_group)}


def save(sim: Simulation, path: Path | str) -> Path:
    """Write `sim`'s checkpoint to `path` (gzip when it ends in .gz), whole or not at all (a temporary file is
    renamed over it)."""
    path = Path(path)
    text = json.dumps(simulation_state(sim), allow_nan=False, separators=(",", ":")).encode()
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(gzip.compress(text, compresslevel=6, mtime=0) if path.suffix == ".gz" else text)
    tmp.replace(path)
    return path


def read(path: Path | str) -> dict:
    """The checkpoint document at `path` (gzip or plain JSON). Raises CheckpointError for a file that is not a
    checkpoint of this version."""
    path = Path(path)
    try:
        raw = path.read_bytes()
        doc = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    except (OSError, ValueError, EOFError) as exc:
        raise CheckpointError(f"{path}: not a readable checkpoint: {exc}") from None
    _check(doc, str(path))
    return doc


def load(path: Path | str) -> Simulation:
    """The simulation saved at `path`, ready to go on (its `run()` finishes it)."""
    return resume(read(path), str(path))


def _check(doc, where: str) -> None:
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != VERSION:
        found = (doc.get("format"), doc.get("version")) if isinstance(doc, dict) else type(doc).__name__
        raise CheckpointError(f"{where}: not a {FORMAT} version {VERSION} document (found {found})")


def resume(doc: dict, where: str = "checkpoint") -> Simulation:
    """A Simulation in the state of the checkpoint document `doc`. Raises CheckpointError for a malformed one."""
    _check(doc, where)
    try:
        return _resume(doc)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        if isinstance(exc, CheckpointError):
            raise
        raise CheckpointError(f"{where}: malformed checkpoint: {type(exc).__name__}: {exc}") from None


def _resume(doc: dict) -> Simulation:
    inputs, state = doc["inputs"], doc["simulation"]
    nodes = [Node.model_validate(n) for n in inputs["nodes"]]
    specs = [JobSpec(**job) for job in inputs["jobs"]]
    scaler = None
    if inputs["autoscaler"] is not None:
        a = inputs["autoscaler"]
        scaler = Autoscaler(Node.model_validate(a["template"]), a["max_nodes"], a["provision_s"],
                            a["scale_down_s"], a["scan_s"])
    sim = Simulation(nodes, specs, policy_named(inputs["policy"]), hours=inputs["hours"], seed=inputs["seed"],
                     node_failures_per_day=inputs["node_failures_per_day"], repair_s=inputs["repair_s"],
                     sample_every=inputs["sample_every"], autoscaler=scaler,
                     permit_timeout_s=inputs["permit_timeout_s"], keep_decisions=inputs["keep_decisions"])
    by_name = {spec.name: spec for spec in specs}

    for name, j in state["jobs"].items():
        job = sim.jobs[name] = Job(by_name[name])
        job.live = dict(j["live"])
        job.bound, job.waiting = set(j["bound"]), set(j["waiting"])
        job.progress, job.running_since = j["progress"], j["running_since"]
        job.first_start, job.finished, job.epoch = j["first_start"], j["finished"], j["epoch"]
        job.recreated, job.completing = j["recreated"], j["completing"]
        if not job.completing:
            sim._template(job.spec)          # a live job's template (a completed one's is gone)
        for key in job.live:
            sim.pod_job[key] = job
    sim.events = []                           # written in heap order: the list is a heap as it is
    for t, seq, kind, payload in state["events"]:
        if kind == "arrive":
            payload = by_name[payload]
        elif kind == "complete":
            payload = (sim.jobs[payload[0]], payload[1])
        sim.events.append((t, seq, kind, payload))
    sim._seq, sim.reached, sim.wall_s, sim.scheduler_s = state["seq"], state["reached"], state["wall_s"], \
        state["scheduler_s"]
    sim.pending_heap = [tuple(item) for item in state["pending_heap"]]

    ledger, saved = sim.ledger, state["ledger"]
    ledger.seconds = dict(saved["seconds"])
    ledger.running, ledger.incomplete, ledger.permit = saved["running"], saved["incomplete"], saved["permit"]
    ledger.down, ledger.unprovisioned, ledger.now = saved["down"], saved["unprovisioned"], saved["now"]
    ledger.samples = [(t, tuple(counts)) for t, counts in saved["samples"]]
    sim.rack_samples = [np.array(sample, np.int64) for sample in state["rack_samples"]]
    usage, saved = sim.usage, state["usage"]
    usage.used[:] = saved["used"]
    usage.pods[:] = saved["pods"]
    usage.up[:] = saved["up"]
    usage.pod_node = dict(saved["pod_node"])
    usage.version += 1
    sim.unschedulable, sim.scan_due, sim.emptied = dict(state["unschedulable"]), state["scan_due"], \
        dict(state["emptied"])
    sim.down = set(state["down"])
    sim.preemptions, sim.destroyed = state["preemptions"], state["destroyed"]
    sim.pods_bound, sim.applied = state["pods_bound"], state["applied"]
    if scaler is not None:
        a = state["autoscaler"]
        scaler.free, scaler.in_flight, scaler.added = list(a["free"]), set(a["in_flight"]), set(a["added"])
        scaler.asked, scaler.joins, scaler.removed = a["asked"], a["joins"], a["removed"]

    # The scheduler: its nodes in their table order, then its state.
    old = sim.sched
    table = [sim.nodes[name] for name in doc["scheduler"]["nodes"]]
    cluster = Cluster.from_objects(ClusterObjects(nodes=table, pods=[], warnings=[]))
    sim.sched = Scheduler(cluster, old.config, seed=sim.seed, preemption=sim.policy.preemption,
                          gang_mode=sim.policy.gang_mode, permit_timeout_s=old.permit_timeout_s)
    codec = _Codec(sim)
    restore_scheduler(sim.sched, doc["scheduler"], codec.decode_pod, codec.decode_group)
    return sim
