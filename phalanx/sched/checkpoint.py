"""A Scheduler's state as plain JSON data, and a Scheduler brought back to it: what a simulation checkpoint holds
of the scheduler (simulate/checkpoint.py), so that a resumed run decides exactly as the uninterrupted one would.

The state is taken between calls, when no cycle is under way (the activeQ may still hold entries; they are kept).
It is what decides later cycles, nothing derived:

- the node table's order (names) and the pods on it (bound, or placed and waiting at Permit) in binding order,
  with the GPU devices each GPU-share pod holds;
- the claims VolumeBinding bound to volumes and those it chose a node to provision on (the storage objects
  themselves are input, like the nodes);
- the queue: the activeQ, backoffQ and error backoffQ entries in heap order (runs of plain pods by key and arrival, PodGroups by
  key), failed attempts, the unschedulable pool with the plugins that rejected each pod, pods PreEnqueue holds back,
  arrivals of queued pods deleted before their turn;
- PodGroups (their objects, in order) and each group's members by phase, queue state, attempts and condition;
- nominations (status.nominatedNodeName), bind times, arrival numbers, pending messages;
- the Services' selectors and the controllers (ReplicaSets, ...) that default topology spreading reads;
- the clock, the random stream's state, each profile's nextStartNodeIndex, where the next preemption scan starts,
  the gang train length.

Everything a cycle derives from these (shapes, per-shape results kept between cycles, dry-run caches, the binding
log's exact positions) is rebuilt: those caches are exact, so they change no decision. Pods and PodGroups are
written by codecs the caller picks (manifests by default; the simulator names them by job). Not taken (refused
with a CheckpointError): DRA ResourceClaims, OrderedReady StatefulSet successors, Jobs and Workloads the scheduler
owns, pods no profile serves, work left half done inside a call.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..cluster_models import Pod, PodGroup
from ..cluster_models.controllers import ReplicaSet, ReplicationController, StatefulSet
from ..cluster_models.spreading import DefaultSelectors
from ..cluster_models.tensors import bind_existing
from .podgroups import GroupState, Members
from .queue import Attempts, ErrorRetry, PodRun

# The controllers that select pods for default topology spreading (cluster_models.spreading), by kind.
OWNER_KINDS = {cls.__name__: cls for cls in (ReplicaSet, ReplicationController, StatefulSet)}

FORMAT = "phalanx.scheduler-state"
VERSION = 5                 # 2: no "live" (the pods added and not deleted are those with an arrival); 3: groups'
                            # "elsewhere", the queue's "errors", a priority per "backoff" entry; 4: a progress count
                            # per "pool" entry and "bindings_made" (the flush of the unschedulable pool reads them);
                            # 5: "volumes" (the VolumeBook's bindings)

PodCodec = tuple[Callable[[Pod], object], Callable[[object], Pod]]


class CheckpointError(ValueError):
    """A state that cannot be taken, or a checkpoint that does not fit the scheduler it is restored into."""


def manifest(obj) -> dict:
    """An API object as its JSON manifest."""
    return obj.model_dump(by_alias=True, exclude_none=True, mode="json")


MANIFESTS: PodCodec = (manifest, Pod.model_validate)


def _refuse_unsupported(sched) -> None:
    cluster = sched.cluster
    unsupported = [
        (cluster.claims.claims, "DRA ResourceClaims"),
        (cluster.successors, "OrderedReady StatefulSets with pods not created yet"),
        (cluster.jobs or cluster.workloads, "Jobs and Workloads given to the scheduler"),
        (sched.unserved, "pods no profile serves"),
        (sched._created or sched.preemption.pending, "work left half done inside a call"),
    ]
    for present, what in unsupported:
        if present:
            raise CheckpointError(f"checkpoint: {what} are not checkpointed (docs/semantics.md, Checkpoints)")


def _entry(entry) -> dict:
    if isinstance(entry, GroupState):
        return {"group": entry.key}
    return {"pods": [p.key for p in entry.pods], "seqs": list(entry.seqs), "priority": entry.priority}


def scheduler_state(sched, encode_pod: Callable[[Pod], object] = MANIFESTS[0],
                    encode_group: Callable[[PodGroup], object] = manifest) -> dict:
    """The scheduler's state as JSON-ready data (module docstring). Raises CheckpointError for what is not taken."""
    _refuse_unsupported(sched)
    cluster, queue = sched.cluster, sched.queue
    pods: dict[str, Pod] = {}

    def ref(pod: Pod) -> str:
        pods.setdefault(pod.key, pod)
        return pod.key

    names = cluster.tensors.nodes.names
    bound = [[ref(pod), names[n]] for pod, n in cluster.tensors.live_bound()]
    active, backoff, errors = queue.in_order()
    for e in [entry for *_, entry in active + backoff] + [retry.run for *_, retry in errors]:
        if isinstance(e, PodRun):
            for pod in e.pods:
                ref(pod)
    groups = []
    for gs in sched.groups.states.values():
        groups.append({
            "key": gs.key,
            "pending": [[ref(p), seq] for p, seq in gs.pending.values()],
            "held": [[ref(p), seq, plugin.name] for p, seq, plugin in gs.held.values()],
            "bound": sorted(gs.bound),
            "elsewhere": dict(sorted(gs.elsewhere.items())),
            "waiting": [[ref(p), seq] for p, seq in gs.waiting.values()],
            "enqueued": sorted(gs.enqueued),
            "permit_deadline": gs.permit_deadline, "rejected_at": gs.rejected_at, "state": gs.state,
            "attempts": gs.attempts, "failed_at": gs.failed_at, "failed_progress": gs.failed_progress,
            "condition": list(gs.condition) if gs.condition is not None else None})
    state = {
        "format": FORMAT, "version": VERSION,
        "now": sched.now, "clock_origin": sched.clock_origin, "seq": sched._seq, "progress": sched.progress,
        "bindings_made": sched.bindings_made,
        "rng": _rng_state(sched.rng),
        "next_start": {name: placer.next_start for name, placer in sched.placers.items()},
        "preemption_offset": sched.preemption.next_offset,
        "train_gangs": sched.group_cycle.train_gangs,
        "nodes": list(names),
        "bound": bound,
        "gpu_held": [[key, node, index.tolist(), milli] for key, (node, index, milli) in cluster.gpus.held.items()],
        "volumes": cluster.volumes.bindings(),
        "nominations": [[ref(nom.pod), nom.node] for _, nom in cluster.nominations.items()],
        "started": dict(sched.started), "arrival": dict(sched.arrival),
        "pending_message": dict(sched.pending_message),
        "pdb_floor": dict(cluster._pdb_floor),
        "spreading": {"services": {ns: [dict(sel) for sel in sels]
                                   for ns, sels in cluster.default_selectors.services.items()},
                      "owners": [manifest(obj) for obj in cluster.default_selectors.owners.values()]},
        "pod_groups": [encode_group(g) for g in cluster.pod_groups],
        "groups": groups,
        "of_pod": {key: gs.key for key, gs in sched.groups.of_pod.items()},
        "queue": {
            "active": [[first, seq, _entry(e)] for first, seq, e in active],
            "backoff": [[at, seq, _entry(e), priority] for at, priority, seq, e in backoff],
            "errors": [[at, seq, _entry(retry.run), retry.progress] for at, seq, retry in errors],
            "attempts": {key: [a.count, a.failed_at] for key, a in queue.attempts.items()},
            "pool": [[ref(p.pod), p.seq, [plugin.name for plugin in p.plugins], p.progress]
                     for p in queue.unschedulable.values()],
            "held": [[ref(pod), seq] for pod, seq in queue.held.values()],
            "deleted": sorted(queue.deleted)},
    }
    state["pods"] = {key: encode_pod(pod) for key, pod in pods.items()}
    return state


