"""The JAX backend of the Placer: a run of identical pods placed inside one jitted call.

What runs where (backend="jax"):

- on device, in one compiled XLA program per run chunk, as a `lax.while_loop` that stops at the run's first
  pod that fits nowhere:
  - pod by pod (CHUNK pods per call): every Filter, PreScore/Score, NormalizeScore, node sampling
    (percentageOfNodesToScore), the tie-broken selectHost and the state update after each pod;
  - in batch rounds (BATCH_CHUNK pods per call) when the numpy Placer would batch the run (no
    PodTopologySpread, no sampling): each round filters once, scores the next BATCH_COPIES copies of the best
    first copies (kernels.batch.contenders), orders the picks as the pod-by-pod loop would (pick_order) and
    takes them up to the first that may not follow that order: a normalization maximum lost
    (normalization_epoch_end) or a contender's scored copies used up. The numpy batch path's rule with fixed
    shapes, so decisions equal pod by pod (tests/test_batching.py, tests/test_backend_scheduler.py).
  The kernels are the same functions numpy runs (phalanx.kernels via sched.cycle), traced with xp=jax.numpy
  under jax.enable_x64.
- resident on the device between calls: the padded node table (fixed columns and the load state). The load
  buffers are donated to each call and replaced by its result; the table is copied in again only when the host
  table changed behind it (node events, vocabulary growth, or load moved by undo, deletion, Permit rejection or
  the eager per-pod paths: `tensors.changes` grew).
- on the host: PreFilter (`cycle.prepare`: vocabularies, toleration and label masks, which become compile-time
  constants), accounting the chosen nodes into the numpy node table (the source of truth for queue, PodGroups,
  rollback and explain), and the failure message from the codes and reasons the compiled call returns for the
  failing pod (fetched only when a pod failed).
- segments: short runs of different shapes that share one compiled configuration (pods differing only in their
  amounts: requests, scoring requests) are placed by one call, a `lax.while_loop` over the pods with each pod's
  amounts indexed by its step (`place_segment`; sched/pod_cycle.py forms the segments from the activeQ). All-distinct
  pods then cost one dispatch per segment instead of one per pod.
- `evaluate` (explain, what-if) runs the same kernels eagerly on JAX arrays (op by op, no jit).

Static shapes: nodes, resources, label keys/values, taints, ports, bound pods and the chunk length are padded
to buckets (padded nodes are never feasible), so clusters whose sizes fall in one bucket share one compiled
program per pod shape. `stats` counts compilations, uploads and splits compile time from run time.
"""
from __future__ import annotations

import dataclasses
import math
import os
import pickle
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from ..cluster_models import Pod
from ..cluster_models.tensors import BoundPods
from ..kernels.backend import BackendUnavailable, bincount, namespace, precision, to_host
from ..kernels.batch import NEVER, contenders, fill_times, normalization_epoch_end, pick_order
from ..kernels.select import sample_feasible, select_best
from ..plugins.framework import PER_POD, Pads, pad1
from .cluster import Cluster
from .cycle import (Evaluation, Prepared, batchable, copy_capacity, copy_totals, fixed_scores, prepare, run_filters,
                    run_scores)
from .framework import Framework
from .placement import Placement, Placer, RunOutcome, rejectors
from .shapes import PodShape

CHUNK = 1024          # most pods placed pod by pod in one compiled call; longer runs take several calls
BATCH_CHUNK = 16384   # most pods placed in batch rounds by one compiled call
BATCH_COPIES = 32     # further copies scored per contender in one batch round (a static shape)
SEGMENT_PODS = 512    # most pods of a segment (runs of different shapes placed by one compiled call)
SEGMENT_RUN = 16      # longer runs are placed on their own (batch rounds)


class ProgramCache:
    """Compiled programs by (static configuration, argument shapes), shared by every JaxPlacer of the process (a
    second cluster in the same buckets with the same pod shape reuses the first one's program), least recently
    used first out. Each compiled XLA:CPU program holds its own code mappings (about 170 of the process's
    vm.max_map_count, 65,530 by default, and a few MB), released when the program is dropped; so the number kept
    is bounded: `capacity` programs (PHALANX_JAX_PROGRAMS, default 64), whatever a long simulation or sweep
    throws at it."""

    def __init__(self, capacity: int):
        if capacity < 1:
            raise ValueError(f"ProgramCache: capacity must be at least 1, got {capacity}")
        self.capacity = capacity
        self._programs: OrderedDict[tuple, object] = OrderedDict()
        self.evictions = 0

    def get(self, sig: tuple):
        program = self._programs.get(sig)
        if program is not None:
            self._programs.move_to_end(sig)
        return program

    def put(self, sig: tuple, program) -> None:
        self._programs[sig] = program
        while len(self._programs) > self.capacity:
            self._programs.popitem(last=False)
            self.evictions += 1

    def __len__(self) -> int:
        return len(self._programs)


def _capacity_from_env() -> int:
    """PHALANX_JAX_PROGRAMS; a bad value makes the backend unavailable, with a one-line reason."""
    raw = os.environ.get("PHALANX_JAX_PROGRAMS", "64")
    try:
        capacity = int(raw)
    except ValueError:
        raise BackendUnavailable(f"PHALANX_JAX_PROGRAMS: not an integer: {raw!r}") from None
    if capacity < 1:
        raise BackendUnavailable(f"PHALANX_JAX_PROGRAMS: must be at least 1, got {capacity}")
    return capacity


PROGRAMS = ProgramCache(_capacity_from_env())


@dataclass
class BackendStats:
    compiles: int = 0          # XLA programs compiled (one per pod shape and bucket)
    compile_s: float = 0.0     # time spent tracing and compiling them
    calls: int = 0             # compiled calls made
    run_s: float = 0.0         # time in compiled calls, copying inputs in and results out (not table uploads)
    uploads: int = 0           # node-table copies to the device (the table stays there between calls)
    segments: int = 0          # compiled calls that placed runs of several shapes (place_segment)


def bucket(x: int, lo: int = 8) -> int:
    """Padded size for x: at least lo, then four steps per doubling (at most 25% padding)."""
    if x <= lo:
        return lo
    step = 1 << max(0, math.ceil(math.log2(x)) - 3)
    return -(-x // step) * step


def pow2(x: int, lo: int = 8) -> int:
    return max(lo, 1 << max(0, math.ceil(math.log2(max(x, 1)))))


@dataclass
class _Resident:
    """The node table padded on the device: fixed columns, and the load state the compiled calls update."""
    owners: tuple        # the host objects it was copied from (held, so their ids cannot be reused)
    pads: tuple          # (n_pad, r_pad, kl_pad, t_pad, p_pad)
    fixed: dict          # allocatable, allowed_pods, unschedulable, labels, taints
    state: dict = None   # requested, nonzero_requested, pod_count, host_ports (donated to each call)
    mark: int = 0        # len(tensors.changes) when state last equalled the host table


@dataclass
class _CallResult:
    """What one compiled call returns to the host."""
    placed: int                      # pods placed, in order, before the first that fit nowhere
    node_ids: np.ndarray             # (placed,) int64 their nodes
    failed: bool                     # a pod fit nowhere (the call stopped there)
    prescore_failed: bool            # ... because a PreScore / Score error failed its cycle
    rounds: int                      # evaluations over all nodes (pod cycles or batch rounds)
    codes: np.ndarray | None         # (filters, nodes padded) int8 the failed pod's Filter codes, when it failed
    payloads: np.ndarray | None      # (filters, nodes padded) int64 their payloads, when it failed


class NodeArrays:
    """NodeTable's array fields (padded, on the device), as the plugins read them."""

    def __init__(self, size, allocatable, requested, nonzero_requested, pod_count, allowed_pods, unschedulable,
                 labels, taints, host_ports):
        self.size = size
        self.allocatable, self.requested, self.nonzero_requested = allocatable, requested, nonzero_requested
        self.pod_count, self.allowed_pods, self.unschedulable = pod_count, allowed_pods, unschedulable
        self.labels, self.taints, self.host_ports = labels, taints, host_ports


class LabelValues:
    def __init__(self, keys: int, size: int):
        self.values = [range(size)] * keys


class TensorsView:
    """The slice of ClusterTensors that plugins' Filter / Score read, over (traced) arrays."""

    node_rows = None        # every (padded) node, in id order

    def __init__(self, nodes: NodeArrays, node_labels: LabelValues, bound: BoundPods | None):
        self.nodes, self.node_labels, self._bound = nodes, node_labels, bound

    def bound_pods(self) -> BoundPods:
        return self._bound


def _pad(a: np.ndarray, shape: tuple, fill) -> np.ndarray:
    out = np.full(shape, fill, dtype=a.dtype)
    out[tuple(slice(0, s) for s in a.shape)] = a
    return out


def _runtime_names(p: Prepared) -> tuple[list[str], list[str]]:
    """The names of the run-time inputs, one per plugin: "f<i>" for the i-th filter, "s<j>" for the j-th score."""
    return [f"f{i}" for i in range(len(p.filters))], [f"s{j}" for j in range(len(p.scores))]


def _static_prepared(p: Prepared, pads: Pads) -> tuple[Prepared, dict[str, np.ndarray]]:
    """p for the compiled program: every plugin state padded and stripped of its run-time amounts (returned
    apart, one int64 vector per plugin, by _runtime_names), without the pod."""
    runtime = {}
    filters, scores = [], []
    filter_names, score_names = _runtime_names(p)
    for name, (plugin, state) in zip(filter_names, p.filters):
        state, runtime[name] = plugin.runtime_filter_inputs(plugin.pad_filter_state(state, pads))
        filters.append((plugin, state))
    for name, (plugin, state, weight) in zip(score_names, p.scores):
        state, runtime[name] = plugin.runtime_score_inputs(plugin.pad_score_state(state, pads))
        scores.append((plugin, state, weight))
    allowed = None if p.allowed is None else pad1(p.allowed, pads.nodes, False)
    return dataclasses.replace(p, pod=None, filters=tuple(filters), scores=tuple(scores), allowed=allowed), runtime


def _with_runtime(pp: Prepared, a: dict) -> Prepared:
    """Inverse of _static_prepared's split, with the traced run-time amounts."""
    filter_names, score_names = _runtime_names(pp)
    filters = tuple((plugin, plugin.with_runtime_filter(state, a[name]))
                    for name, (plugin, state) in zip(filter_names, pp.filters))
    scores = tuple((plugin, plugin.with_runtime_score(state, a[name]), weight)
                   for name, (plugin, state, weight) in zip(score_names, pp.scores))
    return dataclasses.replace(pp, filters=filters, scores=scores)


@dataclass
class SegmentMember:
    """A run ready to join a segment: its cycle state split into the compiled configuration and its amounts."""
    shape: PodShape
    pods: list[Pod]
    prepared: Prepared
    static: Prepared                 # prepared without its amounts, padded (what the program compiles in)
    runtime: dict[str, np.ndarray]   # its amounts: one int64 vector per plugin (_static_prepared)
    ports: tuple[int, ...]           # its host-port columns
    pads: tuple[Pads, int]           # the buckets `static` is padded to (Pads, label keys padded)
    pickled: dict[str, bytes] = field(default_factory=dict, repr=False)   # static states pickled, by runtime name


def _states(p: Prepared) -> list:
    """(state, pad, split) of each filter, then each score: _static_prepared's order of run-time inputs."""
    return ([(state, plugin.pad_filter_state, plugin.runtime_filter_inputs) for plugin, state in p.filters]
            + [(state, plugin.pad_score_state, plugin.runtime_score_inputs) for plugin, state, _ in p.scores])


def _frame(p: Prepared) -> tuple:
    """p's configuration besides its plugins' states and allowed nodes: plugins (equal by type and args), weights
    (with their types, since 1 == True), narrowing and skips."""
    return (tuple(plugin for plugin, _ in p.filters), tuple((plugin, type(w), w) for plugin, _, w in p.scores),
            p.narrowing, p.skipped)


def _same_array(a, b) -> bool:
    return (type(a) is np.ndarray and type(b) is np.ndarray and a.dtype == b.dtype and a.shape == b.shape
            and a.tobytes() == b.tobytes())


def _amounts_joining(p: Prepared, head: SegmentMember, pads: Pads) -> dict[str, np.ndarray] | None:
    """p's run-time amounts (as _static_prepared splits them) when its static configuration equals the head member's,
    else None. Exact, and cheaper than pickling every member's padded states (which cost more than its PreFilter):
    a state identical to the head's unpadded one, or an array equal to it, has the head's padded parts (padding and
    the split are functions of the state); any other is padded and split, and its static part compared with the
    head's: arrays by their bytes, anything else by its pickle (the head's pickled once per segment)."""
    hp = head.prepared
    if _frame(p) != _frame(hp) or not (p.allowed is hp.allowed or _same_array(p.allowed, hp.allowed)):
        return None
    runtime = {}
    statics = [s for _, s in head.static.filters] + [s for _, s, _ in head.static.scores]
    for (name, their_amounts), (their_state, _, _), static, (state, pad, split) in zip(
            head.runtime.items(), _states(hp), statics, _states(p)):
        if state is their_state or _same_array(state, their_state):
            runtime[name] = their_amounts
            continue
        mine, amounts = split(pad(state, pads))
        if amounts.shape != their_amounts.shape:
            return None
        if not _same_array(mine, static):
            if name not in head.pickled:
                head.pickled[name] = pickle.dumps(static, protocol=pickle.HIGHEST_PROTOCOL)
            if pickle.dumps(mine, protocol=pickle.HIGHEST_PROTOCOL) != head.pickled[name]:
                return None
        runtime[name] = amounts
    return runtime


def _reads_bound_pods(p: Prepared) -> bool:
    return any(plugin.reads_bound_pods() for plugin, *_ in (*p.filters, *p.scores))


def _compilable(p: Prepared) -> bool:
    """Runs whose plugins keep per-pod host state (Reserve), or that a PreFilter already failed, go eagerly."""
    return (p.rejection is None and p.error is None
            and not any(plugin.host_only() for plugin, *_ in (*p.filters, *p.scores))
            and not any(plugin.host_only() and plugin.skip_behaviour(p.pod, point) == PER_POD
                        for plugin, point in p.skipped))


class JaxPlacer(Placer):
    """Placer whose runs are placed by one compiled JAX program per chunk (see the module docstring)."""

    segment_pods = SEGMENT_PODS

    def __init__(self, cluster: Cluster, framework: Framework, batching: bool):
        super().__init__(cluster, framework, namespace("jax"), batching)
        import jax
        self.jax = jax
        self.stats = BackendStats()
        self._resident: _Resident | None = None

    # -- explain / what-if: the same kernels, eagerly on JAX arrays --------------------------------
    def evaluate(self, shape: PodShape, rank=None, advance: bool = True, pod: Pod | None = None,
                 failed=None) -> tuple[Prepared, Evaluation, int]:
        with precision(self.xp):
            p, ev, node = super().evaluate(shape, rank, advance, pod, failed)
        for name in ("codes", "payloads", "raw", "normalized"):
            setattr(ev, name, {k: to_host(v) for k, v in getattr(ev, name).items()})
        for name in ("feasible", "outside", "total"):
            if getattr(ev, name) is not None:
                setattr(ev, name, to_host(getattr(ev, name)))
        return p, ev, node

    # -- runs ----------------------------------------------------------------------------------------
    def _compiles(self, p: Prepared) -> bool:
        """Whether `p`'s pods go in a compiled call: not when sampling over a PreFilterResult's nodes (their own
        ring, which the compiled loop does not keep; such pods, a DaemonSet's, are few)."""
        return _compilable(p) and not (p.allowed is not None and self.sampling())

    def place_part(self, shape: PodShape, pods: list[Pod], rank: np.ndarray, out: RunOutcome) -> None:
        if self.cluster.nominations or not self._compiles(prepare(shape, self.cluster, self.framework)):
            # Per-pod host state (DRA claims, GPU shares, inter-pod terms) or pods nominated to nodes (which
            # Filter counts): the per-pod path, eagerly on JAX arrays.
            with precision(self.xp):
                Placer.place_part(self, shape, pods, rank, out)
                return
        done = 0
        batch = (self.batching and len(pods) > 1 and not self.sampling()
                 and batchable(prepare(shape, self.cluster, self.framework)))
        size = BATCH_CHUNK if batch else CHUNK
        while done < len(pods):
            chunk = pods[done:done + size]
            placed, failure = self._place_chunk(shape, chunk, rank, out, batch)
            done += placed
            if failure is None:
                continue
            message, rejected, p, ev = failure
            message, nominated = self.after_failure(pods[done], p, ev, message)
            if nominated:           # the rest go pod by pod: Filter counts the nominated pod from now on
                out.fail([pods[done]], message, rejected)
                with precision(self.xp):
                    Placer.place_part(self, shape, pods[done + 1:], rank, out)
                return
            out.fail(pods[done:], message, rejected)
            break

    def _pads(self) -> tuple[Pads, int, int]:
        """(Pads, label keys padded, nodes) of the node table now."""
        tensors = self.cluster.tensors
        nodes = tensors.nodes
        v_pad = pow2(max([len(v) for v in tensors.node_labels.values] or [1]))
        pads = Pads(bucket(nodes.size), pow2(nodes.allocatable.shape[1]), pow2(nodes.taints.shape[1]),
                    pow2(nodes.host_ports.shape[1]), v_pad)
        return pads, pow2(nodes.labels.shape[1]), nodes.size

    def _place_chunk(self, shape: PodShape, pods: list[Pod], rank: np.ndarray, out: RunOutcome, batch: bool):
        tensors = self.cluster.tensors
        own_ports = [tensors.port_column(port) for port in shape.host_ports]   # before NodePorts' PreFilter
        p = prepare(shape, self.cluster, self.framework)
        pads, kl_pad, n = self._pads()
        k_pad = pow2(len(pods))
        pp, runtime = _static_prepared(p, pads)
        spread = _reads_bound_pods(p)
        per_call = {}       # int64 host inputs of this call, sent packed into one array
        state = {}
        if spread:
            bound = tensors.bound_pods()
            ns = tensors.namespaces.add(shape.pod.metadata.namespace or "default")
            own = tensors.pod_label_row(shape.pod.metadata.labels)
            kp_pad = pow2(max(bound.labels.shape[1], len(own)))
            m_pad = pow2(bound.count + k_pad)
            # Rows count.. count + k are the run's own pods, filled in as they are placed (node -1 until then).
            state["bound_node"] = _pad(bound.node.astype(np.int32), (m_pad,), -1)
            state["bound_namespace"] = _pad(bound.namespace.astype(np.int32), (m_pad,), -2)
            state["bound_labels"] = _pad(bound.labels, (m_pad, kp_pad), -1)
            state["bound_terminating"] = _pad(bound.terminating, (m_pad,), False)
            per_call["own"] = np.concatenate([_pad(own, (kp_pad,), -1).astype(np.int64),
                                            np.array([ns, bound.count], np.int64)])
        # Amounts are run-time inputs (only which columns are asked for is compiled in), so pods that differ only
        # in their requests share one program.
        per_call["request"] = np.stack([_pad(p.request, (pads.resources,), 0),
                                        _pad(shape.nonzero, (pads.resources,), 0)])
        per_call.update(runtime)
        static = (pp, self.sampling(), tuple(own_ports), kl_pad, pads.label_values, p.score_error is not None, spread,
                  k_pad, batch, False)
        res = self._call(static, pads, kl_pad, rank, len(pods), per_call, state)
        if batch:
            out.batch_rounds += res.rounds
        else:
            out.pod_cycles += res.rounds
        self._account(p, own_ports, res.node_ids, pods[:res.placed], out.placed)
        failure = None
        if res.failed:
            names = p.filter_names
            ev = Evaluation(names, {f: res.codes[i, :n] for i, f in enumerate(names)},
                            {f: res.payloads[i, :n] for i, f in enumerate(names)}, np.zeros(n, bool),
                            narrowing=p.narrowing)
            if p.allowed is not None:
                ev.outside = ~p.allowed
            if res.prescore_failed:
                ev.error = p.score_error
            failure = (self.message(ev), rejectors(ev), p, ev)
        return res.placed, failure

    def _account(self, p: Prepared, own_ports: list, node_ids: np.ndarray, pods: list[Pod], placed: list) -> None:
        """The pods a compiled call placed, into the host table (which then holds exactly what the device holds)."""
        if len(pods):
            if own_ports:     # one placement per pod: a placement with host ports cannot be split by undo
                placed.extend(self.account(p, node_ids[i:i + 1], pods[i:i + 1]) for i in range(len(pods)))
            else:
                placed.append(self.account(p, node_ids, pods))
        self._resident.mark = len(self.cluster.tensors.changes)

    def _call(self, static: tuple, pads: Pads, kl_pad: int, rank: np.ndarray, k: int, per_call: dict,
              state: dict) -> "_CallResult":
        """Run the compiled program for `static` on the resident table."""
        n = self.cluster.tensors.nodes.size
        resident = self._resident_nodes(pads.nodes, pads.resources, kl_pad, pads.taints, pads.ports)
        wanted = self.nodes_to_find(n)
        per_call = {"rank": np.concatenate([np.asarray(rank, np.int64), np.arange(n, pads.nodes, dtype=np.int64)]),
                    "scalars": np.array([n, wanted, self.next_start, k], np.int64), **per_call}
        # The per-call inputs (all int64) travel as one array: one explicit copy per call, unpacked by layout.
        layout = tuple((name, v.shape) for name, v in per_call.items())
        arrays = {**resident.fixed, "packed": np.concatenate([v.ravel() for v in per_call.values()])}
        static = static + (layout,)
        state = {**resident.state, **state}
        program = self._program(pickle.dumps(static), static, arrays, state)
        t0 = time.perf_counter()
        with precision(self.xp):
            # Explicit copies of the per-call inputs (the resident table is already there): nothing a compiled
            # run moves is implicit (tests/test_backend_scheduler.py runs such schedules under
            # jax.transfer_guard). The eager per-pod paths (claims, GPU shares, explain) still convert host arrays.
            arrays["packed"] = self.jax.device_put(arrays["packed"])
            host = {name: v for name, v in state.items() if isinstance(v, np.ndarray)}
            if host:        # the bound-pod rows PodTopologySpread reads (per call: the run appends its own)
                state.update(self.jax.device_put(host))
            res = program(arrays, state)
            resident.state = {name: res[-1][name] for name in resident.state}     # the donated buffers' successors
            summary = self.jax.device_get(res[0])        # one copy back: counters, then the chosen nodes
            placed, failed, prescore, next_start, rounds = (int(x) for x in summary[:5])
            codes, payloads = self.jax.device_get((res[1], res[2])) if failed else (None, None)
        self.stats.calls += 1
        self.stats.run_s += time.perf_counter() - t0
        sampling = static[1]
        if sampling:
            self.next_start = next_start
        return _CallResult(placed, summary[5:5 + placed].astype(np.int64), bool(failed), bool(prescore), rounds,
                           codes, payloads)

    # -- segments: runs of different shapes, one compiled call ------------------------------------------------
    def segment_member(self, shape: PodShape, pods: list[Pod], head: SegmentMember | None = None
                       ) -> SegmentMember | None:
        """The run ready to join a segment, or None when it must go on its own: a long run (batch rounds), pods
        nominated to nodes, plugins that still tell its pods apart, per-pod host state or bound pods read; and, with
        `head` (the segment's first member), when its static configuration differs from head's."""
        cluster = self.cluster
        if len(pods) > SEGMENT_RUN or cluster.nominations:
            return None
        parts = self.framework.split_run(shape, pods, cluster)
        if len(parts) != 1 or parts[0][0] is not shape:
            return None
        ports = tuple(cluster.tensors.port_column(port) for port in shape.host_ports)   # before NodePorts' PreFilter
        p = prepare(shape, cluster, self.framework)
        if not self._compiles(p) or _reads_bound_pods(p):
            return None
        # Per member, not once per segment: a member's port columns or PreFilter may grow a vocabulary.
        pads, kl_pad, _ = self._pads()
        if head is None:
            static, runtime = _static_prepared(p, pads)
        else:
            if (ports, (pads, kl_pad), p.score_error is None) != (head.ports, head.pads,
                                                                   head.prepared.score_error is None):
                return None
            static, runtime = head.static, _amounts_joining(p, head, pads)
            if runtime is None:
                return None
        return SegmentMember(shape, pods, p, static, runtime, ports, (pads, kl_pad))

    def place_segment(self, members: list[SegmentMember], rank: np.ndarray) -> tuple[list[list[Placement]], int]:
        """Place the members' pods in order, pod by pod, in one compiled call (members joined to the first: one
        configuration), stopping at the first pod that fits nowhere. Returns each member's placements and how many pods
        were placed in all; the failed pod is left to the caller (its run's own cycle gives its message and
        PostFilter)."""
        head = members[0]
        pads, kl_pad, _ = self._pads()
        k = sum(len(m.pods) for m in members)
        k_pad = pow2(k, lo=64)      # a few programs per configuration, whatever the segments' lengths
        per_pod = [m for m in members for _ in m.pods]
        rows = {"request": np.stack([np.stack([_pad(m.prepared.request, (pads.resources,), 0),
                                               _pad(m.shape.nonzero, (pads.resources,), 0)]) for m in per_pod])}
        rows.update({name: np.stack([m.runtime[name] for m in per_pod]) for name in head.runtime})
        per_call = {name: _pad(v, (k_pad,) + v.shape[1:], 0) for name, v in rows.items()}
        static = (head.static, self.sampling(), head.ports, kl_pad, pads.label_values,
                  head.prepared.score_error is not None, False, k_pad, False, True)
        res = self._call(static, pads, kl_pad, rank, k, per_call, {})
        placed, node_ids = res.placed, res.node_ids
        self.stats.segments += 1
        out, start = [], 0
        for m in members:
            taken = min(max(placed - start, 0), len(m.pods))
            done: list[Placement] = []
            self._account(m.prepared, list(m.ports), node_ids[start:start + taken], m.pods[:taken], done)
            out.append(done)
            start += len(m.pods)
        return out, placed


    def nodes_changed(self) -> None:
        super().nodes_changed()
        self._resident = None

    def _resident_nodes(self, n_pad: int, r_pad: int, kl_pad: int, t_pad: int, p_pad: int) -> "_Resident":
        """The padded node table on the device, uploaded again only when the host table changed other than by
        this placer's own calls: node events (nodes_changed), vocabulary growth (a new array object), or a load
        change recorded in tensors.changes since the last call (undo, Permit rejection, deletion, eager paths)."""
        tensors = self.cluster.tensors
        nodes = tensors.nodes
        owners = (tensors, nodes, nodes.allocatable, nodes.requested, nodes.nonzero_requested, nodes.pod_count,
                  nodes.allowed_pods, nodes.unschedulable, nodes.labels, nodes.taints, nodes.host_ports)
        pads = (n_pad, r_pad, kl_pad, t_pad, p_pad)
        r = self._resident
        fresh = r is None or r.pads != pads or any(
            a is not b for a, b in zip(r.owners, owners))
        if not fresh and r.mark == len(tensors.changes):
            return r
        put = self.jax.device_put
        with precision(self.xp):
            if fresh:
                fixed = put({"allocatable": _pad(nodes.allocatable, (n_pad, r_pad), 0),
                             "allowed_pods": _pad(nodes.allowed_pods, (n_pad,), 0),
                             "unschedulable": _pad(nodes.unschedulable, (n_pad,), False),
                             "labels": _pad(nodes.labels, (n_pad, kl_pad), -1),
                             "taints": _pad(nodes.taints, (n_pad, t_pad), -1)})
                r = self._resident = _Resident(owners, pads, fixed)
            r.state = put({"requested": _pad(nodes.requested, (n_pad, r_pad), 0),
                           "nonzero_requested": _pad(nodes.nonzero_requested, (n_pad, 2), 0),
                           "pod_count": _pad(nodes.pod_count, (n_pad,), 0),
                           "host_ports": _pad(nodes.host_ports, (n_pad, p_pad), False)})
        self.stats.uploads += 1
        r.mark = len(tensors.changes)
        return r

    def _program(self, key: bytes, static: tuple, arrays: dict, state: dict):
        sig = (key, tuple((k, v.shape, v.dtype.str) for d in (arrays, state) for k, v in sorted(d.items())))
        program = PROGRAMS.get(sig)
        if program is None:
            jax = self.jax
            t0 = time.perf_counter()
            with precision(self.xp):
                fn = jax.jit(lambda a, s: _run(self.xp, static, a, s), donate_argnums=(1,))
                program = fn.lower(arrays, state).compile()
            self.stats.compiles += 1
            self.stats.compile_s += time.perf_counter() - t0
            PROGRAMS.put(sig, program)
        return program


def _run(xp, static, a, s):
    """Traced: place up to k pods of one prepared shape, stopping at the first that fits nowhere; pod by pod,
    or in batch rounds when the shape is batchable. A segment: pod i's amounts are row i of the per-pod inputs."""
    from jax import lax
    pp, sampling, own_ports, kl_pad, v_pad, prescore_possible, spread, k_pad, batch, segment, layout = static
    a, offset = dict(a), 0
    packed = a.pop("packed")
    for name, shape in layout:
        size = math.prod(shape)
        a[name] = packed[offset:offset + size].reshape(shape)
        offset += size
    n_pad = a["allocatable"].shape[0]
    runtime = [name for names in _runtime_names(pp) for name in names]

    def amounts(i):
        """(request, nonzero, prepared with its amounts) of pod i."""
        if segment:
            return a["request"][i, 0], a["request"][i, 1, :2], _with_runtime(pp, {name: a[name][i] for name in runtime})
        return a["request"][0], a["request"][1, :2], _with_runtime(pp, a)

    request, nonzero, run_pp = amounts(0)
    n, wanted, start0, k = (a["scalars"][i] for i in range(4))
    valid = xp.arange(n_pad) < n
    n_filters = len(pp.filters)
    filter_names = pp.filter_names
    port_cols = xp.asarray(np.array(own_ports, np.int64))
    if spread:
        kp_pad = s["bound_labels"].shape[1]
        own_labels = a["own"][:kp_pad].astype(xp.int32)
        own_ns = a["own"][kp_pad].astype(xp.int32)
        row0 = a["own"][kp_pad + 1]

    def tensors_of(st):
        bound = None
        if spread:
            bound = BoundPods(st["bound_node"], st["bound_namespace"], st["bound_labels"], st["bound_terminating"],
                              st["bound_node"].shape[0])
        nodes = NodeArrays(n_pad, a["allocatable"], st["requested"], st["nonzero_requested"], st["pod_count"],
                       a["allowed_pods"], a["unschedulable"], a["labels"], a["taints"], st["host_ports"])
        return TensorsView(nodes, LabelValues(kl_pad, v_pad), bound)

    def filter_codes(ev):
        codes = xp.stack([ev.codes[f] for f in filter_names]) if n_filters else xp.zeros((0, n_pad), xp.int8)
        payloads = (xp.stack([ev.payloads[f] for f in filter_names]) if n_filters
                    else xp.zeros((0, n_pad), xp.int64))
        return codes, payloads

    def prescore_fails(feasible):
        return (xp.sum(feasible) >= 2) if prescore_possible else xp.asarray(False)

    def evaluate(st, start, pp):
        tensors = tensors_of(st)
        ev = run_filters(xp, pp, tensors)
        feasible = ev.feasible & valid
        visited = xp.asarray(0, dtype=xp.int64)
        if sampling:
            feasible, visited = sample_feasible(xp, feasible, start, wanted, n)
        ev.feasible = feasible
        prescore = prescore_fails(feasible)
        run_scores(xp, pp, tensors, ev, None)
        node = select_best(xp, ev.total, feasible, a["rank"])
        node = xp.where(prescore, -1, node)
        return (node, prescore, visited, *filter_codes(ev))

    def place(st, node, i, request, nonzero):
        out = dict(st)
        out["requested"] = st["requested"].at[node].add(request)
        out["nonzero_requested"] = st["nonzero_requested"].at[node].add(nonzero)
        out["pod_count"] = st["pod_count"].at[node].add(1)
        if own_ports:
            out["host_ports"] = st["host_ports"].at[node, port_cols].set(True)
        if spread:
            row = row0 + i
            out["bound_node"] = st["bound_node"].at[row].set(node.astype(xp.int32))
            out["bound_namespace"] = st["bound_namespace"].at[row].set(own_ns)
            out["bound_labels"] = st["bound_labels"].at[row].set(own_labels)
        return out

    def cond(carry):
        i, failed = carry[0], carry[1]
        return (i < k) & ~failed

    def body(carry):
        i, failed, prescore_failed, start, nodes_out, fail_codes, fail_payloads, st, rounds = carry
        request, nonzero, pp = amounts(i)
        node, prescore, visited, codes, payloads = evaluate(st, start, pp)
        if sampling:
            start = (start + visited) % n
        ok = node >= 0
        st = lax.cond(ok, lambda st: place(st, node, i, request, nonzero), lambda st: dict(st), st)
        nodes_out = nodes_out.at[i].set(node.astype(xp.int32))
        if not segment:
            fail_codes = xp.where(ok, fail_codes, codes)
            fail_payloads = xp.where(ok, fail_payloads, payloads)
        return (xp.where(ok, i + 1, i), ~ok, prescore & ~ok, start, nodes_out, fail_codes, fail_payloads, st,
                rounds + 1)

    # Batch rounds (the numpy Placer's batch path, sched/placement.py, with fixed shapes): the contenders are the
    # c_pad best first copies, each scored for its next BATCH_COPIES copies; a round takes the picks up to the
    # first that may not follow the computed order (a normalization maximum lost, a contender's copies used up).
    c_pad = min(k_pad, n_pad)
    picks = min(k_pad, c_pad * BATCH_COPIES)
    copies = xp.arange(1, BATCH_COPIES + 1)[None, :]

    def batch_body(carry):
        i, failed, prescore_failed, start, nodes_out, fail_codes, fail_payloads, st, rounds = carry
        tensors = tensors_of(st)
        ev = run_filters(xp, run_pp, tensors)
        feasible = ev.feasible & valid
        prescore = prescore_fails(feasible)
        ok = xp.any(feasible) & ~prescore
        cap = xp.where(feasible, copy_capacity(xp, run_pp, tensors, k_pad), 0)
        static_total, holders = fixed_scores(xp, run_pp, tensors, feasible)

        def totals(rows, j):
            return copy_totals(xp, run_pp, tensors, rows, static_total[rows], j)

        sub = contenders(xp, totals(xp.arange(n_pad), copies[:, :1])[:, 0], a["rank"], c_pad, feasible)
        cap_sub = cap[sub]
        cap_seen = xp.minimum(cap_sub, BATCH_COPIES)
        cand, copy, count = pick_order(xp, totals(sub, copies), cap_seen, a["rank"][sub], picks)
        seen_end = fill_times(xp, cand, copy, cap_seen, c_pad, count)
        fill_t = xp.full((n_pad,), NEVER, dtype=xp.int64).at[sub].set(seen_end)
        end = xp.minimum(normalization_epoch_end(xp, fill_t, holders),
                         xp.min(xp.where(cap_sub > BATCH_COPIES, seen_end, NEVER)))
        take = xp.where(ok, xp.minimum(xp.minimum(count, k - i), end + 1), 0)
        chosen = xp.where(xp.arange(picks) < take, sub[cand], -1)
        per_node = bincount(xp, chosen, xp.ones((picks,), dtype=xp.int64), n_pad)
        st = dict(st)
        st["requested"] = st["requested"] + per_node[:, None] * request[None, :]
        st["nonzero_requested"] = st["nonzero_requested"] + per_node[:, None] * nonzero[None, :]
        st["pod_count"] = st["pod_count"] + per_node
        if own_ports:
            st["host_ports"] = st["host_ports"].at[:, port_cols].set(st["host_ports"][:, port_cols]
                                                                      | (per_node > 0)[:, None])
        nodes_out = lax.dynamic_update_slice(nodes_out, chosen.astype(xp.int32), (i,))
        codes, payloads = filter_codes(ev)
        fail_codes = xp.where(ok, fail_codes, codes)
        fail_payloads = xp.where(ok, fail_payloads, payloads)
        return (i + take, ~ok, prescore & ~ok, start, nodes_out, fail_codes, fail_payloads, st, rounds + 1)

    # nodes_out has room for a whole round written at any i < k, so dynamic_update_slice never has to clamp. A
    # segment's failed pod goes through its run's own cycle (place_segment): its codes are not carried (copying them
    # at every step was a third of a segment's time).
    failed_nodes = 0 if segment else n_pad
    carry = (xp.asarray(0, dtype=xp.int64), xp.asarray(False), xp.asarray(False), start0,
             xp.full((k_pad + (picks if batch else 0),), -1, dtype=xp.int32),
             xp.zeros((n_filters, failed_nodes), xp.int8), xp.zeros((n_filters, failed_nodes), xp.int64), s,
             xp.asarray(0, dtype=xp.int64))
    i, failed, prescore_failed, start, nodes_out, fail_codes, fail_payloads, st, rounds = lax.while_loop(
        cond, batch_body if batch else body, carry)
    summary = xp.concatenate([xp.stack([i, failed.astype(xp.int64), prescore_failed.astype(xp.int64),
                                        xp.asarray(start, dtype=xp.int64), rounds]), nodes_out.astype(xp.int64)])
    return summary, fail_codes, fail_payloads, st