def _rng_state(rng: np.random.Generator) -> dict:
    """The bit generator's state with its integers as strings (PCG64's are 128-bit: JSON readers lose them)."""
    def text(v):
        if isinstance(v, dict):
            return {k: text(x) for k, x in v.items()}
        return str(v) if isinstance(v, int) and not isinstance(v, bool) else v
    return text(rng.bit_generator.state)


def _set_rng(rng: np.random.Generator, state: dict) -> None:
    def ints(v):
        if isinstance(v, dict):
            return {k: ints(x) for k, x in v.items()}
        return int(v) if isinstance(v, str) and v.lstrip("-").isdigit() else v
    if state["bit_generator"] != type(rng.bit_generator).__name__:
        raise CheckpointError(f"checkpoint: random stream {state['bit_generator']}, the scheduler draws from "
                              f"{type(rng.bit_generator).__name__}")
    rng.bit_generator.state = ints(state)


def restore_scheduler(sched, state: dict, decode_pod: Callable[[object], Pod] = MANIFESTS[1],
                      decode_group: Callable[[object], PodGroup] = PodGroup.model_validate) -> None:
    """Bring `sched` (built with the checkpointed run's configuration on a cluster of the state's nodes, in its
    order, with no pods) to `state`. Raises CheckpointError when the two do not fit."""
    if state.get("format") != FORMAT or state.get("version") != VERSION:
        raise CheckpointError(f"checkpoint: not a {FORMAT} version {VERSION} (got {state.get('format')!r} "
                              f"version {state.get('version')!r})")
    cluster, queue, groups = sched.cluster, sched.queue, sched.groups
    tensors = cluster.tensors
    if list(tensors.nodes.names) != state["nodes"]:
        raise CheckpointError("checkpoint: the scheduler's nodes are not the checkpoint's (names, in order)")
    if tensors.log_mark() or sched.arrival or sched.unserved or len(queue):
        raise CheckpointError("checkpoint: restore into a scheduler that has no pods yet")
    pods = {key: decode_pod(doc) for key, doc in state["pods"].items()}
    for key, node in state["bound"]:
        bind_existing(tensors, pods[key], tensors.node_index[node])
    for pod in pods.values():
        cluster.namespace(pod.metadata.namespace)
    cluster.gpus.hold_again([(key, node, np.array(index, np.int64), milli)
                             for key, node, index, milli in state["gpu_held"]])
    problem = cluster.volumes.bind_again(state["volumes"])
    if problem is not None:
        raise CheckpointError(f"checkpoint: {problem}")
    cluster._pdb_floor.update(state["pdb_floor"])
    spreading = state["spreading"]
    cluster.default_selectors = DefaultSelectors(services={ns: [dict(sel) for sel in sels]
                                                           for ns, sels in spreading["services"].items()})
    cluster.default_selectors.add_owners(OWNER_KINDS[doc["kind"]].model_validate(doc) for doc in spreading["owners"])

    cluster.pod_groups[:] = [decode_group(doc) for doc in state["pod_groups"]]
    groups.reindex()
    by_key = {g.key: g for g in cluster.pod_groups}
    for doc in state["groups"]:
        gs = groups.new_state(by_key[doc["key"]])
        gs.pending = Members((key, (pods[key], seq)) for key, seq in doc["pending"])
        gs.held = {key: (pods[key], seq, sched.framework_for(pods[key]).plugin(name))
                   for key, seq, name in doc["held"]}
        gs.bound = set(doc["bound"])
        gs.elsewhere = dict(doc["elsewhere"])
        gs.waiting = {key: (pods[key], seq) for key, seq in doc["waiting"]}
        gs.enqueued = set(doc["enqueued"])
        gs.rejected_at, gs.state, gs.attempts = doc["rejected_at"], doc["state"], doc["attempts"]
        gs.failed_at, gs.failed_progress = doc["failed_at"], doc["failed_progress"]
        if gs.state == "unschedulable":
            groups.park(gs)        # after its failure time: the flush reads it
        gs.condition = tuple(doc["condition"]) if doc["condition"] is not None else None
        if doc["permit_deadline"] is not None:
            sched.permit.timed[gs.key] = gs
            gs.permit_deadline = doc["permit_deadline"]
        for pod, seq in gs.pending.values():
            sched.member_shape(gs, pod, seq)
    groups.of_pod = {key: groups.states[group] for key, group in state["of_pod"].items()}

    sched.now, sched.clock_origin = state["now"], state["clock_origin"]
    sched._seq, sched.progress, sched.bindings_made = state["seq"], state["progress"], state["bindings_made"]
    _set_rng(sched.rng, state["rng"])
    for name, start in state["next_start"].items():
        sched.placers[name].next_start = start
    sched.preemption.next_offset = state["preemption_offset"]
    sched.group_cycle.train_gangs = state["train_gangs"]
    sched.started = dict(state["started"])
    sched.arrival = dict(state["arrival"])
    sched.pending_message = dict(state["pending_message"])
    for key, node in state["nominations"]:
        sched.nominate(pods[key], node)

    q = state["queue"]
    for key, seq, rejectors, progress in q["pool"]:
        sched.park(pods[key], seq, frozenset(rejectors))
        queue.unschedulable[key].progress = progress
    queue.attempts = {key: Attempts(count, failed_at) for key, (count, failed_at) in q["attempts"].items()}
    queue.reorder_pool()        # the flush's order, by the failure times just restored
    queue.held = {key: (pods[key], seq) for key, seq in q["held"]}
    queue.deleted = set(q["deleted"])
    def entry(doc):
        if "group" in doc:
            return groups.states[doc["group"]]
        run = [pods[key] for key in doc["pods"]]
        return PodRun(sched.shape_of(run[0]), run, list(doc["seqs"]), doc["priority"])

    # each queue in its order of leaving
    for priority, seq, doc in q["active"]:
        queue.push_active(entry(doc), priority, seq)
    for at, seq, doc, priority in q["backoff"]:
        queue.push_backoff(entry(doc), at, seq, priority)
    for at, seq, doc, progress in q["errors"]:
        queue.push_error(ErrorRetry(entry(doc), progress), at, seq)
